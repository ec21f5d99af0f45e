"""Packaging: a plain (non-editable) `pip install .` in a fresh venv carries grammar, schemas, templates."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from .conftest import FIXTURES, ROOT


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env_dir = tmp_path_factory.mktemp("venv")
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    result = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(ROOT)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return env_dir


def test_installed_wheel_builds_a_ruleset_from_anywhere(installed: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    python = str(installed / "bin" / "python")

    def run(*command: str) -> subprocess.CompletedProcess[str]:
        """Run a command of the installed package, from outside the checkout."""
        return subprocess.run(list(command), capture_output=True, text=True, check=False, cwd=tmp_path, env=env)

    out = tmp_path / "out"
    version = run(str(installed / "bin" / "rulesdsl"), "--version")
    assert version.returncode == 0 and version.stdout.startswith("rulesdsl ")
    build = run(str(installed / "bin" / "rulesdsl"), "build", str(FIXTURES / "mini"), "--out", str(out))
    assert build.returncode == 0, build.stderr
    assert (out / "mini" / "__init__.py").is_file() and (out / "site" / "index.html").is_file()
    module = run(python, "-m", "rulesdsl", "check", str(FIXTURES / "mini"))
    assert module.returncode == 0, module.stderr
    location = run(python, "-c", "import rulesdsl.syntax.parse as s; print(s.GRAMMAR_PATH)")
    assert str(installed) in location.stdout, "the grammar must come from the installed package"
    assert sys.prefix not in location.stdout or str(installed) in location.stdout
