"""Property tests: invariants that must hold for any input, not just the examples."""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rulesdsl.compile.pipeline import Compilation
from rulesdsl.language.names import slug
from rulesdsl.runtime.core import Dice, DiceTerm
from rulesdsl.targets.build import render_all
from rulesdsl.targets.templating import py

ID = re.compile(r"^[a-z_][a-z0-9_]*$")


@given(st.text())
def test_any_string_round_trips_through_the_python_literal_filter(text: str) -> None:
    assert eval(py(text)) == text


@given(st.text())
def test_slug_is_a_valid_id_and_idempotent(text: str) -> None:
    once = slug(text)
    assert ID.match(once)
    assert slug(once) == once


@given(
    st.lists(st.tuples(st.integers(1, 4), st.sampled_from([4, 6, 8, 10, 12, 20])), min_size=1, max_size=3),
    st.integers(-5, 30),
)
def test_dice_distributions_are_exact(terms: list[tuple[int, int]], modifier: int) -> None:
    dice = Dice("", tuple(DiceTerm(c, s) for c, s in terms), modifier)
    spread = dice.distribution()
    assert sum(spread.values()) == Fraction(1)
    assert min(spread) == sum(c for c, _ in terms) + modifier
    assert max(spread) == sum(c * s for c, s in terms) + modifier


@st.composite
def partitions(draw: st.DrawFn) -> tuple[int, list[tuple[int, int]]]:
    """A die size and an exact partition of 1..sides into consecutive ranges."""
    sides = draw(st.sampled_from([4, 6, 8, 10, 12, 20]))
    cuts = sorted(draw(st.sets(st.integers(2, sides), max_size=sides - 1)))
    bounds = [1, *cuts, sides + 1]
    return sides, [(bounds[i], bounds[i + 1] - 1) for i in range(len(bounds) - 1)]


def table_source(sides: int, ranges: list[tuple[int, int]]) -> str:
    rows = "\n".join(f"  {lo}-{hi} -> r{i}" if lo != hi else f"  {lo} -> r{i}" for i, (lo, hi) in enumerate(ranges))
    return f"table t {{\n  roll: 1d{sides}\n  columns: x\n{rows}\n}}\n"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(partitions())
def test_exact_partitions_pass_the_coverage_check(
    compile_rules: Callable[..., Compilation], case: tuple[int, list[tuple[int, int]]]
) -> None:
    sides, ranges = case
    result = compile_rules({"t.rules": table_source(sides, ranges)})
    assert result.ok, [d.message for d in result.diagnostics]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(partitions(), st.data())
def test_dropping_a_row_is_always_reported_as_a_gap(
    compile_rules: Callable[..., Compilation], case: tuple[int, list[tuple[int, int]]], data: st.DataObject
) -> None:
    sides, ranges = case
    if len(ranges) < 2:
        return
    dropped = data.draw(st.integers(0, len(ranges) - 1))
    lo, hi = ranges[dropped]
    result = compile_rules({"t.rules": table_source(sides, ranges[:dropped] + ranges[dropped + 1 :])})
    gap = str(lo) if lo == hi else f"{lo}-{hi}"
    assert [d.code for d in result.diagnostics] == ["E315"]
    assert result.diagnostics[0].message.startswith(f"no row for {gap} ")


_PIECES = [
    "lifepath",
    "table",
    "trait",
    "skill",
    "attribute",
    "formula",
    "mechanic",
    "setting",
    "stock",
    "spell",
    '"Farmer"',
    "x",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ",",
    ":",
    "->",
    "..",
    "-",
    "+",
    "*",
    "/",
    "^",
    ">",
    "<=",
    "=",
    "or",
    "and",
    "not",
    "of",
    "in setting",
    "tagged",
    "any",
    "trait",
    "skill",
    "lifepaths",
    "age",
    "position",
    "time:",
    "roll:",
    "columns:",
    "keys:",
    "skills:",
    "requires:",
    "formula:",
    "params:",
    "type:",
    "stock:",
    "8 yrs",
    "2 pts:",
    "+1 M/P",
    "1d10",
    "2d6+3",
    "x1/2",
    "4^",
    "10+",
    "3",
    "-6",
    "1.5",
    "unknown",
    "yes",
    "floor(",
    "max(",
    '"a\\"b"',
    '"\\q"',
    "#c",
    "\n",
    " ",
    "\t",
    "é",
    '"',
    "\\",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(_PIECES), max_size=40).map(" ".join))
def test_no_input_crashes_the_compiler(compile_rules: Callable[..., Compilation], text: str) -> None:
    """Bad input is the normal case: whatever the file says, the result is diagnostics, never an exception."""
    result = compile_rules({"a.rules": text})
    for diagnostic in result.diagnostics:
        assert diagnostic.message
        assert diagnostic.pos is None or diagnostic.pos.line >= 1
    if result.ok:
        render_all(result.rulesets)  # what checks clean must also emit


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=200))
def test_no_random_text_crashes_the_compiler(compile_rules: Callable[..., Compilation], text: str) -> None:
    result = compile_rules({"a.rules": text})
    assert all(d.message for d in result.diagnostics)
    if result.ok:
        render_all(result.rulesets)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(1, 400), st.sampled_from(["({})", "not {}", "{} + 1", "floor({})", "A or {}", "-{}"]))
def test_deep_nesting_is_a_diagnostic_not_a_crash(
    compile_rules: Callable[..., Compilation], levels: int, shape: str
) -> None:
    value = "A"
    for _ in range(levels):
        value = shape.format(value)
    result = compile_rules(
        {
            "a.rules": "stock s { }\nsetting z { stock: s }\nlifepath A { time: 1 yrs  resources: 1 }\n"
            f"attribute a {{ abbr: A  group: g }}\nformula f {{ params: q  formula: {value} }}\n"
            f"lifepath L {{ time: 1 yrs  resources: 1  requires: {value} }}\n"
        }
    )
    assert {d.code for d in result.diagnostics} <= {"E201", "E204"}, [d.message for d in result.diagnostics]
    if levels > 100 and shape not in ("({})", "A or {}"):  # grouping and or-chains stay flat
        assert "E204" in {d.code for d in result.diagnostics}
    if result.ok:
        render_all(result.rulesets)  # what checks clean must also emit
