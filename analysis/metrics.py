"""Per-run values in one tidy frame: source, kind, seed, table, row, metric, value.

Trainer runs give table 'train': their summary fields and the derived figures of Chapter 8's
tables (row ''), and per-epoch means over iterations (row 'epoch=e'). agentrl numbers iterations and
epochs from 0; rows and blocks here count from 1, as the chapter does. Chapter experiments give their
records.csv as written.
"""
from __future__ import annotations

import pandas as pd

from .load import Runs

COLUMNS = ['source', 'kind', 'seed', 'table', 'row', 'metric', 'value']
TRAIN = 'train'  # the table name of trainer values
REWARD_BLOCKS = {'reward_1_10': (1, 10), 'reward_11_20': (11, 20), 'reward_21_30': (21, 30), 'reward_1_30': (1, 30)}
ENTROPY_BLOCKS = {'entropy_1': (1, 1), 'entropy_21_30': (21, 30)}
NOT_STATS = {'name', 'seed', 'iteration', 'epoch', 'minibatch', 'minibatches'}
EPOCH = 'epoch='  # row label of a 1-based epoch: 'epoch=3'


def _long(frame: pd.DataFrame, row, metrics: list[str]) -> pd.DataFrame:
    """Wide per-run frame (name, seed, metrics...) -> tidy trainer values with the given row label(s)."""
    out = frame.assign(row=row).melt(id_vars=['name', 'seed', 'row'], value_vars=metrics, var_name='metric')
    return out.rename(columns={'name': 'source'}).assign(kind='train', table=TRAIN)


def block_means(frame: pd.DataFrame, column: str, blocks: dict[str, tuple[int, int]]) -> pd.DataFrame:
    """Per run (name, seed): the mean of column over each complete block of 1-based iterations [low, high]."""
    out = frame[['name', 'seed']].drop_duplicates()
    for metric, (low, high) in blocks.items():
        block = frame[(frame['iteration'] + 1).between(low, high)].groupby(['name', 'seed'])[column]
        full = block.agg(['mean', 'count']).reset_index()
        full = full[full['count'] == high - low + 1].rename(columns={'mean': metric})[['name', 'seed', metric]]
        out = out.merge(full, on=['name', 'seed'], how='left')
    return out


def iteration_values(iterations: pd.DataFrame) -> pd.DataFrame:
    """Per run: mean batch reward over each complete block of iterations; means over iterations of the EV
    (non-NaN), the epochs used, and the last epoch's KL and clip fraction."""
    per_run = iterations.groupby(['name', 'seed']).agg(
        ev_mean=('ev', 'mean'), epochs_used_mean=('epochs_used', 'mean'), kl_mean=('approx_kl', 'mean'),
        clip_frac_mean=('clip_frac', 'mean')).reset_index()
    per_run = per_run.merge(block_means(iterations, 'reward', REWARD_BLOCKS), on=['name', 'seed'])
    return _long(per_run, '', [c for c in per_run.columns if c not in ('name', 'seed')])


def entropy_values(epochs: pd.DataFrame) -> pd.DataFrame:
    """Per run: the policy-token entropy of the first epoch on a batch, at iteration 1 and over iterations 21-30."""
    per_run = block_means(epochs[epochs['epoch'] == 0], 'entropy', ENTROPY_BLOCKS)
    return _long(per_run, '', list(ENTROPY_BLOCKS))


def epoch_values(epochs: pd.DataFrame) -> pd.DataFrame:
    """Per run and epoch: each statistic of epochs.csv averaged over the iterations that ran that epoch."""
    metrics = [c for c in epochs.columns if c not in NOT_STATS]
    per_epoch = epochs.groupby(['name', 'seed', 'epoch'])[metrics].mean().reset_index()
    return _long(per_epoch, EPOCH + per_epoch['epoch'].add(1).astype(str), metrics)


def values(runs: Runs) -> pd.DataFrame:
    """Every per-run value of every run, NaN dropped, sorted."""
    summaries = runs.summaries[runs.summaries['name'].isin(runs.configs)]
    parts = [summaries.rename(columns={'name': 'source'}).assign(kind='train', table=TRAIN, row='')]
    if 'iterations' in runs.tables:
        parts.append(iteration_values(runs.tables['iterations']))
    if 'epochs' in runs.tables:
        parts += [epoch_values(runs.tables['epochs']), entropy_values(runs.tables['epochs'])]
    if 'records' in runs.tables:
        parts.append(runs.tables['records'].rename(columns={'name': 'source'}).assign(kind='experiment'))
    out = pd.concat([p.reindex(columns=COLUMNS) for p in parts], ignore_index=True)
    out = out.dropna(subset=['value']).astype({'seed': int, 'value': float})
    return out.sort_values(COLUMNS[:-1], ignore_index=True)
