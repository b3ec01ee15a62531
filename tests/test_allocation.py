"""analysis/ledger/allocation.py: the next batch on hand-made ledger frames (prices and projections chosen so that the
answer is known), its stop reasons, a budget never passed, and an adversary that gives its seeds to the claims closest
to a false verdict, through the policy, still keeps the ledger's FDR at most alpha on simulated global nulls;
analysis/ledger/budgets.py: a simulated substrate's rows stay within their budgets."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.ledger import budgets
from analysis.ledger import simulation as sim
from analysis.ledger.allocation import Ask, Batch, Policy, Prices, asks, fit, next_batch
from analysis.ledger.simulation import ALPHA, family, ledger_claims, null_truth, nulls, paths
from analysis.stats.eprocess import ebh

PRICES = Prices({'a': 1.0, 'b': 10.0, 'c': 2.0, 'd': 52.0, 'e': 3.0})
SOURCES = {'X': ('a',), 'Y': ('b',), 'Z': ('c',), 'W': ('e',), 'Q': ('a', 'b'), 'R': ('d',), 'V': ('a',),
           'U': ('c',)}
CLAIMS = [dict(id=i, min_seeds=3) for i in SOURCES]
HELD = dict.fromkeys('abcde', 10)


def frame(rows: list[tuple]) -> pd.DataFrame:
    """A ledger frame of (id, verdict, n, n_80) rows, every one a chapter claim."""
    return pd.DataFrame(rows, columns=['id', 'verdict', 'n', 'n_80']).assign(group='chapter')


LOOK = frame([('X', 'inconclusive', 10, 20), ('Y', 'inconclusive', 10, 12), ('Z', 'inconclusive', 10, 14),
              ('W', 'inconclusive', 10, 60), ('V', 'reproduced', 10, math.nan), ('U', 'inconclusive', 10, math.nan)])


def test_greedy_buys_the_cheapest_projected_verdicts_first_until_the_batch_is_full():
    """Z needs 4 seeds of c at 2 (8 s), X 10 of a at 1 (10 s), Y 2 of b at 10 (20 s); W (60) and U (beyond 1000)
    are beyond max, V decided. A batch of 15 s takes Z, then X, and is full."""
    batch = next_batch(asks(LOOK, CLAIMS, SOURCES), HELD, PRICES, Policy('greedy', batch_s=15.0))
    assert batch.seeds == {'c': 4, 'a': 10} and list(batch.seeds) == ['c', 'a']
    assert batch.buying == ('Z', 'X') and batch.cost_s == 18.0 and batch.stop == ''
    every = next_batch(asks(LOOK, CLAIMS, SOURCES), HELD, PRICES, Policy('greedy'))
    assert every.seeds == {'c': 4, 'a': 10, 'b': 2} and every.cost_s == 38.0


def test_greedy_in_steps_ranks_by_the_whole_projection_and_buys_a_step():
    batch = next_batch(asks(LOOK, CLAIMS, SOURCES), HELD, PRICES, Policy('greedy in steps', step=5, batch_s=15.0))
    assert batch.seeds == {'c': 4, 'a': 5, 'b': 2} and batch.buying == ('Z', 'X', 'Y') and batch.cost_s == 33.0


def test_greedy_prices_a_claim_again_once_its_shared_source_is_bought():
    """Q reads a and b (10 + 100 = 110 s to 20 seeds), R reads d (2 x 52 = 104 s): R is cheaper, until X's pick
    brings a to 20 and leaves Q only b's 100 s."""
    look = frame([('X', 'inconclusive', 10, 20), ('Q', 'inconclusive', 10, 20), ('R', 'inconclusive', 10, 12)])
    batch = next_batch(asks(look, CLAIMS, SOURCES), dict(HELD, d=10), PRICES, Policy('greedy'))
    assert batch.buying == ('X', 'Q', 'R') and batch.seeds == {'a': 10, 'b': 10, 'd': 2}


def test_every_source_gives_the_step_to_each_source_of_an_asking_claim_cheapest_first_up_to_max():
    look = frame([('X', 'inconclusive', 10, 20), ('Y', 'inconclusive', 38, 39), ('Z', 'inconclusive', 10, 14),
                  ('W', 'inconclusive', 10, 60)])
    batch = next_batch(asks(look, CLAIMS, SOURCES), dict(HELD, b=38), PRICES, Policy('every source', step=5))
    assert list(batch.seeds.items()) == [('a', 5), ('c', 5), ('b', 2)]  # b: 38 + 5 passes max 40
    assert batch.cost_s == 5 + 10 + 20


def test_unprojected_claims_ask_for_their_min_seeds():
    look = frame([('X', 'inconclusive', 2, math.nan)])
    batch = next_batch(asks(look, CLAIMS, SOURCES), dict(HELD, a=2), PRICES, Policy('greedy'))
    assert batch.seeds == {'a': 1} and batch.stop == ''


def test_the_stop_reasons():
    done = frame([('V', 'reproduced', 10, math.nan), ('X', 'short of the claim', 10, math.nan)])
    assert next_batch(asks(done, CLAIMS, SOURCES), HELD, PRICES, Policy('greedy')).stop == 'decided'
    beyond = frame([('W', 'inconclusive', 10, 60), ('U', 'inconclusive', 10, math.nan)])
    for rule in ('greedy', 'every source'):
        assert next_batch(asks(beyond, CLAIMS, SOURCES), HELD, PRICES, Policy(rule)) == Batch({}, 0.0, (), 'beyond max')
    at_max = frame([('X', 'inconclusive', 40, 40)])  # projected within max, its source already there
    assert next_batch(asks(at_max, CLAIMS, SOURCES), dict(HELD, a=40), PRICES, Policy('greedy')).stop == 'beyond max'
    cut = next_batch(asks(LOOK, CLAIMS, SOURCES), HELD, PRICES, Policy('greedy'), left_s=15.0)
    assert cut.stop == 'budget spent' and cut.seeds == {'c': 4, 'a': 7} and cut.cost_s == 15.0
    with pytest.raises(ValueError, match="rule 'chase': expected one of"):
        Policy('chase')


def test_prices_count_a_warmed_critic_once_a_seed_for_the_ppo_cells():
    prices = Prices({'p': 2.0, 'q': 3.0, 'x': 1.0}, critic_s=5.0, critical=frozenset({'p', 'q'}))
    assert prices.cost({'p': 4, 'q': 2}, {'q': 2}) == 6.0  # q reaches seed 4: p's critics serve it
    assert prices.cost({'p': 4, 'q': 2}, {'q': 4, 'x': 3}) == 12.0 + 3.0 + 2 * 5.0
    assert prices.fixed(10) == 10 * (2 + 3 + 1 + 5)


def test_a_budget_is_never_passed():
    """Random looks and prices: batch after batch within what is left, the spend never passes the budget."""
    rng = np.random.default_rng(3)
    for trial in range(60):
        names = [f's{i}' for i in range(6)]
        prices = Prices(dict(zip(names, rng.uniform(1, 30, 6))), rng.uniform(0, 10), frozenset(names[:3]))
        held, budget, spent = dict.fromkeys(names, 5), rng.uniform(50, 3000), 0.0
        policy = Policy(('every source', 'greedy', 'greedy in steps')[trial % 3], int(rng.integers(1, 8)),
                        rng.uniform(10, 500))
        while True:
            claims = [Ask(f'c{i}', min(held[s] for s in reads), float(rng.integers(3, 50)), 3, reads)
                      for i in range(8) for reads in [tuple(rng.choice(names, int(rng.integers(1, 3)), False))]]
            batch = next_batch(claims, held, prices, policy, budget - spent)
            assert batch.cost_s == pytest.approx(prices.cost(held, batch.seeds))
            spent += batch.cost_s
            held = {s: k + batch.seeds.get(s, 0) for s, k in held.items()}
            assert spent <= budget + 1e-9 and max(held.values()) <= policy.max_seeds
            if batch.stop:
                break


def test_fit_keeps_the_batchs_order_and_the_runs_that_fit():
    batch = next_batch(asks(LOOK, CLAIMS, SOURCES), HELD, PRICES, Policy('greedy'))
    assert fit(batch, HELD, PRICES, 1e9) == batch
    small = fit(batch, HELD, PRICES, 9.0)  # c's 4 seeds (8 s), then a's 1 seed (1 s); nothing of b
    assert small.seeds == {'c': 4, 'a': 1} and small.cost_s == 9.0 and small.stop == 'budget spent'


def chased(p: sim.Paths, null_for: np.ndarray, null_against: np.ndarray, ledgers: int) -> np.ndarray:
    """Each ledger's FDP under an adversary that uses the policy: each claim its own source at 1 s a run; after every
    look the tenth of the claims whose true-null e-values are largest (simulation.allocation's chase) are projected
    one seed away, every other beyond max, so the stage rule (every source, step 1) gives the chased their next seed;
    the FDP is read at the first look with a false verdict, else where the policy stops."""
    claims, most = p.e_for.shape[1:]
    names = [f'c{i}' for i in range(claims)]
    prices, policy = Prices(dict.fromkeys(names, 1.0)), Policy('every source', step=1, max_seeds=most)
    false_null, fdp = ~(null_for & null_against), np.zeros(ledgers)
    for ledger in range(ledgers):
        held = dict.fromkeys(names, sim.FIRST)
        while True:
            n = np.array([held[s] for s in names])
            at = (ledger, np.arange(claims), n - 1)
            e = np.concatenate([p.e_for[at], p.e_against[at]])
            rejected, _ = ebh(e, ALPHA)
            false = (rejected[:claims] & null_for).sum() + (rejected[claims:] & null_against).sum()
            null_e = np.maximum(np.where(null_for, e[:claims], -np.inf), np.where(null_against, e[claims:], -np.inf))
            give = sim.allocation('chase 10%', null_e[None], false_null, (n < most)[None])[0]
            looking = [Ask(s, int(k), float(k + 1) if g else math.nan, sim.FIRST, (s,))
                       for s, k, g in zip(names, n, give)]
            batch = next_batch(looking, held, prices, policy)
            assert set(batch.seeds) == {s for s, g in zip(names, give) if g}
            if false or batch.stop:
                fdp[ledger] = false / max(rejected.sum(), 1)
                break
            held = {s: k + batch.seeds.get(s, 0) for s, k in held.items()}
    return fdp


@pytest.mark.parametrize('boundary', sim.BOUNDARIES)
def test_an_adversary_chasing_false_verdicts_through_the_policy_keeps_the_fdr(boundary):
    fam, ledgers = family(ledger_claims()), 120
    x, lo, hi = null_truth(fam, 'normal', boundary, ledgers, 24, np.random.default_rng(11))
    fdp = chased(paths(fam, x, lo, hi), *nulls(fam, lo, hi), ledgers)
    assert fdp.mean() <= ALPHA + 2 * fdp.std(ddof=1) / math.sqrt(ledgers), fdp.mean()


def test_a_simulated_substrate_stays_within_its_budgets():
    found = pd.DataFrame(budgets.rows('tinyagent', 3, 0))
    unit = found.loc[(found['candidate'] == 'fixed') & (found['budget'] == 1.0), 'job_s'].iloc[0]
    assert (found['job_s'] <= found['budget'] * unit + 1e-6).all()
    assert set(found['candidate']) == set(budgets.CANDIDATES) and (found['decided'] > 0).all()
    spent = found.pivot(index='candidate', columns='budget', values='job_s')
    assert (spent.diff(axis=1).fillna(0) >= 0).all().all()  # a larger budget: a longer run of the same ledgers
    stopped = found.pivot(index='candidate', columns='budget', values='stopped')
    assert (stopped.loc['fixed'] == 0).all() and (stopped.diff(axis=1).fillna(0) >= 0).all().all()
    assert stopped.max().max() <= 1 and stopped[max(budgets.BUDGETS)].drop('fixed').gt(0).all()


def test_the_stopping_budget_is_the_smallest_from_the_first_at_which_every_substrate_stops():
    shares = {('a', 1.0): 1.0, ('a', 1.5): 0.5, ('a', 2.0): 0.97, ('a', 3.0): 1.0,
              ('b', 1.0): 1.0, ('b', 1.5): 0.96, ('b', 2.0): 0.94, ('b', 3.0): 0.99}
    table = pd.DataFrame([dict(substrate=s, candidate='c', budget=b, stopped=v) for (s, b), v in shares.items()])
    assert budgets.stopping_budget(table, 'c', 1.5) == 3.0
    assert budgets.stopping_budget(table, 'c', 1.0) == 1.0
    assert budgets.stopping_budget(table.assign(stopped=0.5), 'c', 1.5) is None


def test_the_command_prints_the_table_and_the_winner(tmp_path, capsys):
    out = tmp_path / 'budgets.md'
    assert budgets.main(['--quick', '--substrates', 'tinyagent', '--jobs', '1', '--out', str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[0] == '| ' + ' | '.join(budgets.COLUMNS) + ' |'
    assert len([line for line in lines[2:] if line.startswith('| tinyagent |')]) == \
        len(budgets.CANDIDATES) * len(budgets.BUDGETS)
    assert lines[-2].startswith('winner: ') and '10 ledgers a substrate' in lines[-2]
    assert lines[-1].startswith('stops by itself in at least 95% of the ledgers on every substrate at: ')
    assert capsys.readouterr().out == out.read_text()
