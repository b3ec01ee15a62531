"""The state a design continues from (workflow/state.py): which published runs it reuses, where each run is read from,
and the basis its looks belong to."""
import json
import os
import shlex
import subprocess
import sys

import pytest
import yaml
from test_design import DESIGN

from workflow.design import expand_design
from workflow.plan import DesignError
from workflow.state import (DECISION_MODULES, basis, basis_file, digest, more_seeds, published, set_aside,
                            sources_option, split_runs, unreadable_runs, write_basis)

CELLS = expand_design(DESIGN)


def row(name, seed, config=None, kind='train', numerics=2):
    return dict(kind=kind, name=name, seed=seed, config=json.dumps(config) if config is not None else '',
                numerics_version=numerics)


def test_a_published_run_is_reused_only_for_the_same_cell_config_seed_and_numerics():
    base = dict(CELLS['baseline'].values, clip_low=0.2)  # a record holds the whole TrainConfig
    rows = [row('baseline', 0, base), row('baseline', 1, base), row('baseline', 2, base, numerics=1),
            row('baseline', 3, dict(base, iterations=31)), row('epochs~1', 4, base),  # the baseline's config
            row('lam~0.5', 0, dict(base, lam=0.5)), row('surrogate', 0, kind='experiment'),
            row('staleness', 0, kind='experiment'),
            row('lam~0.95_kl~0.02', 5, dict(base, lam=0.95, target_kl=0.02))]  # named before the rename
    assert published(rows, CELLS, ['surrogate'], numerics=2) == {
        'baseline': {0, 1, 4}, 'surrogate': {0}, 'lam~0.95_target_kl~0.02': {5}}
    assert published(rows, CELLS, ['surrogate'], numerics=1) == {'baseline': {2}}


def test_a_record_made_before_the_substrate_axis_is_a_run_of_the_default_substrate():
    old = dict(CELLS['baseline'].values, clip_low=0.2)  # no substrate: the field is newer than the record
    rows = [row('baseline', 0, old), row('baseline', 1, dict(old, substrate='tinyagent')),
            row('baseline', 2, dict(old, substrate='larger'))]
    assert published(rows, CELLS, [], numerics=2) == {'baseline': {0, 1}}
    larger = expand_design(dict(DESIGN, baseline=dict(DESIGN['baseline'], substrate='larger')))
    assert published(rows, larger, [], numerics=2) == {'baseline': {2}}


def test_a_run_directory_here_wins_over_the_records_and_a_missing_run_is_made(tmp_path):
    def path(name, seed):
        return str(tmp_path / name / f'seed~{seed}' / 'run.json')
    (tmp_path / 'baseline' / 'seed~1').mkdir(parents=True)
    (tmp_path / 'baseline' / 'seed~1' / 'run.json').write_text('{}')
    files, reused = split_runs({'surrogate': [0], 'baseline': [2, 1, 0]}, path, {'baseline': {0, 1}, 'surrogate': {0}})
    assert files == [path('baseline', 1), path('baseline', 2)] and reused == {'baseline': [0], 'surrogate': [0]}
    option = sources_option(files, 'results/records', reused)
    assert shlex.split(option) == ['--run-files', *files, '--records', 'results/records', '--reuse', 'baseline:0',
                                   'surrogate:0']
    assert sources_option([], 'r', {'a~1': [0, 1]}) == "--records r --reuse 'a~1:0,1'"


def test_the_basis_moves_with_the_cells_the_seeds_the_experiments_the_claims_and_the_numerics(tmp_path):
    claims = tmp_path / 'claims.yaml'
    claims.write_text(yaml.safe_dump({'claims': []}))
    design = dict(DESIGN, seeds=[0, 1], experiments=['surrogate'])
    first = digest(basis(design, 2, [claims]))
    assert digest(basis(json.loads(json.dumps(design)), 2, [claims])) == first
    changed = [dict(design, sweeps=dict(DESIGN['sweeps'], epochs=[1, 2])), dict(design, seeds=[0, 1, 2]),
               dict(design, experiments=[]), dict(design, trainer=dict(DESIGN['trainer'], iterations=31))]
    assert first not in {digest(basis(other, 2, [claims])) for other in changed} | {digest(basis(design, 3, [claims]))}
    claims.write_text(yaml.safe_dump({'claims': [{'id': 'new'}]}))
    assert digest(basis(design, 2, [claims])) != first


def test_the_basis_holds_every_analysis_module_a_look_imports():
    """A change to the code that decides the claims remakes the looks: the basis hashes each module that
    `python -m analysis stage` reads runs (load, records) and plans the next stage (stages) with, and what they
    import."""
    loaded = subprocess.run(
        [sys.executable, '-c',
         'import sys, analysis.records.load, analysis.records.records, analysis.ledger.stages; '
         'print(*sorted(m.split(".", 1)[1] for m in sys.modules if m.startswith("analysis.")))'],
        capture_output=True, text=True, check=True).stdout.split()
    assert sorted(loaded) == sorted(DECISION_MODULES)


def test_the_basis_file_is_named_by_its_digest_and_replaces_the_others(tmp_path):
    old, new = basis_file(str(tmp_path), {'a': 1}), basis_file(str(tmp_path), {'a': 2})
    assert old != new and old.endswith(f'basis~{digest({"a": 1})}.json')
    write_basis(old, {'a': 1})
    write_basis(new, {'a': 2})
    assert [p.name for p in tmp_path.joinpath('configs').iterdir()] == [new.rsplit('/', 1)[1]]
    assert json.loads(open(new).read()) == {'a': 2}


def test_an_unreadable_run_json_is_found_and_set_aside_so_its_run_counts_as_missing(tmp_path):
    runs = {f'{kind}/{name}/seed~{seed}': dict(summary={}, provenance={}) for kind, name in
            (('runs', 'baseline'), ('experiments', 'clip_gradients')) for seed in (0, 1)}
    for folder, run in runs.items():
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / 'run.json').write_text(json.dumps(run))
    (tmp_path / 'configs' / 'x' / 'seed~0').mkdir(parents=True)
    (tmp_path / 'configs' / 'x' / 'seed~0' / 'run.json').write_text('not a run, not under runs/')
    assert unreadable_runs(tmp_path) == []
    truncated = tmp_path / 'runs/baseline/seed~1/run.json'
    truncated.write_text(truncated.read_text()[:10])
    partial = tmp_path / 'experiments/clip_gradients/seed~0/run.json'
    partial.write_text('{"summary": {}}')  # JSON, but not a run's
    assert unreadable_runs(tmp_path) == [partial, truncated]
    assert set_aside(truncated) == truncated.with_name('run.json.unreadable') and not truncated.exists()
    assert unreadable_runs(tmp_path) == [partial]


def test_more_seeds_for_one_cell_are_the_seeds_its_records_lack():
    cells, experiments, held = ['baseline', 'lam~0.95'], ['surrogate'], {'baseline': {0, 1, 2}, 'surrogate': {0}}
    assert more_seeds('baseline', 5, cells, experiments, held, 'out') == [
        'out/runs/baseline/seed~3/run.json', 'out/runs/baseline/seed~4/run.json']
    assert more_seeds('surrogate', 2, cells, experiments, held, 'out') == ['out/experiments/surrogate/seed~1/run.json']
    assert len(more_seeds('lam~0.95', 2, cells, experiments, held, 'out')) == 2
    with pytest.raises(DesignError, match='^cell or experiment lam~0.9 is not in this design; did you mean lam~0.95[?]$'):
        more_seeds('lam~0.9', 5, cells, experiments, held, 'out')
    with pytest.raises(DesignError, match='^cell or experiment x is not in this design; it has: baseline, lam~0.95, '
                                          'surrogate$'):
        more_seeds('x', 5, cells, experiments, held, 'out')
    with pytest.raises(DesignError, match='baseline: 3 seeds asked for, the records hold 3: expected more than 3'):
        more_seeds('baseline', 3, cells, experiments, held, 'out')
