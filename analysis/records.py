"""The published run records (results/records/): everything the analysis reads from run directories, in
Parquet, read back as the same Runs.

    runs.parquet         kind, name, seed, config: one row per run; config is the JSON of a trainer cell's
                         configuration without its seed ('' for an experiment)
    summaries.parquet    name, seed, metric, value: the numeric fields of every run's summary
    <table>.parquet      iterations, epochs, minibatches, records: the CSVs of every run, name and seed first
    aggregate.json       the options the aggregation ran with (baseline, method, ...), so that
                         `python -m analysis aggregate --records DIR` rebuilds the same results without them

Values are stored exactly (float64, as read from the CSVs). The bytes depend only on the records and the pinned
pyarrow: zstd compression, no timestamps. The folder is written atomically, as one. claim_samples reads
tables/claim_inputs.csv back into the samples analysis.verdicts.decide takes: one call recomputes a verdict.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from agentrl.files import write_folder

from .load import TABLES, Runs

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
    """One row per run: kind, name, seed and its cell's configuration as JSON ('' for experiments)."""
    config = runs.runs['name'].map(lambda name: json.dumps(runs.configs[name]) if name in runs.configs else '')
    return runs.runs[['kind', 'name', 'seed']].assign(config=config.astype(str))


def write_records(runs: Runs, folder: Path | str, options: dict | None = None) -> list[Path]:
    """Every frame of runs as Parquet files in folder, and the aggregation's options, written atomically as one
    folder; returns the files' paths."""
    frames = {RUNS: run_rows(runs), SUMMARIES: runs.summaries, **runs.tables}
    files = {f'{name}.parquet': parquet_bytes(frame) for name, frame in frames.items()}
    files[OPTIONS] = (json.dumps(options or {}, indent=2, sort_keys=True) + '\n').encode()
    return write_folder(folder, files)


def read(path: Path) -> pd.DataFrame:
    """One Parquet file of the records as a frame; a clear error when it is not one."""
    try:
        return pd.read_parquet(path)
    except (OSError, pa.ArrowException) as error:
        raise ValueError(f'{path}: not a readable Parquet file of run records ({error})') from None


def load_options(folder: Path | str) -> dict:
    """The options of the aggregation that wrote the records in folder ({} if it stored none)."""
    path = Path(folder) / OPTIONS
    try:
        return json.loads(path.read_text()) if path.is_file() else {}
    except json.JSONDecodeError as error:
        raise ValueError(f'{path} is not valid JSON: {error}') from None


def load_records(folder: Path | str) -> Runs:
    """The Runs that write_records wrote to folder; a run's path is the folder."""
    folder = Path(folder)
    for name in (RUNS, SUMMARIES):
        if not (folder / f'{name}.parquet').is_file():
            raise ValueError(f'{folder} holds no {name}.parquet: not a run-records folder '
                             '(python -m analysis aggregate writes one under its --out)')
    runs = read(folder / f'{RUNS}.parquet')
    configs = {name: json.loads(config) for name, config in zip(runs['name'], runs['config']) if config}
    return Runs(runs=runs.drop(columns='config').assign(path=str(folder)),
                configs=dict(sorted(configs.items())),
                summaries=read(folder / f'{SUMMARIES}.parquet'),
                tables={name: read(folder / f'{name}.parquet') for name in TABLES
                        if (folder / f'{name}.parquet').is_file()})


def claim_samples(inputs: pd.DataFrame, claim: dict) -> list[pd.Series]:
    """One claim's samples from claim_inputs.csv (columns id, input, seed, value): a Series of values by seed per
    input of the claim, in order, empty where the input had no values; what verdicts.decide(claim, samples) takes."""
    rows = inputs[inputs['id'] == claim['id']]
    return [rows[rows['input'] == i].set_index('seed')['value'].astype(float).sort_index()
            for i in range(len(claim['inputs']))]
