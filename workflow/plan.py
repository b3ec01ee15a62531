"""The seed plan of a design and its stage looks: which seeds each cell and experiment has at each stage, what a look
file holds, and what the workflow logs and passes to a look. The rule files (rules/stages.smk) call it through thin
input functions.

A fixed design (a list of seeds) is one stage: every cell and experiment at every seed. A staged design (a mapping:
{initial, step, max}, or a budgeted one {initial, max, policy, batch, budget}) runs stage 1 at seeds 0 to initial - 1;
after each stage a look (`python -m analysis stage`, analysis/ledger/stages.py) writes `stages/stage~K.json`, whose
`next` gives the cells and experiments that get more seeds at stage K + 1 and the seeds each then has (`{}`: the design
is done). The stages are a plan and a budget, not part of the ledger's promise: the ledger reads every seed there is.
A look belongs to a basis (workflow/state.py): one of another basis is never read.

Pure Python: imports neither Snakemake, torch nor pandas, so it is unit-tested without starting a workflow.
"""
from __future__ import annotations

import json
import math
import os
import shlex
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass


class DesignError(ValueError):
    """A design the schema cannot rule out but the trainer or the plan cannot run (names the cell and the values)."""


POLICIES = {  # a staged design's allocation policy (analysis/ledger/allocation.py) -> the keys its `seeds` take
    'every source': ('initial', 'step', 'max'),
    'greedy': ('initial', 'max', 'batch', 'budget'),
    'greedy in steps': ('initial', 'step', 'max', 'batch', 'budget'),
}
DEFAULT_POLICY = 'every source'  # a staged design's without `policy`
COSTS_FILE = 'costs.csv'  # a design's cost table (workflow/state.py), in its results_dir
FIXED_SEEDS = 10  # a budgeted design's batch and budget: multiples of the fixed design of this many seeds' job-seconds


@dataclass(frozen=True)
class SeedPlan:
    """The seeds of a design. Fixed (a list): one stage, every cell and experiment at every seed. Staged (a mapping):
    stage 1 gives every cell and experiment seeds 0 to initial - 1; after each stage a look gives the sources that
    feed a claim still open more, up to max, by the policy. 'every source': the stages' seeds run initial,
    initial + step, ... up to max (looks). Budgeted ('greedy', 'greedy in steps'): each source its own seeds, batch
    after batch of `batch` fixed designs' job-seconds, until the policy stops or `budget` fixed designs' job-seconds
    are spent (FIXED_SEEDS)."""
    seeds: tuple[int, ...]  # every seed a cell or experiment can get, in order
    looks: tuple[int, ...]  # seeds per source at each stage's look, where the plan fixes them (budgeted: the first)
    step: int  # 0 for a fixed design and a greedy one
    policy: str = ''  # '' for a fixed design
    batch: float = 0.0  # budgeted: a batch's job-seconds, in fixed designs
    budget: float = 0.0  # budgeted: the design's job-seconds, in fixed designs

    @property
    def staged(self) -> bool:
        return bool(self.policy)

    @property
    def budgeted(self) -> bool:
        return self.budget > 0

    @property
    def max_seeds(self) -> int:
        return len(self.seeds)

    @property
    def stages(self) -> int:
        """The most stages: every look of a fixed or 'every source' design; a budgeted design's first stage, the
        batches its budget holds at full size after it and one more (a batch runs short when every claim asking for
        seeds has its target: none of 120 simulated ledgers of the three substrates needed more)."""
        if not self.budgeted:
            return len(self.looks)
        return 2 + math.ceil((self.budget - self.looks[0] / FIXED_SEEDS) / self.batch - 1e-9)

    def check_stage(self, stage: int) -> None:
        """A DesignError unless stage (from 1) is a stage of this design."""
        if not 1 <= stage <= self.stages:
            raise DesignError(f'stage {stage} is not a stage of this design: it has stages 1 to {self.stages}')

    def seeds_at(self, stage: int) -> list[int]:
        """The seeds every source that reaches stage `stage` (from 1) has, where the plan fixes them."""
        self.check_stage(stage)
        if stage > len(self.looks):
            raise DesignError(f'stage {stage}: a budgeted design gives each source its own seeds after stage 1')
        return list(self.seeds[:self.looks[stage - 1]])

    def most_jobs(self, sources: int) -> int:
        """The most run jobs the design can take with this many cells and experiments (every source to max)."""
        return sources * self.max_seeds

    @property
    def spec(self) -> list[int] | dict:
        """The design's `seeds` value this plan comes from: seed_plan({'seeds': plan.spec}) == plan."""
        if not self.staged:
            return list(self.seeds)
        values = dict(initial=self.looks[0], step=self.step, max=self.max_seeds, policy=self.policy,
                      batch=self.batch, budget=self.budget)
        keys = POLICIES[self.policy] + (('policy',) if self.budgeted else ())
        return {key: values[key] for key in keys}

    def next_seeds(self, stage: int) -> int | None:
        """The seeds a source gets at the stage after `stage` (every source); None after the last."""
        self.check_stage(stage)
        return self.looks[stage] if stage < len(self.looks) else None

    def option(self, stage: int, results_dir: str) -> str:
        """The analysis' options for the look after `stage` (`python -m analysis stage`): the plan, as the design
        states it, and the stage; a budgeted design's cost table and the look before (its batch may have been the
        last)."""
        options = f"--seeds {shlex.quote(json.dumps(self.spec, separators=(',', ':')))} --stage {stage}"
        if self.budgeted:
            options += f' --costs {shlex.quote(f"{results_dir}/{COSTS_FILE}")}'
            options += f' --previous {shlex.quote(look_file(results_dir, stage - 1))}' if stage > 1 else ''
        return options


def seed_plan(config: dict) -> SeedPlan:
    """The design's SeedPlan from its `seeds` (validated by the schema); a key its policy does not take or lacks, max
    below initial, or a budget the first stage spends, is an error of one line."""
    seeds = config['seeds']
    if isinstance(seeds, list):
        return SeedPlan(tuple(seeds), (len(seeds),), 0)
    policy = seeds.get('policy', DEFAULT_POLICY)
    if policy not in POLICIES:
        raise DesignError(f'seeds: policy {policy!r}: expected one of {", ".join(POLICIES)}')
    keys = POLICIES[policy]
    unknown = sorted(set(seeds) - set(keys) - {'policy'})
    missing = [key for key in keys if key not in seeds]
    faults = [f'{", ".join(names)}: {what}' for names, what in ((unknown, 'not a key'), (missing, 'missing')) if names]
    if faults:
        raise DesignError(f'seeds: {"; ".join(faults)} (a staged design of policy {policy!r} takes {", ".join(keys)})')
    initial, most = seeds['initial'], seeds['max']
    if most < initial:
        raise DesignError(f'seeds: max={most} is less than initial={initial}')
    if policy != DEFAULT_POLICY:
        if seeds['budget'] <= initial / FIXED_SEEDS:
            raise DesignError(f'seeds: budget={seeds["budget"]} is spent by the first stage ({initial} seeds of every '
                              f'source: {initial / FIXED_SEEDS:g} fixed designs of {FIXED_SEEDS} seeds): expected more')
        return SeedPlan(tuple(range(most)), (initial,), seeds.get('step', 0), policy, seeds['batch'], seeds['budget'])
    looks = [initial]
    while looks[-1] < most:
        looks.append(next_look(looks[-1], seeds['step'], most))
    return SeedPlan(tuple(range(most)), tuple(looks), seeds['step'], policy)


def check_budget(plan: SeedPlan, costs, names: Iterable[str], path: str) -> None:
    """A DesignError unless a budgeted plan has a cost table (costs: workflow.state.JobCosts, None where the file at
    path is missing) that prices each of these cells and experiments."""
    if not plan.budgeted:
        return
    if costs is None:
        raise DesignError(f'seeds: a budgeted design prices its batches by its cost table, and {path} does not exist '
                          '(python -m workflow.costs measures one)')
    lacking = [name for name in names if name not in costs.seconds]
    if lacking:
        raise DesignError(f'seeds: a budgeted design prices its batches by its cost table, and {path} lacks '
                          f'{", ".join(lacking)} (python -m workflow.costs measures them)')


def next_look(seeds: int, step: int, most: int) -> int:
    """The seeds per source at the look after one at `seeds`: `step` more, at most `most` (the design's max)."""
    return min(seeds + step, most)


# --- look files --------------------------------------------------------------------------------

def look_file(results_dir: str, stage: int | str) -> str:
    """Where the look after a stage is written."""
    return f'{results_dir}/stages/stage~{stage}.json'


def superseded(look: str, basis_path: str) -> bool:
    """Whether a look will be remade before it is read: the basis file is missing (about to be made) or newer."""
    return not os.path.exists(basis_path) or os.path.getmtime(basis_path) > os.path.getmtime(look)


def check_look(look: dict, path: str, basis_digest: str, names: Iterable[str]) -> dict:
    """A look, once it is known to be of this basis and to give seeds only to the design's cells and experiments; an
    error naming the look and what is wrong otherwise."""
    if look.get('basis') != basis_digest:
        raise ValueError(f'{path} was made for another design or claims (basis {look.get("basis")}, this design\'s '
                         f'{basis_digest}) and is newer than this basis: it is not read; remove it to remake it')
    foreign = [name for name in look.get('next', {}) if name not in set(names)]
    if foreign:
        raise ValueError(f'{path} names {", ".join(foreign)}: not a cell or experiment of this design')
    return look


def look_text(look: dict, basis_digest: str | None) -> str:
    """A look file's content: what the look found (stage, seeds per source, decided, open and beyond_max claims,
    `next`: the seeds each source that grows has at the next stage, {} when none does; `stop`: why no batch follows
    ('' where one does); a budgeted design's `cost_s` and `left_s`, the next batch's job-seconds and the budget's left
    before it: analysis/ledger/stages.py) and the basis it was made for."""
    return json.dumps(look if basis_digest is None else dict(look, basis=basis_digest), indent=2) + '\n'


def read_look(path: str, basis_digest: str, basis_path: str, names: Iterable[str]) -> dict:
    """An existing look file (check_look); {} for a look of another basis about to be remade (never read: its
    dependents are planned again once it is)."""
    with open(path) as file:
        look = json.load(file)
    if look.get('basis') != basis_digest and superseded(path, basis_path):
        return {}
    return check_look(look, path, basis_digest, names)


# --- the stages, from the looks made so far ------------------------------------------------------

LookOf = Callable[[int], dict]  # stage -> the look after it ({} where none is read: the design ends there)


def seeds_at_stage(plan: SeedPlan, names: Iterable[str], stage: int, look_of: LookOf) -> dict[str, int]:
    """Cell or experiment -> the seeds it has at stage `stage` (from 1): the first stage's, raised by each look's
    `next` before it; a DesignError where a look before it ended the design."""
    seeds = {name: plan.looks[0] for name in names}
    for done in range(1, stage):
        planned = look_of(done).get('next')
        if not planned:
            raise DesignError(f'stage {stage} is not planned: the design ended at stage {done}')
        seeds.update(planned)
    return seeds


def final_stage(plan: SeedPlan, look_of: LookOf) -> int:
    """The stage that ends the design: the first whose look plans nothing more (a fixed design: 1)."""
    stage = 1
    while plan.staged and look_of(stage).get('next'):
        stage += 1
    return stage


def added_runs(plan: SeedPlan, seeds: dict[str, int], before: dict[str, int]) -> dict[str, list[int]]:
    """The seeds each source gains at a stage (its seeds there against the stage before's); sources that gain none
    left out."""
    return {name: list(plan.seeds[before.get(name, 0):n]) for name, n in seeds.items() if n != before.get(name, 0)}


def stage_summary(plan: SeedPlan, stage: int, added: dict[str, list[int]], seeds: dict[str, int],
                  cells: dict[str, dict], to_make: list[tuple[str, int]], look: dict) -> str:
    """What a stage adds, as the workflow logs it (a dry run shows it): seeds, the seeds each source has there; cells:
    the design's (name -> values); to_make: the runs to make (name, seed); look: the look that planned the stage
    ({} for the first), whose batch's job-seconds a budgeted design states. What the runs to make cost follows the job
    stats (planned_cost)."""
    named = (lambda name: f'{name} ({seeds[name]})') if plan.budgeted else str  # a budgeted batch: each its own
    grown_cells = [named(name) for name in added if name in cells]
    grown_experiments = [named(name) for name in added if name not in cells]
    priced = (f'\n  the batch: {look["cost_s"]:,.0f} job-seconds by the cost table, {look["left_s"]:,.0f} of the '
              f'budget left before it' + (' (the last: the budget is spent)' if look['stop'] else '')
              if 'cost_s' in look else '')
    return (f'stage {stage} of at most {plan.stages}: {len(grown_cells)} cells and {len(grown_experiments)} '
            f'experiments to {seed_span(seeds[name] for name in added)} seeds, {sum(map(len, added.values()))} runs '
            f'added, {len(to_make)} to make (the others are published or here)\n  cells: '
            + (', '.join(grown_cells) or 'none') + '\n  experiments: ' + (', '.join(grown_experiments) or 'none')
            + priced)


def seed_span(counts: Iterable[int]) -> str:
    """Seed counts as a span: '3', or '3 to 7' (the fewest and the most)."""
    counts = sorted(counts)
    return f'{counts[0]}' if counts[0] == counts[-1] else f'{counts[0]} to {counts[-1]}'


def planned_cost(runs: list[tuple[str, int]], critics: int, seconds: dict[str, list[float]],
                 made_on: Iterable[str] = (), costs=None) -> str:
    """The runs a workflow plans and what they cost, one line (a dry run's job stats end with it): runs, (name, seed),
    and the warmed critics it plans, priced by the design's cost table where it has one (costs:
    workflow.state.job_costs): each run its cell's or experiment's CPU seconds, each critic the table's; otherwise each
    run at the median of the wall times the records hold for its name (seconds: state.recorded_seconds), on the CPUs
    that made them (made_on), whatever else loaded those machines."""
    if not runs:
        return 'no run planned'
    if costs is None:
        timed, critics_s = {name: statistics.median(times) for name, times in seconds.items() if times}, 0.0
        head, machines = f'{len(runs)} runs planned', sorted(set(made_on))
        how = ('s at the median wall time the records hold for each cell and experiment'
               + (f' (made on {"; ".join(machines)})' if machines else ''))
        lacking, after = 'the records hold no run of', '; no cost table (python -m workflow.costs measures one)'
    else:
        timed, critics_s = costs.seconds, critics * costs.critic_s
        head, how = f'{len(runs)} runs and {critics} warmed critics planned', f'CPU s of jobs by {costs}'
        lacking, after = 'the cost table lacks', ''
    untimed = [name for name, _ in runs if name not in timed]
    lacked = f'{lacking} {", ".join(sorted(set(untimed)))}'
    if len(untimed) == len(runs) and not critics_s:
        return f'{head}, none priced: {lacked}{after}'
    estimate = sum(timed[name] for name, _ in runs if name in timed) + critics_s
    uncounted = f'; {len(untimed)} runs not counted: {lacked}' if untimed else ''
    return f'{head}: about {estimate:,.0f} {how}{uncounted}{after}'
