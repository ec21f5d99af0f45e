"""Lifepath graph checks: every lifepath can be reached through leads, every requirement can be met.

Both are judged per stock: a path starts at a born lifepath and only ever moves through leads, so a
lifepath is reachable when some born lifepath of its stock reaches its setting. A requirement can be
met when an optimistic reading of it (anything that could have happened earlier did) holds; what
fails even then can never hold, and is reported with the part that fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..diagnostics import Diagnostic, warning
from ..lower import Entity

Docs = Mapping[str, Mapping[str, Any]]


def _stock_of(lifepath: Mapping[str, Any], settings: Docs) -> str | None:
    setting = settings.get(lifepath.get("setting", ""))
    return setting.get("stock") if setting else None


def reachable_settings(lifepaths: Docs, settings: Docs) -> dict[str, set[str]]:
    """Per stock: the settings some path from one of its born lifepaths can enter."""
    reached: dict[str, set[str]] = {}
    for doc in lifepaths.values():
        stock = _stock_of(doc, settings)
        if doc.get("born") and stock is not None:
            reached.setdefault(stock, set()).add(doc["setting"])
    changed = True
    while changed:
        changed = False
        for doc in lifepaths.values():
            stock = _stock_of(doc, settings)
            if stock is None or doc.get("setting") not in reached.get(stock, set()):
                continue
            new = set(doc.get("leads", [])) - reached[stock]
            if new:
                reached[stock] |= new
                changed = True
    return reached


class _Optimist:
    """Could a requirement hold on some path of this stock (`possible`), must it hold (`certain`)?"""

    def __init__(self, stock: str, lifepaths: Docs, settings: Docs, reached: set[str], traits: Docs) -> None:
        self.available = {
            lp_id: doc
            for lp_id, doc in lifepaths.items()
            if doc.get("setting") in reached and _stock_of(doc, settings) == stock
        }
        self.traits = traits
        self.skills = {
            skill
            for doc in self.available.values()
            for item in doc.get("skills", {}).get("items", [])
            for skill in (item["one_of"] if isinstance(item, dict) else [item])
        }

    def possible(self, req: Mapping[str, Any]) -> bool:
        if "any" in req:
            return any(self.possible(r) for r in req["any"])
        if "all" in req:
            return all(self.possible(r) for r in req["all"])
        if "not" in req:
            return not self.certain(req["not"])
        if "lifepath" in req or "previous" in req:
            return (req.get("lifepath") or req.get("previous")) in self.available
        if "skill" in req:
            return req["skill"] in self.skills
        if "trait" in req:
            return req["trait"] in self.traits
        if "count" in req:
            of = req["of"]
            return any(
                (not of.get("lifepaths") or lp_id in of["lifepaths"])
                and (of.get("setting") is None or doc.get("setting") == of["setting"])
                and (of.get("tag") is None or of["tag"] in doc.get("tags", []))
                for lp_id, doc in self.available.items()
            )
        if req.get("condition") == "position":
            return _some_position(req)
        return True  # ages, gender, counts of lifepaths, the GM's permission: some character can

    def certain(self, req: Mapping[str, Any]) -> bool:
        if "any" in req:
            return any(self.certain(r) for r in req["any"])
        if "all" in req:
            return all(self.certain(r) for r in req["all"])
        if "not" in req:
            return not self.possible(req["not"])
        return False


def _some_position(req: Mapping[str, Any]) -> bool:
    """Is some position from 2 up (only born lifepaths come first) allowed by this condition?"""
    if "in" in req:
        high = req["in"]["max"]
        return high is None or high >= 2
    value: int = req["value"]
    op: str = req["op"]
    return {"=": value >= 2, "!=": True, "<": value > 2, "<=": value >= 2, ">": True, ">=": True}[op]


def check_paths(entities: list[Entity], lifepaths: Docs, settings: Docs, traits: Docs) -> list[Diagnostic]:
    diagnostics: list[Diagnostic] = []
    reached = reachable_settings(lifepaths, settings)
    optimists: dict[str, _Optimist] = {}
    for entity in entities:
        doc = lifepaths.get(entity.id)
        if doc is None:
            continue
        stock = _stock_of(doc, settings)
        if stock is None:
            continue
        if stock not in reached:
            continue  # a stock without born lifepaths is still being written: nothing to judge paths by
        if not doc.get("born") and doc.get("setting") not in reached[stock]:
            diagnostics.append(
                warning(
                    "W341",
                    f"no born lifepath leads to {entity.name}: nothing leads to its setting '{doc['setting']}'",
                    entity.position(("setting",)),
                    "add the setting to some lifepath's leads",
                )
            )
            continue
        optimist = optimists.get(stock)
        if optimist is None:
            optimist = optimists[stock] = _Optimist(stock, lifepaths, settings, reached[stock], traits)
        for field in ("requires", "restrictions"):
            req = doc.get(field)
            if isinstance(req, dict) and not optimist.possible(req):
                diagnostics.append(
                    warning(
                        "W342",
                        f"the {field} of {entity.name} can never be met on any path of its stock",
                        entity.position((field,)),
                        "it names lifepaths, skills or settings that no path of this stock can reach",
                    )
                )
    return diagnostics
