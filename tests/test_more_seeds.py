"""More seeds join the ledger at its next aggregation: seeds 10-14 of the baseline cell of the test design
(config/test.yaml, run to its end by the workflow: the `parallel` fixture), made as the README's more-seeds row makes
them (`python -m workflow.seeds`, its targets run by Snakemake), then the design's own command again: its aggregation
reads every seed its run directories hold. The claims that read only that cell gain the five seeds and new evidence;
the others stay as they were; the promise is the same text."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
from test_workflow import TEST_CONFIG, TEST_RESULTS, copy_workdir, environment, snakemake, succeeded

from analysis.ledger.chapter import Context
from analysis.ledger.claims import feeders, judged, load_claims, read_ledger
from analysis.records.load import load_runs

CELL = 'baseline'
ADDED = list(range(10, 15))


def promise(claims_md: Path) -> str:
    """claims.md's promise: its paragraph that starts '**The promise.**'."""
    return next(p for p in claims_md.read_text().split('\n\n') if p.startswith('**The promise.**'))


def evidence(folder: Path) -> pd.DataFrame:
    """The ledger's statistical claims with a test: n, e and e_against by id."""
    frame = read_ledger(folder / 'tables' / 'claims.csv').set_index('id')
    return frame.loc[judged(frame), ['n', 'e', 'e_against']]


def test_seeds_10_to_14_of_one_cell_change_its_claims_evidence_at_the_next_aggregation(parallel, tmp_path):
    work = copy_workdir(parallel, tmp_path / 'work')
    results = work / TEST_RESULTS
    asked = subprocess.run([sys.executable, '-m', 'workflow.seeds', CELL, str(ADDED[-1] + 1), '--configfile',
                            str(TEST_CONFIG)], cwd=work, env=environment(), check=True, stdout=subprocess.PIPE,
                           text=True).stdout.split()
    targets = [t for t in asked if int(t.split('seed~')[1].split('/')[0]) in ADDED]
    assert targets == [f'{TEST_RESULTS}/runs/{CELL}/seed~{seed}/run.json' for seed in ADDED]
    before, said = evidence(results), promise(results / 'claims.md')  # the design's ledger on its own seeds
    succeeded(snakemake(work, '--cores', 2, *targets))
    succeeded(snakemake(work, '--cores', 2))  # the design's command: its aggregation reads the new seeds too
    after = evidence(results)
    files = sorted(str(p) for p in results.glob('*/*/seed~*/run.json'))
    assert list(after.index) == list(before.index)
    ctx = Context.build(load_runs(*files), CELL)
    claims = {c['id']: c for c in load_claims(chapter=ctx.chapter)['claims']}
    reads = {claim_id: feeders(ctx, [claims[claim_id]]) for claim_id in before.index}
    only = [claim_id for claim_id, sources in reads.items() if sources == [CELL]]
    others = [claim_id for claim_id, sources in reads.items() if CELL not in sources]
    assert only and others
    assert (after.loc[only, 'n'] == before.loc[only, 'n'] + len(ADDED)).all()
    changed = (after.loc[only, 'e'] != before.loc[only, 'e']) | (after.loc[only, 'e_against'] != before.loc[only,
                                                                                                         'e_against'])
    assert changed.all(), after.loc[only].join(before.loc[only], rsuffix='_before')
    pd.testing.assert_frame_equal(after.loc[others], before.loc[others])
    assert promise(results / 'claims.md') == said
    runs = pd.read_csv(results / 'tables' / 'runs.csv')
    assert runs.set_index('name').loc[CELL, 'seed_list'] == '0 1 2 10 11 12 13 14'
