"""Anytime-valid evidence from counts of seeds: the sign test as a bet, its confidence sequence, and e-BH.

A sign test counts the seeds on one side of a value m; under its null each seed lands there with probability at most
`share`. Its e-process is the beta-binomial mixture of likelihood ratios over the alternative p in [share, 1]
(Howard and Ramdas 2022): E_n = int_share^1 p^k (1 - p)^(n - k) w(p) dp / (share^k (1 - share)^(n - k)) for k of n
seeds on the side, w a Beta(a, b) density restricted to [share, 1]. Each ratio with p >= share is a supermartingale
under any null probability <= share, so E_n is a test supermartingale: P(E_n >= c at any n) <= 1 / c (Ville), and
its value depends on (k, n) alone, so the same records give the same evidence in whatever order their seeds arrived.

For a quantile q of per-seed values x (the median: tau 1/2), the point null q = m has the e-process
e(m) = (E_up(#x > m) + E_down(#x < m)) / 2, the bet that q lies above m (each seed above m with probability at most
1 - tau) averaged with the bet that it lies below (at most tau); the confidence sequence at threshold c is the hull of
{m : e(m) < c}, and the e-value of a composite null M (a half-line, a band or its outside) is inf over m in M of
e(m): it reaches c exactly when the hull misses M. Across a family, e-BH (Wang and Ramdas 2022) rejects every e-value
at or above m / (alpha R) for the largest R it can; its rejections keep a false discovery rate of at most alpha under
any dependence, and intervals at that threshold (e-BY, Xu, Wang and Ramdas 2024) keep the false coverage rate of the
selected at most alpha.

Pure numpy and scipy: imports neither the ledger nor pandas' frames.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.special import betaincc, betaln

PRIOR = (1.0, 0.5)  # the mixture over the alternative: Beta(1, 1/2) on [share, 1] (results/measurements.md, "The betting
#                     strategy")
MAX_SEEDS = 1000  # power projections look this far; beyond it a claim reads "more than MAX_SEEDS"


def log_e_value(count, n, share: float = 0.5, prior: tuple[float, float] = PRIOR) -> np.ndarray:
    """log E_n of the mixture bet for `count` of n seeds on the side (arrays broadcast); 0 at n = 0."""
    k, n = np.asarray(count, dtype=float), np.asarray(n, dtype=float)
    a, b = prior
    with np.errstate(divide='ignore'):
        mixture = betaln(k + a, n - k + b) + np.log(betaincc(k + a, n - k + b, share))
        weight = math.log(betaincc(a, b, share)) + float(betaln(a, b))
        null = k * math.log(share) + (n - k) * math.log1p(-share)
    return mixture - weight - null


def e_value(count, n, share: float = 0.5, prior: tuple[float, float] = PRIOR) -> np.ndarray:
    """E_n of the mixture bet for `count` of n seeds on the side (log_e_value's exp; inf beyond float range)."""
    with np.errstate(over='ignore'):
        return np.exp(log_e_value(count, n, share, prior))


@dataclass(frozen=True)
class Quantile:
    """The tau-quantile of per-seed values x [n] as a betting game: e(m), its confidence sequence and the e-value of a
    composite null. tau 1/2: the median; 0.2: the value that 80% of seeds exceed."""
    x: np.ndarray
    tau: float = 0.5

    def __post_init__(self):
        object.__setattr__(self, 'x', np.sort(np.asarray(self.x, dtype=float)))

    @property
    def n(self) -> int:
        return len(self.x)

    @functools.cached_property
    def segments(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The real line cut where e(m) can change, per segment its left end, right end and e(m) [2u + 1]: the open
        gaps (-inf, v1), (v1, v2), ..., (vu, inf) at even positions, the u distinct values v1 < ... < vu at odd ones.
        Computed once a game: its intervals and every null's e-value read it."""
        values = np.unique(self.x)
        below_point = np.searchsorted(self.x, values, side='left')  # #x < v
        above_point = self.n - np.searchsorted(self.x, values, side='right')  # #x > v
        below_gap = np.concatenate([[0], self.n - above_point])  # #x < m for m in each gap
        left, right, e = (np.empty(2 * len(values) + 1) for _ in range(3))
        left[0::2], right[0::2] = np.concatenate([[-np.inf], values]), np.concatenate([values, [np.inf]])
        left[1::2] = right[1::2] = values
        e[0::2], e[1::2] = self.e(self.n - below_gap, below_gap), self.e(above_point, below_point)
        return left, right, e

    def e(self, above, below) -> np.ndarray:
        """e(m) from #x > m and #x < m: the two one-sided bets averaged."""
        return (e_value(above, self.n, 1 - self.tau) + e_value(below, self.n, self.tau)) / 2

    def interval(self, threshold: float) -> tuple[float, float, bool, bool]:
        """The confidence sequence at `threshold` (level 1 / threshold): (low, high, low_open, high_open), the hull
        of {m : e(m) < threshold}; (nan, nan, False, False) when it is empty."""
        left, right, e = self.segments
        inside = np.flatnonzero(e < threshold)
        if not len(inside):
            return math.nan, math.nan, False, False
        first, last = inside[0], inside[-1]
        return float(left[first]), float(right[last]), bool(first % 2 == 0), bool(last % 2 == 0)

    def e_null(self, low: float = -np.inf, high: float = np.inf, outside: bool = False) -> float:
        """The e-value against the composite null that the quantile lies in [low, high] (outside: in (-inf, low] or
        [high, inf)): the infimum of e(m) over it, which reaches a threshold exactly when interval() misses it."""
        left, right, e = self.segments
        point = left == right
        if outside:
            meets = np.where(point, (left <= low) | (left >= high), (left < low) | (right > high))
        else:
            meets = np.where(point, (left >= low) & (left <= high), (left < high) & (right > low))
        return float(e[meets].min())


def ebh(e_values, alpha: float) -> tuple[np.ndarray, float | np.ndarray]:
    """e-BH over a family of e-values [..., m] (each row along the last axis a family; NaN: no test, outside its
    family's count): which e-values it rejects [..., m], and each family's threshold m / (alpha R) for R rejections of
    its m (m / alpha when it rejects none: the bar one more would have to clear; inf for a family of no test), a float
    for one family."""
    e = np.asarray(e_values, dtype=float)
    ok = ~np.isnan(e)
    m = ok.sum(axis=-1)
    ranked = -np.sort(-np.where(ok, e, -np.inf), axis=-1)  # descending, no test last
    rank = np.arange(1, e.shape[-1] + 1)
    rejections = np.where(ranked >= m[..., None] / (alpha * rank), rank, 0).max(axis=-1, initial=0)  # the last
    with np.errstate(divide='ignore'):  # passing rank; a family of no test: threshold inf
        threshold = np.where(m > 0, m / (alpha * np.maximum(rejections, 1)), np.inf)
    rejected = ok & (e >= threshold[..., None]) & (rejections > 0)[..., None]
    return rejected, (float(threshold) if e.ndim == 1 else threshold)


@functools.lru_cache(maxsize=None)
def critical_counts(most: int, threshold: float, share: float) -> np.ndarray:
    """Per seed count n = 1..most, the fewest seeds on the side whose one-sided e-value reaches threshold (n + 1:
    none) [most]; the e-value grows with the count, so this is a bisection over counts, per n at once."""
    n = np.arange(1, most + 1)
    low, high = np.zeros(most, int), n + 1  # reached at high (n + 1: a stand-in), not at low - 1
    for _ in range(int(math.log2(most + 1)) + 2):
        middle = (low + high) // 2
        reached = log_e_value(middle, n, share) >= math.log(threshold)
        high, low = np.where(reached, middle, high), np.where(reached, low, middle + 1)
    return high


@functools.lru_cache(maxsize=None)
def seeds_for_power(p: float, threshold: float, share: float, power: float = 0.8,
                    most: int = MAX_SEEDS) -> float:
    """The fewest seeds at which a one-sided bet at `share` reaches `threshold` with probability `power` when each
    seed lands on the side with probability p; NaN beyond `most` (or where p <= share). Cached: simulated ledgers ask
    the same counts at the same thresholds again and again."""
    if not p > share:
        return math.nan
    n = np.arange(1, most + 1)
    chance = stats.binom.sf(critical_counts(most, float(threshold), float(share)) - 1, n, p)
    reached = np.flatnonzero(chance >= power)
    return float(n[reached[0]]) if len(reached) else math.nan


def closed_ebh(e_values, alpha: float) -> int:
    """The largest r whose r largest e-values form a mean-consistent set (closed e-BH, Xu, Solari, Fischer, de Heide,
    Ramdas and Goeman 2025): for every S, mean of e over S >= |S & R| / (alpha r). The worst S of a size takes the k
    smallest e-values of R and the j smallest of the rest, so each r is checked on a [r, m - r + 1] grid. Only sets
    of the largest e-values are searched: a lower bound of the closed procedure's largest set, at least e-BH's."""
    e = np.sort(np.asarray(e_values, dtype=float)[~np.isnan(e_values)])[::-1]
    best = 0
    for r in range(1, len(e) + 1):
        chosen, rest = np.cumsum(np.sort(e[:r])), np.concatenate([[0.0], np.cumsum(np.sort(e[r:]))])  # [r], [m-r+1]
        k, j = np.arange(1, r + 1)[:, None], np.arange(len(rest))[None, :]
        if ((chosen[:, None] + rest[None, :]) / (k + j) >= k / (alpha * r)).all():
            best = r
    return best
