"""The published run records (results/records/): everything the analysis reads from run directories, in
Parquet, read back as the same Runs.

    runs.parquet         kind, name, seed, config, numerics_version and where it was made (analysis.records.load's
                         WHERE_COLUMNS: cpu, cpu_vendor, cpu_capability, torch, numeric_settings, guarantee): one
                         row per run; config is the JSON of a trainer cell's configuration without its seed ('' for
                         an experiment); numerics_version the version of the numerics that made it
                         (agentrl/numerics/__init__.py; absent: 1); a column absent from older records reads ''
    summaries.parquet    name, seed, metric, value: the numeric fields of every run's summary
    <table>.parquet      iterations, epochs, minibatches, records: the CSVs of every run, name and seed first
    aggregate.json       the options the aggregation ran with (baseline, method, ...), so that
                         `python -m analysis aggregate --records DIR` rebuilds the same results without them
    SHA256SUMS           every file's SHA-256, written with them: a damaged folder is refused before it is read

Values are stored exactly (float64, as read from the CSVs). The bytes depend only on the records and the pinned
pyarrow: zstd compression, no timestamps. The folder is written atomically, as one. claim_samples reads
tables/claim_inputs.csv back into the samples analysis.ledger.verdicts.decide takes: one call recomputes a verdict.

select and with_runs: runs chosen by name and seed, and records with runs added.
"""
from __future__ import annotations

import io
import json
from pathlib import Path
from collections.abc import Iterable

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from agentrl.files import verify_records, with_manifest, write_folder
from agentrl.numerics import UNSTATED_VERSION
from workflow.design import BASELINE, cell_name, recorded

from .load import RUN_COLUMNS, Runs, TABLES, WHERE_COLUMNS, combine

RUNS, SUMMARIES, OPTIONS = 'runs', 'summaries', 'aggregate.json'
ZSTD_LEVEL = 19


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    """A frame as zstd-compressed Parquet; float columns split by byte stream (they compress better)."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    floats = [f.name for f in table.schema if pa.types.is_floating(f.type)]
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression='zstd', compression_level=ZSTD_LEVEL,
                   use_dictionary=[c for c in table.column_names if c not in floats],
                   use_byte_stream_split=floats or False)
    return buffer.getvalue()


def run_rows(runs: Runs) -> pd.DataFrame:
    """One row per run: kind, name, seed, its cell's configuration as JSON ('' for experiments), numerics version and
    where it was made (WHERE_COLUMNS)."""
    config = runs.runs['name'].map(lambda name: json.dumps(runs.configs[name]) if name in runs.configs else '')
    return runs.runs[['kind', 'name', 'seed']].assign(config=config.astype(str),
                                                     numerics_version=runs.runs['numerics_version'],
                                                     **{column: runs.runs[column] for column in WHERE_COLUMNS})


def write_records(runs: Runs, folder: Path | str, options: dict | None = None) -> list[Path]:
    """Every frame of runs as Parquet files in folder, the aggregation's options and the files' SHA-256, written
    atomically as one folder; returns the files' paths."""
    frames = {RUNS: run_rows(runs), SUMMARIES: runs.summaries, **runs.tables}
    files = {f'{name}.parquet': parquet_bytes(frame) for name, frame in frames.items()}
    files[OPTIONS] = (json.dumps(options or {}, indent=2, sort_keys=True) + '\n').encode()
    return write_folder(folder, with_manifest(files))


def read(path: Path) -> pd.DataFrame:
    """One Parquet file of the records as a frame; a clear error when it is not one."""
    try:
        return pd.read_parquet(path)
    except (OSError, pa.ArrowException) as error:
        raise ValueError(f'{path}: not a readable Parquet file of run records ({error})') from None


def load_options(folder: Path | str) -> dict:
    """The options of the aggregation that wrote the records in folder ({} if it stored none)."""
    verify_records(folder)
    path = Path(folder) / OPTIONS
    try:
        return json.loads(path.read_text()) if path.is_file() else {}
    except json.JSONDecodeError as error:
        raise ValueError(f'{path} is not valid JSON: {error}') from None


def run_table(folder: Path | str) -> pd.DataFrame:
    """runs.parquet of the records in folder: kind, name, seed, config, numerics_version (absent: version 1) and
    WHERE_COLUMNS (absent: '')."""
    verify_records(folder)
    runs = read(Path(folder) / f'{RUNS}.parquet')
    runs = runs if 'numerics_version' in runs else runs.assign(numerics_version=UNSTATED_VERSION)
    return runs.assign(**{column: '' for column in WHERE_COLUMNS if column not in runs})


def current_names(runs: pd.DataFrame) -> dict[str, str]:
    """Each name of a run table -> its cell's name now (workflow.design.cell_name of its config against the
    baseline's): records made before a cell was renamed read as the renamed cell. Experiments, and every run of
    records without a baseline cell, keep their names."""
    names = dict(zip(runs['name'], runs['name']))
    baseline = runs.loc[(runs['kind'] == 'train') & (runs['name'] == BASELINE), 'config']
    if len(baseline):
        reference = recorded(json.loads(baseline.iloc[0]))
        names.update({name: cell_name(recorded(json.loads(config)), reference)
                      for kind, name, config in zip(runs['kind'], runs['name'], runs['config']) if kind == 'train'})
    return names


def load_records(folder: Path | str, reuse: dict[str, list[int]] | None = None) -> Runs:
    """The Runs that write_records wrote to folder (reuse: only these seeds of these names, each of which the records
    must hold); a run's path is the folder."""
    folder = Path(folder)
    for name in (RUNS, SUMMARIES):
        if not (folder / f'{name}.parquet').is_file():
            raise ValueError(f'{folder} holds no {name}.parquet: not a run-records folder '
                             '(python -m analysis aggregate writes one under its --out)')
    runs = run_table(folder)  # verifies the folder
    tables = {name: read(folder / f'{name}.parquet') for name in TABLES if (folder / f'{name}.parquet').is_file()}
    summaries = read(folder / f'{SUMMARIES}.parquet')
    renamed = current_names(runs)
    runs, summaries = (frame.assign(name=frame['name'].map(renamed)) for frame in (runs, summaries))
    tables = {name: frame.assign(name=frame['name'].map(renamed)) for name, frame in tables.items()}
    if reuse is not None:
        wanted = pd.MultiIndex.from_tuples([(name, seed) for name, seeds in reuse.items() for seed in seeds],
                                           names=['name', 'seed'])
        missing = wanted.difference(pd.MultiIndex.from_frame(runs[['name', 'seed']]))
        if len(missing):
            raise ValueError(f'{folder} holds no run {missing[0][0]} seed {missing[0][1]}')
        runs, summaries = (frame[pd.MultiIndex.from_frame(frame[['name', 'seed']]).isin(wanted)].reset_index(drop=True)
                           for frame in (runs, summaries))
        tables = {name: frame[pd.MultiIndex.from_frame(frame[['name', 'seed']]).isin(wanted)].reset_index(drop=True)
                  for name, frame in tables.items()}
        tables = {name: frame for name, frame in tables.items() if len(frame)}
    configs = {name: recorded(json.loads(config)) for name, config in zip(runs['name'], runs['config']) if config}
    return Runs(runs=runs.drop(columns='config').assign(path=str(folder))[list(RUN_COLUMNS)],
                configs=dict(sorted(configs.items())), summaries=summaries, tables=tables)


def claim_samples(inputs: pd.DataFrame, claim: dict) -> list[pd.Series]:
    """One claim's samples from claim_inputs.csv (columns id, input, seed, value): a Series of values by seed per
    input of the claim, in order, empty where the input had no values; what verdicts.decide(claim, samples) takes."""
    rows = inputs[inputs['id'] == claim['id']]
    return [rows[rows['input'] == i].set_index('seed')['value'].astype(float).sort_index()
            for i in range(len(claim['inputs']))]


def parse_reuse(specs: list[str]) -> dict[str, list[int]]:
    """`--reuse NAME:SEED,SEED...` options as name -> seeds; a malformed one is an error naming it."""
    reuse = {}
    for spec in specs:
        name, _, seeds = spec.rpartition(':')
        try:
            reuse[name] = [int(seed) for seed in seeds.split(',')]
        except ValueError:
            name = ''
        if not name:
            raise ValueError(f'--reuse {spec}: expected NAME:SEED,SEED,...')
    return reuse


# Runs chosen by name and seed, and records with runs added (`python -m analysis records`).
def select(runs: Runs, pairs: Iterable[tuple[str, int]], keep: bool = True) -> Runs:
    """The runs whose (name, seed) is among pairs (keep) or is not (not keep); a table left with no rows is dropped."""
    names, seeds = zip(*pairs) if (pairs := list(pairs)) else ((), ())
    index = pd.MultiIndex.from_arrays([list(names), list(seeds)], names=['name', 'seed'])

    def rows(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[pd.MultiIndex.from_frame(frame[['name', 'seed']]).isin(index) == keep].reset_index(drop=True)

    kept = rows(runs.runs)
    tables = {name: rows(frame) for name, frame in runs.tables.items()}
    return Runs(runs=kept, configs={k: v for k, v in runs.configs.items() if k in set(kept['name'])},
                summaries=rows(runs.summaries), tables={name: frame for name, frame in tables.items() if len(frame)})


def with_runs(records: Runs, runs: Runs) -> Runs:
    """The records with runs added, every frame sorted as load_runs sorts it: a run replaces the record of its name
    and seed; the records of a numerics version the added runs are not of leave (no design continues from them:
    a republish under a new version starts its records afresh), and so do those of a cell the added runs give another
    configuration (records hold one configuration a name: a cell rerun at a new learning-rate scale starts afresh), and
    the baseline's where an added cell is not named against it (a design at a new scale published before its baseline
    is made again: its cells would read as renamed against the old baseline)."""
    other = records.runs[~records.runs['numerics_version'].isin(set(runs.runs['numerics_version']))]
    changed = {name for name, config in runs.configs.items() if records.configs.get(name, config) != config}
    baseline = records.configs.get(BASELINE)
    if baseline is not None and any(cell_name(config, baseline) != name for name, config in runs.configs.items()):
        changed.add(BASELINE)
    remade = records.runs[records.runs['name'].isin(changed)]
    gone = [*zip(runs.runs['name'], runs.runs['seed']), *zip(other['name'], other['seed']),
            *zip(remade['name'], remade['seed'])]
    return combine(select(records, gone, keep=False), runs)
