"""JSON: the serialisation of the IR, and each kind's JSON Schema (Draft 2020-12) derived from its fields.

Documents are what `export` prints and what schema validation checks. The shapes of structured values
(dice, formulas, requirements, ...) are defined once in schemas/defs.schema.json; a kind's schema is
derived from its declaration, so the two can never disagree about a kind's fields.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from fractions import Fraction
from functools import cache, lru_cache
from typing import Any, assert_never

from rulesdsl.compile import ir
from rulesdsl.compile.kinds import FieldDecl, Kind, record_fields, record_required
from rulesdsl.language import fieldtypes as t
from rulesdsl.language.distributions import VERSION_PATTERN
from rulesdsl.language.names import slug
from rulesdsl.resources import SCHEMAS

SCHEMA_DIR = SCHEMAS
DEFS_ID = "urn:rulesdsl:defs"
UNKNOWN = {"unknown": True}  # `unknown` in a document; `none` is null


def _ratio(value: Fraction) -> dict[str, int]:
    return {"num": value.numerator, "den": value.denominator}


def _ref(ref: ir.Ref) -> str:
    """The id a reference names; before resolution, the slug of what was written."""
    return ref.id if ref.id is not None else slug(ref.text)


def expr_json(expr: ir.Expr) -> Any:
    match expr:
        case ir.Num(value):
            return value if isinstance(value, int) else {"ratio": _ratio(value)}
        case ir.Var(name, _, attribute):
            return {"var": attribute or name}
        case ir.Text(value):
            return {"text": value}
        case ir.Caret(value):
            return {"caret": value}
        case ir.DiceExpr(dice):
            return {"dice": value_json(dice)}
        case ir.DiceOf(count, sides, _, suffix):
            made = {"dice_of": [expr_json(count), expr_json(sides)]}
            return {**made, "suffix": suffix} if suffix else made
        case ir.BinOp(op, left, right):
            return {"op": op, "args": [expr_json(left), expr_json(right)]}
        case ir.Neg(operand):
            return {"op": "neg", "args": [expr_json(operand)]}
        case ir.Compare(op, left, right):
            return {"compare": op, "args": [expr_json(left), expr_json(right)]}
        case ir.Logic(op, items):
            return {"logic": op, "args": [expr_json(i) for i in items]}
        case ir.NotExpr(operand):
            return {"not": expr_json(operand)}
        case ir.If(condition, then, otherwise):
            return {"if": [expr_json(condition), expr_json(then), expr_json(otherwise)]}
        case ir.Call(function, args):
            return {"call": function, "args": [expr_json(a) for a in args]}
        case ir.FieldOf(entity, name):
            return {"field": [entity.kind, _ref(entity), name]}
        case ir.Lookup(table, index):
            return {"lookup": _ref(table), "index": expr_json(index)}
        case ir.FormulaCall(formula, args):
            return {"formula": _ref(formula), "args": [expr_json(a) for a in args]}
        case ir.ParamField(param, name):
            return {"param_field": [param, name]}
        case ir.EntityArg(entity):
            return {"entity": [entity.kind, _ref(entity)]}
        case _:
            assert_never(expr)


def requirement_json(req: ir.Requirement) -> dict[str, Any]:
    match req:
        case ir.TookLifepath(lifepath):
            return {"lifepath": _ref(lifepath)}
        case ir.HasTrait(trait):
            return {"trait": _ref(trait)}
        case ir.HasSkill(skill):
            return {"skill": _ref(skill)}
        case ir.Holds(kind, entity):
            return {"holds": {"kind": kind, "id": _ref(entity)}}
        case ir.Previous(lifepath):
            return {"previous": _ref(lifepath)}
        case ir.GmPermission():
            return {"gm_permission": True}
        case ir.AllOf(items):
            return {"all": [requirement_json(i) for i in items]}
        case ir.AnyOf(items):
            return {"any": [requirement_json(i) for i in items]}
        case ir.NotReq(item):
            return {"not": requirement_json(item)}
        case ir.CountOf(count, setting, tag, lifepaths):
            of: dict[str, Any] = {}
            if setting is not None:
                of["setting"] = _ref(setting)
            if tag is not None:
                of["tag"] = tag.text
            if lifepaths:
                of["lifepaths"] = [_ref(r) for r in lifepaths]
            return {"count": count, "of": of}
        case ir.Condition(subject, op, value):
            return {"condition": subject, "op": op, "value": value}
        case ir.ConditionIn(subject, low, high):
            return {"condition": subject, "in": {"min": low, "max": high}}
        case _:
            assert_never(req)


def dice_json(dice: ir.Dice) -> dict[str, Any]:
    """Dice as JSON: plain dice as they always were; keep, explode and parts only where they are used."""
    terms: list[dict[str, Any]] = []
    for term in dice.terms:
        item: dict[str, Any] = {"count": term.count, "sides": term.sides}
        if term.keep is not None:
            item |= {"keep": term.keep, "lowest": term.lowest}
        if term.explode:
            item["explode"] = True
        terms.append(item)
    result: dict[str, Any] = {"text": dice.text, "terms": terms, "modifier": dice.modifier}
    parts: list[dict[str, Any]] = []
    for part in dice.parts:
        match part:
            case ir.ScaledDice(inner, factor):
                parts.append({"dice": dice_json(inner), "factor": factor})
            case ir.DividedDice(inner, divisor):
                parts.append({"dice": dice_json(inner), "divisor": divisor})
            case ir.BoundedDice(inner, low, high):
                parts.append({"dice": dice_json(inner), "low": low, "high": high})
            case _:
                assert_never(part)
    if parts:
        result["parts"] = parts
    return result


def value_json(value: ir.Value) -> Any:
    """A field's value (or a table cell) as JSON."""
    match value:
        case bool() | int() | str():
            return value
        case Fraction():
            return value.numerator if value.denominator == 1 else _ratio(value)
        case tuple():
            return [value_json(v) for v in value]
        case ir.Ref():
            return _ref(value)
        case ir.Unknown():
            return dict(UNKNOWN)
        case ir.NoneValue():
            return None
        case ir.Dice():
            return dice_json(value)
        case ir.Formula(text, expr, steps=steps) if steps:
            shown = [{"name": step.name, "formula": value_json(step.formula)} for step in steps]
            return {"text": text, "expr": expr_json(expr), "steps": shown}
        case ir.Formula(text, expr):
            return {"text": text, "expr": expr_json(expr)}
        case ir.Range(low, high):
            return {"min": low, "max": high}
        case ir.Offer(fixed, picks):
            chosen = [{"count": p.count, "of": [_ref(r) for r in p.options]} for p in picks]
            return {"fixed": [_ref(r) for r in fixed], "choices": chosen}
        case ir.Multiplier(ratio):
            return _ratio(ratio)
        case ir.Choices(points, options):
            items = [_ref(o[0]) if len(o) == 1 else {"one_of": [_ref(r) for r in o]} for o in options]
            return {"points": points, "items": items}
        case ir.StatBonus(mental, physical, either):
            return {"mental": mental, "physical": physical, "either": either}
        case ir.Actions(count, per_obstacle):
            return {"count": count, "per_obstacle": per_obstacle}
        case ir.Column(name, column_type):
            return {"name": name, "type": t.type_text(column_type)}
        case ir.Roll(dice, modifier, tens_units, text, _, given):
            rolled: dict[str, Any] = {
                "text": text,
                "dice": [value_json(d) for d in dice],
                "modifier": value_json(modifier) if modifier is not None else None,
                "tens_units": tens_units,
            }
            if given:
                rolled["given"] = [g.key for g in given]
            return rolled
        case ir.Rolls(count, table):
            return {"times": count, "table": _ref(table)}
        case ir.CheckSpec(modifier, target, mechanic):
            return {
                "mechanic": _ref(mechanic) if mechanic else None,
                "modifier": value_json(modifier),
                "target": target,
            }
        case ir.Record(names, values):
            return {name: value_json(v) for name, v in zip(names, values, strict=True)}
        case ir.MapValue(keys, values):
            return {ir.map_key(key): value_json(v) for key, v in zip(keys, values, strict=True)}
        case (
            ir.TookLifepath()
            | ir.HasTrait()
            | ir.HasSkill()
            | ir.Holds()
            | ir.Previous()
            | ir.GmPermission()
            | ir.AllOf()
            | ir.AnyOf()
            | ir.NotReq()
            | ir.CountOf()
            | ir.Condition()
            | ir.ConditionIn()
        ):
            return requirement_json(value)
        case _:
            assert_never(value)


def _key_json(key: ir.Key) -> dict[str, Any]:
    match key:
        case ir.NameKey(text, _, ref):
            return {"name": text} if ref is None else {"name": text, "id": _ref(ref)}
        case ir.ParityKey(odd):
            return {"parity": "odd" if odd else "even"}
        case ir.Range(low, high):
            return {"min": low, "max": high}
        case _:
            assert_never(key)


def row_json(row: ir.TableRow) -> dict[str, Any]:
    keys = [_key_json(k) for k in row.keys]
    result: dict[str, Any] = {"keys": keys, "cells": [value_json(c) for c in row.cells]}
    if row.source is not None:
        result["source"] = row.source
    return result


def document(entity: ir.Entity) -> dict[str, Any]:
    """An entity as a JSON document: kind, id, name, its fields, and a table's rows."""
    doc: dict[str, Any] = {"kind": entity.kind, "id": entity.id, "name": entity.name}
    for name, value in entity.fields.items():
        doc[name] = value_json(value)
    if entity.rows or "rows" in entity.failed:
        doc["rows"] = [row_json(r) for r in entity.rows]
    return doc


# ---------------------------------------------------------------- schemas


def _def(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def type_schema(field_type: t.FieldType) -> dict[str, Any]:
    """The JSON Schema of one field's value."""
    match field_type:
        case t.IntType(low, high):
            schema: dict[str, Any] = {"type": "integer"}
            if low is not None:
                schema["minimum"] = low
            if high is not None:
                schema["maximum"] = high
            return schema
        case t.NumberType(low, high):
            return _number_schema(low, high)
        case t.TextType():
            return {"type": "string", "minLength": 1, "maxLength": t.TEXT_LIMIT}
        case t.MarkdownType():
            return {"type": "string", "minLength": 1, "maxLength": t.MARKDOWN_LIMIT}
        case t.BoolType():
            return {"type": "boolean"}
        case t.DiceType():
            return _def("dice")
        case t.FormulaType() | t.ObstacleType():
            return _def("formula")
        case t.RangeType():
            return _def("range")
        case t.MultiplierType():
            return _def("ratio")
        case t.EnumType(options):
            return {"enum": list(options)}
        case t.RefType() | t.WordType():
            return _def("id")
        case t.ListType(item, low, high):
            schema = {"type": "array", "items": type_schema(item)}
            if low:
                schema["minItems"] = low
            if high is not None:
                schema["maxItems"] = high
            return schema
        case t.AbbreviationType():
            return {"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9]*$"}
        case t.VersionType():
            return {"type": "string", "pattern": VERSION_PATTERN}
        case t.YearsType():
            return {"type": "integer", "minimum": 0, "maximum": 1000}
        case t.PointsType():
            return {"type": "integer", "minimum": 0}
        case t.StatBonusType():
            return _def("stat_bonus")
        case t.ActionsType():
            return _def("actions")
        case t.ChoicesType():
            return _def("choices")
        case t.OfferType():
            return _def("offer")
        case t.RequirementType():
            return _def("requirement")
        case t.ColumnsType():
            return {"type": "array", "minItems": 1, "items": _def("column")}
        case t.RollType():
            return _def("roll")
        case t.RollsType():
            return _def("rolls")
        case t.CheckType():
            return _def("check")
        case t.MapType(value, key):
            keys = {"enum": list(key.options)} if isinstance(key, t.EnumType) else _def("id")
            return {"type": "object", "propertyNames": keys, "additionalProperties": type_schema(value)}
        case t.RecordType() as record:
            return {
                "type": "object",
                "properties": _properties(record_fields(record)),
                "required": list(record_required(record)),
                "additionalProperties": False,
            }
        case _:
            assert_never(field_type)


def _number_schema(low: Fraction | None, high: Fraction | None) -> dict[str, Any]:
    """A number is serialised as an integer when it is whole, else as a ratio in lowest terms (den >= 2).

    The whole numbers in bounds are said exactly (`number in 0.5..2.5`: 1 to 2). JSON Schema cannot compare
    a ratio with a bound (num/den against p/q is arithmetic across two properties), so of a ratio it says
    only the sign its bounds require: exact for the usual bound 0 (`number in 0..1` refuses -1/2), and never
    narrower than the bounds. Lowering checks every bound exactly (`fieldtypes.constraint_problem`)."""
    whole: dict[str, Any] = {"type": "integer"}
    num: dict[str, Any] = {"type": "integer"}
    if low is not None:
        whole["minimum"] = math.ceil(low)
        if low >= 0:
            num["minimum"] = 0 if low == 0 else 1
    if high is not None:
        whole["maximum"] = math.floor(high)
        if high <= 0:
            num["maximum"] = 0 if high == 0 else -1
    if len(num) == 1:
        return {"anyOf": [whole, _def("ratio")]}
    return {"anyOf": [whole, {"allOf": [_def("ratio"), {"properties": {"num": num}}]}]}


@cache
def defs_schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMA_DIR / "defs.schema.json").read_text(encoding="utf-8"))
    return data


def _properties(decls: Iterable[FieldDecl]) -> dict[str, Any]:
    """The schemas of a kind's fields, or a record's, by name."""
    properties: dict[str, Any] = {}
    for decl in decls:
        schema = type_schema(decl.type)
        if decl.optional or decl.default is not None:  # `none` is null, `unknown` its marker
            schema = {"anyOf": [schema, {"type": "null"}, _def("unknown")]}
        extra: dict[str, Any] = {}
        if decl.doc:
            extra["description"] = decl.doc
        if decl.default is not None:
            extra["default"] = value_json(decl.default)
        properties[decl.name] = {**schema, **extra}
    return properties


@lru_cache(maxsize=256)
def schema_file(kind: Kind) -> str:
    """A kind's schema as the file the package and the reference ship. Kinds hash by value, so the rulesets of
    a build (and a long run's thousands of builds) that share a kind write it out once."""
    return json.dumps(schema_of(kind), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def kind_schema_id(kind: str, ruleset: str | None = None) -> str:
    """The `$id` of a kind's schema: of the kind alone (what a package ships), or of the kind as one ruleset
    declares it (the export's, where a homebrew's `override kind` and its base's must not share an id)."""
    return f"urn:rulesdsl:kind:{kind}" if ruleset is None else f"urn:rulesdsl:ruleset:{ruleset}:kind:{kind}"


def schema_of(kind: Kind, ruleset: str | None = None) -> dict[str, Any]:
    """A kind's JSON Schema, self-contained (the shared definitions are bundled in); `ruleset`: see
    `kind_schema_id`."""
    properties: dict[str, Any] = {
        "kind": {"const": kind.name},
        "id": _def("id"),
        "name": {"type": "string", "minLength": 1, "maxLength": t.TEXT_LIMIT},
    }
    properties.update(_properties(kind.fields.values()))
    if kind.has_rows:
        properties["rows"] = {"type": "array", "minItems": 1, "items": _def("row")}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": kind_schema_id(kind.name, ruleset),
        "title": kind.title,
        "type": "object",
        "properties": properties,
        "required": ["kind", "id", "name", *kind.required, *(["rows"] if kind.has_rows else [])],
        "additionalProperties": False,
        "$defs": defs_schema()["$defs"],
    }
