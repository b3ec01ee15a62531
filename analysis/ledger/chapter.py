"""The chapter's printed values (chapter_values.yaml) and the per-seed values that stand for them;
the chapter's tables T1 to T13 rebuilt with our numbers."""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property
from pathlib import Path

import pandas as pd
import yaml

from ..records.load import Runs
from ..stats.cells import find_baseline, select
from ..stats.inference import describe, prediction_check
from ..stats.metrics import RANGES, TRAIN, diverged_seeds, values as run_values

CHAPTER_FILE = Path(__file__).with_name('chapter_values.yaml')
LOADER = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)  # libyaml when present: the same result, faster
COLUMNS = ['table', 'row', 'metric', 'chapter', 'source', 'n', 'diverged', 'mean', 'sd', 'ci_low', 'ci_high', 'pi_low',
           'pi_high', 'method', 'status', 'inside_pi']


def load_chapter(path: Path | str = CHAPTER_FILE) -> dict:
    """The chapter-values file as a dict."""
    return yaml.load(Path(path).read_text(), Loader=LOADER)


def printed(value: str) -> tuple[float, float]:
    """A printed number -> (value, half a unit of its last digit): '0.50' -> (0.5, 0.005)."""
    number = Decimal(str(value))
    return float(number), 0.5 * 10.0 ** number.as_tuple().exponent


def lr_scale_of(config: dict, chapter: dict) -> float:
    """A run's learning-rate scale: its lr over the chapter's (the defaults of chapter_values.yaml); 1 without either."""
    defaults = chapter.get('defaults', {})
    return config['lr'] / defaults['lr'] if 'lr' in config and 'lr' in defaults else 1.0


@dataclass(frozen=True)
class Context:
    """What claims and tables are evaluated on: per-run values, trainer configs, the baseline, the chapter."""
    values: pd.DataFrame
    configs: dict[str, dict]
    baseline: str | None
    chapter: dict

    @cached_property
    def _index(self) -> dict[tuple, pd.DataFrame]:
        return {key: group for key, group in self.values.groupby(['table', 'row', 'metric'])}

    def find(self, table: str, row: str, metric: str, source: str | None = None) -> pd.DataFrame:
        """Values of (table, row, metric), of one source if given: columns source, seed, value, sorted."""
        found = self._index.get((table, row, metric), self.values.iloc[0:0])
        return found if source is None else found[found['source'] == source]

    @cached_property
    def lr_scale(self) -> float:
        """The substrate's learning-rate scale: its baseline's (lr_scale_of)."""
        return lr_scale_of(self.configs.get(self.baseline, {}), self.chapter)

    @classmethod
    def build(cls, runs: Runs, baseline: str = 'baseline', chapter: dict | None = None) -> 'Context':
        chapter = chapter or load_chapter()
        return cls(run_values(runs), runs.configs, find_baseline(runs.configs, baseline, chapter.get('defaults')),
                   chapter)


@dataclass(frozen=True)
class Selected:
    """Per-seed values standing for one figure, and where they come from."""
    label: str
    values: pd.Series  # value by seed
    group: str | None  # the cell or experiment: values of one group pair up by seed
    chapter: str | None = None  # the chapter's printed value, if it printed one
    exact: bool = False  # a deterministic figure: one seed is enough
    note: str = ''  # why there are no values
    also: tuple[str, ...] = ()  # further groups its values come from (the best of several cells)

    @property
    def groups(self) -> tuple[str, ...]:
        """Every group (cell or experiment) whose runs its values come from."""
        return tuple(g for g in (self.group, *self.also) if g)


def _by_seed(rows: pd.DataFrame) -> pd.Series:
    return rows.set_index('seed')['value'].sort_index()


def _describe_cell(values: dict) -> str:
    return ', '.join(f'{k}={v}' for k, v in values.items()) or 'baseline'


def at_scale(cell_values: dict, ctx: Context, unscaled: bool = False) -> dict:
    """A claim's cell values at the substrate's learning-rate scale: an lr in the chapter's units times the scale
    (Context.lr_scale), so that two rates compare in the same ratio on every substrate; `unscaled` keeps an
    absolute rate (the study's 3e-4)."""
    if 'lr' not in cell_values or unscaled or ctx.lr_scale == 1.0:
        return cell_values
    return {**cell_values, 'lr': cell_values['lr'] * ctx.lr_scale}


def _trainer(cell_values: dict, row: str, metric: str, ctx: Context, label: str = '', unscaled: bool = False,
             **extra) -> Selected:
    cell_values = at_scale(cell_values, ctx, unscaled)
    label = label or f'[{_describe_cell(cell_values)}] {row + " " if row else ""}{metric}'
    cell = select(ctx.configs, cell_values, ctx.baseline)
    if cell is None:
        return Selected(label, pd.Series(dtype=float), None, note=f'no trainer cell with {_describe_cell(cell_values)}',
                        **extra)
    found = _by_seed(ctx.find(TRAIN, row, metric, cell))
    note = '' if len(found) else f'cell {cell} has no {metric}{" at " + row if row else ""}'
    return Selected(label, found, cell, note=note, **extra)


def resolve(spec: dict, ctx: Context) -> Selected:
    """Per-seed values for a spec: {table, row, metric} as the chapter names it, or {cell, row, metric} for a
    trainer cell picked by config values; 'minus': {...} subtracts another spec (its missing keys inherited)
    seed by seed; 'best_of': [{...}, ...] takes, seed by seed, the largest of several specs (their missing keys
    inherited: the best a seed gets by trying each); 'value' overrides the chapter's printed value; a cell's lr is in
    the chapter's units, scaled to the substrate's (at_scale), unless `unscaled_lr: true`."""
    if 'best_of' in spec:
        head = {k: v for k, v in spec.items() if k != 'best_of'}
        found = [resolve({**head, **other}, ctx) for other in spec['best_of']]
        note = next((f.note for f in found if f.note), '')
        best = pd.Series(dtype=float) if note else pd.concat([f.values for f in found], axis=1, join='inner').max(axis=1)
        return Selected('the best of ' + ', '.join(f.label for f in found), best, found[0].group, spec.get('value'),
                        all(f.exact for f in found), note, tuple(g for f in found[1:] for g in f.groups))
    if 'minus' in spec:
        head = {k: v for k, v in spec.items() if k != 'minus'}
        a, b = resolve(head, ctx), resolve({**head, **spec['minus']}, ctx)
        note = a.note or b.note or ('' if a.group == b.group else f'{a.label} and {b.label} come from different runs')
        diff = pd.Series(dtype=float) if note else (a.values - b.values).dropna()
        return Selected(f'{a.label} - {b.label}', diff, a.group, spec.get('value'), a.exact and b.exact, note)
    row, metric = str(spec.get('row', '')), spec['metric']
    if 'cell' in spec:
        return _trainer(spec['cell'], row, metric, ctx, chapter=spec.get('value'),
                        unscaled=bool(spec.get('unscaled_lr')))
    table = ctx.chapter['tables'].get(spec['table'], {})
    label = f'{spec["table"]} {row} {metric}'
    extra = dict(chapter=spec.get('value', table.get('values', {}).get(row, {}).get(metric)),
                 exact=bool(table.get('exact')))
    if row in table.get('cells', {}):
        mapped = table['cells'][row]
        return _trainer(mapped.get('cell', {}), str(mapped.get('row', '')), metric, ctx, label, **extra)
    records = ctx.find(spec['table'], row, metric)
    if records.empty:
        return Selected(label, pd.Series(dtype=float), None, note=f'no experiment records {label}', **extra)
    source = min(records['source'])  # one experiment per table; the first by name if several
    return Selected(label, _by_seed(records[records['source'] == source]), source, **extra)


def check_value(summary: dict, chapter: str, exact: bool = False) -> dict | None:
    """Is the chapter's printed value inside our 95% prediction interval for one new seed?

    The interval is widened by the print's rounding. Without variance (a constant sample, or one seed
    of an exact figure) the value must match exactly. None when undefined (no data, or one seed).
    """
    value, half = printed(chapter)
    n, status = summary['n'], summary['status']
    if status == 'ok':
        scale = summary['sd'] * math.sqrt(1 + 1 / n)
        return prediction_check(summary['mean'], scale, n - 1, value - half, value + half)
    if status == 'constant' or (status == 'n=1' and exact):
        return prediction_check(summary['mean'], 0.0, math.nan, value - half, value + half)
    return None


def chapter_tables(ctx: Context, method: str = 't', seed: int = 0) -> pd.DataFrame:
    """Every figure of T1 to T13: the chapter's value, ours across seeds, and whether ours predicts it."""
    rows, diverged = [], diverged_seeds(ctx.values)
    for table, spec in ctx.chapter['tables'].items():
        for row, metrics in spec['values'].items():
            for metric in metrics:
                found = resolve(dict(table=table, row=str(row), metric=metric), ctx)
                summary = describe(found.values, method, seed, bounds=RANGES.get(metric))
                check = check_value(summary, found.chapter, found.exact)
                inside = 'n/a' if check is None else 'yes' if check['inside'] else 'no'
                rows.append(dict(table=table, row=str(row), metric=metric, chapter=found.chapter,
                                 source=found.group or '', diverged=len(diverged.get(found.group, ())), **summary,
                                 inside_pi=inside))
    return pd.DataFrame(rows, columns=COLUMNS)
