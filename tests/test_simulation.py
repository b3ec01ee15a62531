"""analysis/ledger/simulation.py: its fast path equals verdicts.evidence (e-values and the printed interval's miss),
with ties and without; e-BH row by row equals eprocess.ebh; the truths are what they say; the ledger's FDR and FCR
stay at most alpha (mean + 2 Monte Carlo SEs) under the global null, uniform looks and the chasing adversary; and the
same simulation catches a rule that breaks the promise (each e-value at 1 / alpha, no e-BH)."""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from analysis.ledger import simulation as sim
from analysis.ledger.simulation import (ALPHA, band_infima, family, ledger_claims, null_truth,
                                        nulls, paths, pilot_truth, pilots, play, quantile_set, step_values, summary)
from analysis.ledger.verdicts import clean, evidence
from analysis.records.records import claim_samples
from analysis.stats.eprocess import Quantile, ebh

TINYAGENT = 'results/tables/claim_inputs.csv'
THRESHOLDS = (2.0, 20.0, 400.0, 4080.0)  # one claim's, e-BH's at a few rejections, e-BH's at none for 102 claims
SYNTHETIC = [  # raw-scale claims whose inputs are their step quantities (a monotone chain: their running sums)
    dict(id='above', kind='greater', than=0.0, effect=0.3, inputs=[{}]),
    dict(id='often', kind='greater', paired=True, with_high_probability=True, effect=0.2, inputs=[{}, {}]),
    dict(id='chain', kind='increasing', paired=True, effect=0.25, inputs=[{}, {}, {}, {}]),
    dict(id='band', kind='about', about=0.5, margin=0.4, inputs=[{}]),
]


def synthetic_samples(claim: dict, x: np.ndarray) -> list[pd.Series]:
    """Inputs whose steps are x [K, n]: the quantity itself, against zeros, or a chain's running sums from 0."""
    if claim['kind'] == 'increasing':
        return [pd.Series(v) for v in np.vstack([np.zeros(x.shape[1]), np.cumsum(x, axis=0)])]
    return [pd.Series(x[0])] + [pd.Series(np.zeros(x.shape[1]))] * (len(claim['inputs']) - 1)


def printed_misses(found: dict, lo: np.ndarray, hi: np.ndarray, threshold: float, against: bool) -> bool:
    """verdicts.reading's interval (the step it prints, at K times the threshold) holds none of its step's true
    quantiles [lo, hi]."""
    bets = found['bets']
    chosen = max(bets, key=lambda b: b.e_against) if against else min(bets, key=lambda b: b.e_for)
    step = next(i for i, bet in enumerate(bets) if bet is chosen)
    low, high, low_open, high_open = chosen.game.interval(threshold * len(bets))
    return bool(math.isnan(low) or high < lo[step] or (high == lo[step] and high_open) or low > hi[step]
                or (low == hi[step] and low_open))


def assert_fast_path_is_evidence(fam: Family, claim: dict, x: np.ndarray, samples: list[pd.Series], lo, hi):
    """The fast path on one claim's step quantities x [K, n] equals verdicts.evidence on its samples."""
    n = x.shape[1]
    p, found = paths(fam, x[None], lo, hi), evidence(claim, samples)
    assert (p.e_for[0, 0, n - 1], p.e_against[0, 0, n - 1]) == pytest.approx((found['e'], found['e_against']),
                                                                             rel=1e-12), claim['id']
    for threshold in THRESHOLDS:
        for against, miss in ((False, p.miss_for), (True, p.miss_against)):
            assert (miss[0, 0, n - 1] >= threshold) == printed_misses(found, lo, hi, threshold, against), \
                (claim['id'], n, threshold, against)


def test_the_fast_path_equals_verdicts_on_the_published_values_resampled_with_their_ties():
    inputs = pd.read_csv(TINYAGENT)
    kept, tables = pilots(ledger_claims(), inputs)
    assert len(kept) == len(ledger_claims())
    rng = np.random.default_rng(0)
    for claim, table in zip(kept, tables):
        fam = family([claim])
        lo, hi = quantile_set(table, fam.tau)
        found = [clean(s) for s in claim_samples(inputs, claim)]
        shared = found[0].index
        for s in found[1:]:
            shared = shared.intersection(s.index)
        for n in (3, 8, 15):
            rows = rng.integers(0, len(shared), n)  # seeds resampled with replacement: ties
            samples = [s.loc[shared].iloc[rows].set_axis(range(n)) for s in found]
            assert_fast_path_is_evidence(fam, claim, step_values(claim, samples).T, samples, lo, hi)


@pytest.mark.parametrize('distribution', sim.DISTRIBUTIONS)
def test_the_fast_path_equals_verdicts_on_continuous_draws_at_every_seed_count(distribution):
    rng = np.random.default_rng(1)
    for claim in SYNTHETIC:
        fam = family([claim])
        for boundary in sim.BOUNDARIES:
            x, lo, hi = null_truth(fam, distribution, boundary, 3, 12, rng)
            x += rng.normal(0, 0.5) * fam.unit[:, None]  # the truth somewhere else too
            lo, hi = lo + 0.1, hi + 0.1
            for ledger in x:
                for n in range(3, 13):
                    samples = synthetic_samples(claim, ledger[:, :n])
                    assert_fast_path_is_evidence(fam, claim, step_values(claim, samples).T, samples, lo, hi)


def test_band_infima_are_the_games_e_null_at_every_seed_count():
    rng = np.random.default_rng(2)
    x = rng.integers(0, 5, (2, 3, 9)).astype(float)  # many ties
    tau = np.array([0.5, 0.2, 0.5])
    bands = np.array([[(-np.inf, 1.0), (2.0, 2.0), (1.5, np.inf)]] * 3)
    got = band_infima(x, tau, bands)
    for b, s, n, j in np.ndindex(got.shape):
        game = Quantile(x[b, s, :n + 1], tau[s])
        assert got[b, s, n, j] == pytest.approx(game.e_null(*bands[s, j]), rel=1e-12)


def test_ebh_over_rows_equals_it_row_by_row():
    rng = np.random.default_rng(3)
    e = np.round(rng.lognormal(0, 3, (200, 12)), 1)  # ties, rows with no rejection and with several
    rejected, threshold = ebh(e, ALPHA)  # every row a family at once
    for row, got, bar in zip(e, rejected, threshold):
        want, want_bar = ebh(row, ALPHA)
        assert (got == want).all() and bar == want_bar
    assert 0 < rejected.any(1).mean() < 1


def test_a_pilots_truth_is_its_records_quantile_set():
    values = np.arange(1.0, 11.0)[:, None].repeat(2, 1)
    lo, hi = quantile_set(values, np.array([0.5, 1 - 0.8]))
    assert lo.tolist() == [5.0, 2.0] and hi.tolist() == [6.0, 3.0]  # the two middle values; 0.2 of 10 is whole
    assert quantile_set(np.array([[3.0], [1.0], [2.0], [2.0], [9.0]]), np.array([0.5])) == ([2.0], [2.0])


def test_a_null_truth_puts_each_steps_quantile_on_its_nulls_edge():
    claims = ledger_claims()
    fam = family(claims)
    for boundary in sim.BOUNDARIES:
        x, lo, hi = null_truth(fam, 'lognormal', boundary, 1, 4000, np.random.default_rng(4))
        assert (lo == hi).all() and np.abs((x[0] <= lo[:, None]).mean(1) - fam.tau).max() < 0.03
        null_for, null_against = nulls(fam, lo, hi)
        assert null_for.all() if boundary == 'no effect' else null_against.all()
    size = np.array([c['kind'] == 'about' for c in claims])
    assert (null_for & null_against)[size].all()  # a size on its band's edge: both nulls true


def test_a_pilot_resamples_each_seeds_steps_together():
    table = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]])
    fam = family([dict(SYNTHETIC[2], inputs=[{}, {}, {}])])  # two steps
    x, lo, hi = pilot_truth(fam, [table], 5, 7, np.random.default_rng(5))
    assert x.shape == (5, 2, 7) and (x[:, 1] == 10 * x[:, 0]).all()
    assert lo.tolist() == [2.0, 20.0] and hi.tolist() == [2.0, 20.0]


@pytest.fixture(scope='module')
def global_null():
    """The ledger's family under the global null at no effect (t(3)), 150 ledgers of up to 24 seeds a claim."""
    fam = family(ledger_claims())
    x, lo, hi = null_truth(fam, 't(3)', 'no effect', 150, 24, np.random.default_rng(6))
    return paths(fam, x, lo, hi), *nulls(fam, lo, hi)


@pytest.mark.parametrize('policy', ['fixed', 'uniform', 'chase 10%', 'chase 10% + discoveries'])
def test_fdr_and_fcr_are_at_most_alpha_under_the_global_null_and_the_adversary(global_null, policy):
    row = summary('null', policy, sim.RULES[0], play(*global_null, policy))
    assert row['fdr'] <= ALPHA + 2 * row['fdr_se'] and row['fcr'] <= ALPHA + 2 * row['fcr_se'], row
    assert row['verdicts'] > 0  # the against-tests of claims with a smallest effect find their true discoveries


def test_the_simulation_catches_a_rule_without_e_bh(global_null):
    row = summary('null', 'uniform', sim.RULES[1], play(*global_null, 'uniform', sim.RULES[1]))
    assert row['fdr'] - 2 * row['fdr_se'] > ALPHA, row


def test_the_adversary_stops_at_the_first_false_verdict():
    """Two claims, one null: its e-value crosses 1 / alpha at 5 seeds and falls back; fixed looks miss it."""
    e = np.full((1, 2, 8), 1.0)
    e[0, 0, 4] = 25.0
    p = sim.Paths(e, e / 100, np.zeros_like(e), np.zeros_like(e))
    null_for, null_against = np.array([True, True]), np.array([True, True])
    looked = play(p, null_for, null_against, 'uniform', sim.RULES[1])
    assert looked['fdp'][0] == 1.0 and looked['seeds'][0] == 5.0
    assert play(p, null_for, null_against, 'fixed', sim.RULES[1])['fdp'][0] == 0.0


def test_the_command_prints_and_writes_the_table(tmp_path):
    out = tmp_path / 'simulation.md'
    sim.main(['--ledgers', '10', '--max-seeds', '6', '--substrates', 'tinyagent', '--jobs', '1', '--out', str(out)])
    lines = out.read_text().splitlines()
    assert lines[0] == '| ' + ' | '.join(sim.COLUMNS) + ' |'
    rows = [line for line in lines[2:] if line.startswith('| ')]
    assert len(rows) == (2 * len(sim.DISTRIBUTIONS) + 1) * (len(sim.POLICIES) + 1)
    assert re.search(r'pilot: tinyagent \(\d+ claims\)', rows[-1]) and lines[-1].startswith('worst FDR')
    with pytest.raises(ValueError, match="substrate 'nowhere'"):
        sim.main(['--substrates', 'nowhere'])
