"""The build: deterministic output, atomic replacement, staleness detection."""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rulesdsl.compile.pipeline import compile_paths
from rulesdsl.targets.build import MARKER, OutputError, render_all, stale_files, write_output

from .conftest import FIXTURES

Cli = Callable[..., tuple[int, str, str]]


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


def files_by_inode(folder: Path) -> dict[str, tuple[int, int]]:
    """Each file's inode and modification time: what tells a file rewritten from one left alone."""
    return {
        p.relative_to(folder).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in folder.rglob("*")
        if p.is_file()
    }


def test_a_rebuild_with_nothing_changed_writes_nothing(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "gen"
    assert cli("build", str(FIXTURES / "mini"), "--out", str(out))[0] == 0
    before = files_by_inode(out)
    code, stdout, _ = cli("build", str(FIXTURES / "mini"), "--out", str(out))
    assert code == 0 and "nothing written" in stdout
    assert files_by_inode(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["gen"]


def test_a_rebuild_rewrites_only_the_files_that_changed(tmp_path: Path, cli: Cli) -> None:
    source, out, fresh = tmp_path / "src" / "mini", tmp_path / "gen", tmp_path / "fresh"
    shutil.copytree(FIXTURES / "mini", source)
    assert cli("build", str(source), "--out", str(out))[0] == 0
    before, old = files_by_inode(out), digest(out)
    with open(source / "city.rules", "a", encoding="utf-8") as handle:
        handle.write('trait "Newcomer" { type: character  cost: 1 }\n')
    code, stdout, _ = cli("build", str(source), "--out", str(out))
    new = digest(out)
    changed = {name for name in new if old.get(name) != new[name]}
    assert code == 0 and f"wrote {len(changed)} files" in stdout
    assert 0 < len(changed) < len(new), "some files change (every header names the sources digest), not all"
    after = files_by_inode(out)
    assert {name for name in after if after[name] != before.get(name)} == changed
    assert cli("build", str(source), "--out", str(fresh))[0] == 0
    assert digest(fresh) == new, "an incremental build writes what a fresh one does"


def test_where_hard_links_fail_unchanged_files_are_copied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = render_all(compile_paths([FIXTURES / "mini"]).rulesets)
    out = tmp_path / "gen"
    write_output(out, files)
    before = files_by_inode(out)

    def no_links(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    changed = {**files, "site/index.html": files["site/index.html"] + "<!-- changed -->\n"}
    assert write_output(out, changed) == 1
    assert digest(out) == {name: hashlib.sha256(text.encode()).hexdigest() for name, text in changed.items()}
    after = files_by_inode(out)
    assert all(after[name][1] == before[name][1] for name in files if name != "site/index.html"), "copies keep mtimes"


def refuses(cli: Cli, out: Path | str, *sources: Path) -> str:
    """Build into `out`: it must be refused as a usage error, in one line; returns the line."""
    code, stdout, err = cli("build", *[str(s) for s in sources or [FIXTURES / "mini"]], "--out", str(out))
    assert code == 2, err
    assert stdout == "" and err.count("\n") == 1 and err.startswith("rulesdsl: error: "), err
    return err


def test_an_out_whose_parent_is_missing_is_refused_and_nothing_is_created(tmp_path: Path, cli: Cli) -> None:
    err = refuses(cli, tmp_path / "missing" / "deeper" / "gen")
    assert "does not exist" in err
    assert list(tmp_path.iterdir()) == []


def test_an_out_behind_or_on_a_file_is_refused(tmp_path: Path, cli: Cli) -> None:
    (tmp_path / "a-file").write_text("mine")
    assert "is a file, not a folder" in refuses(cli, tmp_path / "a-file" / "gen")
    assert "is a file, not a folder" in refuses(cli, tmp_path / "a-file" / "deeper" / "gen")
    assert "is a file, not a folder" in refuses(cli, tmp_path / "a-file")
    assert (tmp_path / "a-file").read_text() == "mine" and [p.name for p in tmp_path.iterdir()] == ["a-file"]


def test_an_out_that_is_a_link_is_refused(tmp_path: Path, cli: Cli) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "gen").symlink_to(tmp_path / "real", target_is_directory=True)
    assert "symbolic link" in refuses(cli, tmp_path / "gen")
    assert list((tmp_path / "real").iterdir()) == []


def test_an_out_overlapping_the_sources_is_refused(tmp_path: Path, cli: Cli) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(FIXTURES / "mini", rules / "mini")
    before = digest(tmp_path)
    assert "inside the sources" in refuses(cli, rules / "mini" / "gen", rules / "mini")
    assert "inside the sources" in refuses(cli, rules / "mini" / "deeper" / "gen", rules / "mini" / "city.rules")
    assert "inside the sources" in refuses(cli, rules / "gen", rules)
    assert "is one of the sources" in refuses(cli, rules / "mini", rules / "mini")
    assert "is one of the sources" in refuses(cli, rules / "mini" / "city.rules", rules / "mini" / "city.rules")
    assert "holds the sources" in refuses(cli, tmp_path, rules)
    assert digest(tmp_path) == before and sorted(p.name for p in tmp_path.iterdir()) == ["rules"]


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A folder nobody can write in, this test's user included (chmod; for root, the immutable attribute)."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    os.chmod(folder, 0o555)
    undo = ["chmod", "755", str(folder)]
    root_ignores_modes = _writable(folder) and shutil.which("chattr")
    if root_ignores_modes and subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0:
        undo = ["chattr", "-i", str(folder)]
    try:
        if _writable(folder):
            pytest.skip("cannot make a folder read-only here")
        yield folder
    finally:
        subprocess.run(undo, check=False)
        os.chmod(folder, 0o755)


def _writable(folder: Path) -> bool:
    try:
        (folder / "probe").mkdir()
    except OSError:
        return False
    (folder / "probe").rmdir()
    return True


def test_an_out_in_a_folder_that_is_not_writable_is_refused(read_only: Path, cli: Cli) -> None:
    err = refuses(cli, read_only / "gen")
    assert "not writable" in err or "not permitted" in err or "denied" in err
    assert list(read_only.iterdir()) == []


def test_a_file_system_refusing_a_write_is_a_usage_error(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever refuses (read-only mounts, quotas, permissions root ignores), it is reported, not a crash."""
    out = tmp_path / "gen"
    assert cli("build", str(FIXTURES / "mini"), "--out", str(out))[0] == 0
    before = digest(out)

    def read_only_file_system(*args: object, **kwargs: object) -> str:
        raise OSError(errno.EROFS, "Read-only file system", str(tmp_path))

    monkeypatch.setattr(tempfile, "mkdtemp", read_only_file_system)
    source = tmp_path / "src"
    shutil.copytree(FIXTURES / "mini", source / "mini")
    with open(source / "mini" / "city.rules", "a", encoding="utf-8") as handle:
        handle.write("trait Changed { type: die }\n")  # something to write
    assert "Read-only file system" in refuses(cli, out, source / "mini")
    assert digest(out) == before
