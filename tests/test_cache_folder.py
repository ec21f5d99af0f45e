"""Where the parse cache lives: a folder only the user can write, or no cache (and one warning) at all.

On a shared machine a cache others can write is a way to feed rulesdsl wrong results; a predictable
path in /tmp is one they can create first.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rulesdsl.compile.pipeline import Compilation, compile_paths
from rulesdsl.diagnostics import render_text, summary
from rulesdsl.syntax.parse import Parser

from .conftest import FIXTURES, ROOT

MINI = FIXTURES / "mini"


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def no_umask() -> Iterator[None]:
    """The most permissive umask: modes must come from rulesdsl, not from the user's settings."""
    previous = os.umask(0)
    yield
    os.umask(previous)


@pytest.fixture
def uncached(monkeypatch: pytest.MonkeyPatch) -> Compilation:
    with monkeypatch.context() as patch:
        patch.setenv("RULESDSL_CACHE_DIR", "off")
        return compile_paths([MINI])


def files_in(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if not p.is_dir())


@pytest.mark.usefixtures("no_umask")
def test_the_folders_it_makes_are_private_and_its_files_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RULESDSL_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "made" / "by" / "us"))
    before = mode(tmp_path)
    assert compile_paths([MINI]).ok
    folder = tmp_path / "made" / "by" / "us" / "rulesdsl"
    made = [tmp_path / "made", tmp_path / "made" / "by", tmp_path / "made" / "by" / "us", folder, folder / "parsed"]
    assert {p.name: oct(mode(p)) for p in made} == {p.name: "0o700" for p in made}
    assert mode(tmp_path) == before  # a folder that was already there is left as it was
    assert files_in(folder) and {oct(mode(p)) for p in files_in(folder)} == {"0o600"}


def test_the_default_folder_is_under_home_and_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RULESDSL_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert compile_paths([MINI]).ok
    assert mode(tmp_path / ".cache") == mode(tmp_path / ".cache" / "rulesdsl") == 0o700
    assert files_in(tmp_path / ".cache" / "rulesdsl")


def refused(compilation: Compilation, uncached: Compilation) -> str:
    """The one W006 warning; apart from it the result is exactly that of a run without the cache."""
    warnings = [d for d in compilation.diagnostics if d.code == "W006"]
    assert len(warnings) == 1
    assert warnings[0].severity == "warning" and warnings[0].pos is None and warnings[0].hint
    assert compilation.rulesets == uncached.rulesets
    assert [d for d in compilation.diagnostics if d.code != "W006"] == list(uncached.diagnostics)
    return warnings[0].message


@pytest.mark.parametrize("writable", [0o770, 0o707, 0o777, 0o1777], ids=["group", "others", "all", "like /tmp"])
def test_a_folder_others_can_write_is_not_used(
    writable: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uncached: Compilation
) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(writable)
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(folder))
    assert "can be written by other users" in refused(compile_paths([MINI]), uncached)
    assert list(folder.iterdir()) == []


def test_a_parsed_folder_others_can_write_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uncached: Compilation
) -> None:
    folder = tmp_path / "cache"
    (folder / "parsed").mkdir(parents=True)
    (folder / "parsed").chmod(0o777)
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(folder))
    assert "parsed can be written by other users" in refused(compile_paths([MINI]), uncached)
    assert list((folder / "parsed").iterdir()) == []


def test_a_folder_of_another_user_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uncached: Compilation
) -> None:
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    owner = folder.stat().st_uid
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(folder))
    monkeypatch.setattr(os, "geteuid", lambda: owner + 1)  # as if someone else ran rulesdsl
    assert "belongs to another user" in refused(compile_paths([MINI]), uncached)
    assert list(folder.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving files away needs root")
@pytest.mark.parametrize("whose", ["link", "target"])
def test_a_symbolic_link_another_user_controls_is_not_used(
    whose: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uncached: Compilation
) -> None:
    target = tmp_path / "target"
    target.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(target)
    os.chown(target if whose == "target" else link, 4242, 4242, follow_symlinks=False)
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(link))
    message = refused(compile_paths([MINI]), uncached)
    assert ("another user made" if whose == "link" else "to a folder of another user") in message
    assert list(target.iterdir()) == []


def test_a_symbolic_link_to_a_shared_folder_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uncached: Compilation
) -> None:
    shared = tmp_path / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    link = tmp_path / "cache"
    link.symlink_to(shared)
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(link))
    assert "is a symbolic link to a folder others can write" in refused(compile_paths([MINI]), uncached)
    assert list(shared.iterdir()) == []


def test_a_symbolic_link_to_a_private_folder_of_ours_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    (tmp_path / "cache").symlink_to(target)
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(tmp_path / "cache"))
    assert compile_paths([MINI]).diagnostics == ()
    assert files_in(target / "parsed")


@pytest.mark.parametrize("what", ["a file", "a link to nothing"])
def test_something_else_where_the_folder_belongs_is_not_used(
    what: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uncached: Compilation
) -> None:
    place = tmp_path / "cache"
    if what == "a file":
        place.write_text("mine")
    else:
        place.symlink_to(tmp_path / "nothing")
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(place))
    refused(compile_paths([MINI]), uncached)
    assert not (tmp_path / "nothing").exists()


def test_the_warning_as_people_see_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(folder))
    result = compile_paths([MINI])
    cache_only = [d for d in result.diagnostics if d.code == "W006"]
    shown = render_text(cache_only, result.sources) + summary(cache_only) + "\n"
    assert shown.replace(str(folder), "<cache>") == (
        "warning: not using the parse cache in <cache>: it can be written by other users [W006]\n"
        "  hint: anyone who can write there could change what rulesdsl reads; make it a folder only you can "
        "write (chmod 700 <cache>), set RULESDSL_CACHE_DIR to another folder, or to 'off'\n"
        "0 errors, 1 warning\n"
    )
    assert "| W006 |" in (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")


def test_the_warning_reaches_the_command_line_and_the_check_still_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., tuple[int, str, str]]
) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(folder))
    code, out, err = cli("check", str(MINI))
    assert code == 0
    assert "[W006]" in out + err


def test_a_folder_that_cannot_be_made_means_no_cache_and_nothing_written_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uncached: Compilation
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    shared_tmp = tmp_path / "tmp"
    shared_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(shared_tmp))
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(blocked / "cache"))
    Parser()  # the parser is made once per process: make one here, in these conditions
    result = compile_paths([MINI])
    assert result.rulesets == uncached.rulesets and result.diagnostics == uncached.diagnostics
    assert list(shared_tmp.iterdir()) == []


def test_making_the_parser_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lark's grammar cache is a pickle (loading it can run code): the parser does not keep one anywhere."""
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    Parser()
    assert files_in(tmp_path) == []


def test_turned_off_there_is_no_warning_and_no_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RULESDSL_CACHE_DIR", "off")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert compile_paths([MINI]).diagnostics == ()
    assert not (tmp_path / "home").exists()
