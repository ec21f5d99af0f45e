"""The README's tour works as written: its homebrew ruleset checks, builds and behaves as shown; every
Python example of the README and the docs runs, shows what its comments say, and passes mypy --strict
against generated/ (and the tour's package)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rulesdsl.compile.pipeline import compile_paths
from rulesdsl.targets.build import render_all, write_output

from .conftest import GENERATED, ROOT, quality_command, run_python

README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def tour_files() -> dict[str, str]:
    """The files the tour writes with `cat > PATH <<'RULES' ... RULES`."""
    return dict(re.findall(r"cat > (\S+) <<'RULES'\n(.*?)\nRULES\n", README, flags=re.S))


def test_the_tour_ruleset_builds_and_behaves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    files = tour_files()
    assert len(files) == 2
    for name, text in files.items():
        Path(name).parent.mkdir(parents=True, exist_ok=True)
        Path(name).write_text(text + "\n", encoding="utf-8")
    result = compile_paths([Path("homebrew")])
    assert result.ok, [d.message for d in result.diagnostics]
    write_output(tmp_path / "homebrew-out", render_all(result.rulesets))
    code = """
import random
import marsh
assert marsh.tables.catch.lookup(11).catch == "A giant pike" and marsh.TABLES["catch"] is marsh.tables.catch
assert marsh.tables.catch.roll(random.Random(1)) == marsh.tables.catch.roll(random.Random(1))
assert marsh.requirement_met("eel_catcher", ["born_to_the_reeds"], age=30) is True
assert marsh.requirement_met("eel_catcher", ["born_to_the_reeds"]) is None
assert marsh.requirement_met("eel_catcher", ["born_to_the_reeds"], age=50) is False
assert marsh.unmet_requirements("eel_catcher", []) == ["requires: Born to the Reeds and not age > 40"]
skills = marsh.lifepaths.eel_catcher.skills
assert repr(skills) == "Choices(points=5, options=(('fishing',), ('trapping', 'swimming')))"
print("ok")
"""
    ran = run_python(code, tmp_path / "homebrew-out")
    assert ran.returncode == 0, ran.stderr
    assert "marsh.tables.catch.lookup(11).catch               # 'A giant pike'" in README


def test_the_tour_misspelling_is_reported_as_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rulesdsl.diagnostics import render_text

    monkeypatch.chdir(tmp_path)
    for name, text in tour_files().items():
        Path(name).parent.mkdir(parents=True, exist_ok=True)
        Path(name).write_text(text.replace("5 pts: Fishing,", "5 pts: Fishng,") + "\n", encoding="utf-8")
    result = compile_paths([Path("homebrew")])
    shown = re.search(r"```\n(homebrew/marsh/reed.rules:.*?)```", README, flags=re.S)
    assert shown is not None
    assert render_text(result.diagnostics, result.sources) == shown.group(1)


def python_examples() -> list[tuple[str, str]]:
    """Every ```python block of the README and the docs: (where, code)."""
    found = []
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        for n, match in enumerate(re.finditer(r"^```python\n(.*?)^```", text, flags=re.S | re.M), 1):
            found.append((f"{path.stem}_{n}", match.group(1)))
    return found


@pytest.fixture(scope="module")
def tour(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where the tour's `homebrew-out/marsh` is built (the README's examples run from there)."""
    folder = tmp_path_factory.mktemp("tour")
    for name, text in tour_files().items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text + "\n", encoding="utf-8")
    result = compile_paths([folder / "homebrew"])
    assert result.ok, [d.message for d in result.diagnostics]
    write_output(folder / "homebrew-out", render_all(result.rulesets))
    return folder


# A comment that begins with a Python value (`# 24: gambeson`, `# 'A giant pike'`, `# Choices(...)`) says
# what the line before it gives; other comments (`# reproducible from the seed`) only explain.
_SHOWN = re.compile(r"(-?\d|'|\"|\[|\(|True\b|False\b|None\b|[A-Z]\w*\()")


def checked(code: str) -> str:
    """The example with each line `EXPRESSION  # VALUE...` asserting that the expression's repr is VALUE."""
    lines = [
        "def _shows(value: object, comment: str) -> None:",
        "    assert comment.startswith(repr(value)), (value, comment)",
    ]
    for line in code.splitlines():
        statement, _, comment = line.partition("  # ")
        indent = statement[: len(statement) - len(statement.lstrip())]
        try:
            compile(statement.strip(), "<example>", "eval")
        except SyntaxError:
            lines.append(line)
            continue
        if comment and _SHOWN.match(comment.strip()):
            lines.append(f"{indent}_shows({statement.strip()}, {comment.strip()!r})")
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


def test_the_documents_have_python_examples() -> None:
    names = [name for name, _ in python_examples()]
    assert {"README_1", "README_2", "README_3"} <= set(names)


@pytest.mark.parametrize(("name", "code"), python_examples(), ids=[name for name, _ in python_examples()])
def test_each_python_example_runs_and_gives_what_it_says(tour: Path, name: str, code: str) -> None:
    script = checked(code)
    assert script.count("_shows(") > 1 or "print" in code, "an example that shows nothing is not checked"
    ran = subprocess.run(
        [sys.executable, "-I", "-S", "-c", f"import sys; sys.path[:0] = [{str(GENERATED)!r}]\n" + script],
        cwd=tour,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0, f"{name}:\n{script}\n{ran.stderr}"


def test_every_python_example_passes_mypy_strict(tour: Path) -> None:
    """Against the committed generated/ packages (and the tour's), as an app would check its code."""
    folder = tour / "examples"
    folder.mkdir(exist_ok=True)
    files = []
    for name, code in python_examples():
        (folder / f"{name}.py").write_text(code, encoding="utf-8")
        files.append(f"{name}.py")
    paths = os.pathsep.join([str(GENERATED), str(tour / "homebrew-out")])
    env = {**os.environ, "MYPYPATH": paths}
    result = subprocess.run(
        quality_command("mypy", *files), cwd=folder, capture_output=True, text=True, check=False, env=env
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (folder / "misspelt.py").write_text("import witcher\nwitcher.tables.humanoid_hit_location.lookup(3).locaton\n")
    result = subprocess.run(
        quality_command("mypy", "misspelt.py"), cwd=folder, capture_output=True, text=True, check=False, env=env
    )
    assert '"HumanoidHitLocationRow" has no attribute "locaton"' in result.stdout


def test_the_ci_workflow_and_hooks_work_as_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The workflow's rulesdsl steps annotate the tour's misspelling as the README shows; its pre-commit
    snippet names the hooks the repository offers."""
    import shlex

    import yaml

    from rulesdsl.tools.cli import main

    monkeypatch.chdir(tmp_path)
    for name, text in tour_files().items():
        Path(name).parent.mkdir(parents=True, exist_ok=True)
        Path(name).write_text(text.replace("5 pts: Fishing,", "5 pts: Fishng,") + "\n", encoding="utf-8")
    blocks = re.findall(r"```yaml\n(# (\S+)\n.*?)```", README, flags=re.S)
    found = {name: yaml.safe_load(text) for text, name in blocks}
    workflow = found[".github/workflows/rules.yml"]
    steps = [step["run"] for job in workflow["jobs"].values() for step in job["steps"] if "run" in step]
    runs = [shlex.split(step)[1:] for step in steps if step.startswith("rulesdsl ")]
    assert [args[0] for args in runs] == ["check", "fmt"]
    capsys.readouterr()
    assert main(runs[0]) == 1
    shown = re.search(r"```\n(::error .*?\n)```", README, flags=re.S)
    assert shown is not None and capsys.readouterr().out == shown.group(1)
    assert main(runs[1]) == 1  # the tour wrote its files by hand
    assert main(["fmt", "homebrew"]) == 0 and main(runs[1]) == 0
    offered = {hook["id"] for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
    config = found[".pre-commit-config.yaml"]
    assert {hook["id"] for repo in config["repos"] for hook in repo["hooks"]} == offered
