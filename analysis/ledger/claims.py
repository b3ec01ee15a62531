"""The claims ledger: every quantitative claim of the chapter (claims.yaml) decided on every seed of our records.

Each claim's per-seed inputs are resolved from the runs (chapter.resolve) and decided by verdicts.decide; the
e-values of all statistical claims, for and against, are corrected together (e-BH), so a test passes when its
e-value reaches the ledger's threshold, and every interval is printed at it. Findings (exercise questions, models the chapter offers) get their
numbers and no verdict. Deterministic checks (kind 'check') are listed apart and pass or fail.
"""
from __future__ import annotations

import io
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pandas as pd
import yaml

from ..stats.eprocess import closed_ebh, ebh
from ..stats.inference import DEFAULTS
from ..stats.metrics import diverged_seeds
from ..text import describe, number, percent, to_markdown, why_short
from .chapter import LOADER, Context, Selected, load_chapter, resolve
from .verdicts import (CHECKS, DIRECTION, DIRECTION_VERDICTS, SEEDS_GROUPS, SIZE_VERDICTS, UNTESTED, VERDICTS, clean,
                       decide, validate)

CLAIMS_FILE = Path(__file__).with_name('claims.yaml')
FINDING = 'finding'
COLUMNS = ['id', 'verdict', 'part', 'group', 'claim', 'source', 'kind', 'scale', 'test', 'paired', 'inputs', 'n',
           'diverged', 'numbers', 'estimate', 'ci_low', 'ci_high', 'interval', 'level', 'band_low', 'band_high', 'effect',
           'rationale', 'registered', 'rules', 'revised', 'e', 'e_against', 'n_80', 'seeds_group', 'power_note',
           'fragile', 'sensitivity', 'note', 'same_as']
INPUT_COLUMNS = ['id', 'input', 'seed', 'value']
NULL = {'ratio': 1.0, 'difference': 0.0}  # an about-claim's X at which its two inputs are equal
DIRECTION_SUFFIX = '-direction'
DIRECTION_REGISTERED = '2026-12-02, by rule from its size claim'  # when direction_claim was written (issue 34)
WORDING = frozenset({'id', 'claim', 'source', 'registered', 'rules', 'revised', 'rationale', 'unprinted',
                     'recommendation', 'finding', 'direction', 'direction_of', 'inputs'})  # no part of a claim's test
REPEATS = "its test on this substrate is claim {}'s (its inputs are the same runs)"  # an untested claim's note


def read_ledger(source: Path | bytes) -> pd.DataFrame:
    """A published ledger (tables/claims.csv, as a path or its bytes) as written: text kept as text (a note 'NA' stays
    'NA'), an empty field missing."""
    return pd.read_csv(io.BytesIO(source) if isinstance(source, bytes) else source, keep_default_na=False,
                       na_values=[''])


def expand(inputs: list[dict]) -> list[dict]:
    """Input specs with 'rows' or 'metrics' lists unrolled into one spec per row (outer) and metric."""
    out = []
    for spec in inputs:
        base = {k: v for k, v in spec.items() if k not in ('rows', 'metrics')}
        for row in spec.get('rows', [base.get('row', '')]):
            out += [dict(base, row=row, metric=metric) for metric in spec.get('metrics', [base.get('metric')])]
    return out


def printed_value(spec: dict, chapter: dict) -> str | None:
    """The chapter's printed value of a figure spec ({table, row, metric}), if it printed one; of a difference
    (`minus`, `abs`), the difference of its printed values, to the digits of the finer."""
    if 'value' in spec:
        return str(spec['value'])
    if 'table' not in spec:
        return None
    if 'minus' in spec:
        head = {k: v for k, v in spec.items() if k not in ('minus', 'abs')}
        both = [printed_value(head, chapter), printed_value({**head, **spec['minus']}, chapter)]
        if None in both:
            return None
        difference = Decimal(both[0]) - Decimal(both[1])
        return str(abs(difference) if spec.get('abs') else difference)
    return chapter['tables'].get(spec['table'], {}).get('values', {}).get(str(spec.get('row', '')), {}).get(
        spec['metric'])


def chapter_constant(name: str, path: Path | str = CLAIMS_FILE):
    """A constant of the chapter the claims file states once and its claims reference (kl_target)."""
    return yaml.load(Path(path).read_text(), Loader=LOADER)[name]


def load_claims(path: Path | str = CLAIMS_FILE, chapter: dict | None = None) -> dict:
    """The claims file with every claim complete: the file's rule constants (alpha, min_seeds, about_factor, ...)
    and registration date copied in, inputs unrolled (rows / metrics lists), and each input's chapter value where
    the chapter printed one. Each entry is what verdicts.decide reads."""
    raw = yaml.load(Path(path).read_text(), Loader=LOADER)
    chapter = chapter or load_chapter()
    rules = {k: raw.get(k, v) for k, v in DEFAULTS.items()}
    claims = []
    for claim in raw['claims']:
        inputs = [dict(spec, value=value) if (value := printed_value(spec, chapter)) is not None else spec
                  for spec in expand(claim['inputs'])]
        claims.append({**rules, 'registered': raw.get('registered', ''), 'rules': rules_changed(raw),
                       'raw_effects': raw.get('raw_effects', {}), **claim,
                       'inputs': inputs})
        claims += [direction] if (direction := direction_claim(claims[-1])) else []
    claims = one_per_finding(claims)
    ids = [c['id'] for c in claims]
    if len(set(ids)) != len(ids):
        raise ValueError(f'{path}: claim ids repeat: {sorted({i for i in ids if ids.count(i) > 1})}')
    known = raw.get('recommendations', {})
    unknown = [(c['id'], c.get('recommendation')) for c in claims
               if group(c) == 'literature' and c.get('recommendation') not in known]
    if unknown:
        raise ValueError(f'{path}: claim {unknown[0][0]}: recommendation {unknown[0][1]!r}: expected one of the '
                         f'recommendations the file names ({", ".join(known) or "none"})')
    for claim in claims:  # every encoding is checked now, the awaiting ones long before a look reads them
        validate(claim, [pd.Series(dtype=float) for _ in claim['inputs']])
    awaiting = [c for c in claims if c.get('awaiting')]
    return dict(raw, claims=[c for c in claims if not c.get('awaiting')], awaiting=awaiting)


def input_key(spec: dict) -> str:
    """An input as its figure, without the chapter's printed value: equal for the same figure."""
    return repr(sorted((k, repr(v)) for k, v in spec.items() if k != 'value'))


def comparisons(claim: dict) -> set[tuple]:
    """The (larger, smaller) input pairs a directional claim of two or more inputs states, each with what decides how
    it is tested (scale, pairing, share of seeds); a monotone claim states every ordered pair of its chain, the
    pairs beyond its consecutive steps by implication. Empty for an about-claim, a check or a threshold (`than`)."""
    if claim['kind'] == 'about' or claim['kind'] == 'check' or 'than' in claim or len(claim['inputs']) < 2:
        return set()
    keys = [input_key(spec) for spec in claim['inputs']]
    if claim['kind'] in ('greater', 'less'):
        keys = keys[:2]
    elif DIRECTION[claim['kind']] == 'greater':
        keys = keys[::-1]  # increasing: each later input is the larger
    else:
        keys = list(keys)
    how = (claim.get('scale', 'raw'), bool(claim.get('paired')), bool(claim.get('with_high_probability')))
    larger_first = DIRECTION[claim['kind']] == 'greater' if claim['kind'] in ('greater', 'less') else True
    pairs = [(a, b) for i, a in enumerate(keys) for b in keys[i + 1:]]
    return {(a, b, *how) if larger_first else (b, a, *how) for a, b in pairs}


def one_per_finding(claims: list[dict]) -> list[dict]:
    """One claim per finding: a size claim's derived direction (direction_claim) that another claim already states,
    with the same inputs and the same test or by implication (a monotone claim's chain), is not a claim of its own;
    the size claim names that claim instead (`direction`)."""
    stated = {pair: c['id'] for c in claims if not c.get('direction_of') for pair in comparisons(c)}
    out, dropped = [], {}
    for claim in claims:
        if claim.get('direction_of') and (same := next((stated[p] for p in comparisons(claim) if p in stated), None)):
            dropped[claim['direction_of']] = same
        else:
            out.append(claim)
    return [dict(c, direction=dropped[c['id']]) if c['id'] in dropped else c for c in out]


def rules_changed(raw: dict) -> str:
    """When the rules every claim is decided by last changed (the claims file's `rules` history; '' without one)."""
    return str(raw['rules'][-1]['date']) if raw.get('rules') else ''


def direction_claim(claim: dict) -> dict | None:
    """The direction a size claim states, judged apart from its size: an about-claim of a ratio or difference of
    two inputs at X away from the null (1 or 0) also says which input is larger. That direction is a claim of its
    own (id + DIRECTION_SUFFIX, `direction_of` the size claim's id): 'greater' or 'less' on the same paired inputs
    (the log scale for a ratio claim on it, else raw), smallest effect 0, so that it fails only when the inputs
    are confidently the other way round. None for any other claim."""
    null = NULL.get(claim.get('of'))
    if claim['kind'] != 'about' or null is None or len(claim['inputs']) != 2 or float(claim['about']) == null:
        return None
    larger = float(claim['about']) > null
    kept = {k: v for k, v in claim.items() if k not in ('about', 'of', 'margin', 'noise', 'effect', 'rationale')}
    return {**kept, 'id': claim['id'] + DIRECTION_SUFFIX, 'direction_of': claim['id'],
            'kind': 'greater' if larger else 'less', 'paired': True, 'effect': 0.0,
            'scale': 'log' if claim['of'] == 'ratio' and claim.get('scale') == 'log' else 'raw',
            'claim': f"{claim['claim']} (Its direction: the first input {'above' if larger else 'below'} the "
                     'second.)',
            'rationale': f"the direction of {claim['id']}, judged apart from its size",
            'registered': DIRECTION_REGISTERED}


def part(claim: dict) -> str:
    """What a claim's verdict judges: 'size' (an about-claim: its band) or 'direction' ('' for a check)."""
    return '' if claim['kind'] == 'check' else 'size' if claim['kind'] == 'about' else 'direction'


def group(claim: dict) -> str:
    """'check' (deterministic), 'finding' (an exercise question or a model the chapter offers: numbers, no
    verdict), 'calibration' (a figure the substrate was tuned to: not evidence), 'literature' (a claim the chapter
    cites from elsewhere) or 'chapter'."""
    if claim['kind'] == 'check':
        return 'check'
    if claim.get('finding'):
        return FINDING
    if claim.get('calibration'):
        return 'calibration'
    return 'literature' if str(claim['source']).startswith('literature') else 'chapter'


def samples(claim: dict, ctx: Context) -> list[Selected]:
    """The claim's inputs resolved on ctx, in order; `abs: true` takes absolute values seed by seed."""
    out = []
    for spec in claim['inputs']:
        found = resolve({k: v for k, v in spec.items() if k != 'abs'}, ctx)
        if spec.get('abs'):
            found = replace(found, label=f'|{found.label}|', values=found.values.abs())
        out.append(found)
    return out


def signature(claim: dict, found: list[Selected]) -> str:
    """What decides a claim's test on a substrate: its part and group, every key but its wording and names
    (WORDING), and its inputs as they resolve there (their labels, runs, per-seed values and printed values)."""
    kept = sorted((k, repr(v)) for k, v in claim.items() if k not in WORDING)
    inputs = [(f.label, f.groups, tuple(f.values.items()), f.chapter, f.exact) for f in found]
    return repr((part(claim), group(claim), kept, inputs))


def resolved(ctx: Context, claims: list[dict]) -> tuple[list[list[Selected]], list[str]]:
    """Each claim's inputs resolved on ctx (samples), in order, and the earlier claim whose test on ctx each one's is
    ('' for none). A claim whose test is an earlier claim's (signature: two of the chapter's rates that a learning-rate
    scale maps to one cell) is that claim's finding: its inputs get a note naming it, so it is untested there and out
    of the family."""
    found, same_as, first = [samples(c, ctx) for c in claims], [''] * len(claims), {}
    for i, (claim, inputs) in enumerate(zip(claims, found)):
        if any(f.note for f in inputs):
            continue
        earlier = first.setdefault(signature(claim, inputs), claim['id'])
        if earlier != claim['id']:
            same_as[i] = earlier
            found[i] = [replace(f, values=pd.Series(dtype=float), note=REPEATS.format(earlier)) for f in inputs]
    return found, same_as


def feeders(ctx: Context, claims: list[dict]) -> list[str]:
    """The run sources (trainer cells, experiments) whose seeds the claims' inputs read, sorted."""
    return sorted({group for c in claims for f in samples(c, ctx) for group in f.groups})


def evaluate(claim: dict, found: list[Selected], threshold: float | None = None,
             diverged: dict[str, list[int]] | None = None, **options) -> dict:
    """One claim and its resolved inputs -> its ledger row, its numbers in words."""
    diverged = diverged or {}
    seeds = {seed for f in found for group in f.groups if group in diverged for seed in diverged[group]}
    said = claim['claim'] + (f" (Its direction: claim {claim['direction']}.)" if claim.get('direction') else '')
    row = dict(id=claim['id'], part=part(claim), group=group(claim), claim=said, source=claim['source'],
               kind=claim['kind'], scale='' if claim['kind'] == 'check' else claim.get('scale', 'raw'),
               paired='' if len(found) < 2 else 'yes' if claim.get('paired') else 'no',
               inputs='; '.join(f.label for f in found), rationale=claim.get('rationale', ''),
               registered=str(claim.get('registered', '')), rules=str(claim.get('rules', '')),
               revised=str(claim.get('revised', '')),
               diverged=len(seeds))
    missing = [f.note for f in found if f.note]
    if len(found) == 2 and found[0].label == found[1].label and not missing:
        missing = [f'both inputs are {found[0].label} (one cell at this substrate\'s learning-rate scale)']
    if missing:
        return dict(decide(claim, [pd.Series(dtype=float) for _ in found], threshold, **options), **row,
                    note='; '.join(dict.fromkeys(missing)))
    out = dict(decide(claim, [f.values for f in found], threshold, **options), **row)
    if claim['kind'] != 'check' and out['verdict'] != UNTESTED:
        out['numbers'] = describe(claim, out, [f.label for f in found], [clean(f.values).median() for f in found])
    if out['verdict'] == 'short of the claim':
        out['numbers'] += '; ' + why_short(claim, out, claim.get('high_probability', DEFAULTS['high_probability']))
    if row['group'] == FINDING and out['verdict'] in VERDICTS:  # an interval, no verdict
        out.update(verdict=FINDING, fragile='', note='; '.join(filter(None, [claim['finding'], out['note']])))
    return out


def ledger(ctx: Context, claims: dict | None = None, alpha: float | None = None,
           min_seeds: int | None = None) -> pd.DataFrame:
    """Every claim of the claims file decided on every seed of ctx, in file order: the e-values for and against every
    claim with a verdict corrected together by e-BH at alpha, each test passing at the family's threshold
    m / (alpha R) (attrs['threshold'], with m e-values and R rejections: attrs['family'], attrs['rejections']), and
    every interval printed at it (e-BY). attrs['closed']: the tests closed e-BH would pass (stats.eprocess.closed_ebh),
    reported, not used: its further verdicts would pass below the threshold their intervals are printed at."""
    claims = claims or load_claims(chapter=ctx.chapter)
    overrides = {k: v for k, v in dict(alpha=alpha, min_seeds=min_seeds).items() if v is not None}
    entries = [dict(c, **overrides) for c in claims['claims']]
    found, same_as = resolved(ctx, entries)
    diverged = diverged_seeds(ctx.values)
    alpha = entries[0]['alpha'] if entries else DEFAULTS['alpha']
    first = pd.DataFrame([evaluate(c, f, sensitivity=False, power=False) for c, f in zip(entries, found)],
                         columns=COLUMNS)
    family = first[judged(first)]
    e_values = [*family['e'], *family['e_against']]
    rejected, threshold = ebh(e_values, alpha)
    rows = [dict(evaluate(c, f, threshold, diverged), same_as=twin) for c, f, twin in zip(entries, found, same_as)]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame.attrs.update(threshold=threshold, family=int(sum(1 for e in e_values if e == e)),
                       rejections=int(rejected.sum()), closed=closed_ebh(e_values, alpha), alpha=alpha)
    return frame.astype({'n_80': 'Int64', 'n': int, 'diverged': int})


def claim_inputs(ctx: Context, claims: dict | None = None) -> pd.DataFrame:
    """The per-seed values each claim was decided on (every seed): id, input (its index in the claim's inputs), seed,
    value."""
    claims = claims or load_claims(chapter=ctx.chapter)
    rows = [dict(id=c['id'], input=i, seed=int(seed), value=float(value))
            for c, found in zip(claims['claims'], resolved(ctx, claims['claims'])[0]) for i, f in enumerate(found)
            if not f.note
            for seed, value in f.values.items()]
    return pd.DataFrame(rows, columns=INPUT_COLUMNS)


# --- the ledger for readers -----------------------------------------------------------------------------------

PROMISE = """\
**The promise.** Among the verdicts this ledger gives (every verdict but inconclusive, over the {parts} directions
and sizes of its {claims} claims with a verdict), the expected share of false ones is at most {alpha}, and so is the
expected share of decided claims whose printed interval misses the truth, whenever the ledger is read and however the
seeds in its records were chosen. It holds at any look because each test is a bet against its null that cannot be
expected to gain while the null holds, whatever the seeds' distribution (an e-process, worth an e-value at any
stopping time), and e-BH over all the e-values, with every interval printed at its threshold, keeps both shares
under any dependence between the claims. Checked by simulation, an adversary who stops at the first false verdict
and gives seeds to claims as it likes included (`python -m analysis.ledger.simulation`); findings and deterministic
checks are outside it.
"""

RULES = """\
**Verdicts.** The quantity is the typical seed: the median per-seed value (or difference between paired inputs; two
inputs of different experiments are paired by seed number) on the claim's scale. Each claim has two tests, one for it
and one against it, and each is a bet on the seeds' sides of a value (the sign test's data: no assumption about the
seeds' distribution): before any seed, it stakes its wealth on the quantity lying past the test's null, mixed over
how far (a Beta(1, 1/2) mixture over the chance of a seed landing on the bet's side, chosen on synthetic seeds by a
criterion registered first: [measurements](measurements.md#the-betting-strategy-the-registered-criterion)); its
wealth after the seeds in the records is its e-value, the same in whatever order the seeds arrived. All the e-values,
two per claim, are corrected together by e-BH at {alpha}: a test passes when its e-value reaches the family's threshold
m / ({alpha} R) for m e-values and R passing tests. Every claim prints the confidence sequence of its quantity at that
threshold (for a claim of K steps, the step it is judged on at K times it), so a test passes exactly when the printed
interval lies past the test's null. A claim is decided against it when the test against it passes (whatever the test
for it says), for it when only the test for it passes, and is **inconclusive** otherwise, with the seeds it would need
for an 80% chance of a verdict at the same threshold if its further seeds land as its seeds so far did (`n_80`,
grouped in `seeds_group`: at most 20, 40, 100, more; with the seeds at the ends of its share's 95% interval in
`power_note`). A claim whose inputs have no runs, or whose test on the substrate is another claim's, is
**untested**, with the reason. One word for one situation:

| part | the test for it checks | the test against it checks | verdict |
|---|---|---|---|
| direction | every step's median is above no effect (the value that {high} of the seeds exceed, where the claim says "with high probability"): the printed interval lies wholly above it | some step's median (that value) is below its smallest effect of interest: the printed interval lies wholly below it | **reproduced**: for passes, against does not. **short of the claim**: against passes (for may pass too: the chapter's direction, smaller than its smallest effect). **reversed**: against passes and the printed interval lies wholly past no effect. **inconclusive**: neither passes |
| size | the median is inside the chapter's band: the printed interval lies inside it | the median is outside it: the printed interval lies wholly outside | **inside**, **outside**, **inconclusive** |

**Directions and the smallest effect.** The smallest effect of interest of each step is fixed before looking at our
numbers: `effect` where the chapter's wording gives one; 0 past a threshold the claim states (`than`); else half of
the chapter's own printed effect where that is smaller than a factor of {factor} (the chapter's story needs at least
that much); else a factor of {factor} (on the log and logit scales; on the raw scale {factor} times the chapter's
printed reference); else, on the raw scale with no printed value, its metric's rule: for a pass rate the noise of
one evaluation (1.96 standard errors of the difference of two evaluations at the chapter's rate: 0.0465 train,
0.1015 held-out), for a log-weight a factor of {factor} in the weight. So every direction can end short of the
claim, and a nil effect does, given the seeds. A size claim's derived direction (its `-direction` row) is judged
apart from its size with a smallest effect of 0: it can be reproduced, reversed or inconclusive.

**One claim per finding.** Two parts with the same inputs and the same test are one claim, and so is a part that
another claim implies (a monotone claim's first and last steps): a size claim whose direction another claim states
names it in `claim` and has no `-direction` row of its own. A test compares the claims' per-seed values as well:
no two claims of one part read the same numbers, under other names or in other units. On a substrate whose
learning-rate scale maps two of the chapter's rates to one cell, a claim whose test there is an earlier claim's (the
same runs, the same test) is that claim's finding: untested there, its note and `same_as` naming the claim.

**The chapter's own numbers (the rounding rule).** A printed value stands for the interval of its last digit (0.925:
0.9245 to 0.9255); every claim holds at every reading of the chapter's printed inputs within those intervals (a test
reads them so), or says why not.

**What "about" and "within noise" mean (one rule, fixed before looking at our numbers).** On the claim's scale (log
for ratios, KL, ratio extremes and counts; logit for rates; raw for differences) "about X" means within a factor of
{factor} of X: the band is X ± log({factor}) on the log or logit scale (on the raw scale X ± log({factor}) |X|).
"Within noise" means within {z} standard errors of the difference of two runs' pass rates at the chapter's value and
episode count. A margin the chapter states ("within half a point") is used as stated.

**Findings.** Exercise questions and models the chapter offers without measuring them are reported with their
median and interval and no verdict, counted apart.

**Registration.** Each claim records when its encoding (everything but its wording) last changed (`registered`) and
when the rules that decide it last changed (`rules`; the history is below). A claim whose encoding changed after a
published ledger gave it a verdict is marked (`revised`) and counted apart from the headline counts.

**Pairing.** Inputs from runs of one seed (one experiment, or trainer cells: they share the warm critic, the first
batch and the evaluation seed) are paired by seed. A diverged run counts as a failure (pass rate 0) and is counted
in the `diverged` column.

**Sensitivity.** Each verdict is re-evaluated with its band halved and doubled and with its transform switched (log
or logit against raw); a verdict that changes under any of them is marked fragile.
"""

VIEW = ['id', 'verdict', 'part', 'fragile', 'claim', 'numbers', 'interval', 'scale', 'test', 'paired', 'n',
        'diverged', 'e', 'e_against', 'n_80', 'seeds_group', 'power_note', 'registered', 'rules', 'revised', 'source',
        'note']
CHECK_VIEW = ['id', 'verdict', 'claim', 'numbers', 'n', 'source', 'note']


def counts(frame: pd.DataFrame, verdicts=VERDICTS + (UNTESTED,)) -> str:
    """'12 reproduced, 3 short of the claim, ...' for the rows of frame."""
    found = frame['verdict'].value_counts()
    return ', '.join(f'{int(found.get(v, 0))} {v}' for v in verdicts)


def count_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The verdict counts by kind of claim, direction and size apart: the chapter's claims (all; the headline; those
    encoded again after a published verdict, counted apart), the calibration targets' and the literature's. count:
    the claims (a size claim's derived direction is not a claim of its own); `direction: ...` the verdicts on
    directions (every directional claim and the direction of each size claim that states one); `size: ...` the
    verdicts on sizes (about-claims: inside or outside the chapter's band); verdicts: the two together (count and the
    derived directions)."""
    chapter = frame[frame['group'] == 'chapter']
    revised = chapter['revised'].fillna('').ne('')
    parts = [("the chapter's, all", chapter),
             ('the headline: encoded before their verdict', chapter[~revised]),
             ('encoded again after a published verdict (counted apart)', chapter[revised]),
             ('calibration targets (the substrate was tuned to them: not evidence)',
              frame[frame['group'] == 'calibration']),
             ("from the literature: cited by the chapter, and the study's advice",
              frame[frame['group'] == 'literature'])]
    rows = []
    for label, rows_of in parts:
        direction, size = rows_of[rows_of['part'] == 'direction'], rows_of[rows_of['part'] == 'size']
        rows.append({'claims': label, 'count': int((~derived(rows_of)).sum()), 'verdicts': len(direction) + len(size),
                     **{f'direction: {v}': int((direction['verdict'] == v).sum()) for v in DIRECTION_VERDICTS},
                     **{f'size: {v}': int((size['verdict'] == v).sum()) for v in SIZE_VERDICTS},
                     'untested': int((rows_of['verdict'] == UNTESTED).sum()),
                     'fragile': int(rows_of['fragile'].str.startswith('fragile').sum())})
    return pd.DataFrame(rows)


def headline(frame: pd.DataFrame) -> str:
    """The chapter's claims' counts in one sentence, from count_table's first row (a figure's title says the same as
    the table): "The chapter's 78 claims: 61 directions, 50 reproduced, ...; 27 sizes, 7 inside, ..."."""
    row = count_table(frame).iloc[0]
    parts = {part: {v: int(row[f'{part}: {v}']) for v in words}
             for part, words in (('direction', DIRECTION_VERDICTS), ('size', SIZE_VERDICTS))}
    said = [f'{sum(found.values())} {part}s, ' + ', '.join(f'{n} {v}' for v, n in found.items())
            for part, found in parts.items()]
    return f"The chapter's {int(row['count'])} claims: " + '; '.join(said)


def derived(frame: pd.DataFrame) -> pd.Series:
    """Which ledger rows are the derived direction of a size claim (direction_claim)."""
    return frame['id'].str.endswith(DIRECTION_SUFFIX)


def statistical(frame: pd.DataFrame) -> pd.Series:
    """Which ledger rows are statistical claims: not deterministic checks, not findings."""
    return ~frame['group'].isin(['check', FINDING])


def judged(frame: pd.DataFrame) -> pd.Series:
    """Which ledger rows are statistical claims with a verdict (not untested): the e-BH family."""
    return statistical(frame) & (frame['verdict'] != UNTESTED)


def inconclusive(frame: pd.DataFrame) -> pd.Series:
    """Which ledger rows are statistical claims still open (inconclusive)."""
    return statistical(frame) & (frame['verdict'] == 'inconclusive')


def summary(frame: pd.DataFrame) -> str:
    """The verdict counts (count_table) and a paragraph on how they add up, the findings and the checks."""
    table = count_table(frame)
    every, headline, again = table['count'][:3]
    checks = frame[frame['group'] == 'check']
    return (to_markdown(table) + f"\n`count` is claims, `verdicts` their directions and sizes together (a size "
            "claim that says which input is larger is judged on both). "
            f"The chapter's {every} claims are the {headline} of the headline and the {again} "
            'whose encoding changed after a published ledger had judged them (counted apart, so that no encoding '
            'revised after its verdict adds to the headline). Direction and size apart: a claim that compares '
            'gets a direction verdict (reproduced, reversed, short of the claim, inconclusive); a claim that states a '
            'size ("about X") a size verdict (inside or outside the chapter\'s band, inconclusive), and where X says '
            'which of two inputs is larger, a direction verdict as well (its `-direction` row, unless another claim '
            'states that direction). Fragile: the verdict changes with the band halved or '
            f"doubled, or with the transform switched. {int((frame['group'] == FINDING).sum())} findings (exercise "
            f"questions and models: numbers, no verdict). {len(checks)} deterministic checks: "
            f"{counts(checks, CHECKS + (UNTESTED,))}.")


def projections(frame: pd.DataFrame) -> list[str]:
    """The family's threshold and level, and the open claims grouped by the seeds they are projected to need."""
    attrs = frame.attrs
    open_claims = frame[inconclusive(frame)]
    groups = [dict(seeds=name, claims=int((open_claims['seeds_group'] == name).sum()),
                   ids=', '.join(open_claims.loc[open_claims['seeds_group'] == name, 'id']))
              for name in [*(name for _, name in SEEDS_GROUPS), 'more than 100']]
    return ['## The evidence and what the open claims need', '',
            f"e-BH at {number(attrs['alpha'])} over {attrs['family']} e-values passed {attrs['rejections']} tests: the "
            f"threshold is {number(attrs['threshold'])}, and every interval below is printed at it, a "
            f"{percent(1 - 1 / attrs['threshold'])} confidence sequence (a claim of K steps: its step at K times the "
            'threshold, the `level` column). Each open claim, by the seeds it would need for an 80% chance of a verdict '
            'at this threshold if its further seeds land as its seeds so far did (`n_80`; the threshold falls as more '
            'claims are decided, so these are upper bounds of a kind):', '', to_markdown(pd.DataFrame(groups)), '',
            f"Closed e-BH (Xu, Solari, Fischer, de Heide, Ramdas and Goeman 2025) would pass at least {attrs['closed']} "
            'tests on these e-values. The ledger keeps e-BH: the further tests closed e-BH passes have e-values below '
            'the threshold at which e-BY prints every interval with its false coverage rate held, so their intervals '
            'would not lie past their nulls and the printed interval would no longer decide.', '']


AWAITING = """\
Registered before any of their runs, with their margins, and judged by the rules above once the designs hold the
cells they read (`awaiting` says which): until then they are in no look and no count.
"""


def awaiting_section(awaiting: list[dict]) -> list[str]:
    """claims.md's list of the claims registered ahead of their runs: their wording, test and margin."""
    if not awaiting:
        return []
    rows = pd.DataFrame([dict(id=c['id'], claim=c['claim'], source=c['source'], part=part(c), kind=c['kind'],
                              scale=c.get('scale', 'raw'), than=c.get('than', ''), inputs='; '.join(
                                  f"{c_input.get('cell', c_input.get('table'))} {c_input['metric']}"
                                  for c_input in c['inputs']), rationale=c.get('rationale', ''),
                              registered=c['registered'], awaiting=c['awaiting']) for c in awaiting])
    return ['## Registered, awaiting their runs', '', AWAITING, to_markdown(rows)]


def markdown(frame: pd.DataFrame, claims: dict | None = None, standing: str = '') -> str:
    """results/claims.md: the promise, where the substrate stands (standing: its scale and baseline against the
    chapter's), the counts, the rules, the claims (chapter, literature, calibration), the findings and the
    deterministic checks."""
    claims = claims or load_claims()
    alpha = number(claims.get('alpha', DEFAULTS['alpha']))
    with_verdict = frame[judged(frame)]
    rules = RULES.format(alpha=alpha, factor=number(claims.get('about_factor', DEFAULTS['about_factor'])),
                         z=number(claims.get('noise_z', DEFAULTS['noise_z'])),
                         high=number(claims.get('high_probability', DEFAULTS['high_probability'])))
    history = '\n'.join(f"- {entry['date']}: {' '.join(str(entry['what']).split())}" for entry in claims.get('rules', []))
    promise = PROMISE.format(parts=len(with_verdict), claims=int((~derived(with_verdict)).sum()), alpha=alpha)
    lines = ['# Claims ledger', '', promise,
             *([standing, ''] if standing else []), summary(frame), '', rules,
             '**When the rules changed** (newest last):', '', history, '', *projections(frame)]
    for title, name in (('Claims of the chapter', 'chapter'), ('Claims from the literature', 'literature'),
                        ('Calibration targets (the substrate was tuned to these figures: not evidence)', 'calibration'),
                        ('Findings (exercise questions and models the chapter offers: no verdict)', FINDING)):
        lines += [f'## {title}', '', to_markdown(frame[frame['group'] == name][VIEW])]
    lines += awaiting_section(claims.get('awaiting', []))
    lines += ['## Deterministic checks', '', 'Exact figures (the clipped loss, the dual clip, the old_logp bug): '
              'pass when every seed gives the printed value within its rounding.', '',
              to_markdown(frame[frame['group'] == 'check'][CHECK_VIEW])]
    return '\n'.join(lines)
