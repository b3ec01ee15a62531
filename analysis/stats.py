"""Statistics across seeds (design.md, section 5): summaries, intervals, tests, power, FDR control.

Every function takes plain arrays and returns plain dicts or frames with named fields; degenerate
input (no data, one seed, all values equal) is reported in a `status` field, never as a crash.
"""
from __future__ import annotations

import math
import warnings
from contextlib import contextmanager

import numpy as np
import pandas as pd
from scipy import stats

CONFIDENCE = 0.95
METHODS = ('t', 'bca')
SUMMARY_COLUMNS = ['n', 'mean', 'sd', 'ci_low', 'ci_high', 'pi_low', 'pi_high', 'method', 'status']
EXACT = 'exact (no variance)'


def finite(values) -> np.ndarray:
    """The finite values of an array-like, as float64."""
    x = np.asarray(values, dtype=float).ravel()
    return x[np.isfinite(x)]


def t_quantile(n: int, confidence: float = CONFIDENCE) -> float:
    """t_{n-1, (1+confidence)/2}: the two-sided critical value for n values."""
    return float(stats.t.ppf((1 + confidence) / 2, n - 1))


def describe(values, method: str = 't', seed: int = 0, confidence: float = CONFIDENCE) -> dict:
    """n, mean, sd, CI of the mean (Student t or seeded BCa), prediction interval for one new seed, status."""
    if method not in METHODS:
        raise ValueError(f'method={method!r} is not allowed; expected one of {", ".join(METHODS)}')
    x = finite(values)
    n, nan = len(x), math.nan
    out = dict(n=n, mean=nan, sd=nan, ci_low=nan, ci_high=nan, pi_low=nan, pi_high=nan, method=method)
    if n == 0:
        return dict(out, status='empty')
    if n == 1 or np.all(x == x[0]):
        sd, status = (nan, 'n=1') if n == 1 else (0.0, 'constant')
        edge = x[0] if n > 1 else nan  # a constant sample's intervals collapse onto its value
        return dict(out, mean=float(x[0]), sd=sd, ci_low=edge, ci_high=edge, pi_low=edge, pi_high=edge, status=status)
    mean, sd, q = float(x.mean()), float(x.std(ddof=1)), t_quantile(n, confidence)
    half_pi = q * sd * math.sqrt(1 + 1 / n)
    out.update(mean=mean, sd=sd, pi_low=mean - half_pi, pi_high=mean + half_pi, status='ok')
    if method == 't':
        return dict(out, ci_low=mean - q * sd / math.sqrt(n), ci_high=mean + q * sd / math.sqrt(n))
    low, high = bca_interval(x, seed, confidence)
    if not (math.isfinite(low) and math.isfinite(high)):
        return dict(out, status=f'bca undefined (n={n})')
    return dict(out, ci_low=low, ci_high=high)


@contextmanager
def quiet():
    """Silence scipy's warnings about near-identical data: a constant arm is valid input here, and a
    degenerate result is reported by the caller's status."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', RuntimeWarning)
        yield


@quiet()
def bca_interval(x: np.ndarray, seed: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """BCa bootstrap interval of the mean from scipy.stats.bootstrap with rng seeded by seed."""
    res = stats.bootstrap((x,), np.mean, confidence_level=confidence, method='BCa', rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def summarize(frame: pd.DataFrame, by: list[str], method: str = 't', seed: int = 0,
              confidence: float = CONFIDENCE) -> pd.DataFrame:
    """describe() of frame['value'] per group of the `by` columns, sorted by them."""
    groups = frame.groupby(by, sort=True) if len(frame) else []
    rows = [dict(zip(by, key), **describe(group['value'], method, seed, confidence)) for key, group in groups]
    return pd.DataFrame(rows, columns=by + SUMMARY_COLUMNS).astype({'n': int})


@quiet()
def welch(x, y, confidence: float = CONFIDENCE) -> dict:
    """mean(x) - mean(y) with its Welch CI, t, df and two-sided p (scipy.stats.ttest_ind, equal_var=False)."""
    x, y = finite(x), finite(y)
    nan = math.nan
    out = dict(diff=nan, ci_low=nan, ci_high=nan, t=nan, df=nan, p=nan, status='ok')
    if len(x) and len(y):
        out['diff'] = float(x.mean() - y.mean())
    if len(x) < 2 or len(y) < 2:
        return dict(out, status='n<2')
    if np.ptp(x) == 0 and np.ptp(y) == 0:
        return dict(out, status='zero variance')
    res = stats.ttest_ind(x, y, equal_var=False)
    ci = res.confidence_interval(confidence)
    return dict(out, ci_low=float(ci.low), ci_high=float(ci.high), t=float(res.statistic), df=float(res.df),
                p=float(res.pvalue))


def cohen_d(x, y) -> float:
    """(mean(x) - mean(y)) / pooled sd, the pooled variance being the mean of the two; NaN when undefined."""
    x, y = finite(x), finite(y)
    if len(x) < 2 or len(y) < 2:
        return math.nan
    pooled = math.sqrt((x.var(ddof=1) + y.var(ddof=1)) / 2)
    return float((x.mean() - y.mean()) / pooled) if pooled > 0 else math.nan


def power(n: int, d: float, alpha: float = 0.05) -> float:
    """Power of a two-sided two-sample t-test with n per arm at standardized effect d (noncentral t)."""
    df, nc = 2 * n - 2, abs(d) * math.sqrt(n / 2)
    crit = stats.t.ppf(1 - alpha / 2, df)
    return float(stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc))


def seeds_for_power(d: float, target: float = 0.8, alpha: float = 0.05, n_max: int = 100_000) -> tuple[int | None, str]:
    """Smallest n per arm with power >= target at effect d -> (n, 'ok'), or (None, why not)."""
    if not math.isfinite(d):
        return None, 'undefined'
    if d == 0:
        return None, 'no effect'
    high = 2
    while power(high, d, alpha) < target:  # doubling keeps the noncentrality small, where nct is accurate
        if high >= n_max:
            return None, f'>{n_max}'
        high = min(2 * high, n_max)
    low = max(2, high // 2)  # power grows with n: the smallest n that reaches the target lies in [low, high]
    while low < high:
        mid = (low + high) // 2
        low, high = (low, mid) if power(mid, d, alpha) >= target else (mid + 1, high)
    return low, 'ok'


def bh(pvalues) -> np.ndarray:
    """Benjamini-Hochberg q-values (scipy.stats.false_discovery_control); NaN p-values stay NaN and don't count."""
    p = np.asarray(pvalues, dtype=float)
    q = np.full(p.shape, math.nan)
    ok = np.isfinite(p)
    if ok.any():
        q[ok] = stats.false_discovery_control(p[ok], method='bh')
    return q


@quiet()
def shifted_test(a, b, alternative: str, paired: bool, shift: float = 0.0) -> dict:
    """t-test of mean(a) - mean(b) against shift: one-sample when b is a number, paired (ttest_rel) or Welch.

    Returns dict(test, statistic, p). Data without variance is decided exactly (p 0 or 1).
    """
    a = np.asarray(a, dtype=float)
    if np.ndim(b) == 0:
        name, spread, diff = 'one-sample t', a - float(b), a.mean() - float(b)
    elif paired:
        spread = a - np.asarray(b, dtype=float)
        name, diff = 'paired t', spread.mean()
    else:
        b = np.asarray(b, dtype=float)
        name, spread, diff = 'Welch t', np.concatenate([a - a.mean(), b - b.mean()]), a.mean() - b.mean()
    if np.ptp(spread) == 0:
        excess = float(diff - shift)
        holds = {'greater': excess > 0, 'less': excess < 0, 'two-sided': excess != 0}[alternative]
        return dict(test=EXACT, statistic=excess, p=0.0 if holds else 1.0)
    if np.ndim(b) == 0:
        res = stats.ttest_1samp(a, float(b) + shift, alternative=alternative)
    elif paired:
        res = stats.ttest_rel(a - shift, b, alternative=alternative)
    else:
        res = stats.ttest_ind(a - shift, b, equal_var=False, alternative=alternative)
    return dict(test=name, statistic=float(res.statistic), p=float(res.pvalue))


def tost(a, b, margin: float, paired: bool) -> dict:
    """Two one-sided tests of |mean(a) - mean(b)| < margin: p is the larger of the two one-sided p-values."""
    low = shifted_test(a, b, 'greater', paired, -margin)
    high = shifted_test(a, b, 'less', paired, margin)
    worst = low if low['p'] >= high['p'] else high
    return dict(test=f'TOST ({worst["test"]}, margin {margin:g})', statistic=worst['statistic'], p=worst['p'])


def prediction_check(mean: float, scale: float, df: float, low: float, high: float,
                     confidence: float = CONFIDENCE) -> dict:
    """Does the prediction interval mean +- t_df * scale overlap the band [low, high]?

    scale is the sd of one new observation about the mean (sd * sqrt(1 + 1/n)); the statistic is the
    distance from the mean to the band in units of scale, p its two-sided t_df probability. Returns
    dict(test, statistic, p, inside).
    """
    gap = low - mean if mean < low else mean - high if mean > high else 0.0
    if scale == 0:
        return dict(test=EXACT, statistic=gap, p=1.0 if gap == 0 else 0.0, inside=gap == 0)
    statistic = gap / scale * (1 if mean > high else -1)
    p = float(2 * stats.t.sf(abs(statistic), df))
    return dict(test='prediction t', statistic=statistic, p=p, inside=p >= 1 - confidence)
