"""Semantic checks: what no schema can say.

Duplicate ids, references that must resolve in the right kind, roll tables that must cover their dice
exactly once, formulas over declared attributes without cycles, tags that requirements select on.
Produces the resolved documents: every reference rewritten to the id it names.
"""

from __future__ import annotations

import keyword
import sys
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..diagnostics import Diagnostic, did_you_mean, error, warning
from ..formulas import FUNCTIONS, calls, lookups, nodes, variables
from ..lower import Entity, JsonPath, walk_requirement
from ..model import Position
from ..names import slug
from .paths import check_paths


@dataclass(frozen=True, slots=True)
class Resolved:
    """One ruleset after the checks: documents by kind, then by id, both sorted."""

    documents: dict[str, dict[str, dict[str, Any]]]


class _Index:
    """Entities of one kind, findable by id or by the slug of their display name."""

    def __init__(self, entities: Sequence[Entity]) -> None:
        self.by_id = {e.id: e for e in entities}
        self.by_name: dict[str, list[str]] = defaultdict(list)
        for e in entities:
            for name in (e.name, *e.doc.get("aliases", ())):
                self.by_name[slug(name)].append(e.id)

    def find(self, text: str) -> list[str]:
        key = slug(text)
        if key in self.by_id:
            return [key]
        return sorted(set(self.by_name.get(key, [])))

    def candidates(self) -> list[str]:
        """What to suggest: display names, and ids where they are not just the slug of the name."""
        return sorted({e.name for e in self.by_id.values()} | {i for i, e in self.by_id.items() if i != slug(e.name)})


def _copy(value: Any) -> Any:
    """A copy of a JSON-like document (dicts, lists, scalars): what deepcopy does, several times faster."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _set_at(doc: dict[str, Any], path: JsonPath, value: str) -> None:
    target: Any = doc
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value


def check_ruleset(
    ruleset_id: str, manifest_pos: Position, entities: Sequence[Entity]
) -> tuple[Resolved, list[Diagnostic]]:
    diagnostics: list[Diagnostic] = []
    diagnostics += _check_package_name(ruleset_id, manifest_pos)
    by_kind: dict[str, list[Entity]] = defaultdict(list)
    for entity in entities:
        by_kind[entity.kind].append(entity)

    unique: dict[str, list[Entity]] = {}
    for kind, group in by_kind.items():
        seen: dict[str, Entity] = {}
        for entity in group:
            if entity.id in seen:
                first = seen[entity.id].pos
                diagnostics.append(
                    error(
                        "E301",
                        f"{kind} '{entity.id}' is defined twice (first at {first.file}:{first.line})",
                        entity.position(("id",)),
                        'give one of them an explicit id: KIND some_id "Name" { ... }',
                    )
                )
            else:
                seen[entity.id] = entity
        unique[kind] = list(seen.values())
    indexes = {kind: _Index(group) for kind, group in unique.items()}

    documents: dict[str, dict[str, dict[str, Any]]] = {}
    for kind, group in unique.items():
        for entity in group:
            doc = _copy(entity.doc)
            for ref in entity.references:
                index = indexes.get(ref.kind) or _Index(())
                found = index.find(ref.text)
                if len(found) == 1:
                    _set_at(doc, ref.path, found[0])
                elif found:
                    diagnostics.append(
                        error(
                            "E302",
                            f"'{ref.text}' could mean several {ref.kind}s: {', '.join(found)}",
                            ref.pos,
                            "write the id of the one you mean",
                        )
                    )
                else:
                    candidates = index.candidates() + (sorted(FUNCTIONS) if ref.kind == "formula" else [])
                    what = "function or formula" if ref.kind == "formula" else ref.kind
                    diagnostics.append(
                        error("E303", f"no {what} named '{ref.text}'", ref.pos, did_you_mean(ref.text, candidates))
                    )
            documents.setdefault(kind, {})[entity.id] = doc

    for entity in unique.get("table", ()):
        diagnostics += _check_table(entity, documents["table"][entity.id])
    diagnostics += _check_formulas(unique.get("attribute", ()), documents.get("attribute", {}))
    diagnostics += _check_named_formulas(
        unique.get("formula", ()),
        documents.get("formula", {}),
        documents.get("attribute", {}),
        documents.get("table", {}),
    )
    diagnostics += _check_tags(unique.get("lifepath", ()), documents.get("lifepath", {}))
    diagnostics += _check_lifepaths(unique.get("lifepath", ()), documents.get("lifepath", {}))
    diagnostics += check_paths(
        list(unique.get("lifepath", ())),
        documents.get("lifepath", {}),
        documents.get("setting", {}),
        documents.get("trait", {}),
    )
    ordered = {kind: dict(sorted(docs.items())) for kind, docs in sorted(documents.items())}
    return Resolved(ordered), diagnostics


def _check_package_name(ruleset_id: str, pos: Position) -> list[Diagnostic]:
    if keyword.iskeyword(ruleset_id) or ruleset_id in sys.stdlib_module_names or ruleset_id in ("site", "rulesdsl"):
        return [
            error(
                "E304",
                f"the ruleset id '{ruleset_id}' cannot be a Python package name",
                pos,
                f"choose another id, e.g. '{ruleset_id}_rules'",
            )
        ]
    return []


# ---- tables


def range_text(key: Mapping[str, Any]) -> str:
    if "name" in key:
        return str(key["name"])
    low, high = key["min"], key["max"]
    if low is None:
        return f"<={high}"
    if high is None:
        return f"{low}+"
    return str(low) if low == high else f"{low}-{high}"


def dice_outcomes(dice: Mapping[str, Any]) -> tuple[int, int]:
    low = sum(t["count"] for t in dice["terms"]) + dice["modifier"]
    high = sum(t["count"] * t["sides"] for t in dice["terms"]) + dice["modifier"]
    return low, high


def _runs(numbers: Sequence[int]) -> Iterator[str]:
    """[1, 2, 3, 5] -> '1-3', '5' (the numbers come sorted)."""
    if not numbers:
        return
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        yield str(start) if start == prev else f"{start}-{prev}"
        if n is not None:
            start = prev = n


def _check_table(entity: Entity, doc: Mapping[str, Any]) -> list[Diagnostic]:
    """Rows are checked on their first key, among rows that share the other keys (`III, 2` and `IV, 2`)."""
    rows = doc.get("rows", [])
    roll: Any = doc.get("roll")
    if "rows" in entity.failed_fields or not isinstance(rows, list):
        return []
    diagnostics: list[Diagnostic] = []
    bounds = dice_outcomes(roll) if isinstance(roll, Mapping) and "terms" in roll else None
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, row in enumerate(rows):
        rest = tuple(range_text(k) for k in row["keys"][1:])
        groups.setdefault(rest, []).append(i)
    for indexes in groups.values():
        diagnostics += _check_rows(entity, rows, indexes, roll, bounds)
    return diagnostics


def _check_rows(
    entity: Entity, rows: list[Any], indexes: list[int], roll: Any, bounds: tuple[int, int] | None
) -> list[Diagnostic]:
    diagnostics: list[Diagnostic] = []
    names: dict[str, int] = {}
    numeric: list[tuple[int, int, int]] = []  # low, high, row index
    for i in indexes:
        key = rows[i]["keys"][0]
        pos = entity.position(("rows", i, "keys", 0))
        if "name" in key:
            if bounds is not None:
                diagnostics.append(
                    error(
                        "E311",
                        f"row '{key['name']}' has a name, but the table is rolled on {roll['text']}",
                        pos,
                        "rolled tables are keyed by numbers and ranges",
                    )
                )
            elif key["name"] in names:
                diagnostics.append(error("E312", f"two rows are keyed '{_row_text(rows[i])}'", pos))
            names[key["name"]] = i
            continue
        low = key["min"] if key["min"] is not None else (bounds[0] if bounds else None)
        high = key["max"] if key["max"] is not None else (bounds[1] if bounds else None)
        if bounds is not None:
            if (high is not None and high < bounds[0]) or (low is not None and low > bounds[1]):
                diagnostics.append(
                    error(
                        "E313",
                        f"row {range_text(key)} can never come up on {roll['text']} ({bounds[0]}-{bounds[1]})",
                        pos,
                    )
                )
                continue
            beyond = [n for n in (key["min"], key["max"]) if n is not None and not bounds[0] <= n <= bounds[1]]
            if beyond:
                diagnostics.append(
                    error(
                        "E313",
                        f"row {range_text(key)} reaches {beyond[0]}, beyond what {roll['text']} rolls "
                        f"({bounds[0]}-{bounds[1]})",
                        pos,
                    )
                )
        numeric.append((low if low is not None else -(10**9), high if high is not None else 10**9, i))
    for a, (lo1, hi1, i1) in enumerate(numeric):
        for lo2, hi2, i2 in numeric[a + 1 :]:
            lo, hi = max(lo1, lo2), min(hi1, hi2)
            if lo <= hi:
                shared = str(lo) if lo == hi else f"{lo}-{hi}"
                diagnostics.append(
                    error(
                        "E314",
                        f"rows {_row_text(rows[i1])} and {_row_text(rows[i2])} overlap on {shared}",
                        entity.position(("rows", i2, "keys", 0)),
                    )
                )
    if bounds is not None and numeric and not names:
        covered: set[int] = set()
        for lo, hi, _ in numeric:
            covered.update(range(max(lo, bounds[0]), min(hi, bounds[1]) + 1))
        missing = [n for n in range(bounds[0], bounds[1] + 1) if n not in covered]
        if missing:
            diagnostics.append(
                error(
                    "E315",
                    f"no row for {', '.join(_runs(missing))} ({roll['text']} rolls {bounds[0]}-{bounds[1]})",
                    entity.position(("roll",)),
                    "add rows so that every result of the dice has exactly one row",
                )
            )
    return diagnostics


def _row_text(row: Mapping[str, Any]) -> str:
    return ", ".join(range_text(k) for k in row["keys"])


# ---- formulas


def _check_formulas(entities: Sequence[Entity], docs: dict[str, dict[str, Any]]) -> list[Diagnostic]:
    diagnostics: list[Diagnostic] = []
    by_abbr = {doc["abbr"]: attr_id for attr_id, doc in docs.items() if "abbr" in doc}
    names = sorted({*by_abbr, *docs})
    uses: dict[str, list[str]] = {}
    for entity in entities:
        doc = docs.get(entity.id)
        if doc is None or "formula" not in doc:
            continue
        used: list[str] = []
        for var in dict.fromkeys(variables(doc["formula"]["expr"])):
            target = by_abbr.get(var) or (var if var in docs else None)
            if target is None:
                diagnostics.append(
                    error(
                        "E321",
                        f"formula names '{var}', which is no attribute",
                        entity.position(("formula", "var", var)),
                        did_you_mean(var, names),
                    )
                )
            else:
                used.append(target)
        _rename_vars(doc["formula"]["expr"], by_abbr)
        uses[entity.id] = used
    diagnostics += _cycles(entities, uses)
    return diagnostics


def _check_named_formulas(
    entities: Sequence[Entity],
    docs: dict[str, dict[str, Any]],
    attributes: Mapping[str, Any],
    tables: Mapping[str, Any],
) -> list[Diagnostic]:
    """A formula names its parameters or attributes, and looks up tables with one key and one column."""
    diagnostics: list[Diagnostic] = []
    by_abbr = {doc["abbr"]: attr_id for attr_id, doc in attributes.items() if "abbr" in doc}
    for entity in entities:
        doc = docs.get(entity.id)
        if doc is None or "formula" not in doc:
            continue
        params = doc.get("params", [])
        if entity.id in attributes and "formula" in attributes[entity.id]:
            diagnostics.append(
                error(
                    "E323",
                    f"the formula '{entity.id}' has the name of a derived attribute",
                    entity.position(("id",)),
                    "give one of them another id",
                )
            )
        known = sorted({*params, *by_abbr, *attributes})
        for var in dict.fromkeys(variables(doc["formula"]["expr"])):
            if var not in params and var not in by_abbr and var not in attributes:
                diagnostics.append(
                    error(
                        "E321",
                        f"formula names '{var}', which is no parameter or attribute",
                        entity.position(("formula", "var", var)),
                        did_you_mean(var, known) or "list it in params: ...",
                    )
                )
        for table_id in lookups(doc["formula"]["expr"]):
            table = tables.get(table_id)
            if table is not None and (len(table.get("columns", [])) != 1 or len(table.get("keys", [None])) != 1):
                diagnostics.append(
                    error(
                        "E324",
                        f"formulas look up tables with one key and one column; '{table_id}' has "
                        f"{len(table.get('keys', [None]))} key(s) and {len(table.get('columns', []))} column(s)",
                        entity.position(("formula",)),
                    )
                )
        _rename_vars(doc["formula"]["expr"], {a: i for a, i in by_abbr.items() if a not in params})
        for callee, count in calls(doc["formula"]["expr"]):
            called = docs.get(callee)
            if called is None:
                continue
            wanted = len(called.get("params", []))
            own = set(called.get("params", []))
            extra = sorted(set(variables(called["formula"]["expr"])) - own)
            if extra:
                diagnostics.append(
                    error(
                        "E326",
                        f"{callee}() names {', '.join(extra)} besides its params, so it cannot be called",
                        entity.position(("formula",)),
                        f"add them to the params of {callee}",
                    )
                )
            elif count != wanted:
                diagnostics.append(
                    error(
                        "E325",
                        f"{callee}() takes {wanted} argument{'s' * (wanted != 1)} ({', '.join(sorted(own))}), "
                        f"not {count}",
                        entity.position(("formula",)),
                    )
                )
    uses = {
        formula_id: [c for c, _ in calls(doc["formula"]["expr"])]
        for formula_id, doc in docs.items()
        if "formula" in doc
    }
    diagnostics += _cycles(entities, uses)
    return diagnostics


def _cycles(entities: Sequence[Entity], uses: Mapping[str, list[str]]) -> list[Diagnostic]:
    """Each circle of formulas using one another, once, at the first formula in it (by id)."""
    diagnostics = []
    reported: set[frozenset[str]] = set()
    for start in sorted(uses):
        cycle = _find_cycle(start, uses)
        if cycle and frozenset(cycle) not in reported:
            reported.add(frozenset(cycle))
            entity = next(e for e in entities if e.id == start)
            message = "formulas go round in a circle: " + " -> ".join([*cycle, cycle[0]])
            diagnostics.append(error("E322", message, entity.position(("formula",))))
    return diagnostics


def _rename_vars(expr: Any, by_abbr: Mapping[str, str]) -> None:
    """Formulas name attributes by abbreviation or id; resolved documents always use the id."""
    for node in nodes(expr):
        if "var" in node:
            node["var"] = by_abbr.get(node["var"], node["var"])


def _find_cycle(start: str, uses: Mapping[str, list[str]]) -> list[str] | None:
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        if node in path:
            return path[path.index(node) :]
        if node not in uses:
            return None
        path.append(node)
        for nxt in uses[node]:
            found = visit(nxt)
            if found:
                return found
        path.pop()
        return None

    cycle = visit(start)
    return cycle if cycle and cycle[0] == start else None


# ---- lifepaths


def _requirements(doc: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for field in ("requires", "restrictions"):
        if isinstance(doc.get(field), dict):
            yield field, doc[field]


def _check_tags(entities: Sequence[Entity], docs: dict[str, dict[str, Any]]) -> list[Diagnostic]:
    tags = {tag for doc in docs.values() for tag in doc.get("tags", ())}
    diagnostics = []
    for entity in entities:
        for field, req in _requirements(docs.get(entity.id, {})):
            for node in walk_requirement(req):
                tag = node.get("of", {}).get("tag")
                if tag is not None and tag not in tags:
                    diagnostics.append(
                        error(
                            "E331",
                            f"no lifepath is tagged '{tag}'",
                            entity.position((field,)),
                            did_you_mean(tag, tags) or "tag lifepaths with 'tags: ...'",
                        )
                    )
    return diagnostics


def _check_lifepaths(entities: Sequence[Entity], docs: dict[str, dict[str, Any]]) -> list[Diagnostic]:
    diagnostics = []
    for entity in entities:
        doc = docs.get(entity.id, {})
        if doc.get("born") and "requires" in doc:
            diagnostics.append(
                warning(
                    "W332",
                    "a born lifepath is always first, so its requirement can never hold",
                    entity.position(("requires",)),
                )
            )
    return diagnostics
