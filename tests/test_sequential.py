"""The look after a stage of a staged design (analysis/ledger/stages.py): the ledger on every seed names the open
claims within reach of the design's max, whose sources get the next stage's seeds (every source) or the policy's next
batch within the budget (budgeted), and those projected beyond it; and the look's command line."""
from __future__ import annotations

import subprocess
import sys

import pytest
from test_analysis import ctx, runs, tree  # noqa: F401 (the synthetic runs, 7 cells and 6 experiments x 12 seeds)

from analysis.ledger.allocation import Prices
from analysis.ledger.chapter import Context
from analysis.ledger.claims import feeders, ledger, load_claims
from analysis.ledger.stages import look_line, next_stage
from analysis.ledger.verdicts import DECIDED
from workflow.plan import DesignError, seed_plan
from workflow.state import JobCosts


def plan(initial: int, step: int, most: int):
    """A staged design's seed plan (workflow/plan.py)."""
    return seed_plan({'seeds': dict(initial=initial, step=step, max=most)})


def first_seeds(ctx: Context, n: int) -> Context:  # noqa: F811
    """ctx with each run source cut to its first n seeds: the runs a stage of n seeds holds."""
    values = ctx.values
    rank = values.groupby('source')['seed'].rank(method='dense')
    return Context(values[rank <= n], ctx.configs, ctx.baseline, ctx.chapter)


def statistical(frame):
    return frame[~frame['group'].isin(['check', 'finding'])].set_index('id')


def test_the_next_stage_feeds_the_open_claims_projected_within_max_only(ctx):  # noqa: F811
    eight = first_seeds(ctx, 8)
    look = next_stage(eight, plan(8, 2, 40), 1)
    rows = statistical(ledger(eight))  # the look decides the ledger on every seed there is
    assert look['stage'] == 1 and set(look['seeds']) == set(ctx.values['source'])
    assert look['seeds']['baseline'] == 8 and look['seeds']['clip_gradients'] == 1  # the synthetic runs hold one
    assert look['decided'] == [i for i in rows.index if rows.loc[i, 'verdict'] in DECIDED]
    inconclusive = set(rows.index[rows['verdict'] == 'inconclusive'])
    assert look['open'] and set(look['open']) | set(look['beyond_max']) == inconclusive
    assert not set(look['open']) & set(look['beyond_max'])
    assert (rows.loc[look['open'], 'n_80'] <= 40).all()
    beyond = rows.loc[look['beyond_max'], 'n_80'].astype(float)
    assert (beyond.isna() | (beyond > 40)).all()
    buying = [c for c in load_claims()['claims'] if c['id'] in set(look['open'])]
    assert look['next'] == dict.fromkeys(feeders(eight, buying), 10) and look['stop'] == ''
    assert set(look['next']) <= set(ctx.values['source']) and 'cost_s' not in look


def test_a_design_whose_max_no_open_claim_can_reach_ends_there(ctx):  # noqa: F811
    """Going on to 40 seeds, some of the synthetic claims open at 8 are projected within reach; going on to 9, none:
    every open claim is beyond max, and the design ends before its last stage."""
    eight = first_seeds(ctx, 8)
    wide, narrow = next_stage(eight, plan(8, 2, 40), 1), next_stage(eight, plan(8, 1, 9), 1)
    assert wide['open'] and narrow['open'] == [] and narrow['next'] == {} and narrow['stop'] == 'beyond max'
    assert set(narrow['beyond_max']) == set(wide['beyond_max']) | set(wide['open'])
    assert narrow['decided'] == wide['decided']  # the plan moves seeds, never a verdict


def test_claims_under_min_seeds_are_not_yet_projected_and_ask_for_seeds(ctx):  # noqa: F811
    """At 2 seeds (under the claims' min_seeds, 3) no claim is decided nor projected: every open claim asks."""
    two = first_seeds(ctx, 2)
    look = next_stage(two, plan(2, 1, 3), 1)
    rows = statistical(ledger(two))
    assert look['decided'] == [] and look['beyond_max'] == []
    assert set(look['open']) == set(rows.index[rows['verdict'] == 'inconclusive']) != set()
    assert look['next'] == dict.fromkeys(feeders(two, [c for c in load_claims()['claims']
                                                       if c['id'] in set(look['open'])]), 3)


def test_the_last_stage_plans_nothing_and_a_fixed_design_has_no_stage_look(ctx):  # noqa: F811
    done = next_stage(ctx, plan(8, 4, 12), 2)
    assert done['next'] == {} and done['seeds']['baseline'] == 12
    with pytest.raises(ValueError, match='a stage look needs a staged seed plan'):
        next_stage(ctx, seed_plan({'seeds': [0, 1, 2]}), 1)
    with pytest.raises(ValueError, match='stage 3 is not a stage of this design: it has stages 1 to 2'):
        next_stage(ctx, plan(8, 4, 12), 3)


def greedy(initial: int, budget: float, batch: float = 0.25):
    """A budgeted design's seed plan: the greedy rule, max 40."""
    return seed_plan({'seeds': dict(initial=initial, max=40, policy='greedy', batch=batch, budget=budget)})


def table(ctx: Context, lacking: str = '') -> JobCosts:  # noqa: F811
    """A cost table of ctx's sources: a PPO cell 20 s, REINFORCE 5 s, an experiment 3 s, a warmed critic 4 s."""
    seconds = {s: 5.0 if s == 'reinforce' else 20.0 if s in ctx.configs else 3.0
               for s in ctx.values['source'].unique() if s != lacking}
    return JobCosts('r/costs.csv', seconds, 4.0, 'AMD EPYC', '2026-12-07', '5')


def test_a_budgeted_look_plans_the_policys_next_batch_within_the_budget_left(ctx):  # noqa: F811
    """After 8 seeds: the greedy batch, each source its own seeds, holding at least a batch (0.25 of the fixed 10-seed
    design's job-seconds) and within the budget left (1.5 of them, less the 8 seeds' runs and critics)."""
    eight, costs = first_seeds(ctx, 8), table(ctx)
    look = next_stage(eight, greedy(8, 1.5), 1, costs)
    prices = Prices.table(costs, costs.seconds, set(ctx.configs) - {'reinforce'})
    unit, held = prices.fixed(10), look['seeds']
    assert look['left_s'] == pytest.approx(1.5 * unit - prices.cost({}, held)) and look['stop'] == ''
    added = {s: n - held[s] for s, n in look['next'].items()}
    assert look['next'] and min(added.values()) >= 1 and max(look['next'].values()) <= 40
    assert look['cost_s'] == pytest.approx(prices.cost(held, added)) and 0.25 * unit <= look['cost_s'] <= look['left_s']
    reading = set(feeders(eight, [c for c in load_claims()['claims'] if c['id'] in set(look['open'])]))
    assert set(look['next']) <= reading and len(set(look['next'].values())) > 1  # each source its own seeds
    assert look_line(look).startswith(f"stage 1 (1 to 8 seeds a source): {len(look['decided'])} claims decided, ")
    assert look_line(look).endswith(f", {look['cost_s']:,.0f} job-seconds of the {look['left_s']:,.0f} left")


def test_a_batch_cut_to_the_budget_is_the_last_and_so_is_the_plans_last_stage(ctx):  # noqa: F811
    """0.05 of the fixed design left after 8 seeds: the batch is cut to what fits and the look after it plans none; at
    the plan's stage bound no batch follows either."""
    eight, costs = first_seeds(ctx, 8), table(ctx)
    cut = next_stage(eight, greedy(8, 0.85), 1, costs)
    assert cut['stop'] == 'budget spent' and cut['next'] and cut['cost_s'] <= cut['left_s']
    after = next_stage(eight, greedy(8, 0.85), 2, costs, previous=cut)
    assert after['next'] == {} and after['stop'] == 'budget spent' and after['cost_s'] == 0
    plan = greedy(8, 1.5)
    bound = next_stage(eight, plan, plan.stages, costs, previous=dict(stop=''))
    assert (bound['next'], bound['stop']) == ({}, 'budget spent')
    assert look_line(bound).endswith('next: none (budget spent), 0 job-seconds of the '
                                     f'{bound["left_s"]:,.0f} left')


def test_a_budgeted_look_needs_its_cost_table_pricing_every_source(ctx):  # noqa: F811
    eight = first_seeds(ctx, 8)
    with pytest.raises(ValueError, match='a look of a budgeted design needs its cost table, and after stage 1 the '
                                         'look before'):
        next_stage(eight, greedy(8, 1.5), 2, table(ctx))
    with pytest.raises(DesignError, match='r/costs.csv lacks reinforce'):
        next_stage(eight, greedy(8, 1.5), 1, table(ctx, lacking='reinforce'))


@pytest.mark.parametrize('seeds, words', [('{"initial": 10}', 'DesignError: seeds: step, max: missing'),
                                          ('ten', 'JSONDecodeError'),
                                          ('{"initial": 10, "step": 5, "max": 5}', 'max=5 is less than initial=10'),
                                          ('{"initial": 10, "step": 5, "max": 40, "gamma": -6}',
                                           'gamma: not a key')])
def test_a_look_given_seeds_that_are_not_a_design_is_refused_naming_them(tmp_path, seeds, words):
    done = subprocess.run([sys.executable, '-m', 'analysis', 'stage', '--records', str(tmp_path), '--seeds', seeds,
                           '--stage', '1', '--out', str(tmp_path / 'look.json')], capture_output=True, text=True)
    assert done.returncode == 2 and f"argument --seeds: {seeds!r}: expected a list of seeds, " in done.stderr
    assert words in done.stderr and not (tmp_path / 'look.json').exists()


@pytest.mark.parametrize('command, options, words', [
    ('stage', ['--seeds', '{"initial": 2, "step": 1, "max": 3}'], 'stage needs --seeds, --stage and --out'),
    ('aggregate', ['--seeds', '{"initial": 2, "step": 1, "max": 3}'], 'aggregate reads every seed of its runs'),
    ('claims', ['--stage', '2'], 'claims reads every seed of its runs: --seeds, --stage, --costs and --previous are '
                                 'options of stage only'),
    ('claims', ['--costs', 'costs.csv'], 'claims reads every seed of its runs')])
def test_only_the_stage_look_takes_a_plan_and_a_stage(tmp_path, command, options, words):
    done = subprocess.run([sys.executable, '-m', 'analysis', command, '--records', str(tmp_path), *options],
                          capture_output=True, text=True)
    assert done.returncode == 2 and words in done.stderr.splitlines()[-1]
