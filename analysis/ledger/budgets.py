"""What each budget buys under each allocation policy, on simulated ledgers: the criterion registered in
results/measurements.md ("The allocation policy: the registered criterion").

Truth (per substrate): the simulation's pilot truth (simulation.pilot_truth: each claim's published step quantities
resampled); each claim reads the run sources it reads in the substrate's records (allocation.claim_sources), priced by
its cost table (allocation.Prices). A claim holds the seeds all its sources hold (the fewest). At each look: the
simulation's e-values at each claim's seeds, e-BH at alpha over all of them, and each open claim's projection (n_80,
verdicts.projection) at that look's threshold; then the policy's next batch (allocation.next_batch). Each ledger runs
once to the largest budget; a smaller budget's run is its prefix up to the first batch that would pass it, that batch
cut to fit (allocation.fit) and the last.

Candidates (CANDIDATES): 'fixed' (every source 10 times the budget's multiple seeds, one look: the reference), today's
stage rule at steps 5 and 10, the greedy rule with batches of 0.25x and 0.5x the fixed design's job-seconds, and the
greedy rule in steps of 5; every adaptive one from seeds 0 to INITIAL - 1 of every source, at most MAX seeds a source.

`python -m analysis.ledger.budgets [--ledgers N] [--seed S] [--substrates ...] [--jobs N] [--quick] [--out FILE]`
prints per substrate, candidate and budget the mean decided claims (decided_se: its Monte Carlo SE), the job-seconds
spent, job-seconds per decided claim and the share of ledgers in which the policy stops by itself (every claim
decided, or none asking for seeds) within the budget; then the winner by the registered rule and the budget it
chooses, and the budget at which the winner stops by itself (the second registered rule: results/measurements.md,
"The budget that lets the policy stop").
"""
from __future__ import annotations

import argparse
import math
import time
import zlib
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd

from agentrl.files import write_text
from workflow.design import PUBLISHED_DESIGNS, load_design, substrate_of

from ..records.records import load_records
from ..stats.eprocess import Quantile, ebh
from ..text import number, to_markdown
from .allocation import Ask, Batch, Policy, Prices, claim_sources, fit, next_batch
from .chapter import Context
from .simulation import ALPHA, FIRST, Paths, family, ledger_claims, paths, pilot_truth, pilots
from .verdicts import Bet, projection

INITIAL, MAX, LEDGERS, FIXED_SEEDS, POWER = 5, 40, 200, 10, 0.8
BUDGETS = (1.0, 1.5, 2.0, 3.0)  # multiples of the fixed 10-seed design's job-seconds
CHOOSING = 2.0  # the budget the winner is chosen at
CANDIDATES = {  # name -> (rule, step, batch as a multiple of the fixed design's job-seconds); 'fixed': no rule
    'fixed': None,
    'every source, step 5': ('every source', 5, math.inf),
    'every source, step 10': ('every source', 10, math.inf),
    'greedy, batch 0.25x': ('greedy', MAX, 0.25),
    'greedy, batch 0.5x': ('greedy', MAX, 0.5),
    'greedy in steps of 5, batch 0.25x': ('greedy in steps', 5, 0.25),
}
STOPPING = 0.95  # the share of ledgers, on every substrate, that must stop by the policy within the budget
COLUMNS = ['substrate', 'candidate', 'budget', 'ledgers', 'decided', 'decided_se', 'job_s', 'job_s_per_decided',
           'stopped', 'claims']


class Ledgers:
    """A substrate's simulated ledgers: the claims' paths (simulation.Paths [L, C, N]) and per-seed step values
    x [L, S, N], which claim reads which source (reads [C, S]), the prices, and each claim's bets' nulls."""

    def __init__(self, substrate: str, design: dict, ledgers: int, seed: int):
        results = design['results_dir']
        claims, tables = pilots(ledger_claims(), pd.read_csv(f'{results}/tables/claim_inputs.csv'))
        ctx = Context.build(load_records(f'{results}/records'))
        sources = claim_sources(ctx, claims)
        self.prices = Prices.of(design)
        self.names = sorted(self.prices.runs)
        self.ids = [c['id'] for c in claims]
        self.sources = [tuple(sources[i]) for i in self.ids]
        self.reads = np.array([[s in c for s in self.names] for c in self.sources])  # [C, S]
        self.fam = family(claims)
        rng = np.random.default_rng([seed, zlib.crc32(f'budgets: {substrate}'.encode())])
        self.x, lo, hi = pilot_truth(self.fam, tables, ledgers, MAX, rng)
        self.paths: Paths = paths(self.fam, self.x, lo, hi)

    def reading(self, held: np.ndarray) -> np.ndarray:
        """The seeds each claim reads [C], each source at held [S] seeds: the fewest its sources hold."""
        return np.where(self.reads, held, MAX + 1).min(1)

    def look(self, ledger: int, held: np.ndarray) -> tuple[np.ndarray, float]:
        """Which claims e-BH decides with each source at held [S] seeds [C], and the threshold."""
        n = self.reading(held)
        at = (ledger, np.arange(len(n)), n - 1)
        rejected, threshold = ebh(np.concatenate([self.paths.e_for[at], self.paths.e_against[at]]), ALPHA)
        return rejected[:len(n)] | rejected[len(n):], threshold

    def asks(self, ledger: int, held: np.ndarray, decided: np.ndarray, threshold: float) -> list[Ask]:
        """The open claims with their projections at this threshold (verdicts.projection on their bets)."""
        n = self.reading(held)
        return [Ask(self.ids[c], int(n[c]), projection(dict(bets=self.bets(ledger, c, n[c]), n=n[c]), threshold,
                                                       POWER).seeds, FIRST, self.sources[c])
                for c in np.flatnonzero(~decided)]

    def bets(self, ledger: int, claim: int, n: int) -> list[Bet]:
        """A claim's bets on its first n seeds, with the nulls its tests bet against (simulation.Family's)."""
        fam, out = self.fam, []
        for s in fam.steps[claim][fam.steps[claim] >= 0]:
            size = math.isfinite(fam.null_for[s, 1, 0])
            null_for = (fam.null_for[s, 0, 1], fam.null_for[s, 1, 0], True) if size else (*fam.null_for[s, 0], False)
            out.append(Bet(Quantile(self.x[ledger, s, :n], fam.tau[s]), null_for,
                           (fam.null_against[s, 0], fam.null_against[s, 1], False)))
        return out


def held_array(ledgers: Ledgers, held: dict[str, int]) -> np.ndarray:
    """Seeds per source [S], in ledgers.names' order."""
    return np.array([held[s] for s in ledgers.names])


def play(ledgers: Ledgers, ledger: int, policy: Policy,
         budgets: list[float]) -> dict[float, tuple[int, float, bool]]:
    """One ledger under an adaptive policy: per budget (job-seconds) the claims decided and the job-seconds spent when
    the policy stops within it, and whether it stopped by itself (allocation.Batch.stop) rather than by the budget."""
    held = {s: INITIAL for s in ledgers.names}
    spent, out = ledgers.prices.fixed(INITIAL), {}
    while len(out) < len(budgets):
        decided, threshold = ledgers.look(ledger, held_array(ledgers, held))
        batch = next_batch(ledgers.asks(ledger, held_array(ledgers, held), decided, threshold), held, ledgers.prices,
                           policy)
        for budget in (b for b in budgets if b not in out):
            if batch.stop:
                out[budget] = (int(decided.sum()), spent, True)
            elif spent + batch.cost_s > budget:
                cut = fit(batch, held, ledgers.prices, budget - spent)
                out[budget] = (int(ledgers.look(ledger, held_array(ledgers, grown(held, cut)))[0].sum()),
                               spent + cut.cost_s, False)
        held, spent = grown(held, batch), spent + batch.cost_s
    return out


def grown(held: dict[str, int], batch: Batch) -> dict[str, int]:
    """Seeds per source after a batch."""
    return {s: k + batch.seeds.get(s, 0) for s, k in held.items()}


def rows(substrate: str, ledgers: int, seed: int) -> list[dict]:
    """One substrate's rows: every candidate at every budget (COLUMNS)."""
    design = next(d for d in map(load_design, PUBLISHED_DESIGNS) if substrate_of(d) == substrate)
    sim = Ledgers(substrate, design, ledgers, seed)
    unit = sim.prices.fixed(FIXED_SEEDS)
    budgets = [b * unit for b in BUDGETS]
    out = []
    for name, spec in CANDIDATES.items():
        if spec is None:
            found = {b: [(int(sim.look(i, np.full(len(sim.names), seeds))[0].sum()), sim.prices.fixed(seeds), False)
                         for i in range(ledgers)]
                     for b, seeds in zip(budgets, (min(round(FIXED_SEEDS * m), MAX) for m in BUDGETS))}
        else:
            rule, step, batch = spec
            policy = Policy(rule, step, batch * unit, MAX)
            played = [play(sim, i, policy, budgets) for i in range(ledgers)]
            found = {b: [p[b] for p in played] for b in budgets}
        for multiple, b in zip(BUDGETS, budgets):
            decided, spent, stopped = (np.array(v, dtype=float) for v in zip(*found[b]))
            out.append(dict(substrate=substrate, candidate=name, budget=multiple, ledgers=ledgers,
                            decided=decided.mean(), decided_se=decided.std(ddof=1) / math.sqrt(ledgers),
                            job_s=spent.mean(), job_s_per_decided=spent.mean() / decided.mean(),
                            stopped=stopped.mean(), claims=len(sim.ids)))
    return out


def simulate(ledgers: int = LEDGERS, seed: int = 0, substrates: tuple[str, ...] | None = None,
             jobs: int = 1) -> pd.DataFrame:
    """The table (COLUMNS) for each substrate (default: every published design's), a substrate a process."""
    every = list(substrates or [substrate_of(load_design(d)) for d in PUBLISHED_DESIGNS])
    with ProcessPoolExecutor(jobs) as pool:
        found = list(pool.map(rows, every, [ledgers] * len(every), [seed] * len(every)))
    return pd.DataFrame([row for part in found for row in part], columns=COLUMNS)


def winner(table: pd.DataFrame) -> tuple[str, float, str]:
    """The registered rule: the adaptive candidate with the most decided claims at CHOOSING, summed over substrates;
    within 1 of the most, the fewest job-seconds per decided claim; then the smallest budget at which it decides, on
    every substrate, at least 95% of what it decides at the largest -> (candidate, budget, why)."""
    adaptive = table[table['candidate'] != 'fixed']
    at = adaptive[adaptive['budget'] == CHOOSING].groupby('candidate')[['decided', 'job_s']].sum()
    tied = at[at['decided'] >= at['decided'].max() - 1]
    chosen = (tied['job_s'] / tied['decided']).idxmin()
    mine = adaptive[adaptive['candidate'] == chosen].pivot(index='substrate', columns='budget', values='decided')
    enough = [b for b in BUDGETS if (mine[b] >= 0.95 * mine[max(BUDGETS)]).all()]
    why = (f'{number(at.loc[chosen, "decided"])} claims decided at {number(CHOOSING)}x over the substrates '
           f'(most: {number(at["decided"].max())}; tied within 1: {", ".join(tied.index)}); at {number(enough[0])}x '
           f'it decides at least 95% of what it decides at {number(max(BUDGETS))}x on every substrate')
    return chosen, enough[0], why


def stopping_budget(table: pd.DataFrame, candidate: str, least: float) -> float | None:
    """The second registered rule: the smallest budget, at least `least` (the first rule's), at which the candidate
    stops by itself in at least STOPPING of the ledgers on every substrate; None where none does (no budget)."""
    shares = table[table['candidate'] == candidate].pivot(index='substrate', columns='budget', values='stopped')
    return next((b for b in BUDGETS if b >= least and (shares[b] >= STOPPING).all()), None)


def main(argv: list[str] | None = None) -> int:
    """The CLI (the module's header)."""
    parser = argparse.ArgumentParser(prog='python -m analysis.ledger.budgets', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--ledgers', type=int, default=LEDGERS, help='ledgers a substrate (default: %(default)s)')
    parser.add_argument('--seed', type=int, default=0, help="the draws' seed (default: %(default)s)")
    parser.add_argument('--substrates', nargs='+', help='these substrates (default: every published one)')
    parser.add_argument('--jobs', type=int, default=2, help='processes, a substrate each (default: %(default)s)')
    parser.add_argument('--quick', action='store_true', help='10 ledgers a substrate: a smoke test, not the criterion')
    parser.add_argument('--out', help='write the table and the winner (Markdown) here too')
    args = parser.parse_args(argv)
    start, ledgers = time.perf_counter(), 10 if args.quick else args.ledgers
    table = simulate(ledgers, args.seed, tuple(args.substrates or ()) or None, args.jobs)
    chosen, budget, why = winner(table)
    stopping = stopping_budget(table, chosen, budget)
    stops = (f'{number(stopping)}x' if stopping is not None else 'none of them: no budget')
    text = (to_markdown(table) + f'\nwinner: {chosen}, budget {number(budget)}x ({why}). {ledgers} ledgers a '
            f'substrate, seed {args.seed}, {args.jobs} processes: {time.perf_counter() - start:.0f} s.\n'
            f'stops by itself in at least {STOPPING:.0%} of the ledgers on every substrate at: {stops}.\n')
    print(text, end='')
    if args.out:
        write_text(args.out, text)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
