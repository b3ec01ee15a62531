"""Job-seconds by kind from a finished workflow's benchmark files (Snakemake's `benchmark:` TSVs).

    python workflow/scripts/job_seconds.py [RESULTS_DIR]      # default: results

Prints, per kind of job (base agent, critic warm-ups, each trainer cell, each experiment, the
aggregation), the number of jobs, their summed and mean wall seconds and peak memory, then the total
and the share of each kind. Wall time of the whole workflow is not in these files: time the
snakemake command itself.
"""
from __future__ import annotations

import csv
import sys
from collections import defaultdict
from pathlib import Path


def kind_of(path: Path, root: Path) -> str:
    """benchmarks/runs/<cell>/seed~s.tsv -> 'train <cell>'; experiments/<name>/... -> 'experiment <name>'."""
    parts = path.relative_to(root).parts
    if parts[0] == 'runs':
        return f'train {parts[1]}'
    if parts[0] == 'experiments':
        return f'experiment {parts[1]}'
    return parts[0].removesuffix('.tsv') if len(parts) == 1 else parts[0]


def job_seconds(results: Path) -> dict[str, list[tuple[float, float]]]:
    """Kind -> [(wall seconds, max RSS MiB)] of every benchmarked job under results/benchmarks."""
    root = results / 'benchmarks'
    found: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for path in sorted(root.rglob('*.tsv')):
        with open(path, newline='') as f:
            for row in csv.DictReader(f, delimiter='\t'):
                rss = float(row['max_rss']) if row.get('max_rss') not in (None, '', 'NA', '-') else float('nan')
                found[kind_of(path, root)].append((float(row['s']), rss))
    return found


def main(argv: list[str]) -> None:
    results = Path(argv[0] if argv else 'results')
    found = job_seconds(results)
    if not found:
        sys.exit(f'no benchmark files under {results / "benchmarks"}: run the workflow first')
    total = sum(s for jobs in found.values() for s, _ in jobs)
    print(f'{"kind":<90} {"jobs":>4} {"job-s":>8} {"mean s":>7} {"share":>6} {"max MiB":>8}')
    for kind, jobs in sorted(found.items(), key=lambda item: -sum(s for s, _ in item[1])):
        seconds = sum(s for s, _ in jobs)
        print(f'{kind:<90} {len(jobs):>4} {seconds:>8.0f} {seconds / len(jobs):>7.1f} {seconds / total:>6.1%} '
              f'{max(r for _, r in jobs):>8.0f}')
    print(f'{"total":<90} {sum(map(len, found.values())):>4} {total:>8.0f}')


if __name__ == '__main__':
    main(sys.argv[1:])
