"""Run outputs with the wall times left out, to compare two runs of the same design number for number."""
import csv
import json
from pathlib import Path

TIMING = {'wall_s', 'sample_s'}  # wall-time fields and metrics: differ between any two runs


def comparable_run(path: Path) -> dict:
    """A run.json without its provenance and timing summary fields."""
    run = json.loads(path.read_text())
    run.pop('provenance')
    run['summary'] = {k: v for k, v in run['summary'].items() if k not in TIMING}
    return run


def comparable_csv(path: Path) -> list[list[str]]:
    """A CSV's rows without wall-time columns, and without rows that summarise a wall time."""
    rows = list(csv.reader(path.open()))
    if not rows:
        return rows
    keep = [i for i, name in enumerate(rows[0]) if name not in TIMING]
    return [[row[i] for i in keep] for row in rows if not TIMING & set(row)]
