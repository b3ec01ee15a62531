"""A substrate's learning-rate scale: the registered rule that chooses it from calibration records, the claims that
read a substrate's cells at its scale, and the designs that apply it (every rate times s, the lr levels keeping
their ratios across substrates, the study's 3e-4 absolute)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.ledger.chapter import Context, at_scale, load_chapter
from analysis.ledger.claims import claim_inputs, ledger, load_claims
from analysis.ledger.verdicts import UNTESTED
from analysis.stats.lr_scale import CHAPTER_LR, chosen, scale_table
from analysis.stats.metrics import TRAIN
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


def study_context(baseline_lr: float) -> Context:
    """Paired pass rates of 12 seeds: the baseline, the study's 3e-4, and lr 1e-4 (the chapter's 5e-4 at s = 0.2)."""
    rates = {'baseline': baseline_lr, 'lr~0.0003': 3e-4, 'lr~0.0001': 1e-4, 'lr~0.0005': 5e-4}
    rng = np.random.default_rng(0)
    rows = [dict(table=TRAIN, row='', metric='pass_train', source=cell, seed=seed, value=rng.uniform(0.6, 1.0))
            for cell in rates for seed in range(12)]
    configs = {cell: {'lr': lr, 'epochs': 4} for cell, lr in rates.items()}
    return Context(pd.DataFrame(rows), configs, 'baseline', load_chapter())


def test_two_claims_whose_rates_a_scale_maps_to_one_cell_are_one_finding():
    """At s = 0.2 the chapter's 5e-4 is the study's 1e-4: the later claim is the earlier one's finding, untested and
    out of the family and the claims' inputs; at the chapter's rate both are tested."""
    claims = {'claims': [c for c in load_claims()['claims']
                         if c['id'] in ('study-lr3e-4-vs-5e-4-train', 'study-lr3e-4-vs-1e-4-train')]}
    scaled = ledger(study_context(2e-4), claims).set_index('id')
    assert scaled.loc['study-lr3e-4-vs-5e-4-train', 'verdict'] != UNTESTED
    assert scaled.loc['study-lr3e-4-vs-1e-4-train', 'verdict'] == UNTESTED
    assert "claim study-lr3e-4-vs-5e-4-train's" in scaled.loc['study-lr3e-4-vs-1e-4-train', 'note']
    assert scaled.attrs['family'] == 2
    assert scaled['same_as'].to_dict() == {'study-lr3e-4-vs-5e-4-train': '', 'study-lr3e-4-vs-1e-4-train':
                                           'study-lr3e-4-vs-5e-4-train'}
    assert set(claim_inputs(study_context(2e-4), claims)['id']) == {'study-lr3e-4-vs-5e-4-train'}
    at_chapter_rate = ledger(study_context(CHAPTER_LR), claims)
    assert (at_chapter_rate['verdict'] != UNTESTED).all() and at_chapter_rate.attrs['family'] == 4


def lr_ratios(design: dict) -> tuple[float, set[float]]:
    """A design's baseline lr and the ratios of its lr cells' rates to it (the PPO cells that differ in lr alone)."""
    cells = expand_design(design)
    base = cells['baseline'].values['lr']
    return base, {round(cell.values['lr'] / base, 9) for name, cell in cells.items() if name.startswith('lr~')
                  and '_' not in name}


@pytest.mark.parametrize('path', PUBLISHED_DESIGNS[1:])
def test_every_substrates_lr_levels_keep_the_chapters_ratios(path):
    """On every published design the lr levels stand to its baseline's lr as on the chapter's agent, however the
    substrate is scaled; the study's 3e-4 is there as given; REINFORCE's rate is scaled with the rest."""
    chapter = load_design(REPO / PUBLISHED_DESIGNS[0])
    chapter_base = chapter['baseline']['lr']
    chapter_ratios = {round(lr / chapter_base, 9) for lr in chapter['sweeps']['lr'] if lr != chapter_base}
    design = load_design(REPO / path)
    base, ratios = lr_ratios(design)
    s = design.get('lr_scale', 1.0)
    assert base == pytest.approx(chapter_base * s)
    unscaled = {round(lr / base, 9) for lr in design.get('unscaled_lr', [])}
    assert chapter_ratios <= ratios and ratios - chapter_ratios <= unscaled
    assert all(any(abs(lr - cell.values['lr']) < 1e-12 for cell in expand_design(design).values())
               for lr in design.get('unscaled_lr', []))
    reinforce = expand_design(design)['algorithm~reinforce'].values['lr']
    assert reinforce == pytest.approx(2e-3 * s)


def test_a_scale_multiplies_every_rate_and_names_cells_by_the_rates_they_run_at():
    design = load_design(REPO / 'config' / 'substrates' / 'larger.yaml')
    scaled = expand_design({**design, 'lr_scale': 0.4, 'unscaled_lr': [3e-4]})
    assert scaled['baseline'].values['lr'] == 4e-4 and 'lr~0.0002' in scaled and 'lr~0.0003' in scaled
    assert scaled['lr~0.0002'].values['lr'] == 2e-4  # 5e-4 x 0.4, not 0.00020000000000000001
    assert scaled['algorithm~reinforce'].values['lr'] == 8e-4
    assert [name for name in scaled if name.startswith('lr~')] == ['lr~0.00012', 'lr~0.0002', 'lr~0.0008',
                                                                     'lr~0.0003']
    default = load_design(REPO / PUBLISHED_DESIGNS[0])
    assert expand_design({**design, 'lr_scale': 1.0}).keys() == expand_design(default).keys()


@pytest.mark.parametrize('path', PUBLISHED_DESIGNS)
def test_the_studys_rates_run_as_given_in_its_sweep_and_its_factorial_block(path):
    """On every substrate the study's 1e-4 and 3e-4 are cells of their own, and its one pass runs at 3e-4, not at
    the substrate's scale; the chapter's own 3e-4 of the lr sweep is scaled with the rest."""
    design = load_design(REPO / path)
    cells, s = expand_design(design), design.get('lr_scale', 1.0)
    assert cells['lr~0.0001'].values['lr'] == 1e-4 and cells['lr~0.0003'].values['lr'] == 3e-4
    assert (cells['epochs~1_lr~0.0003'].values['lr'], cells['epochs~1_lr~0.0003'].values['epochs']) == (3e-4, 1)
    assert f'lr~{3e-4 * s:.12g}' in cells and 'whiten_advantages~minibatch' in cells
