"""Limits (docs/diagnostics.md, "Limits"): each is tested at its edge, just under (no diagnostic of its
code) and just over (its code, positioned at what passes it)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from rulesdsl.compile.jsonform import defs_schema
from rulesdsl.compile.lower import MAX_DICE, MAX_SIDES
from rulesdsl.compile.pipeline import Compilation
from rulesdsl.syntax.limits import MAX_DIGITS, MAX_ROWS, MAX_STRING, MAX_SYNTAX_ERRORS
from rulesdsl.syntax.source import MAX_SOURCE_BYTES

from .conftest import write_ruleset
from .test_diagnostics import GOLDEN, matches_golden, render

Compile = Callable[..., Compilation]


def codes(result: Compilation) -> list[str]:
    return [d.code for d in result.diagnostics]


def test_the_limits_are_generous() -> None:
    """Far beyond any book: the largest die of a real game has 100 sides, its longest table a few hundred
    rows, its longest text a few thousand characters."""
    assert (MAX_DIGITS, MAX_STRING, MAX_DICE, MAX_SIDES, MAX_ROWS) == (15, 100_000, 100, 1000, 10_000)
    assert MAX_SYNTAX_ERRORS == 100
    assert MAX_SOURCE_BYTES == 4 * 1024 * 1024


def test_the_schema_bounds_dice_as_lowering_does() -> None:
    """The dice definition in the shared schema repeats the limits; it must not drift from them."""
    term = defs_schema()["$defs"]["dice"]["properties"]["terms"]["items"]["properties"]
    assert term["count"]["maximum"] == MAX_DICE
    assert term["sides"]["maximum"] == MAX_SIDES


# Each number position the grammar has, written with MAX_DIGITS digits and with one more.
NUMBER_PLACES = [
    "table t {{ columns: v(int)\n  1 -> {n}\n}}\n",
    "table t {{ columns: v\n  {n} -> a\n}}\n",
    "table t {{ columns: v\n  {n}+ -> a\n}}\n",
    "table t {{ columns: v(multiplier)\n  1 -> x{n}/2\n}}\n",
    "table t {{ columns: v(multiplier)\n  1 -> x1/{n}\n}}\n",
    "kind weight {{ grams: number in 0..{n}.5 }}\n",
    "kind weight {{ grams: number in 0..1.{n} }}\n",
    "kind weight {{ grams: int in -{n}..0 }}\n",
    "formula f {{ params: x  formula: x * {n} }}\n",
    "lifepath L {{ time: {n} yrs  resources: 1  skills: {n} pts: Sword }}\n"
    "skill Sword {{ root: Will  type: martial }}\n",
    'spell "Spark" {{ obstacle: {n}^  actions: 2 }}\n',
    "table t {{ roll: {n}d6\n  columns: v\n  1+ -> a\n}}\n",
    "table t {{ roll: 1d{n}\n  columns: v\n  1+ -> a\n}}\n",
    "lifepath L {{ time: 1 yrs  resources: 1  requires: {n} of lifepaths }}\n",
    "kind task {{ roll: check }}\ntask climb {{ roll: check END {n}+ }}\n",
]


@pytest.mark.parametrize("place", NUMBER_PLACES)
def test_numbers_have_at_most_15_digits(compile_rules: Compile, place: str) -> None:
    under = compile_rules({"a.rules": place.format(n="9" * MAX_DIGITS)})
    assert "E104" not in codes(under)
    over = compile_rules({"a.rules": place.format(n="9" * (MAX_DIGITS + 1))})
    assert "E104" in codes(over)
    huge = compile_rules({"a.rules": place.format(n="9" * 4301)})  # past Python's own conversion limit
    assert "E104" in codes(huge)
    diagnostic = next(d for d in huge.diagnostics if d.code == "E104")
    assert diagnostic.message == "a number of 4,301 digits; numbers have at most 15"
    assert diagnostic.pos is not None
    line = place.format(n="9" * 4301).split("\n")[diagnostic.pos.line - 1]
    assert line[diagnostic.pos.column - 1 :].lstrip("x-").startswith("9")


def test_the_largest_number_is_read_exactly(compile_rules: Compile) -> None:
    result = compile_rules({"a.rules": f"table t {{ columns: v(int)\n  1 -> {'9' * MAX_DIGITS}\n}}\n"})
    assert result.ok
    cell = result.rulesets[0].entities["table"]["t"].rows[0].cells[0]
    assert cell == 10**MAX_DIGITS - 1


def test_strings_hold_at_most_100000_characters(compile_rules: Compile) -> None:
    def note(length: int) -> str:
        return f'kind note {{ text: markdown }}\nnote n {{ text: "{"a" * length}" }}\n'

    under = compile_rules({"a.rules": note(MAX_STRING)})
    assert codes(under) == ["E210"]  # the field's own limit (20,000) speaks, not the string's
    over = compile_rules({"a.rules": note(MAX_STRING + 1)})
    assert codes(over) == ["E105"]
    assert over.diagnostics[0].message == "this string is 100,001 characters long; a string holds at most 100,000"
    assert over.diagnostics[0].pos is not None and over.diagnostics[0].pos.column == 16  # its opening quote


@pytest.mark.parametrize(
    ("under", "over", "code"),
    [
        ("100d6", "101d6", "E205"),
        ("50d6 + 50d8", "50d6 + 51d8", "E205"),
        ("1d1000", "1d1001", "E206"),
        ("1d1000 + 1d6 + 2", "1d6 + 1d1001", "E206"),
    ],
)
def test_dice_limits(compile_rules: Compile, under: str, over: str, code: str) -> None:
    def table(roll: str) -> str:
        head = f"table t {{\n  roll: {roll}\n  columns: v\n  <=100 -> low\n  101+ -> high\n}}\n"
        return head + f"table c {{ columns: d(dice)\n  1 -> {roll}\n}}\n"

    assert compile_rules({"a.rules": table(under)}).ok
    result = compile_rules({"a.rules": table(over)})
    assert codes(result) == [code, code]  # the roll, and the dice cell (a cell keeps its limit's code)


def test_tables_hold_at_most_10000_rows(compile_rules: Compile) -> None:
    def table(rows: int) -> str:
        return "table t { columns: v\n" + "".join(f"  {i} -> r\n" for i in range(rows)) + "}\n"

    assert compile_rules({"a.rules": table(MAX_ROWS)}).ok
    over = compile_rules({"a.rules": table(MAX_ROWS + 1)})
    assert codes(over) == ["E107"]
    pos = over.diagnostics[0].pos
    assert pos is not None and pos.line == MAX_ROWS + 2  # the first row past the limit


def test_a_file_reports_at_most_100_syntax_errors(compile_rules: Compile) -> None:
    under = compile_rules({"a.rules": "a {\n" * MAX_SYNTAX_ERRORS})
    assert codes(under) == ["E103"] * MAX_SYNTAX_ERRORS
    over = compile_rules({"a.rules": "a {\n" * (MAX_SYNTAX_ERRORS + 50)})
    assert codes(over) == ["E103"] * MAX_SYNTAX_ERRORS + ["E106"]
    assert over.diagnostics[-1].pos is not None and over.diagnostics[-1].pos.line == MAX_SYNTAX_ERRORS + 1


def test_golden_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each limit as a user sees it passed (files too large to keep in git are written here)."""
    monkeypatch.chdir(tmp_path)
    write_ruleset(
        tmp_path / "rules" / "demo",
        {
            "numbers.rules": f"table t {{ columns: v(int)\n  1 -> {'9' * MAX_DIGITS}\n  2 -> {'1' * 4301}\n}}\n",
            "strings.rules": f'trait Brave {{ type: die  description: "{"a" * (MAX_STRING + 1)}" }}\n',
            "dice.rules": "table t {\n  roll: 60d6 + 41d8\n  columns: v\n  1+ -> a\n}\n"
            "table u {\n  roll: 2d1001\n  columns: v\n  1+ -> a\n}\n",
            "rows.rules": "table long { columns: v\n" + "".join(f"  {i} -> r\n" for i in range(MAX_ROWS + 1)) + "}\n",
            "garbage.rules": "a {\n" * (MAX_SYNTAX_ERRORS + 1),
            "surrogates.rules": 'trait "Grin \\ud83d\\ude00" { type: die }\ntrait "\\ud800 alone" { type: die }\n',
        },
    )
    rendered = render([Path("rules")])
    matches_golden(rendered, GOLDEN / "trees" / "limits.txt")
    assert json.dumps(rendered)  # printable as it is: no lone surrogate made it into a message
