"""One claim on several substrates: is it about PPO or about one toy? Each substrate's ledger (analysis.ledger.claims)
judges every claim's direction and size apart; this module lines them up per claim.

    verdict     per claim, part and substrate: the substrate's ledger's verdict (reproduced, reversed, short of the
                claim, inside, outside, inconclusive) or untested (the substrate has no published ledger yet). It holds
                where the verdict is reproduced or inside, fails where it is reversed, short of the claim or outside,
                and is open otherwise.
    holds_on    per claim and part: on how many of the substrates it holds ("2 of 3")
    class       general (holds on every substrate), substrate-dependent (holds on some and fails on others),
                fails everywhere (fails on every substrate), else open (some substrate has not decided it)

A size claim's direction is its derived `-direction` row (analysis.ledger.claims.direction_claim): it is reported on the
size claim's line. Findings and checks are left out (no verdict on a direction or size); calibration targets (the
substrates were tuned to them) are shown apart and counted in no class.

    python -m analysis.pages.substrates [DESIGN ...]

(given no design, the published ones: PUBLISHED_DESIGNS, config/config.yaml and config/substrates/) reads each
design's substrate (its baseline's) and published ledger (results_dir/tables/claims.csv; none before its first
look), says how far each design got, and writes substrates.csv and .md (the designs' progress and the classes'
counts first) and substrates.svg and .png under --out (default results/across: the aggregation owns results/tables);
and, from each design's comparisons (results_dir/tables/comparisons.csv), effects.svg and .png: each cell's
effect on the held-out pass rate against the baseline on every substrate.
"""
from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from agentrl.files import write_text
from workflow.design import PUBLISHED_DESIGNS, load_design, substrate_of
from workflow.plan import seed_plan
from workflow.state import record_rows

from ..ledger.chapter import load_chapter, lr_scale_of
from ..ledger.claims import DIRECTION_SUFFIX, load_claims, read_ledger
from ..ledger.verdicts import AGAINST, DIRECTION_VERDICTS, SIZE_VERDICTS, SUPPORTED, UNTESTED
from ..records.records import load_records
from ..text import label, rerun_words, standing_words, to_markdown
from .figures import PAGE_WIDTH, TITLE, page, panels, save, style
from .ledger_figure import COLORS, section

SHOWN = {'holds': 'reproduced', 'fails': 'reversed', 'open': 'inconclusive'}  # an outcome drawn in a verdict's colour
EFFECT = 'pass_heldout'  # the metric of the effects figure
NOT_LOOKED = '#e4e4e4'  # untested's colour: lighter than an open verdict's grey
CLASSES = ('general', 'substrate-dependent', 'fails everywhere', 'open')
PARTS = ('direction', 'size')
JUDGED_GROUPS = ('chapter', 'literature')  # the groups whose claims are evidence; calibration targets are not


def outcome(verdict) -> str | float:
    """A verdict's outcome: holds, fails or open (NaN stays NaN: no such part)."""
    if not isinstance(verdict, str) or verdict == UNTESTED:
        return verdict
    return 'holds' if verdict in SUPPORTED else 'fails' if verdict in AGAINST else 'open'


@dataclass(frozen=True)
class Judged:
    """One substrate as its design left it: its ledger (claims.csv; None before the design's first look), a line
    saying how far the design got and its seed design in words."""
    ledger: pd.DataFrame | None
    progress: str
    seeds: str = ''
    comparisons: pd.DataFrame | None = None  # its comparisons table (analysis.stats.compare), where published
    standing: str = ''  # where its published runs stand against the chapter's regime (text.standing_words)


def outcomes(judged: dict[str, Judged]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Substrate name -> its Judged (a ledger's columns id, verdict, part, group, source, claim) => (one row
    per claim, index id, a size claim's derived direction folded onto it: per part and substrate its verdict,
    columns (part, substrate), NaN where a claim has no such part, `untested` on a substrate without a ledger; per
    claim its chapter section (or its group for a calibration target or a claim of the literature), group and
    wording), in the claims file's order. A claim whose test on a substrate is another claim's takes that claim's
    verdict there (by_repeats)."""
    frames = []
    for name, frame in ((name, j.ledger) for name, j in judged.items() if j.ledger is not None):
        kept = frame[frame['group'].isin(['chapter', 'calibration', 'literature'])]
        derived = kept['id'].str.endswith(DIRECTION_SUFFIX)
        where = [section(source) if group == 'chapter' else group
                 for source, group in zip(kept['source'].astype(str), kept['group'])]
        frames.append(pd.DataFrame({'id': kept['id'].str.removesuffix(DIRECTION_SUFFIX), 'part': kept['part'],
                                    'substrate': name, 'verdict': kept['id'].map(by_repeats(frame)),
                                    'section': where, 'group': kept['group'], 'derived': derived,
                                    'claim': kept['claim']}))
    if not frames:
        raise ValueError(f'no ledger on any substrate ({", ".join(judged)}): nothing to line up')
    long = pd.concat(frames, ignore_index=True)
    table = long.pivot_table(index='id', columns=['part', 'substrate'], values='verdict', aggfunc='first')
    table = table.reindex(columns=pd.MultiIndex.from_product([PARTS, list(judged)])).astype(object)
    for part in PARTS:
        stated = table[part].notna().any(axis=1)
        for name in (name for name, j in judged.items() if j.ledger is None):
            table.loc[stated, (part, name)] = UNTESTED
    order = list(dict.fromkeys(long['id']))  # the claims file's order
    about = long.sort_values('derived', kind='stable').drop_duplicates('id').set_index('id')
    return table.reindex(order), about[['section', 'group', 'claim']].reindex(order)


def by_repeats(ledger: pd.DataFrame) -> dict[str, str]:
    """A ledger's verdicts by claim, a claim whose test on its substrate is another claim's (its `same_as`) taking
    that claim's verdict: one finding, judged once."""
    verdicts = dict(zip(ledger['id'], ledger['verdict']))
    twins = {claim: twin for claim, twin in zip(ledger['id'], ledger['same_as']) if isinstance(twin, str) and twin}
    return {claim: verdicts[twins.get(claim, claim)] for claim in verdicts}


def classify(row: pd.Series) -> str:
    """One part's class over the substrates from its verdicts (NaN: the claim has no such part)."""
    return class_of(row.dropna().map(outcome))


def class_of(seen: pd.Series) -> str:
    """The class of outcomes over the substrates (holds, fails, open, untested); '' for none."""
    if seen.empty:
        return ''
    if (seen == 'holds').all():
        return 'general'
    if (seen == 'fails').all():
        return 'fails everywhere'
    if (seen == 'holds').any() and (seen == 'fails').any():
        return 'substrate-dependent'
    return 'open'


def recommended() -> dict[str, str]:
    """Claim id -> the words of the study's recommendation it tests (claims.yaml's `recommendations`)."""
    claims = load_claims()
    return {c['id']: claims['recommendations'][c['recommendation']] for c in claims['claims'] if 'recommendation' in c}


def across(judged: dict[str, Judged], recommendations: dict[str, str] | None = None) -> pd.DataFrame:
    """Per claim: its section (or group), group, wording and the recommendation of the literature it tests ('' for
    none; recommendations: id -> the recommendation's words, default the claims file's), per part its verdict on
    each substrate, on how many it holds ('k of n') and its class (none for a calibration target). Columns id,
    section, group, claim, recommendation, then for each part `<part>: <substrate>`, `<part> holds on`,
    `<part> class`."""
    table, about = outcomes(judged)
    recommendations = recommended() if recommendations is None else recommendations
    out = pd.DataFrame({'id': table.index, 'section': about['section'].to_numpy(), 'group': about['group'].to_numpy(),
                        'claim': about['claim'].to_numpy(),
                        'recommendation': [recommendations.get(i, '') for i in table.index]})
    judged_group = out['group'].isin(JUDGED_GROUPS).to_numpy()
    for part in PARTS:
        parts = table[part]
        for name in judged:
            out[f'{part}: {name}'] = parts[name].to_numpy()
        holds = (parts.apply(lambda c: c.map(outcome)) == 'holds').sum(axis=1).to_numpy()
        present = parts.notna().sum(axis=1).to_numpy()
        out[f'{part} holds on'] = [f'{k} of {n}' if n else '' for k, n in zip(holds, present)]
        out[f'{part} class'] = [classify(row) if evidence else '' for (_, row), evidence
                                in zip(parts.iterrows(), judged_group)]
    return out.reset_index(drop=True)


def class_counts(table: pd.DataFrame) -> pd.DataFrame:
    """How many claims of each class, per group of evidence (the chapter's, the literature's) and part (rows)."""
    rows = []
    for group in JUDGED_GROUPS:
        mine = table[table['group'] == group]
        for part in PARTS:
            found = mine[f'{part} class'].value_counts()
            if found.reindex(CLASSES, fill_value=0).sum():
                rows.append({'claims': GROUP_NAMES[group], 'part': part,
                             **{c: int(found.get(c, 0)) for c in CLASSES}})
    return pd.DataFrame(rows, columns=['claims', 'part', *CLASSES])


def advice(table: pd.DataFrame, substrates: list[str]) -> pd.DataFrame:
    """Per recommendation of the literature (in the claims' order): its words, how many claims test it, its outcome on
    each substrate (fails where a part of one of its claims fails there, holds where every part holds, untested where
    none was looked at, else open), on how many substrates it holds ('k of n') and its class."""
    rows = []
    for words, claims in table[table['recommendation'] != ''].groupby('recommendation', sort=False):
        row = {'recommendation': words, 'claims': len(claims)}
        for name in substrates:
            verdicts = claims[[f'{part}: {name}' for part in PARTS]].to_numpy().ravel()
            seen = pd.Series([v for v in verdicts if isinstance(v, str) and v], dtype=object).map(outcome)  # '': none
            row[name] = ('untested' if (seen == UNTESTED).all() else 'fails' if (seen == 'fails').any()
                         else 'holds' if (seen == 'holds').all() else 'open')
        found = pd.Series([row[name] for name in substrates])
        rows.append({**row, 'holds on': f'{int((found == "holds").sum())} of {len(substrates)}',
                     'class': class_of(found)})
    return pd.DataFrame(rows, columns=['recommendation', 'claims', *substrates, 'holds on', 'class'])


GROUP_NAMES = {'chapter': "the chapter's", 'literature': 'the literature\'s', 'calibration': 'calibration targets'}


def verdict_counts(table: pd.DataFrame, substrates: list[str]) -> pd.DataFrame:
    """Per substrate (rows), how many of the chapter's and the literature's claims got each verdict, direction and
    size apart (columns `<part>: <verdict>`)."""
    evidence = table[table['group'].isin(JUDGED_GROUPS)]
    words = {'direction': (*DIRECTION_VERDICTS, UNTESTED), 'size': (*SIZE_VERDICTS, UNTESTED)}
    return pd.DataFrame([{'substrate': name, **{f'{part}: {word}': int((evidence[f'{part}: {name}'] == word).sum())
                                                for part in PARTS for word in words[part]}} for name in substrates])


def legend_words(outcome: str) -> str:
    """An outcome as the figure's legend names it, with the verdict words it stands for: 'holds (reproduced, inside)'."""
    words = {'holds': SUPPORTED, 'fails': AGAINST, 'open': ('inconclusive',)}.get(outcome, ('no ledger yet',))
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
            values = ordered[[f'{part}: {name}' for name in substrates]].apply(lambda c: c.map(outcome).map(codes))
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
        ax.set(ylim=(len(cells) - 0.5, -0.5), xlabel=f'{label(metric)}: cell - baseline (95% CI of the difference)')
        fig.legend(loc='outside lower center', ncol=len(rows), fontsize=8, frameon=False)
        fig.suptitle(f'Each ablation against the baseline on {len(rows)} substrates: {label(metric)}', **TITLE)
        return save(fig, stem)


def made(rows: list[dict]) -> str:
    """Records' rows (workflow.state.record_rows) -> how many runs, at which numerics versions: '760 runs, numerics
    version 4'."""
    versions = sorted({int(row['numerics_version']) for row in rows})
    named = ' and '.join(map(str, versions))
    return f'{len(rows)} runs, numerics version{"s" if len(versions) > 1 else ""} {named}'


def progress(design: dict, folder: Path, ledger: bool) -> str:
    """How far a design got, from its results folder: its runs and their numerics versions (its records, verified:
    workflow.state.record_rows) and, for a staged design, its last stage look (stages/stage~K.json; its `next` is
    empty when the design is done)."""
    rows = record_rows(folder / 'records')
    if not ledger:
        return f'no ledger yet: its records hold {made(rows)}' if rows else 'not run'
    if not seed_plan(design).staged:
        return f'done: {made(rows)}'
    looks = sorted(folder.glob('stages/stage~*.json'), key=lambda path: int(path.stem.split('~')[1]))
    if not looks:
        return f'published, its stage looks not here: {made(rows)}'
    done = not json.loads(looks[-1].read_text())['next']
    return f'{"done" if done else "open"}: stage {looks[-1].stem.split("~")[1]}, {made(rows)}'


def seed_design(design: dict) -> str:
    """A design's seeds as a plan, in words: 'seeds 0-9' (a fixed design), 'batches of 10 from 12 up to 40 seeds'
    (a staged one) or 'greedy batches of 0.25x from 5 up to 40 seeds, budget 3x' (a budgeted one)."""
    plan = seed_plan(design)
    if not plan.staged:
        seeds = plan.seeds
        contiguous = list(seeds) == list(range(seeds[0], seeds[0] + len(seeds)))
        return f'seeds {seeds[0]}-{seeds[-1]}' if contiguous and len(seeds) > 1 else \
            'seeds ' + ', '.join(map(str, seeds))
    if plan.budgeted:
        return (f'{plan.policy} batches of {plan.batch:g}x from {plan.looks[0]} up to {plan.max_seeds} seeds, budget '
                f'{plan.budget:g}x')
    return f'batches of {plan.step} from {plan.looks[0]} up to {plan.max_seeds} seeds'


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
        ledger = read_ledger(claims) if claims.is_file() else None
        judged[name] = Judged(ledger, progress(design, folder, ledger is not None), seed_design(design),
                              pd.read_csv(comparisons) if comparisons.is_file() else None,
                              published_standing(folder, design) if ledger is not None else '')
    return judged


def published_standing(folder: Path, design: dict) -> str:
    """Where a published substrate stands (text.standing_words), from its records' baseline and its cells table, and
    whether its design has left the scale they were made at (text.rerun_words); '' without both."""
    if not all((folder / name).is_file() for name in ('tables/cells.csv', 'records/runs.parquet',
                                                      'records/summaries.parquet')):
        return ''
    records = load_records(folder / 'records')
    cells = pd.read_csv(folder / 'tables' / 'cells.csv')
    means = cells[cells['cell'] == 'baseline'].set_index('metric')['mean']
    chapter = load_chapter()
    scale = lr_scale_of(records.configs['baseline'], chapter)
    return (standing_words(scale, float(means['pass_train']), float(means['pass_heldout']), chapter)
            + rerun_words(scale, float(design.get('lr_scale', 1.0))))


CLASSES_NOTE = ('A part is **general** where it holds (reproduced, or inside the band) on every substrate, '
                '**substrate-dependent** where it holds on some and fails (reversed, short of the claim, or outside '
                'the band) on others, **fails everywhere** where it fails on every substrate, and **open** where some '
                'substrate left it inconclusive. Calibration targets are in no class.')


ADVICE_NOTE = ('The recommendations of Andrychowicz et al. 2021, in the study\'s words, each judged by the claims '
               'of the literature that name it: it holds on a substrate where every part of every one of its claims '
               'holds there, fails where one fails, and is open otherwise; its class over the substrates is named as '
               'a claim\'s is.')


def by_substrate(row: pd.Series, part: str, substrates: list[str]) -> str:
    """'reversed on tinyagent and larger, short of the claim on longer': a part's verdicts by substrate."""
    by_word = {}
    for name in substrates:
        by_word.setdefault(row[f'{part}: {name}'], []).append(name)
    return '; '.join(f'{word} on {listed(names)}' for word, names in by_word.items())


def bullet(row: pd.Series, results: str, substrates: list[str]) -> str:
    """'- [id](results/claims/id.svg): "its wording" (its direction's verdicts by substrate)'."""
    return (f'- [{row["id"]}]({results}/claims/{row["id"]}.svg): "{row["claim"]}" '
            f'({by_substrate(row, "direction", substrates)})')


def listed(names: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return ' and '.join([', '.join(names[:-1]), names[-1]]) if len(names) > 1 else names[0]


def agree(count: int, verb: str) -> str:
    """A verb in the number of its count: agree(1, 'hold') is 'holds', agree(3, 'hold') 'hold'."""
    return f'{verb}s' if count == 1 else verb


def hold(count: int) -> str:
    """'1 holds', '3 hold': a count and its verb."""
    return f'{count} {agree(count, "hold")}'


ANSWER_START = '<!-- the answer: written by `python -m analysis.pages.substrates` from the published ledgers -->'
ANSWER_END = '<!-- end of the answer -->'


def awaiting_claims(claims: dict) -> pd.Series:
    """Per recommendation (its words), how many of its claims are registered and await the runs of their cells."""
    return pd.Series([c['recommendation'] for c in claims['awaiting'] if c.get('recommendation')],
                     dtype=object).map(claims['recommendations']).value_counts()


def answer(table: pd.DataFrame, substrates: list[str], results: str = '..',
           waiting: pd.Series | None = None) -> list[str]:
    """The answer in plain sentences, from the classes of the chapter's claims (calibration targets apart): what holds
    on every substrate, what fails on every one and what holds on some and fails on others (each with its wording,
    its figure and its verdict on each substrate), what stays open, and what the sizes show; results: the results
    folder, relative to the page; waiting: awaiting_claims (a recommendation all of whose claims await their runs is
    listed as such)."""
    chapter = table[table['group'] == 'chapter']
    direction, size = chapter[chapter['direction class'] != ''], chapter[chapter['size class'] != '']
    classes = {part: frame[f'{part} class'].value_counts() for part, frame in (('direction', direction),
                                                                             ('size', size))}
    n = len(substrates)
    found = classes['direction']
    fails = direction[direction['direction class'] == 'fails everywhere']
    split = direction[direction['direction class'] == 'substrate-dependent']
    dependent = len(split)
    lines = [f"Of the chapter's {len(direction)} statements of a direction (one thing larger than another, or rising "
             f'with another), **{hold(found.get("general", 0))} on all {n} substrates**, '
             f'{hold(dependent)} on some and {agree(dependent, "fail")} on others, '
             f'{found.get("open", 0)} {agree(found.get("open", 0), "stay")} open on some substrate and '
             f'**{len(fails)} {agree(len(fails), "fail")} on every substrate**'
             + (', each reversed (confidently the other way) or short of the claim (confidently smaller than its '
                'smallest effect, or in fewer seeds than it says):' if len(fails) else '.'), '']
    lines += [bullet(row, results, substrates) for _, row in fails.iterrows()] + [''] * (len(fails) > 0)
    if len(split):
        lines += ["Holding on some substrates and failing on others, with each substrate's verdict:", '']
        lines += [bullet(row, results, substrates) for _, row in split.iterrows()] + ['']
    first = f'size: {substrates[0]}'
    at_home = size[size[first].map(outcome) == 'holds']
    home = at_home['size class'].value_counts()
    lines += [f'Of its {len(size)} printed sizes ("about 25 times", "about a third"), {len(at_home)} '
              f'{agree(len(at_home), "lie")} inside the chapter\'s band on {substrates[0]}, the chapter\'s own agent: '
              f'{home.get("general", 0)} of them on every substrate, {home.get("substrate-dependent", 0)} outside it '
              f'on another and {home.get("open", 0)} undecided on another. Of the other {len(size) - len(at_home)}, '
              f'{int((size[first].map(outcome) == "fails").sum())} lie outside the band on {substrates[0]} and '
              f'{int((size[first].map(outcome) == "open").sum())} are undecided there.', '']
    study = advice(table, substrates)
    waiting = pd.Series(dtype=int) if waiting is None else waiting
    unjudged = [words for words in waiting.index if words not in set(study['recommendation'])]
    if len(study):
        found = study['class'].value_counts()
        dependent = found.get('substrate-dependent', 0)
        total = len(study) + len(unjudged)
        more = f', {int(waiting.sum())} more registered and awaiting the runs of their cells' if len(waiting) else ''
        lines += [f"Of the field's advice (Andrychowicz et al. 2021: {total} recommendation{'s' * (total != 1)}, judged "
                  f'by {study["claims"].sum()} claims{more}; a recommendation holds where every claim of it holds), '
                  f'**{hold(found.get("general", 0))} on all {n} substrates**, {hold(dependent)} on some and '
                  f'{agree(dependent, "fail")} on others, {found.get("open", 0)} {agree(found.get("open", 0), "stay")} '
                  f'open and **{found.get("fails everywhere", 0)} '
                  f'{agree(found.get("fails everywhere", 0), "fail")} on every substrate**'
                  + (f'; {len(unjudged)} {agree(len(unjudged), "await")} the runs of all its claims' if unjudged else '')
                  + ':', '']
        lines += [f'- "{row["recommendation"]}" ({row["claims"]} claims{awaiting(waiting, row["recommendation"])}): '
                  f'{row["class"]}, holds on {row["holds on"]} '
                  f'({"; ".join(f"{row[name]} on {name}" for name in substrates)})' for _, row in study.iterrows()]
        lines += [f'- "{words}" ({int(waiting.get(words, 0))} claims, awaiting the runs of their cells)'
                  for words in unjudged]
        lines.append('')
    return lines + [f'Every claim on every substrate, with its wording: '
                    f'[across/substrates.md]({results}/across/substrates.md).']


def awaiting(waiting: pd.Series, words: str) -> str:
    """', and 2 awaiting their runs' for a recommendation with registered claims whose cells no design has yet."""
    return f', and {int(waiting[words])} awaiting their runs' if words in waiting.index else ''


def answer_block(table: pd.DataFrame, substrates: list[str], results: str) -> str:
    """The answer between its markers, as a README holds it."""
    return '\n'.join([ANSWER_START, '', *answer(table, substrates, results, awaiting_claims(load_claims())), '',
                      ANSWER_END])


def published_answer(results: Path | str, relative: str) -> str | None:
    """The answer block from the published ledger across substrates (results/across/substrates.csv); None where
    there is none."""
    return answer_from(Path(results) / 'across' / 'substrates.csv', relative)


def answer_from(path: Path, relative: str) -> str | None:
    """The answer block from a ledger across substrates (substrates.csv at path); None where there is none."""
    if not path.is_file():
        return None
    table = pd.read_csv(path, keep_default_na=False)
    names = [c.split(': ', 1)[1] for c in table.columns if c.startswith('direction: ')]
    return answer_block(table, names, relative)


def rewrite_answer(path: Path, block: str) -> Path | None:
    """The README at path with its answer block replaced by block; None where it has no answer block."""
    text = path.read_text() if path.is_file() else ''
    if ANSWER_START not in text or ANSWER_END not in text:
        return None
    head, rest = text.split(ANSWER_START, 1)
    return write_text(path, head + block + rest.split(ANSWER_END, 1)[1])


def designs_note(judged: dict[str, Judged]) -> str:
    """Whether the substrates ran under one seed design; where not, that counts of open claims compare unlike
    designs."""
    if len({j.seeds for j in judged.values()}) == 1:
        return f'Every substrate ran under one seed design: {next(iter(judged.values())).seeds}.'
    return ('The substrates ran under different seed designs (the column `seeds`): how many claims end open on each '
            'is partly the design\'s doing, so "holds on 2, open on 1" compares unlike designs.')


def publish(judged: dict[str, Judged], out: Path | str) -> list[Path]:
    """The ledger across substrates in out: substrates.csv (one row per claim), substrates.md (each design's progress,
    the answer, the classes' counts, each substrate's verdicts' counts, then the rows, the calibration targets
    apart), substrates.svg/.png; effects.svg/.png where a design has published its comparisons."""
    out, table = Path(out), across(judged)
    designs = pd.DataFrame({'substrate': list(judged), 'its design': [j.progress for j in judged.values()],
                            'seeds': [j.seeds for j in judged.values()],
                            'where it stands': [j.standing for j in judged.values()]})
    rows = table.drop(columns='group').fillna('')
    evidence, calibration = table['group'].isin(JUDGED_GROUPS), table['group'] == 'calibration'
    markdown = '\n'.join([
        f'# Claims on {len(judged)} substrates ({", ".join(judged)})', '', to_markdown(designs), designs_note(judged),
        '', '## The answer', '', *answer(table, list(judged), waiting=awaiting_claims(load_claims())), '',
        '## How many of each class', '', CLASSES_NOTE, '', to_markdown(class_counts(table)),
        "## The field's advice", '', ADVICE_NOTE, '', to_markdown(advice(table, list(judged))),
        '## Per substrate, how many of each verdict', '', to_markdown(verdict_counts(table, list(judged))),
        '## Each claim', '', to_markdown(rows[evidence]),
        '## Calibration targets (the substrates were tuned to these figures: not evidence, in no class)', '',
        to_markdown(rows[calibration].drop(columns=[c for c in rows if c.endswith(' class')]))])
    compared = {name: j.comparisons for name, j in judged.items() if j.comparisons is not None}
    return [write_text(out / 'substrates.csv', table.to_csv(index=False)), write_text(out / 'substrates.md', markdown),
            *figure(table[~calibration], list(judged), out / 'substrates'),
            *(effects(compared, out / 'effects') if compared else [])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m analysis.pages.substrates', description=__doc__,
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
    results = Path(args.out).parent  # its README.md and the repository's above it open with the answer
    for readme in (results.parent / 'README.md', results / 'README.md'):
        block = answer_from(Path(args.out) / 'substrates.csv', os.path.relpath(results, readme.parent))
        paths.append(rewrite_answer(readme, block))
    for path in filter(None, paths):
        print(path)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
