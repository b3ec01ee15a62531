"""The comparisons table holds every cell of the design: one-factor cells, REINFORCE, the factorial cells and their
interactions (on seeded synthetic values for the default design's cells); the forest plots draw them."""
import itertools

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats as scipy_stats
from test_analysis import REPO

from analysis.stats.cells import axes, blocks, interaction, varied
from analysis.ledger.chapter import Context
from analysis.stats.compare import METRICS, SAME_EPISODES, compare
from analysis.pages.figures import forest, style
from analysis.stats.metrics import reward_at
from analysis.stats.inference import bh
from workflow.design import AXES, baseline_name, expand_design, make_cell

DESIGN = yaml.safe_load((REPO / 'config' / 'config.yaml').read_text())
SEEDS = range(6)


def length(config: dict) -> int:
    return config['iterations'] * config['episodes_per_iteration']


def synthetic(configs: dict[str, dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-run values of every metric (tidy, as analysis.stats.metrics gives them) and per-iteration batch rewards."""
    rng = np.random.default_rng(0)
    values = pd.DataFrame([dict(source=cell, kind='train', seed=seed, table='train', row='', metric=metric,
                                value=rng.uniform())
                           for cell in configs for seed in SEEDS for metric in METRICS])
    iterations = pd.DataFrame([dict(name=cell, seed=seed, iteration=i, reward=rng.uniform(),
                                    episodes=config['episodes_per_iteration'] * (i + 1))
                               for cell, config in configs.items() for seed in SEEDS
                               for i in range(config['iterations'])])
    return values, iterations


@pytest.fixture(scope='module')
def design():
    """The default design's cells (configs as the design gives them), its baseline, and the table over them."""
    configs = {name: cell.values for name, cell in expand_design(DESIGN).items()}
    baseline = baseline_name(DESIGN)
    values, iterations = synthetic(configs)
    return configs, baseline, iterations, compare(values, configs, baseline, iterations)


def test_every_cell_of_the_design_has_a_row_for_every_metric(design):
    configs, baseline, _, table = design
    assert not table.duplicated(['cell', 'contrast', 'metric']).any()
    metrics = table.groupby(['cell', 'contrast'])['metric'].agg(set)
    for cell, config in configs.items():
        if cell == baseline:
            continue
        own_length = length(config) != length(configs[baseline])
        assert metrics.get((cell, 'difference')) == set(METRICS) | ({SAME_EPISODES} if own_length else set()), cell
        if len(varied(config, configs[baseline])) > 1:
            assert metrics.get((cell, 'interaction')) == set(METRICS), cell
    assert (table['contrast'] == 'interaction').any() and (table['metric'] == SAME_EPISODES).any()
    # an interaction whose one-axis cells the design lacks (clip_low and clip_high move together) is empty
    empty = table['status'] == 'empty'
    assert set(table.loc[empty, 'cell']) == {c for c in configs if c.startswith('clip_low~')}
    tested = table[~empty]
    assert tested['p'].notna().all() and tested['q'].to_numpy() == pytest.approx(bh(tested['p']))


def test_factorial_blocks_and_axes_are_the_designs(design):
    configs, baseline, _, _ = design
    expected = {}
    # a block's cells: its points with each factor at one of its levels or at the baseline's, where the design has the
    # cell (a block of one level each takes its margins from the sweeps)
    for block in DESIGN['factorial']:
        levels = [[DESIGN['baseline'][axis], *values] for axis, values in block.items()]
        points = [{**DESIGN['baseline'], **dict(zip(block, point))} for point in itertools.product(*levels)]
        names = {make_cell(point, DESIGN).name for point in points} & set(configs)
        expected.setdefault(tuple(name for name in AXES if name in block), set()).update(names - {baseline})
    assert {fields: set(cells) for fields, cells in blocks(configs, baseline).items()} == expected
    swept = {name for name, levels in DESIGN['sweeps'].items() if len(levels) > 1}
    assert set(axes(configs, baseline)) == swept  # the algorithm axis too: REINFORCE's own lr and length are constants


def test_reinforce_is_compared_at_its_own_runs_end_and_after_the_same_episodes(design):
    configs, baseline, iterations, table = design
    longer = [cell for cell, config in configs.items() if length(config) > length(configs[baseline])]
    assert longer and all(configs[cell]['algorithm'] != configs[baseline]['algorithm'] for cell in longer)
    for cell in longer:
        rows = table[table['cell'] == cell].set_index('metric')
        assert tuple(rows.loc['pass_train', ['episodes_cell', 'episodes_baseline']]) == (
            length(configs[cell]), length(configs[baseline]))
        same = length(configs[baseline])
        assert tuple(rows.loc[SAME_EPISODES, ['episodes_cell', 'episodes_baseline']]) == (same, same)
        at = iterations[iterations['episodes'] == same].pivot(index='seed', columns='name', values='reward')
        ref = scipy_stats.ttest_rel(at[cell], at[baseline])
        assert rows.loc[SAME_EPISODES, 'diff'] == pytest.approx((at[cell] - at[baseline]).mean())
        assert rows.loc[SAME_EPISODES, 'p'] == pytest.approx(ref.pvalue)


CONFIGS = {'base': dict(algorithm='ppo', epochs=4, minibatches=4), 'e8': dict(algorithm='ppo', epochs=8, minibatches=4),
           'm8': dict(algorithm='ppo', epochs=4, minibatches=8), 'e8m8': dict(algorithm='ppo', epochs=8, minibatches=8)}


def per_seed(cells: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame([dict(source=cell, kind='train', seed=seed, table='train', row='', metric='pass_train', value=v)
                         for cell, values in cells.items() for seed, v in enumerate(values)])


def test_the_interaction_is_the_factorial_contrast_paired_by_seed():
    assert interaction(CONFIGS, 'e8m8', 'base') == [('e8m8', 1), ('e8', -1), ('m8', -1), ('base', 1)]
    y = {'base': [0.8, 0.9, 0.85, 0.7, 0.95], 'e8': [0.6, 0.7, 0.72, 0.5, 0.8], 'm8': [0.7, 0.85, 0.8, 0.66, 0.9],
         'e8m8': [0.3, 0.5, 0.45, 0.2, 0.6, 0.9]}  # seed 5 of e8m8 has no partners: left out
    table = compare(per_seed(y), CONFIGS, 'base', metrics=('pass_train',))
    row = table[table['contrast'] == 'interaction'].iloc[0]
    c = np.array(y['e8m8'][:5]) - y['e8'] - y['m8'] + y['base']
    ref = scipy_stats.ttest_1samp(c, 0.0)
    assert (row['axis'], row['level'], row['n']) == ('epochs_x_minibatches', '8 x 8', 5)
    assert row['diff'] == pytest.approx(c.mean()) and row['p'] == pytest.approx(ref.pvalue)
    assert (row['ci_low'], row['ci_high']) == pytest.approx(tuple(ref.confidence_interval(0.95)))
    without = [cell for cell in CONFIGS if cell != 'm8']
    missing = compare(per_seed({c: y[c] for c in without}), {c: CONFIGS[c] for c in without}, 'base',
                      metrics=('pass_train',))
    assert missing.loc[missing['contrast'] == 'interaction', 'status'].tolist() == ['empty']  # a term the design lacks


def test_the_forest_of_a_block_draws_its_cells_and_the_interaction():
    y = {'base': [0.8, 0.9, 0.85], 'e8': [0.6, 0.7, 0.72], 'm8': [0.7, 0.85, 0.8], 'e8m8': [0.3, 0.5, 0.45]}
    table = compare(per_seed(y), CONFIGS, 'base', metrics=('pass_train',))
    ctx = Context(per_seed(y), CONFIGS, 'base', {})
    with style():
        plot = forest(table, 'epochs_x_minibatches', ctx)
    assert [t.get_text() for t in plot.axes[0].get_yticklabels()] == [
        'interaction at epochs=8, minibatches=8', 'epochs=4, minibatches=8', 'epochs=8, minibatches=4',
        'epochs=8, minibatches=8']
    assert len(plot.axes[0].collections[-1].get_offsets()) == 4


def test_a_run_diverged_before_the_common_episode_counts_as_a_failure():
    iterations = pd.DataFrame(dict(name='cell', seed=[0, 0, 1], episodes=[64, 128, 64], reward=[0.5, 0.75, 0.25]))
    assert reward_at(iterations, 'cell', 128, diverged=[1]).to_dict() == {0: 0.75, 1: 0.0}
    assert reward_at(iterations, 'cell', 64, diverged=[1]).to_dict() == {0: 0.5, 1: 0.25}
