"""The compiler's stages in order: sources -> syntax -> lower -> schema -> semantic.

Everything after this (emitting Python and HTML) works on the resolved IR it returns.
"""

from __future__ import annotations

import gc
import hashlib
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from rulesdsl.compile import ir, merge
from rulesdsl.compile.cache import ParseCache, cache_folder, checked_key
from rulesdsl.compile.checks import schema, semantic, uses
from rulesdsl.compile.jsonform import document
from rulesdsl.compile.kinds import CORE_KINDS, PRELUDE_PATH, Kind, no_such_kind
from rulesdsl.compile.lower import declare_kind, lower_block
from rulesdsl.compile.memo import Caches, Memo
from rulesdsl.compile.merge import Changes, Layer
from rulesdsl.diagnostics import Diagnostic, deduplicate, error, naming_hint, suggest, warning
from rulesdsl.language.fieldtypes import referenced_kinds
from rulesdsl.language.names import slug
from rulesdsl.syntax import tree as m
from rulesdsl.syntax.parse import Parser
from rulesdsl.syntax.scanner import scan
from rulesdsl.syntax.source import MANIFEST, Overlay, RulesetFiles, discover, display_path, read_source
from rulesdsl.syntax.tree import Position
from rulesdsl.syntax.written import expr_text


@dataclass(frozen=True, slots=True)
class CompiledRuleset:
    id: str
    title: str
    version: str
    sources: tuple[tuple[str, str], ...]  # (path relative to the ruleset folder, sha256), sorted
    kinds: dict[str, Kind]  # every kind the ruleset knows: the prelude's and its own, sorted
    entities: dict[str, dict[str, ir.Entity]]  # kind -> id -> resolved entity, both sorted
    source_order: dict[str, tuple[str, ...]]  # kind -> ids in the order the sources give them
    extends: tuple[str, ...] = ()  # the rulesets it builds on, as its manifest lists them
    origin: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, id) -> ruleset that declared it
    changes: Changes = field(default_factory=Changes)  # what it adds to, patches in and removes from its bases
    layer: Layer | None = field(default=None, compare=False, repr=False)  # what rulesets extending it start from
    license: str | None = None  # its manifest's: the licence of the rules and of the packages made from them
    manifest: ir.Entity | None = field(default=None, compare=False, repr=False)  # its `ruleset` block, positions too

    @property
    def digest(self) -> str:
        """One hash of all sources: what the generated code says it was made from."""
        text = "\n".join(f"{path} {digest}" for path, digest in self.sources)
        return hashlib.sha256(text.encode()).hexdigest()

    @property
    def own_kinds(self) -> tuple[str, ...]:
        """Kinds the ruleset declares itself."""
        return tuple(name for name, kind in self.kinds.items() if not kind.builtin)

    def documents(self) -> dict[str, dict[str, dict[str, Any]]]:
        """kind -> id -> JSON document: what `export` prints."""
        return {kind: {i: document(e) for i, e in group.items()} for kind, group in self.entities.items()}


@dataclass(frozen=True, slots=True)
class Compilation:
    rulesets: tuple[CompiledRuleset, ...]
    diagnostics: tuple[Diagnostic, ...]
    sources: dict[str, str]  # display path -> text, for showing source lines
    # (ruleset id, number of entities) of each compiled ruleset, also when a `diagnostics_only` compilation
    # was answered from the cache and `rulesets` is empty
    summary: tuple[tuple[str, int], ...] = ()

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)


# CPU seconds each stage took in the last `compile_paths` (what benchmarks/bench.py prints per entity).
STAGE_SECONDS: dict[str, float] = {}


@contextmanager
def _stage(name: str) -> Iterator[None]:
    start = time.process_time()
    try:
        yield
    finally:
        STAGE_SECONDS[name] = STAGE_SECONDS.get(name, 0.0) + time.process_time() - start


@cache
def parser() -> Parser:
    return Parser()


@cache
def prelude() -> dict[str, Kind]:
    """The built-in kinds, declared in prelude.rules."""
    parsed, problems = parser().parse_file("<prelude>", PRELUDE_PATH.read_text(encoding="utf-8"))
    found: dict[str, Kind] = {}
    for statement in parsed.blocks:
        assert isinstance(statement, m.KindDecl), statement
        kind, more = declare_kind(statement, builtin=True)
        problems += more
        found[kind.name] = kind
    assert not problems, problems  # the prelude ships with rulesdsl and is tested
    return found


@dataclass
class _File:
    """One source file: its outline (the statements that are not entities: kind declarations, patches,
    removals, the manifest), and its whole syntax tree while this run has it (the cache keeps outlines)."""

    path: Path
    shown: str  # its display path
    text: str
    outline: m.SourceFile | None  # None: not parsed yet (see _parse)
    tree: m.SourceFile | None
    # Syntax diagnostics of an outline not yet cached: it is cached with the lowered entities, so that a
    # full cache holds both entries of as many files as fit, rather than outlines alone.
    unsaved: list[Diagnostic] | None = None


def _outline(parsed: m.SourceFile) -> m.SourceFile:
    kept = [s for s in parsed.blocks if not isinstance(s, m.Block) or s.kind == "ruleset"]
    return m.SourceFile(parsed.path, parsed.text, tuple(kept))


def _may_declare_kinds(text: str) -> bool:
    """Whether the scanner finds the word `kind` in a file: only such a file can declare a kind. Other files are
    parsed when they are lowered, one at a time, so that a large ruleset's syntax trees are never all in memory
    at once."""
    at = text.find("kind")
    while at >= 0:  # only the lines with the letters in them: every line starts a token (no token spans lines)
        start, end = text.rfind("\n", 0, at) + 1, text.find("\n", at) % (len(text) + 1)
        if any(tok.type == "KIND" for tok in scan(text[start:end])):
            return True
        at = text.find("kind", end)
    return False


def _parse_now(source: _File) -> list[Diagnostic]:
    """Parse a file whose outline is not known yet; its syntax diagnostics, and a misplaced manifest block."""
    tree, diagnostics = parser().parse_file(source.shown, source.text)
    source.tree, source.outline, source.unsaved = tree, _outline(tree), list(diagnostics)
    return [*diagnostics, *_misplaced_manifests(source)]


def _misplaced_manifests(source: _File) -> list[Diagnostic]:
    if source.path.name == MANIFEST or source.outline is None:
        return []
    hint = f"remove it (a ruleset's block is its {MANIFEST}), or move this file to a new folder as its {MANIFEST}"
    return [
        error("E004", f"a ruleset block belongs in {MANIFEST}", block.kind_pos, hint)
        for block in source.outline.blocks
        if isinstance(block, m.Block) and block.kind == "ruleset"
    ]


def _parse_rest(files: Sequence[_File]) -> list[Diagnostic]:
    """The diagnostics of files not parsed yet, for a ruleset that is not compiled (the trees are dropped)."""
    diagnostics: list[Diagnostic] = []
    for source in files:
        if source.outline is None:
            diagnostics += _parse_now(source)
            source.tree = None
    return diagnostics


@dataclass
class _Parsed:
    """A ruleset's files, parsed, before anything is lowered."""

    files: RulesetFiles
    selected: bool  # asked for, rather than found as a base of one that was
    statements: list[_File]
    hashes: list[tuple[str, str]]
    manifest: ir.Entity | None
    extends: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Inputs:
    """Where a compilation reads from besides the paths it is given."""

    overlay: Overlay  # open buffers: read instead of the disk
    bases: tuple[Path, ...]  # folders to look for extended rulesets in (besides beside the extending one)
    diagnostics_only: bool = False  # see compile_paths
    stop: Callable[[], bool] | None = None  # see compile_paths

    def checkpoint(self) -> None:
        if self.stop is not None and self.stop():
            raise Superseded


class Superseded(Exception):
    """A compilation's `stop` said, at one of its checkpoints, that its result is no longer wanted."""


def compile_paths(
    paths: Sequence[Path],
    *,
    overlay: Overlay | None = None,
    bases: Sequence[Path] | None = None,
    memo: Memo | None = None,
    diagnostics_only: bool = False,
    stop: Callable[[], bool] | None = None,
) -> Compilation:
    """Check the rulesets under `paths`, and the rulesets they extend (found beside them, or in the folders
    `bases`: by default `rules/` in the working folder and `RULESDSL_PATH`), each as one ruleset, bases first.

    `overlay` holds open buffers (a file's real path -> its text): they are read instead of the disk, and an
    overlaid file not on disk is part of its ruleset. `memo` keeps what each file derived for the next
    compilation in this process (see compile/memo.py).

    `diagnostics_only` (what `rulesdsl check` needs): when the on-disk cache holds the result of a check of
    exactly these files with this compiler, it gives that result's diagnostics and summary without lowering
    or checking anything, and `rulesets` is empty.

    `stop` is asked between files and between the checks of a ruleset (each a small part of the whole): when
    it says so, the compilation raises `Superseded` (the language server's, once the buffers changed again).
    What it kept in `memo` and in the cache meanwhile is whole, and serves the next compilation."""
    inputs = _Inputs(overlay or {}, tuple(default_bases() if bases is None else bases), diagnostics_only, stop)
    # Compiling makes about a hundred objects per entity and no cycles, and with a large ruleset in memory
    # every collection would walk all of it (1.3x cold, 2.9x warm).
    with gc_paused():
        return _compile_paths(paths, inputs, memo)


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off for a while (and back on after, if it was on): for work that makes
    many short-lived objects and no cycles next to a large ruleset held in memory."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _compile_paths(paths: Sequence[Path], inputs: _Inputs, memo: Memo | None) -> Compilation:
    STAGE_SECONDS.clear()
    found, diagnostics = discover(paths, inputs.overlay)
    sources: dict[str, str] = {}
    disk, refused = ParseCache.open(cache_folder())
    diagnostics += refused
    parse_cache = Caches(disk, memo, {display_path(p) for p in inputs.overlay})
    parsed: dict[str, _Parsed] = {}  # by ruleset id
    roots: set[Path] = set()
    queue = [(files, True) for files in found]
    while queue:
        files, selected = queue.pop(0)
        if files.root in roots:
            continue
        roots.add(files.root)
        with _stage("read"):
            ruleset, more = _parse(files, selected, sources, parse_cache, inputs.overlay)
        diagnostics += more
        if ruleset is None or ruleset.manifest is None:
            continue
        if ruleset.manifest.id in parsed:
            diagnostics += _parse_rest(ruleset.statements)
            diagnostics.append(
                error(
                    "E005",
                    f"two rulesets have the id '{ruleset.manifest.id}'",
                    ruleset.manifest.id_pos,
                    "ruleset ids name the generated packages and must differ",
                )
            )
            continue
        parsed[ruleset.manifest.id] = ruleset
        for base in ruleset.extends:
            if base not in parsed:
                found_base = _find_base(base, ruleset.files.root, inputs)
                queue += [(f, False) for f in found_base if f.root not in roots]
    # Everything read is known now; a check of these very inputs may have been done before (a warm check
    # with nothing changed then reads and hashes the files, and no more).
    caching = disk.entries is not None  # with no cache, no key is worth its cost (the compiler's digest)
    run_key = _run_key(parsed, inputs) if inputs.diagnostics_only and not inputs.overlay and caching else None
    found_before = disk.load_checked(run_key) if run_key is not None else None
    if found_before is not None:
        diagnostics += found_before[0]
        return Compilation((), tuple(deduplicate(diagnostics)), sources, found_before[1])
    read_diagnostics = len(diagnostics)
    compiled: dict[str, CompiledRuleset] = {}
    for ruleset_id in _bases_first(parsed, diagnostics, inputs.bases):
        result, more = _compile(parsed[ruleset_id], compiled, parse_cache, inputs.checkpoint)
        diagnostics += more
        if result is not None:
            compiled[ruleset_id] = result
    for ruleset in parsed.values():  # a ruleset left out (its bases missing or in a circle) is still checked
        diagnostics += _parse_rest(ruleset.statements)
    rulesets = tuple(compiled[i] for i in sorted(compiled))
    summary = tuple((r.id, sum(len(group) for group in r.entities.values())) for r in rulesets)
    if run_key is not None:
        disk.save_checked(run_key, (diagnostics[read_diagnostics:], summary))
    return Compilation(rulesets, tuple(deduplicate(diagnostics)), sources, summary)


def _run_key(parsed: Mapping[str, _Parsed], inputs: _Inputs) -> str:
    """What a whole check depends on besides the compiler: every file of every ruleset read (display path
    and hash), which rulesets were asked for, what each extends, and where bases are looked for."""
    lines = [f"base {os.path.abspath(b)}" for b in inputs.bases]
    for ruleset_id in sorted(parsed):
        ruleset = parsed[ruleset_id]
        lines.append(f"ruleset {ruleset_id} {ruleset.selected} {' '.join(ruleset.extends)}")
        lines += [f"file {s.shown} {digest}" for s, (_, digest) in zip(ruleset.statements, ruleset.hashes, strict=True)]
    return checked_key("\n".join(lines))


def default_bases() -> list[Path]:
    """Where the command line looks for the rulesets one extends, besides beside it: `rules/` here, then the
    folders in `RULESDSL_PATH`."""
    return [Path.cwd() / "rules", *(Path(p) for p in os.environ.get("RULESDSL_PATH", "").split(os.pathsep) if p)]


def search_path(start: Path, bases: Sequence[Path] | None = None) -> list[Path]:
    """Where a base ruleset is looked for: beside the extending one, then `bases` (by default `default_bases`)."""
    folders = [start.parent, *(default_bases() if bases is None else bases)]
    return [f for f in dict.fromkeys(p.resolve() for p in folders) if f.is_dir()]


def _find_base(ruleset_id: str, start: Path, inputs: _Inputs) -> list[RulesetFiles]:
    """The first ruleset on the search path whose manifest says `ruleset ID`."""
    for folder in search_path(start, inputs.bases):
        found, _ = discover([folder], inputs.overlay)
        for files in sorted(found, key=lambda r: r.root.name != ruleset_id):  # a folder of that name first
            if _manifest_id(files.root / MANIFEST, inputs.overlay) == ruleset_id:
                return [files]
    return []


def _manifest_id(path: Path, overlay: Overlay) -> str | None:
    text, problem = read_source(path, overlay)
    if text is None or problem is not None:
        return None
    parsed, _ = parser().parse_file(display_path(path), text)
    for block in parsed.blocks:
        if isinstance(block, m.Block) and block.kind == "ruleset":
            return block.id.text if block.id else slug(block.name.value if block.name else "")
    return None


def _bases_first(parsed: Mapping[str, _Parsed], diagnostics: list[Diagnostic], bases: Sequence[Path]) -> list[str]:
    """Ruleset ids with every base before the rulesets extending it; missing bases and circles reported,
    and a ruleset left out because a base of its cannot be compiled says so."""
    # A walk with its state in an object, not a recursive closure: a closure that refers to itself is a cycle
    # holding every parsed file until the cyclic collector runs, which a long-running process (the language
    # server freezes what an analysis leaves) does only now and then.
    walk = _BasesFirst(parsed, diagnostics, bases)
    for ruleset_id in sorted(parsed):
        walk.visit(ruleset_id, ())
    return walk.order


@dataclass
class _BasesFirst:
    parsed: Mapping[str, _Parsed]
    diagnostics: list[Diagnostic]
    bases: Sequence[Path]
    order: list[str] = field(default_factory=list)
    done: dict[str, bool] = field(default_factory=dict)  # visited: whether it can be compiled (not on or over a circle)
    circled: set[str] = field(default_factory=set)  # on a circle: reported there once, not again as over one

    def extends_pos(self, ruleset_id: str) -> Position:
        manifest = self.parsed[ruleset_id].manifest
        assert manifest is not None
        return manifest.position("extends")

    def visit(self, ruleset_id: str, chain: tuple[str, ...]) -> bool:
        if ruleset_id in self.done:
            return self.done[ruleset_id]
        if ruleset_id in chain:
            circle = [*chain[chain.index(ruleset_id) :], ruleset_id]
            self.circled.update(circle)
            message = (
                f"the ruleset {ruleset_id} extends itself"
                if len(circle) == 2
                else "rulesets extend each other in a circle: " + " -> ".join(circle)
            )
            hint = (
                f"remove {ruleset_id} from its own extends"
                if len(circle) == 2
                else f"one of them must not extend the other: remove {ruleset_id} from the extends of {chain[-1]}"
            )
            self.diagnostics.append(error("E503", message, self.extends_pos(chain[-1]), hint))
            return False
        ok = True
        for base in self.parsed[ruleset_id].extends:
            if base not in self.parsed:
                root = self.parsed[ruleset_id].files.root
                places = ", ".join(display_path(p) for p in search_path(root, self.bases))
                self.diagnostics.append(
                    error(
                        "E502",
                        f"no ruleset '{base}' to extend",
                        self.extends_pos(ruleset_id),
                        f"looked in {places}; put it beside this one, or add its folder to RULESDSL_PATH",
                    )
                )
                ok = False
            elif not self.visit(base, (*chain, ruleset_id)):
                ok = False
                if ruleset_id not in self.circled:
                    self.diagnostics.append(
                        error(
                            "E503",
                            f"{ruleset_id} extends {base}, which cannot be compiled (see its errors)",
                            self.extends_pos(ruleset_id),
                            f"fix {base}'s extends first",
                        )
                    )
        self.done[ruleset_id] = ok
        if ok:
            self.order.append(ruleset_id)
        return ok


def _parse(
    ruleset: RulesetFiles, selected: bool, sources: dict[str, str], parse_cache: Caches, overlay: Overlay
) -> tuple[_Parsed | None, list[Diagnostic]]:
    diagnostics: list[Diagnostic] = []
    statements: list[_File] = []
    hashes = []
    for path in ruleset.files:
        shown = display_path(path)
        text, problem = read_source(path, overlay)
        if problem is not None or text is None:
            diagnostics += [problem] if problem is not None else []
            if text:  # not compiled; kept only to show the line the problem points at
                sources[shown] = text
            continue
        sources[shown] = text
        hashes.append((path.relative_to(ruleset.root).as_posix(), hashlib.sha256(text.encode()).hexdigest()))
        source = _File(path, shown, text, None, None)
        cached = parse_cache.load(shown, text)
        if cached is not None:
            source.outline, more = cached
            diagnostics += more + _misplaced_manifests(source)
        elif path.name == MANIFEST or _may_declare_kinds(text):
            diagnostics += _parse_now(source)
        statements.append(source)
    manifests = [
        block
        for source in statements
        if source.path.name == MANIFEST and source.outline is not None
        for block in source.outline.blocks
        if isinstance(block, m.Block) and block.kind == "ruleset"
    ]
    manifest_file = display_path(ruleset.root / MANIFEST)
    if not manifests:
        diagnostics += _parse_rest(statements)
        if any(name == MANIFEST for name, _ in hashes):  # read and parsed, yet without a ruleset block
            diagnostics.append(
                error(
                    "E004",
                    f"{manifest_file} has no 'ruleset' block",
                    Position(manifest_file, 1, 1, 1, 2),
                    'start it with: ruleset my_game { title: "..."  version: "0.1.0" }',
                )
            )
        return None, diagnostics
    if len(manifests) > 1:
        diagnostics.append(
            error(
                "E004",
                "a ruleset has exactly one 'ruleset' block",
                manifests[1].kind_pos,
                f"remove this one, or move it to the {MANIFEST} of a folder of its own to make a second ruleset",
            )
        )
    kind = prelude()["ruleset"]
    manifest, more = lower_block(manifests[0], kind, file_defaults={})
    diagnostics += more + schema.check(manifest, kind)
    extends = manifest.fields.get("extends", ())
    bases = tuple(dict.fromkeys(e for e in extends if isinstance(e, str))) if isinstance(extends, tuple) else ()
    return _Parsed(ruleset, selected, statements, hashes, manifest, bases), diagnostics


def declare_kinds(
    declarations: Sequence[m.KindDecl], inherited: Sequence[Mapping[str, Kind]] = ()
) -> tuple[dict[str, Kind], list[Diagnostic]]:
    """The prelude's kinds and those of the rulesets this one extends, with its own declarations added
    (or replacing built-in ones)."""
    kinds = dict(prelude())
    for base in inherited:
        for name, kind in base.items():
            kinds.setdefault(name, kind) if kind.builtin else kinds.__setitem__(name, kind)
    diagnostics: list[Diagnostic] = []
    declared: dict[str, m.KindDecl] = {}
    for decl in declarations:
        name = decl.name.text
        if name in kinds and not kinds[name].builtin:
            diagnostics.append(
                error(
                    "E404",
                    f"the kind '{name}' comes from a ruleset this one extends",
                    decl.name.pos,
                    "patch its entities instead, or name this kind otherwise",
                )
            )
            continue
        if name in declared:
            first = declared[name].pos
            diagnostics.append(
                error(
                    "E404",
                    f"the kind '{name}' is declared twice (first at line {first.line})",
                    decl.name.pos,
                    f"keep one: put every field of {name} in the declaration at line {first.line}",
                )
            )
            continue
        if name in CORE_KINDS or name == "kind":
            diagnostics.append(
                error(
                    "E404",
                    f"'{name}' is part of the language and cannot be declared again",
                    decl.name.pos,
                    f"name your kind otherwise, such as my_{name}",
                )
            )
            continue
        if slug(name) != name:
            diagnostics.append(
                error("E404", f"a kind's name is snake_case, not '{name}'", decl.name.pos, f"write {slug(name)}")
            )
            continue
        builtin = name in kinds
        if builtin and not decl.override:
            diagnostics.append(
                warning(
                    "W405",
                    f"this replaces the built-in kind '{name}'",
                    decl.name.pos,
                    f"write 'override kind {name}' to say so",
                )
            )
        elif decl.override and not builtin:
            close = suggest(name, kinds)
            message = f"there is no built-in kind '{name}' to override"
            hint = naming_hint(close) or f"to declare a new kind, drop 'override': kind {name} ..."
            diagnostics.append(error("E406", message, decl.kind_pos, hint, close))
        declared[name] = decl
        kind, more = declare_kind(decl, builtin=False)
        diagnostics += more
        kinds[name] = kind
    for kind in kinds.values():
        for decl_field in kind.fields.values():
            for target in referenced_kinds(decl_field.type):
                if target not in kinds:
                    pos = decl_field.pos or kind.pos
                    diagnostics.append(no_such_kind(target, kinds, pos))
    return dict(sorted(kinds.items())), diagnostics


def _compile(
    ruleset: _Parsed, compiled: Mapping[str, CompiledRuleset], parse_cache: Caches, checkpoint: Callable[[], None]
) -> tuple[CompiledRuleset | None, list[Diagnostic]]:
    """Lower a ruleset's blocks, merge it onto its bases, and check the whole as one ruleset."""
    manifest = ruleset.manifest
    assert manifest is not None
    diagnostics: list[Diagnostic] = []
    layers = [compiled[b].layer for b in ruleset.extends]
    bases = tuple(layer for layer in layers if layer is not None)
    declarations = [s for f in ruleset.statements for s in _blocks(f) if isinstance(s, m.KindDecl)]
    kinds, more = declare_kinds(declarations, inherited=[compiled[b].kinds for b in ruleset.extends])
    diagnostics += more
    own, more = _lowered(ruleset.statements, kinds, parse_cache, checkpoint)
    diagnostics += more
    patches = [s for f in ruleset.statements for s in _blocks(f) if isinstance(s, m.Patch)]
    removals = [s for f in ruleset.statements for s in _blocks(f) if isinstance(s, m.Removal)]
    if not bases and (patches or removals):
        changes: list[m.Patch | m.Removal] = [*patches, *removals]
        for change in changes:
            diagnostics.append(
                error(
                    "E501",
                    f"{'patch' if isinstance(change, m.Patch) else 'remove'} changes an extended ruleset, "
                    "and this ruleset extends none",
                    change.pos,
                    "say which it builds on in its manifest: extends: burning_wheel",
                )
            )
        patches, removals = [], []
    checkpoint()
    with _stage("merge"):
        merged, more = merge.inherit(bases, manifest.position("extends"))
        diagnostics += more
        diagnostics += merge.apply(merged, manifest.id, kinds, own, patches, removals)
        patched = {k[:2] for k in merged.patched}
        # patched entities are validated again, at the patch's positions
        diagnostics += schema.check_all(
            [
                e
                for e in merged.entities
                if (e.kind, e.id) in patched and merged.origin.get((e.kind, e.id)) != manifest.id
            ],
            kinds,
        )
    with _stage("semantic"):
        checkpoint()
        kept = parse_cache.memo.resolutions(manifest.id) if parse_cache.memo is not None else None
        resolved, more = semantic.check_ruleset(
            manifest.id, manifest.pos, merged.entities, kinds, merged.removed_names, checkpoint, kept
        )
        more += semantic.check_license(manifest)
        checkpoint()
        dangling, explained = uses.check_uses(resolved.entities, merged.gone, kinds)
        # a formula naming an attribute the homebrew took away is reported at the change (E507), not again here
        more = [d for d in more if not (d.code == "E321" and d.pos in explained)] + dangling
        more += uses.check_tables(resolved.entities.get("table", {}), kinds)
    diagnostics += _at_the_change(more, bases, [*removals, *patches], merged.changes, ruleset)
    title = manifest.fields.get("title")
    version = manifest.fields.get("version")
    license = manifest.fields.get("license")
    layer = merge.Layer(
        manifest.id,
        tuple(merged.entities),
        dict(merged.origin),
        dict(merged.patched),
        tuple(dict.fromkeys(b for layer in bases for b in (*layer.bases, layer.id))),
        frozenset((d.code, d.message) for d in more),
    )
    result = CompiledRuleset(
        manifest.id,
        title if isinstance(title, str) else manifest.name,
        version if isinstance(version, str) else "0",
        tuple(sorted(ruleset.hashes)),
        resolved.kinds,
        resolved.entities,
        _source_order(merged.entities),
        ruleset.extends,
        dict(merged.origin),
        merged.changes,
        layer,
        license if isinstance(license, str) else None,
        manifest,
    )
    return result, diagnostics


_GRAPH_WARNINGS = ("W341", "W342")


def _lowered(
    files: Sequence[_File], kinds: Mapping[str, Kind], parse_cache: Caches, checkpoint: Callable[[], None]
) -> tuple[list[ir.Entity], list[Diagnostic]]:
    """The files' entities in source order, with their lowering and schema diagnostics: from the cache where
    it has them (lowered by these very kinds), else lowered and checked now, and cached."""
    kinds_key = _kinds_key(kinds)
    by_file: list[list[ir.Entity]] = []
    diagnostics: list[Diagnostic] = []
    fresh: list[tuple[_File, list[ir.Entity], list[Diagnostic]]] = []
    for source in files:
        checkpoint()
        if source.outline is None:  # parsed only now, and its tree dropped once lowered
            with _stage("parse"):
                diagnostics += _parse_now(source)
        with _stage("cache"):
            cached = parse_cache.load_lowered(source.shown, source.text, kinds_key)
        if cached is None:
            with _stage("parse"):
                tree = source.tree or parser().parse_file(source.shown, source.text)[0]
            source.tree = None  # lowered: the tree is no longer needed (and large)
            with _stage("lower"):
                entities, more = _lower_file(tree, kinds)
            fresh.append((source, entities, more))
        else:
            entities, more = cached
            diagnostics += more
            _save_outline(source, parse_cache)
        by_file.append(entities)
    with _stage("schema"):
        checked = schema.check_all([e for _, entities, _ in fresh for e in entities], kinds)
        per_file: dict[str | None, list[Diagnostic]] = {}
        for d in checked:
            per_file.setdefault(d.pos.file if d.pos else None, []).append(d)
    with _stage("cache"):
        for source, entities, more in fresh:
            more += per_file.get(source.shown, [])
            diagnostics += more
            _save_outline(source, parse_cache)
            parse_cache.save_lowered(source.shown, source.text, kinds_key, (entities, more))
    diagnostics += per_file.get(None, [])
    return [e for entities in by_file for e in entities], diagnostics


def _blocks(source: _File) -> tuple[m.Statement, ...]:
    return source.outline.blocks if source.outline is not None else ()


def _save_outline(source: _File, parse_cache: Caches) -> None:
    if source.unsaved is not None and source.outline is not None:
        parse_cache.save(source.shown, source.text, (source.outline, source.unsaved))
        source.unsaved = None


def _kinds_key(kinds: Mapping[str, Kind]) -> str:
    """A digest of the kinds entities are read by: lowered entities are cached under it."""
    return hashlib.sha256(repr(sorted(kinds.items())).encode()).hexdigest()


def _lower_file(parsed: m.SourceFile, kinds: Mapping[str, Kind]) -> tuple[list[ir.Entity], list[Diagnostic]]:
    """One file's blocks as entities (kind declarations, patches, removals and the manifest are not)."""
    diagnostics: list[Diagnostic] = []
    own: list[ir.Entity] = []
    defaults = _file_defaults(parsed)
    for statement in parsed.blocks:
        if not isinstance(statement, m.Block) or statement.kind == "ruleset":
            continue
        kind = kinds.get(statement.kind)
        if kind is None:
            close = suggest(statement.kind, kinds)
            diagnostics.append(
                error(
                    "E200",
                    f"unknown kind '{statement.kind}'",
                    statement.kind_pos,
                    naming_hint(close) or "kinds: " + ", ".join(sorted(kinds)),
                    close,
                )
            )
            continue
        try:
            entity, more = lower_block(statement, kind, file_defaults=defaults)
        except RecursionError:  # the stages walk values recursively; absurd nesting must not crash them
            diagnostics.append(_too_deep(statement))
            continue
        diagnostics += more
        own.append(entity)
    return own, diagnostics


def _too_deep(statement: m.Block) -> Diagnostic:
    return error(
        "E204",
        "this block nests too deeply to be read",
        statement.kind_pos,
        "split long expressions; nesting is limited to a few hundred levels",
    )


def _at_the_change(
    diagnostics: list[Diagnostic],
    bases: Sequence[Layer],
    changes: Sequence[m.Patch | m.Removal],
    made: Changes,
    ruleset: _Parsed,
) -> list[Diagnostic]:
    """What is new in a base's files, that its own check did not report, was made so by this ruleset: a
    lifepath only its removals or patches made unreachable, a formula whose callee a patch gave another
    parameter. It is reported at the change (the patch, removal or added entity it names), with a note of
    where it shows; an error naming no change stays where it shows."""
    if not bases:
        return diagnostics
    known = {w for base in bases for w in base.reported}
    own_files = {f.shown for f in ruleset.statements}
    result: list[tuple[Diagnostic, tuple[str, int, int]]] = []  # each with where it shows
    for d in diagnostics:
        shows = d.pos
        if shows is None or shows.file in own_files or (d.code, d.message) in known:
            result.append((d, d.sort_key[:3]))
            continue
        if d.code in _GRAPH_WARNINGS:
            if changes:
                note = f"about {shows.file}:{shows.line}; it holds in the ruleset this one extends"
                hint = f"undo this change, or: {d.hint}" if d.hint else "undo this change"
                d = replace(d, pos=_culprit(d, changes).pos, notes=(*d.notes, note), hint=hint)
        elif d.severity == "error":
            change = _named_change(d, made)
            if change is not None and change.pos is not None:
                note = f"it shows at {shows.file}:{shows.line}, which checks clean in the ruleset this one extends"
                # moved to the change: what it suggested was for the text it was at
                d = replace(
                    d, pos=change.pos, notes=(*d.notes, note), hint=d.hint or "check this change", suggestions=()
                )
        result.append((d, (shows.file, shows.line, shows.column)))
    return _notes_together(result)


def _notes_together(placed: list[tuple[Diagnostic, tuple[str, int, int]]]) -> list[Diagnostic]:
    """One diagnostic a change, with a note for each place it shows (in the order of those places)."""
    merged: dict[tuple[object, ...], Diagnostic] = {}
    for d, _ in sorted(placed, key=lambda item: item[1]):
        key = (d.severity, d.code, d.message, d.pos, d.hint)
        first = merged.get(key)
        merged[key] = d if first is None else replace(first, notes=tuple(dict.fromkeys((*first.notes, *d.notes))))
    return list(merged.values())


def _named_change(found: Diagnostic, made: Changes) -> merge.Change | None:
    """The change an error is about (`Diagnostic.about`): to one of its entities, else the only change of a kind
    it is about (a patch that left the ruleset with "no mechanic of style check")."""
    about = set(found.about)
    everything = (*made.patched, *made.removed, *made.added)
    for change in everything:
        if change.id in about:
            return change
    of_kind = [c for c in (*made.patched, *made.removed) if c.kind in about]
    return of_kind[0] if len(of_kind) == 1 else None


def _culprit(warning: Diagnostic, changes: Sequence[m.Patch | m.Removal]) -> m.Patch | m.Removal:
    """The change that cut the way to a setting the warning is about (a lead patched away), else the first change."""
    cut = set(warning.about)
    for change in changes:
        if cut and isinstance(change, m.Patch):
            for fld in change.fields:
                written = fld.value.items if isinstance(fld.value, m.ValueList) else (fld.value,)
                if fld.key == "leads" and fld.op in ("-=", ":") and cut & {slug(expr_text(v)) for v in written}:
                    return change
    return changes[0]


def _source_order(entities: list[ir.Entity]) -> dict[str, tuple[str, ...]]:
    """Ids per kind in book order (files by path, blocks as written), each id once."""
    order: dict[str, dict[str, None]] = {}
    for entity in entities:
        order.setdefault(entity.kind, {}).setdefault(entity.id, None)
    return {kind: tuple(ids) for kind, ids in sorted(order.items())}


def _file_defaults(parsed: m.SourceFile) -> dict[str, str]:
    """kind -> the only entity of that kind the file declares (what a left-out required reference names)."""
    counts: dict[str, list[m.Block]] = {}
    for statement in parsed.blocks:
        if isinstance(statement, m.Block):
            counts.setdefault(statement.kind, []).append(statement)
    result = {}
    for kind, blocks in counts.items():
        if len(blocks) == 1:
            block = blocks[0]
            result[kind] = block.id.text if block.id else slug(block.name.value if block.name else "")
    return result
