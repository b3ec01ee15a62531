"""What a budgeted design spent (analysis/ledger/spending.py): its stages' runs and their hours with the looks'
barriers."""
import pytest

from analysis.ledger.allocation import Prices
from analysis.ledger.spending import hours, hours_row, stage_runs

PRICES = Prices({'a': 100.0, 'b': 10.0, 'x': 40.0}, critic_s=5.0, critical=frozenset({'a', 'b'}))
LOOKS = [{'seeds': {'a': 2, 'b': 2, 'x': 2}}, {'seeds': {'a': 2, 'b': 4, 'x': 2}}]


def test_each_stage_makes_the_runs_its_look_holds_beyond_the_look_before():
    assert stage_runs(LOOKS) == [({}, {'a': 2, 'b': 2, 'x': 2}), ({'a': 2, 'b': 2, 'x': 2}, {'b': 2})]


def test_the_hours_bound_each_stage_by_its_work_per_core_and_its_longest_run():
    """Stage 1: 300 job-s of runs and 2 critics (310), longest run 100; stage 2: 2 runs of b and 2 critics (30),
    longest 10. On 1 core the bounds meet at the work; on 64 the longest runs bind from below."""
    assert hours(LOOKS, PRICES, 1) == pytest.approx(((310 + 30) / 3600, (310 + 30) / 3600))
    assert hours(LOOKS, PRICES, 2) == pytest.approx(((155 + 15) / 3600, (155 + 50 + 15 + 5) / 3600))
    most = 310 / 64 + 100 * 63 / 64 + 30 / 64 + 10 * 63 / 64  # Graham: W / N + (1 - 1 / N) L, stage by stage
    assert hours(LOOKS, PRICES, 64) == pytest.approx(((100 + 10) / 3600, most / 3600))


def test_the_hours_row_names_each_core_count_and_the_bound_without_barriers():
    row = hours_row('tinyagent', LOOKS, PRICES)
    assert row['stages'] == 2 and row['1 core'] == '0.09 to 0.09' and row['64 cores'] == '0.03 to 0.03'
    assert row['without barriers: 1 / 2 / 8 / 64 cores'] == '0.09 / 0.05 / 0.01 / 0.00'
