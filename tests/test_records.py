"""The published run records (results/records/): exact, byte-stable, written atomically, and enough to rebuild
every table, figure and the ledger byte for byte (on the test design), with the per-seed claim inputs."""
from __future__ import annotations

import filecmp
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from test_workflow import REPO, TEST_RESULTS, environment

from analysis.ledger.chapter import Context
from analysis.ledger.claims import load_claims, samples
from agentrl.files import with_manifest, write_folder
from analysis.records.load import WHERE_COLUMNS, Runs, combine, load_runs
from analysis.records.records import (claim_samples, load_options, load_records, parquet_bytes, parse_reuse,
                                      write_records)
from analysis.ledger.verdicts import decide

STAMP = '.snakemake_timestamp'  # Snakemake marks its directory outputs with it


@pytest.fixture(scope='module')
def design(serial) -> Path:
    """The test design run end to end by the workflow (conftest.py): its results folder."""
    return serial / TEST_RESULTS


def analysis_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, '-m', 'analysis', *map(str, args)], cwd=REPO, env=environment(),
                          capture_output=True, text=True, timeout=600)


def files(folder: Path) -> list[str]:
    """Every file under folder, relative, sorted; Snakemake's timestamps left out."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob('*') if p.is_file() and p.name != STAMP)


def test_records_rebuild_every_result_byte_for_byte(design, tmp_path):
    out = tmp_path / 'rebuilt'
    result = analysis_cli('aggregate', '--records', design / 'records', '--out', out)
    assert result.returncode == 0, result.stderr[-3000:]
    published = [f for f in files(design) if f.split('/')[0] in ('tables', 'figures', 'claims', 'records')
                 or f in ('README.md', 'claims.md')]
    assert {'claims.md', 'README.md', 'tables/claim_inputs.csv', 'records/minibatches.parquet',
            'figures/claims.svg', 'figures/claims.png'} <= set(published)
    assert any(f.startswith('claims/') for f in published)  # the figure of each claim with values
    assert any(f.endswith('.svg') for f in published) and any(f.endswith('.png') for f in published)
    assert files(out) == published
    _, mismatch, errors = filecmp.cmpfiles(design, out, published, shallow=False)
    assert mismatch == errors == []


def test_records_hold_the_runs_exactly(design):
    read = load_runs(design / 'runs', design / 'experiments')
    records = load_records(design / 'records')
    assert sorted(read.tables) == sorted(records.tables) == ['epochs', 'iterations', 'minibatches', 'records']
    pd.testing.assert_frame_equal(records.runs.drop(columns='path'), read.runs.drop(columns='path'))
    assert set(records.runs['path']) == {str(design / 'records')}
    pd.testing.assert_frame_equal(records.summaries, read.summaries)
    for name, frame in read.tables.items():
        pd.testing.assert_frame_equal(records.tables[name], frame, check_exact=True)
    assert records.configs == read.configs and len(read.configs) == 3
    assert len(read.tables['minibatches']) > len(read.tables['epochs']) > 0  # per-minibatch rows are all kept


def test_records_say_where_each_run_was_made(design, tmp_path):
    runs = pd.read_parquet(design / 'records' / 'runs.parquet')
    made = json.loads(next((design / 'runs').rglob('run.json')).read_text())['provenance']
    assert len(runs) and (runs['numerics_version'] == made['numerics_version']).all()
    assert set(runs['cpu']) == {made['cpu']} and set(runs['cpu_vendor']) == {made['cpu_vendor']}
    assert set(runs['cpu_capability']) == {made['cpu_capability']} == {'AVX2'} and set(runs['torch']) == {made['torch']}
    assert {json.loads(text)['MKL_CBWR'] for text in runs['numeric_settings']} == {'COMPATIBLE,STRICT'}
    assert set(runs['guarantee']) == {made['guarantee']}
    older = records_without_where(design, tmp_path / 'older')
    assert (load_records(older).runs[['cpu', 'torch', 'guarantee']] == '').all().all()  # older records: ''


def records_without_where(design: Path, folder: Path) -> Path:
    """A copy of the design's records as written before the WHERE_COLUMNS (runs.parquet without them), in folder."""
    files = {path.name: path.read_bytes() for path in (design / 'records').iterdir() if path.name != 'SHA256SUMS'}
    runs = pd.read_parquet(design / 'records' / 'runs.parquet')
    files['runs.parquet'] = parquet_bytes(runs.drop(columns=WHERE_COLUMNS))
    write_folder(folder, with_manifest(files))
    return folder


def test_runs_read_partly_from_the_records_are_the_runs_read_from_their_directories(design):
    """What the workflow reads when the records hold some runs (--reuse) and run directories the others."""
    read = load_runs(design / 'runs', design / 'experiments')
    reuse = parse_reuse(['baseline:0,2', 'clip_gradients:1'])
    files = [p for p in sorted(design.glob('*/*/seed~*/run.json'))
             if int(p.parent.name.split('~')[1]) not in reuse.get(p.parent.parent.name, [])]
    both = combine(load_runs(*files), load_records(design / 'records', reuse))
    pd.testing.assert_frame_equal(both.runs.drop(columns='path'), read.runs.drop(columns='path'))
    pd.testing.assert_frame_equal(both.summaries, read.summaries)
    for name, frame in read.tables.items():
        pd.testing.assert_frame_equal(both.tables[name].reset_index(drop=True), frame, check_exact=True)
    assert both.configs == read.configs
    with pytest.raises(ValueError, match='holds no run baseline seed 7'):
        load_records(design / 'records', {'baseline': [0, 7]})
    with pytest.raises(ValueError, match='run baseline seed 0 is read twice'):
        combine(read, load_records(design / 'records', {'baseline': [0]}))
    with pytest.raises(ValueError, match='--reuse baseline: expected NAME:SEED,SEED'):
        parse_reuse(['baseline'])


def test_records_store_the_aggregations_options(design):
    options = load_options(design / 'records')
    assert options['baseline'] == 'baseline' and options['method'] == 't'
    assert set(options) == {'baseline', 'method', 'seed', 'alpha', 'min_seeds'}  # every seed read: no plan, no stage


def test_records_whose_options_hold_a_seed_plan_and_stage_are_read_as_before(design, tmp_path):
    """Records published when the aggregation took --seeds and --stage hold them in aggregate.json: they are ignored."""
    files = {p.name: p.read_bytes() for p in (design / 'records').iterdir() if p.name != 'SHA256SUMS'}
    old = dict(load_options(design / 'records'), seeds=None, stage=None)
    files['aggregate.json'] = (json.dumps(old, indent=2, sort_keys=True) + '\n').encode()
    write_folder(tmp_path / 'records', with_manifest(files))
    done = analysis_cli('claims', '--records', tmp_path / 'records', '--out', tmp_path / 'out')
    assert done.returncode == 0, done.stderr
    assert (tmp_path / 'out' / 'tables' / 'claims.csv').read_bytes() == (design / 'tables' / 'claims.csv').read_bytes()


def test_records_bytes_depend_only_on_the_runs(design, tmp_path):
    runs = load_records(design / 'records')
    options = load_options(design / 'records')
    write_records(runs, tmp_path / 'again', options)
    names = files(design / 'records')
    assert files(tmp_path / 'again') == names
    assert filecmp.cmpfiles(design / 'records', tmp_path / 'again', names, shallow=False)[1:] == ([], [])


def test_claim_inputs_are_the_exact_per_seed_values_of_each_claim(design):
    table = pd.read_csv(design / 'tables' / 'claim_inputs.csv')
    assert list(table.columns) == ['id', 'input', 'seed', 'value'] and len(table) > 0
    ctx = Context.build(load_records(design / 'records'), load_options(design / 'records')['baseline'])
    claims = {c['id']: c for c in load_claims(chapter=ctx.chapter)['claims']}
    assert set(table['id']) <= set(claims)
    ledger = pd.read_csv(design / 'tables' / 'claims.csv').set_index('id')
    tested = (ledger['verdict'] != 'untested') & (ledger['group'] != 'check')
    assert ledger.loc[tested, 'n'].eq(3).all()  # every seed the two stages gave
    for (claim_id, index), rows in table.groupby(['id', 'input']):
        expected = samples(claims[claim_id], ctx)[index].values
        assert rows.set_index('seed')['value'].to_dict() == expected.to_dict(), (claim_id, index)
    decided = 0  # one call recomputes a verdict from the CSV: the same row as from the runs
    for claim in claims.values():
        found = [f.values if not f.note else pd.Series(dtype=float) for f in samples(claim, ctx)]
        read = claim_samples(table, claim)
        assert [s.to_dict() for s in read] == [s.to_dict() for s in found], claim['id']
        if all(len(s) for s in read):
            assert str(decide(claim, read, power=False)) == str(decide(claim, found, power=False)), claim['id']
            decided += 1
    assert decided > 0


def test_records_replace_other_run_sources(design, tmp_path):
    both = analysis_cli('aggregate', '--records', design / 'records', '--runs', design / 'runs', '--out', tmp_path)
    assert both.returncode != 0 and 'not runs and records' in both.stderr
    files = analysis_cli('aggregate', '--records', design / 'records', '--run-files', design / 'runs' / 'baseline' /
                         'seed~0' / 'run.json', '--out', tmp_path)
    assert files.returncode != 0 and 'not run_files and records' in files.stderr  # which runs from which: --reuse
    alone = analysis_cli('aggregate', '--reuse', 'baseline:0', '--out', tmp_path)
    assert alone.returncode != 0 and 'not reuse' in alone.stderr
    empty = analysis_cli('aggregate', '--records', tmp_path, '--out', tmp_path / 'out')
    assert empty.returncode != 0 and f'{tmp_path} holds no runs.parquet' in empty.stderr
    assert not (tmp_path / 'out').exists()


def test_an_option_given_overrides_the_stored_one(design, tmp_path):
    result = analysis_cli('aggregate', '--records', design / 'records', '--out', tmp_path, '--baseline', 'nope')
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads((tmp_path / 'records' / 'aggregate.json').read_text())['baseline'] == 'nope'


def parquet_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob('*.parquet'))


def test_runs_added_to_records_are_the_records_of_all_of_them(design, tmp_path):
    """`records`: new records from some runs, the rest added to them, give the aggregation's records, file for file;
    a run added twice replaces its record."""
    run_files = sorted(design.glob('*/*/seed~*/run.json'))
    first = analysis_cli('records', '--run-files', *run_files[:2], '--baseline', 'baseline', '--out', tmp_path / 'a')
    assert first.returncode == 0, first.stderr[-3000:]
    assert len(load_records(tmp_path / 'a' / 'records').runs) == 2 and files(tmp_path / 'a') == [
        f'records/{name}' for name in files(tmp_path / 'a' / 'records')]  # the records only: no table, no ledger
    rest = analysis_cli('records', '--records', tmp_path / 'a' / 'records', '--run-files', *run_files[1:],
                        '--out', tmp_path / 'b')
    assert rest.returncode == 0, rest.stderr[-3000:]
    names = parquet_files(design / 'records')
    assert parquet_files(tmp_path / 'b' / 'records') == names
    assert filecmp.cmpfiles(design / 'records', tmp_path / 'b' / 'records', names, shallow=False)[1:] == ([], [])
    assert load_options(tmp_path / 'b' / 'records')['baseline'] == 'baseline'  # the records' options, kept

    changed = tmp_path / 'changed' / 'run.json'  # baseline seed 0 again, with another summary value
    changed.parent.mkdir()
    run = json.loads((design / 'runs' / 'baseline' / 'seed~0' / 'run.json').read_text())
    metric = sorted(k for k, v in run['summary'].items() if isinstance(v, float))[0]
    run['summary'][metric] += 1.0
    changed.write_text(json.dumps(run))
    replaced = analysis_cli('records', '--records', design / 'records', '--run-files', changed, '--out', tmp_path / 'c')
    assert replaced.returncode == 0, replaced.stderr[-3000:]
    before, after = load_records(design / 'records'), load_records(tmp_path / 'c' / 'records')
    assert len(after.runs) == len(before.runs)
    value = after.summaries.query('name == "baseline" and seed == 0 and metric == @metric')['value']
    assert value.tolist() == [run['summary'][metric]]
    assert 'minibatches' not in after.tables or not len(after.tables['minibatches'].query(
        'name == "baseline" and seed == 0'))  # its CSVs were not copied beside the changed run.json


def test_runs_of_a_new_numerics_version_start_the_records_afresh(design, tmp_path):
    """A run of another numerics version added to the records: the records of the old version leave, whatever their
    name and seed (no design continues from them), and the new run is the records' only run."""
    newer = tmp_path / 'newer' / 'run.json'
    newer.parent.mkdir()
    run = json.loads((design / 'runs' / 'baseline' / 'seed~0' / 'run.json').read_text())
    run['provenance']['numerics_version'] += 1
    newer.write_text(json.dumps(run))
    result = analysis_cli('records', '--records', design / 'records', '--run-files', newer, '--out', tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    before, after = load_records(design / 'records'), load_records(tmp_path / 'records')
    assert len(before.runs) > 1 and set(before.runs['numerics_version']) == {run['provenance']['numerics_version'] - 1}
    assert after.runs[['name', 'seed', 'numerics_version']].values.tolist() == [
        ['baseline', 0, run['provenance']['numerics_version']]]
    assert set(after.summaries['name']) == {'baseline'} and all(set(t['seed']) == {0} for t in after.tables.values())


def with_rescaled_run(design: Path, tmp_path: Path, cell: str) -> tuple[dict, Runs, Runs]:
    """The design's records with the cell's seed 0 added at a fifth of its learning rate (`python -m analysis records`
    into tmp_path): (that run's run.json, the records before, the records after)."""
    rescaled = tmp_path / 'rescaled' / 'run.json'
    rescaled.parent.mkdir()
    run = json.loads((design / 'runs' / cell / 'seed~0' / 'run.json').read_text())
    run['config']['lr'] /= 5
    rescaled.write_text(json.dumps(run))
    result = analysis_cli('records', '--records', design / 'records', '--run-files', rescaled, '--out', tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    return run, load_records(design / 'records'), load_records(tmp_path / 'records')


def test_a_cell_run_at_another_configuration_starts_its_records_afresh(design, tmp_path):
    """A run of a cell whose configuration changed (a new learning-rate scale, say) added to the records: every record
    of that cell's old configuration leaves, whatever its seed, and the records say the new configuration; the other
    cells' records stay."""
    run, before, after = with_rescaled_run(design, tmp_path, 'baseline')
    assert len(before.runs[before.runs['name'] == 'baseline']) > 1
    assert after.runs.loc[after.runs['name'] == 'baseline', 'seed'].tolist() == [0]
    assert after.configs['baseline']['lr'] == run['config']['lr']
    assert len(after.runs) == len(before.runs[before.runs['name'] != 'baseline']) + 1  # (named against the new one)


def test_a_cell_of_a_new_scale_published_before_its_baseline_keeps_its_name(design, tmp_path):
    """A run of lam~0.95 at a fifth of the rate added to records whose baseline is at the old rate (a design at a new
    learning-rate scale, published half-way, before its baseline runs): the old baseline leaves, so the cell reads as
    lam~0.95, not as renamed against the old baseline; the other cell's records stay as they are."""
    run, before, after = with_rescaled_run(design, tmp_path, 'lam~0.95')
    assert {'baseline', 'lam~0.95'} <= set(before.runs['name'])
    assert after.runs.loc[after.runs['name'] == 'lam~0.95', 'seed'].tolist() == [0]
    assert 'baseline' not in set(after.runs['name']) and after.configs['lam~0.95']['lr'] == run['config']['lr']
    kept = before.runs[~before.runs['name'].isin(['baseline', 'lam~0.95'])]
    assert len(after.runs) == len(kept) + 1 and set(kept['name']) <= set(after.runs['name'])


def test_records_needs_runs_to_add(design, tmp_path):
    result = analysis_cli('records', '--records', design / 'records', '--out', tmp_path)
    assert result.returncode == 2 and 'records needs --run-files (and --records to add them to); not records' \
        in result.stderr
    assert not (tmp_path / 'records').exists()


def test_damaged_records_are_refused_in_one_line_naming_the_file(tmp_path):
    """`python -m analysis aggregate --records DAMAGED`: the one line naming the file, no usage before it."""
    records = tmp_path / 'records'
    shutil.copytree(REPO / 'results' / 'records', records)
    with open(records / 'runs.parquet', 'r+b') as file:
        file.truncate(100)
    result = analysis_cli('aggregate', '--records', records, '--out', tmp_path / 'out')
    assert result.returncode == 2 and result.stdout == ''
    damaged = re.escape(str(records / 'runs.parquet'))
    assert re.fullmatch(rf'python -m analysis: error: the run records are damaged: {damaged} is not the file written '
                        r'with SHA256SUMS \(its SHA-256 differs\)\. Restore .*\n', result.stderr)
    assert not (tmp_path / 'out').exists()
