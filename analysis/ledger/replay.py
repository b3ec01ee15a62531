"""A sequential design replayed on the published records: what it would have decided and what it would have cost,
without running anything.

Each stage buys the runs its plan names (stage 1: the first look's seeds of every cell and experiment; then the
sources of the claims still open, up to the next look's seeds), and its look decides claims exactly as the workflow's
look does (analysis.ledger.sequential.next_stage on the first seeds of each source). A run's cost is the wall time the
records hold for it plus a job's fixed cost; a stage adds the PPO critics its new seeds need and its look. Where a
stage would need seeds the records lack, the replay stops before it and names the cells and experiments and the
seeds to run.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from workflow.plan import SeedPlan

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
    """A replay: per stage what it bought and decided, the seeds it lacked, and the ledger at its last stage."""
    stages: pd.DataFrame  # stage, seeds, sources, runs, job_seconds, decided, futile, open
    missing: dict[str, list[int]]  # source -> the seeds the next stage needs that the records lack ({}: none)
    ledger: pd.DataFrame  # analysis.ledger.sequential.sequential_ledger at the last stage replayed (empty: none was)

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


def replay(ctx: Context, runs: Runs, plan: SeedPlan) -> Replay:
    """Replay a sequential plan on runs (the published records) with ctx built from them."""
    if not plan.sequential:
        raise ValueError('a replay needs a sequential seed plan ({initial, step, max, ...}); a list of seeds is one '
                         'stage, whose cost is its runs')
    seconds = run_seconds(runs)
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
        cost = sum(seconds.get((name, seed), 0.0) + JOB_FIXED_S for name, seeds in bought.items() for seed in seeds)
        look = next_stage(ctx, plan, stage)
        rows.append(dict(stage=stage, seeds=plan.looks[stage - 1], sources=len(grow),
                         runs=sum(map(len, bought.values())), job_seconds=round(cost + critics * CRITIC_S + LOOK_S, 1),
                         decided=len(look['decided']), futile=len(look['futile']), open=len(look['undecided']),
                         deferred=len(look['deferred'])))
        grow = dict.fromkeys(look['next']['sources'], look['next']['seeds']) if look['next'] else None
    columns = ['stage', 'seeds', 'sources', 'runs', 'job_seconds', 'decided', 'futile', 'open', 'deferred']
    return Replay(pd.DataFrame(rows, columns=columns), missing,
                  sequential_ledger(ctx, plan, stage) if stage else pd.DataFrame())


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
                  f'{result.decided} claims decided: {per} job-seconds per decided claim.', '']
    if result.missing:
        lines += [f'Stage {len(stages) + 1} needs runs the records lack (name: seeds):', '',
                  *[f'- {name}: {", ".join(map(str, seeds))}' for name, seeds in sorted(result.missing.items())], '']
    else:
        lines += ['The records hold every run the design asks for.', '']
    lines += ['Each look against the tests it can decide (a claim\'s smallest p: every seed on its side):', '',
              to_markdown(unreachable(plan, claims or load_claims()['claims'])), '']
    return '\n'.join(lines)
