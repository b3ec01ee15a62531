"""The ledger's promise by simulation: the false discovery rate (FDR) of its verdicts and the false coverage rate (FCR)
of its printed intervals, under the global null, under pilots drawn from the published records, and under an adversary
who looks after every round of seeds, gives seeds to claims adaptively and stops at the first false verdict.

The family is the ledger's own: every statistical claim of claims.yaml (the chapter's, the literature's and the
calibration targets; no checks, no findings), each with its real tests (verdicts.evidence): a direction of K steps
bets each step's quantile of per-seed differences (the median; "with high probability" the 0.2-quantile) above 0 (for)
and below the step's smallest effect (against), its e-values the weakest step's and the strongest step's over K; a
size bets its median inside its band (for) and outside it (against). A ledger draws per claim and step a stream of
per-seed quantities on the claim's scale, in its direction; after every look the ledger's e-values for and against
every claim go through e-BH at alpha together (claims.ledger), and each claim with a verdict prints one step's
interval at K times the e-BH threshold (verdicts.reading).

Truth. A step's true quantity is the set of tau-quantiles of its distribution (one point for a continuous one, [lo, hi]
for a pilot's finite one); a test's null is true where some true quantile lies in it: for a direction, some step at
or below 0 (for) or every step at or above its smallest effect (against); for a size, the median outside the open
band, on an edge included (for), or inside the closed band (against). A false verdict is a rejected e-value whose null
is true; a missed interval is a claim with a verdict whose printed interval holds none of its step's true quantiles.
FDR = E[V / max(R, 1)], FCR = E[missed / max(claims with a verdict, 1)], each with its Monte Carlo standard error;
the promise is mean + 2 SE <= alpha.

Truths (scenarios), each claim's unit its smallest effect (a size: its band's half-width; an effect of 0: 1):
  null: DIST, at no effect         every step's quantile at 0, a size's median on its band's low edge: every null
                                   for the claims true, and against them where the smallest effect is 0 (and sizes)
  null: DIST, at smallest effect   every step's quantile at its smallest effect, a size's on its band's high edge:
                                   every null against the claims true
     (DIST normal, lognormal or t(3), shifted and scaled so the quantile sits exactly there; steps independent)
  pilot: SUBSTRATE                 each claim's published per-seed step quantities (claim_inputs.csv) resampled
                                   with replacement, the seeds of its steps together: its records are the truth
Policies, who gets the next seed (every ledger starts at 3 seeds a claim, none past --max-seeds):
  fixed                            every claim at the maximum, one look: no adversary
  uniform                          every claim one seed a round, a look after each: 3, 4, ..., max seeds
  chase 10%                        only the tenth of the claims whose true-null e-values are largest
  chase 10% + discoveries          the same, and every claim with a false null, whose true discoveries lower the
                                   e-BH threshold for the chased
  freeze winners                   every claim but those whose true-null e-values are at 1 or more: a bet ahead is
                                   kept where it stands
The adversary stops a ledger at its first look with a false verdict (its FDP is read there) and, apart, at its first
look with a missed interval (its FCP), else at its last. The rule `per claim 1/alpha` (each e-value at 1 / alpha, no
e-BH) is not the ledger's: its row shows the simulation catching a rule that breaks the promise.

Fast path. A test's e-value is the least e(m) over its null (eprocess.Quantile.e_null), and e(m) depends only on the
seeds above and below m among n; so each step's e-values after every n seeds are table lookups by (n, count),
computed for all ledgers at once (band_infima), equal to verdicts.evidence (tests/test_simulation.py).

`python -m analysis.ledger.simulation [--ledgers N] [--max-seeds N] [--seed S] [--substrates ...] [--out FILE]`
prints the table (scenario, policy, rule, ledgers, fdr, fdr_se, fcr, fcr_se, verdicts, seeds) and the check.
"""
from __future__ import annotations

import argparse
import functools
import math
import time
import zlib
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from agentrl.files import write_text
from workflow.design import PUBLISHED_DESIGNS, load_design, substrate_of

from ..records.records import claim_samples
from ..stats.eprocess import e_value, ebh
from ..stats.inference import DEFAULTS
from ..text import number, to_markdown
from .claims import FINDING, group, load_claims
from .verdicts import band, clean, differences, on_scale, per_seed, quantile_of, smallest_effect, steps, to_scale

ALPHA = DEFAULTS['alpha']
FIRST = DEFAULTS['min_seeds']  # the first look: the fewest seeds a verdict takes
MOST = 40
LEDGERS = 1000
DISTRIBUTIONS = {  # a draw and its quantile function: z - ppf(tau) has its tau-quantile exactly at 0
    'normal': (lambda rng, shape: rng.standard_normal(shape), stats.norm.ppf),
    'lognormal': (lambda rng, shape: rng.lognormal(0.0, 1.0, shape), stats.lognorm(1.0).ppf),
    't(3)': (lambda rng, shape: rng.standard_t(3, shape), stats.t(3).ppf),
}
BOUNDARIES = ('no effect', 'smallest effect')
POLICIES = ('fixed', 'uniform', 'chase 10%', 'chase 10% + discoveries', 'freeze winners')
RULES = ('e-BH', 'per claim 1/alpha')
CHASED = {'chase 10%': 0.1, 'chase 10% + discoveries': 0.1}  # the share of the claims chased (at least one)
COLUMNS = ['scenario', 'policy', 'rule', 'ledgers', 'fdr', 'fdr_se', 'fcr', 'fcr_se', 'verdicts', 'seeds']
CHUNK = 600  # ledger-steps band_infima takes at once: arrays of CHUNK x MOST x MOST (in cache)


# --- the family ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Family:
    """The statistical claims as tests on step quantities (on each claim's scale, in its direction): per claim c its
    steps [C, K_max] (indices into the steps, -1 beyond its own); per step s [S] its quantile tau, its unit, the
    null for the claim as two closed bands (low, high) [S, 2, 2] (a direction: (-inf, 0] twice; a size: (-inf, low]
    and [high, inf)) and the null against it as one [S, 2] ([effect, inf); a size: [low, high])."""
    steps: np.ndarray
    tau: np.ndarray
    unit: np.ndarray
    null_for: np.ndarray
    null_against: np.ndarray

    @property
    def k(self) -> np.ndarray:
        """Steps per claim [C]."""
        return (self.steps >= 0).sum(1)


@functools.lru_cache(maxsize=None)
def ledger_claims() -> tuple[dict, ...]:
    """The claims with a verdict, claims.ledger's family: not checks, not findings (read once a process)."""
    return tuple(c for c in load_claims()['claims'] if group(c) not in ('check', FINDING))


def family(claims: list[dict] | tuple[dict, ...]) -> Family:
    """The Family of claims (entries of load_claims()['claims'])."""
    members, every = [], []  # per claim its steps; per step (tau, unit, null for, null against)
    for claim in claims:
        if claim['kind'] == 'about':
            scale = claim.get('scale', 'raw')
            low, high = (float(to_scale(v, scale)) for v in band(claim))
            parts = [(0.5, (high - low) / 2, [(-math.inf, low), (high, math.inf)], (low, high))]
        else:
            count = len(steps(claim, [pd.Series(dtype=float)] * len(claim['inputs'])))
            effects = [smallest_effect(claim, i) for i in range(count)]
            parts = [(quantile_of(claim), effect if effect > 0 else 1.0, [(-math.inf, 0.0)] * 2, (effect, math.inf))
                     for effect in effects]
        members.append(list(range(len(every), len(every) + len(parts))))
        every += parts
    most = max(map(len, members))
    tau, unit, null_for, null_against = (np.array(column, dtype=float) for column in zip(*every))
    return Family(np.array([s + [-1] * (most - len(s)) for s in members]), tau, unit, null_for, null_against)


def step_values(claim: dict, samples: list[pd.Series]) -> np.ndarray:
    """Per-seed step quantities of a claim on the seeds all its inputs share [seeds, K]: a direction's differences
    (verdicts.differences), a size's per-seed values on its scale."""
    samples = [clean(s) for s in samples]
    shared = samples[0].index
    for s in samples[1:]:
        shared = shared.intersection(s.index)
    samples = [s.loc[shared] for s in samples]
    if claim['kind'] == 'about':
        return on_scale(clean(per_seed(claim, samples)).to_numpy(), claim.get('scale', 'raw'))[:, None]
    return np.column_stack([differences(claim, a, b) for a, b in steps(claim, samples)])


def quantile_set(values: np.ndarray, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The tau-quantiles of each column's empirical distribution, values [n, K], tau [K]: the closed set (lo, hi)
    [K] of m with P(X < m) <= tau <= P(X <= m)."""
    x, n = np.sort(values, axis=0), len(values)
    # tau n within 1e-9 of a whole number is that number (the 0.2-quantile's tau is 1 - 0.8 = 0.19999999999999996)
    lo = np.ceil(tau * n - 1e-9).astype(int) - 1  # the ceil(tau n)-th smallest
    hi = np.floor(tau * n + 1e-9).astype(int)  # the (floor(tau n) + 1)-th smallest
    columns = np.arange(x.shape[1])
    return x[lo, columns], x[hi, columns]


def nulls(fam: Family, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which nulls are true [C] (for, against) for steps whose true quantiles fill [lo, hi] [S]: some step's meets
    the null for the claim (a direction: any step; a size: its one), every step's meets the null against it."""
    def meets(bands):  # [S, ..., 2] -> [S, ...]
        return (lo[:, None] <= bands[..., 1]) & (hi[:, None] >= bands[..., 0])
    meets_for = meets(fam.null_for).any(1)
    meets_against = meets(fam.null_against[:, None])[:, 0]
    pad = fam.steps < 0
    return (np.where(pad, False, meets_for[fam.steps]).any(1),
            np.where(pad, True, meets_against[fam.steps]).all(1))


# --- the fast path: every test's e-value after every seed count ----------------------------------------------------

@functools.lru_cache(maxsize=None)
def e_table(taus: tuple[float, ...], most: int) -> np.ndarray:
    """eprocess.Quantile.e by tau, seeds n = 0..most, seeds above m and seeds below m (0..most each)
    [T, most + 1, most + 1, most + 1]: the mean of the bet up (share 1 - tau) and the bet down (share tau); counts
    past n are never read."""
    n, k = np.arange(most + 1)[:, None], np.arange(most + 1)[None, :]
    k = np.minimum(k, n)
    up, down = (np.stack([e_value(k, n, share(t)) for t in taus]) for share in (lambda t: 1 - t, lambda t: t))
    return (up[:, :, :, None] + down[:, :, None, :]) / 2


def band_infima(x: np.ndarray, tau: np.ndarray, bands: np.ndarray) -> np.ndarray:
    """inf of e(m) over closed bands after each seed count: x [B, S, N] per-seed values in seed order, tau [S], bands
    [S, nb, 2] (low, high; infinite ends allowed) -> [B, S, N, nb], entry n - 1 after n seeds.

    e(m) is least at the seeds' values (a value has no more seeds above, nor below, than the gaps beside it), so the
    infimum over a band is the least e at a seed's value inside it, or, where none lies inside, e on the gap that
    holds the band, the one with as many seeds below as lie below the band (with values inside, that gap adjoins the
    first of them and never lowers the least)."""
    most = x.shape[-1]
    taus, index = np.unique(tau, return_inverse=True)
    table, side = e_table(tuple(taus), most).ravel(), most + 1
    count = np.arange(1, most + 1)  # seeds n, along the last axis
    row = ((index[:, None] * side + count) * side * side).astype(np.int32)  # [S, n]: where (tau, n) starts
    below = np.cumsum(x[..., None, :] < x[..., :, None], axis=-1, dtype=np.int32)  # [B, S, i, n]: of the first n,
    above = np.cumsum(x[..., None, :] > x[..., :, None], axis=-1, dtype=np.int32)  # seeds below (above) seed i
    e = table[row[:, None] + above * side + below]  # [B, S, i, n]: e at seed i's value after n seeds
    seen = np.arange(most)[:, None] < count  # [i, n]: seed i among the first n
    out = np.empty(x.shape + bands.shape[1:2])
    for j in range(bands.shape[1]):
        low, high = bands[:, j, 0, None], bands[:, j, 1, None]  # [S, 1]
        inside = (x >= low) & (x <= high)  # [B, S, i]
        least = np.where(inside[..., None] & seen, e, np.inf).min(axis=-2)  # [B, S, n]
        under = np.cumsum(x < low, axis=-1, dtype=np.int32)  # [B, S, n]: of the first n, seeds below the band
        out[..., j] = np.minimum(least, table[row + (count - under) * side + under])  # or the gap's e
    return out


@dataclass(frozen=True)
class Paths:
    """Every claim's e-values after n = 1..N seeds [L, C, N] (entry n - 1): for and against it (verdicts.evidence),
    and the least threshold at which the interval it would print misses the truth, on each route: for (its weakest
    step for it) and against (its strongest step against it), over K as the thresholds are (a miss where the e-BH
    threshold is at most it)."""
    e_for: np.ndarray
    e_against: np.ndarray
    miss_for: np.ndarray
    miss_against: np.ndarray


def paths(fam: Family, x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> Paths:
    """Paths of ledgers x [L, S, N] whose steps' true quantiles fill [lo, hi] [S]. The interval at threshold c (the
    hull of {m: e(m) < c}) meets [lo, hi] exactly when some m <= hi and some m >= lo have e(m) < c: it misses from
    c = max(inf over (-inf, hi], inf over [lo, inf)) down."""
    inf = np.full_like(lo, np.inf)
    bands = np.concatenate([fam.null_for, fam.null_against[:, None], np.stack([-inf, hi], 1)[:, None],
                            np.stack([lo, inf], 1)[:, None]], axis=1)  # [S, 5, 2]
    chunk = max(1, CHUNK // len(fam.tau))
    infima = np.concatenate([band_infima(x[i:i + chunk], fam.tau, bands) for i in range(0, len(x), chunk)])
    pad = (fam.steps < 0)[:, :, None]  # [C, K, 1]
    e_for = np.where(pad, np.inf, infima[..., 0:2].min(-1)[:, fam.steps])  # [L, C, K, N]
    e_against = np.where(pad, -np.inf, infima[..., 2][:, fam.steps])
    miss = infima[..., 3:5].max(-1)[:, fam.steps]
    k = fam.k[:, None]
    weakest, strongest = e_for.argmin(2)[:, :, None], e_against.argmax(2)[:, :, None]  # verdicts.reading's steps
    return Paths(e_for.min(2) / k, e_against.max(2) / k, np.take_along_axis(miss, weakest, 2)[:, :, 0] / k,
                 np.take_along_axis(miss, strongest, 2)[:, :, 0] / k)


# --- the truths ------------------------------------------------------------------------------------------------

def null_truth(fam: Family, distribution: str, boundary: str, ledgers: int, most: int,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A global null: every step's quantile at the edge of its null (BOUNDARIES), values drawn from `distribution`
    shifted there and scaled by the step's unit -> (x [L, S, most], lo [S], hi [S])."""
    draw, ppf = DISTRIBUTIONS[distribution]
    if boundary == 'no effect':
        edge = fam.null_for[:, 0, 1]  # 0, or a size's low edge
    else:
        size = np.isfinite(fam.null_for[:, 1, 0])  # a size's second band starts at its high edge
        edge = np.where(size, fam.null_for[:, 1, 0], fam.null_against[:, 0])
    x = edge[:, None] + fam.unit[:, None] * (draw(rng, (ledgers, len(fam.tau), most)) - ppf(fam.tau)[:, None])
    return x, edge, edge


def pilot_truth(fam: Family, tables: list[np.ndarray], ledgers: int, most: int,
                rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each claim's published step quantities (tables: per claim [seeds, K]) resampled with replacement, a seed's
    steps together -> (x [L, S, most], lo [S], hi [S]): the truth is the records' own distribution."""
    x = np.empty((ledgers, len(fam.tau), most))
    lo, hi = np.empty(len(fam.tau)), np.empty(len(fam.tau))
    for table, row in zip(tables, fam.steps):
        s = row[row >= 0]
        x[:, s] = table[rng.integers(0, len(table), (ledgers, most))].transpose(0, 2, 1)
        lo[s], hi[s] = quantile_set(table, fam.tau[s])
    return x, lo, hi


def pilots(claims: tuple[dict, ...], inputs: pd.DataFrame) -> tuple[list[dict], list[np.ndarray]]:
    """The claims with published values for every input (two seeds at least, on the claim's scale) and their step
    quantities [seeds, K] (step_values)."""
    kept, tables = [], []
    for claim in claims:
        try:
            table = step_values(claim, claim_samples(inputs, claim))
        except ArithmeticError:  # the log of a non-positive value: no e-value, outside the ledger's family
            continue
        if len(table) >= 2:
            kept.append(claim)
            tables.append(table)
    return kept, tables


# --- the ledgers, look by look --------------------------------------------------------------------------------------

def allocation(policy: str, null_e: np.ndarray, false_null: np.ndarray, alive: np.ndarray) -> np.ndarray:
    """Which claims get the next seed [L, C]: null_e the largest e-value of a claim whose null is true (-inf: none),
    false_null [C] whether a claim has a false null, alive whether it can take another seed (POLICIES)."""
    if policy == 'uniform':
        return alive
    if policy == 'freeze winners':
        return alive & (null_e < 1)
    score = np.where(alive, null_e, -np.inf)
    chased = max(1, math.ceil(CHASED[policy] * score.shape[1]))
    top = np.argpartition(-score, chased - 1, axis=1)[:, :chased]
    give = np.zeros_like(alive)
    np.put_along_axis(give, top, np.take_along_axis(score, top, 1) > -np.inf, 1)
    return give | (alive & false_null) if policy.endswith('discoveries') else give


def play(p: Paths, null_for: np.ndarray, null_against: np.ndarray, policy: str,
         rule: str = RULES[0]) -> dict[str, np.ndarray]:
    """Ledgers of paths p under `policy`, decided by `rule` at every look: per ledger [L] its FDP at its first look
    with a false verdict and its FCP at its first look with a missed interval (else at its last), with its claims
    with a verdict and its mean seeds a claim at the first."""
    ledgers, claims, most = p.e_for.shape
    seeds = np.full((ledgers, claims), most if policy == 'fixed' else FIRST)
    out = {name: np.full(ledgers, np.nan) for name in ('fdp', 'fcp', 'verdicts', 'seeds')}
    open_fdr, open_fcr = np.ones(ledgers, bool), np.ones(ledgers, bool)
    false_null = ~(null_for & null_against)
    while (active := np.flatnonzero(open_fdr | open_fcr)).size:
        at = (active[:, None], np.arange(claims), seeds[active] - 1)
        e = np.concatenate([p.e_for[at], p.e_against[at]], axis=1)  # [A, 2C]
        if rule == RULES[0]:
            rejected, threshold = ebh(e, ALPHA)
        else:
            threshold = np.full(len(active), 1 / ALPHA)
            rejected = e >= 1 / ALPHA
        r_for, r_against = rejected[:, :claims], rejected[:, claims:]
        false = (r_for & null_for).sum(1) + (r_against & null_against).sum(1)
        verdicts = r_for | r_against
        printed = np.where(r_against, p.miss_against[at], p.miss_for[at])
        missed = (verdicts & (printed >= threshold[:, None])).sum(1)
        null_e = np.maximum(np.where(null_for, e[:, :claims], -np.inf), np.where(null_against, e[:, claims:], -np.inf))
        give = (np.zeros((len(active), claims), bool) if policy == 'fixed'
                else allocation(policy, null_e, false_null, seeds[active] < most))
        last = ~give.any(1)
        stop = open_fdr[active] & ((false > 0) | last)
        out['fdp'][active[stop]] = (false / np.maximum(rejected.sum(1), 1))[stop]
        out['verdicts'][active[stop]] = verdicts.sum(1)[stop]
        out['seeds'][active[stop]] = seeds[active[stop]].mean(1)
        open_fdr[active[stop]] = False
        stop = open_fcr[active] & ((missed > 0) | last)
        out['fcp'][active[stop]] = (missed / np.maximum(verdicts.sum(1), 1))[stop]
        open_fcr[active[stop]] = False
        seeds[active] += give
    return out


def summary(scenario: str, policy: str, rule: str, out: dict[str, np.ndarray]) -> dict:
    """One row of the table: the means of the ledgers' FDP and FCP with their Monte Carlo SEs, verdicts and seeds."""
    def se(v):
        return float(np.std(v, ddof=1) / math.sqrt(len(v)))
    return dict(scenario=scenario, policy=policy, rule=rule, ledgers=len(out['fdp']), fdr=float(out['fdp'].mean()),
                fdr_se=se(out['fdp']), fcr=float(out['fcp'].mean()), fcr_se=se(out['fcp']),
                verdicts=float(out['verdicts'].mean()), seeds=float(out['seeds'].mean()))


def truths(substrates: tuple[str, ...] | None = None) -> list[tuple[str, str, str]]:
    """The table's truths in order: ('null', distribution, boundary) for each, then ('pilot', substrate, its
    claim_inputs.csv) for each substrate given (default: every published design's)."""
    designs = {substrate_of(c): Path(c['results_dir']) / 'tables' / 'claim_inputs.csv'
               for c in map(load_design, PUBLISHED_DESIGNS)}
    unknown = [name for name in substrates or () if name not in designs]
    if unknown:
        raise ValueError(f'substrate {unknown[0]!r}: expected one of {", ".join(designs)}')
    return ([('null', d, b) for b in BOUNDARIES for d in DISTRIBUTIONS] +
            [('pilot', name, str(designs[name])) for name in substrates or designs])


def truth_rows(truth: tuple[str, str, str], ledgers: int, most: int, seed: int) -> list[dict]:
    """One truth's rows: every policy under the ledger's rule and the uniform looks under the invalid rule, its draws
    seeded by (seed, a checksum of the truth's kind and name), whatever else the table holds."""
    kind, name, detail = truth
    rng = np.random.default_rng([seed, zlib.crc32(f'{kind}: {name}'.encode())])
    entries = ledger_claims()
    if kind == 'null':
        fam, scenario = family(entries), f'null: {name}, at {detail}'
        x, lo, hi = null_truth(fam, name, detail, ledgers, most, rng)
    else:
        kept, tables = pilots(entries, pd.read_csv(detail))
        fam, scenario = family(kept), f'pilot: {name} ({len(kept)} claims)'
        x, lo, hi = pilot_truth(fam, tables, ledgers, most, rng)
    p, (null_for, null_against) = paths(fam, x, lo, hi), nulls(fam, lo, hi)
    rows = [summary(scenario, policy, RULES[0], play(p, null_for, null_against, policy)) for policy in POLICIES]
    return rows + [summary(scenario, 'uniform', RULES[1], play(p, null_for, null_against, 'uniform', RULES[1]))]


def simulate(ledgers: int = LEDGERS, most: int = MOST, seed: int = 0, substrates: tuple[str, ...] | None = None,
             jobs: int = 1) -> pd.DataFrame:
    """The table (COLUMNS): every truth of truths(substrates), its rows computed in `jobs` processes."""
    every = truths(substrates)
    if jobs == 1:
        found = [truth_rows(t, ledgers, most, seed) for t in every]
    else:
        with ProcessPoolExecutor(jobs) as pool:
            found = list(pool.map(truth_rows, every, *([v] * len(every) for v in (ledgers, most, seed))))
    return pd.DataFrame([row for rows in found for row in rows], columns=COLUMNS)


def check(table: pd.DataFrame, alpha: float = ALPHA) -> tuple[bool, str]:
    """Whether every row under the ledger's rule keeps FDR and FCR at most alpha (mean + 2 SE), and the worst rows."""
    valid, lines, ok = table[table['rule'] == RULES[0]], [], True
    for rate in ('fdr', 'fcr'):
        bound = valid[rate] + 2 * valid[f'{rate}_se']
        worst = valid.loc[bound.idxmax()]
        ok &= bool(bound.max() <= alpha)
        lines.append(f'worst {rate.upper()}: {number(worst[rate])} + 2 x {number(worst[f"{rate}_se"])} = '
                     f'{number(bound.max())} ({worst["scenario"]}, {worst["policy"]})')
    return ok, '; '.join(lines) + f': {"at most" if ok else "ABOVE"} {number(alpha)}'


def main(argv: list[str] | None = None) -> int:
    """The CLI (the module's header): prints the table and the check, writes both to --out; 1 where the check fails."""
    parser = argparse.ArgumentParser(prog='python -m analysis.ledger.simulation', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--ledgers', type=int, default=LEDGERS, help='ledgers a row (default: %(default)s)')
    parser.add_argument('--max-seeds', type=int, default=MOST, help='seeds a claim at most (default: %(default)s)')
    parser.add_argument('--seed', type=int, default=0, help='the draws\' seed (default: %(default)s)')
    parser.add_argument('--substrates', nargs='+', help='pilots of these substrates (default: every published one)')
    parser.add_argument('--jobs', type=int, default=2, help='processes, a truth each (default: %(default)s)')
    parser.add_argument('--out', help='write the table and the check (Markdown) here too')
    args = parser.parse_args(argv)
    start = time.perf_counter()
    table = simulate(args.ledgers, args.max_seeds, args.seed, tuple(args.substrates or ()) or None, args.jobs)
    ok, verdict = check(table)
    text = (to_markdown(table) + f'\n{verdict}. alpha {number(ALPHA)}, {args.ledgers} ledgers a row, {FIRST} to '
            f'{args.max_seeds} seeds a claim, seed {args.seed}, {args.jobs} processes: '
            f'{time.perf_counter() - start:.0f} s.\n')
    print(text, end='')
    if args.out:
        write_text(args.out, text)
    return 0 if ok else 1

if __name__ == '__main__':
    raise SystemExit(main())
