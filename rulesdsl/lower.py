"""Lowering: every parsed block becomes a plain JSON-compatible document.

How a field's written value is read is decided by the `x-value` annotation on that field in the kind's
schema (see kinds.py). References are written into the document as the slug of what was written and
recorded on the side, so that the semantic checks can resolve them (and rewrite display names to ids)
without walking the documents again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from . import model as m
from .diagnostics import Diagnostic, did_you_mean, error
from .formulas import FUNCTIONS, expr_text
from .kinds import Kind
from .names import slug

JsonPath = tuple[str | int, ...]

CONDITIONS = ("age", "age_at_entry", "position", "lifepaths", "times_taken", "gender")
COLUMN_TYPES = ("text", "int", "multiplier", "dice", "bool", "formula")
_BOOLEANS = {"yes": True, "true": True, "no": False, "false": False}
_YEARS = {"yr", "yrs", "year", "years"}
_POINTS = {"pt", "pts"}


@dataclass(frozen=True, slots=True)
class Reference:
    path: JsonPath  # where the reference sits in the document
    kind: str  # the kind it must name
    text: str  # as written
    pos: m.Position


@dataclass(frozen=True, slots=True)
class Entity:
    kind: str
    id: str
    name: str
    doc: dict[str, Any]
    positions: dict[JsonPath, m.Position]
    references: tuple[Reference, ...]
    failed_fields: frozenset[str]  # fields whose value could not be read (already reported)
    pos: m.Position

    def position(self, path: JsonPath) -> m.Position:
        """The source position of the closest enclosing part of the document that has one."""
        for end in range(len(path), 0, -1):
            found = self.positions.get(path[:end])
            if found is not None:
                return found
        return self.pos


class LoweringError(Exception):
    def __init__(self, message: str, pos: m.Position, hint: str | None = None) -> None:
        super().__init__(message)
        self.diagnostic = error("E201", message, pos, hint)


def describe(value: m.Value) -> str:
    """What a value looks like, in words, for messages."""
    words = {
        m.Integer: "a number",
        m.Decimal: "a decimal number",
        m.String: "a quoted string",
        m.Name: "a name",
        m.Dice: "dice",
        m.Multiplier: "a multiplier",
        m.AtLeast: "an open range",
        m.OpenRange: "an open range",
        m.ClosedRange: "a range",
        m.Quantity: "a quantity",
        m.Points: "a points list",
        m.ValueList: "a list",
        m.Binary: "an arithmetic expression",
        m.Negative: "a negative expression",
        m.Call: "a function call",
        m.Subscript: "a lookup",
        m.Caret: "a caret number",
        m.Comparison: "a comparison",
        m.Membership: "a range test",
        m.AnyOf: "an 'or' expression",
        m.AllOf: "an 'and' expression",
        m.Not: "a 'not' expression",
        m.HasTrait: "a trait condition",
        m.HasSkill: "a skill condition",
        m.CountOf: "a count condition",
    }
    return words.get(type(value), "a value")


def _fail(expected: str, value: m.Value, hint: str | None = None) -> LoweringError:
    return LoweringError(f"expected {expected}, got {describe(value)}", value.pos, hint)


def items_of(value: m.Value) -> tuple[m.Value, ...]:
    return value.items if isinstance(value, m.ValueList) else (value,)


@dataclass
class _Lowerer:
    """Reads one block; collects positions and references as it goes."""

    kind: str
    positions: dict[JsonPath, m.Position] = field(default_factory=dict)
    references: list[Reference] = field(default_factory=list)

    def at(self, path: JsonPath, value: m.Value) -> None:
        self.positions[path] = value.pos

    def ref(self, path: JsonPath, kind: str, value: m.Value) -> str:
        if isinstance(value, m.Name):
            text = value.text
        elif isinstance(value, m.String):
            text = value.value
        else:
            raise _fail(f"the name of a {kind}", value)
        self.references.append(Reference(path, kind, text, value.pos))
        self.at(path, value)
        return slug(text)

    # ---- scalar readers
    def text(self, path: JsonPath, value: m.Value) -> str:
        if isinstance(value, m.String):
            return value.value
        if isinstance(value, m.Name):
            return value.text
        raise _fail("text", value, 'quote it: "..."')

    def word(self, path: JsonPath, value: m.Value) -> str:
        if isinstance(value, m.Name | m.String):
            return self.text(path, value)
        raise _fail("a name", value)

    def words(self, path: JsonPath, value: m.Value) -> list[str]:
        result = []
        for i, item in enumerate(items_of(value)):
            self.at((*path, i), item)
            result.append(slug(self.word((*path, i), item)))
        return result

    def texts(self, path: JsonPath, value: m.Value) -> list[str]:
        result = []
        for i, item in enumerate(items_of(value)):
            self.at((*path, i), item)
            result.append(self.text((*path, i), item))
        return result

    def lower_words(self, path: JsonPath, value: m.Value) -> list[str]:
        return self.words(path, value)

    def integer(self, path: JsonPath, value: m.Value) -> int:
        if isinstance(value, m.Integer):
            return value.value
        raise _fail("a whole number", value)

    def boolean(self, path: JsonPath, value: m.Value) -> bool:
        if isinstance(value, m.Name) and value.text.lower() in _BOOLEANS:
            return _BOOLEANS[value.text.lower()]
        raise _fail("yes or no", value)

    def tools(self, path: JsonPath, value: m.Value) -> str:
        if isinstance(value, m.Name):
            word = value.text.lower()
            return {"true": "yes", "false": "no"}.get(word, word)
        raise _fail("yes, no, expendable or traveling", value)

    def years(self, path: JsonPath, value: m.Value) -> int:
        if isinstance(value, m.Quantity) and value.unit.lower() in _YEARS and not value.signed:
            return value.amount
        if isinstance(value, m.Integer):
            return value.value
        raise _fail("a number of years (like 8 yrs)", value)

    def pts(self, path: JsonPath, value: m.Value) -> int:
        if isinstance(value, m.Quantity) and value.unit.lower() in _POINTS and not value.signed:
            return value.amount
        if isinstance(value, m.Integer):
            return value.value
        raise _fail("points (like 2 pts)", value)

    def stat_bonus(self, path: JsonPath, value: m.Value) -> dict[str, int]:
        bonus = {"mental": 0, "physical": 0, "either": 0}
        slots = {"m": "mental", "p": "physical", "m/p": "either", "p/m": "either"}
        for item in items_of(value):
            if isinstance(item, m.Integer) and item.value == 0:
                continue
            if not isinstance(item, m.Quantity) or item.unit.lower() not in slots:
                raise _fail("a stat bonus (+1 M, +1 P or +1 M/P)", item)
            bonus[slots[item.unit.lower()]] += item.amount
        return bonus

    def actions(self, path: JsonPath, value: m.Value) -> dict[str, Any]:
        if isinstance(value, m.Integer):
            return {"count": value.value, "per_obstacle": False}
        if isinstance(value, m.Multiplier) and value.denominator == 1:
            return {"count": value.numerator, "per_obstacle": True}
        raise _fail("a number of actions (10) or a multiple of the obstacle (x3)", value)

    # ---- structured readers
    def reference(self, kind: str) -> Callable[[JsonPath, m.Value], str]:
        return lambda path, value: self.ref(path, kind, value)

    def references_to(self, kind: str) -> Callable[[JsonPath, m.Value], list[str]]:
        def read(path: JsonPath, value: m.Value) -> list[str]:
            return [self.ref((*path, i), kind, item) for i, item in enumerate(items_of(value))]

        return read

    def points_of(self, kind: str) -> Callable[[JsonPath, m.Value], dict[str, Any]]:
        def read(path: JsonPath, value: m.Value) -> dict[str, Any]:
            if isinstance(value, m.Quantity | m.Integer):
                return {"points": self.pts(path, value), "items": []}
            if not isinstance(value, m.Points):
                raise _fail(f"points and {kind}s (like 2 pts: A, B)", value)
            items: list[Any] = []
            for i, item in enumerate(value.items):
                where = (*path, "items", i)
                if isinstance(item, m.AnyOf):
                    choices = [self.ref((*where, "one_of", j), kind, alt) for j, alt in enumerate(item.items)]
                    self.at(where, item)
                    items.append({"one_of": choices})
                else:
                    items.append(self.ref(where, kind, item))
            return {"points": value.amount, "items": items}

        return read

    def range(self, path: JsonPath, value: m.Value) -> dict[str, int | None]:
        return range_of(value, allow_dash=False)

    def dice(self, path: JsonPath, value: m.Value) -> dict[str, Any]:
        return dice_of(value)

    def formula(self, path: JsonPath, value: m.Value) -> dict[str, Any]:
        expr = self.expr(value, (*path, "expr"))
        for name in _names_in(value):  # so that a wrong name is reported where it is written
            self.positions.setdefault((*path, "var", name.text), name.pos)
        return {"text": expr_text(value), "expr": expr}

    def expr(self, value: m.Value, path: JsonPath = ()) -> Any:
        """A formula tree; `path` is where it sits in the document, for the tables it looks up."""
        match value:
            case m.Integer(number):
                return number
            case m.Name(text):
                return {"var": text}
            case m.String(text):
                return {"text": text}
            case m.Caret(number):
                return {"caret": number}
            case m.Multiplier(num, den):
                return {"ratio": {"num": num, "den": den}}
            case m.Decimal(text):
                ratio = Fraction(text)
                return {"ratio": {"num": ratio.numerator, "den": ratio.denominator}}
            case m.Dice():
                return {"dice": dice_of(value)}
            case m.Binary(op, left, right):
                return {"op": op, "args": [self.expr(left, (*path, "args", 0)), self.expr(right, (*path, "args", 1))]}
            case m.Negative(operand):
                return {"op": "neg", "args": [self.expr(operand, (*path, "args", 0))]}
            case m.Subscript(target, index):
                if not isinstance(target, m.Name):
                    raise _fail("a table name before '['", target)
                return {
                    "lookup": self.ref((*path, "lookup"), "table", target),
                    "index": self.expr(index, (*path, "index")),
                }
            case m.Call(function, args) if function not in FUNCTIONS:
                # another formula: resolved (and its arguments counted) by the semantic checks
                name = m.Name(function, value.pos)
                return {
                    "formula": self.ref((*path, "formula"), "formula", name),
                    "args": [self.expr(a, (*path, "args", i)) for i, a in enumerate(args)],
                }
            case m.Call(function, args):
                arity = FUNCTIONS[function]
                if arity is not None and len(args) != arity:
                    raise LoweringError(f"{function}() takes {arity} argument{'s' * (arity != 1)}", value.pos)
                if not args:
                    raise LoweringError(f"{function}() needs arguments", value.pos)
                return {"call": function, "args": [self.expr(a, (*path, "args", i)) for i, a in enumerate(args)]}
        raise _fail("a formula", value)

    def requirement(self, path: JsonPath, value: m.Value) -> dict[str, Any]:
        self.at(path, value)
        match value:
            case m.Name("gm_permission"):
                return {"gm_permission": True}
            case m.Name() | m.String():
                return {"lifepath": self.ref((*path, "lifepath"), "lifepath", value)}
            case m.AnyOf(items) | m.AllOf(items):
                key = "any" if isinstance(value, m.AnyOf) else "all"
                return {key: [self.requirement((*path, key, i), item) for i, item in enumerate(items)]}
            case m.Not(operand):
                return {"not": self.requirement((*path, "not"), operand)}
            case m.HasTrait(ref):
                return {"trait": self.ref((*path, "trait"), "trait", ref)}
            case m.HasSkill(ref):
                return {"skill": self.ref((*path, "skill"), "skill", ref)}
            case m.CountOf(count, selector):
                return {"count": count, "of": self.selector((*path, "of"), selector)}
            case m.Comparison(op, m.Name(subject), right):
                return self.condition(path, subject, value, op=op, right=right)
            case m.Membership(m.Name(subject), range_value):
                return self.condition(path, subject, value, within=range_value)
        raise _fail(
            "a requirement",
            value,
            "write lifepath names joined by 'and'/'or', or a condition like 'age > 50' (see the language reference)",
        )

    def condition(
        self,
        path: JsonPath,
        subject: str,
        value: m.Value,
        *,
        op: str = "=",
        right: m.Value | None = None,
        within: m.Value | None = None,
    ) -> dict[str, Any]:
        if subject == "previous" and right is not None and op == "=":
            return {"previous": self.ref((*path, "previous"), "lifepath", right)}
        if subject not in CONDITIONS:
            raise LoweringError(
                f"unknown condition '{subject}'",
                value.pos,
                did_you_mean(subject, (*CONDITIONS, "previous")) or "conditions: " + ", ".join(CONDITIONS),
            )
        if within is not None:
            return {"condition": subject, "in": range_of(within, allow_dash=False)}
        assert right is not None
        if subject == "gender":
            if op not in ("=", "!="):
                raise LoweringError("gender can only be compared with = or !=", value.pos)
            return {"condition": subject, "op": op, "value": slug(self.word(path, right))}
        return {"condition": subject, "op": op, "value": self.integer(path, right)}

    def selector(self, path: JsonPath, selector: m.SelectLifepaths | m.SelectListed) -> dict[str, Any]:
        if isinstance(selector, m.SelectListed):
            return {
                "lifepaths": [self.ref((*path, "lifepaths", i), "lifepath", r) for i, r in enumerate(selector.refs)]
            }
        result: dict[str, Any] = {}
        for flt in selector.filters:
            if isinstance(flt, m.InSetting):
                result["setting"] = self.ref((*path, "setting"), "setting", flt.ref)
            else:
                result["tag"] = slug(self.word((*path, "tag"), flt.ref))
                self.at((*path, "tag"), flt.ref)
        return result

    def columns(self, path: JsonPath, value: m.Value) -> list[dict[str, str]]:
        result = []
        for i, item in enumerate(items_of(value)):
            self.at((*path, i), item)
            if isinstance(item, m.Name):
                result.append({"name": slug(item.text), "type": "text"})
            elif isinstance(item, m.Call) and len(item.args) == 1 and isinstance(item.args[0], m.Name):
                column_type = item.args[0].text
                if column_type not in COLUMN_TYPES:
                    raise LoweringError(
                        f"unknown column type '{column_type}'",
                        item.args[0].pos,
                        did_you_mean(column_type, COLUMN_TYPES) or "types: " + ", ".join(COLUMN_TYPES),
                    )
                result.append({"name": slug(item.function), "type": column_type})
            else:
                raise _fail("a column (name or name(type))", item)
        return result

    def rows(
        self,
        rows: tuple[m.Row, ...],
        keys: list[dict[str, str]],
        columns: list[dict[str, str]],
        diagnostics: list[Diagnostic],
    ) -> list[dict[str, Any]]:
        result = []
        width = len(keys) or 1
        for i, row in enumerate(rows):
            path: JsonPath = ("rows", i)
            self.positions[path] = row.pos
            try:
                if len(row.keys) != width:
                    raise LoweringError(
                        f"this row has {len(row.keys)} key{'s' * (len(row.keys) != 1)}, the table has {width}",
                        row.pos,
                        "keys: " + ", ".join(k["name"] for k in keys)
                        if keys
                        else "declare them: keys: zone, level(int)",
                    )
                if columns and len(row.cells) != len(columns):
                    raise LoweringError(
                        f"this row has {len(row.cells)} cell{'s' * (len(row.cells) != 1)}, the table has "
                        f"{len(columns)} column{'s' * (len(columns) != 1)}",
                        row.pos,
                        "columns: " + ", ".join(c["name"] for c in columns),
                    )
                if max(depth(v) for v in (*row.keys, *row.cells)) > MAX_DEPTH:
                    raise LoweringError(f"this row nests more than {MAX_DEPTH} levels deep", row.pos)
                row_keys = []
                for j, key in enumerate(row.keys):
                    self.positions[(*path, "keys", j)] = key.pos
                    row_keys.append(self.key(key, keys[j]["type"] if keys else None))
                cells = []
                for j, cell in enumerate(row.cells):
                    self.positions[(*path, "cells", j)] = cell.pos
                    column_type = columns[j]["type"] if columns else "text"
                    cells.append(self.cell(cell, column_type, columns[j]["name"] if columns else str(j)))
                lowered: dict[str, Any] = {"keys": row_keys, "cells": cells}
                if row.source is not None:
                    lowered["source"] = row.source.value
                result.append(lowered)
            except LoweringError as exc:
                diagnostics.append(exc.diagnostic)
        return result

    def key(self, value: m.Value, key_type: str | None) -> dict[str, Any]:
        """A row key: a number or range, or a name; a declared key type says which."""
        if key_type == "text" or (key_type is None and isinstance(value, m.Name | m.String)):
            return {"name": self.text((), value)}
        return range_of(value, allow_dash=True)

    def cell(self, value: m.Value, column_type: str, column: str) -> Any:
        if isinstance(value, m.Name) and value.text == "unknown":
            return None  # the source does not give this cell: say so rather than invent it
        try:
            if column_type == "text":
                if isinstance(value, m.Integer):
                    return str(value.value)
                return self.text((), value)
            if column_type == "int":
                return self.integer((), value)
            if column_type == "multiplier":
                if isinstance(value, m.Multiplier):
                    return {"num": value.numerator, "den": value.denominator}
                raise _fail("a multiplier (like x2 or x1/2)", value)
            if column_type == "dice":
                return dice_of(value)
            if column_type == "formula":
                return {"text": expr_text(value), "expr": self.expr(value)}  # cells look nothing up
            return self.boolean((), value)
        except LoweringError as exc:
            raise LoweringError(
                f"column '{column}': {exc.diagnostic.message}", value.pos, exc.diagnostic.hint
            ) from None


def _names_in(value: m.Value) -> Iterator[m.Name]:
    match value:
        case m.Name():
            yield value
        case m.Binary(_, left, right):
            yield from _names_in(left)
            yield from _names_in(right)
        case m.Negative(operand):
            yield from _names_in(operand)
        case m.Subscript(_, index):
            yield from _names_in(index)
        case m.Call(_, args):
            for arg in args:
                yield from _names_in(arg)


def range_of(value: m.Value, *, allow_dash: bool) -> dict[str, int | None]:
    """Numbers and ranges: `3`, `1..10`, `>9`, `10+`, `<=3`, and `2-4` where `allow_dash`."""
    match value:
        case m.Integer(number):
            return {"min": number, "max": number}
        case m.AtLeast(number):
            return {"min": number, "max": None}
        case m.ClosedRange(m.Integer(low), m.Integer(high)) | m.Binary("-", m.Integer(low), m.Integer(high)) if (
            allow_dash or isinstance(value, m.ClosedRange)
        ):
            if low > high:
                raise LoweringError(f"the range {low}-{high} runs backwards", value.pos, f"write {high}-{low}")
            return {"min": low, "max": high}
        case m.OpenRange(op, m.Integer(number)):
            bounds = {">": (number + 1, None), ">=": (number, None), "<": (None, number - 1), "<=": (None, number)}
            if op in bounds:
                low_bound, high_bound = bounds[op]
                return {"min": low_bound, "max": high_bound}
    raise _fail("a number or a range (3, 2-4, 1..10, >9, 10+)", value)


def dice_of(value: m.Value) -> dict[str, Any]:
    """`1d10`, `2d6+3`, `30 + 1d10`: dice terms plus a constant."""
    terms: list[dict[str, int]] = []
    modifier = 0

    def walk(node: m.Value, sign: int) -> None:
        nonlocal modifier
        match node:
            case m.Dice(count, sides):
                if sign < 0:
                    raise LoweringError("dice cannot be subtracted", node.pos)
                terms.append({"count": count, "sides": sides})
            case m.Integer(number):
                modifier += sign * number
            case m.Binary("+", left, right):
                walk(left, sign)
                walk(right, sign)
            case m.Binary("-", left, right):
                walk(left, sign)
                walk(right, -sign)
            case _:
                raise _fail("dice (like 1d10, 2d6+3 or 30 + 1d10)", node)

    walk(value, 1)
    if not terms:
        raise _fail("dice (like 1d10, 2d6+3 or 30 + 1d10)", value)
    return {"text": expr_text(value), "terms": terms, "modifier": modifier}


# x-value -> the _Lowerer method that reads it ("ref:setting" calls reference("setting") first)
_FACTORIES = {"ref": "reference", "refs": "references_to", "points": "points_of"}
_READERS = {
    "text": "text",
    "texts": "texts",
    "word": "word",
    "words": "words",
    "lower_words": "lower_words",
    "int": "integer",
    "bool": "boolean",
    "tools": "tools",
    "years": "years",
    "pts": "pts",
    "stat_bonus": "stat_bonus",
    "actions": "actions",
    "range": "range",
    "dice": "dice",
    "formula": "formula",
    "requirement": "requirement",
    "columns": "columns",
}


def _reader(lowerer: _Lowerer, value_type: str) -> Callable[[JsonPath, m.Value], Any]:
    name, _, argument = value_type.partition(":")
    if name in _FACTORIES:
        factory: Callable[[str], Callable[[JsonPath, m.Value], Any]] = getattr(lowerer, _FACTORIES[name])
        return factory(argument)
    reader: Callable[[JsonPath, m.Value], Any] = getattr(lowerer, _READERS[name])
    return reader


def generic(value: m.Value) -> Any:
    """A field no schema knows: keep something readable, the schema check reports the field itself."""
    return expr_text(value)


MAX_DEPTH = 100  # expression nesting; every later stage walks values recursively


def depth(value: m.Value) -> int:
    """How deeply a value nests (counted without recursion, so any input is safe to measure)."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        for name in getattr(type(node), "__slots__", ()):
            child = getattr(node, name)
            for item in child if isinstance(child, tuple) else (child,):
                if isinstance(item, m._Node) and not isinstance(item, m.Position):
                    stack.append((item, level + 1))
    return deepest


def lower_block(block: m.Block, kind: Kind, *, default_setting: str | None) -> tuple[Entity, list[Diagnostic]]:
    diagnostics: list[Diagnostic] = []
    lowerer = _Lowerer(block.kind)
    # `KIND Name {` names the entity (its id is the slug); `KIND id "Name" {` gives both.
    if block.name is not None:
        name = block.name.value
        entity_id = block.id.text if block.id else slug(name)
    else:
        name = block.id.text if block.id else ""
        entity_id = slug(name)
    doc: dict[str, Any] = {"kind": block.kind, "id": entity_id, "name": name}
    lowerer.positions[("id",)] = block.id.pos if block.id else (block.name.pos if block.name else block.kind_pos)
    lowerer.positions[("name",)] = block.name.pos if block.name else lowerer.positions[("id",)]
    failed: set[str] = set()
    seen: dict[str, m.Field] = {}
    for fld in block.fields:
        if fld.key in seen:
            first = seen[fld.key].pos
            diagnostics.append(error("E202", f"field '{fld.key}' is given twice (first at line {first.line})", fld.pos))
            continue
        seen[fld.key] = fld
        lowerer.positions[(fld.key,)] = fld.pos
        if depth(fld.value) > MAX_DEPTH:
            failed.add(fld.key)
            diagnostics.append(
                error(
                    "E204",
                    f"'{fld.key}' nests more than {MAX_DEPTH} levels deep",
                    fld.pos,
                    "split it into smaller formulas",
                )
            )
            continue
        value_type = kind.value_types.get(fld.key)
        try:
            if value_type is None or fld.key in ("kind", "id", "name", "rows"):
                doc[fld.key] = generic(fld.value)
            else:
                doc[fld.key] = _reader(lowerer, value_type)((fld.key,), fld.value)
        except LoweringError as exc:
            failed.add(fld.key)
            diagnostics.append(exc.diagnostic)
    if block.rows:
        if "rows" in kind.value_types:
            reported = len(diagnostics)
            doc["rows"] = lowerer.rows(block.rows, doc.get("keys", []), doc.get("columns", []), diagnostics)
            if len(diagnostics) > reported:
                failed.add("rows")  # a row was dropped: coverage checks would only repeat it
            lowerer.positions.setdefault(("rows",), block.rows[0].pos)
        else:
            diagnostics.append(error("E203", f"a {block.kind} has no rows; rows belong in a table", block.rows[0].pos))
    if "setting" in kind.value_types and "setting" not in doc and default_setting is not None:
        doc["setting"] = default_setting
    entity = Entity(
        block.kind, entity_id, name, doc, lowerer.positions, tuple(lowerer.references), frozenset(failed), block.pos
    )
    return entity, diagnostics


def walk_requirement(req: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every node of a lowered requirement, parents first."""
    yield req
    for key in ("any", "all"):
        for child in req.get(key, ()):
            yield from walk_requirement(child)
    if "not" in req:
        yield from walk_requirement(req["not"])
