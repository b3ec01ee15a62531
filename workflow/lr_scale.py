"""A design's learning-rate scale: every learning rate of a substrate's design times one factor s (`lr_scale`), so
that its baseline trains in the chapter's regime and two rates compare in the same ratio as on the chapter's agent.

s multiplies the baseline's lr, each level of the lr axis (sweeps and factorial blocks) and each algorithm's lr
(REINFORCE's); the rates of `unscaled_lr` run as given (the study's absolute 3e-4 and 1e-4): they join the lr sweep,
and a factorial block's lr level that is one of them is not scaled (the study's cell of 1 epoch at 3e-4). The design file
keeps the chapter's rates; its cells are made from the scaled design (workflow/design.py, expand_design), so a
cell's name and config hold the rate it runs at. s is chosen per substrate by the registered rule
(results/measurements.md, "The learning-rate scale of each substrate"; `python -m analysis.stats.lr_scale`).
Pure Python.
"""
from __future__ import annotations

import math

DIGITS = 12  # a scaled rate keeps this many significant digits: 5e-4 x 0.4 is 2e-4, not 0.00020000000000000001


def scaled(lr: float, s: float) -> float:
    """One learning rate at scale s."""
    return float(f'{lr * s:.{DIGITS}g}')


def at_lr_scale(config: dict) -> dict:
    """The design with every learning rate at its scale and its unscaled rates in the lr sweep; unchanged at s = 1
    with no unscaled rate."""
    s, unscaled = float(config.get('lr_scale', 1.0)), list(config.get('unscaled_lr', []))
    if s == 1.0 and not unscaled:
        return config

    def given(v: float) -> bool:
        return any(math.isclose(v, u, rel_tol=1e-9) for u in unscaled)

    def levels(name: str, values: list) -> list:
        return [scaled(v, s) for v in values] if name == 'lr' else values

    def block_levels(name: str, values: list) -> list:
        return [v if given(v) else scaled(v, s) for v in values] if name == 'lr' else values

    baseline = {name: levels(name, [value])[0] for name, value in config['baseline'].items()}
    sweeps = {name: levels(name, values) for name, values in config.get('sweeps', {}).items()}
    rates = sweeps.get('lr', [baseline['lr']])
    sweeps['lr'] = rates + [v for v in unscaled if not any(math.isclose(v, r, rel_tol=1e-9) for r in rates)]
    factorial = [{name: block_levels(name, values) for name, values in block.items()}
                 for block in config.get('factorial', [])]
    algorithms = {name: {key: levels(key, [value])[0] for key, value in constants.items()}
                  for name, constants in config.get('algorithms', {}).items()}
    return {**config, 'baseline': baseline, 'sweeps': sweeps, 'factorial': factorial, 'algorithms': algorithms}
