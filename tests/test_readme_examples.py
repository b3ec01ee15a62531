"""The README's "How to" examples, run as the README writes them (each command read from its table), in a copy of
this checkout as a user's clone has it, on the published records: a command that would train or run jobs runs as a
dry run; one that takes minutes, or is an edit rather than a command, is skipped, saying why. A changed row whose
command no longer works fails here, and so does a row this module does not know."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from checkout import copy_checkout
from test_workflow import REPO, environment, planned

from analysis.pages.versions import scale_of
from workflow.design import load_design

README = REPO / 'README.md'
COST_TABLE = (r'CPU s of jobs by the cost table results/costs\.csv \(CPU seconds of one job, measured '
              r'(?:\S+; )*\S+ on .+, numerics version \d+\)')
RUN_HERE = {'run the full ablation (the default design)', 'run it on another substrate', 'rerun one cell',
            'give one cell more seeds', 'add an ablation axis', "see each design's stages and cells",
            'put the three ledgers side by side', 'set each ledger beside an earlier publication',
            "see how the ledger's bet was chosen", 'run one cell by hand', 'publish a design stopped half-way',
            'see what a budgeted design spent'}
SKIPPED = {  # row -> why it is not run here
    'add a level or a cell': "an edit of the design, then the full ablation's command: tests/test_workflow.py dry-runs "
                             'a design with a level added',
    'add a substrate': 'an edit of agentrl/world/substrates.py and a design: tests/test_workflow.py adds a fourth',
    'add or change a claim': "an edit of claims.yaml, then the design's command, whose looks take minutes",
    'run a design under a budget': "an edit of the design and a cost table, then the design's command: "
                                   'tests/test_workflow.py runs a budgeted test design batch after batch',
    "republish a substrate's tables": 'aggregates every published run: minutes',
    "price a design's runs on this machine": "times every cell's and experiment's jobs: an hour",
    "check the ledger's promise by simulation": 'simulates 200,000 claims a source: minutes',
    'check published runs rerun bit for bit here': 'trains four runs from nothing: minutes',
    'measure speed': 'a chapter-default run, one thread: minutes on a loaded machine (tests/test_bench.py checks its '
                     'accounting)',
    'run on SLURM': 'a link to the profile: tests/test_slurm.py runs it on a one-node cluster',
}


def how_to() -> dict[str, list[str]]:
    """The README's "How to" table: each row's task -> the code spans of its `run` cell, in order."""
    section = README.read_text().split('\n## How to\n', 1)[1].split('\n## ', 1)[0]
    rows = re.findall(r'^\| (.+?) \| (.+) \|$', section, flags=re.M)
    return {task: re.findall(r'`([^`]+)`', run) for task, run in rows if task != 'to'}


def commands(task: str) -> list[str]:
    """The commands of a row: its code spans that are command lines."""
    return [span for span in how_to()[task] if span.startswith(('python -m ', 'snakemake '))]


def dry(command: str) -> str:
    """A command line with every snakemake in it made a dry run."""
    return command.replace('snakemake ', 'snakemake --dry-run ')


@pytest.fixture(scope='module')
def clone(tmp_path_factory) -> Path:
    """A user's clone of this checkout (its published records, no run made)."""
    return copy_checkout(tmp_path_factory.mktemp('readme') / 'clone')


def run(command: str, cwd: Path, status: int = 0) -> str:
    """A README command line, in bash from cwd, its modules the clone's: stdout and stderr together; exit status as
    given."""
    done = subprocess.run(['bash', '-c', command], cwd=cwd, env=dict(environment(), PYTHONPATH=str(cwd)),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    assert done.returncode == status, f'{command}\n{done.stdout[-4000:]}'
    return done.stdout


def test_every_row_is_run_here_or_skipped_saying_why():
    assert set(how_to()) == RUN_HERE | set(SKIPPED)


@pytest.mark.parametrize('task', sorted(SKIPPED))
def test_a_row_not_run_here(task):
    pytest.skip(f'README "{task}": {SKIPPED[task]}')


def test_row_run_the_full_ablation_the_default_design(clone):
    """On the published records the default design plans no run (its dry run says so)."""
    command, = commands('run the full ablation (the default design)')
    assert planned(run(dry(command), clone))[-1] == 'no run planned'


def test_row_run_it_on_another_substrate(clone):
    """A substrate whose records were made at another learning-rate scale than its design's plans its runs again (the
    rerun at the tuned scale); one whose records are its design's plans none."""
    default, = commands('run the full ablation (the default design)')
    option, other = how_to()['run it on another substrate'][:2]
    for design in (option, option.replace(Path(option.split()[-1]).name, other)):
        found = planned(run(dry(f'{default} {design}'), clone))[-1]
        config = load_design(clone / design.split()[-1])
        records = (clone / config['results_dir'] / 'records' / 'runs.parquet').read_bytes()
        if float(scale_of(records)) == config.get('lr_scale', 1.0):
            assert found == 'no run planned', design
        else:
            assert re.match(r'\d+ runs and \d+ warmed critics planned', found), (design, found)


def test_row_rerun_one_cell(clone):
    command, = commands('rerun one cell')
    assert re.fullmatch(rf'10 runs and 10 warmed critics planned: about [\d,]+ {COST_TABLE}',
                        planned(run(dry(command), clone))[-1])


def test_row_give_one_cell_more_seeds(clone):
    command, = commands('give one cell more seeds')
    out = run(dry(command), clone)
    held = published_seeds(clone, 'baseline')
    more = [f'results/runs/baseline/seed~{seed}/run.json' for seed in range(60) if seed not in held]
    assert held and (clone / 'more.txt').read_text().split() == more
    assert re.fullmatch(rf'{len(more)} runs and {len(more)} warmed critics planned: about [\d,]+ {COST_TABLE}',
                        planned(out)[-1])


def published_seeds(clone: Path, name: str) -> set[int]:
    """The seeds of one run name the clone's published records hold."""
    runs = pd.read_parquet(clone / 'results' / 'records' / 'runs.parquet')
    return set(runs.loc[runs['name'] == name, 'seed'].astype(int))


def test_row_see_what_a_budgeted_design_spent(clone):
    """Each look of the published design, then the design's row: the claims its ledger decided (every seed read) are
    the README's."""
    command, = commands('see what a budgeted design spent')
    out = run(command, clone)
    looks = re.findall(r'^\| (\d+) \| ', out, flags=re.M)
    assert looks == [str(k) for k in range(1, len(looks) + 1)] and len(looks) >= 2
    header = re.search(r'^\| substrate \|.*$', out, flags=re.M).group().split('|')[1:-1]
    row = re.search(r'^\| tinyagent \|.*$', out, flags=re.M).group().split('|')[1:-1]
    decided = dict(zip((h.strip() for h in header), (v.strip() for v in row)))['decided (every seed)']
    readme = ' '.join(README.read_text().split())
    assert f'{decided.replace(" of ", " of its ")} statistical claims are decided' in readme


def test_row_add_an_ablation_axis(clone):
    """Its one command: the config docs, written again."""
    command, = commands('add an ablation axis')
    (clone / 'config' / 'README.md').unlink()
    run(command, clone)
    assert (clone / 'config' / 'README.md').read_text().startswith('# Configuring the workflow')


def test_row_see_each_designs_stages_and_cells(clone):
    """Each design's stages and cells; the test design's are those the README's first command names."""
    stages, cells, option = how_to()["see each design's stages and cells"]
    for design in ('', f' {option} config/test.yaml', f' {option} config/substrates/larger.yaml'):
        assert run(f'{stages}{design}', clone).startswith(('fixed design: ', 'staged design: ', 'budgeted design ('))
    names = run(f'{stages.replace("stages", cells)} {option} config/test.yaml', clone).split()
    looks = re.search(r"at each stage's look \[(\d+), (\d+)\]", run(f'{stages} {option} config/test.yaml', clone))
    said = re.search(r'(\w+) cells and (\w+) experiments? at (\d+), then (\d+) seeds', README.read_text())
    words = {'one': 1, 'two': 2, 'three': 3, 'four': 4, 'five': 5, 'six': 6}
    experiments = load_design(clone / 'config' / 'test.yaml')['experiments']
    assert (words[said[1]], words[said[2]], said[3], said[4]) == (len(names), len(experiments), looks[1], looks[2])


def test_row_put_the_three_ledgers_side_by_side(clone):
    command, = commands('put the three ledgers side by side')
    run(command, clone)
    assert (clone / 'results' / 'across' / 'substrates.md').is_file()


@pytest.mark.skipif(shutil.which('git') is None or not (REPO / '.git').exists(), reason='needs git and this checkout')
def test_row_set_each_ledger_beside_an_earlier_publication(tmp_path):
    """Against this checkout's HEAD (the revision it names), into a folder of its own: git reads the revision here."""
    command, = commands('set each ledger beside an earlier publication')
    run(f'{command.replace("REVISION", "HEAD")} --out {tmp_path}', REPO)
    assert (tmp_path / 'versions.md').is_file()


def test_row_see_how_the_ledgers_bet_was_chosen(clone):
    """Every candidate's criterion, then the one chosen."""
    command, = commands("see how the ledger's bet was chosen")
    assert re.search(r'^chosen: .+ \(criterion [\d.]+ nats\)$', run(command, clone), flags=re.M)


def test_row_run_one_cell_by_hand(clone):
    """Its first command, the cell's config file; the training run it feeds takes a minute, and is not run."""
    command, = commands('run one cell by hand')
    config, train = command.split(' && ')
    run(config, clone)
    assert json.loads((clone / 'c.json').read_text())['lam'] == 0.95 and train.startswith('python -m agentrl train ')


def test_row_publish_a_design_stopped_half_way(clone):
    """In a clone no run is made: the records target stops in one line saying so."""
    unlock, publish = commands('publish a design stopped half-way')
    run(unlock, clone)
    assert run(publish, clone, status=1).splitlines()[-1] == (
        'config/config.yaml: no run of the design is made yet under results: nothing to add to its records')
