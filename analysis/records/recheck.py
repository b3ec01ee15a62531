"""The promise that every published run reruns bit for bit on another x86-64 machine with AVX2, of any vendor at
this numerics version (agentrl/numerics/__init__.py), checked: a seeded sample of a design's published runs (trainer
cells and chapter experiments both, where the records hold both) made again from nothing, here, and compared with their
records exactly.

    python -m analysis.records.recheck [--configfile config/config.yaml] [--sample 4] [--seed 0] [--runs NAME:SEED ...]

Snakemake makes the runs as the workflow does (this checkout's Snakefile and default profile, one job at a time: the
cell's config file, the base agent, the seed's warmed critic, then `python -m agentrl train` or `experiment`) in a
scratch folder whose results hold no records, so every run is made; of the design's results folder only its records are
read, and nothing is written there. Each run directory is read as the analysis reads one (analysis.records.load) and
compared with the records: its numerics version, summary and tables, float equality with NaN equal to NaN, the wall
times (agentrl.numerics.TIMING) left out. One row a run: where the records say it was made, where it was rerun (the CPU
agentrl records), identical or the first table, column and row that differs, and whether the two CPUs are of one
vendor (a rerun on another vendor's CPU checks the promise across vendors); exit status 1 if any run differs. A run
the records lack, or one made at another numerics version than this code's, is refused before anything runs.
(It lives in analysis, not workflow, because it reads runs as the analysis does: the workflow imports no analysis.)
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from agentrl.numerics import NUMERICS_VERSION, TIMING
from workflow.design import REPO, Cell, expand_design, load_design
from workflow.faults import OneLineParser
from workflow.plan import DesignError
from workflow.state import published, record_rows, run_file

from ..text import to_markdown
from .load import Runs, load_runs
from .records import load_records

SCRATCH_RESULTS = 'results'  # the reruns' results_dir, inside the scratch folder
PROFILE = REPO / 'workflow' / 'profiles' / 'default'
KINDS = ('train', 'experiment')  # the order in which the sample's kinds take turns
RUN_COLUMNS = ['kind', 'name', 'seed', 'numerics_version']  # what identifies a run and the numerics that made it


@dataclass(frozen=True, order=True)
class Run:
    """One run of a design: a trainer cell's ('train') or a chapter experiment's ('experiment'), at one seed."""
    kind: str
    name: str
    seed: int

    def __str__(self) -> str:
        return f'{self.name}:{self.seed}'


# --- which runs: the design's published runs, a seeded sample of them or the ones named ---------

def held_runs(rows: list[dict], cells: dict[str, Cell], experiments: Iterable[str]) -> dict[Run, int]:
    """The design's runs its records hold (rows: workflow.state.record_rows) -> the numerics version each was made at
    (the latest where the records hold a run at two)."""
    held = {}
    for version in sorted({int(row['numerics_version']) for row in rows}):
        for name, seeds in published(rows, cells, experiments, version).items():
            held.update({Run('train' if name in cells else 'experiment', name, seed): version for seed in seeds})
    return held


def sample(runs: Iterable[Run], count: int, rng: random.Random) -> list[Run]:
    """count runs drawn without replacement, the kinds taking turns (KINDS) so that a sample of two or more holds
    both where both exist; sorted."""
    runs = sorted(runs)
    pools = [rng.sample(group, len(group)) for group in ([r for r in runs if r.kind == kind] for kind in KINDS)]
    turns = [pool[i] for i in range(max(map(len, pools))) for pool in pools if i < len(pool)]
    return sorted(turns[:count])


def named_runs(specs: list[tuple[str, int]], held: dict[Run, int]) -> list[Run]:
    """The held runs that NAME:SEED specs name; a ValueError naming the first the records do not hold."""
    by_key = {(run.name, run.seed): run for run in held}
    for name, seed in specs:
        if (name, seed) not in by_key:
            raise ValueError(f'{name}:{seed} is not a run of the design that its records hold')
    return sorted({by_key[spec] for spec in specs})


def refuse_other_versions(runs: Iterable[Run], held: dict[Run, int]) -> None:
    """A ValueError naming the first run made at another numerics version than this code's: it cannot rerun the
    same."""
    for run in sorted(runs):
        if held[run] != NUMERICS_VERSION:
            raise ValueError(f'{run} was made at numerics version {held[run]}, this code is at version '
                             f'{NUMERICS_VERSION}: only runs of its own version rerun bit for bit '
                             '(agentrl/numerics/__init__.py)')


def choose(held: dict[Run, int], specs: list[tuple[str, int]] | None, count: int, rng: random.Random) -> list[Run]:
    """The runs to rerun: those specs name, else a sample of count. A ValueError where the records hold no run of the
    design or lack one named, or where a run to rerun (for a sample: any run the records hold) was made at another
    numerics version."""
    if not held:
        raise ValueError('its records hold no run of the design')
    if specs:
        runs = named_runs(specs, held)
        refuse_other_versions(runs, held)
        return runs
    refuse_other_versions(held, held)
    return sample(held, count, rng)


def run_spec(text: str) -> tuple[str, int]:
    """A --runs value, NAME:SEED, as (name, seed)."""
    name, _, seed = text.rpartition(':')
    if not name or not seed.isdigit():
        raise argparse.ArgumentTypeError(f'{text!r}: expected NAME:SEED (a cell or experiment, a seed)')
    return name, int(seed)


# --- the comparison: a run's numbers, exactly --------------------------------------------------

def numbers(runs: Runs) -> dict[str, pd.DataFrame]:
    """A run's numbers by table: 'run' (kind, name, seed, numerics version), 'summary' and each CSV table, the wall
    times (TIMING) left out; rows in the order the run wrote them."""
    frames = {'run': runs.runs[RUN_COLUMNS], 'summary': runs.summaries[~runs.summaries['metric'].isin(TIMING)],
              **{name: frame.drop(columns=[c for c in frame if c in TIMING]) for name, frame in runs.tables.items()}}
    return {name: frame.reset_index(drop=True) for name, frame in frames.items()}


def first_difference(made: pd.DataFrame, again: pd.DataFrame) -> str | None:
    """Where a rerun's frame first differs from the records' (row by row, then column by column), or None: values equal
    as floats, NaN equal to NaN, a column one frame lacks NaN in it (as the records store a run without it). A row of
    a summary is named by its metric too."""
    if len(made) != len(again):
        return f'{len(made)} rows in the records, {len(again)} in the rerun'
    columns = list(dict.fromkeys([*made.columns, *again.columns]))
    a, b = (frame.reindex(columns=columns).astype(object).to_numpy() for frame in (made, again))
    missing = pd.isna(a)
    differ = (missing != pd.isna(b)) | (~missing & (a != b))
    if not differ.any():
        return None
    row, column = np.argwhere(differ)[0]
    name = f' (metric {a[row, columns.index("metric")]})' if 'metric' in columns and columns[column] != 'metric' else ''
    return (f'column {columns[column]}, row {row}{name}: {a[row, column]!r} in the records, {b[row, column]!r} in the '
            'rerun')


def difference(made: Runs, again: Runs) -> str | None:
    """The first table, column and row where a rerun's numbers (numbers()) differ from its records', or None."""
    made, again = numbers(made), numbers(again)
    for table in dict.fromkeys([*made, *again]):
        found = first_difference(made.get(table, pd.DataFrame()), again.get(table, pd.DataFrame()))
        if found:
            return f'{table}: {found}'
    return None


# --- the reruns: Snakemake in a scratch folder ---------------------------------------------------

def rerun(configfile: Path, runs: list[Run], workdir: Path) -> list[Path]:
    """Make the runs in workdir as the workflow makes them (its output on stderr); their run.json files. SystemExit
    where Snakemake fails."""
    targets = [run_file(SCRATCH_RESULTS, run.name, run.seed, run.kind == 'train') for run in runs]
    command = [sys.executable, '-m', 'snakemake', '--snakefile', str(REPO / 'Snakefile'), '--directory', str(workdir),
               '--configfile', str(configfile.resolve()), '--config', f'results_dir={SCRATCH_RESULTS}',
               '--profile', str(PROFILE), '--cores', '1', *targets]
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get('PATH', '')])  # jobs call `python`
    done = subprocess.run(command, cwd=REPO, stdout=sys.stderr, env={**os.environ, 'PATH': path,
                                                                     'PYTHONPATH': str(REPO)})
    if done.returncode:
        raise SystemExit(f'python -m analysis.records.recheck: error: Snakemake failed (exit status {done.returncode}) making '
                         f'{", ".join(map(str, runs))}; its output is above')
    return [workdir / target for target in targets]


def compare(run: Run, records: Path, run_json: Path) -> dict:
    """One row of the report: the run, where it was made and rerun, identical or its first difference."""
    made, again = load_records(records, {run.name: [run.seed]}), load_runs(run_json)
    found = difference(made, again)
    return {'kind': run.kind, 'name': run.name, 'seed': run.seed, 'made on': made.runs['cpu'].iloc[0],
            'rerun on': again.runs['cpu'].iloc[0], 'identical': 'no' if found else 'yes',
            'first difference': found or '',
            'same vendor': 'yes' if made.runs['cpu_vendor'].iloc[0] == again.runs['cpu_vendor'].iloc[0] else 'no'}


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog='python -m analysis.records.recheck', description=__doc__.split('\n\n')[0])
    parser.add_argument('--configfile', type=Path, default=Path('config/config.yaml'),
                        help='the design whose published runs to rerun (default: %(default)s)')
    parser.add_argument('--sample', type=int, default=4, help='how many runs to draw (default: %(default)s)')
    parser.add_argument('--seed', type=int, default=0, help="the sample's seed (default: %(default)s)")
    parser.add_argument('--runs', nargs='+', type=run_spec, metavar='NAME:SEED', help='these runs, not a sample')
    parser.add_argument('--workdir', type=Path, help='the scratch folder, kept (default: a temporary one, removed)')
    args = parser.parse_args(argv)
    if args.sample < 1:
        parser.error(f'--sample {args.sample}: expected at least 1 run')
    if args.workdir and args.workdir.exists() and any(args.workdir.iterdir()):
        parser.error(f'--workdir {args.workdir}: not empty (every run is made from nothing there)')
    try:
        design = load_design(args.configfile)
    except DesignError as error:
        parser.error(str(error))
    records = Path(design['results_dir']) / 'records'
    held = held_runs(record_rows(records), expand_design(design), design['experiments'])
    try:
        runs = choose(held, args.runs, args.sample, random.Random(args.seed))
    except ValueError as error:
        parser.error(f'{args.configfile}, {records}: {error}')
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix='recheck-') as scratch:
        workdir = args.workdir or Path(scratch)
        rows = [compare(run, records, path) for run, path in zip(runs, rerun(args.configfile, runs, workdir))]
    print(to_markdown(pd.DataFrame(rows)), end='')
    same, foreign = sum(row['identical'] == 'yes' for row in rows), sum(row['same vendor'] == 'no' for row in rows)
    across = f"; {foreign} of them made on another vendor's CPU" if foreign else ''
    print(f'{same} of {len(rows)} runs identical to their records; made again and compared in '
          f'{time.perf_counter() - start:.0f} s{across}')
    return 0 if same == len(rows) else 1


if __name__ == '__main__':
    sys.exit(main())
