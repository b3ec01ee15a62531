"""The claims ledger: every claim of the chapter (claims.yaml) tested on our seeds.

A verdict is 'reproduced', 'not reproduced' or 'inconclusive' (missing inputs or fewer than
min_seeds seeds), with the numbers and the test (name, statistic, p) behind it. Kinds:

  interval_contains    each input's chapter value lies in our 95% prediction interval for one new seed
  greater_than         one-sided t-test, input 0 > input 1 (paired when one run group), or > `than`
  less_than            the same with <
  monotone_increasing  every consecutive step increases (intersection-union: p is the largest step p)
  monotone_decreasing  every consecutive step decreases
  ratio_about          input 0 / input 1 within `tolerance` (relative) of `target`, by prediction interval
  no_difference        equivalence within `margin` (TOST); a significant difference refutes it
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from .chapter import LOADER, Context, Selected, check_value, resolve
from .stats import describe, prediction_check, shifted_test, t_quantile, tost
from .text import number

CLAIMS_FILE = Path(__file__).with_name('claims.yaml')
VERDICTS = ('reproduced', 'not reproduced', 'inconclusive')
COLUMNS = ['id', 'verdict', 'claim', 'source', 'kind', 'inputs', 'numbers', 'test', 'statistic', 'p', 'n', 'note']


def load_claims(path: Path | str = CLAIMS_FILE) -> dict:
    """The claims file: alpha, min_seeds and the list of claims."""
    return yaml.load(Path(path).read_text(), Loader=LOADER)


def expand(inputs: list[dict]) -> list[dict]:
    """Input specs with 'rows' or 'metrics' lists unrolled into one spec per row (outer) and metric."""
    out = []
    for spec in inputs:
        base = {k: v for k, v in spec.items() if k not in ('rows', 'metrics')}
        for row in spec.get('rows', [base.get('row', '')]):
            out += [dict(base, row=row, metric=metric) for metric in spec.get('metrics', [base.get('metric')])]
    return out


def pair(x: Selected, y: Selected) -> tuple[np.ndarray, np.ndarray, bool]:
    """Values of two inputs: matched by seed when they come from one run group, else as they are."""
    if x.group == y.group:
        both = pd.concat([x.values, y.values], axis=1, join='inner')
        return both.iloc[:, 0].to_numpy(), both.iloc[:, 1].to_numpy(), True
    return x.values.to_numpy(), y.values.to_numpy(), False


def _result(holds: bool, test: dict, numbers: str, n: int) -> dict:
    return dict(verdict='reproduced' if holds else 'not reproduced', numbers=numbers, test=test['test'],
                statistic=test['statistic'], p=test['p'], n=n)


def _inconclusive(note: str, n: int) -> dict:
    return dict(verdict='inconclusive', note=note, n=n)


def interval_contains(claim, found, alpha):
    checks, parts = [], []
    for f in found:
        summary = describe(f.values)
        checks.append(check_value(summary, f.chapter, f.exact))
        parts.append(f'{f.label}: {number(summary["mean"])} [PI {number(summary["pi_low"])}, '
                     f'{number(summary["pi_high"])}] vs {f.chapter}')
    n = min(len(f.values) for f in found)
    if any(c is None for c in checks):
        return _inconclusive('no prediction interval from one seed', n)
    worst = min(checks, key=lambda c: c['p'])
    return _result(all(c['inside'] for c in checks), worst, '; '.join(parts), n)


def _compare(claim, found, alpha, alternative: str):
    sign = '>' if alternative == 'greater' else '<'
    if 'than' in claim:
        a, b, paired = found[0].values.to_numpy(), float(claim['than']), False
        numbers = f'{number(a.mean())} {sign} {number(b)}?'
    else:
        a, b, paired = pair(found[0], found[1])
        numbers = f'{number(a.mean())} {sign} {number(b.mean())}? (diff {number(a.mean() - b.mean())})'
    test = shifted_test(a, b, alternative, paired)
    return _result(test['p'] < alpha, test, numbers, len(a) if np.ndim(b) == 0 else min(len(a), len(b)))


def greater_than(claim, found, alpha):
    return _compare(claim, found, alpha, 'greater')


def less_than(claim, found, alpha):
    return _compare(claim, found, alpha, 'less')


def _monotone(claim, found, alpha, alternative: str):
    steps = []
    for x, y in zip(found, found[1:]):
        a, b, paired = pair(y, x)
        steps.append((shifted_test(a, b, alternative, paired), min(len(a), len(b))))
    worst, n = max(steps, key=lambda s: s[0]['p'])
    sign = ' < ' if alternative == 'greater' else ' > '
    return _result(worst['p'] < alpha, worst, sign.join(number(f.values.mean()) for f in found) + '?',
                   min(s[1] for s in steps))


def monotone_increasing(claim, found, alpha):
    return _monotone(claim, found, alpha, 'greater')


def monotone_decreasing(claim, found, alpha):
    return _monotone(claim, found, alpha, 'less')


def ratio_about(claim, found, alpha):
    """Log scale: per-seed log ratios when paired, else the delta method on the two means."""
    a, b, paired = pair(found[0], found[1])
    if (a <= 0).any() or (b <= 0).any():
        return _inconclusive('a ratio needs positive values', min(len(a), len(b)))
    if paired:
        s = describe(np.log(a / b))
        n, mean, df = s['n'], s['mean'], s['n'] - 1
        scale = 0.0 if s['status'] == 'constant' else s['sd'] * math.sqrt(1 + 1 / n)
    else:
        n, mean, df = min(len(a), len(b)), math.log(a.mean() / b.mean()), min(len(a), len(b)) - 1
        scale = math.sqrt(sum((v.std(ddof=1) / v.mean()) ** 2 * (1 + 1 / len(v)) for v in (a, b)))
    if not math.isfinite(scale):
        return _inconclusive('no prediction interval from one seed', n)
    target, tolerance = float(claim['target']), float(claim['tolerance'])
    check = prediction_check(mean, scale, df, math.log(target * (1 - tolerance)), math.log(target * (1 + tolerance)))
    half = t_quantile(df + 1) * scale if scale else 0.0
    numbers = (f'ratio {number(math.exp(mean))} [PI {number(math.exp(mean - half))}, {number(math.exp(mean + half))}]'
               f' vs {number(target)} ± {number(100 * tolerance)}%')
    return _result(check['inside'], check, numbers, n)


def no_difference(claim, found, alpha):
    a, b, paired = pair(found[0], found[1])
    margin = float(claim['margin'])
    equivalence, difference = tost(a, b, margin, paired), shifted_test(a, b, 'two-sided', paired)
    n, numbers = min(len(a), len(b)), f'diff {number(a.mean() - b.mean())}, margin ±{number(margin)}'
    if equivalence['p'] < alpha:
        return _result(True, equivalence, numbers, n)
    if difference['p'] < alpha:
        return _result(False, difference, numbers, n)
    return dict(_result(False, equivalence, numbers, n), verdict='inconclusive',
                note='neither equivalence within the margin nor a difference is shown: more seeds needed')


KINDS = {f.__name__: f for f in (interval_contains, greater_than, less_than, monotone_increasing,
                                 monotone_decreasing, ratio_about, no_difference)}


def evaluate(claim: dict, ctx: Context, alpha: float = 0.05, min_seeds: int = 3) -> dict:
    """One claim -> its ledger row."""
    found = [resolve(spec, ctx) for spec in expand(claim['inputs'])]
    row = dict(id=claim['id'], claim=claim['claim'], source=claim['source'], kind=claim['kind'],
               inputs='; '.join(f.label for f in found), numbers='', test='', statistic=math.nan, p=math.nan,
               n=min((len(f.values) for f in found), default=0), note='')
    missing = [f.note for f in found if f.note]
    missing += [f'{f.label} has no chapter value' for f in found
                if claim['kind'] == 'interval_contains' and f.chapter is None]
    few = [f'{f.label}: n={len(f.values)} < {min_seeds}' for f in found
           if not f.note and len(f.values) < (1 if f.exact else min_seeds)]
    if not missing and not few:
        common = common_seeds(found)
        if common < (1 if all(f.exact for f in found) else min_seeds):
            few.append(f'only {common} seeds in common (< {min_seeds})')
    if missing or few:
        return dict(row, verdict='inconclusive', note='; '.join(missing + few))
    return dict(row, **KINDS[claim['kind']](claim, found, alpha))


def common_seeds(found: list[Selected]) -> int:
    """The fewest seeds shared by the inputs of one run group (inputs of one group are paired by seed)."""
    groups: dict[str, set] = {}
    for f in found:
        groups[f.group] = groups.get(f.group, set(f.values.index)) & set(f.values.index)
    return min(len(seeds) for seeds in groups.values())


def ledger(ctx: Context, claims: dict | None = None, alpha: float | None = None,
           min_seeds: int | None = None) -> pd.DataFrame:
    """Every claim of the claims file evaluated on ctx, in file order."""
    claims = claims or load_claims()
    alpha = claims.get('alpha', 0.05) if alpha is None else alpha
    min_seeds = claims.get('min_seeds', 3) if min_seeds is None else min_seeds
    return pd.DataFrame([evaluate(c, ctx, alpha, min_seeds) for c in claims['claims']], columns=COLUMNS)
