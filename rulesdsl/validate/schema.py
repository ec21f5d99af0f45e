"""Schema validation: each lowered document against its kind's JSON Schema (Draft 2020-12).

Errors are reported at the source position of the offending field and worded for people; the raw
validator output never reaches a user.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from ..diagnostics import Diagnostic, did_you_mean, error
from ..kinds import Kind, bundled_schema, kinds
from ..lower import Entity


@cache
def validator(kind_name: str) -> Draft202012Validator:
    """The reference validator: slow, but it explains every failure."""
    return Draft202012Validator(bundled_schema(kind_name))


@cache
def fast_validator(kind_name: str) -> Any:
    """jsonschema-rs, when installed: answers valid-or-not ~100x faster; failures go to `validator`."""
    try:
        import jsonschema_rs
    except ImportError:  # pragma: no cover - it is a dependency, but the slow path is complete on its own
        return None
    return jsonschema_rs.Draft202012Validator(bundled_schema(kind_name))


def _field_words(path: Iterable[str | int]) -> str:
    parts = [str(p) for p in path if not isinstance(p, int)]
    return ".".join(parts) or "value"


def describe(err: ValidationError, kind: Kind) -> tuple[str, str | None]:
    """A schema error in words (message, hint)."""
    where = _field_words(err.absolute_path)
    # jsonschema's attributes are loosely typed; read them once as plain values
    v: Any = err.validator
    expected: Any = err.validator_value
    schema: Any = err.schema
    instance: Any = err.instance
    if v == "additionalProperties":
        allowed = list(schema.get("properties", {}))
        extra = sorted(set(instance) - set(allowed))
        field = extra[0] if extra else "?"
        if not err.absolute_path:
            return f"a {kind.name} has no field '{field}'", did_you_mean(field, allowed) or (
                "fields: " + ", ".join(f for f in allowed if f not in ("kind", "id", "name"))
            )
        return f"'{where}' has no part '{field}'", did_you_mean(field, allowed)
    if v == "required":
        missing = [f for f in expected if f not in instance]
        field = missing[0] if missing else "?"
        if not err.absolute_path:
            return f"a {kind.name} needs a '{field}' field", None
        return f"'{where}' needs '{field}'", None
    if v == "enum":
        return f"'{where}' must be one of: {', '.join(map(str, expected))}", did_you_mean(
            str(instance), map(str, expected)
        )
    if v == "const":
        return f"'{where}' must be {expected!r}", None
    if v == "pattern":
        return f"'{where}' is not well formed: {instance!r}", _pattern_hint(str(expected))
    if v == "type":
        return f"'{where}' must be {_type_words(expected)}", None
    if v in ("minimum", "maximum"):
        return f"'{where}' must be {'at least' if v == 'minimum' else 'at most'} {expected}, not {instance}", None
    if v in ("minItems", "maxItems"):
        return (
            f"'{where}' needs {'at least' if v == 'minItems' else 'at most'} {expected} item{'s' * (expected != 1)}",
            None,
        )
    if v in ("minLength", "maxLength"):
        if v == "maxLength":
            return f"'{where}' is too long ({len(instance)} characters, at most {expected})", (
                "keep descriptions to one short line in your own words"
            )
        return f"'{where}' must not be empty", None
    if v == "dependentRequired":
        return f"'{where}' is incomplete", None
    return f"'{where}' is not valid here", None


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
    if pattern.startswith("^[A-Z]"):
        return "abbreviations are upper-case letters and digits"
    return None


def check(entity: Entity) -> list[Diagnostic]:
    fast = fast_validator(entity.kind)
    if fast is not None and fast.is_valid(entity.doc):
        return []
    kind = kinds()[entity.kind]
    errors = list(validator(entity.kind).iter_errors(entity.doc))
    # A misspelt field is one mistake: report the unknown name, not also the field it was meant to be.
    misspelt = {
        close
        for field in entity.doc
        if field not in kind.fields
        for close in difflib.get_close_matches(field, kind.fields, n=1, cutoff=0.6)
    }
    diagnostics = []
    for err in errors:
        if err.context:  # anyOf/oneOf: report the branch that came closest
            err = best_match(err.context) or err
        path = tuple(err.absolute_path)
        if path and path[0] in entity.failed_fields:
            continue  # the value could not be read; that was already reported
        required: Any = err.validator_value
        if (
            err.validator == "required"
            and not path
            and any(f in entity.failed_fields or f in misspelt for f in required if f not in entity.doc)
        ):
            continue
        message, hint = describe(err, kind)
        pos = entity.position(path)
        if err.validator == "additionalProperties" and not path:
            instance: Any = err.instance
            extra = sorted(set(instance) - set(kind.fields))
            pos = entity.position((extra[0],)) if extra else pos
        diagnostics.append(error("E210", message, pos, hint))
    return diagnostics
