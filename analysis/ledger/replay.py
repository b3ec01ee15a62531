"""A sequential design replayed on the published records: what it would have decided and what it would have cost,
without running anything.

Each stage buys the runs its plan names (stage 1: the first look's seeds of every cell and experiment; then the
sources of the claims still open, up to the next look's seeds), and its look decides claims exactly as the workflow's
look does (analysis.ledger.sequential.next_stage on the first seeds of each source). A run's cost is its source's CPU
seconds in the design's cost table (workflow.state.job_costs) where there is one, else the wall time the records hold
for it plus a job's fixed cost; a stage adds the PPO critics its new seeds need (the table's, else CRITIC_S each) and
its look (LOOK_S). Where a stage would need seeds the records lack, the replay stops before it and names the cells and
experiments and the seeds to run.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from workflow.plan import SeedPlan
from workflow.state import JobCosts

from ..records.load import Runs
from ..text import to_markdown
from .chapter import Context
from .claims import load_claims
from .sequential import decidable, next_stage, sequential_ledger

# Measured on the published design (results/measurements.md, its conventions): a job's time outside its run, one
# warmed critic per seed of the PPO cells, one look.
JOB_FIXED_S, CRITIC_S, LOOK_S = 2.6, 5.5, 18.4


@dataclass(frozen=True)
class Replay:
    """A replay: per stage what it bought and decided, the seeds it lacked, the ledger at its last stage, and how its
    job-seconds were priced."""
    stages: pd.DataFrame  # stage, seeds, sources, runs, job_seconds, decided, futile, open
    missing: dict[str, list[int]]  # source -> the seeds the next stage needs that the records lack ({}: none)
    ledger: pd.DataFrame  # analysis.ledger.sequential.sequential_ledger at the last stage replayed (empty: none was)
    priced: str  # words: the clock and where its seconds come from

    @property
    def decided(self) -> int:
        """Statistical claims decided (for or against them) by the last stage replayed."""
        return int(self.stages['decided'].sum())

    @property
    def job_seconds(self) -> float:
        return float(self.stages['job_seconds'].sum())


def run_seconds(runs: Runs) -> dict[tuple[str, int], float]:
    """(name, seed) -> the run's wall time in seconds as its summary records it."""
    wall = runs.summaries[runs.summaries['metric'] == 'wall_s']
    return {(name, int(seed)): float(value) for name, seed, value in zip(wall['name'], wall['seed'], wall['value'])}


def run_prices(runs: Runs, costs: JobCosts | None) -> tuple[dict[tuple[str, int], float], float, str]:
    """What each run (name, seed) of the records costs, what a warmed critic costs, and how they were priced: by the
    cost table (a run its source's CPU seconds) where there is one, else by the records' wall times and the constants;
    a ValueError naming the sources the table lacks."""
    if costs is None:
        prices = {run: seconds + JOB_FIXED_S for run, seconds in run_seconds(runs).items()}
        return prices, CRITIC_S, (f"wall seconds, as the records' runs state them plus {JOB_FIXED_S} s a job, "
                                  f'{CRITIC_S} s a warmed critic and {LOOK_S} s a look (no cost table: python -m '
                                  'workflow.costs)')
    lacking = sorted(set(runs.runs['name']) - set(costs.seconds))
    if lacking:
        raise ValueError(f'{costs.path} lacks {", ".join(lacking)}: measure it again (python -m workflow.costs)')
    prices = {(name, int(seed)): costs.seconds[name] for name, seed in zip(runs.runs['name'], runs.runs['seed'])}
    return prices, costs.critic_s, f'CPU seconds of jobs by {costs}, and {LOOK_S} s a look'


def replay(ctx: Context, runs: Runs, plan: SeedPlan, costs: JobCosts | None = None) -> Replay:
    """Replay a sequential plan on runs (the published records) with ctx built from them, its runs priced by the
    design's cost table (costs: workflow.state.job_costs) or, without one, by the records' wall times."""
    if not plan.sequential:
        raise ValueError('a replay needs a sequential seed plan ({initial, step, max, ...}); a list of seeds is one '
                         'stage, whose cost is its runs')
    prices, critic_s, priced = run_prices(runs, costs)
    held = {name: {int(seed) for seed in group['seed']} for name, group in runs.runs.groupby('name')}
    ppo = {name for name, config in runs.configs.items() if config.get('algorithm') == 'ppo'}
    have = dict.fromkeys(held, 0)
    grow = dict.fromkeys(held, plan.looks[0])
    rows, missing, stage = [], {}, 0
    while grow is not None:  # {}: a stage that buys nothing (its claims deferred), None: the design is done
        bought = {name: range(have[name], n) for name, n in grow.items()}
        missing = {name: [seed for seed in seeds if seed not in held[name]] for name, seeds in bought.items()}
        missing = {name: seeds for name, seeds in missing.items() if seeds}
        if missing:
            break
        stage += 1
        critics_before = max((have[name] for name in ppo), default=0)
        have.update(grow)
        critics = max((have[name] for name in ppo), default=0) - critics_before  # one warm-up per new PPO seed
        cost = sum(prices.get((name, seed), JOB_FIXED_S) for name, seeds in bought.items() for seed in seeds)
        look = next_stage(ctx, plan, stage)
        rows.append(dict(stage=stage, seeds=plan.looks[stage - 1], sources=len(grow),
                         runs=sum(map(len, bought.values())), job_seconds=round(cost + critics * critic_s + LOOK_S, 1),
                         decided=len(look['decided']), futile=len(look['futile']), open=len(look['undecided']),
                         deferred=len(look['deferred'])))
        grow = dict.fromkeys(look['next']['sources'], look['next']['seeds']) if look['next'] else None
    columns = ['stage', 'seeds', 'sources', 'runs', 'job_seconds', 'decided', 'futile', 'open', 'deferred']
    return Replay(pd.DataFrame(rows, columns=columns), missing,
                  sequential_ledger(ctx, plan, stage) if stage else pd.DataFrame(), priced)


def unreachable(plan: SeedPlan, claims: list[dict]) -> pd.DataFrame:
    """Per look of the plan: its seeds and level, and the statistical claims whose test cannot reach the level with
    that many seeds (the look spends on them without being able to decide them)."""
    found = decidable(claims, plan)
    return (found.groupby(['stage', 'seeds', 'level'])
            .agg(claims=('id', 'size'), cannot_decide=('can_decide', lambda ok: int((~ok).sum())),
                 smallest_p_min=('smallest_p', 'min'), smallest_p_max=('smallest_p', 'max')).reset_index())


def report(result: Replay, plan: SeedPlan, claims: list[dict] | None = None) -> str:
    """The replay in Markdown: the stages, the totals, the seeds the records lack and the looks that cannot decide
    some claims."""
    stages = result.stages
    lines = [f'# Replay of seeds {plan.spec}', '', to_markdown(stages), '']
    if len(stages):
        per = f'{result.job_seconds / result.decided:,.0f}' if result.decided else 'no claim decided'
        lines += [f'{len(stages)} stages, {int(stages["runs"].sum())} runs, {result.job_seconds:,.0f} job-seconds, '
                  f'{result.decided} claims decided: {per} job-seconds per decided claim.', '',
                  f'Job-seconds: {result.priced}.', '']
    if result.missing:
        lines += [f'Stage {len(stages) + 1} needs runs the records lack (name: seeds):', '',
                  *[f'- {name}: {", ".join(map(str, seeds))}' for name, seeds in sorted(result.missing.items())], '']
    else:
        lines += ['The records hold every run the design asks for.', '']
    lines += ['Each look against the tests it can decide (a claim\'s smallest p: every seed on its side):', '',
              to_markdown(unreachable(plan, claims or load_claims()['claims'])), '']
    return '\n'.join(lines)
