"""Figures as SVG and PNG. Intervals come from analysis.stats and are drawn as given (errorbar=None,
bands with fill_between); rendering is deterministic (fixed SVG hash salt, no dates in metadata).

Figures are drawn on matplotlib's Agg canvas directly, without pyplot's global state.
"""
from __future__ import annotations

import io
from contextlib import contextmanager
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .cells import axes
from .chapter import Context, printed
from .compare import COLUMNS as COMPARE_COLUMNS
from .files import write_bytes
from .load import Runs
from .metrics import EPOCH, TRAIN
from .stats import summarize

RC = {'svg.hashsalt': 'analysis', 'svg.fonttype': 'none', 'figure.dpi': 100, 'savefig.dpi': 100}
METADATA = {'svg': {'Date': None, 'Creator': None}, 'png': {'Software': None}}
FORMATS = ('svg', 'png')
FOREST_METRICS = ('pass_train', 'pass_heldout', 'reward_21_30')  # the main outcomes; all in the tables
KL_TARGET = 0.02  # the chapter's early-stopping target, marked in Figure 8.3
CLIP, DUAL = 0.2, 3.0  # Figure 8.2: eps and the dual-clip constant c


@contextmanager
def style():
    """The house style: seaborn's whitegrid and the deterministic output settings."""
    with matplotlib.rc_context(RC), sns.axes_style('whitegrid'):
        yield


def panels(columns: int, width: float = 4.5, height: float = 3.6, **options):
    """A figure on an Agg canvas with one row of `columns` axes -> (figure, array of axes)."""
    fig = Figure(figsize=(width * columns, height))
    FigureCanvasAgg(fig)
    return fig, fig.subplots(1, columns, squeeze=False, **options)[0]


def save(fig: Figure, stem: Path) -> list[Path]:
    """Write fig as stem.svg and stem.png atomically. (Legends are placed explicitly: loc='best' is slow.)"""
    paths = []
    for fmt in FORMATS:
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt, metadata=METADATA[fmt], bbox_inches='tight')
        paths.append(write_bytes(stem.with_suffix(f'.{fmt}'), buffer.getvalue()))
    return paths


def numbered(rows: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """Rows whose label is prefix + a number ('k=10', 'epoch=3'), with that number as column x."""
    rows = rows[rows['row'].str.startswith(prefix)]
    return rows.assign(x=rows['row'].str.removeprefix(prefix).astype(float))


def band(ax, summary: pd.DataFrame, x: str, label: str, color) -> None:
    """A mean line with markers and its CI band, from a summary frame sorted by x."""
    summary = summary.sort_values(x)
    sns.lineplot(data=summary, x=x, y='mean', ax=ax, errorbar=None, marker='o', color=color, label=label)
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
    left.set(xlabel='REINFORCE updates k', ylabel='ESS / N', ylim=(0, 1.05))
    left.xaxis.set_major_locator(MaxNLocator(integer=True))
    left.legend(loc='upper right')
    points = ctx.values[(ctx.values['kind'] == 'experiment') & (ctx.values['table'] == 'F8.1')]
    points = points.pivot_table(index=['source', 'seed', 'row'], columns='metric', values='value').reset_index()
    if len(points) and {'policy_tokens', 'log_w_k10'} <= set(points.columns):
        sns.scatterplot(data=points, x='policy_tokens', y='log_w_k10', ax=right, s=12, alpha=0.5, linewidth=0)
    else:
        no_data(right, 'F8.1 policy_tokens, log_w_k10')
    right.set(xlabel='policy tokens in the episode', ylabel='log w after 10 updates')
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
        ax.legend(loc='upper left' if advantage > 0 else 'lower left')
    return save(fig, stem)


def figure_8_3(ctx: Context, stem: Path) -> list[Path]:
    """Clip fraction and approximate KL per epoch: the baseline training run and the 16-epoch batch (T10)."""
    fig, grid = panels(2)
    colors = sns.color_palette()
    for ax, metric in zip(grid, ('clip_frac', 'approx_kl')):
        train = _rows(ctx, TRAIN, metric, EPOCH, ctx.baseline)
        sixteen = _rows(ctx, 'T10', metric, EPOCH)
        for frame, label, color in ((train, 'training run (baseline)', colors[0]),
                                    (sixteen, 'one batch, 16 epochs', colors[1])):
            if len(frame):
                band(ax, summarize(frame, ['x']), 'x', label, color)
        if not len(train) and not len(sixteen):
            no_data(ax, metric)
        for table, marker in (('T8', 'kx'), ('T10', 'k+')):
            ax.plot(*_chapter_points(ctx, table, metric, EPOCH), marker, label=f'chapter {table} (one seed)')
        if metric == 'approx_kl':
            ax.axhline(KL_TARGET, color='k', linestyle='--', linewidth=1, label=f'target {KL_TARGET:g}')
        ax.legend(loc='upper left', fontsize='small')
        ax.set(xlabel='epoch', ylabel=metric)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    return save(fig, stem)


def learning_curves(ctx: Context, runs: Runs, stem: Path) -> list[Path]:
    """Batch reward against iteration for the baseline and every cell of the lambda axis, CI bands over seeds."""
    cells = [c for c in [ctx.baseline] + axes(ctx.configs, ctx.baseline).get('lam', []) if c]
    iterations = runs.table('iterations')
    fig, (ax,) = panels(1, width=6)
    for cell, color in zip(cells, sns.color_palette()):
        rows = iterations[iterations['name'] == cell]
        if len(rows):
            curve = rows.assign(x=rows['iteration'] + 1, value=rows['reward'])
            band(ax, summarize(curve, ['x']), 'x', f'{cell} (lam={ctx.configs[cell]["lam"]:g})', color)
    if len(iterations[iterations['name'].isin(cells)]):
        ax.legend(loc='lower right')
    else:
        no_data(ax, 'iterations of the lambda cells')
    ax.set(xlabel='iteration', ylabel='batch reward')
    return save(fig, stem)


def forest(comparisons: pd.DataFrame, axis: str, stem: Path) -> list[Path]:
    """One ablation axis: each cell's difference from the baseline with its 95% Welch CI, a panel per main metric."""
    rows = comparisons[(comparisons['axis'] == axis) & comparisons['metric'].isin(FOREST_METRICS)]
    metrics = [m for m in FOREST_METRICS if m in set(rows['metric'])]
    fig, grid = panels(max(len(metrics), 1), width=3.2, height=0.4 * rows['cell'].nunique() + 1.4, sharey=True)
    for ax, metric in zip(grid, metrics):
        part = rows[rows['metric'] == metric].reset_index(drop=True)
        y = np.arange(len(part))
        ax.hlines(y, part['ci_low'], part['ci_high'], color='grey')
        sns.scatterplot(x=part['diff'], y=y, ax=ax, color='k')
        ax.axvline(0, color='k', linewidth=0.5)
        ax.set_yticks(y, [f'{axis}={level}' for level in part['level']])
        ax.set(xlabel=f'{metric}: cell - baseline', ylabel='', ylim=(-0.6, len(part) - 0.4))
    return save(fig, stem)


def write_figures(ctx: Context, runs: Runs, comparisons: pd.DataFrame, folder: Path) -> list[Path]:
    """Every figure into folder: fig8_1, fig8_2, fig8_3, learning_curves, forest_<axis> for each axis."""
    comparisons = comparisons if comparisons is not None else pd.DataFrame(columns=COMPARE_COLUMNS)
    with style():
        paths = figure_8_1(ctx, folder / 'fig8_1') + figure_8_2(folder / 'fig8_2')
        paths += figure_8_3(ctx, folder / 'fig8_3') + learning_curves(ctx, runs, folder / 'learning_curves')
        for axis in dict.fromkeys(comparisons['axis']):
            paths += forest(comparisons, axis, folder / f'forest_{axis}')
    return paths
