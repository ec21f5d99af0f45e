"""Schema validation: each lowered document against its kind's JSON Schema (Draft 2020-12).

Errors are reported at the source position of the offending field and worded for people; the raw
validator output never reaches a user.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import jsonschema_rs

from rulesdsl.compile.ir import Entity
from rulesdsl.compile.jsonform import document, schema_of
from rulesdsl.compile.kinds import Kind
from rulesdsl.diagnostics import Diagnostic, error, naming_hint, suggest
from rulesdsl.language import fieldtypes as t
from rulesdsl.language.distributions import VERSION_PATTERN
from rulesdsl.syntax.tree import Position

if TYPE_CHECKING:  # jsonschema (and what it imports) is loaded only to explain a failure
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError


# Bounded: a language server derives them again for each new version of a declared kind, for hours.
_KINDS_KEPT = 256


@lru_cache(maxsize=_KINDS_KEPT)
def _validators(schema_text: str) -> tuple[Any, Draft202012Validator]:
    """jsonschema-rs answers valid-or-not ~100x faster; jsonschema explains each failure."""
    from jsonschema import Draft202012Validator

    schema = json.loads(schema_text)
    return jsonschema_rs.Draft202012Validator(schema), Draft202012Validator(schema)


def validators(kind: Kind) -> tuple[Any, Draft202012Validator]:
    """The validators of a kind's derived schema, built once per distinct schema."""
    return _validators(_schema_text(kind))


@lru_cache(maxsize=_KINDS_KEPT)
def _schema_text(kind: Kind) -> str:
    """A kind's schema as canonical JSON text (kinds hash by value: an unchanged kind finds it again)."""
    return json.dumps(schema_of(kind), sort_keys=True)


def _field_words(path: Iterable[str | int]) -> str:
    parts = [str(p) for p in path if not isinstance(p, int)]
    return ".".join(parts) or "value"


def fields_named(err: ValidationError) -> list[str]:
    """The fields an `additionalProperties` error (those not allowed) or a `required` one (those missing) is
    about, every one of them; [] for other errors."""
    instance: Any = err.instance
    if err.validator == "additionalProperties":
        schema: Any = err.schema
        return sorted(set(instance) - set(schema.get("properties", {})))
    if err.validator == "required":
        expected: Any = err.validator_value
        return [f for f in expected if f not in instance]
    return []


def suggestions_of(err: ValidationError, field: str | None = None) -> tuple[str, ...]:
    """What to write instead of what the error is about, when it names a choice: a field or part that is
    not there (the closest of those that are), a value not among an enum's. The hint `describe` gives
    names them; the diagnostic carries them (the editor's quick fixes)."""
    expected: Any = err.validator_value
    schema: Any = err.schema
    if err.validator == "additionalProperties":
        return suggest(next(iter(fields_named(err)), "?") if field is None else field, schema.get("properties", {}))
    if err.validator == "enum":
        return suggest(str(err.instance), map(str, expected))
    return ()


def describe(err: ValidationError, kind: Kind, field: str | None = None) -> tuple[str, str | None]:
    """A schema error in words (message, hint); `field`: which of the fields it names (`fields_named`), the
    first when not given."""
    where = _field_words(err.absolute_path)
    # jsonschema's attributes are loosely typed; read them once as plain values
    v: Any = err.validator
    expected: Any = err.validator_value
    schema: Any = err.schema
    instance: Any = err.instance
    if field is None:
        field = next(iter(fields_named(err)), "?")
    if v == "additionalProperties":
        allowed = list(schema.get("properties", {}))
        if not err.absolute_path:
            return f"a {kind.name} has no field '{field}'", naming_hint(suggestions_of(err, field)) or (
                "fields: " + ", ".join(f for f in allowed if f not in ("kind", "id", "name"))
            )
        return f"'{where}' has no part '{field}'", naming_hint(suggestions_of(err, field)) or (
            "its parts: " + ", ".join(allowed)
        )
    if v == "required":
        if not err.absolute_path:
            declared = kind.fields.get(field)
            example = t.example_text(declared.type) if declared is not None else None
            if field == "rows":  # a table's rows are no declared field
                return f"a {kind.name} needs a '{field}' field", "add rows, one a line: 1-3 -> NAME"
            shown = example or (f"... ({t.type_text(declared.type)})" if declared is not None else "...")
            return f"a {kind.name} needs a '{field}' field", f"add {field}: {shown}"
        return f"'{where}' needs '{field}'", f"add {field}: ..."
    if v == "enum":
        return f"'{where}' must be one of: {', '.join(map(str, expected))}", naming_hint(suggestions_of(err)) or (
            f"write one of them, such as {expected[0]}"
        )
    if v == "const":
        return f"'{where}' must be '{expected}'", f"write {expected}"
    if v == "pattern":
        return f"'{where}' is not well formed: '{instance}'", _pattern_hint(str(expected))
    if v == "type":
        return f"'{where}' must be {_type_words(expected)}", f"write {_type_words(expected)} here"
    if v in ("minimum", "maximum"):
        return (
            f"'{where}' must be {'at least' if v == 'minimum' else 'at most'} {expected}, not {instance}",
            f"write {expected} or {'more' if v == 'minimum' else 'less'}",
        )
    if v in ("minItems", "maxItems"):
        return (
            f"'{where}' needs {'at least' if v == 'minItems' else 'at most'} {expected} item{'s' * (expected != 1)}",
            "add items" if v == "minItems" else "leave some items out",
        )
    if v in ("minLength", "maxLength"):
        if v == "maxLength":
            return f"'{where}' is too long ({len(instance)} characters, at most {expected})", (
                "keep descriptions to one short line in your own words"
            )
        return f"'{where}' must not be empty", "write the text between the quotes"
    if v == "dependentRequired":
        return f"'{where}' is incomplete", "give it every field it goes with"
    return f"'{where}' is not valid here", f"write it as the {kind.name} kind declares it"


def _type_words(expected: Any) -> str:
    words = {
        "integer": "a whole number",
        "string": "text",
        "boolean": "yes or no",
        "array": "a list",
        "object": "a group of fields",
        "null": "nothing",
    }
    names = expected if isinstance(expected, list) else [expected]
    return " or ".join(str(words.get(n, n)) for n in names)


def _pattern_hint(pattern: str) -> str | None:
    if pattern == "^[a-z_][a-z0-9_]*$":
        return "ids are snake_case: lower-case letters, digits and '_'"
    if pattern.startswith("^[A-Za-z]"):
        return "abbreviations are letters and digits, in any case (AGL, Ag)"
    if pattern == VERSION_PATTERN:
        return "a version as Python packages number them (PEP 440), e.g. 0.1.0, 1.0.0-beta.2, 2.0rc1 or 2.1.post1"
    return None


@lru_cache(maxsize=_KINDS_KEPT)
def _fast_validator(schema_text: str) -> Any:
    return jsonschema_rs.Draft202012Validator(json.loads(schema_text))


@lru_cache(maxsize=_KINDS_KEPT)
def _array_validator(schema_text: str) -> Any:
    """jsonschema-rs for a list of documents of one kind: one call validates a whole ruleset's worth."""
    schema = json.loads(schema_text)
    items = {key: value for key, value in schema.items() if key not in ("$schema", "$id", "$defs")}
    return jsonschema_rs.Draft202012Validator({"type": "array", "items": items, "$defs": schema["$defs"]})


_BATCH = 2000  # documents validated in one call: few calls, and never every document in memory at once


def check_all(entities: Sequence[Entity], kinds: Mapping[str, Kind]) -> list[Diagnostic]:
    """Every entity against its kind's schema: a batch of each kind's documents per call to jsonschema-rs,
    and only when that finds a problem, each document on its own, explained by jsonschema."""
    diagnostics: list[Diagnostic] = []
    by_kind: dict[str, list[Entity]] = {}
    for entity in entities:
        by_kind.setdefault(entity.kind, []).append(entity)
    for kind_name, group in by_kind.items():
        kind = kinds[kind_name]
        validator = _array_validator(_schema_text(kind))
        for start in range(0, len(group), _BATCH):
            batch = []
            for entity in group[start : start + _BATCH]:
                try:
                    batch.append((entity, document(entity)))
                except RecursionError:  # absurd nesting must not crash the check
                    pos = entity.pos
                    diagnostics.append(
                        error(
                            "E204",
                            "this block nests too deeply to be read",
                            Position(pos.file, pos.line, pos.column, pos.line, pos.column + len(entity.kind)),
                            "split long expressions; nesting is limited to a few hundred levels",
                        )
                    )
            if not validator.is_valid([doc for _, doc in batch]):
                for entity, doc in batch:
                    diagnostics += _check_document(entity, doc, kind)
    return diagnostics


def check(entity: Entity, kind: Kind) -> list[Diagnostic]:
    return _check_document(entity, document(entity), kind)


def _check_document(entity: Entity, doc: dict[str, Any], kind: Kind) -> list[Diagnostic]:
    if _fast_validator(_schema_text(kind)).is_valid(doc):
        return []
    _, slow = validators(kind)
    names = tuple(kind.fields)
    errors = list(slow.iter_errors(doc))
    # A misspelt field is one mistake: report the unknown name, not also the field it was meant to be.
    misspelt = {
        close
        for field in doc
        if field not in kind.fields and field not in ("kind", "id", "name", "rows")
        for close in difflib.get_close_matches(field, names, n=1, cutoff=0.6)
    }
    diagnostics = []
    for err in errors:
        if err.context:  # anyOf/oneOf: report the branch that came closest
            err = _closest(err)
        path = tuple(err.absolute_path)
        if path and path[0] in entity.failed:
            continue  # the value could not be read; that was already reported
        if err.validator in ("required", "additionalProperties") and not path:
            # every missing and every unknown field, each at its own place (a missing one at the header)
            for field in fields_named(err):
                if field in entity.failed or field in misspelt:
                    continue  # reported where it was written (a misspelt field is reported as unknown)
                message, hint = describe(err, kind, field)
                pos = entity.position(field) if err.validator == "additionalProperties" else entity.position()
                diagnostics.append(error("E210", message, pos, hint, suggestions_of(err, field)))
            continue
        message, hint = describe(err, kind)
        diagnostics.append(error("E210", message, entity.position(*path), hint, suggestions_of(err)))
    return diagnostics


_MARKERS = ({"type": "null"}, {"$ref": "#/$defs/unknown"})  # `none` and `unknown`, which an optional field may be


def _closest(err: ValidationError) -> ValidationError:
    """The error of an anyOf's branch that came closest. The markers of an optional field (`none`, `unknown`)
    are never what was meant by a value that is neither: a bounded optional field out of its bounds is
    told its bounds, not that it must be nothing."""
    from jsonschema.exceptions import best_match

    branches: Any = err.validator_value if err.validator == "anyOf" else ()
    markers = {i for i, branch in enumerate(branches) if branch in _MARKERS}
    meant = [e for e in err.context if not (e.relative_schema_path and e.relative_schema_path[0] in markers)]
    return best_match(meant or err.context) or err
