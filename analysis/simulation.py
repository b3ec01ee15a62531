"""Operating characteristics of the sequential ledger, by simulation: synthetic claims decided look by look with the
real decide() (analysis/sequential.py), against a fixed design at the design's last look.

`python -m analysis.simulation [--claims N] [--seed S]` prints, for the default design's looks, the rate of
"reproduced" with no effect (a false verdict: at most alpha over all looks) and with an effect of the band's size
(power), the mean seeds a claim takes, and the fixed designs at max and at that mean.
"""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .sequential import decide_sequentially, nominal_levels
from .verdicts import DEFAULTS, decide

LOOKS, MAX_SEEDS = [10, 15, 20, 25, 30, 35, 40], 40  # config/config.yaml's seeds: {initial: 10, step: 5, max: 40}
SMALLEST = math.log(DEFAULTS['about_factor'])  # the band's half-width on the log scale: "about" = within 1.25x
SPREAD = SMALLEST / 0.393  # seed-to-seed sd of the log-value: a fixed design at 40 seeds has ~80% power at SMALLEST
DIRECTIONAL = dict(id='simulated-greater', kind='greater', than=1.0, scale='log', test='t', inputs=[{}])
ABOUT = dict(id='simulated-about', kind='about', about=1.0, scale='log', test='t', inputs=[{}])


@dataclass(frozen=True)
class Scenario:
    """A synthetic claim and the true mean of its per-seed log-values."""
    name: str
    claim: dict
    log_mean: float


SCENARIOS = (Scenario('greater, no effect', DIRECTIONAL, 0.0),
             Scenario('greater, effect of the band', DIRECTIONAL, SMALLEST),
             Scenario('about, truth at the band edge', ABOUT, SMALLEST),
             Scenario('about, truth at the centre', ABOUT, 0.0))


def reproduced(row: dict) -> bool:
    return row['verdict'] == 'reproduced'


def operating_characteristics(scenario: Scenario, claims: int = 2000, seed: int = 0, looks: list[int] = LOOKS,
                              max_seeds: int = MAX_SEEDS) -> dict:
    """Over `claims` simulated claims: the rate of "reproduced" of the sequential design and of fixed designs at
    max_seeds and at the sequential design's mean seeds, the mean seeds, and the paired difference to the fixed
    design at max with its standard error."""
    claim = {**DEFAULTS, **scenario.claim}
    levels = nominal_levels(looks, max_seeds, claim['alpha'])
    rng = np.random.default_rng(seed)
    values = np.exp(rng.normal(scenario.log_mean, SPREAD, (claims, max_seeds)))  # [claims, seeds]
    sequential, fixed, seeds = [], [], []
    for row in values:
        decided, stage = decide_sequentially(claim, [pd.Series(row)], looks, levels)
        sequential.append(reproduced(decided))
        seeds.append(looks[stage - 1])
        fixed.append(reproduced(decide(claim, [pd.Series(row)], sensitivity=False, power=False)))
    mean_seeds = float(np.mean(seeds))
    at_mean = [reproduced(decide(claim, [pd.Series(row[:round(mean_seeds)])], sensitivity=False, power=False))
               for row in values]
    difference = np.asarray(sequential, float) - np.asarray(fixed, float)
    return dict(scenario=scenario.name, claims=claims, sequential=float(np.mean(sequential)),
                sequential_se=float(np.std(sequential) / math.sqrt(claims)), fixed_at_max=float(np.mean(fixed)),
                difference=float(difference.mean()), difference_se=float(difference.std() / math.sqrt(claims)),
                mean_seeds=mean_seeds, fixed_at_mean_seeds=float(np.mean(at_mean)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m analysis.simulation', description=__doc__)
    parser.add_argument('--claims', type=int, default=2000, help='simulated claims per scenario (default: 2000)')
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args(argv)
    from .report import to_markdown
    rows = [operating_characteristics(s, args.claims, args.seed) for s in SCENARIOS]
    print(f'looks at {LOOKS} of {MAX_SEEDS} seeds; p cut-offs '
          + ', '.join(f'{level:.3g}' for level in nominal_levels(LOOKS, MAX_SEEDS)))
    print(to_markdown(pd.DataFrame(rows)))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
