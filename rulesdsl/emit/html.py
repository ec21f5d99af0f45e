"""Emit the static HTML rules reference: an index of rulesets, a page per ruleset and kind, search.

Works from file:// with no network: the search index is a script (`window.SEARCH_INDEX = ...`), not
a fetched JSON file. Every text from the sources is escaped by Jinja2's autoescape or markupsafe.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from markupsafe import Markup, escape

from .. import __version__
from ..kinds import kinds
from ..lower import walk_requirement
from ..pipeline import CompiledRuleset
from ..validate.semantic import dice_outcomes, range_text
from .labels import labels
from .templating import environment

KIND_TITLES = {
    "stock": "Stocks",
    "setting": "Settings",
    "lifepath": "Lifepaths",
    "skill": "Skills",
    "trait": "Traits",
    "spell": "Spells",
    "table": "Tables",
    "attribute": "Attributes",
    "formula": "Formulas",
    "mechanic": "Dice mechanics",
}
_WORDS = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)")
_HIDDEN = {"kind", "id", "name", "source", "uncertain", "note", "rows", "columns", "keys"}


def dice_distribution(dice: Mapping[str, Any]) -> dict[int, Fraction]:
    """The exact chance of each total of a dice expression (ways / all combinations)."""
    ways = {0: 1}
    combinations = 1
    for term in dice["terms"]:
        for _ in range(term["count"]):
            step: dict[int, int] = {}
            for total, count in ways.items():
                for face in range(1, term["sides"] + 1):
                    step[total + face] = step.get(total + face, 0) + count
            ways = step
            combinations *= term["sides"]
    return {total + dice["modifier"]: Fraction(count, combinations) for total, count in sorted(ways.items())}


def percent(chance: Fraction) -> str:
    value = float(chance * 100)
    return f"{value:.0f}%" if value == round(value) else f"{value:.1f}%"


class _Page:
    """Renders field values of one ruleset as HTML, linking every reference."""

    def __init__(self, ruleset: CompiledRuleset) -> None:
        self.ruleset = ruleset
        self.docs = ruleset.documents
        self.labels = labels(ruleset.documents)
        self.names_in_formulas: dict[str, tuple[str, str]] = {}
        for kind in ("table", "formula", "attribute"):
            for id_, doc in self.docs.get(kind, {}).items():
                self.names_in_formulas[id_] = (kind, id_)
                if doc.get("abbr"):
                    self.names_in_formulas[doc["abbr"]] = (kind, id_)

    def label(self, kind: str, id_: str) -> str:
        return self.labels.get(kind, {}).get(id_, id_)

    def link(self, kind: str, id_: str) -> Markup:
        return Markup('<a href="{}.html#{}">{}</a>').format(kind, id_, self.label(kind, id_))

    def links(self, kind: str, ids: list[str]) -> Markup:
        return Markup(", ").join(self.link(kind, i) for i in ids)

    def value(self, value_type: str, value: Any) -> Markup:
        """A field's value as HTML, by the way its schema says it is read (`x-value`)."""
        name, _, target = value_type.partition(":")
        match name:
            case "ref":
                return self.link(target, value)
            case "refs":
                return self.links(target, value)
            case "points":
                return self.points(target, value)
            case "requirement":
                return self.requirement(value)
            case "formula":
                return self.formula(value["text"])
            case "dice":
                return escape(value["text"])
            case "range":
                return escape(range_text(value))
            case "stat_bonus":
                return escape(stat_text(value) or "none")
            case "years":
                return escape(f"{value} yrs")
            case "pts":
                return escape(f"{value} pt{'s' * (value != 1)}")
            case "actions":
                return escape(f"{value['count']}{'x (times the obstacle)' if value['per_obstacle'] else ''}")
            case "bool":
                return escape("yes" if value else "no")
        if isinstance(value, list):
            return escape(", ".join(str(v).replace("_", " ") for v in value))
        return escape(str(value).replace("_", " ") if name in ("word", "words") else str(value))

    def formula(self, text: str) -> Markup:
        """A formula's text with the attributes, tables and formulas it names as links."""
        parts = []
        for piece in _WORDS.split(text):
            target = self.names_in_formulas.get(piece)
            parts.append(Markup('<a href="{}.html#{}">{}</a>').format(*target, piece) if target else escape(piece))
        return Markup("").join(parts)

    def points(self, kind: str, value: Mapping[str, Any]) -> Markup:
        items = [
            Markup(" or ").join(self.link(kind, i) for i in item["one_of"])
            if isinstance(item, dict)
            else self.link(kind, item)
            for item in value["items"]
        ]
        head = escape(f"{value['points']} pt{'s' * (value['points'] != 1)}")
        return head + (Markup(": ") + Markup(", ").join(items) if items else Markup(""))

    def requirement(self, req: Mapping[str, Any], nested: bool = False) -> Markup:
        for key, word in (("any", " or "), ("all", " and ")):
            if key in req:
                text = Markup(word).join(self.requirement(r, nested=True) for r in req[key])
                return Markup("({})").format(text) if nested else text
        if "lifepath" in req:
            return self.link("lifepath", req["lifepath"])
        if "trait" in req:
            return Markup("the {} trait").format(self.link("trait", req["trait"]))
        if "skill" in req:
            return Markup("a lifepath with the {} skill").format(self.link("skill", req["skill"]))
        if "previous" in req:
            return Markup("{} just before").format(self.link("lifepath", req["previous"]))
        if "not" in req:
            return Markup("not {}").format(self.requirement(req["not"], nested=True))
        if "gm_permission" in req:
            return Markup("the GM's permission")
        if "count" in req:
            of = req["of"]
            what: Markup = escape("lifepath" + ("s" if req["count"] != 1 else ""))
            if "setting" in of:
                what = Markup("{} {}").format(self.link("setting", of["setting"]), what)
            if "lifepaths" in of:
                what = Markup("{} among {}").format(what, self.links("lifepath", of["lifepaths"]))
            if "tag" in of:
                what = Markup("{} tagged {}").format(what, of["tag"])
            return Markup("{} {}").format("any" if req["count"] == 1 else req["count"], what)
        subject = req["condition"].replace("_", " ")
        if "in" in req:
            return escape(f"{subject} {range_text(req['in'])}")
        return escape(f"{subject} {req['op']} {req['value']}")

    def fields(self, doc: Mapping[str, Any]) -> list[tuple[str, Markup]]:
        kind = kinds()[doc["kind"]]
        shown = []
        for field, value_type in kind.value_types.items():
            if field in doc and field not in _HIDDEN:
                shown.append((field.replace("_", " "), self.value(value_type, doc[field])))
        return shown

    def table(self, doc: Mapping[str, Any]) -> dict[str, Any]:
        roll = doc.get("roll")
        spread = dice_distribution(roll) if roll else {}
        rows = []
        low, high = dice_outcomes(roll) if roll else (0, 0)
        for row in doc["rows"]:
            key = row["keys"][0]
            chance = None
            if roll and "name" not in key:
                lo = key["min"] if key["min"] is not None else low
                hi = key["max"] if key["max"] is not None else high
                chance = percent(sum((c for n, c in spread.items() if lo <= n <= hi), Fraction(0)))
            cells = [cell_text(v, c["type"]) for v, c in zip(row["cells"], doc["columns"], strict=True)]
            rows.append(
                {
                    "keys": [range_text(k) for k in row["keys"]],
                    "chance": chance,
                    "cells": cells,
                    "source": row.get("source"),
                }
            )
        key_names = [k["name"].replace("_", " ") for k in doc.get("keys", [])]
        return {
            "keys": key_names or [roll["text"] if roll else "Key"],
            "columns": [c["name"].replace("_", " ") for c in doc["columns"]],
            "rows": rows,
            "sourced": any(row["source"] for row in rows),
        }

    def referrers(self) -> dict[tuple[str, str], list[tuple[str, str]]]:
        """Who names whom: for 'used by' lists (lifepaths that list a skill, trait or lead)."""
        found: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for lp_id, doc in self.docs.get("lifepath", {}).items():
            named = [("setting", s) for s in doc.get("leads", [])]
            for field, kind in (("skills", "skill"), ("traits", "trait")):
                for item in doc.get(field, {}).get("items", []):
                    named += [(kind, s) for s in (item["one_of"] if isinstance(item, dict) else [item])]
            named.append(("setting", doc["setting"]))
            for target in dict.fromkeys(named):
                found.setdefault(target, []).append(("lifepath", lp_id))
        return found

    def required_by(self) -> dict[str, list[str]]:
        """For each lifepath, the lifepaths whose requirements name it (where it can lead a character)."""
        found: dict[str, list[str]] = {}
        for lp_id, doc in self.docs.get("lifepath", {}).items():
            named: list[str] = []
            for field in ("requires", "restrictions"):
                for node in walk_requirement(doc.get(field) or {}):
                    named += [node[k] for k in ("lifepath", "previous") if k in node]
                    named += node.get("of", {}).get("lifepaths", [])
            for target in dict.fromkeys(named):
                found.setdefault(target, []).append(lp_id)
        return found


def _page_order(ruleset: CompiledRuleset, kind: str) -> list[str]:
    """Lifepaths follow the book: grouped by setting, settings and lifepaths in source order.
    Everything else is alphabetical, as in the book's indexes."""
    docs = ruleset.documents[kind]
    if kind != "lifepath":
        return sorted(docs, key=lambda i: (str(docs[i]["name"]).casefold(), i))
    settings = list(ruleset.source_order.get("setting", ()))
    order = ruleset.source_order.get("lifepath", tuple(docs))
    return sorted(order, key=lambda i: settings.index(docs[i]["setting"]) if docs[i]["setting"] in settings else 0)


def _by_stock(ruleset: CompiledRuleset) -> list[dict[str, Any]]:
    """Settings, lifepaths, and stock-restricted skills, traits and spells per stock."""
    docs = ruleset.documents
    rows = []
    for stock_id, stock in sorted(docs.get("stock", {}).items()):
        settings = {s for s, doc in docs.get("setting", {}).items() if doc.get("stock") == stock_id}
        counts = {
            "settings": len(settings),
            "lifepaths": sum(doc.get("setting") in settings for doc in docs.get("lifepath", {}).values()),
        }
        for kind in ("skill", "trait", "spell"):
            counts[kind + "s"] = sum(stock_id in doc.get("stock", []) for doc in docs.get(kind, {}).values())
        rows.append({"name": stock["name"], "id": stock_id, **counts})
    return rows


def stat_text(stat: Mapping[str, int]) -> str:
    parts = [f"{stat[k]:+d} {label}" for k, label in (("mental", "M"), ("physical", "P"), ("either", "M/P")) if stat[k]]
    return ", ".join(parts)


def cell_text(value: Any, column_type: str) -> str:
    if value is None:
        return "unknown"
    if column_type == "formula":
        return str(value["text"])
    if column_type == "multiplier":
        return f"x{value['num']}" + (f"/{value['den']}" if value["den"] != 1 else "")
    if column_type == "dice":
        return str(value["text"])
    if column_type == "bool":
        return "yes" if value else "no"
    if column_type == "int":
        return f"{value:+d}" if value < 0 else str(value)
    return str(value)


def render(rulesets: tuple[CompiledRuleset, ...]) -> dict[str, str]:
    env = environment()
    files: dict[str, str] = {
        "assets/style.css": env.get_template("html/style.css").render(),
        "assets/search.js": env.get_template("html/search.js").render(),
    }
    search: list[dict[str, str]] = []
    summaries = []
    for ruleset in rulesets:
        page = _Page(ruleset)
        referrers = page.referrers()
        required_by = page.required_by()
        counts = [(kind, KIND_TITLES.get(kind, kind), len(docs)) for kind, docs in ruleset.documents.items()]
        summaries.append({"ruleset": ruleset, "counts": counts, "by_stock": _by_stock(ruleset)})
        common = {"ruleset": ruleset, "counts": counts, "version": __version__, "root": "../"}
        files[f"{ruleset.id}/index.html"] = env.get_template("html/ruleset.html").render(common)
        for kind, docs in ruleset.documents.items():
            entries = []
            for entity_id in _page_order(ruleset, kind):
                doc = docs[entity_id]
                entries.append(
                    {
                        "doc": doc,
                        "label": page.label(kind, doc["id"]),
                        "group": page.label("setting", doc["setting"]) if kind == "lifepath" else None,
                        "fields": page.fields(doc),
                        "table": page.table(doc) if kind == "table" else None,
                        "used_by": [page.link(k, i) for k, i in referrers.get((kind, doc["id"]), [])],
                        "required_by": [
                            page.link("lifepath", i) for i in required_by.get(doc["id"], []) if kind == "lifepath"
                        ],
                    }
                )
                search.append(
                    {
                        "n": page.label(kind, doc["id"]),
                        "k": kind,
                        "r": ruleset.id,
                        "u": f"{ruleset.id}/{kind}.html#{doc['id']}",
                    }
                )
            files[f"{ruleset.id}/{kind}.html"] = env.get_template("html/kind.html").render(
                common, kind=kind, kind_title=KIND_TITLES.get(kind, kind), entries=entries
            )
    files["index.html"] = env.get_template("html/index.html").render(summaries=summaries, version=__version__, root="")
    index = json.dumps(search, ensure_ascii=True, separators=(",", ":"), sort_keys=True).replace("</", "<\\/")
    files["search-index.js"] = f"window.SEARCH_INDEX = {index};\n"
    return files
