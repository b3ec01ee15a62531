"""Number and table formatting shared by tables and the claims ledger: fixed, locale-free, deterministic."""
from __future__ import annotations

import math
import numbers

import pandas as pd

MISSING = '–'
MARKDOWN_DIGITS = 4
SETTLED = 12  # significant digits a float keeps before it is shown: CPUs differ beyond them


def number(value, digits: int = 4, missing: str = MISSING) -> str:
    """A number as text: floats with `digits` significant digits ('%g', -0 as 0), integers in full;
    None, NaN and pd.NA as `missing`; anything else as str(). A float is first rounded to SETTLED digits, so that
    the last bits of a libm or SIMD routine, which differ between CPUs (5.375 against 5.374999999999999), do not
    decide the digit shown."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return missing
    if isinstance(value, (bool, str)):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return f'{float(f"{float(value):.{SETTLED}g}") + 0.0:.{digits}g}' if value else '0'
    return str(value)


def to_markdown(frame: pd.DataFrame) -> str:
    """A GitHub Markdown table, 4 significant digits, missing values as '–'."""
    def cell(value) -> str:
        return number(value, MARKDOWN_DIGITS).replace('|', '\\|').replace('\n', ' ')
    lines = ['| ' + ' | '.join(map(str, frame.columns)) + ' |', '|' + '---|' * len(frame.columns)]
    lines += ['| ' + ' | '.join(cell(v) for v in row) + ' |' for row in frame.itertuples(index=False)]
    return '\n'.join(lines) + '\n'
