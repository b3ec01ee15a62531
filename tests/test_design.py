"""The design module: cell names and values from a small design, written out by hand; designs that extend others."""
from pathlib import Path

import pytest
import yaml

from workflow.design import (AXES, Axis, DesignError, baseline_name, cell_name, config_schema, design_differences,
                             expand_design, extend, load_design, main, recorded, runtime_minutes, shared_critic,
                             substrate_of)

REPO = Path(__file__).resolve().parents[1]

BASELINE = dict(algorithm='ppo', lam=1.0, epochs=4, minibatches=4, clip_low=0.2, clip_high=0.2, value_clip=0.2,
                target_kl=None, lr=1e-3, whiten_advantages=True, kl_penalty=None)
DESIGN = dict(trainer=dict(iterations=30, episodes_per_iteration=64, gamma=1), baseline=BASELINE,
              algorithms=dict(reinforce=dict(lr=2e-3, iterations=80)),
              sweeps=dict(algorithm=['ppo', 'reinforce'], epochs=[1, 4.0]),
              factorial=[dict(lam=[0.95], target_kl=[None, 0.02])])


def test_cells_are_named_by_where_they_differ_from_the_baseline_and_hold_the_values_the_trainer_reads():
    cells = expand_design(DESIGN)
    assert list(cells) == ['baseline', 'algorithm~reinforce', 'epochs~1', 'lam~0.95', 'lam~0.95_target_kl~0.02']
    assert cells['algorithm~reinforce'].values == dict(algorithm='reinforce', episodes_per_iteration=64, gamma=1.0,
                                                  iterations=80, lr=2e-3)
    one_epoch = cells['epochs~1']
    assert one_epoch.values == dict(BASELINE, epochs=1, gamma=1.0, iterations=30, episodes_per_iteration=64)
    assert type(one_epoch.values['epochs']) is int and type(one_epoch.values['gamma']) is float
    assert baseline_name(DESIGN) == 'baseline' and cells['baseline'].values['lam'] == 1.0


def test_an_axis_added_at_its_baseline_level_renames_no_cell(monkeypatch):
    """A new axis in the registry, at its baseline level: every name stays; a sweep of it adds one named cell."""
    names = list(expand_design(DESIGN))
    gamma = Axis('gamma', ('ppo',), {'type': 'number', 'minimum': 0, 'maximum': 1})
    monkeypatch.setitem(AXES, 'gamma', gamma)
    design = dict(DESIGN, trainer=dict(iterations=30, episodes_per_iteration=64), baseline=dict(BASELINE, gamma=1))
    assert list(expand_design(design)) == names
    swept = expand_design(dict(design, sweeps=dict(DESIGN['sweeps'], gamma=[0.99])))
    assert list(swept) == names[:3] + ['gamma~0.99'] + names[3:] and swept['gamma~0.99'].values['gamma'] == 0.99


def test_a_cell_with_more_minibatches_than_episodes_is_an_error_naming_it():
    with pytest.raises(DesignError, match=r'minibatches=128 is more than episodes_per_iteration=64'):
        expand_design(dict(DESIGN, sweeps=dict(minibatches=[128])))


def test_every_axis_goes_by_its_field_name_in_the_schema_the_cells_and_the_figures():
    schema = config_schema()
    assert set(schema['properties']['baseline']['required']) == set(AXES)
    assert all(name == axis.field and '~' not in name for name, axis in AXES.items())
    assert AXES['epochs'].show(8) == 'epochs=8' and AXES['target_kl'].show(None) == 'target_kl=none'


def test_a_design_runs_on_one_substrate_and_a_record_without_one_ran_the_default():
    larger = expand_design(dict(DESIGN, baseline=dict(BASELINE, substrate='larger')))
    assert list(larger) == list(expand_design(DESIGN))  # the substrate names no cell: each design runs on one
    assert {cell.values['substrate'] for cell in larger.values()} == {'larger'}
    assert substrate_of(dict(DESIGN, baseline=dict(BASELINE, substrate='larger'))) == 'larger'
    assert substrate_of(DESIGN) == 'tinyagent' and recorded({'lam': 1.0}) == {'substrate': 'tinyagent', 'lam': 1.0}
    with pytest.raises(DesignError, match=r'one substrate \(baseline.substrate\), these on larger, tinyagent'):
        expand_design(dict(DESIGN, sweeps=dict(substrate=['tinyagent', 'larger'])))


def test_a_cells_name_follows_from_its_config_and_the_baselines():
    cells = expand_design(DESIGN)
    baseline = cells['baseline'].values
    assert all(cell_name(cell.values, baseline) == name for name, cell in cells.items())
    whole = dict(cells['lam~0.95_target_kl~0.02'].values, clip_low=0.2, seed=3)  # a run's whole TrainConfig
    assert cell_name(whole, baseline) == 'lam~0.95_target_kl~0.02'


def test_a_design_that_extends_another_states_only_where_it_differs(tmp_path):
    (tmp_path / 'base.yaml').write_text(yaml.safe_dump(DESIGN))
    small = dict(extends='base.yaml', trainer=dict(iterations=2), baseline=dict(epochs=2), sweeps=dict(lam=[0.9]))
    design = extend(small, tmp_path)
    assert design['trainer'] == dict(DESIGN['trainer'], iterations=2) and design['baseline'] == dict(BASELINE, epochs=2)
    assert design['sweeps'] == dict(lam=[0.9]) and design['factorial'] == DESIGN['factorial']  # replaced, kept
    assert 'extends' not in design and extend(dict(DESIGN)) == DESIGN
    (tmp_path / 'loop.yaml').write_text('extends: loop.yaml\n')
    with pytest.raises(DesignError, match='extends: loop.yaml extends itself through loop.yaml'):
        extend(dict(extends='loop.yaml'), tmp_path)
    with pytest.raises(DesignError, match='extends: none.yaml: No such file or directory'):
        extend(dict(extends='none.yaml'), tmp_path)


def test_a_staged_designs_seeds_merge_key_by_key_and_a_list_or_another_policy_replaces_them(tmp_path):
    (tmp_path / 'base.yaml').write_text(yaml.safe_dump(dict(DESIGN, seeds=dict(initial=10, step=5, max=40))))
    assert extend(dict(extends='base.yaml', seeds=dict(max=60)), tmp_path)['seeds'] == dict(
        initial=10, step=5, max=60)
    assert extend(dict(extends='base.yaml', seeds=[0, 1]), tmp_path)['seeds'] == [0, 1]
    (tmp_path / 'fixed.yaml').write_text(yaml.safe_dump(dict(DESIGN, seeds=[0, 1])))
    assert extend(dict(extends='fixed.yaml', seeds=dict(initial=2, step=1, max=3)), tmp_path)['seeds'] == dict(
        initial=2, step=1, max=3)
    greedy = dict(initial=2, max=4, policy='greedy', batch=0.1, budget=0.3)  # another policy: its seeds, whole
    assert extend(dict(extends='base.yaml', seeds=greedy), tmp_path)['seeds'] == greedy
    (tmp_path / 'greedy.yaml').write_text(yaml.safe_dump(dict(DESIGN, seeds=greedy)))
    assert extend(dict(extends='greedy.yaml', seeds=dict(budget=0.5)), tmp_path)['seeds'] == dict(greedy, budget=0.5)


def test_the_test_design_extends_the_default_and_states_no_axis_of_its_own():
    """An axis added to the default design reaches the test design without an edit there."""
    raw = yaml.safe_load((REPO / 'config' / 'test.yaml').read_text())
    assert raw['extends'] == 'config/config.yaml' and set(raw['baseline']) < set(AXES)
    assert load_design(REPO / 'config' / 'test.yaml')['baseline'] == dict(
        load_design(REPO / 'config' / 'config.yaml')['baseline'], **raw['baseline'])


def test_the_jobs_needs_follow_from_the_cells():
    cells = {name: cell.values for name, cell in expand_design(DESIGN).items()}
    assert runtime_minutes(cells['baseline']) == 5  # at least 5 minutes
    assert runtime_minutes(dict(cells['baseline'], iterations=300)) == 34  # 3x (5 s + 300 x 64 x 5 passes x 7 ms)
    assert runtime_minutes(dict(cells['baseline'], iterations=300, substrate='larger')) == 51  # each pass 1.5x
    assert shared_critic(cells) == '{}\n'  # no critic constant set: TrainConfig's defaults
    larger = expand_design(dict(DESIGN, baseline=dict(BASELINE, substrate='larger')))
    assert shared_critic({n: c.values for n, c in larger.items()}) == '{"substrate": "larger"}\n'  # its tasks
    differing = dict(cells, **{'lam~0.95': dict(cells['lam~0.95'], critic_lr=3e-4)})
    with pytest.raises(DesignError, match=r"the PPO cells must share the critic's constants.*\n  baseline: \{\}\n"
                                          r'  lam~0.95: \{"critic_lr": 0.0003\}'):
        shared_critic(differing)
    assert design_differences(DESIGN, dict(DESIGN, seeds=[0], baseline=dict(BASELINE, lam=0.9))) == [
        'baseline.lam: 1.0 -> 0.9', 'seeds: (absent) -> [0]']


def test_the_design_verb_names_a_bad_designs_faults_without_a_traceback(tmp_path, capsys):
    bad = tmp_path / 'bad.yaml'
    bad.write_text('extends: config/config.yaml\nbaseline: {lamda: 0.5}\n')
    with pytest.raises(SystemExit) as stopped:
        main(['cells', '--configfile', str(bad)])
    assert stopped.value.code == 2 and capsys.readouterr().err.splitlines()[-1] == (
        f'python -m workflow.design: error: {bad}: baseline.lamda: unknown key; did you mean lam?')


def test_whitening_per_minibatch_is_a_level_named_by_its_value_and_other_levels_are_one_line_faults(tmp_path, capsys):
    cells = expand_design(dict(DESIGN, sweeps=dict(whiten_advantages=[True, False, 'minibatch']), factorial=[]))
    assert list(cells) == ['baseline', 'whiten_advantages~false', 'whiten_advantages~minibatch']
    assert cells['whiten_advantages~minibatch'].values == dict(cells['baseline'].values, whiten_advantages='minibatch')
    design = tmp_path / 'minibatch.yaml'
    design.write_text('extends: config/config.yaml\nsweeps: {whiten_advantages: [minibatch]}\n')
    main(['cell', 'whiten_advantages~minibatch', '--configfile', str(design)])
    assert '"whiten_advantages": "minibatch"' in capsys.readouterr().out
    design.write_text('extends: config/config.yaml\nsweeps: {whiten_advantages: [batch]}\n')
    with pytest.raises(DesignError) as fault:
        load_design(design)
    line, = str(fault.value).splitlines()  # the wording of what is allowed is workflow/faults.py's
    assert line.startswith(f'{design}: sweeps.whiten_advantages[0] = "batch": one of ') and 'minibatch' in line
