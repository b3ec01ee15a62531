"""The substrates (agentrl/world/substrates.py): each builds its base agent's model; the larger one is at least 4x the
parameters, deeper and wider; a base agent file is refused for another substrate; an unknown one is named. The
longer one plays two-bug tasks (each bug matters) in an env whose caps and context hold its longest episode, and
samples and trains through the same code as the others."""
import random
import subprocess
import sys

import pytest
import torch

from agentrl.learning.base_agent import base_model_config, cache_key, load_base_agent, save_base_agent
from agentrl.learning.config import TrainConfig
from agentrl.world.substrates import DEFAULT, PretrainConfig, SUBSTRATES, substrate
from agentrl.agent.model import TinyAgent, TinyAgentConfig, count_parameters
from agentrl.agent.sampler import rollout_stats, sample_tasks
from agentrl.world.task_family import TaskFamily
from agentrl.world.tasks import is_valid, make_tasks, one_edit_repairs, random_task
from agentrl.world.tokenizer import build_tokenizer
from agentrl.learning.trainer import sample_batch, train

TOK = build_tokenizer(make_tasks('all'))
LONGER = substrate('longer').family


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
    with pytest.raises(ValueError, match="substrate 'huge' is not known: expected one of tinyagent, larger, longer"):
        substrate('huge')
    done = subprocess.run([sys.executable, '-m', 'agentrl', 'base-agent', '--out', 'x.pt', '--substrate', 'huge'],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert "invalid choice: 'huge' (choose from 'tinyagent', 'larger', 'longer')" in done.stderr


def play(task, actions) -> float:
    """The reward of an episode of task that plays actions (ending with submit) in the longer substrate's env."""
    env = LONGER.new_env()
    env.reset(task)
    steps = [env.step(action) for action in actions]
    assert steps[-1].done and not any(step.done for step in steps[:-1])
    return steps[-1].reward


@pytest.mark.parametrize('task', LONGER.tasks('all'), ids=lambda t: t.name)
def test_two_bug_tasks_keep_their_first_bug_and_need_both_repairs(task):
    one_bug = {t.name: t for t in make_tasks('all')}[task.name]
    assert task.bugs[0] == one_bug.bugs[0] and len(task.bugs) == 2 and task.bugs[1][0] != task.bug_line
    assert is_valid(task)
    first, second = task.fixes
    assert play(task, ['submit']) == play(task, [first, 'submit']) == play(task, [second, 'submit']) == 0.0
    assert play(task, ['test', first, 'test', second, 'test', 'submit']) == 1.0


def test_no_single_edit_repairs_a_two_bug_task_but_where_the_tests_see_only_b():
    assert [task.name for task in LONGER.tasks('all') if one_edit_repairs(task)] == ['pick', 'limit', 'cap']
    for task in LONGER.tasks('all'):
        returns_b = all(trace[-1][1] == args[1] for args, trace in zip(task.cases, task.reference_traces))
        assert one_edit_repairs(task) == returns_b


def test_one_bug_tasks_are_the_task_set_unchanged():
    assert make_tasks('all') == make_tasks('all', bugs=1) == TaskFamily().tasks('all')
    assert all(task.more_bugs == () and task.fixes == (task.fix,) for task in make_tasks('all'))


def test_random_two_bug_tasks_are_valid_seeded_and_outside_the_task_set():
    exclude = frozenset(t.reference for t in make_tasks('all'))
    draws = [random_task(rng, exclude, bugs=2) for rng in [random.Random(5)] for _ in range(100)]
    assert draws == [random_task(rng, exclude, bugs=2) for rng in [random.Random(5)] for _ in range(100)]
    assert all(is_valid(t) and len(t.bugs) == 2 and t.reference not in exclude for t in draws)
    assert {len(t.reference) for t in draws} == {3, 4}  # two or three computing lines, then a return


def test_an_unknown_bug_count_is_refused_naming_the_allowed_ones():
    for make in (lambda: make_tasks('train', bugs=3), lambda: random_task(random.Random(0), bugs=0),
                 lambda: TaskFamily(bugs=3)):
        with pytest.raises(ValueError, match=r'bugs=(3|0) is not allowed; expected one of 1, 2'):
            make()


def longest_episode(task, family: TaskFamily) -> int:
    """An upper bound on an episode's tokens: <bos>, the prompt, <eot>, every policy token the cap allows, and after
    each turn but the last the longest answer (a failing test naming every input and the longest line, and <eot>)."""
    answer = 1 + len(task.params) + 1 + max(len(line.words) for line in task.buggy_program) + 1
    return 2 + len(task.prompt.split()) + family.max_policy_tokens + (family.max_turns - 1) * answer


def test_the_longer_caps_allow_two_repairs_with_retries_and_its_context_holds_the_longest_episode():
    assert LONGER.bugs == 2 and base_model_config(TOK, 'longer').max_len == LONGER.max_len
    repair_twice = 2 + 5 + 2 + 5 + 2 + 2  # test, edit, test, edit, test, submit: 6 turns, 18 policy tokens
    assert LONGER.max_turns >= 6 + 2 and LONGER.max_policy_tokens >= repair_twice + 2 * (5 + 2)  # two retries
    rng, exclude = random.Random(0), frozenset(t.reference for t in LONGER.tasks('all'))
    pretraining = [LONGER.random_task(rng, exclude) for _ in range(300)]
    assert max(longest_episode(task, LONGER) for task in LONGER.tasks('all') + pretraining) <= LONGER.max_len
    assert max(longest_episode(task, TaskFamily()) for task in make_tasks('all')) <= TaskFamily().max_len


def test_each_substrates_tokenizer_covers_its_prompts_and_the_default_family_and_pretraining_key_as_before():
    for chosen in SUBSTRATES.values():
        tok = chosen.family.tokenizer()
        assert all(tok.unk_id not in tok.encode(task.prompt) for task in chosen.family.tasks('all'))
    assert substrate(DEFAULT).family == substrate('larger').family == TaskFamily()
    assert substrate(DEFAULT).pretrain_config() == substrate('larger').pretrain_config() == PretrainConfig()
    assert substrate('longer').pretrain_config() != PretrainConfig()  # its own demonstrator: a key of its own
    config = TinyAgentConfig(vocab_size=len(TOK), max_len=LONGER.max_len)
    assert cache_key(TOK, config, PretrainConfig()) == cache_key(TOK, config, PretrainConfig(), TaskFamily())
    assert cache_key(TOK, config, PretrainConfig()) != cache_key(TOK, config, PretrainConfig(), LONGER)


def test_an_untrained_longer_agent_samples_and_trains_through_the_shared_code():
    tok = LONGER.tokenizer()
    torch.manual_seed(0)
    model = TinyAgent(base_model_config(tok, 'longer'))
    trajs = sample_tasks(model, LONGER.tasks('train')[:4], 2, tok, torch.Generator().manual_seed(0), LONGER.new_env)
    assert all(t.policy_tokens <= LONGER.max_policy_tokens and t.turns <= LONGER.max_turns for t in trajs)
    assert rollout_stats(trajs)['turns'] > TaskFamily().max_turns  # untrained: it runs into the longer turn cap
    batch = sample_batch(model, tok, 8, torch.Generator().manual_seed(0), LONGER)
    assert batch['ids'].shape[0] == 8 and batch['action_mask'].sum(-1).max() <= LONGER.max_policy_tokens
    config = TrainConfig(substrate='longer', iterations=1, episodes_per_iteration=8, epochs=1, minibatches=2,
                         eval_episodes_per_task=1, critic_warmup_episodes_per_task=1, critic_warmup_steps=1)
    result = train(model, tok, config)
    assert not result.summary['diverged'] and result.iterations[0]['policy_tokens'] > 0


def test_a_run_whose_config_names_another_substrate_than_its_base_agent_is_refused(tmp_path):
    config = tmp_path / 'run.json'
    config.write_text('{"iterations": 1}')
    done = subprocess.run([sys.executable, '-m', 'agentrl', 'train', '--config', str(config), '--seed', '0',
                           '--out', str(tmp_path / 'run'), '--substrate', 'longer'], capture_output=True, text=True)
    assert done.returncode == 1 and "trains substrate 'tinyagent' but --substrate is 'longer'" in done.stderr
