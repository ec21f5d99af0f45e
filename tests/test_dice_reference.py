"""The reference shows every dice value's range and exact odds (issue 19): keep, explode, parts alike."""

from __future__ import annotations

from fractions import Fraction

from rulesdsl.runtime.core import Dice, DiceTerm, dice
from rulesdsl.targets.html.values import MAX_ODDS_LINES, dice_odds


def test_kept_and_scaled_dice_show_every_total() -> None:
    kept = dice_odds(Dice("4d6kh3", (DiceTerm(4, 6, keep=3),)))
    assert kept is not None and kept[0] == "3-18" and ("18", Fraction(21, 1296)) in kept[1]
    scaled = dice_odds(dice(3, 6) * 5)
    assert scaled is not None and scaled[0] == "15-90" and [label for label, _ in scaled[1]][:2] == ["15", "20"]


def test_an_exploding_roll_shows_its_totals_to_a_cut_off_then_the_rest() -> None:
    shown = dice_odds(Dice("1d6!", (DiceTerm(1, 6, explode=True),)))
    assert shown is not None and shown[0] == "1 or more"
    label, rest = shown[1][-1]
    assert label == "26 or more" and rest == Fraction(5, 7776) and rest < Fraction(1, 100)
    assert sum(p for _, p in shown[1]) == 1 and ("7", Fraction(1, 36)) in shown[1]


def test_many_totals_are_grouped_and_a_constant_has_no_odds() -> None:
    shown = dice_odds(dice(10, 10))
    assert shown is not None and len(shown[1]) <= MAX_ODDS_LINES and sum(p for _, p in shown[1]) == 1
    assert dice_odds(Dice("0", ())) is None
