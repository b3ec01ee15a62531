"""Two publications of the same ledgers side by side: each claim's verdict in an earlier publication (a git revision)
and now, and for every change of verdict, which of its numbers moved.

    change   same; gained (open then, decided now); lost (decided then, open now); flipped (decided both times, the
             other way: for against, or inside against outside); new (a claim the earlier ledger lacks); withdrawn
    why      for a changed verdict, the first of these that its record or its numbers show:
               revised                  the claim was encoded again, or made a finding, or the rules that decide
                                        it changed, after the earlier ledger judged it (its `revised` field is new)
               judged as another claim  the claim is untested now because its test on the substrate is another
                                        claim's (its `same_as`): that claim's verdict is the finding's
               the numerics changed     the estimate moved (below) and the two ledgers' records are of other
                                        numerics versions: the runs differ in their bits
               the scale changed        the estimate moved and the two ledgers' runs are at other learning-rate
                                        scales (the baseline's lr over the chapter's): the runs differ in their step
               the estimate moved       either estimate lies outside the other's interval: the runs differ
                                        (other seeds), not only how many there are
               the rules changed        the estimates agree and the rules deciding every claim changed between
                                        the two ledgers (their `rules` dates differ): the same seeds judged anew
               fewer seeds / more seeds the estimates agree (each inside the other's interval), and a verdict
                                        lost on fewer seeds or gained on more: the evidence, not the effect, changed
               the threshold moved      the estimates agree, and neither the rules nor the seeds explain the
                                        change (as many seeds, a verdict gained on fewer or lost on more, or
                                        flipped): the family's threshold moved with the other claims' evidence
               the runs changed         a check (pass or fail, no estimate): it is exact on its runs, so only
                                        different runs (another numerics version) move it

    python -m analysis.pages.versions REVISION [DESIGN ...]

reads each design's published ledger (results_dir/tables/claims.csv) at REVISION (git) and in the working tree, and
the numerics version of each one's records, and writes versions.csv (one row per substrate and claim) and versions.md
(per substrate the counts of each change and why, then every changed claim) under --out (default results/across).
Findings and checks are kept: a check's change is a pass turned fail or back.
"""
from __future__ import annotations

import argparse
import io
import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd

from agentrl.files import write_text
from workflow.design import PUBLISHED_DESIGNS, load_design, substrate_of

from ..ledger.chapter import load_chapter, lr_scale_of
from ..ledger.claims import read_ledger
from ..ledger.verdicts import AGAINST, CHECKS, SUPPORTED, UNTESTED
from ..text import num, to_markdown

DECIDED = SUPPORTED + AGAINST + CHECKS
CHANGES = ('same', 'gained', 'lost', 'flipped', 'new', 'withdrawn')
REASONS = ('revised', 'judged as another claim', 'the numerics changed', 'the scale changed', 'the estimate moved',
           'the rules changed', 'fewer seeds', 'more seeds', 'the threshold moved', 'the runs changed')
KEPT = ('id', 'verdict', 'n', 'estimate', 'ci_low', 'ci_high', 'revised', 'rules', 'same_as')


def change(old, new) -> str:
    """How a claim's verdict went from old to new (NaN: the claim is absent from that ledger)."""
    if pd.isna(old):
        return 'new'
    if pd.isna(new):
        return 'withdrawn'
    if old == new:
        return 'same'
    if old in DECIDED and new in DECIDED:
        return 'flipped'
    return 'gained' if new in DECIDED else 'lost'


def inside(value: float, low: float, high: float) -> bool:
    """Whether value lies in [low, high]; a missing bound is no bound."""
    return (np.isnan(low) or value >= low) and (np.isnan(high) or value <= high)


def reason(row: pd.Series, numerics: bool = False, scale: bool = False) -> str:
    """Why a changed verdict changed (REASONS), from the two rows' estimates, intervals and seeds ('' if unchanged);
    numerics, scale: whether the two ledgers' runs are of other numerics versions, at other learning-rate scales."""
    if row['change'] in ('same', 'new', 'withdrawn'):
        return ''
    if row['verdict_then'] in CHECKS and row['verdict_now'] in CHECKS:
        return 'the runs changed'
    if str(row['revised_now']) != str(row['revised_then']) and not pd.isna(row['revised_now']):
        return 'revised'
    if row['verdict_now'] == UNTESTED and isinstance(row['same_as_now'], str) and row['same_as_now']:
        return 'judged as another claim'
    old, new = row['estimate_then'], row['estimate_now']
    if np.isfinite(old) and np.isfinite(new) and not (inside(new, row['ci_low_then'], row['ci_high_then'])
                                                      and inside(old, row['ci_low_now'], row['ci_high_now'])):
        return 'the numerics changed' if numerics else 'the scale changed' if scale else 'the estimate moved'
    if str(row['rules_now']) != str(row['rules_then']):
        return 'the rules changed'
    if row['change'] == 'lost' and row['n_now'] < row['n_then']:
        return 'fewer seeds'
    if row['change'] == 'gained' and row['n_now'] > row['n_then']:
        return 'more seeds'
    return 'the threshold moved'


def compare(then: pd.DataFrame, now: pd.DataFrame, numerics: bool = False, scale: bool = False) -> pd.DataFrame:
    """Two ledgers (claims.csv rows) -> one row per claim: id, verdict_then, verdict_now, n, estimate and printed
    interval of each (suffixes _then, _now), change and why (reason's numerics and scale: whether their runs differ
    so); in the newer ledger's order, withdrawn claims last."""
    def kept(ledger):
        frame = ledger.reindex(columns=list(KEPT))  # a ledger from before `revised` has none
        for column in ('n', 'estimate', 'ci_low', 'ci_high'):
            frame[column] = pd.to_numeric(frame[column], errors='coerce')
        return frame
    rows = kept(then).merge(kept(now), on='id', how='outer', suffixes=('_then', '_now'), sort=False)
    order = {claim: i for i, claim in enumerate(list(now['id']) + list(then['id']))}
    rows = rows.sort_values('id', key=lambda ids: ids.map(order), kind='stable').reset_index(drop=True)
    rows['change'] = [change(a, b) for a, b in zip(rows['verdict_then'], rows['verdict_now'])]
    rows['why'] = rows.apply(reason, axis=1, numerics=numerics, scale=scale)
    return rows


def check_revision(revision: str) -> None:
    """A ValueError for a revision that is not a commit of this repository."""
    known = subprocess.run(['git', 'rev-parse', '--verify', '--quiet', f'{revision}^{{commit}}'], capture_output=True)
    if known.returncode:
        raise ValueError(f'revision {revision!r}: not a commit of this repository')


def git_bytes(revision: str, path: Path) -> bytes | None:
    """A file's bytes at a (checked) git revision; None where the revision lacks it."""
    shown = subprocess.run(['git', 'show', f'{revision}:{path.as_posix()}'], capture_output=True)
    return shown.stdout if shown.returncode == 0 else None


def numerics_of(runs: bytes | None) -> str:
    """The numerics version(s) of a records folder's runs.parquet ('' where there is none)."""
    if runs is None:
        return ''
    versions = sorted(pd.read_parquet(io.BytesIO(runs))['numerics_version'].dropna().astype(int).unique())
    return ', '.join(map(str, versions))


def scale_of(runs: bytes | None, baseline: str = 'baseline') -> str:
    """The learning-rate scale of a records folder's runs.parquet: its baseline runs' lr over the chapter's ('' where
    it has none)."""
    if runs is None:
        return ''
    table = pd.read_parquet(io.BytesIO(runs))
    rates = {json.loads(config)['lr'] for config in table.loc[table['name'] == baseline, 'config']}
    chapter = load_chapter()
    return ', '.join(f'{lr_scale_of({"lr": lr}, chapter):.3g}' for lr in sorted(rates))


def versions(revision: str, designs: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each design's ledger at revision and now -> (the rows of every substrate, with its name first; per substrate
    the numerics versions then and now and the counts of each change and reason). Substrates without a ledger
    both times are left out."""
    check_revision(revision)
    rows, counts = [], []
    for path in designs:
        design = load_design(path)
        name, folder = substrate_of(design), Path(design['results_dir'])
        ledger = folder / 'tables' / 'claims.csv'
        then = git_bytes(revision, ledger)
        if then is None or not ledger.is_file():
            continue
        then, now = read_ledger(then), read_ledger(ledger)
        runs = folder / 'records' / 'runs.parquet'
        runs_then, runs_now = git_bytes(revision, runs), runs.read_bytes() if runs.is_file() else None
        numerics = numerics_of(runs_then), numerics_of(runs_now)
        scale = scale_of(runs_then), scale_of(runs_now)
        compared = compare(then, now, numerics=numerics[0] != numerics[1], scale=scale[0] != scale[1])
        rows.append(compared.assign(substrate=name))
        tally = compared['change'].value_counts().reindex(CHANGES, fill_value=0)
        why = compared['why'].value_counts().reindex(REASONS, fill_value=0)
        counts.append({'substrate': name, 'numerics then': numerics[0], 'numerics now': numerics[1],
                       'lr scale then': scale[0], 'lr scale now': scale[1],
                       **tally.to_dict(), **{f'why: {k}': v for k, v in why.items()}})
    if not rows:
        raise ValueError(f'no design given has a published ledger both at {revision} and now')
    table = pd.concat(rows, ignore_index=True)
    return table[['substrate'] + [c for c in table if c != 'substrate']], pd.DataFrame(counts)


NOTE = ('A verdict **gained** was open then and is decided now, **lost** the other way, **flipped** decided both times '
        'the other way. Why: **revised** where the claim was encoded again; **judged as another claim** where it is '
        'untested now because its test on the substrate is another claim\'s (its `same_as`); **the numerics changed** '
        'or **the scale '
        'changed** where an estimate moved (below) and the two ledgers\' runs are of other numerics versions, or at '
        'other learning-rate scales; **the estimate moved** where either '
        'estimate lies outside the other\'s printed interval (the runs differ, not only in number); **the rules '
        'changed** where the estimates agree and the rules deciding every claim changed (the same seeds judged anew); '
        '**fewer seeds** where a verdict was lost on fewer seeds, **more seeds** where one was gained on more; **the '
        'threshold moved** where none of these explains it (the family\'s threshold moved with the other claims); '
        '**the runs changed** for a check, which is exact on its runs.')


def publish(table: pd.DataFrame, counts: pd.DataFrame, out: Path | str) -> list[Path]:
    """versions.csv and versions.md under out (the earlier publication named by its numerics version, in counts)."""
    out = Path(out)
    changed = table[~table['change'].isin(['same'])].copy()
    for when in ('then', 'now'):
        changed[f'estimate {when} (interval)'] = [
            '' if pd.isna(e) else f'{num(e)} ({num(lo)} to {num(hi)})' if np.isfinite(lo) else num(e)
            for e, lo, hi in zip(changed[f'estimate_{when}'], changed[f'ci_low_{when}'], changed[f'ci_high_{when}'])]
    shown = changed[['substrate', 'id', 'verdict_then', 'verdict_now', 'change', 'why', 'n_then', 'n_now',
                     'estimate then (interval)', 'estimate now (interval)']]
    markdown = '\n'.join(['# Each substrate\'s ledger now against its earlier publication', '', NOTE, '',
                          to_markdown(counts), '## Every claim whose verdict changed', '', to_markdown(shown)])
    return [write_text(out / 'versions.csv', table.to_csv(index=False)), write_text(out / 'versions.md', markdown)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m analysis.pages.versions', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('revision', help='the git revision of the earlier publication')
    parser.add_argument('designs', nargs='*', default=list(PUBLISHED_DESIGNS), metavar='DESIGN',
                        help=f'a design file, one per substrate (default: {" ".join(PUBLISHED_DESIGNS)})')
    parser.add_argument('--out', default='results/across', help='where the tables go (default: %(default)s)')
    args = parser.parse_args(argv)
    try:
        table, counts = versions(args.revision, args.designs)
    except ValueError as error:
        parser.error(str(error))
    for path in publish(table, counts, args.out):
        print(path)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
