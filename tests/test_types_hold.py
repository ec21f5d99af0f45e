"""Types hold for the people who use the packages: the README's Python examples and every package built
from tests/examples pass `mypy --strict` (MECHANICS["witcher_d10"].total(...) is known to be a total)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from rulesdsl.compile.pipeline import compile_paths
from rulesdsl.targets.build import render_all, write_output

from .conftest import GENERATED, ROOT, quality_command
from .test_examples import EXAMPLES
from .test_readme import README, tour_files


def mypy(folder: Path, *targets: str, path: tuple[Path, ...] = ()) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MYPYPATH": os.pathsep.join(map(str, path)), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        quality_command("mypy", *targets), cwd=folder, capture_output=True, text=True, check=False, env=env
    )


def test_the_readme_python_examples_type_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name, text in tour_files().items():  # the tour's own package, which its first example imports
        Path(name).parent.mkdir(parents=True, exist_ok=True)
        Path(name).write_text(text + "\n", encoding="utf-8")
    result = compile_paths([Path("homebrew")])
    assert result.ok, [d.message for d in result.diagnostics]
    write_output(tmp_path / "homebrew-out", render_all(result.rulesets))
    examples = re.findall(r"```python\n(.*?)```", README, flags=re.S)
    assert any(".mechanics." in e for e in examples) and any("import marsh" in e for e in examples)
    names = []
    for n, example in enumerate(examples):
        (tmp_path / f"readme_example_{n}.py").write_text(example, encoding="utf-8")
        names.append(f"readme_example_{n}.py")
    ran = mypy(tmp_path, *names, path=(GENERATED, tmp_path / "homebrew-out"))
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_the_example_packages_type_check(tmp_path: Path) -> None:
    os.chdir(ROOT)
    result = compile_paths([EXAMPLES])
    assert result.ok, [f"{d.code} {d.message}" for d in result.diagnostics]
    write_output(tmp_path, render_all(result.rulesets))
    packages = sorted(r.id for r in result.rulesets)
    ran = mypy(tmp_path, *packages)
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-2000:]
