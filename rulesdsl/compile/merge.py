"""Homebrew on top of other rulesets: `extends`, `patch` and `remove`.

A ruleset that extends others starts from their entities (as lowered, before the checks, so that
everything is checked again as one ruleset), applies its removals and patches, and adds its own. Each
ruleset hands on a `Layer`: its merged entities, its kinds, and where each entity and each patched field
came from, which is how two bases patching the same field differently are caught, and what the
reference's "what this changes" page is made of.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from rulesdsl.compile import ir
from rulesdsl.compile.index import EntityIndex
from rulesdsl.compile.jsonform import value_json
from rulesdsl.compile.kinds import Kind
from rulesdsl.compile.lower import lower_patch
from rulesdsl.diagnostics import Diagnostic, error, naming_hint, suggest
from rulesdsl.language.names import slug
from rulesdsl.syntax import tree as m
from rulesdsl.syntax.tree import Position

Key = tuple[str, str]  # (kind, id)


@dataclass(frozen=True, slots=True)
class Layer:
    """What a compiled ruleset hands to the rulesets that extend it."""

    id: str
    entities: tuple[ir.Entity, ...]  # merged, lowered, not yet resolved
    origin: Mapping[Key, str]  # which ruleset declared each entity
    patched: Mapping[tuple[str, str, str], Position]  # (kind, id, field) -> the patch that last set it
    bases: tuple[str, ...]  # every ruleset below this one
    reported: frozenset[tuple[str, str]] = frozenset()  # (code, message) of what its checks found


@dataclass(frozen=True, slots=True)
class Change:
    kind: str
    id: str
    name: str
    fields: tuple[str, ...] = ()  # patched: the fields it changed
    pos: Position | None = None


@dataclass(frozen=True, slots=True)
class Changes:
    """What a homebrew changes in what it extends."""

    added: tuple[Change, ...] = ()
    patched: tuple[Change, ...] = ()
    removed: tuple[Change, ...] = ()


@dataclass(frozen=True, slots=True)
class Gone:
    """Names a homebrew took away: an entity it removed, or the aliases (or an attribute's abbreviation)
    a patch took from one. Whatever still names them is reported at the change (validate/uses.py)."""

    kind: str
    names: frozenset[str]  # slugs: what references find it by
    words: frozenset[str]  # an attribute's id and abbreviation: what formulas name it by
    what: str  # "lifepath 'Farmer' is removed"
    pos: Position  # the removal, or the patch


@dataclass
class Merged:
    entities: list[ir.Entity]
    origin: dict[Key, str]
    patched: dict[tuple[str, str, str], Position]
    removed_names: dict[tuple[str, str], Position] = field(default_factory=dict)  # (kind, slug) -> the change
    changes: Changes = field(default_factory=Changes)
    gone: list[Gone] = field(default_factory=list)


def inherit(bases: Sequence[Layer], extends_pos: Position) -> tuple[Merged, list[Diagnostic]]:
    """The union of the bases' entities. Where two bases hold different versions of one entity, a field
    patched in one only is taken from it; a field both patched differently is a conflict."""
    diagnostics: list[Diagnostic] = []
    chosen: dict[Key, ir.Entity] = {}
    origin: dict[Key, str] = {}
    patched: dict[tuple[str, str, str], Position] = {}
    owner: dict[Key, Layer] = {}
    for base in bases:
        for entity in base.entities:
            key = (entity.kind, entity.id)
            if key not in chosen:
                chosen[key], origin[key], owner[key] = entity, base.origin[key], base
                patched.update({p: pos for p, pos in base.patched.items() if p[:2] == key})
                continue
            if origin[key] != base.origin[key]:
                diagnostics.append(
                    error(
                        "E509",
                        f"{base.id} and {owner[key].id} both add a {entity.kind} '{entity.id}'",
                        extends_pos,
                        "extend one of them, or give one of the two another id",
                    )
                )
                continue
            chosen[key] = _reconcile(chosen[key], entity, owner[key], base, patched, diagnostics, extends_pos)
    return Merged(list(chosen.values()), origin, patched), diagnostics


def _doc(value: ir.Value | None) -> object:
    return None if value is None else value_json(value)


def _reconcile(
    first: ir.Entity,
    second: ir.Entity,
    first_layer: Layer,
    second_layer: Layer,
    patched: dict[tuple[str, str, str], Position],
    diagnostics: list[Diagnostic],
    extends_pos: Position,
) -> ir.Entity:
    """One entity as two bases have it: their common version with each base's patches on it."""
    fields = dict(first.fields)
    positions = dict(first.positions)
    for name in sorted(set(first.fields) | set(second.fields)):
        a, b = first.fields.get(name), second.fields.get(name)
        if _doc(a) == _doc(b):
            continue
        where_a = first_layer.patched.get((first.kind, first.id, name))
        where_b = second_layer.patched.get((second.kind, second.id, name))
        if where_a is not None and where_b is not None:
            diagnostics.append(
                error(
                    "E509",
                    f"{first_layer.id} and {second_layer.id} patch '{name}' of {first.kind} '{first.id}' differently "
                    f"({where_a.file}:{where_a.line} and {where_b.file}:{where_b.line})",
                    extends_pos,
                    f"patch '{name}' again here to settle it, or extend only one of them",
                )
            )
        elif where_b is not None:
            if b is None:
                fields.pop(name, None)
            else:
                fields[name] = b
            positions[(name,)] = second.position(name)
            patched[(first.kind, first.id, name)] = where_b
    return replace(first, fields=fields, positions=positions)


def apply(
    merged: Merged,
    ruleset_id: str,
    kinds: Mapping[str, Kind],
    own: Sequence[ir.Entity],
    patches: Sequence[m.Patch],
    removals: Sequence[m.Removal],
) -> list[Diagnostic]:
    """Patches, then removals, then the ruleset's own entities, onto what it inherited (in place)."""
    diagnostics: list[Diagnostic] = []
    inherited = {(e.kind, e.id) for e in merged.entities}
    by_key = {(e.kind, e.id): e for e in merged.entities}
    inherited_entities = dict(by_key)
    patched_entities: list[Change] = []
    indexes: dict[str, EntityIndex] = {}
    for patch in patches:
        target = _target(patch.kind, patch.target, by_key, indexes, kinds, diagnostics)
        if target is None:
            continue
        new, changed, more = lower_patch(patch, kinds[target.kind], target)
        diagnostics += more
        by_key[(target.kind, target.id)] = new
        indexes[target.kind].discard(target)
        indexes[target.kind].add(new)
        for name in changed:
            merged.patched[(target.kind, target.id, name)] = patch.pos
        patched_entities.append(Change(target.kind, target.id, target.name, tuple(changed), patch.pos))
    removed: list[tuple[ir.Entity, m.Removal]] = []
    for removal in removals:
        target = _target(removal.kind, removal.target, by_key, indexes, kinds, diagnostics)
        if target is None:
            continue
        removed.append((target, removal))
        del by_key[(target.kind, target.id)]
        indexes[target.kind].discard(target)
        what = f"{target.kind} '{target.name}' is removed"
        _forget(merged, target.kind, _names(target), _words(target), what, removal.pos)
    for change in patched_entities:
        before, after = inherited_entities[(change.kind, change.id)], by_key.get((change.kind, change.id))
        if after is None:  # patched, then removed
            continue
        names, words = _names(before) - _names(after), _words(before) - _words(after)
        if names or words:
            written = [n for n in (before.name, *_aliases(before)) if slug(n) in names]
            lost = ", ".join(f"'{n}'" for n in dict.fromkeys([*written, *sorted(words)]))
            field_name = "abbr" if words else "aliases"
            pos = merged.patched.get((change.kind, change.id, field_name), change.pos or before.id_pos)
            what = f"this patch takes {lost} from {change.kind} '{change.name}'"
            _forget(merged, change.kind, names, words, what, pos)
    added: list[Change] = []
    for entity in own:
        key = (entity.kind, entity.id)
        if key in by_key and key in inherited:
            diagnostics.append(
                error(
                    "E508",
                    f"{entity.kind} '{entity.id}' is already in {merged.origin[key]}",
                    entity.id_pos,
                    f"to change it write: patch {entity.kind} {entity.id} {{ ... }}",
                )
            )
            continue
        by_key.setdefault(key, entity)  # a repeated own id is reported by the semantic checks
        merged.origin.setdefault(key, ruleset_id)
        added.append(Change(entity.kind, entity.id, entity.name, (), entity.id_pos))
    own_keys = {(e.kind, e.id) for e in own}
    merged.entities = [*(e for k, e in by_key.items() if k not in own_keys), *own]
    merged.changes = Changes(
        tuple(added), tuple(patched_entities), tuple(Change(e.kind, e.id, e.name, (), r.pos) for e, r in removed)
    )
    return diagnostics


def _aliases(entity: ir.Entity) -> tuple[str, ...]:
    aliases = entity.fields.get("aliases", ())
    return tuple(a for a in aliases if isinstance(a, str)) if isinstance(aliases, tuple) else ()


def _names(entity: ir.Entity) -> frozenset[str]:
    """What references find an entity by: the slugs of its id, name and aliases."""
    return frozenset(slug(n) for n in (entity.name, entity.id, *_aliases(entity)))


def _words(entity: ir.Entity) -> frozenset[str]:
    """What formulas name an attribute by: its id and abbreviation (see semantic._abbreviations)."""
    if entity.kind != "attribute":
        return frozenset()
    abbr = entity.fields.get("abbr")
    return frozenset((entity.id, abbr) if isinstance(abbr, str) else (entity.id,))


def _forget(merged: Merged, kind: str, names: frozenset[str], words: frozenset[str], what: str, pos: Position) -> None:
    merged.gone.append(Gone(kind, names, words, what, pos))
    for name in names:
        merged.removed_names[(kind, name)] = pos


def _target(
    kind_name: m.Name,
    written: m.Name | m.String,
    by_key: Mapping[Key, ir.Entity],
    indexes: dict[str, EntityIndex],
    kinds: Mapping[str, Kind],
    diagnostics: list[Diagnostic],
) -> ir.Entity | None:
    """The inherited entity a patch or removal names (E504 with did-you-mean when it names nothing).
    `indexes`: by kind, of `by_key` as it is now (the caller keeps them so)."""
    text = written.text if isinstance(written, m.Name) else written.value
    if kind_name.text not in kinds:
        close = suggest(kind_name.text, kinds)
        hint = naming_hint(close) or "kinds: " + ", ".join(sorted(kinds))
        diagnostics.append(error("E200", f"unknown kind '{kind_name.text}'", kind_name.pos, hint, close))
        return None
    index = indexes.get(kind_name.text)
    if index is None:  # built once per kind, then kept up to date (one per patch made this quadratic)
        index = indexes[kind_name.text] = EntityIndex(e for k, e in by_key.items() if k[0] == kind_name.text)
    found = index.find(text)
    if len(found) == 1:
        return by_key[(kind_name.text, found[0])]
    if found:
        diagnostics.append(
            error(
                "E302",
                f"'{text}' could mean several {kind_name.text}s: {', '.join(found)}",
                written.pos,
                "write the id of the one you mean",
            )
        )
        return None
    close = index.close(text)
    hint = naming_hint(close) or f"name a {kind_name.text} of the ruleset it extends; a new one is a plain block"
    diagnostics.append(error("E504", f"there is no {kind_name.text} '{text}' to change", written.pos, hint, close))
    return None
