"""The parse cache: a shortcut that must never change a result."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulesdsl.pipeline import compile_paths
from rulesdsl.syntax import Parser

from .conftest import FIXTURES


def test_second_compile_parses_nothing_and_gives_the_same_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(tmp_path / "cache"))
    first = compile_paths([FIXTURES / "mini"])

    def no_parsing(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed again although the file did not change")

    monkeypatch.setattr(Parser, "parse_file", no_parsing)
    second = compile_paths([FIXTURES / "mini"])
    assert second.rulesets == first.rulesets
    assert second.diagnostics == first.diagnostics


def test_a_changed_file_is_parsed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "ruleset.rules").write_text('ruleset r { title: "R"  version: "1" }\n')
    (folder / "a.rules").write_text("trait Brave { type: die }\n")
    assert compile_paths([folder]).ok
    (folder / "a.rules").write_text("trait Brave { type: dei }\n")
    assert [d.code for d in compile_paths([folder]).diagnostics] == ["E210"]


def test_a_damaged_cache_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(cache))
    expected = compile_paths([FIXTURES / "mini"])
    for entry in (cache / "parsed").glob("*.entry"):
        entry.write_bytes(b"not an entry")
    assert compile_paths([FIXTURES / "mini"]).rulesets == expected.rulesets


def test_the_cache_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RULESDSL_CACHE_DIR", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert compile_paths([FIXTURES / "mini"]).ok
    assert not (tmp_path / "xdg").exists() and not (tmp_path / "home").exists()
