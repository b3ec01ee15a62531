"""The ledger as a picture: every claim a row in its verdict's colour, grouped by the chapter's sections in order, each
row on the claim's own tolerance, its unit at the top, the figure a page wide, its intervals at the ledger's level (an
infinite end an arrowhead); and one figure per claim with its seeds and its confidence sequence seed by seed, each
legend entry drawn and each line in the legend, a threshold on the axis of what it bounds."""
import dataclasses
import math

import matplotlib.colors as mcolors
import numpy as np
import pandas as pd
import pytest
from test_analysis import tree  # noqa: F401 (the synthetic run directories, a fixture)

from analysis.ledger.chapter import Context, load_chapter
from analysis.ledger.claims import group, headline, ledger as read_ledger, load_claims, samples
from analysis.ledger.sequence import sequences
from analysis.ledger.verdicts import VERDICTS
from analysis.pages.figures import style
from analysis.pages.ledger_figure import (COLORS, ROW, blocks, chapter_value, claim_figure, ledger_figure,
                                          placer, section)
from analysis.records.load import load_runs
from analysis.text import percent

CHAPTER = load_chapter()
RETIRED = ('look', 'stage', 'futil', 'p-value', 'q-value', 'p value', 'q value', '95%')  # words of the old rules


@pytest.fixture(scope='module')
def ledger(tree):  # noqa: F811
    """The synthetic runs' ledger on every seed, with each claim's rows seed by seed at the ledger's threshold."""
    ctx = Context.build(load_runs(tree / 'runs', tree / 'experiments'))
    frame = read_ledger(ctx)
    return ctx, frame, sequences(ctx, frame.attrs['threshold'])


def texts(fig) -> str:
    """Every word a figure shows: its title, its axes' titles, labels and texts, its legends."""
    words = [fig.get_suptitle(), *(t.get_text() for t in fig.texts)]
    for ax in fig.axes:
        words += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel(), *(t.get_text() for t in ax.texts)]
        words += [t.get_text() for t in ax.get_xticklabels()]
    for legend in [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]:
        words += [t.get_text() for t in legend.get_texts()]
    return '\n'.join(words)


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


def claims_figure(ledger, claim_id: str, claim: dict | None = None, found=None, steps=None):
    """A claim's figure from the fixture's ledger and sequences (or the claim, inputs and steps given), drawn."""
    ctx, frame, seqs = ledger
    claim = claim or next(c for c in load_claims()['claims'] if c['id'] == claim_id)
    steps = seqs[seqs['id'] == claim_id] if steps is None else steps
    with style():
        fig = claim_figure(claim, frame.set_index('id', drop=False).loc[claim_id], found or samples(claim, ctx), steps)
        fig.canvas.draw()
    return fig


def intervals(ax) -> dict[int, object]:
    """seed count -> the right panel's interval there (the lines it tags interval:<n>)."""
    return {int(line.get_gid().removeprefix('interval:')): line for line in ax.get_lines()
            if (line.get_gid() or '').startswith('interval:')}


def test_a_claims_figure_shows_its_seeds_and_its_confidence_sequence_seed_by_seed(ledger):
    ctx, frame, seqs = ledger
    claim_id = 'ess-three-updates'
    row = frame.set_index('id').loc[claim_id]
    mine = seqs[seqs['id'] == claim_id]
    fig = claims_figure(ledger, claim_id)
    left, right = fig.axes
    assert len(left.collections[0].get_offsets()) == row['n'] == 12  # one point per seed the ledger read
    drawn = intervals(right)
    assert sorted(drawn) == mine['seeds'].tolist() == list(range(3, 13))  # one interval per seed count
    assert [mcolors.to_hex(drawn[n].get_color()) for n in mine['seeds']] == [COLORS[v] for v in mine['verdict']]
    finite = mine[np.isfinite(mine['ci_low']) & np.isfinite(mine['ci_high'])]
    low, high = right.get_ylim()
    inside = finite[(finite['ci_low'] >= low) & (finite['ci_high'] <= high)]
    assert len(inside) and all(np.allclose(drawn[s.seeds].get_ydata(), [s.ci_low, s.ci_high])
                               for s in inside.itertuples())  # drawn as given
    points = [line for line in right.get_lines() if line.get_marker() == 'o']
    assert [p.get_ydata()[0] for p in points] == pytest.approx(mine['estimate'].tolist())  # the estimate at each n
    words = texts(fig)
    level = percent(row['level'])
    assert level == percent(1 - 1 / frame.attrs['threshold'])  # one step: the ledger's e-BH threshold
    assert f'{level} confidence sequence, valid at every seed count' in words
    assert f"{row['verdict']} at 12 seeds" == right.get_title()
    assert not [w for w in RETIRED if w in words.lower()], words
    assert np.isclose([line.get_ydata()[0] for line in right.get_lines() if line.get_marker() == 'x'], 0.343).all()


def test_a_confidence_level_says_the_decimals_that_tell_it_from_certainty():
    assert percent(0.991422) == '99.14%' and percent(0.997855) == '99.79%' and percent(0.99962) == '99.962%'
    assert percent(0.95) == '95%'  # the pages' and the figures' one rounding (analysis.text.percent)


def test_an_infinite_interval_end_is_an_arrowhead_not_a_crash(ledger):
    ctx, frame, seqs = ledger
    for claim_id, ends in (('ess-falls-with-k', (0.0, np.inf)),  # a ratio: 0 and infinity
                           ('long-episodes-scatter-down', (-np.inf, np.inf)),  # a difference
                           ('ess-three-updates', (-np.inf, 0.5))):  # a size: one end infinite
        steps = seqs[seqs['id'] == claim_id].copy()
        steps.loc[steps.index[:3], ['ci_low', 'ci_high']] = ends  # the first three seed counts open
        fig = claims_figure(ledger, claim_id, steps=steps)
        right = fig.axes[1]
        drawn, (low, high) = intervals(right), right.get_ylim()
        assert sorted(drawn) == steps['seeds'].tolist()
        arrows = [line for line in right.get_lines() if line.get_marker() in ('^', 'v')]
        for n in steps['seeds'][:3]:  # drawn to the axis's ends, an arrowhead at each infinite one
            ys = drawn[n].get_ydata()
            assert np.isfinite(ys).all() and low <= min(ys) and max(ys) <= high
            heads = {a.get_marker() for a in arrows if a.get_xdata()[0] == n}
            assert heads == {'v', '^'} if np.isinf(ends[1]) else heads == {'v'}
        assert 'the interval goes on (or is infinite)' in texts(fig)
    rows = frame.copy()  # the ledger figure, with infinite ends and a ratio's 0
    ratio = rows.index[(rows['scale'] == 'log') & (rows['kind'] != 'about') & rows['estimate'].notna()][:2]
    raw = rows.index[(rows['scale'] == 'raw') & (rows['kind'] != 'about') & rows['estimate'].notna()][:2]
    rows.loc[ratio, 'ci_low'], rows.loc[raw, 'ci_low'], rows.loc[raw, 'ci_high'] = 0.0, -np.inf, np.inf
    with style():
        fig = ledger_figure(rows, load_claims(), CHAPTER)
        fig.canvas.draw()
    direction = fig.axes[0]
    heads = [line for line in direction.get_lines() if line.get_gid() == 'goes-on']
    ys = dict(zip([t.get_text() for t in direction.get_yticklabels()], direction.get_yticks()))
    rowed = {round(line.get_ydata()[0], 6) for line in heads}
    assert {round(ys[rows.loc[i, 'id']], 6) for i in [*ratio, *raw]} <= rowed  # every open row ends in an arrowhead
    assert 'the interval goes on (or is infinite)' in texts(fig)


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
        shown = texts(fig).replace('\n', ' ')  # the note under the title says what an interval is
        assert "confidence sequence at the ledger's e-BH threshold" in shown
        assert f"({percent(1 - 1 / frame.attrs['threshold'])} for a claim of one step" in shown
        assert not [w for w in RETIRED if w in shown.lower()], shown
        assert 'smallest effect' in fig.axes[0].get_xlabel() and 'band' in fig.axes[1].get_xlabel()
        legend = ' / '.join(t.get_text() for t in fig.legends[0].get_texts())
        assert all(word in legend.split(' / ') for word in words), legend
        colours = drawn(fig)
        assert all(colours[row.id] == COLORS[row.verdict] for row in data.loc[estimated].itertuples())
    assert {*VERDICTS, 'untested', 'finding', 'pass', 'fail'} == set(COLORS)


def overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


@pytest.fixture(scope='module')
def varied_seeds(ledger) -> pd.DataFrame:
    """The synthetic ledger with its literature claims read at 8 seeds, the rest at 12: a seeds column."""
    _, frame, _ = ledger
    frame = frame.copy()
    frame.loc[frame['group'] == 'literature', 'n'] = 8
    return frame


@pytest.fixture(scope='module')
def drawn_ledger(varied_seeds):
    """The synthetic ledger's figure, drawn: its claims read at 8 or 12 seeds (a seeds column), its checks."""
    frame = varied_seeds
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


def test_a_check_shows_pass_or_fail_and_no_seed_count(varied_seeds, drawn_ledger):
    frame = varied_seeds
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
    fig = claims_figure(ledger, claim_id)
    for ax in fig.axes:
        entries, drawn = legend_and_drawn(ax)
        assert sorted(entries) == sorted(drawn), (claim_id, entries, drawn)
        levels = [line.get_ydata()[0] for line in ax.lines if line.get_label() in entries and len(line.get_ydata()) == 2
                  and line.get_ydata()[0] == line.get_ydata()[1] and not line.get_label().startswith('chapter')]
        assert len(levels) == len(set(levels)), (claim_id, 'two lines of the legend on one level')
    title = fig._suptitle.get_window_extent()
    assert all(title.y0 >= ax.get_tightbbox().y1 for ax in fig.axes)  # over the panels, their titles and labels
    right = fig.axes[1]
    level = next(t for t in right.texts if t.get_gid() == 'level').get_window_extent()
    assert right.title.get_window_extent().y0 >= level.y1 >= level.y0 > right.get_window_extent().y1  # over the axes
    assert not [w for w in RETIRED if w in texts(fig).lower()]


def test_a_finding_shows_its_sequence_in_the_findings_colour_without_a_verdict(ledger):
    _, frame, seqs = ledger
    finding = frame.loc[frame['verdict'] == 'finding', 'id'].iloc[0]
    steps = seqs[seqs['id'] == finding]
    right = claims_figure(ledger, finding).axes[1]
    drawn = intervals(right)
    assert list(drawn) == list(steps['seeds']) and len(drawn) > 1  # seed by seed, as a claim's
    assert {mcolors.to_hex(line.get_color()) for line in drawn.values()} == {COLORS['finding']}
    assert right.get_title() == 'a finding: an interval, no verdict'
    assert 'verdict' not in ' '.join(t.get_text() for t in right.get_legend().get_texts())


def test_a_long_claim_and_long_inputs_keep_their_title_and_labels_clear(ledger):
    ctx, _, _ = ledger
    claim = next(c for c in load_claims()['claims'] if c['id'] == 'study-lam09-vs-1-heldout')
    claim = dict(claim, claim=' '.join([claim['claim']] * 3))  # a title of four lines
    found = samples(claim, ctx)
    found[1] = dataclasses.replace(found[1], label='the best of ' + ', '.join(
        f'[clip_low={v}, clip_high={v}] pass_heldout' for v in (0.1, 0.2, 0.3)))
    fig = claims_figure(ledger, claim['id'], claim=claim, found=found)
    assert fig.get_suptitle().count('\n') >= 3
    title = fig._suptitle.get_window_extent()
    assert all(title.y0 >= ax.get_tightbbox().y1 for ax in fig.axes)
    assert all(ax.get_ylabel().count('\n') <= 2 for ax in fig.axes)
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert ticks[1].replace('\n', ' ').startswith('the best of clip_low=0.1, clip_high=0.1; clip_low=0.2')
    assert 'pass' not in ticks[1] and ticks[1].count('\n') <= 3


def test_a_threshold_on_a_difference_is_drawn_on_the_difference_not_on_the_inputs_levels(ledger):
    _, _, seqs = ledger
    claims = {c['id']: c for c in load_claims()['claims']}
    two, one = claims_figure(ledger, 'study-lam09-vs-1-heldout'), claims_figure(ledger, 'critic-beats-chapter7')
    than = float(claims['study-lam09-vs-1-heldout']['than'])
    levels, difference = two.axes
    assert not [line for line in levels.get_lines() if 'threshold' in line.get_label()]  # not on the pass rates
    assert [line.get_ydata()[0] for line in difference.get_lines() if 'threshold' in line.get_label()] == [than]
    estimates = [line.get_ydata()[0] for line in difference.get_lines() if line.get_marker() == 'o']
    mine = seqs[seqs['id'] == 'study-lam09-vs-1-heldout']
    assert np.allclose(estimates, mine['estimate'] + than)  # the difference itself: the ledger's less the threshold
    assert 'minus' in difference.get_ylabel()
    level = float(claims['critic-beats-chapter7']['than'])  # one input against a threshold: on its own level
    assert [line.get_ydata()[0] for line in one.axes[0].get_lines() if 'threshold' in line.get_label()] == [level]
