"""The compiler's stages in order: sources -> syntax -> lower -> schema -> semantic.

Everything after this (emitting Python and HTML) works on the plain documents it returns.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .cache import ParseCache, cache_folder
from .diagnostics import Diagnostic, deduplicate, did_you_mean, error
from .kinds import kinds
from .lower import Entity, lower_block
from .model import Block, Position
from .names import slug
from .source import MANIFEST, RulesetFiles, discover, display_path
from .syntax import Parser
from .validate import schema, semantic


@dataclass(frozen=True, slots=True)
class CompiledRuleset:
    id: str
    title: str
    version: str
    sources: tuple[tuple[str, str], ...]  # (path relative to the ruleset folder, sha256), sorted
    documents: dict[str, dict[str, dict[str, Any]]]  # kind -> id -> document, sorted
    source_order: dict[str, tuple[str, ...]]  # kind -> ids in the order the sources give them

    @property
    def digest(self) -> str:
        """One hash of all sources: what the generated code says it was made from."""
        text = "\n".join(f"{path} {digest}" for path, digest in self.sources)
        return hashlib.sha256(text.encode()).hexdigest()


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
    return Parser(sorted(kinds()))


def compile_paths(paths: Sequence[Path]) -> Compilation:
    found, diagnostics = discover(paths)
    sources: dict[str, str] = {}
    compiled: list[CompiledRuleset] = []
    parse_cache, refused = ParseCache.open(cache_folder())
    diagnostics += refused
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


def _read(path: Path, shown: str) -> tuple[str | None, Diagnostic | None]:
    try:
        return path.read_text(encoding="utf-8-sig"), None  # a byte-order mark is not part of the text
    except UnicodeDecodeError as exc:
        return None, error("E002", f"{shown} is not UTF-8 text (byte {exc.start})", None, "save the file as UTF-8")
    except OSError as exc:
        return None, error("E003", f"cannot read {shown}: {exc.strerror}", None)


def _compile_ruleset(
    ruleset: RulesetFiles, sources: dict[str, str], parse_cache: ParseCache
) -> tuple[CompiledRuleset | None, list[Diagnostic]]:
    diagnostics: list[Diagnostic] = []
    known = kinds()
    manifests: list[Block] = []
    entities: list[Entity] = []
    hashes = []
    for path in ruleset.files:
        shown = display_path(path)
        text, problem = _read(path, shown)
        if problem is not None or text is None:
            diagnostics += [problem] if problem is not None else []
            continue
        sources[shown] = text
        hashes.append((path.relative_to(ruleset.root).as_posix(), hashlib.sha256(text.encode()).hexdigest()))
        cached = parse_cache.load(shown, text)
        if cached is None:
            cached = parser().parse_file(shown, text)
            parse_cache.save(shown, text, cached)
        parsed, more = cached
        diagnostics += more
        settings = [b for b in parsed.blocks if b.kind == "setting"]
        default_setting = _default_setting(settings)
        for block in parsed.blocks:
            if block.kind not in known:
                diagnostics.append(
                    error(
                        "E200",
                        f"unknown kind '{block.kind}'",
                        block.kind_pos,
                        did_you_mean(block.kind, known) or "kinds: " + ", ".join(sorted(known)),
                    )
                )
                continue
            if block.kind == "ruleset":
                if path.name != MANIFEST:
                    diagnostics.append(error("E004", f"a ruleset block belongs in {MANIFEST}", block.kind_pos))
                    continue
                manifests.append(block)
            try:
                entity, more = lower_block(block, known[block.kind], default_setting=default_setting)
                more += schema.check(entity)
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
            diagnostics += more
            if block.kind != "ruleset":
                entities.append(entity)
    manifest_file = display_path(ruleset.root / MANIFEST)
    if not manifests:
        if manifest_file in sources:
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
    manifest, _ = lower_block(manifests[0], known["ruleset"], default_setting=None)
    resolved, more = semantic.check_ruleset(manifest.id, manifest.pos, entities)
    diagnostics += more
    compiled = CompiledRuleset(
        manifest.id,
        str(manifest.doc.get("title", manifest.name)),
        str(manifest.doc.get("version", "0")),
        tuple(sorted(hashes)),
        resolved.documents,
        _source_order(entities),
    )
    return compiled, diagnostics


def _source_order(entities: list[Entity]) -> dict[str, tuple[str, ...]]:
    """Ids per kind in book order (files by path, blocks as written), each id once."""
    order: dict[str, dict[str, None]] = {}
    for entity in entities:
        order.setdefault(entity.kind, {}).setdefault(entity.id, None)
    return {kind: tuple(ids) for kind, ids in sorted(order.items())}


def _default_setting(settings: list[Block]) -> str | None:
    """Lifepaths may leave out `setting:` when their file declares exactly one setting."""
    if len(settings) != 1:
        return None
    block = settings[0]
    return block.id.text if block.id else slug(block.name.value if block.name else "")
