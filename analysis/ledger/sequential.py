"""The ledger as a group-sequential design: seeds come in stages, every open claim is looked at after each stage,
and a claim stops at the first look that decides it (for or against it), or when it has lost its chance
of a verdict by the design's last look (futility).

Looks: the seeds n_1 < n_2 < ... <= n_max that every input of an open claim has at stage k (the first n_k seeds of
each run source). Error spending: Hwang-Shih-DeCani with the plan's gamma (default -6), alpha(t) =
alpha (1 - e^(-gamma t)) / (1 - e^(-gamma)) at information fraction t = n_k / n_max. Look k spends the increment
a_k = alpha(t_k) - alpha(t_{k-1}): the open claims' p-values for and against (exact counts of seeds, valid at any
n for any distribution) are corrected by Benjamini-Hochberg at level a_k in the family of every claim, where a claim
decided at an earlier look counts as a p of 0 for its verdict (it lifts the cut-off as in a fixed design) and 1
against. The looks' levels sum to alpha, so over all claims and looks the expected share of false verdicts among all
verdicts is at most alpha (at each look the false verdicts it adds are at most a share a_k of the verdicts given so
far, in expectation). Gamma -6 keeps
a_K = 0.026 for the last look and spends 0.00062 at the second (15 seeds, one of them on the wrong side: p = 0.00049);
the first look (10 seeds, p >= 2^-10) only finds futile claims. Among gamma -2, -4 and -6 it gives the ledger the
most power (analysis.ledger.simulation: 0.15, 0.24, 0.28 on the mixture).
Futility (non-binding: the promise does not need it), one rule for the looks that plan the next stage and the
ledger that replays them: at any look before the design's last, an open claim whose chance of a verdict by n_max,
at the last look's level and its observed share of seeds, is below the plan's `futility` stops asking for seeds at
that look and is reported inconclusive there; its p-values stay in every later look's correction as 1, so that
dropping the unpromising claims cannot loosen the cut-off of the promising ones.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from workflow.plan import GAMMA, SeedPlan

from ..stats.inference import DEFAULTS
from .chapter import Context
from .claims import ledger, load_claims, samples
from .verdicts import DECIDED, UNTESTED, smallest_p

STOPPED = DECIDED + (UNTESTED,)  # a claim no later look reads


def spent(t: np.ndarray, alpha: float, gamma: float = GAMMA) -> np.ndarray:
    """The error spent by information fraction t (in [0, 1]): alpha (1 - e^(-gamma t)) / (1 - e^(-gamma))."""
    return alpha * np.expm1(-gamma * np.asarray(t, dtype=float)) / math.expm1(-gamma)


def spending(gamma: float) -> str:
    """The spending function's name, as the ledger states it."""
    return f'Hwang-Shih-DeCani (gamma {gamma:g})'


def check_looks(looks: list[int], max_seeds: int) -> None:
    """A clear error unless 2 <= n_1 < n_2 < ... <= max_seeds."""
    if not looks or any(n < 2 for n in looks) or any(b <= a for a, b in zip(looks, looks[1:])) \
            or looks[-1] > max_seeds:
        raise ValueError(f'looks={looks} with max_seeds={max_seeds}: expected increasing seed counts, each at least '
                         f'2 and at most max_seeds')


def look_levels(looks: list[int], max_seeds: int, alpha: float = DEFAULTS['alpha'],
                gamma: float = GAMMA) -> list[float]:
    """The level each look spends [K]: the increments of the spending function, summing to alpha at max_seeds."""
    check_looks(looks, max_seeds)
    fractions = np.asarray([0, *looks], dtype=float) / max_seeds
    return [float(a) for a in np.diff(spent(fractions, alpha, gamma))]


def decidable(claims: list[dict], plan: SeedPlan, alpha: float = DEFAULTS['alpha']) -> pd.DataFrame:
    """Per statistical claim and look of a sequential plan: the look's level and the smallest p the claim's test
    reaches at the look's seeds (verdicts.smallest_p); can_decide where it is at or below the level. Columns id,
    stage, seeds, level, smallest_p, can_decide."""
    levels = look_levels(list(plan.looks), plan.max_seeds, alpha, plan.gamma)
    rows = [dict(id=claim['id'], stage=stage, seeds=n, level=level, smallest_p=smallest_p(claim, n))
            for claim in claims if claim['kind'] != 'check' and not claim.get('finding')
            for stage, (n, level) in enumerate(zip(plan.looks, levels), 1)]
    frame = pd.DataFrame(rows, columns=['id', 'stage', 'seeds', 'level', 'smallest_p'])
    return frame.assign(can_decide=frame['smallest_p'] <= frame['level'])


def first_seeds(ctx: Context, n: int | None) -> Context:
    """ctx with each run source cut to its first n seeds (None: all)."""
    if n is None:
        return ctx
    values = ctx.values
    rank = values.groupby('source')['seed'].rank(method='dense')
    return Context(values[rank <= n], ctx.configs, ctx.baseline, ctx.chapter)


def describe(plan: SeedPlan, stage: int, verdict: str, futile: bool, seeds: float, futility: float) -> str:
    """When a claim's verdict came, in words: its stage and the seeds it had there, futility, or undecided (at the
    design's last look, or at a stage where the design goes on)."""
    n = int(seeds) if math.isfinite(seeds) else plan.looks[stage - 1]
    if verdict in DECIDED:
        return f'stage {stage} ({n} seeds)'
    if verdict == UNTESTED:
        return ''
    if futile:
        return f'futile at stage {stage} ({n} seeds): under {futility:.0%} chance of a verdict by {plan.max_seeds}'
    return f'undecided at max ({n} seeds)' if stage == len(plan.looks) else \
        f'undecided at stage {stage} ({n} seeds; the design goes on to {plan.max_seeds})'


def sequential_ledger(ctx: Context, plan: SeedPlan | None = None, stage: int | None = None, claims: dict | None = None,
                      alpha: float | None = None, min_seeds: int | None = None,
                      futility: float | None = None, history: list[pd.DataFrame] | None = None) -> pd.DataFrame:
    """The ledger replayed look by look on ctx: each statistical claim's row is the one of the look that decided
    it or found it futile (columns stage, futile, decided); checks are decided on all seeds at the last look. plan
    and stage: a sequential design's seed plan (workflow/plan.py) and the looks done, its stages 1 to `stage` (None:
    all); plan None or fixed: one look at every seed. futility: the chance of a verdict under which a claim stops
    (None: the plan's; 0: never). attrs['looks']: per look its stage, seeds, level, BH cut-off,
    claims looked at, decided and futile. history: a list that receives each look's rows of the claims and findings it
    looked at (columns stage, seeds)."""
    claims = claims or load_claims(chapter=ctx.chapter)
    alpha = alpha if alpha is not None else claims.get('alpha', DEFAULTS['alpha'])
    sequential = plan is not None and plan.sequential
    looks = list(plan.looks[:stage or len(plan.looks)]) if sequential else None
    every_level = look_levels(list(plan.looks), plan.max_seeds, alpha, plan.gamma) if sequential else [alpha]
    levels = every_level[:len(looks or [None])]
    horizon = (plan.max_seeds, every_level[-1]) if sequential else None  # the design's last look, at every look
    futility = (plan.futility if sequential else 0.0) if futility is None else futility
    apart = [c for c in claims['claims'] if c['kind'] == 'check' or c.get('finding')]  # read once, at the last look
    open_claims = [c for c in claims['claims'] if c not in apart]
    frames, done_looks, decided_before, stopped = [], [], 0, 0
    for look, (n, level) in enumerate(zip(looks or [None], levels), 1):
        last = look == len(levels)  # the last look done
        looked = open_claims + (apart if last else [])
        frame = ledger(first_seeds(ctx, n), dict(claims, claims=looked), alpha=level, min_seeds=min_seeds,
                       horizon=horizon, decided=decided_before, stopped=stopped)
        statistical = ~frame['group'].isin(['check', 'finding'])
        decided = frame['verdict'].isin(STOPPED)
        frame['futile'] = statistical & ~decided & (frame['chance'] < futility) & (look < len(every_level))
        done = decided | ~statistical | frame['futile'] | last
        stopped += int(frame['futile'].sum())
        decided_before += int((statistical & frame['verdict'].isin(DECIDED)).sum())
        frames.append(frame[done].assign(stage=look))
        done_looks.append(dict(stage=look, seeds=n or (int(frame['n'].max()) if len(frame) else 0), level=level,
                               cutoff=frame.attrs['cutoff'],
                               looked_at=int((statistical & (frame['verdict'] != UNTESTED)).sum()),
                               decided=int((statistical & frame['verdict'].isin(DECIDED)).sum()),
                               futile=int(frame['futile'].sum())))
        if history is not None:
            history.append(frame[frame['group'] != 'check'].assign(stage=look, seeds=done_looks[-1]['seeds']))
        open_claims = [c for c in open_claims if c['id'] in set(frame.loc[~done, 'id'])]
    if not looks:  # a fixed design: one look at the seeds there are
        plan = SeedPlan(tuple(range(done_looks[0]['seeds'])), (done_looks[0]['seeds'],), 0)
    order = {c['id']: i for i, c in enumerate(claims['claims'])}
    out = pd.concat(frames, ignore_index=True).sort_values('id', key=lambda s: s.map(order), kind='stable')
    out['decided'] = [describe(plan, s, v, f, n, futility) if g not in ('check', 'finding') else ''
                      for s, v, f, n, g in zip(out['stage'], out['verdict'], out['futile'], out['n'], out['group'])]
    out = out.reset_index(drop=True)
    out.attrs.update(looks=done_looks, max_seeds=plan.max_seeds, spending=spending(plan.gamma), alpha=alpha)
    return out


def feeders(ctx: Context, claims: list[dict]) -> list[str]:
    """The run sources (trainer cells, experiments) whose seeds the claims read, sorted."""
    return sorted({group for c in claims for f in samples(c, ctx) for group in f.groups})


def next_stage(ctx: Context, plan: SeedPlan, stage: int, claims: dict | None = None,
               alpha: float | None = None, futility: float | None = None) -> dict:
    """After the look of `stage` of a sequential plan: the claims decided, still open and found futile there, those
    deferred (open, but the next look cannot decide them: decidable()) and the plan of the next stage ({seeds,
    sources}: the sources read by the open claims that buy seeds; {} when done). Under the plan's allocation
    'decidable' a source buys seeds only for a claim the next look can decide, and a deferred claim's sources catch
    up at the stage before a look that can; under 'open' every open claim buys."""
    if not plan.sequential:
        raise ValueError('a look needs a sequential seed plan ({initial, step, max}); a list of seeds is one stage')
    plan.check_stage(stage)
    claims = claims or load_claims(chapter=ctx.chapter)
    frame = sequential_ledger(ctx, plan, stage, claims, alpha, futility=futility)
    at_last = frame[(frame['stage'] == stage) & ~frame['group'].isin(['check', 'finding'])]
    still = at_last[~at_last['verdict'].isin(STOPPED) & ~at_last['futile']]
    following, deferred = {}, []
    if len(still) and plan.next_seeds(stage) is not None:
        open_claims = [c for c in claims['claims'] if c['id'] in set(still['id'])]
        found = decidable(open_claims, plan, frame.attrs['alpha'])
        can = set(found.loc[(found['stage'] == stage + 1) & (found['can_decide'] | (plan.allocation == 'open')), 'id'])
        deferred = [c['id'] for c in open_claims if c['id'] not in can]
        following = dict(seeds=plan.next_seeds(stage), sources=feeders(ctx, [c for c in open_claims if c['id'] in can]))
    return dict(stage=stage, seeds=plan.looks[stage - 1],
                decided=at_last.loc[at_last['verdict'].isin(DECIDED), 'id'].tolist(),
                undecided=still['id'].tolist(), futile=at_last.loc[at_last['futile'], 'id'].tolist(),
                deferred=deferred, next=following)
