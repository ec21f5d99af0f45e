"""Lifepath graph checks: every lifepath can be taken on some path of its stock.

A path starts at a born lifepath and moves through leads (or stays in its setting). A lifepath can be
taken when its setting is reached by lifepaths that can themselves be taken, and its requirements could
hold given those. That is a least fixpoint: start from the born lifepaths and add whatever becomes
takeable, re-examining a lifepath only when something it depends on was added. Requirements are read
optimistically (anything that could have happened earlier did), which is monotone, so the fixpoint is
exact for that reading: lifepaths that can only follow each other are never added.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Mapping
from typing import assert_never

from rulesdsl.compile import ir
from rulesdsl.diagnostics import Diagnostic, warning

Entities = Mapping[str, Mapping[str, ir.Entity]]


def _ref(entity: ir.Entity, name: str) -> str | None:
    value = entity.fields.get(name)
    return value.id if isinstance(value, ir.Ref) else None


def _refs(entity: ir.Entity, name: str) -> list[str]:
    value = entity.fields.get(name, ())
    return [r.id for r in value if isinstance(r, ir.Ref) and r.id] if isinstance(value, tuple) else []


def _words(entity: ir.Entity, name: str) -> list[str]:
    value = entity.fields.get(name, ())
    return [w for w in value if isinstance(w, str)] if isinstance(value, tuple) else []


def _skills(entity: ir.Entity) -> list[str]:
    value = entity.fields.get("skills")
    if not isinstance(value, ir.Choices):
        return []
    return [r.id for options in value.options for r in options if r.id]


def _requirements(entity: ir.Entity) -> list[tuple[str, ir.Requirement]]:
    found = []
    for name in ("requires", "restrictions"):
        value = entity.fields.get(name)
        if isinstance(value, ir.REQUIREMENT_TYPES):
            found.append((name, value))
    return found


class _Taken:
    """The lifepaths of one stock found takeable so far, and what they teach and carry."""

    def __init__(self, lifepaths: Mapping[str, ir.Entity], traits: Mapping[str, ir.Entity]) -> None:
        self.lifepaths = lifepaths
        self.traits = traits
        self.ids: set[str] = set()
        self.skills: set[str] = set()
        self.settings: set[str] = set()
        self.tags: set[str] = set()

    def add(self, entity: ir.Entity) -> None:
        self.ids.add(entity.id)
        self.skills.update(_skills(entity))
        setting = _ref(entity, "setting")
        if setting:
            self.settings.add(setting)
        self.tags.update(_words(entity, "tags"))

    def possible(self, req: ir.Requirement) -> bool:
        match req:
            case ir.AnyOf(items):
                return any(self.possible(r) for r in items)
            case ir.AllOf(items):
                return all(self.possible(r) for r in items)
            case ir.NotReq(item):
                return not self.certain(item)
            case ir.TookLifepath(ref) | ir.Previous(ref):
                return ref.id in self.ids
            case ir.HasSkill(ref):
                return ref.id in self.skills
            case ir.HasTrait(ref):
                return ref.id in self.traits
            case ir.CountOf(_, setting, tag, listed):
                return any(
                    (not listed or lp_id in {r.id for r in listed})
                    and (setting is None or _ref(self.lifepaths[lp_id], "setting") == setting.id)
                    and (tag is None or tag.text in _words(self.lifepaths[lp_id], "tags"))
                    for lp_id in self.ids
                )
            case ir.Condition("position", op, value):
                return isinstance(value, int) and _some_position(op, value)
            case ir.ConditionIn("position", _, high):
                return high is None or high >= 2
            case ir.Condition() | ir.ConditionIn() | ir.GmPermission() | ir.Holds():
                # ages, gender, counts of lifepaths, the GM's say-so, what a character holds of
                # other kinds: some character can
                return True
            case _:
                assert_never(req)

    def certain(self, req: ir.Requirement) -> bool:
        match req:
            case ir.AnyOf(items):
                return any(self.certain(r) for r in items)
            case ir.AllOf(items):
                return all(self.certain(r) for r in items)
            case ir.NotReq(item):
                return not self.possible(item)
            case _:
                return False


def _some_position(op: str, value: int) -> bool:
    """Is some position from 2 up (only born lifepaths come first) allowed by this condition?"""
    return {"=": value >= 2, "!=": True, "<": value > 2, "<=": value >= 2, ">": True, ">=": True}[op]


def _triggers(req: ir.Requirement) -> Iterable[str]:
    """What a requirement depends on: lifepaths, skills, settings and tags (prefixed by what they are)."""
    for node in ir.walk(req):
        match node:
            case ir.TookLifepath(ref) | ir.Previous(ref):
                yield f"lifepath:{ref.id}"
            case ir.HasSkill(ref):
                yield f"skill:{ref.id}"
            case ir.CountOf(_, setting, tag, listed):
                yield "any"  # counts depend on whatever is added
                for ref in listed:
                    yield f"lifepath:{ref.id}"
                if setting is not None:
                    yield f"setting:{setting.id}"
                if tag is not None:
                    yield f"tag:{tag.text}"


def check_paths(entities: Entities) -> list[Diagnostic]:
    lifepaths = entities.get("lifepath", {})
    settings = entities.get("setting", {})
    traits = entities.get("trait", {})

    def stock_of(entity: ir.Entity) -> str | None:
        setting = settings.get(_ref(entity, "setting") or "")
        return _ref(setting, "stock") if setting is not None else None

    by_stock: dict[str, dict[str, ir.Entity]] = defaultdict(dict)
    for lp_id, entity in lifepaths.items():
        stock = stock_of(entity)
        if stock is not None:
            by_stock[stock][lp_id] = entity
    diagnostics: list[Diagnostic] = []
    for _, members in sorted(by_stock.items()):
        born = [e for e in members.values() if e.fields.get("born") is True]
        if not born:
            continue  # a stock without born lifepaths is still being written: nothing to judge paths by
        taken = _Taken(lifepaths, traits)
        reached: set[str] = set()
        in_setting: dict[str, list[str]] = defaultdict(list)
        watchers: dict[str, list[str]] = defaultdict(list)
        for lp_id, entity in members.items():
            in_setting[_ref(entity, "setting") or ""].append(lp_id)
            for _, req in _requirements(entity):
                for trigger in dict.fromkeys(_triggers(req)):
                    watchers[trigger].append(lp_id)
        queue = deque(e.id for e in born)
        while queue:
            lp_id = queue.popleft()
            entity = members[lp_id]
            if lp_id in taken.ids:
                continue
            born_here = entity.fields.get("born") is True
            if not born_here and (
                _ref(entity, "setting") not in reached or not all(taken.possible(r) for _, r in _requirements(entity))
            ):
                continue
            taken.add(entity)
            events = [f"lifepath:{lp_id}", *(f"skill:{s}" for s in _skills(entity)), "any"]
            events += [f"setting:{_ref(entity, 'setting')}", *(f"tag:{w}" for w in _words(entity, "tags"))]
            for setting in [_ref(entity, "setting"), *_refs(entity, "leads")]:
                if setting and setting not in reached:
                    reached.add(setting)
                    queue.extend(in_setting.get(setting, ()))
            for event in events:
                queue.extend(watchers.get(event, ()))
        for lp_id, entity in members.items():
            if lp_id in taken.ids:
                continue
            setting = _ref(entity, "setting")
            if setting not in reached:
                diagnostics.append(
                    warning(
                        "W341",
                        f"no born lifepath leads to {entity.name}: nothing that can be taken leads to its setting "
                        f"'{setting}'",
                        entity.position("setting"),
                        "add the setting to some lifepath's leads",
                        about=(setting,) if setting else (),
                    )
                )
                continue
            for field, req in _requirements(entity):
                if not taken.possible(req):
                    diagnostics.append(
                        warning(
                            "W342",
                            f"the {field} of {entity.name} can never be met on any path of its stock",
                            entity.position(field),
                            "it names lifepaths, skills or settings that no path of this stock can reach"
                            " (or lifepaths that can only follow each other)",
                        )
                    )
    return diagnostics
