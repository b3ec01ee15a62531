"""Figures a reader can read: one learning-curve panel per axis, registry names, legends clear of the data."""
import pytest
from test_analysis import tree  # noqa: F401 (the synthetic run directories, a fixture)

from analysis.chapter import Context
from analysis.compare import compare
from analysis.figures import forest, learning_curves, level_colors, style
from analysis.load import load_runs


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
        assert labels['lam'] == ['lam=0.9', 'lam=0.95', 'lam=1']
        assert labels['target_kl'] == ['target_kl=none', 'target_kl=0.02']
        assert panels['lam'].get_legend().get_title().get_text() == 'bands: 95% CI of the mean over 12 seeds'
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
    curve_colors = {line.get_label(): line.get_color() for line in curves.get_lines()}
    tick_labels = [t.get_text() for t in plot.axes[0].get_yticklabels()]
    assert tick_labels == ['lam=0.9', 'lam=0.95']
    point_colors = plot.axes[0].collections[-1].get_facecolors()
    for label, rgba in zip(tick_labels, point_colors):
        assert tuple(round(c, 6) for c in rgba[:3]) == tuple(round(c, 6) for c in curve_colors[label])
