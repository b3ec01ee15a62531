"""Figures as SVG and PNG. Intervals come from analysis.stats.inference and are drawn as given (errorbar=None,
bands with fill_between); rendering is deterministic (fixed SVG hash salt, no dates in metadata).

Figures are drawn on matplotlib's Agg canvas directly, without pyplot's global state. Legends sit
outside the data; an axis's levels are named as the design's registry shows them (`epochs=8`; `8` in a panel
titled by its axis), and a level keeps one colour in every figure (the baseline's level is black). A metric is
labelled in words (analysis.text.label: 'train pass rate', not pass_train). Every figure has a title, clear of its
panels' titles (constrained layout makes room for it).
"""
from __future__ import annotations

import io
import textwrap
from contextlib import contextmanager
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from matplotlib.transforms import ScaledTranslation

from agentrl.files import write_bytes
from workflow.design import AXES, text

from ..ledger.chapter import Context, printed
from ..ledger.claims import chapter_constant
from ..records.load import Runs
from ..stats.cells import axes, block_name, blocks, order
from ..stats.compare import COLUMNS as COMPARE_COLUMNS
from ..stats.inference import summarize
from ..stats.metrics import EPOCH, TRAIN
from ..text import label

RC = {'svg.hashsalt': 'analysis', 'svg.fonttype': 'none', 'figure.dpi': 100, 'savefig.dpi': 100}
METADATA = {'svg': {'Date': None, 'Creator': None}, 'png': {'Software': None}}
FORMATS = ('svg', 'png')
FOREST_METRICS = ('pass_train', 'pass_heldout', 'reward_21_30', 'reward_same_episodes')  # the main outcomes, where
# a cell has them (the last: runs of another length); all in the tables
CLIP, DUAL = 0.2, 3.0  # Figure 8.2: eps and the dual-clip constant c
PAGE_WIDTH = 7.0  # inches: a figure a paper takes at the width of its page
TITLE = dict(fontsize=11, fontweight='bold')  # every figure's title (fig.suptitle)
GAP = 0.06  # inches between an axes' tick labels or label and its legend


@contextmanager
def style():
    """The house style: seaborn's whitegrid and the deterministic output settings."""
    with matplotlib.rc_context(RC), sns.axes_style('whitegrid'):
        yield


def panels(columns: int, width: float = 3.5, height: float = 3.2, **options):
    """One row of `columns` panels, each about width x height inches -> (figure, list of axes)."""
    return page(columns, columns, width * columns, height, **options)


def page(count: int, columns: int = 3, width: float = PAGE_WIDTH, height: float = 2.6, **options):
    """A page-wide figure of `count` panels in rows of `columns`, laid out by matplotlib's constrained layout ->
    (figure, list of count axes); the grid's unused places are removed."""
    rows = max(-(-count // columns), 1)
    fig = Figure(figsize=(width, height * rows), layout='constrained')
    FigureCanvasAgg(fig)
    grid = list(fig.subplots(rows, columns, squeeze=False, **options).flat)
    for ax in grid[max(count, 1):]:
        fig.delaxes(ax)
    return fig, grid[:max(count, 1)]


def save(fig: Figure, stem: Path, formats: tuple[str, ...] = FORMATS) -> list[Path]:
    """Write fig as stem.svg and stem.png (or the formats given) atomically. (Legends are placed explicitly:
    loc='best' is slow.)"""
    paths = []
    for fmt in formats:
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt, metadata=METADATA[fmt], bbox_inches='tight')
        paths.append(write_bytes(stem.with_name(f'{stem.name}.{fmt}'), buffer.getvalue()))  # a name may hold a dot
    return paths


def numbered(rows: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """Rows whose label is prefix + a number ('k=10', 'epoch=3'), with that number as column x."""
    rows = rows[rows['row'].str.startswith(prefix)]
    return rows.assign(x=rows['row'].str.removeprefix(prefix).astype(float))


def legend_outside(ax, **options) -> None:
    """The axes' legend under its data, tick labels and label (saved with bbox_inches='tight', never cropped)."""
    legends_below(ax.get_figure(), [(ax, options)])


def legends_below(fig: Figure, legends: list[tuple]) -> None:
    """Each (axes, options) legend centred under its axes' tick labels and label, clear of them and of the panels
    beside it: how far they reach under the axes is measured on one draw and held in points, so that the layout may
    change an axes' height without its legend meeting them."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax, options in legends:
        reach = ax.xaxis.get_tightbbox(renderer)
        drop = (ax.get_window_extent(renderer).y0 - reach.y0 if reach is not None else 0.0) / fig.dpi + GAP  # inches
        place = ax.transAxes + ScaledTranslation(0, -drop, fig.dpi_scale_trans)
        options = dict(ncol=2, fontsize='small', frameon=False, borderaxespad=0) | options
        ax.legend(loc='upper center', bbox_to_anchor=(0.5, 0), bbox_transform=place, **options)


def level_name(field: str, value) -> str:
    """A level as the registry shows it (`epochs=8`); a field outside the registry as `field=value`."""
    return AXES[field].show(value) if field in AXES else f'{field}={text(value)}'


def level_colors(levels: list, baseline_level) -> dict:
    """One colour per level of an axis, the same in every figure: black for the baseline's, a palette by order."""
    others = [level for level in sorted(levels, key=order) if level != baseline_level]
    return {baseline_level: 'k', **dict(zip(others, sns.color_palette('colorblind', len(others) or 1)))}


def band(ax, summary: pd.DataFrame, x: str, label: str, color, marker: str | None = 'o') -> None:
    """A mean line (with markers) and its CI band, from a summary frame sorted by x."""
    summary = summary.sort_values(x)
    sns.lineplot(data=summary, x=x, y='mean', ax=ax, errorbar=None, marker=marker, color=color, label=label)
    ax.fill_between(summary[x], summary['ci_low'], summary['ci_high'], color=color, alpha=0.25, linewidth=0)


def no_data(ax, what: str) -> None:
    ax.text(0.5, 0.5, f'no data: {what}', ha='center', va='center', transform=ax.transAxes)


def _rows(ctx: Context, table: str, metric: str, prefix: str, source: str | None = None) -> pd.DataFrame:
    rows = ctx.values[(ctx.values['table'] == table) & (ctx.values['metric'] == metric)]
    return numbered(rows if source is None else rows[rows['source'] == source], prefix)


def _chapter_points(ctx: Context, table: str, metric: str, prefix: str) -> tuple[list[float], list[float]]:
    values = ctx.chapter['tables'][table]['values']
    points = sorted((float(str(row).removeprefix(prefix)), printed(m[metric])[0]) for row, m in values.items()
                    if str(row).startswith(prefix) and metric in m)
    return [p[0] for p in points], [p[1] for p in points]


def figure_8_1(ctx: Context, stem: Path) -> list[Path]:
    """Left: ESS/N against k (T1). Right: log-weight after 10 updates against policy tokens (F8.1 records)."""
    fig, (left, right) = panels(2)
    ess = _rows(ctx, 'T1', 'ess_over_n', 'k=')
    if len(ess):
        band(left, summarize(ess, ['x']), 'x', 'ours (mean, 95% CI)', sns.color_palette()[0])
    else:
        no_data(left, 'T1 ess_over_n')
    left.plot(*_chapter_points(ctx, 'T1', 'ess_over_n', 'k='), 'kx', label='chapter (one seed)')
    left.set(xlabel='REINFORCE updates k', ylabel=label('ess_over_n'), ylim=(0, 1.05))
    left.xaxis.set_major_locator(MaxNLocator(integer=True))
    legend_outside(left)
    points = ctx.values[(ctx.values['kind'] == 'experiment') & (ctx.values['table'] == 'F8.1')]
    points = points.pivot_table(index=['source', 'seed', 'row'], columns='metric', values='value').reset_index()
    if len(points) and {'policy_tokens', 'log_w_k10'} <= set(points.columns):
        sns.scatterplot(data=points, x='policy_tokens', y='log_w_k10', ax=right, s=12, alpha=0.5, linewidth=0)
    else:
        no_data(right, 'F8.1 policy_tokens, log_w_k10')
    right.set(xlabel=label('policy_tokens'), ylabel=label('log_w_k10'))
    fig.suptitle('Figure 8.1: importance weights after k updates', **TITLE)
    return save(fig, stem)


def clipped_objective(ratio: np.ndarray, advantage: float, dual_clip: float | None = None) -> np.ndarray:
    """Eq. (8.3) per token: min(rho A, clip(rho, 1 - eps, 1 + eps) A), floored at c A for A < 0 with a dual clip."""
    out = np.minimum(ratio * advantage, np.clip(ratio, 1 - CLIP, 1 + CLIP) * advantage)
    return np.maximum(out, dual_clip * advantage) if dual_clip is not None and advantage < 0 else out


def figure_8_2(stem: Path) -> list[Path]:
    """The clipped objective against the ratio for A = +1 and A = -1 (analytic)."""
    ratio = np.linspace(0.0, 4.0, 401)
    fig, grid = panels(2)
    for ax, advantage in zip(grid, (1.0, -1.0)):
        ax.plot(ratio, ratio * advantage, 'k--', linewidth=1, label='unclipped rho A')
        sns.lineplot(x=ratio, y=clipped_objective(ratio, advantage), ax=ax, errorbar=None, label='clipped')
        if advantage < 0:
            sns.lineplot(x=ratio, y=clipped_objective(ratio, advantage, DUAL), ax=ax, errorbar=None, linestyle=':',
                         linewidth=2.5, label=f'dual clip c = {DUAL:g}')
        for edge in (1 - CLIP, 1 + CLIP):
            ax.axvline(edge, color='grey', linewidth=0.5)
        ax.set(xlabel='ratio rho', ylabel='per-token objective', title=f'A = {advantage:+g}')
    legends_below(fig, [(ax, {}) for ax in grid])
    fig.suptitle('Figure 8.2: the clipped objective against the ratio', **TITLE)
    return save(fig, stem)


def figure_8_3(ctx: Context, stem: Path) -> list[Path]:
    """Clip fraction and approximate KL per epoch: the baseline training run and the 16-epoch batch (T10)."""
    fig, grid = panels(2)
    colors = sns.color_palette()
    for ax, metric in zip(grid, ('clip_frac', 'approx_kl')):
        train = _rows(ctx, TRAIN, metric, EPOCH, ctx.baseline)
        sixteen = _rows(ctx, 'T10', metric, EPOCH)
        for frame, name, color in ((train, 'training run (baseline)', colors[0]),
                                   (sixteen, 'one batch, 16 epochs', colors[1])):
            if len(frame):
                band(ax, summarize(frame, ['x']), 'x', name, color)
        if not len(train) and not len(sixteen):
            no_data(ax, metric)
        for table, marker in (('T8', 'kx'), ('T10', 'k+')):
            ax.plot(*_chapter_points(ctx, table, metric, EPOCH), marker, label=f'chapter {table} (one seed)')
        if metric == 'approx_kl':
            target = chapter_constant('kl_target')  # the chapter's early-stopping target, marked in Figure 8.3
            ax.axhline(target, color='k', linestyle='--', linewidth=1, label=f'target {target:g}')
        ax.set(xlabel='epoch', ylabel=label(metric))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    legends_below(fig, [(ax, dict(ncol=1)) for ax in grid])
    fig.suptitle('Figure 8.3: clip fraction and approximate KL per epoch', **TITLE)
    return save(fig, stem)


def common_seeds(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of the seeds every cell (name) in rows has."""
    seeds = set.intersection(*(set(group) for _, group in rows.groupby('name')['seed'])) if len(rows) else set()
    return rows[rows['seed'].isin(seeds)]


def curve_panels(ctx: Context) -> list[tuple[str, list[tuple[str, str, object]], int]]:
    """The learning curves' panels: each ablation axis, then each factorial block -> (title, [(cell, legend label,
    colour)] with the baseline's first in black, legend columns). An axis's panel labels a cell by its level (the
    title names the axis), a block's by its levels in the title's order (`8 x 4` under `epochs x minibatches`), in the
    forest plots' colours."""
    base = ctx.configs[ctx.baseline] if ctx.baseline in ctx.configs else {}
    out = []
    for field, cells in axes(ctx.configs, ctx.baseline).items():
        levels = {cell: ctx.configs[cell].get(field) for cell in [ctx.baseline, *cells]}
        colors = level_colors(list(levels.values()), levels[ctx.baseline])
        ordered = sorted(levels, key=lambda c: order(levels[c]))
        out.append((field, [(cell, text(levels[cell]) + (' (baseline)' if cell == ctx.baseline else ''),
                             colors[levels[cell]]) for cell in ordered], 2))
    for fields, cells in blocks(ctx.configs, ctx.baseline).items():
        colors = block_colors(cells)
        named = [(cell, ' x '.join(text(ctx.configs[cell][f]) for f in fields), colors[cell]) for cell in cells]
        baseline = ' x '.join(text(base[f]) for f in fields) + ' (baseline)'
        out.append((' x '.join(fields), [(ctx.baseline, baseline, 'k'), *named], 2))
    return out


def learning_curves(ctx: Context, runs: Runs, columns: int = 3) -> Figure:
    """Batch reward against training episodes (iteration x episodes_per_iteration), a panel per ablation axis (the
    baseline and each level) and per factorial block (the baseline and each of its cells) in rows of `columns`: mean
    and 95% CI band over the seeds every cell of the panel has."""
    iterations = runs.table('iterations')
    shown = curve_panels(ctx)
    fig, grid = page(len(shown), columns, height=2.9, sharey=True)
    legends = []
    for i, (ax, (title, cells, ncol)) in enumerate(zip(grid, shown)):
        rows = common_seeds(iterations[iterations['name'].isin([cell for cell, _, _ in cells])])
        for cell, name, color in cells:
            curve = rows[rows['name'] == cell]
            if len(curve):
                per = ctx.configs[cell]['episodes_per_iteration']
                curve = curve.assign(x=(curve['iteration'] + 1) * per, value=curve['reward'])
                band(ax, summarize(curve, ['x']), 'x', name, color, None)
        ax.set(xlabel='training episodes', ylabel=label('reward') if i % columns == 0 else '', title=title)
        ax.xaxis.set_major_locator(MaxNLocator(3, integer=True))
        if len(rows):
            legends.append((ax, dict(title=f"{rows['seed'].nunique()} seeds each", fontsize=8, title_fontsize=8,
                                     handlelength=1.2, columnspacing=0.8, ncol=ncol)))
        else:
            no_data(ax, f'iterations of the {title} cells')
    if not shown:
        no_data(grid[0], 'no ablation axis: cells differing from the baseline in one field')
    legends_below(fig, legends)
    fig.suptitle('Batch reward during training, per ablation axis and factorial block\n'
                 '(mean and 95% CI of the mean over the seeds every cell of a panel has)', **TITLE)
    return fig


def block_colors(cells: list[str]) -> dict:
    """A factorial block's cells (the baseline's excluded) -> one colour each, by the block's order, in every figure."""
    return dict(zip(cells, sns.color_palette('colorblind', len(cells))))


def axis_rows(comparisons: pd.DataFrame, axis: str, ctx: Context) -> pd.DataFrame:
    """One axis's rows with a label (`epochs=8`) and its level's colour."""
    rows = comparisons[comparisons['axis'] == axis]
    levels = {cell: ctx.configs[cell][axis] for cell in rows['cell']}
    colors = level_colors(list(levels.values()), ctx.configs[ctx.baseline][axis])
    return rows.assign(label=[level_name(axis, levels[c]) for c in rows['cell']],
                       color=[colors[levels[c]] for c in rows['cell']])


def block_rows(comparisons: pd.DataFrame, fields: tuple[str, ...], cells: list[str], ctx: Context) -> pd.DataFrame:
    """A factorial block's rows: each interaction (black), then each of its cells minus the baseline (the one-factor
    cells' from their axes), by level; labelled by the block's levels (`epochs=8, minibatches=8`)."""
    name = block_name(fields)
    rows = comparisons[comparisons['cell'].isin(cells) & ((comparisons['axis'] == name)
                                                         | (comparisons['contrast'] == 'difference'))]
    interactions = rows['contrast'] == 'interaction'
    rank = rows['cell'].map({cell: rank for rank, cell in enumerate(cells)}) - len(cells) * interactions
    rows = rows.assign(rank=rank).sort_values('rank', kind='stable')
    palette = block_colors(cells)
    levels = {cell: ', '.join(level_name(f, ctx.configs[cell][f]) for f in fields) for cell in cells}
    kinds = list(zip(rows['cell'], rows['contrast']))
    return rows.assign(label=[levels[c] if k == 'difference' else f'interaction at {levels[c]}' for c, k in kinds],
                       color=[palette[c] if k == 'difference' else 'k' for c, k in kinds])


def episodes_note(part: pd.DataFrame, lengths_differ: bool) -> str:
    """Where cells and the baseline train for different lengths: the training episodes a panel compares."""
    pairs = set(zip(part['episodes_cell'], part['episodes_baseline']))
    if not lengths_differ or len(pairs) != 1:
        return ''
    cell, base = pairs.pop()
    return f'\nafter {cell} episodes each' if cell == base else f'\nafter {cell} vs {base} episodes'


def forest(comparisons: pd.DataFrame, axis: str, ctx: Context) -> Figure:
    """One ablation axis or factorial block: each row's contrast with its 95% CI, a panel per main metric, a row of
    the figure per label that has a contrast (a gap where a cell lacks the metric; no row for a contrast the design
    cannot make, such as an interaction whose one-factor cells it lacks)."""
    block = {block_name(fields): (fields, cells) for fields, cells in blocks(ctx.configs, ctx.baseline).items()}
    rows = block_rows(comparisons, *block[axis], ctx) if axis in block else axis_rows(comparisons, axis, ctx)
    rows = rows[rows['metric'].isin(FOREST_METRICS) & rows['diff'].notna()]
    metrics = [m for m in FOREST_METRICS if m in set(rows['metric'])]
    labels = list(dict.fromkeys(rows['label']))
    lengths_differ = (rows['episodes_cell'] != rows['episodes_baseline']).any()
    fig, grid = panels(max(len(metrics), 1), width=2.6, height=0.4 * len(labels) + 1.8, sharey=True)
    for ax, metric in zip(grid, metrics):
        part = rows[rows['metric'] == metric]
        y = [labels.index(name) for name in part['label']]
        ax.hlines(y, part['ci_low'], part['ci_high'], color=list(part['color']))
        ax.scatter(part['diff'], y, color=list(part['color']), zorder=3)
        ax.axvline(0, color='k', linewidth=0.5)
        ax.set_yticks(range(len(labels)), labels)
        ax.set(xlabel=f'{wrap(label(metric), 24)}{episodes_note(part, lengths_differ)}', ylabel='',
               ylim=(-0.6, len(labels) - 0.4))
    if not metrics:
        no_data(grid[0], f'no contrast of {axis} on the main metrics')
    what = ('each cell minus the baseline' + (', and the interaction' if (rows['contrast'] == 'interaction').any()
                                              else '') if axis in block else 'each level minus the baseline')
    fig.suptitle(f"{axis.replace('_x_', ' x ')}: {what} (95% CI)", **TITLE)
    return fig


def wrap(words: str, width: int) -> str:
    """Words in lines of at most width characters (an axis label under a narrow panel)."""
    return '\n'.join(textwrap.wrap(words, width))


def write_figures(ctx: Context, runs: Runs, comparisons: pd.DataFrame, folder: Path) -> list[Path]:
    """Every figure into folder: fig8_1, fig8_2, fig8_3, learning_curves, forest_<axis> for each axis and block."""
    comparisons = comparisons if comparisons is not None else pd.DataFrame(columns=COMPARE_COLUMNS)
    with style():
        paths = figure_8_1(ctx, folder / 'fig8_1') + figure_8_2(folder / 'fig8_2')
        paths += figure_8_3(ctx, folder / 'fig8_3') + save(learning_curves(ctx, runs), folder / 'learning_curves')
        for axis in dict.fromkeys(comparisons['axis']):
            paths += save(forest(comparisons, axis, ctx), folder / f'forest_{axis}')
    return paths
