"""Shared helpers: write a ruleset into a temporary folder, compile it, run the CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings

from rulesdsl.compile.pipeline import Compilation, compile_paths
from rulesdsl.diagnostics import Diagnostic
from rulesdsl.tools.cli import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
# The generated packages the scenario tests import: the committed ones unless told otherwise (to try a
# build elsewhere without touching generated/: RULESDSL_GENERATED=/tmp/out pytest tests/test_scenarios.py)
GENERATED = Path(os.environ.get("RULESDSL_GENERATED", ROOT / "generated"))

MANIFEST = 'ruleset demo { title: "Demo"  version: "0.1.0" }\n'


def write_ruleset(folder: Path, files: dict[str, str], manifest: str = MANIFEST) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ruleset.rules").write_text(manifest, encoding="utf-8")
    for name, text in files.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


@pytest.fixture
def compile_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Compilation]:
    """compile_rules({"a.rules": "..."}) -> the compilation of a ruleset made of those files."""
    monkeypatch.chdir(tmp_path)

    def run(files: dict[str, str], manifest: str = MANIFEST) -> Compilation:
        write_ruleset(tmp_path / "rules" / "demo", files, manifest)
        return compile_paths([Path("rules")])

    return run


def messages(compilation: Compilation) -> list[str]:
    return [d.message for d in compilation.diagnostics]


def only(compilation: Compilation) -> Diagnostic:
    assert len(compilation.diagnostics) == 1, [d.message for d in compilation.diagnostics]
    return compilation.diagnostics[0]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    def run(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture(scope="module")
def generated_packages() -> Iterator[Path]:
    """Put the generated packages on sys.path for one test module (no bytecode written into them)."""
    sys.path.insert(0, str(GENERATED))
    previous, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    yield GENERATED
    sys.dont_write_bytecode = previous
    sys.path.remove(str(GENERATED))


def golden_folder(folder: Path, files: dict[str, str]) -> dict[str, str]:
    """The files a golden folder holds; with UPDATE_GOLDEN=1 it is first rewritten to `files`."""
    if os.environ.get("UPDATE_GOLDEN"):
        shutil.rmtree(folder, ignore_errors=True)
        for name, text in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text, encoding="utf-8")
    return {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8") for p in folder.rglob("*") if p.is_file()}


def quality_command(tool: str, *packages: str) -> list[str]:
    """The lint (ruff, with import order and modernisations) or type check (mypy --strict) that generated
    packages must pass; run it in their folder."""
    if tool == "ruff":
        return [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--no-cache",
            "--isolated",
            "--extend-select",
            "W,I,UP,B,RUF",
            *packages,
        ]
    return [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull, *packages]


def run_python(code: str, *paths: Path) -> subprocess.CompletedProcess[str]:
    """Run code in a fresh interpreter that sees only the standard library and `paths` (-I -S)."""
    setup = "import sys; sys.path[:0] = " + repr([str(p) for p in paths]) + "\n"
    return subprocess.run([sys.executable, "-I", "-S", "-c", setup + code], capture_output=True, text=True, check=False)


def pytest_configure(config: pytest.Config) -> None:
    """Tests never share the user's parse cache: each run gets its own."""
    import tempfile

    os.environ.setdefault("RULESDSL_CACHE_DIR", tempfile.mkdtemp(prefix="rulesdsl-test-cache-"))


# The ways a disk refuses a write, for tests that run as root (where a read-only folder is still written):
# the folder cannot take a new file, or the disk fills up while the file is written.
WRITE_FAULTS = ("read-only", "full")


def refuse_writes(monkeypatch: pytest.MonkeyPatch, fault: str) -> None:
    import errno
    import tempfile

    if fault == "read-only":

        def mkstemp(*args: object, **kwargs: object) -> tuple[int, str]:
            raise OSError(errno.EROFS, "Read-only file system")

        monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
        return
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, fd: int, *args: object, **kwargs: object) -> None:
            self.file = real_fdopen(fd, "w")

        def __enter__(self) -> Full:
            return self

        def __exit__(self, *exc: object) -> None:
            self.file.close()

        def write(self, text: str) -> int:
            self.file.write(text[: len(text) // 2])  # half of it reaches the disk, then there is no room
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fdopen", Full)


def leftovers(folder: Path) -> list[str]:
    """Files a write left beside its target (temporary files start with '.')."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# Hypothesis profiles for the property tests that draw whole rulesets (tests/test_generated_rulesets.py):
# `ci` (the default) is deterministic and bounded, so the suite finds the same things on every run, and
# reports a failure as found (shrinking builds and runs hundreds of rulesets); `long` draws many more,
# afresh each run, and shrinks (HYPOTHESIS_PROFILE=long pytest tests/test_generated_rulesets.py).
settings.register_profile(
    "ci",
    derandomize=True,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    database=None,
    deadline=None,
    max_examples=40,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
settings.register_profile("long", settings.get_profile("ci"), derandomize=False, max_examples=2000, phases=list(Phase))
