"""The seed plan of a design and its stage looks: which seeds each cell and experiment has at each stage, what a look
file holds, and what the workflow logs and passes to a look. The rule files (rules/stages.smk) call it through thin
input functions.

A fixed design (a list of seeds) is one stage: every cell and experiment at every seed. A staged design
({initial, step, max}) runs stage 1 at seeds 0 to initial - 1; after each stage a look (`python -m analysis stage`,
analysis/ledger/stages.py) writes `stages/stage~K.json`, whose `next` names the cells and experiments that feed a claim
still open and within reach of max, and the seeds they get at stage K + 1 (`{}`: the design is done). The stages are a
plan and a budget, not part of the ledger's promise: the ledger reads every seed there is. A look belongs to a basis
(workflow/state.py): one of another basis is never read.

Pure Python: imports neither Snakemake, torch nor pandas, so it is unit-tested without starting a workflow.
"""
from __future__ import annotations

import json
import os
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass


class DesignError(ValueError):
    """A design the schema cannot rule out but the trainer or the plan cannot run (names the cell and the values)."""


STAGED = ('initial', 'step', 'max')  # the keys of a staged design's seeds


@dataclass(frozen=True)
class SeedPlan:
    """The seeds of a design. Fixed (a list): one stage, every cell and experiment at every seed. Staged
    ({initial, step, max}): stage k gives the cells and experiments that feed a claim still open the seeds 0 to
    looks[k-1] - 1; the stages' seeds run initial, initial + step, ... up to max (the last stage's is max)."""
    seeds: tuple[int, ...]  # every seed a cell or experiment can get, in order
    looks: tuple[int, ...]  # seeds per source at each stage's look
    step: int  # 0 for a fixed design

    @property
    def staged(self) -> bool:
        return self.step > 0

    @property
    def max_seeds(self) -> int:
        return self.looks[-1]

    def check_stage(self, stage: int) -> None:
        """A DesignError unless stage (from 1) is a stage of this design."""
        if not 1 <= stage <= len(self.looks):
            raise DesignError(f'stage {stage} is not a stage of this design: it has stages 1 to {len(self.looks)}')

    def seeds_at(self, stage: int) -> list[int]:
        """The seeds a source that reaches stage `stage` (from 1) has."""
        self.check_stage(stage)
        return list(self.seeds[:self.looks[stage - 1]])

    def most_jobs(self, sources: int) -> int:
        """The most run jobs the design can take with this many cells and experiments (every source to max)."""
        return sources * self.max_seeds

    @property
    def spec(self) -> list[int] | dict[str, int]:
        """The design's `seeds` value this plan comes from: seed_plan({'seeds': plan.spec}) == plan."""
        if not self.staged:
            return list(self.seeds)
        return dict(initial=self.looks[0], step=self.step, max=self.max_seeds)

    def next_seeds(self, stage: int) -> int | None:
        """The seeds a source gets at the stage after `stage`; None after the last."""
        self.check_stage(stage)
        return self.looks[stage] if stage < len(self.looks) else None

    def option(self, stage: int) -> str:
        """The analysis' options for the look after `stage` (`python -m analysis stage`): the plan, as the design
        states it, and the stage."""
        return f"--seeds '{json.dumps(self.spec, separators=(',', ':'))}' --stage {stage}"


def seed_plan(config: dict) -> SeedPlan:
    """The design's SeedPlan from its `seeds` (validated by the schema); max below initial, or a key a staged design
    does not have, is an error."""
    seeds = config['seeds']
    if isinstance(seeds, list):
        return SeedPlan(tuple(seeds), (len(seeds),), 0)
    unknown = sorted(set(seeds) - set(STAGED))
    if unknown:
        raise DesignError(f'seeds: {", ".join(unknown)}: not a key of a staged design (expected {", ".join(STAGED)})')
    initial, step, most = seeds['initial'], seeds['step'], seeds['max']
    if most < initial:
        raise DesignError(f'seeds: max={most} is less than initial={initial}')
    looks = [initial]
    while looks[-1] < most:
        looks.append(next_look(looks[-1], step, most))
    return SeedPlan(tuple(range(most)), tuple(looks), step)


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
    """A look's plan of the next stage, once the look is known to be of this basis and to name only the design's
    cells and experiments; an error naming the look and what is wrong otherwise."""
    if look.get('basis') != basis_digest:
        raise ValueError(f'{path} was made for another design or claims (basis {look.get("basis")}, this design\'s '
                         f'{basis_digest}) and is newer than this basis: it is not read; remove it to remake it')
    plan = look.get('next', {})
    foreign = [name for name in plan.get('sources', []) if name not in set(names)]
    if foreign:
        raise ValueError(f'{path} names {", ".join(foreign)}: not a cell or experiment of this design')
    return plan


def look_text(look: dict, basis_digest: str | None) -> str:
    """A look file's content: what the look found (stage, seeds, decided, open and beyond_max claims, and `next`, the
    next stage's {seeds, sources} or {}: analysis/ledger/stages.py) and the basis it was made for."""
    return json.dumps(look if basis_digest is None else dict(look, basis=basis_digest), indent=2) + '\n'


def read_next(path: str, basis_digest: str, basis_path: str, names: Iterable[str]) -> dict:
    """The next stage's plan ({seeds, sources}; {} when the design is done) from an existing look file; {} for a look
    of another basis about to be remade (never read: its dependents are planned again once it is)."""
    with open(path) as file:
        look = json.load(file)
    if look.get('basis') != basis_digest and superseded(path, basis_path):
        return {}
    return check_look(look, path, basis_digest, names)


# --- the stages, from the looks made so far ------------------------------------------------------

NextOf = Callable[[int], dict]  # stage -> the plan its look wrote ({} when the design ends there)


def seeds_at_stage(plan: SeedPlan, names: Iterable[str], stage: int, next_of: NextOf) -> dict[str, int]:
    """Cell or experiment -> the seeds it has at stage `stage` (from 1): the first stage's, raised by each look's
    plan before it; a DesignError where a look before it ended the design."""
    seeds = {name: plan.looks[0] for name in names}
    for done in range(1, stage):
        planned = next_of(done)
        if not planned:
            raise DesignError(f'stage {stage} is not planned: the design ended at stage {done}')
        seeds.update({name: planned['seeds'] for name in planned['sources']})
    return seeds


def final_stage(plan: SeedPlan, next_of: NextOf) -> int:
    """The stage that ends the design: the first whose look plans nothing more (a fixed design: 1)."""
    stage = 1
    while plan.staged and next_of(stage):
        stage += 1
    return stage


def added_runs(plan: SeedPlan, seeds: dict[str, int], before: dict[str, int]) -> dict[str, list[int]]:
    """The seeds each source gains at a stage (its seeds there against the stage before's); sources that gain none
    left out."""
    return {name: list(plan.seeds[before.get(name, 0):n]) for name, n in seeds.items() if n != before.get(name, 0)}


def stage_summary(plan: SeedPlan, stage: int, added: dict[str, list[int]], cells: dict[str, dict],
                  to_make: list[tuple[str, int]]) -> str:
    """What a stage adds, as the workflow logs it (a dry run shows it): cells: the design's (name -> values); to_make:
    the runs to make (name, seed). What they cost follows the job stats (planned_cost)."""
    grown_cells = [name for name in added if name in cells]
    grown_experiments = [name for name in added if name not in cells]
    return (f'stage {stage} of at most {len(plan.looks)}: {len(grown_cells)} cells and {len(grown_experiments)} '
            f'experiments to {plan.looks[stage - 1]} seeds, {sum(map(len, added.values()))} runs added, '
            f'{len(to_make)} to make (the others are published or here)\n  cells: '
            + (', '.join(grown_cells) or 'none') + '\n  experiments: ' + (', '.join(grown_experiments) or 'none'))


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
