"""analysis.stats.inference (and the number formats) against hand computations, scipy and published power tables."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from analysis.ledger.chapter import printed
from analysis.stats.inference import (SUMMARY_COLUMNS, bh, describe, paired, prediction_check, seeds_for_power,
                                      summarize, welch)
from analysis.text import number

X = [1.0, 2.0, 3.0, 4.0, 5.0]
Y = [2.5, 4.1, 3.9, 6.2, 5.0, 4.4]


def test_t_interval_matches_a_hand_computation():
    # mean 3, sd sqrt(2.5) = 1.5811388, t_{4, 0.975} = 2.7764451 (tables):
    # CI half-width 2.7764451 * 1.5811388 / sqrt(5) = 1.963243; PI half-width * sqrt(1 + 1/5) = 4.808944
    out = describe(X)
    assert out['n'] == 5 and out['mean'] == 3.0 and out['sd'] == pytest.approx(1.5811388, abs=1e-7)
    assert (out['ci_low'], out['ci_high']) == pytest.approx((3 - 1.963243, 3 + 1.963243), abs=1e-6)
    assert (out['pi_low'], out['pi_high']) == pytest.approx((3 - 4.808944, 3 + 4.808944), abs=1e-6)
    assert (out['method'], out['status']) == ('t', 'ok')


def test_bca_is_scipy_bootstrap_with_the_same_seeded_rng():
    out = describe(Y, method='bca', seed=7)
    direct = scipy_stats.bootstrap((np.array(Y),), np.mean, method='BCa', confidence_level=0.95,
                                   rng=np.random.default_rng(7)).confidence_interval
    assert (out['ci_low'], out['ci_high']) == (direct.low, direct.high)
    assert out['method'] == 'bca' and out['status'] == 'ok'
    assert describe(Y, method='bca', seed=7) == out  # seeded: the same interval twice
    assert describe(Y, method='bca', seed=8)['ci_low'] != out['ci_low']
    assert out['pi_low'] == describe(Y)['pi_low']  # the prediction interval stays Student t


@pytest.mark.parametrize('values, status, mean, sd', [
    ([], 'empty', None, None),
    ([0.4], 'n=1', 0.4, None),
    ([0.1, 0.1, 0.1], 'constant', 0.1, 0.0),
    ([math.nan, 0.3, math.inf], 'n=1', 0.3, None),  # non-finite values are dropped
])
def test_degenerate_samples_are_reported_not_crashed(values, status, mean, sd):
    for method in ('t', 'bca'):
        out = describe(values, method=method)
        assert out['status'] == status and out['n'] == len([v for v in values if math.isfinite(v)])
        assert (out['mean'] == mean) if mean is not None else math.isnan(out['mean'])
        assert (out['sd'] == sd) if sd is not None else math.isnan(out['sd'])
    if status == 'constant':  # a constant sample's intervals collapse onto its value
        assert {out[k] for k in ('ci_low', 'ci_high', 'pi_low', 'pi_high')} == {0.1}


def test_bca_reports_an_undefined_interval_by_status():
    tiny = describe([1e-300, 2e-300], method='bca')  # scipy's BCa underflows: NaN bounds
    assert tiny['status'] == 'bca undefined (n=2)' and math.isnan(tiny['ci_low']) and tiny['mean'] == 1.5e-300
    with pytest.raises(ValueError, match="method='boot' is not allowed; expected one of t, bca"):
        describe(X, method='boot')


def test_summarize_groups_with_explicit_columns():
    frame = pd.DataFrame(dict(metric=['a'] * 5 + ['b'] * 2 + ['c'], cell=['x'] * 8, value=X + [1.0, 1.0, 2.0]))
    out = summarize(frame, ['metric', 'cell'])
    assert list(out.columns) == ['metric', 'cell'] + SUMMARY_COLUMNS
    assert list(out['status']) == ['ok', 'constant', 'n=1'] and list(out['n']) == [5, 2, 1]
    assert out.loc[0, 'mean'] == 3.0
    assert list(summarize(frame.iloc[0:0], ['metric']).columns) == ['metric'] + SUMMARY_COLUMNS


def test_welch_matches_scipy():
    out = welch(Y, X)
    ref = scipy_stats.ttest_ind(Y, X, equal_var=False)
    ci = ref.confidence_interval(0.95)
    assert out['diff'] == pytest.approx(np.mean(Y) - np.mean(X))
    assert (out['t'], out['df'], out['p']) == pytest.approx((ref.statistic, ref.df, ref.pvalue))
    assert (out['ci_low'], out['ci_high']) == pytest.approx((ci.low, ci.high))
    # the Welch-Satterthwaite df, by hand
    va, vb = np.var(Y, ddof=1) / 6, np.var(X, ddof=1) / 5
    assert out['df'] == pytest.approx((va + vb) ** 2 / (va ** 2 / 5 + vb ** 2 / 4))


def test_welch_degenerate_inputs():
    assert welch([1.0], X)['status'] == 'n<2'
    assert welch([], [])['status'] == 'empty' and math.isnan(welch([], [])['diff'])
    out = welch([2.0, 2.0, 2.0], [1.0, 1.0])
    assert out['status'] == 'zero variance' and out['diff'] == 1.0 and math.isnan(out['p'])
    assert welch([2.0, 2.0, 2.0], X)['status'] == 'ok'  # one constant arm is fine


def test_bh_matches_scipy_and_skips_nan():  # statsmodels' fdr_bh and scipy agree
    p = [0.01, 0.04, 0.03, 0.20, 0.002]
    assert np.allclose(bh(p), scipy_stats.false_discovery_control(p, method='bh'))
    q = bh([0.01, math.nan, 0.04])
    assert math.isnan(q[1]) and np.allclose(q[[0, 2]], scipy_stats.false_discovery_control([0.01, 0.04]))
    assert bh([]).shape == (0,)


@pytest.mark.parametrize('d, arms, n', [(0.5, 1, 27), (0.8, 1, 12), (0.5, 2, 51), (0.8, 2, 21)])
def test_seeds_for_power_matches_gpower_one_sided(d, arms, n):
    # one-sided alpha 0.05, power 0.8 (G*Power 3.1: one-sample t d=0.5 -> 27, d=0.8 -> 12; two-sample 51, 21 per arm)
    assert seeds_for_power(d, 1.0, 't', arms) == (n, '')
    assert seeds_for_power(2 * d, 2.0, 't', arms) == (n, '')  # only effect / sd counts


def test_seeds_for_power_of_the_rank_and_sign_tests():
    assert seeds_for_power(0.5, 1.0, 'wilcoxon') == (math.ceil(27 * math.pi / 3), '')  # t over the ARE 3/pi
    n, _ = seeds_for_power(math.nan, math.nan, 'sign', high_probability=0.8)
    critical = scipy_stats.binom.isf(0.05, n, 0.5) + 1
    assert scipy_stats.binom.sf(critical - 1, n, 0.8) >= 0.8
    assert all(scipy_stats.binom.sf(scipy_stats.binom.isf(0.05, m, 0.5), m, 0.8) < 0.8 for m in range(2, int(n)))


def test_seeds_for_power_degenerate_inputs():
    n, why = seeds_for_power(0.2, 0.0)
    assert math.isnan(n) and why == 'no spread' and seeds_for_power(math.nan, 1.0)[1] == 'undefined'
    assert seeds_for_power(1e-4, 1.0, n_max=1000)[1] == '>1000'


def test_paired_difference_uses_common_seeds_and_falls_back_to_welch():
    x, y = pd.Series(Y, index=range(6)), pd.Series(X, index=range(1, 6))
    out = paired(x, y)
    ref = scipy_stats.ttest_rel(Y[1:], X)
    assert out['paired'] and out['n'] == 5 and out['p'] == pytest.approx(ref.pvalue)
    assert (out['ci_low'], out['ci_high']) == pytest.approx(tuple(ref.confidence_interval(0.95)))
    apart = paired(pd.Series(Y, index=range(6)), pd.Series(X, index=range(10, 15)))
    assert not apart['paired'] and apart['p'] == pytest.approx(scipy_stats.ttest_ind(Y, X, equal_var=False).pvalue)
    same = paired(pd.Series([1.0, 2.0]), pd.Series([0.0, 1.0]))
    assert same['status'] == 'zero variance' and same['diff'] == 1.0


def test_bounded_intervals_stay_in_the_metrics_range():
    rates = [1.0, 1.0, 0.9, 0.3]
    free, bounded = describe(rates), describe(rates, bounds=(0.0, 1.0))
    assert free['pi_high'] > 1 and free['pi_low'] < 0  # a Student t interval leaves [0, 1]
    assert (bounded['pi_low'], bounded['pi_high'], bounded['ci_high']) == (0.0, 1.0, 1.0)
    assert bounded['ci_low'] == free['ci_low'] and bounded['mean'] == free['mean']
    frame = pd.DataFrame(dict(metric=['pass_train'] * 4 + ['kl'] * 4, value=rates * 2))
    out = summarize(frame, ['metric'], ranges={'pass_train': (0.0, 1.0)}).set_index('metric')
    assert out.loc['pass_train', 'pi_high'] == 1.0 and out.loc['kl', 'pi_high'] > 1


def test_prediction_check():
    inside = prediction_check(0.0, 1.0, 4, 2.0, 2.0)  # t_{4,0.975} = 2.776 > 2
    assert inside['inside'] and inside['p'] == pytest.approx(2 * scipy_stats.t.sf(2.0, 4))
    outside = prediction_check(0.0, 1.0, 4, 3.0, 3.5)
    assert not outside['inside'] and outside['statistic'] == pytest.approx(-3.0)
    assert prediction_check(0.0, 1.0, 4, -1.0, 1.0)['p'] == 1.0  # the mean is in the band
    assert prediction_check(1.0, 0.0, math.nan, 0.995, 1.005) == dict(test='exact (no variance)', statistic=0.0,
                                                                      p=1.0, inside=True)


def test_printed_values_carry_their_rounding():
    assert printed('0.50') == (0.5, pytest.approx(0.005))
    assert printed('+0.037') == (0.037, pytest.approx(0.0005))
    assert printed('2.1e-06') == (2.1e-06, pytest.approx(5e-08))
    assert printed('3620') == (3620.0, 0.5)


def test_number_format_is_fixed():
    assert [number(v) for v in (0.123456, -0.0, 12345678.0, 3, np.int64(4), math.nan, None, pd.NA, 'x')] == [
        '0.1235', '0', '1.235e+07', '3', '4', '–', '–', '–', 'x']
    assert number(math.nan, missing='') == '' and number(1 / 3, 6) == '0.333333'
    # a band edge that is 5.375 on one CPU and one ulp below it on another shows the same digits on both
    assert number(5.375, 3) == number(np.nextafter(5.375, 0), 3) == number(np.nextafter(5.375, 9), 3) == '5.38'
