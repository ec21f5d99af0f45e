"""The README's tour works as written: its homebrew ruleset checks, builds and behaves as shown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rulesdsl.compile.pipeline import compile_paths
from rulesdsl.targets.build import render_all, write_output

from .conftest import ROOT, run_python

README = (ROOT / "README.md").read_text(encoding="utf-8")


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
assert marsh.TABLES["catch"].lookup(11).catch == "A giant pike"
assert marsh.TABLES["catch"].roll(random.Random(1)) == marsh.TABLES["catch"].roll(random.Random(1))
assert marsh.requirement_met("eel_catcher", ["born_to_the_reeds"], age=30) is True
assert marsh.requirement_met("eel_catcher", ["born_to_the_reeds"]) is None
assert marsh.requirement_met("eel_catcher", ["born_to_the_reeds"], age=50) is False
assert marsh.unmet_requirements("eel_catcher", []) == ["requires: Born to the Reeds and not age > 40"]
skills = marsh.LIFEPATHS["eel_catcher"].skills
assert repr(skills) == "Choices(points=5, options=(('fishing',), ('trapping', 'swimming')))"
print("ok")
"""
    ran = run_python(code, tmp_path / "homebrew-out")
    assert ran.returncode == 0, ran.stderr
    assert "marsh.TABLES[\"catch\"].lookup(11).catch            # 'A giant pike'" in README


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
