"""Emit the static HTML rules reference: an index of rulesets, a page per ruleset and kind, search.

Works from file:// with no network: the search index is a script (`window.SEARCH_INDEX = ...`), not
a fetched JSON file. Every text from the sources is escaped by Jinja2's autoescape or markupsafe.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from fractions import Fraction
from typing import Any, assert_never

from markupsafe import Markup, escape

from .. import __version__, ir
from .. import fieldtypes as t
from ..pipeline import CompiledRuleset
from ..runtime.core import Dice as RuntimeDice
from ..runtime.core import DiceTerm
from ..runtime.core import Roll as RuntimeRoll
from . import changes
from .labels import labels
from .templating import environment

_WORDS = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)")
_HIDDEN = {"source", "uncertain", "note", "aliases", "columns", "keys", "description"}


def runtime_dice(dice: ir.Dice) -> RuntimeDice:
    return RuntimeDice(dice.text, tuple(DiceTerm(d.count, d.sides) for d in dice.terms), dice.modifier)


def runtime_roll(roll: ir.Roll) -> RuntimeRoll:
    low, high = (roll.modifier.low or 0, roll.modifier.high or 0) if roll.modifier else (0, 0)
    return RuntimeRoll(roll.text, tuple(runtime_dice(d) for d in roll.dice), low, high, roll.tens_units)


def percent(chance: Fraction) -> str:
    value = float(chance * 100)
    return f"{value:.0f}%" if value == round(value) else f"{value:.1f}%"


def stat_text(stat: ir.StatBonus) -> str:
    parts = [f"{n:+d} {label}" for n, label in ((stat.mental, "M"), (stat.physical, "P"), (stat.either, "M/P")) if n]
    return ", ".join(parts)


def _ratio_text(value: Fraction) -> str:
    return f"x{value.numerator}" + (f"/{value.denominator}" if value.denominator != 1 else "")


class _Page:
    """Renders field values of one ruleset as HTML, linking every reference."""

    def __init__(self, ruleset: CompiledRuleset) -> None:
        self.ruleset = ruleset
        self.labels = labels(ruleset)
        self.names_in_formulas: dict[str, tuple[str, str]] = {}
        for kind in ("table", "formula", "attribute"):
            for id_, entity in ruleset.entities.get(kind, {}).items():
                self.names_in_formulas[id_] = (kind, id_)
                abbr = entity.fields.get("abbr")
                if isinstance(abbr, str):
                    self.names_in_formulas[abbr] = (kind, id_)

    def label(self, kind: str, id_: str) -> str:
        return self.labels.get(kind, {}).get(id_, id_)

    def link(self, kind: str, id_: str) -> Markup:
        return Markup('<a href="{}.html#{}">{}</a>').format(kind, id_, self.label(kind, id_))

    def ref(self, ref: ir.Ref) -> Markup:
        return self.link(ref.kind, ref.target)

    def value(self, field_type: t.FieldType, value: ir.Value) -> Markup:
        """A field's value (or a cell) as HTML, by its declared type."""
        match value:
            case ir.Unknown():
                return Markup('<span class="unknown">unknown</span>')
            case ir.NoneValue():
                return Markup("—")
        match field_type:
            case t.RefType():
                assert isinstance(value, ir.Ref)
                return self.ref(value)
            case t.ListType(item):
                assert isinstance(value, tuple)
                if isinstance(item, t.WordType | t.EnumType):
                    return escape(", ".join(str(v).replace("_", " ") for v in value))
                return Markup(", ").join(self.value(item, v) for v in value)
            case t.ChoicesType():
                assert isinstance(value, ir.Choices)
                return self.points(value)
            case t.RequirementType():
                assert isinstance(value, ir.REQUIREMENT_TYPES)
                return self.requirement(value)
            case t.FormulaType() | t.ObstacleType():
                assert isinstance(value, ir.Formula)
                return self.formula(value.text)
            case t.DiceType():
                assert isinstance(value, ir.Dice)
                return escape(value.text)
            case t.RangeType():
                assert isinstance(value, ir.Range)
                return escape(ir.range_text(value.low, value.high))
            case t.StatBonusType():
                assert isinstance(value, ir.StatBonus)
                return escape(stat_text(value) or "none")
            case t.YearsType():
                return escape(f"{value} yrs")
            case t.PointsType():
                return escape(f"{value} pt{'s' * (value != 1)}")
            case t.ActionsType():
                assert isinstance(value, ir.Actions)
                return escape(f"{value.count}{'x (times the obstacle)' if value.per_obstacle else ''}")
            case t.BoolType():
                return escape("yes" if value else "no")
            case t.MultiplierType():
                assert isinstance(value, ir.Multiplier)
                return escape(_ratio_text(value.value))
            case t.IntType():
                assert isinstance(value, int)
                return escape(f"{value:+d}" if value < 0 else str(value))
            case t.NumberType():
                return escape(str(value))
            case t.WordType():
                return escape(str(value).replace("_", " "))
            case t.RollType():
                assert isinstance(value, ir.Roll)
                return escape(value.text)
            case t.CheckType():
                assert isinstance(value, ir.CheckSpec)
                text = Markup("{} {}+").format(self.formula(value.modifier.text), value.target)
                return Markup("{} ({})").format(text, self.ref(value.mechanic)) if value.mechanic else text
            case t.ColumnsType():
                assert isinstance(value, tuple)
                return escape(", ".join(c.name.replace("_", " ") for c in value if isinstance(c, ir.Column)))
            case t.TextType() | t.MarkdownType() | t.EnumType() | t.AbbreviationType() | t.VersionType():
                return escape(str(value))
            case _:
                assert_never(field_type)

    def formula(self, text: str) -> Markup:
        """A formula's text with the attributes, tables and formulas it names as links."""
        parts = []
        for piece in _WORDS.split(text):
            target = self.names_in_formulas.get(piece)
            parts.append(Markup('<a href="{}.html#{}">{}</a>').format(*target, piece) if target else escape(piece))
        return Markup("").join(parts)

    def points(self, value: ir.Choices) -> Markup:
        items = [Markup(" or ").join(self.ref(r) for r in option) for option in value.options]
        head = escape(f"{value.points} pt{'s' * (value.points != 1)}")
        return head + (Markup(": ") + Markup(", ").join(items) if items else Markup(""))

    def requirement(self, req: ir.Requirement, nested: bool = False) -> Markup:
        match req:
            case ir.AnyOf(items) | ir.AllOf(items):
                word = " or " if isinstance(req, ir.AnyOf) else " and "
                text = Markup(word).join(self.requirement(r, nested=True) for r in items)
                return Markup("({})").format(text) if nested else text
            case ir.TookLifepath(ref):
                return self.ref(ref)
            case ir.HasTrait(ref):
                return Markup("the {} trait").format(self.ref(ref))
            case ir.HasSkill(ref):
                return Markup("a lifepath with the {} skill").format(self.ref(ref))
            case ir.Previous(ref):
                return Markup("{} just before").format(self.ref(ref))
            case ir.NotReq(item):
                return Markup("not {}").format(self.requirement(item, nested=True))
            case ir.GmPermission():
                return Markup("the GM's permission")
            case ir.CountOf(count, setting, tag, lifepaths):
                what: Markup = escape("lifepath" + ("s" if count != 1 else ""))
                if setting is not None:
                    what = Markup("{} {}").format(self.ref(setting), what)
                if lifepaths:
                    listed = Markup(", ").join(self.ref(r) for r in lifepaths)
                    what = Markup("{} among {}").format(what, listed)
                if tag is not None:
                    what = Markup("{} tagged {}").format(what, tag.text)
                return Markup("{} {}").format("any" if count == 1 else count, what)
            case ir.Condition(subject, op, value):
                return escape(f"{subject.replace('_', ' ')} {op} {value}")
            case ir.ConditionIn(subject, low, high):
                return escape(f"{subject.replace('_', ' ')} {ir.range_text(low, high)}")
            case _:
                assert_never(req)

    def fields(self, entity: ir.Entity) -> list[tuple[str, Markup]]:
        kind = self.ruleset.kinds[entity.kind]
        shown = []
        for decl in kind.fields.values():
            if decl.name in entity.fields and decl.name not in _HIDDEN:
                shown.append((decl.name.replace("_", " "), self.value(decl.type, entity.fields[decl.name])))
        return shown

    def table(self, entity: ir.Entity) -> dict[str, Any]:
        roll = entity.fields.get("roll")
        dice = runtime_roll(roll) if isinstance(roll, ir.Roll) else None
        columns = [c for c in entity.fields.get("columns", ()) if isinstance(c, ir.Column)]  # type: ignore[union-attr]
        keys = [c for c in entity.fields.get("keys", ()) if isinstance(c, ir.Column)]  # type: ignore[union-attr]
        rows = []
        for row in entity.rows:
            key = row.keys[0]
            chance = None
            if dice is not None and isinstance(key, ir.Range):
                chance = percent(dice.chance(0, key.low, key.high))
            elif dice is not None and isinstance(key, ir.ParityKey):
                chance = percent(dice.parity_chance(0, int(key.odd)))
            cells = [self.value(c.type, v) for v, c in zip(row.cells, columns, strict=True)]
            rows.append(
                {"keys": [ir.key_text(k) for k in row.keys], "chance": chance, "cells": cells, "source": row.source}
            )
        key_names = [k.name.replace("_", " ") for k in keys]
        return {
            "keys": key_names or [roll.text if isinstance(roll, ir.Roll) else "Key"],
            "columns": [c.name.replace("_", " ") for c in columns],
            "rows": rows,
            "rolled": dice is not None,
            "sourced": any(row["source"] for row in rows),
        }

    def referrers(self) -> dict[tuple[str, str], list[tuple[str, str]]]:
        """Who names whom: for 'named by' lists (lifepaths that list a skill, trait or lead)."""
        found: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for lp_id, entity in self.ruleset.entities.get("lifepath", {}).items():
            named = []
            for name in ("leads", "skills", "traits", "setting"):
                value = entity.fields.get(name)
                if value is not None:
                    named += [(r.kind, r.target) for r in ir.refs_in(value)]
            for target in dict.fromkeys(named):
                found.setdefault(target, []).append(("lifepath", lp_id))
        return found

    def required_by(self) -> dict[str, list[str]]:
        """For each lifepath, the lifepaths whose requirements name it (where it can lead a character)."""
        found: dict[str, list[str]] = {}
        for lp_id, entity in self.ruleset.entities.get("lifepath", {}).items():
            named: list[str] = []
            for name in ("requires", "restrictions"):
                value = entity.fields.get(name)
                if value is not None:
                    named += [r.target for r in ir.refs_in(value) if r.kind == "lifepath"]
            for target in dict.fromkeys(named):
                found.setdefault(target, []).append(lp_id)
        return found


def _page_order(ruleset: CompiledRuleset, kind: str) -> list[str]:
    """Lifepaths follow the book: grouped by setting, settings and lifepaths in source order.
    Everything else is alphabetical, as in the book's indexes."""
    entities = ruleset.entities[kind]
    if kind != "lifepath":
        return sorted(entities, key=lambda i: (entities[i].name.casefold(), i))
    settings = list(ruleset.source_order.get("setting", ()))
    order = ruleset.source_order.get("lifepath", tuple(entities))

    def setting_of(lp_id: str) -> str:
        setting = entities[lp_id].fields.get("setting")
        return setting.target if isinstance(setting, ir.Ref) else ""

    return sorted(order, key=lambda i: settings.index(setting_of(i)) if setting_of(i) in settings else 0)


def _refs_of(entity: ir.Entity, name: str) -> Iterator[str]:
    value = entity.fields.get(name)
    if value is not None:
        yield from (r.target for r in ir.refs_in(value))


def _by_stock(ruleset: CompiledRuleset) -> list[dict[str, Any]]:
    """Settings, lifepaths, and stock-restricted skills, traits and spells per stock."""
    entities = ruleset.entities
    rows = []
    for stock_id, stock in sorted(entities.get("stock", {}).items()):
        settings = {s for s, e in entities.get("setting", {}).items() if stock_id in _refs_of(e, "stock")}
        counts = {
            "settings": len(settings),
            "lifepaths": sum(
                any(s in settings for s in _refs_of(e, "setting")) for e in entities.get("lifepath", {}).values()
            ),
        }
        for kind in ("skill", "trait", "spell"):
            counts[kind + "s"] = sum(stock_id in _words(e, "stock") for e in entities.get(kind, {}).values())
        rows.append({"name": stock.name, "id": stock_id, **counts})
    return rows


def _words(entity: ir.Entity, name: str) -> tuple[str, ...]:
    value = entity.fields.get(name, ())
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, tuple) else ()


def _text(entity: ir.Entity, name: str) -> str | None:
    value = entity.fields.get(name)
    return value if isinstance(value, str) else None


def render(rulesets: tuple[CompiledRuleset, ...]) -> dict[str, str]:
    env = environment()
    files: dict[str, str] = {
        "assets/style.css": env.get_template("html/style.css").render(),
        "assets/search.js": env.get_template("html/search.js").render(),
    }
    search: list[dict[str, str]] = []
    summaries = []
    by_id = {r.id: r for r in rulesets}
    pages = {r.id: _Page(r) for r in rulesets}

    def field_value(ruleset: CompiledRuleset, kind: str, field: str, value: ir.Value) -> Markup:
        return pages[ruleset.id].value(ruleset.kinds[kind].fields[field].type, value)

    for ruleset in rulesets:
        page = pages[ruleset.id]
        changed = changes.render(ruleset, by_id, field_value)
        if changed is not None:
            files[f"{ruleset.id}/changes.html"] = changed
        origin_notes = changes.notes(ruleset)
        referrers = page.referrers()
        required_by = page.required_by()
        counts = [(kind, ruleset.kinds[kind].title, len(group)) for kind, group in ruleset.entities.items()]
        summaries.append({"ruleset": ruleset, "counts": counts, "by_stock": _by_stock(ruleset)})
        common = {"ruleset": ruleset, "counts": counts, "version": __version__, "root": "../"}
        files[f"{ruleset.id}/index.html"] = env.get_template("html/ruleset.html").render(common)
        for kind, group in ruleset.entities.items():
            entries = []
            for entity_id in _page_order(ruleset, kind):
                entity = group[entity_id]
                setting = entity.fields.get("setting")
                entries.append(
                    {
                        "id": entity.id,
                        "label": page.label(kind, entity.id),
                        "group": page.label("setting", setting.target)
                        if kind == "lifepath" and isinstance(setting, ir.Ref)
                        else None,
                        "aliases": entity.fields.get("aliases"),
                        "uncertain": _text(entity, "uncertain"),
                        "note": _text(entity, "note"),
                        "source": _text(entity, "source"),
                        "origin": origin_notes.get((kind, entity.id)),
                        "fields": page.fields(entity),
                        "table": page.table(entity) if kind == "table" else None,
                        "used_by": [page.link(k, i) for k, i in referrers.get((kind, entity.id), [])],
                        "required_by": [
                            page.link("lifepath", i) for i in required_by.get(entity.id, []) if kind == "lifepath"
                        ],
                    }
                )
                search.append(
                    {
                        "n": page.label(kind, entity.id),
                        "k": kind,
                        "r": ruleset.id,
                        "u": f"{ruleset.id}/{kind}.html#{entity.id}",
                    }
                )
            files[f"{ruleset.id}/{kind}.html"] = env.get_template("html/kind.html").render(
                common, kind=kind, kind_title=ruleset.kinds[kind].title, entries=entries
            )
    files["index.html"] = env.get_template("html/index.html").render(summaries=summaries, version=__version__, root="")
    index = json.dumps(search, ensure_ascii=True, separators=(",", ":"), sort_keys=True).replace("</", "<\\/")
    files["search-index.js"] = f"window.SEARCH_INDEX = {index};\n"
    return files
