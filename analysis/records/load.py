"""Run directories -> tidy pandas frames (design.md, section 4).

A run is a folder holding run.json, found anywhere under a root; folders whose name starts with '.'
are temporaries of an unfinished write and are skipped. Trainer runs (kind 'train') carry a config
and per-iteration/epoch/minibatch CSVs; chapter experiments (kind 'experiment') carry records.csv.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from agentrl.numerics import PROVENANCE_KEYS
from workflow.design import recorded

# where a run was made, as its run.json's provenance states it ('' where it does not): CPU model and vendor, the
# instruction set torch dispatched to, torch's version, the pinned settings (JSON) and the guarantee they give
WHERE_COLUMNS = ['cpu', 'cpu_vendor', 'cpu_capability', 'torch', 'numeric_settings', 'guarantee']
RUN_COLUMNS = ['kind', 'name', 'seed', 'numerics_version', *WHERE_COLUMNS, 'path']
TABLES = ('iterations', 'epochs', 'minibatches', 'records')
LABELS = ('table', 'row', 'metric')  # string columns of records.csv


@dataclass(frozen=True)
class Runs:
    """Everything read from run directories, every frame sorted by (name, seed)."""
    runs: pd.DataFrame  # one row per run: kind, name, seed, numerics_version, WHERE_COLUMNS, path
    configs: dict[str, dict]  # trainer cell -> its config without the seed
    summaries: pd.DataFrame  # name, seed, metric, value: numeric fields of the runs' summaries
    tables: dict[str, pd.DataFrame]  # CSV name -> rows of every run, name and seed first

    def table(self, name: str) -> pd.DataFrame:
        """One CSV table over all runs; an empty frame with name and seed columns when no run has it."""
        return self.tables.get(name, pd.DataFrame(columns=['name', 'seed']))


def find_runs(root: Path | str) -> list[Path]:
    """Run directories under root (sorted), skipping any path through a hidden folder."""
    root = Path(root)
    if not root.is_dir():
        return []
    found = (p.parent for p in root.rglob('run.json'))
    return sorted(p for p in found if not any(part.startswith('.') for part in p.relative_to(root).parts))


def read_csv(path: Path) -> pd.DataFrame:
    """A run's CSV: an empty field is NaN in a numeric column; label columns stay strings, as written."""
    try:
        columns = pd.read_csv(path, nrows=0).columns
    except pd.errors.EmptyDataError:  # a table with no records (REINFORCE runs have no epochs)
        return pd.DataFrame()
    return pd.read_csv(path, keep_default_na=False, dtype={c: str for c in LABELS if c in columns},
                       na_values={c: [''] for c in columns if c not in LABELS})


def run_directories(paths: tuple[Path | str, ...]) -> list[Path]:
    """The run directories named by paths: a run.json names its folder; any other path is a root searched for runs."""
    found = set()
    for path in map(Path, paths):
        if path.name == 'run.json':
            if not path.is_file():
                raise ValueError(f'{path} does not exist: expected the run.json of a finished run')
            found.add(path.parent)
        else:
            found.update(find_runs(path))
    return sorted(found)


def where_made(provenance: dict) -> dict[str, str]:
    """A run's WHERE_COLUMNS from its run.json's provenance: strings, the settings as sorted JSON, '' if absent."""
    settings = provenance.get('numeric_settings')
    return {**{key: str(provenance.get(key, '')) for key in WHERE_COLUMNS},
            'numeric_settings': json.dumps(settings, sort_keys=True) if settings else ''}


def load_runs(*paths: Path | str) -> Runs:
    """Read the runs named by paths: run.json files, or roots searched for runs (missing roots are empty)."""
    meta, configs, summaries, tables = [], {}, [], {name: [] for name in TABLES}
    for path in run_directories(paths):
        try:
            info = json.loads((path / 'run.json').read_text())
        except json.JSONDecodeError as error:
            raise ValueError(f'{path / "run.json"} is not valid JSON: {error}') from None
        missing = [key for key in PROVENANCE_KEYS if key not in info.get('provenance', {})]
        if missing:
            raise ValueError(f'{path / "run.json"} has no {", ".join(missing)} in its provenance: it was made without '
                             'the numeric settings of agentrl.numerics, so its numbers depend on its CPU; rerun it')
        name, seed = str(info['name']), int(info['seed'])
        meta.append(dict(kind=info.get('kind', 'train'), name=name, seed=seed, path=str(path),
                         numerics_version=int(info['provenance']['numerics_version']),
                         **where_made(info['provenance'])))
        if 'config' in info:
            configs.setdefault(name, recorded({k: v for k, v in info['config'].items() if k != 'seed'}))
        summaries += [dict(name=name, seed=seed, metric=k, value=float(v))
                      for k, v in sorted(info.get('summary', {}).items())
                      if isinstance(v, (int, float))]
        for table in TABLES:
            frame = read_csv(path / f'{table}.csv') if (path / f'{table}.csv').exists() else pd.DataFrame()
            if len(frame):
                frame.insert(0, 'seed', seed)
                frame.insert(0, 'name', name)
                tables[table].append(frame)
    runs = pd.DataFrame(meta, columns=RUN_COLUMNS).sort_values(['name', 'seed'], ignore_index=True)
    summaries = pd.DataFrame(summaries, columns=['name', 'seed', 'metric', 'value'])
    return Runs(runs=runs, configs=dict(sorted(configs.items())),
                summaries=summaries.sort_values(['name', 'seed', 'metric'], ignore_index=True),
                tables={k: pd.concat(v, ignore_index=True).sort_values(['name', 'seed'], kind='stable',
                                                                       ignore_index=True)
                        for k, v in tables.items() if v})


def combine(first: Runs, second: Runs) -> Runs:
    """Two disjoint sets of runs (run directories and records, say) as one, every frame sorted as load_runs sorts it;
    a run in both is an error naming it."""
    both = first.runs.merge(second.runs, on=['name', 'seed'])
    if len(both):
        raise ValueError(f'run {both["name"].iloc[0]} seed {both["seed"].iloc[0]} is read twice')
    keys = ['name', 'seed']
    tables = {name: pd.concat([t for t in (first.tables.get(name), second.tables.get(name)) if t is not None],
                              ignore_index=True).sort_values(keys, kind='stable', ignore_index=True)
              for name in TABLES if name in first.tables or name in second.tables}
    return Runs(runs=pd.concat([first.runs, second.runs], ignore_index=True).sort_values(keys, ignore_index=True),
                configs=dict(sorted({**second.configs, **first.configs}.items())),
                summaries=pd.concat([first.summaries, second.summaries], ignore_index=True).sort_values(
                    [*keys, 'metric'], ignore_index=True),
                tables=tables)
