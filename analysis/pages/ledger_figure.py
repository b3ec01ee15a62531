"""The claims ledger as pictures: figures/claims (every claim's estimate against what the chapter claims, one row per
claim, grouped by the chapter's sections in its order) and claims/<id> (one small figure per claim: its seeds, and its
decision look by look).

The ledger figure has two panels, one per part of a claim, each on a linear axis in the claim's own tolerance. A
direction claim's row (left) reads its estimate as a multiple of the smallest effect of interest, the claimed direction
to the right: no effect at 0, the smallest effect at 1 (where a threshold claim has none, 1 is log 1.25, the
about-factor's step; a ratio's multiple is taken on the log scale). A size claim's row (right) reads where its estimate
falls against the claimed band: the chapter's value at 0, the band's edges at -1 and 1 (on the claim's scale: log, logit
or raw). The estimate and 95% CI are the ledger's, placed as given; beyond an axis's end a row ends in an arrow with the
estimate's position written beside it. The chapter's single-seed value is placed the same way from its printed numbers.
"""
from __future__ import annotations

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
from ..ledger.verdicts import DIRECTION, band, per_seed, to_scale
from ..stats.inference import DEFAULTS
from ..text import factor, in_words
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
    """The ledger's rows with their places on the figure's axis: x, x_low, x_high (the CI), chapter_x (NaN for a check
    or a claim without an estimate)."""
    by_id = {c['id']: c for c in claims['claims']}
    out = []
    for _, row in frame.iterrows():
        if row['group'] == 'check' or not np.isfinite(row['estimate']):
            out.append(dict(id=row['id'], x=np.nan, x_low=np.nan, x_high=np.nan, chapter_x=np.nan))
            continue
        place = placer(row)
        ends = sorted([float(place(row['ci_low'])), float(place(row['ci_high']))])
        out.append(dict(id=row['id'], x=float(place(row['estimate'])), x_low=ends[0], x_high=ends[1],
                        chapter_x=float(place(chapter_value(by_id[row['id']])))))
    return frame.merge(pd.DataFrame(out), on='id', how='left', validate='one_to_one')


def ledger_figure(frame: pd.DataFrame, claims: dict, chapter: dict) -> Figure:
    """Every claim of the ledger as one row, in its part's panel: its region (grey), our estimate and 95% CI coloured by
    the verdict, the chapter's value (x); a check's pass or fail, without a seed count. Each panel's unit is its label,
    at the top where a reader starts; a block's title runs over the ids and the direction panel only, each panel's
    verdicts under it; the seeds are said once where every claim has the same, else in a column on the right."""
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
    note = fig.text(centre, top_of(legend) + 0.05 / height, f'Our estimate and its 95% CI at {at}, in the colour of '
                    'its verdict; a deterministic check passes or fails.', ha='center', va='bottom', fontsize=8)
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
    return handles


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
    claim's region, CI, estimate and the chapter's value, each cut to the panel's axis (an arrow and the estimate's
    position where it goes on)."""
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


def claim_figure(claim: dict, row: pd.Series, found: list[Selected], looks: pd.DataFrame) -> Figure:
    """Left: each input's values by seed at the deciding look (a seed's values joined where paired), the chapter's
    printed values (x), a threshold on one input's level. Right: the claim's quantity at every look (a threshold on two
    inputs' difference is drawn there, on the difference), coloured by that look's verdict, against its band or its
    no-effect line, the chapter's value at one seed. The claim's words over both, clear of the panels' titles."""
    title = textwrap.wrap(f"{claim['id']}: {claim['claim']}", 110)
    fig = Figure(figsize=(9.0, 3.2 + 0.15 * len(title)), layout='constrained')
    FigureCanvasAgg(fig)
    fig.get_layout_engine().set(wspace=0.08)
    left, right = fig.subplots(1, 2, gridspec_kw=dict(width_ratios=(1.1, 1)))
    log = claim.get('scale', 'raw') in RATIO_SCALES
    context, names = factor([f.label for f in found])
    if context:  # 'the best of [a] m, [b] m' over axis m: 'the best of a; b'
        names = [n.replace(f' {context},', ';').removesuffix(f' {context}') if n.startswith('the best of') else n
                 for n in names]
    context, names = in_words(context), [in_words(n) for n in names]
    seeds = int(looks.loc[looks['stage'] == row['stage'], 'seeds'].iloc[0])  # the deciding look's
    values = [f.values.iloc[:seeds] for f in found]
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
    left.set_title(f'per seed ({seeds} seeds)', fontsize=10)
    if claim.get('scale', 'raw') == 'log' and all((v > 0).all() for v in values):
        log_y(left)
    decision(right, claim, row, looks, log, names)
    legends_below(fig, [(ax, dict(ncol=3, fontsize=7)) for ax in (left, right)])
    fig.suptitle('\n'.join(title), fontsize=8.5)
    return fig


def log_y(ax) -> None:
    """A log y axis in plain numbers (0.1, 1, 3): its minor ticks labelled too where it spans under a decade, those
    at 2 and 5 times a power of ten where it spans under three."""
    ax.set_yscale('log')
    plain = FuncFormatter(lambda v, _: f'{v:g}')
    low, high = ax.get_ylim()
    some = FuncFormatter(lambda v, _: f'{v:g}' if f'{v:.0e}'[0] in '25' else '')
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain if high / low < 10 else some if high / low < 1000 else NullFormatter())


def references(claim: dict, row: pd.Series, log: bool, names: list[str]) -> tuple[float, list[tuple], str]:
    """A direction claim's decision axis: (the shift from the ledger's quantity to the one drawn, [(y, label, style)]
    of its reference lines, the axis's label). The quantity is drawn as the ledger has it (a difference, a ratio, the
    weakest step; an input against a threshold: to the threshold), but for a threshold on two inputs' difference:
    the difference itself, with the threshold on it. The smallest effect of interest is drawn where it is one apart
    from the line it would lie on."""
    scale = claim.get('scale', 'raw')
    word = {'log': 'ratio', 'logit': 'odds ratio'}.get(scale, 'difference')
    none, sign = (1.0 if log else 0.0), (1 if DIRECTION[claim['kind']] == 'greater' else -1)
    effect = row['effect']
    apart = np.isfinite(effect) and (effect > 0 and effect != 1 if log else effect != 0)
    smallest = (effect ** sign if log else sign * effect) if apart else None
    pair = ' / ' if log else ' minus '
    if 'than' in claim and len(claim['inputs']) == 2:  # raw and paired (verdicts.validate): a - b - than
        than = float(claim['than'])
        drawn = [(0.0, 'no difference', '-'), (than, f'threshold {claim["than"]}', '--')]
        drawn += [(than + smallest, 'smallest effect of interest', ':')] if smallest is not None else []
        return than, drawn, axis_words(word, pair, names)
    if 'than' in claim:
        to = 'from' if word == 'difference' else 'to'
        drawn = [(none, f'at the threshold {claim["than"]}', '-')]
        drawn += [(smallest, 'smallest effect of interest', ':')] if smallest is not None else []
        return 0.0, drawn, f'{word} {to} the threshold {claim["than"]}'
    drawn = [(none, 'no effect', '-')]
    drawn += [(smallest, 'smallest effect of interest', ':')] if smallest is not None else []
    if claim['kind'] in ('greater', 'less'):
        return 0.0, drawn, axis_words(word, pair, names)
    return 0.0, drawn, f'{word}, the weakest step'


def wrapped(words: str, width: int, most: int) -> str:
    """Words in at most `most` lines of `width` characters, shortened with '...' where they need more."""
    return '\n'.join(textwrap.wrap(words, width, max_lines=most, placeholder=' ...'))


def axis_words(word: str, pair: str, names: list[str]) -> str:
    """A decision axis's label: 'difference, lam=0.9 minus baseline'; where the inputs' names would take more than
    three lines, which of the left panel's inputs it compares."""
    named = f'{word}, {pair.join(names[:2])}'
    short = f"{word}, the left panel's first input{pair}its second"
    return '\n'.join(textwrap.wrap(named if len(textwrap.wrap(named, 36)) <= 3 else short, 36))


def decision(ax, claim: dict, row: pd.Series, looks: pd.DataFrame, log: bool, names: list[str]) -> None:
    """The quantity at each look with its 95% CI, coloured by that look's verdict, against the band or no effect (and
    a threshold where the claim has one); every line drawn is in the legend and every legend entry is drawn."""
    shift = 0.0
    if claim['kind'] == 'about':
        ax.axhspan(*band(claim), color=CLAIMED, zorder=0, label='band')
        of = {'ratio': ' / ', 'difference': ' minus '}.get(claim.get('of'))
        ylabel = axis_words(claim['of'], of, names) if of and len(names) > 1 else (
            wrapped(f"{names[0]}, median over seeds", 36, 3) if len(names) == 1 else 'median over seeds')
    else:
        shift, drawn, ylabel = references(claim, row, log, names)
        for y, name, style in drawn:
            ax.axhline(y, color='k', linestyle=style, linewidth=1, label=name)
    for _, look in looks.iterrows():
        if np.isfinite(look['estimate']):
            color = COLORS.get(look['verdict'], OTHER)
            ax.plot([look['seeds']] * 2, [look['ci_low'] + shift, look['ci_high'] + shift], color=color, linewidth=2)
            ax.plot([look['seeds']], [look['estimate'] + shift], 'o', color=color, markeredgecolor='k',
                    markeredgewidth=0.4)
    if not np.isfinite(row['estimate']):  # say why the last look has no estimate
        ax.text(0.98, 0.03, textwrap.shorten(f"at {row['n']} seeds: {row['note'] or 'no estimate'}", 70,
                                             placeholder='...'), transform=ax.transAxes, ha='right', fontsize=7)
    chapter = chapter_value(claim) + shift
    if np.isfinite(chapter):
        ax.plot([1], [chapter], 'kx', markersize=8, markeredgewidth=1.5, label="chapter (one seed)")
    if log and (looks['ci_low'].dropna() > 0).all() and (not np.isfinite(chapter) or chapter > 0):
        log_y(ax)
    ax.set_xlabel('seeds at the look')
    ax.set_ylabel(ylabel, fontsize=9)
    ax.set_xlim(0, looks['seeds'].max() * 1.08 + 1)
    ax.set_xticks([1, *looks['seeds']], ['1', *map(str, looks['seeds'])], fontsize=7)
    ax.set_title(f"{row['verdict']} at {row['n']} seeds", color=COLORS.get(row['verdict'], OTHER), fontsize=9,
                 fontweight='bold')


def write_ledger_figures(ctx: Context, frame: pd.DataFrame, looks: pd.DataFrame, out: Path) -> list[Path]:
    """out/figures/claims.svg and .png, and out/claims/<id>.svg for every statistical claim with values."""
    claims = load_claims(chapter=ctx.chapter)
    rows = frame.set_index('id', drop=False)
    (out / FOLDER).mkdir(parents=True, exist_ok=True)  # the workflow's output, even without a claim to draw
    with style():
        paths = save(ledger_figure(frame, claims, ctx.chapter), out / 'figures' / LEDGER)
        for claim in claims['claims']:
            row = rows.loc[claim['id']]
            if has_figure(row):
                history = looks[looks['id'] == claim['id']]
                paths += save(claim_figure(claim, row, samples(claim, ctx), history), out / FOLDER / claim['id'],
                              formats=('svg',))  # the report's and the README's format
    return paths
