"""The ledger's numbers in plain words: what was compared, which way, by how much, with its interval and the
interval's confidence (the ledger's level: 99.14% here)."""
import math
import re

import pandas as pd

from analysis.ledger.verdicts import decide
from analysis.text import describe, factor, where, why_short

NAN = math.nan


LEVEL = 0.991422  # a ledger's e-BH threshold of 116.6: 1 - 1 / 116.6


def row(estimate, low, high, band_low=NAN, band_high=NAN) -> dict:
    return dict(estimate=estimate, ci_low=low, ci_high=high, band_low=band_low, band_high=band_high, level=LEVEL)


def test_labels_share_their_common_words_once_and_differences_stay_whole():
    assert factor(['[epochs=16] pass_train', '[baseline] pass_train']) == ('pass_train', ['epochs=16', 'baseline'])
    assert factor(['T1 k=0 ess_over_n', 'T1 k=1 ess_over_n']) == ('T1 ess_over_n', ['k=0', 'k=1'])
    assert factor(['T8 epoch=4 approx_kl', 'T10 epoch=4 approx_kl']) == ('epoch=4 approx_kl', ['T8', 'T10'])
    assert factor(['a x', 'a x']) == ('', ['a x', 'a x'])  # nothing would be left to tell them apart
    whole = ['T10 epoch=8 approx_kl - T10 epoch=1 approx_kl', 'T10 epoch=16 approx_kl - T10 epoch=8 approx_kl']
    assert factor(whole) == ('', whole)


def test_a_difference_says_which_way_and_by_how_much():
    claim = dict(kind='less', scale='raw')
    text = describe(claim, row(-0.6947, -0.8265, -0.5629), ['[epochs=16] pass_train', '[baseline] pass_train'],
                    [0.1281, 0.8228])
    assert text == 'pass_train, medians over seeds: epochs=16 0.128 vs baseline 0.823: lower by 0.695 (99.14% interval 0.563 to 0.827)'
    assert '?' not in text


def test_a_threshold_on_a_difference_reads_as_the_difference_against_it():
    """The published '0.278 vs 0.297 by more than -0.102: higher by 0.0984' read as if the first were higher: the
    estimate of a two-input threshold claim is the median difference less the threshold."""
    claim = dict(kind='greater', scale='raw', than=-0.1015)
    text = describe(claim, row(0.0984, 0.02, 0.15), ['[clip=0.25] pass_heldout', '[clip=0.1] pass_heldout'],
                    [0.278, 0.297])
    assert text == ('pass_heldout, medians over seeds: clip=0.25 0.278 vs clip=0.1 0.297: difference -0.0031 '
                    '(99.14% interval -0.0815 to 0.0485), above the threshold -0.102 by 0.0984')


def test_a_ratio_reads_as_a_factor_and_a_threshold_as_a_number():
    claim = dict(kind='less', scale='log', than=0.8)
    text = describe(claim, row(0.0734, 0.064, 0.0843), ['T8 epoch=4 ratio_min'], [0.0597])
    assert text == 'T8 epoch=4 ratio_min, median over seeds 0.0597 vs 0.8: lower by a factor of 13.6 (99.14% interval 11.9 to 15.6)'
    steps = describe(dict(kind='increasing', scale='log'), row(1.286, 1.244, 1.328),
                     ['T8 epoch=1 approx_kl', 'T8 epoch=2 approx_kl'], [0.00332, 0.0356])
    assert steps == ('T8 approx_kl, medians over seeds: epoch=1 0.00332, epoch=2 0.0356; the weakest step higher by a factor of 1.29 '
                     '(99.14% interval 1.24 to 1.33)')


def test_a_rate_near_zero_reads_in_points_and_odds_with_no_bound_above_1000x():
    """The published finding that read 'lower by a factor of 63.7 (99.14% interval 15.9 to 4714285710)'."""
    claim = dict(kind='less', scale='logit')
    text = describe(claim, row(1 / 63.7, 1 / 4714285710, 1 / 15.9), ['[epochs=16] pass_train', '[baseline] pass_train'],
                    [0.0781, 0.844])
    assert text == ('pass_train, medians over seeds: epochs=16 0.0781 vs baseline 0.844: 76.6 points lower; odds lower by a '
                    'factor of 63.7 (99.14% interval 15.9 to over 1,000)')
    numbers = [float(n) for n in re.findall(r'\d+(?:\.\d+)?(?:e[+-]?\d+)?', text)]
    assert max(numbers) <= 1000
    above = describe(dict(kind='greater', scale='logit', than=0.5), row(2.0, 1.5, 2500.0), ['pass_train'], [0.667])
    assert above == ('pass_train, median over seeds 0.667 vs 0.5: 16.7 points higher; odds higher by a factor of 2 (99.14% interval 1.5 to over '
                     '1,000)')


def test_an_estimate_beyond_1000x_reads_over_1000_too():
    """The published 'higher by a factor of 2137254900': the estimate is capped like its interval's bounds."""
    text = describe(dict(kind='greater', scale='logit', than=0.5), row(2137254900.0, 30.0, 1e12), ['pass_train'], [1.0])
    assert text.endswith('odds higher by a factor of over 1,000 (99.14% interval 30 to over 1,000)')
    ratio = describe(dict(kind='about', scale='log', about=25, of='ratio'), row(5000.0, 2000.0, 9000.0, 20, 31),
                     ['[a] kl', '[b] kl'], [5.0, 0.001])
    assert 'kl: a / b, median over seeds over 1,000 (99.14% interval over 1,000 to over 1,000): above the band 20 to 31' in ratio


def test_an_about_claim_says_where_its_interval_lies_against_the_band():
    claim = dict(kind='about', scale='log', about=25, of='ratio')
    text = describe(claim, row(9.784, 7.354, 13.02, 20, 31.25), ['T6 unclipped approx_kl', 'T6 clipped approx_kl'],
                    [3.9, 0.19])
    assert text == ('T6 approx_kl: unclipped / clipped, median over seeds 9.78 (99.14% interval 7.35 to 13): below the band 20 to '
                    '31.2 (about 25)')
    assert [where(*ci, 0, 1) for ci in ((-2, -1), (2, 3), (0.2, 0.8), (-1, 2), (-1, 0.5), (0.5, 2))] == [
        'below', 'above', 'inside', 'wider than', 'across the lower edge of', 'across the upper edge of']


def test_a_directional_row_carries_its_smallest_effect_in_the_estimates_units():
    a, b = pd.Series([2.0, 2.2, 2.4, 2.1]), pd.Series([1.0, 1.1, 1.0, 1.2])
    printed = [{'value': '2.0'}, {'value': '1.0'}]  # the chapter's values: half its effect exceeds the rule's
    ratio = decide(dict(id='x', kind='greater', scale='log', paired=True, inputs=printed), [a, b])
    assert math.isclose(ratio['effect'], 1.25)  # the about factor, as a ratio
    diff = decide(dict(id='x', kind='greater', scale='raw', paired=True, inputs=printed), [a, b])
    assert math.isclose(diff['effect'], math.log(1.25) * 1.0)  # log(1.25) times the chapter's printed reference


def test_a_direction_short_of_the_claim_says_why_beside_its_numbers():
    """is-low-after-10: the numbers point the chapter's way, the verdict is short of the claim: 59% of seeds."""
    share = dict(share=0.59, effect=1.0)
    assert why_short(dict(with_high_probability=True), share, 0.8) == (
        'short of the claim: 59% of seeds go its way, the claim needs more than 80%')
    assert why_short(dict(scale='log'), dict(effect=1.25), 0.8) == (
        'short of the claim: confidently below its smallest effect of interest, a factor of 1.25')
    assert why_short(dict(scale='logit'), dict(effect=1.25), 0.8).endswith('odds a factor of 1.25')
    assert why_short(dict(scale='raw'), dict(effect=0.05), 0.8).endswith('interest, 0.05')


def test_a_substrate_says_where_it_stands_against_the_chapters_regime():
    """A baseline below a train pass rate of 0.8 is outside the chapter's regime, said beside its verdicts; a design
    that has left its runs' learning-rate scale says a rerun is planned."""
    from analysis.ledger.chapter import load_chapter
    from analysis.text import rerun_words, standing_words
    chapter = load_chapter()
    inside = standing_words(1.0, 0.872, 0.288, chapter)
    assert "mean train pass rate 0.872 and held-out 0.288, against the chapter's 0.900 and 0.312" in inside
    assert inside.endswith("in the chapter's regime.")
    outside = standing_words(1.0, 0.627, 0.188, chapter)
    assert "**outside the chapter's regime** (a train pass rate below 0.8)" in outside
    assert rerun_words(1.0, 1.0) == '' and 'learning-rate scale 0.2' in rerun_words(1.0, 0.2)
