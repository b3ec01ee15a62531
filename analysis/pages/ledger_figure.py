"""The claims ledger as pictures: figures/claims (every claim's estimate against what the chapter claims, one row per
claim, grouped by the chapter's sections in its order) and claims/<id> (one small figure per claim: its seeds, and its
confidence sequence seed by seed).

The ledger figure has two panels, one per part of a claim, each on a linear axis in the claim's own tolerance. A
direction claim's row (left) reads its estimate as a multiple of the smallest effect of interest, the claimed direction
to the right: no effect at 0, the smallest effect at 1 (where a threshold claim has none, 1 is log 1.25, the
about-factor's step; a ratio's multiple is taken on the log scale). A size claim's row (right) reads where its estimate
falls against the claimed band: the chapter's value at 0, the band's edges at -1 and 1 (on the claim's scale: log, logit
or raw). The estimate and its interval are the ledger's, placed as given: the interval is the confidence sequence at the
ledger's e-BH threshold (its level the ledger's `level`), the one the verdict reads. An end beyond an axis's end, or
infinite, ends in an arrowhead there; an estimate beyond it in an arrow with its position written beside it. The
chapter's single-seed value is placed the same way from its printed numbers.
"""
from __future__ import annotations

import math
import re
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, NullFormatter

from ..ledger.chapter import Context, Selected, printed
from ..ledger.claims import headline, load_claims, samples
from ..ledger.verdicts import DIRECTION, band, clean, per_seed, to_scale
from ..stats.inference import DEFAULTS
from ..text import factor, in_words, percent
from .figures import legends_below, save, style

COLORS = {'reproduced': '#009e73', 'inside': '#009e73', 'short of the claim': '#e69f00', 'reversed': '#d55e00',
          'outside': '#d55e00', 'inconclusive': '#999999', 'untested': '#ffffff', 'finding': '#0072b2',
          'pass': '#009e73', 'fail': '#d55e00'}  # every verdict word (a direction reproduced, reversed or short of
# the claim; a size inside or outside): Okabe-Ito, green and vermillion read apart for colour-blind eyes, orange for
# short of the claim, a finding blue
OTHER = '#cc79a7'  # a verdict this module does not know
CLAIMED = '#e4e4e4'  # the region the chapter claims: a band or a direction
LIMITS = {'direction': (-2.0, 5.0), 'size': (-4.0, 4.0)}  # each panel's axis; a row beyond it: an arrow at its end
BLOCKS = {'calibration': 'Calibration targets (tuned to, not evidence)',
          'finding': 'Findings (exercise questions and models: an interval, no verdict)',
          'literature': 'Claims from the literature (Andrychowicz et al. 2021, cited by the chapter)',
          'check': 'Deterministic checks'}
SECTION = re.compile(r'(?<!Figure )\b(8\.\d)\b')  # a section number, not a figure's
ROW = 0.145  # inches per claim
LEDGER, FOLDER = 'claims', 'claims'  # figures/claims.svg; claims/<id>.svg under the results folder


def section(source) -> str:
    """The part of the chapter a claim's source names first: a section number (not a figure's), the Summary, the
    Exercises; else the section of the figure it names ('Figure 8.1 (right)': 8.1)."""
    source = str(source)  # YAML reads a bare 8.1 as a number
    found = SECTION.search(source)
    if found:
        return found.group(1)
    named = [(source.find(word), part) for word, part in (('Summary', 'Summary'), ('Exercise', 'Exercises'))
             if word in source]
    if named:
        return min(named)[1]  # the one named first
    figure = re.search(r'\b(8\.\d)\b', source)
    if figure is None:
        raise ValueError(f'source {source!r} names no section of the chapter, no Summary and no Exercise')
    return figure.group(1)


RATIO_SCALES = ('log', 'logit')  # where a directional estimate is a ratio (of odds on the logit scale)

def placer(row: pd.Series):
    """Natural units -> the row's position on the ledger figure's axis (see the module's docstring)."""
    with np.errstate(divide='ignore', invalid='ignore'):
        if row['kind'] == 'about':
            low, high = to_scale(row['band_low'], row['scale']), to_scale(row['band_high'], row['scale'])
            return lambda v: (to_scale(np.asarray(v, float), row['scale']) - (low + high) / 2) / ((high - low) / 2)
        sign = 1.0 if DIRECTION[row['kind']] == 'greater' else -1.0
        if row['scale'] in RATIO_SCALES:  # a ratio (of odds on the logit scale), its smallest effect a ratio too
            unit = abs(np.log(row['effect'])) or np.log(DEFAULTS['about_factor'])
            return lambda v: sign * np.log(np.asarray(v, float)) / unit
        unit = abs(row['effect']) or np.log(DEFAULTS['about_factor'])
        return lambda v: sign * np.asarray(v, float) / unit


def quantity(claim: dict, values: list[float]) -> float:
    """The claim's quantity for one set of input values (the chapter's printed ones), as the ledger's estimate: the
    input, its ratio or difference, the difference or ratio to `than` (two inputs: their difference less `than`), or
    the weakest step of a monotone claim (the smallest in the claimed direction)."""
    scale = claim.get('scale', 'raw')
    ratio = scale in RATIO_SCALES
    step = (lambda a, b: float(np.exp(to_scale(a, scale) - to_scale(b, scale)))) if ratio else (lambda a, b: a - b)
    if claim['kind'] == 'about':
        return float(per_seed(claim, [pd.Series([v]) for v in values]).iloc[0])
    if 'than' in claim:  # against the threshold; on two inputs, their difference against it (raw, paired)
        than = float(claim['than'])
        return step(values[0], than) if len(values) == 1 else step(values[0], values[1]) - than
    if claim['kind'] in ('greater', 'less'):
        return step(values[0], values[1])
    sign = 1.0 if DIRECTION[claim['kind']] == 'greater' else -1.0
    steps = [step(b, a) for a, b in zip(values, values[1:])]
    with np.errstate(divide='ignore', invalid='ignore'):
        return min(steps, key=lambda s: sign * (np.log(s) if ratio else s))


def chapter_value(claim: dict) -> float:
    """The claim's quantity on the chapter's printed numbers; NaN where the chapter printed no value for an input."""
    if not all('value' in spec for spec in claim['inputs']):
        return np.nan
    return quantity(claim, [printed(spec['value'])[0] for spec in claim['inputs']])


def blocks(frame: pd.DataFrame, chapter: dict) -> list[tuple[str, pd.DataFrame]]:
    """The ledger's rows in blocks: the chapter's claims by section in the chapter's order, then each other group."""
    chapter_rows = frame[frame['group'] == 'chapter']
    parts = chapter_rows['source'].map(section)
    out = [(f'{key} {title}' if key != title else title, chapter_rows[parts == key])
           for key, title in chapter['sections'].items()]
    others = sorted(set(frame['group']) - {'chapter'}, key=lambda g: (g == 'check', g not in BLOCKS, g))
    out += [(BLOCKS.get(name, name), frame[frame['group'] == name]) for name in others]  # checks last
    return [(title, rows) for title, rows in out if len(rows)]


def tally(rows: pd.DataFrame) -> str:
    """'5 reproduced, 2 short of the claim, 1 inconclusive': the verdicts present, in COLORS' order."""
    found = rows['verdict'].value_counts()
    return ', '.join(f'{found[v]} {v}' for v in [*COLORS, *sorted(set(found.index) - set(COLORS))] if v in found)


def placed(frame: pd.DataFrame, claims: dict) -> pd.DataFrame:
    """The ledger's rows with their places on the figure's axis: x, x_low, x_high (the interval, an end infinite where
    it is), chapter_x (NaN for a check or a claim without an estimate)."""
    by_id = {c['id']: c for c in claims['claims']}
    out = []
    for _, row in frame.iterrows():
        if row['group'] == 'check' or not np.isfinite(row['estimate']):
            out.append(dict(id=row['id'], x=np.nan, x_low=np.nan, x_high=np.nan, chapter_x=np.nan))
            continue
        place = placer(row)
        with np.errstate(divide='ignore', invalid='ignore'):  # a ratio's end at 0: at -inf, as an infinite end
            ends = sorted([float(place(row['ci_low'])), float(place(row['ci_high']))])
        out.append(dict(id=row['id'], x=float(place(row['estimate'])), x_low=ends[0], x_high=ends[1],
                        chapter_x=float(place(chapter_value(by_id[row['id']])))))
    return frame.merge(pd.DataFrame(out), on='id', how='left', validate='one_to_one')


def ledger_figure(frame: pd.DataFrame, claims: dict, chapter: dict) -> Figure:
    """Every claim of the ledger as one row, in its part's panel: its region (grey), our estimate and its interval (the
    confidence sequence at the ledger's threshold) coloured by the verdict, the chapter's value (x); a check's pass or
    fail, without a seed count. Each panel's unit is its label, at the top where a reader starts; a block's title runs
    over the ids and the direction panel only, each panel's verdicts under it; the seeds are said once where every claim
    has the same, else in a column on the right; the note under the title says what an interval is, and its level."""
    rows = placed(frame, claims)
    parts = blocks(rows, chapter)
    seeds = sorted(set(rows.loc[rows['group'] != 'check', 'n']))
    column = len(seeds) > 1  # the seeds each claim was decided at, where they differ
    heads = [textwrap.wrap(title, HEADING_CHARACTERS) for title, _ in parts]
    units = len(rows) + sum(len(lines) + 1 for lines in heads) * LINE / ROW  # the rows' and blocks' heights, in rows
    width = IDS + PANEL + GAP + BAND + (SEEDS if column else 0.1)
    height = units * ROW + 0.25
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    bottom, top = 0.1 / height, 1 - 0.15 / height
    direction = fig.add_axes([IDS / width, bottom, PANEL / width, top - bottom])
    size = fig.add_axes([(IDS + PANEL + GAP) / width, bottom, BAND / width, top - bottom], sharey=direction)
    left = -(IDS - 0.05) / PANEL  # the ids' left edge, in the direction panel's axes fraction
    y, ticks, labels, links = 0.0, [], [], []
    for (title, block), lines in zip(parts, heads):
        for ax, start in ((direction, left), (size, 0.0)):
            ax.plot([start, 1.0], [y] * 2, transform=ax.get_yaxis_transform(), clip_on=False, color='#555555',
                    linewidth=0.6)
        for i, line in enumerate(lines):  # the block's title over the ids and the direction panel
            direction.text(left, y + (i + 0.6) * LINE / ROW, line, transform=direction.get_yaxis_transform(),
                           ha='left', va='center', fontsize=8, fontweight='bold', gid='heading')
        y += len(lines) * LINE / ROW
        for ax, start, part in ((direction, left, block[block['kind'] != 'about']),
                                (size, 0.02, block[block['kind'] == 'about'])):  # each panel's verdicts under it
            if len(part):
                ax.text(start, y + 0.5 * LINE / ROW, tally(part), transform=ax.get_yaxis_transform(), ha='left',
                        va='center', fontsize=7.5, color='#333333', gid='tally')
        y += LINE / ROW + 0.5  # the first row's centre
        for _, row in block.iterrows():
            draw_row(size if row['kind'] == 'about' else direction, row, y)
            if column and row['group'] != 'check':  # a check passes or fails: no seed count
                size.text(1.03, y, f"{row['n']}", transform=size.get_yaxis_transform(), fontsize=7, va='center')
            ticks.append(y)
            labels.append(row['id'])
            links.append(f"../{FOLDER}/{row['id']}.svg" if has_figure(row) else None)
            y += 1
        y -= 0.5  # the block's bottom edge
    direction.set_ylim(y + 0.3, 0)
    direction.set_yticks(ticks, labels, fontsize=7)
    for tick, link in zip(direction.get_yticklabels(), links):
        tick.set_url(link)  # in the SVG, a claim's id opens its own figure
    size.tick_params(axis='y', labelleft=False)
    axis(direction, 'direction', DIRECTION_UNIT, 'multiples of the smallest effect of interest')
    axis(size, 'size', SIZE_UNIT, 'against the band (its edges at -1 and 1)')
    if column:
        size.text(1.03, 1.0, 'seeds', transform=size.transAxes, fontsize=7, va='bottom', fontweight='bold')
    renderer = fig.canvas.get_renderer()  # the panels' labels at the top measured; the legend, a note, the title above
    centre = (IDS + PANEL + GAP + BAND) / 2 / width
    above = max(ax.xaxis.get_tightbbox(renderer).y1 for ax in (direction, size)) / fig.bbox.height
    legend = fig.legend(handles=legend_handles(rows), loc='lower center', bbox_to_anchor=(centre, above + 0.06 / height),
                        ncol=4, fontsize=8, frameon=False, handlelength=1.2, columnspacing=1.0, borderaxespad=0)
    at = 'the seeds on the right' if column else f'{seeds[0]} seeds' if seeds else 'no seed'
    words = (f'Our estimate and its interval at {at}, in the colour of its verdict: the confidence sequence at the '
             f"ledger's e-BH threshold{one_step(frame)}, the interval the verdict reads. A deterministic check "
             'passes or fails.')
    lines = textwrap.wrap(words, 125, break_on_hyphens=False)
    note = fig.text(centre, top_of(legend) + 0.05 / height, '\n'.join(lines), ha='center', va='bottom', fontsize=8)
    fig.suptitle('\n'.join(textwrap.wrap(f'{headline(frame)} (Chapter 8 on our seeds)', 110)), x=centre,
                 y=top_of(note) + 0.08 / height, fontsize=9.5, fontweight='bold', va='bottom')
    return fig


IDS, PANEL, GAP, BAND, SEEDS = 2.45, 3.1, 0.3, 2.2, 0.4  # inches: the ids, the direction panel, the gap, the
# size panel, the seeds' column
LINE = 0.17  # inches per line of a block's title or verdicts
HEADING_CHARACTERS = 80  # a block's title in lines of this many characters at most: over the ids and direction panel
DIRECTION_UNIT = ('Direction claims: our estimate in units of\nthe smallest effect of interest (dotted, at 1);\n'
                  'no effect at 0, the claimed direction to the right')
SIZE_UNIT = 'Size claims: our estimate against the\nclaimed band, its edges at -1 and 1,\nthe claimed value at 0'


def one_step(frame: pd.DataFrame) -> str:
    """' (99.1% for a claim of one step, more for one of several)': the ledger's level from its threshold (attrs), else
    from its rows' levels (the smallest: a claim of one step); '' where it has neither."""
    threshold = frame.attrs.get('threshold')
    levels = pd.to_numeric(frame.get('level', pd.Series(dtype=float)), errors='coerce').dropna()
    level = 1 - 1 / threshold if threshold else levels.min() if len(levels) else math.nan
    if not math.isfinite(level):
        return ''
    several = ', more for one of several' if (levels > level + 1e-9).any() else ''
    return f' ({percent(level)} for a claim of one step{several})'


def top_of(artist) -> float:
    """The top of an artist, in its figure's fraction."""
    fig = artist.get_figure()
    return artist.get_window_extent(fig.canvas.get_renderer()).y1 / fig.bbox.height


def legend_handles(rows: pd.DataFrame) -> list:
    """The ledger figure's legend: a patch per colour of the verdicts drawn, then what else is drawn (the claimed
    region, the smallest effect, the chapter's value), nothing that is not."""
    words = {}  # colour -> the verdicts present it stands for, in COLORS' order
    for verdict in (v for v in COLORS if v in set(rows['verdict'])):
        words.setdefault(COLORS[verdict], []).append(verdict)
    handles = [Patch(facecolor=c, edgecolor='#555555', label=' / '.join(v)) for c, v in words.items()]
    others = sorted(set(rows['verdict']) - set(COLORS))
    if others:
        handles.append(Patch(facecolor=OTHER, edgecolor='#555555', label=' / '.join(others)))
    claimed = rows[rows['group'] != 'check']
    if len(claimed):
        handles.append(Patch(facecolor=CLAIMED, label='what the chapter claims'))
    if (claimed['kind'] != 'about').any():
        handles.append(Line2D([], [], color='#555555', linestyle=':', linewidth=0.8,
                              label='the smallest effect of interest'))
    if np.isfinite(rows['chapter_x']).any():
        handles.append(Line2D([], [], color='k', marker='x', linestyle='', label="the chapter's value (one seed)"))
    if beyond(rows).any():
        handles.append(Line2D([], [], color='#555555', marker='>', linestyle='', markersize=4,
                              label='the interval goes on (or is infinite)'))
    return handles


def beyond(rows: pd.DataFrame) -> pd.Series:
    """Whether a row's interval ends in an arrowhead: it reaches past its panel's axis (an infinite end included) on a
    side its estimate does not (an estimate past the axis is an arrow of its own)."""
    ends = [LIMITS['size' if kind == 'about' else 'direction'] for kind in rows['kind']]
    low, high = (np.array([e[i] for e in ends], float) for i in (0, 1))
    x, x_low, x_high = (rows[k].to_numpy(float) for k in ('x', 'x_low', 'x_high'))
    with np.errstate(invalid='ignore'):
        return pd.Series((x_low < low) & ~(x < low) | (x_high > high) & ~(x > high), index=rows.index)


def axis(ax, part: str, label: str, short: str) -> None:
    """A panel's linear x axis: its limits, integer ticks at both ends of the tall figure, its unit (label) at the top
    where a reader starts, a short reminder of it under the bottom ticks."""
    low, high = LIMITS[part]
    positions = np.arange(np.ceil(low), np.floor(high) + 1)
    ax.set_xlim(low - 0.3, high + 0.3)  # room for an arrow at either end
    ax.set_xticks(positions, [f'{p:g}' for p in positions], fontsize=7.5)
    ax.tick_params(axis='x', top=True, labeltop=True, pad=2)
    ax.grid(axis='y', visible=False)
    ax.xaxis.set_label_position('top')
    ax.set_xlabel(label, fontsize=7.5, loc='left', linespacing=1.3)
    ax.annotate(short, xy=(0.5, 0), xycoords='axes fraction', xytext=(0, -14), textcoords='offset points',
                ha='center', va='top', fontsize=7, color='#333333')
    ax.axvline(0, color='#555555', linewidth=0.6, zorder=1)


def has_figure(row: pd.Series) -> bool:
    """Whether a ledger row gets a figure of its own: a statistical claim with values."""
    return row['group'] != 'check' and row['verdict'] != 'untested'


def draw_row(ax, row: pd.Series, y: float) -> None:
    """One claim at height y on its part's panel: a check's pass or fail at the panel's left edge, off its scale; a
    claim's region, interval, estimate and the chapter's value, each cut to the panel's axis (an interval's end past it,
    or infinite, an arrowhead at the axis's end; the estimate an arrow with its position where it goes on)."""
    color = COLORS.get(row['verdict'], OTHER)
    low, high = LIMITS['size' if row['kind'] == 'about' else 'direction']
    room = int(ax.get_position().width * ax.get_figure().get_figwidth() * 72 / 3.9) - 4  # characters of 6.5 pt
    if row['group'] == 'check':
        ax.plot([low - 0.1], [y], marker='s', color=color, markersize=5, gid=f"claim:{row['id']}")
        ax.text(low + 0.1, y, textwrap.shorten(f"{row['verdict']}: {row['numbers']}", room, placeholder='...'),
                fontsize=6.5, va='center', ha='left', bbox=dict(facecolor='white', edgecolor='none', pad=0.3))
        return
    ax.fill_between((-1, 1) if row['kind'] == 'about' else (0, high + 0.3), y - 0.42, y + 0.42, color=CLAIMED,
                    linewidth=0)
    if row['kind'] != 'about':
        ax.plot([1, 1], [y - 0.42, y + 0.42], color='#555555', linewidth=0.8, linestyle=':')  # the smallest effect
    if not np.isfinite(row['x']):  # no estimate: why, from the panel's left edge
        why = textwrap.shorten(f"{row['verdict']}: {row['note'] or 'no estimate'}", room, placeholder='...')
        ax.text(low + 0.1, y, why, fontsize=6.5, va='center', ha='left',
                bbox=dict(facecolor='white', edgecolor='none', pad=0.3))
        ax.plot([low - 0.1], [y], marker='o', markerfacecolor='white', color='#555555', markersize=4,
                gid=f"claim:{row['id']}")
        return
    ci_low, ci_high, x = (float(np.clip(row[k], low, high)) for k in ('x_low', 'x_high', 'x'))
    ax.plot([ci_low, ci_high], [y, y], color=color, linewidth=2, solid_capstyle='butt')
    beyond = '>' if row['x'] > high else '<' if row['x'] < low else 'o'
    for end, edge, marker in ((row['x_low'], low, '<'), (row['x_high'], high, '>')):
        if (end < edge if marker == '<' else end > edge) and marker != beyond:  # past the axis, or infinite: an
            # arrowhead at its end (where the estimate is past it too, its arrow says so)
            ax.plot([edge + (0.12 if marker == '<' else -0.12)], [y], marker=marker, color=color, markersize=3.5,
                    linestyle='', gid='goes-on')
    ax.plot([x], [y], marker=beyond, color=color, markeredgecolor='k', markeredgewidth=0.4, markersize=5,
            gid=f"claim:{row['id']}")
    if beyond != 'o':
        ax.text(x - 0.25 if beyond == '>' else x + 0.25, y, f"{row['x']:.3g}", fontsize=6.5, va='center',
                ha='right' if beyond == '>' else 'left')
    if np.isfinite(row['chapter_x']):
        ax.plot([float(np.clip(row['chapter_x'], low, high))], [y], marker='x', color='k', markersize=4,
                markeredgewidth=1)


# --- one figure per claim -------------------------------------------------------------------------------------

def jitter(n: int) -> np.ndarray:
    """Deterministic offsets for a strip of n points (golden-ratio steps in [-0.2, 0.2])."""
    return ((np.arange(n) * 0.618034) % 1.0 - 0.5) * 0.4


def claim_figure(claim: dict, row: pd.Series, found: list[Selected], steps: pd.DataFrame) -> Figure:
    """Left: each input's values by seed, every seed the ledger read (a seed's values joined where paired), the
    chapter's printed values (x), a threshold on one input's level. Right: the claim's confidence sequence seed by seed
    (steps: its rows of the sequences frame, analysis/ledger/sequence.py; a claim without any shows its ledger row),
    against the boundaries its verdict reads. The claim's words over both, clear of the panels' titles."""
    title = textwrap.wrap(f"{claim['id']}: {claim['claim']}", 110)
    fig = Figure(figsize=(9.0, 3.4 + 0.15 * len(title)), layout='constrained')
    FigureCanvasAgg(fig)
    fig.get_layout_engine().set(wspace=0.08)
    left, right = fig.subplots(1, 2, gridspec_kw=dict(width_ratios=(1.1, 1)))
    context, names = factor([f.label for f in found])
    if context:  # 'the best of [a] m, [b] m' over axis m: 'the best of a; b'
        names = [n.replace(f' {context},', ';').removesuffix(f' {context}') if n.startswith('the best of') else n
                 for n in names]
    context, names = in_words(context), [in_words(n) for n in names]
    values = [clean(f.values) for f in found]  # every seed the ledger read
    if row['paired'] == 'yes':
        both = pd.concat([v.rename(i) for i, v in enumerate(values)], axis=1, join='inner')
        offsets = pd.Series(jitter(len(both)), index=both.index)
        for seed, line in both.iterrows():
            left.plot(np.arange(len(values)) + offsets[seed], line.to_numpy(), color='#bbbbbb', linewidth=0.5)
    for i, (v, f) in enumerate(zip(values, found)):
        left.scatter(i + jitter(len(v)), v.to_numpy(), s=10, color='#0072b2', zorder=3, linewidth=0,
                     label='ours, one point a seed' if i == 0 else None)
        if f.chapter is not None:
            left.plot([i], [printed(f.chapter)[0]], 'kx', markersize=8, markeredgewidth=1.5, zorder=4,
                      label='chapter (one seed)' if i == min(j for j, g in enumerate(found) if g.chapter) else None)
    if 'than' in claim and len(found) == 1:  # a threshold on the input's own level (on two: on their difference)
        left.axhline(float(claim['than']), color='k', linestyle='--', linewidth=1, label=f"threshold {claim['than']}")
    if claim['kind'] == 'about' and len(found) == 1:
        left.axhspan(*band(claim), color=CLAIMED, zorder=0, label='band')
    one = len(names) == 1  # the input's name is the axis's label, not a tick's too
    left.set_xticks(range(len(values)), [''] if one else [wrapped(n, 22, 4) for n in names], fontsize=7)
    left.set_xlim(-0.6, len(values) - 0.4)
    left.set_ylabel(wrapped(names[0] if one else context or 'value', 36, 3), fontsize=9)
    counts = sorted({len(v) for v in values})  # inputs of different experiments may hold different seeds
    left.set_title(f"per seed ({counts[0]}{f' to {counts[-1]}' if len(counts) > 1 else ''} seeds)", fontsize=10)
    if claim.get('scale', 'raw') == 'log' and all(len(v) and (v > 0).all() for v in values):
        log_y(left)
    sequence(right, claim, row, steps, names)
    handles, labels = right.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda i: next((k for k, word in enumerate(ORDER) if word in labels[i]),
                                                          len(ORDER)))
    legends_below(fig, [(left, dict(ncol=2, fontsize=7)),
                        (right, dict(ncol=1, fontsize=7, handles=[handles[i] for i in order],
                                     labels=[labels[i] for i in order]))])
    fig.suptitle('\n'.join(title), fontsize=8.5)
    return fig


def log_y(ax) -> None:
    """A log y axis in plain numbers (0.1, 1, 3): its minor ticks labelled too where it spans under a factor of 3, those
    at 2 and 5 times a power of ten where it spans under three decades."""
    ax.set_yscale('log')
    plain = FuncFormatter(lambda v, _: f'{v:g}')
    low, high = ax.get_ylim()
    some = FuncFormatter(lambda v, _: f'{v:g}' if f'{v:.0e}'[0] in '25' else '')
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain if high / low < 3 else some if high / low < 1000 else NullFormatter())


def references(claim: dict, row: pd.Series, log: bool, names: list[str],
               verdicts: bool = True) -> tuple[float, list[tuple], str]:
    """A direction claim's axis: (the shift from the ledger's quantity to the one drawn, [(y, label, style)] of the
    boundaries its verdict reads, the axis's label). The quantity is drawn as the ledger has it (a difference, a ratio,
    one step; an input against a threshold: to the threshold), but for a threshold on two inputs' difference: the
    difference itself, with the threshold on it. The smallest effect of interest is drawn where it is one apart from
    the line it would lie on. Each label says which verdict its line decides (verdicts=False: its name alone)."""
    scale = claim.get('scale', 'raw')
    word = {'log': 'ratio', 'logit': 'odds ratio'}.get(scale, 'difference')
    none, sign = (1.0 if log else 0.0), (1 if DIRECTION[claim['kind']] == 'greater' else -1)
    effect = row['effect']
    apart = np.isfinite(effect) and (effect > 0 and effect != 1 if log else effect != 0)
    smallest = (effect ** sign if log else sign * effect) if apart else None
    decides = (lambda name, rule: f'{name} ({rule})') if verdicts else (lambda name, rule: name)
    past = 'an interval wholly past it: reproduced, or the other way reversed'
    short = [(smallest, decides('smallest effect of interest', 'wholly short of it: short of the claim'), ':')]
    short = short if smallest is not None else []
    pair = ' / ' if log else ' minus '
    if 'than' in claim and len(claim['inputs']) == 2:  # raw and paired (verdicts.validate): a - b - than
        than = float(claim['than'])
        drawn = [(0.0, 'no difference', '-'), (than, decides(f'threshold {claim["than"]}', past), '--')]
        drawn += [(than + y, name, style) for y, name, style in short]
        return than, drawn, axis_words(word, pair, names)
    if 'than' in claim:
        to = 'from' if word == 'difference' else 'to'
        return 0.0, [(none, decides(f'at the threshold {claim["than"]}', past), '-'), *short], \
            f'{word} {to} the threshold {claim["than"]}'
    drawn = [(none, decides('no effect', past), '-'), *short]
    if claim['kind'] in ('greater', 'less'):
        return 0.0, drawn, axis_words(word, pair, names)
    return 0.0, drawn, f'{word}, the weakest step\n(decided against: the step against)'


def wrapped(words: str, width: int, most: int) -> str:
    """Words in at most `most` lines of `width` characters, shortened with '...' where they need more."""
    return '\n'.join(textwrap.wrap(words, width, max_lines=most, placeholder=' ...'))


def axis_words(word: str, pair: str, names: list[str]) -> str:
    """A decision axis's label: 'difference, lam=0.9 minus baseline'; where the inputs' names would take more than
    three lines, which of the left panel's inputs it compares."""
    named = f'{word}, {pair.join(names[:2])}'
    short = f"{word}, the left panel's first input{pair}its second"
    return '\n'.join(textwrap.wrap(named if len(textwrap.wrap(named, 36)) <= 3 else short, 36))


ORDER = ('estimate', 'interval at', 'goes on')  # the right panel's legend: these first, then the boundaries
VIEW = 1.0  # the right panel's axis: its boundaries and estimates, and the intervals' ends up to this many times
# their span past them (on a log axis, in logs); an end further out, or infinite, an arrowhead at the axis's end


def view(core: np.ndarray, ends: np.ndarray, log: bool) -> tuple[float, float]:
    """The right panel's y limits: the core (estimates, boundaries, the chapter's value) and the intervals' ends up
    to VIEW times its span past it, padded; on a log axis, in logs (a ratio's end at 0 is at -inf there)."""
    with np.errstate(divide='ignore', invalid='ignore'):
        core = np.log(np.where(core > 0, core, np.nan)) if log else core
        core = core[np.isfinite(core)]
        ends = ends[~np.isnan(ends)]
        ends = np.log(np.clip(ends, 0, None)) if log else ends
    if not core.size:
        return (0.5, 2.0) if log else (-1.0, 1.0)
    span = max(np.ptp(core), abs(core).max() * 0.2, np.log(DEFAULTS['about_factor']) if log else 1e-9)
    bottom = min(core.min(), max(ends.min(initial=np.inf), core.min() - VIEW * span))
    top = max(core.max(), min(ends.max(initial=-np.inf), core.max() + VIEW * span))
    pad = 0.06 * (top - bottom)
    back = np.exp if log else float
    return float(back(bottom - pad)), float(back(top + pad))


def sequence(ax, claim: dict, row: pd.Series, steps: pd.DataFrame, names: list[str]) -> None:
    """The confidence sequence seed by seed: at each seed count n, the estimate and the interval on the first n seeds
    of each input, in the colour of the verdict at n, against the boundaries the verdict reads (a band; no effect and
    the smallest effect); the level in the title, the verdict over it. A ratio on a log axis; an end past the axis,
    or infinite, an arrowhead at its end. Every line drawn is in the legend and every legend entry is drawn."""
    finding = row['verdict'] == 'finding'
    if steps.empty:  # a claim the sequences left out: the ledger's row
        steps = pd.DataFrame([dict(seeds=row['n'], verdict=row['verdict'], estimate=row['estimate'],
                                   ci_low=row['ci_low'], ci_high=row['ci_high'])])
    steps = steps.sort_values('seeds')
    shift, drawn = 0.0, []
    log = claim.get('scale', 'raw') == 'log' or claim.get('scale') == 'logit' and claim['kind'] != 'about'  # ratios
    if claim['kind'] == 'about':
        of = {'ratio': ' / ', 'difference': ' minus '}.get(claim.get('of'))
        ylabel = axis_words(claim['of'], of, names) if of and len(names) > 1 else (
            wrapped(f"{names[0]}, median over seeds", 36, 3) if len(names) == 1 else 'median over seeds')
        edges = [row['band_low'], row['band_high']] if np.isfinite(row['band_low']) else list(band(claim))
        ax.axhspan(*edges, color=CLAIMED, zorder=0,
                   label='band' if finding else 'band (an interval wholly inside: inside; wholly outside: outside)')
    else:
        shift, drawn, ylabel = references(claim, row, log, names, verdicts=not finding)
        edges = [y for y, _, _ in drawn]
    chapter = chapter_value(claim) + shift
    estimate, low, high = (steps[k].to_numpy(float) + shift for k in ('estimate', 'ci_low', 'ci_high'))
    bottom, top = view(np.array([*estimate, *edges, chapter]), np.concatenate([low, high]), log)
    gone = False  # an arrowhead drawn: its legend entry given
    for step, y, a, b in zip(steps.itertuples(), estimate, low, high):
        if np.isnan(a) or np.isnan(b):
            continue
        color = COLORS['finding'] if finding else COLORS.get(step.verdict, OTHER)  # a finding has no verdict
        last = step.seeds == steps['seeds'].iloc[-1]
        cut = (a < bottom or log and a <= 0, b > top)  # past the axis (an infinite end, a ratio's 0, included)
        ax.plot([step.seeds] * 2, [bottom if cut[0] else a, top if cut[1] else b], color=color, linewidth=2,
                solid_capstyle='butt', gid=f'interval:{step.seeds}', label=None if not last else
                'the interval at n seeds' + ('' if finding else ', coloured by its verdict'))
        for past_axis, edge, marker in zip(cut, (bottom, top), 'v^'):
            if past_axis:
                ax.plot([step.seeds], [edge], marker=marker, color=color, markersize=5, linestyle='', clip_on=False,
                        label=None if gone else 'the interval goes on (or is infinite)')
                gone = True
        if np.isfinite(y):
            ax.plot([step.seeds], [y], 'o', color=color, markeredgecolor='k', markeredgewidth=0.4, markersize=5,
                    label='estimate (median)' if last else None)
    for y, name, style in drawn:
        ax.axhline(y, color='k', linestyle=style, linewidth=1, label=name)
    if not np.isfinite(row['estimate']):  # say why the ledger's row has no estimate
        ax.text(0.98, 0.03, textwrap.shorten(f"at {row['n']} seeds: {row['note'] or 'no estimate'}", 70,
                                             placeholder='...'), transform=ax.transAxes, ha='right', fontsize=7)
    if np.isfinite(chapter) and (chapter > 0 or not log):
        ax.plot([1], [float(np.clip(chapter, bottom, top))], 'kx', markersize=8, markeredgewidth=1.5,
                label="chapter (one seed)")
    if log:
        ax.set_yscale('log')
    ax.set_ylim(bottom, top)
    if log:
        log_y(ax)
    seeds = steps['seeds'].astype(int).tolist()
    ax.set_xlabel('seeds (the first n of each input)')
    ax.set_ylabel(ylabel, fontsize=9)
    ax.set_xlim(0.3, max(seeds) + 0.7)
    shown = seeds if len(seeds) <= 12 else seeds[::int(np.ceil(len(seeds) / 12))]
    ax.set_xticks([1, *shown], ['1', *map(str, shown)], fontsize=7)
    what = 'a finding: an interval, no verdict' if finding else f"{row['verdict']} at {row['n']} seeds"
    valid = (f"{percent(row['level'])} confidence sequence, valid at every seed count" if np.isfinite(row['level'])
             else 'no interval')
    ax.set_title(what, color=COLORS.get(row['verdict'], OTHER), fontsize=9, fontweight='bold', loc='center', pad=18)
    ax.annotate(valid, xy=(0.5, 1), xycoords='axes fraction', xytext=(0, 6), textcoords='offset points', ha='center',
                va='bottom', fontsize=8, gid='level')  # clear of the arrowheads on the axis's top


def write_ledger_figures(ctx: Context, frame: pd.DataFrame, sequences: pd.DataFrame, out: Path) -> list[Path]:
    """out/figures/claims.svg and .png, and out/claims/<id>.svg for every statistical claim with values, its right
    panel the claim's rows of sequences (analysis/ledger/sequence.py)."""
    claims = load_claims(chapter=ctx.chapter)
    rows = frame.set_index('id', drop=False)
    (out / FOLDER).mkdir(parents=True, exist_ok=True)  # the workflow's output, even without a claim to draw
    with style():
        paths = save(ledger_figure(frame, claims, ctx.chapter), out / 'figures' / LEDGER)
        for claim in claims['claims']:
            row = rows.loc[claim['id']]
            if has_figure(row):
                steps = sequences[sequences['id'] == claim['id']]
                paths += save(claim_figure(claim, row, samples(claim, ctx), steps), out / FOLDER / claim['id'],
                              formats=('svg',))  # the report's and the README's format
    return paths
