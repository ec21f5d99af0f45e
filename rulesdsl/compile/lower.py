"""Lowering: the syntax tree becomes the typed IR.

A `kind` declaration becomes a `kinds.Kind`; every other block becomes an `ir.Entity` whose fields are
read by the type its kind declares for them (one `match` over the field types). Lowering checks shapes
(a number where a number belongs) and every constraint a type declares, wherever a value is written
(bounds, text lengths, options, list lengths: `fieldtypes.constraint_problem`); which fields a block must
and may have is the JSON Schema's, and references are resolved by the semantic stage.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache
from typing import assert_never

from rulesdsl.compile import ir
from rulesdsl.compile.jsonform import value_json
from rulesdsl.compile.kinds import COMMON_FIELDS, FieldDecl, Kind, record_fields, record_required
from rulesdsl.diagnostics import Diagnostic, did_you_mean, error, naming_hint, suggest
from rulesdsl.language import fieldtypes as t
from rulesdsl.language.names import slug
from rulesdsl.language.words import NONE_WORDS, TRUTH_WORDS
from rulesdsl.runtime import odds as rt_odds
from rulesdsl.syntax import tree as m
from rulesdsl.syntax.written import FUNCTIONS, expr_text, expr_text_names, quote

Path = tuple[str | int, ...]

CONDITIONS = ("age", "age_at_entry", "position", "lifepaths", "times_taken", "gender")
_BOOLEANS = TRUTH_WORDS
_YEARS = {"yr", "yrs", "year", "years"}
_POINTS = {"pt", "pts"}
MAX_DEPTH = 100  # expression nesting; every later stage walks values recursively
# Limits (docs/diagnostics.md, "Limits"): far beyond any book, and they bound what the odds and checks cost.
MAX_DICE = 100  # E205: dice in one roll, all its terms together
MAX_SIDES = 1000  # E206: sides of one die
MAX_REPEAT = 100  # `N x table`: rolls one cell asks for (a whole chain stops at the runtime's MAX_CHAIN)


class LoweringError(Exception):
    def __init__(
        self,
        message: str,
        pos: m.Position,
        hint: str | None = None,
        code: str = "E201",
        suggestions: Sequence[str] = (),
    ) -> None:
        super().__init__(message)
        self.diagnostic = error(code, message, pos, hint, suggestions)


def describe(value: m.Value) -> str:
    """What a value looks like, in words, for messages."""
    match value:
        case m.Integer():
            return "a number"
        case m.Decimal():
            return "a decimal number"
        case m.String():
            return "a quoted string"
        case m.Name():
            return "a name"
        case m.Dice() | m.DiceCount():
            return "dice"
        case m.Multiplier():
            return "a multiplier"
        case m.AtLeast() | m.OpenRange():
            return "an open range"
        case m.ClosedRange():
            return "a range"
        case m.Quantity():
            return "a quantity"
        case m.Points():
            return "a points list"
        case m.ValueList():
            return "a list"
        case m.Binary():
            return "an arithmetic expression"
        case m.Negative():
            return "a negative expression"
        case m.Call():
            return "a function call"
        case m.Subscript():
            return "a lookup"
        case m.Attribute():
            return "a field of an entity"
        case m.Caret():
            return "a caret number"
        case m.Comparison():
            return "a comparison"
        case m.Membership():
            return "a range test"
        case m.AnyOf():
            return "an 'or' expression"
        case m.AllOf():
            return "an 'and' expression"
        case m.Not():
            return "a 'not' expression"
        case m.HasTrait():
            return "a trait condition"
        case m.HasSkill():
            return "a skill condition"
        case m.Holds(kind):
            return f"a {kind.text} condition"
        case m.CountOf():
            return "a count condition"
        case m.RefMarker():
            return "a 'ref' type"
        case m.Repeat():
            return "rolls on a table (N x table)"
        case m.Check():
            return "a check"
        case m.Record():
            return "a record ({ ... })"
        case m.MapEntry():
            return "a map's entry (a key and a value)"
        case _:
            assert_never(value)


# In a default a name and then a string are the default and the field's doc: a map's entry with text is braced.
def _key_example(key_type: t.FieldType) -> str:
    """A key a map of this key type could have, for hints; a word's example is the docs' (land 25)."""
    example = t.example_text(key_type) if isinstance(key_type, t.EnumType | t.RefType) else None
    return example or "land"


_SPLIT_HINT = "split it into smaller formulas"
_ROWS_HINT = "move the rows into a table of their own: table NAME { roll: 1d6  columns: x  1-3 -> a ... }"
_BRACED_ENTRIES = 'a name and then a string are a default and its doc: write text entries in braces, = { home: "Keep" }'


def _fail(expected: str, value: m.Value, hint: str | None = None) -> LoweringError:
    """The value has the wrong shape (E201); without a hint of its own, the hint says what goes in its place."""
    return LoweringError(f"expected {expected}, got {describe(value)}", value.pos, hint or _instead(expected, value))


def _instead(expected: str, value: m.Value) -> str:
    shown = expr_text(value, written=True)
    if len(shown) > 40 or "\n" in shown:
        return f"write {expected} here"
    return f"in place of {shown}, write {expected}"


def items_of(value: m.Value) -> tuple[m.Value, ...]:
    return value.items if isinstance(value, m.ValueList) else (value,)


# Every entity keeps where each of its parts was written, by path: the same few paths, shared rather than made
# again for each of thousands of entities.
_PATHS: dict[Path, Path] = {}


_PATHS_KEPT = 1 << 16  # far more than one ruleset uses; new field names, edit after edit, must not grow it for ever


def _path(path: Path) -> Path:
    if len(_PATHS) >= _PATHS_KEPT and path not in _PATHS:
        _PATHS.clear()
    return _PATHS.setdefault(path, path)


# Values with no values inside: their depth is 1, known without looking.
def multiplier_fraction(value: m.Multiplier) -> Fraction:
    """What `x3/2` multiplies by; a zero below the line is a mistake, not a number."""
    if value.denominator == 0:
        number = value.numerator
        raise LoweringError(f"x{number}/0 divides by zero", value.pos, f"write x{number} or x{number}/2", "E201")
    return Fraction(value.numerator, value.denominator)


_FLAT = frozenset({m.Integer, m.Decimal, m.String, m.Name, m.Dice, m.Multiplier, m.AtLeast, m.Quantity, m.Caret})


def depth(value: object) -> int:
    """How deeply a value nests (counted without recursion, so any input is safe to measure)."""
    if type(value) in _FLAT:
        return 1
    if type(value) in (m.ValueList, m.Points) and all(type(item) in _FLAT for item in value.items):  # type: ignore[attr-defined]
        return 2
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


# ---------------------------------------------------------------- kind declarations


def _number(value: m.Integer | m.Decimal | None) -> Fraction | None:
    if value is None:
        return None
    return Fraction(value.value) if isinstance(value, m.Integer) else Fraction(value.text)


def field_type(written: m.TypeExpr) -> t.FieldType:
    """A type expression as a field type; LoweringError for unknown names and misplaced bounds."""
    match written:
        case m.SimpleType(name, low, high, bounded):
            simple = t.SIMPLE.get(name.text)
            if simple is None:
                close = suggest(name.text, t.SIMPLE)
                raise LoweringError(
                    f"unknown field type '{name.text}'",
                    name.pos,
                    naming_hint(close) or "types: " + ", ".join(t.SIMPLE),
                    code="E401",
                    suggestions=close,
                )
            if not bounded:
                return simple
            lo, hi = _number(low), _number(high)
            if lo is not None and hi is not None and lo > hi:
                raise LoweringError(f"the range {lo}..{hi} runs backwards", written.pos, f"write {hi}..{lo}", "E402")
            if isinstance(simple, t.IntType):
                if any(b is not None and b.denominator != 1 for b in (lo, hi)):
                    raise LoweringError(
                        "an int's bounds are whole numbers",
                        written.pos,
                        "write int in 1..5, or number in 0.5..2",
                        "E402",
                    )
                return t.IntType(None if lo is None else int(lo), None if hi is None else int(hi))
            if isinstance(simple, t.NumberType):
                return t.NumberType(lo, hi)
            raise LoweringError(
                f"only int and number take bounds, not {name.text}", written.pos, "write int in 1..5", "E402"
            )
        case m.EnumType(options):
            texts = [o.text if isinstance(o, m.Name) else o.value for o in options]
            if len(set(texts)) != len(texts):
                repeated = next(x for x in texts if texts.count(x) > 1)
                raise LoweringError(f"'{repeated}' is listed twice", written.pos, f"list '{repeated}' once", "E402")
            return t.EnumType(tuple(texts))
        case m.RefType(kind):
            return t.RefType(kind.text)
        case m.ListType(item, low, high):
            lo, hi = _number(low), _number(high)
            if any(b is not None and (b.denominator != 1 or b < 0) for b in (lo, hi)) or (
                lo is not None and hi is not None and lo > hi
            ):
                raise LoweringError(
                    "a list's length is a range of whole numbers, like 1..2",
                    written.pos,
                    "write list in 1..2 of word (at least 1, at most 2 items)",
                    "E402",
                )
            inner = field_type(item)
            if isinstance(inner, t.ListType | t.ChoicesType | t.OfferType | t.ColumnsType):
                raise LoweringError(
                    "lists hold single values, not lists",
                    item.pos,
                    "group values in a record: list of record { ... }",
                    "E402",
                )
            return t.ListType(inner, 0 if lo is None else int(lo), None if hi is None else int(hi))
        case m.PointsType(item):
            inner = field_type(item)
            if not isinstance(inner, t.RefType):
                raise LoweringError(
                    "points buy entities: write points of ref skill",
                    item.pos,
                    "name the kind they buy after ref",
                    "E402",
                )
            return t.ChoicesType(inner.kind)
        case m.OfferType(item):
            inner = field_type(item)
            if not isinstance(inner, t.RefType):
                raise LoweringError(
                    "choices are of entities: write choices of ref talent",
                    item.pos,
                    f"in place of {t.type_text(inner)}, name the kind offered: choices of ref KIND",
                    "E402",
                )
            return t.OfferType(inner.kind)
        case m.CheckType(mechanic):
            return t.CheckType(mechanic.text if mechanic is not None else None)
        case m.NamedType(name, names):
            if name.text != "formula":
                raise LoweringError(
                    f"only a formula names what it is computed from, not {name.text}",
                    written.pos,
                    "write formula of slot, level",
                    code="E402",
                )
            texts = [n.text for n in names]
            if len(set(texts)) != len(texts):
                repeated = next(x for x in texts if texts.count(x) > 1)
                raise LoweringError(f"'{repeated}' is listed twice", written.pos, f"list '{repeated}' once", "E402")
            return t.FormulaType(tuple(slug(x) for x in texts))
        case m.MapType(value, key):
            inner = field_type(value)
            if isinstance(inner, t.ChoicesType | t.ColumnsType | t.MapType):
                raise LoweringError(
                    "a map holds single values or lists of them",
                    value.pos,
                    "write map of int, or map of list of word",
                    "E402",
                )
            if key is None:
                return t.MapType(inner)
            key_type = field_type(key)
            if not isinstance(key_type, t.WordType | t.RefType | t.EnumType):
                raise LoweringError(
                    f"a map's keys are words, references or options, not {t.type_text(key_type)}",
                    key.pos,
                    "write map of int by ref skill, or map of int by one of land, climb",
                    code="E402",
                )
            return t.MapType(inner, key_type)
        case m.RecordType(fields):
            if not fields:
                raise LoweringError("a record declares its fields", written.pos, "record { name: text }", "E402")
            return t.RecordType(tuple(_record_field(f, fields) for f in fields))
        case _:
            assert_never(written)


def _record_field(written: m.KindField, siblings: tuple[m.KindField, ...]) -> t.RecordField:
    """One field of a record type, read as a kind's field is (its type, default, `?` and doc)."""
    if next(f for f in siblings if f.key == written.key) is not written:
        raise LoweringError(
            f"field '{written.key}' is declared twice", written.key_pos, f"declare '{written.key}' once", code="E403"
        )
    declared = field_type(written.type)
    default = None
    if written.default is not None:
        default = _Reader(defaults=True).read(declared, written.default, (written.key,))
    default_text = expr_text(written.default, written=True) if written.default is not None else None
    doc = written.doc.value if written.doc is not None else None
    return t.RecordField(written.key, declared, written.optional, default, default_text, doc, written.key_pos)


def declare_kind(decl: m.KindDecl, *, builtin: bool) -> tuple[Kind, list[Diagnostic]]:
    """A kind declaration as a Kind; fields that cannot be read are reported and left out."""
    diagnostics: list[Diagnostic] = []
    fields: dict[str, FieldDecl] = {}
    common = {f.name: f for f in COMMON_FIELDS}
    for written in decl.fields:
        if written.key in fields or written.key in ("kind", "id", "name", "rows"):
            twice = written.key in fields
            what = "declared twice" if twice else "reserved"
            hint = f"declare '{written.key}' once: remove one of the two" if twice else "choose another name"
            diagnostics.append(error("E403", f"field '{written.key}' is {what}", written.pos, hint))
            continue
        if written.key in common:
            diagnostics.append(
                error("E403", f"every kind already has a '{written.key}' field", written.pos, "choose another name")
            )
            continue
        try:
            declared = field_type(written.type)
            default = None
            if written.default is not None:
                # a default must be a value the field could be given: the reader keeps its constraints
                default = _Reader(defaults=True).read(declared, written.default, (written.key,))
        except LoweringError as exc:
            diagnostics.append(exc.diagnostic)
            continue
        doc = written.doc.value if written.doc is not None else None
        fields[written.key] = FieldDecl(written.key, declared, written.optional, default, doc, written.pos)
    title = decl.title.value if decl.title is not None else decl.name.text
    kind = Kind(decl.name.text, title, {**fields, **common}, builtin, decl.name.pos)
    return kind, diagnostics


# ---------------------------------------------------------------- values


@dataclass
class _Reader:
    """Reads written values by their field type, remembering where each part was written."""

    positions: dict[Path, m.Position] = field(default_factory=dict)
    defaults: bool = False  # reading the defaults of a kind declaration: a broken constraint is E402 there

    def read(self, field_type: t.FieldType, value: m.Value, path: Path) -> ir.Value:
        """The value as its type reads it, keeping every constraint its type declares."""
        result = self.shape(field_type, value, path)
        if type(field_type) not in t.CONSTRAINED:  # most values: references, dice, formulas, requirements
            return result
        problem = t.constraint_problem(field_type, result)
        if problem is not None:
            close = t.suggestions_for(field_type, result)
            raise LoweringError(f"{self.about(path)} {problem[0]}", value.pos, problem[1], self.code, close)
        return result

    @property
    def code(self) -> str:
        return "E402" if self.defaults else "E210"

    def about(self, path: Path) -> str:
        """Who a constraint is about, in words: a field (or an item of it: the caret says which), a table cell,
        a default."""
        if path[0] == "rows":
            return "the cell"  # `cell` says which column
        # a record's field or a map's entry is named with the field it is in: 'strikes.reach'
        named = ".".join(part for part in path if isinstance(part, str))
        return f"the default of '{named}'" if self.defaults else f"'{named}'"

    def shape(self, field_type: t.FieldType, value: m.Value, path: Path) -> ir.Value:
        """The value read by its type: its shape, not yet its constraints."""
        self.positions[_PATHS.setdefault(path, path)] = value.pos
        # The commonest types first: the cases are tried in order (they never overlap).
        match field_type:
            case t.RefType(kind):
                return self.ref(kind, value)
            case t.ListType(item):
                result = []
                for i, element in enumerate(items_of(value)):
                    result.append(self.read(item, element, (*path, i)))
                return tuple(result)
            case t.TextType() | t.MarkdownType():
                return self.text(value)
            case t.IntType():
                return self.integer(value)
            case t.ChoicesType(kind):
                return self.choices(kind, value)
            case t.OfferType(kind):
                return self.offer(kind, value, path)
            case t.YearsType():
                return self.counted(value, _YEARS, "a number of years (like 8 yrs)")
            case t.StatBonusType():
                return self.stat_bonus(value)
            case t.RequirementType():
                return self.requirement(value)
            case t.BoolType():
                if isinstance(value, m.Name) and value.text.lower() in _BOOLEANS:
                    return _BOOLEANS[value.text.lower()]
                raise _fail("yes or no", value)
            case t.EnumType(options):
                written = self.text(value)
                # `Will` is the option `will`: options match as names do, by their slug
                return next((o for o in options if o == written or slug(o) == slug(written)), written)
            case t.NumberType():
                return self.number(value)
            case t.DiceType():
                return dice_of(value)
            case t.FormulaType() | t.ObstacleType():
                return self.formula(value)
            case t.RangeType():
                return range_of(value, allow_dash=False)
            case t.MultiplierType():
                if isinstance(value, m.Multiplier):
                    return ir.Multiplier(multiplier_fraction(value), value.pos)
                raise _fail("a multiplier (like x2 or x1/2)", value)
            case t.WordType():
                if isinstance(value, m.Name | m.String):
                    return slug(self.text(value))
                raise _fail("a name", value)
            case t.AbbreviationType():
                if isinstance(value, m.Name):
                    return value.text
                raise _fail("an abbreviation (like AGL)", value)
            case t.VersionType():
                if isinstance(value, m.String):
                    return value.value
                raise _fail('a version in quotes (like "0.1.0")', value)
            case t.PointsType():
                return self.counted(value, _POINTS, "points (like 2 pts)")
            case t.ActionsType():
                if isinstance(value, m.Integer):
                    return ir.Actions(value.value, False, value.pos)
                if isinstance(value, m.Multiplier) and value.denominator == 1:
                    return ir.Actions(value.numerator, True, value.pos)
                raise _fail("a number of actions (10) or a multiple of the obstacle (x3)", value)
            case t.ColumnsType(params):
                return self.params(value, path) if params else self.columns(value, path)
            case t.RollType():
                return roll_of(value)
            case t.MapType(value_type, key_type):
                return self.map_value(value_type, key_type, value, path)
            case t.RecordType() as record_type:
                return self.record(record_type, value, path)
            case t.RollsType():
                return self.rolls(value)
            case t.CheckType(mechanic):
                if not isinstance(value, m.Check):
                    raise _fail("a check (like check END 5+)", value)
                # `check 8+` adds nothing: a modifier of 0, where the target is written
                modifier_value = value.modifier if value.modifier is not None else m.Integer(0, value.target_pos)
                modifier = self.formula(modifier_value)
                named = ir.Ref("mechanic", mechanic, value.pos) if mechanic is not None else None
                return ir.CheckSpec(modifier, value.target, named, value.pos)
            case _:
                assert_never(field_type)

    # ---- records and maps
    def record(self, record_type: t.RecordType, value: m.Value, path: Path) -> ir.Record:
        """`{ name: "Dogslicer"  to_hit: 8 }`: every field its type declares, each read by its own type."""
        if not isinstance(value, m.Record):
            names = "  ".join(f"{f.name}: ..." for f in record_type.fields[:2])
            raise _fail("a record", value, f"write {{ {names} }}")
        declared = {decl.name: decl for decl in record_fields(record_type)}
        given: dict[str, ir.Value] = {}
        for fld in value.fields:
            decl = declared.get(fld.key)
            if decl is None:
                raise LoweringError(
                    f"the record in {self.about(path)} has no field '{fld.key}'",
                    fld.key_pos,
                    did_you_mean(fld.key, declared) or "its fields: " + ", ".join(declared),
                    self.code,
                )
            if fld.key in given:
                raise LoweringError(
                    f"the record gives '{fld.key}' twice", fld.key_pos, f"give '{fld.key}' once", code="E202"
                )
            inner = (*path, fld.key)
            if isinstance(fld.value, m.Name) and fld.value.text in ("unknown", *NONE_WORDS):
                given[fld.key] = _absent(fld.value, decl)
                self.positions[_path(inner)] = fld.value.pos
            else:
                given[fld.key] = self.read(decl.type, fld.value, inner)
        missing = [name for name in record_required(record_type) if name not in given]
        if missing:
            raise LoweringError(
                f"the record in {self.about(path)} needs '{missing[0]}'"
                + (f" (and {', '.join(repr(x) for x in missing[1:])})" if missing[1:] else ""),
                value.pos,
                f"add {missing[0]}: ... inside the braces",
                self.code,
            )
        order = tuple(name for name in declared if name in given)
        return ir.Record(order, tuple(given[name] for name in order), value.pos)

    def map_value(self, value_type: t.FieldType, key_type: t.FieldType, value: m.Value, path: Path) -> ir.MapValue:
        """`land 25, climb 10`, or `{ land: 25  climb: 10 }` (any value, `fire: -2`): keys read by the key type."""
        written = [(m.Name(f.key, f.key_pos), f.value) for f in value.fields] if isinstance(value, m.Record) else None
        entries: list[tuple[str | ir.Ref, ir.Value]] = []
        seen: dict[str, m.Name] = {}
        for item in written if written is not None else items_of(value):
            match item:
                case (m.Name() as key, entry):
                    pass
                case m.MapEntry(key, entry) | m.Holds(key, entry):  # `fly yes`: the grammar reads two names as Holds
                    pass
                case _:
                    hint = f"put a key before the value: {_key_example(key_type)} {expr_text(item, written=True)}"
                    if self.defaults and isinstance(item, m.Name):  # `= home "Keep"`: the default, then its doc
                        hint = _BRACED_ENTRIES
                    raise _fail("a map's entry: a name and its value (like land 25)", item, hint)
            read_key = self.map_key(key_type, key, path)
            spelt = ir.map_key(read_key)
            if spelt in seen:
                first = seen[spelt].pos
                raise LoweringError(
                    f"{self.about(path)} gives '{key.text}' twice (first at line {first.line})",
                    key.pos,
                    f"a map gives each key once: keep one '{key.text}' entry",
                )
            seen[spelt] = key
            entries.append((read_key, self.read(value_type, entry, (*path, spelt))))
        return ir.MapValue(tuple(k for k, _ in entries), tuple(v for _, v in entries), value.pos)

    def map_key(self, key_type: t.FieldType, key: m.Name, path: Path) -> str | ir.Ref:
        """A key as its type reads it: a word (its slug), a reference (resolved later), one of the options."""
        match key_type:
            case t.RefType(kind):
                return self.ref(kind, key)
            case t.EnumType(options):
                found = next((o for o in options if o == key.text or slug(o) == slug(key.text)), None)
                if found is None:
                    raise LoweringError(
                        f"{self.about(path)} has no key '{key.text}': its keys are " + ", ".join(options),
                        key.pos,
                        did_you_mean(key.text, options) or f"write one of them, or add {key.text} to the options",
                        self.code,
                    )
                return found
            case _:
                return slug(key.text)

    # ---- scalars
    def text(self, value: m.Value) -> str:
        if isinstance(value, m.String):
            return value.value
        if isinstance(value, m.Name):
            return value.text
        if isinstance(value, m.Integer):
            return str(value.value)
        raise _fail("text", value, 'quote it: "..."')

    def integer(self, value: m.Value) -> int:
        if isinstance(value, m.Integer):
            return value.value
        raise _fail("a whole number", value, _instead("a whole number (like 3)", value))

    def number(self, value: m.Value) -> int | Fraction:
        match value:
            case m.Integer(number):
                return number
            case m.Decimal(text):
                return Fraction(text)
            case m.Negative(m.Decimal(text)):
                return -Fraction(text)
            case m.Binary("/", m.Integer(a), m.Integer(b)) if b != 0:
                return Fraction(a, b)
        raise _fail("a number (like 3, 1.5 or 1/3)", value)

    def counted(self, value: m.Value, units: set[str], expected: str) -> int:
        if isinstance(value, m.Quantity) and value.unit.lower() in units and not value.signed:
            return value.amount
        if isinstance(value, m.Integer):
            return value.value
        raise _fail(expected, value)

    def stat_bonus(self, value: m.Value) -> ir.StatBonus:
        bonus = {"mental": 0, "physical": 0, "either": 0}
        slots = {"m": "mental", "p": "physical", "m/p": "either", "p/m": "either"}
        for item in items_of(value):
            if isinstance(item, m.Integer) and item.value == 0:
                continue
            if not isinstance(item, m.Quantity) or item.unit.lower() not in slots:
                raise _fail("a stat bonus (+1 M, +1 P or +1 M/P)", item)
            bonus[slots[item.unit.lower()]] += item.amount
        return ir.StatBonus(bonus["mental"], bonus["physical"], bonus["either"], value.pos)

    # ---- references
    def ref(self, kind: str, value: m.Value) -> ir.Ref:
        if isinstance(value, m.Name):
            return ir.Ref(kind, value.text, value.pos)
        if isinstance(value, m.String):
            return ir.Ref(kind, value.value, value.pos)
        raise _fail(f"the name of a {kind}", value)

    def choices(self, kind: str, value: m.Value) -> ir.Choices:
        if isinstance(value, m.Quantity | m.Integer):
            return ir.Choices(self.counted(value, _POINTS, "points (like 2 pts)"), (), value.pos)
        if not isinstance(value, m.Points):
            raise _fail(f"points and {kind}s (like 2 pts: A, B)", value)
        options = []
        for item in value.items:
            alternatives = item.items if isinstance(item, m.AnyOf) else (item,)
            options.append(tuple(self.ref(kind, alt) for alt in alternatives))
        return ir.Choices(value.amount, tuple(options), value.pos)

    def rolls(self, value: m.Value) -> ir.Rolls:
        """`2 x treasure`, or `treasure` (once)."""
        if isinstance(value, m.Name | m.String):
            return ir.Rolls(1, self.ref("table", value), value.pos)
        if not isinstance(value, m.Repeat):
            raise _fail("rolls on a table (like 2 x treasure)", value, "none stops the chain")
        if not 1 <= value.count <= MAX_REPEAT:
            raise LoweringError(
                f"a roll on a table {value.count:,} times; a cell rolls 1 to {MAX_REPEAT} times",
                value.pos,
                "write none for no roll"
                if value.count == 0
                else f"roll 1 to {MAX_REPEAT} times: {MAX_REPEAT} x {expr_text(value.table)}",
            )
        return ir.Rolls(value.count, self.ref("table", value.table), value.pos)

    def offer(self, kind: str, value: m.Value, path: Path) -> ir.Offer:
        """`Ambidextrous, 1 of (Doomed, Luck)`: entities given, and choices of `count` among others."""
        fixed: list[ir.Ref] = []
        picks: list[ir.Pick] = []
        for i, item in enumerate(items_of(value)):
            self.positions[_path((*path, i))] = item.pos
            if not isinstance(item, m.CountOf):
                fixed.append(self.ref(kind, item))
                continue
            if not isinstance(item.selector, m.SelectListed):
                raise _fail(
                    f"a choice of {kind}s: 1 of (A, B)",
                    item,
                    f"name the {kind}s to choose among in brackets: {item.count} of (A, B)",
                )
            options = tuple(self.ref(kind, r) for r in item.selector.refs)
            if not 1 <= item.count <= len(options):
                asked = "none" if item.count < 1 else f"{item.count}"
                raise LoweringError(
                    f"this choice asks for {asked} of {len(options)} option{'s' * (len(options) != 1)}",
                    item.pos,
                    f"offer more, or ask for 1 to {len(options)}"
                    if options
                    else f"list what it offers: {max(item.count, 1)} of (A, B)",
                    "E364",
                )
            picks.append(ir.Pick(item.count, options, item.pos))
        return ir.Offer(tuple(fixed), tuple(picks), value.pos)

    # ---- formulas
    def formula(self, value: m.Value) -> ir.Formula:
        text, names = expr_text_names(value)
        spans = tuple(ir.NameSpan(start, end, pos) for pos, start, end in names)
        return ir.Formula(text, self.expr(value), value.pos, spans)

    def expr(self, value: m.Value) -> ir.Expr:
        match value:
            case m.Integer(number):
                return ir.Num(number, value.pos)
            case m.Decimal(text):
                return ir.Num(Fraction(text), value.pos)
            case m.Multiplier():
                return ir.Num(multiplier_fraction(value), value.pos)
            case m.Name(text):
                return ir.Var(text, value.pos)
            case m.String(text):
                return ir.Text(text, value.pos)
            case m.Caret(number):
                return ir.Caret(number, value.pos)
            case m.Dice():
                return ir.DiceExpr(dice_of(value), value.pos)
            case m.DiceCount(count, sides, _, suffix):
                _explode_or_keep(suffix, sides, value.pos)
                return ir.DiceOf(self.expr(count), ir.Num(sides, value.pos), value.pos, suffix)
            case m.Call("dice", args):
                if len(args) != 2:
                    raise LoweringError(
                        "dice() takes 2 arguments: dice(count, sides)",
                        value.pos,
                        "write dice(AGL, 6): AGL dice of 6 sides",
                    )
                return ir.DiceOf(self.expr(args[0]), self.expr(args[1]), value.pos)
            case m.Binary(op, left, right):
                return ir.BinOp(op, self.expr(left), self.expr(right), value.pos)
            case m.Negative(operand):
                return ir.Neg(self.expr(operand), value.pos)
            case m.Comparison(op, left, right):
                return ir.Compare(op, self.expr(left), self.expr(right), value.pos)
            case m.AnyOf(items) | m.AllOf(items):
                op = "or" if isinstance(value, m.AnyOf) else "and"
                return ir.Logic(op, tuple(self.expr(i) for i in items), value.pos)
            case m.Not(operand):
                return ir.NotExpr(self.expr(operand), value.pos)
            case m.Attribute(m.Subscript(m.Name(kind), m.Name() | m.String() as which), field):
                return ir.FieldOf(self.ref(kind, which), field.text, value.pos)
            case m.Attribute(m.Name(param) | m.String(param), field):  # `where.multiplier`, `"by".multiplier`:
                return ir.ParamField(param, field.text, value.pos)  # of the entity a parameter names
            case m.Subscript(target, index):
                if not isinstance(target, m.Name):
                    raise _fail("a table name before '['", target)
                return ir.Lookup(self.ref("table", target), self.expr(index), value.pos)
            case m.Call("if", args):
                if len(args) != 3:
                    raise LoweringError(
                        "if() takes 3 arguments: if(condition, then, otherwise)", value.pos, "write if(AGL > 3, 2, 1)"
                    )
                condition, then, otherwise = (self.expr(a) for a in args)
                return ir.If(condition, then, otherwise, value.pos)
            case m.Call(function, args) if function not in FUNCTIONS:
                # another formula: resolved (and its arguments counted) by the semantic checks
                callee = ir.Ref("formula", function, value.pos)
                return ir.FormulaCall(callee, tuple(self.expr(a) for a in args), value.pos)
            case m.Call(function, args):
                arity = FUNCTIONS[function]
                if arity is not None and len(args) != arity:
                    raise LoweringError(
                        f"{function}() takes {arity} argument{'s' * (arity != 1)}",
                        value.pos,
                        f"write {function}({', '.join('xyz'[:arity])})",
                    )
                if arity is None and len(args) < 2:
                    raise LoweringError(
                        f"{function}() takes two or more arguments",
                        value.pos,
                        f"{function}(a, b): the {function}imum of them",
                    )
                return ir.Call(function, tuple(self.expr(a) for a in args), value.pos)
        raise _fail("a formula", value)

    # ---- requirements
    def requirement(self, value: m.Value) -> ir.Requirement:
        match value:
            case m.Name("gm_permission"):
                return ir.GmPermission(value.pos)
            case m.Name() | m.String():
                return ir.TookLifepath(self.ref("lifepath", value), value.pos)
            case m.AnyOf(items):
                return ir.AnyOf(tuple(self.requirement(i) for i in items), value.pos)
            case m.AllOf(items):
                return ir.AllOf(tuple(self.requirement(i) for i in items), value.pos)
            case m.Not(operand):
                return ir.NotReq(self.requirement(operand), value.pos)
            case m.HasTrait(written):
                return ir.HasTrait(self.ref("trait", written), value.pos)
            case m.HasSkill(written):
                return ir.HasSkill(self.ref("skill", written), value.pos)
            case m.Holds(m.Name("lifepath"), written):
                return ir.TookLifepath(self.ref("lifepath", written), value.pos)
            case m.Holds(kind, written):
                return ir.Holds(kind.text, self.ref(kind.text, written), value.pos)
            case m.MapEntry(_, entry):  # `career "Star Navy"` reads as a map's entry: what the parser said before
                raise LoweringError(
                    f"unexpected '{expr_text(entry)}'",
                    entry.pos,
                    "quote the whole text; a requirement names an entity by its id: career navy",
                    "E101",
                )
            case m.CountOf(count, selector):
                return self.count_of(count, selector, value.pos)
            case m.Comparison(op, m.Name("previous"), right) if op == "=":
                return ir.Previous(self.ref("lifepath", right), value.pos)
            case m.Comparison(op, m.Name(subject), right):
                self.subject(subject, value)
                if subject == "gender":
                    if op not in ("=", "!="):
                        raise LoweringError(
                            "gender can only be compared with = or !=",
                            value.pos,
                            "write gender = female, or gender != male",
                        )
                    if not isinstance(right, m.Name | m.String):
                        raise _fail("a name", right)
                    return ir.Condition(subject, op, slug(self.text(right)), value.pos)
                return ir.Condition(subject, op, self.integer(right), value.pos)
            case m.Membership(m.Name(subject), within):
                self.subject(subject, value)
                bounds = range_of(within, allow_dash=False)
                return ir.ConditionIn(subject, bounds.low, bounds.high, value.pos)
        raise _fail(
            "a requirement",
            value,
            "write lifepath names joined by 'and'/'or', or a condition like 'age > 50' (see the language reference)",
        )

    def subject(self, subject: str, value: m.Value) -> None:
        if subject not in CONDITIONS:
            raise LoweringError(
                f"unknown condition '{subject}'",
                value.pos,
                did_you_mean(subject, (*CONDITIONS, "previous")) or "conditions: " + ", ".join(CONDITIONS),
            )

    def count_of(self, count: int, selector: m.SelectLifepaths | m.SelectListed, pos: m.Position) -> ir.CountOf:
        if count < 1:
            raise LoweringError("count at least 1 lifepath", pos, "ask for 1 or more, as in 1 of lifepaths")
        if isinstance(selector, m.SelectListed):
            return ir.CountOf(count, None, None, tuple(self.ref("lifepath", r) for r in selector.refs), pos)
        setting: ir.Ref | None = None
        tag: ir.Tag | None = None
        for flt in selector.filters:
            if isinstance(flt, m.InSetting):
                setting = self.ref("setting", flt.ref)
            else:
                tag = ir.Tag(slug(self.text(flt.ref)), flt.ref.pos)
        return ir.CountOf(count, setting, tag, (), pos)

    # ---- tables
    def columns(self, value: m.Value, path: Path) -> tuple[ir.Column, ...]:
        result = []
        for i, item in enumerate(items_of(value)):
            self.positions[_path((*path, i))] = item.pos
            if isinstance(item, m.Name | m.String):  # quoted: a name that is also a word of the language
                result.append(ir.Column(slug(self.text(item)), t.TextType(), item.pos))
            elif isinstance(item, m.Call) and len(item.args) == 1:
                result.append(ir.Column(slug(item.function), column_type(item.args[0]), item.pos))
            else:
                raise _fail("a column (name or name(type))", item)
        return tuple(result)

    def params(self, value: m.Value, path: Path) -> tuple[ir.Column, ...]:
        """A formula's parameters: `raw` (a whole number), `where(ref location)`, `resistant(bool)`."""
        result = []
        for i, item in enumerate(items_of(value)):
            self.positions[_path((*path, i))] = item.pos
            if isinstance(item, m.Name | m.String):
                result.append(ir.Column(slug(self.text(item)), t.IntType(), item.pos))
            elif isinstance(item, m.Call) and len(item.args) == 1:
                result.append(ir.Column(slug(item.function), param_type(item.args[0]), item.pos))
            else:
                raise _fail("a parameter (name, or name(type) with int, number, bool or ref KIND)", item)
        return tuple(result)

    def key(self, value: m.Value, key: ir.Column | None, rolled: bool) -> ir.Key:
        """A row key: a number or range, or a name; a declared key type says which. In a rolled table
        `odd` and `even` are the numbers of that parity."""
        if rolled and isinstance(value, m.Name) and value.text.lower() in ("odd", "even"):
            return ir.ParityKey(value.text.lower() == "odd", value.pos)
        if key is not None and isinstance(key.type, t.RefType):  # `species(ref species)`: checked and linked
            return ir.NameKey(self.text(value), value.pos, self.ref(key.type.kind, value))
        if (key is not None and isinstance(key.type, t.TextType)) or (
            key is None and isinstance(value, m.Name | m.String)
        ):
            return ir.NameKey(self.text(value), value.pos)
        if key is not None and isinstance(key.type, t.IntType | t.NumberType) and isinstance(value, m.Name | m.String):
            raise _fail(
                "a number or a range (3, 2-4, 1..10, >9, 10+)",
                value,
                f"the key '{key.name}' holds numbers: key the row by a number or a range, like 2 or 2-4",
            )
        return range_of(value, allow_dash=True)

    def cell(self, value: m.Value, column: ir.Column, path: Path) -> ir.Cell:
        if isinstance(value, m.Name) and value.text == "unknown":
            return ir.Unknown(value.pos)  # the source does not give this cell: say so rather than invent it
        if isinstance(value, m.Name) and value.text in NONE_WORDS:
            return ir.NoneValue(value.pos)
        try:
            cell = self.read(column.type, value, path)
        except LoweringError as exc:
            raise LoweringError(
                f"column '{column.name}': {exc.diagnostic.message}",
                exc.diagnostic.pos or value.pos,
                exc.diagnostic.hint,
                exc.diagnostic.code,
                exc.diagnostic.suggestions,
            ) from None
        assert not isinstance(
            cell,
            tuple
            | ir.Column
            | ir.Choices
            | ir.Offer
            | ir.StatBonus
            | ir.Actions
            | ir.Range
            | ir.Roll
            | ir.Record
            | ir.MapValue,
        ), cell
        assert not isinstance(cell, ir.REQUIREMENT_TYPES), cell
        return cell

    def rows(
        self, rows: tuple[m.Row, ...], keys: tuple[ir.Column, ...], columns: tuple[ir.Column, ...], rolled: bool
    ) -> tuple[list[ir.TableRow], list[Diagnostic]]:
        result: list[ir.TableRow] = []
        diagnostics: list[Diagnostic] = []
        width = len(keys) or 1
        for i, row in enumerate(rows):
            path: Path = ("rows", i)
            self.positions[_path(path)] = row.pos
            try:
                if is_otherwise(row):
                    cells = self.cells(row, columns, path)
                    result.append(ir.TableRow((), cells, row.source.value if row.source else None, row.pos))
                    continue
                if len(row.keys) != width:
                    raise LoweringError(
                        f"this row has {len(row.keys)} key{'s' * (len(row.keys) != 1)}, the table has {width}",
                        row.pos,
                        "keys: " + ", ".join(k.name for k in keys) if keys else "declare them: keys: zone, level(int)",
                    )
                if max(depth(v) for v in row.keys) > MAX_DEPTH:
                    raise LoweringError(f"this row nests more than {MAX_DEPTH} levels deep", row.pos, _SPLIT_HINT)
                row_keys = []
                for j, key in enumerate(row.keys):
                    self.positions[_path((*path, "keys", j))] = key.pos
                    row_keys.append(self.key(key, keys[j] if keys else None, rolled))
                source = row.source.value if row.source is not None else None
                result.append(ir.TableRow(tuple(row_keys), self.cells(row, columns, path), source, row.pos))
            except LoweringError as exc:
                diagnostics.append(exc.diagnostic)
        otherwise = [row for row in rows if is_otherwise(row)]
        for extra in otherwise[1:]:
            diagnostics.append(error("E312", "a second 'otherwise' row", extra.pos, "a table has one otherwise row"))
        return result, diagnostics

    def cells(self, row: m.Row, columns: tuple[ir.Column, ...], path: Path) -> tuple[ir.Cell, ...]:
        if columns and len(row.cells) != len(columns):
            raise LoweringError(
                f"this row has {len(row.cells)} cell{'s' * (len(row.cells) != 1)}, the table has "
                f"{len(columns)} column{'s' * (len(columns) != 1)}",
                row.pos,
                "columns: " + ", ".join(c.name for c in columns),
            )
        if row.cells and max(depth(v) for v in row.cells) > MAX_DEPTH:
            raise LoweringError(f"this row nests more than {MAX_DEPTH} levels deep", row.pos, _SPLIT_HINT)
        plain = ir.Column("", t.TextType(), row.pos)
        return tuple(
            self.cell(cell, columns[j] if columns else plain, (*path, "cells", j)) for j, cell in enumerate(row.cells)
        )


def is_otherwise(row: m.Row) -> bool:
    """`otherwise -> ...`: the row for every cell no other row names."""
    return len(row.keys) == 1 and isinstance(row.keys[0], m.Name) and row.keys[0].text == "otherwise"


def column_type(value: m.Value) -> t.FieldType:
    """`int`, `formula`, `ref table`, `int in 1..5`: what a column's cells hold."""
    return _typed(value, t.COLUMN_TYPES, "unknown column type '{}'", "a column type (int, formula, ref table, ...)")


def param_type(value: m.Value) -> t.FieldType:
    """`int`, `number`, `bool`, `ref location`: what a formula's parameter is."""
    return _typed(
        value, t.PARAM_TYPES, "a parameter cannot be of type '{}'", "a parameter type (int, number, bool or ref KIND)"
    )


def _typed(value: m.Value, allowed: tuple[str, ...], unknown: str, wanted: str) -> t.FieldType:
    """A column's or a parameter's type: one of `allowed`, or `ref KIND`; a misspelt one with its fix."""
    if isinstance(value, m.RefMarker):
        return t.RefType(value.kind.text)
    if isinstance(value, m.Name) and value.text in allowed:
        return t.SIMPLE[value.text]
    if isinstance(value, m.Name):
        close = suggest(value.text, allowed)
        hint = naming_hint(close) or "types: " + ", ".join(allowed) + ", ref KIND"
        raise LoweringError(unknown.format(value.text), value.pos, hint, suggestions=close)
    raise _fail(wanted, value)


def range_of(value: m.Value, *, allow_dash: bool) -> ir.Range:
    """Numbers and ranges: `3`, `1..10`, `>9`, `10+`, `<=3`, and `2-4` where `allow_dash`."""
    match value:
        case m.Integer(number):
            return ir.Range(number, number, value.pos)
        case m.AtLeast(number):
            return ir.Range(number, None, value.pos)
        case m.Negative(m.AtLeast(number)):
            return ir.Range(-number, None, value.pos)
        case m.ClosedRange(m.Integer(low), m.Integer(high)) | m.Binary("-", m.Integer(low), m.Integer(high)) if (
            allow_dash or isinstance(value, m.ClosedRange)
        ):
            if low > high:
                raise LoweringError(f"the range {low}-{high} runs backwards", value.pos, f"write {high}-{low}")
            return ir.Range(low, high, value.pos)
        case m.OpenRange(op, m.Integer(number)):
            bounds = {">": (number + 1, None), ">=": (number, None), "<": (None, number - 1), "<=": (None, number)}
            if op in bounds:
                low_bound, high_bound = bounds[op]
                return ir.Range(low_bound, high_bound, value.pos)
        case m.Binary("-", m.Integer(low), m.Integer(high)):  # not allow_dash: in a field, `1-12` is arithmetic
            raise LoweringError(
                f"expected a range, got the subtraction {low} - {high}",
                value.pos,
                f"in a field a range is written {low}..{high} (`{low}-{high}` is a range only in a table's rows)",
            )
    raise _fail(
        "a number or a range (3, 1..10, >9, 10+)" if not allow_dash else "a number or a range (3, 2-4, 1..10, >9, 10+)",
        value,
    )


_DICE_EXAMPLES = "dice (like 1d10, 2d6+3, 30 + 1d10, 3d6 * 5, 4d6kh3, 1d6! or 0)"


def _explode_or_keep(suffix: str, sides: int, pos: m.Position) -> None:
    """What dice of `sides` sides with `suffix` cannot be, whatever their count. Dice that explode and are
    then kept (`4d6!kh3`) are read, but refused: the exact odds of keeping some of several exploding dice are
    no sum of the rational series an exploding die has (runtime/odds.py), and a roll's odds are exact or not
    given."""
    if suffix == "!" and sides == 1:
        raise LoweringError(
            "a 1-sided die always shows its highest face, so it would explode for ever",
            pos,
            "explode a die of 2 sides or more (1d6!)",
            code="E208",
        )
    if suffix.startswith("!") and len(suffix) > 1:
        raise LoweringError(
            f"dice that explode and are then kept or dropped (!{suffix[1:]}) have no exact odds here",
            pos,
            "explode them (1d6!) or keep some (4d6kh3), not both",
            code="E208",
        )


def dice_term(node: m.Dice) -> ir.DiceTerm:
    """One `NdS` with what follows it: `kh3`/`kl1` keep the highest/lowest, `dh1`/`dl1` drop them, `!`
    explodes."""
    count, sides, suffix = node.count, node.sides, node.suffix
    _explode_or_keep(suffix, sides, node.pos)
    if count < 1:
        raise LoweringError(
            f"a roll of {count} dice; a roll has at least 1", node.pos, f"roll 1d{sides} or more; for no roll write 0"
        )
    if sides < 2:
        raise LoweringError(
            f"a die of {sides} side{'s' * (sides != 1)}; a die has at least 2",
            node.pos,
            f"a die has 2 sides or more (like {count}d6); a number that never varies is written alone: "
            f"{count if sides else 0}",
        )
    if sides > MAX_SIDES:
        raise LoweringError(
            f"a die of {sides:,} sides; a die has at most {MAX_SIDES:,}",
            node.pos,
            f"write a die of {MAX_SIDES:,} sides or fewer",
            code="E206",
        )
    if suffix == "!":
        return ir.DiceTerm(count, sides, explode=True)
    if not suffix:
        return ir.DiceTerm(count, sides)
    how, number = suffix[:2], int(suffix[2:])
    keep = number if how[0] == "k" else count - number
    if not 0 < keep <= count:
        said = f"keeps {number} of {count} dice" if how[0] == "k" else f"drops {number} of {count} dice, leaving none"
        raise LoweringError(
            f"{count}d{sides}{suffix} {said}",
            node.pos,
            f"keep 1 to {count} of them (kh3 keeps the highest three, dl1 drops the lowest one)",
            code="E207",
        )
    # `dl1` keeps the highest (all but the lowest one); `dh1` keeps the lowest
    return ir.DiceTerm(count, sides, keep, lowest=how in ("kl", "dh"))


def _whole(value: m.Value, what: str) -> int:
    """A whole number a roll is multiplied or divided by (E209 otherwise: a roll's totals are whole)."""
    match value:
        case m.Integer(number):
            return number
        case m.Negative(m.Integer(number)):
            return -number
        case m.Decimal() | m.Multiplier():
            raise LoweringError(
                f"a roll is {what} whole numbers only, not {expr_text(value)}",
                value.pos,
                "a roll's totals are whole: write a whole number, or round in a formula (floor(...))",
                code="E209",
            )
    raise _fail(f"a whole number (a roll is {what} whole numbers)", value)


def dice_of(value: m.Value) -> ir.Dice:
    """`1d10`, `2d6+3`, `30 + 1d10`: dice terms plus a constant; `3d6 * 5`, `(2d6 + 6) * 5`, `1d6 / 2`,
    `max(1, 1d8 + 2)` and dice taken away as parts; `0` alone is a roll that is always 0."""
    dice = _dice_of(value)
    if (count := dice.dice_count()) > MAX_DICE:
        raise LoweringError(
            f"a roll of {count:,} dice; a roll has at most {MAX_DICE}",
            value.pos,
            f"roll at most {MAX_DICE} dice, all its terms together: {count - MAX_DICE:,} fewer",
            code="E205",
        )
    if not dice.plain:
        try:  # the exact odds, once: what the package and the reference will read must be computable
            _ = ir.runtime_dice(dice).minimum
        except rt_odds.OddsTooCostly as exc:
            raise LoweringError(str(exc), value.pos, "roll fewer dice, or keep fewer of them", code="E211") from None
        except ValueError as exc:
            raise LoweringError(
                str(exc), value.pos, "add an exploding roll, multiply it or bound it", code="E208"
            ) from None
    return dice


def _dice_of(value: m.Value) -> ir.Dice:
    terms: list[ir.DiceTerm] = []
    parts: list[ir.DicePart] = []
    taken: list[m.Dice] = []  # dice taken away: one part, multiplied by -1
    modifier = 0
    stack: list[tuple[m.Value, int]] = [(value, 1)]
    while stack:
        node, sign = stack.pop()
        match node:
            case m.Dice() if sign < 0:
                taken.append(node)
            case m.Dice():
                terms.append(dice_term(node))
            case m.Integer(number):
                modifier += sign * number
            case m.Binary("+", left, right):
                stack += [(right, sign), (left, sign)]
            case m.Binary("-", left, right):
                stack += [(right, -sign), (left, sign)]
            case m.Binary("*", left, right):
                rolled, factor = (
                    (right, left) if isinstance(left, m.Integer | m.Decimal | m.Multiplier) else (left, right)
                )
                part: ir.DicePart = ir.ScaledDice(_dice_of(rolled), sign * _whole(factor, "multiplied by"))
                parts.append(part)
            case m.Binary("/", left, right):
                divisor = _whole(right, "divided by")
                if divisor < 1:
                    raise LoweringError(f"a roll divided by {divisor}", right.pos, "divide by 1 or more", code="E209")
                inner: ir.Dice = ir.Dice((), 0, "", node.pos, (ir.DividedDice(_dice_of(left), divisor),))
                parts.append(ir.ScaledDice(inner, -1) if sign < 0 else inner.parts[0])
            case m.Call("max" | "min" as function, args) if len(args) >= 2:
                rolls = [a for a in args if not isinstance(a, m.Integer)]
                if len(rolls) != 1:
                    raise _fail("one roll among whole numbers", node, f"{function}(1, 1d8 + 2)")
                bounds = [a.value for a in args if isinstance(a, m.Integer)]
                low, high = (max(bounds), None) if function == "max" else (None, min(bounds))
                bounded: ir.DicePart = ir.BoundedDice(_dice_of(rolls[0]), low, high)
                parts.append(bounded if sign > 0 else ir.ScaledDice(ir.Dice((), 0, "", node.pos, (bounded,)), -1))
            case m.Negative(operand):
                stack.append((operand, -sign))
            case _:
                raise _fail(_DICE_EXAMPLES, node)
    if taken:
        text = " + ".join(expr_text(t) for t in taken)
        parts.append(ir.ScaledDice(ir.Dice(tuple(dice_term(t) for t in taken), 0, text, taken[0].pos), -1))
    return ir.Dice(tuple(terms), modifier, expr_text(value), value.pos, tuple(parts))


def _absent(value: m.Name, declared: FieldDecl) -> ir.Unknown | ir.NoneValue | tuple[ir.Value, ...]:
    """`unknown` (the source is silent or unreadable) or `none` (the rules give no value), where allowed;
    `none` of a list is the empty list (the rules give none of them), which the package reads as such."""
    if isinstance(declared.type, t.ListType) and value.text != "unknown" and declared.type.min_items == 0:
        return ()
    if isinstance(declared.type, t.ColumnsType) and value.text == "unknown":
        # keys, columns and parameters say how everything else is read: a guess there misreads it all
        raise LoweringError(
            f"'{declared.name}' says how the rest is read, so it cannot be unknown",
            value.pos,
            'write what the source most likely means, and say so in uncertain: "..."',
        )
    if declared.optional or declared.default is not None:
        return ir.Unknown(value.pos) if value.text == "unknown" else ir.NoneValue(value.pos)
    raise LoweringError(
        f"'{declared.name}' must be given, so it cannot be {value.text}",
        value.pos,
        'give the value the sources most likely mean, and say so in uncertain: "..."',
    )


def roll_of(value: m.Value) -> ir.Roll:
    """A table's roll: `2d6`, `d66`, `1d6 + 0..1`, `1d10, 1d10`."""
    if isinstance(value, m.ValueList):
        # `region, 1d20`: the keys named first are given to each roll, the dice roll the rest
        names = list(itertools.takewhile(lambda v: isinstance(v, m.Name | m.String), value.items))
        given = tuple(
            ir.Given(slug(n.value if isinstance(n, m.String) else n.text), n.pos)
            for n in names
            if isinstance(n, m.Name | m.String)
        )
        rest = value.items[len(names) :]
        if not rest:
            raise LoweringError("a roll names keys but no dice", value.pos, "roll: region, 1d20")
        named = "".join(f"{g.key}, " for g in given)
        if len(rest) == 1:
            alone = roll_of(rest[0])
            return replace(alone, given=given, text=named + alone.text, pos=value.pos)
        parts = [roll_of(item) for item in rest]
        if any(p.modifier is not None or p.tens_units for p in parts):
            raise LoweringError(
                "a table rolled on several dice takes no modifier and no d66",
                value.pos,
                "roll each die plainly (roll: 1d10, 1d10), or roll one with its modifier (roll: 1d10 + 0..2)",
            )
        dice = tuple(d for p in parts for d in p.dice)
        return ir.Roll(dice, None, False, named + ", ".join(d.text for d in dice), value.pos, given)
    if isinstance(value, m.Name | m.String):  # a key alone: the dice are missing
        name = value.text if isinstance(value, m.Name) else quote(value.value)
        raise _fail(
            _DICE_EXAMPLES, value, f"a roll is dice (roll: 1d10); a key given to it comes first: roll: {name}, 1d10"
        )
    if isinstance(value, m.Dice) and value.count == 1 and value.sides == 66:
        d66 = ir.Dice((ir.DiceTerm(1, 6), ir.DiceTerm(1, 6)), 0, "d66", value.pos)
        return ir.Roll((d66,), None, True, "d66", value.pos)
    if isinstance(value, m.ClosedRange) and isinstance(value.low, m.Binary) and value.low.op == "+":
        # `1d6 + 0..1` reads as (1d6 + 0)..1: the dice, and the modifiers the rows must also take
        low, high = value.low.right, value.high
        if isinstance(low, m.Integer) and isinstance(high, m.Integer):
            if low.value > high.value:
                raise LoweringError(
                    f"the modifiers {low.value}..{high.value} run backwards",
                    value.pos,
                    f"write {high.value}..{low.value}",
                )
            inner = roll_of(value.low.left)
            modifier = ir.Range(low.value, high.value, value.pos)
            return ir.Roll(inner.dice, modifier, inner.tens_units, expr_text(value), value.pos)
    single = dice_of(value)
    if not single.plain or not single.terms:
        raise LoweringError(
            f"a table is rolled on dice added up (2d6, 1d10 + 1), not {single.text}",
            value.pos,
            "keep, explode, multiply and divide dice in a field or a formula; a table's rows read a sum",
            code="E208",
        )
    return ir.Roll((single,), None, False, single.text, value.pos)


def generic(value: m.Value) -> str:
    """A field no kind declares: keep something readable, the schema check reports the field itself."""
    return expr_text(value)


# ---------------------------------------------------------------- entities


@lru_cache(maxsize=256)  # kinds hash by value; bounded, as a language server declares them again for hours
def _required_refs(kind: Kind) -> tuple[tuple[str, str], ...]:
    """(field, kind it names) of a kind's required references."""
    return tuple(
        (d.name, d.type.kind) for d in kind.fields.values() if not d.optional and isinstance(d.type, t.RefType)
    )


def lower_block(block: m.Block, kind: Kind, *, file_defaults: Mapping[str, str]) -> tuple[ir.Entity, list[Diagnostic]]:
    """A block as an entity. `file_defaults`: kind -> the id of the only entity of that kind in the same
    file, which a required reference to that kind that is left out names (a lifepath's setting)."""
    diagnostics: list[Diagnostic] = []
    reader = _Reader()
    # `KIND Name {` names the entity (its id is the slug); `KIND id "Name" {` gives both.
    if block.name is not None:
        name = block.name.value
        entity_id = block.id.text if block.id else slug(name)
    else:
        name = block.id.text if block.id else ""
        entity_id = slug(name)
    id_pos = block.id.pos if block.id else (block.name.pos if block.name else block.kind_pos)
    reader.positions[_path(("id",))] = id_pos
    reader.positions[_path(("name",))] = block.name.pos if block.name else id_pos
    values: dict[str, ir.Value] = {}
    failed: set[str] = set()
    seen: dict[str, m.Field] = {}
    written = [f for f in block.fields if f.op != "let"]
    for fld in written:
        if fld.key in seen:
            first = seen[fld.key].key_pos
            diagnostics.append(
                error(
                    "E202",
                    f"field '{fld.key}' is given twice (first at line {first.line})",
                    fld.key_pos,
                    f"give '{fld.key}' once: remove one, or put both values in the first",
                )
            )
            continue
        seen[fld.key] = fld
        reader.positions[_path((fld.key,))] = fld.key_pos
        if depth(fld.value) > MAX_DEPTH:
            failed.add(fld.key)
            diagnostics.append(
                error(
                    "E204",
                    f"'{fld.key}' nests more than {MAX_DEPTH} levels deep",
                    fld.key_pos,
                    _SPLIT_HINT,
                )
            )
            continue
        declared = kind.fields.get(fld.key)
        try:
            if declared is None:
                values[fld.key] = generic(fld.value)  # the schema reports the unknown field
            elif isinstance(fld.value, m.Name) and fld.value.text in ("unknown", *NONE_WORDS):
                values[fld.key] = _absent(fld.value, declared)
                reader.positions[_path((fld.key,))] = fld.value.pos
            else:
                values[fld.key] = reader.read(declared.type, fld.value, (fld.key,))
        except LoweringError as exc:
            failed.add(fld.key)
            diagnostics.append(exc.diagnostic)
    steps = [f for f in block.fields if f.op == "let"]
    if steps:
        diagnostics += _steps(block.kind, steps, values, reader)
    rows: list[ir.TableRow] = []
    if block.rows:
        if kind.has_rows:
            # `keys: unknown` or `columns: none` are reported where fields are checked: read the rows as
            # if nothing were declared, so that what else is wrong with them is said in this run too
            keys, columns = values.get("keys", ()), values.get("columns", ())
            keys = keys if isinstance(keys, tuple) else ()
            columns = columns if isinstance(columns, tuple) else ()
            rows, more = reader.rows(
                block.rows,
                tuple(k for k in keys if isinstance(k, ir.Column)),
                tuple(c for c in columns if isinstance(c, ir.Column)),
                isinstance(values.get("roll"), ir.Roll),
            )
            if more:
                failed.add("rows")  # a row was dropped: coverage checks would only repeat it
            diagnostics += more
            reader.positions.setdefault(("rows",), block.rows[0].pos)
        else:
            message = f"a {block.kind} has no rows; rows belong in a table"
            diagnostics.append(error("E203", message, block.rows[0].pos, _ROWS_HINT))
    for field_name, target in _required_refs(kind):
        if field_name not in values:
            default = file_defaults.get(target)
            if default is not None:
                values[field_name] = ir.Ref(target, default, block.kind_pos, None)
    entity = ir.Entity(
        block.kind,
        entity_id,
        name,
        values,
        reader.positions,
        tuple(rows),
        frozenset(failed),
        id_pos,
        block.pos,
        block.kind_pos.file,
    )
    return entity, diagnostics


def _steps(kind: str, written: list[m.Field], values: dict[str, ir.Value], reader: _Reader) -> list[Diagnostic]:
    """A formula's `let` steps, read into its formula (`values["formula"]`, when it could be read): each
    a new name, neither a parameter nor an earlier step's."""
    if kind != "formula":
        where = written[0].pos
        hint = "formula NAME { params: a  let b = a * 2  formula: b + 1 }"
        return [error("E361", f"a {kind} has no steps; `let` belongs in a formula", where, hint)]
    diagnostics: list[Diagnostic] = []
    declared = values.get("params", ())
    taken = {c.name: "a parameter" for c in declared if isinstance(c, ir.Column)} if isinstance(declared, tuple) else {}
    steps: list[ir.Step] = []
    for fld in written:
        name = slug(fld.key)
        if name in taken:
            hint = "give the step a name of its own"
            what = taken[name]
            diagnostics.append(error("E361", f"step '{fld.key}' shadows {what} of the same name", fld.key_pos, hint))
            continue
        taken[name] = f"the step at line {fld.key_pos.line}"
        if depth(fld.value) > MAX_DEPTH:
            message = f"step '{fld.key}' nests more than {MAX_DEPTH} levels deep"
            diagnostics.append(error("E204", message, fld.key_pos, "split it into several steps"))
            continue
        try:
            steps.append(ir.Step(fld.key, reader.formula(fld.value), fld.key_pos))
        except LoweringError as exc:
            diagnostics.append(exc.diagnostic)
    formula = values.get("formula")
    if isinstance(formula, ir.Formula):
        values["formula"] = replace(formula, steps=tuple(steps))
    return diagnostics


def requirement_nodes(req: ir.Requirement) -> Iterator[ir.Requirement]:
    """Every node of a requirement, parents first, in writing order (no recursion: any depth is safe)."""
    stack: list[ir.Requirement] = [req]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ir.AllOf | ir.AnyOf):
            stack.extend(reversed(node.items))
        elif isinstance(node, ir.NotReq):
            stack.append(node.item)


# ---------------------------------------------------------------- patches


def _item_key(value: ir.Value) -> object:
    """What makes two list items the same one, by meaning and never by where they were written: a reference
    by the slug of what it names, dice by their dice and modifier (`1d6+1d6` is `2d6`), a formula by its
    canonical text, a range by its bounds; anything else by its JSON form (which holds no positions)."""
    match value:
        case ir.Ref(_, text):
            return ("ref", slug(text))
        case str():
            return ("text", slug(value))
        case ir.Dice(terms, modifier, text) if not all(term.plain for term in terms):
            return ("dice", text)
        case ir.Dice(terms, modifier, _, _, ()):
            sides = sorted({term.sides for term in terms})
            return ("dice", tuple((s, sum(term.count for term in terms if term.sides == s)) for s in sides), modifier)
        case ir.Formula(text):
            return ("formula", text)
        case ir.Range(low, high):
            return ("range", low, high)
        case _:
            return ("value", json.dumps(value_json(value), sort_keys=True))


def _item_text(value: ir.Value) -> str:
    """A list item as it is written, for messages."""
    match value:
        case ir.Ref(_, text):
            return text
        case str():
            return value
        case ir.Dice(text=text) | ir.Formula(text=text):
            return text
        case ir.Range(low, high):
            return ir.range_text(low, high)
        case bool():
            return "yes" if value else "no"
        case int() | Fraction():
            return t.number_text(value)
        case _:
            return json.dumps(value_json(value), sort_keys=True)


def lower_patch(patch: m.Patch, kind: Kind, target: ir.Entity) -> tuple[ir.Entity, list[str], list[Diagnostic]]:
    """`target` with the patch applied: `field: value` replaces, `field += items` appends to a list (or a
    points list), `field -= items` removes from it; rows replace the rows with the same keys, or are added.
    Returns the patched entity, the fields it changed, and what could not be applied."""
    reader = _Reader()
    diagnostics: list[Diagnostic] = []
    fields = dict(target.fields)
    positions = dict(target.positions)
    changed: list[str] = []
    for fld in patch.fields:
        declared = kind.fields.get(fld.key)
        if declared is None:
            close = suggest(fld.key, kind.fields)
            diagnostics.append(
                error(
                    "E210",
                    f"a {kind.name} has no field '{fld.key}'",
                    fld.key_pos,
                    naming_hint(close) or "fields: " + ", ".join(kind.fields),
                    close,
                )
            )
            continue
        try:
            if fld.op == ":":
                if isinstance(fld.value, m.Name) and fld.value.text in ("unknown", *NONE_WORDS):
                    fields[fld.key] = _absent(fld.value, declared)
                else:
                    fields[fld.key] = reader.read(declared.type, fld.value, (fld.key,))
            else:
                fields[fld.key] = _patch_list(reader, declared, fields.get(fld.key), fld)
        except LoweringError as exc:
            diagnostics.append(exc.diagnostic)
            continue
        for path in [p for p in positions if p and p[0] == fld.key]:
            del positions[path]
        positions[(fld.key,)] = fld.value.pos
        positions.update({p: pos for p, pos in reader.positions.items() if p and p[0] == fld.key})
        changed.append(fld.key)
    rows = list(target.rows)
    if patch.rows:
        if not kind.has_rows:
            message = f"a {kind.name} has no rows; rows belong in a table"
            diagnostics.append(error("E203", message, patch.rows[0].pos, _ROWS_HINT))
        else:
            keys = tuple(k for k in fields.get("keys", ()) if isinstance(k, ir.Column))  # type: ignore[union-attr]
            columns = tuple(c for c in fields.get("columns", ()) if isinstance(c, ir.Column))  # type: ignore[union-attr]
            new_rows, more = reader.rows(patch.rows, keys, columns, isinstance(fields.get("roll"), ir.Roll))
            diagnostics += more
            index = {tuple(ir.key_text(k) for k in r.keys): i for i, r in enumerate(rows)}
            for row in new_rows:
                if tuple(ir.key_text(k) for k in row.keys) in index:
                    rows[index[tuple(ir.key_text(k) for k in row.keys)]] = row
                else:
                    rows.append(row)
            for i, row in enumerate(rows):  # row positions follow the merged order
                positions[("rows", i)] = row.pos
            changed.append("rows")
    return replace(target, fields=fields, positions=positions, rows=tuple(rows)), changed, diagnostics


def _patch_list(reader: _Reader, declared: FieldDecl, current: ir.Value | None, fld: m.Field) -> ir.Value:
    """`+=` and `-=` on a list field (or a points list: its options)."""
    if isinstance(declared.type, t.ChoicesType):
        choices = current if isinstance(current, ir.Choices) else ir.Choices(0, (), fld.key_pos)
        written = fld.value.items if isinstance(fld.value, m.Points) else items_of(fld.value)
        change = reader.choices(declared.type.kind, m.Points(0, written, fld.value.pos))
        if fld.op == "+=":
            return ir.Choices(choices.points, choices.options + change.options, choices.pos)
        present = {_item_key(r) for option in choices.options for r in option}
        held = [r.text for option in choices.options for r in option]
        _refuse_missing(fld, [r.text for o in change.options for r in o if _item_key(r) not in present], held)
        gone = {_item_key(r) for option in change.options for r in option}
        kept = tuple(tuple(r for r in option if _item_key(r) not in gone) for option in choices.options)
        return ir.Choices(choices.points, tuple(o for o in kept if o), choices.pos)
    if not isinstance(declared.type, t.ListType):
        raise LoweringError(
            f"'{fld.key}' is not a list, so it takes no {fld.op}",
            fld.key_pos,
            f"replace it: {fld.key}: ...",
            code="E505",
        )
    items = current if isinstance(current, tuple) else ()
    # the items alone (the length bounds are the whole list's, once changed)
    added = reader.read(replace(declared.type, min_items=0, max_items=None), fld.value, (fld.key,))
    assert isinstance(added, tuple)
    if fld.op == "+=":
        result = items + added
    else:
        present = {_item_key(v) for v in items}
        _refuse_missing(fld, [_item_text(v) for v in added if _item_key(v) not in present], map(_item_text, items))
        gone = {_item_key(v) for v in added}
        result = tuple(v for v in items if _item_key(v) not in gone)
    problem = t.constraint_problem(declared.type, result)
    if problem is not None:
        raise LoweringError(f"once patched, '{fld.key}' {problem[0]}", fld.value.pos, problem[1], "E210")
    return result


def _refuse_missing(fld: m.Field, missing: list[str], present: Iterable[str]) -> None:
    if missing:
        held = list(present)
        raise LoweringError(
            f"'{fld.key}' has no {', '.join(missing)} to remove",
            fld.value.pos,
            did_you_mean(missing[0], held) or ("it holds: " + ", ".join(held) if held else "it is empty"),
            code="E506",
        )
