"""One claim on several substrates: is it about PPO or about one toy? Each substrate's ledger (analysis.claims)
judges every claim's direction and size apart; this module lines them up per claim.

    outcome     per claim, part and substrate: holds (reproduced; a size inside the band), fails (contradicted; a
                size outside the band), open (inconclusive) or untested (the substrate's design has made no look yet)
    holds_on    per claim and part: on how many of the substrates it holds ("2 of 3")
    class       general (holds on every substrate), substrate-dependent (holds on some and fails on others),
                fails everywhere (fails on every substrate), else open (some substrate has not decided it)

A size claim's direction is its derived `-direction` row (analysis.claims.direction_claim): it is reported on the
size claim's line. Findings and checks are left out (no verdict on a direction or size).

    python -m analysis.substrates [DESIGN ...]

(given no design, the published ones: PUBLISHED_DESIGNS, config/config.yaml and config/substrates/) reads each
design's substrate (its baseline's) and published ledger (results_dir/tables/claims.csv; none before its first
look), says how far each design got, and writes substrates.csv and .md (the designs' progress and the classes'
counts first) and substrates.svg and .png under --out (default results/across: the aggregation owns results/tables).
"""
from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap

from agentrl.files import write_text
from workflow.design import load_design, substrate_of
from workflow.plan import seed_plan
from workflow.state import record_rows

from .claims import DIRECTION_SUFFIX
from .figures import panels, save, style
from .ledger_figure import COLORS, section
from .text import to_markdown

OUTCOMES = {'reproduced': 'holds', 'contradicted': 'fails'}  # anything else: open
UNTESTED = 'untested'  # every outcome of a substrate whose design has made no look yet
NOT_LOOKED = '#e4e4e4'  # its colour: lighter than an open verdict's grey
CLASSES = ('general', 'substrate-dependent', 'fails everywhere', 'open')
PARTS = ('direction', 'size')
PUBLISHED_DESIGNS = ('config/config.yaml', 'config/substrates/larger.yaml', 'config/substrates/longer.yaml')


@dataclass(frozen=True)
class Judged:
    """One substrate as its design left it: its ledger (claims.csv; None before the design's first look) and a line
    saying how far the design got."""
    ledger: pd.DataFrame | None
    progress: str


def outcomes(judged: dict[str, Judged]) -> tuple[pd.DataFrame, pd.Series]:
    """Substrate name -> its Judged (a ledger's columns id, verdict, part, group, source) => (one row per claim, index
    id, a size claim's derived direction folded onto it: per part and substrate its outcome, columns (part,
    substrate), NaN where a claim has no such part, `untested` on a substrate without a ledger; each claim's chapter
    section, or its group for a calibration target or a claim of the literature), in the claims file's order."""
    frames = []
    for name, frame in ((name, j.ledger) for name, j in judged.items() if j.ledger is not None):
        kept = frame[frame['group'].isin(['chapter', 'calibration', 'literature'])]
        owner = kept['id'].str.removesuffix(DIRECTION_SUFFIX)
        outcome = kept['verdict'].map(OUTCOMES).fillna('open')
        where = [section(source) if group == 'chapter' else group
                 for source, group in zip(kept['source'].astype(str), kept['group'])]
        frames.append(pd.DataFrame({'id': owner, 'part': kept['part'], 'substrate': name, 'outcome': outcome,
                                    'section': where}))
    if not frames:
        raise ValueError(f'no ledger on any substrate ({", ".join(judged)}): nothing to line up')
    long = pd.concat(frames, ignore_index=True)
    table = long.pivot_table(index='id', columns=['part', 'substrate'], values='outcome', aggfunc='first')
    table = table.reindex(columns=pd.MultiIndex.from_product([PARTS, list(judged)])).astype(object)
    for part in PARTS:
        stated = table[part].notna().any(axis=1)
        for name in (name for name, j in judged.items() if j.ledger is None):
            table.loc[stated, (part, name)] = UNTESTED
    order = list(dict.fromkeys(long['id']))  # the claims file's order
    return table.reindex(order), long.drop_duplicates('id').set_index('id')['section'].reindex(order)


def classify(row: pd.Series) -> str:
    """One part's class over the substrates from its outcomes (NaN: the claim has no such part)."""
    seen = row.dropna()
    if seen.empty:
        return ''
    if (seen == 'holds').all():
        return 'general'
    if (seen == 'fails').all():
        return 'fails everywhere'
    if (seen == 'holds').any() and (seen == 'fails').any():
        return 'substrate-dependent'
    return 'open'


def across(judged: dict[str, Judged]) -> pd.DataFrame:
    """Per claim: its section (or group), per part its outcome on each substrate, on how many it holds ('k of n')
    and its class. Columns id, section, then for each part `<part>: <substrate>`, `<part> holds on`, `<part>
    class`."""
    table, sections = outcomes(judged)
    out = pd.DataFrame({'id': table.index, 'section': sections.to_numpy()})
    for part in PARTS:
        parts = table[part]
        for name in judged:
            out[f'{part}: {name}'] = parts[name].to_numpy()
        holds = (parts == 'holds').sum(axis=1).to_numpy()
        present = parts.notna().sum(axis=1).to_numpy()
        out[f'{part} holds on'] = [f'{k} of {n}' if n else '' for k, n in zip(holds, present)]
        out[f'{part} class'] = [classify(row) for _, row in parts.iterrows()]
    return out.reset_index(drop=True)


def class_counts(table: pd.DataFrame) -> pd.DataFrame:
    """How many claims of each class, direction and size apart (rows: parts; columns: CLASSES)."""
    return pd.DataFrame({part: table[f'{part} class'].value_counts().reindex(CLASSES, fill_value=0)
                         for part in PARTS}).T


def outcome_counts(table: pd.DataFrame, substrates: list[str]) -> pd.DataFrame:
    """Per substrate (rows), how many claims of each outcome, direction and size apart (columns `<part>: <outcome>`)."""
    kinds = ('holds', 'fails', 'open', UNTESTED)
    return pd.DataFrame([{'substrate': name, **{f'{part}: {kind}': int((table[f'{part}: {name}'] == kind).sum())
                                                for part in PARTS for kind in kinds}} for name in substrates])


def figure(table: pd.DataFrame, substrates: list[str], stem: Path) -> list[Path]:
    """Claims (rows, by chapter section) against substrates (columns), one panel per part, each cell coloured by
    its outcome (holds green, fails vermillion, open grey, untested light grey, no such part white); written as
    stem.svg/.png."""
    codes = {'holds': 0, 'fails': 1, 'open': 2, UNTESTED: 3}
    colours = ListedColormap([COLORS['reproduced'], COLORS['contradicted'], COLORS['inconclusive'], NOT_LOOKED])
    ordered = table.sort_values('section', kind='stable')
    with style():
        height = 0.8 + 0.16 * len(ordered)
        fig, axes = panels(len(PARTS), width=0.8 + 0.6 * len(substrates), height=height, sharey=True)
        fig.subplots_adjust(wspace=0.08, top=1 - 0.9 / height)  # room for the title, not more
        for ax, part in zip(axes, PARTS):
            values = ordered[[f'{part}: {name}' for name in substrates]].apply(lambda c: c.map(codes))
            ax.imshow(np.ma.masked_invalid(values.to_numpy(dtype=float)), cmap=colours, vmin=0, vmax=3,
                      aspect='auto', interpolation='nearest')
            ax.set_xticks(range(len(substrates)), substrates, rotation=30, ha='right')
            ax.set_yticks(range(len(ordered)), [f'{s}  {i}' for s, i in zip(ordered['section'], ordered['id'])],
                          fontsize=6)
            ax.set_title(part)
            ax.grid(False)
        fig.suptitle('Each claim on each substrate: holds (green), fails (vermillion), open (grey), untested (light)',
                     fontsize=8)
        return save(fig, stem)


def made(rows: list[dict]) -> str:
    """Records' rows (workflow.state.record_rows) -> how many runs, at which numerics versions: '760 runs, numerics
    version 4'."""
    versions = sorted({int(row['numerics_version']) for row in rows})
    named = ' and '.join(map(str, versions))
    return f'{len(rows)} runs, numerics version{"s" if len(versions) > 1 else ""} {named}'


def progress(design: dict, folder: Path, ledger: bool) -> str:
    """How far a design got, from its results folder: its runs and their numerics versions (its records, verified:
    workflow.state.record_rows) and its last look (the ledger's stage, aggregate.json; its look file's `next` is
    empty when the design is done)."""
    records = folder / 'records'
    rows = record_rows(records)
    if not ledger:
        return f'no look yet: its records hold {made(rows)}' if rows else 'not run'
    plan, stage = seed_plan(design), json.loads((records / 'aggregate.json').read_text())['stage']
    if stage is None:
        return f'done: one look at {plan.looks[0]} seeds, {made(rows)}'
    done = not json.loads((folder / 'stages' / f'stage~{stage}.json').read_text())['next']
    return (f'{"done" if done else "open"}: look {stage} of at most {len(plan.looks)} ({plan.looks[stage - 1]} '
            f'seeds), {made(rows)}')


def read_substrates(designs: list[str]) -> dict[str, Judged]:
    """Design files -> their substrate's name -> its Judged (the ledger at results_dir/tables/claims.csv, if any); a
    ValueError naming a substrate two designs share."""
    judged = {}
    for path in designs:
        design = load_design(path)
        name, folder = substrate_of(design), Path(design['results_dir'])
        if name in judged:
            raise ValueError(f'{path}: substrate {name!r} is already the substrate of another design given')
        claims = folder / 'tables' / 'claims.csv'
        ledger = pd.read_csv(claims, keep_default_na=False, na_values=['']) if claims.is_file() else None
        judged[name] = Judged(ledger, progress(design, folder, ledger is not None))
    return judged


def publish(judged: dict[str, Judged], out: Path | str) -> list[Path]:
    """The ledger across substrates in out: substrates.csv (one row per claim), substrates.md (each design's progress,
    the classes' counts, each substrate's outcomes' counts, then the rows), substrates.svg/.png."""
    out, table = Path(out), across(judged)
    counts = class_counts(table).rename_axis('part').reset_index()
    designs = pd.DataFrame({'substrate': list(judged), 'its design': [j.progress for j in judged.values()]})
    markdown = (f'Claims on {len(judged)} substrates ({", ".join(judged)})\n\n{to_markdown(designs)}\n'
                f'How many of each class\n\n{to_markdown(counts)}\n'
                f'Per substrate, how many of each outcome\n\n{to_markdown(outcome_counts(table, list(judged)))}\n'
                f'Each claim\n\n{to_markdown(table.fillna(""))}')
    return [write_text(out / 'substrates.csv', table.to_csv(index=False)), write_text(out / 'substrates.md', markdown),
            *figure(table, list(judged), out / 'substrates')]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m analysis.substrates', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('designs', nargs='*', default=list(PUBLISHED_DESIGNS), metavar='DESIGN',
                        help=f'a design file, one per substrate (default: {" ".join(PUBLISHED_DESIGNS)})')
    parser.add_argument('--out', default='results/across', help='where the tables and the figure go (default: %(default)s)')
    args = parser.parse_args(argv)
    try:
        judged = read_substrates(args.designs)
        paths = publish(judged, args.out)
    except ValueError as error:
        parser.error(str(error))
    for path in paths:
        print(path)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
