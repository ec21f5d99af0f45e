"""Roll-under mechanics (`style: under`): a sum at most a target succeeds, graded by fractions of the target,
with criticals and fumbles as bands of rolls that may depend on the target. Exact odds are checked against
odds counted here, roll by roll, with each game's rules written out by hand."""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest

from rulesdsl.compile.mechanics import under_mechanic
from rulesdsl.compile.pipeline import Compilation
from rulesdsl.runtime import odds
from rulesdsl.runtime.core import Dice, DiceTerm, Grade, RollBand, UnderMechanic
from rulesdsl.targets.build import render_all, write_output
from tests.conftest import messages, run_python

MECHANICS = """
mechanic percentile "Percentile roll" {
  style: under
  die: 1d100
  grades: { divide: 2  outcome: hard }, { divide: 5  outcome: extreme }
  criticals: { rolls: 1 }
  fumbles: { rolls: 96+  targets: <50 }, { rolls: 100 }
}
mechanic three "3d6 roll-under" {
  style: under
  die: 3d6
  criticals: { rolls: 3..4 }, { rolls: 5  targets: 15+ }, { rolls: 6  targets: 16+ }
  fumbles: { rolls: 18 }, { rolls: 17  targets: <16 }
}
mechanic luck "Test your luck" { style: under  die: 2d6 }
mechanic attribute "Attribute check" { style: under  die: 1d20  criticals: { rolls: 1 }  fumbles: { rolls: 20 } }
"""

PERCENTILE = UnderMechanic(
    "percentile",
    "Percentile roll",
    Dice("1d100", (DiceTerm(1, 100),)),
    (Grade(2, "hard"), Grade(5, "extreme")),
    (RollBand(1, 1),),
    (RollBand(96, 100, None, 49), RollBand(100, 100)),
)


def percentile_by_hand(roll: int, skill: int) -> str:
    """The percentile rules as a player reads them: 01 is a critical; 96-100 fumble under a skill of 50,
    only 100 from 50; at most a fifth (rounded down) is extreme, a half hard, the skill a success."""
    if roll == 1:
        return "critical"
    if roll >= (96 if skill < 50 else 100):
        return "fumble"
    if roll > skill:
        return "failure"
    return "extreme" if roll <= skill // 5 else "hard" if roll <= skill // 2 else "success"


def three_by_hand(rolled: tuple[int, ...], skill: int) -> str:
    """3d6 under the skill: 3-4 always a critical, 5 from skill 15, 6 from 16; 18 always a fumble, 17 under
    a skill of 16."""
    total = sum(rolled)
    if total <= 4 or (total == 5 and skill >= 15) or (total == 6 and skill >= 16):
        return "critical"
    if total == 18 or (total == 17 and skill < 16):
        return "fumble"
    return "success" if total <= skill else "failure"


def counted(outcomes: list[str]) -> dict[str, Fraction]:
    ways = Counter(outcomes)
    return {name: Fraction(n, len(outcomes)) for name, n in ways.items()}


def nonzero(chances: dict[str, Fraction]) -> dict[str, Fraction]:
    return {name: p for name, p in chances.items() if p}


def test_percentile_odds_are_exact_for_every_target() -> None:
    assert PERCENTILE.names == ("fumble", "failure", "success", "hard", "extreme", "critical")
    for skill in range(-5, 131):
        chances = PERCENTILE.chances(skill)
        assert list(chances) == list(PERCENTILE.names) and sum(chances.values()) == 1
        by_hand = counted([percentile_by_hand(roll, skill) for roll in range(1, 101)])
        assert nonzero(chances) == by_hand, skill
        assert PERCENTILE.chance(skill) == sum(p for n, p in by_hand.items() if n not in ("failure", "fumble"))
    # a skill of 50: 01 critical, 02-10 extreme, 11-25 hard, 26-50 success, 51-99 failure, 100 fumble
    assert PERCENTILE.chances(50) == {
        "fumble": Fraction(1, 100),
        "failure": Fraction(49, 100),
        "success": Fraction(25, 100),
        "hard": Fraction(15, 100),
        "extreme": Fraction(9, 100),
        "critical": Fraction(1, 100),
    }
    assert PERCENTILE.chances(49)["fumble"] == Fraction(5, 100)


def test_three_dice_odds_with_target_dependent_criticals(compile_rules: Callable[..., Compilation]) -> None:
    result = compile_rules({"m.rules": MECHANICS})
    assert result.ok, messages(result)
    three = under_mechanic(result.rulesets[0].entities["mechanic"]["three"])
    assert three is not None and three.names == ("fumble", "failure", "success", "critical")
    rolls = list(itertools.product(range(1, 7), repeat=3))
    for skill in range(0, 21):
        by_hand = counted([three_by_hand(rolled, skill) for rolled in rolls])
        assert nonzero(three.chances(skill)) == by_hand, skill
    assert three.chances(10)["success"] == Fraction(108 - 1 - 3, 216)  # 3d6 <= 10, less 3 and the three 4s


def test_rolls_are_seeded_and_report_their_dice() -> None:
    for seed in range(40):
        result = PERCENTILE.roll(random.Random(seed), 45)
        assert result == PERCENTILE.roll(random.Random(seed), 45)
        assert result.dice == (random.Random(seed).randint(1, 100),)
        assert result.total == result.dice[0] and result.margin == 45 - result.total
        assert result.outcome == percentile_by_hand(result.total, 45)
        assert result.success == (result.outcome not in ("failure", "fumble"))
    assert PERCENTILE.judge([1], 0).outcome == "critical"  # 01 is a critical whatever the skill
    assert PERCENTILE.judge([100], 150).outcome == "fumble"  # and 100 a fumble
    assert PERCENTILE.judge([97], 49).outcome == "fumble" and PERCENTILE.judge([97], 50).outcome == "failure"
    assert PERCENTILE.judge([10], 50).outcome == "extreme" and PERCENTILE.judge([11], 50).outcome == "hard"
    assert PERCENTILE.judge([30], Fraction(60)).outcome == "hard"  # a formula's whole Fraction is a target


def test_what_it_cannot_roll_is_an_error() -> None:
    with pytest.raises(ValueError, match="not faces of 1d100"):
        PERCENTILE.judge([101], 50)
    with pytest.raises(ValueError, match="not faces"):
        PERCENTILE.judge([3, 4], 50)
    with pytest.raises(ValueError, match="not a whole number"):
        PERCENTILE.roll(random.Random(1), Fraction(1, 2))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="added up"):
        UnderMechanic("m", "M", Dice("1d6!", (DiceTerm(1, 6, explode=True),)))
    with pytest.raises(odds.OddsTooCostly):
        UnderMechanic("m", "M", Dice("5000d100", (DiceTerm(5000, 100),))).chances(50)


def test_the_package_rolls_it_and_the_reference_shows_its_odds(
    compile_rules: Callable[..., Compilation], tmp_path: Path
) -> None:
    result = compile_rules({"m.rules": MECHANICS})
    assert result.ok, messages(result)
    out = tmp_path / "out"
    write_output(out, render_all(result.rulesets))
    ran = run_python(
        "import json, random\nfrom demo.mechanics import MECHANICS\n"
        "p = MECHANICS['percentile']\n"
        "print(json.dumps({t: {n: str(c) for n, c in p.chances(t).items()} for t in (20, 50, 80)}))\n"
        "r = p.roll(random.Random(7), 65)\n"
        "print(r.dice, r.total, r.outcome, r.success, r.margin)\n"
        "print(MECHANICS['luck'].chance(7), MECHANICS['luck'].names, MECHANICS['attribute'].chances(12))\n",
        out,
    )
    assert ran.returncode == 0, ran.stderr
    first, second, third = ran.stdout.splitlines()
    expected = {
        str(t): {n: str(c) for n, c in counted([percentile_by_hand(r, t) for r in range(1, 101)]).items()}
        for t in (20, 50, 80)
    }
    assert {t: nonzero_text(c) for t, c in json.loads(first).items()} == expected
    roll = random.Random(7).randint(1, 100)
    assert second == f"({roll},) {roll} {percentile_by_hand(roll, 65)} {roll <= 65} {65 - roll}"
    # 2d6 at most 7: 21 of 36; a d20 against 12: 1 a critical, 2-12 a success, 13-19 a failure, 20 a fumble
    assert third == (
        "7/12 ('failure', 'success') {'fumble': Fraction(1, 20), 'failure': Fraction(7, 20), "
        "'success': Fraction(11, 20), 'critical': Fraction(1, 20)}"
    )
    page = (out / "site" / "demo" / "mechanic.html").read_text(encoding="utf-8")
    table = page.split('id="percentile"', 1)[1].split("Chance of each outcome, by target", 1)[1].split("</table>")[0]
    head = "".join(f'<th scope="col">{n}</th>' for n in PERCENTILE.names)
    assert f'<th scope="col">Target</th>{head}' in table
    for target in (20, 50, 80):
        row = table.split(f'<tr><th scope="row">{target}</th>', 1)[1].split("</tr>", 1)[0]
        titles = [cell.split('"', 1)[0] for cell in row.split('<td title="')[1:]]
        assert titles == [str(p) for p in PERCENTILE.chances(target).values()], target
    # 3d6 sums run 3..18: the targets shown are a fifth, a half and four fifths of the way
    three = page.split('id="three"', 1)[1].split("Chance of each outcome, by target", 1)[1].split("</table>")[0]
    assert all(f'<th scope="row">{t}</th>' in three for t in (6, 10, 15)), three


def nonzero_text(chances: dict[str, str]) -> dict[str, str]:
    return {name: p for name, p in chances.items() if p != "0"}
