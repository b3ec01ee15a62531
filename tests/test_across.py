"""One claim on several substrates (analysis/substrates.py): direction and size apart, on how many substrates each
holds, and whether it is general, substrate-dependent, fails everywhere or still open."""
import pandas as pd

from analysis.substrates import across, class_counts, figure

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
