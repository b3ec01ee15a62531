"""Each ablation cell against the baseline cell, paired by seed (cells of one seed share the warm critic, the
first batch and the evaluation seed): the difference with its paired-t CI, the two-sided p, Benjamini-Hochberg q
over the whole table (and within an axis and metric), and the seeds 80% power would need at the smallest effect
of interest, fixed in advance: a change by the claims file's about_factor (a quarter) of the baseline's mean."""
from __future__ import annotations

import math

import pandas as pd

from .cells import axes
from .metrics import TRAIN, diverged_seeds
from .stats import bh, paired, seeds_for_power
from .verdicts import DEFAULTS

METRICS = ('pass_train', 'pass_heldout', 'reward_21_30', 'final_batch_reward', 'ev_mean', 'gradient_steps', 'kl_mean',
           'entropy_21_30')
COLUMNS = ['axis', 'level', 'cell', 'metric', 'n', 'diverged_baseline', 'diverged_cell', 'mean_baseline',
           'mean_cell', 'diff', 'ci_low', 'ci_high', 't', 'df', 'p', 'q', 'q_axis', 'effect', 'n_80', 'paired',
           'status', 'power_status']
NONE = pd.Series(dtype=float)  # a cell without the metric


def compare(values: pd.DataFrame, configs: dict[str, dict], baseline: str | None, metrics=METRICS,
            about_factor: float = DEFAULTS['about_factor'], alpha: float = DEFAULTS['alpha']) -> pd.DataFrame:
    """One row per (axis, cell, metric): the cell minus the baseline on their common seeds, with its tests."""
    runs = values[(values['table'] == TRAIN) & (values['row'] == '')]
    by_run = {key: group.set_index('seed')['value'] for key, group in runs.groupby(['source', 'metric'])}
    diverged = diverged_seeds(values)
    rows = []
    for axis, cells in axes(configs, baseline).items():
        for metric in metrics:
            base = by_run.get((baseline, metric), NONE)
            family = []
            for cell in cells:
                x = by_run.get((cell, metric), NONE)
                test = paired(x, base)
                effect = math.log(about_factor) * abs(base.mean()) if len(base) else math.nan
                n_80, power_status = seeds_for_power(effect, test.pop('sd'), 't', 1 if test['paired'] else 2,
                                                     alpha / 2)  # a two-sided test: each side at alpha / 2
                family.append(dict(test, axis=axis, level=str(configs[cell][axis]), cell=cell, metric=metric,
                                   diverged_baseline=len(diverged.get(baseline, ())),
                                   diverged_cell=len(diverged.get(cell, ())), mean_baseline=base.mean(),
                                   mean_cell=x.mean(), effect=effect, n_80=n_80, power_status=power_status or 'ok',
                                   paired='yes' if test['paired'] else 'no'))
            for row, q in zip(family, bh([r['p'] for r in family])):
                row['q_axis'] = q
            rows += family
    table = pd.DataFrame(rows, columns=COLUMNS)
    table['q'] = bh(table['p'])
    return table.astype({'n_80': 'Int64'})
