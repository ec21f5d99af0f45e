"""The compiler's stages in order: sources -> syntax -> lower -> schema -> semantic.

Everything after this (emitting Python and HTML) works on the resolved IR it returns.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from . import ir
from . import model as m
from .cache import ParseCache, cache_folder
from .diagnostics import Diagnostic, deduplicate, did_you_mean, error, warning
from .fieldtypes import referenced_kinds
from .jsonform import document
from .kinds import CORE_KINDS, PRELUDE_PATH, Kind
from .lower import LoweringError, declare_kind, lower_block
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


def compile_paths(paths: Sequence[Path]) -> Compilation:
    found, diagnostics = discover(paths)
    sources: dict[str, str] = {}
    compiled: list[CompiledRuleset] = []
    parse_cache = ParseCache(cache_folder())
    for files in found:
        result, more = _compile_ruleset(files, sources, parse_cache)
        diagnostics += more
        if result is not None:
            compiled.append(result)
    ids: dict[str, CompiledRuleset] = {}
    for ruleset in compiled:
        if ruleset.id in ids:
            diagnostics.append(
                error(
                    "E005",
                    f"two rulesets have the id '{ruleset.id}'",
                    None,
                    "ruleset ids name the generated packages and must differ",
                )
            )
        ids[ruleset.id] = ruleset
    return Compilation(tuple(sorted(compiled, key=lambda r: r.id)), tuple(deduplicate(diagnostics)), sources)


def declare_kinds(declarations: Sequence[m.KindDecl]) -> tuple[dict[str, Kind], list[Diagnostic]]:
    """The prelude's kinds with the ruleset's own declarations added (or replacing built-in ones)."""
    kinds = dict(prelude())
    diagnostics: list[Diagnostic] = []
    declared: dict[str, m.KindDecl] = {}
    for decl in declarations:
        name = decl.name.text
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


def _compile_ruleset(
    ruleset: RulesetFiles, sources: dict[str, str], parse_cache: ParseCache
) -> tuple[CompiledRuleset | None, list[Diagnostic]]:
    diagnostics: list[Diagnostic] = []
    parsed_files: list[tuple[Path, m.SourceFile]] = []
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
        parsed_files.append((path, parsed))
    declarations = [s for _, parsed in parsed_files for s in parsed.blocks if isinstance(s, m.KindDecl)]
    kinds, more = declare_kinds(declarations)
    diagnostics += more
    manifests: list[m.Block] = []
    entities: list[ir.Entity] = []
    for path, parsed in parsed_files:
        defaults = _file_defaults(parsed)
        for statement in parsed.blocks:
            if isinstance(statement, m.KindDecl):
                continue
            if isinstance(statement, m.Patch | m.Removal):
                diagnostics.append(
                    error(
                        "E501",
                        f"{'patch' if isinstance(statement, m.Patch) else 'remove'} changes an extended ruleset, "
                        "and this ruleset extends none",
                        statement.pos,
                        "say which it builds on in its manifest: extends: burning_wheel",
                    )
                )
                continue
            block = statement
            kind = kinds.get(block.kind)
            if kind is None:
                diagnostics.append(
                    error(
                        "E200",
                        f"unknown kind '{block.kind}'",
                        block.kind_pos,
                        did_you_mean(block.kind, kinds) or "kinds: " + ", ".join(sorted(kinds)),
                    )
                )
                continue
            if block.kind == "ruleset" and path.name != MANIFEST:
                diagnostics.append(error("E004", f"a ruleset block belongs in {MANIFEST}", block.kind_pos))
                continue
            try:
                entity, more = lower_block(block, kind, file_defaults=defaults)
                more += schema.check(entity, kind)
            except RecursionError:  # the stages walk values recursively; absurd nesting must not crash them
                diagnostics.append(
                    error(
                        "E204",
                        "this block nests too deeply to be read",
                        block.kind_pos,
                        "split long expressions; nesting is limited to a few hundred levels",
                    )
                )
                continue
            except LoweringError as exc:  # pragma: no cover - lower_block reports, never raises
                diagnostics.append(exc.diagnostic)
                continue
            diagnostics += more
            if block.kind == "ruleset":
                manifests.append(block)
            else:
                entities.append(entity)
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
    manifest, _ = lower_block(manifests[0], kinds["ruleset"], file_defaults={})
    resolved, more = semantic.check_ruleset(manifest.id, manifest.pos, entities, kinds)
    diagnostics += more
    title = manifest.fields.get("title")
    version = manifest.fields.get("version")
    compiled = CompiledRuleset(
        manifest.id,
        title if isinstance(title, str) else manifest.name,
        version if isinstance(version, str) else "0",
        tuple(sorted(hashes)),
        kinds,
        resolved.entities,
        _source_order(entities),
    )
    return compiled, diagnostics


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
