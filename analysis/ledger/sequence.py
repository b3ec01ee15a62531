"""Each claim's evidence seed by seed: its row (estimate, interval, e-values, verdict) on the first n seeds of each of
its inputs, for n from the claim's min_seeds to every seed there is, all at the ledger's one threshold. The interval
at n is the confidence sequence's: valid at every n at once, so a reader may watch it narrow and stop anywhere.
"""
from __future__ import annotations

import pandas as pd

from .chapter import Context
from .claims import group, load_claims, samples
from .verdicts import clean, decide

COLUMNS = ['id', 'seeds', 'verdict', 'estimate', 'ci_low', 'ci_high', 'effect', 'e', 'e_against']


def first_seeds(values: pd.Series, n: int) -> pd.Series:
    """The values of the first n seeds (by seed number) of one input."""
    return clean(values).iloc[:n]


def sequences(ctx: Context, threshold: float, claims: dict | None = None) -> pd.DataFrame:
    """Per statistical claim or finding with values and per seed count n: its row on the first n seeds of each input,
    at `threshold` (the ledger's); a finding's verdict is the one its numbers would get. Columns COLUMNS (effect: the
    smallest effect of the step the row prints)."""
    claims = claims or load_claims(chapter=ctx.chapter)
    rows = []
    for claim in claims['claims']:
        if group(claim) == 'check':
            continue
        found = samples(claim, ctx)
        if any(f.note for f in found):
            continue
        seeds = max(len(clean(f.values)) for f in found)
        for n in range(claim['min_seeds'], seeds + 1):
            row = decide(claim, [first_seeds(f.values, n) for f in found], threshold, sensitivity=False, power=False)
            rows.append(dict(id=claim['id'], seeds=n, **{k: row[k] for k in COLUMNS[2:]}))
    return pd.DataFrame(rows, columns=COLUMNS)
