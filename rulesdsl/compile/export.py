"""The export: every ruleset as one JSON document with a contract, and the JSON Schema of that document.

The envelope says its format (`FORMAT`), the compiler that made it, and per ruleset its id, title, version,
what it extends, its kind declarations and its entities. Everything in it derives from the compiled rulesets:
a kind's declaration from its fields (as lowering, the schemas and the packages read them), the entities from
`jsonform.document`, and `envelope_schema` from the same kinds' schemas (`jsonform.schema_of`), each with an
`$id` of its own ruleset. docs/export.md documents it; a change to the format changes `FORMAT`.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any, assert_never

from rulesdsl import __version__
from rulesdsl.compile.jsonform import DEFS_ID, defs_schema, kind_schema_id, schema_of, type_schema, value_json
from rulesdsl.compile.kinds import FieldDecl, Kind, record_fields
from rulesdsl.compile.pipeline import CompiledRuleset
from rulesdsl.language import fieldtypes as t

FORMAT = "rulesdsl-export/1"  # the version of this contract: a change that breaks a reader bumps it
SCHEMA_ID = "urn:rulesdsl:export:1"
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def envelope(rulesets: Sequence[CompiledRuleset]) -> dict[str, Any]:
    """What `rulesdsl export` prints."""
    return {
        "format": FORMAT,
        "compiler": {"name": "rulesdsl", "version": __version__},
        "rulesets": {r.id: _ruleset(r) for r in rulesets},
    }


def _ruleset(ruleset: CompiledRuleset) -> dict[str, Any]:
    return {
        "id": ruleset.id,
        "title": ruleset.title,
        "version": ruleset.version,
        "extends": list(ruleset.extends),
        "kinds": {name: kind_declaration(kind, ruleset.id) for name, kind in ruleset.kinds.items()},
        "entities": ruleset.documents(),
    }


def kind_declaration(kind: Kind, ruleset: str) -> dict[str, Any]:
    """A kind as its ruleset declares it: its fields in declaration order (the common ones last), and the
    `$id` of its JSON Schema in the envelope's schema."""
    return {
        "name": kind.name,
        "title": kind.title,
        "builtin": kind.builtin,
        "rows": kind.has_rows,
        "fields": [field_declaration(f) for f in kind.fields.values()],
        "schema": kind_schema_id(kind.name, ruleset),
    }


def field_declaration(decl: FieldDecl) -> dict[str, Any]:
    """A field of a kind or of a record: its type as data and as the language writes it, and whether it may
    be left out (optional, or with a default: what leaving it out means)."""
    made: dict[str, Any] = {
        "name": decl.name,
        "type": type_json(decl.type),
        "declared": t.type_text(decl.type),
        "optional": decl.optional,
    }
    if decl.default is not None:
        made["default"] = value_json(decl.default)
    if decl.doc:
        made["doc"] = decl.doc
    return made


def _bound(value: int | Fraction) -> Any:
    return value_json(value) if isinstance(value, Fraction) else value


def type_json(field_type: t.FieldType) -> dict[str, Any]:
    """A field type as data: `{"is": NAME, ...}`, NAME the type's word in the language, and its bounds,
    options, item, key, value, record fields or the kind it refers to."""
    match field_type:
        case t.IntType(low, high) | t.NumberType(low, high):
            bounded: dict[str, Any] = {"is": "int" if isinstance(field_type, t.IntType) else "number"}
            if low is not None:
                bounded["min"] = _bound(low)
            if high is not None:
                bounded["max"] = _bound(high)
            return bounded
        case t.EnumType(options):
            return {"is": "enum", "options": list(options)}
        case t.RefType(kind):
            return {"is": "ref", "kind": kind}
        case t.ChoicesType(kind):
            return {"is": "points", "kind": kind}
        case t.OfferType(kind):
            return {"is": "choices", "kind": kind}
        case t.ListType(item, low, high):
            listed: dict[str, Any] = {"is": "list", "item": type_json(item)}
            if low:
                listed["min_items"] = low
            if high is not None:
                listed["max_items"] = high
            return listed
        case t.CheckType(mechanic) if mechanic is not None:
            return {"is": "check", "mechanic": mechanic}
        case t.FormulaType(names) if names:
            return {"is": "formula", "params": list(names)}
        case t.MapType(value, key):
            return {"is": "map", "key": type_json(key), "value": type_json(value)}
        case t.RecordType() as record:
            return {"is": "record", "fields": [field_declaration(f) for f in record_fields(record)]}
        case (
            t.TextType()
            | t.MarkdownType()
            | t.BoolType()
            | t.DiceType()
            | t.FormulaType()
            | t.RangeType()
            | t.MultiplierType()
            | t.WordType()
            | t.AbbreviationType()
            | t.VersionType()
            | t.YearsType()
            | t.PointsType()
            | t.StatBonusType()
            | t.ActionsType()
            | t.RequirementType()
            | t.ObstacleType()
            | t.ColumnsType()
            | t.RollType()
            | t.RollsType()
            | t.CheckType()
        ):
            return {"is": t.type_text(field_type)}  # the word of the language that names it
        case _:
            assert_never(field_type)


# ---------------------------------------------------------------- the schema


def _object(properties: dict[str, Any], required: Sequence[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties if required is None else required),
        "additionalProperties": False,
    }


_ID = {"$ref": f"{DEFS_ID}#/$defs/id"}
_BOUND = {"anyOf": [{"type": "integer"}, {"$ref": f"{DEFS_ID}#/$defs/ratio"}]}


def _declaration_defs() -> dict[str, Any]:
    """The schemas of a kind declaration, a field and a field type (what `kind_declaration` writes)."""
    shape = "#/$defs/field_type"
    simple = sorted(name for name, simple in t.SIMPLE.items() if simple not in (t.IntType(), t.NumberType()))
    field_type = {
        "description": "A field's type: `is` names it as the language does; the other keys are its parts.",
        "oneOf": [
            _object({"is": {"enum": simple}}),
            _object({"is": {"enum": ["int", "number"]}, "min": _BOUND, "max": _BOUND}, ["is"]),
            _object({"is": {"const": "enum"}, "options": {"type": "array", "items": {"type": "string"}}}),
            _object({"is": {"enum": ["ref", "points", "choices"]}, "kind": _ID}),
            _object(
                {
                    "is": {"const": "list"},
                    "item": {"$ref": shape},
                    "min_items": {"type": "integer", "minimum": 1},
                    "max_items": {"type": "integer", "minimum": 0},
                },
                ["is", "item"],
            ),
            _object({"is": {"const": "check"}, "mechanic": _ID}),
            _object({"is": {"const": "formula"}, "params": {"type": "array", "items": {"type": "string"}}}),
            _object({"is": {"const": "map"}, "key": {"$ref": shape}, "value": {"$ref": shape}}),
            _object({"is": {"const": "record"}, "fields": {"type": "array", "items": {"$ref": "#/$defs/field"}}}),
        ],
    }
    field = _object(
        {
            "name": {"type": "string"},
            "type": {"$ref": shape},
            "declared": {"type": "string", "description": "the type as a kind declaration writes it"},
            "optional": {"type": "boolean"},
            "default": {"description": "what leaving the field out means, as an entity's value is exported"},
            "doc": {"type": "string"},
        },
        ["name", "type", "declared", "optional"],
    )
    kind = _object(
        {
            "name": _ID,
            "title": {"type": "string"},
            "builtin": {"type": "boolean", "description": "declared in the language's prelude"},
            "rows": {"type": "boolean", "description": "its entities have table rows"},
            "fields": {"type": "array", "items": {"$ref": "#/$defs/field"}},
            "schema": {"type": "string", "description": "the $id of the kind's JSON Schema in this schema"},
        }
    )
    return {"field_type": field_type, "field": field, "kind_declaration": kind}


def envelope_schema(rulesets: Sequence[CompiledRuleset]) -> dict[str, Any]:
    """The JSON Schema (Draft 2020-12) of these rulesets' export: the envelope, and in `$defs` each ruleset's
    kind schemas (the ones its entities are validated against when they are compiled) with their own `$id`,
    and the shared definitions (dice, the formula tree `expr`, `requirement`) as `urn:rulesdsl:defs`."""
    defs: dict[str, Any] = {"defs": defs_schema(), **_declaration_defs()}
    shared = {name: {"$ref": f"{DEFS_ID}#/$defs/{name}"} for name in defs_schema()["$defs"]}
    rulesets_schema: dict[str, Any] = {}
    for ruleset in rulesets:
        entities: dict[str, Any] = {}
        kinds: dict[str, Any] = {}
        for name, kind in ruleset.kinds.items():
            # its shared definitions forward to the envelope's one copy (a bundled copy per kind made the
            # schema megabytes long, and validators slow to load it)
            schema = schema_of(kind, ruleset.id) | {"$defs": shared}
            defs[f"kind.{ruleset.id}.{name}"] = schema
            entities[name] = {"type": "object", "propertyNames": _ID, "additionalProperties": {"$ref": schema["$id"]}}
            kinds[name] = {
                "allOf": [{"$ref": "#/$defs/kind_declaration"}],
                "properties": {"name": {"const": name}, "schema": {"const": schema["$id"]}},
            }
        defs[f"ruleset.{ruleset.id}"] = _object(
            {
                "id": {"const": ruleset.id},
                "title": {"type": "string"},
                "version": type_schema(t.VersionType()),
                "extends": {"type": "array", "items": _ID},
                "kinds": _object(kinds),
                "entities": _object(entities, []),
            }
        )
        rulesets_schema[ruleset.id] = {"$ref": f"#/$defs/ruleset.{ruleset.id}"}
    return {
        "$schema": DRAFT,
        "$id": SCHEMA_ID,
        "title": "rulesdsl export",
        "description": "What `rulesdsl export` prints for these rulesets (docs/export.md).",
        **_object(
            {
                "format": {"const": FORMAT},
                "compiler": _object({"name": {"const": "rulesdsl"}, "version": {"type": "string"}}),
                "rulesets": _object(rulesets_schema),
            }
        ),
        "$defs": defs,
    }
