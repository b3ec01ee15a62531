"""A design's cost table, measured here: `python -m workflow.costs --configfile config/config.yaml` writes
`<results_dir>/costs.csv`, the CPU seconds of one job (one seed) of each of its sources, which the dry run prices its
runs by (workflow/state.py reads it).

A source is a cell, an experiment or the warmed critic (one job per seed, shared by the seed's PPO cells). Each job
runs as the workflow runs it (`python -m agentrl warm-critic | experiment | train`, from the design's base agent, a PPO
cell with the seed's warmed critic), at seed 0, in a temporary folder, one at a time. Its clock is the job process's
CPU seconds (user and system, os.wait4), which other load on the machine barely moves; its wall time, which that load
inflates, is stated beside it. An experiment and the critic are timed whole. A trainer cell (30 iterations, REINFORCE
80) is timed at two shorter lengths (short_lengths: 2 iterations and half its own), its config otherwise the same,
and priced on the line through the two at its own iterations: a fixed part (start, loading, the final evaluation,
writing) and a part per iteration.

`--check CELL ...` runs those cells whole and sets their CPU seconds beside the table's (the extrapolation's check).
`--missing` measures only the sources the table lacks (a design's new cells) and keeps its other rows as they were
measured, each with its own date.
It lives in the workflow, not in agentrl.numerics.bench, because it reads designs (agentrl imports no workflow); it
imports neither torch nor pandas (the jobs run in their own processes).
"""
from __future__ import annotations

import csv
import functools
import io
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

from agentrl.files import write_text
from agentrl.numerics import NUMERICS_VERSION, this_cpu
from workflow.design import cell_json, expand_design, load_design, shared_critic, substrate_of
from workflow.faults import OneLineParser
from workflow.plan import DesignError
from workflow.state import COST_COLUMNS, COSTS_FILE, JobCosts, job_costs

def short_lengths(iterations: int) -> tuple[int, int]:
    """The iterations a trainer cell of these iterations is timed at: 2, and half its own rounded up (at least 4).
    Apart by half the cell, so that the line carries a job's noise (its CPU seconds move by 5 to 10% with the
    machine's load) to the cell's price about twice, not the 14 times of jobs of 2 and 4 iterations."""
    return 2, max(4, -(-iterations // 2))


class Clock(NamedTuple):
    """A job's seconds: its process's CPU time (user + system) and the wall time from its start to its end."""
    cpu_s: float
    wall_s: float


Runner = Callable[[list[str]], Clock]  # a job's command -> its clock


def run_job(command: list[str]) -> Clock:
    """Run a job to its end, its output kept aside; a RuntimeError with its last lines where it fails."""
    with tempfile.TemporaryFile() as output:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)  # the child's own CPU time, its children's included
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it
        if process.returncode:
            output.seek(0)
            tail = output.read().decode(errors='replace').strip().splitlines()[-3:]
            raise RuntimeError(f'{" ".join(command)} failed (exit status {process.returncode}): ' + ' | '.join(tail))
    return Clock(usage.ru_utime + usage.ru_stime, wall)


def agentrl(*args: str) -> list[str]:
    """The command of an agentrl job, in this interpreter."""
    return [sys.executable, '-m', 'agentrl', *args]


def line_through(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    """(intercept, slope) of the line through two points (x, y)."""
    slope = (b[1] - a[1]) / (b[0] - a[0])
    return a[1] - slope * a[0], slope


class Bench:
    """A design's jobs in a folder, timed by run: its base agent exported, then the seed-0 jobs of its sources."""

    def __init__(self, design: dict, folder: Path, run: Runner = run_job):
        self.cells, self.experiments = expand_design(design), design['experiments']
        self.folder, self.run = folder, run
        base = folder / 'base_agent.pt'
        self.options = ['--seed', '0', '--base', str(base), '--substrate', substrate_of(design)]
        run(agentrl('base-agent', '--out', str(base), '--substrate', substrate_of(design)))  # once a design: unpriced
        self.critic = folder / 'critic.pt'

    def warm_critic(self) -> Clock:
        """The warmed critic's job (its file is the one every PPO cell's job then loads)."""
        config = write_text(self.folder / 'critic.json', shared_critic({n: c.values for n, c in self.cells.items()}))
        return self.run(agentrl('warm-critic', '--config', str(config), '--out', str(self.critic), *self.options))

    def experiment(self, name: str) -> Clock:
        return self.run(agentrl('experiment', name, '--out', str(self.folder / 'experiments' / name), *self.options))

    def train(self, name: str, iterations: int) -> Clock:
        """A cell's job at these iterations (its own config otherwise)."""
        values = self.cells[name].values
        config = write_text(self.folder / 'configs' / f'{name}.json', cell_json({**values, 'iterations': iterations}))
        critic = ['--critic', str(self.critic)] if values['algorithm'] == 'ppo' else []
        out = self.folder / 'runs' / name / str(iterations)
        return self.run(agentrl('train', '--config', str(config), '--out', str(out), *self.options, *critic))

    def cell_row(self, name: str) -> dict:
        """A cell's row: on the line through its jobs of short_lengths iterations, or its job timed whole where it is
        no longer than the longer of them."""
        iterations = self.cells[name].values['iterations']
        lengths = short_lengths(iterations)
        if iterations <= lengths[1]:
            return row(name, 'cell', self.train(name, iterations), 'the job, whole')
        clocks = [self.train(name, n) for n in lengths]
        cpu, wall = (line_through(*[(n, clock[i]) for n, clock in zip(lengths, clocks)]) for i in range(2))
        return row(name, 'cell', Clock(cpu[0] + cpu[1] * iterations, wall[0] + wall[1] * iterations),
                   f'the line through its jobs of {lengths[0]} and {lengths[1]} iterations, at {iterations}',
                   fixed_s=cpu[0], per_iteration_s=cpu[1])

    def rows(self, kept: Collection[str] = ()):
        """The cost table's rows, one a job measured, but where they were measured: the critic, the cells, the
        experiments; the sources in `kept` are not measured (the critic's job runs all the same: the PPO cells'
        jobs load its file)."""
        critic = self.warm_critic()
        if 'critic' not in kept:
            yield row('critic', 'critic', critic, 'the job, whole')
        for name in self.cells:
            if name not in kept:
                yield self.cell_row(name)
        for name in self.experiments:
            if name not in kept:
                yield row(name, 'experiment', self.experiment(name), 'the job, whole')

    def table(self, kept: Sequence[dict] = (),
              log: Callable[[str], None] = functools.partial(print, flush=True)) -> list[dict]:
        """The cost table (rows of COST_COLUMNS), each row logged as it is measured; `kept`: rows of a table measured
        before, taken as they are where their source is the design's (and not measured again), in the design's
        order."""
        stamp = dict(cpu=this_cpu().model, numerics_version=NUMERICS_VERSION,
                     measured=datetime.now(timezone.utc).date().isoformat())
        sources = ['critic', *self.cells, *self.experiments]
        rows = {r['source']: r for r in kept if r['source'] in sources}
        for measured in self.rows(kept=rows):
            log(said(measured))
            rows[measured['source']] = {**measured, **stamp}
        return [rows[source] for source in sources]


def row(source: str, kind: str, clock: Clock, method: str, fixed_s: float | None = None,
        per_iteration_s: float | None = None) -> dict:
    """A row of the table but where it was measured: seconds to the hundredth, none where a part does not apply."""
    seconds = dict(cpu_s=clock.cpu_s, wall_s=clock.wall_s, fixed_s=fixed_s, per_iteration_s=per_iteration_s)
    return dict(source=source, kind=kind, method=method,
                **{key: '' if value is None else round(value, 2) for key, value in seconds.items()})


def said(row: dict) -> str:
    """A row as the command prints it while it measures."""
    return f'{row["kind"]} {row["source"]}: {row["cpu_s"]:.2f} CPU s (wall {row["wall_s"]:.2f} s; {row["method"]})'


def table_text(rows: list[dict]) -> str:
    """The table as CSV (COST_COLUMNS)."""
    text = io.StringIO()
    writer = csv.DictWriter(text, COST_COLUMNS, lineterminator='\n')
    writer.writeheader()
    writer.writerows(rows)
    return text.getvalue()


def check(bench: Bench, costs: JobCosts, names: list[str], log: Callable[[str], None] = print) -> None:
    """Each named cell's job run whole, its CPU and wall seconds beside its price in the design's table."""
    bench.warm_critic()
    for name in names:
        clock = bench.train(name, bench.cells[name].values['iterations'])
        log(f'{name}: {clock.cpu_s:.2f} CPU s run whole, {costs.seconds[name]:.2f} by {costs}: ratio '
            f'{clock.cpu_s / costs.seconds[name]:.3f}; wall {clock.wall_s:.2f} s, {clock.wall_s / clock.cpu_s:.2f} x '
            'its CPU seconds')


def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(prog='python -m workflow.costs', description=__doc__.split('\n\n')[0])
    parser.add_argument('--configfile', default='config/config.yaml', help='the design (default: %(default)s)')
    parser.add_argument('--check', nargs='+', metavar='CELL', help="run these cells whole against the design's table")
    parser.add_argument('--missing', action='store_true',
                        help="measure only the sources the design's table lacks; its other rows are kept as they are, "
                             "the rows of sources the design no longer has left out")
    args = parser.parse_args(argv)
    try:
        design = load_design(args.configfile)
        cells = expand_design(design)
        costs = job_costs(design['results_dir']) if args.check or args.missing else None  # remeasured: not read
    except (DesignError, ValueError) as error:
        parser.error(str(error))
    if (args.check or args.missing) and costs is None:
        option = '--check' if args.check else '--missing'
        parser.error(f'{option}: {Path(design["results_dir"]) / COSTS_FILE} does not exist; measure it first')
    unknown = [name for name in args.check or [] if name not in costs.seconds or name not in cells]
    if unknown:
        parser.error(f'--check {" ".join(unknown)}: not a cell of {args.configfile} and its table')
    with tempfile.TemporaryDirectory(prefix='costs-') as folder:
        bench = Bench(design, Path(folder))
        if args.check:
            return check(bench, costs, args.check)
        path = Path(design['results_dir']) / COSTS_FILE
        kept = list(csv.DictReader(io.StringIO(path.read_text()))) if args.missing else []
        write_text(path, table_text(bench.table(kept)))
    print(f'{path}: {len(cells)} cells, {len(design["experiments"])} experiments and the warmed critic')


if __name__ == '__main__':
    main()
