"""The typed core: defects that lived in the untyped middle, each reproduced as it was found."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from rulesdsl.compile.checks.semantic import cycles
from rulesdsl.compile.pipeline import Compilation, compile_paths
from rulesdsl.targets.build import render_all, write_output

from .conftest import messages, run_python, write_ruleset

FORMULA_CELLS = """
table bonus { clamp: yes  columns: b(int)
  0-4 -> 5
  5+  -> 2
}
formula layered_sp { params: a, b  formula: max(a, b) + bonus[abs(a - b)] }
table cells { params: a, b, PRS  columns: x(formula)
  call -> layered_sp(a, b)
  look -> bonus[a] + 1
  both -> if(a > b, layered_sp(a, b), 0)
  plain -> 6 - PRS
}
mechanic two_dice { style: total  die: 2d6 }
mechanic three_dice { style: total  die: 3d6+2 }
"""


def build(tmp_path: Path, files: dict[str, str]) -> Path:
    folder = write_ruleset(tmp_path / "rules" / "demo", files)
    result = compile_paths([folder])
    assert result.ok, messages(result)
    out = tmp_path / "out"
    write_output(out, render_all(result.rulesets))
    return out


def run(out: Path, code: str) -> list[str]:
    ran = run_python("import demo\n" + code, out)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.splitlines()


def test_formula_cells_call_formulas_and_look_tables_up(tmp_path: Path) -> None:
    """A cell calling a formula built, then exited 3 with KeyError: 'call'; lookups always raised."""
    out = build(tmp_path, {"a.rules": FORMULA_CELLS})
    lines = run(
        out,
        """
t = demo.TABLES["cells"]
print(t.lookup("call").x.evaluate(a=3, b=12), t.lookup("look").x.evaluate(a=6))
print(t.lookup("both").x.evaluate(a=20, b=15), t.lookup("both").x.evaluate(a=1, b=15))
print(t.lookup("plain").x.evaluate(prs=4), t.lookup("plain").x.names)
""",
    )
    assert lines == ["14 3", "22 0", "2 ('PRS',)"]


def test_a_lookup_in_a_cell_leaves_the_document_alone(compile_rules: Callable[..., Compilation]) -> None:
    """It used to write a stray top-level "lookup" key into the table's document."""
    result = compile_rules({"a.rules": FORMULA_CELLS})
    assert result.ok, messages(result)
    doc = result.rulesets[0].documents()["table"]["cells"]
    assert sorted(doc) == ["columns", "id", "kind", "name", "params", "rows"]
    assert doc["rows"][1]["cells"][0]["expr"]["args"][0] == {"lookup": "bonus", "index": {"var": "a"}}


@pytest.mark.parametrize(
    ("cell", "reason"),
    [
        ("1d6 * 1d6", "a roll cannot be multiplied by a roll"),
        ("if(1d6, 1, 2)", "this is dice, where a number or a bool belongs"),
        ('"Target\'s Forte"', "quoted text has no value"),
        ("3^", "a caret number"),
    ],
)
def test_formula_cells_the_package_cannot_evaluate_are_diagnostics(
    compile_rules: Callable[..., Compilation], cell: str, reason: str
) -> None:
    """They built, and `.evaluate()` then always raised."""
    result = compile_rules({"a.rules": f"table t {{ columns: x(formula)\n  a -> {cell}\n}}\n"})
    assert [d.code for d in result.diagnostics] == ["E327"]
    assert reason in result.diagnostics[0].message
    assert result.diagnostics[0].pos is not None and result.diagnostics[0].pos.line == 2


def test_a_total_mechanic_rolls_every_die_and_adds_the_modifier(tmp_path: Path) -> None:
    """`die: 2d6` rolled one d6 (20,000 rolls fell evenly on 1-6); `3d6+2` likewise."""
    out = build(tmp_path, {"a.rules": FORMULA_CELLS})
    lines = run(
        out,
        """
import random
from collections import Counter
rng = random.Random(7)
two = Counter(demo.MECHANICS["two_dice"].roll(rng)[0] for _ in range(20000))
three = [demo.MECHANICS["three_dice"].roll(rng)[0] for _ in range(20000)]
print(min(two), max(two), two[7] > two[2] * 4, min(three), max(three))
print(demo.MECHANICS["three_dice"].total([1, 2, 3]), demo.MECHANICS["two_dice"].total([6, 6], base=1))
""",
    )
    assert lines == ["2 12 True 5 20", "8 13"]


def test_exploding_needs_a_single_die(compile_rules: Callable[..., Compilation]) -> None:
    result = compile_rules(
        {
            "a.rules": "mechanic m { style: total  die: 2d6  explode_on: 6 }\n"
            "mechanic p { style: pool  die: 2d10 }\n"
            "mechanic q { style: pool  die: d10  stack_on: 12 }\n"
        }
    )
    assert [(d.code, d.message) for d in result.diagnostics] == [
        ("E328", "explode_on needs a single die to roll again, not 2d6"),
        ("E328", "a pool mechanic rolls a number of one kind of die, not 2d10"),
        ("E328", "stack_on 12 is not a face of 1d10"),
    ]


TWO_KEYS = """
table damage "Damage" {
  keys: zone, level(int)
  columns: shock(int)
  I, 1 -> 1
  I, 2 -> 2
  II, 1 -> 3
  II, 2 -> 4
}
"""


def test_two_key_tables_are_checked_for_gaps_and_overlaps(compile_rules: Callable[..., Compilation]) -> None:
    """Deleting a cell of a two-key table used to still say ok."""
    assert compile_rules({"a.rules": TWO_KEYS}).ok
    gap = compile_rules({"a.rules": TWO_KEYS.replace("  II, 1 -> 3\n", "")})
    assert messages(gap) == ["no row for II, 1"]
    overlap = compile_rules({"a.rules": TWO_KEYS.replace("  II, 2 -> 4\n", "  II, 1-2 -> 4\n")})
    assert messages(overlap) == ["rows II, 1 and II, 1-2 overlap on II, 1"]
    twice = compile_rules({"a.rules": TWO_KEYS.replace("  II, 1 -> 3\n", "  II, 1 -> 3\n  II, 1 -> 5\n")})
    assert messages(twice) == ["two rows are keyed 'II, 1'"]


def test_overlap_and_coverage_checks_are_not_quadratic(compile_rules: Callable[..., Compilation]) -> None:
    rows = "\n".join(f"  {i} -> r" for i in range(1, 1001))
    result = compile_rules({"a.rules": f"table t {{\n  roll: 1d1000\n  columns: x\n{rows}\n  500 -> again\n}}\n"})
    assert messages(result) == ["two rows are keyed '500'"]


MUTUAL = """
stock human { }
setting village { stock: human }
lifepath "Born Villager" { setting: village  born: yes  time: 8 yrs  resources: 3 }
lifepath Smith { setting: village  time: 4 yrs  resources: 2  requires: Tanner }
lifepath Tanner { setting: village  time: 4 yrs  resources: 2  requires: Smith }
lifepath Miller { setting: village  time: 4 yrs  resources: 2  requires: "Born Villager" }
"""


def test_lifepaths_that_can_only_follow_each_other_are_reported(compile_rules: Callable[..., Compilation]) -> None:
    result = compile_rules({"a.rules": MUTUAL})
    assert [(d.code, d.message) for d in result.diagnostics] == [
        ("W342", "the requires of Smith can never be met on any path of its stock"),
        ("W342", "the requires of Tanner can never be met on any path of its stock"),
    ]


BURNING = """
stock human {{ stat_pools: pools }}
setting village {{ stock: human }}
table pools {{ columns: {columns}
  1-100 -> 5, 6
}}
lifepath "Born Villager" {{ setting: village  born: yes  time: 8 yrs  resources: 3 }}
lifepath "Farmer's Wife" {{ setting: village  time: 4 yrs  resources: 2  restrictions: not gender = male }}
"""


def test_unknown_gender_is_undecided_not_met(tmp_path: Path) -> None:
    out = build(tmp_path, {"a.rules": BURNING.format(columns="mental(int), physical(int)")})
    lines = run(
        out,
        """
sheet = demo.burn(["Born Villager", "Farmer's Wife"])
print(sheet.legal, sheet.undecided)
print(demo.requirement_met("farmer_s_wife", ["born_villager"]))
print(demo.requirement_met("farmer_s_wife", ["born_villager"], gender="female"))
print(demo.burn(["Born Villager", "Farmer's Wife"], gender="male").violations)
print(sheet.mental_pool, sheet.physical_pool)
""",
    )
    assert lines == [
        'True ("Farmer\'s Wife (lifepath 2) restricted to: not gender = male",)',
        "None",
        "True",
        '("Farmer\'s Wife (lifepath 2) restricted to: not gender = male",)',
        "5 6",
    ]


def test_what_burning_reads_is_checked_where_it_is_written(compile_rules: Callable[..., Compilation]) -> None:
    """A stat pools table without mental/physical made burn() crash with AttributeError."""
    result = compile_rules({"a.rules": BURNING.format(columns="m(int), p(int)")})
    assert [d.code for d in result.diagnostics] == ["E342"]
    assert result.diagnostics[0].pos is not None and result.diagnostics[0].pos.line == 2
    repeats = "table lifepath_repeats { columns: skills(multiplier)\n  1+ -> x1\n}\n"
    result = compile_rules({"a.rules": BURNING.format(columns="mental(int), physical(int)") + repeats})
    assert [d.code for d in result.diagnostics] == ["E343"]


def test_burning_without_a_repeats_table(tmp_path: Path) -> None:
    out = build(tmp_path, {"a.rules": BURNING.format(columns="mental(int), physical(int)")})
    lines = run(out, 'print(demo.burn(["Born Villager", "Farmer\'s Wife", "Farmer\'s Wife"], gender="f").age)')
    assert lines == ["16"]


def test_a_package_without_lifepaths_has_no_burning(tmp_path: Path) -> None:
    out = build(tmp_path, {"a.rules": FORMULA_CELLS})
    assert not (out / "demo" / "burning.py").exists()
    assert not (out / "demo" / "_runtime" / "lifepaths.py").exists()
    assert "burn" not in (out / "demo" / "__main__.py").read_text()
    lines = run(out, 'print(hasattr(demo, "burn"), sorted(demo.KINDS))')
    assert lines == ["False ['formula', 'mechanic', 'table']"]


def test_formula_cycles_are_found_in_linear_time(compile_rules: Callable[..., Compilation]) -> None:
    """20 chained formulas took 5.6 s, 22 took 15.5 s: the search was exponential."""
    chain = "".join(f"formula f{i} {{ params: x  formula: f{i + 1}(x) + f{i + 1}(x) }}\n" for i in range(2000))
    result = compile_rules({"a.rules": chain + "formula f2000 { params: x  formula: f0(x) }\n"})
    assert [d.code for d in result.diagnostics] == ["E322"]
    assert result.diagnostics[0].message.startswith("formulas go round in a circle: f0 -> f1 -> f2 -> f3 -> ")
    assert result.diagnostics[0].message.endswith("-> f1999 -> f2000 -> f0")


def test_cycles_name_each_circle_once() -> None:
    uses = {"a": ["b"], "b": ["a", "c"], "c": ["c"], "d": ["a"], "e": [None]}
    assert cycles(uses) == [["a", "b"], ["c"]]


def test_export_is_the_serialised_ir(tmp_path: Path, cli: Callable[..., tuple[int, str, str]]) -> None:
    folder = write_ruleset(tmp_path / "rules" / "demo", {"a.rules": FORMULA_CELLS})
    code, out, _ = cli("export", str(folder))
    assert code == 0
    mechanic = json.loads(out)["rulesets"]["demo"]["entities"]["mechanic"]["three_dice"]
    assert mechanic["die"] == {"text": "3d6 + 2", "terms": [{"count": 3, "sides": 6}], "modifier": 2}


def test_formulas_read_numbers_from_entities_of_declared_kinds(tmp_path: Path) -> None:
    out = build(
        tmp_path,
        {
            "a.rules": """
            kind weapon "Weapons" { reach: int in 1..5 = 1  weight: number?  damage: dice }
            weapon longsword "Longsword" { reach: 2  weight: 1.5  damage: 1d8 }
            weapon dagger "Dagger" { damage: 1d4 }
            formula reach_bonus { params: x  formula: x + weapon[longsword].reach * 2 + weapon[dagger].reach }
            formula heavy { params: x  formula: x * weapon[longsword].weight }
            """
        },
    )
    assert run(out, "print(demo.reach_bonus(x=1), demo.heavy(x=2))") == ["6 3"]


DEFAULT_REFS = """
skill sk7 "Sk7" { root: Will  type: academic }
kind dtype "D" { }
dtype slashing "Slashing" { }
kind thing "T" { a: ref skill = sk7  b: list of ref skill = sk7
  c: choices of ref skill = any (sk7)
  d: list of record { t: ref dtype = slashing  n: int = 1 }? }
thing x "X" { d: { n: 2 } }
"""


def test_references_in_a_kinds_defaults_are_resolved(tmp_path: Path) -> None:
    """A default naming an entity (`a: ref skill = sk7`) checked clean, then `build` exited 3 (unresolved
    reference): defaults are resolved like the entities' own values (found by the generated rulesets)."""
    out = build(tmp_path, {"a.rules": DEFAULT_REFS})
    lines = run(out, "x = demo.THINGS['x']\nprint(x.a, x.b, x.c.options, x.d[0].t, x.d[0].n)")
    assert lines == ["sk7 ('sk7',) ('sk7',) slashing 2"]


def test_an_unknown_reference_in_a_default_is_reported_there(compile_rules: Callable[..., Compilation]) -> None:
    result = compile_rules({"a.rules": 'kind thing "T" { a: ref skill = nosuch }\n'})
    assert [(d.code, d.pos.line if d.pos else 0) for d in result.diagnostics] == [("E303", 1)]
