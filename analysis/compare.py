"""Each ablation cell against the baseline cell: difference (Welch CI), Welch's t-test, BH q within an
axis and metric, and the seeds per arm that 80% power would need at the observed effect."""
from __future__ import annotations

import pandas as pd

from .cells import axes
from .metrics import TRAIN
from .stats import bh, cohen_d, seeds_for_power, welch

METRICS = ('pass_train', 'pass_heldout', 'reward_21_30', 'final_batch_reward', 'ev_mean', 'gradient_steps', 'kl_mean',
           'entropy_21_30')
COLUMNS = ['axis', 'level', 'cell', 'metric', 'n_baseline', 'n_cell', 'mean_baseline', 'mean_cell', 'diff',
           'ci_low', 'ci_high', 't', 'df', 'p', 'q', 'd', 'n_80', 'status', 'power_status']
NONE = pd.Series(dtype=float)  # a cell without the metric


def compare(values: pd.DataFrame, configs: dict[str, dict], baseline: str | None,
            metrics=METRICS) -> pd.DataFrame:
    """One row per (axis, cell, metric): the cell minus the baseline, with its tests; q per (axis, metric)."""
    runs = values[(values['table'] == TRAIN) & (values['row'] == '')]
    by_run = {key: group['value'] for key, group in runs.groupby(['source', 'metric'])}
    rows = []
    for axis, cells in axes(configs, baseline).items():
        for metric in metrics:
            base = by_run.get((baseline, metric), NONE)
            family = []
            for cell in cells:
                x = by_run.get((cell, metric), NONE)
                d = cohen_d(x, base)
                n_80, power_status = seeds_for_power(d)
                family.append(dict(axis=axis, level=str(configs[cell][axis]), cell=cell, metric=metric,
                                   n_baseline=len(base), n_cell=len(x), mean_baseline=base.mean(),
                                   mean_cell=x.mean(), **welch(x, base), d=d, n_80=n_80, power_status=power_status))
            for row, q in zip(family, bh([r['p'] for r in family])):
                row['q'] = q
            rows += family
    return pd.DataFrame(rows, columns=COLUMNS).astype({'n_80': 'Int64'})
