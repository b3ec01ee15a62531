"""The chapter's experiments as functions of a seed: names, exact tables, determinism, the listing's numbers."""
import contextlib
import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest
import torch

from agentrl.learning.base_agent import save_base_agent
from agentrl.jobs.cli import main
from agentrl.learning.config import TrainConfig
from agentrl.chapter.experiments import (EXPERIMENTS, clip_by_sign, in_length_bucket, loglog_slope, old_batch,
                                         ratio_by_old_prob, run_experiment)
from agentrl.chapter.lengths import BUCKETS, label
from agentrl.world.substrates import SUBSTRATES
from analysis.stats.metrics import LENGTHS

LISTING = Path(__file__).resolve().parents[2] / 'shared' / 'chapter08' / 'chapter08_listing.py'


def keys(table, rows, metrics):
    return {(table, row, metric) for row in rows for metric in metrics}


# The (table, row, metric) names the analysis is keyed on.
T10_EPOCH = ['clip_frac', 'approx_kl', 'ratio_max', 'clip_frac_high', 'clip_frac_low']
EXPECTED = dict(
    importance_weights=keys('T1', ['k=0', 'k=1', 'k=3', 'k=10', 'k=30'],
                            ['sd_log_w', 'max_w', 'mean_w', 'ess_over_n', 'is_estimate', 'snis_estimate', 'fresh_pass'])
    | keys('T2', ['0-8', '8-16', '16-64'], ['episodes', 'mean_tokens', 'sd_log_w_k3', 'sd_log_w_k10'])
    | keys('T2', ['loglog_slope'], ['sd_log_w_k3', 'sd_log_w_k10'])
    | keys('F8.1', [f'episode={i}' for i in range(320)], ['policy_tokens', 'log_w_k10']),
    surrogate=keys('T3', ['k=1', 'k=3', 'k=10'], ['surrogate', 'measured', 'approx_kl']),
    clip_gradients=keys('T4', ['A=+1', 'A=-1'], [f'grad_{i}' for i in range(6)] + ['clip_frac'])
    | keys('T5', ['dual_clip=None', 'dual_clip=3.0'], ['loss', 'grad_0', 'grad_1', 'grad_2']),
    trust_region=keys('T6', ['clipped', 'unclipped'], ['approx_kl', 'outside_band', 'max_ratio']),
    sixteen_epochs=keys('T10', [f'epoch={e}' for e in range(1, 17)], T10_EPOCH)
    | keys('T10', ['entropy'], ['before', 'after'])
    | keys('T10', ['by_sign', 'by_sign_clip_high'],
           ['positive_tokens', 'negative_tokens', 'clip_frac_positive', 'clip_frac_negative'])
    | keys('T10', ['entropy_clip_high'], ['after'])
    | keys('T12', ['old_logp'], ['max_abs_diff', 'policy_tokens']) | keys('T12', ['bug'], ['clip_frac', 'approx_kl'])
    | keys('T13', ['pi_old=0.0-0.1', 'pi_old=0.1-0.5', 'pi_old=0.5-1.0'],
           ['tokens', 'above_1_2', 'median_ratio', 'median_gain']),
    staleness=keys('T11', [f'minibatches={n}' for n in (1, 2, 4, 8, 16)], ['approx_kl', 'clip_frac']),
)


def table(records, name):
    """{row: {metric: value}} of one table."""
    out = {}
    for r in records:
        if r['table'] == name:
            out.setdefault(r['row'], {})[r['metric']] = r['value']
    return out


@pytest.fixture(scope='module')
def runs(base, tok):
    """Each experiment once at seed 0 (the slow ones run only here); surrogate also twice more."""
    return {name: run_experiment(name, base, tok, 0)[0] for name in EXPERIMENTS}


def test_experiment_names():
    assert set(EXPERIMENTS) == set(EXPECTED)


def test_clip_gradients_reproduces_t4_and_t5_exactly():
    records = EXPERIMENTS['clip_gradients'](None, None, 0)  # deterministic: needs no agent
    t4, t5 = table(records, 'T4'), table(records, 'T5')
    grads = lambda row, n: [round(row[f'grad_{i}'], 2) for i in range(n)]
    assert grads(t4['A=+1'], 6) == [0.5, 0.79, 1.0, 1.1, 0.0, 0.0]
    assert grads(t4['A=-1'], 6) == [0.0, 0.0, -1.0, -1.1, -1.3, -2.0]
    assert t4['A=+1']['clip_frac'] == t4['A=-1']['clip_frac'] == pytest.approx(1 / 3)
    assert t5['dual_clip=None']['loss'] == pytest.approx(27.0) and t5['dual_clip=3.0']['loss'] == pytest.approx(8.0)
    assert grads(t5['dual_clip=None'], 3) == [-2.0, -5.0, -20.0] and grads(t5['dual_clip=3.0'], 3) == [-2.0, 0.0, 0.0]


@pytest.mark.parametrize('name', sorted(EXPECTED))
def test_records_are_tidy_and_named_for_the_analysis(runs, name):
    records = runs[name]
    assert all(set(r) == {'table', 'row', 'metric', 'value'} and type(r['value']) is float for r in records)
    found = [(r['table'], r['row'], r['metric']) for r in records]
    assert len(found) == len(set(found)), 'a (table, row, metric) appears twice'
    assert set(found) == EXPECTED[name]


def test_structural_facts(runs):
    t1, t2 = table(runs['importance_weights'], 'T1'), table(runs['importance_weights'], 'T2')
    assert t1['k=0']['ess_over_n'] == 1.0 and t1['k=0']['sd_log_w'] == 0.0 and t1['k=0']['max_w'] == 1.0
    assert t1['k=0']['is_estimate'] == pytest.approx(t1['k=0']['snis_estimate'])  # w = 1: both are the pass rate
    assert t1['k=30']['ess_over_n'] < 1.0
    assert sum(t2[bucket]['episodes'] for bucket in ('0-8', '8-16', '16-64')) == 320
    f81 = table(runs['importance_weights'], 'F8.1')
    assert sum(row['policy_tokens'] for row in f81.values()) == table(runs['sixteen_epochs'], 'T12')['old_logp'][
        'policy_tokens']
    t12 = table(runs['sixteen_epochs'], 'T12')
    assert t12['old_logp']['max_abs_diff'] < 1e-5
    assert t12['bug']['clip_frac'] == 0.0 and abs(t12['bug']['approx_kl']) < 1e-6  # the ratio is always 1
    t13 = table(runs['sixteen_epochs'], 'T13')
    assert all(row['tokens'] == 0 or 0 <= row['above_1_2'] <= 1 for row in t13.values())
    assert len(table(runs['staleness'], 'T11')) == 5
    t6 = table(runs['trust_region'], 'T6')
    assert t6['unclipped']['approx_kl'] > t6['clipped']['approx_kl']


@pytest.mark.parametrize('seed', range(40))
def test_sampler_and_trainer_log_probs_agree_to_float_rounding_on_every_published_seed(base, seed, tok):
    """T12's comparison on the old batch of each of the design's 40 seeds: the sampler's cached forward and the
    trainer's full one differ only by float32 rounding of two summation orders, measured under numerics version 4 at
    1.7e-6 to 7.4e-6 and 1.12e-5 on seed 19. The chapter's 1e-5 is a claim (trainer-matches-sampler), judged per seed
    in the ledger, not here; 1.5e-5 still fails the one path of its own seen so far (the cached attention once gave
    1.96e-5 on seed 6, where rounding gives 7.4e-6). The same bits on every CPU: no machine's rounding is pinned."""
    batch, old_logp = old_batch(base, tok, seed)
    assert ((old_logp - batch['sample_logp']).abs() * batch['action_mask']).max() < 1.5e-5


def test_coverage_metrics(runs):
    """The per-seed inputs of the coverage claims: E[w] = 1 at k = 0, T2's sqrt-length fit, T3's distance,
    exercise 6's clip by sign, T13's absolute growth."""
    t1, t2 = table(runs['importance_weights'], 'T1'), table(runs['importance_weights'], 'T2')
    assert t1['k=0']['mean_w'] == 1.0 and t1['k=10']['mean_w'] != 1.0
    buckets = ['0-8', '8-16', '16-64']
    assert all(int(lo) <= t2[b]['mean_tokens'] < int(hi) for b in buckets for lo, hi in [b.split('-')])
    for k in (3, 10):  # the slope row is the fit of the bucket rows, and the spread grows with length
        fitted = loglog_slope([t2[b]['mean_tokens'] for b in buckets], [t2[b][f'sd_log_w_k{k}'] for b in buckets])
        assert t2['loglog_slope'][f'sd_log_w_k{k}'] == fitted and 0 < fitted < 2
    kl = [table(runs['surrogate'], 'T3')[f'k={k}']['approx_kl'] for k in (1, 3, 10)]
    assert 0 < kl[0] < kl[1] < kl[2]
    t10, t12 = table(runs['sixteen_epochs'], 'T10'), table(runs['sixteen_epochs'], 'T12')
    by_sign = t10['by_sign']
    assert 0 < by_sign['positive_tokens'] + by_sign['negative_tokens'] <= t12['old_logp']['policy_tokens']
    assert 0 < by_sign['clip_frac_positive'] < 1 and 0 < by_sign['clip_frac_negative'] < 1
    wide = t10['by_sign_clip_high']  # the same batch and advantages, trained with clip_high 0.28
    sides = ('positive_tokens', 'negative_tokens')
    assert [wide[k] for k in sides] == [by_sign[k] for k in sides]
    assert 0 <= wide['clip_frac_positive'] < 1 and wide != by_sign
    assert 0 < t10['entropy_clip_high']['after'] != t10['entropy']['after']
    t13 = table(runs['sixteen_epochs'], 'T13')
    assert all(row['tokens'] == 0 or -hi <= row['median_gain'] <= 1 for row, hi in zip(t13.values(), (0.1, 0.5, 1)))


def test_loglog_slope_recovers_powers_and_rejects_degenerate_data():
    assert loglog_slope([4, 16, 64], [2, 4, 8]) == pytest.approx(0.5)  # sd = sqrt(L)
    assert loglog_slope([1, 10, 100], [3, 3, 3]) == pytest.approx(0.0)
    assert loglog_slope([2, 2, float('nan')], [1, 2, 3]) != loglog_slope([2, 2, float('nan')], [1, 2, 3])  # NaN
    assert loglog_slope([5, 10], [0.0, 1.0]) != loglog_slope([5, 10], [0.0, 1.0])  # one usable pair: NaN


def test_length_buckets_cover_every_length_up_to_the_longest_cap_once():
    assert max(s.family.max_policy_tokens for s in SUBSTRATES.values()) == BUCKETS[-1][1] == 64
    lengths = torch.arange(0, 66)
    masks = torch.stack([in_length_bucket(lengths, bucket) for bucket in BUCKETS])
    assert masks[:, :65].sum(0).tolist() == [1] * 65 and not masks[:, 65].any()
    assert masks[:, 8].tolist() == [False, True, False] and masks[:, 64].tolist() == [False, False, True]


def test_figure_8_1_buckets_episodes_as_t2_does():
    """The analysis's short and long episodes (pandas' between) are the experiments' first and last buckets."""
    lengths = pd.Series(range(0, 66))
    for row, (low, high, inclusive) in LENGTHS.items():
        bucket = next(b for b in BUCKETS if row == f'tokens={label(b)}')
        assert lengths.between(low, high, inclusive=inclusive).tolist() == in_length_bucket(
            torch.tensor(lengths.values), bucket).tolist()
    assert list(LENGTHS) == ['tokens=0-8', 'tokens=16-64']


def test_clip_by_sign_counts_each_side_over_its_own_tokens():
    ratio = torch.tensor([[1.3, 1.1, 0.7, 1.0], [0.5, 1.5, 1.0, 9.0]])
    adv = torch.tensor([[1.0, 1.0, -1.0, 0.0], [-1.0, -1.0, 1.0, 1.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 0.0]])  # the 9.0 is padding
    out = clip_by_sign(ratio, adv, mask, TrainConfig())
    assert out == dict(positive_tokens=3, negative_tokens=3, clip_frac_positive=1 / 3, clip_frac_negative=2 / 3)
    assert clip_by_sign(ratio, adv, mask, TrainConfig(clip_high=0.28, clip_low=0.4))['clip_frac_positive'] == 1 / 3
    assert clip_by_sign(ratio, -adv.abs(), mask, TrainConfig())['clip_frac_positive'] != 0  # no positives: NaN


def test_ratio_by_old_prob_growth_is_absolute():
    old_p = torch.tensor([[0.05, 0.05, 0.3, 0.8]])
    ratio, adv, mask = torch.tensor([[1.4, 2.0, 1.2, 1.1]]), torch.ones(1, 4), torch.ones(1, 4)
    rows = table(ratio_by_old_prob(ratio, old_p.log(), adv, mask), 'T13')
    assert rows['pi_old=0.0-0.1']['tokens'] == 2 and rows['pi_old=0.0-0.1']['median_ratio'] == pytest.approx(1.4)
    assert rows['pi_old=0.0-0.1']['median_gain'] == pytest.approx(0.02)  # median of 0.02 and 0.05: the lower
    assert rows['pi_old=0.1-0.5']['median_gain'] == pytest.approx(0.06)
    assert rows['pi_old=0.5-1.0']['median_gain'] == pytest.approx(0.08)


def test_same_seed_same_records_other_seed_differs(base, runs, tok):
    assert run_experiment('surrogate', base, tok, 0)[0] == runs['surrogate']
    other = run_experiment('surrogate', base, tok, 1)[0]
    assert [r['value'] for r in other] != [r['value'] for r in runs['surrogate']]


def test_unknown_experiment_names_the_valid_ones(base, tok):
    with pytest.raises(ValueError, match='unknown experiment .*valid experiments: importance_weights'):
        run_experiment('importance', base, tok, 0)


def test_cli_writes_run_json_and_records(base, tmp_path, capsys, tok):
    exported, out = tmp_path / 'base.pt', tmp_path / 'experiments' / 'clip_gradients' / 'seed~2'
    save_base_agent(base, tok, exported)  # not the cache: its key follows the source, which may change meanwhile
    main(['experiment', 'clip_gradients', '--seed', '2', '--out', str(out), '--base', str(exported)])
    meta = json.loads((out / 'run.json').read_text())
    assert meta['kind'] == 'experiment' and meta['name'] == 'clip_gradients' and meta['seed'] == 2
    assert meta['summary']['records'] == 22 and meta['provenance']['threads'] == 1
    lines = (out / 'records.csv').read_text().splitlines()
    assert lines[0] == 'table,row,metric,value' and len(lines) == 1 + 22
    assert sorted(p.name for p in out.parent.iterdir()) == ['seed~2']


def test_cli_rejects_an_unknown_experiment(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(['experiment', 'nope', '--seed', '0', '--out', str(tmp_path / 'run')])
    assert 'invalid choice' in capsys.readouterr().err and not (tmp_path / 'run').exists()


# --- seed 0 prints the listing's numbers -----------------------------------------------------------------

def listing_blocks() -> dict[int, str]:
    parts = re.split(r'^# %% block (\d+).*$', LISTING.read_text(), flags=re.M)
    return {int(number): code for number, code in zip(parts[1::2], parts[2::2])}


def run_listing(blocks: dict[int, str], numbers, namespace) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for number in numbers:
            exec(compile(blocks[number], f'{LISTING.name} block {number}', 'exec'), namespace)
    return out.getvalue()


@pytest.mark.skipif(not LISTING.exists(), reason=f'the chapter listing is not at {LISTING} '
                                                  '(only the project workspace has ../shared/)')
def test_seed_0_prints_the_listings_t1_and_t11_numbers(runs):
    blocks = listing_blocks()
    # Only the rows we compare: T1 up to k = 1, T11 for one minibatch (the full blocks take minutes).
    blocks[3] = blocks[3].replace('for k in [0, 1, 3, 10, 30]:', 'for k in [0, 1]:')
    blocks[19] = blocks[19].replace('for minibatches in [1, 2, 4, 8, 16]:', 'for minibatches in [1]:')
    assert 'for k in [0, 1]:' in blocks[3] and 'for minibatches in [1]:' in blocks[19]
    namespace = {'__name__': 'chapter08_listing'}
    printed = run_listing(blocks, [0, 1, 2, 3, 6, 10, 11, 12, 13, 19], namespace).splitlines()
    t1 = table(runs['importance_weights'], 'T1')
    for line, k in zip(printed[1:3], (0, 1)):
        r = t1[f'k={k}']
        assert line == (f'{k:2d} | {r["sd_log_w"]:8.2f} | {r["max_w"]:6.1f} | {r["ess_over_n"]:7.3f} | '
                        f'{r["is_estimate"]:11.3f} | {r["fresh_pass"]:.3f}')
    r = table(runs['staleness'], 'T11')['minibatches=1']
    assert printed[3] == (f' 1 minibatches of 320: KL after one epoch {r["approx_kl"]:.4f}'
                          f' | clip_frac {r["clip_frac"]:.3f}')
