"""A run's output directory (design.md section 4), written atomically.

    run.json         kind, name, configuration, seed, summary, provenance
    <table>.csv      long-format records, one file per table (iterations, epochs, minibatches, ...)

The directory is written with agentrl.files.write_folder: into a hidden temporary sibling, then
exchanged with the path in one step, so a killed job leaves no directory that a later step would read
as a complete run, and a run rewritten in place never goes missing.
"""
from __future__ import annotations

import csv
import io
import json
import math
import platform
import subprocess
import sys
from pathlib import Path

import torch

from .. import __version__, numerics
from ..files import write_folder


def provenance(wall_s: float) -> dict:
    """Where and how a run was made: code, host, threads, time, and the numerics (agentrl.numerics.provenance)."""
    return dict(agentrl=__version__, git_commit=_git_commit(), torch=torch.__version__,
                python=platform.python_version(), threads=torch.get_num_threads(), host=platform.node(),
                wall_s=wall_s, argv=sys.argv, **numerics.provenance())


def _git_commit() -> str | None:
    try:
        out = subprocess.run(['git', 'rev-parse', 'HEAD'], cwd=Path(__file__).parent, capture_output=True,
                             text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _clean(value):
    """JSON has no NaN or infinity: write them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def table_csv(records: list[dict]) -> bytes:
    """Records as CSV, columns in first-seen order; NaN written as an empty field."""
    columns = list(dict.fromkeys(key for record in records for key in record))
    out = io.StringIO(newline='')
    writer = csv.DictWriter(out, fieldnames=columns)
    writer.writeheader()
    for record in records:
        writer.writerow({k: '' if isinstance(v, float) and math.isnan(v) else v for k, v in record.items()})
    return out.getvalue().encode('utf-8')


def write_run(path: Path | str, meta: dict, tables: dict[str, list[dict]]) -> Path:
    """Write run.json (meta) and one CSV per table into path, atomically; replaces an older run there."""
    run_json = json.dumps(_clean(meta), indent=2, sort_keys=True) + '\n'
    files = {f'{name}.csv': table_csv(records) for name, records in tables.items()}
    write_folder(path, {**files, 'run.json': run_json.encode('utf-8')})
    return Path(path)
