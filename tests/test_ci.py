"""What plugs rulesdsl into CI and review: `--format github` annotations, and the pre-commit hooks."""

from __future__ import annotations

import re
import shlex
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from rulesdsl.diagnostics import Diagnostic, Position, error, render_github, warning

from .conftest import ROOT, write_ruleset

Cli = Callable[..., tuple[int, str, str]]

# A workflow command as GitHub reads it: `::command key=value,key=value::message`, one line.
COMMAND = re.compile(r"^::(error|warning) ((?:[A-Za-z]+=[^,:\r\n]*)(?:,[A-Za-z]+=[^,:\r\n]*)*)::([^\r\n]*)$")


def parse(line: str) -> tuple[str, dict[str, str], str]:
    """A workflow command's parts, unescaped as the runner unescapes them."""
    found = COMMAND.match(line)
    assert found, f"not a workflow command: {line!r}"

    def unescape(text: str) -> str:
        for escaped, plain in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
            text = text.replace(escaped, plain)
        return text

    properties = dict(item.split("=", 1) for item in found.group(2).split(","))
    return found.group(1), {k: unescape(v) for k, v in properties.items()}, unescape(found.group(3))


def test_annotations_escape_as_github_reads_them() -> None:
    pos = Position("odd, name:1%.rules", 3, 7, 3, 12)
    diagnostics = [
        Diagnostic("error", "E303", "no skill named 'A%B'\r\nsecond line", pos, "did you mean 'a:b, c'?", ("a note",)),
        warning("W405", "50% of it", None),
    ]
    out = render_github(diagnostics)
    assert out == (
        "::error file=odd%2C name%3A1%25.rules,line=3,col=7,endLine=3,endColumn=12,title=E303::"
        "no skill named 'A%25B'%0D%0Asecond line%0Anote: a note%0Ahint: did you mean 'a:b, c'?\n"
        "::warning title=W405::50%25 of it\n"
    )
    lines = out.splitlines()
    assert parse(lines[0]) == (
        "error",
        {"file": "odd, name:1%.rules", "line": "3", "col": "7", "endLine": "3", "endColumn": "12", "title": "E303"},
        "no skill named 'A%B'\r\nsecond line\nnote: a note\nhint: did you mean 'a:b, c'?",
    )
    assert parse(lines[1]) == ("warning", {"title": "W405"}, "50% of it")
    # a position with no extent says no end; `:` and `,` are escaped in properties only
    point = render_github([error("E101", "unexpected ':', see", Position("a.rules", 2, 5, 2, 5))])
    assert point == "::error file=a.rules,line=2,col=5,title=E101::unexpected ':', see\n"


@pytest.mark.parametrize("command", ["check", "build"])
def test_check_and_build_annotate_every_problem(cli: Cli, tmp_path: Path, command: str) -> None:
    folder = write_ruleset(
        tmp_path / "r",
        {"a.rules": 'trait B { tpye: die }\nkind spell "Spells" { level: int in 0..9 }\n'},
    )
    extra = ["--out", str(tmp_path / "out")] if command == "build" else []
    code, out, err = cli(command, "--format", "github", str(folder), *extra)
    assert code == 1
    annotations = [parse(line) for line in out.splitlines() if line.startswith("::")]
    assert [(kind, props["title"]) for kind, props, _ in annotations] == [("error", "E210"), ("warning", "W405")]
    _, where, message = annotations[0]
    assert (where["file"], where["line"], where["col"]) == (f"{folder}/a.rules", "1", "11")
    assert message == "a trait has no field 'tpye'\nhint: did you mean 'type'?"
    assert "1 error, 1 warning" in err and not (tmp_path / "out").exists()


def test_a_clean_check_annotates_nothing(cli: Cli, tmp_path: Path) -> None:
    folder = write_ruleset(tmp_path / "r", {"a.rules": "trait B { type: die }\n"})
    code, out, _ = cli("check", "--format", "github", str(folder))
    assert code == 0 and not [line for line in out.splitlines() if line.startswith("::")]


HOOKS = ROOT / ".pre-commit-hooks.yaml"


def hooks() -> dict[str, dict[str, Any]]:
    listed = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))
    assert isinstance(listed, list)
    return {hook["id"]: hook for hook in listed}


def test_pre_commit_hooks_are_declared_as_pre_commit_reads_them() -> None:
    found = hooks()
    assert set(found) == {"rulesdsl-check", "rulesdsl-fmt"}
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    for hook in found.values():
        assert {"id", "name", "entry", "language"} <= set(hook)
        assert hook["language"] == "python"  # pre-commit installs this repository, scripts and all
        assert shlex.split(str(hook["entry"]))[0] in scripts
        files = re.compile(str(hook["files"]))
        assert files.search("homebrew/marsh/reed.rules") and files.search("ruleset.rules")
        assert not files.search("notes.rules.txt") and not files.search("rules/README.md")
    # a ruleset is checked whole (a file can break another, a deleted one is never passed): no file names
    assert found["rulesdsl-check"]["pass_filenames"] is False
    assert found["rulesdsl-fmt"].get("pass_filenames", True) is True


def run_hook(cli: Cli, hook_id: str, files: list[str]) -> int:
    """The hook as pre-commit runs it: its entry, its args, then the staged files if it takes them."""
    hook = hooks()[hook_id]
    argv = shlex.split(hook["entry"])[1:] + [str(a) for a in hook.get("args", [])]
    if hook.get("pass_filenames", True):
        argv += files
    return cli(*argv)[0]


def test_pre_commit_hooks_run(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_ruleset(tmp_path / "rules" / "demo", {"a.rules": "trait B { type: die }\n"})
    staged = ["rules/demo/a.rules"]
    assert run_hook(cli, "rulesdsl-check", staged) == 0
    assert run_hook(cli, "rulesdsl-fmt", staged) == 0
    (tmp_path / "rules" / "demo" / "a.rules").write_text("trait  B {type: die}\n", encoding="utf-8")
    assert run_hook(cli, "rulesdsl-fmt", staged) == 1
    (tmp_path / "rules" / "demo" / "b.rules").write_text("trait C { type: dye }\n", encoding="utf-8")
    assert run_hook(cli, "rulesdsl-check", staged) == 1  # b.rules is not staged, and still checked
