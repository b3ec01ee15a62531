"""The third criterion's choice of a seed design (analysis/ledger/design_choice.py): its candidates, the family's
sources, the simulated ledgers (the same decisions as simulation.run_ledger), the cost and the choice."""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.ledger.claims import load_claims
from analysis.ledger.design_choice import (CANDIDATES, Family, Scenario, bh_cutoffs, decides_a_quarter,
                                           design_table, draw, family, job_seconds, judge, plan_levels, prices,
                                           run_ledgers)
from analysis.ledger.sequential import look_levels
from analysis.ledger.simulation import PILOT_VERSION, main, pilot_scenario, run_ledger, version_context
from analysis.records.records import run_table
from analysis.stats.inference import bh_threshold
from workflow.design import PUBLISHED_DESIGNS, load_design
from workflow.state import COST_COLUMNS, JobCosts

ALPHA = 0.05
REPO = Path(__file__).resolve().parents[1]


def test_the_candidates_are_the_registered_ones_and_the_plan_accepts_each():
    plans = [plan_levels(spec)[0] for spec in CANDIDATES]
    assert len(plans) == 6 + 4 * 3 * 3 * 3
    assert [p.max_seeds for p in plans if not p.sequential] == [6, 8, 10, 12, 16, 20]
    sequential = {(p.looks[0], p.step, p.max_seeds, p.gamma) for p in plans if p.sequential}
    assert len(sequential) == 108 and {p.futility for p in plans if p.sequential} == {0.1}
    assert plan_levels(dict(initial=12, step=6, max=20, gamma=1.0, futility=0.1))[0].looks == (12, 18, 20)


def test_every_look_must_be_able_to_decide_a_quarter_of_the_family():
    """2^-n_k <= a_k / 8: a fixed design at 8 seeds (2^-8 = 0.0039 <= 0.00625) but not at 6 (0.0156); 12+4 to 20 at
    gamma -2 spends 0.0182, 0.0128 and 0.0191; 6+2 to 40 at gamma -4 spends 0.00077 at 6 seeds (2^-6 > 0.000096)."""
    assert decides_a_quarter(*levels_of([0, 1, 2, 3, 4, 5, 6, 7])) and not decides_a_quarter(*levels_of(list(range(6))))
    looks, levels = levels_of(dict(initial=12, step=4, max=20, gamma=-2.0))
    assert looks == [12, 16, 20] and levels == pytest.approx([0.018157, 0.012779, 0.019064], abs=1e-6)
    assert decides_a_quarter(looks, levels)
    looks, levels = levels_of(dict(initial=6, step=2, max=40, gamma=-4.0))
    assert levels[0] == pytest.approx(0.000767, abs=1e-6) and not decides_a_quarter(looks, levels)
    assert decides_a_quarter([12], [8 * 2 ** -12]) and not decides_a_quarter([12], [8 * 2 ** -12 * 0.999])


def levels_of(spec) -> tuple[list[int], list[float]]:
    plan, levels = plan_levels(spec)
    return list(plan.looks), levels


PUBLISHED_RECORDS = [REPO / load_design(REPO / design)['results_dir'] / 'records' for design in PUBLISHED_DESIGNS]


def of_version_4(folder: Path) -> bool:
    return PILOT_VERSION in set(run_table(folder)['numerics_version'])


VERSION_4_PUBLICATION = 'e1a5259'  # the last publication of tinyagent's version-4 records, the pilots' version


@pytest.fixture(scope='module')
def pilot_records(tmp_path_factory) -> Path:
    """The first published records that still hold version-4 runs (the pilots' version); once every substrate is
    republished, tinyagent's version-4 records from the repository's history, as the measurements recompute them."""
    folder = next((f for f in PUBLISHED_RECORDS if of_version_4(f)), None)
    if folder is not None:
        return folder
    out = tmp_path_factory.mktemp('pilot')
    try:
        archive = subprocess.run(['git', 'archive', VERSION_4_PUBLICATION, 'results/records'], cwd=REPO,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except FileNotFoundError:
        pytest.skip('no version-4 records: every substrate is republished and git, to read them from the history, '
                    'is not installed')
    if archive.returncode != 0:
        pytest.skip(f'no version-4 records: every substrate is republished and the history lacks revision '
                    f'{VERSION_4_PUBLICATION} ({archive.stderr.decode().strip()})')
    subprocess.run(['tar', '-x', '-C', str(out)], input=archive.stdout, check=True)
    return out / 'results' / 'records'


@pytest.fixture(scope='module')
def published_ctx(pilot_records):
    return version_context(pilot_records)


def test_records_without_version_4_runs_are_refused_in_one_line_naming_them():
    folder = next((f for f in PUBLISHED_RECORDS if not of_version_4(f)), None)
    if folder is None:
        pytest.skip('every published substrate is still of version 4')
    with pytest.raises(ValueError, match=f'{folder}: no runs of numerics version 4, the pilots\' version; give the '
                                         'records the substrate had before its republish'):
        version_context(folder)


@pytest.fixture(scope='module')
def published_family(published_ctx):
    return family(load_claims(chapter=published_ctx.chapter), load_design(REPO / 'config' / 'config.yaml'),
                  published_ctx)


def test_the_family_reads_the_default_designs_cells_and_experiments_by_their_workflow_names(published_family):
    found = published_family
    reads = {i: {s for s, r in zip(found.sources, row) if r} for i, row in zip(found.ids, found.reads)}
    assert len(found.ids) == 102 and len(found.sources) == 27 + 6  # the statistical claims; cells and experiments
    assert reads['study-clip025-vs-best-heldout'] == {'baseline', 'clip_low~0.1_clip_high~0.1',
                                                      'clip_low~0.25_clip_high~0.25', 'clip_low~0.3_clip_high~0.3'}
    assert reads['study-lam09-vs-1-train'] == {'baseline', 'lam~0.9'}
    assert reads['ppo-faster-than-reinforce'] == {'baseline', 'algorithm~reinforce'}
    assert reads['ess-falls-with-k'] == {'importance_weights'} and reads['clip-cuts-kl-25x'] == {'trust_region'}
    assert reads['kl-grows-with-epochs-in-training'] == {'baseline', 'epochs~1', 'epochs~2', 'epochs~8', 'epochs~16'}
    ppo = dict(zip(found.sources, found.ppo))
    assert ppo['baseline'] and ppo['lam~0.9'] and not ppo['algorithm~reinforce'] and not ppo['surrogate']
    assert sum(ppo.values()) == 26
    unread = {s for s, r in zip(found.sources, found.reads.any(0)) if not r}
    assert unread == {'kl_penalty~1', 'clip_gradients', 'whiten_advantages~false'}  # read by findings and checks only


def test_the_vectorised_ledgers_decide_as_run_ledger_does():
    """Ledgers of 40 claims, some without an effect, some with, some against: every decision and every claim's seeds
    equal run_ledger's, for a fixed design, the default one and one that spends early, with and without futility."""
    effects, values = draw(Scenario('mixed', (0.0, 0.25, 0.5, 1.0, -0.5, np.nan) * 6 + (2.0,) * 4, 0.25), 6, 40, 3)
    assert np.isin(effects[:, 5:36:6], [0.0, 0.25, 0.5, 1.0, -0.5, 2.0]).all()  # drawn from the others
    assert len(np.unique(effects[:, 5:36:6])) > 1 and (effects[:, 36:] == 2.0).all()
    designs = [([12], [ALPHA], 0.0), ([12, 22, 32, 40], look_levels([12, 22, 32, 40], 40), 0.1),
               ([6, 8, 10, 12, 14, 16, 18, 20], look_levels(list(range(6, 21, 2)), 20, gamma=1.0), 0.1),
               ([6, 8, 10, 12, 14, 16, 18, 20], look_levels(list(range(6, 21, 2)), 20, gamma=1.0), 0.0)]
    for looks, levels, futility in designs:
        verdict, seeds = run_ledgers(values, 0.25, looks, levels, futility)
        for one, (v, n) in zip(values, zip(verdict, seeds)):
            reference = run_ledger(one, 0.25, looks, levels, futility)
            assert (v == reference[0]).all() and (n == reference[1]).all()
        assert (verdict == 1).any() and (verdict == -1).any() and (verdict == 0).any()
        assert len(looks) == 1 or (seeds < looks[-1]).any()


def test_the_cut_off_of_each_ledger_is_bh_thresholds():
    rng = np.random.default_rng(1)
    p = np.concatenate([rng.uniform(size=(50, 40)) ** 4, np.zeros((50, 3)), np.ones((50, 3))], axis=1)
    assert bh_cutoffs(p, 0.01).tolist() == [bh_threshold(row, 0.01) for row in p]
    assert bh_cutoffs(np.ones((2, 4)), 0.05).tolist() == [0.0, 0.0]


TINY = Family(ids=('a', 'b', 'c'), sources=('baseline', 'lam~0.9', 'surrogate', 'algorithm~reinforce'),
              reads=np.array([[1, 1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0]], bool), ppo=np.array([1, 1, 0, 0], bool))


def test_a_source_costs_its_seeds_run_and_the_critic_a_job_per_seed_a_ppo_cell_ran():
    """Claim a reads baseline and lam~0.9, b the baseline, c an experiment; REINFORCE is read by none (its first look's
    12 seeds). Ledger 1: baseline to 22 (b), the others at 12: 22*10 + 12*20 + 12*3 + 12*7 + 22 critics*5 = 690.
    Ledger 2: baseline and lam~0.9 to 40 (a), surrogate to 30: 400 + 800 + 90 + 84 + 40*5 = 1574. Ledger 3: only the
    experiment goes on (to 40): 120 + 240 + 120 + 84 and 12 critics, 624."""
    costs = JobCosts('costs.csv', {'baseline': 10.0, 'lam~0.9': 20.0, 'surrogate': 3.0, 'algorithm~reinforce': 7.0},
                     5.0, 'a CPU', '2026-12-06', '5')
    cpu, critic = prices(costs, TINY)
    assert cpu.tolist() == [10.0, 20.0, 3.0, 7.0] and critic == 5.0
    seeds = np.array([[12, 22, 12], [40, 12, 30], [12, 12, 40]])
    assert job_seconds(seeds, TINY, cpu, critic, 12).tolist() == [690.0, 1574.0, 624.0]
    assert job_seconds(np.full((1, 3), 8), TINY, cpu, critic, 8).tolist() == [8 * 40 + 8 * 5]  # fixed at 8
    with pytest.raises(ValueError, match='costs.csv has no cpu_s for lam~0.9, surrogate, algorithm~reinforce'):
        prices(JobCosts('costs.csv', {'baseline': 10.0}, 5.0, '', '', ''), TINY)


def test_the_chosen_design_is_the_eligible_one_with_the_fewest_job_seconds_per_decided_claim():
    """Four designs: the cheapest per decided claim over both pilots (a: 1000 s / 10 claims) fails (1) on the second
    pilot (0.09 - 2 * 0.01 > 0.05); the next (c: 2400 / 20 = 120) is chosen over b (130) and d, pruned by (2)."""
    table = pd.DataFrame(dict(design=list('abcd'), decides_a_quarter=[True, True, True, False],
                              fdr_null=[0.04, 0.04, 0.06, np.nan], fdr_null_se=[0.01, 0.01, 0.01, np.nan],
                              fdr_one=[0.01, 0.0, 0.0, np.nan], fdr_one_se=[0.01, 0.0, 0.0, np.nan],
                              fdr_two=[0.09, 0.0, 0.0, np.nan], fdr_two_se=[0.01, 0.0, 0.0, np.nan],
                              decided_one=[4.0, 10.0, 8.0, np.nan], job_seconds_one=[400.0, 1300.0, 1000.0, np.nan],
                              decided_two=[6.0, 10.0, 12.0, np.nan], job_seconds_two=[600.0, 1300.0, 1400.0, np.nan]))
    judged = judge(table, ['null', 'one', 'two'], ['one', 'two'])
    assert judged['per_decided'].tolist()[:3] == [100.0, 130.0, 120.0]
    assert judged['eligible'].tolist() == [False, True, True, False]
    assert judged.loc[judged['chosen'], 'design'].tolist() == ['c']


def test_the_table_simulates_only_the_designs_whose_every_look_can_decide_a_quarter():
    """Two designs on 12 strong claims (effect 5) read by TINY's sources: the fixed design at 6 seeds is pruned
    (no simulated column); at 8 every claim is decided in every ledger at 8 seeds a source."""
    strong = Family(('x',) * 12, TINY.sources, np.tile(TINY.reads[:1], (12, 1)), TINY.ppo)
    pilot = Scenario('pilot', (5.0,) * 11 + (np.nan,), 0.25)
    cost = (np.array([10.0, 20.0, 3.0, 7.0]), 5.0)
    table = design_table([list(range(6)), list(range(8))], strong, [pilot], {'pilot': cost}, ledgers=4)
    assert table['design'].tolist() == ['fixed 6', 'fixed 8'] and table['decides_a_quarter'].tolist() == [False, True]
    assert table.loc[0, ['fdr_null', 'fdr_pilot', 'decided_pilot', 'per_decided']].isna().all()
    assert table.loc[1, 'decided_pilot'] == 12 and table.loc[1, 'job_seconds_pilot'] == 8 * 40 + 8 * 5
    assert table.loc[1, 'fdr_null'] == 0 and table['chosen'].tolist() == [False, True]


def test_a_pilot_prices_the_claims_its_version_4_records_hold_values_for(published_ctx, published_family):
    """Version-4 records: the 8 literature claims on the study's cells (no version-4 runs) and the one unpaired
    claim of two inputs without `of` (own_values cannot take its per-seed differences) draw their effects."""
    pilot = pilot_scenario(published_ctx, load_claims(chapter=published_ctx.chapter), published_family.ids, 'tinyagent')
    unpriced = {i for i, e in zip(published_family.ids, pilot.effects) if np.isnan(e)}
    assert len(unpriced) == 9 and 'training-kl-above-big-batch' in unpriced and pilot.smallest == 0.25
    assert {i for i in unpriced if i.startswith('study-')} == {
        f'study-{name}-{part}' for name in ('clip025-vs-best', 'lr3e-4-vs-5e-4', 'lr3e-4-vs-1e-3', 'lr3e-4-vs-2e-3')
        for part in ('train', 'heldout')}


def test_the_family_command_writes_every_candidate_with_the_given_cost_tables(published_family, pilot_records,
                                                                              tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)  # the designs' results folders are relative to the repository
    costs = tmp_path / 'costs.csv'
    rows = [dict(source='critic', kind='critic', cpu_s=30.0)] + [
        dict(source=name, kind='cell' if '~' in name or name == 'baseline' else 'experiment', cpu_s=30.0)
        for name in published_family.sources]
    pd.DataFrame(rows).reindex(columns=COST_COLUMNS).astype(object).fillna('').to_csv(costs, index=False)
    out = tmp_path / 'designs.csv'
    assert main(['--family', '--ledgers', '3', '--costs', *[str(costs)] * 3, '--pilots', *[str(pilot_records)] * 3,
                 '--out', str(out)]) == 0
    table = pd.read_csv(out)
    assert len(table) == len(CANDIDATES) and table['decides_a_quarter'].sum() == 44
    fixed = table.set_index('design').loc['fixed 10']  # every source and the critic at 10 seeds, 30 s a job
    assert fixed[['job_seconds_tinyagent', 'job_seconds_larger', 'job_seconds_longer']].tolist() == [10 * 34 * 30] * 3
    assert table['chosen'].sum() == 1 and table.loc[table['chosen'], 'eligible'].all()
    assert 'chosen: ' in capsys.readouterr().out


def test_the_table_is_the_same_in_any_number_of_processes():
    """Every design reads the same ledgers (common random numbers), however the candidates are split."""
    specs = [list(range(8)), list(range(12)), dict(initial=12, step=4, max=20, gamma=-2.0, futility=0.1)]
    some = Family(('x',) * 30, TINY.sources, np.tile(TINY.reads[:1], (30, 1)), TINY.ppo)
    pilot = Scenario('pilot', (0.8, 0.0, np.nan) * 10, 0.25)
    cost = {'pilot': (np.array([10.0, 20.0, 3.0, 7.0]), 5.0)}
    table = design_table(specs, some, [pilot], cost, ledgers=5)
    assert 0 < table['decided_pilot'].min() < 30 and table['decided_pilot'].nunique() > 1
    pd.testing.assert_frame_equal(design_table(specs, some, [pilot], cost, ledgers=5, jobs=2), table)
