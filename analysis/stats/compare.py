"""Every cell of the design against the baseline cell, paired by seed (cells of one seed share the warm critic, the
first batch and the evaluation seed): a one-factor cell on its axis; a factorial cell on its block, as a difference
and as its interaction contrast. Per row: the contrast with its t CI, the two-sided p, Benjamini-Hochberg q over the
whole table (and within an axis or block and metric), and the seeds 80% power would need at the smallest effect of
interest, fixed in advance: a change by the claims file's about_factor (a quarter) of the baseline's mean.

What a row compares: episodes_cell and episodes_baseline are the training episodes each side had seen when its value
was taken (its own run's end; the end of the block for reward_21_30). A cell whose run is longer or shorter than the
baseline's (REINFORCE: 80 iterations against PPO's 30) has one more metric, reward_same_episodes: the batch reward of
both after the same number of episodes, the shorter run's last."""
from __future__ import annotations

import math

import pandas as pd

from .cells import axes, block_name, blocks, interaction, varied
from .inference import DEFAULTS, bh, contrast, paired, seeds_for_power
from .metrics import ENTROPY_BLOCKS, REWARD_BLOCKS, TRAIN, diverged_seeds, reward_at

METRICS = ('pass_train', 'pass_heldout', 'reward_21_30', 'final_batch_reward', 'ev_mean', 'gradient_steps', 'kl_mean',
           'entropy_21_30')
SAME_EPISODES = 'reward_same_episodes'
WINDOWS = {**REWARD_BLOCKS, **ENTROPY_BLOCKS}  # metric -> its block of 1-based iterations
COLUMNS = ['axis', 'level', 'cell', 'contrast', 'metric', 'episodes_cell', 'episodes_baseline', 'n',
           'diverged_baseline', 'diverged_cell', 'mean_baseline', 'mean_cell', 'diff', 'ci_low', 'ci_high', 't', 'df',
           'p', 'q', 'q_axis', 'effect', 'n_80', 'paired', 'status', 'power_status']
NONE = pd.Series(dtype=float)  # a cell without the metric


def contrasts(configs: dict[str, dict], baseline: str) -> list[tuple[str, str, str, str, list[tuple[str | None, int]]]]:
    """(axis, level, cell, contrast, terms) of every row but its metric, in table order: each cell of an axis minus
    the baseline; then per factorial block each cell varying two or more axes minus the baseline, and its
    interaction. terms: (cell, weight)."""
    rows = [(axis, str(configs[cell][axis]), cell, 'difference', [(cell, 1), (baseline, -1)])
            for axis, cells in axes(configs, baseline).items() for cell in cells]
    for fields, cells in blocks(configs, baseline).items():
        for cell in cells:
            if len(varied(configs[cell], configs[baseline])) > 1:  # a one-factor cell has its row on its axis
                level = ' x '.join(str(configs[cell][name]) for name in fields)
                rows += [(block_name(fields), level, cell, 'difference', [(cell, 1), (baseline, -1)]),
                         (block_name(fields), level, cell, 'interaction', interaction(configs, cell, baseline))]
    return rows


def episodes(config: dict, metric: str) -> int | None:
    """Training episodes behind a run's value of metric: the end of its block of iterations, else of the run."""
    per, iterations = config.get('episodes_per_iteration'), config.get('iterations')
    if per is None or iterations is None:
        return None
    return per * min(WINDOWS[metric][1], iterations) if metric in WINDOWS else per * iterations


def compare(values: pd.DataFrame, configs: dict[str, dict], baseline: str | None,
            iterations: pd.DataFrame | None = None, metrics=METRICS, about_factor: float = DEFAULTS['about_factor'],
            alpha: float = DEFAULTS['alpha']) -> pd.DataFrame:
    """One row per (axis, cell, contrast, metric) on the seeds its cells share, with its tests; iterations (the
    runs' per-iteration records) give reward_same_episodes."""
    runs = values[(values['table'] == TRAIN) & (values['row'] == '')]
    by_run = {key: group.set_index('seed')['value'] for key, group in runs.groupby(['source', 'metric'])}
    diverged = diverged_seeds(values)
    specs = contrasts(configs, baseline) if baseline in configs else []
    rows = []
    for axis in dict.fromkeys(spec[0] for spec in specs):
        for metric in (*metrics, SAME_EPISODES):
            family = []
            for _, level, cell, kind, terms in (spec for spec in specs if spec[0] == axis):
                seen = episodes(configs[cell], metric), episodes(configs[baseline], metric)
                if metric == SAME_EPISODES:
                    if kind != 'difference' or iterations is None or None in seen or seen[0] == seen[1]:
                        continue
                    seen = (min(seen),) * 2
                    x, base = (reward_at(iterations, c, seen[0], diverged.get(c, [])) for c in (cell, baseline))
                else:
                    x, base = by_run.get((cell, metric), NONE), by_run.get((baseline, metric), NONE)
                test = paired(x, base) if kind == 'difference' else contrast(
                    [by_run.get((c, metric), NONE) for c, _ in terms], [weight for _, weight in terms])
                effect = math.log(about_factor) * abs(base.mean()) if len(base) else math.nan
                n_80, power_status = seeds_for_power(effect, test.pop('sd'), 't', 1 if test['paired'] else 2,
                                                     alpha / 2)  # a two-sided test: each side at alpha / 2
                family.append(dict(test, axis=axis, level=level, cell=cell, contrast=kind, metric=metric,
                                   episodes_cell=seen[0], episodes_baseline=seen[1],
                                   diverged_baseline=len(diverged.get(baseline, ())),
                                   diverged_cell=len(diverged.get(cell, ())), mean_baseline=base.mean(),
                                   mean_cell=x.mean(), effect=effect, n_80=n_80, power_status=power_status or 'ok',
                                   paired='yes' if test['paired'] else 'no'))
            for row, q in zip(family, bh([r['p'] for r in family])):
                row['q_axis'] = q
            rows += family
    table = pd.DataFrame(rows, columns=COLUMNS)
    table['q'] = bh(table['p'])
    return table.astype({'n_80': 'Int64', 'episodes_cell': 'Int64', 'episodes_baseline': 'Int64'})
