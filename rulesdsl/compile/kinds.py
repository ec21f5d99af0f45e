"""Kinds: what entities of each kind may say, declared once in the language.

Every kind is a `kind` declaration; the built-in ones are declared in prelude.rules, shipped with
rulesdsl, and a ruleset may declare kinds of its own (or `override` a built-in one). From a kind's
fields everything else derives: how lowering reads each value, the JSON Schema, the dataclass in the
generated package, the reference page and the docs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import cast

from rulesdsl.compile.ir import Value
from rulesdsl.diagnostics import Diagnostic, error, naming_hint, suggest
from rulesdsl.language.fieldtypes import (
    FieldType,
    ListType,
    MapType,
    MarkdownType,
    RecordField,
    RecordType,
    TextType,
)
from rulesdsl.reprs import plain_methods
from rulesdsl.resources import PRELUDE
from rulesdsl.syntax.tree import Position

PRELUDE_PATH = PRELUDE

# Kinds the compiler itself gives meaning to (formulas, tables, dice): declared in the prelude like the
# others, but a ruleset cannot replace them.
CORE_KINDS = ("ruleset", "table", "attribute", "formula", "mechanic")


def no_such_kind(named: str, kinds: Iterable[str], pos: Position | None) -> Diagnostic:
    """E407: `ref NAME` naming no kind, in a kind's field or a table's key or column."""
    close = suggest(named, kinds)
    hint = naming_hint(close) or f'name a kind there is, or declare this one: kind {named} "{named}" {{ name: text }}'
    return error("E407", f"'ref {named}' names no kind", pos, hint, close)


@dataclass(frozen=True, slots=True)
class FieldDecl:
    name: str
    type: FieldType
    optional: bool
    default: Value | None  # what a left-out field means (already read as that type)
    doc: str | None
    pos: Position | None


def record_fields(record: RecordType) -> tuple[FieldDecl, ...]:
    """A record type's fields as a kind's are declared: what reads, checks and emits a kind's fields reads a
    record's the same way. (Their defaults were read by lowering: IR values.)"""
    return tuple(
        FieldDecl(f.name, f.type, f.optional, cast(Value | None, f.default), f.doc, f.pos) for f in record.fields
    )


def record_types(field_type: FieldType, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], RecordType]]:
    """The record types inside a field's type (in lists, maps and other records), inner ones first, each with
    the names of the record fields that lead to it from the field (`()` for the field's own record)."""
    match field_type:
        case ListType(item) | MapType(item):
            yield from record_types(item, path)
        case RecordType(fields):
            for inner in fields:
                yield from record_types(inner.type, (*path, inner.name))
            yield path, field_type
        case _:
            pass


def record_required(record: RecordType) -> tuple[str, ...]:
    """The fields a record must give: neither optional nor with a default."""
    return tuple(f.name for f in record.fields if not f.optional and f.default is None)


# The fields every entity has besides its id and name.
COMMON_FIELDS = (
    FieldDecl("source", TextType(), True, None, "where the facts come from (page or section)", None),
    FieldDecl("uncertain", TextType(), True, None, "what could not be read with certainty", None),
    FieldDecl("note", TextType(), True, None, "one short line in the author's own words", None),
    FieldDecl(
        "aliases",
        ListType(TextType()),
        True,
        None,
        "other names the sources use for it (abbreviations, misprints); references may use them",
        None,
    ),
    FieldDecl("description", MarkdownType(), True, None, "what it is or does, in the author's own words", None),
)
COMMON_NAMES = frozenset(f.name for f in COMMON_FIELDS)


@dataclass(frozen=True, slots=True)
class Kind:
    name: str
    title: str
    fields: Mapping[str, FieldDecl]  # its own fields in declaration order, then the common ones
    builtin: bool  # declared in the prelude
    pos: Position | None
    # Hashed by value, once: what is derived from a kind (its schema, validators) is cached by kind, and a
    # kind declared again unchanged, as every compile of a language server does, must find it.
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "_hash", hash((self.name, self.title, tuple(self.fields.items()), self.builtin, self.pos))
        )

    def __hash__(self) -> int:
        return self._hash

    @property
    def own_fields(self) -> tuple[FieldDecl, ...]:
        return tuple(f for f in self.fields.values() if f.name not in COMMON_NAMES)

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields.values() if not f.optional and f.default is None)

    @property
    def has_rows(self) -> bool:
        return self.name == "table"


def plural(kind: str) -> str:
    """`lifepath` -> `lifepaths`, `class` -> `classes`, `category` -> `categories`: module and registry
    names in packages."""
    if kind.endswith("y") and len(kind) > 1 and kind[-2] not in "aeiou":
        return kind[:-1] + "ies"
    return kind + ("es" if kind.endswith(("s", "x", "ch", "sh")) else "s")


def class_name(kind: str) -> str:
    """`lifepath` -> `Lifepath`, `hit_location` -> `HitLocation`."""
    return "".join(part.capitalize() for part in kind.split("_") if part) or "Entity"


# ---------------------------------------------------------------- defaults

# What is done to a default: (the field's name, its declared type, the default) -> the default as it is now.
DefaultChange = Callable[[str, FieldType, Value], Value]


def with_defaults(kind: Kind, change: DefaultChange) -> Kind:
    """The kind with `change` applied to every default it declares: its fields' and, at any depth, those of the
    records in their types (`fist: record { reach: int = 1 } = { ... }`). The checks run each stage an entity's
    values go through (references, formulas' names and types, checks' mechanics) over the defaults too, so
    that a default is checked as the value is where an entity writes it. Nothing changed: the same kind."""
    fields = {name: _changed_decl(decl, change) for name, decl in kind.fields.items()}
    if all(fields[name] is decl for name, decl in kind.fields.items()):
        return kind
    return replace(kind, fields=fields)


def defaults(kind: Kind) -> list[tuple[str, FieldType, Value]]:
    """Every default the kind declares (see `with_defaults`): the field's name, its type, the default."""
    found: list[tuple[str, FieldType, Value]] = []

    def note(name: str, field_type: FieldType, value: Value) -> Value:
        found.append((name, field_type, value))
        return value

    with_defaults(kind, note)
    return found


def _changed_decl(decl: FieldDecl, change: DefaultChange) -> FieldDecl:
    default = change(decl.name, decl.type, decl.default) if decl.default is not None else None
    field_type = _changed_type(decl.type, change)
    if default is decl.default and field_type is decl.type:
        return decl
    return replace(decl, default=default, type=field_type)


def _changed_type(field_type: FieldType, change: DefaultChange) -> FieldType:
    """A field type with `change` applied to the defaults of its records' fields, at any depth."""
    match field_type:
        case RecordType(fields):
            inner = tuple(_changed_record_field(f, change) for f in fields)
            return field_type if all(a is b for a, b in zip(inner, fields, strict=True)) else RecordType(inner)
        case ListType(item):
            new = _changed_type(item, change)
            return field_type if new is item else replace(field_type, item=new)
        case MapType(value):
            new = _changed_type(value, change)
            return field_type if new is value else replace(field_type, value=new)
        case _:
            return field_type


def _changed_record_field(record_field: RecordField, change: DefaultChange) -> RecordField:
    written = cast(Value | None, record_field.default)
    default = change(record_field.name, record_field.type, written) if written is not None else None
    field_type = _changed_type(record_field.type, change)
    if default is written and field_type is record_field.type:
        return record_field
    return replace(record_field, default=default, type=field_type)


plain_methods(globals())
