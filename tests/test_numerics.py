"""The numerics version: a golden run's digest is pinned with it (agentrl/numerics_golden.json), so numbers that move
without a new version fail here, and a new version without a new pinned digest too."""
import pytest

from agentrl.golden import CONFIG, GOLDEN_FILE, SEED, cpu_capability, golden_run, pinned, run_digest
from agentrl.numerics import NUMERICS_VERSION

REGENERATE = 'OMP_NUM_THREADS=1 python -m agentrl.golden --write'


def test_the_golden_digest_is_pinned_for_the_declared_numerics_version():
    golden = pinned()
    assert (golden['config'], golden['seed']) == (CONFIG, SEED), f'the golden run changed: pin it again ({REGENERATE})'
    assert golden['numerics_version'] == NUMERICS_VERSION, (
        f'NUMERICS_VERSION is {NUMERICS_VERSION}, {GOLDEN_FILE.name} pins version {golden["numerics_version"]}: '
        f'pin the new numbers with {REGENERATE}')


def test_the_golden_runs_numbers_are_those_of_the_declared_numerics_version(tmp_path):
    golden = pinned()
    if cpu_capability() != golden['cpu_capability']:
        pytest.skip(f'torch dispatches to {cpu_capability()} here, the golden digest was pinned on '
                    f'{golden["cpu_capability"]}: numbers are the same only on the same code path')
    assert run_digest(golden_run(tmp_path)) == golden['digest'], (
        f'the golden run\'s numbers moved under numerics version {NUMERICS_VERSION}: a change that moves numbers '
        f'bumps NUMERICS_VERSION (agentrl/numerics.py), then {REGENERATE}')


def test_the_digest_sees_every_number_and_no_wall_time(tmp_path):
    run = tmp_path / 'run'
    run.mkdir()
    (run / 'run.json').write_text('{"summary": {"pass_train": 0.5, "wall_s": 1.0}, "provenance": {"host": "a"}}')
    (run / 'iterations.csv').write_text('iteration,kl,wall_s\n1,0.01,2.5\n')
    first = run_digest(run)
    (run / 'run.json').write_text('{"summary": {"pass_train": 0.5, "wall_s": 9.0}, "provenance": {"host": "b"}}')
    (run / 'iterations.csv').write_text('iteration,kl,wall_s\n1,0.01,7.5\n')
    assert run_digest(run) == first
    (run / 'iterations.csv').write_text('iteration,kl,wall_s\n1,0.010000001,7.5\n')
    assert run_digest(run) != first
