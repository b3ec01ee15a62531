"""The ledger as a picture: every claim a row in its verdict's colour, grouped by the chapter's sections in order, each
row on the claim's own tolerance; and one figure per claim with its seeds and its looks."""
import math

import matplotlib.colors as mcolors
import numpy as np
import pandas as pd
import pytest
from test_analysis import tree  # noqa: F401 (the synthetic run directories, a fixture)

from analysis.ledger.chapter import Context, load_chapter
from analysis.ledger.claims import group, headline, load_claims, samples
from analysis.pages.figures import style
from analysis.pages.ledger_figure import COLORS, blocks, chapter_value, claim_figure, ledger_figure, placer, section
from analysis.records.load import load_runs
from analysis.ledger.sequential import sequential_ledger
from analysis.ledger.verdicts import VERDICTS
from workflow.plan import seed_plan

CHAPTER = load_chapter()


@pytest.fixture(scope='module')
def ledger(tree):  # noqa: F811
    """The synthetic runs' ledger over two looks (3 and 5 seeds), with each look's rows."""
    ctx = Context.build(load_runs(tree / 'runs', tree / 'experiments'))
    history = []
    frame = sequential_ledger(ctx, seed_plan({'seeds': dict(initial=3, step=2, max=5)}), history=history)
    return ctx, frame, pd.concat(history, ignore_index=True)


def drawn(fig) -> dict[str, str]:
    """claim id -> the colour of its marker (the artists the figure tags with the claim's id)."""
    return {line.get_gid().removeprefix('claim:'): mcolors.to_hex(line.get_markerfacecolor())
            for ax in fig.axes for line in ax.get_lines() if (line.get_gid() or '').startswith('claim:')}


def test_every_claim_has_a_row_in_its_verdicts_colour(ledger):
    ctx, frame, _ = ledger
    with style():
        fig = ledger_figure(frame, load_claims(), CHAPTER)
    colours = drawn(fig)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert sorted(labels) == sorted(frame['id']) and len(labels) == len(set(labels))
    statistical = frame[frame['group'] != 'check']
    estimated = statistical[statistical['estimate'].notna()]
    for row in estimated.itertuples():
        assert colours[row.id] == COLORS[row.verdict], (row.id, row.verdict)
    for row in frame[frame['group'] == 'check'].itertuples():
        assert colours[row.id] == COLORS[row.verdict], (row.id, row.verdict)
    assert len(set(estimated['verdict'])) >= 2  # the colours are told apart, not one colour for all
    links = {t.get_text(): t.get_url() for t in fig.axes[0].get_yticklabels()}
    assert all(links[i] == f'../claims/{i}.svg' for i in estimated['id'])  # an id opens the claim's own figure
    assert all(links[i] is None for i in frame.loc[frame['group'] == 'check', 'id'])
    chapter = frame[frame['group'] == 'chapter']
    assert fig.get_suptitle().replace('\n', ' ').startswith(headline(frame))  # the counts first, as the table's


def test_rows_come_by_section_in_the_chapters_order_and_the_rest_apart(ledger):
    _, frame, _ = ledger
    titles = [title for title, _ in blocks(frame, CHAPTER)]
    order = [t for t in [f'{k} {v}' if k != v else v for k, v in CHAPTER['sections'].items()] if t in titles]
    assert titles[:len(order)] == order and titles[0].startswith('8.1')
    assert titles[-1] == 'Deterministic checks' and any(t.startswith('Calibration') for t in titles)
    chapter = frame[frame['group'] == 'chapter']
    assert sum(len(rows) for title, rows in blocks(frame, CHAPTER) if title in order) == len(chapter)


def test_a_claims_section_is_the_first_the_source_names():
    assert section('T8, Figure 8.3 (8.5)') == '8.5'  # a figure's number is not a section
    assert section('Summary; 8.6 (too many epochs)') == '8.6'
    assert section('Exercise 7; Summary') == 'Exercises' and section('8.4, Summary') == '8.4'
    assert section('Figure 8.1 (right)') == '8.1' and section(8.1) == '8.1'  # YAML reads a bare 8.1 as a number
    with pytest.raises(ValueError, match='names no section'):
        section('a blog post')
    chapter = [c for c in load_claims()['claims'] if group(c) == 'chapter']
    assert {section(c['source']) for c in chapter} <= set(CHAPTER['sections'])


def test_every_row_reads_the_same_way():
    about = pd.Series(dict(kind='about', scale='log', band_low=20.0, band_high=31.25, effect=math.nan))
    place = placer(about)
    assert place(20.0) == pytest.approx(-1) and place(31.25) == pytest.approx(1) and place(25.0) == pytest.approx(0)
    less = placer(pd.Series(dict(kind='less', scale='raw', effect=0.03)))
    assert less(0.0) == 0 and less(-0.03) == pytest.approx(1) and less(0.06) == pytest.approx(-2)  # claimed: right
    ratio = placer(pd.Series(dict(kind='increasing', scale='log', effect=1.25)))
    assert ratio(1.0) == 0 and ratio(1.25) == pytest.approx(1) and ratio(1 / 1.25) == pytest.approx(-1)


def test_the_chapters_value_is_the_claims_quantity_on_its_printed_numbers():
    claims = {c['id']: c for c in load_claims()['claims']}
    assert chapter_value(claims['ess-three-updates']) == pytest.approx(0.343)  # T1 k=3, as printed
    assert chapter_value(claims['kl-epoch4-21x']) > 1  # a ratio of two printed values
    weakest = claims['logw-spread-grows-with-k']  # sd log w 0.80, 2.12, 3.46, 17.05: the weakest step 3.46 / 2.12
    assert chapter_value(weakest) == pytest.approx(3.46 / 2.12)
    assert math.isnan(chapter_value(claims['too-many-epochs-hurt']))  # trainer cells: the chapter printed none


def test_a_claims_figure_shows_its_seeds_and_every_look(ledger):
    ctx, frame, looks = ledger
    claim = next(c for c in load_claims()['claims'] if c['id'] == 'ess-three-updates')
    row = frame.set_index('id', drop=False).loc[claim['id']]
    mine = looks[looks['id'] == claim['id']]
    with style():
        fig = claim_figure(claim, row, samples(claim, ctx), mine)
    left, right = fig.axes
    seeds = int(mine.loc[mine['stage'] == row['stage'], 'seeds'].iloc[0])
    assert len(left.collections[0].get_offsets()) == seeds  # one point per seed the decision read
    points = [line for line in right.get_lines() if line.get_marker() == 'o']
    assert [p.get_xdata()[0] for p in points] == mine['seeds'].tolist()  # one estimate per look
    assert [mcolors.to_hex(p.get_color()) for p in points] == [COLORS[v] for v in mine['verdict']]
    assert np.isclose([line.get_ydata()[0] for line in right.get_lines() if line.get_marker() == 'x'], 0.343).all()


def test_the_ledger_reads_on_two_linear_axes_and_its_legend_names_the_verdict_words(ledger):
    _, frame, _ = ledger
    estimated = frame.index[(frame['group'] != 'check') & frame['estimate'].notna()]
    varied = frame.copy()  # every kind of verdict, drawn
    varied.loc[estimated[:3], 'verdict'] = ['short of the claim', 'outside', 'reversed']
    for data in (frame, varied):
        words = set(data['verdict'])
        with style():
            fig = ledger_figure(data, load_claims(), CHAPTER)
        assert [ax.get_xscale() for ax in fig.axes] == ['linear', 'linear']  # direction, size: plain numbers
        assert 'smallest effect' in fig.axes[0].get_xlabel() and 'band' in fig.axes[1].get_xlabel()
        legend = ' / '.join(t.get_text() for t in fig.legends[0].get_texts())
        assert all(word in legend.split(' / ') for word in words), legend
        colours = drawn(fig)
        assert all(colours[row.id] == COLORS[row.verdict] for row in data.loc[estimated].itertuples())
    assert {*VERDICTS, 'untested', 'finding', 'pass', 'fail'} == set(COLORS)
