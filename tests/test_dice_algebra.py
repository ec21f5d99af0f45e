"""Dice algebra (issue 19): each snippet's range and exact odds, seeded rolls that report their dice, and the
same dice through the compiler into a generated package."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest

from rulesdsl.compile import ir
from rulesdsl.compile.pipeline import Compilation
from rulesdsl.runtime import odds
from rulesdsl.runtime.core import Dice, DiceTerm, dice, dice_max
from rulesdsl.targets.build import render_all, write_output

FIELDS = """
kind monster "Monster" { roll: dice }
monster times { roll: 3d6 * 5 }
monster group { roll: (2d6 + 6) * 5 }
monster half { roll: 1d6 / 2 }
monster spread { roll: 1d6 - 1d6 }
monster capital { roll: 1D6 }
monster keep { roll: 4d6kh3 }
monster drop { roll: 4d6dl1 }
monster low { roll: 2d20kl1 }
monster top { roll: 3d6kh1 }
monster boom { roll: 1d6! }
monster calm { roll: 0 }
monster floor { roll: max(1, 1d8 - 3) }
formula hit "Hit" { params: t  formula: max(1, 1d8 + t) }
formula big "Big" { params: n  formula: (2d6 + n) * 5 - 1d6 + 1d6 / 2 }
"""


@pytest.fixture
def rolls(compile_rules: Callable[..., Compilation]) -> dict[str, Dice]:
    result = compile_rules({"m.rules": FIELDS})
    assert result.ok, [d.message for d in result.diagnostics]
    monsters = result.rulesets[0].entities["monster"]
    return {id_: ir.runtime_dice(e.fields["roll"]) for id_, e in monsters.items()}  # type: ignore[arg-type]


def test_every_snippet_has_its_range_and_exact_odds(rolls: dict[str, Dice]) -> None:
    assert (rolls["times"].minimum, rolls["times"].maximum) == (15, 90)
    assert rolls["times"].chance(15, 15) == Fraction(1, 216) and rolls["times"].chance(16, 19) == 0
    assert (rolls["group"].minimum, rolls["group"].maximum) == (40, 90)
    assert rolls["half"].distribution() == {0: Fraction(1, 6), 1: Fraction(1, 3), 2: Fraction(1, 3), 3: Fraction(1, 6)}
    assert rolls["spread"].distribution()[0] == Fraction(1, 6) and rolls["spread"].minimum == -5
    assert rolls["capital"].distribution() == dice(1, 6).distribution()
    assert rolls["keep"].distribution() == rolls["drop"].distribution()
    assert rolls["keep"].chance(18, 18) == Fraction(21, 1296) and (rolls["keep"].minimum, rolls["keep"].maximum) == (
        3,
        18,
    )
    assert rolls["low"].chance(20, 20) == Fraction(1, 400) and rolls["low"].chance(1, 1) == Fraction(39, 400)
    assert rolls["top"].chance(6, 6) == 1 - Fraction(125, 216)
    assert rolls["calm"].distribution() == {0: Fraction(1)}
    assert rolls["floor"].chance(1, 1) == Fraction(1, 2)


def test_an_exploding_die_has_exact_odds_however_deep() -> None:
    boom = Dice("1d6!", (DiceTerm(1, 6, explode=True),))
    assert boom.chance(7, None) == Fraction(1, 6)
    assert boom.maximum is None and boom.minimum == 1
    assert boom.chance(6, 6) == 0 and boom.chance(12, 12) == 0
    assert boom.chance(13, 13) == Fraction(1, 216)
    assert boom.chance(61, None) == Fraction(1, 6**10)
    assert sum(boom.distribution(up_to=60).values()) + boom.chance(61, None) == 1
    with pytest.raises(ValueError, match="give up_to"):
        boom.distribution()
    with pytest.raises(odds.OddsTooCostly):
        boom.chance(odds.MAX_TAIL + 10, None)
    assert dice_max(5, boom).chance(5, 5) == Fraction(5, 6)


def test_rolls_are_seeded_and_report_their_dice(rolls: dict[str, Dice]) -> None:
    for roll in rolls.values():
        first, second = roll.throw(random.Random(7)), roll.throw(random.Random(7))
        assert first == second
        low, high = roll.minimum, roll.maximum
        assert low <= first.total and (high is None or first.total <= high)
    kept = Dice("4d6kh3", (DiceTerm(4, 6, 3),)).throw(random.Random(1))
    assert len(kept.faces) == 4 and kept.total == sum(sorted(kept.faces)[1:])
    boom = Dice("1d6!", (DiceTerm(1, 6, explode=True),))
    throws = [boom.throw(random.Random(seed)) for seed in range(200)]
    assert any(len(t.faces) > 1 for t in throws)
    assert all(t.total == sum(t.faces) and all(f == 6 for f in t.faces[:-1]) for t in throws)


def test_plain_dice_roll_as_they_always_did() -> None:
    plain = dice(2, 6) + 3
    assert plain.roll(random.Random(5)) == plain.throw(random.Random(5)).total


def test_the_package_computes_the_snippets(compile_rules: Callable[..., Compilation], tmp_path: Path) -> None:
    result = compile_rules({"m.rules": FIELDS})
    out = tmp_path / "out"
    write_output(out, render_all(result.rulesets))
    code = (
        "import random, sys\nsys.path.insert(0, '.')\n"
        "from fractions import Fraction\nfrom demo import MONSTERS, hit, big\n"
        "assert MONSTERS['boom'].roll.chance(7, None) == Fraction(1, 6)\n"
        "assert (MONSTERS['times'].roll.minimum, MONSTERS['times'].roll.maximum) == (15, 90)\n"
        "assert hit(t=-3).chance(1, 1) == Fraction(1, 2) and hit(t=2).minimum == 3\n"
        "b = big(n=1)\nassert (b.minimum, b.maximum) == (9, 67)\n"
        "assert b.throw(random.Random(3)) == b.throw(random.Random(3))\nprint('ok')\n"
    )
    ran = subprocess.run([sys.executable, "-I", "-c", code], cwd=out, capture_output=True, text=True, check=False)
    assert ran.stdout.strip() == "ok", ran.stderr
