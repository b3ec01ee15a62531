import torch

import agentrl as arl
from agentrl.learning.base_agent import base_agent_path, make_base_agent
from agentrl.learning.demos import pretrain
from agentrl.world.substrates import PretrainConfig
from agentrl.agent.model import TinyAgentConfig

TOK = arl.build_tokenizer(arl.make_tasks('all'))
TINY = PretrainConfig(steps=8, batch_size=4)


def same_weights(a, b):
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def test_pretraining_is_deterministic():
    config = TinyAgentConfig(vocab_size=len(TOK))
    assert same_weights(pretrain(TOK, config, TINY), pretrain(TOK, config, TINY))
    assert not same_weights(pretrain(TOK, config, TINY), pretrain(TOK, config, PretrainConfig(8, 4, seed=1)))


def test_second_call_loads_the_cache_without_training(tmp_path, capsys):
    first = make_base_agent(TOK, cache_dir=tmp_path, config=TINY)
    assert 'pretrain step' in capsys.readouterr().err
    second = make_base_agent(TOK, cache_dir=tmp_path, config=TINY)
    assert capsys.readouterr().err == ''  # loaded, not trained (bench.py times the load)
    assert same_weights(first, second)
    assert list(tmp_path.iterdir()) == [base_agent_path(TOK, tmp_path, config=TINY)]


def test_corrupt_cache_is_reported_and_rebuilt(tmp_path, capsys):
    first = make_base_agent(TOK, cache_dir=tmp_path, config=TINY)
    path = base_agent_path(TOK, tmp_path, config=TINY)
    path.write_bytes(path.read_bytes()[:1000])  # a truncated file, as a killed copy leaves
    rebuilt = make_base_agent(TOK, cache_dir=tmp_path, config=TINY)
    assert 'unusable' in capsys.readouterr().err
    assert same_weights(first, rebuilt)
    assert same_weights(first, make_base_agent(TOK, cache_dir=tmp_path, config=TINY))


def test_mismatched_cache_is_reported_and_rebuilt(tmp_path, capsys):
    first = make_base_agent(TOK, cache_dir=tmp_path, config=TINY)
    path = base_agent_path(TOK, tmp_path, config=TINY)
    saved = torch.load(path, weights_only=True)
    saved['key'] = 'someone-else'
    torch.save(saved, path)
    rebuilt = make_base_agent(TOK, cache_dir=tmp_path, config=TINY)
    assert 'not the expected' in capsys.readouterr().err
    assert same_weights(first, rebuilt)


def test_cache_key_changes_with_what_decides_the_weights():
    paths = {base_agent_path(TOK, 'c', config=TINY), base_agent_path(TOK, 'c', config=PretrainConfig(8, 4, seed=1)),
             base_agent_path(TOK, 'c', 'larger', TINY),
             base_agent_path(arl.build_tokenizer(arl.make_tasks('train')), 'c', config=TINY)}
    assert len(paths) == 4
