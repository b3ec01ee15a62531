"""Every printed interval of every substrate's published ledger agrees with its verdict: a verdict is what its interval
shows against no effect, the smallest effect or the band, so a reader can check each row by eye.

A direction's interval is its printed step's median difference (a ratio on the log scale, an odds ratio for rates) at
the ledger's threshold times its number of steps: reproduced exactly when it lies wholly past no effect and not
wholly below the smallest effect; short of the claim or reversed exactly when it lies wholly below the smallest
effect, reversed exactly when also wholly below no effect. A size is inside exactly when its interval lies strictly
inside the band, outside exactly when wholly outside it. Open ends ('(' and ')') count as excluded.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.ledger.claims import judged, load_claims, read_ledger
from analysis.ledger.verdicts import AGAINST, DIRECTION, SIGN_OF, to_scale

REPO = Path(__file__).resolve().parents[1]
SUBSTRATES = {'tinyagent': REPO / 'results', 'larger': REPO / 'results' / 'substrates' / 'larger',
              'longer': REPO / 'results' / 'substrates' / 'longer'}
BY_ID = {c['id']: c for c in load_claims()['claims']}
CLOSE = 1e-5  # claims.csv keeps 6 significant digits: an end this close to an edge may sit on either side of it


def above(interval: tuple, value: float) -> bool | None:
    """Whether (low, high, low_open, high_open) lies wholly above value; None where its end is within the file's
    rounding of it, but not on it."""
    low, _, low_open, _ = interval
    if low != value and abs(low - value) <= CLOSE * max(1.0, abs(value)):
        return None
    return low > value or low == value and low_open


def below(interval: tuple, value: float) -> bool | None:
    """Whether (low, high, low_open, high_open) lies wholly below value; None where undecidable from the file."""
    _, high, _, high_open = interval
    if high != value and abs(high - value) <= CLOSE * max(1.0, abs(value)):
        return None
    return high < value or high == value and high_open


def printed_interval(row) -> tuple[float, float, bool, bool]:
    """(ci_low, ci_high, low open, high open) of a ledger row, the brackets read from its `interval`."""
    text = str(row.interval)
    assert text[0] in '([' and text[-1] in ')]', (row.id, text)
    return float(row.ci_low), float(row.ci_high), text[0] == '(', text[-1] == ')'


def in_direction(claim: dict, interval: tuple) -> tuple[float, float, bool, bool]:
    """A direction's printed interval on its difference scale (log for ratios and odds ratios), in the claim's
    direction: no effect at 0, the smallest effect above it."""
    scale = 'raw' if claim.get('scale', 'raw') == 'raw' else 'log'  # a difference of logits is a log odds ratio
    sign = SIGN_OF[DIRECTION[claim['kind']]]
    low, high, low_open, high_open = interval
    with np.errstate(divide='ignore'):
        low, high = (float(sign * to_scale(v, scale)) for v in (low, high))
    return (low, high, low_open, high_open) if sign > 0 else (high, low, high_open, low_open)


def steps(claim: dict) -> int:
    return len(claim['inputs']) - 1 if claim['kind'] in ('increasing', 'decreasing') else 1


def agreement(folder: Path) -> dict[str, int]:
    """Every judged row of a published ledger checked against its interval; the rows checked by verdict, and
    'undecidable': the rows whose interval ends within the file's rounding of an edge."""
    ledger = read_ledger(folder / 'tables' / 'claims.csv')
    threshold = float(pd.read_csv(folder / 'tables' / 'family.csv')['threshold'].iloc[0])
    seen = {}
    for row in ledger[judged(ledger)].itertuples():
        claim = BY_ID[row.id]
        if int(row.n) < claim['min_seeds']:
            assert row.verdict == 'inconclusive', row.id
            continue
        interval = printed_interval(row)
        assert not math.isnan(interval[0]) and interval[0] <= interval[1], (row.id, interval)
        assert float(row.level) == pytest.approx(1 - 1 / (threshold * steps(claim)), rel=1e-5), row.id
        if claim['kind'] == 'about':
            low, high = float(row.band_low), float(row.band_high)
            inside = [above(interval, low), below(interval, high)]
            outside = [below(interval, low), above(interval, high)]
            if None in inside + outside:
                seen['undecidable'] = seen.get('undecidable', 0) + 1
                continue
            assert (row.verdict == 'inside') == all(inside), (row.id, row.verdict, row.interval, low, high)
            assert (row.verdict == 'outside') == any(outside), (row.id, row.verdict, row.interval, low, high)
        else:
            d = in_direction(claim, interval)
            effect = float(to_scale(float(row.effect), 'raw' if claim.get('scale', 'raw') == 'raw' else 'log'))
            past, short, wrong_way = above(d, 0.0), below(d, effect), below(d, 0.0)
            if None in (past, short, wrong_way):
                seen['undecidable'] = seen.get('undecidable', 0) + 1
                continue
            context = (row.id, row.verdict, row.interval, row.effect, claim['kind'])
            assert (row.verdict == 'reproduced') == (past and not short), context
            assert (row.verdict in AGAINST) == short, context
            assert (row.verdict == 'reversed') == (short and wrong_way), context
        seen[row.verdict] = seen.get(row.verdict, 0) + 1
    return seen


@pytest.mark.parametrize('substrate', SUBSTRATES)
def test_every_printed_interval_agrees_with_its_verdict(substrate):
    seen = agreement(SUBSTRATES[substrate])
    assert seen.get('undecidable', 0) <= 2, seen  # the file's rounding decides almost nothing
    assert seen.get('reproduced', 0) >= 10 and seen.get('inconclusive', 0) >= 10, seen  # it read a real ledger
    assert seen.get('inside', 0) + seen.get('outside', 0) >= 3, seen
