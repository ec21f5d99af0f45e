"""The reference's "what this homebrew changes" page: every entity a ruleset adds to, patches in (old
value -> new, field by field) and removes from the rulesets it extends, linked to both versions."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from markupsafe import Markup

from rulesdsl.compile import ir
from rulesdsl.compile.merge import Change
from rulesdsl.compile.pipeline import CompiledRuleset
from rulesdsl.targets.templating import environment, template_context

Render = Callable[[CompiledRuleset, str, str, ir.Value], Markup]  # (ruleset, kind, field, value) -> HTML
Link = Callable[[str, str, str], str]  # (ruleset id, kind, id) -> the entity's href from the ruleset's folder


@dataclass(frozen=True, slots=True)
class FieldChange:
    field: str  # as a reader writes it (`stat bonus`)
    old: Markup | str  # "—" where the base has no value
    new: Markup | str


@dataclass(frozen=True, slots=True)
class Patched:
    change: Change
    base: str | None  # the base ruleset whose version it patched
    rows: list[FieldChange]


@dataclass(frozen=True, slots=True)
class Removed:
    change: Change
    base: str | None  # the base ruleset it was taken from


@dataclass(frozen=True, slots=True)
class ChangesPage:
    """What templates/changes.html is given besides what every page is."""

    ruleset: CompiledRuleset
    added: tuple[Change, ...]
    patched: list[Patched]
    removed: list[Removed]
    link: Link
    titles: Mapping[str, str]  # every ruleset's title, by id


def _base_version(
    ruleset: CompiledRuleset, rulesets: Mapping[str, CompiledRuleset], kind: str, id_: str
) -> tuple[CompiledRuleset, ir.Entity] | None:
    """The entity as the first base that has it holds it."""
    for base_id in ruleset.extends:
        base = rulesets.get(base_id)
        if base is not None and id_ in base.entities.get(kind, {}):
            return base, base.entities[kind][id_]
    return None


def notes(ruleset: CompiledRuleset) -> dict[tuple[str, str], str]:
    """(kind, id) -> what an entity page of a homebrew says of the entity's origin."""
    found = {(c.kind, c.id): f"Added by {ruleset.title}." for c in ruleset.changes.added} if ruleset.extends else {}
    for change in ruleset.changes.patched:
        shown = ", ".join(f.replace("_", " ") for f in change.fields)
        found[(change.kind, change.id)] = f"Changed by {ruleset.title}: {shown}."
    return found


def render(
    ruleset: CompiledRuleset,
    rulesets: Mapping[str, CompiledRuleset],
    value: Render,
    link: Link,
    common: Mapping[str, object],
) -> str | None:
    """The page for a ruleset that extends others (None for one that does not). `common`: what every
    page of the reference is given (site.py)."""
    if not ruleset.extends:
        return None
    patched: list[Patched] = []
    for change in ruleset.changes.patched:
        new = ruleset.entities.get(change.kind, {}).get(change.id)
        old = _base_version(ruleset, rulesets, change.kind, change.id)
        if new is None:
            continue  # patched, then removed
        rows: list[FieldChange] = []
        for field in change.fields:
            before = old[1].fields.get(field) if old is not None else None
            after = new.fields.get(field)
            rows.append(
                FieldChange(
                    field=field.replace("_", " "),
                    old=value(old[0], change.kind, field, before) if old is not None and before is not None else "—",
                    new=value(ruleset, change.kind, field, after) if after is not None else "—",
                )
            )
        patched.append(Patched(change, old[0].id if old else None, rows))
    removed = [
        Removed(c, found[0].id if (found := _base_version(ruleset, rulesets, c.kind, c.id)) else None)
        for c in ruleset.changes.removed
    ]
    titles = {id_: other.title for id_, other in rulesets.items()}
    page = ChangesPage(ruleset, ruleset.changes.added, patched, removed, link, titles)
    return environment().get_template("html/changes.html").render({**common, **template_context(page)})
