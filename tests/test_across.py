"""One claim on several substrates (analysis/pages/substrates.py): direction and size apart, on how many substrates each
holds, and whether it is general, substrate-dependent, fails everywhere or still open."""
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from agentrl.files import with_manifest, write_folder
from analysis.ledger.verdicts import UNTESTED
from analysis.pages import substrates
from analysis.records.records import parquet_bytes
from analysis.pages.substrates import (ANSWER_END, ANSWER_START, Judged, across, advice, answer, class_counts,
                                       effects, figure, made, main, outcome, read_substrates, seed_design)

REPO = Path(__file__).resolve().parents[1]

ROWS = [  # id, part, group, source
    ('a', 'direction', 'chapter', 'T6 (8.3)'),
    ('b', 'size', 'chapter', 'T8 (8.4)'),
    ('b-direction', 'direction', 'chapter', 'T8 (8.4)'),
    ('c', 'direction', 'chapter', '8.5'),
    ('d', 'direction', 'literature', 'literature, 8.2'),
    ('e', 'size', 'finding', 'Exercise 3'),
    ('f', 'size', 'calibration', 'T1 (8.1)'),
]
VERDICTS = {  # per substrate, in ROWS order
    'tinyagent': ['reproduced', 'inside', 'reproduced', 'reversed', 'reproduced', 'finding', 'inside'],
    'larger': ['reproduced', 'outside', 'reproduced', 'short of the claim', 'inconclusive', 'finding', 'inside'],
    'longer': ['reproduced', 'outside', 'reproduced', 'reversed', 'untested', 'finding', 'inside'],
}


def ledgers() -> dict[str, pd.DataFrame]:
    return {name: pd.DataFrame([dict(id=i, part=p, group=g, source=s, verdict=v, claim=f'claim {i}', same_as='')
                                for (i, p, g, s), v in zip(ROWS, verdicts)]) for name, verdicts in VERDICTS.items()}


def judged() -> dict[str, Judged]:
    return {name: Judged(frame, 'done') for name, frame in ledgers().items()}


ADVICE = {'d': 'Do d.'}  # claim d tests the literature's recommendation 'Do d.'


def test_each_claim_is_judged_per_part_and_classified_over_the_substrates():
    table = across(judged(), ADVICE).set_index('id')
    assert list(table.index) == ['a', 'b', 'c', 'd', 'f']  # a finding has no verdict; a size's direction folds in
    assert list(table.loc['b', ['direction: tinyagent', 'size: tinyagent', 'size: larger']]) == [
        'reproduced', 'inside', 'outside']
    assert list(table.loc['c', ['direction: tinyagent', 'direction: larger']]) == ['reversed', 'short of the claim']
    assert table.loc['b', 'claim'] == 'claim b'  # the size claim's wording, not its derived direction's
    assert table.loc['a', 'direction holds on'] == '3 of 3' and table.loc['a', 'direction class'] == 'general'
    assert table.loc['b', 'size holds on'] == '1 of 3' and table.loc['b', 'size class'] == 'substrate-dependent'
    assert table.loc['b', 'direction class'] == 'general'
    assert table.loc['c', 'direction class'] == 'fails everywhere' and table.loc['c', 'direction holds on'] == '0 of 3'
    assert table.loc['d', 'direction class'] == 'open'  # undecided somewhere, failing nowhere
    assert table.loc['a', 'size holds on'] == '' and table.loc['a', 'size class'] == ''  # no size stated
    assert list(table['section']) == ['8.3', '8.4', '8.5', 'literature', 'calibration']
    assert table.loc['f', 'size holds on'] == '3 of 3' and table.loc['f', 'size class'] == ''  # not evidence
    counts = class_counts(table.reset_index()).set_index(['claims', 'part'])
    assert counts.loc[("the chapter's", 'direction')].to_dict() == {
        'general': 2, 'substrate-dependent': 0, 'fails everywhere': 1, 'open': 0}
    assert counts.loc[("the chapter's", 'size')].to_dict() == {
        'general': 0, 'substrate-dependent': 1, 'fails everywhere': 0, 'open': 0}
    assert counts.loc[("the literature's", 'direction')].to_dict() == {
        'general': 0, 'substrate-dependent': 0, 'fails everywhere': 0, 'open': 1}


def test_a_claim_whose_test_on_a_substrate_is_another_claims_takes_its_verdict_there():
    """On larger, claim g's inputs resolve to claim a's runs: its ledger row is untested, naming a in `same_as`, and
    the page judges the one finding once, as a."""
    with_twin = judged()
    for name, frame in ledgers().items():
        twin = dict(id='g', part='direction', group='chapter', source='T6 (8.3)', claim='claim g',
                    verdict=UNTESTED if name == 'larger' else 'inconclusive',
                    same_as='a' if name == 'larger' else '')
        with_twin[name] = Judged(pd.concat([frame, pd.DataFrame([twin])], ignore_index=True), 'done')
    table = across(with_twin, ADVICE).set_index('id')
    assert list(table.loc['g', ['direction: tinyagent', 'direction: larger', 'direction: longer']]) == [
        'inconclusive', 'reproduced', 'inconclusive']


def test_the_figure_draws_claims_against_substrates_with_a_title_and_a_legend_naming_the_verdicts(tmp_path):
    paths = figure(across(judged()), list(VERDICTS), tmp_path / 'substrates')
    assert sorted(p.name for p in paths) == ['substrates.png', 'substrates.svg']
    svg = (tmp_path / 'substrates.svg').read_text()  # its text as text (svg.fonttype none)
    assert 'Each claim on each substrate' in svg
    for words in ('holds (reproduced, inside)', 'fails (reversed, short of the claim, outside)',
                  'open (inconclusive)', 'untested (no ledger yet)'):
        assert words in svg, words
    sizes = {float(size) for size in re.findall(r'font-size: ([0-9.]+)px', svg)}  # an SVG's px is a point
    assert sizes and min(sizes) >= 8


def test_each_verdict_word_lands_in_its_outcome():
    assert [outcome(w) for w in ('reproduced', 'inside', 'reversed', 'short of the claim', 'outside', 'inconclusive',
                                 'untested')] == ['holds', 'holds', 'fails', 'fails', 'fails', 'open', 'untested']
    table = across({name: Judged(frame, 'done') for name, frame in ledgers().items()}).set_index('id')
    assert table.loc['d', 'direction: larger'] == 'inconclusive' and table.loc['d', 'direction class'] == 'open'


def test_the_answer_says_what_holds_fails_and_stays_open_from_the_classes():
    lines = answer(across(judged()), list(VERDICTS))
    assert lines[0].startswith("Of the chapter's 3 statements of a direction") and '**2 hold on all 3 substrates**' in \
        lines[0] and '**1 fails on every substrate**' in lines[0]
    assert lines[2] == ('- [c](../claims/c.svg): "claim c" (reversed on tinyagent and longer; short of the claim on '
                        'larger)')
    sizes = next(line for line in lines if line.startswith('Of its '))
    assert sizes.startswith('Of its 1 printed sizes') and "1 lies inside the chapter's band on tinyagent" in sizes \
        and '1 outside it on another' in sizes and 'Of the other 0, 0 lie outside the band on tinyagent' in sizes
    assert 'reproduce' not in sizes  # a size is inside or outside its band: the direction's word is not its
    assert not any(line.startswith("Of the field's advice") for line in lines)  # no claim names a recommendation
    lines = answer(across(judged(), ADVICE), list(VERDICTS))
    study = lines.index(next(line for line in lines if line.startswith("Of the field's advice")))
    assert '1 recommendation, judged by 1 claims' in lines[study] and '1 stays open' in lines[study]
    assert lines[study + 2] == ('- "Do d." (1 claims): open, holds on 1 of 3 (holds on tinyagent; open on larger; '
                                'untested on longer)')
    assert lines[-1] == 'Every claim on every substrate, with its wording: [across/substrates.md](../across/substrates.md).'
    waiting = pd.Series({'Do d.': 2, 'Do e.': 2})  # one recommendation judged and awaiting, one awaiting only
    lines = answer(across(judged(), ADVICE), list(VERDICTS), waiting=waiting)
    study = next(line for line in lines if line.startswith("Of the field's advice"))
    assert '2 recommendations, judged by 1 claims, 4 more registered and awaiting' in study and \
        '1 awaits the runs of all its claims' in study
    assert '- "Do d." (1 claims, and 2 awaiting their runs): open' in '\n'.join(lines)
    assert '- "Do e." (2 claims, awaiting the runs of their cells)' in lines



def test_the_answer_lists_what_holds_on_some_substrates_and_fails_on_others_and_ends_where_none_fails_everywhere():
    frames = ledgers()
    for name in ('tinyagent', 'longer'):  # c holds there now, and fails on larger only
        frames[name].loc[frames[name]['id'] == 'c', 'verdict'] = 'reproduced'
    lines = answer(across({name: Judged(frame, 'done') for name, frame in frames.items()}), list(VERDICTS))
    assert '1 holds on some and fails on others' in lines[0] and lines[0].endswith(
        '**0 fail on every substrate**.')  # no list announced where none fails everywhere
    assert lines[1:5] == ['', "Holding on some substrates and failing on others, with each substrate's verdict:", '',
                          '- [c](../claims/c.svg): "claim c" (reproduced on tinyagent and longer; short of the claim '
                          'on larger)']
    assert lines[5] == '' and lines[6].startswith('Of its 1 printed sizes')


def test_a_recommendation_holds_where_every_claim_of_it_holds_and_fails_where_one_fails():
    frames = ledgers()
    for name, verdicts in (('tinyagent', ('reproduced', 'reproduced')), ('larger', ('reproduced', 'reversed')),
                           ('longer', ('inconclusive', 'reproduced'))):  # claims a and c on each substrate
        frame = frames[name]
        frame.loc[frame['id'] == 'a', 'verdict'], frame.loc[frame['id'] == 'c', 'verdict'] = verdicts
    table = across({name: Judged(frame, 'done') for name, frame in frames.items()}, {'a': 'Do a.', 'c': 'Do a.'})
    row = advice(table, list(VERDICTS)).set_index('recommendation').loc['Do a.']
    assert row.to_dict() == {'claims': 2, 'tinyagent': 'holds', 'larger': 'fails', 'longer': 'open',
                             'holds on': '1 of 3', 'class': 'substrate-dependent'}
    assert advice(across(judged(), {}), list(VERDICTS)).empty  # no claim names a recommendation

def test_the_effects_figure_draws_each_cell_on_each_substrate(tmp_path):
    def comparisons(shift: float) -> pd.DataFrame:
        return pd.DataFrame([dict(cell=c, contrast='difference', metric=m, diff=d + shift, ci_low=d - 0.1,
                                  ci_high=d + 0.1, n=12, paired='yes')
                             for c, d in (('epochs~8', -0.2), ('lam~0.9', 0.0)) for m in ('pass_heldout', 'pass_train')])
    paths = effects({'tinyagent': comparisons(0.0), 'larger': comparisons(0.05)}, tmp_path / 'effects')
    assert sorted(p.name for p in paths) == ['effects.png', 'effects.svg']
    svg = (tmp_path / 'effects.svg').read_text()
    assert all(word in svg for word in ('epochs~8', 'lam~0.9', 'tinyagent (12 seeds, paired by seed)', 'larger'))
    assert 'Each ablation against the baseline on 2 substrates: held-out pass rate' in svg


def test_a_substrate_without_a_look_is_untested_and_keeps_its_claims_open():
    partial = dict(judged(), longer=Judged(None, 'no ledger yet'))
    table = across(partial).set_index('id')
    assert list(table['direction: longer'].fillna('')) == ['untested'] * 4 + ['']
    assert list(table['size: longer'].fillna('')) == ['', 'untested', '', '', 'untested']  # where a size is stated
    assert table.loc['a', 'direction holds on'] == '2 of 3' and table.loc['a', 'direction class'] == 'open'
    assert table.loc['b', 'size class'] == 'substrate-dependent'  # holds on one, fails on another: decided anyway
    assert table.loc['c', 'direction class'] == 'open'


def design(tmp_path, name: str) -> str:
    """A design of substrate `name` (the default design's, results in tmp_path/name), as config/substrates/ has."""
    path = tmp_path / f'{name}.yaml'
    path.write_text(f'extends: config/config.yaml\nresults_dir: {tmp_path / name}\nbaseline:\n  substrate: {name}\n')
    return str(path)


def records(folder, runs: int, version: int = 4) -> None:
    """A records folder of `runs` runs at numerics `version`, with its manifest (as published; its aggregate.json as
    an aggregation before the stage plan wrote it, with seeds and stage)."""
    frame = pd.DataFrame({'kind': 'train', 'name': 'baseline', 'seed': range(runs), 'numerics_version': version})
    made = json.dumps(dict(stage=None, seeds=None)).encode()
    write_folder(folder / 'records', with_manifest({'runs.parquet': parquet_bytes(frame), 'aggregate.json': made}))


def test_a_designs_seeds_are_named_as_its_plan():
    assert seed_design(dict(seeds=list(range(10)))) == 'seeds 0-9'
    assert seed_design(dict(seeds=dict(initial=12, step=10, max=40))) == 'batches of 10 from 12 up to 40 seeds'
    assert seed_design(dict(seeds=dict(initial=5, max=40, policy='greedy', batch=0.25, budget=1.5))) == (
        'greedy batches of 0.25x from 5 up to 40 seeds, budget 1.5x')


def test_the_verb_reads_each_designs_ledger_and_progress_and_writes_the_table_and_figure(tmp_path):
    frame = ledgers()['tinyagent']
    (tmp_path / 'tinyagent' / 'tables').mkdir(parents=True)
    frame.to_csv(tmp_path / 'tinyagent' / 'tables' / 'claims.csv', index=False)
    pd.DataFrame([dict(cell='epochs~8', contrast='difference', metric='pass_heldout', diff=-0.2, ci_low=-0.3,
                       ci_high=-0.1, n=12, paired='yes')]).to_csv(tmp_path / 'tinyagent' / 'tables' / 'comparisons.csv')
    records(tmp_path / 'tinyagent', 500)
    (tmp_path / 'tinyagent' / 'stages').mkdir()
    for stage in (1, 2, 10):  # the last look by its number, not its name's order
        (tmp_path / 'tinyagent' / 'stages' / f'stage~{stage}.json').write_text(json.dumps(dict(next=dict(baseline=32))))
    records(tmp_path / 'longer', 74, version=3)
    designs = [design(tmp_path, name) for name in ('tinyagent', 'longer', 'larger')]
    staged = Path(designs[0])
    staged.write_text(staged.read_text() + 'seeds: {initial: 12, step: 10, max: 40, policy: every source}\n')
    for fixed_design in map(Path, designs[1:]):  # the default design's seeds are budgeted: these state a fixed design
        fixed_design.write_text(fixed_design.read_text() + f'seeds: {list(range(10))}\n')
    (tmp_path / 'README.md').write_text(f'# Results\n\n{ANSWER_START}\nstale\n{ANSWER_END}\n\n## More\n')
    assert main([*designs, '--out', str(tmp_path / 'out')]) == 0
    readme = (tmp_path / 'README.md').read_text()  # its answer block rewritten, links from its folder
    assert 'stale' not in readme and "Of the chapter's 3 statements" in readme and readme.endswith('\n\n## More\n')
    assert '[across/substrates.md](./across/substrates.md)' in readme  # its results folder is its own
    table = pd.read_csv(tmp_path / 'out' / 'substrates.csv', keep_default_na=False)
    assert list(table['id']) == ['a', 'b', 'c', 'd', 'f'] and list(table['size class']) == ['', 'open', '', '', '']
    assert list(table['direction: larger']) == ['untested'] * 4 + ['']
    markdown = (tmp_path / 'out' / 'substrates.md').read_text()
    assert markdown.startswith('# Claims on 3 substrates (tinyagent, longer, larger)')
    seeds, fixed = 'batches of 10 from 12 up to 40 seeds', 'seeds 0-9'
    assert f'| tinyagent | open: stage 10, 500 runs, numerics version 4 | {seeds} |' in markdown
    assert f'| longer | no ledger yet: its records hold 74 runs, numerics version 3 | {fixed} |' in markdown
    assert f'| larger | not run | {fixed} |' in markdown
    assert 'The substrates ran under different seed designs' in markdown
    assert "| the chapter's | direction | 0 | 0 | 0 | 3 |" in markdown
    # direction: reproduced, reversed, short, inconclusive, untested; size: inside, outside, ...
    assert '| tinyagent | 3 | 1 | 0 | 0 | 0 | 1 | 0 | 0 | 0 |' in markdown
    assert '| larger | 0 | 0 | 0 | 0 | 4 | 0 | 0 | 0 | 1 |' in markdown
    assert '## Calibration targets' in markdown and '| f | calibration | claim f |' in markdown
    assert (tmp_path / 'out' / 'substrates.png').stat().st_size > 1000
    assert 'epochs~8' in (tmp_path / 'out' / 'effects.svg').read_text()  # from the design that published comparisons


def test_a_designs_runs_name_their_numerics_versions():
    assert made([{'numerics_version': 4}] * 2) == '2 runs, numerics version 4'
    assert made([{'numerics_version': v} for v in (4, 3, 4)]) == '3 runs, numerics versions 3 and 4'


def test_two_designs_of_one_substrate_or_no_ledger_anywhere_are_named(tmp_path, capsys):
    with pytest.raises(ValueError, match="substrate 'longer' is already the substrate of another design given"):
        read_substrates([design(tmp_path, 'longer'), design(tmp_path, 'longer')])
    with pytest.raises(SystemExit):
        main([design(tmp_path, 'larger'), '--out', str(tmp_path / 'out')])
    assert "no ledger on any substrate (larger): nothing to line up" in capsys.readouterr().err
    assert not (tmp_path / 'out').exists()


def test_given_no_design_the_verb_reads_the_published_ones(tmp_path, capsys, monkeypatch):
    """The published designs: the default one and one per other substrate (config/substrates/), as the README runs
    them."""
    others = sorted(path.name for path in (REPO / 'config' / 'substrates').glob('*.yaml'))
    published = ['config/config.yaml', *(f'config/substrates/{name}' for name in others)]
    assert list(substrates.PUBLISHED_DESIGNS) == published
    monkeypatch.setattr(substrates, 'PUBLISHED_DESIGNS', (design(tmp_path, 'larger'),))
    with pytest.raises(SystemExit):
        main(['--out', str(tmp_path / 'out')])
    assert 'no ledger on any substrate (larger): nothing to line up' in capsys.readouterr().err
