"""What the command line feels like: explain, colour, --max-errors, --strict, JSON usage errors, the site's path."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from rulesdsl.compile.pipeline import compile_paths
from rulesdsl.tools.explain import explanations

from .conftest import FIXTURES, ROOT, write_ruleset
from .test_diagnostics import codes_in_source

Cli = Callable[..., tuple[int, str, str]]
EXAMPLES = sorted(
    (code, e.wrong.text, e.right.text)
    for code, e in explanations().items()
    if e.wrong is not None and e.right is not None and e.wrong.language == "rules" and e.right.language == "rules"
)


def test_every_code_has_an_explanation_with_a_wrong_and_a_right_example() -> None:
    known = explanations()
    missing = sorted(code for code in codes_in_source() if code not in known)
    assert missing == []
    incomplete = sorted(code for code, e in known.items() if e.wrong is None or e.right is None or not e.meaning)
    assert incomplete == []
    assert len(EXAMPLES) > 40  # most are real files the compiler is run on below


@pytest.mark.parametrize(("code", "wrong", "right"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_the_wrong_example_gives_the_code_and_the_right_one_does_not(
    code: str, wrong: str, right: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, text, expected in (("wrong", wrong, True), ("right", right, False)):
        folder = write_ruleset(tmp_path / name / "demo", {"a.rules": text + "\n"})
        diagnostics = compile_paths([folder]).diagnostics
        found = {d.code for d in diagnostics}
        assert (code in found) == expected, f"{name}: {sorted(found)}"
        # every error and warning says how to fix it: the wrong example's, its own code's first
        assert [f"{d.code}: {d.message}" for d in diagnostics if not d.hint] == []
        if not expected:  # the right example is right: it checks clean of every error, not only of this one
            assert [d.message for d in diagnostics if d.severity == "error"] == []


def test_explain_prints_meaning_and_examples(cli: Cli) -> None:
    code, out, _ = cli("explain", "e303")
    assert code == 0
    assert out.startswith("E303 (error, semantic): a reference that names nothing of the right kind")
    assert "Wrong:\n" in out and "skills: 2 pts: Farmng" in out and "Right:\n" in out
    code, out, _ = cli("explain", "E303", "--format", "json")
    assert json.loads(out)["right"].count("Farming") == 2
    code, out, _ = cli("explain", "E104")
    assert code == 0 and "(see Limits)" in out and "](#" not in out  # a Markdown link reads as its words
    code, _, err = cli("explain", "E999")
    assert code == 2 and "no diagnostic code 'E999'" in err


def test_usage_errors_honour_json(cli: Cli) -> None:
    code, out, err = cli("check", "--format", "json", "--frobnicate")
    assert code == 2 and err == ""
    [problem] = json.loads(out)["diagnostics"]
    assert problem["code"] == "usage" and "--frobnicate" in problem["message"]
    code, out, _ = cli("check", "--format=json", "no/such/folder")
    assert code == 2 and "no such file or folder" in json.loads(out)["diagnostics"][0]["message"]
    code, out, err = cli("check", "--frobnicate")
    assert code == 2 and out == "" and "rulesdsl: error:" in err


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rulesdsl", *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
    )


def test_colour_only_when_asked_or_on_a_terminal_without_no_color(tmp_path: Path) -> None:
    folder = write_ruleset(tmp_path / "r", {"a.rules": "trait B { tpye: die }\n"})
    piped = run("check", str(folder))
    assert piped.returncode == 1 and "\x1b[" not in piped.stderr
    forced = run("check", "--color", "always", str(folder))
    assert "\x1b[1;31merror:\x1b[0m" in forced.stderr
    command = [sys.executable, "-m", "rulesdsl", "check", str(folder)]
    script = f"import os, pty, sys; sys.exit(os.waitstatus_to_exitcode(pty.spawn({command!r})))"
    on_terminal = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert "\x1b[1;31m" in on_terminal.stdout
    no_color = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, env={**os.environ, "NO_COLOR": "1"}
    )
    assert "error:" in no_color.stdout and "\x1b[" not in no_color.stdout


def test_max_errors_groups_the_rest_by_code(cli: Cli, tmp_path: Path) -> None:
    typos = "".join(f"trait T{i} {{ tpye: die }}\n" for i in range(500))
    folder = write_ruleset(tmp_path / "r", {"a.rules": typos + "triat X { }\n"})
    code, _, err = cli("check", str(folder))
    assert code == 1
    assert err.count("[E210]") == 50
    assert "... and 451 more (E210 \u00d7450, E200 \u00d71); --max-errors 0 shows them all" in err
    assert len(err.splitlines()) < 260  # not 2,001 lines
    code, _, err = cli("check", "--max-errors", "3", str(folder))
    assert err.count("[E210]") == 3 and "... and 498 more" in err
    code, _, err = cli("check", "--max-errors", "0", str(folder))
    assert err.count("[E210]") == 500


def test_strict_turns_warnings_into_failures(cli: Cli, tmp_path: Path) -> None:
    folder = write_ruleset(tmp_path / "r", {"a.rules": 'kind spell "Spells" { level: int in 0..9 }\n'})
    code, _, err = cli("check", str(folder))
    assert code == 0 and "[W405]" in err
    code, _, err = cli("check", "--strict", str(folder))
    assert code == 1 and "[W405]" in err and "--strict" in err


def test_build_ends_with_where_the_site_is(cli: Cli, tmp_path: Path) -> None:
    code, out, _ = cli("build", str(FIXTURES / "mini"), "--out", str(tmp_path / "out"))
    assert code == 0
    assert out.splitlines()[-1] == f"reference: {tmp_path / 'out' / 'site' / 'index.html'}"
    assert (tmp_path / "out" / "site" / "index.html").is_file()


def test_export_yaml_is_the_export() -> None:
    import yaml

    as_yaml = run("export", "--format", "yaml", str(ROOT / "rules" / "witcher"))
    as_json = run("export", str(ROOT / "rules" / "witcher"))
    assert as_yaml.returncode == 0 and yaml.safe_load(as_yaml.stdout) == json.loads(as_json.stdout)
    assert not re.search(r"!!python", as_yaml.stdout)
