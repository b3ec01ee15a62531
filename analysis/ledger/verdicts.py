"""One claim of claims.yaml decided on per-seed values: decide(claim, samples) -> the ledger row.

Each statistical claim has two tests: one `for` it (p <= the ledger's threshold, its Benjamini-Hochberg cut-off) and
one `against` it (p_against <= the threshold). For a direction, `for` is: every step's median confidently above no
effect; `against` is: some step's median confidently below its smallest effect of interest. For a size, `for` is:
the median confidently inside the band; `against`: confidently outside it. The verdict says what the two tests
decided, one word for one situation (the ledger's header states them for readers):
  direction  reproduced          for, and not against: confidently the chapter's way, and not confidently smaller
                                 than its smallest effect
             short of the claim  against, not reversed (whatever the test for it says): confidently smaller than the
                                 smallest effect, or less often than the claim's share of seeds
             reversed            against, and confidently the other way: a step's 95% interval wholly past no effect
                                 (two unpaired inputs: the rank-sum test the other way at 2.5%)
             inconclusive        neither, or fewer seeds than min_seeds
  size       inside (for) / outside (against), or inconclusive
  untested   an input has no values
Deterministic checks (kind 'check') are not claims: they pass or fail.

Every test is exact whatever the seeds' distribution (no normal tails): it counts the seeds on one side of a value
(scipy's binomial; Mann-Whitney's exact distribution for two unpaired inputs), so its level holds at every look for
skewed and heavy-tailed metrics. The quantity is the median per-seed value (or difference) on the claim's scale, the
typical seed. Kinds: greater / less (input 0 against input 1, or against `than`), increasing / decreasing (every
consecutive step; p is the largest step p, an intersection-union test; against it, Bonferroni over the steps),
about (the median lies in a band around `about`), check. Scales: raw; log (ratios become differences of logs);
logit (rates). The scale sets the band's shape and the smallest effect; a sign is the same on every scale.
"""
from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit, logit

from ..stats.inference import DEFAULTS, exceed_p, median_interval, quiet, sign_seeds
from ..text import number
from .chapter import printed

KINDS = ('greater', 'less', 'increasing', 'decreasing', 'about', 'check')
SCALES = ('raw', 'log', 'logit')
DIRECTION_VERDICTS = ('reproduced', 'reversed', 'short of the claim', 'inconclusive')
SIZE_VERDICTS = ('inside', 'outside', 'inconclusive')
SUPPORTED = ('reproduced', 'inside')  # the decision `for`, by part
AGAINST = ('reversed', 'short of the claim', 'outside')  # the decision `against`
DECIDED = SUPPORTED + AGAINST
VERDICTS = DECIDED + ('inconclusive',)
UNTESTED = 'untested'
REVERSED_LEVEL = 0.025  # "confidently the other way": one side of a 95% interval
EXACT_SEEDS = 60  # the rank-sum test's exact distribution up to this many seeds an input (the designs' max is 40)
CHECKS = ('pass', 'fail')
DIRECTION = {'greater': 'greater', 'less': 'less', 'increasing': 'greater', 'decreasing': 'less'}
REVERSE = {'greater': 'less', 'less': 'greater'}
SIGN_OF = {'greater': 1.0, 'less': -1.0}
NAN = math.nan
LOGIT_EDGE = 1e-9  # rates of exactly 0 or 1 stay finite on the logit scale (a sign test reads only their order)


def settings(claim: dict) -> dict:
    """The claim's rule constants (alpha, min_seeds, about_factor, ...): its own, else the defaults."""
    return {k: claim.get(k, v) for k, v in DEFAULTS.items()}


def validate(claim: dict, samples: list) -> None:
    """A clear error for a claim or samples decide() cannot read."""
    where = f'claim {claim.get("id", "?")!r}'
    for field, allowed in (('kind', KINDS), ('scale', SCALES)):
        if claim.get(field, allowed[0] if field != 'kind' else None) not in allowed:
            raise ValueError(f'{where}: {field}={claim.get(field)!r}; expected one of {", ".join(allowed)}')
    if not all(isinstance(s, pd.Series) for s in samples):
        raise ValueError(f'{where}: samples must be pandas Series of values by seed, got '
                         f'{[type(s).__name__ for s in samples]}')
    kind, need = claim['kind'], len(claim.get('inputs', samples))
    if len(samples) != need:
        raise ValueError(f'{where}: {len(samples)} samples for {need} inputs')
    wanted = {'greater': (1, 2) if 'than' in claim else (2,), 'less': (1, 2) if 'than' in claim else (2,),
              'about': (2 if claim.get('of') else 1,)}.get(kind)
    if wanted and len(samples) not in wanted:
        raise ValueError(f'{where}: kind {kind} takes {" or ".join(map(str, wanted))} input(s), got {len(samples)}')
    if 'than' in claim and len(samples) == 2 and not (claim.get('paired') and claim.get('scale', 'raw') == 'raw'):
        raise ValueError(f'{where}: a threshold on the difference of two inputs (than with two inputs) needs them '
                         'paired, on the raw scale')
    if kind in ('increasing', 'decreasing') and len(samples) < 2:
        raise ValueError(f'{where}: kind {kind} needs at least 2 inputs, got {len(samples)}')
    if kind == 'about' and 'about' not in claim:
        raise ValueError(f'{where}: kind about needs `about` (the value X of "about X")')
    if claim.get('of') not in (None, 'ratio', 'difference'):
        raise ValueError(f'{where}: of={claim["of"]!r}; expected ratio or difference')
    if claim.get('with_high_probability') and len(samples) == 2 and not claim.get('paired'):
        raise ValueError(f'{where}: "with high probability" counts seeds, so it needs paired inputs (paired: true)')
    if kind in DIRECTION and 'than' not in claim:  # every step has a smallest effect (raw_effect refuses one without)
        for step in range(len(samples) - 1 if kind in ('increasing', 'decreasing') else 1):
            smallest_effect(claim, step)


# --- per-seed values on the claim's scale -------------------------------------------------------------------

def clean(sample: pd.Series) -> pd.Series:
    """Finite values by seed, as floats, sorted by seed."""
    values = sample.astype(float)
    values = values[np.isfinite(values.to_numpy())]
    return values if values.index.is_monotonic_increasing else values.sort_index()


def on_scale(values: np.ndarray, scale: str) -> np.ndarray:
    """Per-seed values on the claim's scale: logs on the log scale, logits of rates on the logit scale."""
    if scale == 'log':
        if (values <= 0).any():
            raise ArithmeticError(f'the log scale needs positive values; got {np.sort(values)[:3].tolist()}...')
        return np.log(values)
    return logit(np.clip(values, LOGIT_EDGE, 1 - LOGIT_EDGE)) if scale == 'logit' else values


def to_scale(x, scale: str):
    """A number (or array) in natural units -> the claim's scale."""
    return {'raw': lambda v: v, 'log': np.log, 'logit': logit}[scale](x)


def from_scale(x, scale: str):
    """The claim's scale -> natural units."""
    return {'raw': lambda v: v, 'log': np.exp, 'logit': expit}[scale](x)


def paired_frame(samples: list[pd.Series]) -> pd.DataFrame:
    """Inputs side by side on their common seeds (columns 0, 1, ...)."""
    return pd.concat([s.rename(i) for i, s in enumerate(samples)], axis=1, join='inner')


# --- exact tests on counts of seeds ------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def count_p(count: int, n: int, share: float) -> float:
    """Count(count, n, share).p, computed once per arguments (a ledger's simulations ask for few distinct ones)."""
    return float(exceed_p(count, n, share))


@functools.lru_cache(maxsize=None)
def count_chance(count: int, n: int, share: float, seeds: int, level: float) -> float:
    """Count(count, n, share).chance(seeds, level), computed once per arguments."""
    if seeds <= n:
        return float(count_p(count, n, share) <= level)
    more = np.arange(seeds - n + 1)
    passes = exceed_p(count + more, seeds, share) <= level
    return float(stats.binom.pmf(more, seeds - n, count / n)[passes].sum())


@dataclass(frozen=True)
class Count:
    """One exact binomial test: `count` of n seeds lie on the side a verdict needs, each with probability `share`
    under the null (1/2: the median lies on the null's value)."""
    count: int
    n: int
    share: float = 0.5

    @property
    def p(self) -> float:
        return count_p(self.count, self.n, self.share)

    def chance(self, seeds: int, level: float) -> float:
        """P(the test passes at `seeds` seeds, at level) when the further seeds succeed at the observed rate."""
        return count_chance(self.count, self.n, self.share, seeds, level)

    def seeds(self, level: float, power: float) -> tuple[float, float, float]:
        """Seeds a fixed design needs for `power` at the observed share, and at the ends of its 95% CI."""
        ci = stats.binomtest(self.count, self.n).proportion_ci(0.95)
        return tuple(sign_seeds(share, level, power, self.share) for share in (self.count / self.n, ci.high, ci.low))


def smallest_effect(claim: dict, step: int = 0) -> float:
    """The pre-registered smallest effect of step `step` on the claim's scale, in the claim's direction: `effect`
    if given; 0 past a threshold (`than`: the threshold is what the story needs); else a factor about_factor
    (log(about_factor) on the log and logit scales, times the chapter's printed reference on the raw scale), capped
    at half the chapter's own printed effect where it printed both sides (the chapter's story needs at least that
    much, and its own numbers hold it). On the raw scale with no printed reference, the rule for its metric
    (raw_effect)."""
    if 'effect' in claim:
        return float(claim['effect'])
    if 'than' in claim:  # the threshold is what the story needs
        return 0.0
    delta, scale = math.log(settings(claim)['about_factor']), claim.get('scale', 'raw')
    a, b = printed_step(claim, step)
    rule = delta if scale in ('log', 'logit') else raw_effect(claim, step) if b is None else \
        delta * abs(printed_number(b))
    if a is None or b is None:
        return rule
    chapter = float(to_scale(printed_number(a), scale) - to_scale(printed_number(b), scale))
    chapter *= SIGN_OF[DIRECTION[claim['kind']]]
    return min(rule, chapter / 2) if chapter > 0 else rule


def printed_step(claim: dict, step: int) -> tuple:
    """The chapter's printed values (None where it printed none) of a direction's step `step`: (a, b), the step
    comparing a against its reference b (a monotone claim's inputs step + 1 and step; else its first two)."""
    values = [spec.get('value') for spec in claim['inputs']]
    return (values[step + 1], values[step]) if claim['kind'] in ('increasing', 'decreasing') else tuple(values[:2])


def noise_margin(noise: dict, z: float) -> float:
    """z standard errors of the difference of two evaluations' pass rates at {rate, episodes} (the ledger's "within
    noise")."""
    rate, episodes = float(noise['rate']), int(noise['episodes'])
    return z * math.sqrt(2 * rate * (1 - rate) / episodes)


def raw_effect(claim: dict, step: int = 0) -> float:
    """The smallest effect of a raw-scale step whose inputs the chapter printed no number for, by its metric's rule
    in the claims file's `raw_effects`: `noise` (a pass rate: the noise of one evaluation, noise_margin) or `log`
    (a metric that is itself a logarithm: log(about_factor), a factor in what it is the log of). A metric without a
    rule is refused (its claim must state `effect`), but in a finding, which has no verdict."""
    metric = claim['inputs'][step].get('metric')
    rule = claim.get('raw_effects', {}).get(metric)
    if rule is None and claim.get('finding'):
        return 0.0  # numbers, no verdict: nothing to fall short of
    if rule is None:
        raise ValueError(f'claim {claim.get("id", "?")!r}: a direction on the raw scale with no printed value needs '
                         f'a smallest effect: metric {metric!r} has no rule in raw_effects '
                         f'({", ".join(claim.get("raw_effects", {})) or "none"}); state `effect`')
    rules = settings(claim)
    return noise_margin(rule['noise'], rules['noise_z']) if 'noise' in rule else math.log(rules['about_factor'])


def raw_effect_known(claim: dict, step: int) -> bool:
    """Whether step `step` of a direction has a smallest effect on the raw scale: its printed reference or its
    metric's rule."""
    return ('effect' in claim or printed_step(claim, step)[1] is not None
            or claim['inputs'][step].get('metric') in claim.get('raw_effects', {}))


def printed_number(value) -> float:
    return printed(str(value))[0]


def steps(claim: dict, samples: list[pd.Series]) -> list[tuple[pd.Series, pd.Series | float]]:
    """The comparisons a directional claim makes: (a, b) with a Series b, or b a number (`than` on one input; on two,
    it is the threshold of their difference)."""
    if 'than' in claim and len(samples) == 1:
        return [(samples[0], float(claim['than']))]
    if claim['kind'] in ('greater', 'less'):
        return [(samples[0], samples[1])]
    return list(zip(samples[1:], samples[:-1]))


def differences(claim: dict, a: pd.Series, b: pd.Series | float) -> np.ndarray:
    """Per-seed a - b on the claim's scale (paired by seed, less the threshold `than` of their difference where the
    claim states one; or against a number), in the claim's direction."""
    scale = claim.get('scale', 'raw')
    if isinstance(b, pd.Series):
        both = paired_frame([a, b])
        d = on_scale(both[0].to_numpy(), scale) - on_scale(both[1].to_numpy(), scale) - float(claim.get('than', 0))
    else:
        d = on_scale(a.to_numpy(), scale) - to_scale(b, scale)
    return d * SIGN_OF[DIRECTION[claim['kind']]]


def rank_sum(x: np.ndarray, y: np.ndarray, alternative: str) -> tuple[float, bool]:
    """Mann-Whitney's one-sided p for x against y, and whether it is exact: its exact distribution where the pooled
    values have no ties and neither input has more than EXACT_SEEDS values (every design's sizes), else the normal
    approximation with the ties' correction."""
    exact = len(np.unique(np.concatenate([x, y]))) == len(x) + len(y) and max(len(x), len(y)) <= EXACT_SEEDS
    method = 'exact' if exact else 'asymptotic'
    return float(stats.mannwhitneyu(x, y, alternative=alternative, method=method).pvalue), exact


@quiet()
def unpaired(claim: dict, a: pd.Series, b: pd.Series, effect: float) -> dict:
    """p and p_against for two unpaired inputs by Mann-Whitney, for the claim's direction and against the smallest
    effect (b shifted by it); reversed: confidently the other way (the test the other way at REVERSED_LEVEL)."""
    scale, sign = claim.get('scale', 'raw'), SIGN_OF[DIRECTION[claim['kind']]]
    x, y = sign * on_scale(a.to_numpy(), scale), sign * on_scale(b.to_numpy(), scale)
    (p, exact), (p_against, _), (p_other_way, _) = (rank_sum(x, y, 'greater'), rank_sum(x, y + effect, 'less'),
                                                     rank_sum(x, y, 'less'))
    return dict(p=p, p_against=p_against, reversed=p_other_way <= REVERSED_LEVEL,
                test='rank-sum' if exact else 'rank-sum (normal approximation)')


def is_unpaired(claim: dict) -> bool:
    """Whether a directional claim compares two inputs without pairing them by seed (a rank-sum test)."""
    return len(claim['inputs']) == 2 and 'than' not in claim and not claim.get('paired')


@quiet()
def smallest_p(claim: dict, n: int) -> float:
    """The smallest p-value the claim's test reaches with n seeds, every seed on the claim's side: a look whose
    level is below it cannot decide the claim. NaN for a check (not a test)."""
    if claim['kind'] == 'check':
        return NAN
    if claim['kind'] != 'about' and is_unpaired(claim):
        return rank_sum(np.arange(n) + n, np.arange(n), 'greater')[0]
    share = settings(claim)['high_probability'] if claim.get('with_high_probability') else 0.5
    return float(exceed_p(n, n, share if claim['kind'] != 'about' else 0.5))


def directional(claim: dict, samples: list[pd.Series]) -> dict:
    """greater / less / increasing / decreasing on the median per-seed difference (the sign test: every step must
    hold, p is the largest step p); against it: some step confidently below its smallest effect (Bonferroni over
    the steps). "With high probability": the share of seeds in the claim's direction above high_probability."""
    rules = settings(claim)
    share = rules['high_probability'] if claim.get('with_high_probability') else 0.5
    pairs, natural = steps(claim, samples), {'raw': 'raw', 'log': 'log', 'logit': 'log'}[claim.get('scale', 'raw')]
    supports, against, estimates, n, other_way = [], [], [], [], []
    if len(samples) == 2 and is_unpaired(claim):
        return dict(n=min(len(samples[0]), len(samples[1])), **unpaired(claim, *pairs[0], smallest_effect(claim)))
    for i, (a, b) in enumerate(pairs):
        d = differences(claim, a, b)
        effect = smallest_effect(claim, i)
        supports.append(Count(int((d > 0).sum()), len(d), share))
        against.append(Count(int((d < effect).sum()), len(d), 1 - share))
        estimates.append(median_interval(d * SIGN_OF[DIRECTION[claim['kind']]]) if len(d) else (NAN,) * 3)
        other_way.append(bool(len(d)) and median_interval(d)[2] < 0)  # the 95% interval wholly past no effect
        n.append(len(d))
    if min(n) == 0:
        return dict(n=0, p=NAN, p_against=NAN)
    # the weakest step: the largest p; among steps with equal p (every seed on its side), the smallest effect
    worst = max(range(len(pairs)), key=lambda i: (supports[i].p, -estimates[i][0]))
    estimate = [float(from_scale(v, natural)) for v in estimates[worst]]
    return dict(n=min(n), p=supports[worst].p, p_against=min(1.0, len(against) * min(c.p for c in against)),
                reversed=any(other_way), share=min(c.count / c.n for c in supports), estimate=estimate[0],
                ci_low=estimate[1], ci_high=estimate[2],
                supports=supports, against=against,
                effect=float(from_scale(smallest_effect(claim, worst), natural)),
                test='sign' if share == 0.5 else f'sign (share {number(share)})')


# --- about X --------------------------------------------------------------------------------------------------

def half_width(claim: dict) -> tuple[float, str]:
    """The band's half-width on the claim's scale and where it comes from: `margin` (stated by the chapter),
    `noise` (1.96 standard errors of the difference of two chapter runs' pass rates: {rate, episodes}) or the
    'about' rule (log of about_factor; on the raw scale times |X|)."""
    rules = settings(claim)
    if 'margin' in claim:
        return float(claim['margin']), 'margin'
    if 'noise' in claim:
        return noise_margin(claim['noise'], rules['noise_z']), 'noise'
    delta = math.log(rules['about_factor'])
    return (delta * abs(float(claim['about'])) if claim.get('scale', 'raw') == 'raw' else delta), 'about'


def band(claim: dict) -> tuple[float, float]:
    """The claim's band in natural units: X -+ the half-width on the claim's scale, cut at no effect (a ratio of 1, a
    difference of 0) where X says which input is larger, so that the band never holds the other direction."""
    scale, width = claim.get('scale', 'raw'), half_width(claim)[0]
    center = to_scale(float(claim['about']), scale)
    low, high = float(from_scale(center - width, scale)), float(from_scale(center + width, scale))
    null = {'ratio': 1.0, 'difference': 0.0}.get(claim.get('of'))
    if null is None or float(claim['about']) == null:
        return low, high
    return (max(low, null), high) if float(claim['about']) > null else (low, min(high, null))


def per_seed(claim: dict, samples: list[pd.Series]) -> pd.Series:
    """The per-seed quantity of an about-claim: the input, or the ratio / difference of two paired inputs."""
    if len(samples) == 1:
        return samples[0]
    both = paired_frame(samples)
    return both[0] / both[1] if claim['of'] == 'ratio' else both[0] - both[1]


def about(claim: dict, samples: list[pd.Series]) -> dict:
    """The median on the claim's scale against the band: for the claim when it is confidently inside (both sign
    tests: more seeds above the low edge, more below the high edge: p the larger), against it when confidently
    outside (the smaller of the two outside p, doubled); the 95% CI of the median from order statistics."""
    scale = claim.get('scale', 'raw')
    values = clean(per_seed(claim, samples))  # a ratio of two values can be infinite
    x = on_scale(values.to_numpy(), scale)
    low, high = band(claim)
    limits = to_scale(low, scale), to_scale(high, scale)
    n = len(x)
    out = dict(n=n, band_low=low, band_high=high, test='median interval')
    if n < 2:
        return dict(out, p=NAN, p_against=NAN)
    supports = [Count(int((x > limits[0]).sum()), n), Count(int((x < limits[1]).sum()), n)]
    against = [Count(int((x < limits[0]).sum()), n), Count(int((x > limits[1]).sum()), n)]
    median, ci_low, ci_high = (float(from_scale(v, scale)) for v in median_interval(x))
    return dict(out, p=max(c.p for c in supports), p_against=min(1.0, 2 * min(c.p for c in against)),
                estimate=median, ci_low=ci_low, ci_high=ci_high, supports=supports, against=against)


# --- the chapter's own numbers -------------------------------------------------------------------------------

def on_chapter(claim: dict) -> str:
    """What the chapter's printed values say of the claim, read as one seed, by the rounding rule: a printed value
    stands for the interval of its last digit (0.925: 0.9245 to 0.9255), and the claim must hold at every reading
    of its inputs within those intervals: 'consistent', else which values fail it; where it printed no value for
    some input, the claim's reason (`unprinted`), or '' when it gives none."""
    values = [spec.get('value') for spec in claim['inputs']]
    if claim['kind'] == 'check':
        return ''
    if None in values:
        return f'not printed: {claim["unprinted"]}' if claim.get('unprinted') else ''
    readings = itertools.product(*[(v - half, v, v + half) for v, half in map(printed, map(str, values))])
    if all(satisfied(claim, [pd.Series([corner]) for corner in reading]) for reading in readings):
        return 'consistent'
    return f'the chapter\'s {", ".join(map(str, values))} fail it within their rounding'


OPEN_AT_CUTOFF = 'neither p at its cut-off'  # decision's reason for an open claim whose tests both ran
EDGE = 1e-9  # a reading this close to an edge is on it: printed decimals are not exact in binary


def satisfied(claim: dict, seeds: list[pd.Series]) -> bool:
    """One seed of each input satisfies the claim: inside the band (its edges included), or every step at least its
    stated effect."""
    scale = claim.get('scale', 'raw')
    if claim['kind'] == 'about':
        x = to_scale(float(per_seed(claim, seeds).iloc[0]), scale)
        low, high = (to_scale(v, scale) for v in band(claim))
        return bool(low - EDGE <= x <= high + EDGE)
    return all(differences(claim, a, b)[0] >= smallest_effect(claim, i) - EDGE
               for i, (a, b) in enumerate(steps(claim, seeds)))


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

def evidence(claim: dict, samples: list[pd.Series]) -> dict:
    """The numbers behind a statistical claim (samples cleaned): p, p_against, estimate with CI, band, and the
    exact tests behind them (supports, against)."""
    try:
        return about(claim, samples) if claim['kind'] == 'about' else directional(claim, samples)
    except ArithmeticError as error:  # e.g. the log of a non-positive value
        return dict(n=min(len(s) for s in samples), p=NAN, p_against=NAN, note=str(error))


def decision(row: dict, thresholds: tuple[float, float], min_seeds: int) -> tuple[str, str]:
    """for / against / inconclusive from p, p_against and the thresholds: against where the test against the claim
    passes (whatever the test for it says), for where only the test for it passes; with the reason (an interval
    wholly past a band or an edge is one claim's 95%: the family's cut-off can still leave the claim open, and the
    reason says by which p)."""
    if row['n'] < min_seeds:
        return 'inconclusive', f'n={row["n"]} < {min_seeds} seeds'
    if not math.isfinite(row.get('p', NAN)):
        return 'inconclusive', '' if row.get('note') else 'no test: too few values'
    if row['p_against'] <= thresholds[1]:  # a direction confidently the chapter's way and confidently smaller than
        return 'against', ''  # its smallest effect is short of the claim: the test against it decides
    if row['p'] <= thresholds[0]:
        return 'for', ''
    return 'inconclusive', (f'{OPEN_AT_CUTOFF}: for {number(row["p"], 3)} > {number(thresholds[0], 3)}, '
                            f'against {number(row["p_against"], 3)} > {number(thresholds[1], 3)}')


def verdict_word(claim: dict, decided: str, reversed_: bool) -> str:
    """A decision in the verdict's words (the module's header): a size inside or outside its band; a direction
    reproduced, reversed or short of the claim."""
    if decided == 'inconclusive':
        return 'inconclusive'
    if claim['kind'] == 'about':
        return 'inside' if decided == 'for' else 'outside'
    return 'reproduced' if decided == 'for' else 'reversed' if reversed_ else 'short of the claim'


def outlook(found: dict, horizon: int, level: float, power: float) -> dict:
    """At the observed shares of seeds: the chance of a verdict by `horizon` seeds at `level` (for the claim
    needs every support, against it any one test against at its Bonferroni share), and the seeds a fixed design needs
    for `power` on the likelier route, with the ends of its 95% CI."""
    if not found.get('supports'):
        return dict(chance=NAN, n_80=NAN, power_note='')
    against = level / len(found['against'])
    chances = {'for': min(c.chance(horizon, level) for c in found['supports']),
               'against': max(c.chance(horizon, against) for c in found['against'])}
    route = max(chances, key=chances.get)
    tests = found['supports'] if route == 'for' else found['against']
    weakest = min(tests, key=lambda c: c.count / c.n) if route == 'for' else \
        max(tests, key=lambda c: c.count / c.n)
    seeds = weakest.seeds(level if route == 'for' else against, power)
    text = ', '.join('>10000' if math.isnan(v) else str(int(v)) for v in seeds[1:])
    return dict(chance=max(chances.values()), n_80=seeds[0],
                power_note=f'{route} the claim: a share {number(weakest.count / weakest.n)} of seeds on its side, {text} seeds '
                           'at '
                           'the ends of its 95% CI')


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
        elif 'than' not in raw and not all(raw_effect_known(raw, i) for i in range(max(1, len(samples) - 1))):
            raw['effect'] = 0.0  # no raw-scale rule for its metric: the switched transform tests the sign alone
        out['raw'] = raw
    elif scale == 'raw' and positive and (claim['kind'] != 'about' or float(claim['about']) > 0):
        out['log'] = {k: v for k, v in claim.items() if k not in ('noise', 'effect')} | {'scale': 'log'}
        if claim['kind'] == 'about':
            out['log']['margin'] = half_width(claim)[0] / abs(float(claim['about']))
    return out


def decide(claim: dict, samples: list[pd.Series], thresholds: tuple[float, float] | None = None,
           sensitivity: bool = True, power: bool = True, horizon: tuple[int, float] | None = None) -> dict:
    """One claim (an entry of load_claims()['claims']) on per-seed samples (Series by seed, one per input).

    thresholds: the p cut-offs (support, against); the ledger passes its Benjamini-Hochberg cut-offs, the default
    is the claim's alpha (one claim alone). horizon: (seeds, level) of a design's last look, for the chance of a
    verdict by then (default: alpha at the seeds there are). Returns the ledger row: verdict, n, estimate, ci_low,
    ci_high, band_low, band_high, p, p_against, chance, n_80, power_note, numbers, test, fragile,
    sensitivity, note.
    """
    validate(claim, samples)
    rules = settings(claim)
    thresholds = thresholds or (rules['alpha'], rules['alpha'])
    samples = [clean(s) for s in samples]
    empty = [i for i, s in enumerate(samples) if s.empty]
    base = dict(verdict=UNTESTED, n=0, reversed=False, share=NAN, estimate=NAN, ci_low=NAN, ci_high=NAN, band_low=NAN, band_high=NAN, p=NAN,
                p_against=NAN, chance=NAN, n_80=NAN, power_note='', numbers='', test='',
                fragile='', sensitivity='', note='')
    if empty:
        return dict(base, note='no values for input ' + ', '.join(map(str, empty)))
    if claim['kind'] == 'check':
        return dict(base, **check(claim, samples))
    found = evidence(claim, samples)
    row = dict(base, **{k: v for k, v in found.items() if k not in ('supports', 'against')})
    decided, reason = decision(row, thresholds, rules['min_seeds'])
    row['verdict'] = verdict_word(claim, decided, row['reversed'])
    row['note'] = '; '.join(filter(None, [row['note'], reason]))
    if power and row['n'] >= rules['min_seeds']:  # fewer seeds show no effect to project
        seeds, level = horizon or (row['n'], rules['alpha'])
        row.update(outlook(found, seeds, level, rules['power']))
    if sensitivity:
        flips, changed = {}, []
        for name, variant in variants(claim, samples).items():
            other = evidence(variant, samples)
            other_decision = decision(dict(other, note=other.get('note', '')), thresholds, rules['min_seeds'])[0]
            flips[name] = verdict_word(variant, other_decision, other.get('reversed', False))
            changed += [f'{name}: {flips[name]}'] if other_decision != decided else []
        row['sensitivity'] = '; '.join(f'{k}: {v}' for k, v in flips.items())
        row['fragile'] = 'fragile (' + '; '.join(changed) + ')' if changed else ''
    return row
