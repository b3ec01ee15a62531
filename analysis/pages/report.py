"""Everything the analysis publishes under one folder: tables (Markdown + CSV), figures, the claims
ledger, the per-seed values each claim was decided on, the run records (records/) and an index. Files are
written atomically and are byte-identical for the same runs, read from run directories or from records/."""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from agentrl.files import write_text
from agentrl.numerics import NUMERICS_VERSION, VERSIONS
from agentrl.world.substrates import DEFAULT as DEFAULT_SUBSTRATE
from workflow.design import PUBLISHED_DESIGNS, REPO, load_design

from ..ledger.chapter import Context, chapter_tables
from ..ledger.claims import (DIRECTION_SUFFIX, claim_inputs, ledger, load_claims, markdown as claims_markdown,
                             summary as claims_summary)
from ..ledger.sequence import sequences
from ..ledger.verdicts import UNTESTED
from ..records.load import Runs
from ..records.records import write_records
from ..stats.compare import compare
from ..stats.inference import summarize
from ..stats.metrics import EPOCH, RANGES, TRAIN, diverged_seeds
from ..text import number, percent, rerun_words, standing_words, to_markdown
from .figures import write_figures
from .ledger_figure import FOLDER, LEDGER, write_ledger_figures
from .substrates import published_answer

CSV_DIGITS = 6
DATA_TABLES = ('F8.1',)  # per-episode records drawn as points, not summarised across seeds
CHAPTER_VIEW = ['row', 'metric', 'chapter', 'mean', 'ci_low', 'ci_high', 'pi_low', 'pi_high', 'n', 'diverged',
                'status', 'inside_pi', 'source']
README_METRICS = ('pass_train', 'pass_heldout', 'reward_21_30')


def to_csv(frame: pd.DataFrame) -> str:
    """CSV with fixed float formatting (6 significant digits), missing values empty, '\\n' line ends."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator='\n')
    writer.writerow(frame.columns)
    for row in frame.itertuples(index=False):
        writer.writerow([number(v, CSV_DIGITS, '') for v in row])
    return buffer.getvalue()


def write_table(frame: pd.DataFrame, stem: Path, title: str = '') -> list[Path]:
    """stem.md (with an optional title) and stem.csv."""
    heading = f'# {title}\n\n' if title else ''
    return [write_text(stem.with_suffix('.md'), heading + to_markdown(frame)),
            write_text(stem.with_suffix('.csv'), to_csv(frame))]


@dataclass(frozen=True)
class Analysis:
    """Every frame the report shows."""
    ctx: Context
    runs: pd.DataFrame
    cells: pd.DataFrame
    epochs: pd.DataFrame
    experiments: pd.DataFrame
    comparisons: pd.DataFrame
    chapter: pd.DataFrame
    claims: pd.DataFrame
    sequences: pd.DataFrame  # each statistical claim's row on its first n seeds, n = min_seeds.. (sequence.py)


def analyse(runs: Runs, baseline: str = 'baseline', method: str = 't', seed: int = 0, alpha: float | None = None,
            min_seeds: int | None = None) -> Analysis:
    """Summaries, comparisons, chapter tables and the ledger (every seed the runs hold) for the runs read."""
    ctx = Context.build(runs, baseline)
    values = ctx.values
    train = values[values['table'] == TRAIN]
    cells = summarize(train[train['row'] == ''], ['metric', 'source'], method, seed, ranges=RANGES).rename(
        columns={'source': 'cell'})
    diverged = diverged_seeds(values)
    cells['diverged'] = [len(diverged.get(cell, ())) for cell in cells['cell']]  # counted, never dropped
    per_epoch = train[train['row'].str.startswith(EPOCH)]
    per_epoch = per_epoch.assign(epoch=per_epoch['row'].str.removeprefix(EPOCH).astype(int))
    epochs = summarize(per_epoch, ['metric', 'source', 'epoch'], method, seed, ranges=RANGES).rename(
        columns={'source': 'cell'})
    epochs['diverged'] = [len(diverged.get(cell, ())) for cell in epochs['cell']]
    records = values[(values['kind'] == 'experiment') & ~values['table'].isin(DATA_TABLES)]
    experiments = summarize(records, ['table', 'row', 'metric', 'source'], method, seed, ranges=RANGES)
    inventory = (runs.runs.groupby(['kind', 'name'])['seed']
                 .agg(seeds='count', seed_list=lambda s: ' '.join(map(str, sorted(s)))).reset_index())
    inventory['baseline'] = (inventory['name'] == ctx.baseline).map({True: 'yes', False: ''})
    comparisons = compare(values, ctx.configs, ctx.baseline, runs.tables.get('iterations'))
    claims = ledger(ctx, alpha=alpha, min_seeds=min_seeds)
    return Analysis(ctx, inventory, cells, epochs, experiments, comparisons, chapter_tables(ctx, method, seed), claims,
                    sequences(ctx, claims.attrs['threshold']))


def write_tables(result: Analysis, out: Path) -> list[Path]:
    """results/tables: runs, cells, epochs, experiments, comparisons, chapter and T1..T13."""
    folder = out / 'tables'
    paths = write_table(result.runs, folder / 'runs', 'Runs read')
    paths += write_table(result.cells, folder / 'cells', 'Trainer cells: run-level metrics across seeds')
    paths += write_table(result.epochs, folder / 'epochs', 'Trainer cells: per-epoch means across seeds')
    paths += write_table(result.experiments, folder / 'experiments', 'Chapter experiments: records across seeds')
    paths += write_table(result.comparisons, folder / 'comparisons', 'Every cell of the design against the baseline')
    paths += write_table(result.chapter, folder / 'chapter', "The chapter's figures against ours")
    for table, spec in result.ctx.chapter['tables'].items():
        rows = result.chapter[result.chapter['table'] == table][CHAPTER_VIEW]
        paths += write_table(rows, folder / table, f'{table}. {spec["title"]} (section {spec["section"]})')
    return paths


FINDINGS_FILE = Path(__file__).with_name('findings.yaml')
ACROSS = ("Chapter 8's claims about PPO, each rerun across seeds and judged on three substrates (the chapter's TinyAgent, "
          'a larger agent, longer episodes). The answer:')


def findings(claims: pd.DataFrame) -> list[str]:
    """One line per claim of findings.yaml: the chapter's claim, then our verdict and numbers from the ledger."""
    rows = claims.set_index('id')
    stated = {c['id']: c['direction'] for c in load_claims()['claims'] if c.get('direction')}
    lines = []
    for entry in yaml.safe_load(FINDINGS_FILE.read_text())['findings']:
        row = rows.loc[entry['claim']]
        figure = f' [Figure]({FOLDER}/{entry["claim"]}.svg).' if row['verdict'] != UNTESTED else ''
        direction = stated.get(entry['claim'], entry['claim'] + DIRECTION_SUFFIX)  # another claim's, or its own row
        also = (f" Its direction ({direction}): **{rows.loc[direction, 'verdict']}** ({rows.loc[direction, 'numbers']})."
                if direction in rows.index else '')
        lines.append(f"- **{entry['title']}.** The chapter: {row['claim']} Ours, over {row['n']} seeds: "
                     f"**{row['verdict']}** ({row['numbers']}).{also}{figure}")
    return lines


def evidence_lines(claims: pd.DataFrame) -> list[str]:
    """The ledger's family in one paragraph: its e-values, the tests e-BH passed, the threshold and the level of every
    printed interval."""
    attrs = claims.attrs
    return [f"Every seed in the records counts. e-BH at {number(attrs['alpha'])} over the {attrs['family']} e-values "
            f"(each claim's for and against) passed {attrs['rejections']} tests: a test passes at an e-value of "
            f"{number(attrs['threshold'])}, and every interval is printed at that threshold "
            f"({percent(1 - 1 / attrs['threshold'])}; a claim of K steps, each step's at K times it) "
            '([claims.md](claims.md), "The promise").', '']


def numerics_line(runs: Runs) -> str:
    """Which numerics versions made the runs, where each reruns bit for bit, and whether this code reuses them."""
    versions = sorted(int(v) for v in runs.runs['numerics_version'].unique())
    line = ' '.join(f'Made under numerics version {v}: {VERSIONS[v]}.' for v in versions)
    if versions != [NUMERICS_VERSION]:
        line += (f' This code is at numerics version {NUMERICS_VERSION}: the workflow reuses no run of another '
                 'version, it makes them again.')
    return line


def standing(result: Analysis, out: Path) -> str:
    """Where the substrate stands (text.standing_words): its runs' learning-rate scale and its baseline's mean pass
    rates against the chapter's; where out is a published design's folder whose design has left that scale, that a
    rerun is planned (text.rerun_words); '' where the baseline has no pass rates."""
    cells = result.cells[result.cells['cell'] == result.ctx.baseline].set_index('metric')['mean']
    if not {'pass_train', 'pass_heldout'} <= set(cells.index):
        return ''
    designs = [load_design(REPO / path) for path in PUBLISHED_DESIGNS]
    scale = next((d.get('lr_scale', 1.0) for d in designs if REPO / d['results_dir'] == out.resolve()),
                 result.ctx.lr_scale)  # the published design of this folder, if it is one
    return (standing_words(result.ctx.lr_scale, float(cells['pass_train']), float(cells['pass_heldout']),
                           result.ctx.chapter) + rerun_words(result.ctx.lr_scale, scale))


def substrate_name(ctx: Context) -> str:
    """The substrate of the ledger's runs (its baseline cell's)."""
    return str(ctx.configs.get(ctx.baseline, {}).get('substrate', DEFAULT_SUBSTRATE))


def readme(result: Analysis, runs: Runs, figures: list[str], out: Path, where: str) -> str:
    """A results folder's README.md: the answer across substrates where the folder publishes it (across/), where the
    substrate stands (`where`: standing), the verdict counts and the ledger figure, the findings and the figures
    first; the long tables after."""
    chapter = result.chapter.groupby('table', sort=False)['inside_pi'].value_counts().unstack(fill_value=0)
    chapter_rows = [dict(table=f'[{t}](tables/{t}.md)', title=spec['title'], figures=int(chapter.loc[t].sum()),
                         inside_pi=int(chapter.loc[t].get('yes', 0)), outside_pi=int(chapter.loc[t].get('no', 0)),
                         undecided=int(chapter.loc[t].get('n/a', 0)))
                    for t, spec in result.ctx.chapter['tables'].items()]
    main = result.cells[result.cells['metric'].isin(README_METRICS)]
    compared = result.comparisons[result.comparisons['metric'].isin(README_METRICS[:2])]
    shown = [name for name in figures if name != LEDGER]  # the ledger's figure opens the index
    answer = published_answer(out, '.')
    parts = [
        '# Results', '', *([ACROSS, '', answer, '', f'## The ledger of {substrate_name(result.ctx)}', '']
                           if answer else []),
        '## Claims', '', *filter(None, [where]), '',
        claims_summary(result.claims) + ' The ledger, with what each verdict means: [claims.md](claims.md).', '',
        f'![Every claim against what the chapter claims, by section](figures/{LEDGER}.svg)', '',
        f'One figure per claim, its seeds and its decision look by look: [{FOLDER}/]({FOLDER}/) (`<id>.svg`; each '
        'finding below links its own).', '',
        '## Headline findings', '', *findings(result.claims), '',
        '## The evidence', '', *evidence_lines(result.claims),
        '## Figures', '',
        'Written by `python -m analysis aggregate`. Every figure is a mean over seeds with a 95% confidence '
        'interval of the mean (a rate\'s kept in [0, 1]). The chapter printed one seed: whether its value lies in our '
        '95% prediction interval for one new seed (`inside_pi`) describes the spread; the verdicts on its claims are '
        'in the ledger.', '',
        f'Baseline cell: `{result.ctx.baseline}`.', '',
        ', '.join(f'[{name}](figures/{name}.svg)' for name in shown) + ' (shown at the end).', '',
        '## Runs', '', numerics_line(runs), '', to_markdown(result.runs),
        '## Trainer cells', '', to_markdown(main), 'All metrics: [tables/cells.md](tables/cells.md); per epoch: '
        '[tables/epochs.md](tables/epochs.md).', '',
        '## Ablations against the baseline', '', to_markdown(compared),
        'All metrics: [tables/comparisons.md](tables/comparisons.md).', '',
        "## The chapter's tables", '', to_markdown(pd.DataFrame(chapter_rows)),
        'All figures in one table: [tables/chapter.md](tables/chapter.md); experiment records: '
        '[tables/experiments.md](tables/experiments.md).', '',
        '## The figures', '', *[f'![{name}](figures/{name}.svg)\n' for name in shown]]
    return '\n'.join(parts)


RECORDS_NOTE = """## Data

The records of every run: [records/](records/) (Parquet: runs, summaries, iterations, epochs, minibatches and the
experiments' records; aggregate.json holds this aggregation's options). `python -m analysis aggregate --records
results/records --out DIR` rebuilds every table, figure and the ledger from them, byte for byte. The per-seed values
each claim was decided on: [tables/claim_inputs.csv](tables/claim_inputs.csv) (`input` numbers a claim's inputs in
claims.yaml order).
"""


def exact_csv(frame: pd.DataFrame) -> str:
    """CSV with every float written in full (shortest round-trip repr), '\n' line ends."""
    return frame.to_csv(index=False, lineterminator='\n')


def aggregate(runs: Runs, out: Path | str, parts=('tables', 'figures', 'claims'), **options) -> list[Path]:
    """Write the requested parts under out; the index README.md when all three are written."""
    out = Path(out)
    result = analyse(runs, **options) if set(parts) - {'records'} else None
    where = standing(result, out) if result else ''  # claims.md and the index say it alike
    paths = []
    if 'tables' in parts:
        paths += write_tables(result, out)
    if 'claims' in parts:
        paths.append(write_text(out / 'claims.md', claims_markdown(result.claims, standing=where)))
        paths += write_table(result.claims, out / 'tables' / 'claims', 'Claims ledger')
        paths.append(write_text(out / 'tables' / 'claim_inputs.csv', exact_csv(claim_inputs(result.ctx))))
        paths.append(write_text(out / 'tables' / 'sequences.csv', exact_csv(result.sequences)))
        paths.append(write_text(out / 'tables' / 'family.csv', exact_csv(pd.DataFrame([result.claims.attrs]))))
    if 'records' in parts:
        paths += write_records(runs, out / 'records', options)
    if 'figures' in parts:
        paths += write_figures(result.ctx, runs, result.comparisons, out / 'figures')
        paths += write_ledger_figures(result.ctx, result.claims, result.sequences, out)
    if set(parts) >= {'tables', 'figures', 'claims'}:
        figures = sorted(dict.fromkeys(p.stem for p in paths if p.parent == out / 'figures'))
        index = readme(result, runs, figures, out, where) + ('\n' + RECORDS_NOTE if 'records' in parts else '')
        paths.append(write_text(out / 'README.md', index))
    return paths
