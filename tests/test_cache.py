"""The parse cache: a shortcut that must never change a result."""

from __future__ import annotations

import os
import pickle
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import rulesdsl.compile.cache
from rulesdsl.compile.cache import FORMAT, pack, unpack
from rulesdsl.compile.pipeline import Compilation, compile_paths
from rulesdsl.diagnostics import Diagnostic
from rulesdsl.syntax.parse import Parser
from rulesdsl.syntax.tree import SourceFile

from .conftest import FIXTURES, write_ruleset


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


# -- what is in the folder cannot change a result or run code


def uncached(paths: list[Path], monkeypatch: pytest.MonkeyPatch) -> Compilation:
    with monkeypatch.context() as patch:
        patch.setenv("RULESDSL_CACHE_DIR", "off")
        return compile_paths(paths)


def same_result(a: Compilation, b: Compilation) -> bool:
    return a.rulesets == b.rulesets and a.diagnostics == b.diagnostics and a.sources == b.sources


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "parsed").iterdir())


class Planted:
    """A pickle that, when loaded, creates a file: what an attacker's entry would do, harmlessly."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


def test_a_planted_pickle_runs_no_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(cache))
    first = compile_paths([FIXTURES / "mini"])
    marker = tmp_path / "code-ran"
    planted = [p for p in cache.rglob("*") if p.is_file()]
    assert planted
    for path in planted:
        path.write_bytes(pickle.dumps(Planted(marker)))
    again = compile_paths([FIXTURES / "mini"])
    assert not marker.exists()
    assert same_result(again, first)


def mini_copy(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "mini"
    shutil.copytree(FIXTURES / "mini", folder)
    return [folder]


def test_600_single_bit_flips_in_an_entry_never_change_a_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(cache))
    people = (FIXTURES / "mini" / "people.rules").read_text(encoding="utf-8")  # small: 600 compiles take ~3 s
    paths = [write_ruleset(tmp_path / "people", {"people.rules": people})]
    expected = uncached(paths, monkeypatch)
    compile_paths(paths)
    entry = max(entries(cache), key=lambda p: p.stat().st_size)
    original = entry.read_bytes()
    # Every bit of the format's name, then bits anywhere else: compiler, key, checksum, payload.
    bits = list(range(8 * len(FORMAT)))
    bits += random.Random(1).sample(range(8 * len(FORMAT), 8 * len(original)), 600 - len(bits))
    parses = count_parses(monkeypatch)
    for bit in bits:
        flipped = bytearray(original)
        flipped[bit // 8] ^= 1 << (bit % 8)
        entry.write_bytes(bytes(flipped))
        before = len(parses)
        assert same_result(compile_paths(paths), expected), f"bit {bit}"
        assert len(parses) == before + 1, f"bit {bit}: the damaged entry was used"
        assert entry.read_bytes() == original, f"bit {bit}: the entry was not written again"


def count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files parsed from here on (not taken from the cache)."""
    parsed: list[str] = []
    parse_file = Parser.parse_file

    def counting(self: Parser, path: str, text: str) -> tuple[SourceFile, list[Diagnostic]]:
        parsed.append(path)
        return parse_file(self, path, text)

    monkeypatch.setattr(Parser, "parse_file", counting)
    return parsed


@pytest.mark.parametrize("cut", ["empty", "one byte", "header only", "half", "all but one byte"])
def test_a_truncated_entry_is_ignored_and_written_again(
    cut: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(cache))
    paths = mini_copy(tmp_path)
    expected = compile_paths(paths)
    originals = {p: p.read_bytes() for p in entries(cache)}
    monkeypatch.setattr(rulesdsl.compile.cache, "_MAX_ENTRIES", len(originals))  # full: rewriting needs no room
    for path, data in originals.items():
        end = {"empty": 0, "one byte": 1, "header only": data.index(b"\n") + 1, "half": len(data) // 2}
        path.write_bytes(data[: end.get(cut, len(data) - 1)])
    parses = count_parses(monkeypatch)
    assert same_result(compile_paths(paths), expected)
    assert sorted(parses) == sorted(set(parses)) and len(parses) == len(originals) // 2  # two entries a file
    assert {p: p.read_bytes() for p in entries(cache)} == originals


@pytest.mark.skipif(not os.path.exists("/dev/zero") or not hasattr(os, "mkfifo"), reason="POSIX devices and pipes")
def test_an_entry_that_is_a_link_to_a_device_or_a_pipe_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read as a file, /dev/zero never ends (the run exhausted memory) and a pipe waits for a writer."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(cache))
    paths = mini_copy(tmp_path)
    expected = compile_paths(paths)
    found = entries(cache)
    for i, path in enumerate(found):
        path.unlink()
        if i % 2:
            os.mkfifo(path, 0o600)
        else:
            path.symlink_to("/dev/zero")
    assert same_result(compile_paths(paths), expected)
    assert all(p.is_file() and not p.is_symlink() for p in entries(cache))  # written again, as entries


def test_an_entry_of_another_file_is_not_taken_for_this_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(cache))
    paths = mini_copy(tmp_path)
    expected = compile_paths(paths)
    found = entries(cache)
    contents = [p.read_bytes() for p in found]
    for path, data in zip(found, contents[1:] + contents[:1], strict=True):  # each gets its neighbour's
        path.write_bytes(data)
    assert same_result(compile_paths(paths), expected)


def test_a_well_formed_entry_with_the_wrong_contents_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even an entry whose header and checksum are right is used only if it decodes to this very file."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(cache))
    paths = mini_copy(tmp_path)
    expected = compile_paths(paths)
    found = entries(cache)
    payloads = [unpack(p.stem, p.read_bytes()) for p in found]
    assert all(payloads)
    wrong = [b"[]", b'["x", [], 1]', b"not json", b"[" * 50_000, payloads[1] or b""]
    for payload in wrong:
        found[0].write_bytes(pack(found[0].stem, payload))
        parses = count_parses(monkeypatch)
        assert same_result(compile_paths(paths), expected)
        assert len(parses) == 1


def test_entries_of_another_version_are_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(tmp_path / "cache"))
    paths = mini_copy(tmp_path)
    try:
        with monkeypatch.context() as patch:
            patch.setattr(rulesdsl.compile.cache, "__version__", "0.0.1-older")
            rulesdsl.compile.cache.compiler_digest.cache_clear()
            older = compile_paths(paths)
    finally:
        rulesdsl.compile.cache.compiler_digest.cache_clear()
    parses = count_parses(monkeypatch)
    assert same_result(compile_paths(paths), older)
    assert len(parses) == 3


# -- the folder stays small without costing time


def count_listings(monkeypatch: pytest.MonkeyPatch, folder: Path) -> list[str]:
    """Every listing of `folder` or anything in it from here on, however it is asked for."""
    listed: list[str] = []
    inside = str(folder.resolve())

    def spy(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def listing(path: Any = ".", *args: Any, **kwargs: Any) -> Any:
            if os.path.realpath(path).startswith(inside):
                listed.append(f"{name} {path}")
            return original(path, *args, **kwargs)

        return listing

    monkeypatch.setattr(os, "scandir", spy("scandir", os.scandir))
    monkeypatch.setattr(os, "listdir", spy("listdir", os.listdir))
    monkeypatch.setattr(Path, "glob", spy("glob", Path.glob))
    monkeypatch.setattr(Path, "rglob", spy("rglob", Path.rglob))
    monkeypatch.setattr(Path, "iterdir", spy("iterdir", Path.iterdir))
    return listed


def many_files(folder: Path, count: int, word: str = "trait") -> list[Path]:
    files = {f"f{i:04}.rules": f'{word} "T{i}" {{ type: die }}\n' for i in range(count)}
    return [write_ruleset(folder, files)]


def test_each_run_lists_the_cache_once_however_many_files_it_saves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Trimming is amortised: a ruleset larger than the cache must not be slower to check with it."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(cache))
    monkeypatch.setattr(rulesdsl.compile.cache, "_MAX_ENTRIES", 40)
    paths = many_files(tmp_path / "big", 300)
    listed = count_listings(monkeypatch, cache)
    first = compile_paths(paths)
    assert first.ok and len(listed) == 1, listed
    assert len(list((cache / "parsed").iterdir())) <= 40
    listed.clear()
    assert same_result(compile_paths(paths), first)
    assert len(listed) == 1, listed
    assert len(list((cache / "parsed").iterdir())) <= 40


def test_a_file_with_no_entry_costs_no_look_in_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The one listing tells which files have no entry: opening each would cost a ruleset of 50,000 new
    files 50,000 failed look-ups."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(cache))
    monkeypatch.setattr(rulesdsl.compile.cache, "_MAX_ENTRIES", 40)
    paths = many_files(tmp_path / "big", 300)
    compile_paths(paths)
    opened: list[str] = []
    real_open = open

    def counting_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file).startswith(str(cache)):
            opened.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", counting_open)
    parses = count_parses(monkeypatch)
    compile_paths(paths)
    assert len(opened) == 2 * (301 - len(parses)) <= 40  # only the entries there are (two a file), read once each


def test_a_full_cache_forgets_the_least_recently_written_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(cache))
    monkeypatch.setattr(rulesdsl.compile.cache, "_MAX_ENTRIES", 40)
    compile_paths(many_files(tmp_path / "old", 35))
    for entry in entries(cache):
        os.utime(entry, (1_000_000_000, 1_000_000_000))  # written long ago
    current = many_files(tmp_path / "current", 4, word="skill")  # with its manifest, two entries a file: room left
    compile_paths(current)
    assert len(entries(cache)) <= 40
    parses = count_parses(monkeypatch)
    compile_paths(current)
    assert parses == []


def test_a_ruleset_larger_than_the_cache_reuses_what_fits_and_writes_nothing_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replacing the entries of its first files by those of its last would cost every run writes for
    no gain: a check must not be slower with the cache than without."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(cache))
    monkeypatch.setattr(rulesdsl.compile.cache, "_MAX_ENTRIES", 40)
    paths = many_files(tmp_path / "big", 300)
    compile_paths(paths)
    written = {p.name: p.stat().st_mtime_ns for p in entries(cache)}
    assert len(written) == 40
    parses = count_parses(monkeypatch)
    compile_paths(paths)
    assert len(parses) == 301 - 40 // 2  # both entries of as many files as fit
    assert {p.name: p.stat().st_mtime_ns for p in entries(cache)} == written


def test_a_file_saved_again_and_again_keeps_its_last_three_versions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each saved edit wrote two more entries (a megabyte at 10,000 lifepaths), until the count bound at 4,000:
    gigabytes. A file keeps its last three versions (an undo, a switch of branch); the other files keep theirs."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(cache))
    folder = write_ruleset(tmp_path / "rules" / "demo", {"a.rules": "trait T0 { type: die }\n", "b.rules": OTHER})
    assert compile_paths([folder]).ok
    before = {p.name: p.stat().st_mtime_ns for p in entries(cache)}
    edited = folder / "a.rules"
    for version in range(1, 10):
        edited.write_text(f"trait T{version} {{ type: die }}\n")
        assert compile_paths([folder]).ok
    after = {p.name: p.stat().st_mtime_ns for p in entries(cache)}
    gone, new = before.keys() - after.keys(), after.keys() - before.keys()
    assert len(gone) == 2 and len(new) == 6  # a.rules's outline and entities: version 0 gone, 7 to 9 kept
    assert all(after[name] == written for name, written in before.items() if name not in gone)
    families: dict[str, int] = {}
    for name in after:
        families[name.partition("-")[0]] = families.get(name.partition("-")[0], 0) + 1
    assert sorted(families.values()) == [1] * (len(before) - 2) + [3, 3]
    parses = count_parses(monkeypatch)
    for version, parsed in ((7, False), (9, False), (6, True)):  # back to a kept version, and to one forgotten
        edited.write_text(f"trait T{version} {{ type: die }}\n")
        parses.clear()
        assert compile_paths([folder]).ok
        assert (parses != []) == parsed, (version, parses)


OTHER = "trait Other { type: die }\n"


# -- caches in memory: a language server or `serve` compiles after every edit, for hours


def cache_sizes() -> dict[str, int]:
    """Every module-level cache of rulesdsl: functools caches by their size, module dicts by their length."""
    import importlib
    import pkgutil

    import rulesdsl

    sizes: dict[str, int] = {}
    for info in pkgutil.walk_packages(rulesdsl.__path__, "rulesdsl."):
        if info.name == "rulesdsl.__main__":
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if hasattr(value, "cache_info"):
                sizes[f"{info.name}.{name}"] = value.cache_info().currsize
            elif name.lstrip("_").isupper() and isinstance(value, dict | set):
                sizes[f"{info.name}.{name}"] = len(value)
    return sizes


def test_compiling_again_and_again_grows_no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Caches were keyed by the Kind objects of each compile: Witcher kept 7.4 MB more schema text after 200.
    Without the parse cache every file is lowered and checked again, as an edited one is."""
    monkeypatch.setenv("RULESDSL_CACHE_DIR", "off")
    folder = write_ruleset(
        tmp_path / "rules" / "demo",
        {
            "a.rules": """
            kind weapon "Weapons" { damage: dice  reach: int  skill: ref skill? }
            weapon sword "Sword" { damage: 1d8  reach: 2 }
            skill Fencing { root: Agility  type: martial }
            formula twice { params: x  formula: x * 2 }
            """
        },
    )
    for _ in range(2):
        assert compile_paths([folder]).ok
    before = cache_sizes()
    for _ in range(200):
        compile_paths([folder])
    assert cache_sizes() == before


def _homebrew(tmp_path: Path) -> tuple[Path, Path]:
    """A base ruleset with a warning in it, and a homebrew extending it found through `bases`."""
    base = tmp_path / "rules" / "base"
    base.mkdir(parents=True)
    (base / "ruleset.rules").write_text('ruleset base { title: "Base"  version: "1" }\n')
    (base / "a.rules").write_text("trait Brave { type: die }\ntrait Bold { type: die }\n")
    brew = tmp_path / "brew"
    brew.mkdir()
    (brew / "ruleset.rules").write_text('ruleset brew { title: "Brew"  version: "1"  extends: base }\n')
    (brew / "b.rules").write_text("trait Calm { type: dei }\n")  # E210
    return base, brew


def test_a_check_of_unchanged_files_is_answered_from_the_cache_with_the_same_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(tmp_path / "cache"))
    base, brew = _homebrew(tmp_path)
    bases = [tmp_path / "rules"]
    full = compile_paths([brew], bases=bases)
    first = compile_paths([brew], bases=bases, diagnostics_only=True)
    assert first.diagnostics == full.diagnostics and [d.code for d in first.diagnostics] == ["E210"]
    assert first.summary == full.summary == (("base", 2), ("brew", 3))

    def no_checking(*args: object, **kwargs: object) -> None:
        raise AssertionError("lowered or checked again although no file changed")

    monkeypatch.setattr("rulesdsl.compile.pipeline._compile", no_checking)
    again = compile_paths([brew], bases=bases, diagnostics_only=True)
    assert again.rulesets == ()
    assert (again.diagnostics, again.summary, again.sources) == (first.diagnostics, first.summary, first.sources)
    with pytest.raises(AssertionError, match="checked again"):  # a full compilation is never answered so
        compile_paths([brew], bases=bases)
    # an edit anywhere, in the base included, and the check is made again
    (base / "a.rules").write_text("trait Brave { type: die }\n")
    with pytest.raises(AssertionError, match="checked again"):
        compile_paths([brew], bases=bases, diagnostics_only=True)
    monkeypatch.undo()
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(tmp_path / "cache"))
    assert compile_paths([brew], bases=bases, diagnostics_only=True).summary == (("base", 1), ("brew", 2))
    (brew / "b.rules").write_text("trait Calm { type: die }\n")
    fixed = compile_paths([brew], bases=bases, diagnostics_only=True)
    assert fixed.ok and fixed.summary == (("base", 1), ("brew", 2))


def test_the_cli_check_says_the_same_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from rulesdsl.tools.cli import main

    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    _homebrew(tmp_path)
    said = []
    for _ in range(2):
        codes = main(["check", "brew", "--color", "never"]), main(["check", "rules/base"])
        said.append((codes, capsys.readouterr()))
    assert said[0] == said[1]
    (codes, first) = said[0]
    assert codes == (1, 0)
    assert "brew/b.rules:1:20" in first.err and "ok (base: 2 entities)" in first.out


def test_open_buffers_never_use_the_checked_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(tmp_path / "cache"))
    base, _ = _homebrew(tmp_path)
    assert compile_paths([base], diagnostics_only=True).ok
    edited = {(base / "a.rules").resolve(): "trait Brave { type: dei }\n"}
    assert [d.code for d in compile_paths([base], overlay=edited, diagnostics_only=True).diagnostics] == ["E210"]
