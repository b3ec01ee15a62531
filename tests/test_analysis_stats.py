"""analysis.stats (and the number formats) against hand computations, scipy and published power tables."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from analysis.chapter import printed
from analysis.stats import (SUMMARY_COLUMNS, bh, cohen_d, describe, power, prediction_check, seeds_for_power,
                            shifted_test, summarize, tost, welch)
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
    assert welch([], [])['status'] == 'n<2' and math.isnan(welch([], [])['diff'])
    out = welch([2.0, 2.0, 2.0], [1.0, 1.0])
    assert out['status'] == 'zero variance' and out['diff'] == 1.0 and math.isnan(out['p'])
    assert welch([2.0, 2.0, 2.0], X)['status'] == 'ok'  # one constant arm is fine


def test_bh_matches_scipy_and_skips_nan():
    p = [0.01, 0.04, 0.03, 0.20, 0.002]
    assert np.allclose(bh(p), scipy_stats.false_discovery_control(p, method='bh'))
    q = bh([0.01, math.nan, 0.04])
    assert math.isnan(q[1]) and np.allclose(q[[0, 2]], scipy_stats.false_discovery_control([0.01, 0.04]))
    assert bh([]).shape == (0,)


@pytest.mark.parametrize('d, n', [(1.0, 17), (0.8, 26), (0.5, 64), (0.2, 394), (-0.5, 64)])
def test_seeds_for_power_matches_cohens_tables(d, n):
    # two-sided alpha 0.05, power 0.8 (Cohen 1988, Table 2.4.1; G*Power gives the same)
    assert seeds_for_power(d) == (n, 'ok')
    assert power(n, d) >= 0.8 > power(n - 1, d)


def test_seeds_for_power_degenerate_effects():
    assert seeds_for_power(0.0) == (None, 'no effect')
    assert seeds_for_power(math.nan) == (None, 'undefined')
    assert seeds_for_power(1e-4, n_max=1000) == (None, '>1000')
    assert seeds_for_power(10.0) == (2, 'ok')  # the smallest sample with a variance


def test_cohen_d_uses_the_pooled_sd():
    d = cohen_d(Y, X)
    assert d == pytest.approx((np.mean(Y) - 3) / math.sqrt((np.var(Y, ddof=1) + 2.5) / 2))
    assert math.isnan(cohen_d([1.0, 1.0], [2.0, 2.0])) and math.isnan(cohen_d([1.0], X))


def test_shifted_test_matches_scipy():
    a, b = np.array(Y[:5]), np.array(X)
    one = scipy_stats.ttest_1samp(a, 3.5, alternative='greater')
    assert shifted_test(a, 3.5, 'greater', False) == dict(test='one-sample t', statistic=pytest.approx(one.statistic),
                                                          p=pytest.approx(one.pvalue))
    paired = scipy_stats.ttest_rel(a - 0.5, b, alternative='less')
    out = shifted_test(a, b, 'less', True, shift=0.5)
    assert out['test'] == 'paired t' and out['p'] == pytest.approx(paired.pvalue)
    unpaired = scipy_stats.ttest_ind(a, b, equal_var=False)
    assert shifted_test(a, b, 'two-sided', False)['p'] == pytest.approx(unpaired.pvalue)


def test_shifted_test_without_variance_is_exact():
    assert shifted_test([2.0, 2.0], [1.0, 1.0], 'greater', True) == dict(test='exact (no variance)', statistic=1.0,
                                                                         p=0.0)
    assert shifted_test([2.0, 2.0], 3.0, 'greater', False)['p'] == 1.0
    assert shifted_test([2.0, 2.0, 2.0], [1.0, 1.0], 'two-sided', False)['p'] == 0.0


def test_tost_is_the_larger_one_sided_p():
    a, b = np.array(Y[:5]), np.array(X)
    low = scipy_stats.ttest_ind(a + 2.0, b, equal_var=False, alternative='greater').pvalue
    high = scipy_stats.ttest_ind(a - 2.0, b, equal_var=False, alternative='less').pvalue
    out = tost(a, b, 2.0, paired=False)
    assert out['p'] == pytest.approx(max(low, high)) and out['test'].startswith('TOST (Welch t, margin 2)')


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
