"""The seed plan and its stage looks (workflow/plan.py), without Snakemake: the seeds of every stage from the looks made so
far, where the design ends, what a stage adds and logs, what the planned runs cost, and which look files are read."""
import json
import os
import re

import pytest

from workflow.plan import (DesignError, SeedPlan, added_runs, check_budget, check_look, final_stage, look_file,
                           planned_cost, read_look, seed_plan, seeds_at_stage, stage_summary, superseded)
from workflow.state import JobCosts

PLAN = seed_plan({'seeds': {'initial': 10, 'step': 5, 'max': 20}})
NAMES = ['baseline', 'lam~0.95', 'surrogate']
PPO = dict(algorithm='ppo', epochs=4)
LOOKS = {1: dict(next={'baseline': 15, 'surrogate': 15}), 2: dict(next={'surrogate': 20}), 3: dict(next={})}
GREEDY = dict(initial=5, max=40, policy='greedy', batch=0.25, budget=1.5)


def test_a_staged_plan_runs_initial_then_every_step_up_to_max():
    assert PLAN == SeedPlan(tuple(range(20)), (10, 15, 20), 5, 'every source') and PLAN.staged and PLAN.max_seeds == 20
    assert PLAN.seeds_at(2) == list(range(15)) and PLAN.most_jobs(len(NAMES)) == 60
    assert PLAN.spec == dict(initial=10, step=5, max=20) and seed_plan({'seeds': PLAN.spec}) == PLAN
    assert PLAN.option(2, 'results') == '--seeds \'{"initial":10,"step":5,"max":20}\' --stage 2'
    with pytest.raises(DesignError, match=r"seeds: futility, gamma: not a key \(a staged design of policy 'every "
                                          r"source' takes initial, step, max\)"):
        seed_plan({'seeds': dict(PLAN.spec, gamma=-6.0, futility=0.1)})
    assert (PLAN.next_seeds(1), PLAN.next_seeds(3)) == (15, None)
    with pytest.raises(DesignError, match='stage 4 is not a stage of this design: it has stages 1 to 3'):
        PLAN.seeds_at(4)
    with pytest.raises(DesignError, match='seeds: max=5 is less than initial=10'):
        seed_plan({'seeds': {'initial': 10, 'step': 5, 'max': 5}})
    fixed = seed_plan({'seeds': [3, 5]})
    assert fixed == SeedPlan((3, 5), (2,), 0) and not fixed.staged and fixed.spec == [3, 5]


def test_a_budgeted_plan_starts_at_initial_and_is_bounded_by_its_budget_in_batches():
    """Greedy, batches of 0.25 and a budget of 1.5 fixed 10-seed designs from 5 seeds: the first stage spends 0.5, four
    full batches the rest, and one batch more may run short; the look gets the cost table and the look before."""
    plan = seed_plan({'seeds': GREEDY})
    assert plan == SeedPlan(tuple(range(40)), (5,), 0, 'greedy', 0.25, 1.5) and plan.staged and plan.budgeted
    assert plan.stages == 6 and plan.max_seeds == 40 and plan.seeds_at(1) == list(range(5))
    assert plan.spec == GREEDY and seed_plan({'seeds': plan.spec}) == plan
    assert seed_plan({'seeds': dict(GREEDY, budget=0.6)}).stages == 3  # 0.1 left: one short batch, one more
    assert plan.option(1, 'results/small') == ('--seeds \'{"initial":5,"max":40,"batch":0.25,"budget":1.5,'
                                               '"policy":"greedy"}\' --stage 1 --costs results/small/costs.csv')
    assert plan.option(3, 'results/small').endswith('--stage 3 --costs results/small/costs.csv --previous '
                                                    "'results/small/stages/stage~2.json'")
    with pytest.raises(DesignError, match='stage 2: a budgeted design gives each source its own seeds after stage 1'):
        plan.seeds_at(2)
    steps = seed_plan({'seeds': dict(GREEDY, policy='greedy in steps', step=5)})
    assert (steps.step, steps.policy, steps.spec['step']) == (5, 'greedy in steps', 5)


@pytest.mark.parametrize('seeds, words', [
    (dict(GREEDY, step=5), "seeds: step: not a key (a staged design of policy 'greedy' takes initial, max, batch, "
                           "budget)"),
    (dict(GREEDY, gamma=1), "seeds: gamma: not a key"),
    ({k: v for k, v in GREEDY.items() if k != 'batch'}, "seeds: batch: missing (a staged design of policy 'greedy'"),
    (dict(initial=5, max=40, budget=1.0), "seeds: budget: not a key; step: missing (a staged design of policy "
                                         "'every source' takes initial, step, max)"),
    (dict(GREEDY, policy='greed'), "seeds: policy 'greed': expected one of every source, greedy, greedy in steps"),
    (dict(GREEDY, budget=0.5), 'seeds: budget=0.5 is spent by the first stage (5 seeds of every source: 0.5 fixed '
                               'designs of 10 seeds): expected more'),
])
def test_a_budgeted_plan_with_a_key_its_policy_does_not_take_is_an_error_of_one_line(seeds, words):
    with pytest.raises(DesignError, match=re.escape(words)):
        seed_plan({'seeds': seeds})


def test_a_budgeted_plan_needs_a_cost_table_pricing_every_source():
    plan, costs = seed_plan({'seeds': GREEDY}), JobCosts('r/costs.csv', {'baseline': 20.0}, 4.0, 'AMD', 'today', '5')
    check_budget(plan, costs, ['baseline'], 'r/costs.csv')
    check_budget(PLAN, None, NAMES, 'r/costs.csv')  # a design of every source prices nothing
    with pytest.raises(DesignError, match=r'seeds: a budgeted design prices its batches by its cost table, and '
                                          r'r/costs.csv does not exist \(python -m workflow.costs measures one\)'):
        check_budget(plan, None, NAMES, 'r/costs.csv')
    with pytest.raises(DesignError, match=r'and r/costs.csv lacks lam~0.95, surrogate \(python -m workflow.costs'):
        check_budget(plan, costs, NAMES, 'r/costs.csv')


def test_each_stage_has_the_seeds_the_looks_before_it_gave():
    assert seeds_at_stage(PLAN, NAMES, 1, LOOKS.get) == dict.fromkeys(NAMES, 10)
    assert seeds_at_stage(PLAN, NAMES, 3, LOOKS.get) == {'baseline': 15, 'lam~0.95': 10, 'surrogate': 20}
    assert final_stage(PLAN, LOOKS.get) == 3
    assert final_stage(PLAN, {1: LOOKS[3]}.get) == 1 and final_stage(seed_plan({'seeds': [0, 1]}), LOOKS.get) == 1
    with pytest.raises(DesignError, match='stage 3 is not planned: the design ended at stage 2'):
        seeds_at_stage(PLAN, NAMES, 3, {1: LOOKS[1], 2: LOOKS[3]}.get)


def test_a_stage_adds_only_the_new_seeds_of_the_sources_it_grows_and_says_so():
    before, after = seeds_at_stage(PLAN, NAMES, 1, LOOKS.get), seeds_at_stage(PLAN, NAMES, 2, LOOKS.get)
    added = added_runs(PLAN, after, before)
    assert added == {'baseline': list(range(10, 15)), 'surrogate': list(range(10, 15))}
    assert added_runs(PLAN, before, {}) == {name: list(range(10)) for name in NAMES}
    cells = {'baseline': PPO, 'lam~0.95': PPO}
    three = [('baseline', 10), ('baseline', 11), ('surrogate', 10)]
    assert stage_summary(PLAN, 2, added, after, cells, three, LOOKS[1]) == (
        'stage 2 of at most 3: 1 cells and 1 experiments to 15 seeds, 10 runs added, 3 to make (the others are '
        'published or here)\n  cells: baseline\n  experiments: surrogate')


def test_a_budgeted_stage_names_each_sources_seeds_and_the_batchs_job_seconds():
    plan, before = seed_plan({'seeds': GREEDY}), dict.fromkeys(NAMES, 5)
    look = dict(next={'surrogate': 9, 'baseline': 6}, stop='', cost_s=1234.5, left_s=8000.0)
    after = seeds_at_stage(plan, NAMES, 2, {1: look}.get)
    added = added_runs(plan, after, before)
    assert added == {'baseline': [5], 'surrogate': [5, 6, 7, 8]}
    assert stage_summary(plan, 2, added, after, {'baseline': PPO}, [('surrogate', 8)], look) == (
        'stage 2 of at most 6: 1 cells and 1 experiments to 6 to 9 seeds, 5 runs added, 1 to make (the others are '
        'published or here)\n  cells: baseline (6)\n  experiments: surrogate (9)\n  the batch: 1,234 job-seconds by '
        'the cost table, 8,000 of the budget left before it')
    last = stage_summary(plan, 2, added, after, {'baseline': PPO}, [], dict(look, stop='budget spent'))
    assert last.endswith('8,000 of the budget left before it (the last: the budget is spent)')


def test_without_a_cost_table_the_planned_runs_are_priced_at_the_records_medians():
    seconds = {'baseline': [50.0, 70.0, 54.0], 'surrogate': [20.0]}  # medians 54 and 20
    three = [('baseline', 10), ('baseline', 11), ('surrogate', 10)]
    medians = 's at the median wall time the records hold for each cell and experiment'
    no_table = '; no cost table (python -m workflow.costs measures one)'
    assert planned_cost(three, 2, seconds) == f'3 runs planned: about 128 {medians}{no_table}'
    two = [('baseline', 10), ('surrogate', 10)]
    assert planned_cost(two, 0, {'baseline': [60.0]}) == (
        f'2 runs planned: about 60 {medians}; 1 runs not counted: the records hold no run of surrogate{no_table}')
    assert planned_cost([], 4, seconds) == 'no run planned'
    assert planned_cost([*two, ('lam~0.9', 3)], 0, {}) == (
        f'3 runs planned, none priced: the records hold no run of baseline, lam~0.9, surrogate{no_table}')
    machines = ['AMD EPYC (family 25)', 'Intel Xeon (family 6)', 'AMD EPYC (family 25)']
    assert planned_cost([('baseline', 10)], 0, {'baseline': [60.0]}, machines) == (
        f'1 runs planned: about 60 {medians} (made on AMD EPYC (family 25); Intel Xeon (family 6)){no_table}')


def test_with_a_cost_table_the_planned_runs_and_critics_are_priced_by_it():
    costs = JobCosts('results/costs.csv', {'baseline': 20.0, 'reinforce': 12.5, 'surrogate': 7.0}, 4.0, 'AMD EPYC',
                     '2026-12-06', '5')
    runs = [('baseline', 10), ('baseline', 11), ('reinforce', 10), ('reinforce', 12), ('surrogate', 10)]
    table = ('CPU s of jobs by the cost table results/costs.csv (CPU seconds of one job, measured 2026-12-06 on AMD '
             'EPYC, numerics version 5)')
    assert planned_cost(runs, 2, {'baseline': [999.0]}, costs=costs) == (
        f'5 runs and 2 warmed critics planned: about 80 {table}')  # 2 x 20 + 2 x 12.5 + 7 + 2 critics x 4 = 80
    assert planned_cost([*runs, ('lam~0.9', 10)], 2, {}, costs=costs) == (
        f'6 runs and 2 warmed critics planned: about 80 {table}; 1 runs not counted: the cost table lacks lam~0.9')
    assert planned_cost([('lam~0.9', 10)], 0, {}, costs=costs) == (
        '1 runs and 0 warmed critics planned, none priced: the cost table lacks lam~0.9')


def test_a_look_file_is_read_only_for_its_basis(tmp_path):
    path, basis_path = look_file(str(tmp_path), 1), str(tmp_path / 'basis~abc.json')
    assert path == f'{tmp_path}/stages/stage~1.json'
    os.makedirs(os.path.dirname(path))
    with open(path, 'w') as file:
        json.dump(dict(stage=1, basis='abc', **LOOKS[1]), file)
    with open(basis_path, 'w') as file:
        file.write('{}')
    os.utime(basis_path, (1000, 1000))
    assert read_look(path, 'abc', basis_path, NAMES) == dict(stage=1, basis='abc', **LOOKS[1])
    assert read_look(path, 'xyz', str(tmp_path / 'basis~xyz.json'), NAMES) == {}  # about to be remade: not read
    with pytest.raises(ValueError, match='was made for another design or claims'):
        read_look(path, 'xyz', basis_path, NAMES)  # older basis file: the look is newer, and of another basis


def test_a_look_is_superseded_while_its_basis_file_is_missing_or_newer(tmp_path):
    look, basis_path = tmp_path / 'stage~1.json', tmp_path / 'basis~x.json'
    look.write_text('{}')
    assert superseded(str(look), str(basis_path))
    basis_path.write_text('{}')
    os.utime(look, (1000, 1000))
    os.utime(basis_path, (2000, 2000))
    assert superseded(str(look), str(basis_path))
    os.utime(look, (3000, 3000))
    assert not superseded(str(look), str(basis_path))


def test_a_look_of_another_basis_or_naming_a_foreign_cell_is_an_error_naming_it():
    look = dict(stage=1, seeds=dict(baseline=10, surrogate=10), basis='abc', next=dict(baseline=15, surrogate=15),
                added='kept')
    assert check_look(look, 'stage~1.json', 'abc', ['baseline', 'surrogate']) == look
    with pytest.raises(ValueError, match=r'stage~1.json was made for another design or claims \(basis abc'):
        check_look(look, 'stage~1.json', 'xyz', ['baseline', 'surrogate'])
    with pytest.raises(ValueError, match=r'stage~1.json names epochs~16: not a cell or experiment of this design'):
        check_look(dict(look, next={'baseline': 15, 'epochs~16': 15}), 'stage~1.json', 'abc', ['baseline'])
    assert check_look(dict(look, next={}), 'stage~7.json', 'abc', [])['next'] == {}


