"""`python -m workflow.seeds NAME N [--configfile F]`: the run.json targets that give one cell or experiment of a
design the seeds 0 to N - 1 that its published records lack, one a line, for `snakemake` (README: "give one cell
or experiment more seeds"). A missing or bad argument, a design that cannot be read, damaged records, an unknown name,
or N not above the seeds the records hold is an error of one line naming it."""
from __future__ import annotations

from agentrl.files import DamagedRecords
from agentrl.numerics import NUMERICS_VERSION
from workflow.design import expand_design, load_design
from workflow.faults import OneLineParser
from workflow.plan import DesignError
from workflow.state import more_seeds, published, record_rows


def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(prog='python -m workflow.seeds', description=__doc__)
    parser.add_argument('name', help='the cell or experiment')
    parser.add_argument('count', type=int, help='the seeds it should have, 0 to N - 1')
    parser.add_argument('--configfile', default='config/config.yaml', help='the design (default: %(default)s)')
    args = parser.parse_args(argv)
    try:
        design = load_design(args.configfile)
        cells, experiments = expand_design(design), design['experiments']
        held = published(record_rows(f"{design['results_dir']}/records"), cells, experiments, NUMERICS_VERSION)
        print('\n'.join(more_seeds(args.name, args.count, cells, experiments, held, design['results_dir'])))
    except (DesignError, DamagedRecords) as error:
        parser.error(str(error))


if __name__ == '__main__':
    main()
