"""Formulas in steps, with typed parameters (issue 19, "STEPS"): `let` steps, `int`/`number`/`bool`/`ref KIND`
parameters checked at every call, `where.field` of the entity a parameter names, in the package and on the
reference."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from rulesdsl.compile.pipeline import Compilation, compile_paths
from rulesdsl.targets.build import render_all

from .conftest import quality_command, run_python, write_ruleset

Compile = Callable[..., Compilation]

LOCATIONS = """
kind location "Hit locations" { multiplier: number  to_hit: int = 0 }
location head "Head" { multiplier: 3  to_hit: -6 }
location torso "Torso" { multiplier: 1 }
location leg "L. Leg" { multiplier: 0.5  to_hit: -2 }
"""

DAMAGE = """
formula damage_taken "Damage taken" {
  params: raw, where(ref location), sp, resistant(bool)
  let through = max(0, raw - sp)
  let taken = if(resistant, floor(through / 2), through)
  formula: floor(taken * where.multiplier)
}
"""

CALLERS = """
formula head_shot "Head shot" { params: raw  formula: damage_taken(raw, head, 4, no) }
formula leg_shot "Leg shot" { params: raw  formula: damage_taken(raw, "L. Leg", 0, raw > 10) }
formula passed_on "Passed on" {
  params: raw, at(ref location), soft(bool), scale(number)
  let aimed = at.to_hit
  formula: damage_taken(raw, at, aimed, soft) * scale
}
"""


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("steps")
    write_ruleset(folder / "rules" / "demo", {"a.rules": LOCATIONS + DAMAGE + CALLERS})
    result = compile_paths([folder / "rules"])
    assert result.ok, [d.message for d in result.diagnostics]
    out = folder / "out"
    for name, text in render_all(result.rulesets).items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text, encoding="utf-8")
    return out


def test_the_issue_s_example_computes(package: Path) -> None:
    code = """
import demo
from fractions import Fraction
print(demo.damage_taken(raw=14, where="head", sp=4, resistant=False))
print(demo.damage_taken(raw=14, where="head", sp=4, resistant=True))
print(demo.damage_taken(raw=3, where="torso", sp=4, resistant=False))
print(demo.head_shot(raw=14), demo.leg_shot(raw=14), demo.leg_shot(raw=9))
print(demo.passed_on(raw=14, at="leg", soft=False, scale=Fraction(3, 2)))
print(demo.FORMULAS["damage_taken"](raw=10, where="leg", sp=0, resistant=False))
try:
    demo.damage_taken(raw=14, where="hed", sp=4, resistant=False)
except ValueError as problem:
    print(type(problem).__name__, problem)
"""
    result = run_python(code, package)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "30",  # 14 - 4 = 10 through, times the head's 3
        "15",  # halved first
        "0",
        "30 3 4",  # (14 // 2) * 1/2 = 3 (resistant: raw > 10); 9 * 1/2 = 4
        "12",  # the leg's to_hit (-2) as armour: 16 through, times 1/2 is 8, times 3/2 is 12
        "5",
        "UnknownId where='hed' is no location: give the id of one (head, leg, torso)",
    ]


def test_the_function_is_typed_and_checks_its_ids(package: Path) -> None:
    text = (package / "demo" / "_formulas.py").read_text(encoding="utf-8")
    assert "def damage_taken(*, raw: int, where: str, sp: int, resistant: bool) -> int:" in text
    assert '_rt.known_id("location", "where", where, _LOCATION_IDS)' in text
    assert "    through = max(0, raw - sp)\n    taken = " in text
    assert "def passed_on(*, raw: int, at: str, soft: bool, scale: int | Fraction) -> int | Fraction:" in text
    assert 'damage_taken(raw=raw, where="head", sp=4, resistant=False)' in text


@pytest.mark.parametrize("tool", ["ruff", "mypy"])
def test_the_package_is_lint_and_type_clean(package: Path, tool: str) -> None:
    result = subprocess.run(quality_command(tool, "demo"), cwd=package, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_reference_shows_the_steps_and_links_the_entities(package: Path) -> None:
    page = (package / "site" / "demo" / "formula.html").read_text(encoding="utf-8")
    assert '<span class="step">let <var>through</var> = max(0, <var>raw</var> \u2212 <var>sp</var>)</span>' in page
    assert "<var>raw</var>, <var>where</var> (a location), <var>sp</var>, <var>resistant</var> (yes or no)" in page
    assert '<a href="location.html#leg">L. Leg</a>' in page  # an entity by name, linked
    assert '<a href="location.html#head">Head</a>' in page


def test_steps_compute_in_order_and_may_be_fractions(compile_rules: Compile) -> None:
    result = compile_rules(
        {"a.rules": "formula f { params: a  let half = a / 2  let more = half + 1  formula: more * 2 }\n"}
    )
    assert result.ok, [d.message for d in result.diagnostics]
    files = render_all(result.rulesets)
    assert "def f(*, a: int) -> Fraction:" in files["demo/_formulas.py"]


def test_a_ref_parameter_cannot_be_computed_with(compile_rules: Compile) -> None:
    result = compile_rules({"a.rules": LOCATIONS + "formula f { params: at(ref location)  formula: at + 1 }\n"})
    assert [(d.code, d.message) for d in result.diagnostics] == [
        ("E327", "the generated package cannot evaluate this: this is a location, not a value to compute with")
    ]


def test_a_formula_returning_an_entity_is_refused(compile_rules: Compile) -> None:
    result = compile_rules({"a.rules": LOCATIONS + "formula f { params: at(ref location)  formula: at }\n"})
    assert [d.code for d in result.diagnostics] == ["E327"]
    assert "this formula makes a location" in result.diagnostics[0].message


def test_calls_from_tables_and_kinds_are_checked_too(compile_rules: Compile) -> None:
    source = (
        LOCATIONS
        + DAMAGE
        + 'table t "T" { params: n  columns: dmg(formula)\n  1 -> damage_taken(n, head, 1, 2)\n}\n'
        + 'kind weapon "W" { hit: formula of n }\nweapon sword "Sword" { hit: damage_taken(n > 1, torso, 0, no) }\n'
    )
    result = compile_rules({"a.rules": source})
    assert sorted((d.code, d.pos.line if d.pos else 0) for d in result.diagnostics) == [("E362", 14), ("E362", 17)]


ATTRIBUTES = """
attribute weapon_skill "Weapon Skill" { abbr: WS  group: combat }
attribute agility "Agility" { abbr: Ag  group: physical }
attribute initiative "Initiative" { abbr: I  group: derived  formula: floor((WS + Ag) / 2) }
kind career "Careers" { advances: list of ref attribute }
career soldier "Soldier" { advances: WS, Ag, ag, "Weapon Skill", initiative }
"""


def test_abbreviations_are_references_in_any_case(compile_rules: Compile) -> None:
    result = compile_rules({"a.rules": ATTRIBUTES})
    assert result.ok, [d.message for d in result.diagnostics]
    [ruleset] = result.rulesets
    advances = ruleset.entities["career"]["soldier"].fields["advances"]
    assert isinstance(advances, tuple)
    assert [getattr(ref, "id", None) for ref in advances] == [
        "weapon_skill",
        "agility",
        "agility",
        "weapon_skill",
        "initiative",
    ]
    files = render_all(result.rulesets)
    assert "def initiative(*, WS: int, Ag: int) -> int:" in files["demo/_attributes.py"]


def test_an_abbreviation_is_letters_and_digits(compile_rules: Compile) -> None:
    result = compile_rules({"a.rules": 'attribute agility "Agility" { abbr: A_g  group: physical }\n'})
    assert [(d.code, d.hint) for d in result.diagnostics] == [
        ("E210", "abbreviations are letters and digits, in any case (AGL, Ag)")
    ]


TALENTS = """
kind talent "Talents" { }
talent ambidextrous "Ambidextrous" { }
talent doomed "Doomed" { }
talent luck "Luck" { }
talent savvy "Savvy" { }
kind species "Species" { talents: choices of ref talent  later: choices of ref talent? }
species human "Human" { talents: Ambidextrous, 1 of (Doomed, Luck) }
species elf "Elf" { talents: Savvy, 2 of (Doomed, Luck, Savvy)  later: any (Doomed, Luck) }
"""


def test_a_choice_is_data_the_package_and_the_reference_can_use(tmp_path: Path) -> None:
    write_ruleset(tmp_path / "rules" / "demo", {"a.rules": TALENTS})
    result = compile_paths([tmp_path / "rules"])
    assert result.ok, [d.message for d in result.diagnostics]
    files = render_all(result.rulesets)
    for name, text in files.items():
        (tmp_path / "out" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "out" / name).write_text(text, encoding="utf-8")
    code = """
import random
import demo
human = demo.SPECIESES["human"].talents
print(human.fixed, human.picks[0].count, human.picks[0].options)
print(human.choose(["luck"]), human.options)
chosen = demo.SPECIESES["elf"].talents.pick(random.Random(3))
print(chosen[0], len(chosen), len(set(chosen[1:])), set(chosen[1:]) <= {"doomed", "luck", "savvy"})
print(demo.SPECIESES["elf"].later)
for wrong in (["savvy"], ["doomed", "luck"]):
    try:
        human.choose(wrong)
    except ValueError as problem:
        print(problem)
"""
    run = run_python(code, tmp_path / "out")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "('ambidextrous',) 1 ('doomed', 'luck')",
        "('ambidextrous', 'luck') ('ambidextrous', 'doomed', 'luck')",
        "savvy 3 2 True",
        "Offer(fixed=(), picks=(Pick(count=1, options=('doomed', 'luck')),))",
        "choose 1 of doomed, luck; not savvy",
        "choose 1 of doomed, luck; not doomed, luck",
    ]
    page = files["site/demo/species.html"]
    assert '<span class="choice">one of: <a href="talent.html#doomed">Doomed</a> or' in page
    assert '<span class="choice">2 of: ' in page
    checked = subprocess.run(
        quality_command("mypy", "demo"), cwd=tmp_path / "out", capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout
