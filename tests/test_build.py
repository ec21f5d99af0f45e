"""The build: deterministic output, atomic replacement, staleness detection."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from rulesdsl.build import MARKER, OutputError, render_all, stale_files, write_output
from rulesdsl.pipeline import compile_paths

from .conftest import FIXTURES


def digest(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_two_builds_are_byte_identical(tmp_path: Path, cli: Callable[..., tuple[int, str, str]]) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    assert cli("build", str(FIXTURES / "mini"), "--out", str(first))[0] == 0
    assert cli("build", str(FIXTURES / "mini"), "--out", str(second))[0] == 0
    assert digest(first) == digest(second)
    assert len(digest(first)) > 10


def test_rendering_does_not_depend_on_file_order(tmp_path: Path) -> None:
    result = compile_paths([FIXTURES / "mini"])
    reordered = compile_paths([FIXTURES / "mini" / "city.rules", FIXTURES / "mini"])
    assert render_all(result.rulesets) == render_all(reordered.rulesets)


def test_check_reports_stale_and_fresh(tmp_path: Path, cli: Callable[..., tuple[int, str, str]]) -> None:
    out = tmp_path / "gen"
    assert cli("build", str(FIXTURES / "mini"), "--out", str(out))[0] == 0
    assert cli("build", str(FIXTURES / "mini"), "--out", str(out), "--check")[0] == 0
    (out / "mini" / "tables.py").write_text("# edited by hand\n")
    (out / "stray.txt").write_text("left over\n")
    code, _, err = cli("build", str(FIXTURES / "mini"), "--out", str(out), "--check")
    assert code == 1
    assert "mini/tables.py" in err and "stray.txt" in err
    assert (out / "stray.txt").exists(), "--check must write nothing"


def test_bytecode_caches_do_not_make_output_stale(tmp_path: Path) -> None:
    files = render_all(compile_paths([FIXTURES / "mini"]).rulesets)
    out = tmp_path / "gen"
    write_output(out, files)
    (out / "mini" / "__pycache__").mkdir()
    (out / "mini" / "__pycache__" / "tables.cpython-311.pyc").write_bytes(b"\0")
    assert stale_files(out, files) == []


def test_failed_build_leaves_output_untouched(
    tmp_path: Path, cli: Callable[..., tuple[int, str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "gen"
    assert cli("build", str(FIXTURES / "mini"), "--out", str(out))[0] == 0
    before = digest(out)
    broken = tmp_path / "broken"
    (broken).mkdir()
    (broken / "ruleset.rules").write_text('ruleset mini { title: "x"  version: "1" }\n')
    (broken / "a.rules").write_text("trait T { type: nonsense }\n")
    code, _, err = cli("build", str(broken), "--out", str(out))
    assert code == 1 and "E210" in err
    assert digest(out) == before


def test_write_failure_midway_keeps_the_old_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "gen"
    write_output(out, {MARKER: "x", "a.txt": "old"})
    import builtins

    real_open = builtins.open
    calls = {"n": 0}

    def failing_open(file, mode="r", *args, **kwargs):  # type: ignore[no-untyped-def]
        if "w" in mode:
            calls["n"] += 1
            if calls["n"] == 2:
                raise OSError(28, "No space left on device")
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", failing_open)
    with pytest.raises(OutputError):
        write_output(out, {MARKER: "x", "a.txt": "new", "b.txt": "new"})
    monkeypatch.undo()
    assert (out / "a.txt").read_text() == "old"
    assert not (out / "b.txt").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["gen"], "no staging folder left behind"


def test_refuses_to_replace_a_folder_it_did_not_write(tmp_path: Path, cli: Callable[..., tuple[int, str, str]]) -> None:
    out = tmp_path / "precious"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    code, _, err = cli("build", str(FIXTURES / "mini"), "--out", str(out))
    assert code == 2 and "refusing" in err
    assert (out / "thesis.tex").read_text() == "years of work"
