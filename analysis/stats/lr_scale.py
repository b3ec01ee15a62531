"""A substrate's learning-rate scale, chosen from its calibration records by the registered rule.

The rule (results/measurements.md, "The learning-rate scale of each substrate", registered before the runs): of the
grid of scales s, the one whose baseline (policy learning rate CHAPTER_LR * s) reaches the highest median final
train pass rate over the calibration seeds; ties go to the larger s. The records are a calibration design's
(config/calibration/NAME.yaml): one cell per scale, read by no claim.

    python -m analysis.stats.lr_scale results/substrates/larger/calibration/records
"""
from __future__ import annotations

import argparse

import pandas as pd

from ..records.records import load_records
from ..text import to_markdown

CHAPTER_LR = 1e-3  # the chapter's PPO learning rate: a scale is a run's lr over it
METRICS = ('pass_train', 'pass_heldout')


def scale_table(summaries: pd.DataFrame, configs: dict[str, dict]) -> pd.DataFrame:
    """One row per scale (largest first): s, lr, seeds, the median and every seed's final train pass rate, the median
    held-out pass rate."""
    rows = []
    for name, config in configs.items():
        runs = summaries[(summaries['name'] == name) & summaries['metric'].isin(METRICS)]
        wide = runs.pivot(index='seed', columns='metric', values='value')
        rows.append(dict(s=round(config['lr'] / CHAPTER_LR, 12), lr=config['lr'], seeds=len(wide),
                         median_train=float(wide['pass_train'].median()),
                         median_heldout=float(wide['pass_heldout'].median()),
                         train_by_seed=' '.join(f'{v:.3f}' for v in wide['pass_train'])))
    return pd.DataFrame(rows).sort_values('s', ascending=False, ignore_index=True)


def chosen(table: pd.DataFrame) -> float:
    """The rule's s: the highest median train pass rate, ties to the larger s (the table is sorted largest first)."""
    return float(table.loc[table['median_train'].idxmax(), 's'])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m analysis.stats.lr_scale', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('records', help="a calibration design's records folder")
    args = parser.parse_args(argv)
    records = load_records(args.records)
    table = scale_table(records.summaries, records.configs)
    print(to_markdown(table))
    print(f'chosen: s = {chosen(table):g}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
