"""Reading sources from a hostile file system: links out of a ruleset, bad encodings, huge files, pipes."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from rulesdsl.compile.pipeline import Compilation, compile_paths
from rulesdsl.diagnostics import Diagnostic, render_json, render_text
from rulesdsl.syntax import source

from .conftest import write_ruleset

Cli = Callable[..., tuple[int, str, str]]
SECRET = "trait Leaked { type: die }  # s3cr3t-token\n"


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clean ruleset at rules/demo (the working folder is tmp_path) and a secret file outside it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "secret.rules").write_text(SECRET)
    return write_ruleset(tmp_path / "rules" / "demo", {"a.rules": "trait Brave { type: die }\n"})


def everything_shown(result: Compilation) -> str:
    """All a user or a program could see of a compilation: diagnostics (both formats), sources, documents."""
    documents = json.dumps([r.documents() for r in result.rulesets])
    shown = render_text(result.diagnostics, result.sources) + render_json(result.diagnostics)
    return shown + str(result.sources) + documents


def codes(result: Compilation) -> list[str]:
    return [d.code for d in result.diagnostics]


def the(code: str, result: Compilation) -> Diagnostic:
    [found] = [d for d in result.diagnostics if d.code == code]
    return found


def test_a_file_linked_from_outside_is_refused_unread(demo: Path) -> None:
    (demo / "evil.rules").symlink_to(demo.parent.parent / "elsewhere" / "secret.rules")
    result = compile_paths([Path("rules")])
    assert codes(result) == ["E006"]
    problem = the("E006", result)
    assert problem.pos is not None and problem.pos.file == "rules/demo/evil.rules"
    assert "elsewhere/secret.rules" in problem.message and problem.hint
    assert "s3cr3t" not in everything_shown(result) and "leaked" not in everything_shown(result)


def test_a_link_to_etc_passwd_is_never_quoted(demo: Path, cli: Cli) -> None:
    (demo / "passwd.rules").symlink_to("/etc/passwd")
    code, out, err = cli("check", "rules")
    assert code == 1 and "[E006]" in err and "/etc/passwd" in err
    assert "root:" not in out + err, "the file's content must never be echoed"


def test_a_folder_linked_from_outside_is_refused_unread(demo: Path) -> None:
    (demo / "more").symlink_to(demo.parent.parent / "elsewhere", target_is_directory=True)
    result = compile_paths([Path("rules")])
    assert codes(result) == ["E006"]
    assert "rules/demo/more" in the("E006", result).message
    assert "s3cr3t" not in everything_shown(result)


def test_naming_the_outward_link_itself_is_refused_too(demo: Path) -> None:
    (demo / "evil.rules").symlink_to(demo.parent.parent / "elsewhere" / "secret.rules")
    result = compile_paths([Path("rules/demo/evil.rules")])
    assert codes(result) == ["E006"] and "s3cr3t" not in everything_shown(result)


def test_an_outward_manifest_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "manifest.txt").write_text('ruleset stolen { title: "s3cr3t"  version: "1" }\n')
    folder = tmp_path / "rules" / "demo"
    folder.mkdir(parents=True)
    (folder / "ruleset.rules").symlink_to(tmp_path / "manifest.txt")
    result = compile_paths([Path("rules")])
    assert codes(result) == ["E006"] and result.rulesets == ()
    assert "s3cr3t" not in everything_shown(result)


def test_links_that_stay_inside_the_ruleset_are_fine(demo: Path) -> None:
    (demo / "shared").mkdir()
    (demo / "shared" / "common.txt").write_text("trait Shared { type: die }\n")
    (demo / "common.rules").symlink_to(Path("shared") / "common.txt")  # relative, inside
    (demo / "alias.rules").symlink_to(demo / "a.rules")  # the same file twice must not define things twice
    (demo / "again").symlink_to(demo / "shared", target_is_directory=True)
    (demo / "loop").symlink_to(demo, target_is_directory=True)  # a cycle must not hang the walk
    result = compile_paths([Path("rules")])
    assert result.diagnostics == ()
    [ruleset] = result.rulesets
    assert sorted(ruleset.documents()["trait"]) == ["brave", "shared"]
    assert [path for path, _ in ruleset.sources] == ["a.rules", "common.rules", "ruleset.rules"]


def test_discovery_does_not_depend_on_links_between_rulesets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A linked ruleset folder inside a folder of rulesets is not entered (as Python 3.11's rglob did not)."""
    monkeypatch.chdir(tmp_path)
    write_ruleset(tmp_path / "rules" / "demo", {"a.rules": "trait Brave { type: die }\n"})
    write_ruleset(tmp_path / "other" / "demo2", {"b.rules": "trait Bold { type: die }\n"}, "ruleset demo2 { }\n")
    (tmp_path / "rules" / "linked").symlink_to(tmp_path / "other" / "demo2", target_is_directory=True)
    result = compile_paths([Path("rules")])
    assert [r.id for r in result.rulesets] == ["demo"] and result.diagnostics == ()


def test_not_utf8_points_at_the_first_bad_byte(demo: Path) -> None:
    (demo / "b.rules").write_bytes(b"trait Fine { type: die }\n\ntrait Caf\xe9 { type: die }\ntrait \xff { }\n")
    result = compile_paths([Path("rules")])
    problem = the("E002", result)
    assert problem.pos is not None
    assert (problem.pos.file, problem.pos.line, problem.pos.column) == ("rules/demo/b.rules", 3, 10)
    assert codes(result) == ["E002"], "a file that cannot be decoded is not compiled"
    rendered = render_text(result.diagnostics, result.sources).splitlines()
    assert rendered[0].startswith("rules/demo/b.rules:3:10: error: ") and "0xe9" in rendered[0]
    assert rendered[1] == " 3 | trait Caf\ufffd { type: die }"
    assert rendered[2] == "   |          ^"


def test_not_utf8_column_counts_characters_after_a_byte_order_mark(demo: Path) -> None:
    (demo / "b.rules").write_bytes(b"\xef\xbb\xbftrait \xc3\xa9t\xc3\xa9 \x80")
    problem = the("E002", compile_paths([Path("rules")]))
    assert problem.pos is not None and (problem.pos.line, problem.pos.column) == (1, 11)


def test_a_manifest_that_is_not_utf8_is_reported_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_ruleset(tmp_path / "rules" / "demo", {"a.rules": "trait Brave { type: die }\n"})
    (tmp_path / "rules" / "demo" / "ruleset.rules").write_bytes(b'ruleset demo { title: "Caf\xe9" }\n')
    assert codes(compile_paths([Path("rules")])) == ["E002"]


def test_a_huge_file_is_refused(demo: Path) -> None:
    with open(demo / "dump.rules", "wb") as handle:
        handle.truncate(100 * 1024 * 1024)  # sparse: costs no disk
    result = compile_paths([Path("rules")])
    problem = the("E007", result)
    assert codes(result) == ["E007"] and "100.0 MiB" in problem.message and "4 MiB" in problem.message
    assert problem.pos is not None and problem.pos.file == "rules/demo/dump.rules"


def test_the_size_limit_is_inclusive(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "trait Wide { type: die }" + " " * 80 + "\n"  # the largest file of the ruleset
    (demo / "b.rules").write_text(text)
    monkeypatch.setattr(source, "MAX_SOURCE_BYTES", len(text))
    assert codes(compile_paths([Path("rules")])) == []
    (demo / "b.rules").write_text(text + " ")
    assert codes(compile_paths([Path("rules")])) == ["E007"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_does_not_hang_the_build(demo: Path) -> None:
    os.mkfifo(demo / "pipe.rules")
    result = compile_paths([Path("rules")])
    assert codes(result) == ["E003"] and "not a regular file" in result.diagnostics[0].message
