"""`python -m analysis.records.recheck`: which runs it draws, how it compares a rerun with its records, what it refuses,
and one run of the test design published as records and made again (the only test here that trains)."""
from __future__ import annotations

import json
import random
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from test_workflow import REPO, TEST_CONFIG, TEST_RESULTS, environment, snakemake, succeeded

from agentrl.numerics import NUMERICS_VERSION
from analysis.records import recheck
from analysis.records.load import Runs, load_runs
from analysis.records.records import load_records, run_table, write_records
from analysis.records.recheck import Run, difference, first_difference, held_runs, sample
from workflow.design import cell_json, expand_design, load_design

RECORDS = REPO / 'results' / 'records'  # the published records: what the comparison is tested on


# --- which runs --------------------------------------------------------------------------------

RUNS = [*(Run('train', cell, seed) for cell in ('baseline', 'lam~0.95') for seed in range(3)),
        *(Run('experiment', 'clip_gradients', seed) for seed in range(2))]


def test_a_sample_is_seeded_and_holds_both_kinds_in_turns():
    drawn = sample(RUNS, 4, random.Random(0))
    assert len(set(drawn)) == 4 and set(drawn) <= set(RUNS) and drawn == sorted(drawn)
    assert [run.kind for run in drawn].count('experiment') == 2  # the kinds take turns while both last
    assert drawn == sample(reversed(RUNS), 4, random.Random(0))  # the seed decides it, not the order given
    assert {tuple(sample(RUNS, 4, random.Random(seed))) for seed in range(20)} != {tuple(drawn)}
    assert [run.kind for run in sample(RUNS, 1, random.Random(0))] == ['train']
    assert sample(RUNS, 5, random.Random(0)).count(Run('experiment', 'clip_gradients', 0)) == 1
    assert sample(RUNS, 100, random.Random(0)) == sorted(RUNS)
    assert sample(RUNS[:6], 2, random.Random(0))[0].kind == 'train'  # one kind only


def test_the_held_runs_are_the_designs_runs_in_its_records_with_their_versions():
    """A cell's records by its config (whatever their name), an experiment's by name, each with the numerics version
    it was made at; records of a cell or experiment outside the design are not held."""
    design = load_design(TEST_CONFIG)
    cells = expand_design(design)
    config = cell_json(cells['lam~0.95'].values).strip()
    rows = [dict(kind='train', name='renamed', seed=1, config=config, numerics_version=NUMERICS_VERSION),
            dict(kind='train', name='lam~0.95', seed=2, config=config, numerics_version=NUMERICS_VERSION - 1),
            dict(kind='train', name='other', seed=0, config=json.dumps({'algorithm': 'ppo', 'lam': 0.5}),
                 numerics_version=NUMERICS_VERSION),
            dict(kind='experiment', name='clip_gradients', seed=0, config='', numerics_version=NUMERICS_VERSION),
            dict(kind='experiment', name='trust_region', seed=0, config='', numerics_version=NUMERICS_VERSION)]
    assert held_runs(rows, cells, design['experiments']) == {
        Run('train', 'lam~0.95', 1): NUMERICS_VERSION, Run('train', 'lam~0.95', 2): NUMERICS_VERSION - 1,
        Run('experiment', 'clip_gradients', 0): NUMERICS_VERSION}


def refusal(capsys, *argv) -> str:
    """The one-line error `python -m analysis.records.recheck ARGV` stops with (exit status 2), before anything runs."""
    with pytest.raises(SystemExit) as stopped:
        recheck.main(list(argv))
    assert stopped.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize('spec', ['lam~0.5:0', 'baseline:9999'])
def test_a_run_the_records_lack_is_refused_naming_it(capsys, monkeypatch, spec):
    monkeypatch.chdir(REPO)
    error = refusal(capsys, '--runs', spec)
    assert error == ('python -m analysis.records.recheck: error: config/config.yaml, results/records: '
                     f'{spec} is not a run of the design that its records hold')
    assert 'expected NAME:SEED' in refusal(capsys, '--runs', 'baseline')


def test_records_of_another_numerics_version_are_refused_naming_both(capsys, monkeypatch):
    """The published records against code one numerics version on: a sample, or a named run, is refused."""
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(recheck, 'NUMERICS_VERSION', NUMERICS_VERSION + 1)
    made = int(run_table(RECORDS)['numerics_version'].max())
    for argv in (['--sample', '2'], ['--runs', 'baseline:0']):
        error = refusal(capsys, *argv)
        assert f'made at numerics version {made}, this code is at version {NUMERICS_VERSION + 1}' in error, error
    assert refusal(capsys, '--runs', 'baseline:0').endswith(
        f'baseline:0 was made at numerics version {made}, this code is at version {NUMERICS_VERSION + 1}: only runs '
        'of its own version rerun bit for bit (agentrl/numerics/__init__.py)')


# --- the comparison ----------------------------------------------------------------------------

@pytest.fixture(scope='module')
def published():
    """One PPO run, one REINFORCE run and one experiment of the published records, each as its own Runs."""
    runs = run_table(RECORDS)
    chosen = [runs[runs['kind'] == 'experiment'].iloc[0]]
    for algorithm in ('ppo', 'reinforce'):
        chosen.append(runs[runs['config'].str.contains(f'"algorithm": "{algorithm}"')].iloc[0])
    return [load_records(RECORDS, {row['name']: [int(row['seed'])]}) for row in chosen]


def with_table(runs: Runs, table: str, frame: pd.DataFrame) -> Runs:
    """runs with one table (a CSV's name, or 'summary') replaced."""
    if table == 'summary':
        return Runs(runs.runs, runs.configs, frame, runs.tables)
    return Runs(runs.runs, runs.configs, runs.summaries, {**runs.tables, table: frame})


def frames(runs: Runs) -> dict[str, pd.DataFrame]:
    return {'summary': runs.summaries, **runs.tables}


def test_a_copy_of_a_run_is_identical(published):
    for runs in published:
        assert difference(runs, Runs(runs.runs.copy(), dict(runs.configs), runs.summaries.copy(),
                                     {name: frame.copy() for name, frame in runs.tables.items()})) is None


def test_one_ulp_anywhere_is_found_and_named_by_table_column_and_row(published):
    """In every table of each run, the first finite float of its last float column moved by one ulp, up and down;
    a summary's row named by its metric too."""
    checked = set()
    for runs in published:
        for table, frame in frames(runs).items():
            column = [c for c in frame.select_dtypes('float') if c not in recheck.TIMING and frame[c].notna().any()][-1]
            timed = frame['metric'].isin(recheck.TIMING).to_numpy() if 'metric' in frame else np.zeros(len(frame), bool)
            row = int(np.flatnonzero(np.isfinite(frame[column].to_numpy()) & ~timed)[0])
            compared = row - int(timed[:row].sum())  # its row among those compared (a summary's times are not)
            for direction in (np.inf, -np.inf):
                moved = frame.copy()
                moved.loc[row, column] = np.nextafter(frame.loc[row, column], direction)
                found = difference(runs, with_table(runs, table, moved))
                before, after = float(frame.loc[row, column]), float(moved.loc[row, column])
                named = f' (metric {frame.loc[row, "metric"]})' if 'metric' in frame else ''
                assert found == (f'{table}: column {column}, row {compared}{named}: {before!r} in the records, '
                                 f'{after!r} in the rerun')
            checked.add(table)
    assert checked == {'summary', 'iterations', 'epochs', 'minibatches', 'records'}


def test_the_wall_times_are_not_compared_and_the_numerics_version_is(published):
    runs = published[1]
    iterations = runs.tables['iterations'].assign(wall_s=1e9, sample_s=-1.0)
    summaries = runs.summaries.assign(value=runs.summaries['value'].where(runs.summaries['metric'] != 'wall_s', 0.0))
    assert difference(runs, with_table(with_table(runs, 'iterations', iterations), 'summary', summaries)) is None
    again = Runs(runs.runs.assign(numerics_version=runs.runs['numerics_version'] + 1), runs.configs, runs.summaries,
                 runs.tables)
    assert difference(runs, again).startswith('run: column numerics_version, row 0')


def test_nan_equals_nan_and_a_missing_column_is_nan():
    made = pd.DataFrame({'iteration': [0, 1], 'beta': [np.nan, np.nan], 'kl': [0.5, np.nan], 'label': ['a', 'b']})
    assert first_difference(made, made.copy()) is None
    assert first_difference(made, made.drop(columns='beta')) is None  # the records store an absent column as NaN
    assert first_difference(made, made.assign(kl=[0.5, 0.0])) == 'column kl, row 1: nan in the records, 0.0 in the ' \
                                                                 'rerun'
    assert first_difference(made.drop(columns='beta'), made.assign(beta=[np.nan, 2.0])).startswith('column beta, row 1')
    assert first_difference(made, made.assign(label=['a', 'c'])).startswith("column label, row 1: 'b'")
    assert first_difference(made, made.iloc[:1]) == '2 rows in the records, 1 in the rerun'
    assert first_difference(made, made.assign(iteration=[0.0, 1.0])) is None  # the same numbers, another dtype


def test_a_table_only_one_side_has_is_a_difference(published):
    runs = published[0]
    table = next(iter(runs.tables))
    found = difference(runs, Runs(runs.runs, runs.configs, runs.summaries, {}))
    assert found == f'{table}: {len(runs.tables[table])} rows in the records, 0 in the rerun'


# --- end to end: one run published, then made again --------------------------------------------

def test_a_published_run_is_made_again_from_nothing_and_found_identical(tmp_path):
    """The test design's cheapest run (REINFORCE, seed 0), made by the workflow and published as records the way the
    aggregation writes them, then rechecked from a folder holding only those records: Snakemake trains it again in
    the scratch folder, and every number is the same."""
    made = tmp_path / 'made'
    succeeded(snakemake(made, '--cores', 1, f'{TEST_RESULTS}/runs/algorithm~reinforce/seed~0/run.json'))
    clone = tmp_path / 'clone'
    write_records(load_runs(made / TEST_RESULTS / 'runs'), clone / TEST_RESULTS / 'records')
    scratch = tmp_path / 'scratch'
    result = subprocess.run([sys.executable, '-m', 'analysis.records.recheck', '--configfile', str(TEST_CONFIG),
                             '--runs',
                             'algorithm~reinforce:0', '--workdir', str(scratch)], cwd=clone, env=environment(),
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr[-6000:]
    made_again = re.findall(r'^(?:local)?rule (\w+):$', result.stderr, flags=re.M)  # from nothing: nothing read
    assert sorted(made_again) == ['base_agent', 'cell_config', 'train'], result.stderr[-3000:]
    cpu = load_runs(made / TEST_RESULTS / 'runs').runs['cpu'].iloc[0]
    assert f'| train | algorithm~reinforce | 0 | {cpu} | {cpu} | yes |  | yes |' in result.stdout, result.stdout
    assert result.stdout.splitlines()[-1].startswith('1 of 1 runs identical to their records')
    assert (scratch / 'results' / 'runs' / 'algorithm~reinforce' / 'seed~0' / 'run.json').is_file()


def test_a_summary_row_is_named_by_its_metric():
    made = pd.DataFrame({'name': ['baseline'] * 2, 'seed': [0, 0], 'metric': ['pass_train', 'pass_heldout'],
                         'value': [0.5, 0.25]})
    assert first_difference(made, made.assign(value=[0.5, 0.75])) == (
        'column value, row 1 (metric pass_heldout): 0.25 in the records, 0.75 in the rerun')
    assert first_difference(made, made.assign(metric=['pass_train', 'kl'])).startswith('column metric, row 1: ')
