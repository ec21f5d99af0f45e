"""The command line: commands, exit codes, output formats."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from rulesdsl import __version__

from .conftest import FIXTURES, ROOT, write_ruleset

Cli = Callable[..., tuple[int, str, str]]


def test_version(cli: Cli) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "rulesdsl", "--version"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0 and result.stdout.strip() == f"rulesdsl {__version__}"


def test_check_ok(cli: Cli) -> None:
    code, out, err = cli("check", str(FIXTURES / "mini"))
    assert code == 0 and out.startswith("ok (mini: 22 entities)") and err == ""


def test_check_with_errors_exits_1_and_prints_each_once(cli: Cli, tmp_path: Path) -> None:
    write_ruleset(tmp_path / "r", {"a.rules": "trait A { type: die }\ntrait B { tpye: die }\ntrait C { type: dei }\n"})
    code, out, err = cli("check", str(tmp_path / "r"))
    assert code == 1 and out == ""
    assert err.count("error:") == 2 and "2 errors, 0 warnings" in err
    assert "Traceback" not in err


def test_usage_errors_exit_2(cli: Cli, tmp_path: Path) -> None:
    code, _, err = cli("check", str(tmp_path / "missing"))
    assert code == 2 and "no such file or folder" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli("check", str(empty))[0] == 2
    result = subprocess.run(
        [sys.executable, "-m", "rulesdsl", "frobnicate"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 2


def test_stray_file_outside_a_ruleset(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "loose.rules").write_text("trait A { type: die }\n")
    code, _, err = cli("check", str(tmp_path))
    assert code == 1 and "is not inside a ruleset" in err


def test_json_format(cli: Cli, tmp_path: Path) -> None:
    write_ruleset(tmp_path / "r", {"a.rules": "trait B { tpye: die }\n"})
    code, out, _ = cli("check", "--format", "json", str(tmp_path / "r"))
    assert code == 1
    data = json.loads(out)
    assert data["diagnostics"][0]["code"] == "E210" and data["diagnostics"][0]["line"] == 1


def test_export_shape(cli: Cli) -> None:
    code, out, _ = cli("export", str(FIXTURES / "mini"))
    assert code == 0
    data = json.loads(out)
    assert list(data) == ["compiler", "format", "rulesets"]
    assert sorted(data["rulesets"]["mini"]["entities"]) == [
        "attribute",
        "formula",
        "lifepath",
        "mechanic",
        "setting",
        "skill",
        "spell",
        "stock",
        "table",
        "trait",
    ]
    lifepaths = data["rulesets"]["mini"]["entities"]["lifepath"]
    assert lifepaths["farmer"]["skills"]["items"] == ["farming", "quote_and_back"]


def test_default_path_is_rules(cli: Cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    write_ruleset(tmp_path / "rules" / "demo", {"a.rules": "trait A { type: die }\n"})
    code, out, _ = cli("check")
    assert code == 0 and "demo: 1 entities" in out


def test_console_script_is_declared_and_exits_with_mains_code(tmp_path: Path) -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert 'rulesdsl = "rulesdsl.tools.cli:run"' in text
    # run() is main() and an exit without the last collection: the code is main's
    ran = subprocess.run(
        [sys.executable, "-c", "from rulesdsl.tools.cli import run; run()", "check", str(tmp_path / "nothing")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 2, ran.stderr


def test_a_command_that_ends_runs_without_the_collector_and_leaves_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`check` and the other commands that end run with the cyclic collector off and leave by os._exit
    (no collection, no teardown of the ruleset at exit); `lsp` and `serve`, which live on, keep it."""
    from rulesdsl.tools import cli

    seen: list[bool] = []

    def fake_main(argv: list[str]) -> int:
        seen.append(gc.isenabled())
        return 4

    def fake_exit(code: int) -> None:
        raise SystemExit(("os._exit", code))

    monkeypatch.setattr(cli, "main", fake_main)
    monkeypatch.setattr(cli, "_until_exit", None)  # run() sets it: put back after the test
    monkeypatch.setattr(os, "_exit", fake_exit)
    try:
        for command, leaves in (("check", ("os._exit", 4)), ("lsp", 4), ("serve", 4)):
            gc.enable()
            monkeypatch.setattr(sys, "argv", ["rulesdsl", command])
            with pytest.raises(SystemExit) as left:
                cli.run()
            assert left.value.code == leaves, command
    finally:
        gc.enable()
    assert seen == [False, True, True]
