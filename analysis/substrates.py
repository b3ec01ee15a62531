"""One claim on several substrates: is it about PPO or about one toy? Each substrate's ledger (analysis.claims)
judges every claim's direction and size apart; this module lines them up per claim.

    outcome     per claim, part and substrate: holds (reproduced; a size inside the band), fails (contradicted,
                reversed or short of the claim; a size outside the band), open (inconclusive) or untested (the
                substrate's design has made no look yet)
    holds_on    per claim and part: on how many of the substrates it holds ("2 of 3")
    class       general (holds on every substrate), substrate-dependent (holds on some and fails on others),
                fails everywhere (fails on every substrate), else open (some substrate has not decided it)

A size claim's direction is its derived `-direction` row (analysis.claims.direction_claim): it is reported on the
size claim's line. Findings and checks are left out (no verdict on a direction or size).

    python -m analysis.substrates config/config.yaml config/substrates/larger.yaml config/substrates/longer.yaml

reads each design's substrate (its baseline's) and published ledger (results_dir/tables/claims.csv; none before its
first look), says how far each design got, and writes substrates.csv and .md (the designs' progress and the classes'
counts first) and substrates.svg and .png under --out (default results/across: the aggregation owns results/tables);
and, from each design's comparisons (results_dir/tables/comparisons.csv), effects.svg and .png: each cell's effect on
the held-out pass rate against the baseline on every substrate.
"""
from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from agentrl.files import write_text
from workflow.design import load_design, substrate_of
from workflow.plan import seed_plan
from workflow.state import record_rows

from .claims import DIRECTION_SUFFIX
from .figures import PAGE_WIDTH, TITLE, page, panels, save, style
from .ledger_figure import COLORS, section
from .text import to_markdown

OUTCOMES = {'reproduced': 'holds', 'inside': 'holds', 'contradicted': 'fails', 'reversed': 'fails',
            'short of the claim': 'fails', 'outside': 'fails'}  # the old verdict words and the new; anything else: open
SHOWN = {'holds': 'reproduced', 'fails': 'contradicted', 'open': 'inconclusive'}  # an outcome drawn in a verdict's colour
EFFECT = 'pass_heldout'  # the metric of the effects figure
UNTESTED = 'untested'  # every outcome of a substrate whose design has made no look yet
NOT_LOOKED = '#e4e4e4'  # its colour: lighter than an open verdict's grey
CLASSES = ('general', 'substrate-dependent', 'fails everywhere', 'open')
PARTS = ('direction', 'size')


@dataclass(frozen=True)
class Judged:
    """One substrate as its design left it: its ledger (claims.csv; None before the design's first look) and a line
    saying how far the design got."""
    ledger: pd.DataFrame | None
    progress: str
    comparisons: pd.DataFrame | None = None  # its comparisons table (analysis.compare), where published


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


def legend_words(outcome: str) -> str:
    """An outcome as the figure's legend names it, with the verdict words it stands for: 'holds (reproduced, inside)'."""
    words = [verdict for verdict, mapped in OUTCOMES.items() if mapped == outcome] or [SHOWN.get(outcome, 'no look yet')]
    return f'{outcome} ({", ".join(words)})'


def figure(table: pd.DataFrame, substrates: list[str], stem: Path) -> list[Path]:
    """Claims (rows, by chapter section) against substrates (columns), one panel per part, each cell coloured by
    its outcome (holds green, fails vermillion, open grey, untested light grey, no such part white), a legend naming
    the verdicts behind each colour; written as stem.svg/.png."""
    outcomes = ('holds', 'fails', 'open', UNTESTED)
    codes = {outcome: code for code, outcome in enumerate(outcomes)}
    colours = [COLORS[SHOWN[o]] if o in SHOWN else NOT_LOOKED for o in outcomes]
    ordered = table.sort_values('section', kind='stable')
    with style():
        fig, axes = panels(len(PARTS), width=1.6 + 0.5 * len(substrates), height=1.8 + 0.17 * len(ordered),
                           sharey=True)
        for ax, part in zip(axes, PARTS):
            values = ordered[[f'{part}: {name}' for name in substrates]].apply(lambda c: c.map(codes))
            ax.imshow(np.ma.masked_invalid(values.to_numpy(dtype=float)), cmap=ListedColormap(colours), vmin=0,
                      vmax=len(outcomes) - 1, aspect='auto', interpolation='nearest')
            ax.set_xticks(range(len(substrates)), substrates, rotation=30, ha='right', fontsize=9)
            ax.set_yticks(range(len(ordered)), [f'{s}  {i}' for s, i in zip(ordered['section'], ordered['id'])],
                          fontsize=8)
            ax.set_title(part, fontsize=10)
            ax.grid(False)
        fig.legend(handles=[Patch(facecolor=c, edgecolor='#555555', label=legend_words(o))
                            for o, c in zip(outcomes, colours)], loc='outside lower center', ncol=2, fontsize=8,
                   frameon=False)
        fig.suptitle('Each claim on each substrate', **TITLE)
        return save(fig, stem)


def effects(comparisons: dict[str, pd.DataFrame], stem: Path, metric: str = EFFECT) -> list[Path]:
    """Each cell's effect on `metric` against the baseline (its comparisons' difference, paired by seed where the
    table says so, with its 95% CI), one row per cell and a coloured marker per substrate; written as stem.svg/.png."""
    rows = {name: frame[(frame['contrast'] == 'difference') & (frame['metric'] == metric)].set_index('cell')
            for name, frame in comparisons.items()}
    cells = list(dict.fromkeys(c for frame in rows.values() for c in frame.index))
    colours = dict(zip(rows, sns.color_palette('colorblind', len(rows))))
    offsets = dict(zip(rows, np.linspace(-0.25, 0.25, len(rows)) if len(rows) > 1 else [0.0]))
    with style():
        fig, (ax,) = page(1, 1, width=PAGE_WIDTH, height=1.6 + 0.3 * len(cells))
        for name, frame in rows.items():
            y = np.array([cells.index(c) for c in frame.index]) + offsets[name]
            low, high = frame['n'].min(), frame['n'].max()
            seeds = f'{low}' if low == high else f'{low} to {high}'
            paired = ', paired by seed' if (frame['paired'] == 'yes').all() else ''
            ax.hlines(y, frame['ci_low'], frame['ci_high'], color=colours[name], linewidth=1.5)
            ax.plot(frame['diff'], y, 'o', color=colours[name], markersize=4, label=f'{name} ({seeds} seeds{paired})')
        ax.axvline(0, color='k', linewidth=0.6)
        ax.set_yticks(range(len(cells)), cells, fontsize=8)
        ax.set(ylim=(len(cells) - 0.5, -0.5), xlabel=f'{metric}: cell - baseline (95% CI of the difference)')
        fig.legend(loc='outside lower center', ncol=len(rows), fontsize=8, frameon=False)
        fig.suptitle(f'Each ablation against the baseline on {len(rows)} substrates: {metric}', **TITLE)
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
        claims, comparisons = folder / 'tables' / 'claims.csv', folder / 'tables' / 'comparisons.csv'
        ledger = pd.read_csv(claims, keep_default_na=False, na_values=['']) if claims.is_file() else None
        judged[name] = Judged(ledger, progress(design, folder, ledger is not None),
                              pd.read_csv(comparisons) if comparisons.is_file() else None)
    return judged


def publish(judged: dict[str, Judged], out: Path | str) -> list[Path]:
    """The ledger across substrates in out: substrates.csv (one row per claim), substrates.md (each design's progress,
    the classes' counts, each substrate's outcomes' counts, then the rows), substrates.svg/.png; effects.svg/.png
    where a design has published its comparisons."""
    out, table = Path(out), across(judged)
    counts = class_counts(table).rename_axis('part').reset_index()
    designs = pd.DataFrame({'substrate': list(judged), 'its design': [j.progress for j in judged.values()]})
    markdown = (f'Claims on {len(judged)} substrates ({", ".join(judged)})\n\n{to_markdown(designs)}\n'
                f'How many of each class\n\n{to_markdown(counts)}\n'
                f'Per substrate, how many of each outcome\n\n{to_markdown(outcome_counts(table, list(judged)))}\n'
                f'Each claim\n\n{to_markdown(table.fillna(""))}')
    compared = {name: j.comparisons for name, j in judged.items() if j.comparisons is not None}
    return [write_text(out / 'substrates.csv', table.to_csv(index=False)), write_text(out / 'substrates.md', markdown),
            *figure(table, list(judged), out / 'substrates'), *(effects(compared, out / 'effects') if compared else [])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m analysis.substrates', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('designs', nargs='+', metavar='DESIGN', help='a design file, one per substrate')
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
