"""The analysis package on synthetic run directories written to disk in the format agentrl writes."""
from __future__ import annotations

import csv
import json
import math
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from agentrl.numerics import NUMERICS_VERSION, PROVENANCE_KEYS
from analysis.stats.cells import axes, find_baseline, select
from analysis.ledger.chapter import Context, chapter_tables, check_value, load_chapter, printed, resolve
from analysis.ledger.claims import claim_inputs, evaluate, expand, group, judged, ledger, load_claims, samples
from analysis.stats.compare import compare
from analysis.pages.figures import figure_8_3, style
from analysis.records.load import find_runs, load_runs
from analysis.stats.metrics import log_weight_values, values
from analysis.pages.report import FINDINGS_FILE, aggregate
from analysis.text import to_markdown
from scipy import stats as scipy_stats
from analysis.stats.eprocess import ebh
from analysis.stats.inference import describe, seeds_for_power
from analysis.ledger.verdicts import DECIDED, DIRECTION_VERDICTS, SUPPORTED, VERDICTS, decide

REPO = Path(__file__).resolve().parents[1]
PROVENANCE = {**dict.fromkeys(PROVENANCE_KEYS, 'test'), 'numerics_version': NUMERICS_VERSION}  # what the aggregation requires
CHAPTER = load_chapter()
DEFAULTS = dict(algorithm='ppo', gamma=1.0, lam=1.0, epochs=4, minibatches=4, clip_low=0.2, clip_high=0.2,
                dual_clip=None, value_clip=0.2, target_kl=None, early_stop='epoch', lr=1e-3, critic_lr=1e-3,
                iterations=30, episodes_per_iteration=64, max_grad_norm=1.0, loss_mode='token_mean', norm_const=None,
                whiten_advantages=True, critic_warmup_steps=100, critic_warmup_episodes_per_task=24, kl_penalty=None,
                kl_penalty_target=0.01, eval_episodes_per_task=16, seed=0)
EPOCH_STATS = ('clip_frac', 'clip_frac_high', 'clip_frac_low', 'clip_frac_dual', 'approx_kl', 'kl_k1', 'ratio_min',
               'ratio_mean', 'ratio_max', 'policy_loss', 'value_loss', 'grad_norm', 'entropy')
CELLS = {'baseline': {}, 'lam0.95': {'lam': 0.95}, 'lam0.9': {'lam': 0.9}, 'epochs8': {'epochs': 8},
         'kl0.02': {'target_kl': 0.02},
         'reinforce': {'algorithm': 'reinforce', 'lr': 2e-3}, 'vclip-none': {'value_clip': None}}
SEEDS = tuple(range(12))  # enough for exact tests to decide across the whole ledger


def write_csv(path: Path, rows: list[dict]) -> None:
    """As agentrl writes a table: NaN as an empty field; no records gives a file with one empty line."""
    with open(path, 'w', newline='') as f:
        writer = csv.DictWriter(f, fieldnames=list(dict.fromkeys(k for row in rows for k in row)))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: '' if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()})


def write_run(path: Path, meta: dict, tables: dict[str, list[dict]]) -> Path:
    """A run directory as agentrl writes it; the provenance the aggregation requires unless meta has its own."""
    path.mkdir(parents=True)
    (path / 'run.json').write_text(json.dumps({'provenance': PROVENANCE, **meta}, indent=2, sort_keys=True))
    for name, rows in tables.items():
        write_csv(path / f'{name}.csv', rows)
    return path


def train_run(root: Path, cell: str, seed: int, overrides: dict) -> Path:
    """A trainer run: reward ramps up, KL and clip fraction grow with the epoch (an iteration logs its last
    epoch's), held-out below train.

    REINFORCE learns at half the speed, has no epochs (an empty epochs.csv, as agentrl writes it) and no EV.
    """
    rng = np.random.default_rng(zlib.crc32(f'{cell}/{seed}'.encode()))
    config = dict(DEFAULTS, **overrides, seed=seed)
    reinforce = config['algorithm'] == 'reinforce'
    iterations, epochs, minibatches = [], [], []
    for it in range(config['iterations']):
        used = 0 if reinforce else int(rng.integers(2, 4)) if config['target_kl'] else config['epochs']
        for epoch in range(used):
            stats = {k: float(abs(rng.normal(0.02 * (epoch + 1), 0.003))) for k in EPOCH_STATS}
            stats.update(approx_kl=0.005 * (epoch + 1) ** 2 * (1 + 0.1 * rng.normal()),
                         ratio_min=0.8 - 0.15 * epoch, ratio_max=1.3 + 1.5 * epoch + 0.1 * rng.normal())
            epochs.append(dict(iteration=it, epoch=epoch, minibatches=config['minibatches'], **stats))
            if it < 2:  # unused by the analysis: a few rows show the format
                minibatches += [dict(iteration=it, epoch=epoch, minibatch=m, **stats) for m in range(config['minibatches'])]
        reward = min(1.0, (0.5 if reinforce else 1.0) * (0.3 + 0.03 * it) + 0.05 * rng.normal())
        ev = math.nan if reinforce or it % 7 == 0 else 0.12 + 0.05 * rng.normal()  # NaN: an all-equal batch
        iterations.append(dict(iteration=it, episodes=64 * (it + 1), reward=reward, ev=ev, epochs_used=max(used, 1),
                               gradient_steps=max(used * config['minibatches'], 1),
                               approx_kl=epochs[-1]['approx_kl'] if used else math.nan,
                               clip_frac=epochs[-1]['clip_frac'] if used else math.nan,
                               beta=0.0, policy_tokens=9.0, sample_s=0.1, wall_s=0.5))
    held_out = (0.45 if reinforce else 0.3) + 0.03 * rng.normal()
    summary = dict(pass_train=0.9 + 0.03 * rng.normal(), pass_heldout=held_out, diverged=False, diverged_at=None,
                   iterations_done=len(iterations), gradient_steps=sum(i['gradient_steps'] for i in iterations),
                   final_batch_reward=iterations[-1]['reward'], wall_s=80.0)
    meta = dict(kind='train', name=cell, seed=seed, config=config, summary=summary)
    return write_run(root / cell / f'seed~{seed}', meta, dict(iterations=iterations, epochs=epochs,
                                                                 minibatches=minibatches))


EXPERIMENTS = {'importance_weights': ('T1', 'T2', 'F8.1'), 'surrogate': ('T3',), 'clip_gradients': ('T4', 'T5'),
               'trust_region': ('T6',), 'sixteen_epochs': ('T10', 'T12', 'T13'), 'staleness': ('T11',)}


def chapter_records(rng) -> list[dict]:
    """Records of every experiment table: the chapter's value with 5% noise (exact tables and zeros without)."""
    records = []
    for table, spec in CHAPTER['tables'].items():
        for row, metrics in spec['values'].items():
            for metric, text in metrics.items():
                value = printed(text)[0]
                noise = 0.0 if spec.get('exact') or row == 'k=0' else 0.05 * rng.normal()
                records.append(dict(table=table, row=row, metric=metric, value=value * (1 + noise)))
    for epoch in set(range(1, 17)) - {1, 4, 8, 12, 16}:  # the 16-epoch run writes every epoch (Figure 8.3)
        records += [dict(table='T10', row=f'epoch={epoch}', metric='approx_kl', value=0.007 + 0.001 * epoch),
                    dict(table='T10', row=f'epoch={epoch}', metric='clip_frac', value=0.04 + 0.008 * epoch)]
    for episode in range(40):  # Figure 8.1, right
        tokens = int(rng.integers(2, 40))
        records += [dict(table='F8.1', row=f'episode={episode}', metric='policy_tokens', value=tokens),
                    dict(table='F8.1', row=f'episode={episode}', metric='log_w_k10',
                         value=rng.normal(0, 0.5 * tokens ** 0.5))]
    return records


def experiment_runs(root: Path, seed: int) -> None:
    """One run per experiment; the deterministic clip_gradients only for seed 0."""
    records = pd.DataFrame(chapter_records(np.random.default_rng(100 + seed)))
    for name, tables in EXPERIMENTS.items():
        if name != 'clip_gradients' or seed == 0:
            meta = dict(kind='experiment', name=name, seed=seed, summary={'records': 1})
            write_run(root / name / f'seed~{seed}', meta,
                      dict(records=records[records['table'].isin(tables)].to_dict('records')))


@pytest.fixture(scope='module')
def tree(tmp_path_factory) -> Path:
    """results/runs/<cell>/seed~s and results/experiments/chapter/seed~s, plus a temporary and a stray folder."""
    root = tmp_path_factory.mktemp('results')
    for cell, overrides in CELLS.items():
        for seed in SEEDS:
            train_run(root / 'runs', cell, seed, overrides)
    for seed in SEEDS:
        experiment_runs(root / 'experiments', seed)
    (root / 'runs' / 'baseline' / '.seed~9.tmp-1').mkdir()  # an unfinished write: has run.json, is hidden
    (root / 'runs' / 'baseline' / '.seed~9.tmp-1' / 'run.json').write_text('{not json')
    (root / 'runs' / 'stray').mkdir()  # no run.json: not a run
    return root


@pytest.fixture(scope='module')
def runs(tree):
    return load_runs(tree / 'runs', tree / 'experiments')


@pytest.fixture(scope='module')
def ctx(runs) -> Context:
    return Context.build(runs)


def seed_values(runs, cell: str, metric: str) -> np.ndarray:
    s = runs.summaries
    return s[(s['name'] == cell) & (s['metric'] == metric)].sort_values('seed')['value'].to_numpy()


# --- reading ------------------------------------------------------------------------------------------------

def test_find_runs_skips_temporaries_and_folders_without_run_json(tree):
    found = find_runs(tree)
    assert len(found) == len(CELLS) * len(SEEDS) + 5 * len(SEEDS) + 1
    assert not any('.seed' in str(p) or p.name == 'stray' for p in found)
    assert find_runs(tree / 'missing') == []


def test_load_reads_configs_summaries_and_tables(runs):
    assert sorted(runs.configs) == sorted(CELLS)
    assert 'seed' not in runs.configs['baseline'] and runs.configs['lam0.95']['lam'] == 0.95
    assert runs.configs['kl0.02']['target_kl'] == 0.02 and runs.configs['baseline']['target_kl'] is None
    assert len(runs.table('iterations')) == len(CELLS) * len(SEEDS) * 30
    assert runs.table('iterations')['ev'].isna().sum() == len(CELLS) * len(SEEDS) * 5 + len(SEEDS) * 25
    assert set(runs.table('epochs')['name']) == set(CELLS) - {'reinforce'}  # its epochs.csv is empty
    records = runs.table('records')
    assert set(records.loc[records['table'] == 'T2', 'row']) == {'0-8', '8-16', '16-64'}
    assert records['value'].dtype == float and records['row'].map(type).eq(str).all()
    assert list(runs.runs.columns) == ['kind', 'name', 'seed', 'numerics_version', 'cpu', 'cpu_vendor',
                                       'cpu_capability', 'torch', 'numeric_settings', 'guarantee', 'path']
    assert set(runs.runs['cpu']) == {'test'} and set(runs.runs['torch']) == {''}  # as stated; '' where not
    assert set(runs.runs['numerics_version']) == {NUMERICS_VERSION}  # as their provenance states
    assert runs.summaries[runs.summaries['metric'] == 'diverged']['value'].eq(0.0).all()


def test_load_names_a_broken_run_json(tmp_path):
    (tmp_path / 'cell' / 'seed~0').mkdir(parents=True)
    (tmp_path / 'cell' / 'seed~0' / 'run.json').write_text('{broken')
    with pytest.raises(ValueError, match=r'seed~0/run.json is not valid JSON'):
        load_runs(tmp_path)


def test_load_refuses_a_run_made_without_the_numeric_settings_naming_it(tmp_path):
    run = tmp_path / 'cell' / 'seed~0' / 'run.json'
    run.parent.mkdir(parents=True)
    run.write_text(json.dumps(dict(kind='train', name='cell', seed=0, provenance={'host': 'old'})))
    with pytest.raises(ValueError, match=r'cell/seed~0/run.json has no numerics_version, cpu, .* rerun it'):
        load_runs(tmp_path)
    run.write_text(json.dumps(dict(kind='train', name='cell', seed=0, provenance=PROVENANCE)))
    assert load_runs(tmp_path).runs['name'].tolist() == ['cell']


def test_values_derive_the_chapter_figures_of_a_run(tree, ctx):
    its = pd.read_csv(tree / 'runs' / 'baseline' / 'seed~2' / 'iterations.csv')
    mine = ctx.values[(ctx.values['source'] == 'baseline') & (ctx.values['seed'] == 2) & (ctx.values['row'] == '')]
    mine = mine.set_index('metric')['value']
    assert mine['reward_1_10'] == pytest.approx(its['reward'][:10].mean())
    assert mine['reward_21_30'] == pytest.approx(its['reward'][20:30].mean())
    assert mine['ev_mean'] == pytest.approx(its['ev'].dropna().mean())
    assert mine['kl_mean'] == pytest.approx(its['approx_kl'].mean())
    assert mine['pass_train'] == seed_values(ctx_runs := load_runs(tree / 'runs'), 'baseline', 'pass_train')[2]
    epochs = pd.read_csv(tree / 'runs' / 'baseline' / 'seed~2' / 'epochs.csv')
    first = epochs[epochs['epoch'] == 0].set_index('iteration')['entropy']
    assert mine['entropy_1'] == pytest.approx(first[0])
    assert mine['entropy_21_30'] == pytest.approx(first[20:30].mean())
    kl = ctx.values[(ctx.values['source'] == 'baseline') & (ctx.values['seed'] == 2)
                    & (ctx.values['metric'] == 'approx_kl')]
    assert kl.set_index('row')['value'].to_dict() == pytest.approx(
        {f'epoch={e + 1}': epochs.loc[epochs['epoch'] == e, 'approx_kl'].mean() for e in range(4)})
    assert len(ctx_runs.runs) == len(CELLS) * len(SEEDS)


def test_values_derive_the_coverage_claims_inputs(tree, ctx):
    its = pd.read_csv(tree / 'runs' / 'kl0.02' / 'seed~1' / 'iterations.csv')
    mine = ctx.values[(ctx.values['source'] == 'kl0.02') & (ctx.values['seed'] == 1)].set_index('metric')['value']
    assert mine['epochs_used_2_3'] == pytest.approx(its['epochs_used'].isin([2, 3]).mean())  # T9: stops at 2 or 3
    records = pd.read_csv(tree / 'experiments' / 'importance_weights' / 'seed~1' / 'records.csv')
    points = records[records['table'] == 'F8.1'].pivot(index='row', columns='metric', values='value')
    long = points.loc[points['policy_tokens'] >= 16, 'log_w_k10']
    v = ctx.values
    f81 = v[(v['table'] == 'F8.1') & (v['seed'] == 1) & (v['row'] == 'tokens=16-64')].set_index('metric')['value']
    assert f81.to_dict() == pytest.approx(dict(mean_log_w=long.mean(), min_log_w=long.min()))


def test_an_incomplete_block_of_iterations_is_missing_not_partial(tmp_path):
    train_run(tmp_path, 'short', 0, dict(iterations=15))
    got = values(load_runs(tmp_path))
    metrics = set(got.loc[got['row'] == '', 'metric'])
    assert {'reward_1_10', 'ev_mean', 'pass_train'} <= metrics and not {'reward_11_20', 'reward_21_30'} & metrics


# --- cells and comparisons ----------------------------------------------------------------------------------

def test_baseline_axes_and_selection(runs):
    configs = runs.configs
    assert find_baseline(configs) == 'baseline'
    renamed = {('chapter' if k == 'baseline' else k): v for k, v in configs.items()}
    assert find_baseline(renamed, defaults=CHAPTER['defaults']) == 'chapter'
    assert find_baseline(renamed) is None
    assert axes(configs, 'baseline') == {'algorithm': ['reinforce'], 'epochs': ['epochs8'],  # its lr is its own
                                         'lam': ['lam0.9', 'lam0.95'], 'target_kl': ['kl0.02'],
                                         'value_clip': ['vclip-none']}
    assert axes(configs, None) == {}
    assert select(configs, {}, 'baseline') == 'baseline'
    assert select(configs, {'lam': 1.0}, 'baseline') == 'baseline'
    assert select(configs, {'lam': 0.95}, 'baseline') == 'lam0.95'
    assert select(configs, {'algorithm': 'reinforce'}, 'baseline') == 'reinforce'
    assert select(configs, {'lam': 0.5}, 'baseline') is None
    assert select(configs, {}, None) is None and select(configs, {'lam': 0.95}, None) == 'lam0.95'


def test_comparisons_against_the_baseline_are_paired_by_seed(runs, ctx):
    table = compare(ctx.values, ctx.configs, ctx.baseline)
    assert set(table['axis']) == {'algorithm', 'epochs', 'lam', 'target_kl', 'value_clip'}
    row = table[(table['cell'] == 'lam0.95') & (table['metric'] == 'pass_heldout')].iloc[0]
    x, base = seed_values(runs, 'lam0.95', 'pass_heldout'), seed_values(runs, 'baseline', 'pass_heldout')
    ref = scipy_stats.ttest_rel(x, base)  # cells of one seed share the warm critic, first batch and evaluation
    assert row['diff'] == pytest.approx(x.mean() - base.mean()) and row['p'] == pytest.approx(ref.pvalue)
    assert (row['ci_low'], row['ci_high']) == pytest.approx(tuple(ref.confidence_interval(0.95)))
    assert (row['n'], row['paired'], row['level'], row['diverged_cell']) == (len(SEEDS), 'yes', '0.95', 0)
    ok = table['p'].notna()
    assert table.loc[ok, 'q'].to_numpy() == pytest.approx(scipy_stats.false_discovery_control(table.loc[ok, 'p']))
    lam = table[(table['axis'] == 'lam') & (table['metric'] == 'pass_heldout')]
    assert lam['q_axis'].to_numpy() == pytest.approx(scipy_stats.false_discovery_control(lam['p'].to_numpy()))
    # power at the pre-registered effect (a quarter of the baseline mean), not at the observed one
    assert row['effect'] == pytest.approx(math.log(1.25) * base.mean())
    d = row['effect'] / np.std(x - base, ddof=1)
    assert row['n_80'] == seeds_for_power(d, 1.0, 't', 1, 0.025)[0]
    steps = table[(table['cell'] == 'epochs8') & (table['metric'] == 'gradient_steps')].iloc[0]
    assert steps['status'] == 'zero variance' and steps['diff'] == 480 and steps['power_status'] == 'no spread'
    assert pd.isna(steps['n_80'])
    assert compare(ctx.values, ctx.configs, None).empty


def diverge(path: Path) -> None:
    """Turn a written run into a diverged one, as agentrl writes it: not evaluated, pass rates NaN."""
    meta = json.loads((path / 'run.json').read_text())
    meta['summary'].update(diverged=True, diverged_at=12, pass_train=math.nan, pass_heldout=math.nan)
    (path / 'run.json').write_text(json.dumps(meta))


def test_a_diverged_run_counts_as_a_failure_and_is_counted_everywhere(tmp_path):
    for seed in SEEDS:
        train_run(tmp_path, 'baseline', seed, {})
        train_run(tmp_path, 'lam0.95', seed, {'lam': 0.95})
    diverge(tmp_path / 'lam0.95' / 'seed~3')
    runs = load_runs(tmp_path)
    got = values(runs)
    failed = got[(got['source'] == 'lam0.95') & (got['seed'] == 3) & got['metric'].isin(['pass_train', 'pass_heldout'])]
    assert list(failed['value']) == [0.0, 0.0]  # failures, not dropped
    result = aggregate(runs, tmp_path / 'out', parts=('tables', 'claims'))
    cells = pd.read_csv(tmp_path / 'out' / 'tables' / 'cells.csv')
    assert set(cells.loc[cells['cell'] == 'lam0.95', 'diverged']) == {1} and set(cells.loc[cells['cell'] == 'baseline',
                                                                                        'diverged']) == {0}
    assert cells.loc[(cells['cell'] == 'lam0.95') & (cells['metric'] == 'pass_train'), 'n'].item() == len(SEEDS)
    comparisons = pd.read_csv(tmp_path / 'out' / 'tables' / 'comparisons.csv')
    assert set(comparisons['diverged_cell']) == {1} and set(comparisons['diverged_baseline']) == {0}
    claims = pd.read_csv(tmp_path / 'out' / 'tables' / 'claims.csv').set_index('id')
    assert claims.loc['lam095-reaches-0.9', 'diverged'] == 1 and claims.loc['lam1-reaches-0.9', 'diverged'] == 0
    assert claims.loc['lam095-reaches-0.9', 'n'] == len(SEEDS) and len(result)


# --- the chapter's tables and the claims ledger -------------------------------------------------------------

def test_chapter_tables_hold_every_figure(runs, ctx):
    table = chapter_tables(ctx)
    assert len(table) == sum(len(m) for t in CHAPTER['tables'].values() for m in t['values'].values())
    t7 = table[(table['table'] == 'T7') & (table['row'] == 'lam=0.95') & (table['metric'] == 'pass_train')].iloc[0]
    assert t7['mean'] == pytest.approx(seed_values(runs, 'lam0.95', 'pass_train').mean())
    assert (t7['source'], t7['chapter'], t7['n']) == ('lam0.95', '0.925', len(SEEDS))
    assert t7['inside_pi'] == ('yes' if t7['pi_low'] - 5e-4 <= 0.925 <= t7['pi_high'] + 5e-4 else 'no')
    t8 = table[table['table'] == 'T8']
    assert set(t8['source']) == {'baseline'} and t8['n'].eq(len(SEEDS)).all()
    t4 = table[table['table'] == 'T4']
    assert t4['n'].eq(1).all() and t4['status'].eq('n=1').all() and t4['inside_pi'].eq('yes').all()  # exact
    t1 = table[(table['table'] == 'T1') & (table['row'] == 'k=0') & (table['metric'] == 'ess_over_n')].iloc[0]
    assert (t1['status'], t1['inside_pi'], t1['source']) == ('constant', 'yes', 'importance_weights')


def test_chapter_tables_without_runs_are_empty_not_broken(tmp_path):
    table = chapter_tables(Context.build(load_runs(tmp_path)))
    assert table['status'].eq('empty').all() and table['inside_pi'].eq('n/a').all() and table['n'].eq(0).all()


def test_check_value_widens_by_the_print_rounding():
    summary = describe([0.1, 0.1, 0.1])
    assert check_value(summary, '0.10')['inside'] and not check_value(summary, '0.11')['inside']
    assert check_value(describe([0.3]), '0.3') is None and check_value(describe([0.3]), '0.3', exact=True)['inside']


def test_resolve_minus_pairs_by_seed_and_refuses_mixed_groups(ctx):
    gap = resolve(dict(table='T1', row='k=10', metric='fresh_pass', minus=dict(metric='is_estimate')), ctx)
    a = resolve(dict(table='T1', row='k=10', metric='fresh_pass'), ctx).values
    b = resolve(dict(table='T1', row='k=10', metric='is_estimate'), ctx).values
    assert gap.values.to_dict() == pytest.approx((a - b).to_dict()) and gap.group == 'importance_weights'
    mixed = resolve(dict(table='T8', row='epoch=4', metric='approx_kl', minus=dict(table='T10')), ctx)
    assert mixed.values.empty and 'different runs' in mixed.note


def test_the_ledger_covers_the_chapter(ctx):
    claims = load_claims()
    assert len(claims['claims']) >= 90 and len({c['id'] for c in claims['claims']}) == len(claims['claims'])
    assert {c['kind'] for c in claims['claims']} == {'greater', 'less', 'increasing', 'decreasing', 'about', 'check'}
    for claim in claims['claims']:  # every input names a figure the chapter printed, a trainer metric, or a derived one
        assert claim['kind'] == 'check' or 'scale' in claim, claim['id']
        assert claim['kind'] != 'about' or claim.get('rationale'), claim['id']
        assert len(claim['inputs']) < 2 or claim['kind'] == 'check' or 'paired' in claim, claim['id']
        for spec in claim['inputs']:
            if 'table' in spec and spec['table'] in CHAPTER['tables']:
                table = CHAPTER['tables'][spec['table']]
                assert spec['row'] in table['values'] or spec['row'].startswith('epoch=') or spec['table'] in (
                    'T2', 'T10'), (claim['id'], spec)
    out = ledger(ctx)
    assert list(out['id']) == [c['id'] for c in claims['claims']]
    assert set(out.loc[~out['group'].isin(['check', 'finding']), 'verdict']) <= {*VERDICTS, 'untested'}
    assert set(out.loc[out['group'] == 'check', 'verdict']) == {'pass'}  # T4, T5, T12: apart from the claims
    decided = out[out['verdict'].isin(DECIDED)]
    assert decided['e'].notna().all() and decided['numbers'].ne('').all() and len(decided) >= 30
    assert out.loc[out['verdict'] == 'untested', 'note'].ne('').all()
    by_id = out.set_index('id')
    assert by_id.loc['heldout-below-train-lam1', 'verdict'] == 'reproduced'
    assert by_id.loc['ppo-faster-than-reinforce', 'verdict'] == 'reproduced'
    assert by_id.loc['ppo-heldout-below-reinforce', 'verdict'] == 'reproduced'
    assert by_id.loc['clip-cuts-kl-25x', 'verdict'] == 'inside'  # the synthetic records hold the chapter's values
    assert by_id.loc['dual-clip-loss', 'group'] == 'check' and by_id.loc['dual-clip-loss', 'n'] == 1
    assert by_id.loc['value-clip-0.2-hurts', 'group'] == 'literature'
    assert by_id.loc['smaller-lr-cheaper-kl', 'verdict'] == 'untested'  # no lr cell in the synthetic runs
    assert by_id.loc['smaller-lr-cheaper-kl', 'note'] == ('no trainer cell with algorithm=ppo, lr=0.0005; '
                                                          'no trainer cell with algorithm=ppo, lr=0.002')


def test_the_ledger_corrects_across_claims_and_decide_recomputes_every_row(ctx):
    """One family: the e-values for and against every judged claim, e-BH at 0.05; its threshold m / (alpha R) is the
    one every verdict is read at, and each row decided again alone at that threshold, from claim_inputs alone, gets
    the same verdict and e-values."""
    out = ledger(ctx)
    tested = out[judged(out)]
    pooled = np.r_[tested['e'], tested['e_against']]  # one family: every e-value for and against
    rejected, threshold = ebh(pooled, 0.05)
    assert out.attrs['threshold'] == pytest.approx(threshold) and out.attrs['alpha'] == 0.05
    assert out.attrs['family'] == int(np.isfinite(pooled).sum()) and out.attrs['rejections'] == int(rejected.sum())
    assert 0 < out.attrs['rejections'] < out.attrs['family']  # the synthetic runs decide some claims, not all
    assert threshold == pytest.approx(out.attrs['family'] / (0.05 * out.attrs['rejections']))
    assert (((tested['e'] >= threshold) & (tested['e_against'] < threshold) & (tested['n'] >= 3))
            == tested['verdict'].isin(SUPPORTED)).all()
    assert (tested['level'].dropna() >= 1 - 1 / threshold - 1e-12).all()  # every interval at the threshold (or past)
    assert out.loc[out['group'] == 'finding', 'verdict'].isin(['finding', 'untested']).all()
    assert out['e'].notna().sum() > 30
    inputs = claim_inputs(ctx)
    assert list(inputs.columns) == ['id', 'input', 'seed', 'value']
    for claim in load_claims()['claims']:  # one call per claim, from claim_inputs alone
        rows = inputs[inputs['id'] == claim['id']]
        series = [rows[rows['input'] == i].set_index('seed')['value'] for i in range(len(claim['inputs']))]
        again = decide(claim, series, threshold)
        mine = out.set_index('id').loc[claim['id']]
        assert again['verdict'] == mine['verdict'] or mine['verdict'] == 'finding', claim['id']
        assert again['e'] == pytest.approx(mine['e'], nan_ok=True), claim['id']
        assert again['e_against'] == pytest.approx(mine['e_against'], nan_ok=True), claim['id']
        assert again['interval'] == mine['interval'], claim['id']


def claim(kind: str, inputs: list[dict], **extra) -> dict:
    """A claim on the raw scale; a direction's smallest effect 0 unless the test sets one (its metrics have no
    raw_effects rule here: a sign test alone)."""
    if kind in ('greater', 'less', 'increasing', 'decreasing') and 'than' not in extra:
        extra.setdefault('effect', 0.0)
    return {**dict(id='x', claim='test', source='test', kind=kind, inputs=inputs, scale='raw'), **extra}


TRAIN_HELD = [{'cell': {}, 'metric': 'pass_train'}, {'cell': {}, 'metric': 'pass_heldout'}]
KL = {'table': 'T8', 'metric': 'approx_kl'}


def run(spec: dict, ctx: Context, **options) -> dict:
    spec = dict(spec, inputs=expand(spec['inputs']))
    return evaluate(spec, samples(spec, ctx), **options)


@pytest.mark.parametrize('spec, verdict', [
    (claim('greater', TRAIN_HELD, paired=True), 'reproduced'),
    (claim('less', TRAIN_HELD, paired=True), 'reversed'),
    (claim('greater', TRAIN_HELD[:1], than=0.99), 'reversed'),
    (claim('greater', TRAIN_HELD[:1], than=0.9), 'inconclusive'),
    (claim('increasing', [dict(KL, rows=['epoch=1', 'epoch=2', 'epoch=3'])], paired=True), 'reproduced'),
    (claim('decreasing', [dict(KL, rows=['epoch=1', 'epoch=2'])], paired=True), 'reversed'),
    (claim('about', [dict(KL, row='epoch=2'), dict(KL, row='epoch=1')], about=4, of='ratio', paired=True,
           scale='log'), 'inside'),
    (claim('about', [dict(KL, row='epoch=2'), dict(KL, row='epoch=1')], about=40, of='ratio', paired=True,
           scale='log'), 'outside'),
    (claim('about', [{'cell': {'epochs': 8}, 'metric': 'gradient_steps'}, {'cell': {}, 'metric': 'gradient_steps'}],
           about=2, of='ratio', paired=True, scale='log'), 'inside'),
    (claim('about', [{'cell': {}, 'metric': 'pass_train'}, {'cell': {'lam': 0.95}, 'metric': 'pass_train'}],
           about=0, of='difference', margin=0.2, paired=True), 'inside'),
    (claim('about', TRAIN_HELD, about=0, of='difference', margin=0.05, paired=True), 'outside'),
    (claim('about', [{'cell': {}, 'metric': 'pass_train'}, {'cell': {'lam': 0.95}, 'metric': 'pass_train'}],
           about=0, of='difference', margin=0.001, paired=True), 'inconclusive'),
    (claim('about', [{'table': 'T7', 'row': 'lam=1.0', 'metric': 'pass_train'}], about=0.9, scale='logit',
           margin=0.6), 'inside'),
    (claim('about', [{'table': 'T7', 'row': 'lam=1.0', 'metric': 'pass_train'}], about=0.5, scale='logit'),
     'outside'),
])
def test_every_verdict_of_every_kind_is_reachable(ctx, spec, verdict):
    out = run(spec, ctx)
    assert out['verdict'] == verdict, out
    assert math.isfinite(out['e']) and math.isfinite(out['e_against']) and out['n'] == len(SEEDS)


def test_missing_inputs_are_untested_and_too_few_seeds_inconclusive(tree, tmp_path, ctx):
    out = run(claim('greater', [{'cell': {'lam': 0.5}, 'metric': 'pass_train'}, TRAIN_HELD[0]], paired=True), ctx)
    assert out['verdict'] == 'untested' and out['note'] == 'no trainer cell with lam=0.5'
    trainer_only = Context.build(load_runs(tree / 'runs'))
    out = run(claim('about', [{'table': 'T1', 'row': 'k=1', 'metric': 'ess_over_n'}], about=0.7), trainer_only)
    assert out['verdict'] == 'untested' and out['note'] == 'no experiment records T1 k=1 ess_over_n'
    for seed in range(5):
        train_run(tmp_path, 'baseline', seed, {})
    five = Context.build(load_runs(tmp_path))
    out = run(claim('greater', TRAIN_HELD, paired=True, min_seeds=6), five)
    assert out['verdict'] == 'inconclusive' and out['note'] == 'n=5 < 6 seeds'
    five_of_five = run(claim('greater', TRAIN_HELD, paired=True), five)  # e = (E(5 of 5) + E(0 of 5)) / 2 = 8.4
    assert five_of_five['verdict'] == 'inconclusive' and five_of_five['e'] == pytest.approx(8.365, abs=1e-3)
    assert run(claim('greater', TRAIN_HELD, paired=True), five, threshold=5.0)['verdict'] == 'reproduced'
    empty = ledger(Context.build(load_runs(tmp_path / 'nothing')))
    assert empty['verdict'].eq('untested').all() and empty['note'].ne('').all()


# --- outputs ------------------------------------------------------------------------------------------------

def read_tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob('*')) if p.is_file()}


@pytest.fixture(scope='module')
def aggregated(tree, tmp_path_factory) -> Path:
    """The tree's runs aggregated by the command line (`python -m analysis aggregate`): its output folder."""
    from analysis.__main__ import main
    out = tmp_path_factory.mktemp('aggregated')
    args = ['--runs', str(tree / 'runs'), '--experiments', str(tree / 'experiments')]
    assert main(['aggregate', *args, '--out', str(out)]) == 0
    return out


def test_aggregate_writes_everything_and_a_second_analysis_is_byte_identical(tree, aggregated, tmp_path):
    first = read_tree(aggregated)
    names = list(CHAPTER['tables']) + ['cells', 'epochs', 'experiments', 'comparisons', 'chapter', 'claims', 'runs']
    tables = {f'tables/{t}.{ext}' for t in names for ext in ('md', 'csv')}
    figures = {f'figures/{f}.{ext}' for f in ['fig8_1', 'fig8_2', 'fig8_3', 'learning_curves', 'forest_algorithm',
                                              'forest_lam', 'forest_epochs', 'forest_target_kl', 'forest_value_clip',
                                              'claims']
               for ext in ('svg', 'png')}
    ledger = pd.read_csv(aggregated / 'tables' / 'claims.csv')
    drawn = ledger[(ledger['group'] != 'check') & (ledger['verdict'] != 'untested')]['id']
    figures |= {f'claims/{claim}.svg' for claim in drawn}  # one figure per claim with values
    records = {f for f in first if f.startswith('records/')}
    assert {'records/runs.parquet', 'records/summaries.parquet', 'records/aggregate.json'} <= records
    tables |= {'tables/claim_inputs.csv', 'tables/sequences.csv', 'tables/family.csv'}
    assert set(first) - records == tables | figures | {'README.md', 'claims.md'}  # and no temporary file left behind
    assert all(first.values())
    assert first['figures/fig8_1.svg'].startswith(b'<?xml') and first['figures/fig8_1.png'][:4] == b'\x89PNG'
    assert len(drawn) >= 30 and first['figures/claims.png'][:4] == b'\x89PNG'
    readme = first['README.md'].decode()
    assert '## Claims' in readme and f'| pass_train | baseline | {len(SEEDS)} |' in readme
    assert '(tables/T7.md)' in readme
    # a header per table of claims (5, checks included), the counts (a header, 5 rows), the verdict words (a header, 2
    # rows), the open claims by the seeds they need (a header, 4 groups) and the claims awaiting their runs (a header
    # and a row each)
    claims = load_claims()
    awaiting = 1 + len(claims['awaiting']) if claims['awaiting'] else 0
    assert first['claims.md'].decode().count('\n| ') == len(claims['claims']) + 5 + 6 + 3 + 5 + awaiting
    cells = pd.read_csv(aggregated / 'tables' / 'cells.csv')
    assert list(cells.columns) == ['metric', 'cell', 'n', 'mean', 'sd', 'ci_low', 'ci_high', 'pi_low', 'pi_high',
                                   'method', 'status', 'diverged']
    # a second analysis of the same run directories: the same bytes (figures: one with data, re-rendered)
    runs = load_runs(tree / 'runs', tree / 'experiments')
    aggregate(runs, tmp_path / 'b', parts=('tables', 'claims'))
    second = read_tree(tmp_path / 'b')
    assert set(second) == tables | {'claims.md'} and all(second[k] == first[k] for k in second)
    with style():
        figure_8_3(Context.build(runs), tmp_path / 'c' / 'fig8_3')
    assert read_tree(tmp_path / 'c') == {k.removeprefix('figures/'): v for k, v in first.items() if 'fig8_3' in k}


def test_bca_option_and_a_part_alone(tree, tmp_path):
    runs = load_runs(tree / 'runs' / 'baseline')
    paths = aggregate(runs, tmp_path, parts=('tables',), method='bca', seed=3)
    assert (tmp_path / 'tables' / 'cells.md').exists() and not (tmp_path / 'README.md').exists()
    cells = pd.read_csv(tmp_path / 'tables' / 'cells.csv')
    assert set(cells['method']) == {'bca'} and all(p.exists() for p in paths)


def test_markdown_marks_missing_values_and_escapes_pipes():
    text = to_markdown(pd.DataFrame(dict(a=[math.nan, 1.23456], b=['x|y', None])))
    assert text == '| a | b |\n|---|---|\n| – | x\\|y |\n| 1.235 | – |\n'


def test_no_runs_at_all_still_gives_every_output(tmp_path):
    paths = aggregate(load_runs(tmp_path / 'none'), tmp_path / 'out')
    assert {p.name for p in paths} >= {'README.md', 'claims.md', 'T1.md', 'cells.csv', 'fig8_1.svg', 'fig8_2.png'}
    assert 'untested' in (tmp_path / 'out' / 'claims.md').read_text()


def test_inputs_of_one_group_without_common_seeds_are_inconclusive(tmp_path, ctx):
    for seed, row in enumerate(['clipped'] * 3 + ['unclipped'] * 3):
        write_run(tmp_path / 'trust_region' / f'seed~{seed}', dict(kind='experiment', name='trust_region', seed=seed),
                  dict(records=[dict(table='T6', row=row, metric='approx_kl', value=0.1 * (seed + 1))]))
    spec = claim('less', [dict(table='T6', row='clipped', metric='approx_kl'),
                          dict(table='T6', row='unclipped', metric='approx_kl')], paired=True)
    out = run(spec, Context.build(load_runs(tmp_path)))
    assert out['verdict'] == 'inconclusive' and out['n'] == 0 and out['note'] == 'n=0 < 3 seeds'


def test_calibration_targets_are_counted_apart_from_the_evidence(ctx):
    """The figures the substrate was tuned to (issue 11's targets) get verdicts but are not counted as claims."""
    from analysis.ledger.claims import count_table, group, summary
    from analysis.text import to_markdown
    claims = load_claims()['claims']
    tuned = sorted(c['id'] for c in claims if group(c) == 'calibration')
    assert tuned == ['base-pass-rate-fresh', 'base-pass-rate-old-batch', 'ess-one-update', 'most-episodes-short',
                     'policy-tokens-per-batch']
    frame = ledger(ctx)
    assert set(frame[frame['group'] == 'calibration']['id']) == set(tuned)
    table = count_table(frame).set_index('claims')
    assert table.loc['calibration targets (the substrate was tuned to them: not evidence)', 'count'] == len(tuned)
    chapter = frame[(frame['group'] == 'chapter') & ~frame['id'].str.endswith('-direction')]  # a size claim's direction
    assert table.loc["the chapter's, all", 'count'] == len(chapter) == sum(
        table['count'].iloc[1:3])  # the headline and those encoded again make up the chapter's claims
    directions = frame[(frame['group'] == 'chapter') & (frame['part'] == 'direction')]  # with the size claims'
    assert len(directions) > (chapter['part'] == 'direction').sum()
    assert table.loc["the chapter's, all", [f'direction: {v}' for v in DIRECTION_VERDICTS]].sum() == (
        directions['verdict'] != 'untested').sum()
    assert to_markdown(count_table(frame)) in summary(frame)


def test_the_results_index_opens_with_the_counts_the_headline_findings_and_the_figures(aggregated):
    index = (aggregated / 'README.md').read_text()
    sections = [line for line in index.splitlines() if line.startswith('## ')]
    assert sections[:4] == ['## Claims', '## Headline findings', '## The evidence', '## Figures'], sections
    opening = index.split('## Headline findings')[1].split('## Figures')[0]
    findings = [line for line in opening.splitlines() if line.startswith('- **')]
    chosen = yaml.safe_load(FINDINGS_FILE.read_text())['findings']
    assert len(findings) == len(chosen) >= 4 and all('Ours, over ' in line for line in findings)
    by_id = {c['id']: c for c in load_claims()['claims']}
    assert not [entry['claim'] for entry in chosen if by_id[entry['claim']].get('revised')]  # none revised
    assert '[learning_curves](figures/learning_curves.svg)' in index.split('## Runs')[0]
    standing, counts, words, figure = (index.split('## Claims')[1].split('## Headline findings')[0].strip()
                                       .split('\n\n')[:4])
    assert standing.startswith('Learning-rate scale 1 (its rates over the chapter\'s); its baseline\'s mean train pass')
    headline = sum(group(c) == 'chapter' and not c.get('revised') and not c.get('direction_of')
                   for c in load_claims()['claims'])
    rows = {line.split(' | ')[0].strip('| '): line.split(' | ')[1] for line in counts.splitlines()[2:]}
    assert counts.startswith('| claims | count | verdicts | direction: reproduced | direction: reversed | direction: short of the '
                             'claim | direction: inconclusive | size: inside | size: outside | size: inconclusive | '
                             'untested | fragile |')
    assert rows['the headline: encoded before their verdict'] == str(headline)  # revised encodings counted apart
    every = rows["the chapter's, all"]
    assert words.startswith('`count` is claims, `verdicts` their directions and sizes together') and \
        f"The chapter's {every} claims are the {headline} of the headline" in words
    assert figure == '![Every claim against what the chapter claims, by section](figures/claims.svg)'
    assert all(('[Figure](claims/' in line) == ('**untested**' not in line) for line in findings)
    assert sum('[Figure](claims/' in line for line in findings) >= 3


def test_figure_8_1_rows_take_short_episodes_below_8_and_long_ones_from_16_to_64_inclusive():
    tokens = [0, 7, 8, 15, 16, 64, 65]
    points = pd.DataFrame([dict(name='importance_weights', seed=0, table='F8.1', row=f'episode={i}', metric=metric,
                                value=value) for i, n in enumerate(tokens)
                           for metric, value in (('policy_tokens', n), ('log_w_k10', -float(n)))])
    out = log_weight_values(points).set_index(['row', 'metric'])['value']
    assert out['tokens=0-8', 'mean_log_w'] == -3.5 and out['tokens=0-8', 'min_log_w'] == -7
    assert out['tokens=16-64', 'mean_log_w'] == -40 and out['tokens=16-64', 'min_log_w'] == -64
