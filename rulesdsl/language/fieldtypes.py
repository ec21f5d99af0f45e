"""Field types: what a field of a kind may hold, as written in kind declarations (`int in 1..5`,
`list of ref skill`, `one of one, two`).

Each type is a frozen dataclass; lowering, the JSON Schema, the generated Python, the reference and
the docs each dispatch over `FieldType` with one `match`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import assert_never

from rulesdsl.diagnostics import Position, naming_hint, suggest
from rulesdsl.reprs import plain_methods


@dataclass(frozen=True, slots=True)
class IntType:
    """`int`, `int in 1..5`, `int in 0..`."""

    low: int | None = None
    high: int | None = None


@dataclass(frozen=True, slots=True)
class NumberType:
    """`number`: an exact number (`1.5` is 3/2), optionally bounded."""

    low: Fraction | None = None
    high: Fraction | None = None


@dataclass(frozen=True, slots=True)
class TextType:
    """`text`: one short line (facts and short notes, never copied prose)."""


@dataclass(frozen=True, slots=True)
class MarkdownType:
    """`markdown`: a description in the author's own words, rendered on the reference."""


@dataclass(frozen=True, slots=True)
class BoolType:
    pass


@dataclass(frozen=True, slots=True)
class DiceType:
    pass


@dataclass(frozen=True, slots=True)
class FormulaType:
    """A formula the generated package can evaluate; `formula of slot, level` names the free names its
    formulas may use besides attributes (every other name is an error)."""

    names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RangeType:
    pass


@dataclass(frozen=True, slots=True)
class MultiplierType:
    pass


@dataclass(frozen=True, slots=True)
class EnumType:
    """`one of one, two, versatile`."""

    options: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RefType:
    """`ref skill`: the name of an entity of that kind, checked and linked."""

    kind: str


@dataclass(frozen=True, slots=True)
class ListType:
    """`list of T`, `list in 1..2 of T`."""

    item: FieldType
    min_items: int = 0
    max_items: int | None = None


@dataclass(frozen=True, slots=True)
class WordType:
    """`word`: a name kept as an id (`tens_of_paces`), for open-ended categories."""


@dataclass(frozen=True, slots=True)
class AbbreviationType:
    """`abbreviation`: letters and digits, in any case (`AGL`, `Ag`); an entity's `abbr` names it wherever
    it may be named (references and formulas)."""


@dataclass(frozen=True, slots=True)
class VersionType:
    """`version`: `0.1.0`."""


@dataclass(frozen=True, slots=True)
class YearsType:
    """`years`: `8 yrs` (Burning Wheel lifepaths)."""


@dataclass(frozen=True, slots=True)
class PointsType:
    """`pts`: `2 pts`."""


@dataclass(frozen=True, slots=True)
class StatBonusType:
    """`stat_bonus`: `+1 M`, `+1 P`, `+1 M/P` (Burning Wheel)."""


@dataclass(frozen=True, slots=True)
class ActionsType:
    """`actions`: `10`, or `x3` times the obstacle (Burning Wheel spells)."""


@dataclass(frozen=True, slots=True)
class ChoicesType:
    """`points of ref skill`: `8 pts: A, B or C` (Burning Wheel lifepaths)."""

    kind: str


@dataclass(frozen=True, slots=True)
class OfferType:
    """`choices of ref talent`: entities given, and choices among others: `Ambidextrous, 1 of (Doomed, Luck)`."""

    kind: str


@dataclass(frozen=True, slots=True)
class RequirementType:
    """`requirement`: a condition over the lifepaths taken before."""


@dataclass(frozen=True, slots=True)
class ObstacleType:
    """`obstacle`: `3`, `4^`, `"Target's Forte"`, `6 + Will` (Burning Wheel), shown, not evaluated."""


@dataclass(frozen=True, slots=True)
class RollType:
    """`roll`: a table's dice: `2d6`, `d66`, `1d6 + 0..1` (with the modifiers it must take), `1d10, 1d10`."""


@dataclass(frozen=True, slots=True)
class CheckType:
    """`check` (or `check of career_check`): `check END 5+`, the ruleset's check dice plus END against 5."""

    mechanic: str | None = None


@dataclass(frozen=True, slots=True)
class RollsType:
    """`rolls` (table cells): `2 x treasure`, the table to roll on next and how many times (`treasure` is once),
    or `none`. `roll_chain` follows them; a `ref table` column is the same, once."""


@dataclass(frozen=True, slots=True)
class ColumnsType:
    """`columns`: a table's columns or keys, `name` (text) or `name(type)`; `params` (`params=True`): a
    formula's parameters, `name` (a whole number) or `name(type)` with a type of `PARAM_TYPES` or `ref KIND`."""

    params: bool = False


@dataclass(frozen=True, slots=True)
class MapType:
    """`map of int`, `map of int by ref skill`: values of one type under keys. Keys are words (`land 25`)
    unless `by` says they are references or options."""

    value: FieldType
    key: FieldType = WordType()


@dataclass(frozen=True, slots=True)
class RecordField:
    """One field of a record type, declared as a kind's field is (`to_hit: int in 0.. = 0 "doc"`)."""

    name: str
    type: FieldType
    optional: bool = False
    # What a left-out field means, read as its type by lowering: an IR value, which this layer cannot name
    # (compile/kinds.py `record_fields` gives it back typed); its text as written for `type_text`.
    default: object = None
    default_text: str | None = None
    doc: str | None = None
    # Where its name is written, for diagnostics about it; not part of the type (two records declared alike
    # in two places are one type, one class in Python).
    pos: Position | None = field(default=None, compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class RecordType:
    """`record { name: text  to_hit: int }`: a group of typed fields inside a field (a stat block's strike)."""

    fields: tuple[RecordField, ...]


FieldType = (
    IntType
    | NumberType
    | TextType
    | MarkdownType
    | BoolType
    | DiceType
    | FormulaType
    | RangeType
    | MultiplierType
    | EnumType
    | RefType
    | ListType
    | WordType
    | AbbreviationType
    | VersionType
    | YearsType
    | PointsType
    | StatBonusType
    | ActionsType
    | ChoicesType
    | OfferType
    | RequirementType
    | ObstacleType
    | ColumnsType
    | RollType
    | RollsType
    | CheckType
    | MapType
    | RecordType
)

# The type names written on their own in declarations, and in table columns (`name(type)`).
SIMPLE: dict[str, FieldType] = {
    "int": IntType(),
    "number": NumberType(),
    "text": TextType(),
    "markdown": MarkdownType(),
    "bool": BoolType(),
    "dice": DiceType(),
    "formula": FormulaType(),
    "range": RangeType(),
    "multiplier": MultiplierType(),
    "word": WordType(),
    "abbreviation": AbbreviationType(),
    "version": VersionType(),
    "years": YearsType(),
    "pts": PointsType(),
    "stat_bonus": StatBonusType(),
    "actions": ActionsType(),
    "requirement": RequirementType(),
    "obstacle": ObstacleType(),
    "columns": ColumnsType(),
    "params": ColumnsType(params=True),
    "roll": RollType(),
    "rolls": RollsType(),
    "check": CheckType(),
}
# What a table cell may be: the value types with a meaning in one cell.
COLUMN_TYPES = ("text", "int", "number", "multiplier", "dice", "bool", "formula", "markdown", "rolls")
# What a formula's parameter may be, besides `ref KIND` (an entity, by id): what a call can be checked against.
PARAM_TYPES = ("int", "number", "bool")

TEXT_LIMIT = 200  # characters in a `text` value: facts and short notes, never prose
MARKDOWN_LIMIT = 20_000


def _bound(low: int | Fraction | None, high: int | Fraction | None) -> str:
    if low is None and high is None:
        return ""
    return f" in {'' if low is None else low}..{'' if high is None else high}"


def example_text(field_type: FieldType) -> str | None:
    """A value of this type as it could be written, for hints (`add root: will`): a name as NAME where any
    entity goes; None for the types with no short example (the hint then names the type instead)."""
    match field_type:
        case IntType(low, high) | NumberType(low, high):
            return number_text(low if low is not None else high if high is not None else 1)
        case TextType() | MarkdownType():
            return '"..."'
        case EnumType(options):
            return options[0]
        case BoolType():
            return "yes"
        case RefType() | WordType():
            return "NAME"
        case ListType(item):
            return example_text(item)
        case DiceType() | RollType():
            return "1d6"
        case YearsType():
            return "1 yrs"
        case PointsType():
            return "1 pts"
        case ChoicesType():
            return "1 pts: NAME"
        case OfferType():
            return "NAME"
        case FormulaType() | ObstacleType() | ActionsType():
            return "1"
        case RangeType():
            return "1..10"
        case MultiplierType():
            return "x2"
        case VersionType():
            return '"0.1.0"'
        case AbbreviationType():
            return "ABBR"
        case StatBonusType():
            return "+1 P"
        case RequirementType():
            return "NAME"
        case ColumnsType(params):
            return "x, where(ref KIND)" if params else "name, value(int)"
        case RecordType(fields):
            return "{ " + "  ".join(f"{f.name}: ..." for f in fields[:2]) + " }"
        case _:
            return None


def type_text(field_type: FieldType) -> str:
    """The type as it is written in a kind declaration."""
    match field_type:
        case IntType(low, high):
            return "int" + _bound(low, high)
        case NumberType(low, high):
            return "number" + _bound(low, high)
        case EnumType(options):
            return "one of " + ", ".join(o if o.isidentifier() else f'"{o}"' for o in options)
        case RefType(kind):
            return f"ref {kind}"
        case ListType(item, low, high):
            bounds = _bound(low or None, high)
            return f"list{bounds} of {type_text(item)}"
        case ChoicesType(kind):
            return f"points of ref {kind}"
        case OfferType(kind):
            return f"choices of ref {kind}"
        case CheckType(mechanic):
            return "check" if mechanic is None else f"check of {mechanic}"
        case FormulaType(names) if names:
            return "formula of " + ", ".join(names)
        case MapType(value, key):
            return f"map of {type_text(value)}" + ("" if key == WordType() else f" by {type_text(key)}")
        case RecordType(fields):
            return "record { " + "".join(_record_field_text(f) + "  " for f in fields).rstrip() + " }"
        case (
            TextType()
            | MarkdownType()
            | BoolType()
            | DiceType()
            | FormulaType()
            | RangeType()
            | MultiplierType()
            | WordType()
            | AbbreviationType()
            | VersionType()
            | YearsType()
            | PointsType()
            | StatBonusType()
            | ActionsType()
            | RequirementType()
            | ObstacleType()
            | ColumnsType()
            | RollType()
            | RollsType()
        ):
            return next(name for name, simple in SIMPLE.items() if simple == field_type)
        case _:
            assert_never(field_type)


def _record_field_text(field: RecordField) -> str:
    text = f"{field.name}: {type_text(field.type)}" + "?" * field.optional
    if field.default_text is not None:
        text += f" = {field.default_text}"
    if field.doc is not None:
        text += " " + '"' + field.doc.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


def referenced_kinds(field_type: FieldType) -> tuple[str, ...]:
    """The kinds a field of this type names."""
    match field_type:
        case RefType(kind) | ChoicesType(kind) | OfferType(kind):
            return (kind,)
        case RollsType():
            return ("table",)
        case ListType(item):
            return referenced_kinds(item)
        case MapType(value, key):
            return (*referenced_kinds(key), *referenced_kinds(value))
        case RecordType(fields):
            return tuple(kind for f in fields for kind in referenced_kinds(f.type))
        case _:
            return ()


def number_text(value: int | Fraction) -> str:
    """A number as people write it: `3`, `0.25`, and `1/3` where no decimal is exact."""
    if isinstance(value, int) or value.denominator == 1:
        return str(int(value))
    den = value.denominator
    while den % 2 == 0:
        den //= 2
    while den % 5 == 0:
        den //= 5
    if den != 1:
        return f"{value.numerator}/{value.denominator}"
    digits = 0
    while (value * 10**digits).denominator != 1:
        digits += 1
    return f"{float(value):.{digits}f}" if digits <= 15 else f"{value.numerator}/{value.denominator}"


def _items(count: int) -> str:
    return f"{count} item{'s' * (count != 1)}"


# The types that declare constraints (`constraint_problem`'s cases): a reader asks of no other type's values.
CONSTRAINED = frozenset({IntType, NumberType, TextType, MarkdownType, EnumType, ListType})


def suggestions_for(field_type: FieldType, value: object) -> tuple[str, ...]:
    """What to write instead of a value its type refuses, when the type names what it takes (the options
    of an enum): a diagnostic's suggestions, named by constraint_problem's hint."""
    if isinstance(field_type, EnumType) and isinstance(value, str) and value not in field_type.options:
        return suggest(value, field_type.options)
    return ()


def constraint_problem(field_type: FieldType, value: object) -> tuple[str, str | None] | None:
    """What of its type's declared constraints a value breaks, as the end of a sentence about it ("must be at
    most 5, not 9") and a hint; None when it keeps them all. The one place bounds, text lengths, options and
    list lengths are checked: lowering asks it of every value it reads, wherever the value is written (fields,
    defaults, list items, table cells, patches). Values of another shape (`unknown`, `none`) are not its
    business. A list's items are checked as they are read; here only its length."""
    match field_type:
        case IntType(low, high) | NumberType(low, high) if isinstance(value, int | Fraction) and not isinstance(
            value, bool
        ):
            within = (
                f"write a number in {number_text(low)}..{number_text(high)}"
                if low is not None and high is not None
                else None
            )
            if low is not None and value < low:
                return f"must be at least {number_text(low)}, not {number_text(value)}", (
                    within or f"write {number_text(low)} or more"
                )
            if high is not None and value > high:
                return f"must be at most {number_text(high)}, not {number_text(value)}", (
                    within or f"write {number_text(high)} or less"
                )
        case TextType() | MarkdownType() if isinstance(value, str):
            limit = TEXT_LIMIT if isinstance(field_type, TextType) else MARKDOWN_LIMIT
            if not value:
                return "must not be empty", "write the text between the quotes"
            if len(value) > limit:
                hint = "keep it to one short line in your own words" if limit == TEXT_LIMIT else "split it up"
                return f"is too long ({len(value):,} characters, at most {limit:,})", hint
        case EnumType(options) if isinstance(value, str) and value not in options:
            return "must be one of: " + ", ".join(options), naming_hint(suggestions_for(field_type, value)) or (
                f"'{value}' is not among them: write one as it is listed, such as {options[0]}"
            )
        case ListType(_, low, high) if isinstance(value, tuple):
            if len(value) < low:
                return f"needs at least {_items(low)}, not {len(value)}", f"add {_items(low - len(value))}"
            if high is not None and len(value) > high:
                return f"holds {_items(len(value))}, at most {high}", f"leave out {_items(len(value) - high)}"
    return None


def holds(field_type: FieldType, wanted: tuple[type, ...]) -> bool:
    """Whether values of `field_type` may hold values of one of the `wanted` types: as themselves, as a
    list's items, a map's values or a record's fields, at any depth."""
    match field_type:
        case _ if isinstance(field_type, wanted):
            return True
        case ListType(item) | MapType(item):
            return holds(item, wanted)
        case RecordType(fields):
            return any(holds(f.type, wanted) for f in fields)
        case _:
            return False


plain_methods(globals())
