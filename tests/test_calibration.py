"""The base agent against design.md section 3's calibration bands (the chapter's figures in comments)."""
import pytest
import torch

import agentrl as arl
from agentrl.calibration import episode_statistics, per_task_pass_rates, sample_tasks

TOK = arl.build_tokenizer(arl.make_tasks('all'))


@pytest.fixture(scope='module')
def base():
    torch.set_num_threads(1)
    return arl.make_base_agent(TOK)


@pytest.mark.parametrize('seed', [0, 1, 2])
def test_base_agent_matches_the_calibration_bands(base, seed):
    trajs = sample_tasks(base, arl.make_tasks('train'), 16, TOK, torch.Generator().manual_seed(seed))
    stats = episode_statistics(base, trajs, TOK.pad_id)
    assert stats['episodes'] == 320
    assert 0.08 <= stats['pass_rate'] <= 0.25  # chapter 0.119 to 0.159
    assert 8 <= stats['policy_tokens'] <= 16  # chapter 11.3
    assert 0.40 <= stats['under_8'] <= 0.75  # chapter 62%
    assert stats['at_least_16'] >= 0.10  # chapter 27%
    assert stats['max_policy_tokens'] <= 64
    assert 0.3 <= stats['entropy'] <= 0.8  # chapter 0.515


def test_heldout_pass_rate_is_no_higher_than_train(base):
    rates = {split: arl.rollout_stats(sample_tasks(base, arl.make_tasks(split), 64, TOK,
                                                   torch.Generator().manual_seed(11)))['pass_rate']
             for split in ('train', 'heldout')}
    assert rates['heldout'] <= rates['train']


def test_every_train_task_is_solved_sometimes(base):
    trajs = sample_tasks(base, arl.make_tasks('train'), 64, TOK, torch.Generator().manual_seed(0))
    rates = per_task_pass_rates(trajs)
    assert len(rates) == 20
    assert all(0.02 <= rate <= 0.4 for rate in rates.values()), rates


def test_task_set_statistics_count_repairs_by_what_they_solve():
    from agentrl.calibration import repair_kind, task_set_statistics, tasks_fixed_by
    train = arl.make_tasks('train')
    for task in train:
        assert task.name in tasks_fixed_by(task.fix, train)
    assert tasks_fixed_by('submit', train) == [] and tasks_fixed_by('edit L9 a b', train) == []
    stats = task_set_statistics(train)
    assert stats['distinct_repairs'] == len({t.fix for t in train})
    assert stats['most_fixed_by_one_repair'] == max(len(tasks_fixed_by(t.fix, train)) for t in train)
    assert stats['bug_lines'] == sorted({t.bug_line for t in train})
    assert set(stats['bug_kinds']) <= {'variable', 'constant', 'operator', 'comparison'}
    assert {repair_kind(t) for t in arl.make_tasks('heldout')} == {'variable', 'constant', 'operator', 'comparison'}


def test_base_stats_prints_every_row_it_measures(capsys):
    from agentrl.cli import main
    main(['base-stats', '--seeds', '0', '--episodes-per-task', '2', '--no-steps'])
    out = capsys.readouterr().out
    assert 'distinct repairs' in out and 'bug lines' in out and 'kinds' in out
    assert 'seed 0 train' in out and 'seed 0 heldout' in out and 'under 8' in out and '16+' in out
