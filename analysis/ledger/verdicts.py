"""One claim of claims.yaml decided on per-seed values: decide(claim, samples, threshold) -> the ledger row.

Each statistical claim has two tests, each an e-process over its seeds (analysis/stats/eprocess.py): one `for` it and
one `against` it, passing when its e-value reaches the ledger's threshold (its e-BH threshold). For a direction, `for`
bets that every step's median lies above no effect, `against` that some step's median lies below its smallest effect
of interest; for a size, `for` bets that the median lies inside the band, `against` that it lies outside. The verdict
says what the two tests decided, one word for one situation (the ledger's header states them for readers):
  direction  reproduced          for, and not against: confidently the chapter's way, and not confidently smaller
                                 than its smallest effect
             short of the claim  against, not reversed (whatever the test for it says): confidently smaller than the
                                 smallest effect, or less often than the claim's share of seeds
             reversed            against, and its printed interval wholly past no effect
             inconclusive        neither, or fewer seeds than min_seeds
  size       inside (for) / outside (against), or inconclusive
  untested   an input has no values
Deterministic checks (kind 'check') are not claims: they pass or fail.

Every test bets on the seeds' sides of a value (the sign test's data), so it is valid whatever the seeds'
distribution, at every number of seeds and every look. The quantity is the median per-seed value (or difference) on
the claim's scale, the typical seed; its printed interval is the confidence sequence at the same threshold, so a test
passes exactly when the interval lies past its null. Kinds: greater / less (input 0 against input 1, or against
`than`; two inputs of different experiments are matched by seed number), increasing / decreasing (every consecutive
step: for it the weakest step, against it any step, each over the number of steps), about (the median lies in a band
around `about`), check. Scales: raw; log (ratios become differences of logs); logit (rates). The scale sets the band's
shape and the smallest effect; a sign is the same on every scale.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit, logit

from ..stats.eprocess import MAX_SEEDS, Quantile, seeds_for_power
from ..stats.inference import DEFAULTS
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


def is_unpaired(claim: dict) -> bool:
    """Whether a directional claim compares two inputs that do not share a seed's state (runs of different
    experiments): its seeds are matched by number, independent pairs."""
    return len(claim['inputs']) == 2 and 'than' not in claim and not claim.get('paired')


def quantile_of(claim: dict) -> float:
    """The per-seed quantile a claim is about: the median; for "with high probability", the value that a share
    high_probability of seeds exceed (tau = 1 - high_probability)."""
    return 1 - settings(claim)['high_probability'] if claim.get('with_high_probability') else 0.5


@dataclass(frozen=True)
class Bet:
    """One quantity of a claim as a betting game (eprocess.Quantile on its per-seed values, on the claim's scale; a
    direction's in its direction) with the nulls its two tests bet against, each (low, high, outside): the test for
    the claim against the quantity in [low, high] (outside: beyond it), the test against the claim likewise."""
    game: Quantile
    null_for: tuple[float, float, bool]
    null_against: tuple[float, float, bool]
    effect: float = NAN

    @property
    def e_for(self) -> float:
        return self.game.e_null(*self.null_for)

    @property
    def e_against(self) -> float:
        return self.game.e_null(*self.null_against)

    @property
    def quantile(self) -> float:
        """The estimate: the quantile of the per-seed values the game is about."""
        return float(np.quantile(self.game.x, self.game.tau))

    def tests(self) -> dict[str, list[tuple[int, float]]]:
        """Per route the one-sided counts that decide it, each (seeds on its side, the null's share): to_for (every
        one must pass) and to_against (any one may): what a projection of seeds to a verdict reads."""
        x, tau = self.game.x, self.game.tau
        (low_f, high_f, _), (low_a, high_a, _) = self.null_for, self.null_against
        if self.null_for[2]:  # a size: inside needs both edges, outside either
            return dict(to_for=[(int((x > low_f).sum()), 0.5), (int((x < high_f).sum()), 0.5)],
                        to_against=[(int((x < low_a).sum()), 0.5), (int((x > high_a).sum()), 0.5)])
        return dict(to_for=[(int((x > high_f).sum()), 1 - tau)], to_against=[(int((x < low_a).sum()), tau)])


def directional(claim: dict, samples: list[pd.Series]) -> dict:
    """greater / less / increasing / decreasing: per step, the quantile of the per-seed differences (the median;
    "with high probability": the value a share high_probability of seeds exceed) bet above no effect (for) and
    below the step's smallest effect (against). Every step must hold for it, any one against it: over K steps the
    e-value for is the smallest step's over K and the e-value against the largest step's over K (Bonferroni for
    e-values), so that each step's interval is read at K times the ledger's threshold."""
    tau, pairs = quantile_of(claim), steps(claim, samples)
    bets = []
    for i, (a, b) in enumerate(pairs):
        d = differences(claim, a, b)
        if not len(d):
            return dict(n=0, e=NAN, e_against=NAN)
        effect = smallest_effect(claim, i)
        bets.append(Bet(Quantile(d, tau), (-math.inf, 0.0, False), (effect, math.inf, False), effect))
    k = len(bets)
    share = min(float((bet.game.x > 0).mean()) for bet in bets)
    test = 'sign' if tau == 0.5 else f'sign (share {number(1 - tau)})'
    return dict(n=min(bet.game.n for bet in bets), e=min(bet.e_for for bet in bets) / k,
                e_against=max(bet.e_against for bet in bets) / k, share=share, bets=bets,
                test=test + (', seed-matched pairs of independent runs' if is_unpaired(claim) else ''))


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
    """The median on the claim's scale against the band: bet inside it (for: against the null that the median lies
    outside, on an edge included) and outside it (against: against the null that it lies in the band)."""
    scale = claim.get('scale', 'raw')
    values = clean(per_seed(claim, samples))  # a ratio of two values can be infinite
    x = on_scale(values.to_numpy(), scale)
    low, high = band(claim)
    limits = float(to_scale(low, scale)), float(to_scale(high, scale))
    out = dict(n=len(x), band_low=low, band_high=high, test='median in a band')
    if len(x) < 2:
        return dict(out, e=NAN, e_against=NAN)
    bet = Bet(Quantile(x), (*limits, True), (*limits, False))
    return dict(out, e=bet.e_for, e_against=bet.e_against, bets=[bet])


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


OPEN_AT_THRESHOLD = 'neither e-value at the threshold'  # decision's reason for an open claim whose tests both ran
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
    """The evidence of a statistical claim (samples cleaned): n, its e-values for and against (e, e_against) and
    its bets (Bet), whose intervals reading() takes at the ledger's threshold."""
    try:
        return about(claim, samples) if claim['kind'] == 'about' else directional(claim, samples)
    except ArithmeticError as error:  # e.g. the log of a non-positive value
        return dict(n=min(len(s) for s in samples), e=NAN, e_against=NAN, note=str(error))


def decision(row: dict, threshold: float, min_seeds: int) -> tuple[str, str]:
    """for / against / inconclusive from the e-values and the threshold: against where the e-value against the
    claim reaches it (whatever the one for it does), for where only the one for it does; with the reason."""
    if row['n'] < min_seeds:
        return 'inconclusive', f'n={row["n"]} < {min_seeds} seeds'
    if not math.isfinite(row.get('e', NAN)):
        return 'inconclusive', '' if row.get('note') else 'no test: too few values'
    if row['e_against'] >= threshold:  # a direction confidently the chapter's way and confidently smaller than its
        return 'against', ''  # smallest effect is short of the claim: the test against it decides
    if row['e'] >= threshold:
        return 'for', ''
    return 'inconclusive', (f'{OPEN_AT_THRESHOLD} {number(threshold, 3)}: for {number(row["e"], 3)}, '
                            f'against {number(row["e_against"], 3)}')


def past(interval: tuple[float, float, bool, bool], value: float, side: str) -> bool:
    """Whether an interval (low, high, low_open, high_open) lies wholly above (side 'above') or below a value."""
    low, high, low_open, high_open = interval
    return low > value or low == value and low_open if side == 'above' else high < value or high == value and high_open


def reading(claim: dict, found: dict, threshold: float, against: bool) -> dict:
    """The printed interval at the ledger's threshold, in natural units (ci_low, ci_high and `interval` with its
    brackets), the estimate, the smallest effect, and `reversed` (decided against with the interval wholly past no
    effect). A direction of K steps prints one step at K times the threshold (its e-values are over K): the step
    against the claim where the claim is decided against, else the weakest step for it."""
    bets = found['bets']
    if against:  # the step most confidently short; of equals, the one furthest below its smallest effect
        chosen = max(bets, key=lambda b: (b.e_against, b.effect - b.quantile))
    else:  # the weakest step; of equally supported steps, the smallest
        chosen = min(bets, key=lambda b: (b.e_for, b.quantile))
    low, high, low_open, high_open = chosen.game.interval(threshold * len(bets))
    estimate = chosen.quantile
    scale = claim.get('scale', 'raw')
    out = dict(reversed=False)
    if claim['kind'] != 'about':
        out['reversed'] = against and past((low, high, low_open, high_open), 0.0, 'below')
        out['effect'] = float(from_scale(chosen.effect, {'raw': 'raw', 'log': 'log', 'logit': 'log'}[scale]))
        scale = {'raw': 'raw', 'log': 'log', 'logit': 'log'}[scale]  # a difference of logits: an odds ratio
        if SIGN_OF[DIRECTION[claim['kind']]] < 0:  # back from the claim's direction
            low, high, low_open, high_open, estimate = -high, -low, high_open, low_open, -estimate
    low, high, estimate = (float(from_scale(v, scale)) for v in (low, high, estimate))
    return dict(out, estimate=estimate, ci_low=low, ci_high=high, level=1 - 1 / (threshold * len(bets)),
                interval=f'{"(" if low_open else "["}{number(low)}, {number(high)}{")" if high_open else "]"}')


def verdict_word(claim: dict, decided: str, reversed_: bool) -> str:
    """A decision in the verdict's words (the module's header): a size inside or outside its band; a direction
    reproduced, reversed or short of the claim."""
    if decided == 'inconclusive':
        return 'inconclusive'
    if claim['kind'] == 'about':
        return 'inside' if decided == 'for' else 'outside'
    return 'reproduced' if decided == 'for' else 'reversed' if reversed_ else 'short of the claim'


SEEDS_GROUPS = ((20, 'at most 20'), (40, 'at most 40'), (100, 'at most 100'))


def seeds_group(seeds: float) -> str:
    """A projection of seeds in the groups the ledger counts: at most 20, 40, 100 seeds, or more."""
    return next((name for most, name in SEEDS_GROUPS if seeds <= most), 'more than 100')


class Projection(NamedTuple):
    """A claim's projection: the seeds to a verdict (NaN beyond MAX_SEEDS), its route ('to_for' or 'to_against'), the
    binding count (seeds on its side of the n its step reads, the null's share), the power asked of it and the bar its
    e-value must reach."""
    seeds: float
    route: str
    count: int
    n: int
    share: float
    power: float
    bar: float


def projection(found: dict, threshold: float, power: float) -> Projection:
    """The seeds at which the claim reaches a verdict with probability at least `power` if further seeds land as its
    seeds so far did, at the ledger's threshold: each one-sided bet at twice the threshold times the claim's steps (its
    e-value averages two bets); for it, every count of m must pass, each asked for power 1 - (1 - power) / m (a union
    bound, whatever their dependence); against it, any one at `power`; the likelier route. Each count is a share of
    its own step's seeds (a monotone claim's steps may read different seeds)."""
    bets = found['bets']
    bar = 2 * threshold * len(bets)
    routes = {}
    for route in ('to_for', 'to_against'):
        counts = [(count, bet.game.n, share) for bet in bets for count, share in bet.tests()[route]]
        each = 1 - (1 - power) / len(counts) if route == 'to_for' else power
        seeds = [seeds_for_power(count / n, bar, share, each) for count, n, share in counts]
        order = np.argsort(np.nan_to_num(seeds, nan=np.inf), kind='stable')
        binding = order[-1] if route == 'to_for' else order[0]  # for: every count; against: any one
        routes[route] = Projection(seeds[binding], route, *counts[binding], each, bar)
    return min(routes.values(), key=lambda r: np.nan_to_num(r.seeds, nan=np.inf))


def outlook(found: dict, threshold: float, power: float) -> dict:
    """The claim's projection (n_80, seeds_group) with the seeds at the ends of the binding count's 95% interval
    (Clopper-Pearson) in words (power_note)."""
    chosen = projection(found, threshold, power)
    ends = stats.binomtest(chosen.count, chosen.n).proportion_ci(0.95)
    ends = [seeds_for_power(p, chosen.bar, chosen.share, chosen.power) for p in (ends.high, ends.low)]
    text = ', '.join(f'>{MAX_SEEDS}' if math.isnan(v) else str(int(v)) for v in ends)
    seeds = chosen.seeds
    return dict(n_80=seeds, seeds_group=seeds_group(seeds if math.isfinite(seeds) else math.inf),
                power_note=f'{chosen.route.replace("to_", "")} the claim: {chosen.count} of {chosen.n} seeds on its '
                           f'side, {text} seeds at the ends of its 95% interval')


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


def decide(claim: dict, samples: list[pd.Series], threshold: float | None = None, sensitivity: bool = True,
           power: bool = True) -> dict:
    """One claim (an entry of load_claims()['claims']) on per-seed samples (Series by seed, one per input).

    threshold: the e-value a test must reach; the ledger passes its e-BH threshold, the default is 1 / alpha (one
    claim alone). Returns the ledger row: verdict, n, estimate, ci_low, ci_high, interval (at the threshold),
    band_low, band_high, e, e_against, n_80, seeds_group, power_note, numbers, test, fragile, sensitivity, note.
    """
    validate(claim, samples)
    rules = settings(claim)
    threshold = threshold or 1 / rules['alpha']
    samples = [clean(s) for s in samples]
    empty = [i for i, s in enumerate(samples) if s.empty]
    base = dict(verdict=UNTESTED, n=0, reversed=False, share=NAN, estimate=NAN, ci_low=NAN, ci_high=NAN, interval='',
                level=NAN, band_low=NAN, band_high=NAN, effect=NAN, e=NAN, e_against=NAN, n_80=NAN, seeds_group='',
                power_note='', numbers='', test='', fragile='', sensitivity='', note='')
    if empty:
        return dict(base, note='no values for input ' + ', '.join(map(str, empty)))
    if claim['kind'] == 'check':
        return dict(base, **check(claim, samples))
    found = evidence(claim, samples)
    row = dict(base, **{k: v for k, v in found.items() if k != 'bets'})
    decided, reason = decision(row, threshold, rules['min_seeds'])
    if found.get('bets'):
        row.update(reading(claim, found, threshold, decided == 'against'))
    row['verdict'] = verdict_word(claim, decided, row['reversed'])
    row['note'] = '; '.join(filter(None, [row['note'], reason]))
    if power and row['n'] >= rules['min_seeds'] and decided == 'inconclusive' and found.get('bets'):
        row.update(outlook(found, threshold, rules['power']))
    if sensitivity:
        flips, changed = {}, []
        for name, variant in variants(claim, samples).items():
            other = evidence(variant, samples)
            other_decision = decision(dict(other, note=other.get('note', '')), threshold, rules['min_seeds'])[0]
            against = other_decision == 'against' and bool(other.get('bets'))
            other_reversed = against and reading(variant, other, threshold, True)['reversed']
            flips[name] = verdict_word(variant, other_decision, other_reversed)
            changed += [f'{name}: {flips[name]}'] if other_decision != decided else []
        row['sensitivity'] = '; '.join(f'{k}: {v}' for k, v in flips.items())
        row['fragile'] = 'fragile (' + '; '.join(changed) + ')' if changed else ''
    return row
