"""Two publications of a ledger side by side (analysis/pages/versions.py): each verdict's change and which of its
numbers moved."""
from pathlib import Path

import pandas as pd
import pytest

from analysis.pages.versions import check_revision, compare, publish

REPO = Path(__file__).resolve().parents[1]
COLUMNS = ('id', 'verdict', 'n', 'estimate', 'ci_low', 'ci_high')


def ledger(*rows) -> pd.DataFrame:
    return pd.DataFrame([dict(zip(COLUMNS, row)) for row in rows])


THEN = ledger(('same', 'reproduced', 20, 1.5, 1.2, 1.8),
              ('moved', 'reproduced', 20, 1.5, 1.2, 1.8),
              ('fewer', 'reproduced', 30, 1.3, 1.1, 1.5),
              ('cutoff', 'inconclusive', 20, 1.3, 0.9, 1.7),
              ('more', 'inconclusive', 10, 1.3, 0.9, 1.7),
              ('flip', 'inside', 10, 0.0, -0.1, 0.1),
              ('check', 'pass', 10, float('nan'), float('nan'), float('nan')),
              ('gone', 'reversed', 10, -1.0, -2.0, -0.5))
NOW = ledger(('added', 'inconclusive', 10, 0.2, -0.5, 0.9),
             ('same', 'reproduced', 10, 1.4, 1.0, 1.9),
             ('moved', 'short of the claim', 10, 0.9, 0.8, 1.0),
             ('fewer', 'inconclusive', 10, 1.35, 0.95, 1.8),
             ('cutoff', 'reproduced', 10, 1.3, 1.05, 1.6),
             ('more', 'reproduced', 20, 1.3, 1.1, 1.5),
             ('flip', 'outside', 10, 0.05, -0.2, 0.3),
             ('check', 'fail', 10, float('nan'), float('nan'), float('nan')))


def test_each_change_is_named_with_the_number_that_moved():
    rows = compare(THEN, NOW).set_index('id')
    assert list(rows.index) == ['added', 'same', 'moved', 'fewer', 'cutoff', 'more', 'flip', 'check', 'gone']
    assert rows['change'].to_dict() == {'added': 'new', 'same': 'same', 'moved': 'flipped', 'fewer': 'lost',
                                        'cutoff': 'gained', 'more': 'gained', 'flip': 'flipped', 'check': 'flipped',
                                        'gone': 'withdrawn'}
    # moved: 0.9 lies outside 1.2-1.8; fewer: each estimate inside the other's interval, lost on 30 -> 10 seeds;
    # cutoff: agreeing estimates, gained on fewer seeds (20 -> 10): the level, not the seeds; more: gained on 10 -> 20;
    # flip: agreeing estimates on as many seeds; a check is exact on its runs
    assert rows['why'].to_dict() == {'added': '', 'same': '', 'moved': 'the estimate moved', 'fewer': 'fewer seeds',
                                     'cutoff': 'the threshold moved', 'more': 'more seeds', 'flip': 'the threshold moved',
                                     'check': 'the runs changed', 'gone': ''}
    assert rows.loc['fewer', ['n_then', 'n_now']].tolist() == [30, 10]


def test_a_claim_revised_after_its_verdict_is_named_revised_whatever_its_numbers():
    """kl-climbs-across-16-training-epochs: the same seeds and estimate, reproduced then, short of the claim now under
    a rule that changed after the earlier ledger (its `revised` field is new): revised, not the threshold."""
    then = ledger(('a', 'reproduced', 10, 1.09, 1.05, 1.16)).assign(revised=float('nan'))
    now = ledger(('a', 'short of the claim', 10, 1.09, 1.05, 1.16)).assign(revised='after the ledgers of 2026-12-06')
    assert compare(then, now)['why'].tolist() == ['revised']
    assert compare(then, now.assign(revised=float('nan')))['why'].tolist() == ['the threshold moved']


def test_a_decided_claim_now_judged_as_another_claim_is_named_so_not_fewer_seeds():
    """At a scale that maps two of the chapter's rates to one cell, the later claim is untested, its `same_as` naming
    the claim whose test it is: 0 seeds now, but not lost for want of seeds."""
    then = ledger(('a', 'reproduced', 10, 1.2, 1.1, 1.3), ('b', 'reproduced', 10, 1.2, 1.1, 1.3))
    now = ledger(('a', 'reproduced', 20, 1.2, 1.1, 1.3),
                 ('b', 'untested', 0, float('nan'), float('nan'), float('nan'))).assign(same_as=['', 'a'])
    assert compare(then, now)['why'].tolist() == ['', 'judged as another claim']
    assert compare(then, now.assign(same_as=''))['why'].tolist() == ['', 'fewer seeds']


def test_agreeing_estimates_judged_under_other_rules_changed_by_the_rules():
    """The same seeds and estimates, a verdict lost where the rules deciding every claim changed between the two
    ledgers (their `rules` dates differ): the rules changed; the same dates: the threshold moved."""
    then = ledger(('a', 'reproduced', 10, 1.2, 1.1, 1.3)).assign(rules='2026-12-06 22:30')
    now = ledger(('a', 'inconclusive', 10, 1.2, 0.9, 1.5)).assign(rules='2026-12-07 00:33')
    assert compare(then, now)['why'].tolist() == ['the rules changed']
    assert compare(then, now.assign(rules='2026-12-06 22:30'))['why'].tolist() == ['the threshold moved']


def test_an_estimate_outside_only_the_newer_interval_has_moved():
    then = ledger(('a', 'inconclusive', 10, 1.0, 0.0, 3.0))
    now = ledger(('a', 'reproduced', 10, 2.5, 2.2, 2.8))  # 2.5 is inside 0-3, but 1.0 is outside 2.2-2.8
    assert compare(then, now)['why'].tolist() == ['the estimate moved']


def test_a_moved_estimate_of_runs_at_another_scale_or_numerics_version_is_named_by_it():
    """The estimate moved: where the two ledgers' runs are of other numerics versions, the numerics changed; else at
    other learning-rate scales, the scale changed; agreeing estimates on more seeds stay more seeds."""
    then = ledger(('a', 'inconclusive', 10, 1.0, 0.9, 1.1), ('b', 'inconclusive', 10, 1.3, 0.9, 1.7))
    now = ledger(('a', 'reproduced', 20, 2.5, 2.2, 2.8), ('b', 'reproduced', 20, 1.3, 1.1, 1.5))
    assert compare(then, now)['why'].tolist() == ['the estimate moved', 'more seeds']
    assert compare(then, now, scale=True)['why'].tolist() == ['the scale changed', 'more seeds']
    assert compare(then, now, numerics=True, scale=True)['why'].tolist() == ['the numerics changed', 'more seeds']


def test_the_pages_list_only_the_changed_claims(tmp_path):
    table = compare(THEN, NOW).assign(substrate='tinyagent')
    counts = pd.DataFrame([{'substrate': 'tinyagent', 'numerics then': '4', 'numerics now': '5'}])
    csv, markdown = publish(table, counts, tmp_path)
    assert len(pd.read_csv(csv)) == 9
    text = markdown.read_text()
    assert '| tinyagent | moved | reproduced | short of the claim | flipped | the estimate moved | 20 | 10 |' in text
    assert '| tinyagent | same |' not in text


def test_an_unknown_revision_is_one_clear_error(monkeypatch):
    monkeypatch.chdir(REPO)
    if not (REPO / '.git').exists():
        pytest.skip('not a git checkout: the revision cannot be read')
    with pytest.raises(ValueError, match="revision 'no-such-revision': not a commit"):
        check_revision('no-such-revision')
