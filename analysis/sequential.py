"""The ledger as a group-sequential design: seeds come in stages, every open claim is looked at after each stage,
and a claim stops at the first look that decides it (reproduced or contradicted), or when it has lost its chance
of a verdict by the design's last look (futility).

Looks: the seeds n_1 < n_2 < ... <= n_max that every input of an open claim has at stage k (the first n_k seeds of
each run source). Error spending: Hwang-Shih-DeCani with gamma -6, alpha(t) = alpha (1 - e^(6t)) / (1 - e^6) at
information fraction t = n_k / n_max. Look k spends the increment a_k = alpha(t_k) - alpha(t_{k-1}): the open claims'
p-values for and against (exact counts of seeds, valid at any n for any distribution) are corrected by
Benjamini-Hochberg at level a_k in the family of every claim, where a claim decided at an earlier look counts as a
p of 0 for its verdict (it lifts the cut-off as in a fixed design) and 1 against. The looks' levels sum to alpha, so
over all claims and looks the expected share of false verdicts among all verdicts is at most alpha (at each look
the false verdicts it adds are at most a share a_k of the verdicts given so far, in expectation). Gamma -6 keeps
a_K = 0.026 for the last look and spends 0.00062 at the second (15 seeds, one of them on the wrong side: p = 0.00049);
the first look (10 seeds, p >= 2^-10) only finds futile claims. Among gamma -2, -4 and -6 it gives the ledger the
most power (analysis.simulation: 0.15, 0.24, 0.28 on the mixture).
Futility (non-binding: the promise does not need it): an open claim whose chance of a verdict by n_max at its
observed share of seeds is below `futility` stops asking for seeds and is reported inconclusive at that look; its
p-values stay in every later look's correction as 1, so that dropping the unpromising claims cannot loosen the
cut-off of the promising ones.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from workflow.plan import next_look

from .chapter import Context
from .claims import ledger, load_claims, samples
from .verdicts import DEFAULTS

SPENDING = 'Hwang-Shih-DeCani (gamma -6)'
GAMMA = -6.0
DECIDED = ('reproduced', 'contradicted', 'untested')
FUTILITY = 0.1  # a claim whose chance of a verdict by the last look is below this stops asking for seeds


def spent(t: np.ndarray, alpha: float) -> np.ndarray:
    """The error spent by information fraction t (in [0, 1]): alpha (1 - e^(-gamma t)) / (1 - e^(-gamma))."""
    return alpha * np.expm1(-GAMMA * np.asarray(t, dtype=float)) / math.expm1(-GAMMA)


def check_looks(looks: list[int], max_seeds: int) -> None:
    """A clear error unless 2 <= n_1 < n_2 < ... <= max_seeds."""
    if not looks or any(n < 2 for n in looks) or any(b <= a for a, b in zip(looks, looks[1:])) \
            or looks[-1] > max_seeds:
        raise ValueError(f'looks={looks} with max_seeds={max_seeds}: expected increasing seed counts, each at least '
                         f'2 and at most max_seeds')


def look_levels(looks: list[int], max_seeds: int, alpha: float = DEFAULTS['alpha']) -> list[float]:
    """The level each look spends [K]: the increments of the spending function, summing to alpha at max_seeds."""
    check_looks(looks, max_seeds)
    fractions = np.asarray([0, *looks], dtype=float) / max_seeds
    return [float(a) for a in np.diff(spent(fractions, alpha))]


def first_seeds(ctx: Context, n: int | None) -> Context:
    """ctx with each run source cut to its first n seeds (None: all)."""
    if n is None:
        return ctx
    values = ctx.values
    rank = values.groupby('source')['seed'].rank(method='dense')
    return Context(values[rank <= n], ctx.configs, ctx.baseline, ctx.chapter)


@dataclass(frozen=True)
class Design:
    """The looks of a sequential ledger: seeds at each look done so far, and the seeds a design stops at."""
    looks: list[int]
    max_seeds: int

    def describe(self, stage: int, verdict: str, futile: bool = False) -> str:
        n = self.looks[stage - 1]
        if verdict in ('reproduced', 'contradicted'):
            return f'stage {stage} ({n} seeds)'
        if verdict == 'untested':
            return ''
        if futile:
            return f'futile at stage {stage} ({n} seeds): under {FUTILITY:.0%} chance of a verdict by {self.max_seeds}'
        return f'undecided at max ({n} seeds)' if n == self.max_seeds else \
            f'undecided at stage {stage} ({n} seeds; the design goes on to {self.max_seeds})'


def sequential_ledger(ctx: Context, design: Design | None = None, claims: dict | None = None,
                      alpha: float | None = None, min_seeds: int | None = None,
                      futility: float = FUTILITY, history: list[pd.DataFrame] | None = None) -> pd.DataFrame:
    """The ledger replayed look by look on ctx: each statistical claim's row is the one of the look that decided
    it or found it futile (columns stage, futile, decided); checks are decided on all seeds at the last look. design
    None: one look at every seed (a fixed design). futility: the chance of a verdict under which a claim stops
    (0: never). attrs['looks']: per look its stage, seeds, level, BH cut-off,
    claims looked at, decided and futile. history: a list that receives each look's rows of the claims and findings it
    looked at (columns stage, seeds)."""
    claims = claims or load_claims(chapter=ctx.chapter)
    alpha = alpha if alpha is not None else claims.get('alpha', DEFAULTS['alpha'])
    levels = look_levels(design.looks, design.max_seeds, alpha) if design else [alpha]
    horizon = (design.max_seeds, levels[-1]) if design else None
    apart = [c for c in claims['claims'] if c['kind'] == 'check' or c.get('finding')]  # read once, at the last look
    open_claims = [c for c in claims['claims'] if c not in apart]
    frames, looks, decided_before, stopped = [], [], 0, 0
    for stage, (n, level) in enumerate(zip(design.looks if design else [None], levels), 1):
        last = stage == len(levels)
        looked = open_claims + (apart if last else [])
        frame = ledger(first_seeds(ctx, n), dict(claims, claims=looked), alpha=level, min_seeds=min_seeds,
                       horizon=horizon, decided=decided_before, stopped=stopped)
        statistical = ~frame['group'].isin(['check', 'finding'])
        decided = frame['verdict'].isin(DECIDED)
        frame['futile'] = statistical & ~decided & (frame['chance'] < futility) & (not last)
        done = decided | ~statistical | frame['futile'] | last
        stopped += int(frame['futile'].sum())
        decided_before += int((statistical & frame['verdict'].isin(DECIDED[:2])).sum())
        frames.append(frame[done].assign(stage=stage))
        looks.append(dict(stage=stage, seeds=n or (int(frame['n'].max()) if len(frame) else 0), level=level,
                          cutoff=frame.attrs['cutoff'],
                          looked_at=int((statistical & (frame['verdict'] != 'untested')).sum()),
                          decided=int((statistical & frame['verdict'].isin(DECIDED[:2])).sum()),
                          futile=int(frame['futile'].sum())))
        if history is not None:
            history.append(frame[frame['group'] != 'check'].assign(stage=stage, seeds=looks[-1]['seeds']))
        open_claims = [c for c in open_claims if c['id'] in set(frame.loc[~done, 'id'])]
    design = design or Design([looks[0]['seeds']], looks[0]['seeds'])
    order = {c['id']: i for i, c in enumerate(claims['claims'])}
    out = pd.concat(frames, ignore_index=True).sort_values('id', key=lambda s: s.map(order), kind='stable')
    out['decided'] = [design.describe(s, v, f) if g not in ('check', 'finding') else '' for s, v, f, g in
                      zip(out['stage'], out['verdict'], out['futile'], out['group'])]
    out = out.reset_index(drop=True)
    out.attrs.update(looks=looks, max_seeds=design.max_seeds, spending=SPENDING, alpha=alpha)
    return out


def feeders(ctx: Context, claims: list[dict]) -> list[str]:
    """The run sources (trainer cells, experiments) whose seeds the claims read, sorted."""
    return sorted({f.group for c in claims for f in samples(c, ctx) if f.group})


def next_stage(ctx: Context, design: Design, step: int, claims: dict | None = None,
               alpha: float | None = None, futility: float = FUTILITY) -> dict:
    """After the last look of design: the claims decided, still open and found futile there, and the plan of the
    next stage ({seeds, sources}: the sources the open claims read; {} when done)."""
    claims = claims or load_claims(chapter=ctx.chapter)
    frame = sequential_ledger(ctx, design, claims, alpha, futility=futility)
    at_last = frame[(frame['stage'] == len(design.looks)) & ~frame['group'].isin(['check', 'finding'])]
    still = at_last[~at_last['verdict'].isin(DECIDED) & ~at_last['futile']]
    plan = {}
    if len(still) and design.looks[-1] < design.max_seeds:
        open_claims = [c for c in claims['claims'] if c['id'] in set(still['id'])]
        plan = dict(seeds=next_look(design.looks[-1], step, design.max_seeds),
                    sources=feeders(ctx, open_claims))
    return dict(stage=len(design.looks), seeds=design.looks[-1],
                decided=at_last.loc[at_last['verdict'].isin(DECIDED[:2]), 'id'].tolist(),
                undecided=still['id'].tolist(), futile=at_last.loc[at_last['futile'], 'id'].tolist(), next=plan)
