"""The ledger as a picture: every claim a row in its verdict's colour, grouped by the chapter's sections in order, each
row on the claim's own tolerance, its unit at the top, the figure a page wide; and one figure per claim with its seeds
and its looks, each legend entry drawn and each line in the legend, a threshold on the axis of what it bounds."""
import dataclasses
import math

import matplotlib.colors as mcolors
import numpy as np
import pandas as pd
import pytest
from test_analysis import tree  # noqa: F401 (the synthetic run directories, a fixture)

from analysis.ledger.chapter import Context, load_chapter
from analysis.ledger.claims import group, headline, load_claims, samples
from analysis.pages.figures import style
from analysis.pages.ledger_figure import (COLORS, ROW, blocks, chapter_value, claim_figure, ledger_figure, placer,
                                          section)
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


def overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


@pytest.fixture(scope='module')
def drawn_ledger(ledger):
    """The synthetic ledger's figure, drawn: its claims decided at 3 or 5 seeds (a seeds column), its checks."""
    _, frame, _ = ledger
    with style():
        fig = ledger_figure(frame, load_claims(), CHAPTER)
        fig.canvas.draw()
    return fig


def test_the_ledger_is_a_page_wide_its_height_its_rows_and_its_units_on_top(ledger, drawn_ledger):
    _, frame, _ = ledger
    fig, (direction, size) = drawn_ledger, drawn_ledger.axes
    box = fig.get_tightbbox()  # in inches, as saved (bbox_inches='tight')
    assert box.width <= 9.0  # shown at its own size on a page: no text scaled down
    assert box.height <= 0.15 * len(frame) + 0.4 * len(blocks(frame, CHAPTER)) + 2.5  # the rows, not margins
    assert min(t.get_fontsize() for t in direction.get_yticklabels()) >= 7
    for ax, unit in ((direction, 'smallest effect of interest'), (size, 'band')):
        assert ax.xaxis.get_label_position() == 'top' and unit in ax.get_xlabel().replace('\n', ' ')
        assert ax.xaxis.label.get_window_extent().y0 >= ax.get_window_extent().y1  # met before any row
    title, legend = fig._suptitle.get_window_extent(), fig.legends[0].get_window_extent()
    labels = [ax.xaxis.get_tightbbox() for ax in fig.axes]
    assert title.y0 >= legend.y1 and all(legend.y0 >= box.y1 for box in labels)  # title, legend, units: in order


def test_the_ledgers_headings_stay_off_the_right_panel(drawn_ledger):
    direction, size = drawn_ledger.axes
    headings = [t for t in direction.texts if t.get_gid() in ('heading', 'tally')]
    assert len(headings) >= 2 * 5
    assert all(t.get_window_extent().x1 < size.get_window_extent().x0 for t in headings), \
        [t.get_text() for t in headings if t.get_window_extent().x1 >= size.get_window_extent().x0]


def test_a_check_shows_pass_or_fail_and_no_seed_count(ledger, drawn_ledger):
    _, frame, _ = ledger
    direction, size = drawn_ledger.axes
    ys = dict(zip([t.get_text() for t in direction.get_yticklabels()], direction.get_yticks()))
    checks = frame[frame['group'] == 'check']
    assert len(checks) and len(set(frame.loc[frame['group'] != 'check', 'n'])) > 1  # a seeds column is shown
    counts = {round(t.get_position()[1], 6) for t in size.texts if t.get_text().isdigit()}
    assert counts == {round(ys[i], 6) for i in frame.loc[frame['group'] != 'check', 'id']}  # every claim, no check
    words = {round(t.get_position()[1], 6): t.get_text() for t in direction.texts}
    assert all(words[round(ys[row.id], 6)].startswith(f'{row.verdict}: ') for row in checks.itertuples())
    same = frame.copy()
    same.loc[same['group'] != 'check', 'n'] = 5  # one design: every claim at 5 seeds, said once
    with style():
        fig = ledger_figure(same, load_claims(), CHAPTER)
    assert not [t for t in fig.axes[1].texts if t.get_text().isdigit() or t.get_text() == 'seeds']
    assert any('at 5 seeds' in t.get_text() for t in fig.texts)


def legend_and_drawn(ax) -> tuple[list[str], list[str]]:
    """An axes' legend entries, and the labels of the artists it draws inside its view (lines, points, spans)."""
    view = ax.get_window_extent()
    inside = lambda box: box.x0 <= view.x1 and view.x0 <= box.x1 and box.y0 <= view.y1 and view.y0 <= box.y1

    def shown(artist) -> bool:
        if hasattr(artist, 'get_offsets') and len(artist.get_offsets()):  # points: any inside the view
            x, y = ax.transData.transform(artist.get_offsets()).T
            return bool(((view.x0 <= x) & (x <= view.x1) & (view.y0 <= y) & (y <= view.y1)).any())
        return inside(artist.get_window_extent())
    drawn = [a.get_label() for a in [*ax.lines, *ax.collections, *ax.patches]
             if not a.get_label().startswith('_') and a.get_visible() and shown(a)]
    return [t.get_text() for t in ax.get_legend().get_texts()], drawn


@pytest.mark.parametrize('claim_id', ['study-lam09-vs-1-heldout', 'critic-beats-chapter7', 'ratio-max-leaves-band',
                                      'ess-falls-with-k', 'long-episodes-scatter-down', 'clip-cuts-kl-25x',
                                      'ess-three-updates'])
def test_every_legend_entry_of_a_claims_figure_is_drawn_and_every_drawn_line_in_its_legend(ledger, claim_id):
    ctx, frame, looks = ledger
    claim = next(c for c in load_claims()['claims'] if c['id'] == claim_id)
    row = frame.set_index('id', drop=False).loc[claim_id]
    with style():
        fig = claim_figure(claim, row, samples(claim, ctx), looks[looks['id'] == claim_id])
        fig.canvas.draw()
    for ax in fig.axes:
        entries, drawn = legend_and_drawn(ax)
        assert sorted(entries) == sorted(drawn), (claim_id, entries, drawn)
        levels = [line.get_ydata()[0] for line in ax.lines if line.get_label() in entries and len(line.get_ydata()) == 2
                  and line.get_ydata()[0] == line.get_ydata()[1] and not line.get_label().startswith('chapter')]
        assert len(levels) == len(set(levels)), (claim_id, 'two lines of the legend on one level')
    title = fig._suptitle.get_window_extent()
    assert all(title.y0 >= ax.get_tightbbox().y1 for ax in fig.axes)  # over the panels, their titles and labels


def test_a_long_claim_and_long_inputs_keep_their_title_and_labels_clear(ledger):
    ctx, frame, looks = ledger
    claim = next(c for c in load_claims()['claims'] if c['id'] == 'study-lam09-vs-1-heldout')
    claim = dict(claim, claim=' '.join([claim['claim']] * 3))  # a title of four lines
    found = samples(claim, ctx)
    found[1] = dataclasses.replace(found[1], label='the best of ' + ', '.join(
        f'[clip_low={v}, clip_high={v}] pass_heldout' for v in (0.1, 0.2, 0.3)))
    with style():
        fig = claim_figure(claim, frame.set_index('id', drop=False).loc[claim['id']], found,
                           looks[looks['id'] == claim['id']])
        fig.canvas.draw()
    assert fig.get_suptitle().count('\n') >= 3
    title = fig._suptitle.get_window_extent()
    assert all(title.y0 >= ax.get_tightbbox().y1 for ax in fig.axes)
    assert all(ax.get_ylabel().count('\n') <= 2 for ax in fig.axes)
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert ticks[1].replace('\n', ' ').startswith('the best of clip_low=0.1, clip_high=0.1; clip_low=0.2')
    assert 'pass' not in ticks[1] and ticks[1].count('\n') <= 3


def test_a_threshold_on_a_difference_is_drawn_on_the_difference_not_on_the_inputs_levels(ledger):
    ctx, frame, looks = ledger
    claims = {c['id']: c for c in load_claims()['claims']}
    rows = frame.set_index('id', drop=False)
    with style():
        two = claim_figure(claims['study-lam09-vs-1-heldout'], rows.loc['study-lam09-vs-1-heldout'],
                           samples(claims['study-lam09-vs-1-heldout'], ctx),
                           looks[looks['id'] == 'study-lam09-vs-1-heldout'])
        one = claim_figure(claims['critic-beats-chapter7'], rows.loc['critic-beats-chapter7'],
                           samples(claims['critic-beats-chapter7'], ctx), looks[looks['id'] == 'critic-beats-chapter7'])
    than = float(claims['study-lam09-vs-1-heldout']['than'])
    levels, difference = two.axes
    assert not [line for line in levels.get_lines() if 'threshold' in line.get_label()]  # not on the pass rates
    assert [line.get_ydata()[0] for line in difference.get_lines() if 'threshold' in line.get_label()] == [than]
    estimates = [line.get_ydata()[0] for line in difference.get_lines() if line.get_marker() == 'o']
    mine = looks[looks['id'] == 'study-lam09-vs-1-heldout']
    assert np.allclose(estimates, mine['estimate'] + than)  # the difference itself: the ledger's less the threshold
    assert 'minus' in difference.get_ylabel()
    level = float(claims['critic-beats-chapter7']['than'])  # one input against a threshold: on its own level
    assert [line.get_ydata()[0] for line in one.axes[0].get_lines() if 'threshold' in line.get_label()] == [level]
