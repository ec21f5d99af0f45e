"""The project's own rules/ and generated/: clean, fresh, importable, lint and type clean."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rulesdsl.compile.pipeline import compile_paths
from rulesdsl.targets.build import render_all, stale_files

from .conftest import ROOT, quality_command, run_python

RULESETS = ("burning_wheel", "fenmark", "riddle_of_steel", "witcher")


@pytest.fixture(scope="module")
def compilation():  # type: ignore[no-untyped-def]
    os.chdir(ROOT)  # diagnostics and headers use paths relative to the checkout
    return compile_paths([ROOT / "rules"])


def test_rules_check_clean(compilation) -> None:  # type: ignore[no-untyped-def]
    assert [d for d in compilation.diagnostics if d.severity == "error"] == []
    assert tuple(r.id for r in compilation.rulesets) == RULESETS


def test_committed_generated_output_is_fresh(compilation) -> None:  # type: ignore[no-untyped-def]
    stale = stale_files(ROOT / "generated", render_all(compilation.rulesets))
    assert stale == [], "generated/ is stale: run `rulesdsl build` and commit the result"


def test_stale_check_command_agrees() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "rulesdsl", "build", "--check"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("package", RULESETS)
def test_generated_packages_import_with_only_the_standard_library(package: str) -> None:
    code = (
        f"import sys\nimport {package}\n"
        f"assert not {{'lark', 'jinja2', 'jsonschema', 'rulesdsl'}} & set(sys.modules)\nprint({package}.ID)"
    )
    result = run_python(code, ROOT / "generated")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == package


@pytest.mark.parametrize("tool", ["ruff", "mypy"])
def test_generated_packages_are_lint_and_type_clean(tool: str) -> None:
    command = quality_command(tool, *RULESETS)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(command, cwd=ROOT / "generated", capture_output=True, text=True, check=False, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


def test_no_long_prose_in_rules() -> None:
    """The seeds are copyrighted: rules/ carries facts and short lines of our own, never paragraphs."""
    import re

    long_strings = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted((ROOT / "rules").rglob("*.rules"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r'"[^"]{201,}"', line)
    ]
    assert long_strings == []
