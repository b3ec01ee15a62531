"""Figures a reader can read: one learning-curve panel per axis and factorial block on a page-wide grid, registry
names, metrics in words, legends clear of the data, a title on every figure clear of its panels, no empty row."""
import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from test_analysis import DEFAULTS, tree  # noqa: F401 (the synthetic run directories, a fixture)

from analysis.ledger.chapter import Context
from analysis.ledger.claims import load_claims
from analysis.stats.compare import COLUMNS, METRICS, compare
from analysis.pages import figures
from analysis.pages.figures import FOREST_METRICS, common_seeds, forest, learning_curves, level_colors, style
from analysis.records.load import load_runs
from analysis.text import METRIC_WORDS, in_words, label

CODE = re.compile(r'\b[a-z0-9]+(?:_[a-z0-9]+)+\b')  # a code name: words joined by underscores (pass_train)


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


def test_every_figure_has_a_title(written):
    titles = {name: fig.get_suptitle() for name, fig in written.items()}
    assert {'fig8_1', 'fig8_2', 'fig8_3', 'learning_curves', 'forest_lam'} <= set(titles)
    assert all(titles.values()), titles
    assert titles['forest_lam'] == 'lam: each level minus the baseline (95% CI)'


@pytest.fixture(scope='module')
def written(ctx_runs, tmp_path_factory):
    """Every figure write_figures makes, by its file's stem, drawn."""
    ctx, runs = ctx_runs
    found = {}
    with pytest.MonkeyPatch.context() as patch, style():
        patch.setattr(figures, 'save', lambda fig, stem, *_: found.setdefault(stem.name, fig) and [])
        figures.write_figures(ctx, runs, compare(ctx.values, ctx.configs, ctx.baseline),
                              tmp_path_factory.mktemp('figures'))
        for fig in found.values():
            fig.canvas.draw()
    return found


def test_axis_labels_are_words_from_the_one_mapping_not_code_names(written):
    labels = {name: [text for ax in fig.axes for text in (ax.get_xlabel(), ax.get_ylabel()) if text]
              for name, fig in written.items()}
    assert all(labels.values()), labels
    coded = {name: [t for t in texts if CODE.search(t)] for name, texts in labels.items()}
    assert not any(coded.values()), coded
    forest_labels = [ax.get_xlabel() for ax in written['forest_lam'].axes]
    assert forest_labels[0].startswith('train pass rate') and forest_labels[1].startswith('held-out pass rate')
    assert [ax.get_ylabel() for ax in written['fig8_3'].axes] == ['clip fraction', 'approximate KL (k3)']


def test_every_metric_a_figure_or_a_claim_names_has_words():
    named = set(FOREST_METRICS) | set(METRICS)
    named |= {spec['metric'] for claim in load_claims()['claims'] for spec in claim['inputs'] if 'metric' in spec}
    assert {m for m in named if CODE.search(m)} - set(METRIC_WORDS) == set()  # 'loss', 'before' are words already
    assert all(not CODE.search(words) for words in METRIC_WORDS.values())
    assert label('reward_21_30') == 'mean batch reward over iterations 21-30' and label('a_new_metric') == 'a new metric'
    assert in_words('T6 clipped approx_kl') == 'T6 clipped approximate KL (k3)'


def test_no_title_overlaps_a_panel_or_its_title(written):
    for name, fig in written.items():
        title = fig._suptitle.get_window_extent()
        for ax in fig.axes:
            assert not overlaps(title, ax.get_window_extent()), name
            if ax.get_title():
                assert not overlaps(title, ax.title.get_window_extent()), (name, ax.get_title())


def test_a_legend_sits_under_its_axes_labels(written):
    for name, fig in written.items():
        for ax in fig.axes:
            legend = ax.get_legend()
            if legend is not None:
                assert legend.get_window_extent().y1 <= ax.xaxis.get_tightbbox().y0, (name, ax.get_title())


def factorial_design():
    """A stand-in design with two factorial blocks (epochs x minibatches; one symmetric clip level) and its axes."""
    base = dict(DEFAULTS)
    cells = {'baseline': {}, 'epochs~8': {'epochs': 8}, 'minibatches~8': {'minibatches': 8},
             'epochs~8_minibatches~8': {'epochs': 8, 'minibatches': 8},
             'clip_low~0.1_clip_high~0.1': {'clip_low': 0.1, 'clip_high': 0.1}}
    configs = {cell: base | values for cell, values in cells.items()}
    rng = np.random.default_rng(0)
    iterations = pd.DataFrame([dict(name=cell, seed=seed, iteration=i, reward=rng.uniform())
                               for cell in cells for seed in range(3) for i in range(4)])
    return SimpleNamespace(configs=configs, baseline='baseline'), SimpleNamespace(table=lambda name: iterations)


def test_the_learning_curves_include_the_factorial_blocks():
    ctx, runs = factorial_design()
    with style():
        fig = learning_curves(ctx, runs)
    panels = {ax.get_title(): ax for ax in fig.axes}
    assert list(panels) == ['epochs', 'minibatches', 'clip_low x clip_high', 'epochs x minibatches']
    block = panels['epochs x minibatches']
    assert [t.get_text() for t in block.get_legend().get_texts()] == ['4 x 4 (baseline)', '4 x 8', '8 x 4', '8 x 8']
    assert block.get_lines()[0].get_color() == 'k'  # the baseline, black in every panel
    assert [t.get_text() for t in panels['clip_low x clip_high'].get_legend().get_texts()] == [
        '0.2 x 0.2 (baseline)', '0.1 x 0.1']


def forest_rows(axis: str, cell: str, interaction: float) -> list[dict]:
    """Comparison rows of one factorial cell: its difference from the baseline and its interaction (NaN: none)."""
    return [dict(dict.fromkeys(COLUMNS), axis=axis, cell=cell, contrast=contrast, metric=metric, diff=diff,
                 ci_low=diff - 0.1, ci_high=diff + 0.1, episodes_cell=1920, episodes_baseline=1920)
            for metric in ('pass_train', 'pass_heldout') for contrast, diff in (('difference', 0.05),
                                                                                ('interaction', interaction))]


def test_a_forest_plot_has_no_row_without_data():
    ctx, _ = factorial_design()
    comparisons = pd.DataFrame(forest_rows('clip_low_x_clip_high', 'clip_low~0.1_clip_high~0.1', np.nan)
                               + forest_rows('epochs_x_minibatches', 'epochs~8_minibatches~8', 0.02))
    with style():
        empty = forest(comparisons, 'clip_low_x_clip_high', ctx)
        full = forest(comparisons, 'epochs_x_minibatches', ctx)
    assert [t.get_text() for t in empty.axes[0].get_yticklabels()] == ['clip_low=0.1, clip_high=0.1']
    assert 'interaction' not in empty.get_suptitle()
    assert [t.get_text() for t in full.axes[0].get_yticklabels()] == ['interaction at epochs=8, minibatches=8',
                                                                      'epochs=8, minibatches=8']
    assert full.get_suptitle().startswith('epochs x minibatches: each cell minus the baseline, and the interaction')
