"""One claim on several substrates (analysis/substrates.py): direction and size apart, on how many substrates each
holds, and whether it is general, substrate-dependent, fails everywhere or still open."""
import pandas as pd
import pytest

from analysis.substrates import across, class_counts, figure, main, read_ledgers

ROWS = [  # id, part, group, source
    ('a', 'direction', 'chapter', 'T6 (8.3)'),
    ('b', 'size', 'chapter', 'T8 (8.4)'),
    ('b-direction', 'direction', 'chapter', 'T8 (8.4)'),
    ('c', 'direction', 'chapter', '8.5'),
    ('d', 'direction', 'literature', 'literature, 8.2'),
    ('e', 'size', 'finding', 'Exercise 3'),
]
VERDICTS = {  # per substrate, in ROWS order
    'tinyagent': ['reproduced', 'reproduced', 'reproduced', 'contradicted', 'reproduced', 'finding'],
    'larger': ['reproduced', 'contradicted', 'reproduced', 'contradicted', 'inconclusive', 'finding'],
    'longer': ['reproduced', 'contradicted', 'reproduced', 'contradicted', 'untested', 'finding'],
}


def ledgers() -> dict[str, pd.DataFrame]:
    return {name: pd.DataFrame([dict(id=i, part=p, group=g, source=s, verdict=v)
                                for (i, p, g, s), v in zip(ROWS, verdicts)]) for name, verdicts in VERDICTS.items()}


def test_each_claim_is_judged_per_part_and_classified_over_the_substrates():
    table = across(ledgers()).set_index('id')
    assert list(table.index) == ['a', 'b', 'c', 'd']  # a finding has no verdict; a size claim's direction folds in
    assert list(table.loc['b', ['direction: tinyagent', 'size: tinyagent', 'size: larger']]) == ['holds', 'holds',
                                                                                                'fails']
    assert table.loc['a', 'direction holds on'] == '3 of 3' and table.loc['a', 'direction class'] == 'general'
    assert table.loc['b', 'size holds on'] == '1 of 3' and table.loc['b', 'size class'] == 'substrate-dependent'
    assert table.loc['b', 'direction class'] == 'general'
    assert table.loc['c', 'direction class'] == 'fails everywhere' and table.loc['c', 'direction holds on'] == '0 of 3'
    assert table.loc['d', 'direction class'] == 'open'  # undecided somewhere, failing nowhere
    assert table.loc['a', 'size holds on'] == '' and table.loc['a', 'size class'] == ''  # no size stated
    assert list(table['section']) == ['8.3', '8.4', '8.5', 'literature']
    counts = class_counts(table.reset_index())
    assert counts.loc['direction'].to_dict() == {'general': 2, 'substrate-dependent': 0, 'fails everywhere': 1,
                                                 'open': 1}
    assert counts.loc['size'].to_dict() == {'general': 0, 'substrate-dependent': 1, 'fails everywhere': 0, 'open': 0}


def test_the_figure_draws_claims_against_substrates(tmp_path):
    paths = figure(across(ledgers()), list(VERDICTS), tmp_path / 'substrates')
    assert sorted(p.name for p in paths) == ['substrates.png', 'substrates.svg']
    assert paths[0].stat().st_size > 1000


def test_the_verb_reads_each_substrates_ledger_and_writes_the_table_and_figure(tmp_path):
    for name, frame in ledgers().items():
        (tmp_path / name / 'tables').mkdir(parents=True)
        frame.to_csv(tmp_path / name / 'tables' / 'claims.csv', index=False)
    specs = [f'{name}={tmp_path / name}' for name in VERDICTS]
    assert main([*specs, '--out', str(tmp_path / 'out')]) == 0
    table = pd.read_csv(tmp_path / 'out' / 'tables' / 'substrates.csv', keep_default_na=False)
    assert list(table['id']) == ['a', 'b', 'c', 'd'] and list(table['size class']) == ['', 'substrate-dependent', '', '']
    markdown = (tmp_path / 'out' / 'tables' / 'substrates.md').read_text()
    assert markdown.startswith('Claims on 3 substrates (tinyagent, larger, longer)')
    assert '| direction | 2 | 0 | 1 | 1 |' in markdown
    assert (tmp_path / 'out' / 'figures' / 'substrates.png').stat().st_size > 1000


def test_a_substrate_without_a_ledger_or_a_malformed_spec_is_named():
    with pytest.raises(ValueError, match="'larger': expected NAME=DIR"):
        read_ledgers(['larger'])
    with pytest.raises(ValueError, match='nowhere/tables/claims.csv does not exist: larger has no published ledger'):
        read_ledgers(['larger=nowhere'])
