"""analysis.stats.eprocess against closed forms, numerical integration and brute force, and by seeded simulation:
the mixture bet is a test supermartingale under its null, its confidence sequence covers at every n at once, its
interval and its composite nulls say the same, e-BH and the power projections are what their definitions say; and
analysis.stats.betting's registered criterion chooses the mixture eprocess.PRIOR names."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from analysis.stats import betting
from analysis.stats.eprocess import (PRIOR, Quantile, critical_counts, e_value, ebh, log_e_value,
                                     seeds_for_power)

ALPHA = 0.05
THRESHOLD = 1 / ALPHA


def integrated(k: int, n: int, share: float, prior: tuple[float, float] = PRIOR) -> float:
    """E_n by its definition: int_share^1 p^k (1 - p)^(n - k) w(p) dp / (share^k (1 - share)^(n - k)), w the Beta
    density restricted to [share, 1] (scipy.integrate.quad)."""
    a, b = prior
    weight = integrate.quad(lambda p: p ** (a - 1) * (1 - p) ** (b - 1), share, 1, limit=200)[0]
    mixture = integrate.quad(lambda p: p ** (k + a - 1) * (1 - p) ** (n - k + b - 1), share, 1, limit=200)[0]
    return mixture / weight / (share ** k * (1 - share) ** (n - k))


# --- the mixture bet ---------------------------------------------------------------------------------------------

def test_the_uniform_mixture_has_its_closed_form():
    """10 of 10 at share 1/2 under the uniform prior on [1/2, 1]: 2 int_{1/2}^1 p^10 dp * 2^10
    = 2 (1 - 2^-11) / 11 * 2^10 = 186.09."""
    assert e_value(10, 10, 0.5, (1.0, 1.0)) == pytest.approx(2 * (1 - 2 ** -11) / 11 * 2 ** 10, rel=1e-12)
    assert e_value(10, 10, 0.5, (1.0, 1.0)) == pytest.approx(186.09, abs=0.005)
    assert e_value(0, 0, 0.5) == pytest.approx(1.0)  # no seed, no evidence


@pytest.mark.parametrize('k, n, share', [(10, 10, 0.5), (9, 10, 0.5), (5, 10, 0.5), (0, 6, 0.5), (27, 40, 0.5),
                                         (150, 200, 0.5), (40, 40, 0.8), (33, 40, 0.8), (18, 20, 0.8), (4, 12, 0.8)])
def test_the_chosen_mixture_is_its_integral(k, n, share):
    """Beta(1, 1/2) on [share, 1]: the closed form (incomplete beta functions) against numerical integration."""
    assert e_value(k, n, share) == pytest.approx(integrated(k, n, share), rel=1e-6)
    assert log_e_value(k, n, share) == pytest.approx(math.log(integrated(k, n, share)), abs=1e-6)


def test_every_count_is_a_martingale_step_at_the_null_and_a_supermartingale_step_below_it():
    """From (k, n) one more seed lands on the side with probability p: at p = share the expected next e-value is the
    current one (a mixture of likelihood ratios), below share it is smaller; at every count up to 200 seeds."""
    for share in (0.5, 0.8):
        n = np.arange(200)[:, None]
        k = np.arange(200)[None, :]
        ok = np.broadcast_to(k <= n, (200, 200))
        now = e_value(k, n, share)
        for p, compare in ((share, 'equal'), (share - 0.1, 'below'), (share - 0.3, 'below')):
            after = p * e_value(k + 1, n + 1, share) + (1 - p) * e_value(k, n + 1, share)
            if compare == 'equal':
                assert after[ok] == pytest.approx(now[ok], rel=1e-8), share
            else:
                assert (after[ok] <= now[ok] * (1 + 1e-10)).all() and (after[ok] < now[ok]).any(), (share, p)


def crossing_rate(log_e_table: np.ndarray, share: float, p: float, sequences: int, rng) -> float:
    """The share of `sequences` runs of 200 seeds (each on the side with probability p) whose e-process, read from
    log_e_table [k, n], reaches 1 / alpha at some n <= 200."""
    counts = np.cumsum(rng.random((sequences, 200)) < p, axis=1)  # [S, n]
    seen = log_e_table[counts, np.arange(1, 201)]
    return float((seen.max(axis=1) >= math.log(THRESHOLD)).mean())


SEQUENCES = 2000
BOUND = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / SEQUENCES)  # 0.065: alpha and 3 Monte Carlo standard errors


@pytest.mark.parametrize('share, p', [(0.5, 0.5), (0.5, 0.4), (0.8, 0.8), (0.8, 0.7)])
def test_under_the_null_the_bet_reaches_one_over_alpha_within_200_seeds_at_most_alpha_of_the_time(share, p):
    """Ville: P(E_n >= 1 / alpha for some n) <= alpha, at the null's share and below it (2,000 runs of 200 seeds). The
    same runs catch a bet that is no test supermartingale: the likelihood ratio at the maximum-likelihood p (a bet
    that looks ahead), and the mixture bet four times over."""
    k, n = np.meshgrid(np.arange(201), np.arange(201), indexing='ij')  # [k, n]
    table = np.where(k <= n, log_e_value(np.minimum(k, n), n, share), -np.inf)
    assert crossing_rate(table, share, p, SEQUENCES, np.random.default_rng(11)) <= BOUND
    if (share, p) == (0.5, 0.5):
        with np.errstate(divide='ignore', invalid='ignore'):
            best = np.clip(k / np.maximum(n, 1), share, 1)
            hindsight = np.nan_to_num(k * np.log(best / share) + (n - k) * np.log((1 - best) / (1 - share)))
        assert crossing_rate(hindsight, share, p, SEQUENCES, np.random.default_rng(11)) > BOUND
        assert crossing_rate(table + math.log(4), share, p, SEQUENCES, np.random.default_rng(11)) > BOUND


def test_the_evidence_is_a_function_of_the_counts_whatever_the_order_of_the_seeds():
    """The same seeds in another order: the same game, interval and e-values; sequentially, two orders that reach
    the same count at n hold the same e-value there."""
    rng = np.random.default_rng(12)
    x = np.round(rng.normal(0.3, 1, 25), 1)
    base, shuffled = Quantile(x), Quantile(rng.permutation(x))
    for a, b in zip(base.segments, shuffled.segments):
        assert np.array_equal(a, b)
    assert base.interval(THRESHOLD) == shuffled.interval(THRESHOLD)
    assert base.e_null(-np.inf, 0.0) == shuffled.e_null(-np.inf, 0.0)
    sides = rng.random(30) < 0.7
    for order in (sides, rng.permutation(sides), np.sort(sides)[::-1]):
        path = e_value(np.cumsum(order), np.arange(1, 31))
        assert path[-1] == pytest.approx(integrated(int(sides.sum()), 30, 0.5), rel=1e-6)


# --- the quantile's confidence sequence -----------------------------------------------------------------------

def misses(interval: tuple[float, float, bool, bool], low: float, high: float, outside: bool) -> bool:
    """Whether an interval (low, high, low_open, high_open) has no point in the null [low, high] (outside: in
    (-inf, low] or [high, inf)); an empty interval (NaN) misses every null."""
    a, b, a_open, b_open = interval
    if math.isnan(a):
        return True
    if outside:  # wholly inside the open band (low, high)
        return (a > low or a == low and a_open) and (b < high or b == high and b_open)
    return b < low or b == low and b_open or a > high or a == high and a_open


def test_the_interval_misses_a_null_exactly_when_its_e_value_reaches_the_threshold():
    """Random values with ties, nulls with edges at the values, between them, at infinity and at points, both
    quantiles: interval(c) misses the null exactly when e_null >= c."""
    rng = np.random.default_rng(13)
    checked = {True: 0, False: 0}
    for trial in range(250):
        n = int(rng.integers(1, 60))
        x = rng.integers(-4, 5, n) + (rng.normal(0, 0.5, n) if trial % 2 else 0.0)  # half of them all ties
        game = Quantile(x, tau=(0.5, 0.2)[trial % 3 == 0])
        threshold = float(rng.choice([2.0, 20.0, 117.0, 400.0]))
        interval = game.interval(threshold)
        values = np.unique(x)
        edges = np.r_[values, values[:-1] + np.diff(values) / 2, -np.inf, np.inf, -5.5, 5.5]
        for _ in range(12):
            low, high = np.sort(rng.choice(edges, 2))
            if rng.random() < 0.15:
                high = low  # a point null
            for outside in (False, True):
                if np.isinf(low) and low == high or outside and (low == high or (low, high) == (-np.inf, np.inf)):
                    continue  # an empty null, or a null that is the whole line
                reached = game.e_null(low, high, outside) >= threshold
                assert misses(interval, low, high, outside) == reached, (x.tolist(), game.tau, threshold, interval,
                                                                          low, high, outside)
                checked[reached] += 1
    assert min(checked.values()) > 150  # both answers seen many times


def test_ties_at_two_values_leave_no_hole_in_the_interval():
    """Every value tied at one of two points: e(m) is lower at each point than in the gap between them (a point has
    fewer seeds on either side), so the interval must not cover a gap whose e-value reaches the threshold."""
    for n_low in range(1, 41):
        for n_high in range(1, 41):
            game = Quantile(np.r_[np.zeros(n_low), np.ones(n_high)])
            for threshold in (20.0, 117.0):
                low, high, low_open, high_open = game.interval(threshold)
                gap = game.e_null(0.25, 0.75)
                covers_gap = low < 0.75 and high > 0.25
                assert covers_gap != (gap >= threshold), (n_low, n_high, threshold)


def covered(x: np.ndarray, truth: float, tau: float, threshold: float) -> np.ndarray:
    """Per run [S] whether e(truth) stays under the threshold at every n (the interval holds the truth at each n)."""
    n = np.arange(1, x.shape[1] + 1)
    counts = np.arange(x.shape[1] + 1)[:, None]  # the e-values as tables [count, n]: a function of the counts
    up, down = e_value(counts, n, 1 - tau), e_value(counts, n, tau)
    above, below = np.cumsum(x > truth, axis=1), np.cumsum(x < truth, axis=1)
    e = (up[above, n - 1] + down[below, n - 1]) / 2
    return (e < threshold).all(axis=1)


@pytest.mark.parametrize('tau', [0.5, 0.2])
def test_the_interval_covers_the_true_quantile_at_every_n_up_to_100_at_once(tau):
    """Skewed seeds (lognormal, true tau-quantile exp(z_tau)): the interval at 20 holds the truth at all n <= 100
    together in at least 1 - 1/20 of 2,000 runs (less 3 Monte Carlo errors); on 20 of them, interval() itself is
    read at every n. At a threshold of 2 the same runs lose the truth more often than 1/20: the check can fail."""
    rng = np.random.default_rng(14)
    x = np.exp(rng.normal(0, 1, (SEQUENCES, 100)))
    truth = math.exp(stats.norm.ppf(tau))
    held = covered(x, truth, tau, THRESHOLD)
    assert held.mean() >= 1 - BOUND
    assert covered(x, truth, tau, 2.0).mean() < 1 - BOUND
    for run in range(20):
        for n in range(1, 101):
            low, high, low_open, high_open = Quantile(x[run, :n], tau).interval(THRESHOLD)
            inside = (low < truth or low == truth and not low_open) and (high > truth or high == truth and not high_open)
            if held[run]:
                assert inside, (run, n)


# --- e-BH, critical counts, power --------------------------------------------------------------------------------

def brute_ebh(e: np.ndarray, alpha: float) -> tuple[np.ndarray, float]:
    """e-BH by its definition: the largest R with at least R e-values >= m / (alpha R) (NaN: not in the family)."""
    finite = ~np.isnan(e)
    m = int(finite.sum())
    rejections = max([r for r in range(1, m + 1) if (e[finite] >= m / (alpha * r)).sum() >= r], default=0)
    threshold = m / (alpha * max(rejections, 1)) if m else math.inf
    return finite & (e >= threshold) & (rejections > 0), threshold


def test_ebh_is_its_definition_on_random_families():
    rng = np.random.default_rng(15)
    for trial in range(300):
        m = int(rng.integers(1, 40))
        e = np.exp(rng.normal(1.0, 2.5, m))
        e[rng.random(m) < 0.15] = np.nan
        if trial % 5 == 0:
            e[rng.integers(0, m)] = 20 * m  # a value exactly on a threshold
        alpha = float(rng.choice([0.05, 0.1]))
        rejected, threshold = ebh(e, alpha)
        expected, cut = brute_ebh(e, alpha)
        assert rejected.tolist() == expected.tolist() and threshold == pytest.approx(cut), e
    rejected, threshold = ebh([np.nan, np.nan], 0.05)
    assert not rejected.any() and threshold == math.inf
    rejected, threshold = ebh([], 0.05)  # a ledger with no test at all
    assert rejected.shape == (0,) and threshold == math.inf
    rejected, threshold = ebh([1.0, 2.0, np.nan], 0.05)  # nothing rejected: the bar is m / alpha, m the finite ones
    assert not rejected.any() and threshold == pytest.approx(40.0)
    rejected, threshold = ebh([400.0, 45.0, 1.0, np.nan], 0.05)  # two of three: 3 / (0.05 * 2) = 30
    assert rejected.tolist() == [True, True, False, False] and threshold == pytest.approx(30.0)
    families = [[400.0, 45.0, 1.0, np.nan], [1.0, 2.0, np.nan, np.nan], [np.nan] * 4]  # each row a family
    rejected, threshold = ebh(families, 0.05)
    assert rejected.tolist() == [[True, True, False, False], [False] * 4, [False] * 4]
    assert threshold.tolist() == pytest.approx([30.0, 40.0, math.inf])


@pytest.mark.parametrize('threshold, share', [(20.0, 0.5), (117.0, 0.5), (40.0, 0.8), (2.0, 0.5)])
def test_critical_counts_are_the_fewest_seeds_on_the_side_that_reach_the_threshold(threshold, share):
    found = critical_counts(120, threshold, share)
    for n in range(1, 121):
        reaching = [k for k in range(n + 1) if log_e_value(k, n, share) >= math.log(threshold)]
        assert found[n - 1] == (reaching[0] if reaching else n + 1), n
        assert reaching == list(range(found[n - 1], n + 1))  # every larger count reaches it too


def test_seeds_for_power_is_the_first_n_with_the_power_and_grows_with_the_threshold():
    for p, threshold, share in ((0.9, 20.0, 0.5), (0.75, 117.0, 0.5), (0.95, 40.0, 0.8)):
        n = int(seeds_for_power(p, threshold, share))
        counts = critical_counts(n, threshold, share)
        power = stats.binom.sf(counts - 1, np.arange(1, n + 1), p)
        assert power[-1] >= 0.8 and (power[:-1] < 0.8).all(), (p, threshold)
    by_threshold = [seeds_for_power(0.8, c, 0.5) for c in (2.0, 20.0, 117.0, 1000.0)]
    by_p = [seeds_for_power(p, 20.0, 0.5) for p in (0.65, 0.75, 0.85, 0.95, 1.0)]
    assert by_threshold == sorted(by_threshold) and len(set(by_threshold)) == 4
    assert by_p == sorted(by_p, reverse=True) and len(set(by_p)) == 5
    assert math.isnan(seeds_for_power(0.5, 20.0, 0.5)) and math.isnan(seeds_for_power(0.79, 20.0, 0.8))
    assert math.isnan(seeds_for_power(0.52, 1e6, 0.5, most=100))  # beyond `most`


def test_the_registered_criterion_chooses_the_prior_eprocess_uses():
    """The admissible candidate with the largest criterion is the mixture PRIOR names; the plug-in is not admissible
    (its e-value depends on the order of the seeds); the criterion is the mean expected log e-value, exact over the
    binomial counts."""
    found = betting.table(sequences=500)
    chosen = found[found['admissible']].iloc[0]['candidate']
    assert betting.MIXTURES[chosen] == PRIOR
    plug_in = found[~found['admissible']]
    assert len(plug_in) == 1 and plug_in['candidate'].iloc[0].startswith('predictable plug-in')
    row = found.set_index('candidate').loc[chosen]
    assert row['criterion'] == pytest.approx(np.mean([
        (stats.binom.pmf(np.arange(n + 1), n, p) * log_e_value(np.arange(n + 1), n, 0.5, PRIOR)).sum()
        for n in betting.SEEDS for p in betting.SHARES]))
    assert row['e at 10, all agree'] == pytest.approx(e_value(10, 10))
