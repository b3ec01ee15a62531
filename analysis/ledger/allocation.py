"""Where a design's next runs go: after a look at the ledger, the next batch {source: seeds to add} and why the policy
stops.

A plan and a budget, not a promise: the ledger (claims.ledger) is decided by e-BH over e-processes, valid at any look
and whatever seeds each source holds, so no rule here moves a verdict's guarantee. The rule, its batch and the budget
were chosen by the criterion registered in results/measurements.md ("The allocation policy: the registered
criterion") on simulated ledgers (analysis.ledger.budgets).

A claim *asks* for seeds when it is open (statistical, inconclusive) and projected to an 80% chance of a verdict within
max seeds (n_80 <= max), or has too few seeds to be projected (fewer than its min_seeds). Rules (Policy.rule):
    every source     every source feeding a claim that asks gets `step` more seeds (the stage rule of a staged design)
    greedy           the claims that ask, cheapest verdict first: C, the job-seconds of the runs that bring every
                     source a claim reads to its target (n_80, at least one seed more, at most max), given the runs
                     already in the batch, is recomputed after each pick (the most claims decided per job-second,
                     0.8 / C), until the batch holds `batch_s` job-seconds
    greedy in steps  the same order, each pick raising a claim's sources by at most `step` seeds
A source holds seeds 0 to k - 1: `held` and a batch count seeds per source. Stops (Batch.stop, why no batch follows):
'decided' (no open claim), 'beyond max' (no open claim asks, or its sources are at its target), 'budget spent' (this
batch, cut to the runs that fit in the rule's order, is the last).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from workflow.design import expand_design
from workflow.plan import POLICIES
from workflow.state import JobCosts, job_costs

from ..stats.inference import DEFAULTS
from .chapter import Context
from .claims import feeders, inconclusive

RULES = tuple(POLICIES)  # a staged design's `seeds: {policy}` (workflow/plan.py)
STOPS = ('decided', 'beyond max', 'budget spent')
MAX_SEEDS = 40


@dataclass(frozen=True)
class Prices:
    """A cost table as the policy prices runs: job-seconds of one run of each source, of one warmed critic, and the
    sources each of whose seeds needs its seed's warmed critic (PPO cells: one critic a seed serves them all)."""
    runs: Mapping[str, float]
    critic_s: float = 0.0
    critical: frozenset[str] = frozenset()

    @classmethod
    def of(cls, design: dict) -> Prices:
        """A design's prices: its cost table (`<results_dir>/costs.csv`), every source it prices, and its PPO cells."""
        costs = job_costs(design['results_dir'])
        if costs is None:
            raise ValueError(f"{design['results_dir']}: no cost table to price runs by (python -m workflow.costs)")
        ppo = {name for name, cell in expand_design(design).items() if cell.values['algorithm'] == 'ppo'}
        return cls.table(costs, costs.seconds, ppo)

    @classmethod
    def table(cls, costs: JobCosts, sources: Iterable[str], ppo: Iterable[str]) -> Prices:
        """These sources' prices by a cost table (each priced: workflow.plan.check_budget); ppo: the PPO cells."""
        return cls({s: costs.seconds[s] for s in sources}, costs.critic_s, frozenset(ppo))

    def cost(self, held: Mapping[str, int], added: Mapping[str, int]) -> float:
        """Job-seconds of the runs `added` on top of `held` (seeds per source): each run its source's price, and a
        warmed critic for each seed index a PPO cell reaches first."""
        before = max((held.get(s, 0) for s in self.critical), default=0)
        after = max((held.get(s, 0) + added.get(s, 0) for s in self.critical), default=0)
        return sum(self.runs[s] * k for s, k in added.items()) + self.critic_s * (after - before)

    def fixed(self, seeds: int) -> float:
        """Job-seconds of a fixed design: seeds 0 to seeds - 1 of every source, with their critics."""
        return self.cost({}, {s: seeds for s in self.runs})


@dataclass(frozen=True)
class Policy:
    """A rule (RULES) with its step (seeds a source gets a batch; greedy in steps: at most a pick), its batch's
    job-seconds (greedy) and the most seeds a source holds."""
    rule: str
    step: int = 5
    batch_s: float = math.inf
    max_seeds: int = MAX_SEEDS

    def __post_init__(self):
        if self.rule not in RULES:
            raise ValueError(f'rule {self.rule!r}: expected one of {", ".join(RULES)}')


@dataclass(frozen=True)
class Ask:
    """An open claim as the policy reads it: its id, the seeds it reads (n), its projection (n_80: NaN beyond 1000
    seeds or unprojected), the fewest seeds a projection needs (least) and the sources it reads."""
    id: str
    n: int
    n_80: float
    least: int
    sources: tuple[str, ...]

    def target(self, most: int) -> int | None:
        """Seeds that bring it to its projection (least where unprojected; at least n + 1, at most most); None where
        it asks for none (projected beyond most)."""
        if self.n < self.least:
            want = self.least
        elif self.n_80 <= most:  # NaN: beyond
            want = max(int(self.n_80), self.n + 1)
        else:
            return None
        return min(want, most)


@dataclass(frozen=True)
class Batch:
    """The next batch: seeds to add per source (in the rule's order), its job-seconds, the claims it buys seeds for,
    and why no batch follows it ('' where the policy looks again after it; else one of STOPS)."""
    seeds: dict[str, int]
    cost_s: float
    buying: tuple[str, ...]
    stop: str = ''


def asks(frame: pd.DataFrame, claims: list[dict], sources: Mapping[str, Iterable[str]]) -> list[Ask]:
    """The open claims of a ledger frame as the policy reads them; sources: claim id -> the sources it reads
    (claim_sources)."""
    least = {c['id']: c.get('min_seeds', DEFAULTS['min_seeds']) for c in claims}
    rows = frame[inconclusive(frame)]
    return [Ask(i, int(n), float(n_80), least[i], tuple(sources[i]))
            for i, n, n_80 in zip(rows['id'], rows['n'], rows['n_80'].astype(float))]


def claim_sources(ctx: Context, claims: list[dict]) -> dict[str, list[str]]:
    """Claim id -> the run sources its inputs read (claims.feeders)."""
    return {c['id']: feeders(ctx, [c]) for c in claims}


def asking(claims: list[Ask], held: Mapping[str, int], most: int) -> list[Ask]:
    """The claims that ask for seeds: a target within most that some source they read has not reached."""
    return [c for c in claims if (t := c.target(most)) is not None and any(held.get(s, 0) < t for s in c.sources)]


def next_batch(claims: list[Ask], held: Mapping[str, int], prices: Prices, policy: Policy,
               left_s: float = math.inf) -> Batch:
    """The batch after a look: claims the open ones (asks), held the seeds each source holds, left_s the budget's
    job-seconds left."""
    if not claims:
        return Batch({}, 0.0, (), 'decided')
    wanting = asking(claims, held, policy.max_seeds)
    if not wanting:
        return Batch({}, 0.0, (), 'beyond max')
    order = (every_source(wanting, held, prices, policy) if policy.rule == 'every source'
             else greedy(wanting, held, prices, policy))
    return fit(order, held, prices, left_s)


def every_source(claims: list[Ask], held: Mapping[str, int], prices: Prices, policy: Policy) -> Batch:
    """`step` more seeds (at most max) to every source the claims read, cheapest first."""
    names = sorted({s for c in claims for s in c.sources if held.get(s, 0) < policy.max_seeds},
                   key=lambda s: (prices.runs[s], s))
    seeds = {s: min(policy.step, policy.max_seeds - held.get(s, 0)) for s in names}
    return Batch(seeds, prices.cost(held, seeds), tuple(c.id for c in claims))


def greedy(claims: list[Ask], held: Mapping[str, int], prices: Prices, policy: Policy) -> Batch:
    """The cheapest verdict first (the module's header), each claim picked once, until the batch holds batch_s."""
    names = sorted({s for c in claims for s in c.sources})
    reads = np.array([[s in c.sources for s in names] for c in claims])  # [C, S]
    price = np.array([prices.runs[s] for s in names])  # [S]
    critical = np.array([s in prices.critical for s in names])  # [S]
    target = np.array([c.target(policy.max_seeds) for c in claims])  # [C]
    planned = np.array([held.get(s, 0) for s in names])  # [S]
    level = max((held.get(s, 0) for s in prices.critical), default=0)  # critics held
    left, picks, spent = np.ones(len(claims), bool), [], 0.0
    while spent < policy.batch_s:
        need = np.where(reads, np.maximum(target[:, None] - planned, 0), 0)  # [C, S] seeds to each one's target
        cost = need @ price + prices.critic_s * np.maximum(np.where(critical, planned + need, 0).max(1) - level, 0)
        left &= need.any(1)
        if not left.any():
            break
        pick = int(np.argmin(np.where(left, cost, np.inf)))  # the cheapest verdict, the first of equals
        take = need[pick]  # [S]
        if policy.rule == 'greedy in steps':
            take = np.minimum(take, np.maximum(planned[reads[pick]].min() + policy.step - planned, 0))
        reached = max(level, int(np.where(critical, planned + take, 0).max()))
        spent += float(take @ price) + prices.critic_s * (reached - level)
        planned, level, left[pick] = planned + take, reached, False
        picks.append(pick)
    more = dict(zip(names, (planned - [held.get(s, 0) for s in names]).tolist()))
    order = dict.fromkeys(names[j] for p in picks for j in np.flatnonzero(reads[p]))  # as picked
    seeds = {s: more[s] for s in order if more[s] > 0}
    return Batch(seeds, prices.cost(held, seeds), tuple(claims[p].id for p in picks))


def fit(batch: Batch, held: Mapping[str, int], prices: Prices, left_s: float) -> Batch:
    """The batch within left_s job-seconds: whole where it fits; else its runs taken in its order, each source's as
    many seeds as fit, and marked the last ('budget spent')."""
    if batch.cost_s <= left_s:
        return batch
    kept, spent = {}, 0.0
    for source, seeds in batch.seeds.items():
        for k in range(seeds, 0, -1):
            cost = prices.cost({**held, **{s: held.get(s, 0) + v for s, v in kept.items()}}, {source: k})
            if spent + cost <= left_s:
                kept[source], spent = k, spent + cost
                break
    return Batch(kept, prices.cost(held, kept), batch.buying, 'budget spent')
