"""The design module: cell names and values from a small design, written out by hand."""
import pytest

from workflow.design import AXES, Axis, DesignError, baseline_name, config_schema, expand_design

BASELINE = dict(algorithm='ppo', lam=1.0, epochs=4, minibatches=4, clip_high=0.2, value_clip=0.2, target_kl=None,
                lr=1e-3, kl_penalty=None)
DESIGN = dict(trainer=dict(iterations=30, episodes_per_iteration=64, gamma=1), baseline=BASELINE,
              algorithms=dict(reinforce=dict(lr=2e-3, iterations=80)),
              sweeps=dict(algorithm=['ppo', 'reinforce'], epochs=[1, 4.0]),
              factorial=[dict(lam=[0.95], target_kl=[None, 0.02])])


def test_cells_are_named_by_where_they_differ_from_the_baseline_and_hold_the_values_the_trainer_reads():
    cells = expand_design(DESIGN)
    assert list(cells) == ['baseline', 'algo~reinforce', 'epochs~1', 'lam~0.95', 'lam~0.95_kl~0.02']
    assert cells['algo~reinforce'].values == dict(algorithm='reinforce', episodes_per_iteration=64, gamma=1.0,
                                                  iterations=80, lr=2e-3)
    one_epoch = cells['epochs~1']
    assert one_epoch.values == dict(BASELINE, epochs=1, gamma=1.0, iterations=30, episodes_per_iteration=64)
    assert type(one_epoch.values['epochs']) is int and type(one_epoch.values['gamma']) is float
    assert baseline_name(DESIGN) == 'baseline' and cells['baseline'].values['lam'] == 1.0


def test_an_axis_added_at_its_baseline_level_renames_no_cell(monkeypatch):
    """A new axis in the registry, at its baseline level: every name stays; a sweep of it adds one named cell."""
    names = list(expand_design(DESIGN))
    gamma = Axis('gamma', 'gamma', ('ppo',), {'type': 'number', 'minimum': 0, 'maximum': 1}, 'gamma')
    monkeypatch.setitem(AXES, 'gamma', gamma)
    design = dict(DESIGN, trainer=dict(iterations=30, episodes_per_iteration=64), baseline=dict(BASELINE, gamma=1))
    assert list(expand_design(design)) == names
    swept = expand_design(dict(design, sweeps=dict(DESIGN['sweeps'], gamma=[0.99])))
    assert list(swept) == names[:3] + ['gamma~0.99'] + names[3:] and swept['gamma~0.99'].values['gamma'] == 0.99


def test_a_cell_with_more_minibatches_than_episodes_is_an_error_naming_it():
    with pytest.raises(DesignError, match=r'minibatches=128 is more than episodes_per_iteration=64'):
        expand_design(dict(DESIGN, sweeps=dict(minibatches=[128])))


def test_every_axis_has_its_schema_a_label_and_a_figure_name():
    schema = config_schema()
    assert set(schema['properties']['baseline']['required']) == set(AXES)
    labels = [axis.label for axis in AXES.values()]
    assert len(set(labels)) == len(labels) and all('~' not in label and '_' != label[-1] for label in labels)
    assert AXES['epochs'].show(8) == 'epochs=8' and AXES['target_kl'].show(None) == 'target KL=none'
