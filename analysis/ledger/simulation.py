"""Operating characteristics of the ledger's rule, by simulation: the exact seed counts of analysis/ledger/verdicts.py
spent over the looks of analysis/ledger/sequential.py (those of the sequential design the first criterion chose),
against a fixed design at its last look.

`python -m analysis.ledger.simulation --family [--ledgers N] [--jobs N] [--costs CSV CSV CSV]` prints the third
criterion's table (analysis/ledger/design_choice.py) and writes it to --out (results/across/designs.csv).

`python -m analysis.ledger.simulation [--reps N] [--ledgers N] [--records DIR]` prints
- calibration: per look, one claim's rate of a false verdict when its seeds have median exactly at the null (values
  drawn lognormal (sigma 1), exponential, t(3), and each claim's own published values resampled and shifted to the
  null), over the look's level, with its Monte Carlo standard error: the promise is at most 1.25;
- the ledger: ledgers of 100 claims under a global null and with a mixture of real effects: the false discovery
  rate over all verdicts and looks, the chance of any false verdict, power and mean seeds, against a fixed design
  at 40 seeds, with and without futility;
- on the published records: the run jobs futility saves in the design's replay.
"""
from __future__ import annotations

import argparse
import math
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from agentrl.files import write_text
from workflow.design import PUBLISHED_DESIGNS, load_design, substrate_of
from workflow.plan import SeedPlan, seed_plan
from workflow.state import COSTS_FILE, cost_table

from ..records.records import load_records, select
from ..stats.inference import DEFAULTS, bh_threshold, exceed_p
from ..text import to_markdown
from .chapter import Context
from .claims import FINDING, group, load_claims, samples
from .design_choice import CANDIDATES, Scenario, false_share, false_verdicts, family, prices
from .design_choice import design_table as family_table
from .sequential import look_levels, next_stage
from .verdicts import Count, band, clean, differences, per_seed, steps, to_scale

PILOT_VERSION = 4  # the numerics version of the runs the third criterion's pilots read
# The sequential design the first criterion chose (substrate 1's at numerics version 4): the calibration, the ledgers of
# 100 claims and the futility replay are measured on its four looks, the most demanding the ledger has run.
DEFAULT_PLAN = seed_plan({'seeds': dict(initial=12, step=10, max=40, futility=0.1, gamma=-6.0)})
LOOKS, MAX_SEEDS = list(DEFAULT_PLAN.looks), DEFAULT_PLAN.looks[-1]
ALPHA = DEFAULTS['alpha']
PROMISE = 1.25  # a look's false-verdict rate may be at most this many times its level
FAMILIES = {  # draws with median exactly 0: the null of a sign test
    'lognormal (sigma 1)': lambda rng, shape: rng.lognormal(0.0, 1.0, shape) - 1.0,
    'exponential': lambda rng, shape: rng.exponential(1.0, shape) - math.log(2),
    't(3)': lambda rng, shape: rng.standard_t(3, shape),
}


def false_rates(values: np.ndarray, looks: list[int] = LOOKS, max_seeds: int = MAX_SEEDS,
                alpha: float = ALPHA) -> pd.DataFrame:
    """values [reps, max_seeds], median 0: per look, the rate of p <= the look's level for the claim (more seeds
    above 0) and against it (more below), the worse of the two over the level, and its Monte Carlo SE."""
    rows = []
    for n, level in zip(looks, look_levels(looks, max_seeds, alpha)):
        seen = values[:, :n]
        rates = [(exceed_p((seen > 0).sum(1), n) <= level).mean(), (exceed_p((seen < 0).sum(1), n) <= level).mean()]
        worst = max(rates)
        rows.append(dict(seeds=n, level=level, rate=worst, ratio=worst / level,
                         ratio_se=math.sqrt(worst * (1 - worst) / len(values)) / level))
    return pd.DataFrame(rows)


def calibration(reps: int, seed: int = 0, own: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    """false_rates for each family, and for each claim's own values (resampled with replacement, shifted so that
    their median is the null); one row per family (or claim) and look."""
    rng = np.random.default_rng(seed)
    draws = {name: lambda draw=draw: draw(rng, (reps, MAX_SEEDS)) for name, draw in FAMILIES.items()}
    for claim_id, values in (own or {}).items():
        draws[f'own: {claim_id}'] = lambda v=values - np.median(values): rng.choice(v, (reps, MAX_SEEDS))
    return pd.concat([false_rates(draw()).assign(source=name) for name, draw in draws.items()], ignore_index=True)


def own_values(ctx: Context, claims: dict) -> dict[str, np.ndarray]:
    """Per claim of the ledger with a verdict, the per-seed values its first test counts: the first step's
    differences on the claim's scale, or an about-claim's values on its scale less the band's low edge."""
    out = {}
    for claim in claims['claims']:
        if group(claim) in ('check', FINDING):
            continue
        found = [clean(f.values) for f in samples(claim, ctx)]
        if any(s.empty for s in found) or (len(found) == 2 and not claim.get('paired') and 'of' not in claim):
            continue
        try:
            if claim['kind'] == 'about':
                scale = claim.get('scale', 'raw')
                x = clean(per_seed(claim, found)).to_numpy()
                values = (np.log(x) if scale == 'log' else to_scale(x, scale)) - to_scale(band(claim)[0], scale)
            else:
                values = differences(claim, *steps(claim, found)[0])
        except ArithmeticError:
            continue
        if len(values) >= 2 and np.ptp(values) > 0:
            out[claim['id']] = values
    return out


# --- ledgers of many claims -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Mixture:
    """A ledger of claims 'greater than 0' with per-seed values N(effect, 1) and a smallest effect of interest."""
    name: str
    effects: tuple[float, ...]  # one per claim
    smallest: float


def mixtures(claims: int = 100) -> tuple[Mixture, ...]:
    """A global null (every claim at 0, smallest effect 0: any verdict is false) and a mixture: 40% of claims with no
    effect, 20% at the smallest effect 0.25, 40% at 0.5 (a seed-to-seed sd of 1)."""
    share = [int(0.4 * claims), int(0.2 * claims)]
    mixed = (0.0,) * share[0] + (0.25,) * share[1] + (0.5,) * (claims - sum(share))
    return Mixture('global null', (0.0,) * claims, 0.0), Mixture('mixture', mixed, 0.25)


def pilot_mixture(own: dict[str, np.ndarray]) -> Mixture:
    """The second criterion's pilot (registered 2026-12-02 07:52 UTC, results/measurements.md): one claim per claim's
    own values (own_values), effect Phi^-1(q) for q the share of its n seeds above 0, clipped to [1/(2n), 1 - 1/(2n)];
    seed-to-seed sd 1, smallest effect 0.25."""
    shares = [np.clip((v > 0).mean(), 0.5 / len(v), 1 - 0.5 / len(v)) for v in own.values()]
    return Mixture('pilot', tuple(float(x) for x in stats.norm.ppf(shares)), 0.25)


def version_context(records: Path | str, version: int = PILOT_VERSION) -> Context:
    """The Context of a records folder's runs of one numerics version; a ValueError where it has none (a republished
    substrate's records: the pilot needs those it had before)."""
    runs = load_records(records)
    kept = runs.runs[runs.runs['numerics_version'] == version]
    if kept.empty:
        raise ValueError(f'{records}: no runs of numerics version {version}, the pilots\' version; give the records '
                         'the substrate had before its republish (--pilots)')
    return Context.build(select(runs, zip(kept['name'], kept['seed'])))


def pilot_scenario(ctx: Context, claims: dict, ids: tuple[str, ...], name: str) -> Scenario:
    """The third criterion's pilot of one substrate: pilot_mixture of ctx's own values, each claim of the family (ids)
    at its effect, NaN where ctx cannot price it (design_choice.draw draws it anew in each ledger)."""
    own = own_values(ctx, claims)
    pilot = pilot_mixture(own)
    effects = dict(zip(own, pilot.effects))
    return Scenario(name, tuple(effects.get(i, math.nan) for i in ids), pilot.smallest)


def run_ledger(values: np.ndarray, smallest: float, looks: list[int], levels: list[float],
               futility: float) -> tuple[np.ndarray, np.ndarray]:
    """values [claims, seeds]: each claim's decision (1 for it, -1 against it, 0 none) and seeds used, with
    one BH per look over the open claims' p-values for and against in the family of every claim (decided: 0 and 1,
    futile: 1 and 1), as sequential_ledger does; futility: the plan's threshold (0: none)."""
    claims = len(values)
    verdict, seeds, open_ = np.zeros(claims, int), np.full(claims, looks[-1]), np.ones(claims, bool)
    futile = 0  # claims stopped for futility: two p-values of 1 each; a decided claim: one of 0 and one of 1
    for k, (n, level) in enumerate(zip(looks, levels)):
        index = np.flatnonzero(open_)
        seen = values[index, :n]
        support = [Count(int(c), n) for c in (seen > 0).sum(1)]
        against = [Count(int(c), n) for c in (seen < smallest).sum(1)]
        p, p_against = np.array([c.p for c in support]), np.array([c.p for c in against])
        done = int((verdict != 0).sum())
        cutoff = bh_threshold(np.r_[p, p_against, np.zeros(done), np.ones(done + 2 * futile)], level)
        decided = np.where(p <= cutoff, 1, np.where(p_against <= cutoff, -1, 0))
        verdict[index], seeds[index] = decided, n
        stop = decided != 0
        if futility and k < len(looks) - 1:
            chance = np.array([max(s.chance(looks[-1], levels[-1]), a.chance(looks[-1], levels[-1]))
                               for s, a in zip(support, against)])
            futile += int((~stop & (chance < futility)).sum())
            stop |= chance < futility
        open_[index[stop]] = False
        if not open_.any():
            break
    return verdict, seeds


def draw_values(mixture: Mixture, rng: np.random.Generator, seeds: int) -> np.ndarray:
    """One synthetic ledger's per-seed values [claims, seeds]: each claim's effect plus N(0, 1) per seed."""
    effects = np.asarray(mixture.effects)
    return effects[:, None] + rng.standard_normal((len(effects), seeds))


def ledger_characteristics(mixture: Mixture, ledgers: int, seed: int = 0, looks: list[int] = LOOKS,
                           max_seeds: int = MAX_SEEDS, alpha: float = ALPHA) -> pd.DataFrame:
    """Over `ledgers` simulated ledgers, for the sequential design (with and without futility) and a fixed design at
    max_seeds: the false discovery rate over all verdicts (and its SE), P(any false verdict), the power to
    reproduce the claims at 0.5, to contradict those at 0, and the mean seeds per claim."""
    rng = np.random.default_rng(seed)
    effects = np.asarray(mixture.effects)
    designs = {'sequential': (looks, look_levels(looks, max_seeds, alpha), DEFAULT_PLAN.futility),
               'sequential, no futility': (looks, look_levels(looks, max_seeds, alpha), 0.0),
               f'fixed at {max_seeds}': ([max_seeds], [alpha], 0.0)}
    found = {name: [] for name in designs}
    for _ in range(ledgers):
        values = draw_values(mixture, rng, max_seeds)
        for name, (at, levels, futility) in designs.items():
            verdict, seeds = run_ledger(values, mixture.smallest, at, levels, futility)
            false = false_verdicts(verdict, effects, mixture.smallest)
            found[name].append(dict(fdp=float(false_share(false, verdict)), any_false=false.any(),
                                    power=(verdict[effects >= 0.5] == 1).mean() if (effects >= 0.5).any() else np.nan,
                                    absent=(verdict[effects == 0] == -1).mean() if mixture.smallest > 0 else np.nan,
                                    seeds=seeds.mean()))
    rows = []
    for name, runs in found.items():
        frame = pd.DataFrame(runs)
        rows.append(dict(ledger=mixture.name, design=name, fdr=frame['fdp'].mean(),
                         fdr_se=frame['fdp'].std() / math.sqrt(ledgers), any_false=frame['any_false'].mean(),
                         power=frame['power'].mean(), against_absent=frame['absent'].mean(),
                         mean_seeds=frame['seeds'].mean()))
    return pd.DataFrame(rows)


# --- choosing a design by one registered criterion (registered 2026-12-02 00:07 UTC, before its table was computed) ---
# (The second criterion, for substrates 2 and 3, registered 2026-12-02 07:52 UTC: the same, the cost judged on the
# pilot mixture, pilot_mixture(), instead of the synthetic mixture.)
# Among sequential designs (initial, step, max 40, gamma, futility), the best has the fewest expected job-seconds per
# decided claim on the synthetic mixture ledger, among those whose simulated false discovery rate is not above alpha
# beyond Monte Carlo error (mean - 2 SE <= alpha) under the global null and the mixture, and whose every look can
# decide a sign-test claim (2^-n_k <= its level).
# Cost model, from the published run's descriptive figures only: claims share sources round robin, as the chapter's
# 91 claims share 28 cells and experiments; a source gets the first look's seeds, then the most seeds any of its
# claims asks for; a run job costs 23 s (the baseline cell inside the workflow), a look 18.4 s.
RUN_SECONDS, LOOK_SECONDS, CLAIMS_PER_SOURCE = 23.0, 18.4, 91 / 28


def every_look_decides(looks: list[int], levels: list[float]) -> bool:
    """Whether a sign-test claim can be decided at every look: its smallest p (every seed on its side, 2^-n_k) at or
    below the look's level."""
    return all(exceed_p(n, n) <= level for n, level in zip(looks, levels))


def design_cost(seeds: np.ndarray, looks: list[int]) -> float:
    """Job-seconds of one ledger's design: seeds [claims] each claim used, its sources shared round robin."""
    sources = max(1, round(len(seeds) / CLAIMS_PER_SOURCE))
    per_source = np.full(sources, looks[0])
    np.maximum.at(per_source, np.arange(len(seeds)) % sources, seeds)
    return float(per_source.sum() * RUN_SECONDS + (looks.index(int(seeds.max())) + 1) * LOOK_SECONDS)


def design_row(spec: dict, ledgers: int, seed: int = 0, pilot: Mixture | None = None) -> dict:
    """One design's operating characteristics over `ledgers` synthetic ledgers of each scenario (mixtures()): the
    false discovery rates, and the claims decided and job-seconds on the mixture, or on `pilot` when given."""
    plan = seed_plan({'seeds': spec})
    looks = list(plan.looks)
    levels = look_levels(looks, plan.max_seeds, ALPHA, plan.gamma)
    row = dict(spec, every_look_decides=every_look_decides(looks, levels))
    scenarios = mixtures()
    priced = pilot or scenarios[1]  # the ledger the cost is judged on
    for mixture in (*scenarios, *([pilot] if pilot else [])):
        rng = np.random.default_rng(seed)
        fdp, decided, cost = [], [], []
        for _ in range(ledgers):
            verdict, seeds = run_ledger(draw_values(mixture, rng, plan.max_seeds), mixture.smallest, looks, levels,
                                        plan.futility)
            fdp.append(float(false_share(false_verdicts(verdict, mixture.effects, mixture.smallest), verdict)))
            decided.append(int((verdict != 0).sum()))
            cost.append(design_cost(seeds, looks))
        if mixture is not pilot:
            key = 'null' if mixture.smallest == 0 else 'mixture'
            row.update({f'fdr_{key}': float(np.mean(fdp)),
                        f'fdr_{key}_se': float(np.std(fdp, ddof=1) / math.sqrt(ledgers))})  # as ledger_characteristics
        if mixture is priced:
            row.update(decided=float(np.mean(decided)), job_seconds=float(np.mean(cost)),
                       per_decided=float(np.mean(cost) / max(np.mean(decided), 1e-9)))
    return row


def design_table(specs: list[dict], ledgers: int, seed: int = 0, jobs: int = 1,
                 pilot: Mixture | None = None) -> pd.DataFrame:
    """design_row for each design (in `jobs` processes), and the criterion's choice marked (column chosen): the
    first criterion's (cost on the mixture) or, with `pilot`, the second's (cost on the pilot mixture)."""
    with ProcessPoolExecutor(jobs) as pool:
        rows = list(pool.map(design_row, specs, [ledgers] * len(specs), [seed] * len(specs), [pilot] * len(specs)))
    table = pd.DataFrame(rows)
    eligible = table['every_look_decides'] & (table['fdr_null'] - 2 * table['fdr_null_se'] <= ALPHA) & (
        table['fdr_mixture'] - 2 * table['fdr_mixture_se'] <= ALPHA)
    table['chosen'] = False
    if eligible.any():
        table.loc[table.loc[eligible, 'per_decided'].idxmin(), 'chosen'] = True
    return table


DESIGNS = [dict(initial=initial, step=step, max=40, gamma=gamma, futility=0.1)
           for initial in (10, 12, 15) for step in (5, 10) for gamma in (-2.0, -4.0, -6.0)]


def futility_savings(ctx: Context, plan: SeedPlan = DEFAULT_PLAN) -> dict[str, int]:
    """The published design replayed with and without futility: the run jobs of the stages after the first (the
    sources the open claims read, times the seeds each stage adds)."""
    jobs, looks = {}, plan.looks
    for label, threshold in (('with futility', plan.futility), ('without', 0.0)):
        plans = [next_stage(ctx, plan, k, futility=threshold)['next'] for k in range(1, len(looks))]
        jobs[label] = sum(len(plan.get('sources', [])) * (b - a) for plan, a, b in zip(plans, looks, looks[1:]))
    return jobs


def third_criterion(ledgers: int, seed: int = 0, jobs: int = 1, costs: list[str] | None = None,
                    pilots: list[str] | None = None) -> pd.DataFrame:
    """design_choice.design_table over CANDIDATES for the published designs: the family of the first (the default
    design), a pilot from each one's version-4 records and its cost table (costs, pilots: the cost tables and records
    folders, in PUBLISHED_DESIGNS' order; default each one's results_dir/costs.csv and results_dir/records). A
    ValueError naming a records folder without version-4 runs."""
    designs = [load_design(path) for path in PUBLISHED_DESIGNS]
    folders = pilots or [Path(design['results_dir']) / 'records' for design in designs]
    contexts = [version_context(folder) for folder in folders]
    claims = load_claims(chapter=contexts[0].chapter)
    found = family(claims, designs[0], contexts[0])
    pilots = [pilot_scenario(ctx, claims, found.ids, substrate_of(design)) for ctx, design in zip(contexts, designs)]
    tables = costs or [Path(design['results_dir']) / COSTS_FILE for design in designs]
    return family_table(CANDIDATES, found, pilots, {pilot.name: prices(cost_table(table), found)
                                                    for pilot, table in zip(pilots, tables)}, ledgers, seed, jobs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m analysis.ledger.simulation', description=__doc__)
    parser.add_argument('--reps', type=int, default=200_000, help='simulated claims per calibration source')
    parser.add_argument('--ledgers', type=int, default=400, help='simulated ledgers of 100 claims per scenario')
    parser.add_argument('--records', default='results/records', help='published records (own values, futility)')
    parser.add_argument('--job-seconds', type=float, default=34.0,
                        help='seconds of one run job (a first stage of 280 runs took 9,600 job-seconds)')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--designs', action='store_true',
                        help='only the registered criterion\'s table over DESIGNS (synthetic ledgers, no records)')
    parser.add_argument('--jobs', type=int, default=1, help='processes for --designs and --family')
    parser.add_argument('--pilot', action='store_true',
                        help="with --designs: the second criterion, cost on the pilot mixture from --records' claims")
    parser.add_argument('--family', action='store_true',
                        help="only the third criterion's table: design_choice.CANDIDATES on the family, priced by "
                             "each published design's pilot (its version-4 records) and cost table")
    parser.add_argument('--costs', nargs=len(PUBLISHED_DESIGNS), metavar='CSV',
                        help=f'with --family: the cost tables (source, cpu_s) of {", ".join(PUBLISHED_DESIGNS)} '
                             '(default: each one\'s results_dir/costs.csv)')
    parser.add_argument('--pilots', nargs=len(PUBLISHED_DESIGNS), metavar='RECORDS',
                        help='with --family: the version-4 records folders of the pilots, in the order of --costs '
                             '(default: each one\'s results_dir/records)')
    parser.add_argument('--out', default='results/across/designs.csv', help='with --family: the table written')
    args = parser.parse_args(argv)
    if args.family:
        try:
            table = third_criterion(args.ledgers, args.seed, args.jobs, args.costs, args.pilots)
        except ValueError as error:
            parser.error(str(error))
        print(f"## The third criterion's designs ({args.ledgers} ledgers per scenario)\n")
        print(to_markdown(table))
        for design, cost in table.loc[table['chosen'], ['design', 'per_decided']].itertuples(index=False):
            print(f'chosen: {design}, {cost:.1f} job-seconds per decided claim')
        write_text(args.out, table.to_csv(index=False))
        return 0
    ctx = Context.build(load_records(args.records)) if args.pilot or not args.designs else None
    if args.designs:
        pilot = pilot_mixture(own_values(ctx, load_claims(chapter=ctx.chapter))) if args.pilot else None
        print(f'## Designs by job-seconds per decided claim ({args.ledgers} synthetic ledgers per scenario'
              f'{f"; cost on the pilot of {len(pilot.effects)} claims" if pilot else ""})\n')
        print(to_markdown(design_table(DESIGNS, args.ledgers, args.seed, args.jobs, pilot)))
        return 0
    table = calibration(args.reps, args.seed, own_values(ctx, load_claims(chapter=ctx.chapter)))
    print(f'looks at {LOOKS} of {MAX_SEEDS} seeds; levels ' + ', '.join(f'{v:.3g}' for v in look_levels(LOOKS,
                                                                                                      MAX_SEEDS)))
    print(f'\n## Calibration: false-verdict rate over the look\'s level ({args.reps} claims per source)\n')
    worst = table.loc[table.groupby('source')['ratio'].idxmax()].sort_values('ratio', ascending=False)
    print(to_markdown(worst.head(12)))
    print(f'\nsources: {table["source"].nunique()}; largest ratio {table["ratio"].max():.3f} '
          f'(promise: at most {PROMISE}); looks over it: {int((table["ratio"] > PROMISE).sum())}')
    print(f'\n## Ledgers of 100 claims ({args.ledgers} per scenario)\n')
    print(to_markdown(pd.concat([ledger_characteristics(m, args.ledgers, args.seed) for m in mixtures()])))
    jobs = futility_savings(ctx)
    saved = jobs['without'] - jobs['with futility']
    print(f'\n## Futility on the published records\n\nrun jobs after stage 1: {jobs["without"]} without futility, '
          f'{jobs["with futility"]} with it: {saved} jobs saved, {saved * args.job_seconds:,.0f} job-seconds at '
          f'{args.job_seconds:g} s a job')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
