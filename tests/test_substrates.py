"""The substrates (agentrl/substrates.py): each builds its base agent's model; the larger one is at least 4x the
parameters, deeper and wider; a base agent file is refused for another substrate; an unknown one is named."""
import subprocess
import sys

import pytest
import torch

from agentrl.base_agent import base_model_config, load_base_agent, save_base_agent
from agentrl.model import TinyAgent, TinyAgentConfig, count_parameters
from agentrl.substrates import DEFAULT, SUBSTRATES, substrate
from agentrl.tasks import make_tasks
from agentrl.tokenizer import build_tokenizer

TOK = build_tokenizer(make_tasks('all'))


def test_each_substrate_builds_its_model_under_its_own_name():
    assert DEFAULT in SUBSTRATES and all(name == s.name for name, s in SUBSTRATES.items())
    for name in SUBSTRATES:
        model = TinyAgent(base_model_config(TOK, name))
        assert model(torch.tensor([[TOK.pad_id, TOK.pad_id]])).shape[-1] == len(TOK)


def test_the_default_is_the_calibrated_tinyagent_whose_cache_key_the_published_runs_used():
    assert base_model_config(TOK) == TinyAgentConfig(vocab_size=len(TOK), d_model=32, n_layers=2, n_heads=4, d_ff=256)


def test_the_larger_agent_is_deeper_wider_and_at_least_four_times_the_parameters():
    small, large = (base_model_config(TOK, name) for name in (DEFAULT, 'larger'))
    assert large.n_layers > small.n_layers and large.d_model > small.d_model
    assert count_parameters(TinyAgent(large)) >= 4 * count_parameters(TinyAgent(small))


def test_a_base_agent_file_is_refused_for_another_substrate(tmp_path):
    torch.manual_seed(0)
    path = tmp_path / 'base.pt'
    save_base_agent(TinyAgent(base_model_config(TOK, 'larger')), TOK, path, 'larger')
    assert count_parameters(load_base_agent(path, TOK, 'larger')) == count_parameters(
        TinyAgent(base_model_config(TOK, 'larger')))
    with pytest.raises(ValueError, match='is not the expected'):
        load_base_agent(path, TOK, DEFAULT)


def test_an_unknown_substrate_is_named_with_the_known_ones():
    with pytest.raises(ValueError, match="substrate 'huge' is not known: expected one of tinyagent, larger"):
        substrate('huge')
    done = subprocess.run([sys.executable, '-m', 'agentrl', 'base-agent', '--out', 'x.pt', '--substrate', 'huge'],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "invalid choice: 'huge' (choose from 'tinyagent', 'larger')" in done.stderr
