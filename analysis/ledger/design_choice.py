"""The third criterion's choice of a seed design: the candidates simulated on the ledger's own family of claims, many
ledgers at once, under the global null and each substrate's pilot, and priced by the substrates' cost tables.

`python -m analysis.ledger.simulation --family` builds the family and the pilots from the published designs and
their records, prints design_table's rows and writes them to results/across/designs.csv.
"""
from __future__ import annotations

import functools
import math
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from workflow.design import baseline_name, expand_design, recorded
from workflow.plan import SeedPlan, seed_plan
from workflow.state import JobCosts

from ..stats.inference import DEFAULTS
from .chapter import Context
from .claims import FINDING, group
from .sequential import feeders, look_levels
from .verdicts import Count

# --- the third criterion: one design for the three substrates, priced on the family (registered 2026-12-06 06:38 UTC,
# issue 60, before its table was computed and before any version-5 run was looked at) ---------------------------
# Candidates: fixed designs at 6, 8, 10, 12, 16 or 20 seeds; sequential designs with initial 6, 8, 10 or 12 seeds,
# step 2, 4 or 6, max 20, 30 or 40, Hwang-Shih-DeCani gamma -4, -2 or 1, futility 0.1 (the threshold of the first two
# criteria, not searched).
# The family: the ledger's statistical claims as claims.yaml states them (checks and findings apart), each with its two
# one-sided p-values (for it, against it) in every look's Benjamini-Hochberg correction, and each reading the sources
# (cells, experiments) its inputs name in the default design.
# Per substrate a pilot: a claim's per-seed values are N(effect, 1), its effect the probit of the share of its seeds on
# its side in that substrate's version-4 records (pilot_mixture: the runs' values, never their verdicts; version 5
# makes other bits, so these are not the data the design will decide on), smallest effect 0.25; a claim those records
# cannot price (the literature's, whose cells they lack) draws its effect from the same pilot's other claims, anew in
# each simulated ledger.
# Cost: per source, the seeds it ran (the first look's, then the most any of its claims asked for) times its CPU
# seconds a job in that substrate's cost table (python -m agentrl.numerics.bench --costs), plus the warmed critic's
# job per seed; the looks' own seconds apart (a few seconds each).
# Eligible: (1) a simulated false discovery rate not above alpha beyond Monte Carlo error (mean - 2 SE <= alpha) under
# the global null (every claim at 0) and under each substrate's pilot; (2) every look can decide a quarter of the
# family at once: a quarter of its m claims with every seed on their side (p = 2^-n_k each), in a correction of 2m
# p-values at the look's level a_k with no verdict before it, are decided: 2^-n_k <= a_k / 8.
# Chosen: the eligible design with the fewest expected job-seconds per decided claim over the three substrates
# (their expected job-seconds summed over their expected decided claims summed), from 400 simulated ledgers per
# substrate and scenario, seed 0.
CANDIDATES = [list(range(n)) for n in (6, 8, 10, 12, 16, 20)] + [
    dict(initial=initial, step=step, max=most, gamma=gamma, futility=0.1)
    for initial in (6, 8, 10, 12) for step in (2, 4, 6) for most in (20, 30, 40) for gamma in (-4.0, -2.0, 1.0)]
ALPHA = DEFAULTS['alpha']
QUARTER = 8  # m / 4 p-values of 2^-n_k among 2m pass BH at a_k when 2^-n_k <= (m / 4) / (2m) a_k = a_k / 8


@dataclass(frozen=True)
class Family:
    """The ledger's statistical claims and the sources they read: reads [claims, sources], ppo [sources] (a PPO cell,
    whose seeds need the warmed critic)."""
    ids: tuple[str, ...]
    sources: tuple[str, ...]
    reads: np.ndarray
    ppo: np.ndarray


def family(claims: dict, design: dict, ctx: Context) -> Family:
    """The statistical claims of `claims` (load_claims; checks and findings apart) and the sources each reads in
    `design`: sequential.feeders on its cells (ctx's records name the experiments by the tables they record); the
    sources are every cell and experiment of the design. A claim that reads none of them is an error naming it."""
    cells = expand_design(design)
    named = Context(ctx.values, {name: recorded(cell.values) for name, cell in cells.items()}, baseline_name(design),
                    ctx.chapter)
    statistical = [c for c in claims['claims'] if group(c) not in ('check', FINDING)]
    sources = (*cells, *design['experiments'])
    reads = np.array([np.isin(sources, feeders(named, [claim])) for claim in statistical])
    if not reads.any(1).all():
        raise ValueError('claims reading no cell or experiment of the design: '
                         + ', '.join(c['id'] for c, r in zip(statistical, reads) if not r.any()))
    return Family(tuple(c['id'] for c in statistical), sources, reads,
                  np.array([name in cells and cells[name].values['algorithm'] == 'ppo' for name in sources]))


@dataclass(frozen=True)
class Scenario:
    """Ledgers of the family: claim i's per-seed values N(effects[i], 1), a NaN effect (a claim its pilot cannot
    price) drawn anew in each ledger from the others'; `smallest`: the smallest effect of interest."""
    name: str
    effects: tuple[float, ...]
    smallest: float


def draw(scenario: Scenario, ledgers: int, seeds: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Simulated ledgers: effects [ledgers, claims] and per-seed values [ledgers, claims, seeds]."""
    rng = np.random.default_rng(seed)
    effects = np.asarray(scenario.effects, dtype=float)
    unpriced = np.isnan(effects)
    effects = np.tile(effects, (ledgers, 1))
    effects[:, unpriced] = rng.choice(effects[0, ~unpriced], (ledgers, unpriced.sum()))
    return effects, effects[:, :, None] + rng.standard_normal((*effects.shape, seeds))


def false_verdicts(verdict: np.ndarray, effects, smallest: float) -> np.ndarray:
    """Whether each verdict (1 for, -1 against, 0 none; effects broadcast) is false: for a claim without an effect, or
    against one with an effect at least the smallest effect of interest."""
    effects = np.asarray(effects)
    return ((verdict == 1) & (effects <= 0)) | ((verdict == -1) & (effects >= smallest))


def false_share(false: np.ndarray, verdict: np.ndarray) -> np.ndarray:
    """A ledger's false discovery proportion (over the last axis): its false verdicts over its verdicts (0 without)."""
    return false.sum(-1) / np.maximum(1, (verdict != 0).sum(-1))


def bh_cutoffs(p: np.ndarray, level: float) -> np.ndarray:
    """p [ledgers, M] -> each row's Benjamini-Hochberg cut-off at level, as inference.bh_threshold computes it: k level
    / M for the largest k with p_(k) <= (k / M) level (0 when none)."""
    m = p.shape[1]
    passing = np.sort(p, axis=1) <= np.arange(1, m + 1) / float(m) * level
    return np.where(passing.any(1), m - np.argmax(passing[:, ::-1], axis=1), 0) * level / m


def run_ledgers(values: np.ndarray, smallest: float, looks: list[int], levels: list[float],
                futility: float) -> tuple[np.ndarray, np.ndarray]:
    """simulation.run_ledger on many ledgers at once: values [ledgers, claims, seeds] -> each claim's decision and
    seeds used [ledgers, claims]; its exact p-values and chances of a verdict looked up per count (Count's)."""
    above = np.cumsum(values[:, :, :looks[-1]] > 0, axis=2)  # [L, m, n_K]: seeds for the claim among the first n
    below = np.cumsum(values[:, :, :looks[-1]] < smallest, axis=2)
    verdict, seeds = np.zeros(values.shape[:2], int), np.full(values.shape[:2], looks[-1])
    open_ = np.ones(values.shape[:2], bool)
    for k, (n, level) in enumerate(zip(looks, levels)):
        support, against = above[:, :, n - 1], below[:, :, n - 1]
        p_of = np.array([Count(c, n).p for c in range(n + 1)])
        p, p_against = p_of[support], p_of[against]
        # every claim in the family: an open one's two p-values, a decided one's 0 and 1, a futile one's 1 and 1
        cutoff = bh_cutoffs(np.concatenate([np.where(open_, p, verdict == 0), np.where(open_, p_against, 1.0)], 1),
                            level)[:, None]
        decided = np.where(p <= cutoff, 1, np.where(p_against <= cutoff, -1, 0))
        verdict, seeds = np.where(open_, decided, verdict), np.where(open_, n, seeds)
        stop = decided != 0
        if futility and k < len(looks) - 1:
            chance_of = np.array([Count(c, n).chance(looks[-1], levels[-1]) for c in range(n + 1)])
            stop |= np.maximum(chance_of[support], chance_of[against]) < futility
        open_ &= ~stop
    return verdict, seeds


def prices(costs: JobCosts, family: Family) -> tuple[np.ndarray, float]:
    """A cost table (workflow.state.cost_table) -> one job's CPU seconds per source of the family [sources] and the
    warmed critic's; an error naming the sources it lacks."""
    missing = [name for name in family.sources if name not in costs.seconds]
    if missing:
        raise ValueError(f'{costs.path} has no cpu_s for {", ".join(missing)}')
    return np.array([costs.seconds[name] for name in family.sources], float), costs.critic_s


def job_seconds(seeds: np.ndarray, family: Family, cpu: np.ndarray, critic: float, first: int) -> np.ndarray:
    """seeds [ledgers, claims] each claim used -> [ledgers] job-seconds: per source the first look's seeds, or the most
    any claim reading it used, times its CPU seconds; plus the critic's per seed any PPO cell ran."""
    ran = np.maximum(first, np.where(family.reads, seeds[:, :, None], 0).max(1))  # [L, sources]
    return ran @ cpu + ran[:, family.ppo].max(1) * critic


def plan_levels(spec) -> tuple[SeedPlan, list[float]]:
    """A candidate's seed plan (as a design's `seeds` states it) and its looks' levels (a fixed design: alpha)."""
    plan = seed_plan({'seeds': spec})
    return plan, look_levels(list(plan.looks), plan.max_seeds, ALPHA, plan.gamma) if plan.sequential else [ALPHA]


def decides_a_quarter(looks: list[int], levels: list[float]) -> bool:
    """Eligibility (2): every look can decide a quarter of the family at once, 2^-n_k <= a_k / 8."""
    return all(0.5 ** n <= level / QUARTER for n, level in zip(looks, levels))


def spec_columns(plan: SeedPlan) -> dict:
    """A candidate's columns: its name, looks, initial, step, max and gamma (fixed: none)."""
    name = f'fixed {plan.max_seeds}' if not plan.sequential else \
        f'{plan.looks[0]}+{plan.step} to {plan.max_seeds}, gamma {plan.gamma:g}'
    return dict(design=name, looks=' '.join(map(str, plan.looks)), initial=plan.looks[0], step=plan.step,
                max=plan.max_seeds, gamma=plan.gamma if plan.sequential else math.nan)


def simulate(specs: list, family: Family, scenarios: list[Scenario], costs: dict[str, tuple[np.ndarray, float]],
             ledgers: int, drawn: int, seed: int) -> list[dict]:
    """Per candidate: spec_columns, eligibility (2), and for those it leaves, per scenario the false discovery
    rate and its SE, and on the scenarios priced in `costs` (by name) the mean decided claims and job-seconds; every
    design reads the first seeds of the same ledgers, `drawn` seeds wide."""
    plans = [plan_levels(spec) for spec in specs]
    rows = [dict(spec_columns(plan), decides_a_quarter=decides_a_quarter(list(plan.looks), levels))
            for plan, levels in plans]
    for scenario in scenarios:
        effects, values = draw(scenario, ledgers, drawn, seed)
        for row, (plan, levels) in zip(rows, plans):
            if not row['decides_a_quarter']:
                continue
            verdict, seeds = run_ledgers(values, scenario.smallest, list(plan.looks), levels,
                                         plan.futility if plan.sequential else 0.0)
            fdp = false_share(false_verdicts(verdict, effects, scenario.smallest), verdict)
            row.update({f'fdr_{scenario.name}': fdp.mean(),
                        f'fdr_{scenario.name}_se': fdp.std(ddof=1) / math.sqrt(ledgers)})
            if scenario.name in costs:
                row.update({f'decided_{scenario.name}': (verdict != 0).sum(1).mean(), f'job_seconds_{scenario.name}':
                            job_seconds(seeds, family, *costs[scenario.name], plan.looks[0]).mean()})
    return rows


def design_table(specs: list, family: Family, pilots: list[Scenario], costs: dict[str, tuple[np.ndarray, float]],
                 ledgers: int, seed: int = 0, jobs: int = 1) -> pd.DataFrame:
    """The third criterion's table: simulate's columns for the global null ('null') and each pilot (priced by costs,
    by pilot name), in `jobs` processes, judged (judge)."""
    scenarios = [Scenario('null', (0.0,) * len(family.ids), 0.0), *pilots]
    chunks = [[specs[i] for i in chunk] for chunk in np.array_split(np.arange(len(specs)), jobs) if len(chunk)]
    run = functools.partial(simulate, family=family, scenarios=scenarios, costs=costs, ledgers=ledgers,
                            drawn=max(plan_levels(spec)[0].max_seeds for spec in specs), seed=seed)
    with ProcessPoolExecutor(jobs) as pool:
        rows = [row for part in pool.map(run, chunks) for row in part]
    columns = [*spec_columns(plan_levels(specs[0])[0]), 'decides_a_quarter',
               *[f'fdr_{s.name}{e}' for s in scenarios for e in ('', '_se')],
               *[f'{what}_{p.name}' for p in pilots for what in ('decided', 'job_seconds')]]
    table = pd.DataFrame(rows).reindex(columns=columns)  # a pruned design: NaN
    return judge(table, [s.name for s in scenarios], [p.name for p in pilots])


def judge(table: pd.DataFrame, scenarios: list[str], pilots: list[str]) -> pd.DataFrame:
    """The table with eligibility (1), fdr_ok (every scenario's FDR - 2 SE <= alpha), and (2): eligible;
    per_decided (the pilots' mean job-seconds summed over their mean decided claims summed) and the choice: the
    eligible design with the fewest."""
    table = table.assign(fdr_ok=np.logical_and.reduce(
        [table[f'fdr_{name}'] - 2 * table[f'fdr_{name}_se'] <= ALPHA for name in scenarios]))
    table['eligible'] = table['decides_a_quarter'] & table['fdr_ok']
    table['per_decided'] = sum(table[f'job_seconds_{name}'] for name in pilots) / sum(
        table[f'decided_{name}'] for name in pilots)
    table['chosen'] = False
    if table['eligible'].any():
        table.loc[table.loc[table['eligible'], 'per_decided'].idxmin(), 'chosen'] = True
    return table
