"""Command line: python -m analysis {aggregate,tables,figures,claims,stage,records}
(--run-files RUN_JSON... | --runs DIR --experiments DIR | --records DIR) --out DIR;
--run-files and --records DIR --reuse NAME:SEEDS... together read those runs from each (the workflow's state).
`records [--records DIR] --run-files RUN_JSON... --out DIR` writes the records with those runs added (a run replaces
the record of its name and seed; records of another numerics version leave) to --out's records/ and nothing else: a
design's runs published before its ledger.
The ledger reads every seed of the runs it is given.
`stage --seeds JSON --stage K --out FILE` looks at a staged design's claims after its stage K and writes the next
stage's plan (JSON) to FILE (analysis/ledger/stages.py); a budgeted design's look also takes its cost table
(`--costs FILE`) and, after stage 1, the look before (`--previous FILE`).
A bad argument, or runs or records that cannot be read (damaged records: the file), is an error of one line."""
from __future__ import annotations

import argparse
import json
import sys

from agentrl.files import write_text
from workflow.faults import OneLineParser
from workflow.plan import look_text, seed_plan
from workflow.state import cost_table

from .ledger.chapter import Context
from .ledger.stages import look_line, next_stage
from .pages.report import aggregate
from .records.load import Runs, combine, load_runs
from .records.records import load_options, load_records, parse_reuse, with_runs
from .stats.inference import METHODS

DEFAULTS = dict(baseline='baseline', method='t', seed=0, alpha=None, min_seeds=None)  # the aggregation's options
PARTS = {'aggregate': ('tables', 'figures', 'claims', 'records'), 'tables': ('tables',), 'figures': ('figures',),
         'claims': ('claims',), 'stage': (), 'records': ('records',)}


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog='python -m analysis', description=__doc__)
    parser.add_argument('command', choices=sorted(PARTS),
                        help='aggregate: everything (tables, figures, claims.md, README.md, records/); or one part '
                             '(records: --records with --run-files added)')
    parser.add_argument('--runs', default=None, help='root of trainer run directories (default results/runs)')
    parser.add_argument('--experiments', default=None,
                        help='root of chapter experiment runs (default results/experiments)')
    parser.add_argument('--run-files', nargs='+', default=None, metavar='RUN_JSON',
                        help="exactly these runs (their run.json files: the workflow passes its design's)")
    parser.add_argument('--records', default=None,
                        help='read the published run records (a records/ folder) instead of run directories')
    parser.add_argument('--reuse', nargs='+', default=None, metavar='NAME:SEEDS',
                        help='with --records: only these runs of the records (seeds comma-separated), besides '
                             '--run-files')
    parser.add_argument('--out', default=None, help='output folder (default results); stage: the look file')
    parser.add_argument('--baseline', default=None, help='name of the baseline cell (default: baseline)')
    parser.add_argument('--method', choices=METHODS, default=None,
                        help='CI of the mean: Student t or BCa bootstrap (default: t)')
    parser.add_argument('--seed', type=int, default=None, help='seed of the bootstrap resamples (default: 0)')
    parser.add_argument('--alpha', type=float, default=None, help="claims' significance level (claims.yaml)")
    parser.add_argument('--min-seeds', type=int, default=None, help="claims' minimum seeds (claims.yaml)")
    parser.add_argument('--seeds', type=seeds_value, default=None, metavar='JSON',
                        help="stage: the design's seeds as its config states them, in JSON")
    parser.add_argument('--stage', type=int, default=None, help='stage: the stage just run (from 1)')
    parser.add_argument('--costs', default=None, help="stage: a budgeted design's cost table (its costs.csv)")
    parser.add_argument('--previous', default=None, help="stage: a budgeted design's look before this one")
    parser.add_argument('--basis', default=None,
                        help="stage: the basis the look is made for (the workflow's digest of its design and "
                             'claims), stored in the look')
    args = parser.parse_args(argv)
    if args.command == 'stage' and None in (args.seeds, args.stage, args.out):
        parser.error('stage needs --seeds, --stage and --out (the look file it writes)')
    if args.command != 'stage' and any(v is not None for v in (args.seeds, args.stage, args.costs, args.previous)):
        parser.error(f'{args.command} reads every seed of its runs: --seeds, --stage, --costs and --previous are '
                     'options of stage only')
    sources = [name for name in ('runs', 'experiments', 'run_files', 'records') if getattr(args, name)]
    sources += ['reuse'] * (args.reuse is not None)
    given = set(sources)
    if args.command == 'records':
        if given not in ({'run_files'}, {'records', 'run_files'}):
            parser.error('records needs --run-files (and --records to add them to); '
                         f'not {" and ".join(sources) or "nothing"}')
    elif not (given <= {'runs', 'experiments'} or given in ({'records'}, {'run_files'}, {'records', 'reuse'},
                                                            {'records', 'reuse', 'run_files'})):
        parser.error('give --records, or --run-files, or --runs/--experiments, or --records with --reuse (and '
                     f'--run-files); not {" and ".join(sources)}')
    try:
        runs, stored = read_runs(args)
    except ValueError as error:
        parser.error(str(error))
    # each option as given, else as the records were aggregated with, else its default
    options = {k: stored.get(k, v) if getattr(args, k) is None else getattr(args, k) for k, v in DEFAULTS.items()}
    if args.command == 'stage':
        try:
            look = next_stage(Context.build(runs, options['baseline']), seed_plan({'seeds': args.seeds}), args.stage,
                              args.costs and cost_table(args.costs), args.previous and read_json(args.previous),
                              alpha=options['alpha'])
        except (ValueError, OSError) as error:
            parser.error(str(error))
        write_text(args.out, look_text(look, args.basis))
        print(look_line(look))
        return 0
    paths = aggregate(runs, args.out or 'results', PARTS[args.command], **options)
    print(f'{len(runs.runs)} runs read; {len(paths)} files written under {args.out}')
    return 0


def read_json(path: str) -> dict:
    """A JSON file (--previous: a look)."""
    with open(path) as file:
        return json.load(file)


def seeds_value(text: str) -> list[int] | dict:
    """--seeds: a design's `seeds` as JSON, checked as seed_plan checks it: a list of seeds or a staged design's
    mapping (a list is one stage: the look refuses it)."""
    try:
        value = json.loads(text)
        seed_plan({'seeds': value})
    except (ValueError, KeyError, TypeError) as error:
        raise argparse.ArgumentTypeError(f'{text!r}: expected a list of seeds, {{initial, step, max}} or '
                                         f'{{initial, max, policy, batch, budget}} '
                                         f'({type(error).__name__}: {error})') from None
    return value


def read_runs(args: argparse.Namespace) -> tuple[Runs, dict]:
    """The runs the options name, and the options stored with the records (when the records are read whole)."""
    if args.command == 'records':
        runs = load_runs(*args.run_files)
        return (with_runs(load_records(args.records), runs), load_options(args.records)) if args.records else (runs, {})
    if args.reuse is not None:
        reused = load_records(args.records, parse_reuse(args.reuse))
        return (combine(load_runs(*args.run_files), reused) if args.run_files else reused), {}
    if args.run_files:
        return load_runs(*args.run_files), {}
    if args.records is None:
        return load_runs(args.runs or 'results/runs', args.experiments or 'results/experiments'), {}
    return load_records(args.records), load_options(args.records)


if __name__ == '__main__':
    sys.exit(main())
