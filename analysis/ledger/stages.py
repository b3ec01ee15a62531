"""The stage plan of a staged design (seeds {initial, step, max}): after each stage, which run sources get more seeds.

A plan and a budget, not a promise. The ledger (claims.ledger) is decided on every seed the runs hold, by e-BH over
e-processes, valid at any look and whatever seeds each source was given; so the rule below only chooses where the
design's runs go, and changing it changes no verdict's guarantee. After stage K (`python -m analysis stage`):

    decided      statistical claims (not checks, not findings) with a verdict
    open         open claims (inconclusive) that ask for seeds (allocation.Ask.target): projected to an 80% chance of a
                 verdict (n_80) at most the design's max seeds, or too few seeds to be projected (fewer than the
                 claim's min_seeds)
    beyond_max   open claims projected beyond max (n_80 missing: beyond 1000 seeds; or above max): they ask no more
    next         {seeds, sources}: the run sources the open claims read (claims.feeders) get the seeds of stage K + 1,
                 `step` more than stage K's, at most max (allocation's 'every source' rule); {} after the last stage
                 or when no claim asks. A staged design gives every source the same seeds a stage; the greedy rule
                 gives each source its own (allocation.next_batch), which a look of this shape cannot say
"""
from __future__ import annotations

from workflow.plan import SeedPlan

from .allocation import asks, claim_sources, open_rows
from .chapter import Context
from .claims import FINDING, ledger, load_claims
from .verdicts import DECIDED


def next_stage(ctx: Context, plan: SeedPlan, stage: int, claims: dict | None = None,
               alpha: float | None = None) -> dict:
    """After stage `stage` of a staged plan, the ledger on every seed of ctx -> the look: stage, seeds (the stage's
    seeds per source), decided, open, beyond_max (claim ids) and next ({seeds, sources} or {}): the allocation
    policy's 'every source' rule (allocation.py) at the plan's step, as a staged design runs it."""
    if not plan.staged:
        raise ValueError('a stage look needs a staged seed plan ({initial, step, max}); a list of seeds is one stage')
    plan.check_stage(stage)
    claims = claims or load_claims(chapter=ctx.chapter)
    frame = ledger(ctx, claims, alpha=alpha)
    statistical = frame[~frame['group'].isin(['check', FINDING])]
    unsettled = set(statistical.loc[open_rows(statistical), 'id'])
    found = asks(statistical, claims['claims'],
                 claim_sources(ctx, [c for c in claims['claims'] if c['id'] in unsettled]))
    wants = [a for a in found if a.target(plan.max_seeds) is not None]
    following = {}
    if wants and plan.next_seeds(stage) is not None:
        following = dict(seeds=plan.next_seeds(stage), sources=sorted({s for a in wants for s in a.sources}))
    return dict(stage=stage, seeds=plan.looks[stage - 1],
                decided=statistical.loc[statistical['verdict'].isin(DECIDED), 'id'].tolist(),
                open=[a.id for a in wants], beyond_max=[a.id for a in found if a.target(plan.max_seeds) is None],
                next=following)
