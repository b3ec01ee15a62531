"""The ledger as a group-sequential design: seeds come in stages, every undecided claim is looked at after each
stage, and a claim stops at the first look that decides it (reproduced or contradicted).

Looks: the seeds n_1 < n_2 < ... <= n_max that every input of an undecided claim has at stage k (the first n_k
seeds of each run source). Error spending: Lan-DeMets' O'Brien-Fleming type, alpha(t) = 2 - 2 Phi(z_{1-alpha/2}
/ sqrt(t)) at information fraction t = n_k / n_max, for each one-sided test (the claim's, and the one against it).
Each look's boundary c_k solves P(Z_1 < c_1, ..., Z_{k-1} < c_{k-1}, Z_k >= c_k) = alpha(t_k) - alpha(t_{k-1})
for the z-statistic of a mean whose increments are independent (recursive numerical integration, as Armitage,
McPherson and Rowe); its nominal level 1 - Phi(c_k) is the p cut-off of look k: a claim's chance of a false
decision over all its looks is then alpha. O'Brien-Fleming spends little early (about 1e-4 at t = 1/4), so the
last look's level stays near alpha and the design loses almost no power against a fixed design at n_max. Within a
look the undecided claims are corrected together by Benjamini-Hochberg at that look's level. A fixed design is one
look at all its seeds: the level is alpha and the ledger is the fixed one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats
from scipy.optimize import brentq

from .chapter import Context
from .claims import ledger, load_claims, samples
from .verdicts import DEFAULTS, decide

SPENDING = "Lan-DeMets O'Brien-Fleming type"
DECIDED = ('reproduced', 'contradicted', 'untested')
GRID = 1001  # points of the score grid of the recursive integration (levels as with 4,001 to 1e-5)


def spent(t: np.ndarray, alpha: float) -> np.ndarray:
    """The error spent by information fraction t (in (0, 1]): 2 - 2 Phi(z_{1-alpha/2} / sqrt(t))."""
    return 2 * stats.norm.sf(stats.norm.isf(alpha / 2) / np.sqrt(t))


def check_looks(looks: list[int], max_seeds: int) -> None:
    """A clear error unless 2 <= n_1 < n_2 < ... <= max_seeds."""
    if not looks or any(n < 2 for n in looks) or any(b <= a for a, b in zip(looks, looks[1:])) \
            or looks[-1] > max_seeds:
        raise ValueError(f'looks={looks} with max_seeds={max_seeds}: expected increasing seed counts, each at least '
                         f'2 and at most max_seeds')


def nominal_levels(looks: list[int], max_seeds: int, alpha: float = DEFAULTS['alpha']) -> list[float]:
    """The one-sided p cut-off of each look [K] so that a claim's false decisions over all looks total alpha."""
    check_looks(looks, max_seeds)
    info = np.asarray(looks, dtype=float)  # the information of look k is its seeds (unit variance per seed)
    budget = np.diff(spent(info / max_seeds, alpha), prepend=0.0)
    bounds, density, grid = [], None, None  # sub-density of the score S_k on `grid`, paths not stopped yet
    for k, n in enumerate(info):
        if k == 0:
            c = stats.norm.isf(budget[0])
            grid = np.linspace(-10 * math.sqrt(n), c * math.sqrt(n), GRID)
            density = stats.norm.pdf(grid, scale=math.sqrt(n))
        else:
            step = math.sqrt(n - info[k - 1])

            def crossing(c, prev_grid=grid, prev=density):
                above = stats.norm.sf((c * math.sqrt(n) - prev_grid) / step)  # P(S_k >= c sqrt(n_k) | S_{k-1})
                return np.trapezoid(prev * above, prev_grid) - budget[k]
            c = brentq(crossing, -10.0, 40.0, xtol=1e-10)
            new_grid = np.linspace(-10 * math.sqrt(n), c * math.sqrt(n), GRID)
            kernel = stats.norm.pdf((new_grid[:, None] - grid[None, :]) / step) / step  # [GRID, GRID]
            density = np.trapezoid(kernel * density[None, :], grid, axis=1)
            grid = new_grid
        bounds.append(c)
    return [float(stats.norm.sf(c)) for c in bounds]


def first_seeds(ctx: Context, n: int | None) -> Context:
    """ctx with each run source cut to its first n seeds (None: all)."""
    if n is None:
        return ctx
    values = ctx.values
    rank = values.groupby('source')['seed'].rank(method='dense')
    return Context(values[rank <= n], ctx.configs, ctx.baseline, ctx.chapter)


def decide_sequentially(claim: dict, inputs: list[pd.Series], looks: list[int], levels: list[float]) -> tuple[dict, int]:
    """One claim looked at after each stage: (its row at the deciding look, or the last; that look, from 1)."""
    for stage, (n, level) in enumerate(zip(looks, levels), 1):
        row = decide(claim, [s.sort_index().iloc[:n] for s in inputs], (level, level),
                     sensitivity=False, power=False)
        if row['verdict'] in DECIDED:
            break
    return row, stage


@dataclass(frozen=True)
class Design:
    """The looks of a sequential ledger: seeds at each look done so far, and the seeds a design stops at."""
    looks: list[int]
    max_seeds: int

    def describe(self, stage: int, verdict: str) -> str:
        n = self.looks[stage - 1]
        if verdict in ('reproduced', 'contradicted'):
            return f'stage {stage} ({n} seeds)'
        if verdict == 'untested':
            return ''
        return f'undecided at max ({n} seeds)' if n == self.max_seeds else \
            f'undecided at stage {stage} ({n} seeds; the design goes on to {self.max_seeds})'


def sequential_ledger(ctx: Context, design: Design | None = None, claims: dict | None = None,
                      alpha: float | None = None, min_seeds: int | None = None,
                      history: list[pd.DataFrame] | None = None) -> pd.DataFrame:
    """The ledger replayed look by look on ctx: each statistical claim's row is the one of the look that decided
    it (columns stage, decided); checks are decided on all seeds at the last look. design None: one look at every
    seed (a fixed design). attrs['looks']: per look its stage, seeds, level, BH cut-offs, claims looked at and
    decided. history: a list that receives each look's rows of the claims it looked at (columns stage, seeds)."""
    claims = claims or load_claims(chapter=ctx.chapter)
    alpha = alpha if alpha is not None else claims.get('alpha', DEFAULTS['alpha'])
    levels = nominal_levels(design.looks, design.max_seeds, alpha) if design else [alpha]
    open_claims = [c for c in claims['claims'] if c['kind'] != 'check']
    frames, looks = [], []
    for stage, (n, level) in enumerate(zip(design.looks if design else [None], levels), 1):
        last = stage == len(levels)
        looked = open_claims + ([c for c in claims['claims'] if c['kind'] == 'check'] if last else [])
        frame = ledger(first_seeds(ctx, n), dict(claims, claims=looked), alpha=level, min_seeds=min_seeds)
        statistical = frame['group'] != 'check'
        done = frame['verdict'].isin(DECIDED) | ~statistical | last
        frames.append(frame[done].assign(stage=stage))
        looks.append(dict(stage=stage, seeds=n or (int(frame['n'].max()) if len(frame) else 0), level=level,
                          cutoff=frame.attrs['thresholds'][0], cutoff_against=frame.attrs['thresholds'][1],
                          looked_at=int((statistical & (frame['verdict'] != 'untested')).sum()),
                          decided=int((statistical & frame['verdict'].isin(DECIDED[:2])).sum())))
        if history is not None:
            history.append(frame[statistical].assign(stage=stage, seeds=looks[-1]['seeds']))
        open_claims = [c for c in open_claims if c['id'] in set(frame.loc[~done, 'id'])]
    design = design or Design([looks[0]['seeds']], looks[0]['seeds'])
    order = {c['id']: i for i, c in enumerate(claims['claims'])}
    out = pd.concat(frames, ignore_index=True).sort_values('id', key=lambda s: s.map(order), kind='stable')
    out['decided'] = [design.describe(s, v) if g != 'check' else '' for s, v, g in
                      zip(out['stage'], out['verdict'], out['group'])]
    out = out.reset_index(drop=True)
    out.attrs.update(looks=looks, max_seeds=design.max_seeds, spending=SPENDING, alpha=alpha)
    return out


def feeders(ctx: Context, claims: list[dict]) -> list[str]:
    """The run sources (trainer cells, experiments) whose seeds the claims read, sorted."""
    return sorted({f.group for c in claims for f in samples(c, ctx) if f.group})


def next_stage(ctx: Context, design: Design, step: int, claims: dict | None = None,
               alpha: float | None = None) -> dict:
    """After the last look of design: the claims still open and the plan of the next stage, {} when done."""
    claims = claims or load_claims(chapter=ctx.chapter)
    frame = sequential_ledger(ctx, design, claims, alpha)
    last = len(design.looks)
    still = frame[(frame['stage'] == last) & ~frame['verdict'].isin(DECIDED) & (frame['group'] != 'check')]
    decided = frame[(frame['stage'] == last) & frame['verdict'].isin(DECIDED[:2])]
    seeds = min(design.looks[-1] + step, design.max_seeds)
    plan = {}
    if len(still) and design.looks[-1] < design.max_seeds:
        open_claims = [c for c in claims['claims'] if c['id'] in set(still['id'])]
        plan = dict(seeds=seeds, sources=feeders(ctx, open_claims))
    return dict(stage=last, seeds=design.looks[-1], decided=decided['id'].tolist(), undecided=still['id'].tolist(),
                next=plan)
