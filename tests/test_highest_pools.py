"""Pools that read the highest die (issue 19): the author's bands, critical and zero-dice rule as data; exact
odds in the runtime, the generated package and the reference; seeded rolls that report their dice."""

from __future__ import annotations

import random
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest

from rulesdsl.compile.mechanics import highest_mechanic
from rulesdsl.compile.pipeline import Compilation
from rulesdsl.runtime import odds
from rulesdsl.runtime.core import HighestMechanic, Outcome
from rulesdsl.targets.build import render_all, write_output
from tests.conftest import messages, run_python

ACTION = """
mechanic action "Action roll" {
  style: highest
  die: d6
  outcomes: { faces: 1..3  outcome: failure }, { faces: 4..5  outcome: partial }, { faces: 6  outcome: success }
  critical: 2
  zero_dice: 2
}
mechanic plain { style: highest  die: d10  outcomes: { faces: 1..7  outcome: miss }, { faces: 8+  outcome: hit } }
"""

BLADES = HighestMechanic(
    "action", "Action", 6, (Outcome("failure", 1, 3), Outcome("partial", 4, 5), Outcome("success", 6, 6)), 2, 2
)


def test_the_odds_are_exact_for_every_pool() -> None:
    assert BLADES.chances(1) == {
        "failure": Fraction(1, 2),
        "partial": Fraction(1, 3),
        "success": Fraction(1, 6),
        "critical": Fraction(0),
    }
    # Two dice: 11 of 36 rolls show a six; one of them shows two, the critical.
    assert BLADES.chances(2)["critical"] == Fraction(1, 36) and BLADES.chances(2)["success"] == Fraction(10, 36)
    # No dice: the lowest of two, never a critical.
    assert BLADES.chances(0) == {
        "failure": Fraction(27, 36),
        "partial": Fraction(8, 36),
        "success": Fraction(1, 36),
        "critical": Fraction(0),
    }
    for dice in range(7):
        assert sum(BLADES.chances(dice).values()) == 1
    assert BLADES.chances(6)["failure"] == Fraction(1, 2**6)


def test_rolls_are_seeded_and_report_their_dice() -> None:
    first = BLADES.roll(random.Random(4), 3)
    assert first == BLADES.roll(random.Random(4), 3)
    assert len(first.dice) == 3 and first.read == max(first.dice)
    assert len(BLADES.roll(random.Random(4), 0).dice) == 2
    assert BLADES.judge([6, 2, 6]).outcome == "critical" and BLADES.judge([6, 2, 6]).critical
    assert BLADES.judge([6, 6], dice=0).outcome == "success"  # the zero-dice roll never crits
    assert BLADES.judge([1, 5], dice=0).outcome == "failure"
    assert BLADES.judge([4, 5]).outcome == "partial"


def test_what_it_cannot_roll_is_an_error() -> None:
    without = HighestMechanic("m", "M", 6, (Outcome("any", 1, 6),))
    with pytest.raises(ValueError, match="no zero_dice rule"):
        without.roll(random.Random(1), 0)
    with pytest.raises(ValueError):
        BLADES.roll(random.Random(1), -1)
    with pytest.raises(ValueError):
        BLADES.judge([7])
    with pytest.raises(odds.OddsTooCostly):
        BLADES.chances(100_000)


def test_it_checks_and_the_package_computes_it(compile_rules: Callable[..., Compilation], tmp_path: Path) -> None:
    result = compile_rules({"m.rules": ACTION})
    assert result.ok, messages(result)
    plain = highest_mechanic(result.rulesets[0].entities["mechanic"]["plain"])
    assert plain is not None and plain.outcomes[-1] == Outcome("hit", 8, 10)
    out = tmp_path / "out"
    write_output(out, render_all(result.rulesets))
    ran = run_python(
        "import random\nfrom fractions import Fraction\nfrom demo.mechanics import MECHANICS\n"
        "a = MECHANICS['action']\n"
        "assert a.chances(2)['critical'] == Fraction(1, 36)\n"
        "assert a.roll(random.Random(2), 4) == a.roll(random.Random(2), 4)\n"
        "assert MECHANICS['plain'].chances(1) == {'miss': Fraction(7, 10), 'hit': Fraction(3, 10)}\n"
        "print('ok')\n",
        out,
    )
    assert ran.stdout.strip() == "ok", ran.stderr
    page = (out / "site" / "demo" / "mechanic.html").read_text(encoding="utf-8")
    assert "Chance of each outcome" in page
    assert '<th scope="row">0</th><td title="3/4">75%</td>' in page  # the zero-dice rule's row
    assert '<td title="1/36">2.8%</td>' in page
