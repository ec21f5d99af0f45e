"""`rulesdsl import` and `export --format yaml`: data in and out of the language."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from .conftest import ROOT, WRITE_FAULTS, leftovers, refuse_writes, write_ruleset

Cli = Callable[..., tuple[int, str, str]]


def kind_declarations(folder: Path) -> str:
    """The ruleset's own kind declarations, as written (import writes entities; the export's kinds are data)."""
    found = []
    for path in sorted(folder.rglob("*.rules")):
        found += re.findall(r"^(?:override )?kind .*?^\}\n", path.read_text(encoding="utf-8"), re.M | re.S)
    return "\n".join(found)


def test_witcher_round_trips_through_yaml(cli: Cli, tmp_path: Path) -> None:
    """export -> YAML -> import (every kind) -> export gives the same documents."""
    witcher = ROOT / "rules" / "witcher"
    code, exported, _ = cli("export", "--format", "yaml", str(witcher))
    assert code == 0
    data = yaml.safe_load(exported)
    (tmp_path / "witcher.yaml").write_text(exported, encoding="utf-8")
    folder = tmp_path / "new" / "witcher"
    folder.mkdir(parents=True)
    (folder / "ruleset.rules").write_text((witcher / "ruleset.rules").read_text())
    (folder / "kinds.rules").write_text(kind_declarations(witcher))
    kinds = sorted(data["rulesets"]["witcher"]["entities"])
    assert {"formula", "mechanic", "table"} <= set(kinds)
    for kind in kinds:
        out = folder / f"{kind}.rules"
        code, _, err = cli(
            "import", str(tmp_path / "witcher.yaml"), "--kind", kind, "--out", str(out), "--ruleset", str(witcher)
        )
        assert code == 0, err
    assert cli("fmt", "--check", str(folder))[0] == 0  # what import writes is formatted
    code, before, _ = cli("export", str(witcher))
    code, after, err = cli("export", str(folder))
    assert code == 0, err
    assert json.loads(after) == json.loads(before) and after == before


SPELLS = """
- name: Fire Dart
  obstacle: 3
  actions: 2
  origin: presence
  duration: instantaneous
  area: single target
  element: [fire]
  impetus: destroy
  resources: 10
- name: Bad Spell
  obstacle: 2
  colour: red
- just a string
- name: Slow Ward
  obstacle: "4^"
  actions: x3
  origin: personal
  duration: sustained
  area: caster
  element: [anima, heaven]
  impetus: [enhance, control]
  resources: twelve
"""


def test_a_list_of_records_with_every_bad_record_reported_and_nothing_written(cli: Cli, tmp_path: Path) -> None:
    source = tmp_path / "spells.yaml"
    source.write_text(SPELLS, encoding="utf-8")
    out = tmp_path / "spells.rules"
    code, _, err = cli("import", str(source), "--kind", "spell", "--out", str(out))
    assert code == 1
    assert "record 1: spell has no field 'colour'" in err
    assert "record 2: a record is a mapping of fields" in err
    assert "record 3:" in err and "resources" in err
    assert "record 0" not in err
    assert not out.exists() and list(tmp_path.iterdir()) == [source]  # no partial file, no leftover


def test_good_records_become_formatted_blocks_that_check(cli: Cli, tmp_path: Path) -> None:
    records = [
        {"name": "Fire Dart", "obstacle": 3, "actions": 2, "origin": "presence", "duration": "instantaneous",
         "area": "single target", "element": ["fire"], "impetus": "destroy", "resources": 10},
        {"id": "ward", "name": "Slow Ward", "obstacle": "4^", "actions": "x3", "origin": "personal",
         "duration": "sustained", "area": "caster", "element": ["anima", "heaven"], "impetus": ["enhance"],
         "resources": 12, "source": "p. 1"},
    ]  # fmt: skip
    source = tmp_path / "spells.json"
    source.write_text(json.dumps(records), encoding="utf-8")
    code, text, err = cli("import", str(source), "--kind", "spell")
    assert code == 0, err
    assert text.startswith('spell "Fire Dart" {\n  obstacle: 3\n  actions: 2\n')
    assert 'spell ward "Slow Ward" {' in text and "  element: anima, heaven\n" in text
    folder = write_ruleset(tmp_path / "r", {"spells.rules": text})
    code, _, err = cli("check", str(folder))
    assert code == 0, err


def test_a_formulas_steps_are_imported_as_let_lines(cli: Cli, tmp_path: Path) -> None:
    """A formula's `steps` (as export writes them) come back as `let` lines, before the formula that uses them."""
    records = [
        {"name": "Through", "params": [{"name": "raw", "type": "int"}, {"name": "half", "type": "bool"}],
         "formula": {"text": "max(0, taken - 2)",
                     "steps": [{"name": "taken", "formula": {"text": "if(half, floor(raw / 2), raw)"}}]}},
    ]  # fmt: skip
    source = tmp_path / "formulas.json"
    source.write_text(json.dumps(records), encoding="utf-8")
    code, text, err = cli("import", str(source), "--kind", "formula")
    assert code == 0, err
    assert "  let taken = if(half, floor(raw / 2), raw)\n  formula: max(0, taken - 2)\n" in text
    folder = write_ruleset(tmp_path / "r", {"formulas.rules": text})
    code, _, err = cli("check", str(folder))
    assert code == 0, err
    bad = [{"name": "Bad", "formula": {"text": "1", "steps": [{"formula": {"text": "2"}}]}}]
    source.write_text(json.dumps(bad), encoding="utf-8")
    code, _, err = cli("import", str(source), "--kind", "formula")
    assert code != 0 and "is not a step" in err


def test_yaml_is_loaded_safely(cli: Cli, tmp_path: Path) -> None:
    source = tmp_path / "evil.yaml"
    marker = tmp_path / "ran"
    source.write_text(f"- !!python/object/apply:os.system ['touch {marker}']\n", encoding="utf-8")
    code, _, err = cli("import", str(source), "--kind", "skill")
    assert (code == 1 and "not YAML" in err) or "could not determine a constructor" in err
    assert not marker.exists()


def test_unknown_kind_is_a_usage_error(cli: Cli, tmp_path: Path) -> None:
    source = tmp_path / "x.yaml"
    source.write_text("- name: A\n", encoding="utf-8")
    code, _, err = cli("import", str(source), "--kind", "spel")
    assert code == 2 and "did you mean 'spell'" in err
    code, out, _ = cli("import", str(source), "--kind", "spel", "--format", "json")
    assert code == 2 and json.loads(out)["diagnostics"][0]["code"] == "usage"


@pytest.mark.parametrize("fault", WRITE_FAULTS)
def test_a_refused_write_names_the_file_and_writes_nothing(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    """Issue 17: `import --out` on a read-only or full disk was an internal error (exit 3)."""
    source = tmp_path / "skills.json"
    source.write_text(json.dumps([{"name": "Sing", "root": "Will", "type": "social", "tools": "no"}]))
    out = tmp_path / "skills.rules"
    refuse_writes(monkeypatch, fault)
    code, _, err = cli("import", str(source), "--kind", "skill", "--out", str(out))
    assert code == 2, err
    assert "cannot write" in err and "skills.rules" in err and "internal error" not in err
    assert not out.exists() and leftovers(tmp_path) == []


def test_nested_aliases_are_refused_before_they_expand(cli: Cli, tmp_path: Path) -> None:
    """Issue 17: a 1 KB "billion laughs" (9 levels of 9 aliases) ran past 60 s and 4.3 GB."""
    levels = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True):
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
    source = tmp_path / "laughs.yaml"
    source.write_text("\n".join(levels) + "\n", encoding="utf-8")
    assert source.stat().st_size < 1024
    out = tmp_path / "skills.rules"
    code, _, err = cli("import", str(source), "--kind", "skill", "--out", str(out))
    assert code == 1, err
    assert f"{source}: it expands to more than 2,000,000 values" in err and "nothing written" in err
    assert not out.exists() and list(tmp_path.iterdir()) == [source]


def test_a_file_nested_too_deeply_is_refused(cli: Cli, tmp_path: Path) -> None:
    for suffix in (".yaml", ".json"):
        source = tmp_path / f"deep{suffix}"
        source.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
        code, _, err = cli("import", str(source), "--kind", "skill")
        assert code == 1 and f"{source}: it is nested too deeply" in err, err


GADGETS = """\
kind gadget "Gadgets" {
  works: bool
  mode: one of true, false, maybe?
  label: text?
  rev: version?
  code: word?
  weight: number?
}
"""

NATURAL = """\
- name: Fishing
  root: Perception
  type: peasant
  tools: yes
- name: Trapping
  root: [Perception, Agility]
  type: 12
  tools: No
- name: Lamplighting
  root: will
  type: on
  tools: on
"""


def test_yaml_as_people_write_it_imports_by_the_fields_type(cli: Cli, tmp_path: Path) -> None:
    """Issue 22: `tools: yes` failed with "True is not a name". An unquoted yes, on, 12 or 1.10 means what
    the field's declared type makes of it: an option or word as written, a boolean or a number as read."""
    source = tmp_path / "skills.yaml"
    source.write_text(NATURAL, encoding="utf-8")
    out = tmp_path / "r" / "skills.rules"
    folder = write_ruleset(tmp_path / "r", {})
    code, _, err = cli("import", str(source), "--kind", "skill", "--out", str(out))
    assert code == 0, err
    text = out.read_text(encoding="utf-8")
    assert 'skill "Fishing" {\n  root: Perception\n  type: peasant\n  tools: yes\n}' in text
    assert '  type: "12"\n  tools: no\n' in text  # a number where a word goes; `No`, the option no
    assert "  type: on\n  tools: yes\n" in text  # a word as written; for tools, on is the option yes
    code, exported, err = cli("export", str(folder))
    assert code == 0, err
    skills = json.loads(exported)["rulesets"]["demo"]["entities"]["skill"]
    assert [skills[s]["tools"] for s in ("fishing", "trapping", "lamplighting")] == ["yes", "no", "yes"]
    assert skills["lamplighting"]["type"] == "on"

    write_ruleset(tmp_path / "g", {"kinds.rules": GADGETS})
    gadgets = tmp_path / "gadgets.yaml"
    gadgets.write_text(
        "- {name: Lamp, works: on, mode: yes, label: 1.10, rev: 1.10, code: 0x1F, weight: 1.50}\n"
        "- {name: Clock, works: no, mode: maybe, label: 1:30, code: yes}\n",
        encoding="utf-8",
    )
    code, text, err = cli("import", str(gadgets), "--kind", "gadget", "--ruleset", str(tmp_path / "g"))
    assert code == 0, err
    assert 'works: yes\n  mode: true\n  label: "1.10"\n  rev: "1.10"\n  code: "0x1F"\n  weight: 1.5\n' in text
    assert 'works: no\n  mode: maybe\n  label: "1:30"\n  code: "yes"\n' in text  # YAML 1.1 reads 1:30 as 90
    as_json = tmp_path / "gadgets.json"
    as_json.write_text('[{"name": "Lamp", "works": true, "mode": false, "rev": 1.10, "label": 2}]', encoding="utf-8")
    code, text, err = cli("import", str(as_json), "--kind", "gadget", "--ruleset", str(tmp_path / "g"))
    assert code == 0, err
    assert 'works: yes\n  mode: false\n  label: "2"\n  rev: "1.10"\n' in text


def test_every_field_that_cannot_be_mapped_is_named_and_nothing_is_written(cli: Cli, tmp_path: Path) -> None:
    source = tmp_path / "skills.yaml"
    source.write_text(
        NATURAL
        + "- {name: Odd, root: [will, 3], type: [a, b], tools: maybe}\n"
        + "- {name: Costly, root: will, type: x, open_cost: 40}\n",
        encoding="utf-8",
    )
    out = tmp_path / "skills.rules"
    code, _, err = cli("import", str(source), "--kind", "skill", "--out", str(out))
    assert code == 1, err
    problems = [line for line in err.splitlines() if line.startswith("rulesdsl import: ")]
    assert problems[0] == "rulesdsl import: record 3: field 'type': ['a', 'b'] is not a name"
    assert problems[1].startswith("rulesdsl import: record 3: field 'root': ")  # the compiler's, by its line
    assert any(p.startswith("rulesdsl import: record 3: field 'tools': ") and "expendable" in p for p in problems)
    assert any(p.startswith("rulesdsl import: record 4: field 'open_cost': ") and "10" in p for p in problems)
    assert not [p for p in problems if "record 0" in p or "record 1" in p or "record 2" in p]
    assert err.endswith("nothing written\n") and not out.exists() and list(tmp_path.iterdir()) == [source]
