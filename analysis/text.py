"""Number and table formatting shared by tables and the claims ledger: fixed, locale-free, deterministic."""
from __future__ import annotations

import math
import numbers

import pandas as pd

MISSING = '–'
MARKDOWN_DIGITS = 4


def number(value, digits: int = 4, missing: str = MISSING) -> str:
    """A number as text: floats with `digits` significant digits ('%g', -0 as 0), integers in full;
    None, NaN and pd.NA as `missing`; anything else as str()."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return missing
    if isinstance(value, (bool, str)):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return f'{float(value) + 0.0:.{digits}g}' if value else '0'
    return str(value)


def to_markdown(frame: pd.DataFrame) -> str:
    """A GitHub Markdown table, 4 significant digits, missing values as '–'."""
    def cell(value) -> str:
        return number(value, MARKDOWN_DIGITS).replace('|', '\\|').replace('\n', ' ')
    lines = ['| ' + ' | '.join(map(str, frame.columns)) + ' |', '|' + '---|' * len(frame.columns)]
    lines += ['| ' + ' | '.join(cell(v) for v in row) + ' |' for row in frame.itertuples(index=False)]
    return '\n'.join(lines) + '\n'
