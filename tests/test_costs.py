"""A design's cost table (workflow/costs.py measures it, workflow/state.py reads it): its jobs as the workflow runs
them, a cell priced on the line through two short jobs, the table's schema, and the faults of a table or a command,
one line each. The jobs here are a fake runner's: no job runs but two tiny processes timed by run_job."""
import json
import sys
from pathlib import Path

import pytest

from agentrl.numerics import NUMERICS_VERSION, this_cpu
from workflow import costs as bench
from workflow.costs import Bench, Clock, line_through, run_job, short_lengths, table_text
from workflow.design import expand_design, load_design
from workflow.state import COST_COLUMNS, job_costs

REPO = Path(__file__).resolve().parents[1]
DEFAULT = load_design(REPO / 'config' / 'config.yaml')
CELLS, EXPERIMENTS = len(expand_design(DEFAULT)), len(DEFAULT['experiments'])  # the default design's sources
CRITIC_S, EXPERIMENT_S, FIXED_S, PER_ITERATION_S = 5.0, 7.0, 3.0, 0.5


class FakeJobs:
    """A runner that times nothing: a train job costs FIXED_S + PER_ITERATION_S per iteration of its config (+1 s to
    load a critic), an experiment EXPERIMENT_S, the critic CRITIC_S; wall seconds twice CPU seconds."""

    def __init__(self):
        self.commands, self.lengths = [], {}  # cell -> the iterations of its train jobs

    def __call__(self, command: list[str]) -> Clock:
        self.commands.append(command)
        verb = command[3]
        if verb == 'train':
            config = json.loads(Path(command[command.index('--config') + 1]).read_text())
            self.lengths.setdefault(Path(command[command.index('--config') + 1]).stem, []).append(config['iterations'])
            cpu = FIXED_S + PER_ITERATION_S * config['iterations'] + ('--critic' in command)
        else:
            cpu = {'warm-critic': CRITIC_S, 'experiment': EXPERIMENT_S, 'base-agent': 100.0}[verb]
        return Clock(cpu, 2 * cpu)


def measured(configfile: str, folder: Path) -> tuple[list[dict], FakeJobs, list[str]]:
    jobs, said = FakeJobs(), []
    rows = Bench(load_design(REPO / configfile), folder, jobs).table(log=said.append)
    return rows, jobs, said


def test_a_line_through_two_points_and_the_lengths_a_cell_is_timed_at():
    assert line_through((2, 5.0), (4, 6.0)) == (4.0, 0.5)
    assert line_through((1, 10.0), (3, 10.0)) == (10.0, 0.0)
    assert [short_lengths(n) for n in (2, 4, 10, 30, 80)] == [(2, 4), (2, 4), (2, 5), (2, 15), (2, 40)]


def test_each_source_is_priced_by_its_jobs_a_cell_on_the_line_through_two_short_ones(tmp_path):
    rows, jobs, said = measured('config/config.yaml', tmp_path)
    by_source = {row['source']: row for row in rows}
    assert [row['kind'] for row in rows] == ['critic'] + ['cell'] * CELLS + ['experiment'] * EXPERIMENTS
    assert len(by_source) == 1 + CELLS + EXPERIMENTS
    ppo = FIXED_S + 1 + PER_ITERATION_S * 30  # the line through (2, 5) and (15, 11.5) at 30 iterations: 19
    assert {k: by_source['baseline'][k] for k in ('cpu_s', 'wall_s', 'fixed_s', 'per_iteration_s')} == dict(
        cpu_s=ppo, wall_s=2 * ppo, fixed_s=FIXED_S + 1, per_iteration_s=PER_ITERATION_S)
    assert by_source['baseline']['method'] == 'the line through its jobs of 2 and 15 iterations, at 30'
    assert by_source['algorithm~reinforce']['method'] == 'the line through its jobs of 2 and 40 iterations, at 80'
    assert by_source['algorithm~reinforce']['cpu_s'] == FIXED_S + PER_ITERATION_S * 80  # no critic, 80 iterations
    assert (by_source['critic']['cpu_s'], by_source['surrogate']['cpu_s'], by_source['surrogate']['fixed_s']) == (
        CRITIC_S, EXPERIMENT_S, '')
    assert {row['method'] for row in rows if row['kind'] != 'cell'} == {'the job, whole'}
    assert {(row['cpu'], row['numerics_version']) for row in rows} == {(this_cpu().model, NUMERICS_VERSION)}
    assert said[1] == 'cell baseline: 19.00 CPU s (wall 38.00 s; the line through its jobs of 2 and 15 iterations, at 30)'
    # the jobs the workflow runs: the base agent once, the critic, every cell at two lengths, every experiment
    assert [command[3] for command in jobs.commands] == ['base-agent', 'warm-critic'] + ['train'] * 2 * CELLS + \
        ['experiment'] * EXPERIMENTS
    base = str(tmp_path / 'base_agent.pt')
    options = ['--seed', '0', '--base', base, '--substrate', 'tinyagent']
    assert jobs.commands[2][3:] == ['train', '--config', str(tmp_path / 'configs' / 'baseline.json'), '--out',
                                    str(tmp_path / 'runs' / 'baseline' / '2'), *options,
                                    '--critic', str(tmp_path / 'critic.pt')]
    assert (jobs.lengths['baseline'], jobs.lengths['algorithm~reinforce']) == ([2, 15], [2, 40])
    reinforce = [command for command in jobs.commands if 'algorithm~reinforce.json' in ' '.join(command)]
    assert [json.loads(Path(command[command.index('--config') + 1]).read_text())['lr'] for command in reinforce] == \
        [2e-3] * 2 and not any('--critic' in command for command in reinforce)
    assert jobs.commands[-1][3:] == ['experiment', 'staleness', '--out', str(tmp_path / 'experiments' / 'staleness'),
                                     *options]


def test_a_cell_no_longer_than_the_short_jobs_is_timed_whole(tmp_path):
    rows, jobs, _ = measured('config/test.yaml', tmp_path)  # 2 iterations
    cells = [row for row in rows if row['kind'] == 'cell']
    assert [row['source'] for row in cells] == ['baseline', 'algorithm~reinforce', 'lam~0.95']
    assert [row['cpu_s'] for row in cells] == [FIXED_S + 1 + 2 * PER_ITERATION_S, FIXED_S + 2 * PER_ITERATION_S,
                                               FIXED_S + 1 + 2 * PER_ITERATION_S]
    assert {row['method'] for row in cells} == {'the job, whole'} and {row['fixed_s'] for row in cells} == {''}
    assert [command[3] for command in jobs.commands].count('train') == 3


def test_the_table_is_read_back_as_it_was_written(tmp_path):
    rows, _, _ = measured('config/config.yaml', tmp_path / 'jobs')
    text = table_text(rows)
    assert text.splitlines()[0] == ','.join(COST_COLUMNS) and len(text.splitlines()) == 2 + CELLS + EXPERIMENTS
    assert job_costs(tmp_path) is None
    (tmp_path / 'costs.csv').write_text(text)
    costs = job_costs(tmp_path)
    assert (costs.critic_s, costs.seconds['baseline'], costs.seconds['staleness']) == (CRITIC_S, 19.0, EXPERIMENT_S)
    assert len(costs.seconds) == CELLS + EXPERIMENTS and costs.numerics_version == str(NUMERICS_VERSION)
    assert str(costs) == (f'the cost table {tmp_path / "costs.csv"} (CPU seconds of one job, measured '
                          f'{rows[0]["measured"]} on {this_cpu().model}, numerics version {NUMERICS_VERSION})')


@pytest.mark.parametrize('edit, fault', [
    (lambda lines: [lines[0].replace('cpu_s', 'seconds'), *lines[1:]], 'columns source,kind,seconds,'),
    (lambda lines: [*lines, lines[1]], "line 4: 'critic', 'critic', 5.0: expected a source not named before"),
    (lambda lines: [lines[0], lines[1].replace('5.0', 'fast', 1), lines[2]], "line 2: cpu_s 'fast' is not a number"),
    (lambda lines: [lines[0], lines[1].replace('critic,5.0', 'critic,-5.0'), lines[2]], 'seconds at least 0'),
    (lambda lines: [lines[0], lines[1], lines[2] + ',more'], 'line 3: expected 10 fields'),
    (lambda lines: [lines[0], lines[1].replace('critic,critic', 'critic,job'), lines[2]], "'critic', 'job', 5.0"),
    (lambda lines: [lines[0], lines[2]], '0 rows of kind critic: expected one'),
    (lambda lines: [lines[0], lines[1], lines[2].split(',', 1)[0]], 'line 3: expected 10 fields'),
])
def test_a_table_that_is_not_one_is_refused_in_one_line_naming_it(tmp_path, edit, fault):
    rows, _, _ = measured('config/test.yaml', tmp_path / 'jobs')
    lines = table_text(rows[:2]).splitlines()
    (tmp_path / 'costs.csv').write_text('\n'.join(edit(lines)) + '\n')
    with pytest.raises(ValueError) as refused:
        job_costs(tmp_path)
    assert str(refused.value).startswith(f'{tmp_path / "costs.csv"}: ') and fault in str(refused.value)
    assert '\n' not in str(refused.value)


def refusal(capsys, *argv) -> str:
    """The error `python -m workflow.costs ARGV` stops with (exit status 2, its last line), before any job runs."""
    with pytest.raises(SystemExit) as stopped:
        bench.main(list(argv))
    assert stopped.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


def test_a_bad_design_or_option_stops_the_command_in_one_line(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(bench, 'Bench', None)  # no job may run
    assert refusal(capsys, '--configfile', 'config/nothing.yaml') == \
        'python -m workflow.costs: error: config/nothing.yaml: No such file or directory'
    assert refusal(capsys, '--cost') == 'python -m workflow.costs: error: unrecognized arguments: --cost'
    design = tmp_path / 'design.yaml'
    design.write_text(f'extends: config/test.yaml\nresults_dir: {tmp_path}\n')
    assert refusal(capsys, '--configfile', str(design), '--check', 'baseline') == \
        f'python -m workflow.costs: error: --check: {tmp_path / "costs.csv"} does not exist; measure it first'
    (tmp_path / 'costs.csv').write_text(table_text(measured('config/test.yaml', tmp_path / 'jobs')[0]))
    assert refusal(capsys, '--configfile', str(design), '--check', 'baseline', 'lam~0.5') == \
        f'python -m workflow.costs: error: --check lam~0.5: not a cell of {design} and its table'
    design.write_text('extends: config/test.yaml\nseeds: {initial: 2, step: 1, max: -5}\n')
    assert refusal(capsys, '--configfile', str(design)).startswith(f'python -m workflow.costs: error: {design}: seeds')


def test_a_job_is_timed_by_its_cpu_seconds_and_a_failed_one_says_why():
    clock = run_job([sys.executable, '-c', 'import time; time.sleep(0.3)'])
    assert clock.wall_s >= 0.3 and 0 < clock.cpu_s < clock.wall_s - 0.2  # asleep: wall time, no CPU time
    with pytest.raises(RuntimeError, match=r'failed \(exit status 3\): boom'):
        run_job([sys.executable, '-c', 'import sys; print("boom"); sys.exit(3)'])


def test_a_table_measured_before_keeps_its_rows_and_measures_only_what_it_lacks(tmp_path):
    """--missing: the design's sources the old table has are not run again (their rows kept as they are, dates
    included); the ones it lacks are measured; a row of a source the design no longer has is left out."""
    full, _, _ = measured('config/config.yaml', tmp_path / 'full')
    old = [dict(row, cpu_s='1.5', measured='2000-01-01') for row in full
           if row['source'] not in ('lr~0.0005', 'critic')]
    old.append(dict(full[1], source='lr~0.1'))  # a cell of another design
    jobs = FakeJobs()
    rows = Bench(load_design(REPO / 'config/config.yaml'), tmp_path / 'again', jobs).table(old, log=[].append)
    assert [row['source'] for row in rows] == [row['source'] for row in full]
    by_source = {row['source']: row for row in rows}
    assert by_source['baseline']['cpu_s'] == '1.5' and by_source['baseline']['measured'] == '2000-01-01'
    assert by_source['lr~0.0005']['cpu_s'] == FIXED_S + 1 + PER_ITERATION_S * 30
    assert by_source['critic']['cpu_s'] == CRITIC_S
    assert set(jobs.lengths) == {'lr~0.0005'}  # the critic's job runs, no other cell's
