"""Command line: python -m analysis {aggregate,tables,figures,claims} --runs DIR --experiments DIR --out DIR."""
from __future__ import annotations

import argparse
import sys

from .load import load_runs
from .report import aggregate
from .stats import METHODS

PARTS = {'aggregate': ('tables', 'figures', 'claims'), 'tables': ('tables',), 'figures': ('figures',),
         'claims': ('claims',)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m analysis', description=__doc__)
    parser.add_argument('command', choices=sorted(PARTS),
                        help='aggregate: everything (tables, figures, claims.md, README.md); or one part')
    parser.add_argument('--runs', default='results/runs', help='root of trainer run directories')
    parser.add_argument('--experiments', default='results/experiments', help='root of chapter experiment runs')
    parser.add_argument('--out', default='results', help='output folder')
    parser.add_argument('--baseline', default='baseline', help='name of the baseline cell')
    parser.add_argument('--method', choices=METHODS, default='t', help='CI of the mean: Student t or BCa bootstrap')
    parser.add_argument('--seed', type=int, default=0, help='seed of the bootstrap resamples')
    parser.add_argument('--alpha', type=float, default=None, help="claims' significance level (claims.yaml)")
    parser.add_argument('--min-seeds', type=int, default=None, help="claims' minimum seeds (claims.yaml)")
    args = parser.parse_args(argv)
    runs = load_runs(args.runs, args.experiments)
    paths = aggregate(runs, args.out, PARTS[args.command], baseline=args.baseline, method=args.method,
                      seed=args.seed, alpha=args.alpha, min_seeds=args.min_seeds)
    print(f'{len(runs.runs)} runs read; {len(paths)} files written under {args.out}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
