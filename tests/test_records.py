"""Records and maps (issue 19): `map of T [by K]` and `record { ... }` fields, through every stage."""

from __future__ import annotations

import html
import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from rulesdsl.compile.jsonform import document, schema_of, value_json
from rulesdsl.compile.pipeline import Compilation
from rulesdsl.runtime.core import FrozenMap
from rulesdsl.syntax import fast
from rulesdsl.syntax.parse import Parser
from rulesdsl.targets.build import render_all
from rulesdsl.targets.python.package import render
from rulesdsl.tools.fmt import format_text
from rulesdsl.tools.importer import convert

from .conftest import messages, quality_command, run_python

BEASTS = """\
kind damage_type "Damage type" { }
damage_type slashing "Slashing" { }
damage_type piercing "Piercing" { }
kind creature "Creature" {
  speeds: map of int
  resist: map of int by one of fire, cold?
  skills: map of int by ref damage_type?
  strikes: list of record { name: text  to_hit: int  damage: dice  type: ref damage_type  reach: int in 1..5 = 1 }
  lair: record { name: text  notes: text? }?
}
creature goblin "Goblin Warrior" {
  speeds: land 25, climb 10
  resist: { fire: -2 }
  skills: Slashing 3
  strikes: { name: "Dogslicer"  to_hit: 8  damage: 1d6  type: slashing },
    { name: "Shortbow"  to_hit: 8  damage: 1d6  type: piercing  reach: 3 }
  lair: { name: "Warren" }
}
"""


def test_both_parsers_build_the_same_tree_and_fmt_prints_it_back() -> None:
    tree, problems = Parser().parse_with_lark("beasts.rules", BEASTS)
    assert not problems
    assert fast.parse("beasts.rules", BEASTS) == tree
    formatted = format_text(BEASTS)
    assert format_text(formatted) == formatted
    for line in BEASTS.splitlines()[3:]:  # records, maps and their types print back as written
        assert line in formatted.splitlines(), line


def test_lowered_schema_and_export(compile_rules: Callable[..., Compilation]) -> None:
    compiled = compile_rules({"beasts.rules": BEASTS})
    assert compiled.ok, messages(compiled)
    [ruleset] = compiled.rulesets
    goblin = ruleset.entities["creature"]["goblin"]
    doc = document(goblin)
    assert doc["speeds"] == {"land": 25, "climb": 10}
    assert doc["resist"] == {"fire": -2}
    assert doc["skills"] == {"slashing": 3}  # a key by reference is the id it names
    assert doc["strikes"][1]["reach"] == 3 and "reach" not in doc["strikes"][0]
    strike = schema_of(ruleset.kinds["creature"])["properties"]["strikes"]["items"]
    assert strike["required"] == ["name", "to_hit", "damage", "type"]
    assert strike["additionalProperties"] is False


def test_the_package_holds_records_as_dataclasses_and_maps_as_frozen_maps(
    compile_rules: Callable[..., Compilation], tmp_path: Path
) -> None:
    compiled = compile_rules({"beasts.rules": BEASTS})
    [ruleset] = compiled.rulesets
    out = tmp_path / "out"
    for name, text in render(ruleset).items():
        target = out / "demo" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    code = """
from demo.creatures import CREATURES, CreatureStrike, CreatureLair
goblin = CREATURES["goblin"]
assert goblin.speeds["land"] == 25 and dict(goblin.speeds) == {"land": 25, "climb": 10}
assert goblin.strikes[0] == CreatureStrike(name="Dogslicer", to_hit=8, damage=goblin.strikes[0].damage, type="slashing")
assert goblin.strikes[0].reach == 1 and goblin.strikes[1].reach == 3
assert goblin.lair == CreatureLair(name="Warren")
hash(goblin)
print(goblin.strikes[1].damage.text)
"""
    result = run_python(code, out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1d6"
    checked = subprocess.run(quality_command("mypy", "demo"), cwd=out, capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout


def _write_package(compiled: Compilation, out: Path) -> None:
    [ruleset] = compiled.rulesets
    for name, text in render(ruleset).items():
        target = out / "demo" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


# Record fields named as Python keywords, builtins, the names a class body reads and the names of record
# classes; a kind field and another kind named like the record classes would be.
PART = (
    "record { class: text  str: int = 1  type: int?  import: one of a, b  list: list of int?  Fraction: int?  "
    "_rt: int?  GizmoPartHit: int?  hit: record { from: dice  self: bool }? }"
)
AWKWARD_RECORDS = f"""
kind gizmo "Gizmo" {{
  GizmoPart: int = 2
  parts: list of {PART}
  spare: {PART}?
  by_name: map of record {{ print: int }} by one of left, right?
}}
kind gizmo_part "Gizmo part" {{ }}
gizmo_part cog "Cog" {{ }}
gizmo g {{
  parts: {{ class: "x"  type: 3  list: 1, 2  import: a  Fraction: 4  _rt: 5  hit: {{ from: 1d6  self: yes }} }}
  by_name: {{ left: {{ print: 7 }} }}
}}
"""


def test_record_fields_named_like_python_names_build_and_type_check(
    compile_rules: Callable[..., Compilation], tmp_path: Path
) -> None:
    compiled = compile_rules({"gizmos.rules": AWKWARD_RECORDS})
    assert compiled.ok, messages(compiled)
    out = tmp_path / "out"
    _write_package(compiled, out)
    code = """
import demo
from demo.gizmos import GIZMOS
part = GIZMOS["g"].parts[0]
got = (part.class_, part.str_, part.type, part.import_, part.list, part.Fraction_, part._rt_)
assert got == ("x", 1, 3, "a", (1, 2), 4, 5), got
assert part.hit is not None and part.hit.self and part.hit.from_.text == "1d6"
assert GIZMOS["g"].by_name["left"].print == 7 and GIZMOS["g"].GizmoPart == 2
# every record class is exported beside the kinds, under a name of its own
assert isinstance(part, demo.GizmoPart2) and isinstance(part.hit, demo.GizmoPartHit2)
assert demo.GizmoPart is demo.gizmo_parts.GizmoPart and demo.GizmoPart2 is not demo.GizmoPart
assert {"GizmoPart", "GizmoPart2", "GizmoPartHit2", "GizmoByName"} <= set(demo.__all__)
assert len(demo.__all__) == len(set(demo.__all__))
print(sorted(n for n in demo.__all__ if n.startswith("Gizmo")))
"""
    result = run_python(code, out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(["Gizmo", "GizmoByName", "GizmoPart", "GizmoPart2", "GizmoPartHit2"])
    checked = subprocess.run(quality_command("mypy", "demo"), cwd=out, capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout


def test_record_fields_that_would_be_one_python_name_are_e305(compile_rules: Callable[..., Compilation]) -> None:
    compiled = compile_rules(
        {
            "gizmos.rules": "kind gizmo {\n  parts: list of record { class: text  class_: int  __x: int?  "
            "in: map of record { str: int  str_: int? }? }\n}\n"
        }
    )
    found = [(d.code, d.pos.column if d.pos else 0, d.message) for d in compiled.diagnostics]
    assert found == [
        ("E305", 40, "the fields 'class' and 'class_' of the record in 'parts' would both be 'class_' in Python"),
        (
            "E305",
            53,
            "the field '__x' of the record in 'parts' cannot be an attribute in Python: a name that begins with "
            "'__' is private to its class",
        ),
        ("E305", 94, "the fields 'str' and 'str_' of the record in 'parts.in' would both be 'str_' in Python"),
    ]


def test_frozen_map_is_an_immutable_hashable_mapping() -> None:
    speeds = FrozenMap({"land": 25})
    assert speeds == {"land": 25} and hash(speeds) == hash(FrozenMap({"land": 25}))
    with pytest.raises(TypeError):
        speeds["land"] = 30  # type: ignore[index]


def test_importer_writes_records_and_maps(compile_rules: Callable[..., Compilation]) -> None:
    compiled = compile_rules({"beasts.rules": BEASTS})
    [ruleset] = compiled.rulesets
    exported = json.loads(json.dumps(document(ruleset.entities["creature"]["goblin"])))
    text, problems = convert([exported], ruleset.kinds["creature"])
    assert not problems, problems
    assert "speeds: { land: 25  climb: 10 }" in text
    assert '{ name: "Dogslicer"  to_hit: 8  damage: 1d6  type: slashing }' in text


SENSES = """\
kind creature "Creature" {
  speeds: map of int
  guard: map of int by one of yes, no, partial?
  senses: list of record { name: word  keen: one of yes, no, partial  range: int? }?
}
"""


def test_importer_reads_yaml_booleans_where_records_and_maps_want_words(
    compile_rules: Callable[..., Compilation],
) -> None:
    """YAML reads an unquoted `yes` or `off` as a boolean: where an option is spelt like it, that option is
    meant (it round-trips); elsewhere the problem names the record, the field and the place inside it."""
    yaml = pytest.importorskip("yaml")
    compiled = compile_rules({"creatures.rules": SENSES})
    assert compiled.ok, messages(compiled)
    [ruleset] = compiled.rulesets
    records = yaml.safe_load(
        """
- name: Owl
  speeds: {fly: 60, land: 10}
  guard: {yes: 2, no: 0}
  senses: [{name: sight, keen: yes}, {name: hearing, keen: partial, range: 30}]
- name: Bat
  speeds: {fly: 40}
  senses: [{name: sight, keen: no}, {name: on, keen: yes}]
- name: Mole
  speeds: {land: 10, yes: 5}
- name: Worm
  speeds: {land: 10, 3: 5}
"""
    )
    text, problems = convert(records, ruleset.kinds["creature"])
    assert "guard: { yes: 2  no: 0 }" in text
    assert (
        "senses: { name: sight  keen: yes }, { name: hearing  keen: partial  range: 30 }" in text
    )  # as the rules write it
    assert [p.text() for p in problems] == [
        "record 1: field 'senses[1].name': True is not a name (YAML reads an unquoted yes, no, on, off, true or "
        "false as a boolean: quote it, 'yes')",
        "record 2: field 'speeds[True]': True is not a key the rules can write (a name) (YAML reads an unquoted yes, "
        "no, on, off, true or false as a boolean: quote it, 'yes')",
        "record 3: field 'speeds[3]': 3 is not a key the rules can write (a name)",
    ]
    # what was written checks clean and says what the YAML meant
    again = compile_rules({"creatures.rules": SENSES + text})
    assert again.ok, messages(again)
    [ruleset] = again.rulesets
    owl = document(ruleset.entities["creature"]["owl"])
    assert owl["guard"] == {"yes": 2, "no": 0} and owl["senses"][0] == {"name": "sight", "keen": "yes"}


# ---------------------------------------------------------------- defaults of lists, records and maps

DEFAULTS = """\
kind harm "Harm" { }
harm blunt "Blunt" { }
harm piercing "Piercing" { }

kind brawler "Brawler" {
  tags: list of word = unarmed, close "what it is known for"
  fist: record { name: text  type: ref harm = Blunt  reach: int = 1  moves: list of word = jab, cut } = { name: "Fist" }
  strikes: list in 1..3 of record { name: text  to_hit: int = 0 } = { name: "Jab" }, { name: "Hook"  to_hit: 2 }
  speeds: map of int = land 30, swim 10
  homes: map of text by ref harm = { piercing: "Harbour" }
  kit: record { bag: map of int by one of rope, lamp = rope 1 } = { }
}

brawler bruno "Bruno" { }

brawler nell "Nell" {
  tags: unarmed, close
  fist: { name: "Fist" }
  strikes: { name: "Jab" }, { name: "Hook"  to_hit: 2 }
  speeds: land 30, swim 10
  homes: { piercing: "Harbour" }
  kit: { }
}
"""
DEFAULTED = ("tags", "fist", "strikes", "speeds", "homes", "kit")


def test_defaults_parse_alike_and_print_back_as_written() -> None:
    tree, problems = Parser().parse_with_lark("brawlers.rules", DEFAULTS)
    assert not problems
    assert fast.parse("brawlers.rules", DEFAULTS) == tree
    assert format_text(DEFAULTS) == DEFAULTS


def test_a_default_is_the_value_written_in_an_entity(compile_rules: Callable[..., Compilation]) -> None:
    """Bruno leaves every field to its default, Nell writes the same values: the same JSON, which is the
    schema's `default` too (references read by name resolved to ids, as an entity's are)."""
    compiled = compile_rules({"brawlers.rules": DEFAULTS})
    assert compiled.ok, messages(compiled)
    [ruleset] = compiled.rulesets
    kind = ruleset.kinds["brawler"]
    nell = document(ruleset.entities["brawler"]["nell"])
    properties = schema_of(kind)["properties"]
    for name in DEFAULTED:
        default = kind.fields[name].default
        assert default is not None
        assert value_json(default) == nell[name], name
        assert properties[name]["default"] == nell[name], name
    assert nell["fist"] == {"name": "Fist"}
    assert set(document(ruleset.entities["brawler"]["bruno"])) == {"kind", "id", "name"}


def test_the_package_s_defaults_are_frozen_values(compile_rules: Callable[..., Compilation], tmp_path: Path) -> None:
    compiled = compile_rules({"brawlers.rules": DEFAULTS})
    out = tmp_path / "out"
    _write_package(compiled, out)
    code = """
import dataclasses
from demo.brawlers import BRAWLERS, Brawler, BrawlerFist
from demo._runtime.core import FrozenMap
bruno, nell = BRAWLERS["bruno"], BRAWLERS["nell"]
assert dataclasses.replace(bruno, id="nell", name="Nell") == nell
assert bruno.fist == BrawlerFist(name="Fist", type="blunt") and bruno.fist.reach == 1
assert bruno.fist.moves == ("jab", "cut") and bruno.kit.bag == {"rope": 1}
assert isinstance(bruno.speeds, FrozenMap) and bruno.speeds["swim"] == 10 and bruno.homes == {"piercing": "Harbour"}
assert bruno.tags == ("unarmed", "close") and bruno.strikes[1].to_hit == 2
hash(bruno)
defaults = {f.name: f.default for f in dataclasses.fields(Brawler) if f.name in ("tags", "strikes", "speeds", "fist")}
print(sorted(type(v).__name__ for v in defaults.values()))
"""
    result = run_python(code, out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(["BrawlerFist", "FrozenMap", "tuple", "tuple"])
    checked = subprocess.run(quality_command("mypy", "demo"), cwd=out, capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout


def test_the_kind_page_shows_the_defaults(compile_rules: Callable[..., Compilation]) -> None:
    compiled = compile_rules({"brawlers.rules": DEFAULTS})
    page = html.unescape(render_all(compiled.rulesets)["site/demo/kinds.html"])
    assert '["unarmed", "close"]' in page
    assert '{"name": "Fist"}' in page and "type: ref harm = Blunt" in page
    assert '{"land": 30, "swim": 10}' in page
    assert "record { bag: map of int by one of rope, lamp = rope 1 }" in page


def test_an_export_with_defaults_imports_back(compile_rules: Callable[..., Compilation]) -> None:
    compiled = compile_rules({"brawlers.rules": DEFAULTS})
    [ruleset] = compiled.rulesets
    exported = json.loads(json.dumps(ruleset.documents()["brawler"]))
    text, problems = convert(list(exported.values()), ruleset.kinds["brawler"])
    assert not problems, problems
    assert 'brawler "Bruno" { }' in text  # what the kind gives, the export leaves out
    kinds = DEFAULTS[: DEFAULTS.index("brawler bruno")]
    again = compile_rules({"brawlers.rules": kinds + text})
    assert again.ok, messages(again)
    assert again.rulesets[0].documents()["brawler"] == exported


DEFAULT_FORMULAS = """\
mechanic task "Task" { style: check  die: 2d6 }
attribute strength "Strength" { abbr: STR  group: physical }
kind location "Hit locations" { multiplier: number }
location head "Head" { multiplier: 3 }
formula hit "Hit" { params: raw, at(ref location)  formula: floor(raw * at.multiplier) }
kind brawler "Brawler" {
  bonus: formula = 1d6 + 1
  aimed: formula of slot = slot * 2 + hit(3, head)
  test: record { name: text  check: check?  damage: formula = 1d4 + STR } = { name: "Grip"  check: check STR 5+ }
  halves: map of formula = { a: STR / 2 }
}
brawler bruno "Bruno" { }
"""


def test_formulas_and_checks_in_defaults_build_as_an_entity_s(
    compile_rules: Callable[..., Compilation], tmp_path: Path
) -> None:
    """A call naming an entity, dice, a check rolled with the ruleset's mechanic: written and typed in the
    package as where an entity gives them."""
    compiled = compile_rules({"brawlers.rules": DEFAULT_FORMULAS})
    assert compiled.ok, messages(compiled)
    out = tmp_path / "out"
    _write_package(compiled, out)
    code = """
import random
from demo.brawlers import BRAWLERS
bruno = BRAWLERS["bruno"]
assert bruno.aimed.evaluate(slot=2) == 13 and bruno.halves["a"].evaluate(STR=3) == 1.5
assert bruno.test.check is not None and bruno.test.check.mechanic.id == "task"
print(bruno.bonus.evaluate().text, bruno.test.damage.text)
"""
    result = run_python(code, out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1d6", "+", "1", "1d4", "+", "STR"]
    checked = subprocess.run(quality_command("mypy", "demo"), cwd=out, capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout
