"""Stage 2, lowering: written values become plain JSON documents, read by each field's declared type."""

from __future__ import annotations

from collections.abc import Callable

from rulesdsl.compile.pipeline import Compilation

from .conftest import messages


def docs(compilation: Compilation, kind: str) -> dict[str, dict[str, object]]:
    assert compilation.ok, messages(compilation)
    return compilation.rulesets[0].documents()[kind]


def test_lifepath_document(compile_rules: Callable[..., Compilation]) -> None:
    result = compile_rules(
        {
            "p.rules": """
        setting peasant "Peasant Setting" { stock: human }
        stock human "Men" { }
        lifepath "Farmer" {
          time: 8 yrs  resources: 5  stat: +1 P
          leads: peasant
          skills: 8 pts: Farming, "Animal Husbandry", Javelin or Bow
          general: 1 pt
          traits: 1 pt: Hoarding
          requires: "Village Tough" or 2 of lifepaths in setting peasant
          source: "p. 163"
        }
        lifepath "Village Tough" { time: 1 yrs  resources: 1 }
        skill "Farming" { root: Will  type: peasant }
        skill "Animal Husbandry" { root: Will  type: peasant }
        skill Javelin { root: Agility  type: martial }
        skill Bow { root: Agility  type: martial }
        trait Hoarding { type: character }
        """
        }
    )
    farmer = docs(result, "lifepath")["farmer"]
    assert farmer == {
        "kind": "lifepath",
        "id": "farmer",
        "name": "Farmer",
        "setting": "peasant",
        "time": 8,
        "resources": 5,
        "stat": {"mental": 0, "physical": 1, "either": 0},
        "leads": ["peasant"],
        "skills": {"points": 8, "items": ["farming", "animal_husbandry", {"one_of": ["javelin", "bow"]}]},
        "general": 1,
        "traits": {"points": 1, "items": ["hoarding"]},
        "requires": {"any": [{"lifepath": "village_tough"}, {"count": 2, "of": {"setting": "peasant"}}]},
        "source": "p. 163",
    }


def test_table_document(compile_rules: Callable[..., Compilation]) -> None:
    result = compile_rules(
        {
            "t.rules": """
        table loc "Location" {
          roll: 1d10
          columns: location, to_hit(int), damage(multiplier)
          1     -> Head, -6, x3
          2-9   -> "Torso", -1, x1/2
          10+   -> Leg, 0, x1
        }
        """
        }
    )
    table = docs(result, "table")["loc"]
    dice = {"text": "1d10", "terms": [{"count": 1, "sides": 10}], "modifier": 0}
    assert table["roll"] == {"text": "1d10", "dice": [dice], "modifier": None, "tens_units": False}
    assert table["columns"] == [
        {"name": "location", "type": "text"},
        {"name": "to_hit", "type": "int"},
        {"name": "damage", "type": "multiplier"},
    ]
    assert table["rows"] == [
        {"keys": [{"min": 1, "max": 1}], "cells": ["Head", -6, {"num": 3, "den": 1}]},
        {"keys": [{"min": 2, "max": 9}], "cells": ["Torso", -1, {"num": 1, "den": 2}]},
        {"keys": [{"min": 10, "max": None}], "cells": ["Leg", 0, {"num": 1, "den": 1}]},
    ]


def test_formula_and_dice_documents(compile_rules: Callable[..., Compilation]) -> None:
    result = compile_rules(
        {
            "a.rules": """
        attribute agility "Agility" { abbr: AGL  group: temporal  range: 1..10 }
        attribute wits "Wits" { abbr: WTS  group: mental  range: 1..10 }
        attribute reflex "Reflex" { abbr: REF  group: derived  formula: floor(( AGL+WTS )/2) }
        """
        }
    )
    reflex = docs(result, "attribute")["reflex"]
    assert reflex["formula"] == {
        "text": "floor((AGL + WTS) / 2)",  # canonical spacing, parentheses only where needed
        "expr": {
            "call": "floor",
            "args": [{"op": "/", "args": [{"op": "+", "args": [{"var": "agility"}, {"var": "wits"}]}, 2]}],
        },
    }


def test_setting_defaults_to_the_only_setting_in_the_file(compile_rules: Callable[..., Compilation]) -> None:
    result = compile_rules(
        {
            "s.rules": 'stock human { }\nsetting sea "Sea" { stock: human }\n'
            "lifepath Sailor { time: 2 yrs  resources: 1 }\n"
        }
    )
    assert docs(result, "lifepath")["sailor"]["setting"] == "sea"


def test_wrong_value_shape_is_reported_at_the_value(compile_rules: Callable[..., Compilation]) -> None:
    result = compile_rules({"t.rules": "table t {\n  roll: Head\n  columns: a\n  1 -> x\n}\n"})
    assert messages(result) == ["expected dice (like 1d10, 2d6+3, 30 + 1d10, 3d6 * 5, 4d6kh3, 1d6! or 0), got a name"]
    pos = result.diagnostics[0].pos
    assert pos is not None and (pos.line, pos.column) == (2, 9)


def test_a_field_given_twice(compile_rules: Callable[..., Compilation]) -> None:
    result = compile_rules({"t.rules": "trait T { type: die\n  type: character }\n"})
    assert messages(result) == ["field 'type' is given twice (first at line 1)"]


def test_a_dash_range_in_a_field_says_how_a_field_writes_ranges(compile_rules: Callable[..., Compilation]) -> None:
    """`range: 1-12` is the subtraction 1 - 12 in a field; the message offered `2-4` as a range form."""
    result = compile_rules({"a.rules": "attribute a { abbr: A  group: g  range: 1-12 }\n"})
    (found,) = [d for d in result.diagnostics if d.code == "E201"]
    assert found.message == "expected a range, got the subtraction 1 - 12"
    assert found.hint is not None and "range is written 1..12" in found.hint


def test_a_tables_keys_or_columns_unknown_is_a_diagnostic(compile_rules: Callable[..., Compilation]) -> None:
    """`keys: unknown` on a table with rows raised AssertionError (exit 3; the generated-ruleset run, seed
    23): keys, columns and parameters say how the rest is read, so they cannot be unknown."""
    source = "table g { keys: unknown\n  columns: v(int)\n  a -> 1\n}\ntable i { columns: unknown\n  1 -> 2\n}\n"
    result = compile_rules({"a.rules": source})
    found = [(d.code, d.pos.line if d.pos else 0) for d in result.diagnostics if d.code == "E201"]
    assert found == [("E201", 1), ("E201", 5)], messages(result)
    assert all("cannot be unknown" in d.message for d in result.diagnostics if d.code == "E201")
