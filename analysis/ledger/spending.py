"""What a budgeted design spent and what it bought: each look (stages.next_stage) priced by the design's cost table,
then its published ledger against the fixed design of FIXED_SEEDS seeds.

    python -m analysis.ledger.spending [--configfile FILE ...]   # default: the published designs

Per look: the seeds a source holds, the design's runs, their job-seconds by the cost table (allocation.Prices, a
warmed critic for each seed of the PPO cells), its claims decided on those seeds, open within max and projected beyond
max, and the batch it gives next. Per design: its runs and job-seconds; the published ledger's decided claims (it
reads every seed the records hold, the design's and any other: its `runs read` and their job-seconds); job-seconds a
decided claim on each; the fixed design's job-seconds; and the hours on 2 cores the job-seconds take at least (without
the looks' barriers). Then the hours on 1, 2, 8 and 64 cores with the barriers (hours): each stage's runs in
parallel, the stages one after another. Markdown on stdout, for results/measurements.md.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from workflow.design import PUBLISHED_DESIGNS, load_design, substrate_of
from workflow.plan import FIXED_SEEDS, look_file, seed_plan, seed_span
from workflow.state import record_rows

from ..text import to_markdown
from .allocation import Prices
from .claims import judged, read_ledger
from .verdicts import DECIDED

CORES = 2  # the hours column: this many cores
HOURS_CORES = (1, 2, 8, 64)  # the hours table's columns


def looks(results_dir: str) -> list[dict]:
    """The design's looks in stage order, from stage 1 to the first missing."""
    found, stage = [], 1
    while Path(path := look_file(results_dir, stage)).is_file():
        found.append(json.loads(Path(path).read_text()))
        stage += 1
    return found


def look_rows(found: list[dict], prices: Prices) -> list[dict]:
    """One row a look: what the design held and decided there, and the batch it gave next."""
    return [{'look': look['stage'], 'seeds a source': seed_span(look['seeds'].values()),
             'runs': sum(look['seeds'].values()), 'job-seconds': round(prices.cost({}, look['seeds'])),
             'decided': len(look['decided']), 'open within max': len(look['open']),
             'beyond max': len(look['beyond_max']),
             'next batch': (f"{seed_span(look['next'].values())} seeds to {len(look['next'])} of them, "
                            f"{look['cost_s']:,.0f} job-s" if look['next'] else f"none ({look['stop']})")}
            for look in found]


def stage_runs(found: list[dict]) -> list[tuple[dict[str, int], dict[str, int]]]:
    """Each stage's (seeds held before it, runs it made per source): stage 1 the first look's seeds, then each look's
    over the one before."""
    held = [{}, *(look['seeds'] for look in found)]
    return [(before, {s: n - before.get(s, 0) for s, n in after.items() if n > before.get(s, 0)})
            for before, after in zip(held, held[1:])]


def hours(found: list[dict], prices: Prices, cores: int) -> tuple[float, float]:
    """Bounds on the hours the design's stages take on `cores` cores, one job a core, the stages one after another
    (a stage starts when the look before it has named its runs): a stage of W job-seconds (its runs and critics)
    whose longest run is L takes at least max(W / cores, L) and, with any greedy scheduler, at most
    W / cores + (1 - 1 / cores) L (Graham's bound). The jobs outside the runs (the base agent, the looks) are left
    out."""
    low = high = 0.0
    for before, made in stage_runs(found):
        work, longest = prices.cost(before, made) / cores, max((prices.runs[s] for s in made), default=0.0)
        low, high = low + max(work, longest), high + work + (1 - 1 / cores) * longest
    return low / 3600, high / 3600


def hours_row(substrate: str, found: list[dict], prices: Prices) -> dict:
    """A design's hours with the looks' barriers on each of HOURS_CORES ('at least to at most'), and without them."""
    bounds = {cores: hours(found, prices, cores) for cores in HOURS_CORES}
    spent = prices.cost({}, found[-1]['seeds'])
    return {'substrate': substrate, 'stages': len(found),
            **{f'{cores} core{"s" * (cores > 1)}': f'{low:.2f} to {high:.2f}' for cores, (low, high) in bounds.items()},
            'without barriers: ' + ' / '.join(map(str, HOURS_CORES)) + ' cores':
                ' / '.join(f'{spent / cores / 3600:.2f}' for cores in HOURS_CORES)}


def decided(results_dir: str) -> tuple[int, int]:
    """The published ledger's (tables/claims.csv) statistical claims: (decided, all with a verdict: not untested)."""
    frame = read_ledger(Path(results_dir) / 'tables' / 'claims.csv')
    statistical = frame[judged(frame)]
    return int(statistical['verdict'].isin(DECIDED).sum()), len(statistical)


def read_runs(results_dir: str, sources: set[str]) -> dict[str, int]:
    """Source -> the runs of it the design's records hold (every seed, the design's and any other)."""
    held: dict[str, int] = {}
    for row in record_rows(Path(results_dir) / 'records'):
        if row['name'] in sources:
            held[row['name']] = held.get(row['name'], 0) + 1
    return held


def design_row(path: str) -> tuple[dict, list[dict], dict]:
    """A budgeted design's summary row, its looks' rows and its hours row; a ValueError where it is not budgeted or
    has no look."""
    design = load_design(path)
    if not seed_plan(design).budgeted:
        raise ValueError(f'{path}: seeds {design["seeds"]!r} is not a budgeted design (seeds: {{initial, max, policy: '
                         f'greedy, batch, budget}})')
    results_dir = design['results_dir']
    found = looks(results_dir)
    if not found:
        raise ValueError(f'{path}: no look under {results_dir}/stages: run the design first')
    prices = Prices.of(design)
    final = found[-1]
    spent = prices.cost({}, final['seeds'])
    read = read_runs(results_dir, set(prices.runs))
    read_s = prices.cost({}, read)
    won, statistical = decided(results_dir)
    row = {'substrate': substrate_of(design), 'looks': len(found), 'runs': sum(final['seeds'].values()),
           'job-seconds': round(spent), 'x fixed': round(spent / prices.fixed(FIXED_SEEDS), 2),
           'decided (design seeds)': f"{len(final['decided'])} of {statistical}",
           'job-s a decided claim': round(spent / max(len(final['decided']), 1)),
           'runs read': sum(read.values()), 'job-seconds read': round(read_s),
           'decided (every seed)': f'{won} of {statistical}', 'job-s read a decided claim': round(read_s / max(won, 1)),
           'open within max': len(final['open']), 'beyond max': len(final['beyond_max']), 'stop': final['stop'],
           f'hours on {CORES} cores, at least': round(spent / CORES / 3600, 2)}
    return row, look_rows(found, prices), hours_row(row['substrate'], found, prices)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m analysis.ledger.spending', description=__doc__.split('\n')[0])
    parser.add_argument('--configfile', nargs='+', default=None, help='budgeted design files (default: the '
                        'published designs that are budgeted)')
    args = parser.parse_args(argv)
    paths = args.configfile or [p for p in PUBLISHED_DESIGNS if seed_plan(load_design(p)).budgeted]
    rows, hours_rows = [], []
    for path in paths:
        try:
            row, per_look, hours_of = design_row(path)
        except ValueError as error:
            raise SystemExit(str(error)) from None
        rows.append(row)
        hours_rows.append(hours_of)
        print(f"**{row['substrate']}** ({path}), each look:\n\n{to_markdown(pd.DataFrame(per_look))}\n")
    print(to_markdown(pd.DataFrame(rows)))
    print(f"\nHours with the looks' barriers (at least to at most), and without them:\n\n"
          f"{to_markdown(pd.DataFrame(hours_rows))}")
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
