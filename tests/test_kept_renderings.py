"""`rulesdsl build` keeps what it rendered of each entity in the cache folder (targets/build.py Kept), and a
build after an edit renders again only what the edit can have changed: the site's cards and rows, rules.js's
code and the package's entities are taken from the last run by their digests. What it writes is always
exactly a cold build of the same rulesets: over random edit sequences of a homebrew and its base, over real
edits of rules/, and when the kept entries are damaged or were made by another renderer."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rulesdsl.compile.memo import Memo
from rulesdsl.compile.pipeline import compile_paths
from rulesdsl.targets import digests
from rulesdsl.targets.build import Kept, render_all
from rulesdsl.tools.cli import main

from .conftest import ROOT
from .fuzzing import kept_build
from .test_incremental_output import _edit
from .test_overlay import EDITS, Editor


@settings(max_examples=20, deadline=None)
@given(edits=EDITS, drift=st.sampled_from([0, Kept.DRIFT, 10**9]))
def test_a_build_with_what_the_last_kept_is_a_cold_build_edit_after_edit(
    edits: list[tuple[int, str, int, int]], drift: int
) -> None:
    """A homebrew over a base, edited at random (snippets, renames, its manifest, files saved, closed,
    deleted): after every edit that compiles, a build that starts from what the builds before kept equals a
    cold build. The entries are written again after every build, never after the first, or as the command
    line does (once they differ enough): a build may start from renderings several edits old."""
    with tempfile.TemporaryDirectory() as work, mock.patch.object(Kept, "DRIFT", drift):
        editor = Editor(Path(work), Memo())
        for compiled in editor.compiled_after(edits):
            files, _ = kept_build(compiled.rulesets, Path(work) / "kept")
            assert files == render_all(compiled.rulesets)


def test_an_edit_of_rules_renders_again_only_what_it_changed(tmp_path: Path) -> None:
    """rules/, built, then a lifepath's resources changed: the next build makes again its rendering, the rows
    of the list it is in (its facets' values changed), its code in rules.js and in the package (in each
    ruleset that has it), and nothing else; after it names one more skill, the skill's too (who names it
    changed); a build with nothing changed makes nothing and writes no entry; every time the files are a
    cold build's."""
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    rules, cache = tmp_path / "rules", tmp_path / "cache"
    city = rules / "burning_wheel" / "human" / "city.rules"

    def build() -> Kept:
        with mock.patch.dict(os.environ, {"RULESDSL_CACHE_DIR": "off"}):
            compiled = compile_paths([rules])
        files, kept = kept_build(compiled.rulesets, cache)
        assert files == render_all(compiled.rulesets)
        return kept

    first = build()
    assert first.site is not None and first.package is not None
    total = first.site.rendered
    assert first.site.reused == 0 and total > 3500 and first.code.made > 3000 and first.package.made > 3000
    pieces = first.site.search.made  # of the search index
    assert pieces == len(first.site.search.pieces) > 4  # more than one a ruleset: Burning Wheel's is cut too
    written = {p: p.stat().st_mtime_ns for p in cache.rglob("*.entry")}

    again = build()
    assert again.site is not None and again.package is not None
    assert (again.site.rendered, again.code.made, again.package.made, again.site.search.made) == (0, 0, 0, 0)
    assert {p: p.stat().st_mtime_ns for p in cache.rglob("*.entry")} == written  # nothing written

    _edit(city, r"resources: 10\b", "resources: 11")
    edited = build()
    assert edited.site is not None and edited.package is not None
    assert 2 <= edited.site.rendered < 100 and edited.site.reused > total - 100
    # in Burning Wheel and in Fenmark, the homebrew over it, which has the lifepath too
    assert (edited.code.made, edited.package.made) == (2, 2)
    assert edited.site.search.made == 1  # Burning Wheel's piece with the lifepath (Fenmark's entry is that one)

    # who names Acting changed, and nothing of Acting itself: its card is made again (it lists them)
    _edit(city, r"skills: 3 pts: Streetwise, Inconspicuous", "skills: 3 pts: Streetwise, Inconspicuous, Acting")
    named = build()
    assert named.site is not None and ("skill", "acting") in {key[:2] for key in named.site.made}


def test_damaged_or_foreign_entries_are_a_build_that_renders_everything(tmp_path: Path) -> None:
    """Kept entries cut short, overwritten with other data, or made by another renderer (templates, code or
    libraries changed) are not used: the build renders everything, and writes a cold build's files."""
    shutil.copytree(ROOT / "tests" / "examples" / "careers", tmp_path / "rules" / "careers")
    with mock.patch.dict(os.environ, {"RULESDSL_CACHE_DIR": "off"}):
        compiled = compile_paths([tmp_path / "rules"])
    cache = tmp_path / "cache"
    cold = render_all(compiled.rulesets)
    files, _ = kept_build(compiled.rulesets, cache)
    entries = sorted(cache.rglob("*.entry"))  # only the build's: the check above had no cache
    assert files == cold and len(entries) == 4  # the site's, rules.js's and the package's; the search index's
    search = next(p for p in entries if p.name == f"{Kept._search_key(compiled.rulesets)}.entry")
    for damage in (lambda b: b[: len(b) // 2], lambda b: b.replace(b'"context"', b'"kontext"'), lambda b: b + b"x"):
        before = search.read_bytes()
        for path in entries:
            path.write_bytes(damage(path.read_bytes()))
        damaged = search.read_bytes() != before
        files, kept = kept_build(compiled.rulesets, cache)
        assert files == cold
        assert kept.site is not None and kept.site.reused == 0
        if damaged:  # the search index's pieces all made again too
            assert kept.site.search.made == len(kept.site.search.pieces) > 0
    with mock.patch("rulesdsl.targets.build.renderer_digest", lambda: "another renderer"):
        files, kept = kept_build(compiled.rulesets, cache)
        assert files == cold and kept.site is not None and kept.site.reused == 0
        # the new renderer's entries take the places of the last one's: no more entries, no more bytes
        assert sorted(cache.rglob("*.entry")) == entries
        assert all(path.read_bytes().find(b"another renderer\n") >= 0 for path in entries)
        files, kept = kept_build(compiled.rulesets, cache)
        assert files == cold and kept.site is not None and kept.site.reused > 0  # its own entries, kept
    files, kept = kept_build(compiled.rulesets, cache)  # back to the real renderer: the other's are not its
    assert files == cold and kept.site is not None and kept.site.reused == 0


def test_a_value_without_a_repr_of_its_own_has_no_digest() -> None:
    """Where repr shows an address, equal reprs say nothing about equal values: no digest, never reused."""

    class Opaque:
        pass

    assert digests.digest(Opaque()) is None
    assert digests.digest(("a", 1, (2, 3))) == digests.digest(("a", 1, (2, 3)))
    assert digests.digest({"a": 1}) != digests.digest({"a": 2})


def test_the_command_line_build_after_an_edit_writes_a_cold_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`rulesdsl build` twice with the cache on, an edit between: `build --check` without a cache finds the
    output up to date."""
    shutil.copytree(ROOT / "tests" / "examples" / "careers", tmp_path / "rules" / "careers")
    rules, out = tmp_path / "rules", tmp_path / "out"
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["build", str(rules), "--out", str(out)]) == 0
    careers = rules / "careers" / "careers.rules"
    text = careers.read_text(encoding="utf-8")
    careers.write_text(text.replace("long tours", "longer tours"), encoding="utf-8")
    assert main(["build", str(rules), "--out", str(out)]) == 0
    monkeypatch.setenv("RULESDSL_CACHE_DIR", "off")
    capsys.readouterr()
    assert main(["build", str(rules), "--out", str(out), "--check"]) == 0
    assert "up to date" in capsys.readouterr().out
