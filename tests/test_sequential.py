"""The stage plan of a staged design (analysis/ledger/stages.py): after a stage, the ledger on every seed names the
open claims within reach of the design's max, whose sources get the next stage's seeds, and those projected beyond
it; and the look's command line."""
from __future__ import annotations

import subprocess
import sys

import pytest
from test_analysis import ctx, runs, tree  # noqa: F401 (the synthetic runs, 7 cells and 6 experiments x 12 seeds)

from analysis.ledger.chapter import Context
from analysis.ledger.claims import feeders, ledger, load_claims
from analysis.ledger.stages import next_stage
from analysis.ledger.verdicts import DECIDED
from workflow.plan import seed_plan


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
    assert look['stage'] == 1 and look['seeds'] == 8
    assert look['decided'] == [i for i in rows.index if rows.loc[i, 'verdict'] in DECIDED]
    inconclusive = set(rows.index[rows['verdict'] == 'inconclusive'])
    assert look['open'] and set(look['open']) | set(look['beyond_max']) == inconclusive
    assert not set(look['open']) & set(look['beyond_max'])
    assert (rows.loc[look['open'], 'n_80'] <= 40).all()
    beyond = rows.loc[look['beyond_max'], 'n_80'].astype(float)
    assert (beyond.isna() | (beyond > 40)).all()
    buying = [c for c in load_claims()['claims'] if c['id'] in set(look['open'])]
    assert look['next'] == dict(seeds=10, sources=feeders(eight, buying))
    assert set(look['next']['sources']) <= set(ctx.values['source'])


def test_a_design_whose_max_no_open_claim_can_reach_ends_there(ctx):  # noqa: F811
    """Going on to 40 seeds, some of the synthetic claims open at 8 are projected within reach; going on to 9, none:
    every open claim is beyond max, and the design ends before its last stage."""
    eight = first_seeds(ctx, 8)
    wide, narrow = next_stage(eight, plan(8, 2, 40), 1), next_stage(eight, plan(8, 1, 9), 1)
    assert wide['open'] and narrow['open'] == [] and narrow['next'] == {}
    assert set(narrow['beyond_max']) == set(wide['beyond_max']) | set(wide['open'])
    assert narrow['decided'] == wide['decided']  # the plan moves seeds, never a verdict


def test_claims_under_min_seeds_are_not_yet_projected_and_ask_for_seeds(ctx):  # noqa: F811
    """At 2 seeds (under the claims' min_seeds, 3) no claim is decided nor projected: every open claim asks."""
    two = first_seeds(ctx, 2)
    look = next_stage(two, plan(2, 1, 3), 1)
    rows = statistical(ledger(two))
    assert look['decided'] == [] and look['beyond_max'] == []
    assert set(look['open']) == set(rows.index[rows['verdict'] == 'inconclusive']) != set()
    assert look['next'] == dict(seeds=3, sources=feeders(two, [c for c in load_claims()['claims']
                                                                if c['id'] in set(look['open'])]))


def test_the_last_stage_plans_nothing_and_a_fixed_design_has_no_stage_look(ctx):  # noqa: F811
    done = next_stage(ctx, plan(8, 4, 12), 2)
    assert done['next'] == {} and done['seeds'] == 12
    with pytest.raises(ValueError, match='a stage look needs a staged seed plan'):
        next_stage(ctx, seed_plan({'seeds': [0, 1, 2]}), 1)
    with pytest.raises(ValueError, match='stage 3 is not a stage of this design: it has stages 1 to 2'):
        next_stage(ctx, plan(8, 4, 12), 3)


@pytest.mark.parametrize('seeds, words', [('{"initial": 10}', "KeyError: 'step'"), ('ten', 'JSONDecodeError'),
                                          ('{"initial": 10, "step": 5, "max": 5}', 'max=5 is less than initial=10'),
                                          ('{"initial": 10, "step": 5, "max": 40, "gamma": -6}',
                                           'gamma: not a key of a staged design')])
def test_a_look_given_seeds_that_are_not_a_design_is_refused_naming_them(tmp_path, seeds, words):
    done = subprocess.run([sys.executable, '-m', 'analysis', 'stage', '--records', str(tmp_path), '--seeds', seeds,
                           '--stage', '1', '--out', str(tmp_path / 'look.json')], capture_output=True, text=True)
    assert done.returncode == 2 and f"argument --seeds: {seeds!r}: expected a list of seeds or" in done.stderr
    assert words in done.stderr and not (tmp_path / 'look.json').exists()


@pytest.mark.parametrize('command, options, words', [
    ('stage', ['--seeds', '{"initial": 2, "step": 1, "max": 3}'], 'stage needs --seeds, --stage and --out'),
    ('aggregate', ['--seeds', '{"initial": 2, "step": 1, "max": 3}'], 'aggregate reads every seed of its runs'),
    ('claims', ['--stage', '2'], 'claims reads every seed of its runs: --seeds and --stage are options of stage')])
def test_only_the_stage_look_takes_a_plan_and_a_stage(tmp_path, command, options, words):
    done = subprocess.run([sys.executable, '-m', 'analysis', command, '--records', str(tmp_path), *options],
                          capture_output=True, text=True)
    assert done.returncode == 2 and words in done.stderr.splitlines()[-1]
