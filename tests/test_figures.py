"""Figures a reader can read: one learning-curve panel per axis on a page-wide grid, registry names, legends clear of
the data, a title on every figure."""
import pandas as pd
import pytest
from test_analysis import tree  # noqa: F401 (the synthetic run directories, a fixture)

from analysis.ledger.chapter import Context
from analysis.stats.compare import compare
from analysis.pages import figures
from analysis.pages.figures import common_seeds, forest, learning_curves, level_colors, style
from analysis.records.load import load_runs


@pytest.fixture(scope='module')
def ctx_runs(tree):  # noqa: F811
    runs = load_runs(tree / 'runs', tree / 'experiments')
    return Context.build(runs), runs


def overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_learning_curves_have_a_panel_per_axis_named_by_the_registry_with_legends_off_the_data(ctx_runs):
    ctx, runs = ctx_runs
    with style():
        fig = learning_curves(ctx, runs)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        panels = {ax.get_title(): ax for ax in fig.axes}
        assert set(panels) == {'algorithm', 'lam', 'epochs', 'target_kl', 'value_clip'}
        labels = {title: [t.get_text() for t in ax.get_legend().get_texts()] for title, ax in panels.items()}
        assert labels['lam'] == ['0.9', '0.95', '1 (baseline)']  # the panel's title names the axis
        assert labels['target_kl'] == ['none (baseline)', '0.02']
        assert panels['lam'].get_legend().get_title().get_text() == '12 seeds each'
        assert fig.get_suptitle().startswith('Batch reward during training')
        assert fig.get_size_inches()[0] * fig.dpi <= 2000  # a page's width, panels in rows
        assert len({round(ax.get_position().y0, 3) for ax in fig.axes}) == 2  # 5 panels: rows of 3
        assert all(ax.get_xlabel() == 'training episodes' for ax in fig.axes)
        boxes = [ax.get_window_extent(renderer) for ax in fig.axes]
        for ax in fig.axes:
            legend = ax.get_legend().get_window_extent(renderer)
            assert not any(overlaps(legend, box) for box in boxes), ax.get_title()


def test_a_level_has_one_colour_everywhere_and_the_baselines_is_black(ctx_runs):
    ctx, runs = ctx_runs
    colors = level_colors([1.0, 0.95, 0.9], 1.0)
    assert colors[1.0] == 'k' and colors[0.9] != colors[0.95]
    comparisons = compare(ctx.values, ctx.configs, ctx.baseline)
    with style():
        curves = {ax.get_title(): ax for ax in learning_curves(ctx, runs).axes}['lam']
        plot = forest(comparisons, 'lam', ctx)
    curve_colors = {f'lam={line.get_label()}': line.get_color() for line in curves.get_lines()}
    tick_labels = [t.get_text() for t in plot.axes[0].get_yticklabels()]
    assert tick_labels == ['lam=0.9', 'lam=0.95']
    point_colors = plot.axes[0].collections[-1].get_facecolors()
    for label, rgba in zip(tick_labels, point_colors):
        assert tuple(round(c, 6) for c in rgba[:3]) == tuple(round(c, 6) for c in curve_colors[label])


def test_the_learning_curves_band_is_over_the_seeds_every_cell_of_the_panel_has(ctx_runs):
    rows = pd.DataFrame({'name': ['a', 'a', 'a', 'b', 'b'], 'seed': [0, 1, 2, 1, 2]})
    assert common_seeds(rows).to_dict('list') == {'name': ['a', 'a', 'b', 'b'], 'seed': [1, 2, 1, 2]}
    ctx, runs = ctx_runs
    with style():
        curve = learning_curves(ctx, runs).axes[0].get_lines()[0]
    assert curve.get_xdata()[0] == ctx.configs[ctx.baseline]['episodes_per_iteration']  # the first batch's episodes


def test_every_figure_has_a_title(ctx_runs, tmp_path, monkeypatch):
    ctx, runs = ctx_runs
    titles = {}
    monkeypatch.setattr(figures, 'save', lambda fig, stem, *_: titles.setdefault(stem.name, fig.get_suptitle()) and [])
    figures.write_figures(ctx, runs, compare(ctx.values, ctx.configs, ctx.baseline), tmp_path)
    assert {'fig8_1', 'fig8_2', 'fig8_3', 'learning_curves', 'forest_lam'} <= set(titles)
    assert all(titles.values()), titles
    assert titles['forest_lam'] == 'lam: each level minus the baseline (95% CI)'
