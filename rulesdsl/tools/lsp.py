"""The language server (`rulesdsl lsp`): the compiler's own diagnostics as you type, completion, go to
definition, references, hover, outline, rename and formatting, over stdio with pygls.

Unsaved buffers are handed to the compiler as an overlay over the files on disk (it reads them instead
of the files, and writes nothing for them), with a memo of what every file derived, so that after an edit
only the edited file is parsed and lowered again; what the editor shows is exactly what `rulesdsl check`
says of the same texts saved. Nothing here may crash on a half-typed file: each request answers with what
the last analysis knows.
"""

from __future__ import annotations

import asyncio
import bisect
import functools
import gc
import html
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO, TypeVar, assert_never, cast
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import from_fs_path

from rulesdsl import __version__
from rulesdsl.compile import ir
from rulesdsl.compile.kinds import Kind
from rulesdsl.compile.memo import Memo
from rulesdsl.compile.pipeline import (
    Compilation,
    CompiledRuleset,
    Superseded,
    compile_paths,
    default_bases,
    gc_paused,
    parser,
    prelude,
)
from rulesdsl.diagnostics import Diagnostic
from rulesdsl.language.fieldtypes import RequirementType, referenced_kinds
from rulesdsl.language.names import slug
from rulesdsl.syntax import tree as m
from rulesdsl.syntax.parse import ran_on_hint
from rulesdsl.syntax.source import MANIFEST, SUFFIX, discover, is_source, read_source, ruleset_root
from rulesdsl.syntax.written import quote
from rulesdsl.tools.fmt import NotFormatted, format_text, written_name
from rulesdsl.tools.locate import (
    KEYS,
    NAME_TYPES,
    OPEN_STRING,
    Cell,
    Place,
    Statement,
    Token,
    field_items,
    key_name,
    lenient_tokens,
    locate,
    rows,
    statement_at,
    statements,
)

DEBOUNCE_SECONDS = 0.1
# Every analysis leaves a new compiled ruleset (a hundred objects an entity) beside the memo: the garbage
# collector would walk them all again and again (more than half the time of an edit on 10,000 lifepaths). They
# hold no cycles, so they are frozen out of its sight; every so many analyses it looks at everything once.
FULL_COLLECTION_EVERY = 50
T = TypeVar("T")


# ---------------------------------------------------------------- positions


def path_of(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path)).resolve()


def uri_of(path: Path) -> str:
    return from_fs_path(str(path)) or path.as_uri()


class Lines:
    """A text split into lines once, so that the ranges of a whole file's symbols or diagnostics cost a
    lookup each instead of a split of the file each (that made a 20,000-block outline quadratic)."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self._astral: dict[int, list[int]] = {}  # row -> where its characters beyond the BMP are

    def astral(self, row: int) -> list[int]:
        found = self._astral.get(row)
        if found is None:
            line = self.lines[row]
            # max() runs in C: most lines have no such character and are never walked in Python
            plain = not line or max(line) <= "\uffff"
            found = [] if plain else [i for i, c in enumerate(line) if ord(c) > 0xFFFF]
            self._astral[row] = found
        return found

    def utf16(self, row: int, chars: int) -> int:
        """Columns in LSP are UTF-16 code units; the compiler's are characters."""
        return chars + bisect.bisect_left(self.astral(row), chars)

    def chars(self, row: int, units: int) -> int:
        """The character at `units` UTF-16 code units into the line (its end when past it)."""
        astral = self.astral(row)
        count = 0
        while count < len(astral) and astral[count] + count < units:  # each one before it takes two units
            count += 1
        index = units - count
        if count and astral[count - 1] >= index:  # `units` falls inside a pair: the character after it
            index = astral[count - 1] + 1
        return min(index, len(self.lines[row]))


@functools.lru_cache(maxsize=8)
def lines_of(text: str) -> Lines:
    return Lines(text)


def to_position(line: int, column: int, text: str) -> lsp.Position:
    """The compiler's (line, column), both from 1, as an LSP position (in the text, at most its end)."""
    lines = lines_of(text)
    row = min(max(line - 1, 0), len(lines.lines) - 1)
    return lsp.Position(row, lines.utf16(row, min(max(column - 1, 0), len(lines.lines[row]))))


def to_range(pos: m.Position, text: str) -> lsp.Range:
    """A node's range; an empty one is widened to a character (an editor would show nothing)."""
    start = to_position(pos.line, pos.column, text)
    end = to_position(pos.end_line, pos.end_column, text)
    if (end.line, end.character) <= (start.line, start.character):
        end = lsp.Position(start.line, start.character + 1)
    return lsp.Range(start, end)


def from_position(position: lsp.Position, text: str) -> tuple[int, int]:
    """An LSP position as the compiler's (line, column), both from 1."""
    lines = lines_of(text)
    if position.line >= len(lines.lines):
        return position.line + 1, 1
    return position.line + 1, lines.chars(position.line, position.character) + 1


@functools.lru_cache(maxsize=4)
def _lines(text: str) -> list[str]:
    return text.split("\n")


def _text_at(text: str, pos: m.Position) -> str | None:
    """The text at `pos` (lines and columns from 1, in characters); None where the text is shorter."""
    lines = _lines(text)[pos.line - 1 : pos.end_line]
    if len(lines) != pos.end_line - pos.line + 1:
        return None
    lines[-1] = lines[-1][: pos.end_column - 1]
    lines[0] = lines[0][pos.column - 1 :]
    return "\n".join(lines)


def _contains(pos: m.Position, line: int, column: int) -> bool:
    if not pos.line <= line <= pos.end_line:
        return False
    if line == pos.line and column < pos.column:
        return False
    return not (line == pos.end_line and column > pos.end_column)  # just after a word still counts


# ---------------------------------------------------------------- analysis


@dataclass(frozen=True, slots=True)
class Target:
    """Something a position names: an entity of a kind (by id), and where the name was written."""

    kind: str
    id: str
    pos: m.Position
    text: str  # as written
    defining: bool  # the entity's own header


@dataclass(slots=True)
class Snapshot:
    """One ruleset as last compiled: its files' texts, diagnostics per file, and what it defines."""

    root: Path
    texts: dict[Path, str]
    diagnostics: dict[Path, list[Diagnostic]]
    ruleset: CompiledRuleset | None
    kinds: dict[str, Kind]
    mapping: dict[str, Path] = field(default_factory=dict)  # display path -> the file
    # Files whose `texts` are not what the analysis read: file -> what it read. A buffer broken mid-typing is
    # read as its last text without syntax errors (see Analyser.analyse; rename waits for it), and a quick
    # snapshot (RulesServer.quick) shows a buffer typed into since. Where their names were is where that
    # text had them; the buffer may have moved them since (still_there).
    stale: dict[Path, str] = field(default_factory=dict)
    live: Mapping[Path, str] = field(default_factory=dict)  # the editor's buffers now (typed into since, maybe)

    def real(self, shown: str) -> Path | None:
        return self.mapping.get(shown)

    def now(self, file: Path) -> str:
        """The file's text as the editor has it now."""
        return self.live.get(file, self.texts.get(file, ""))

    def still_there(self, file: Path, pos: m.Position) -> bool:
        """Whether the file still reads at `pos` what the analysed text did: a location in another file is
        given only where that file's buffer has not moved it since (or, broken, since its last good text)."""
        analysed, now = self.stale.get(file, self.texts.get(file, "")), self.now(file)
        return analysed is now or _text_at(analysed, pos) == _text_at(now, pos)

    def entities(self) -> Iterator[ir.Entity]:
        if self.ruleset is not None:
            for group in self.ruleset.entities.values():
                yield from group.values()

    def entity(self, kind: str, id_: str) -> ir.Entity | None:
        return self.ruleset.entities.get(kind, {}).get(id_) if self.ruleset is not None else None

    def targets(self) -> Iterator[tuple[Path, Target]]:
        """Every name written in the ruleset that names an entity: headers, references, attributes in formulas."""
        for entity in self.entities():
            file = self.real(entity.file)
            if file is None:
                continue
            yield file, Target(entity.kind, entity.id, entity.id_pos, "", True)
            for node in _walk_entity(entity):
                if isinstance(node, ir.Ref) and node.id is not None:
                    yield file, Target(node.kind, node.id, node.pos, node.text, False)
                elif isinstance(node, ir.Var) and node.attribute is not None:
                    yield file, Target("attribute", node.attribute, node.pos, node.name, False)

    def at(self, path: Path, line: int, column: int) -> Target | None:
        found = [t for file, t in self.targets() if file == path and _contains(t.pos, line, column)]
        # the innermost: a reference inside a header's span wins over the header
        return min(found, key=lambda t: (t.pos.end_line - t.pos.line, t.pos.end_column - t.pos.column), default=None)


def _walk_entity(entity: ir.Entity) -> Iterator[object]:
    for value in entity.fields.values():
        yield from ir.walk(value)
    for row in entity.rows:
        yield from ir.walk(row)


class Analyser:
    """Open buffers over the files on disk, compiled one ruleset at a time in memory."""

    def __init__(self) -> None:
        self.open: dict[Path, str] = {}
        self.snapshots: dict[Path, Snapshot] = {}
        self.memo = Memo()
        self.bases = default_bases()  # where extended rulesets are looked for, besides beside the ruleset
        self.good: dict[Path, str] = {}  # each open buffer's last text without syntax errors
        # One analysis at a time: the language server runs them beside its requests (RulesServer.publish_all).
        self.lock = threading.RLock()
        self._syntax: dict[Path, tuple[str, tuple[Diagnostic, ...]]] = {}  # buffer -> (its text, its errors)
        self._no_good_saved: set[Path] = set()  # open buffers whose saved text does not parse either

    def close_buffer(self, path: Path) -> None:
        """The editor closed it: the disk is its truth again, and a reopened buffer starts afresh."""
        self.open.pop(path, None)
        self.good.pop(path, None)
        self._syntax.pop(path, None)
        self._no_good_saved.discard(path)

    @staticmethod
    def _saved_clean(path: Path) -> str | None:
        """The file's text on disk, if it has one that parses without errors."""
        text, problem = read_source(path)
        if text is None or problem is not None:
            return None
        try:
            return None if parser().parse_file(str(path), text)[1] else text
        except RecursionError:
            return None

    def syntax_errors(self, path: Path, text: str) -> tuple[Diagnostic, ...]:
        """The buffer's syntax errors, from its own parse (kept while its text is the same)."""
        kept = self._syntax.get(path)
        if kept is not None and kept[0] == text:
            return kept[1]
        try:
            found = tuple(parser().parse_file(str(path), text)[1])
        except RecursionError:  # nested past Python's limit: the compiler says so, as for any file
            found = ()
        self._syntax[path] = (text, found)
        return found

    def close(self) -> None:
        self.memo.clear()

    def last(self, path: Path) -> Snapshot | None:
        """The last analysis of the file's ruleset, as it is (perhaps of other texts than the buffers now)."""
        root = ruleset_root(path, self.open)
        return self.snapshots.get(root.resolve()) if root is not None else None

    def reads_now(self, snapshot: Snapshot | None, path: Path) -> bool:
        """Whether `snapshot` analysed the open buffer `path` as the editor has it now."""
        text = self.open.get(path)
        return snapshot is not None and text is not None and snapshot.texts.get(path) == text

    def analyse(self, path: Path, stop: Callable[[], bool] | None = None) -> Snapshot | None:
        """The file's ruleset analysed as the buffers are now; `Superseded` if `stop` says so meanwhile."""
        with self.lock:
            return self._analyse(path, dict(self.open), stop)  # the buffers now: the editor changes them meanwhile

    def _analyse(self, path: Path, opened: dict[Path, str], stop: Callable[[], bool] | None) -> Snapshot | None:
        root = ruleset_root(path, opened)
        if root is None:
            return None
        root = root.resolve()
        if not is_source(root / MANIFEST, opened):
            return self.snapshots.get(root)
        buffers = {p: t for p, t in opened.items() if p.is_relative_to(root) and p.suffix == SUFFIX}
        broken = {p: errors for p, t in buffers.items() if (errors := self.syntax_errors(p, t))}
        self.good.update((p, t) for p, t in buffers.items() if p not in broken)
        # broken before its first analysis: the saved text, if good (read once while the buffer is open)
        for path in broken.keys() - self.good.keys() - self._no_good_saved:
            saved = self._saved_clean(path)
            if saved is not None:
                self.good[path] = saved
            else:
                self._no_good_saved.add(path)
        # A buffer broken mid-typing is read as its last text without syntax errors: a block that does not
        # parse would otherwise vanish, and every file naming what it defines would be told it does not exist.
        stale = {p: good for p in broken if (good := self.good.get(p)) is not None}  # closed meanwhile: gone
        compilation = compile_paths([root], overlay={**opened, **stale}, bases=self.bases, memo=self.memo, stop=stop)
        mapping = {shown: real_path(shown) for shown in compilation.sources}
        texts = {mapping[shown]: text for shown, text in compilation.sources.items()}
        # the buffers as the editor has them (one the compiler did not read, too large, say, included)
        texts.update(buffers)
        snapshot = self._snapshot(root, texts, compilation, mapping)
        for path in stale:  # its own diagnostics: the syntax errors of what the editor shows
            snapshot.diagnostics[path] = list(broken[path])
        snapshot.stale, snapshot.live = stale, self.open
        self.snapshots[root] = snapshot
        return snapshot

    def others(self, root: Path, folders: Iterable[Path]) -> list[Snapshot]:
        """The other rulesets of the workspace, analysed: those under its folders and where bases are looked
        for, and (when no folder holds the ruleset from above, as when the editor opened the ruleset's own
        folder) those beside it, where a homebrew that extends it usually is."""
        root = root.resolve()
        folders = [f.resolve() for f in folders]
        if not any(root.is_relative_to(f) and root != f for f in folders):
            folders.append(root.parent)
        found, _ = discover([f for f in dict.fromkeys([*folders, *self.bases]) if f.is_dir()], self.open)
        analysed = (self.analyse(r.root / MANIFEST) for r in found if r.root.resolve() != root)
        return [snapshot for snapshot in analysed if snapshot is not None]

    def _snapshot(
        self, root: Path, texts: dict[Path, str], compilation: Compilation, mapping: dict[str, Path]
    ) -> Snapshot:
        per_file: dict[Path, list[Diagnostic]] = {path: [] for path in texts}
        for diagnostic in compilation.diagnostics:
            file = mapping.get(diagnostic.pos.file) if diagnostic.pos is not None else None
            per_file.setdefault(file or root / MANIFEST, []).append(diagnostic)
        ruleset = _own(compilation.rulesets, mapping, root)
        previous = self.snapshots.get(root)
        if ruleset is None and previous is not None:  # keep answering from the last ruleset that compiled
            ruleset, mapping = previous.ruleset, {**previous.mapping, **mapping}
        kinds = dict(ruleset.kinds) if ruleset is not None else dict(prelude())
        return Snapshot(root, texts, per_file, ruleset, kinds, mapping)


def real_path(shown: str) -> Path:
    """The file a display path names (relative to the working folder, or absolute)."""
    return (Path.cwd() / shown).resolve()


def _own(rulesets: tuple[CompiledRuleset, ...], mapping: dict[str, Path], root: Path) -> CompiledRuleset | None:
    """The ruleset of the folder analysed, among it and the rulesets it extends: the one with entities
    written in that folder (an extending ruleset holds its bases' entities too, so it has the most)."""

    inside = {shown for shown, path in mapping.items() if path.is_relative_to(root)}

    def own(ruleset: CompiledRuleset) -> int:
        return sum(1 for group in ruleset.entities.values() for e in group.values() if e.file in inside)

    ranked = sorted(rulesets, key=lambda r: (own(r), sum(len(g) for g in r.entities.values())), reverse=True)
    if ranked and (own(ranked[0]) or len(ranked) == 1):
        return ranked[0]
    return None


# ---------------------------------------------------------------- features (plain functions over a snapshot)


def diagnostics_for(snapshot: Snapshot, path: Path) -> list[lsp.Diagnostic]:
    text = snapshot.texts.get(path, "")
    return [_shown(d, path, text) for d in snapshot.diagnostics.get(path, [])]


def _shown(d: Diagnostic, path: Path, text: str) -> lsp.Diagnostic:
    pos = d.pos or m.Position(str(path), 1, 1, 1, 1)
    return lsp.Diagnostic(
        range=to_range(pos, text),
        message=d.message + (f"\n{d.hint}" if d.hint else ""),
        severity=lsp.DiagnosticSeverity.Error if d.severity == "error" else lsp.DiagnosticSeverity.Warning,
        code=d.code,
        source="rulesdsl",
    )


@functools.lru_cache(maxsize=4)
def parsed(path: Path, text: str) -> m.SourceFile:
    """The buffer's own parse (what parses of it): what `locate` reads with the tokens."""
    try:
        return parser().parse_file(str(path), text)[0]
    except RecursionError:  # nested past Python's limit: the tokens alone say where things are
        return m.SourceFile(str(path), text, ())


def _kind_of(snapshot: Snapshot, statement: Statement) -> Kind | None:
    """The kind whose fields a statement's body holds: a block's own, or the kind a patch changes."""
    if statement.kind == "patch":
        return snapshot.kinds.get(statement.target or "")
    if statement.kind in ("kind", "remove", "override"):
        return None
    return snapshot.kinds.get(statement.kind)


def _typed_range(place: Place, line: int, column: int, text: str) -> lsp.Range:
    """What a completion replaces: the word (a key's name, a whole string) the cursor is in; an
    unterminated string up to the cursor; a closed one the cursor is in up to its closing quote (which
    stays); nothing, at the cursor."""
    start = end = column
    word = place.word
    if word is not None:
        start = word[3]
        if word[0] in KEYS:
            end = start + len(key_name(word))
        elif word[0] == "STRING" and place.quoted:
            end = start + len(word[1]) - 1  # up to the string's closing quote, which stays
        elif word[0] != OPEN_STRING:
            end = start + len(word[1])
    return lsp.Range(to_position(line, start, text), to_position(line, end, text))


def _wanted(snapshot: Snapshot, place: Place, kind: Kind) -> list[str]:
    """The kinds whose names the value at the cursor takes."""
    decl = kind.fields.get(place.field.key) if place.field is not None else None
    if decl is None:
        return []
    before = place.before
    if isinstance(decl.type, RequirementType):
        if before is not None and before[0] == "NAME" and before[1] in snapshot.kinds:
            return [before[1]]  # `career navy`: an entity of the kind just named
        if place.key_position:
            return []
        named = {"TRAIT": "trait", "SKILL": "skill", "IN_SETTING": "setting"}
        return [named.get(before[0] if before is not None else "", "lifepath")]
    return [] if place.key_position else list(referenced_kinds(decl.type))


def completions(snapshot: Snapshot, path: Path, line: int, column: int) -> list[lsp.CompletionItem]:
    text = snapshot.texts.get(path, "")
    source = parsed(path, text)
    place = locate(source, line, column)
    statement = place.statement
    if statement is None:
        return []
    where = _typed_range(place, line, column, text)
    if place.in_header:
        return _in_header(snapshot, source, place, line, column, where)
    kind = _kind_of(snapshot, statement)
    if kind is None:
        return []
    if place.cell is not None:
        return _in_row(snapshot, source, place, place.cell, where)
    wanted = _wanted(snapshot, place, kind)
    if place.key_position and not wanted:
        # a line's first word in a table may be a field's key or a row's first key
        row_start = (place.before is None or place.before[0] in ("_NL", "LBRACE")) and (
            place.word is None or place.word[0] not in KEYS
        )
        first_keys = _in_row(snapshot, source, place, Cell(True, 0), where) if row_start else []
        return (
            first_keys
            + _spaced_names(snapshot, source, place, kind, text)
            + [
                lsp.CompletionItem(
                    label=f.name,
                    kind=lsp.CompletionItemKind.Field,
                    detail=f"{kind.name} field" + ("" if f.optional else " (required)"),
                    documentation=f.doc,
                    text_edit=lsp.TextEdit(where, f.name if place.word and place.word[0] in KEYS else f"{f.name}: "),
                )
                for f in kind.fields.values()
            ]
        )
    return _entities(snapshot, wanted, place, where)


def _spaced_names(
    snapshot: Snapshot, source: m.SourceFile, place: Place, kind: Kind, text: str
) -> list[lsp.CompletionItem]:
    """`skills: 3 pts: Animal Hus`: a name with spaces typed without its quotes reads as a name and then a
    field's key. The names of the field's kinds that begin with those words replace all of them, quoted."""
    word = place.word
    statement = place.statement
    if word is None or word[0] != "NAME" or statement is None:
        return []
    toks = lenient_tokens(source.text)[statement.first : statement.end]
    at = toks.index(word) if word in toks else -1
    first = at
    while first > 0 and toks[first - 1][0] == "NAME" and toks[first - 1][2] == word[2]:
        if _end_of(toks[first - 1]) + 1 != toks[first][3]:
            break  # names one space apart only: `Animal Hus`
        first -= 1
    if first in (at, -1):
        return []
    typed = " ".join(t[1] for t in toks[first:at]) + " " + place.typed
    where = lsp.Range(to_position(word[2], toks[first][3], text), to_position(word[2], word[3] + len(word[1]), text))
    wanted = _wanted(snapshot, replace(place, key_position=False), kind)
    return [
        item
        for item in _entities(snapshot, wanted, replace(place, quoted=False), where)
        if item.label.lower().startswith(typed.lower())
    ]


def _entities(snapshot: Snapshot, wanted: list[str], place: Place, where: lsp.Range) -> list[lsp.CompletionItem]:
    """The names of the entities of these kinds, written where the cursor is."""
    items = []
    for target in wanted:
        for entity in sorted(
            (snapshot.ruleset.entities.get(target, {}) if snapshot.ruleset else {}).values(), key=lambda e: e.name
        ):
            items.append(
                lsp.CompletionItem(
                    label=_label(entity.name, place),
                    kind=lsp.CompletionItemKind.Reference,
                    detail=f"{target} {entity.id}",
                    text_edit=lsp.TextEdit(where, _written(entity.name, place) or written_name(entity.name)),
                )
            )
    return items


# After a typed quote, a name is written inside that string, its quote never doubled. The label is the name
# as quoted then, and there is no filterText: a client filters what is typed from the edit's start (the quote)
# by it, and Neovim 0.7's omnifunc starts the completion where the edit does only for items without one.
def _label(name: str, place: Place) -> str:
    return quote(name) if place.quoted else name


def _written(name: str, place: Place) -> str | None:
    """The name written over a typed quote and what follows it up to the cursor's string's end: the string
    closed, unless the editor has already closed it (the edit stops before that quote). None: no quote typed."""
    if not place.quoted:
        return None
    return quote(name)[:-1] if place.word is not None and place.word[0] == "STRING" else quote(name)


def _in_header(
    snapshot: Snapshot, source: m.SourceFile, place: Place, line: int, column: int, where: lsp.Range
) -> list[lsp.CompletionItem]:
    """In a statement's header: a kind as its first word (or after `patch` and `remove`), the entities of
    that kind after `patch KIND`; nothing after a block's kind (its id and name are new: no field names)."""
    statement = place.statement
    assert statement is not None
    at = (place.word[2], place.word[3]) if place.word is not None else (line, column)
    before = [t for t in lenient_tokens(source.text)[statement.first : statement.end] if (t[2], t[3]) < at]
    changes = bool(before) and before[0][0] in ("PATCH", "REMOVE")
    if not before or (changes and len(before) == 1):
        return [
            lsp.CompletionItem(
                label=name,
                kind=lsp.CompletionItemKind.Class,
                detail="kind",
                documentation=kind.title,
                text_edit=lsp.TextEdit(where, name),
            )
            for name, kind in sorted(snapshot.kinds.items())
        ]
    if changes and len(before) == 2 and before[1][1] in snapshot.kinds:
        return _entities(snapshot, [before[1][1]], place, where)
    return []


def _in_row(
    snapshot: Snapshot, source: m.SourceFile, place: Place, cell: Cell, where: lsp.Range
) -> list[lsp.CompletionItem]:
    """In a table row: for a `ref KIND` key or column, the entities of that kind; for one of plain text,
    the names the other rows write there. The table's `keys` and `columns` are read from the buffer as
    it is written (the block being typed does not parse)."""
    statement = place.statement
    assert statement is not None
    declared = field_items(source, statement, "keys" if cell.keys else "columns")
    column = declared[cell.index] if cell.index < len(declared) else ()
    if len(declared) > cell.index or not cell.keys:  # a declared column, or one the table lacks
        refs = [column[i + 1][1] for i in range(len(column) - 1) if column[i][0] == "REF"]
        if refs:
            return _entities(snapshot, refs, place, where)
        if len(column) != 1:  # a typed column (`to_hit(int)`), or none: nothing to offer
            return []
    names: dict[str, str] = {}  # as written -> the name
    for keys, cells in rows(source, statement):
        items = keys if cell.keys else cells
        if cell.index < len(items) and len(items[cell.index]) == 1:
            tok = items[cell.index][0]
            if tok != place.word and tok[0] in ("STRING", *NAME_TYPES):
                names.setdefault(tok[1], tok[1][1:-1] if tok[0] == "STRING" else tok[1])
    return [
        lsp.CompletionItem(
            label=_label(name, place),
            kind=lsp.CompletionItemKind.Value,
            detail="key" if cell.keys else "cell",
            text_edit=lsp.TextEdit(where, _written(name, place) or written),
        )
        for written, name in sorted(names.items(), key=lambda item: item[1])
    ]


def _target_here(snapshot: Snapshot, path: Path, line: int, column: int) -> Target | None:
    """What the cursor names, when the buffer still says so: a name written where the last analysis saw it,
    in the statement the cursor is in (never another block's, even when this one does not parse)."""
    target = snapshot.at(path, line, column)
    if target is None or not snapshot.still_there(path, target.pos):
        return None
    text = snapshot.texts.get(path, "")
    source = parsed(path, text)
    statement = statement_at(source, line, column)
    if statement is None or not _inside(target.pos, statement.span):
        return None
    starts = {(t[2], t[3]) for t in lenient_tokens(text)[statement.first : statement.end]}
    return target if (target.pos.line, target.pos.column) in starts else None


def _inside(pos: m.Position, span: m.Position) -> bool:
    return (span.line, span.column) <= (pos.line, pos.column) and (pos.end_line, pos.end_column) <= (
        span.end_line,
        span.end_column,
    )


def definition(snapshot: Snapshot, path: Path, line: int, column: int) -> lsp.Location | None:
    target = _target_here(snapshot, path, line, column)
    if target is None:
        return None
    entity = snapshot.entity(target.kind, target.id)
    file = snapshot.real(entity.file) if entity is not None else None
    if entity is None or file is None or not snapshot.still_there(file, entity.id_pos):
        return None
    return lsp.Location(uri_of(file), to_range(entity.id_pos, snapshot.now(file)))


def references(snapshot: Snapshot, path: Path, line: int, column: int, declaration: bool) -> list[lsp.Location]:
    target = _target_here(snapshot, path, line, column)
    if target is None:
        return []
    found = []
    for file, other in snapshot.targets():
        same = (other.kind, other.id) == (target.kind, target.id) and (declaration or not other.defining)
        if same and snapshot.still_there(file, other.pos):
            found.append(lsp.Location(uri_of(file), to_range(other.pos, snapshot.now(file))))
    return found


_TAG = re.compile(r"<[^>]+>")


def hover(snapshot: Snapshot, path: Path, line: int, column: int) -> lsp.Hover | None:
    target = _target_here(snapshot, path, line, column)
    if target is None or snapshot.ruleset is None:
        return None
    entity = snapshot.entity(target.kind, target.id)
    if entity is None:
        return None
    from rulesdsl.targets.html.values import Values, heading  # the reference's own rendering of field values
    from rulesdsl.targets.labels import labels

    lines = [f"**{entity.name}** ({entity.kind} `{entity.id}`)", ""]
    values = Values(snapshot.ruleset, labels(snapshot.ruleset))
    for decl in snapshot.ruleset.kinds[entity.kind].fields.values():
        if decl.name not in entity.fields or decl.name == "description":
            continue
        try:
            shown = values.value(decl.type, entity.fields[decl.name])
        except (AssertionError, KeyError):  # a half-typed ruleset: references not yet resolved
            continue
        lines.append(f"- {heading(decl.name)}: {html.unescape(_TAG.sub('', str(shown)))}")
    return lsp.Hover(
        contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value="\n".join(lines)),
        range=to_range(target.pos, snapshot.texts.get(path, "")),
    )


def symbols(text: str, path: Path) -> list[lsp.DocumentSymbol]:
    """The file's outline, from its own parse, each statement spanning its header to its `}`. A statement
    that does not parse is there too, named by what its header says, its detail saying it does not parse
    (it spans to where it breaks off)."""
    result = []
    for found in statements(parsed(path, text)):
        statement = found.node
        if statement is None:
            result.append(_broken_symbol(found, text))
            continue
        match statement:
            case m.Block(kind, kind_pos, block_id, name):
                label = name.value if name else block_id.text if block_id else kind
                selection = (name or block_id or m.Name(kind, kind_pos)).pos
                detail = kind
                symbol_kind = lsp.SymbolKind.Struct if kind == "table" else lsp.SymbolKind.Object
            case m.KindDecl(kind_name, title):
                label, selection, detail = kind_name.text, kind_name.pos, "kind" + (f" {title.value}" if title else "")
                symbol_kind = lsp.SymbolKind.Class
            case m.Patch(kind_name, target) | m.Removal(kind_name, target):
                word = "patch" if isinstance(statement, m.Patch) else "remove"
                label = target.value if isinstance(target, m.String) else target.text
                selection, detail, symbol_kind = target.pos, f"{word} {kind_name.text}", lsp.SymbolKind.Event
            case _:
                assert_never(statement)
        whole = to_range(found.span, text)
        picked = to_range(selection, text)
        result.append(lsp.DocumentSymbol(label, symbol_kind, whole, picked, detail=detail))
    return result


BROKEN = "does not parse"  # the detail of an outline's statement that does not parse


def _broken_symbol(found: Statement, text: str) -> lsp.DocumentSymbol:
    """A statement that does not parse, in the outline: its header's id or name (else its first word)."""
    label = found.id or found.kind or "?"
    match found.kind:
        case "table":
            symbol_kind = lsp.SymbolKind.Struct
        case "kind":
            symbol_kind = lsp.SymbolKind.Class
        case "patch" | "remove":
            symbol_kind = lsp.SymbolKind.Event
        case _:
            symbol_kind = lsp.SymbolKind.Object
    words = " ".join(w for w in (found.kind, found.target if found.kind in ("patch", "remove") else None) if w)
    selection = found.id_span or found.span
    detail = f"{words} ({BROKEN})" if words else BROKEN
    return lsp.DocumentSymbol(label, symbol_kind, to_range(found.span, text), to_range(selection, text), detail=detail)


class RenameWaits(Exception):
    """A rename asked for while a file of the rulesets it would edit has syntax errors (said to the user)."""


def rename(
    snapshot: Snapshot, path: Path, line: int, column: int, new_name: str, others: Iterable[Snapshot] = ()
) -> lsp.WorkspaceEdit | None:
    """Give an entity a new name: its header and every reference that names it by name (or by the id
    the old name made) are rewritten, in every file of its ruleset and of `others` (the workspace's other
    rulesets: those that extend its ruleset hold it too, and name it in their references, patches and
    removals); references by explicit id or alias still hold."""
    target = _target_here(snapshot, path, line, column)
    if target is None or not new_name.strip():
        return None
    waiting = sorted({p for seen in (snapshot, *others) for p in seen.stale})
    if waiting:  # its names are where its last good text had them: an edit there could land anywhere
        raise RenameWaits(f"rename waits until {', '.join(p.name for p in waiting)} parses again")
    entity = snapshot.entity(target.kind, target.id)
    file = snapshot.real(entity.file) if entity is not None else None
    if entity is None or file is None:
        return None
    old = {slug(entity.name)}
    header = _header_of(snapshot, entity, file)
    explicit_id = header is not None and header.id is not None and header.name is not None
    if not explicit_id:
        old.add(entity.id)
    edits: dict[tuple[str, int, int, int, int], lsp.TextEdit] = {}  # one edit per place, however many rulesets see it

    def edit(where: Path, pos: m.Position, new_text: str, text: str) -> None:
        if not all(seen.still_there(where, pos) for seen in (snapshot, *others) if where in seen.texts):
            raise RenameWaits(f"rename waits until {where.name} is analysed as it is now")
        key = (uri_of(where), pos.line, pos.column, pos.end_line, pos.end_column)
        edits.setdefault(key, lsp.TextEdit(to_range(pos, snapshot.live.get(where, text)), new_text))

    if header is not None:
        written = header.name or header.id
        assert written is not None
        new_text = quote(new_name) if header.name is not None else written_name(new_name)
        edit(file, written.pos, new_text, snapshot.texts[file])
    for seen in (snapshot, *others):
        if file not in seen.mapping.values():
            continue  # a ruleset that does not build on the entity's
        same = seen.entity(target.kind, target.id)
        if same is not None and (seen.real(same.file) != file or same.id_pos != entity.id_pos):
            continue  # its own entity of that id
        named = seen.targets() if same is not None else iter(())  # a ruleset that removed it names it there only
        for where, other in (*named, *_change_targets(seen)):
            if (other.kind, other.id) != (target.kind, target.id) or other.defining or slug(other.text) not in old:
                continue
            edit(where, other.pos, written_name(new_name), seen.texts.get(where, ""))
    changes: dict[str, list[lsp.TextEdit]] = {}
    for (uri, *_), found in sorted(edits.items()):
        changes.setdefault(uri, []).append(found)
    return lsp.WorkspaceEdit(changes=changes)


def _change_targets(snapshot: Snapshot) -> Iterator[tuple[Path, Target]]:
    """What the ruleset's patches and removals name (`patch skill Sorcery`): read from the statements."""
    if snapshot.ruleset is None:
        return
    changes = snapshot.ruleset.changes
    for change in (*changes.patched, *changes.removed):
        file = snapshot.real(change.pos.file) if change.pos is not None else None
        if file is None or change.pos is None:
            continue
        found = statement_at(parsed(file, snapshot.texts.get(file, "")), change.pos.line, change.pos.column)
        if found is not None and isinstance(found.node, m.Patch | m.Removal):
            named = found.node.target
            text = named.value if isinstance(named, m.String) else named.text
            yield file, Target(change.kind, change.id, named.pos, text, False)


def _header_of(snapshot: Snapshot, entity: ir.Entity, file: Path) -> m.Block | None:
    """The parsed block an entity was written in: the statement its id's position is in."""
    text = snapshot.texts.get(file, "")
    found = statement_at(parsed(file, text), entity.id_pos.line, entity.id_pos.column)
    return found.node if found is not None and isinstance(found.node, m.Block) else None


# ---------------------------------------------------------------- code actions


def code_actions(snapshot: Snapshot, path: Path, first: tuple[int, int], last: tuple[int, int]) -> list[lsp.CodeAction]:
    """Quick fixes for what lies in (first, last) (lines and columns from 1): a name a diagnostic says is
    unknown changed to one it suggests, a word of the language used as a name quoted, a required field
    the block lacks added."""
    text = snapshot.texts.get(path, "")
    toks = lenient_tokens(text)
    actions: list[lsp.CodeAction] = []
    for d in snapshot.diagnostics.get(path, []):
        if d.pos is None or (d.pos.end_line, d.pos.end_column) < first or (d.pos.line, d.pos.column) > last:
            continue
        # the token the diagnostic points at, or the last one before where it points (the end of a line)
        index = bisect.bisect_right(toks, (d.pos.line, d.pos.column), key=lambda t: (t[2], t[3])) - 1
        if index < 0:
            continue
        if d.suggestions and _written_at(toks[index]) == (d.pos.line, d.pos.column, d.pos.end_line, d.pos.end_column):
            actions += _did_you_mean(path, text, toks[index], d)
        # a syntax error at a word of the language, or just after one, or on a line the line before ran onto
        for tok in dict.fromkeys([*toks[max(index - 1, 0) : index + 1], *_ran_on_from(toks, d)]):
            actions += _quote_keyword(path, text, tok, d)
    actions += _add_required(snapshot, path, text, first)
    return actions


def _fix(title: str, path: Path, edits: list[lsp.TextEdit], fixes: Diagnostic | None, text: str) -> lsp.CodeAction:
    return lsp.CodeAction(
        title=title,
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[_shown(fixes, path, text)] if fixes is not None else None,
        edit=lsp.WorkspaceEdit(changes={uri_of(path): edits}),
    )


def _token_range(tok: Token, text: str, length: int | None = None) -> lsp.Range:
    return to_range(m.Position("", tok[2], tok[3], tok[2], tok[3] + (len(tok[1]) if length is None else length)), text)


def _written_at(tok: Token) -> tuple[int, int, int, int]:
    """Where a token writes its word: a key's name without its `:`, `+=` or `-=`. A diagnostic's
    suggestions replace the word it points at, and only when it points at exactly one word."""
    length = len(key_name(tok)) if tok[0] in KEYS else len(tok[1])
    return tok[2], tok[3], tok[2], tok[3] + length


def _one_word(name: str) -> bool:
    """Whether `name` written bare is one word to the scanner (a name, or a word of the language)."""
    toks = lenient_tokens(name)
    return len(toks) == 1 and toks[0][0] in NAME_TYPES and toks[0][1] == name


def _did_you_mean(path: Path, text: str, tok: Token, d: Diagnostic) -> list[lsp.CodeAction]:
    # a header's words (a kind, an id, what a patch changes) are names whatever they spell: `lifepath`
    # stays bare there, where a value would quote it
    in_header = locate(parsed(path, text), tok[2], tok[3] + 1).in_header
    found = []
    for name in d.suggestions:
        if tok[0] in KEYS:  # a key: its name only, the `:` stays
            where, written = _token_range(tok, text, len(key_name(tok))), name
        elif tok[0] == "STRING":
            where, written = _token_range(tok, text), quote(name)
        elif tok[0] in NAME_TYPES:
            bare = in_header and _one_word(name)
            where, written = _token_range(tok, text), name if bare else written_name(name)
        else:
            continue
        found.append(_fix(f"Change to '{name}'", path, [lsp.TextEdit(where, written)], d, text))
    return found


def _ran_on_from(toks: tuple[Token, ...], d: Diagnostic) -> list[Token]:
    """The word of the language a syntax error's line was run onto from, when its hint says so (parse.ran_on:
    the parser read it from its own tokens): the last token before the error's line, which the line ends
    the parser sees (lenient_tokens) leave with no line end after it."""
    if d.pos is None or d.hint is None:
        return []
    before = bisect.bisect_left(toks, (d.pos.line, 0), key=lambda t: (t[2], t[3])) - 1
    return [toks[before]] if before >= 0 and d.hint == ran_on_hint(toks[before][1]) else []


def _quote_keyword(path: Path, text: str, tok: Token, d: Diagnostic) -> list[lsp.CodeAction]:
    if d.code != "E101" or tok[0] not in NAME_TYPES or tok[0] == "NAME" or written_name(tok[1]) == tok[1]:
        return []
    edit = lsp.TextEdit(_token_range(tok, text), written_name(tok[1]))
    return [_fix(f"Quote '{tok[1]}' (a word of the language)", path, [edit], d, text)]


def _add_required(snapshot: Snapshot, path: Path, text: str, at: tuple[int, int]) -> list[lsp.CodeAction]:
    """Add each required field the block at `at` lacks, where the formatter would put it: on a line of its
    own before the `}` of a block of many lines, after the last field of a one-line block."""
    found = statement_at(parsed(path, text), *at)
    if found is None or not found.closed or not isinstance(found.node, m.Block):
        return []
    block = found.node
    kind = _kind_of(snapshot, found)
    if kind is None:
        return []
    entity = _entity_of(snapshot, path, block)
    written = {f.key for f in block.fields} | (set(entity.fields) if entity is not None else set())
    missing = [name for name in kind.required if name not in written]
    if not missing:
        return []
    toks = lenient_tokens(text)
    close, previous = toks[found.end - 1], toks[found.end - 2]
    if previous[0] == "_NL":  # the `}` on a line of its own
        at_point = to_position(close[2], 1, text)
        new_text = "  {}: \n"
    else:
        at_point = to_position(previous[2], _end_of(previous), text)
        new_text = " {}:" if previous[0] == "LBRACE" else "  {}:"
    where = lsp.Range(at_point, at_point)
    edits = [(name, lsp.TextEdit(where, new_text.format(name))) for name in missing]
    return [_fix(f"Add the required field '{name}'", path, [edit], None, text) for name, edit in edits]


def _end_of(tok: Token) -> int:
    column: int = tok[3]
    return column + len(tok[1])


def _entity_of(snapshot: Snapshot, path: Path, block: m.Block) -> ir.Entity | None:
    """The entity lowered from `block`, when the last analysis has it (it may have filled in a field the
    block leaves out, from the file's defaults)."""
    written = block.name or block.id
    if written is None:
        return None
    for entity in snapshot.ruleset.entities.get(block.kind, {}).values() if snapshot.ruleset else ():
        here = (entity.id_pos.line, entity.id_pos.column) == (written.pos.line, written.pos.column)
        if here and snapshot.real(entity.file) == path:
            return entity
    return None


def formatting(text: str) -> list[lsp.TextEdit] | None:
    try:
        formatted = format_text(text)
    except NotFormatted:
        return None  # the diagnostics already say why
    if formatted == text:
        return []
    lines = lines_of(text)
    last = len(lines.lines) - 1
    end = lsp.Position(last, lines.utf16(last, len(lines.lines[last])))
    return [lsp.TextEdit(lsp.Range(lsp.Position(0, 0), end), formatted)]


# ---------------------------------------------------------------- framing

# The largest message read: a 4 MiB source file (MAX_SOURCE_BYTES) in a didOpen or didChange, every
# character of it escaped in JSON (`\u0001` is six bytes), with room to spare. A larger frame is skipped.
MAX_MESSAGE_BYTES = 32 * 1024 * 1024
_MAX_LINE = 64 * 1024  # a header line; stray bytes are read in pieces of this size, never all at once
_LENGTH = b"content-length:"
_TOKEN = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-")


def _header(line: bytes) -> tuple[bytes, bytes] | None:
    """A `Name: value` header line as its lower-case name and value, else None."""
    if not line.endswith(b"\n"):
        return None  # cut at _MAX_LINE
    name, colon, value = line.rstrip(b"\r\n").partition(b":")
    if not colon or not name or not _TOKEN.issuperset(name):
        return None
    return name.lower(), value.strip()


class Frames:
    """The client's byte stream as pygls reads it (`readline` for headers, `read` for a body), each frame
    checked first. pygls alone reads a Content-Length of any size in one piece (a huge one ended the
    server with MemoryError) and, after a frame without one or after stray bytes, never found the start of
    a frame again. Here such a frame, or one over MAX_MESSAGE_BYTES, is reported and skipped, and reading
    resumes at the next `Content-Length` header; pygls is handed only well-formed frames."""

    def __init__(self, stream: BinaryIO, report: Callable[[str], None]) -> None:
        self.stream = stream
        self.report = report
        self._lines: list[bytes] = []  # the header lines pygls is handed next
        self._body = b""

    def readline(self) -> bytes:
        if not self._lines:
            body = self._next()
            if body is None:
                return b""  # the end of the stream: pygls stops
            self._body = body
            self._lines = [b"\r\n", b"Content-Length: %d\r\n" % len(body)]
        return self._lines.pop()

    def read(self, size: int) -> bytes:
        body, self._body = self._body, b""
        return body

    def _next(self) -> bytes | None:
        """The body of the next well-formed frame; None at the end of the stream."""
        length = self._headers()
        if length is None:
            return None
        body = self.stream.read(length)  # at most MAX_MESSAGE_BYTES
        if len(body) < length:
            self.report(f"the input ended {length - len(body)} bytes into a message")
            return None
        return body

    def _headers(self) -> int | None:
        """The Content-Length of the next frame whose headers are in order, with the stream at its body."""
        length: bytes | None = None  # as written
        in_frame = False
        skipped = 0
        while True:
            line = self.stream.readline(_MAX_LINE)
            if not line:
                if skipped or in_frame:
                    self.report(f"skipped {skipped} bytes at the end of the input that are not a message")
                return None
            at = line.lower().find(_LENGTH)
            if at > 0:  # stray bytes, then a frame
                skipped, line = skipped + at, line[at:]
                in_frame, length = False, None
            header = _header(line)
            if not in_frame and header is None:
                skipped += len(line) if line.strip() else 0  # blank lines between frames are harmless
                continue
            if header is None and line.strip():  # stray bytes among the headers: the frame is lost
                skipped, in_frame, length = skipped + len(line), False, None
                continue
            if not in_frame and skipped:
                self.report(f"skipped {skipped} bytes that are not a message")
                skipped = 0
            in_frame = True
            if header is not None:
                name, value = header
                if name == _LENGTH[:-1]:
                    length = value
                continue
            # the blank line: the body follows
            in_frame = False
            # no int() of thousands of digits: Python refuses past 4,300, and it is over the limit anyway
            size = int(length) if length is not None and length.isdigit() and len(length) <= 12 else None
            if length is None:
                self.report("a message without a Content-Length header: skipped")
            elif size is None or not 0 < size <= MAX_MESSAGE_BYTES:
                shown = length[:40].decode("ascii", "replace")
                self.report(
                    f"a message whose Content-Length is {shown!r}: skipped "
                    f"(a message is 1 to {MAX_MESSAGE_BYTES} bytes)"
                )
            else:
                return size
            length = None


# ---------------------------------------------------------------- the server


class _Answered:
    """A request already answered with its error: nothing more to do."""


class RulesProtocol(LanguageServerProtocol):
    """pygls, but a message whose params do not fit its method is answered rather than only logged: pygls
    raises while decoding it, before the request's id is known to anything, and the client would wait
    for ever."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            msg_id = data.get("id")
            if "method" not in data or not isinstance(msg_id, int | str) or isinstance(msg_id, bool):
                raise  # a notification or a response: pygls logs it, there is no one to answer
            self._send_response(msg_id, error=exc.to_response_error())
            return _Answered()

    def handle_message(self, message: Any) -> None:
        if not isinstance(message, _Answered):
            super().handle_message(message)


class RulesServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "rulesdsl", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Full, protocol_cls=RulesProtocol
        )
        self.analyser = Analyser()
        self.published: dict[Path, list[lsp.Diagnostic]] = {}
        self.pending: dict[Path, asyncio.TimerHandle] = {}
        self.analyses = 0
        # Analyses after edits run here, so that requests do not wait behind one (issue 20); one at a time.
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rulesdsl-analysis")
        self.versions: dict[Path, int] = {}  # changes of each buffer: an analysis begun before the last is superseded
        self.superseded = 0  # analyses stopped part-way by a later change

    def snapshot(self, uri: str) -> tuple[Path, Snapshot | None]:
        path = path_of(uri)
        snapshot = self.analyser.last(path)
        if not self.analyser.reads_now(snapshot, path):
            snapshot = self.safely(lambda: self.analysed(path)) or snapshot
        return path, snapshot

    def quick(self, uri: str) -> tuple[Path, Snapshot | None, bool]:
        """For what comes as the user types (completion, hover, definition): the last analysis, with the buffer
        as the editor has it now, and whether that analysis read this very text. Issue 20: these answer
        without waiting for an analysis of the ruleset (at 10,000 lifepaths one takes most of a second); a
        name the buffer has moved since is not found there (Snapshot.still_there). A file with no analysis
        yet is analysed."""
        path = path_of(uri)
        snapshot = self.analyser.last(path)
        text = self.analyser.open.get(path)
        if snapshot is None or text is None or path not in snapshot.texts:
            return (*self.snapshot(uri), True)
        if self.analyser.reads_now(snapshot, path):
            return path, snapshot, True
        read = snapshot.stale.get(path, snapshot.texts[path])
        typed = replace(snapshot, texts={**snapshot.texts, path: text}, stale={**snapshot.stale, path: read})
        return path, typed, False

    def quickly(
        self, uri: str, position: lsp.Position, ask: Callable[[Snapshot, Path, int, int], T | None]
    ) -> T | None:
        """`ask` of the quick snapshot; when it finds nothing there and the buffer changed since the analysis,
        of a new analysis (the name may be one the buffer moved, or typed)."""

        def answer(path: Path, snapshot: Snapshot | None) -> T | None:
            if snapshot is None:
                return None
            line, column = from_position(position, snapshot.texts.get(path, ""))
            return self.safely(lambda: ask(snapshot, path, line, column))

        path, snapshot, fresh = self.quick(uri)
        found = answer(path, snapshot)
        return found if found is not None or fresh or snapshot is None else answer(*self.snapshot(uri))

    def analysed(self, path: Path, stop: Callable[[], bool] | None = None) -> Snapshot | None:
        """The analysis of the file's ruleset, and what it made frozen out of the garbage collector's sight
        (see FULL_COLLECTION_EVERY); objects freed by their last reference are freed all the same."""
        with self.analyser.lock:
            self.analyses += 1
            if self.analyses % FULL_COLLECTION_EVERY == 0:
                gc.unfreeze()
                gc.collect()
            with gc_paused():
                found = self.analyser.analyse(path, stop)
                gc.freeze()
            return found

    def safely(self, work: Callable[[], T]) -> T | None:
        """Whatever a half-typed file does to the compiler, the server answers (and says so in its log)."""
        try:
            return work()
        except Exception as exc:  # a bug in rulesdsl: keep serving, report it
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Error, f"rulesdsl: internal error: {exc!r}"))
            return None

    def changed(self, uri: str, text: str | None) -> None:
        path = path_of(uri)
        self.versions[path] = self.versions.get(path, 0) + 1
        if text is None:
            self.analyser.close_buffer(path)
        else:
            self.analyser.open[path] = text
        waiting = self.pending.pop(path, None)
        if waiting is not None:
            waiting.cancel()
        loop = asyncio.get_running_loop()
        self.pending[path] = loop.call_later(DEBOUNCE_SECONDS, self.publish, path)

    def publish(self, path: Path) -> None:
        """Syntax errors in the edited file at once (it alone is parsed), then everything the compiler says
        about its ruleset, which takes a while on a large one."""
        self.pending.pop(path, None)
        text = self.analyser.open.get(path)
        errors = self.safely(lambda: self.analyser.syntax_errors(path, text)) if text is not None else None
        if text is not None and errors:
            quick = Snapshot(path.parent, {path: text}, {path: list(errors)}, None, {})
            found = diagnostics_for(quick, path)
            self.published[path] = found
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri_of(path), found))
            self.pending[path] = asyncio.get_running_loop().call_later(0.01, self.publish_all, path)
            return
        self.publish_all(path)

    def publish_all(self, path: Path) -> asyncio.Future[Snapshot | None]:
        """The file's ruleset analysed in the worker thread, while requests are answered; then its diagnostics,
        unless the file changed again meanwhile (the analysis after that change publishes them)."""
        self.pending.pop(path, None)
        version = self.versions.get(path, 0)
        analysis = asyncio.get_running_loop().run_in_executor(self.worker, self.brought_up_to_date, path, version)
        analysis.add_done_callback(lambda done: self.publish_analysed(path, version, done))
        return analysis

    def brought_up_to_date(self, path: Path, version: int) -> Snapshot | None:
        """In the worker: the analysis of the file's ruleset as the buffers are now (unless a request made it);
        none if the file changed again before this began or while it ran (it stops at the compiler's next
        checkpoint then): the analysis after that change comes next."""

        def superseded() -> bool:
            return self.versions.get(path, 0) != version

        if superseded():
            return None
        with self.analyser.lock:
            snapshot = self.analyser.last(path)
            if self.analyser.reads_now(snapshot, path):
                return snapshot
            try:  # stopped at the next checkpoint once the file changes again: the analysis of that change is next
                return self.analysed(path, superseded) or snapshot
            except Superseded:
                self.superseded += 1
                return None

    def publish_analysed(self, path: Path, version: int, done: asyncio.Future[Snapshot | None]) -> None:
        if done.cancelled() or self.versions.get(path, 0) != version:
            return
        error = done.exception()
        if error is not None:  # a bug in rulesdsl: keep serving, report it
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Error, f"rulesdsl: internal error: {error!r}"))
            return
        snapshot = done.result()
        if snapshot is None:
            return
        for file in sorted(set(snapshot.diagnostics) | {p for p in self.published if p.is_relative_to(snapshot.root)}):
            found = diagnostics_for(snapshot, file)
            if self.published.get(file) != found or file == path:
                self.published[file] = found
                self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri_of(file), found))


def make_server() -> RulesServer:
    server = RulesServer()
    Handler = Callable[[RulesServer, Any], T]

    def feature(method: str, options: Any = None) -> Callable[[Handler[T]], Handler[T | None]]:
        """`server.feature`, with whatever goes wrong in the handler (a request may name no file, or a file
        in no ruleset) logged and answered with null, which every request here may answer, rather than
        with pygls's internal error and its traceback."""

        def register(handler: Handler[T]) -> Handler[T | None]:
            @functools.wraps(handler)
            def guarded(ls: RulesServer, params: Any) -> T | None:
                return ls.safely(lambda: handler(ls, params))

            server.feature(method, options)(guarded)
            return guarded

        return register

    @feature(lsp.INITIALIZED)
    def initialized(ls: RulesServer, params: lsp.InitializedParams) -> None:
        """Ask to hear of `.rules` files created, changed or deleted outside the editor, from a client that
        watches only when asked (Neovim; VS Code's extension asks in its own options)."""
        workspace = ls.client_capabilities.workspace
        watching = workspace.did_change_watched_files if workspace is not None else None
        if watching is not None and watching.dynamic_registration:
            watchers = lsp.DidChangeWatchedFilesRegistrationOptions([lsp.FileSystemWatcher("**/*.rules")])
            ls.client_register_capability(
                lsp.RegistrationParams(
                    [lsp.Registration("rules-files", lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, watchers)]
                )
            )

    @feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RulesServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.changed(params.text_document.uri, params.text_document.text)

    @feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: RulesServer, params: lsp.DidChangeTextDocumentParams) -> None:
        document = ls.workspace.get_text_document(params.text_document.uri)
        ls.changed(params.text_document.uri, document.source)

    @feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: RulesServer, params: lsp.DidSaveTextDocumentParams) -> None:
        document = ls.workspace.get_text_document(params.text_document.uri)
        ls.changed(params.text_document.uri, document.source)

    @feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: RulesServer, params: lsp.DidCloseTextDocumentParams) -> None:
        ls.changed(params.text_document.uri, None)

    @feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: RulesServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            # an open buffer is the file's truth until it is closed, or deleted: then it goes as a closed
            # buffer would (its names with it), until the editor sends its text again
            if path_of(change.uri) not in ls.analyser.open or change.type == lsp.FileChangeType.Deleted:
                ls.changed(change.uri, None)

    def located(params: Any) -> tuple[Path, Snapshot | None, int, int]:
        path, snapshot = server.snapshot(params.text_document.uri)
        if snapshot is None:
            return path, None, 0, 0
        line, column = from_position(params.position, snapshot.texts.get(path, ""))
        return path, snapshot, line, column

    @feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=[":", " ", ",", '"']))
    def complete(ls: RulesServer, params: lsp.CompletionParams) -> lsp.CompletionList:
        path, snapshot, _ = ls.quick(params.text_document.uri)  # the names the last analysis knew
        if snapshot is None:
            return lsp.CompletionList(is_incomplete=False, items=[])
        line, column = from_position(params.position, snapshot.texts.get(path, ""))
        items = ls.safely(lambda: completions(snapshot, path, line, column))
        return lsp.CompletionList(is_incomplete=False, items=items or [])

    @feature(lsp.TEXT_DOCUMENT_DEFINITION)
    def go_to(ls: RulesServer, params: lsp.DefinitionParams) -> lsp.Location | None:
        return ls.quickly(params.text_document.uri, params.position, definition)

    @feature(lsp.TEXT_DOCUMENT_REFERENCES)
    def find_references(ls: RulesServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
        path, snapshot, line, column = located(params)
        if snapshot is None:
            return []
        found = ls.safely(lambda: references(snapshot, path, line, column, params.context.include_declaration))
        return found or []

    @feature(lsp.TEXT_DOCUMENT_HOVER)
    def show(ls: RulesServer, params: lsp.HoverParams) -> lsp.Hover | None:
        return ls.quickly(params.text_document.uri, params.position, hover)

    @feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def outline(ls: RulesServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
        document = ls.workspace.get_text_document(params.text_document.uri)
        return ls.safely(lambda: symbols(document.source, path_of(params.text_document.uri))) or []

    @feature(lsp.TEXT_DOCUMENT_RENAME)
    def rename_entity(ls: RulesServer, params: lsp.RenameParams) -> lsp.WorkspaceEdit | None:
        path, snapshot, line, column = located(params)
        if snapshot is None:
            return None
        folders = [path_of(f.uri) for f in ls.workspace.folders.values()]
        if ls.workspace.root_path:
            folders.append(Path(ls.workspace.root_path))
        try:
            return rename(snapshot, path, line, column, params.new_name, ls.analyser.others(snapshot.root, folders))
        except RenameWaits as waits:
            ls.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Warning, f"rulesdsl: {waits}"))
            return None

    @feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
    def act(ls: RulesServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        path, snapshot = ls.snapshot(params.text_document.uri)
        if snapshot is None:
            return []
        text = snapshot.texts.get(path, "")
        first = from_position(params.range.start, text)
        last = from_position(params.range.end, text)
        return ls.safely(lambda: code_actions(snapshot, path, first, last)) or []

    @feature(lsp.TEXT_DOCUMENT_FORMATTING)
    def format_document(ls: RulesServer, params: lsp.DocumentFormattingParams) -> list[lsp.TextEdit] | None:
        document = ls.workspace.get_text_document(params.text_document.uri)
        return ls.safely(lambda: formatting(document.source))

    @feature(lsp.SHUTDOWN)
    def shutdown(ls: RulesServer, params: None) -> None:
        ls.worker.shutdown(wait=True, cancel_futures=True)  # an analysis under way ends first
        ls.analyser.close()

    return server


def serve_stdio() -> None:
    def report(problem: str) -> None:
        print(f"rulesdsl lsp: {problem}", file=sys.stderr, flush=True)

    # pygls reads only readline() and read() of what it is given as stdin
    make_server().start_io(stdin=cast(BinaryIO, Frames(sys.stdin.buffer, report)))
