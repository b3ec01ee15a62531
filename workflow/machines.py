"""`python -m workflow.machines RECORDS`: may this CPU add runs to the design whose records folder this is? Only a CPU
of a vendor the records' runs were made on (at this numerics version), or any CPU where they hold none: under numerics
version 3 AMD's and Intel's CPUs give different numbers (agentrl/numerics.py), so a base agent pretrained on another
vendor's CPU is not the one the design's runs started from, and its runs would differ from theirs in more than their
seeds. Exit status 0 where it may; otherwise the reason on stderr and 1.

The workflow's base_agent job runs it before pretraining: a dry run still plans the runs, and a refused machine stops
before it makes any.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable

from agentrl.numerics import NUMERICS_VERSION, refuse_to_continue, this_cpu
from workflow.state import record_rows


def made_on(rows: Iterable[dict], numerics: int = NUMERICS_VERSION) -> set[str]:
    """The CPU vendors that made the records' runs of numerics version `numerics` (runs of another version are not
    reused, so they bind nothing)."""
    return {row.get('cpu_vendor') or '' for row in rows if row['numerics_version'] == numerics} - {''}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m workflow.machines', description=__doc__.split('\n\n')[0])
    parser.add_argument('records', help="the design's records folder (results_dir/records)")
    args = parser.parse_args(argv)
    refused = refuse_to_continue(made_on(record_rows(args.records)), this_cpu())
    if refused:
        print(f'python -m workflow.machines: {args.records}: {refused}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
