"""Command line: python -m analysis {aggregate,tables,figures,claims}
(--run-files RUN_JSON... | --runs DIR --experiments DIR | --records DIR) --out DIR."""
from __future__ import annotations

import argparse
import sys

from .load import load_runs
from .records import load_options, load_records
from .report import aggregate
from .stats import METHODS

DEFAULTS = dict(baseline='baseline', method='t', seed=0, alpha=None, min_seeds=None)  # the aggregation's options
PARTS = {'aggregate': ('tables', 'figures', 'claims', 'records'), 'tables': ('tables',), 'figures': ('figures',),
         'claims': ('claims',)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m analysis', description=__doc__)
    parser.add_argument('command', choices=sorted(PARTS),
                        help='aggregate: everything (tables, figures, claims.md, README.md, records/); or one part')
    parser.add_argument('--runs', default=None, help='root of trainer run directories (default results/runs)')
    parser.add_argument('--experiments', default=None,
                        help='root of chapter experiment runs (default results/experiments)')
    parser.add_argument('--run-files', nargs='+', default=None, metavar='RUN_JSON',
                        help="exactly these runs (their run.json files: the workflow passes its design's)")
    parser.add_argument('--records', default=None,
                        help='read the published run records (a records/ folder) instead of run directories')
    parser.add_argument('--out', default='results', help='output folder')
    parser.add_argument('--baseline', default=None, help='name of the baseline cell (default: baseline)')
    parser.add_argument('--method', choices=METHODS, default=None,
                        help='CI of the mean: Student t or BCa bootstrap (default: t)')
    parser.add_argument('--seed', type=int, default=None, help='seed of the bootstrap resamples (default: 0)')
    parser.add_argument('--alpha', type=float, default=None, help="claims' significance level (claims.yaml)")
    parser.add_argument('--min-seeds', type=int, default=None, help="claims' minimum seeds (claims.yaml)")
    args = parser.parse_args(argv)
    sources = [name for name in ('runs', 'experiments', 'run_files', 'records') if getattr(args, name)]
    if 'records' in sources and len(sources) > 1 or 'run_files' in sources and {'runs', 'experiments'} & set(sources):
        parser.error(f'give --records, or --run-files, or --runs/--experiments; not {" and ".join(sources)}')
    try:
        if args.run_files:
            runs, stored = load_runs(*args.run_files), {}
        elif args.records is None:
            runs, stored = load_runs(args.runs or 'results/runs', args.experiments or 'results/experiments'), {}
        else:
            runs, stored = load_records(args.records), load_options(args.records)
    except ValueError as error:
        parser.error(str(error))
    # each option as given, else as the records were aggregated with, else its default
    options = {k: stored.get(k, v) if getattr(args, k) is None else getattr(args, k) for k, v in DEFAULTS.items()}
    paths = aggregate(runs, args.out, PARTS[args.command], **options)
    print(f'{len(runs.runs)} runs read; {len(paths)} files written under {args.out}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
