"""Per-run values in one tidy frame: source, kind, seed, table, row, metric, value.

Trainer runs give table 'train': their summary fields and the derived figures of Chapter 8's
tables (row ''), and per-epoch means over iterations (row 'epoch=e'). agentrl numbers iterations and
epochs from 0; rows and blocks here count from 1, as the chapter does. Chapter experiments give their
records.csv as written, and Figure 8.1's per-episode log-weights summarised per length bucket.

A diverged run (summary field diverged = 1) is not evaluated; it counts as a failure: its pass rates are 0.
"""
from __future__ import annotations

import pandas as pd

from agentrl.chapter.lengths import BUCKETS, inclusive, label

from ..records.load import Runs

COLUMNS = ['source', 'kind', 'seed', 'table', 'row', 'metric', 'value']
TRAIN = 'train'  # the table name of trainer values
REWARD_BLOCKS = {'reward_1_10': (1, 10), 'reward_11_20': (11, 20), 'reward_21_30': (21, 30), 'reward_1_30': (1, 30)}
ENTROPY_BLOCKS = {'entropy_1': (1, 1), 'entropy_21_30': (21, 30)}
NOT_STATS = {'name', 'seed', 'iteration', 'epoch', 'minibatch', 'minibatches'}
EPOCH = 'epoch='  # row label of a 1-based epoch: 'epoch=3'
PASS_RATES = ('pass_train', 'pass_heldout')  # a diverged run's are 0: it failed every task
RATES = PASS_RATES + ('final_batch_reward', 'fresh_pass', 'snis_estimate', 'ess_over_n', 'clip_frac', 'clip_frac_mean',
                      'clip_frac_high', 'clip_frac_low', 'clip_frac_dual', 'clip_frac_positive', 'clip_frac_negative',
                      'outside_band', 'above_1_2', 'epochs_used_2_3', *REWARD_BLOCKS)
RANGES = {metric: (0.0, 1.0) for metric in RATES}  # a metric's range: intervals never leave it
# Figure 8.1's short and long episodes: T2's first and last buckets of policy tokens (agentrl/chapter/lengths.py)
LENGTHS = {f'tokens={label(bucket)}': (*bucket, inclusive(bucket)) for bucket in (BUCKETS[0], BUCKETS[-1])}


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
    (non-NaN), the epochs used, the share of iterations that used 2 or 3 epochs, and the last epoch's KL and clip
    fraction."""
    per_run = iterations.assign(epochs_2_3=iterations['epochs_used'].isin([2, 3]).astype(float)).groupby(
        ['name', 'seed']).agg(ev_mean=('ev', 'mean'), epochs_used_mean=('epochs_used', 'mean'),
                              epochs_used_2_3=('epochs_2_3', 'mean'), kl_mean=('approx_kl', 'mean'),
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


def log_weight_values(records: pd.DataFrame) -> pd.DataFrame:
    """Figure 8.1 per run: the mean and the lowest log-weight after 10 updates of short and of long episodes."""
    points = records[records['table'] == 'F8.1'].pivot_table(index=['name', 'seed', 'row'], columns='metric',
                                                           values='value').reset_index()
    if points.empty or not {'policy_tokens', 'log_w_k10'} <= set(points.columns):
        return pd.DataFrame(columns=['name', 'seed', 'table', 'row', 'metric', 'value'])
    parts = []
    for row, (low, high, inclusive) in LENGTHS.items():
        inside = points[points['policy_tokens'].between(low, high, inclusive=inclusive)]
        stats = inside.groupby(['name', 'seed'])['log_w_k10'].agg(mean_log_w='mean', min_log_w='min').reset_index()
        parts.append(stats.melt(id_vars=['name', 'seed'], var_name='metric').assign(table='F8.1', row=row))
    return pd.concat(parts, ignore_index=True)


def with_failures(summaries: pd.DataFrame) -> pd.DataFrame:
    """Summary values with the pass rates of diverged runs set to 0 (failures), not missing."""
    diverged = summaries.loc[(summaries['metric'] == 'diverged') & (summaries['value'] == 1), ['name', 'seed']]
    failed = diverged.merge(pd.DataFrame(dict(metric=PASS_RATES)), how='cross').assign(value=0.0)
    keys = ['name', 'seed', 'metric']
    kept = summaries.merge(failed[keys], on=keys, how='left', indicator=True)
    return pd.concat([kept[kept['_merge'] == 'left_only'].drop(columns='_merge'), failed], ignore_index=True)


def reward_at(iterations: pd.DataFrame, name: str, episodes: int, diverged: list[int]) -> pd.Series:
    """One cell's batch reward by seed at the iteration that ends after `episodes` training episodes; a diverged run
    stopped before it counts as a failure (0)."""
    rows = iterations[(iterations['name'] == name) & (iterations['episodes'] == episodes)]
    found = rows.set_index('seed')['reward']
    failed = pd.Series(0.0, index=[seed for seed in diverged if seed not in found.index])
    return pd.concat([found, failed]).sort_index() if len(failed) else found.sort_index()


def diverged_seeds(values: pd.DataFrame) -> dict[str, list[int]]:
    """Trainer cell -> the seeds of its diverged runs (sorted); cells without any are absent."""
    rows = values[(values['table'] == TRAIN) & (values['metric'] == 'diverged') & (values['value'] == 1)]
    return {cell: sorted(group['seed']) for cell, group in rows.groupby('source')}


def values(runs: Runs) -> pd.DataFrame:
    """Every per-run value of every run, NaN dropped (a diverged run's pass rates are 0), sorted."""
    summaries = with_failures(runs.summaries[runs.summaries['name'].isin(runs.configs)])
    parts = [summaries.rename(columns={'name': 'source'}).assign(kind='train', table=TRAIN, row='')]
    if 'iterations' in runs.tables:
        parts.append(iteration_values(runs.tables['iterations']))
    if 'epochs' in runs.tables:
        parts += [epoch_values(runs.tables['epochs']), entropy_values(runs.tables['epochs'])]
    if 'records' in runs.tables:
        records = runs.tables['records']
        parts += [records.rename(columns={'name': 'source'}).assign(kind='experiment'),
                  log_weight_values(records).rename(columns={'name': 'source'}).assign(kind='experiment')]
    out = pd.concat([p.reindex(columns=COLUMNS) for p in parts], ignore_index=True)
    out = out.dropna(subset=['value']).astype({'seed': int, 'value': float})
    return out.sort_values(COLUMNS[:-1], ignore_index=True)
