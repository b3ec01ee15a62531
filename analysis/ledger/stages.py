"""The stage plan of a staged design (seeds {initial, step, max}): after each stage, which run sources get more seeds.

A plan and a budget, not a promise. The ledger (claims.ledger) is decided on every seed the runs hold, by e-BH over
e-processes, valid at any look and whatever seeds each source was given; so the rule below only chooses where the
design's runs go, and changing it changes no verdict's guarantee. After stage K (`python -m analysis stage`):

    decided      statistical claims (not checks, not findings) with a verdict
    open         open claims (inconclusive) that ask for seeds: projected to an 80% chance of a verdict (n_80) at
                 most the design's max seeds, or too few seeds to be projected (fewer than the claim's min_seeds)
    beyond_max   open claims projected beyond max (n_80 missing: beyond 1000 seeds; or above max): they ask no more
    next         {seeds, sources}: the run sources the open claims read (claims.feeders) get the seeds of stage K + 1,
                 `step` more than stage K's, at most max; {} after the last stage or when no claim asks
"""
from __future__ import annotations

import pandas as pd

from workflow.plan import SeedPlan

from ..stats.inference import DEFAULTS
from .chapter import Context
from .claims import FINDING, feeders, ledger, load_claims
from .verdicts import DECIDED


def asking(frame: pd.DataFrame, claims: list[dict], max_seeds: int) -> pd.Series:
    """Per row of a ledger frame: whether its claim is open and asks for seeds (n_80 at most max_seeds, or fewer seeds
    than the claim's min_seeds, which leaves it unprojected)."""
    least = {c['id']: c.get('min_seeds', DEFAULTS['min_seeds']) for c in claims}
    unprojected = frame['n'] < frame['id'].map(least)
    within = frame['n_80'].astype(float).le(max_seeds)  # NaN: beyond 1000 seeds, or unprojected
    return open_rows(frame) & (within | unprojected)


def open_rows(frame: pd.DataFrame) -> pd.Series:
    """Per row of a ledger frame: whether it is a statistical claim that is inconclusive."""
    return ~frame['group'].isin(['check', FINDING]) & (frame['verdict'] == 'inconclusive')


def next_stage(ctx: Context, plan: SeedPlan, stage: int, claims: dict | None = None,
               alpha: float | None = None) -> dict:
    """After stage `stage` of a staged plan, the ledger on every seed of ctx -> the look: stage, seeds (the stage's
    seeds per source), decided, open, beyond_max (claim ids) and next ({seeds, sources} or {})."""
    if not plan.staged:
        raise ValueError('a stage look needs a staged seed plan ({initial, step, max}); a list of seeds is one stage')
    plan.check_stage(stage)
    claims = claims or load_claims(chapter=ctx.chapter)
    frame = ledger(ctx, claims, alpha=alpha)
    statistical = frame[~frame['group'].isin(['check', FINDING])]
    wants = asking(statistical, claims['claims'], plan.max_seeds)
    beyond = open_rows(statistical) & ~wants
    following = {}
    if wants.any() and plan.next_seeds(stage) is not None:
        buying = [c for c in claims['claims'] if c['id'] in set(statistical.loc[wants, 'id'])]
        following = dict(seeds=plan.next_seeds(stage), sources=feeders(ctx, buying))
    return dict(stage=stage, seeds=plan.looks[stage - 1],
                decided=statistical.loc[statistical['verdict'].isin(DECIDED), 'id'].tolist(),
                open=statistical.loc[wants, 'id'].tolist(), beyond_max=statistical.loc[beyond, 'id'].tolist(),
                next=following)
