"""Runs chosen by name and seed, and records with runs added (`python -m analysis records`).

Not read by a look (workflow/state.py's DECISION_MODULES): a change here moves no look's basis.
"""
from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from .load import Runs, combine


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
    and seed."""
    return combine(select(records, zip(runs.runs['name'], runs.runs['seed']), keep=False), runs)
