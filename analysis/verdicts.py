"""One claim of claims.yaml decided on per-seed values: decide(claim, samples) -> the ledger row.

Verdicts (the ledger's header states them for readers):
  reproduced    the claim's test supports it: p <= the ledger's threshold (its Benjamini-Hochberg cut-off)
  contradicted  the opposite is supported: the reverse direction, or a 95% CI entirely outside the band
  inconclusive  neither, or fewer seeds than min_seeds
  untested      an input has no values
Deterministic checks (kind 'check') are not claims: they pass or fail.

Kinds: greater / less (input 0 against input 1, or against `than`), increasing / decreasing (every
consecutive step; p is the largest step p, an intersection-union test; the reverse is Bonferroni over
the steps), about (our expected value on the claim's scale lies in a band around `about`: reproduced when
the 95% CI of the mean lies inside the band, contradicted when it lies entirely outside), check.
Scales: raw; log (per-seed logs: a ratio claim becomes a difference of logs); logit (for rates: the CI of
the mean rate, kept in [0, 1], read on the logit scale). Tests: t (one-sample, paired, or Welch),
wilcoxon (signed-rank; rank-sum when unpaired), sign (exact binomial on the signs of paired differences).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit, logit
from statsmodels.stats.weightstats import DescrStatsW, ttest_ind

from .chapter import printed
from .stats import quiet, seeds_for_power, t_interval, t_quantile, tost_mean
from .text import number

KINDS = ('greater', 'less', 'increasing', 'decreasing', 'about', 'check')
SCALES = ('raw', 'log', 'logit')
TESTS = ('t', 'wilcoxon', 'sign')
VERDICTS = ('reproduced', 'contradicted', 'inconclusive')
UNTESTED = 'untested'
CHECKS = ('pass', 'fail')
DEFAULTS = dict(alpha=0.05, min_seeds=3, about_factor=1.25, noise_z=1.96, high_probability=0.8, power=0.8)
DIRECTION = {'greater': 'greater', 'less': 'less', 'increasing': 'greater', 'decreasing': 'less'}
REVERSE = {'greater': 'less', 'less': 'greater'}
SIDE = {'greater': 'larger', 'less': 'smaller'}  # statsmodels' names of the one-sided alternatives
NAN = math.nan
DEGENERATE = 'no spread across seeds: decided exactly'


def settings(claim: dict) -> dict:
    """The claim's rule constants (alpha, min_seeds, about_factor, ...): its own, else the defaults."""
    return {k: claim.get(k, v) for k, v in DEFAULTS.items()}


def validate(claim: dict, samples: list) -> None:
    """A clear error for a claim or samples decide() cannot read."""
    where = f'claim {claim.get("id", "?")!r}'
    for field, allowed in (('kind', KINDS), ('scale', SCALES), ('test', TESTS)):
        if claim.get(field, allowed[0] if field != 'kind' else None) not in allowed:
            raise ValueError(f'{where}: {field}={claim.get(field)!r}; expected one of {", ".join(allowed)}')
    if not all(isinstance(s, pd.Series) for s in samples):
        raise ValueError(f'{where}: samples must be pandas Series of values by seed, got '
                         f'{[type(s).__name__ for s in samples]}')
    kind, need = claim['kind'], len(claim.get('inputs', samples))
    if len(samples) != need:
        raise ValueError(f'{where}: {len(samples)} samples for {need} inputs')
    wanted = {'greater': (1 if 'than' in claim else 2,), 'less': (1 if 'than' in claim else 2,),
              'about': (2 if claim.get('of') else 1,)}.get(kind)
    if wanted and len(samples) not in wanted:
        raise ValueError(f'{where}: kind {kind} takes {wanted[0]} input(s), got {len(samples)}')
    if kind in ('increasing', 'decreasing') and len(samples) < 2:
        raise ValueError(f'{where}: kind {kind} needs at least 2 inputs, got {len(samples)}')
    if kind == 'about' and 'about' not in claim:
        raise ValueError(f'{where}: kind about needs `about` (the value X of "about X")')
    if claim.get('of') not in (None, 'ratio', 'difference'):
        raise ValueError(f'{where}: of={claim["of"]!r}; expected ratio or difference')
    if claim.get('test', 't') == 'sign' and len(samples) == 2 and not claim.get('paired'):
        raise ValueError(f'{where}: the sign test needs paired inputs (paired: true)')


# --- per-seed values on the claim's scale -------------------------------------------------------------------

def clean(sample: pd.Series) -> pd.Series:
    """Finite values by seed, as floats, sorted by seed."""
    values = sample.astype(float)
    values = values[np.isfinite(values.to_numpy())]
    return values if values.index.is_monotonic_increasing else values.sort_index()


def on_scale(values: np.ndarray, scale: str) -> np.ndarray:
    """Per-seed values on the scale the test reads: logs on the log scale; rates stay rates (logit acts on the
    mean, so that seeds at 0 or 1 are valid)."""
    if scale == 'log':
        if (values <= 0).any():
            raise ArithmeticError(f'the log scale needs positive values; got {np.sort(values)[:3].tolist()}...')
        return np.log(values)
    return values


def to_scale(x, scale: str):
    """A number (or array) in natural units -> the claim's scale."""
    return {'raw': lambda v: v, 'log': np.log, 'logit': logit}[scale](x)


def from_scale(x, scale: str):
    """The claim's scale -> natural units."""
    return {'raw': lambda v: v, 'log': np.exp, 'logit': expit}[scale](x)


def paired_frame(samples: list[pd.Series]) -> pd.DataFrame:
    """Inputs side by side on their common seeds (columns 0, 1, ...)."""
    return pd.concat([s.rename(i) for i, s in enumerate(samples)], axis=1, join='inner')


# --- tests --------------------------------------------------------------------------------------------------

@quiet()
def one_sample(d: np.ndarray, alternative: str, test: str) -> float:
    """p of mean(d) > 0 ('greater') or < 0 ('less'): t, Wilcoxon signed-rank or sign test; exact without spread."""
    if np.ptp(d) == 0:
        holds = d[0] > 0 if alternative == 'greater' else d[0] < 0
        return 0.0 if holds else 1.0
    if test == 't':
        return float(DescrStatsW(d).ttest_mean(0.0, alternative=SIDE[alternative])[1])
    if test == 'wilcoxon':
        return float(stats.wilcoxon(d, alternative=alternative).pvalue)
    signs = d[d != 0]
    if not len(signs):
        return 1.0
    return float(stats.binomtest(int((signs > 0).sum()), len(signs), 0.5, alternative=alternative).pvalue)


@quiet()
def two_sample(a: np.ndarray, b: np.ndarray, alternative: str, test: str) -> float:
    """p of a > b ('greater') or a < b ('less') for unpaired samples: Welch t or Wilcoxon rank-sum."""
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        holds = a[0] > b[0] if alternative == 'greater' else a[0] < b[0]
        return 0.0 if holds else 1.0
    if test == 't':
        return float(ttest_ind(a, b, alternative=SIDE[alternative], usevar='unequal')[1])
    return float(stats.mannwhitneyu(a, b, alternative=alternative).pvalue)


def smallest_effect(claim: dict, reference: float) -> float:
    """The pre-registered smallest effect on the scale the test reads: `effect` if given; else a factor
    about_factor: log(about_factor) on the log scale, that factor on the odds (logit) or on |reference| (raw)."""
    if 'effect' in claim:
        return float(claim['effect'])
    delta = math.log(settings(claim)['about_factor'])
    scale = claim.get('scale', 'raw')
    if scale == 'log':
        return delta
    if scale == 'logit':
        return float(abs(expit(logit(np.clip(reference, 1e-6, 1 - 1e-6)) + delta) - reference))
    return delta * abs(reference)


def compare(claim: dict, a: pd.Series, b: pd.Series | float, direction: str, power_target: float | None) -> dict:
    """Input a against input b (a Series, paired by seed or not) or against a number, in `direction`; the seeds
    that power_target (None: no power) needs at the smallest effect."""
    scale, test, rules = claim.get('scale', 'raw'), claim.get('test', 't'), settings(claim)
    natural = 'log' if scale == 'log' else 'raw'  # the units of the per-seed values the test reads
    paired = not isinstance(b, pd.Series) or bool(claim.get('paired'))
    if isinstance(b, pd.Series) and paired:
        both = paired_frame([a, b])
        x, y = on_scale(both[0].to_numpy(), scale), on_scale(both[1].to_numpy(), scale)
    elif isinstance(b, pd.Series):
        x, y = on_scale(a.to_numpy(), scale), on_scale(b.to_numpy(), scale)
    else:
        x = on_scale(a.to_numpy(), scale)
        y = np.full(len(x), float(to_scale(float(b), natural)))
    n = len(x) if paired else min(len(x), len(y))
    out = dict(n=n, p=NAN, p_against=NAN, estimate=NAN, ci_low=NAN, ci_high=NAN, effect=NAN, n_80=NAN, power_note='')
    if n < 2:
        return out
    if paired:
        d = x - y
        p, p_against = one_sample(d, direction, test), one_sample(d, REVERSE[direction], test)
        estimate, low, high = t_interval(d)
        sd, arms = float(d.std(ddof=1)), 1
    else:
        p, p_against = two_sample(x, y, direction, test), two_sample(x, y, REVERSE[direction], test)
        estimate, low, high = t_interval(x, y)
        sd, arms = math.sqrt((x.var(ddof=1) + y.var(ddof=1)) / 2), 2
    out['note'] = DEGENERATE if low == high else ''
    effect = smallest_effect(claim, float(np.mean(from_scale(y, natural))))
    out.update(p=p, p_against=p_against, estimate=from_scale(estimate, natural), ci_low=from_scale(low, natural),
               ci_high=from_scale(high, natural), effect=float(from_scale(effect, natural)))
    if power_target is not None:
        n_80, note = seeds_for_power(effect, sd, test, arms, rules['alpha'], power_target, rules['high_probability'])
        out.update(n_80=n_80, power_note=note)
    return out


def directional(claim: dict, samples: list[pd.Series], power: bool = True) -> dict:
    """greater / less / increasing / decreasing -> p (the largest step p), p_against (Bonferroni over the steps),
    the weakest step's estimate with its CI (a ratio on the log scale, else a difference) and its smallest effect
    of interest (`effect`, in the estimate's units: a ratio or a difference), and seeds for power
    (every step at power 0.8^(1/steps), so that all succeed together when steps are independent)."""
    kind, rules = claim['kind'], settings(claim)
    direction = DIRECTION[kind]
    if 'than' in claim:
        pairs = [(samples[0], float(claim['than']))]
    elif kind in ('greater', 'less'):
        pairs = [(samples[0], samples[1])]
    else:
        pairs = list(zip(samples[1:], samples[:-1]))
    target = rules['power'] ** (1 / len(pairs)) if power else None
    steps = [compare(claim, a, b, direction, target) for a, b in pairs]
    worst = max(steps, key=lambda s: s['p'] if math.isfinite(s['p']) else 2.0)
    n_80, against = [s['n_80'] for s in steps], [s['p_against'] for s in steps if math.isfinite(s['p_against'])]
    return dict(n=min(s['n'] for s in steps), p=worst['p'],
                p_against=min(1.0, len(steps) * min(against)) if against else NAN,  # any one step reversed
                estimate=worst['estimate'], ci_low=worst['ci_low'], ci_high=worst['ci_high'], effect=worst['effect'],
                n_80=NAN if any(map(math.isnan, n_80)) else max(n_80),
                power_note='; '.join(dict.fromkeys(s['power_note'] for s in steps if s['power_note'])),
                note='; '.join(dict.fromkeys(s.get('note', '') for s in steps if s.get('note'))))


# --- about X --------------------------------------------------------------------------------------------------

def half_width(claim: dict) -> tuple[float, str]:
    """The band's half-width on the claim's scale and where it comes from: `margin` (stated by the chapter),
    `noise` (1.96 standard errors of the difference of two chapter runs' pass rates: {rate, episodes}) or the
    'about' rule (log of about_factor; on the raw scale times |X|)."""
    rules = settings(claim)
    if 'margin' in claim:
        return float(claim['margin']), 'margin'
    if 'noise' in claim:
        rate, episodes = float(claim['noise']['rate']), int(claim['noise']['episodes'])
        return rules['noise_z'] * math.sqrt(2 * rate * (1 - rate) / episodes), 'noise'
    delta = math.log(rules['about_factor'])
    return (delta * abs(float(claim['about'])) if claim.get('scale', 'raw') == 'raw' else delta), 'about'


def band(claim: dict) -> tuple[float, float]:
    """The claim's band in natural units: X -+ the half-width on the claim's scale."""
    scale, width = claim.get('scale', 'raw'), half_width(claim)[0]
    center = to_scale(float(claim['about']), scale)
    return float(from_scale(center - width, scale)), float(from_scale(center + width, scale))


def per_seed(claim: dict, samples: list[pd.Series]) -> pd.Series:
    """The per-seed quantity of an about-claim: the input, or the ratio / difference of two paired inputs."""
    if len(samples) == 1:
        return samples[0]
    both = paired_frame(samples)
    return both[0] / both[1] if claim['of'] == 'ratio' else both[0] - both[1]


def about(claim: dict, samples: list[pd.Series], power: bool = True) -> dict:
    """95% CI of the mean on the claim's scale against the band: TOST p (doubled, so p <= 0.05 iff the CI is
    inside) and the p of lying outside it (doubled: p <= 0.05 iff the CI is entirely above or below)."""
    scale, rules = claim.get('scale', 'raw'), settings(claim)
    if claim.get('test', 't') != 't':
        raise ValueError(f'claim {claim.get("id")!r}: test={claim["test"]!r}; an about-claim is decided by the t '
                         'interval (test: t)')
    values = clean(per_seed(claim, samples))  # a ratio of two values can be infinite
    x = on_scale(values.to_numpy(), scale)
    low, high = band(claim)
    limits = (math.log(low), math.log(high)) if scale == 'log' else (low, high)  # in the units of x
    n = len(x)
    out = dict(n=n, band_low=low, band_high=high, p=NAN, p_against=NAN, estimate=NAN, ci_low=NAN, ci_high=NAN,
               n_80=NAN, power_note='', chapter_in_pi='n/a')
    if n < 2:
        return out
    p_low, p_high = tost_mean(x, *limits)  # one-sided p of mean > low and of mean < high
    out['note'] = DEGENERATE if np.ptp(x) == 0 else ''
    p_inside, p_outside = min(1.0, 2 * max(p_low, p_high)), min(1.0, 2 * min(1 - p_low, 1 - p_high))
    mean, ci_low, ci_high = t_interval(x)
    if scale == 'logit':  # the mean rate's CI, kept in [0, 1]
        ci_low, ci_high = max(ci_low, 0.0), min(ci_high, 1.0)
    natural = (lambda v: float(np.exp(v))) if scale == 'log' else float
    out.update(p=p_inside, p_against=p_outside, estimate=natural(mean), ci_low=natural(ci_low),
               ci_high=natural(ci_high))
    sd = float(x.std(ddof=1))
    pi = t_quantile(n) * sd * math.sqrt(1 + 1 / n)  # the 95% prediction interval's half-width for one new seed
    target = to_scale(float(claim['about']), 'log' if scale == 'log' else 'raw')
    out['chapter_in_pi'] = 'yes' if abs(target - mean) <= pi else 'no'
    if power:  # TOST with the truth at the band's centre: each one-sided test at alpha/2, power (1 + power) / 2
        centre = float(target)
        margin = min(centre - limits[0], limits[1] - centre)
        n_80, note = seeds_for_power(margin, sd, 't', 1, rules['alpha'] / 2, (1 + rules['power']) / 2)
        out.update(n_80=n_80, power_note=note)
    return out


# --- checks ---------------------------------------------------------------------------------------------------

def check(claim: dict, samples: list[pd.Series]) -> dict:
    """Every value of every input equals the chapter's printed value (within its rounding), or lies below `below`."""
    failures, parts = [], []
    for spec, sample in zip(claim['inputs'], samples):
        values = clean(sample)
        if 'below' in claim:
            ok, target = bool((values < float(claim['below'])).all()), f'< {number(claim["below"])}'
        else:
            value, half = printed(spec['value'])
            ok, target = bool((abs(values - value) <= half + 1e-12).all()), str(spec['value'])
        parts.append(f'{number(values.max() if "below" in claim else values.mean())} vs {target}')
        failures += [] if ok else [spec.get('metric', '?')]
    return dict(verdict='fail' if failures else 'pass', n=min(len(clean(s)) for s in samples),
                numbers='; '.join(parts), note=f'fails: {", ".join(failures)}' if failures else '')


# --- the verdict ----------------------------------------------------------------------------------------------

def evidence(claim: dict, samples: list[pd.Series], power: bool = True) -> dict:
    """The numbers behind a statistical claim (samples cleaned): p, p_against, estimate with CI, band, seeds for
    power."""
    try:
        if claim['kind'] == 'about':
            return about(claim, samples, power)
        return directional(claim, samples, power)
    except ArithmeticError as error:  # e.g. the log of a non-positive value
        return dict(n=min(len(s) for s in samples), p=NAN, p_against=NAN, note=str(error))


def verdict_of(row: dict, thresholds: tuple[float, float], min_seeds: int) -> tuple[str, str]:
    """reproduced / contradicted / inconclusive from p, p_against and the thresholds; with the reason."""
    if row['n'] < min_seeds:
        return 'inconclusive', f'n={row["n"]} < {min_seeds} seeds'
    if not math.isfinite(row.get('p', NAN)):
        return 'inconclusive', '' if row.get('note') else 'no test: too few values'
    if row['p'] <= thresholds[0]:
        return 'reproduced', ''
    if row['p_against'] <= thresholds[1]:
        return 'contradicted', ''
    return 'inconclusive', ''


def variants(claim: dict, samples: list[pd.Series]) -> dict[str, dict]:
    """The claim re-read with its band halved and doubled, and with its transform switched: a log or logit claim
    on the raw scale (an about-band made symmetric there, same width), a raw claim on positive values on the log
    scale (an about-band of the same relative half-width)."""
    out, scale = {}, claim.get('scale', 'raw')
    if claim['kind'] == 'about':
        width, _ = half_width(claim)
        for name, factor in (('band/2', 0.5), ('band*2', 2.0)):
            out[name] = {k: v for k, v in claim.items() if k != 'noise'} | {'margin': width * factor}
    positive = all((clean(s) > 0).all() for s in samples)
    if scale == 'log' or (scale == 'logit' and claim['kind'] == 'about'):
        raw = {k: v for k, v in claim.items() if k not in ('noise', 'effect')} | {'scale': 'raw'}
        if claim['kind'] == 'about':
            low, high = band(claim)
            raw['margin'] = (high - low) / 2
        out['raw'] = raw
    elif scale == 'raw' and positive and (claim['kind'] != 'about' or float(claim['about']) > 0):
        out['log'] = {k: v for k, v in claim.items() if k not in ('noise', 'effect')} | {'scale': 'log'}
        if claim['kind'] == 'about':
            out['log']['margin'] = half_width(claim)[0] / abs(float(claim['about']))
    return out


def decide(claim: dict, samples: list[pd.Series], thresholds: tuple[float, float] | None = None,
           sensitivity: bool = True, power: bool = True) -> dict:
    """One claim (an entry of load_claims()['claims']) on per-seed samples (Series by seed, one per input).

    thresholds: the p cut-offs (support, against); the ledger passes its Benjamini-Hochberg cut-offs, the default
    is the claim's alpha (one claim alone). Returns the ledger row: verdict, n, estimate, ci_low, ci_high,
    band_low, band_high, effect, p, p_against, n_80, power_note, chapter_in_pi, numbers (a check's; claims.evaluate
    words a claim's), fragile, sensitivity, note.
    """
    validate(claim, samples)
    rules = settings(claim)
    thresholds = thresholds or (rules['alpha'], rules['alpha'])
    samples = [clean(s) for s in samples]
    empty = [i for i, s in enumerate(samples) if s.empty]
    base = dict(verdict=UNTESTED, n=0, estimate=NAN, ci_low=NAN, ci_high=NAN, band_low=NAN, band_high=NAN,
                effect=NAN, p=NAN, p_against=NAN, n_80=NAN, power_note='', chapter_in_pi='n/a', numbers='',
                fragile='', sensitivity='', note='')
    if empty:
        return dict(base, note='no values for input ' + ', '.join(map(str, empty)))
    if claim['kind'] == 'check':
        return dict(base, **check(claim, samples))
    row = dict(base, **evidence(claim, samples, power))
    row['verdict'], reason = verdict_of(row, thresholds, rules['min_seeds'])
    row['note'] = '; '.join(filter(None, [row['note'], reason]))
    if sensitivity:
        flips = {}
        for name, variant in variants(claim, samples).items():
            other = evidence(variant, samples, power=False)
            flips[name] = verdict_of(dict(other, note=other.get('note', '')), thresholds, rules['min_seeds'])[0]
        row['sensitivity'] = '; '.join(f'{k}: {v}' for k, v in flips.items())
        changed = [f'{k}: {v}' for k, v in flips.items() if v != row['verdict']]
        row['fragile'] = 'fragile (' + '; '.join(changed) + ')' if changed else ''
    return row
