"""Number and table formatting shared by tables and the claims ledger: fixed, locale-free, deterministic.

The ledger's numbers in plain words: what was compared and by how much, with its interval at the ledger's level.
"""
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


# The ledger's `numbers` in plain words: what was compared (the inputs' medians over seeds) and by how much (the
# median of the per-seed differences or ratios), with its interval at the ledger's level (99.14% here).
#
#   pass_train, medians over seeds: epochs=16 0.128 vs baseline 0.823: lower by 0.695 (99.14% interval 0.563 to 0.827)
#   T6 approx_kl: unclipped / clipped, median over seeds 9.78 (99.14% interval 7.35 to 13): below the band 20 to 31.2
#   (about 25)
#   pass_train, medians over seeds: epochs=16 0.0781 vs baseline 0.844: 76.6 points lower; odds lower by a factor of
#   63.7 (99.14% interval 15.9 to over 1,000)
#   pass_heldout, medians over seeds: clip 0.25 0.278 vs clip 0.1 0.297: difference -0.00309 (99.14% interval -0.1 to
#   0.05), above the threshold -0.102 by 0.0984
#
# Rates (the logit scale) read as a difference in points of their medians and a ratio of odds; a factor (a ratio or
# either bound of its interval) beyond LARGEST reads "over 1,000" (a rate near 0 or 1 makes the ratio meaningless
# there).
DIGITS = 3
LARGEST = 1000  # a factor beyond this reads "over 1,000"


def num(value: float) -> str:
    """3 significant digits; whole numbers from 1000 on (2604, not 2.6e+03)."""
    return str(round(value)) if math.isfinite(value) and abs(value) >= 10 ** DIGITS else number(value, DIGITS)


def factor(labels: list[str]) -> tuple[str, list[str]]:
    """Input labels -> (the words they all share at their start and end, what tells each apart); a trainer cell's
    brackets dropped: ['[epochs=16] pass_train', '[baseline] pass_train'] -> ('pass_train', ['epochs=16', 'baseline']).
    Labels of differences ('a - b', '|a - b|') stay whole."""
    words = [label.replace('[', '').replace(']', '').split() for label in labels]
    if len(words) < 2 or any(' - ' in label for label in labels):
        return '', [' '.join(w) for w in words]
    shortest = min(map(len, words))
    head = next((i for i in range(shortest) if len({w[i] for w in words}) > 1), shortest)
    tail = next((i for i in range(shortest - head) if len({w[-1 - i] for w in words}) > 1), shortest - head)
    if head + tail >= shortest:  # a label would have nothing left
        return '', [' '.join(w) for w in words]
    return ' '.join(words[0][:head] + words[0][len(words[0]) - tail:]), [' '.join(w[head:len(w) - tail]) for w in words]


def factor_bound(value: float) -> str:
    """A factor (a ratio, its interval's bounds): 'over 1,000' beyond LARGEST."""
    return f'over {LARGEST:,}' if value > LARGEST else num(value)


def interval(low: float, high: float, ratio: bool = False, level: float = 0.95) -> str:
    """An interval in words with its confidence: '(99.8% interval 0.1 to 0.3)'."""
    bound = factor_bound if ratio else num
    return f'({percent(level)} interval {bound(low)} to {bound(high)})'


def percent(level: float) -> str:
    """A confidence level as a percentage, to the digits that tell it from 100%: 0.99752 -> '99.75%'."""
    digits = max(2, 1 - math.floor(math.log10(1 - level))) if level < 1 else 2
    return f'{100 * level:.{digits}g}%'


def inverse(value: float) -> float:
    """1 / value, with 1 / 0 = inf and 1 / inf = 0 (an interval's open end)."""
    return math.inf if value == 0 else 1 / value


def change(estimate: float, low: float, high: float, scale: str, level: float = 0.95) -> str:
    """A difference or ratio in words by the claim's scale: 'higher by 0.1 (99.14% interval ...)' (raw), 'lower by a
    factor of 2.5 (...)' (log), 'odds lower by a factor of 63.7 (99.14% interval 15.9 to over 1,000)' (logit)."""
    if scale in ('log', 'logit'):
        up = estimate >= 1
        size, low, high = (estimate, low, high) if up else (inverse(estimate), inverse(high), inverse(low))
        odds = 'odds ' if scale == 'logit' else ''
        return (f'{odds}{"higher" if up else "lower"} by a factor of {factor_bound(size)} '
                f'{interval(low, high, True, level)}')
    up = estimate >= 0
    size, low, high = (estimate, low, high) if up else (-estimate, -high, -low)
    return f'{"higher" if up else "lower"} by {num(size)} {interval(low, high, level=level)}'


def points(first: float, second: float) -> str:
    """Two rates' difference in percentage points: '76.6 points lower' (first against second)."""
    return f'{num(abs(first - second) * 100)} points {"higher" if first >= second else "lower"}'


def where(low: float, high: float, band_low: float, band_high: float) -> str:
    """Where a CI lies against a band, in words."""
    if high < band_low:
        return 'below'
    if low > band_high:
        return 'above'
    if band_low <= low and high <= band_high:
        return 'inside'
    if low < band_low and high > band_high:
        return 'wider than'
    return 'across the lower edge of' if low < band_low else 'across the upper edge of'


def describe(claim: dict, row: dict, labels: list[str], medians: list[float]) -> str:
    """A statistical claim's ledger row in words: its inputs' medians over seeds, then the estimate against the
    claim."""
    context, parts = factor(labels)
    lead = f'{context}, medians over seeds: ' if context else 'medians over seeds: '
    known = math.isfinite(row['estimate'])
    if claim['kind'] == 'about':
        of = {'ratio': ' / ', 'difference': ' - '}.get(claim.get('of'), '')
        quantity = f'{context + ": " if context else ""}{of.join(parts)}'
        if not known:
            return f'{quantity}, medians over seeds: ' + ', '.join(map(num, medians))
        ratio = claim.get('scale', 'raw') in ('log', 'logit')
        estimate = factor_bound(row['estimate']) if ratio else num(row['estimate'])
        said = interval(row['ci_low'], row['ci_high'], ratio, row['level'])
        return (f'{quantity}, median over seeds {estimate} {said}: '
                f'{where(row["ci_low"], row["ci_high"], row["band_low"], row["band_high"])} the band '
                f'{num(row["band_low"])} to {num(row["band_high"])} (about {num(claim["about"])})')
    values = [f'{part} {num(m)}' for part, m in zip(parts, medians)]
    said = f'{parts[0]}, median over seeds {num(medians[0])} vs {num(claim["than"])}' \
        if 'than' in claim and len(values) == 1 else lead + (
            ' vs '.join(values) if claim['kind'] in ('greater', 'less') else ', '.join(values))
    if not known:
        return said
    if 'than' in claim and len(values) == 2:  # a threshold on the difference: the difference against it
        than = float(claim['than'])
        return (f'{said}: difference {num(row["estimate"] + than)} '
                f'{interval(row["ci_low"] + than, row["ci_high"] + than, level=row["level"])}, '
                f'{"above" if row["estimate"] >= 0 else "below"} '
                f'the threshold {num(than)} by {num(abs(row["estimate"]))}')
    scale = claim.get('scale', 'raw')
    by = change(row['estimate'], row['ci_low'], row['ci_high'], scale, row['level'])
    if claim['kind'] not in ('greater', 'less'):
        return f'{said}; the weakest step {by}'
    pair = (medians[0], claim['than']) if 'than' in claim and len(medians) == 1 else tuple(medians[:2])
    return f'{said}: {points(*pair)}; {by}' if scale == 'logit' and len(pair) == 2 else f'{said}: {by}'


def why_short(claim: dict, row: dict, high_probability: float) -> str:
    """Why a direction is short of the claim though its numbers may point the claim's way: too few seeds go its way
    ("with high probability"), or a step confidently below its smallest effect of interest."""
    if claim.get('with_high_probability'):
        return (f'short of the claim: {row["share"]:.0%} of seeds go its way, the claim needs more than '
                f'{high_probability:.0%}')
    effect = row['effect']
    scale = claim.get('scale', 'raw')
    size = f'{"odds " if scale == "logit" else ""}a factor of {num(effect)}' if scale in ('log',
                                                                                          'logit') else num(effect)
    return f'short of the claim: confidently below its smallest effect of interest, {size}'


# A metric in words, for figures (axis labels, legends, panel titles): the tables keep the chapter's short names
# (`pass_train`, `clip_frac`), which a reader holds next to its text; a figure says what was measured. The one mapping:
# every label a figure makes from a metric name comes through `label` or `in_words`.
METRIC_WORDS = {
    'pass_train': 'train pass rate',
    'pass_heldout': 'held-out pass rate',
    'reward_1_10': 'mean batch reward over iterations 1-10',
    'reward_11_20': 'mean batch reward over iterations 11-20',
    'reward_21_30': 'mean batch reward over iterations 21-30',
    'reward_1_30': 'mean batch reward over iterations 1-30',
    'reward_same_episodes': 'batch reward after the same training episodes',
    'final_batch_reward': 'final batch reward',
    'reward': 'batch reward',
    'ev': "critic's explained variance",
    'ev_mean': "critic's explained variance (mean over iterations)",
    'gradient_steps': 'gradient steps',
    'epochs_used_mean': 'epochs used per batch (mean over iterations)',
    'epochs_used_2_3': 'share of iterations that used 2 or 3 epochs',
    'kl_mean': "approximate KL (k3) of a batch's last epoch (mean over iterations)",
    'clip_frac_mean': "clip fraction of a batch's last epoch (mean over iterations)",
    'entropy': 'policy entropy',
    'entropy_1': 'policy entropy at iteration 1',
    'entropy_21_30': 'policy entropy over iterations 21-30',
    'clip_frac': 'clip fraction',
    'clip_frac_high': 'clip fraction above 1 + eps (A > 0)',
    'clip_frac_low': 'clip fraction below 1 - eps (A < 0)',
    'clip_frac_dual': 'dual-clip fraction',
    'clip_frac_positive': 'share of positive-advantage tokens above the upper clip edge',
    'clip_frac_negative': 'share of negative-advantage tokens below the lower clip edge',
    'approx_kl': 'approximate KL (k3)',
    'kl_k1': 'approximate KL (k1)',
    'ratio_min': 'smallest ratio',
    'ratio_mean': 'mean ratio',
    'ratio_max': 'largest ratio',
    'max_ratio': 'largest ratio',
    'median_ratio': 'median ratio',
    'median_gain': 'median probability gain',
    'above_1_2': 'share of ratios above 1.2',
    'outside_band': 'share of ratios outside [0.8, 1.2]',
    'ess_over_n': 'ESS / N',
    'sd_log_w': 'sd of log w',
    'sd_log_w_k3': 'sd of log w after 3 updates',
    'sd_log_w_k10': 'sd of log w after 10 updates',
    'log_w_k10': 'log w after 10 updates',
    'mean_log_w': 'mean log w',
    'min_log_w': 'lowest log w',
    'max_w': 'largest weight w',
    'mean_w': 'mean weight w',
    'is_estimate': 'importance-sampling estimate',
    'snis_estimate': 'self-normalized IS estimate',
    'fresh_pass': 'pass rate on fresh episodes',
    'surrogate': "surrogate's predicted improvement",
    'measured': 'measured improvement',
    'policy_tokens': 'policy tokens in the episode',
    'positive_tokens': 'positive-advantage tokens',
    'negative_tokens': 'negative-advantage tokens',
    'max_abs_diff': 'largest absolute difference',
    **{f'grad_{i}': f'gradient at ratio {i + 1}' for i in range(6)},  # T4's and T5's ratios, in their table's order
}


def label(metric: str) -> str:
    """A metric's words for a figure ('pass_train' -> 'train pass rate'); a name without words as its words
    ('max_w2' -> 'max w2'), never a code name."""
    return METRIC_WORDS.get(metric, metric.replace('_', ' '))


def in_words(text: str) -> str:
    """Every metric name in a label in words ('T6 clipped approx_kl' -> 'T6 clipped approximate KL (k3)'); a word
    keeps what surrounds the name ('|fresh_pass' -> '|pass rate on fresh episodes')."""
    def word(token: str) -> str:
        core = token.strip('|()[],;')
        start = token.find(core) if core else 0
        return token[:start] + label(core) + token[start + len(core):] if core in METRIC_WORDS else token
    return ' '.join(word(token) for token in text.split(' '))


REGIME = 0.8  # the chapter's regime: a baseline that reaches at least this train pass rate (issue 11's band)
CHAPTER_BASELINE = ('T7', 'lam=1.0')  # the chapter's baseline run, whose train and held-out pass rates it printed


def standing_words(scale: float, train: float, heldout: float, chapter: dict) -> str:
    """Where a substrate stands: its runs' learning-rate scale, its baseline's mean train and held-out pass rates
    against the chapter's, and whether that is the chapter's regime (a train pass rate of at least REGIME)."""
    printed = chapter['tables'][CHAPTER_BASELINE[0]]['values'][CHAPTER_BASELINE[1]]
    regime = ("in the chapter's regime" if train >= REGIME else
              f"**outside the chapter's regime** (a train pass rate below {number(REGIME)}): its verdicts may be "
              'about its step size as much as about PPO')
    return (f"Learning-rate scale {number(scale)} (its rates over the chapter's); its baseline's mean train pass rate "
            f"{number(train, 3)} and held-out {number(heldout, 3)}, against the chapter's {printed['pass_train']} and "
            f"{printed['pass_heldout']}: {regime}.")


def rerun_words(runs_scale: float, design_scale: float) -> str:
    """' Its design now runs at scale 0.2 ...' where a substrate's design has left the scale its published runs were
    made at ('' where it has not)."""
    if abs(runs_scale - design_scale) <= 1e-9 * design_scale:
        return ''
    return (f' Its design now runs at learning-rate scale {number(design_scale)}, chosen by the registered rule from '
            'calibration runs (results/measurements.md, "The learning-rate scale of each substrate"): a rerun of its '
            'runs at that scale is planned, and these verdicts stand until it is published.')
