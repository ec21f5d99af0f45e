"""`rulesdsl export` and `export --schema`: the envelope, its contract, and what docs/export.md promises."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import re
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource

from rulesdsl import __version__
from rulesdsl.compile.export import FORMAT
from rulesdsl.tools.cli import main

from .conftest import FIXTURES, ROOT, golden_folder, write_ruleset

Cli = Callable[..., tuple[int, str, str]]
EXAMPLES = ROOT / "tests" / "examples"
DOC = (ROOT / "docs" / "export.md").read_text(encoding="utf-8")


def exported(cli: Cli, *args: str) -> Any:
    code, out, err = cli("export", *args)
    assert code == 0, err
    return json.loads(out)


def validator(schema: dict[str, Any]) -> Draft202012Validator:
    registry = (Resource.from_contents(schema) @ Registry()).crawl()  # crawled once, not at every $ref
    return Draft202012Validator(schema, registry=registry, format_checker=FormatChecker())


@cache
def _rules_export(folder: str = "rules") -> tuple[Any, Any]:
    """The export of rules/ (or a folder in it) and its schema, made once for the tests that read them."""
    made = []
    for args in (["export", str(ROOT / folder)], ["export", "--schema", str(ROOT / folder)]):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(args) == 0
        made.append(json.loads(out.getvalue()))
    return made[0], made[1]


def errors(schema: dict[str, Any], instance: Any) -> list[str]:
    return [f"{e.json_path}: {e.message[:200]}" for e in validator(schema).iter_errors(instance)]


@pytest.mark.parametrize("folder", [ROOT / "rules", EXAMPLES], ids=["rules", "examples"])
def test_the_export_validates_against_its_schema(cli: Cli, folder: Path) -> None:
    schema = exported(cli, "--schema", str(folder))
    Draft202012Validator.check_schema(schema)
    export = exported(cli, str(folder))
    assert export["rulesets"], "nothing exported"
    assert errors(schema, export) == []


def test_the_schema_refuses_what_the_contract_does_not_allow() -> None:
    export, schema = _rules_export("rules/witcher")
    assert errors(schema, export) == []
    witcher = ("rulesets", "witcher")

    def broken(path: tuple[str | int, ...], value: Any) -> Any:
        made = copy.deepcopy(export)
        at = made
        for key in path[:-1]:
            at = at[key]
        at[path[-1]] = value
        return made

    table = (*witcher, "entities", "table", "humanoid_hit_location")
    cases = {
        "format": (("format",), "rulesdsl-export/0"),
        "a row's keys": ((*table, "rows", 0, "keys"), 5),
        "a misspelt field": ((*table, "rols"), []),
        "a formula's tree": ((*witcher, "entities", "formula", "damage_state", "formula", "expr"), {"op": "^"}),
        "a ruleset's extends": ((*witcher, "extends"), "burning_wheel"),
        "a field type": ((*witcher, "kinds", "table", "fields", 0, "type"), {"is": "int", "min": "one"}),
        "a kind's schema id": ((*witcher, "kinds", "table", "schema"), "urn:rulesdsl:kind:table"),
        "a kind left out": ((*witcher, "kinds"), {}),
    }
    for what, (path, value) in cases.items():
        assert errors(schema, broken(path, value)), f"{what}: accepted"


def schema_ids(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$id"), str):
            yield node["$id"]
        for value in node.values():
            yield from schema_ids(value)
    elif isinstance(node, list):
        for value in node:
            yield from schema_ids(value)


def test_every_kind_schema_has_an_id_of_its_own() -> None:
    export, schema = _rules_export()
    ids = list(schema_ids(schema))
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    for ruleset in export["rulesets"].values():
        for name, kind in ruleset["kinds"].items():
            assert kind["schema"] == f"urn:rulesdsl:ruleset:{ruleset['id']}:kind:{name}"
            assert kind["schema"] in ids
    # a homebrew and its base both have lifepaths: two schemas, one per ruleset
    assert {"urn:rulesdsl:ruleset:fenmark:kind:lifepath", "urn:rulesdsl:ruleset:burning_wheel:kind:lifepath"} <= set(
        ids
    )


def test_the_envelope_says_what_and_whose_it_is() -> None:
    export, _ = _rules_export()
    assert export["format"] == FORMAT == "rulesdsl-export/1"
    assert export["compiler"] == {"name": "rulesdsl", "version": __version__}
    fenmark = export["rulesets"]["fenmark"]
    assert (fenmark["id"], fenmark["title"], fenmark["version"], fenmark["extends"]) == (
        "fenmark",
        "Fenmark",
        "0.1.0",
        ["burning_wheel"],
    )
    # its own kind, declared, and the built-in ones marked as such
    assert fenmark["kinds"]["fen_beast"]["builtin"] is False
    assert fenmark["kinds"]["lifepath"]["builtin"] is True
    assert set(fenmark["entities"]) <= set(fenmark["kinds"])


def shape(node: Any, depth: int) -> Any:
    """The keys of a document down to `depth`, a list by its first item: what a reader's code walks."""
    if isinstance(node, dict):
        return {k: shape(v, depth - 1) for k, v in node.items()} if depth else sorted(node)
    if isinstance(node, list):
        return [shape(node[0], depth)] if node else []
    return type(node).__name__


def test_the_envelope_keeps_its_shape(cli: Cli) -> None:
    """A golden: a change here is a change to the export format (a CHANGELOG entry, maybe FORMAT)."""
    export = exported(cli, str(FIXTURES / "mini"))
    mini = export["rulesets"]["mini"]
    top = {
        "envelope": shape({**export, "rulesets": {"ID": {**mini, "kinds": {}, "entities": {}}}}, 3),
        "kinds": sorted(mini["kinds"]),
        "kind declaration": shape(mini["kinds"]["skill"], 3),
        "entities": {kind: sorted(group) for kind, group in mini["entities"].items()},
    }
    text = json.dumps(top, indent=2, sort_keys=True) + "\n"
    golden = golden_folder(ROOT / "tests" / "golden" / "export", {"shape.json": text})
    assert golden["shape.json"] == text


def test_a_kind_declaration_says_types_bounds_and_defaults(cli: Cli, tmp_path: Path) -> None:
    folder = write_ruleset(
        tmp_path / "demo",
        {
            "a.rules": """
            kind weapon "Weapons" {
              reach: int in 1..5 = 1  weight: number in 0.5..?  damage: dice
              tags: list in 1..3 of one of light, heavy  wielder: ref skill?
              lair: record { name: text  depth: int? }?  speeds: map of int?
            }
            weapon dagger "Dagger" { damage: 1d4  tags: light }
            """
        },
    )
    weapon = exported(cli, str(folder))["rulesets"]["demo"]["kinds"]["weapon"]
    fields = {f["name"]: f for f in weapon["fields"]}
    own = ["reach", "weight", "damage", "tags", "wielder", "lair", "speeds"]
    assert [f["name"] for f in weapon["fields"]] == [*own, "source", "uncertain", "note", "aliases", "description"]
    assert fields["reach"] == {
        "name": "reach",
        "type": {"is": "int", "min": 1, "max": 5},
        "declared": "int in 1..5",
        "optional": False,
        "default": 1,
    }
    assert fields["weight"]["type"] == {"is": "number", "min": {"num": 1, "den": 2}}
    assert fields["tags"]["type"] == {
        "is": "list",
        "item": {"is": "enum", "options": ["light", "heavy"]},
        "min_items": 1,
        "max_items": 3,
    }
    assert fields["wielder"]["type"] == {"is": "ref", "kind": "skill"} and fields["wielder"]["optional"]
    assert [f["name"] for f in fields["lair"]["type"]["fields"]] == ["name", "depth"]
    assert fields["speeds"]["type"] == {"is": "map", "key": {"is": "word"}, "value": {"is": "int"}}
    assert weapon["builtin"] is False and weapon["rows"] is False


def test_the_docs_formula_example_is_what_export_gives(cli: Cli, tmp_path: Path) -> None:
    rules = re.search(r"For example\n\n```rules\n(.*?)```", DOC, re.S)
    shown = re.search(r"exports the formula as\n\n```json\n(.*?)```", DOC, re.S)
    assert rules and shown
    folder = write_ruleset(tmp_path / "demo", {"a.rules": rules.group(1)})
    export = exported(cli, str(folder))
    assert export["rulesets"]["demo"]["entities"]["formula"]["penalty"] == json.loads(shown.group(1))
    # and the kind declaration the docs show is that of the same rules (its first four fields)
    declared = re.search(r"## Kind declarations\n.*?```json\n(.*?)```", DOC, re.S)
    assert declared
    doc_kind = json.loads(declared.group(1))
    kind = export["rulesets"]["demo"]["kinds"]["weapon"]
    assert {**kind, "fields": kind["fields"][:4]} == doc_kind


def test_the_docs_name_every_formula_and_requirement_form() -> None:
    _, schema = _rules_export()
    defs = schema["$defs"]["defs"]["$defs"]
    forms = {next(iter(b.get("required", ["integer"]))) for b in defs["expr"]["anyOf"]}
    missing = [form for form in forms - {"integer"} if f'{{"{form}"' not in DOC]
    assert not missing, f"docs/export.md does not describe the formula form(s) {missing}"
    requirement = set(defs["requirement"]["properties"]) - {"of", "op", "value", "in"}
    assert not [form for form in requirement if f'{{"{form}"' not in DOC]


def test_yaml_and_the_import_read_the_envelope(cli: Cli, tmp_path: Path) -> None:
    import yaml

    mini = str(FIXTURES / "mini")
    code, as_yaml, _ = cli("export", "--format", "yaml", mini)
    assert code == 0 and yaml.safe_load(as_yaml) == exported(cli, mini)
    data = exported(cli, mini)
    for name, made in {
        "new.json": data,
        # the export before the envelope: each ruleset its entities
        "old.json": {"rulesets": {r: v["entities"] for r, v in data["rulesets"].items()}},
    }.items():
        (tmp_path / name).write_text(json.dumps(made), encoding="utf-8")
        code, out, err = cli("import", str(tmp_path / name), "--kind", "skill")
        assert code == 0, err
        assert out.count("skill ") == len(data["rulesets"]["mini"]["entities"]["skill"]), name


def test_the_schema_needs_rules_that_check(cli: Cli, tmp_path: Path) -> None:
    folder = write_ruleset(tmp_path / "demo", {"a.rules": "trait B { tpye: die }\n"})
    code, out, err = cli("export", "--schema", str(folder))
    assert code == 1 and out == "" and "[E210]" in err


def test_the_docs_validation_example_runs_as_written() -> None:
    """docs/export.md's Python example (a ```py block: it needs rulesdsl and jsonschema installed, unlike the
    package examples tests/test_readme.py runs bare), run from the repository with rulesdsl on PATH."""
    import os
    import subprocess
    import sys

    code = re.search(r"^```py\n(.*?)^```", DOC, flags=re.S | re.M)
    assert code is not None
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    ran = subprocess.run([sys.executable, "-c", code.group(1)], cwd=ROOT, env=env, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
