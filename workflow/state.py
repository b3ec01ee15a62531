"""The state a design continues from: the runs its published records hold, and the basis its looks are made for.

Records are the state. A run of the design (a cell or experiment at a seed) is reused from the records
(`<results_dir>/records/runs.parquet`) when they hold it for the same cell config, seed
and numerics version (agentrl/numerics/__init__.py; a record without one is UNSTATED_VERSION, 1); a run directory of
this working copy, where there is one, is read instead; any other run is made by its job. A look (workflow/plan.py)
belongs to its basis: the design's cells and configs, experiments, seed plan, the claims files, the code that decides
the claims (DECISION_MODULES, found from the look's imports) and the numerics version; the basis file's name holds its
digest, so a new basis is a missing file and every look and the aggregation after it are remade. A look of another
basis, or one naming a cell or experiment the design does not have, is never read (workflow/plan.py reads them).
A design's runs are priced by its cost table (`<results_dir>/costs.csv`, workflow/costs.py measures it) where it has
one: CPU seconds of one job of each source, which the dry run's estimate reads here; without one, by the wall times its
records hold.

The Snakefile imports it: it imports neither torch, pandas nor analysis (the records' run table through pyarrow).
"""
from __future__ import annotations

import ast
import csv
import hashlib
import json
import os
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from agentrl.files import verify_records, write_text
from agentrl.numerics import UNSTATED_VERSION
from workflow.design import Cell, expand_design, recorded
from workflow.faults import not_in_design
from workflow.plan import COSTS_FILE, DesignError, seed_plan

ANALYSIS = Path(__file__).resolve().parents[1] / 'analysis'
# what a look (python -m analysis stage) reads runs and decides with
LOOK_ENTRY = ('records.load', 'records.records', 'ledger.stages')


def analysis_file(module: str) -> Path:
    """An analysis module's source file: 'ledger.claims' -> analysis/ledger/claims.py, 'ledger' -> its __init__.py."""
    path = ANALYSIS.joinpath(*module.split('.'))
    return path / '__init__.py' if path.is_dir() else path.with_suffix('.py')


def analysis_imports(module: str) -> set[str]:
    """The analysis modules one analysis module imports itself (`from .x import`, `from ..x.y import`, `from . import
    x`, `from analysis.x import`), from its source, with the packages loaded on the way (dotted names below analysis):
    the workflow never imports analysis."""
    path = analysis_file(module)
    package = module.split('.') if path.name == '__init__.py' else module.split('.')[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level and node.level <= len(package) + 1:
            base = package[:len(package) - node.level + 1] + (node.module.split('.') if node.module else [])
        elif not node.level and node.module and node.module.split('.')[0] == 'analysis':
            base = node.module.split('.')[1:]
        else:
            continue
        for parts in (base, *(base + [alias.name] for alias in node.names)):
            found |= {'.'.join(parts[:i]) for i in range(1, len(parts) + 1)}
    return {name for name in found if analysis_file(name).is_file()}


def decision_modules(entry: Iterable[str] = LOOK_ENTRY) -> tuple[str, ...]:
    """The analysis modules a look runs: its entry modules and everything they import, transitively; sorted."""
    found, todo = set(), list(entry)
    while todo:
        module = todo.pop()
        if module not in found:
            found.add(module)
            todo += analysis_imports(module)
    return tuple(sorted(found))


DECISION_MODULES = decision_modules()
CLAIMS_FILES = tuple(ANALYSIS / name for name in ('ledger/claims.yaml', 'ledger/chapter_values.yaml',
                                                  *(analysis_file(m).relative_to(ANALYSIS) for m in DECISION_MODULES)))
MISSING = object()  # a config field a record lacks: equal to no value


def record_rows(records: Path | str) -> list[dict]:
    """The runs the records folder holds (kind, name, seed, config: JSON, '' for an experiment, numerics_version);
    [] without records; DamagedRecords where a file of the folder is not the one written with it."""
    verify_records(records)
    path = Path(records) / 'runs.parquet'
    rows = pq.read_table(path).to_pylist() if path.is_file() else []
    return [{'numerics_version': UNSTATED_VERSION, **row} for row in rows]


def recorded_seconds(records: Path | str) -> dict[str, list[float]]:
    """Name -> the wall times (seconds) of the records' runs of that name, as their summaries state them (on the
    machines that made them); {} without records."""
    path = Path(records) / 'summaries.parquet'
    if not path.is_file():
        return {}
    table = pq.read_table(path, columns=['name', 'value'], filters=[('metric', '==', 'wall_s')]).to_pydict()
    found: dict[str, list[float]] = {}
    for name, seconds in zip(table['name'], table['value']):
        found.setdefault(name, []).append(seconds)
    return found


COST_COLUMNS = ('source', 'kind', 'cpu_s', 'wall_s', 'method', 'fixed_s', 'per_iteration_s', 'cpu', 'numerics_version',
                'measured')
COST_KINDS = ('critic', 'cell', 'experiment')  # the warmed critic: one job per seed, shared by its PPO cells


@dataclass(frozen=True)
class JobCosts:
    """A design's cost table: the CPU seconds of one job (one seed) of each cell and experiment and of one warmed
    critic, and where they were measured (CPUs, dates, numerics versions: each '; '-joined where rows differ)."""
    path: str
    seconds: dict[str, float]  # cell or experiment -> CPU seconds of one job
    critic_s: float
    cpu: str
    measured: str
    numerics_version: str

    def __str__(self) -> str:
        return (f'the cost table {self.path} (CPU seconds of one job, measured {self.measured} on {self.cpu}, numerics '
                f'version {self.numerics_version})')


def job_costs(results_dir: Path | str) -> JobCosts | None:
    """The design's cost table (`<results_dir>/costs.csv`: cost_table); None where there is none."""
    path = Path(results_dir) / COSTS_FILE
    return cost_table(path) if path.is_file() else None


def cost_table(path: Path | str) -> JobCosts:
    """A cost table's file (COST_COLUMNS); a ValueError of one line naming the file, and the line, where it is not
    one."""
    with open(path, newline='') as file:
        reader = csv.DictReader(file)
        if tuple(reader.fieldnames or ()) != COST_COLUMNS:
            raise ValueError(f'{path}: columns {",".join(reader.fieldnames or [])}: expected {",".join(COST_COLUMNS)}')
        rows = list(reader)
    seconds, critics, seen = {}, [], set()
    for line, row in enumerate(rows, start=2):
        if None in row or None in row.values():  # more fields than columns, or fewer
            raise ValueError(f'{path}: line {line}: expected {len(COST_COLUMNS)} fields')
        try:
            cpu_s = float(row['cpu_s'])
        except (TypeError, ValueError):
            raise ValueError(f'{path}: line {line}: cpu_s {row["cpu_s"]!r} is not a number of seconds') from None
        if row['kind'] not in COST_KINDS or not cpu_s >= 0 or row['source'] in seen:
            raise ValueError(f'{path}: line {line}: {row["source"]!r}, {row["kind"]!r}, {row["cpu_s"]}: expected a '
                             f'source not named before, a kind of {", ".join(COST_KINDS)} and seconds at least 0')
        seen.add(row['source'])
        if row['kind'] == 'critic':
            critics.append(cpu_s)
        else:
            seconds[row['source']] = cpu_s
    if len(critics) != 1:
        raise ValueError(f'{path}: {len(critics)} rows of kind critic: expected one')
    stated = {column: '; '.join(sorted({row[column] for row in rows})) for column in COST_COLUMNS[-3:]}
    return JobCosts(str(path), seconds, critics[0], **stated)


def unreadable_runs(results_dir: Path | str) -> list[Path]:
    """The run.json files of results_dir's run directories (runs/, experiments/) that cannot be read as a run: not
    JSON, or not an object with a summary and provenance (a file damaged after its job wrote it)."""
    found = []
    for path in sorted(Path(results_dir).glob('*/*/seed~*/run.json')):
        if path.parts[-4] not in ('runs', 'experiments'):
            continue
        try:
            run = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            run = None
        if not (isinstance(run, dict) and {'summary', 'provenance'} <= set(run)):
            found.append(path)
    return found


def set_aside(run_json: Path) -> Path:
    """Move an unreadable run.json to run.json.unreadable beside it, so that its run counts as missing (its job
    runs again and replaces the whole directory); the new path."""
    aside = run_json.with_name(f'{run_json.name}.unreadable')
    os.replace(run_json, aside)
    return aside


def published(rows: list[dict], cells: dict[str, Cell], experiments: Iterable[str],
              numerics: int) -> dict[str, set[int]]:
    """Name -> the seeds the records hold for it at this numerics version: a cell's runs are those whose config holds
    the cell's values (its config file), whatever name the record gives them, so renamed cells rerun nothing; an
    experiment's by name. A record of another config, experiment or version is not reused."""
    found: dict[str, set[int]] = {}
    experiments, wanted = set(experiments), {name: recorded(cell.values) for name, cell in cells.items()}
    for row in rows:
        if row['numerics_version'] != numerics:
            continue
        if row['kind'] == 'train':
            config = recorded(json.loads(row['config'])) if row['config'] else {}
            name = next((name for name, values in wanted.items()
                         if all(config.get(k, MISSING) == v for k, v in values.items())), None)
        else:
            name = row['name'] if row['kind'] == 'experiment' and row['name'] in experiments else None
        if name is not None:
            found.setdefault(name, set()).add(int(row['seed']))
    return found


def run_file(results_dir: str, name: str, seed: int, cell: bool) -> str:
    """The run.json of a cell's (cell True) or an experiment's run."""
    return f"{results_dir}/{'runs' if cell else 'experiments'}/{name}/seed~{seed}/run.json"


def run_of(path: str) -> tuple[str, int]:
    """The (name, seed) of a run.json path (run_file's)."""
    *_, name, seed, _ = Path(path).parts
    return name, int(seed.removeprefix('seed~'))


def seeds_present(results_dir: str, name: str, cell: bool) -> set[int]:
    """The seeds of a cell's (cell True) or an experiment's run directories here that hold a run.json, whatever the
    design's plan: a seed made by the more-seeds verb or copied from another machine."""
    folder = Path(results_dir) / ('runs' if cell else 'experiments') / name
    seeds = (path.parent.name.removeprefix('seed~') for path in folder.glob('seed~*/run.json'))
    return {int(seed) for seed in seeds if seed.isdigit()}


def more_seeds(name: str, count: int, cells: Iterable[str], experiments: Iterable[str], held: dict[str, set[int]],
               results_dir: str) -> list[str]:
    """The run.json targets that give one cell or experiment the seeds 0 to count - 1: those the records do not hold
    (held: published()). A DesignError names an unknown cell or experiment, or a count not above the seeds the
    records hold for it."""
    cells, experiments = list(cells), list(experiments)
    if name not in cells and name not in experiments:
        raise DesignError(not_in_design('cell or experiment', name, [*cells, *experiments]))
    have = held.get(name, set())
    if count <= len(have):
        raise DesignError(f'{name}: {count} seeds asked for, the records hold {len(have)}: expected more than '
                          f'{len(have)}')
    return [run_file(results_dir, name, seed, name in cells) for seed in range(count) if seed not in have]


def split_runs(wanted: dict[str, list[int]], path: Callable[[str, int], str],
               reused: dict[str, set[int]]) -> tuple[list[str], dict[str, list[int]]]:
    """Where each wanted run (name -> seeds) is read from: (run.json paths: a run directory of this working copy, or a
    run still to make; name -> seeds taken from the records), by name and seed. A run directory wins over the
    records."""
    files, records = [], {}
    for name, seeds in sorted(wanted.items()):  # in one order, however the design lists its cells
        for seed in sorted(seeds):
            if seed in reused.get(name, ()) and not os.path.exists(path(name, seed)):
                records.setdefault(name, []).append(seed)
            else:
                files.append(path(name, seed))
    return files, records


def sources_option(files: list[str], records: Path | str, reused: dict[str, list[int]]) -> str:
    """The analysis' options that read these runs: the run.json files, and the seeds of each name from the records."""
    option = ' '.join(['--run-files', *map(shlex.quote, files)]) if files else ''
    if reused:
        specs = ' '.join(shlex.quote(f"{name}:{','.join(map(str, seeds))}") for name, seeds in reused.items())
        option += f'{" " if option else ""}--records {shlex.quote(str(records))} --reuse {specs}'
    return option


def claims_key(path: Path | str) -> str:
    """A claims file's key in the basis: its path below analysis/ (ledger/claims.yaml, records/load.py), unique; a file
    elsewhere by its name."""
    path = Path(path).resolve()
    return path.relative_to(ANALYSIS).as_posix() if path.is_relative_to(ANALYSIS) else path.name


def basis(config: dict, numerics: int, claims_files: Iterable[Path] = CLAIMS_FILES) -> dict:
    """What a look of a (validated) design depends on besides its runs' numbers: the cells' configs, the experiments,
    the seed plan, the claims files and the code that decides them (their SHA-256), the numerics version and a
    budgeted design's cost table (its SHA-256)."""
    plan = seed_plan(config)
    value = dict(cells={name: cell.values for name, cell in expand_design(config).items()},
                 experiments=list(config.get('experiments', [])),
                 seeds=dict(seeds=list(plan.seeds), looks=list(plan.looks), step=plan.step),
                 numerics_version=numerics,
                 claims={claims_key(f): hashlib.sha256(Path(f).read_bytes()).hexdigest() for f in claims_files})
    if plan.budgeted:  # its batches are priced by its policy and cost table
        costs = Path(config['results_dir']) / COSTS_FILE
        value['seeds'] = dict(value['seeds'], plan=plan.spec)
        value['costs'] = hashlib.sha256(costs.read_bytes()).hexdigest() if costs.is_file() else None
    return value


def basis_file(results_dir: str, value: dict) -> str:
    """Where the basis file of a design's looks lives: its digest in its name, so a new basis is a missing file."""
    return f'{results_dir}/configs/basis~{digest(value)}.json'


def digest(value: dict) -> str:
    """A short SHA-256 of a JSON value (keys sorted): the name of a basis."""
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def write_basis(path: Path | str, value: dict) -> Path:
    """The basis file (JSON), its sibling basis files of other digests removed: a basis come back to is remade, and
    so are its looks."""
    path = Path(path)
    for other in path.parent.glob('basis~*.json'):
        if other != path:
            other.unlink()
    return write_text(path, json.dumps(value, indent=2, sort_keys=True) + '\n')
