"""A run's output directory (design.md section 4), written atomically.

    run.json         kind, name, configuration, seed, summary, provenance
    <table>.csv      long-format records, one file per table (iterations, epochs, minibatches, ...)

Everything is written into a hidden temporary sibling directory, then renamed into place: a
killed job leaves no directory that a later step would read as a complete run.
"""
from __future__ import annotations

import csv
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from . import __version__
from .numerics import NUMERICS_VERSION


def provenance(wall_s: float) -> dict:
    """Where and how a run was made."""
    return dict(agentrl=__version__, git_commit=_git_commit(), torch=torch.__version__,
                python=platform.python_version(), threads=torch.get_num_threads(), host=platform.node(),
                wall_s=wall_s, argv=sys.argv, numerics_version=NUMERICS_VERSION)


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


def write_table(records: list[dict], path: Path) -> None:
    """Records as CSV, columns in first-seen order; NaN written as an empty field."""
    columns = list(dict.fromkeys(key for record in records for key in record))
    with open(path, 'w', newline='') as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        for record in records:
            writer.writerow({k: '' if isinstance(v, float) and math.isnan(v) else v for k, v in record.items()})


def default_mode(directory: bool = False) -> int:
    """The mode open() or mkdir() would give a new file or folder under the user's umask (tempfile's are 0600/0700)."""
    mask = os.umask(0)  # reading the mask means setting it: set it back at once
    os.umask(mask)
    return (0o777 if directory else 0o666) & ~mask


def write_run(path: Path | str, meta: dict, tables: dict[str, list[dict]]) -> Path:
    """Write run.json (meta) and one CSV per table into path, atomically; replaces an older run there."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f'.{path.name}.tmp-'))
    tmp.chmod(default_mode(directory=True))  # readable by the user's group, as the umask says
    try:
        for name, records in tables.items():
            write_table(records, tmp / f'{name}.csv')
        with open(tmp / 'run.json', 'w') as f:
            json.dump(_clean(meta), f, indent=2, sort_keys=True)
            f.write('\n')
        if path.exists():
            old = path.with_name(f'.{path.name}.old-{os.getpid()}')
            os.replace(path, old)
            shutil.rmtree(old)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return path
