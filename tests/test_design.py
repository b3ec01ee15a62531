"""The design module: cell names and values from a small design, written out by hand."""
import pytest

from workflow.design import AXES, DesignError, baseline_name, config_schema, expand_design

BASELINE = dict(algorithm='ppo', lam=1.0, epochs=4, minibatches=4, clip_high=0.2, value_clip=0.2, target_kl=None,
                lr=1e-3, kl_penalty=None)
DESIGN = dict(trainer=dict(iterations=30, episodes_per_iteration=64, gamma=1), baseline=BASELINE,
              algorithms=dict(reinforce=dict(lr=2e-3, iterations=80)),
              sweeps=dict(algorithm=['ppo', 'reinforce'], epochs=[1, 4.0]),
              factorial=[dict(lam=[0.95], target_kl=[None, 0.02])])
TAIL = 'clip_high~0.2_vclip~0.2_kl~none_lr~0.001_klpen~none'


def test_cells_have_one_canonical_name_and_the_values_the_trainer_reads():
    cells = expand_design(DESIGN)
    assert list(cells) == [
        f'algo~ppo_lam~1_epochs~4_mb~4_{TAIL}', 'algo~reinforce', f'algo~ppo_lam~1_epochs~1_mb~4_{TAIL}',
        f'algo~ppo_lam~0.95_epochs~4_mb~4_{TAIL}',
        f'algo~ppo_lam~0.95_epochs~4_mb~4_{TAIL}'.replace('kl~none', 'kl~0.02')]
    assert cells['algo~reinforce'].values == dict(algorithm='reinforce', episodes_per_iteration=64, gamma=1.0,
                                                  iterations=80, lr=2e-3)
    one_epoch = cells[f'algo~ppo_lam~1_epochs~1_mb~4_{TAIL}']
    assert one_epoch.values == dict(BASELINE, epochs=1, gamma=1.0, iterations=30, episodes_per_iteration=64)
    assert type(one_epoch.values['epochs']) is int and type(one_epoch.values['gamma']) is float
    assert baseline_name(DESIGN) == f'algo~ppo_lam~1_epochs~4_mb~4_{TAIL}'


def test_a_cell_with_more_minibatches_than_episodes_is_an_error_naming_it():
    with pytest.raises(DesignError, match=r'minibatches=128 is more than episodes_per_iteration=64'):
        expand_design(dict(DESIGN, sweeps=dict(minibatches=[128])))


def test_every_axis_has_its_schema_a_label_and_a_figure_name():
    schema = config_schema()
    assert set(schema['properties']['baseline']['required']) == set(AXES)
    labels = [axis.label for axis in AXES.values()]
    assert len(set(labels)) == len(labels) and all('~' not in label and '_' != label[-1] for label in labels)
    assert AXES['epochs'].show(8) == 'epochs=8' and AXES['target_kl'].show(None) == 'target KL=none'
