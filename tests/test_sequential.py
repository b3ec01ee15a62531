"""The sequential ledger: group-sequential cut-offs, the look-by-look replay, the next stage's plan, and its
operating characteristics by simulation (false verdicts over all looks, seeds saved, power)."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from test_analysis import ctx, runs, tree  # noqa: F401 (the synthetic runs, 7 cells and 6 experiments x 12 seeds)

from analysis.ledger.claims import ledger, load_claims
from analysis.ledger.sequential import (decidable, describe, feeders, first_seeds, look_levels, next_stage,
                                        sequential_ledger, spent)
from analysis.ledger.verdicts import AGAINST, DECIDED, SUPPORTED, is_unpaired, smallest_p
from workflow.plan import seed_plan
from analysis.ledger.simulation import (DESIGNS, FAMILIES, LOOK_SECONDS, LOOKS, MAX_SEEDS, PROMISE, RUN_SECONDS,
                                        Mixture, calibration, design_cost, design_table, every_look_decides,
                                        false_rates, ledger_characteristics, mixtures, pilot_mixture, run_ledger)
from analysis.stats.inference import exceed_p

ALPHA = 0.05


# --- the levels of the looks ------------------------------------------------------------------------------------

def test_one_look_at_every_seed_is_the_fixed_level():
    assert look_levels([10], 10, ALPHA) == pytest.approx([ALPHA], abs=1e-12)


def test_the_looks_spend_alpha_in_total_by_the_hwang_shih_decani_increments():
    levels = look_levels(LOOKS, MAX_SEEDS, ALPHA)
    assert sum(levels) == pytest.approx(ALPHA)
    assert LOOKS == [12, 22, 32, 40]  # the sequential design the first criterion chose
    assert levels[0] == pytest.approx(ALPHA * (math.e ** 1.8 - 1) / (math.e ** 6 - 1))  # 0.00063 at 12 of 40
    assert levels[-1] == pytest.approx(ALPHA - spent(np.array([32 / 40]), ALPHA)[0])


def test_every_look_of_the_default_design_can_decide_a_sign_test_claim():
    """An exact test's p of 12 seeds of 12 is 2^-12 = 0.00024: the first look's level (0.00063) reaches it, one
    seed astray (13/2^12 = 0.0032) does not; at the second look (22 seeds, 0.0026) four may be astray, not five."""
    levels = look_levels(LOOKS, MAX_SEEDS, ALPHA)
    assert exceed_p(12, 12) <= levels[0] < exceed_p(11, 12)
    assert exceed_p(18, 22) <= levels[1] < exceed_p(17, 22)


@pytest.mark.parametrize('looks, max_seeds', [([10, 5], 40), ([10, 50], 40), ([1, 3], 3), ([], 3)])
def test_looks_that_are_not_a_design_are_refused(looks, max_seeds):
    with pytest.raises(ValueError, match='expected increasing seed counts'):
        look_levels(looks, max_seeds)


# --- the ledger replayed look by look ---------------------------------------------------------------------------

def benjamini_hochberg(p: list[float], alpha: float) -> float:
    """The step-up cut-off written out: k alpha / m for the largest k with p_(k) <= k alpha / m (0 when none)."""
    ranked = sorted(v for v in p if not math.isnan(v))
    passing = [i for i, v in enumerate(ranked, 1) if v <= i * alpha / len(ranked)]
    return max(passing) * alpha / len(ranked) if passing else 0.0


def test_a_fixed_design_gives_a_verdict_exactly_where_bh_over_every_p_for_and_against_allows(ctx):  # noqa: F811
    out = sequential_ledger(ctx)
    judged = out[~out['group'].isin(['check', 'finding'])]
    cutoff = benjamini_hochberg(list(judged['p']) + list(judged['p_against']), ALPHA)
    assert [look['level'] for look in out.attrs['looks']] == [ALPHA] and cutoff > 0
    assert out.attrs['looks'][0]['cutoff'] == pytest.approx(cutoff)
    supported = judged['p'] <= cutoff
    against = ~supported & (judged['p_against'] <= cutoff) & (judged['n'] >= 3)
    assert judged['verdict'].isin(SUPPORTED).tolist() == (supported & (judged['n'] >= 3)).tolist()
    assert judged['verdict'].isin(AGAINST).tolist() == against.tolist()
    assert set(out['stage']) == {1} and not out['futile'].any()


def plan(initial: int, step: int, most: int, allocation: str = 'decidable'):
    """A sequential design's seed plan (workflow/plan.py)."""
    return seed_plan({'seeds': dict(initial=initial, step=step, max=most, allocation=allocation)})


def test_a_claim_stops_at_the_look_that_decides_it(ctx):  # noqa: F811
    out = sequential_ledger(ctx, plan(10, 2, 12), futility=0.0)  # looks at 10 and 12 seeds
    levels = [look['level'] for look in out.attrs['looks']]
    claims = load_claims()
    first = ledger(first_seeds(ctx, 10), dict(claims, claims=[c for c in claims['claims'] if c['kind'] != 'check'
                                                             and not c.get('finding')]), alpha=levels[0])
    at_first = first.set_index('id')
    statistical = out[~out['group'].isin(['check', 'finding'])].set_index('id')
    early = statistical[statistical['stage'] == 1]
    late = statistical[statistical['stage'] == 2]
    assert len(early[early['verdict'] != 'untested']) > 0 and len(late) > 0  # both looks decide claims here
    assert set(early['verdict']) <= {*DECIDED, 'untested'}
    for claim_id, row in early.iterrows():  # frozen at the first look, whatever the later seeds say
        assert (row['verdict'], row['n'], row['p']) == (at_first.loc[claim_id, 'verdict'], at_first.loc[claim_id, 'n'],
                                                         at_first.loc[claim_id, 'p']) or math.isnan(row['p'])
    assert set(at_first.loc[late.index, 'verdict']) == {'inconclusive'}
    assert (late['n'] > 10).all()
    assert all(text.startswith('stage 1 (10 seeds)') for text in early.loc[early['verdict'] != 'untested', 'decided'])
    assert all(text.startswith(('stage 2 (12 seeds)', 'undecided at max (12 seeds)')) for text in late['decided'])
    assert set(out.loc[out['group'].isin(['check', 'finding']), 'stage']) == {2}  # once, on every seed


def test_a_futile_claim_stops_asking_for_seeds_and_stays_in_the_correction(ctx):  # noqa: F811
    design = plan(8, 2, 12)  # every direction can end short of its claim: futile only with few seeds to come
    out = sequential_ledger(ctx, design, stage=2)  # the looks at 8 and 10 seeds of a design going on to 12
    futile = out[out['futile']]
    assert len(futile) and (futile['verdict'] == 'inconclusive').all() and (futile['chance'] < 0.1).all()
    assert futile['decided'].str.startswith('futile at stage').all()
    look = next_stage(ctx, design, 2)
    assert look['futile'] and set(look['futile']) == set(futile.loc[futile['stage'] == 2, 'id'])  # at its own look
    assert not set(look['futile']) & set(look['undecided'])
    later = sequential_ledger(ctx, design, stage=3)  # the ledger replaying one look more stops them at the same look
    assert set(later.loc[later['futile'] & (later['stage'] == 2), 'id']) == set(look['futile'])
    buying = [c for c in load_claims()['claims'] if c['id'] in set(look['undecided']) - set(look['deferred'])]
    assert look['next']['sources'] == feeders(ctx, buying)  # a futile claim's sources get no more seeds
    looks = out.attrs['looks']
    stopped = looks[0]['futile']  # the second look counts their p-values as 1
    second = ledger(first_seeds(ctx, 10), dict(load_claims(), claims=[c for c in load_claims()['claims'] if c['id']
                    in set(out.loc[out['stage'] == 2, 'id']) and c['kind'] != 'check' and not c.get('finding')]),
                    alpha=looks[1]['level'], stopped=stopped)
    assert looks[1]['cutoff'] == second.attrs['cutoff']


def test_a_claims_label_tells_the_seeds_it_had_and_the_rule_that_stopped_it():
    design = plan(10, 5, 40)
    assert describe(design, 2, 'reproduced', False, 15.0, 0.1) == 'stage 2 (15 seeds)'
    assert describe(design, 7, 'inconclusive', False, 15.0, 0.1) == 'undecided at max (15 seeds)'
    assert describe(design, 2, 'inconclusive', True, 15.0, 0.1) == (
        'futile at stage 2 (15 seeds): under 10% chance of a verdict by 40')
    assert describe(design, 3, 'inconclusive', False, float('nan'), 0.1) == (
        'undecided at stage 3 (20 seeds; the design goes on to 40)')


def test_the_next_stage_feeds_the_open_claims_only(ctx):  # noqa: F811
    look = next_stage(ctx, plan(8, 1, 12), 1, futility=0.0)
    assert look['stage'] == 1 and look['next']['seeds'] == 9 and look['undecided'] and look['futile'] == []
    assert set(look['next']['sources']) <= set(ctx.values['source'])
    assert not set(look['decided']) & set(look['undecided'])
    done = next_stage(ctx, plan(8, 4, 12), 2)
    assert done['next'] == {} and done['seeds'] == 12  # at max: the design ends, open claims undecided at max


def test_a_source_buys_seeds_only_for_claims_the_next_look_can_decide(ctx):  # noqa: F811
    """After 8 seeds of a design going to 40, the next look (10 seeds) spends 0.00014: a sign test's smallest p
    there is 2^-10, so only the rank-sum claims (10 seeds a side) can be decided and only their sources buy seeds;
    the others are deferred, not dropped, and under allocation 'open' every open claim buys."""
    claims = load_claims()['claims']
    look = next_stage(ctx, plan(8, 2, 40), 1, futility=0.0)
    unpaired = {c['id'] for c in claims if c['kind'] not in ('check', 'about') and not c.get('finding')
                and is_unpaired(c)}
    assert set(look['undecided']) - set(look['deferred']) == unpaired & set(look['undecided']) != set()
    assert look['next'] == dict(seeds=10, sources=feeders(ctx, [c for c in claims if c['id'] in unpaired]))
    everyone = next_stage(ctx, plan(8, 2, 40, allocation='open'), 1, futility=0.0)
    assert everyone['deferred'] == [] and everyone['undecided'] == look['undecided']
    assert everyone['next'] == dict(seeds=10, sources=feeders(ctx, [c for c in claims if c['id'] in look['undecided']]))
    assert set(everyone['next']['sources']) > set(look['next']['sources'])


# --- calibration for the data's tails (fast; the full one: python -m analysis.ledger.simulation)
# -----------------------

REPS = 40_000  # a ratio's Monte Carlo SE at the first look: sqrt(0.001 / 40,000) / 0.0016 = 0.10


def test_every_look_holds_its_level_for_skewed_and_heavy_tailed_seeds():
    table = calibration(REPS, seed=1)
    assert set(table['source']) == set(FAMILIES)
    assert (table['ratio'] <= PROMISE + 2.33 * table['ratio_se']).all(), table.sort_values('ratio').tail()


def test_the_calibration_catches_a_test_of_the_mean_on_skewed_seeds():
    """The planted fault: lognormal seeds shifted to mean 0 (the t-test's null) have median below 0, so the
    count against the claim rejects far above the level: the check sees a miscalibrated null."""
    values = np.random.default_rng(2).lognormal(0.0, 1.0, (REPS, MAX_SEEDS)) - math.exp(0.5)
    assert false_rates(values)['ratio'].max() > 10 * PROMISE


def test_the_published_values_resampled_to_the_null_hold_the_level():
    rng = np.random.default_rng(3)
    own = {'skewed': rng.lognormal(0, 1.5, 40), 'ties': np.round(rng.normal(0, 1, 40), 1)}  # as records look
    table = calibration(REPS, seed=4, own=own)
    mine = table[table['source'].str.startswith('own: ')]
    assert len(mine) == 2 * len(LOOKS) and (mine['ratio'] <= PROMISE + 2.33 * mine['ratio_se']).all()


# --- the whole ledger -------------------------------------------------------------------------------------------

LEDGERS = 150


@pytest.fixture(scope='module')
def ledgers():
    """Ledgers of 20 claims: the global null and the mixture (the full run: 100 claims, python -m
    analysis.ledger.simulation)."""
    return pd.concat([ledger_characteristics(m, LEDGERS, seed=5) for m in mixtures(20)]).set_index(['ledger',
                                                                                                  'design'])


def test_the_false_discovery_rate_over_all_verdicts_and_looks_is_at_most_alpha(ledgers):
    for name in ('global null', 'mixture'):
        found = ledgers.loc[(name, 'sequential')]
        assert found['fdr'] <= ALPHA + 2.33 * max(found['fdr_se'], math.sqrt(ALPHA * (1 - ALPHA) / LEDGERS)), name


def test_futility_saves_seeds_and_the_sequential_design_reports_its_power_against_the_fixed(ledgers):
    mixture = ledgers.xs('mixture')
    assert mixture.loc['sequential', 'mean_seeds'] < mixture.loc['sequential, no futility', 'mean_seeds'] - 5
    assert 0 < mixture.loc['sequential', 'power'] <= mixture.loc['fixed at 40', 'power'] + 0.05
    assert mixture.loc['sequential', 'against_absent'] > 0  # absent effects get decided


def test_the_ledger_check_catches_a_correction_at_each_looks_nominal_level():
    """The planted fault: every look at the full alpha (no spending) on ledgers of 20 null claims: the chance of a
    false verdict is far above alpha."""
    rng, null = np.random.default_rng(6), Mixture('global null', (0.0,) * 20, 0.0)
    false = [run_ledger(rng.standard_normal((20, MAX_SEEDS)), 0.0, LOOKS, [ALPHA] * len(LOOKS), 0.0)[0].any()
             for _ in range(LEDGERS)]
    assert np.mean(false) > ALPHA + 2.33 * math.sqrt(ALPHA * (1 - ALPHA) / LEDGERS) and null.smallest == 0.0


@pytest.mark.parametrize('seeds, words', [('{"initial": 10}', "KeyError: 'step'"), ('ten', 'JSONDecodeError'),
                                          ('{"initial": 10, "step": 5, "max": 5}', 'max=5 is less than initial=10')])
def test_a_look_given_seeds_that_are_not_a_design_is_refused_naming_them(tmp_path, seeds, words):
    done = subprocess.run([sys.executable, '-m', 'analysis', 'stage', '--records', str(tmp_path), '--seeds', seeds,
                           '--stage', '1', '--out', str(tmp_path / 'look.json')], capture_output=True, text=True)
    assert done.returncode == 2 and f"argument --seeds: {seeds!r}: expected a list of seeds or" in done.stderr
    assert words in done.stderr and not (tmp_path / 'look.json').exists()


def test_each_look_says_which_claims_its_level_can_decide():
    """The smallest p of a claim's test at n seeds (every seed on its side) against the look's level: the default
    design's first look (10 seeds, 0.00043) can decide only the rank-sum claim (2^-10 = 0.00098 for a sign test)."""
    claims = [c for c in load_claims()['claims'] if c['kind'] != 'check' and not c.get('finding')]
    sign = next(c for c in claims if c['kind'] == 'greater' and not is_unpaired(c) and 'with_high_probability' not in c)
    likely = next(c for c in claims if c.get('with_high_probability'))
    about = next(c for c in claims if c['kind'] == 'about')
    unpaired = [c for c in claims if c['kind'] != 'about' and is_unpaired(c)]
    assert smallest_p(sign, 10) == smallest_p(about, 10) == pytest.approx(2 ** -10)
    assert smallest_p(likely, 10) == pytest.approx(0.8 ** 10) and smallest_p(unpaired[0], 10) < 2 ** -10
    found = decidable(claims, seed_plan({'seeds': dict(initial=10, step=5, max=40)}))
    first = found[found['stage'] == 1]
    assert set(first.loc[first['can_decide'], 'id']) == {c['id'] for c in unpaired}
    assert found.loc[found['stage'] == 7, 'can_decide'].all()


def test_the_design_criterion_prices_decided_claims_and_picks_only_among_eligible_designs():
    assert not every_look_decides([10, 15], look_levels([10, 15], 40))  # 0.00043 < 2^-10 at the first look
    assert every_look_decides([12, 17], look_levels([12, 17], 40, gamma=-2.0))
    # 7 claims on 2 sources (91 claims over 28): source 0 feeds claims 0, 2, 4, 6 (one went to 15 seeds), source 1
    # the rest; 25 runs and the two looks it reached
    assert design_cost(np.array([10] * 6 + [15]), [10, 15, 20]) == pytest.approx(25 * RUN_SECONDS + 2 * LOOK_SECONDS)
    table = design_table(DESIGNS[:2], ledgers=3)
    assert list(table[['initial', 'step', 'gamma']].itertuples(index=False, name=None)) == [(10, 5, -2.0),
                                                                                           (10, 5, -4.0)]
    assert {'fdr_null', 'fdr_mixture', 'decided', 'job_seconds', 'per_decided', 'chosen'} <= set(table)
    assert table['chosen'].sum() <= 1 and not (table['chosen'] & ~table['every_look_decides']).any()


def test_the_pilot_mixture_takes_each_claims_share_of_seeds_above_zero_and_prices_the_designs_on_it():
    own = {'all-above': np.arange(1.0, 13.0), 'half': np.r_[-np.ones(6), np.ones(6)], 'below': -np.ones(40)}
    pilot = pilot_mixture(own)
    # q clipped to [1/(2n), 1 - 1/(2n)]: Phi^-1(1 - 1/24), Phi^-1(1/2), Phi^-1(1/80)
    assert pilot.effects == pytest.approx((1.7317, 0.0, -2.2414), abs=1e-4) and pilot.smallest == 0.25
    strong = Mixture('pilot', (3.0,) * 91, 0.25)  # priced on the pilot: all 91 claims decided, far from the mixture's
    table = design_table([dict(initial=12, step=10, max=40, gamma=-6.0, futility=0.1)], 2, pilot=strong)
    assert table.loc[0, 'decided'] == 91 and table.loc[0, 'fdr_mixture'] < 0.05


def test_bh_over_the_family_decides_a_first_look_of_strong_claims_only_where_the_spending_allows():
    """60 claims with every seed above 0 (p 2^-12 at 12 seeds) and 31 at exactly half: BH over 182 p-values needs
    k / 182 * level >= 2^-12; gamma -6 spends 0.00063 at the first look (k >= 71: none decided), gamma -2 0.0064."""
    values = np.r_[np.ones((60, 40)), np.tile([1.0, -1.0], (31, 20))]
    looks = [12, 22, 32, 40]
    for gamma, first in ((-2.0, 12), (-6.0, 22)):
        verdict, seeds = run_ledger(values, 0.25, looks, look_levels(looks, 40, gamma=gamma), 0.1)
        assert (verdict[:60] == 1).all() and (seeds[:60] == first).all()
