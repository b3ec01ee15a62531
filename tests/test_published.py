"""Records are the state (issue 22): on a copy of the repository with the published results and no run directories,
the workflow runs only what a change needs.

The default design is planned (dry runs) against the published records, in a clone whose numerics version is the one
the records were made with. The test design is run for real from a published state of its own: the test design run
to its end in a clone, then everything but what the repository publishes (records, looks, tables, figures, ledger)
removed. `-s` prints each case's jobs planned and wall time.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from checkout import copy_checkout
from test_workflow import DEFAULT_CONFIG, REPO, TEST_CONFIG, TEST_RESULTS, environment, looks_basis

from agentrl.numerics import NUMERICS_VERSION
from analysis.ledger.claims import count_table, headline, judged, load_claims, read_ledger
from analysis.ledger.verdicts import DECIDED, decide
from analysis.records.records import claim_samples, load_records, run_table
from analysis.stats.eprocess import ebh
from analysis.pages.substrates import ANSWER_START, across, published_answer, read_substrates
from analysis.text import to_markdown
from workflow.design import expand_design, load_design
from workflow.plan import seed_plan
from workflow.state import basis, digest

PUBLISHED = ('records', 'stages', 'tables', 'figures', 'claims.md', 'README.md')  # what results/ holds in git
RUN_RULES = ('train', 'experiment')


def set_numerics(clone: Path, version: int) -> Path:
    """The clone's declared numerics version (agentrl/numerics/__init__.py) set to version."""
    path = clone / 'agentrl' / 'numerics' / '__init__.py'
    path.write_text(re.sub(r'^NUMERICS_VERSION = \d+$', f'NUMERICS_VERSION = {version}', path.read_text(), flags=re.M))
    return clone


def records_version(results: Path) -> int:
    """The numerics version the published records were made with (one for all)."""
    versions = set(run_table(results / 'records')['numerics_version'])
    assert len(versions) == 1, versions
    return int(versions.pop())


def snakemake(clone: Path, config: str, *args) -> tuple[subprocess.CompletedProcess, float]:
    """Snakemake from the clone's root, as a user runs it: (the result, stdout and stderr together; wall seconds)."""
    env = {**environment(), 'PYTHONPATH': str(clone)}
    start = time.perf_counter()
    result = subprocess.run([sys.executable, '-m', 'snakemake', '--profile', 'workflow/profiles/default',
                             '--configfile', config, *args], cwd=clone, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=1200)
    return result, time.perf_counter() - start


def jobs(out: str) -> list[tuple[str, str]]:
    """(rule, first output) of every job a Snakemake log lists, sorted."""
    found = re.findall(r'^(?:local)?(?:rule|checkpoint) (\w+):\n(?:    .*\n)*?    output: ([^,\n]+)', out,
                       flags=re.M)
    return sorted(found + [('all', '')] * len(re.findall(r'^(?:local)?rule all:$', out, flags=re.M)))


def planned(clone: Path, config: str, case: str) -> list[tuple[str, str]]:
    """The jobs a dry run plans; prints the case's count and wall time, and the stages' plans as the dry run states
    them."""
    result, wall = snakemake(clone, config, '--dry-run')
    assert result.returncode == 0, result.stdout[-6000:]
    found = jobs(result.stdout)
    print(f'\n{case}: dry run plans {len(found)} jobs ({sum(r in RUN_RULES for r, _ in found)} runs) in {wall:.1f} s',
          *re.findall(r'^stage \d+ of at most .*$', result.stdout, flags=re.M), sep='\n  ')
    return found


def ran(clone: Path, config: str, case: str) -> list[tuple[str, str]]:
    """The jobs a run executes; prints the case's count and wall time."""
    result, wall = snakemake(clone, config, '--cores', '2')
    assert result.returncode == 0, result.stdout[-6000:]
    found = jobs(result.stdout)
    print(f'\n{case}: ran {len(found)} jobs ({sum(r in RUN_RULES for r, _ in found)} runs) in {wall:.1f} s')
    return found


def runs_in(found: list[tuple[str, str]]) -> list[str]:
    """The run outputs of a job list, as name/seed~k."""
    return sorted(re.sub(r'^.*/(runs|experiments)/(.+)/run\.json$', r'\2', out)
                  for rule, out in found if rule in RUN_RULES)


def design_file(clone: Path, base: Path, name: str, **changes) -> str:
    """A design in the clone: base with top-level keys replaced; its path relative to the clone."""
    design = yaml.safe_load(base.read_text())
    design.update(changes)
    (clone / 'config' / name).write_text(yaml.safe_dump(design, sort_keys=False))
    return f'config/{name}'


DEFAULT_PLAN = seed_plan(yaml.safe_load(DEFAULT_CONFIG.read_text()))
# a fresh clone's plan: the aggregation, and a staged design's first look (the later ones follow from it)
LOOKS_AND_AGGREGATION = [('aggregate', 'results/claims.md'), ('all', ''), ('basis', 'BASIS'),
                         *([('stage', 'results/stages/stage~1.json')] if DEFAULT_PLAN.staged else [])]


def without_basis(found):
    return [(rule, 'BASIS' if rule == 'basis' else out) for rule, out in found]


# --- the default design, planned against the published records --------------------------------

def published_looks(results: Path) -> list[dict]:
    """The published looks of the default design, stage 1 on."""
    paths = sorted((results / 'stages').glob('stage~*.json'), key=lambda p: int(p.stem.split('~')[1]))
    return [json.loads(path.read_text()) for path in paths]


SUBSTRATE_DESIGNS = [REPO / 'config' / 'config.yaml', *sorted((REPO / 'config' / 'substrates').glob('*.yaml'))]


@pytest.mark.parametrize('design', SUBSTRATE_DESIGNS, ids=lambda path: path.stem)
def test_every_published_look_is_of_this_checkouts_basis(design):
    """A change to the claims or to the code deciding them moves every look's basis: the published looks must be
    made again (a run of the design, which makes no run) before the change lands, or a fresh clone would plan from
    looks that no longer hold. A design whose records are of an older numerics version is superseded, not guarded."""
    config = load_design(design)
    results = REPO / config['results_dir']
    looks = published_looks(results)
    if not looks:
        pytest.skip(f'{design.name}: no published look (a fixed design has none: its ledger is remade from the records '
                    'whenever the basis changes)')
    version = records_version(results)
    if version != NUMERICS_VERSION:
        pytest.skip(f'{design.name}: its records are of numerics version {version}, this checkout makes version '
                    f'{NUMERICS_VERSION}: the design is made again from nothing')
    current = digest(basis(config, version))
    stale = [look['stage'] for look in looks if look['basis'] != current]
    assert not stale, (f'{design.name}: the published looks of stages {stale} were made for basis '
                       f'{looks[0]["basis"]}, this checkout is basis {current} (the claims or the code deciding them '
                       f'changed): run the design once (`snakemake --profile workflow/profiles/default --cores N '
                       f'--configfile {design.relative_to(REPO)}`: no run, the looks and the ledger remade) and '
                       f'publish its stages and ledger')


@pytest.fixture(scope='module')
def published_clone(tmp_path_factory) -> Path:
    """A clone at the records' numerics version, whose published looks are of this checkout's basis."""
    clone = copy_checkout(tmp_path_factory.mktemp('default') / 'clone')
    version = records_version(clone / 'results')
    set_numerics(clone, version)
    looks = published_looks(clone / 'results')  # none for a fixed design: nothing to plan from
    current = digest(basis(yaml.safe_load(DEFAULT_CONFIG.read_text()), version))
    if looks and looks[0]['basis'] != current:  # remade for this checkout's claims, they would ask for other runs
        pytest.skip(f'the published looks were made for basis {looks[0]["basis"]}, this checkout is basis {current} '
                    '(its claims changed since): the published state is not this design\'s until it is republished')
    return clone


def assert_continues_from_its_records(clone: Path, config: str, results: str) -> None:
    """A publication in progress (its last look plans another stage): a fresh clone remakes the looks from the
    records (the basis file is not published) to the same plan, then plans exactly the next stage's runs that the
    records lack."""
    looks = published_looks(clone / results)
    following = looks[-1]['next']
    last = f'{results}/stages/stage~{len(looks)}.json'  # with the basis, or Snakemake keeps the look as it is
    result, _ = snakemake(clone, config, '--cores', '2', looks_basis(clone / config), last)
    assert result.returncode == 0, result.stdout[-6000:]
    assert not runs_in(jobs(result.stdout))  # the looks are remade from the records alone
    assert json.loads((clone / last).read_text())['next'] == following
    records = load_records(clone / results / 'records')
    held = {f'{row.name}/seed~{row.seed}' for row in records.runs.itertuples()}
    wanted = {f'{name}/seed~{seed}' for name in following['sources'] for seed in range(following['seeds'])}
    assert runs_in(planned(clone, config, f'a fresh clone, {results} in progress')) == sorted(wanted - held)


def test_a_fresh_clone_of_an_unfinished_publication_plans_only_the_runs_the_records_lack(published_clone):
    looks = published_looks(published_clone / 'results')
    if not looks or not looks[-1]['next']:
        pytest.skip('the published design is finished (its last look plans no stage): the default_clone tests check '
                    'it')
    assert_continues_from_its_records(published_clone, 'config/config.yaml', 'results')


@pytest.fixture(scope='module')
def default_clone(published_clone) -> Path:
    """A finished publication whose looks and aggregation were remade (a fresh clone's first run)."""
    clone, looks = published_clone, published_looks(published_clone / 'results')
    if looks and looks[-1]['next']:
        pytest.skip(f'the published design is in progress (its look {len(looks)} plans stage {len(looks) + 1}): '
                    'test_a_fresh_clone_of_an_unfinished_publication_plans_only_the_runs_the_records_lack checks it')
    # the basis file is not published: the dry run plans the first look again, the run every look, and no run
    assert without_basis(planned(clone, 'config/config.yaml', 'a fresh clone')) == LOOKS_AND_AGGREGATION
    found = ran(clone, 'config/config.yaml', 'a fresh clone, run')
    assert [r for r, _ in found].count('stage') == len(looks) and not runs_in(found)
    return clone


def assert_same_result(remade: Path, published: Path) -> None:
    """A remade result is the published one: a table (CSV) the same cells, its floats to 1e-9 relative (the analysis's
    numpy dispatches to the CPU's vector instructions, so a CPU with AVX-512 and one without can part in the last
    digit); any other file the same bytes."""
    if published.suffix != '.csv':
        assert remade.read_bytes() == published.read_bytes(), published
        return
    pd.testing.assert_frame_equal(pd.read_csv(remade), pd.read_csv(published), check_exact=False, rtol=1e-9,
                                  obj=str(published))


def test_a_fresh_clone_trains_nothing_and_remakes_the_published_results_as_they_are(default_clone):
    assert not (default_clone / 'results' / 'runs').exists()
    repo = Path(__file__).resolve().parents[1] / 'results'
    for path in sorted((repo / 'tables').glob('*')) + sorted((repo / 'records').glob('*')) + [repo / 'claims.md']:
        assert_same_result(default_clone / 'results' / path.relative_to(repo), path)
    for stage in range(1, len(published_looks(repo)) + 1):  # the same plans; the basis names this clone's version
        remade, published = (json.loads((root / 'stages' / f'stage~{stage}.json').read_text())
                             for root in (default_clone / 'results', repo))
        assert {**remade, 'basis': ''} == {**published, 'basis': ''}, stage
    assert planned(default_clone, 'config/config.yaml', 'the default design, again') == []


def test_one_new_level_plans_exactly_that_cells_first_stage_runs(default_clone, tmp_path):
    """A budgeted design prices the new cell by its cost table: the clone's gets a row for it (lam~0.9's)."""
    clone = shutil.copytree(default_clone, tmp_path / 'clone', symlinks=True)
    config = yaml.safe_load(DEFAULT_CONFIG.read_text())
    if DEFAULT_PLAN.budgeted:
        costs = clone / config['results_dir'] / 'costs.csv'
        row = next(line for line in costs.read_text().splitlines() if line.startswith('lam~0.9,'))
        costs.write_text(costs.read_text() + row.replace('lam~0.9,', 'lam~0.8,', 1) + '\n')
    path = design_file(clone, DEFAULT_CONFIG, 'new_level.yaml',
                       sweeps={**config['sweeps'], 'lam': [1.0, 0.95, 0.9, 0.8]})
    found = planned(clone, path, 'one new level (lam 0.8)')
    assert runs_in(found) == sorted(f'lam~0.8/seed~{seed}' for seed in range(DEFAULT_PLAN.looks[0]))
    support = sorted({rule for rule, _ in found} - set(RUN_RULES))
    assert support == ['aggregate', 'all', 'base_agent', 'basis', 'cell_config', 'critic_config',
                       *(['stage'] if DEFAULT_PLAN.staged else []), 'warm_critic']


def test_one_level_removed_plans_no_run(default_clone):
    config = yaml.safe_load(DEFAULT_CONFIG.read_text())
    path = design_file(default_clone, DEFAULT_CONFIG, 'removed_level.yaml',
                       sweeps={**config['sweeps'], 'epochs': [1, 2, 4, 8]})
    assert without_basis(planned(default_clone, path, 'one level removed (epochs 16)')) == LOOKS_AND_AGGREGATION


def test_a_changed_claim_plans_the_looks_and_the_aggregation(default_clone, tmp_path):
    clone = shutil.copytree(default_clone, tmp_path / 'clone', symlinks=True)
    claims = clone / 'analysis' / 'ledger' / 'claims.yaml'
    text = claims.read_text()
    claims.write_text(text.replace('    about: 0.9\n', '    about: 0.8\n', 1))
    assert claims.read_text() != text
    assert without_basis(planned(clone, 'config/config.yaml', 'a changed claim')) == LOOKS_AND_AGGREGATION


def test_a_new_numerics_version_plans_every_run_again(default_clone, tmp_path):
    clone = set_numerics(shutil.copytree(default_clone, tmp_path / 'clone', symlinks=True),
                         records_version(default_clone / 'results') + 1)
    found = planned(clone, 'config/config.yaml', 'a numerics version bump')
    config = yaml.safe_load(DEFAULT_CONFIG.read_text())
    names = sorted({out.split('/')[2] for rule, out in found if rule in RUN_RULES})
    sources = len(expand_design(config)) + len(config['experiments'])
    assert len(runs_in(found)) == sources * seed_plan(config).looks[0] and len(names) == sources  # the first stage


# --- the test design, run from a published state of its own ------------------------------------

@pytest.fixture(scope='module')
def small_published(parallel, tmp_path_factory) -> Path:
    """A clone holding what the test design's run to its end (conftest.py) publishes, and nothing else."""
    clone = copy_checkout(tmp_path_factory.mktemp('small') / 'clone')
    (clone / TEST_RESULTS).mkdir(parents=True)
    for name in PUBLISHED:
        made, published = parallel / TEST_RESULTS / name, clone / TEST_RESULTS / name
        shutil.copytree(made, published) if made.is_dir() else shutil.copy2(made, published)
    return clone


@pytest.fixture
def small(small_published, tmp_path) -> Path:
    return shutil.copytree(small_published, tmp_path / 'clone', symlinks=True)


def read_records(clone: Path):
    return load_records(clone / TEST_RESULTS / 'records')


def test_a_look_naming_a_cell_outside_the_design_stops_the_workflow_with_that_name(small):
    made, _ = snakemake(small, 'config/test.yaml', '--cores', '1', looks_basis(small / 'config/test.yaml'))
    assert made.returncode == 0, made.stdout[-3000:]  # the basis file (not published): the looks are this basis's
    path = small / TEST_RESULTS / 'stages' / 'stage~1.json'
    look = json.loads(path.read_text())
    look['next'] = {**look.get('next', {}), 'lam~0.5': 3}
    path.write_text(json.dumps(look))
    result, _ = snakemake(small, 'config/test.yaml', '--dry-run')
    assert result.returncode != 0
    assert f'{TEST_RESULTS}/stages/stage~1.json names lam~0.5: not a cell or experiment of this design' in \
        result.stdout, result.stdout[-3000:]


def test_a_new_level_runs_only_that_cell_and_adds_it_to_the_tables(small):
    before = read_records(small)
    path = design_file(small, TEST_CONFIG, 'new_level.yaml', sweeps={'algorithm': ['reinforce'], 'lam': [0.95, 0.9]})
    assert runs_in(planned(small, path, 'test design, one new level')) == ['lam~0.9/seed~0', 'lam~0.9/seed~1']
    made = runs_in(ran(small, path, 'test design, one new level, run'))  # seed 2 too where a look asks for it
    assert made[:2] == ['lam~0.9/seed~0', 'lam~0.9/seed~1'] and set(made) <= {f'lam~0.9/seed~{s}' for s in range(3)}
    after = read_records(small)
    old = after.runs['name'] != 'lam~0.9'
    pd.testing.assert_frame_equal(after.runs[old].reset_index(drop=True), before.runs)
    pd.testing.assert_frame_equal(after.summaries[after.summaries['name'] != 'lam~0.9'].reset_index(drop=True),
                                  before.summaries)
    for name, frame in before.tables.items():
        kept = after.tables[name][after.tables[name]['name'] != 'lam~0.9'].reset_index(drop=True)
        pd.testing.assert_frame_equal(kept[frame.columns], frame, check_exact=True)
    assert 'lam~0.9' in set(pd.read_csv(small / TEST_RESULTS / 'tables' / 'cells.csv')['cell'])
    assert planned(small, path, 'test design, one new level, again') == []


def test_a_removed_level_runs_nothing_and_its_claims_are_untested_saying_why(small):
    path = design_file(small, TEST_CONFIG, 'removed_level.yaml', sweeps={'algorithm': ['reinforce']})
    assert not runs_in(planned(small, path, 'test design, one level removed'))
    assert not runs_in(ran(small, path, 'test design, one level removed, run'))
    assert 'lam~0.95' not in set(pd.read_csv(small / TEST_RESULTS / 'tables' / 'cells.csv')['cell'])
    claims = pd.read_csv(small / TEST_RESULTS / 'tables' / 'claims.csv').set_index('id')
    row = claims.loc['heldout-below-train-lam095']
    assert row['verdict'] == 'untested' and 'lam=0.95' in row['note'], row.to_dict()


def test_an_added_claim_reruns_the_looks_and_only_the_runs_its_looks_ask_for(small):
    claims = small / 'analysis' / 'ledger' / 'claims.yaml'
    claims.write_text(claims.read_text() + '''  - id: added-clip-frac
    claim: An added claim that reads the clipped loss's records, which the published looks did not extend.
    source: T4 (8.2)
    kind: about
    about: 0.33
    scale: logit
    test: t
    rationale: a test
    inputs: [{table: T4, row: A=+1, metric: clip_frac}]
''')
    assert not runs_in(planned(small, 'config/test.yaml', 'test design, an added claim'))
    assert runs_in(ran(small, 'config/test.yaml', 'test design, an added claim, run')) == ['clip_gradients/seed~2']
    assert 'added-clip-frac' in set(pd.read_csv(small / TEST_RESULTS / 'tables' / 'claims.csv')['id'])


def test_a_new_numerics_version_runs_the_test_design_again(small):
    version = int(re.search(r'^NUMERICS_VERSION = (\d+)$', (small / 'agentrl' / 'numerics' / '__init__.py').read_text(),
                            flags=re.M).group(1))
    set_numerics(small, version + 1)
    found = runs_in(planned(small, 'config/test.yaml', 'test design, a numerics version bump'))
    assert found == sorted(f'{name}/seed~{seed}' for name in ('algorithm~reinforce', 'baseline', 'lam~0.95',
                                                               'clip_gradients') for seed in (0, 1))


def test_a_staged_design_stops_where_its_open_claims_are_projected_beyond_its_max(small):
    """Stages up to 4 seeds: after the published 3, every open claim of the test design is projected to need more
    than 4 seeds for a verdict (ten seeds all on a claim's side is the least the bet can decide on), so the last look
    names no source and the design runs nothing the records lack."""
    held = {f'{row.name}/seed~{row.seed}' for row in read_records(small).runs.itertuples()}
    path = design_file(small, TEST_CONFIG, 'more_seeds.yaml',
                       seeds={'initial': 2, 'step': 1, 'max': 4, 'policy': 'every source'})
    found = runs_in(ran(small, path, 'test design, seeds up to 4, run'))
    assert not set(found) - held, found
    looks = sorted((small / TEST_RESULTS / 'stages').glob('stage~*.json'))
    last = json.loads(looks[-1].read_text())
    assert last['next'] == {} and last['beyond_max'] and not last['open'], last


def test_every_published_count_of_claims_comes_from_the_ledger_and_the_figure_title_agrees():
    """Each results folder's README.md gives its ledger's counts (claims.count_table of tables/claims.csv), its
    ledger figure's title says the same (claims.headline), and the table adds up. A design whose records are of an
    older numerics version is superseded: its page keeps the row labels of the code that made it."""
    for design in SUBSTRATE_DESIGNS:
        results = REPO / load_design(design)['results_dir']
        ledger = pd.read_csv(results / 'tables' / 'claims.csv', keep_default_na=False)
        if records_version(results) == NUMERICS_VERSION:
            assert to_markdown(count_table(ledger)) in (results / 'README.md').read_text(), results
        svg = (results / 'figures' / 'claims.svg').read_text()  # its text as text (svg.fonttype none)
        assert all(line in svg for line in textwrap.wrap(f'{headline(ledger)} (Chapter 8 on our seeds)', 110)), \
            (results, headline(ledger))
        rows = count_table(ledger).set_index('claims')['count']
        assert rows["the chapter's, all"] == rows['the headline: encoded before their verdict'] + rows[
            'encoded again after a published verdict (counted apart)']


def test_the_readmes_open_with_the_answer_from_the_published_ledger_across_substrates():
    """README.md and results/README.md open with the answer block analysis.pages.substrates writes from
    results/across/substrates.csv: the same sentences, links relative to each page."""
    for readme, relative in ((REPO / 'README.md', 'results'), (REPO / 'results' / 'README.md', '.')):
        text = readme.read_text()
        assert published_answer(REPO / 'results', relative) in text, readme
        assert text.index(ANSWER_START) < 1000, readme  # on the first screen


def test_the_published_ledger_across_substrates_is_that_of_the_published_ledgers(monkeypatch):
    """results/across/substrates.csv is what analysis.pages.substrates makes from every design's published ledger and
    records today."""
    monkeypatch.chdir(REPO)  # the designs' results folders are relative to the repository
    ledgers = read_substrates([str(path) for path in SUBSTRATE_DESIGNS])
    published = pd.read_csv(REPO / 'results' / 'across' / 'substrates.csv', keep_default_na=False)
    pd.testing.assert_frame_equal(published, across(ledgers).fillna(''), check_dtype=False)


@pytest.mark.parametrize('design', SUBSTRATE_DESIGNS, ids=lambda path: path.stem)
def test_every_published_verdict_is_decided_again_from_its_claim_inputs(design):
    """An independent reader's check: each judged claim of a published ledger, decided again from the per-seed values
    it was decided on (tables/claim_inputs.csv) at the ledger's e-BH threshold (tables/family.csv), gets the same
    verdict, seeds and e-values; the threshold is e-BH's on the published e-values."""
    results = REPO / load_design(design)['results_dir']
    ledger = read_ledger(results / 'tables' / 'claims.csv')
    inputs = pd.read_csv(results / 'tables' / 'claim_inputs.csv')
    family = pd.read_csv(results / 'tables' / 'family.csv').iloc[0]
    threshold = float(family['threshold'])
    claims = {c['id']: c for c in load_claims()['claims']}
    with_verdict = ledger[judged(ledger)]
    assert len(with_verdict) >= 50 and with_verdict['verdict'].isin(DECIDED).sum() >= 20
    e_values = np.r_[with_verdict['e'].to_numpy(float), with_verdict['e_against'].to_numpy(float)]
    assert int(family['family']) == int(np.isfinite(e_values).sum())
    assert ebh(e_values, float(family['alpha']))[1] == pytest.approx(threshold, rel=1e-5)  # 6 digits of e per row
    assert int(family['rejections']) == int((e_values >= threshold).sum())
    for row in with_verdict.itertuples():
        again = decide(claims[row.id], claim_samples(inputs, claims[row.id]), threshold, sensitivity=False,
                       power=False)
        assert (again['verdict'], again['n']) == (row.verdict, int(row.n)), row.id
        assert again['e'] == pytest.approx(float(row.e), rel=1e-5, nan_ok=True) and again['e_against'] == \
            pytest.approx(float(row.e_against), rel=1e-5, nan_ok=True), row.id  # claims.csv keeps 6 significant digits


def test_no_published_page_prints_a_factor_above_1000():
    """A factor beyond 1,000 (a ratio of rates near 0 or 1) reads "over 1,000" on every substrate's pages."""
    pages = [path for path in (REPO / 'results').rglob('*.md') if 'records' not in path.parts]
    found = [(path.name, n) for path in pages for n in re.findall(r'factor of ([\d,.]+)', path.read_text())
             if float(n.rstrip('.,').replace(',', '')) > 1000]
    assert pages and not found, found
