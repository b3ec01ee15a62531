"""One claim on several substrates: is it about PPO or about one toy? Each substrate's ledger (analysis.claims)
judges every claim's direction and size apart; this module lines them up per claim.

    outcome     per claim, part and substrate: holds (reproduced; a size inside the band), fails (contradicted; a
                size outside the band) or open (inconclusive, untested)
    holds_on    per claim and part: on how many of the substrates it holds ("2 of 3")
    class       general (holds on every substrate), substrate-dependent (holds on some and fails on others),
                fails everywhere (fails on every substrate), else open (some substrate has not decided it)

A size claim's direction is its derived `-direction` row (analysis.claims.direction_claim): it is reported on the
size claim's line. Findings and checks are left out (no verdict on a direction or size).

    python -m analysis.substrates --out results tinyagent=results larger=results/substrates/larger

reads each substrate's published ledger (DIR/tables/claims.csv) and writes tables/substrates.csv and .md (the
classes' counts first) and figures/substrates.svg and .png under --out.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap

from agentrl.files import write_text

from .claims import DIRECTION_SUFFIX
from .figures import panels, save, style
from .ledger_figure import COLORS, section
from .text import to_markdown

OUTCOMES = {'reproduced': 'holds', 'contradicted': 'fails'}  # anything else: open
CLASSES = ('general', 'substrate-dependent', 'fails everywhere', 'open')
PARTS = ('direction', 'size')


def outcomes(ledgers: dict[str, pd.DataFrame]) -> tuple[pd.DataFrame, pd.Series]:
    """Substrate name -> its ledger (claims.csv columns id, verdict, part, group, source) => (one row per claim,
    index id, a size claim's derived direction folded onto it: per part and substrate its outcome, columns (part,
    substrate), NaN where a claim has no such part; each claim's chapter section, or its group for a calibration target
    or a claim of the literature), in the claims file's order."""
    frames = []
    for name, frame in ledgers.items():
        judged = frame[frame['group'].isin(['chapter', 'calibration', 'literature'])]
        owner = judged['id'].str.removesuffix(DIRECTION_SUFFIX)
        outcome = judged['verdict'].map(OUTCOMES).fillna('open')
        where = [section(source) if group == 'chapter' else group
                 for source, group in zip(judged['source'].astype(str), judged['group'])]
        frames.append(pd.DataFrame({'id': owner, 'part': judged['part'], 'substrate': name, 'outcome': outcome,
                                    'section': where}))
    long = pd.concat(frames, ignore_index=True)
    table = long.pivot_table(index='id', columns=['part', 'substrate'], values='outcome', aggfunc='first')
    table = table.reindex(columns=pd.MultiIndex.from_product([PARTS, list(ledgers)]))
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


def across(ledgers: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per claim: its section (or group), per part its outcome on each substrate, on how many it holds ('k of n')
    and its class. Columns id, section, then for each part `<part>: <substrate>`, `<part> holds on`, `<part>
    class`."""
    table, sections = outcomes(ledgers)
    out = pd.DataFrame({'id': table.index, 'section': sections.to_numpy()})
    for part in PARTS:
        parts = table[part]
        for name in ledgers:
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


def figure(table: pd.DataFrame, substrates: list[str], stem: Path) -> list[Path]:
    """Claims (rows, by chapter section) against substrates (columns), one panel per part, each cell coloured by
    its outcome (holds green, fails vermillion, open grey, no such part white); written as stem.svg/.png."""
    codes = {'holds': 0, 'fails': 1, 'open': 2}
    colours = ListedColormap([COLORS['reproduced'], COLORS['contradicted'], COLORS['inconclusive']])
    ordered = table.sort_values('section', kind='stable')
    with style():
        fig, axes = panels(len(PARTS), width=0.8 + 0.6 * len(substrates), height=0.8 + 0.16 * len(ordered),
                           sharey=True)
        fig.subplots_adjust(wspace=0.08)
        for ax, part in zip(axes, PARTS):
            values = ordered[[f'{part}: {name}' for name in substrates]].apply(lambda c: c.map(codes))
            ax.imshow(np.ma.masked_invalid(values.to_numpy(dtype=float)), cmap=colours, vmin=0, vmax=2,
                      aspect='auto', interpolation='nearest')
            ax.set_xticks(range(len(substrates)), substrates, rotation=30, ha='right')
            ax.set_yticks(range(len(ordered)), [f'{s}  {i}' for s, i in zip(ordered['section'], ordered['id'])],
                          fontsize=6)
            ax.set_title(part)
            ax.grid(False)
        fig.suptitle('Each claim on each substrate: holds (green), fails (vermillion), open (grey)', fontsize=8)
        return save(fig, stem)


def read_ledgers(specs: list[str]) -> dict[str, pd.DataFrame]:
    """NAME=DIR (a substrate and its design's results folder) -> its ledger, DIR/tables/claims.csv; a ValueError
    naming a malformed spec, a name given twice or a folder without a ledger."""
    ledgers = {}
    for spec in specs:
        name, _, folder = spec.partition('=')
        if not name or not folder:
            raise ValueError(f'{spec!r}: expected NAME=DIR, a substrate and its results folder')
        if name in ledgers:
            raise ValueError(f'substrate {name!r} given twice')
        path = Path(folder) / 'tables' / 'claims.csv'
        if not path.is_file():
            raise ValueError(f'{path} does not exist: {name} has no published ledger (python -m analysis aggregate)')
        ledgers[name] = pd.read_csv(path, keep_default_na=False, na_values=[''])
    return ledgers


def publish(ledgers: dict[str, pd.DataFrame], out: Path | str) -> list[Path]:
    """The ledger across substrates under out: tables/substrates.csv (one row per claim), tables/substrates.md (the
    classes' counts, then the rows), figures/substrates.svg/.png."""
    out, table = Path(out), across(ledgers)
    counts = class_counts(table).rename_axis('part').reset_index()
    markdown = (f'Claims on {len(ledgers)} substrates ({", ".join(ledgers)}): how many of each class\n\n'
                f'{to_markdown(counts)}\n\nEach claim\n\n{to_markdown(table.fillna(""))}\n')
    return [write_text(out / 'tables' / 'substrates.csv', table.to_csv(index=False)),
            write_text(out / 'tables' / 'substrates.md', markdown),
            *figure(table, list(ledgers), out / 'figures' / 'substrates')]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m analysis.substrates', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('ledgers', nargs='+', metavar='NAME=DIR', help="a substrate and its design's results folder")
    parser.add_argument('--out', default='results', help='where the tables and the figure go (default: %(default)s)')
    args = parser.parse_args(argv)
    try:
        ledgers = read_ledgers(args.ledgers)
    except ValueError as error:
        parser.error(str(error))
    for path in publish(ledgers, args.out):
        print(path)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
