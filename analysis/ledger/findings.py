"""One claim per finding, by values: two claims of one part (direction or size) that read the same per-seed numbers.

claims.one_per_finding folds claims by their inputs' names; this module compares what the names stand for. A claim's
quantities are the per-seed numbers its test reads, on its scale: a size claim's per-seed value (or ratio, or
difference), a direction's per-seed difference of every ordered pair of its inputs (a monotone claim states every
pair of its chain), or its one input against a threshold. Two claims state one finding when every quantity of one
that varies over seeds is another's up to a constant factor and shift (the same numbers in other units, or a ratio
to a constant): early stopping's ratio of gradient steps is its mean epochs over 4 on every seed, say.
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from ..records.records import claim_samples
from .verdicts import clean, on_scale, paired_frame, per_seed

MIN_SEEDS = 3  # fewer common seeds than this prove nothing
TOLERANCE = 1e-9  # relative: the same numbers, whatever the rounding of their arithmetic


def quantities(claim: dict, samples: list[pd.Series]) -> list[pd.Series]:
    """The per-seed numbers the claim's test reads, on its scale, by seed: [n] Series, one per quantity."""
    scale = claim.get('scale', 'raw')
    samples = [clean(s) for s in samples]
    if claim['kind'] == 'about':
        values = clean(per_seed(claim, samples))
        return [pd.Series(on_scale(values.to_numpy(), scale), values.index)]
    if len(samples) == 1:
        return [pd.Series(on_scale(samples[0].to_numpy(), scale), samples[0].index)]
    out = []
    for i, j in itertools.combinations(range(len(samples)), 2):
        both = paired_frame([samples[i], samples[j]])
        out.append(pd.Series(on_scale(both[1].to_numpy(), scale) - on_scale(both[0].to_numpy(), scale), both.index))
    return out


def varies(values: pd.Series) -> bool:
    return len(values) >= MIN_SEEDS and float(values.max() - values.min()) > TOLERANCE * (1 + float(values.abs().max()))


def affine(x: pd.Series, y: pd.Series) -> bool:
    """y = a x + b on every common seed (a != 0), to TOLERANCE: the same numbers up to a constant factor and shift."""
    both = paired_frame([x, y])
    if not (varies(both[0]) and varies(both[1])):
        return False
    slope, shift = np.polyfit(both[0].to_numpy(), both[1].to_numpy(), 1)
    residual = np.abs(slope * both[0].to_numpy() + shift - both[1].to_numpy()).max()
    return bool(residual <= TOLERANCE * (1 + float(both[1].abs().max())))


def shape(values: pd.Series) -> tuple[tuple, np.ndarray]:
    """A quantity's seeds and its standardized values, signed so that the first is not negative: two quantities on
    the same seeds that are affine in each other have the same shape, to rounding."""
    z = (values - values.mean()) / values.std()
    return tuple(values.index), z.to_numpy() * (1 if z.iloc[0] >= 0 else -1)


def alike(x: pd.Series, y: pd.Series) -> bool:
    """affine(x, y), with a quick refusal where both have the same seeds and shapes that differ."""
    (seeds_x, zx), (seeds_y, zy) = shape(x), shape(y)
    if seeds_x == seeds_y and not np.allclose(zx, zy, rtol=0, atol=1e-6):
        return False
    return affine(x, y)


def same_findings(claims: list[dict], inputs: pd.DataFrame, part) -> list[tuple[str, str]]:
    """(claim, claim it repeats) for every claim whose varying quantities are all another claim's of the same part,
    by value; claims: load_claims()['claims'] with a verdict; inputs: claim_inputs.csv; part: claims.part."""
    by_claim = {key: rows for key, rows in inputs.groupby('id')}
    empty = inputs.iloc[:0]
    found = {c['id']: [q for q in quantities(c, claim_samples(by_claim.get(c['id'], empty), c)) if varies(q)]
             for c in claims}
    out = []
    for a, b in itertools.permutations(claims, 2):
        mine, theirs = found[a['id']], found[b['id']]
        if part(a) == part(b) and mine and all(any(alike(q, r) for r in theirs) for q in mine):
            out.append((a['id'], b['id']))
    return out
