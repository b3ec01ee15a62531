"""The ledger's betting strategy, chosen by the criterion registered in results/measurements.md ("The betting
strategy: the registered criterion") on synthetic seeds, never on the records.

`python -m analysis.stats.betting [--sequences N]` prints, per candidate, the criterion (the mean over n in 10, 20,
40 and a true share p in 0.7, 0.8, 0.9, 1 of the expected log e-value at n, at share 1/2) and the e-values at 10, 20
and 40 seeds when every seed agrees and when 80% do; the admissible candidate (its e-value a function of the counts)
with the largest criterion is the one eprocess.PRIOR names.
"""
from __future__ import annotations

import argparse
import math

import numpy as np
import pandas as pd
from scipy import stats

from ..text import to_markdown
from .eprocess import log_e_value

SEEDS, SHARES, SHARE = (10, 20, 40), (0.7, 0.8, 0.9, 1.0), 0.5
MIXTURES = {'uniform, Beta(1, 1)': (1.0, 1.0), 'Beta(1/2, 1/2)': (0.5, 0.5), 'Beta(2, 1)': (2.0, 1.0),
            'Beta(4, 1)': (4.0, 1.0), 'Beta(1, 1/2)': (1.0, 0.5)}
FIXED = {'fixed bet at p 0.8': 0.8, 'fixed bet at p 0.9': 0.9}


def mixture(prior: tuple[float, float]):
    """log E of a Beta mixture on [SHARE, 1] at (k, n)."""
    return lambda k, n: log_e_value(k, n, SHARE, prior)


def fixed(p: float):
    """log E of the likelihood ratio at p against SHARE at (k, n)."""
    return lambda k, n: k * math.log(p / SHARE) + (n - k) * math.log((1 - p) / (1 - SHARE))


def expected_log(log_e, n: int, p: float) -> float:
    """E[log E_n] when each of n seeds agrees with probability p, exactly over the binomial counts."""
    k = np.arange(n + 1)
    return float((stats.binom.pmf(k, n, p) * log_e(k, n)).sum())


def plug_in_log(agree: np.ndarray) -> np.ndarray:
    """log wealth of the predictable plug-in on 0/1 outcomes [S, n]: before each seed, bet the likelihood ratio at the
    Laplace-smoothed share of the seeds so far, clipped to [SHARE, 0.99]; [S] per sequence."""
    before = np.concatenate([np.zeros((len(agree), 1)), np.cumsum(agree, axis=1)[:, :-1]], axis=1)
    seen = np.arange(agree.shape[1])
    p = np.clip((before + 1) / (seen + 2), SHARE, 0.99)
    return np.where(agree, np.log(p / SHARE), np.log((1 - p) / (1 - SHARE))).sum(axis=1)


def table(sequences: int = 20_000, seed: int = 0) -> pd.DataFrame:
    """One row per candidate: admissible (a function of the counts), the criterion and the e-values printed."""
    rng = np.random.default_rng(seed)
    rows = []
    candidates = {**{k: mixture(v) for k, v in MIXTURES.items()}, **{k: fixed(v) for k, v in FIXED.items()}}
    for name, log_e in candidates.items():
        rows.append(dict(candidate=name, admissible=True,
                         criterion=np.mean([expected_log(log_e, n, p) for n in SEEDS for p in SHARES]),
                         **{f'e at {n}, all agree': float(np.exp(log_e(n, n))) for n in SEEDS},
                         **{f'e at {n}, 80% agree': float(np.exp(log_e(round(0.8 * n), n))) for n in SEEDS}))
    outcomes = {(n, p): rng.random((sequences, n)) < p for n in SEEDS for p in SHARES}
    rows.append(dict(candidate='predictable plug-in (comparison)', admissible=False,
                     criterion=np.mean([plug_in_log(o).mean() for o in outcomes.values()]),
                     **{f'e at {n}, all agree': float(np.exp(plug_in_log(np.ones((1, n), bool))[0])) for n in SEEDS},
                     **{f'e at {n}, 80% agree': float(np.exp(plug_in_log(  # agreeing seeds first, then the others
                         (np.arange(n) < round(0.8 * n))[None, :])[0])) for n in SEEDS}))
    return pd.DataFrame(rows).sort_values('criterion', ascending=False, ignore_index=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m analysis.stats.betting', description=__doc__)
    parser.add_argument('--sequences', type=int, default=20_000, help="the plug-in's simulated sequences per scenario")
    args = parser.parse_args(argv)
    found = table(args.sequences)
    print(to_markdown(found))
    chosen = found[found['admissible']].iloc[0]
    print(f"chosen: {chosen['candidate']} (criterion {chosen['criterion']:.4f} nats)")
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
