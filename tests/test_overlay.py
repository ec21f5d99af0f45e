"""Open buffers compiled in memory (an overlay over the disk, with a memo of what each file derived) say exactly
what a cold check of the same texts saved to disk says, edit after edit; and after an edit of one file only
that file is parsed and lowered, with nothing decoded from the on-disk cache."""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rulesdsl.compile import cache, pipeline
from rulesdsl.compile.memo import Memo
from rulesdsl.compile.pipeline import Compilation, compile_paths
from rulesdsl.diagnostics import Diagnostic
from rulesdsl.syntax.source import display_path as display
from rulesdsl.tools.lsp import Analyser

from .conftest import ROOT, write_ruleset

RIM = 'ruleset rim { title: "The Rim"  version: "0.1.0"  extends: careers }\n'
RIM_RULES = """\
patch career navy { max_terms: 3  skills -= navy_training }
remove career merchant
career belters "Belters" {
  qualification: check dm(END) 6+  survival: check dm(DEX) 6+  advancement: check dm(INT) 9+
  ranks: scout_ranks  skills: scout_service
}
kind ship "Ships" { tonnage: int in 100..5000  jump: int in 0..6 = 1 }
ship far_trader "Far Trader" { tonnage: 200  jump: 2 }
"""
# What an author may add to a file: right, wrong, and referring to things other files define or drop.
SNIPPETS = (
    'ship scout_ship "Scout" { tonnage: 100 }\n',
    'ship huge "Huge" { tonnage: 9000  jump: 7 }\n',
    "patch career scout { ranks: navy_ranks }\n",
    "patch career merchant { max_terms: 2 }\n",  # removed in rim: an error there
    'career pirates "Pirates" {\n  qualification: check dm(STR) 6+  survival: check dm(DEX) 6+\n'
    "  advancement: check dm(INT) 9+  ranks: pirate_ranks  skills: navy_service\n}\n",
    'table pirate_ranks "Pirate ranks" {\n  columns: title\n  0 -> Deckhand\n  1 -> Captain\n}\n',
    "remove table navy_ranks\n",
    'formula dm2 "Twice" { params: score  formula: dm(score) * 2 }\n',
    'formula reach "Reach" { params: n  formula: n + ship[far_trader].jump }\n',  # a number off another entity
    "kind ship { tonnage: int }\n",
    "career {",
    'ruleset stray { title: "Stray" }\n',
)
RENAMES = (
    ("navy_ranks", "navy_rank"),
    ("scout_service", "scout_servce"),
    ("dm(", "dn("),
    ("career", "carer"),
    ("jump: 2 }", "jump: 5 }"),  # a value another file's formula may read
)
MANIFESTS = (RIM, RIM.replace("extends: careers", "extends: nowhere"), RIM.replace("  extends: careers", ""))


@contextlib.contextmanager
def inside(folder: Path) -> Iterator[None]:
    """The working folder, for one compilation: display paths are relative to it, so they are the same in
    the folder edited in memory and in the one it is saved to."""
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


class Editor:
    """Rulesets on disk under `disk/rules`, open buffers over them, compiled in memory as the language server
    does; `saved()` is a cold check of the same texts written to another folder."""

    def __init__(self, work: Path, memo: Memo) -> None:
        self.disk = work / "disk"
        self.saved_to = work / "saved"
        shutil.copytree(ROOT / "tests" / "examples" / "careers", self.disk / "rules" / "careers")
        write_ruleset(self.disk / "rules" / "rim", {"rim.rules": RIM_RULES}, manifest=RIM)
        self.disk = self.disk.resolve()
        self.overlay: dict[Path, str] = {}
        self.memo = memo
        self.cache = work / "cache"

    @property
    def files(self) -> list[Path]:
        """Every file there is to edit: on disk, open, and one new file of the homebrew."""
        rules = self.disk / "rules"
        found = {*rules.rglob("*.rules"), *self.overlay, rules / "rim" / "more" / "new.rules"}
        return sorted(found)

    def text(self, path: Path) -> str:
        if path in self.overlay:
            return self.overlay[path]
        return path.read_text(encoding="utf-8") if path.is_file() else ""

    def in_memory(self, stop: Callable[[], bool] | None = None) -> Compilation:
        with inside(self.disk), mock.patch.dict(os.environ, {"RULESDSL_CACHE_DIR": str(self.cache)}):
            return compile_paths([Path("rules/rim")], overlay=self.overlay, bases=[], memo=self.memo, stop=stop)

    def stopped(self, at: int) -> bool:
        """An analysis stopped at its checkpoint number `at` (as the language server stops one that a later
        change supersedes), if it has that many; whether it was stopped."""
        asked = itertools.count()
        try:
            self.in_memory(stop=lambda: next(asked) >= at)
        except pipeline.Superseded:
            return True
        return False

    def compiled_after(self, edits: list[tuple[int, str, int, int]]) -> Iterator[Compilation]:
        """The analysis before the edits and after each, where it compiles."""
        for edit in [None, *edits]:
            if edit is not None:
                self.apply(edit)
            compiled = self.in_memory()
            if compiled.ok:
                yield compiled

    def saved(self) -> Compilation:
        shutil.rmtree(self.saved_to, ignore_errors=True)
        shutil.copytree(self.disk, self.saved_to)
        for path, text in self.overlay.items():
            target = self.saved_to / path.relative_to(self.disk)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode("utf-8"))
        with inside(self.saved_to), mock.patch.dict(os.environ, {"RULESDSL_CACHE_DIR": "off"}):
            return compile_paths([Path("rules/rim")], bases=[])

    def apply(self, edit: tuple[int, str, int, int]) -> None:
        which, action, at, choice = edit
        files = self.files
        path = files[which % len(files)]
        text = self.text(path)
        match action:
            case "type":  # a snippet typed in at a line's start, as far as it got
                lines = text.splitlines(keepends=True)
                cut = at % (len(lines) + 1)
                snippet = SNIPPETS[choice % len(SNIPPETS)]
                typed = snippet[: max(1, at % (len(snippet) + 1))]
                self.overlay[path] = "".join(lines[:cut]) + typed + "".join(lines[cut:])
            case "cut":  # half a file: typing stopped mid-word
                self.overlay[path] = text[: at % (len(text) + 1)]
            case "rename":
                old, new = RENAMES[choice % len(RENAMES)]
                self.overlay[path] = text.replace(old, new) if choice % 2 else text.replace(new, old)
            case "manifest":
                self.overlay[self.disk / "rules" / "rim" / "ruleset.rules"] = MANIFESTS[choice % len(MANIFESTS)]
            case "close":  # the disk is the truth again
                self.overlay.pop(path, None)
            case "save":
                if path in self.overlay:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(self.overlay[path].encode("utf-8"))
            case "delete":  # deleted on disk, with no word of it to the server: an open buffer is still the truth
                if path.name != "ruleset.rules":
                    path.unlink(missing_ok=True)
            case _:
                raise AssertionError(action)


def same(warm: Compilation, cold: Compilation) -> None:
    assert warm.diagnostics == cold.diagnostics
    assert warm.sources == cold.sources
    assert warm.rulesets == cold.rulesets
    assert [r.layer.reported if r.layer else None for r in warm.rulesets] == [
        r.layer.reported if r.layer else None for r in cold.rulesets
    ]


EDITS = st.lists(
    st.tuples(
        st.integers(0, 20),
        st.sampled_from(["type", "type", "cut", "rename", "manifest", "close", "save", "delete"]),
        st.integers(0, 400),
        st.integers(0, 40),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=30, deadline=None)
@given(edits=EDITS, limit=st.sampled_from([1, 40, 500_000]))
def test_in_memory_analysis_is_a_cold_check_of_the_texts_saved(
    edits: list[tuple[int, str, int, int]], limit: int
) -> None:
    """A homebrew extending a base, edited at random (half-typed snippets, misspelt names, its manifest, files
    saved, closed, deleted on disk while open, a new file only in the editor), with a memo that forgets at
    once, a little, or nothing, and an analysis stopped part-way before each (superseded): every analysis
    equals a cold check of what the editor holds, saved."""
    with tempfile.TemporaryDirectory() as work:
        editor = Editor(Path(work), Memo(limit))
        same(editor.in_memory(), editor.saved())
        for edit in edits:
            editor.apply(edit)
            editor.stopped(edit[3])
            same(editor.in_memory(), editor.saved())
            assert editor.memo.size <= limit or len(editor.memo) == 1  # bounded: past it, files are forgotten


def test_a_file_broken_mid_typing_leaves_the_others_their_diagnostics(tmp_path: Path) -> None:
    editor = Editor(tmp_path, Memo())
    rim = editor.disk / "rules" / "rim" / "rim.rules"
    ships = editor.disk / "rules" / "rim" / "ships.rules"
    editor.overlay[ships] = 'ship huge "Huge" { tonnage: 9000 }\nship tiny "Tiny" { tonnage: 100  jump: 9 }\n'
    before = editor.in_memory()
    editor.overlay[rim] = RIM_RULES + "career pirates { qualification: check dm(STR"  # typing stopped here
    after = editor.in_memory()
    same(after, editor.saved())

    def of(compilation: Compilation, path: Path) -> list[Diagnostic]:
        return [d for d in compilation.diagnostics if d.pos is not None and d.pos.file == display(path)]

    with inside(editor.disk):
        assert [d.code for d in of(before, ships)] == ["E210", "E210"]
        assert of(after, ships) == of(before, ships)
        assert of(before, rim) == [] and [d.code for d in of(after, rim)] == ["E103"]
    assert len(after.diagnostics) == len(before.diagnostics) + 1


def test_an_analysis_stopped_at_any_checkpoint_leaves_the_next_one_right(tmp_path: Path) -> None:
    """Issue 20 (cancel superseded work): the language server stops an analysis that a later change has
    superseded, between files and between the checks. Stopped at each of its checkpoints in turn, with a
    file edited before each, it leaves the memo and the cache so that the next analysis is a cold check."""
    editor = Editor(tmp_path, Memo())
    rim = editor.disk / "rules" / "rim" / "rim.rules"
    same(editor.in_memory(), editor.saved())
    asked = itertools.count()
    editor.in_memory(stop=lambda: next(asked) < 0)
    checkpoints = next(asked)
    assert checkpoints >= 15  # between files, before merging, between the ruleset-wide checks; of both rulesets
    for at in range(checkpoints):
        editor.overlay[rim] = RIM_RULES.replace("max_terms: 3", f"max_terms: {at % 7}")
        assert editor.stopped(at)
        same(editor.in_memory(), editor.saved())
    assert not editor.stopped(checkpoints)


def test_a_buffer_deleted_on_disk_stays_until_it_is_closed(tmp_path: Path) -> None:
    """The analyser: while a document is open its truth is the buffer; once closed, the disk (where it is gone).
    The server closes it when the editor reports the file deleted (test_lsp.py)."""
    editor = Editor(tmp_path, Memo())
    analyser = Analyser()
    analyser.bases = []
    extra = editor.disk / "rules" / "rim" / "extra.rules"
    extra.write_text('ship barge "Barge" { tonnage: 4000 }\n', encoding="utf-8")
    with inside(editor.disk):
        analyser.open[extra] = extra.read_text(encoding="utf-8")
        extra.unlink()
        snapshot = analyser.analyse(extra)
        assert snapshot is not None and snapshot.ruleset is not None
        assert "barge" in snapshot.ruleset.entities["ship"] and extra in snapshot.texts
        del analyser.open[extra]
        snapshot = analyser.analyse(editor.disk / "rules" / "rim" / "rim.rules")
        assert snapshot is not None and snapshot.ruleset is not None
        assert "barge" not in snapshot.ruleset.entities["ship"] and extra not in snapshot.texts


def test_a_new_manifest_only_in_the_editor_makes_a_ruleset(tmp_path: Path) -> None:
    folder = (tmp_path / "fresh").resolve()
    folder.mkdir()
    (folder / "a.rules").write_text('trait t "T" { type: die }\n', encoding="utf-8")
    overlay = {folder / "ruleset.rules": 'ruleset fresh { title: "Fresh"  version: "0.1.0" }\n'}
    with inside(tmp_path), mock.patch.dict(os.environ, {"RULESDSL_CACHE_DIR": "off"}):
        result = compile_paths([folder / "a.rules"], overlay=overlay, bases=[])
    assert result.ok, [d.message for d in result.diagnostics]
    assert [r.id for r in result.rulesets] == ["fresh"] and "t" in result.rulesets[0].entities["trait"]
    assert not (folder / "ruleset.rules").exists()


def test_an_edit_reparses_and_relowers_only_that_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After the first analysis, an edit of one file parses and lowers only it, and reads nothing from the
    on-disk cache (decoding every file's entities from it was most of the time a warm check took)."""
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(tmp_path / "cache"))
    compile_paths([Path("rules")])  # the on-disk cache filled, as by the command line
    memo = Memo()
    peasant = (tmp_path / "rules/burning_wheel/human/peasant.rules").resolve()
    overlay = {peasant: peasant.read_text(encoding="utf-8")}
    first = compile_paths([Path("rules/burning_wheel")], overlay=overlay, memo=memo)
    assert first.ok
    decoded: list[object] = []
    parsed: list[str] = []
    lowered: list[str] = []
    real_decode, real_parse, real_lower = cache.ParseCache._load, pipeline.Parser.parse_file, pipeline.lower_block
    monkeypatch.setattr(cache.ParseCache, "_load", lambda self, key: decoded.append(key) or real_decode(self, key))
    monkeypatch.setattr(
        pipeline.Parser, "parse_file", lambda self, shown, text: parsed.append(shown) or real_parse(self, shown, text)
    )

    def counting(block: Any, kind: Any, *, file_defaults: Any) -> Any:
        if block.kind != "ruleset":  # each manifest is read every run, for the ruleset's id and bases
            lowered.append(block.kind_pos.file)
        return real_lower(block, kind, file_defaults=file_defaults)

    monkeypatch.setattr(pipeline, "lower_block", counting)
    for resources in range(5, 9):  # edit after edit of the same file
        overlay[peasant] = overlay[peasant].replace(f"resources: {resources - 1}", f"resources: {resources}", 1)
        warm = compile_paths([Path("rules/burning_wheel")], overlay=overlay, memo=memo)
        shown = "rules/burning_wheel/human/peasant.rules"
        assert decoded == [] and set(parsed) == {shown} and set(lowered) == {shown}
        parsed.clear()
        lowered.clear()
    assert len(memo) == len(warm.sources)  # one text of each file kept, however often it was edited
    monkeypatch.setenv("RULESDSL_CACHE_DIR", "off")
    (tmp_path / "rules/burning_wheel/human/peasant.rules").write_text(overlay[peasant], encoding="utf-8")
    same(warm, compile_paths([Path("rules/burning_wheel")]))


def test_an_analysis_leaves_nothing_for_the_cyclic_collector(tmp_path: Path) -> None:
    """The language server freezes what an analysis leaves and collects only every so often: anything of an
    analysis held in a reference cycle would stay until then (a recursive closure over every parsed file
    made the server's peak memory grow by 45% over 1,000 edits of rules/)."""
    import gc

    editor = Editor(tmp_path, Memo())
    editor.in_memory()
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        editor.apply((0, "type", 3, 1))
        editor.in_memory()
        gc.collect()
        left = [o for o in gc.garbage if type(o).__module__.startswith("rulesdsl") or isinstance(o, Path)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert left == []


def test_an_edit_resolves_again_only_the_references_it_can_affect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 20: an analysis after an edit resolves again the references of the edited file's entities, of
    those that read a number off another entity (whose value the edit may have changed), and of those with a
    diagnostic; the rest keep what the last analysis resolved, until a name changes. Each analysis equals
    one with nothing kept."""
    from rulesdsl.compile.checks import semantic

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RULESDSL_CACHE_DIR", "off")
    gadgets = "".join(f'gadget g{n} "Gadget {n}" {{ skill: Fishing  reach: {n} }}\n' for n in range(20))
    folder = write_ruleset(
        Path("rules") / "kit",
        {
            "a.rules": 'kind gadget "Gadgets" { skill: ref skill  reach: int }\n'
            "skill Fishing { root: Perception  type: peasant  tools: yes }\n",
            "b.rules": 'gadget rod "Rod" { skill: Fishing  reach: 2 }\n',
            "c.rules": gadgets + 'gadget odd "Odd" { skill: Fishng  reach: 1 }\n',
            "d.rules": "formula far { params: a  formula: a + gadget[rod].reach }\n",
        },
    )
    resolving: list[str] = []
    resolve = semantic._resolve

    def counted(entity: Any, how: Any) -> Any:
        resolving.append(entity.id)
        return resolve(entity, how)

    monkeypatch.setattr(semantic, "_resolve", counted)
    memo = Memo()
    overlay: dict[Path, str] = {}

    def analysed() -> Compilation:
        resolving.clear()
        found = compile_paths([folder], overlay=overlay, bases=[], memo=memo)
        counted = list(resolving)
        again = compile_paths([folder], overlay=overlay, bases=[])  # nothing kept
        assert found.diagnostics == again.diagnostics and found.rulesets == again.rulesets
        resolving[:] = counted
        return found

    first = analysed()
    assert len(resolving) == 24 and [d.code for d in first.diagnostics] == ["E303"]  # every entity, once
    overlay[(folder / "b.rules").resolve()] = 'gadget rod "Rod" { skill: Fishing  reach: 5 }\n'
    analysed()
    assert sorted(resolving) == ["far", "odd", "rod"]  # the file's, the one reading rod's reach, the mistaken
    overlay[(folder / "a.rules").resolve()] = (folder / "a.rules").read_text().replace("Fishing", "Angling")
    renamed = analysed()
    assert len(resolving) == 24 and len(renamed.diagnostics) == 22  # a name changed: all again; 22 E303s
    del overlay[(folder / "a.rules").resolve()]
    analysed()
    assert len(resolving) == 24  # and back: the names changed again
