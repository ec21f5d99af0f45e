"""Pyright (the type checker behind VS Code's Python support) on the generated packages, as mypy --strict checks
them elsewhere: the packages themselves under its default rules, and code that uses them under its strict
rules, where a type it cannot see (`Unknown`) is an error. Pyright comes from npm (tests/node), pinned."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYRIGHT = ROOT / "tests" / "node" / "node_modules" / ".bin" / "pyright"
PACKAGES = ("burning_wheel", "fenmark", "riddle_of_steel", "witcher")

# What an app does with a package: read entities and their fields, burn a character, roll on a table.
USER_CODE = """\
import random

import burning_wheel
from burning_wheel import lifepaths, tables

farmer = lifepaths.farmer
years: int = farmer.time
name: str = farmer.name
sheet = burning_wheel.burn(["born_peasant", "farmer"])
legal: bool = sheet.legal
skills: tuple[str, ...] = sheet.required_skills
sorcery: str = burning_wheel.SKILLS["sorcery"].name
for table in tables.TABLES.values():
    print(table.name, [row.key_text for row in table.rows])
print(tables.TABLES["affiliation_costs"].roll(random.Random(1)))
for lifepath in burning_wheel.LIFEPATHS.values():
    print(lifepath.skills, lifepath.traits, lifepath.requires)
met: bool | None = burning_wheel.requirement_met("farmer", ["born_peasant"])
"""


@pytest.fixture(scope="module")
def pyright() -> Path:
    assert PYRIGHT.exists(), "pyright is not installed: run scripts/setup.sh test (npm ci in tests/node)"
    return PYRIGHT


def run_pyright(pyright: Path, folder: Path, config: dict[str, Any], *paths: Path) -> list[dict[str, Any]]:
    """Pyright's diagnostics (errors and warnings) for `paths`, under `config` (written in `folder`)."""
    (folder / "pyrightconfig.json").write_text(json.dumps({"pythonVersion": "3.11", **config}), encoding="utf-8")
    command = [str(pyright), "--outputjson", "--project", str(folder), *map(str, paths)]
    ran = subprocess.run(command, capture_output=True, text=True, check=False)
    report = json.loads(ran.stdout)
    assert report["summary"]["filesAnalyzed"] > 0, ran.stdout
    return [d for d in report["generalDiagnostics"] if d["severity"] in ("error", "warning")]


def test_the_generated_packages_pass_pyright(pyright: Path, tmp_path: Path) -> None:
    found = run_pyright(pyright, tmp_path, {}, *(ROOT / "generated" / p for p in PACKAGES))
    assert found == [], json.dumps(found, indent=1)


def test_code_using_a_package_passes_strict_pyright(pyright: Path, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(USER_CODE, encoding="utf-8")
    config = {"typeCheckingMode": "strict", "extraPaths": [str(ROOT / "generated")]}
    found = run_pyright(pyright, tmp_path, config, tmp_path / "app.py")
    assert found == [], json.dumps(found, indent=1)


def test_strict_pyright_sees_the_fields_types(pyright: Path, tmp_path: Path) -> None:
    """The check above can fail: a field read as the wrong type is an error, so the types are not `Any`."""
    (tmp_path / "app.py").write_text(USER_CODE + "wrong: str = farmer.resources\n", encoding="utf-8")
    config = {"typeCheckingMode": "strict", "extraPaths": [str(ROOT / "generated")]}
    found = run_pyright(pyright, tmp_path, config, tmp_path / "app.py")
    assert [(d["rule"], d["range"]["start"]["line"] + 1) for d in found] == [
        ("reportAssignmentType", USER_CODE.count("\n") + 1)
    ]
