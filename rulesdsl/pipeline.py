"""The compiler's stages in order: sources -> syntax -> lower -> schema -> semantic.

Everything after this (emitting Python and HTML) works on the resolved IR it returns.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from . import ir, merge
from . import model as m
from .cache import ParseCache, cache_folder
from .diagnostics import Diagnostic, deduplicate, did_you_mean, error, warning
from .fieldtypes import referenced_kinds
from .formulas import expr_text
from .jsonform import document
from .kinds import CORE_KINDS, PRELUDE_PATH, Kind
from .lower import declare_kind, lower_block
from .merge import Changes, Layer
from .model import Position
from .names import slug
from .source import MANIFEST, RulesetFiles, discover, display_path, read_source
from .syntax import Parser
from .validate import schema, semantic


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

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)


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
class _Parsed:
    """A ruleset's files, parsed, before anything is lowered."""

    files: RulesetFiles
    selected: bool  # asked for, rather than found as a base of one that was
    statements: list[tuple[Path, m.SourceFile]]
    hashes: list[tuple[str, str]]
    manifest: ir.Entity | None
    extends: tuple[str, ...]


def compile_paths(paths: Sequence[Path]) -> Compilation:
    """Check the rulesets under `paths`, and the rulesets they extend (found beside them, under `rules/`
    in the working folder, or in `RULESDSL_PATH`), each as one ruleset, bases first."""
    found, diagnostics = discover(paths)
    sources: dict[str, str] = {}
    parse_cache, refused = ParseCache.open(cache_folder())
    diagnostics += refused
    parsed: dict[str, _Parsed] = {}  # by ruleset id
    roots: set[Path] = set()
    queue = [(files, True) for files in found]
    while queue:
        files, selected = queue.pop(0)
        if files.root in roots:
            continue
        roots.add(files.root)
        ruleset, more = _parse(files, selected, sources, parse_cache)
        diagnostics += more
        if ruleset is None or ruleset.manifest is None:
            continue
        if ruleset.manifest.id in parsed:
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
                queue += [(f, False) for f in _find_base(base, ruleset.files.root) if f.root not in roots]
    compiled: dict[str, CompiledRuleset] = {}
    for ruleset_id in _bases_first(parsed, diagnostics):
        result, more = _compile(parsed[ruleset_id], compiled, parse_cache)
        diagnostics += more
        if result is not None:
            compiled[ruleset_id] = result
    return Compilation(tuple(compiled[i] for i in sorted(compiled)), tuple(deduplicate(diagnostics)), sources)


def search_path(start: Path) -> list[Path]:
    """Where a base ruleset is looked for: beside the extending one, `rules/` here, then `RULESDSL_PATH`."""
    folders = [start.parent, Path.cwd() / "rules"]
    folders += [Path(p) for p in os.environ.get("RULESDSL_PATH", "").split(os.pathsep) if p]
    return [f for f in dict.fromkeys(p.resolve() for p in folders) if f.is_dir()]


def _find_base(ruleset_id: str, start: Path) -> list[RulesetFiles]:
    """The first ruleset on the search path whose manifest says `ruleset ID`."""
    for folder in search_path(start):
        found, _ = discover([folder])
        for files in sorted(found, key=lambda r: r.root.name != ruleset_id):  # a folder of that name first
            if _manifest_id(files.root / MANIFEST) == ruleset_id:
                return [files]
    return []


def _manifest_id(path: Path) -> str | None:
    text, problem = read_source(path)
    if text is None or problem is not None:
        return None
    parsed, _ = parser().parse_file(display_path(path), text)
    for block in parsed.blocks:
        if isinstance(block, m.Block) and block.kind == "ruleset":
            return block.id.text if block.id else slug(block.name.value if block.name else "")
    return None


def _bases_first(parsed: Mapping[str, _Parsed], diagnostics: list[Diagnostic]) -> list[str]:
    """Ruleset ids with every base before the rulesets extending it; missing bases and circles reported."""
    order: list[str] = []
    state: dict[str, int] = {}

    def visit(ruleset_id: str, chain: tuple[str, ...]) -> bool:
        if state.get(ruleset_id) == 2:
            return True
        if ruleset_id in chain:
            manifest = parsed[chain[-1]].manifest
            assert manifest is not None
            diagnostics.append(
                error(
                    "E503",
                    "rulesets extend each other in a circle: "
                    + " -> ".join([*chain[chain.index(ruleset_id) :], ruleset_id]),
                    manifest.position("extends"),
                )
            )
            return False
        ok = True
        for base in parsed[ruleset_id].extends:
            if base not in parsed:
                manifest = parsed[ruleset_id].manifest
                assert manifest is not None
                places = ", ".join(display_path(p) for p in search_path(parsed[ruleset_id].files.root))
                diagnostics.append(
                    error(
                        "E502",
                        f"no ruleset '{base}' to extend",
                        manifest.position("extends"),
                        f"looked in {places}; put it beside this one, or add its folder to RULESDSL_PATH",
                    )
                )
                ok = False
            elif not visit(base, (*chain, ruleset_id)):
                ok = False
        state[ruleset_id] = 2
        if ok:
            order.append(ruleset_id)
        return ok

    for ruleset_id in sorted(parsed):
        visit(ruleset_id, ())
    return order


def _parse(
    ruleset: RulesetFiles, selected: bool, sources: dict[str, str], parse_cache: ParseCache
) -> tuple[_Parsed | None, list[Diagnostic]]:
    diagnostics: list[Diagnostic] = []
    statements: list[tuple[Path, m.SourceFile]] = []
    hashes = []
    for path in ruleset.files:
        shown = display_path(path)
        text, problem = read_source(path)
        if problem is not None or text is None:
            diagnostics += [problem] if problem is not None else []
            if text:  # not compiled; kept only to show the line the problem points at
                sources[shown] = text
            continue
        sources[shown] = text
        hashes.append((path.relative_to(ruleset.root).as_posix(), hashlib.sha256(text.encode()).hexdigest()))
        cached = parse_cache.load(shown, text)
        if cached is None:
            cached = parser().parse_file(shown, text)
            parse_cache.save(shown, text, cached)
        parsed, more = cached
        diagnostics += more
        statements.append((path, parsed))
    manifests = []
    for path, parsed in statements:
        for block in parsed.blocks:
            if isinstance(block, m.Block) and block.kind == "ruleset":
                if path.name != MANIFEST:
                    diagnostics.append(error("E004", f"a ruleset block belongs in {MANIFEST}", block.kind_pos))
                else:
                    manifests.append(block)
    manifest_file = display_path(ruleset.root / MANIFEST)
    if not manifests:
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
        diagnostics.append(error("E004", "a ruleset has exactly one 'ruleset' block", manifests[1].kind_pos))
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
                error("E404", f"the kind '{name}' is declared twice (first at line {first.line})", decl.name.pos)
            )
            continue
        if name in CORE_KINDS or name == "kind":
            diagnostics.append(
                error("E404", f"'{name}' is part of the language and cannot be declared again", decl.name.pos)
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
            diagnostics.append(
                error(
                    "E406", f"there is no built-in kind '{name}' to override", decl.kind_pos, did_you_mean(name, kinds)
                )
            )
        declared[name] = decl
        kind, more = declare_kind(decl, builtin=False)
        diagnostics += more
        kinds[name] = kind
    for kind in kinds.values():
        for decl_field in kind.fields.values():
            for target in referenced_kinds(decl_field.type):
                if target not in kinds:
                    pos = decl_field.pos or kind.pos
                    diagnostics.append(error("E407", f"'ref {target}' names no kind", pos, did_you_mean(target, kinds)))
    return dict(sorted(kinds.items())), diagnostics


def _compile(
    ruleset: _Parsed, compiled: Mapping[str, CompiledRuleset], parse_cache: ParseCache
) -> tuple[CompiledRuleset | None, list[Diagnostic]]:
    """Lower a ruleset's blocks, merge it onto its bases, and check the whole as one ruleset."""
    manifest = ruleset.manifest
    assert manifest is not None
    diagnostics: list[Diagnostic] = []
    layers = [compiled[b].layer for b in ruleset.extends]
    bases = tuple(layer for layer in layers if layer is not None)
    declarations = [s for _, parsed in ruleset.statements for s in parsed.blocks if isinstance(s, m.KindDecl)]
    kinds, more = declare_kinds(declarations, inherited=[compiled[b].kinds for b in ruleset.extends])
    diagnostics += more
    own: list[ir.Entity] = []
    patches: list[m.Patch] = []
    removals: list[m.Removal] = []
    for _, parsed in ruleset.statements:
        defaults = _file_defaults(parsed)
        for statement in parsed.blocks:
            if isinstance(statement, m.KindDecl):
                continue
            if isinstance(statement, m.Patch):
                patches.append(statement)
                continue
            if isinstance(statement, m.Removal):
                removals.append(statement)
                continue
            if statement.kind == "ruleset":
                continue
            kind = kinds.get(statement.kind)
            if kind is None:
                diagnostics.append(
                    error(
                        "E200",
                        f"unknown kind '{statement.kind}'",
                        statement.kind_pos,
                        did_you_mean(statement.kind, kinds) or "kinds: " + ", ".join(sorted(kinds)),
                    )
                )
                continue
            try:
                entity, more = lower_block(statement, kind, file_defaults=defaults)
                more += schema.check(entity, kind)
            except RecursionError:  # the stages walk values recursively; absurd nesting must not crash them
                diagnostics.append(
                    error(
                        "E204",
                        "this block nests too deeply to be read",
                        statement.kind_pos,
                        "split long expressions; nesting is limited to a few hundred levels",
                    )
                )
                continue
            diagnostics += more
            own.append(entity)
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
    merged, more = merge.inherit(bases, manifest.position("extends"))
    diagnostics += more
    diagnostics += merge.apply(merged, manifest.id, kinds, own, patches, removals)
    for entity in merged.entities:  # patched entities are validated again, at the patch's positions
        if merged.origin.get((entity.kind, entity.id)) != manifest.id and any(
            k[:2] == (entity.kind, entity.id) for k in merged.patched
        ):
            diagnostics += schema.check(entity, kinds[entity.kind])
    resolved, more = semantic.check_ruleset(manifest.id, manifest.pos, merged.entities, kinds, merged.removed_names)
    diagnostics += _at_the_change(more, bases, [*removals, *patches], ruleset)
    title = manifest.fields.get("title")
    version = manifest.fields.get("version")
    layer = merge.Layer(
        manifest.id,
        tuple(merged.entities),
        dict(merged.origin),
        dict(merged.patched),
        tuple(dict.fromkeys(b for layer in bases for b in (*layer.bases, layer.id))),
        frozenset((d.code, d.message) for d in more if d.code in _GRAPH_WARNINGS),
    )
    result = CompiledRuleset(
        manifest.id,
        title if isinstance(title, str) else manifest.name,
        version if isinstance(version, str) else "0",
        tuple(sorted(ruleset.hashes)),
        kinds,
        resolved.entities,
        _source_order(merged.entities),
        ruleset.extends,
        dict(merged.origin),
        merged.changes,
        layer,
    )
    return result, diagnostics


_GRAPH_WARNINGS = ("W341", "W342")


def _at_the_change(
    diagnostics: list[Diagnostic], bases: Sequence[Layer], changes: Sequence[m.Patch | m.Removal], ruleset: _Parsed
) -> list[Diagnostic]:
    """A lifepath of a base that only became unreachable here was made so by a removal or a patch: the
    warning is reported there, in the homebrew, with a note of the lifepath it is about."""
    if not bases or not changes:
        return diagnostics
    known = {w for base in bases for w in base.warnings}
    own_files = {display_path(path) for path, _ in ruleset.statements}
    result = []
    for d in diagnostics:
        if (
            d.code in _GRAPH_WARNINGS
            and d.pos is not None
            and d.pos.file not in own_files
            and (d.code, d.message) not in known
        ):
            note = f"about {d.pos.file}:{d.pos.line}; it holds in the ruleset this one extends"
            d = replace(d, pos=_culprit(d, changes).pos, notes=(*d.notes, note), hint="check this change")
        result.append(d)
    return result


def _culprit(warning: Diagnostic, changes: Sequence[m.Patch | m.Removal]) -> m.Patch | m.Removal:
    """The change that cut the way to a setting (a lead patched away), else the first change."""
    cut = re.search(r"its setting '(\w+)'", warning.message)
    for change in changes:
        if cut is not None and isinstance(change, m.Patch):
            for fld in change.fields:
                written = fld.value.items if isinstance(fld.value, m.ValueList) else (fld.value,)
                if (
                    fld.key == "leads"
                    and fld.op in ("-=", ":")
                    and cut.group(1) in (slug(expr_text(v)) for v in written)
                ):
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
