"""The generated package is the same on every supported Python: rules/ built by 3.11, 3.12 and 3.13 gives
the same bytes, file for file (a soft keyword such as `type` once became `type_` on 3.12 only).

Each interpreter gets a venv of its own with the project's dependencies, `.venv-py3.X/` (made once, by
the steps of scripts/setup.sh; after that the test works offline). An interpreter that is not on the
machine is skipped, with the reason; one that is there must build."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

VERSIONS = ("3.11", "3.12", "3.13")


def interpreter(version: str) -> str | None:
    """`python3.X` on PATH, else pyenv's (its shims fail for a version that is not selected)."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = [
        shutil.which(f"python{version}"),
        *sorted(map(str, pyenv.glob(f"versions/{version}.*/bin/python{version}"))),
    ]
    for candidate in candidates:
        if candidate and subprocess.run([candidate, "-c", "pass"], capture_output=True, check=False).returncode == 0:
            return candidate
    return None


def venv_python(version: str, python: str) -> Path:
    """`.venv-py3.X/bin/python` with rulesdsl's dependencies installed (made on first use)."""
    venv = ROOT / f".venv-py{version}"
    bin_python = venv / "bin" / "python"
    ready = bin_python.exists() and subprocess.run(
        [str(bin_python), "-c", "import lark, jinja2, jsonschema, jsonschema_rs, markdown_it, pygls, yaml, watchfiles"],
        capture_output=True,
        check=False,
    )
    if not ready or ready.returncode != 0:
        subprocess.run([python, "-m", "venv", "--clear", str(venv)], check=True, capture_output=True)
        install = [str(bin_python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--editable", "."]
        done = subprocess.run(install, cwd=ROOT, capture_output=True, text=True, check=False)
        assert done.returncode == 0, f"could not set up {venv.name}: {done.stderr[-2000:]}"
    return bin_python


def build_with(python: str, out: Path) -> dict[str, bytes]:
    """rules/ built into `out` by this interpreter, this checkout's code; every file's bytes by path."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RULESDSL_CACHE_DIR": "off", "PYTHONDONTWRITEBYTECODE": "1"}
    ran = subprocess.run(
        [python, "-m", "rulesdsl", "build", "rules", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """What the interpreter running the tests builds."""
    return build_with(sys.executable, tmp_path_factory.mktemp("built-here"))


@pytest.mark.parametrize("version", VERSIONS)
def test_every_supported_python_builds_the_same_bytes(
    version: str, reference: dict[str, bytes], tmp_path: Path
) -> None:
    python = interpreter(version)
    if python is None:
        pytest.skip(f"Python {version} is not installed here (neither python{version} on PATH nor under pyenv)")
    built = build_with(str(venv_python(version, python)), tmp_path / "out")
    assert sorted(built) == sorted(reference), f"Python {version} writes other files"
    differ = [name for name in reference if built[name] != reference[name]]
    assert differ == [], f"Python {version} writes these files differently: {differ[:20]}"
