"""Every declared constraint holds on every value, wherever it is written (issue 17: "What checks clean is right").

One mechanism checks them (`fieldtypes.constraint_problem`, asked by the reader); the JSON Schema says the same
bounds, and the two are held to agree here on the edge values. The messages are in the golden cases
`constraints`, `dice_typos` and `trees/constraint_patches`.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from jsonschema import Draft202012Validator

from rulesdsl.compile.jsonform import defs_schema, type_schema, value_json
from rulesdsl.compile.pipeline import Compilation, compile_paths
from rulesdsl.language import fieldtypes as t

from .conftest import messages, write_ruleset

F = Fraction
BOUNDED = [
    t.IntType(1, 5),
    t.IntType(0, None),
    t.IntType(None, -2),
    t.NumberType(F(0), F(1)),
    t.NumberType(F(1, 2), F(5, 2)),
    t.NumberType(F(-1), F(0)),
    t.NumberType(F(1, 3), None),
    t.NumberType(None, F(-3, 2)),
    t.NumberType(F(0), None),
]
EDGES: list[int | Fraction] = sorted(
    {F(n, d) for n in range(-8, 9) for d in (1, 2, 3, 4)} | {F(1, 3) - F(1, 10**9), F(1) + F(1, 10**9), F(-1, 10**9)}
)


def _validators(field_type: t.FieldType) -> tuple[Draft202012Validator, Any]:
    schema = {**type_schema(field_type), "$defs": defs_schema()["$defs"]}
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema), jsonschema_rs.Draft202012Validator(schema)


def _as_read(field_type: t.FieldType, value: Fraction) -> int | Fraction:
    """The value as lowering gives it: an int is an int, a number an int when whole."""
    return int(value) if value.denominator == 1 else value


@pytest.mark.parametrize("field_type", BOUNDED, ids=t.type_text)
def test_the_schema_and_the_checker_agree_on_bounds(field_type: t.IntType | t.NumberType) -> None:
    """Whole numbers: exactly. A ratio: the schema states its sign (exact for the bound 0) and is never
    narrower than the checker; JSON Schema cannot compare num/den with a bound."""
    slow, fast = _validators(field_type)
    for edge in EDGES:
        if isinstance(field_type, t.IntType) and edge.denominator != 1:
            continue
        value = _as_read(field_type, edge)
        checked = t.constraint_problem(field_type, value) is None
        document = value_json(value)
        assert slow.is_valid(document) == fast.is_valid(document), (value, document)
        in_schema = slow.is_valid(document)
        exact = edge.denominator == 1 or all(b in (None, 0) for b in (field_type.low, field_type.high))
        if exact:
            assert in_schema == checked, (t.type_text(field_type), value)
        else:
            assert in_schema or not checked, (t.type_text(field_type), value)


def test_the_schema_and_the_checker_agree_on_text_options_and_lengths() -> None:
    cases: list[tuple[t.FieldType, list[object]]] = [
        (t.TextType(), ["", "x", "x" * t.TEXT_LIMIT, "x" * (t.TEXT_LIMIT + 1)]),
        (t.MarkdownType(), ["", "x", "x" * t.MARKDOWN_LIMIT, "x" * (t.MARKDOWN_LIMIT + 1)]),
        (t.EnumType(("one", "two")), ["one", "two", "three", "One"]),
        (t.ListType(t.IntType(), 1, 2), [(), (1,), (1, 2), (1, 2, 3)]),
        (t.ListType(t.IntType(), 0, None), [(), (1,) * 50]),
    ]
    for field_type, values in cases:
        slow, fast = _validators(field_type)
        for value in values:
            checked = t.constraint_problem(field_type, value) is None
            document = value_json(value)  # type: ignore[arg-type]
            assert slow.is_valid(document) == fast.is_valid(document) == checked, (field_type, value)


def test_the_words_of_a_problem() -> None:
    # each with a hint: the bounds, option, count or text to write instead
    assert t.constraint_problem(t.NumberType(F(0), F(1)), 50) == ("must be at most 1, not 50", "write a number in 0..1")
    assert t.constraint_problem(t.NumberType(F(1, 2), None), F(1, 3)) == (
        "must be at least 0.5, not 1/3",
        "write 0.5 or more",
    )
    assert t.constraint_problem(t.IntType(None, 5), 9) == ("must be at most 5, not 9", "write 5 or less")
    assert t.constraint_problem(t.EnumType(("one", "two")), "tow") == (
        "must be one of: one, two",
        "did you mean 'two'?",
    )
    assert t.constraint_problem(t.EnumType(("small", "large")), "huge") == (
        "must be one of: small, large",
        "'huge' is not among them: write one as it is listed, such as small",
    )
    assert t.constraint_problem(t.ListType(t.IntType(), 1, 2), (1, 2, 3)) == (
        "holds 3 items, at most 2",
        "leave out 1 item",
    )
    assert t.constraint_problem(t.ListType(t.IntType(), 3, 4), (1,)) == ("needs at least 3 items, not 1", "add 2 items")
    assert t.constraint_problem(t.TextType(), "") == ("must not be empty", "write the text between the quotes")
    assert t.constraint_problem(t.IntType(1, 5), "unknown") is None  # not its shape: not its business


def test_a_number_out_of_its_bounds_is_refused_wherever_it_is_written(
    compile_rules: Callable[..., Compilation],
) -> None:
    """On main a `number` bound was never checked: `weight: 50` shipped in a `number in 0..1` field."""
    kind = 'kind weapon "Weapon" { weight: number in 0..1  spares: list of number in 0..1?  tag: text? }\n'
    result = compile_rules(
        {"a.rules": kind + "weapon sword { weight: 50 }\nweapon axe { weight: 1/2  spares: 1, 3/2 }\n"}
    )
    assert messages(result) == ["'weight' must be at most 1, not 50", "'spares' must be at most 1, not 1.5"]
    assert {d.code for d in result.diagnostics} == {"E210"}
    result = compile_rules({"a.rules": kind + "weapon axe { weight: 0.5  spares: 0, 1 }\n"})
    assert result.ok, messages(result)


def test_a_table_cell_is_checked_as_a_field_of_its_type_is(compile_rules: Callable[..., Compilation]) -> None:
    """On main a `text` cell of 210 characters, or empty, passed where a `text` field refused both."""
    long = "x" * 210
    table = (
        f'table loot {{ roll: 1d3  columns: item, note(text)\n  1 -> a, ""\n  2 -> b, "{long}"\n  3 -> c, none\n}}\n'
    )
    result = compile_rules({"a.rules": table})
    assert messages(result) == [
        "column 'note': the cell must not be empty",
        "column 'note': the cell is too long (210 characters, at most 200)",
    ]


def test_an_optional_field_is_told_its_bound(compile_rules: Callable[..., Compilation]) -> None:
    """On main: "'level' must be nothing"."""
    result = compile_rules({"a.rules": 'kind spell2 "S" { level: int in 0..9? }\nspell2 fire { level: 12 }\n'})
    assert messages(result) == ["'level' must be at most 9, not 12"]
    # any case is an abbreviation (`Ag`, issue 19); an underscore is not
    result = compile_rules({"a.rules": "attribute agility { abbr: A_g  group: temporal }\n"})
    assert messages(result) == ["'abbr' is not well formed: 'A_g'"]


def test_every_missing_and_every_unknown_field_in_one_run(compile_rules: Callable[..., Compilation]) -> None:
    result = compile_rules({"a.rules": "skill odd { colour: red  flavour: sweet }\n"})
    assert sorted(messages(result)) == [
        "a skill has no field 'colour'",
        "a skill has no field 'flavour'",
        "a skill needs a 'root' field",
        "a skill needs a 'type' field",
    ]


BASE = """
kind weapon "Weapon" {
  hits: list in 1..3 of dice
  tricks: list of formula?
  bands: list of range?
  ratios: list of number?
}
weapon sword "Sword" { hits: 1d6, 2d6 + 1, 1d4 + 1d8  tricks: 1 + 2, max(1, 2)  bands: 1..3, 4..6  ratios: 1/2, 2 }
"""


def _patched(tmp_path: Path, patch: str) -> Compilation:
    write_ruleset(tmp_path / "base", {"things.rules": BASE}, 'ruleset base { title: "Base"  version: "0.1.0" }\n')
    write_ruleset(
        tmp_path / "brew",
        {"changes.rules": patch},
        'ruleset brew { title: "Brew"  version: "0.1.0"  extends: base }\n',
    )
    return compile_paths([tmp_path / "base", tmp_path / "brew"])


def test_minus_equals_removes_by_meaning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On main no dice, formula or range could ever be removed: an item's identity held its position."""
    monkeypatch.chdir(tmp_path)
    result = _patched(
        tmp_path,
        "patch weapon sword { hits -= 2d6+1, 1d8 + 1d4  tricks -= (1 + 2)  bands -= 1..3  ratios -= 0.5 }\n",
    )
    assert result.ok, messages(result)
    brew = next(r for r in result.rulesets if r.id == "brew")
    sword = brew.documents()["weapon"]["sword"]
    assert [h["text"] for h in sword["hits"]] == ["1d6"]
    assert [f["text"] for f in sword["tricks"]] == ["max(1, 2)"]
    assert sword["bands"] == [{"min": 4, "max": 6}]
    assert sword["ratios"] == [2]


def test_minus_equals_says_what_is_missing_in_the_words_it_was_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = _patched(tmp_path, "patch weapon sword { hits -= 1d12  ratios -= 1/3  bands -= 5..6 }\n")
    assert messages(result) == [
        "'hits' has no 1d12 to remove",
        "'ratios' has no 1/3 to remove",
        "'bands' has no 5-6 to remove",
    ]
    for diagnostic in result.diagnostics:
        assert "Fraction(" not in str(diagnostic.hint) and "('" not in str(diagnostic.hint)


def test_a_patched_list_keeps_its_length(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = _patched(tmp_path, "patch weapon sword { hits += 1d10 }\npatch weapon sword { hits -= 1d6 }\n")
    assert messages(result) == ["once patched, 'hits' holds 4 items, at most 3"]


def test_a_bound_may_be_a_negative_decimal(compile_rules: Callable[..., Compilation]) -> None:
    """`number in -1.5..1` was a syntax error (the generated-ruleset run found it)."""
    source = 'kind gadget "G" { weight: number in -1.5..-0.25 }\ngadget g { weight: -0.5 }\ngadget h { weight: -2 }\n'
    result = compile_rules({"a.rules": source})
    assert messages(result) == ["'weight' must be at least -1.5, not -2"]
    assert [d.pos.line for d in result.diagnostics if d.pos] == [3]
