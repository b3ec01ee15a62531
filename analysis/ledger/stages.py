"""The look after a stage of a staged design: the ledger on every seed, and which run sources get more seeds next.

A plan and a budget, not a promise. The ledger (claims.ledger) is decided on every seed the runs hold, by e-BH over
e-processes, valid at any look and whatever seeds each source was given; so the rule below only chooses where the
design's runs go, and changing it changes no verdict's guarantee. After stage K (`python -m analysis stage`):

    seeds        the seeds each run source holds (of the plan's: a seed outside it counts in the ledger, not here)
    decided      statistical claims (not checks, not findings) with a verdict
    open         open claims (inconclusive) that ask for seeds (allocation.Ask.target): projected to an 80% chance of a
                 verdict (n_80) at most the design's max seeds, or too few seeds to be projected (fewer than the
                 claim's min_seeds)
    beyond_max   open claims projected beyond max (n_80 missing: beyond 1000 seeds; or above max): they ask no more
    next         source -> the seeds it has at stage K + 1, for the sources that get more; {}: the design is done
    stop         why no batch follows ('' where one does; allocation.STOPS)
    cost_s       a budgeted design's: the next batch's job-seconds by the cost table
    left_s       a budgeted design's: its budget's job-seconds left before the next batch (the budget, in fixed
                 designs of FIXED_SEEDS seeds, less what every source's seeds cost: allocation.Prices)

'every source' (seeds {initial, step, max}): the sources the open claims read get the seeds of stage K + 1, the plan's
looks (allocation's 'every source' rule; a source skipped at a look joins the next at its seeds). Budgeted ('greedy',
'greedy in steps'): the next batch of allocation.next_batch, each source its own seeds; a batch cut to the budget is
the last, and so is the one at the plan's last stage (SeedPlan.stages).
"""
from __future__ import annotations

from workflow.plan import FIXED_SEEDS, SeedPlan, check_budget, seed_span
from workflow.state import JobCosts

from .allocation import Ask, Batch, Policy, Prices, asks, claim_sources, next_batch
from .chapter import Context
from .claims import inconclusive, ledger, load_claims, statistical
from .verdicts import DECIDED


def next_stage(ctx: Context, plan: SeedPlan, stage: int, costs: JobCosts | None = None, previous: dict | None = None,
               claims: dict | None = None, alpha: float | None = None) -> dict:
    """After stage `stage` of a staged plan, the ledger on every seed of ctx -> the look (the module's header);
    costs: a budgeted plan's cost table; previous: a budgeted plan's look before (none after stage 1)."""
    if not plan.staged:
        raise ValueError('a stage look needs a staged seed plan (a mapping); a list of seeds is one stage')
    plan.check_stage(stage)
    if plan.budgeted and (costs is None or (previous is None) != (stage == 1)):
        raise ValueError('a look of a budgeted design needs its cost table, and after stage 1 the look before')
    claims = claims or load_claims(chapter=ctx.chapter)
    frame = ledger(ctx, claims, alpha=alpha)
    unsettled = set(frame.loc[inconclusive(frame), 'id'])
    found = asks(frame, claims['claims'], claim_sources(ctx, [c for c in claims['claims'] if c['id'] in unsettled]))
    held = holding(ctx, plan)
    look = dict(stage=stage, seeds=held,
                decided=frame.loc[statistical(frame) & frame['verdict'].isin(DECIDED), 'id'].tolist(),
                open=[a.id for a in found if a.target(plan.max_seeds) is not None],
                beyond_max=[a.id for a in found if a.target(plan.max_seeds) is None])
    if not plan.budgeted:
        return dict(look, **to_next_look(found, plan, stage))
    return dict(look, **budgeted(found, held, priced(ctx, plan, costs), plan, stage, previous or {}))


def holding(ctx: Context, plan: SeedPlan) -> dict[str, int]:
    """Run source -> the seeds of the plan it holds."""
    values = ctx.values[ctx.values['seed'].isin(plan.seeds)]
    return {source: int(n) for source, n in values.groupby('source')['seed'].nunique().items()}


def to_next_look(found: list[Ask], plan: SeedPlan, stage: int) -> dict:
    """'every source' at the plan's looks: the sources of the open claims that ask, to the next look's seeds."""
    wants = [a for a in found if a.target(plan.max_seeds) is not None]
    more = plan.next_seeds(stage)
    following = {s: more for s in sorted({s for a in wants for s in a.sources})} if more is not None else {}
    return dict(next=following, stop='' if following else 'beyond max' if found else 'decided')


def budgeted(found: list[Ask], held: dict[str, int], prices: Prices, plan: SeedPlan, stage: int,
             previous: dict) -> dict:
    """The next batch of a budgeted plan (allocation.next_batch), within the budget left; none after the budget's
    last batch or at the plan's last stage."""
    unit = prices.fixed(FIXED_SEEDS)
    left = plan.budget * unit - prices.cost({}, held)
    if previous.get('stop') == 'budget spent' or stage == plan.stages:
        batch = Batch({}, 0.0, (), 'budget spent')
    else:
        policy = Policy(plan.policy, plan.step or plan.max_seeds, plan.batch * unit, plan.max_seeds)
        batch = next_batch(found, held, prices, policy, left)
    return dict(next={s: held[s] + k for s, k in batch.seeds.items()}, stop=batch.stop, cost_s=batch.cost_s,
                left_s=left)


def priced(ctx: Context, plan: SeedPlan, costs: JobCosts) -> Prices:
    """ctx's run sources priced by a budgeted plan's cost table (a DesignError naming those it lacks), a warmed critic
    for each new seed of its PPO cells."""
    sources = sorted(ctx.values['source'].unique())
    check_budget(plan, costs, sources, costs.path)
    return Prices.table(costs, sources, [name for name, config in ctx.configs.items() if config['algorithm'] == 'ppo'])


def look_line(look: dict) -> str:
    """A look in one line, as the command prints it."""
    following = (f'{len(look["next"])} sources to {seed_span(look["next"].values())} seeds' if look['next']
                 else f'none ({look["stop"]})')
    if 'cost_s' in look:
        following += f', {look["cost_s"]:,.0f} job-seconds of the {look["left_s"]:,.0f} left'
    return (f"stage {look['stage']} ({seed_span(look['seeds'].values())} seeds a source): {len(look['decided'])} "
            f"claims decided, {len(look['open'])} open within max, {len(look['beyond_max'])} projected beyond max; "
            f"next: {following}")
