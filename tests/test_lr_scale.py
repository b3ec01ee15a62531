"""A substrate's learning-rate scale: the registered rule that chooses it from calibration records, the claims that
read a substrate's cells at its scale, and the designs that apply it (every rate times s, the lr levels keeping
their ratios across substrates, the study's 3e-4 absolute)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analysis.ledger.chapter import Context, at_scale, load_chapter
from analysis.stats.lr_scale import CHAPTER_LR, chosen, scale_table
from workflow.design import PUBLISHED_DESIGNS, expand_design, load_design

REPO = Path(__file__).resolve().parents[1]


def summaries(by_scale: dict[float, list[float]]) -> tuple[pd.DataFrame, dict[str, dict]]:
    """Calibration records: one cell per scale, its seeds' final train (and held-out) pass rates."""
    rows, configs = [], {}
    for s, train in by_scale.items():
        name = f'lr~{CHAPTER_LR * s:g}'
        configs[name] = {'lr': CHAPTER_LR * s}
        for seed, value in enumerate(train, start=1000):
            rows += [dict(name=name, seed=seed, metric='pass_train', value=value),
                     dict(name=name, seed=seed, metric='pass_heldout', value=value / 3)]
    return pd.DataFrame(rows), configs


def test_the_rule_takes_the_highest_median_train_pass_rate_ties_to_the_larger_scale():
    table = scale_table(*summaries({1: [0.5, 0.6, 0.7, 0.2, 0.9], 0.6: [0.8, 0.1, 0.8, 0.8, 0.2],
                                    0.4: [0.1, 0.8, 0.8, 0.9, 0.8], 0.3: [0.2, 0.3, 0.4, 0.5, 0.6]}))
    assert table['s'].tolist() == [1, 0.6, 0.4, 0.3] and table['median_train'].tolist() == [0.6, 0.8, 0.8, 0.4]
    assert chosen(table) == 0.6  # 0.6 and 0.4 tie at a median of 0.8: the larger s
    assert chosen(scale_table(*summaries({1: [0.3] * 5, 0.2: [0.31] * 5}))) == 0.2  # any gain decides


def context(baseline_lr: float) -> Context:
    configs = {'baseline': {'lr': baseline_lr, 'epochs': 4}, 'lr~low': {'lr': baseline_lr / 2, 'epochs': 4},
               'abs': {'lr': 3e-4, 'epochs': 4}}
    return Context(pd.DataFrame(columns=['table', 'row', 'metric', 'source', 'seed', 'value']), configs, 'baseline',
                   load_chapter())


def test_a_claims_rate_is_in_the_chapters_units_scaled_to_the_substrate():
    """At a baseline lr of 4e-4 (s = 0.4) a claim's lr 5e-4 is the substrate's 2e-4; the study's 3e-4 stays 3e-4."""
    ctx = context(4e-4)
    assert ctx.lr_scale == pytest.approx(0.4)
    assert at_scale({'lr': 5e-4}, ctx)['lr'] == pytest.approx(2e-4)
    assert at_scale({'lr': 3e-4}, ctx, unscaled=True) == {'lr': 3e-4}
    assert at_scale({'epochs': 8}, ctx) == {'epochs': 8}
    assert context(CHAPTER_LR).lr_scale == 1.0 and at_scale({'lr': 5e-4}, context(CHAPTER_LR)) == {'lr': 5e-4}
