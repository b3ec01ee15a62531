"""Statistics across seeds (design.md, section 5): summaries, intervals, tests, power, FDR control (scipy and
statsmodels underneath).

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
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestIndPower, TTestPower

CONFIDENCE = 0.95
METHODS = ('t', 'bca')
SUMMARY_COLUMNS = ['n', 'mean', 'sd', 'ci_low', 'ci_high', 'pi_low', 'pi_high', 'method', 'status']
EXACT = 'exact (no variance)'
DEFAULTS = dict(alpha=0.05, min_seeds=3, about_factor=1.25, noise_z=1.96, high_probability=0.8, power=0.8)


def finite(values) -> np.ndarray:
    """The finite values of an array-like, as float64."""
    x = np.asarray(values, dtype=float).ravel()
    return x[np.isfinite(x)]


def t_quantile(n: int, confidence: float = CONFIDENCE) -> float:
    """t_{n-1, (1+confidence)/2}: the two-sided critical value for n values."""
    return float(stats.t.ppf((1 + confidence) / 2, n - 1))


def describe(values, method: str = 't', seed: int = 0, confidence: float = CONFIDENCE,
             bounds: tuple[float, float] | None = None) -> dict:
    """n, mean, sd, CI of the mean (Student t or seeded BCa), prediction interval for one new seed, status.

    bounds: the metric's range (a rate's (0, 1)); intervals are cut to it, which keeps their coverage since the
    mean and every new value lie in it."""
    out = _describe(values, method, seed, confidence)
    if bounds is not None:
        for key in ('ci_low', 'ci_high', 'pi_low', 'pi_high'):
            out[key] = min(max(out[key], bounds[0]), bounds[1]) if math.isfinite(out[key]) else out[key]
    return out


def _describe(values, method: str, seed: int, confidence: float) -> dict:
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
              confidence: float = CONFIDENCE, ranges: dict[str, tuple[float, float]] | None = None) -> pd.DataFrame:
    """describe() of frame['value'] per group of the `by` columns, sorted by them; intervals cut to
    ranges[metric] where the groups have a metric column."""
    groups = frame.groupby(by, sort=True) if len(frame) else []
    ranges = ranges or {}
    rows = [dict(zip(by, key), **describe(group['value'], method, seed, confidence,
                                          ranges.get(dict(zip(by, key)).get('metric'))))
            for key, group in groups]
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
        return dict(out, status='n<2' if len(x) and len(y) else 'empty')
    if np.ptp(x) == 0 and np.ptp(y) == 0:
        return dict(out, status='zero variance')
    res = stats.ttest_ind(x, y, equal_var=False)
    ci = res.confidence_interval(confidence)
    return dict(out, ci_low=float(ci.low), ci_high=float(ci.high), t=float(res.statistic), df=float(res.df),
                p=float(res.pvalue))


@quiet()
def paired(x: pd.Series, y: pd.Series, confidence: float = CONFIDENCE) -> dict:
    """mean(x - y) over the seeds both Series hold (index: seed): contrast() with weights (1, -1), the paired t
    (scipy.stats.ttest_rel's); Welch's test when fewer than two seeds are shared."""
    if len(pd.concat([x, y], axis=1, join='inner').dropna()) < 2:
        return dict(welch(x, y, confidence), paired=False, n=min(len(finite(x)), len(finite(y))), sd=math.nan)
    return contrast([x, y], [1, -1], confidence)


@quiet()
def contrast(terms: list[pd.Series], weights: list[float], confidence: float = CONFIDENCE) -> dict:
    """sum_i weights[i] * terms[i] per seed, over the seeds every Series holds (index: seed): its mean with the
    one-sample t CI, t, df, two-sided p (scipy.stats.ttest_1samp) and the sd of the per-seed contrasts."""
    both = pd.concat([t.rename(i) for i, t in enumerate(terms)], axis=1, join='inner').dropna()
    d = sum(w * both[i] for i, w in enumerate(weights)).to_numpy(dtype=float)  # [seeds]
    n, nan = len(d), math.nan
    out = dict(diff=float(d.mean()) if n else nan, ci_low=nan, ci_high=nan, t=nan, df=float(n - 1) if n else nan,
               p=nan, status='ok', paired=True, n=n, sd=float(d.std(ddof=1)) if n > 1 else nan)
    if n < 2:
        return dict(out, status='empty' if n == 0 else 'n<2')
    if np.ptp(d) == 0:
        return dict(out, ci_low=out['diff'], ci_high=out['diff'], status='zero variance')
    res = stats.ttest_1samp(d, 0.0)
    ci = res.confidence_interval(confidence)
    return dict(out, ci_low=float(ci.low), ci_high=float(ci.high), t=float(res.statistic), p=float(res.pvalue))


def bh(pvalues) -> np.ndarray:
    """Benjamini-Hochberg q-values (statsmodels multipletests, fdr_bh); NaN p-values stay NaN and don't count."""
    p = np.asarray(pvalues, dtype=float)
    q = np.full(p.shape, math.nan)
    ok = np.isfinite(p)
    if ok.any():
        q[ok] = multipletests(p[ok], method='fdr_bh')[1]
    return q


def seeds_for_power(effect: float, sd: float, test: str = 't', arms: int = 1, alpha: float = 0.05,
                    target: float = 0.8, high_probability: float = 0.8, n_max: int = 10_000) -> tuple[float, str]:
    """Seeds (per arm) for a one-sided test at level alpha to reach power `target` at the smallest effect ->
    (n, '') or (NaN, why not).

    t: statsmodels' power of the one-sample / paired t (arms 1) or of the two-sample t (arms 2) at effect / sd;
    wilcoxon: the t's seeds over the test's asymptotic relative efficiency 3 / pi; sign: the exact binomial power
    at success probability high_probability (effect and sd unused).
    """
    n = np.unique(np.geomspace(2, n_max, 80).round().astype(int))
    if test == 'sign':
        power = _sign_power(n, alpha, high_probability)
    else:
        if not (math.isfinite(effect) and math.isfinite(sd)) or sd <= 0 or effect <= 0:
            return math.nan, 'no spread' if sd == 0 else 'undefined'
        power = _t_power(effect / sd, n, alpha, arms)
    if not (np.asarray(power) >= target).any():
        return math.nan, f'>{n_max}'
    first = int(np.argmax(np.asarray(power) >= target))
    low = int(n[first - 1]) + 1 if first else 2  # the smallest n reaching the target lies in (n[first - 1], n[first]]
    fine = np.arange(low, int(n[first]) + 1)
    power = (_sign_power(fine, alpha, high_probability) if test == 'sign' else
             _t_power(effect / sd, fine, alpha, arms))
    seeds = int(fine[np.argmax(np.asarray(power) >= target)])
    return (float(math.ceil(seeds * math.pi / 3)) if test == 'wilcoxon' else float(seeds)), ''


def _t_power(d: float, n: np.ndarray, alpha: float, arms: int) -> np.ndarray:
    """statsmodels' power of the one-sided one-sample (arms 1) or two-sample (arms 2, n per arm) t-test at d."""
    if arms == 1:
        return TTestPower().power(effect_size=d, nobs=n, alpha=alpha, alternative='larger')
    return TTestIndPower().power(effect_size=d, nobs1=n, ratio=1.0, alpha=alpha, alternative='larger')


def _sign_power(n: np.ndarray, alpha: float, probability: float) -> np.ndarray:
    """Exact power of the one-sided sign test with n non-zero differences at success probability `probability`."""
    n = np.asarray(n)
    critical = stats.binom.isf(alpha, n, 0.5) + 1  # the smallest k with P(K >= k | 1/2) <= alpha
    return stats.binom.sf(critical - 1, n, probability)


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
