"""The syntax model: what the parser produces, as plain frozen dataclasses with source positions.

It is the one lossless tree every tool reads (compiler, formatter, language server):
- every value node carries its position, so that any later stage can point at it; a statement spans its
  whole text (from its first word to its `}`), a field or row from its first character to its last, an
  expression from its first token to its last (`not`, `-`, a grouped first operand's `(`, a closing `)`);
- comments and blank lines are kept as `Trivia` on the statement, field or row they stand by;
- spellings an author chooses are kept (`d6` and `1d6`, `check 8+` and `check 0 8+`, `any lifepath` and
  `1 of lifepaths`, `1 pt` and `1 pts`); notations that only differ in layout are not (`==` is `=`, a
  unary `+` is dropped, spaces and escapes in strings are the formatter's to choose).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rulesdsl.diagnostics import Position as Position  # shared with diagnostics
from rulesdsl.reprs import plain_methods


class _Node:
    """Pickles as (class, field values): dataclasses' own frozen-slots pickling is ~10x slower, and the
    parse cache (cache.py) loads many thousands of nodes."""

    __slots__ = ()

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        names: tuple[str, ...] = type(self).__slots__  # the dataclass's fields, in order
        return (type(self), tuple(getattr(self, name) for name in names))


@dataclass(frozen=True, slots=True)
class Comment(_Node):
    """`# ...`: from the '#' to the end of its line, trailing spaces dropped."""

    text: str
    pos: Position
    blank_lines: int = 0  # blank lines between it and what stands before it (a comment on its own line)


@dataclass(frozen=True, slots=True)
class Trivia(_Node):
    """The comments and blank lines by a node (syntax.trivia attaches them; fmt prints them back)."""

    leading: tuple[Comment, ...] = ()  # on lines of their own, right before the node
    blank_lines: int = 0  # blank lines right before the node (after its leading comments)
    trailing: Comment | None = None  # after the node, on its last line
    inner: tuple[Comment, ...] = ()  # within a field or row that spans lines; a statement's on its header's lines
    closing: tuple[Comment, ...] = ()  # a block's, after its last field or row and before its '}'


@dataclass(frozen=True, slots=True)
class Integer(_Node):
    value: int
    pos: Position


@dataclass(frozen=True, slots=True)
class Decimal(_Node):
    text: str
    pos: Position


@dataclass(frozen=True, slots=True)
class String(_Node):
    value: str
    pos: Position


@dataclass(frozen=True, slots=True)
class Name(_Node):
    text: str
    pos: Position


@dataclass(frozen=True, slots=True)
class Dice(_Node):
    count: int
    sides: int
    pos: Position
    count_written: bool = True  # `1d6`, where `d6` leaves the count of 1 out
    suffix: str = ""  # as written after the sides: keep or drop (`kh3`, `kl1`, `dh1`, `dl1`) or `!` (explode)


@dataclass(frozen=True, slots=True)
class Multiplier(_Node):
    numerator: int
    denominator: int
    pos: Position


@dataclass(frozen=True, slots=True)
class AtLeast(_Node):
    """`10+`: ten or more."""

    value: int
    pos: Position


@dataclass(frozen=True, slots=True)
class OpenRange(_Node):
    """`>9`, `<=3`: a comparison with its left side left out."""

    op: str
    operand: Value
    pos: Position


@dataclass(frozen=True, slots=True)
class ClosedRange(_Node):
    low: Value
    high: Value
    pos: Position


@dataclass(frozen=True, slots=True)
class Quantity(_Node):
    """`8 yrs`, `+1 M/P`: a number and a unit written on the same line."""

    amount: int
    unit: str
    signed: bool
    pos: Position


@dataclass(frozen=True, slots=True)
class Points(_Node):
    """`8 pts: A, B`: a point budget and the items it may be spent on."""

    amount: int
    items: tuple[Value, ...]
    pos: Position
    singular: bool = False  # written `pt:`, not `pts:`


@dataclass(frozen=True, slots=True)
class ValueList(_Node):
    items: tuple[Value, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class Binary(_Node):
    op: str
    left: Value
    right: Value
    pos: Position


@dataclass(frozen=True, slots=True)
class Negative(_Node):
    operand: Value
    pos: Position


@dataclass(frozen=True, slots=True)
class Call(_Node):
    """`max(a, b)`; `"by"(ref location)` names a function (or a parameter) quoted, as a word of the language."""

    function: str
    args: tuple[Value, ...]
    pos: Position
    quoted: bool = False  # written in quotes


@dataclass(frozen=True, slots=True)
class Subscript(_Node):
    target: Value
    index: Value
    pos: Position


@dataclass(frozen=True, slots=True)
class Attribute(_Node):
    """`weapon[longsword].reach`: a field of an entity, in a formula."""

    target: Value
    name: Name
    pos: Position


@dataclass(frozen=True, slots=True)
class Caret(_Node):
    """`4^`: Burning Wheel's 'obstacle times the stat' marker."""

    value: int
    pos: Position


@dataclass(frozen=True, slots=True)
class Comparison(_Node):
    op: str
    left: Value
    right: Value
    pos: Position


@dataclass(frozen=True, slots=True)
class Membership(_Node):
    subject: Value
    range: Value
    pos: Position


@dataclass(frozen=True, slots=True)
class AnyOf(_Node):
    items: tuple[Value, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class AllOf(_Node):
    items: tuple[Value, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class Not(_Node):
    operand: Value
    pos: Position


@dataclass(frozen=True, slots=True)
class HasTrait(_Node):
    ref: Name | String
    pos: Position


@dataclass(frozen=True, slots=True)
class HasSkill(_Node):
    ref: Name | String
    pos: Position


@dataclass(frozen=True, slots=True)
class Holds(_Node):
    """`career navy` in a requirement: the character holds (or has done) that entity of that kind."""

    kind: Name
    ref: Name
    pos: Position


@dataclass(frozen=True, slots=True)
class InSetting(_Node):
    ref: Name | String
    pos: Position


@dataclass(frozen=True, slots=True)
class Tagged(_Node):
    ref: Name | String
    pos: Position


@dataclass(frozen=True, slots=True)
class SelectLifepaths(_Node):
    filters: tuple[InSetting | Tagged, ...]
    pos: Position
    plural: bool = True  # `lifepaths`, or `lifepath` (as after `any`)


@dataclass(frozen=True, slots=True)
class SelectListed(_Node):
    refs: tuple[Name | String, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class CountOf(_Node):
    count: int
    selector: SelectLifepaths | SelectListed
    pos: Position
    any: bool = False  # written `any ...`: a count of 1


@dataclass(frozen=True, slots=True)
class Repeat(_Node):
    """`2 x treasure`: roll on a table that many times (a `rolls` cell)."""

    count: int
    table: Name | String
    pos: Position


@dataclass(frozen=True, slots=True)
class DiceCount(_Node):
    """`(slot - 3)d6`: dice whose count is computed; `(n)d6kh3`, `(n)d6!`: kept, dropped or exploding, as after
    written dice (`suffix`, lower case)."""

    count: Value
    sides: int
    pos: Position
    suffix: str = ""


@dataclass(frozen=True, slots=True)
class RefMarker(_Node):
    """`ref table`: a column or field type that names another entity (`next(ref table)`)."""

    kind: Name
    pos: Position


@dataclass(frozen=True, slots=True)
class Check(_Node):
    """`check END 5+`: roll the ruleset's check dice, add the modifier, meet the target. `check 8+` has no
    modifier (None): it adds nothing."""

    modifier: Value | None
    target: int
    pos: Position
    target_pos: Position


@dataclass(frozen=True, slots=True)
class Record(_Node):
    """`{ name: "Dogslicer"  to_hit: 8 }`: the fields of a record (or of a map: `{ fire: -2 }`), on one line."""

    fields: tuple[Field, ...]
    pos: Position  # from the '{' to the '}'


@dataclass(frozen=True, slots=True)
class MapEntry(_Node):
    """`land 25`: one entry of a map, its key and a value of one token (`fly yes` is written like `Holds`)."""

    key: Name
    value: Value
    pos: Position


Value = (
    Integer
    | Decimal
    | String
    | Name
    | Dice
    | Multiplier
    | AtLeast
    | OpenRange
    | ClosedRange
    | Quantity
    | Points
    | ValueList
    | Binary
    | Negative
    | Call
    | Subscript
    | Attribute
    | Caret
    | Comparison
    | Membership
    | AnyOf
    | AllOf
    | Not
    | HasTrait
    | HasSkill
    | Holds
    | CountOf
    | Repeat
    | DiceCount
    | RefMarker
    | Check
    | Record
    | MapEntry
)


@dataclass(frozen=True, slots=True)
class Field(_Node):
    key: str
    value: Value
    pos: Position  # from the key to the end of the value
    op: str  # ":", in a patch also "+=" (append to a list) and "-=" (remove from it); "let" a step `let key = value`
    key_pos: Position  # the key alone (a step's name)
    trivia: Trivia | None = None


@dataclass(frozen=True, slots=True)
class Row(_Node):
    keys: tuple[Value, ...]  # one per key of the table: `III, 2 -> ...`
    cells: tuple[Value, ...]
    source: String | None
    pos: Position
    trivia: Trivia | None = None


@dataclass(frozen=True, slots=True)
class Block(_Node):
    kind: str
    kind_pos: Position
    id: Name | None
    name: String | None
    fields: tuple[Field, ...]
    rows: tuple[Row, ...]
    pos: Position  # from the kind to the '}'
    trivia: Trivia | None = None


# ---- type expressions, in kind declarations


@dataclass(frozen=True, slots=True)
class SimpleType(_Node):
    """`int`, `text`, `dice`, ...; numbers may carry bounds: `int in 1..5`, `int in 0..`."""

    name: Name
    low: Integer | Decimal | None
    high: Integer | Decimal | None
    bounded: bool
    pos: Position


@dataclass(frozen=True, slots=True)
class EnumType(_Node):
    """`one of one, two, versatile`."""

    options: tuple[Name | String, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class RefType(_Node):
    """`ref skill`."""

    kind: Name
    pos: Position


@dataclass(frozen=True, slots=True)
class ListType(_Node):
    """`list of text`; `list in 1..2 of ...` bounds the number of items."""

    item: TypeExpr
    low: Integer | Decimal | None
    high: Integer | Decimal | None
    pos: Position


@dataclass(frozen=True, slots=True)
class PointsType(_Node):
    """`points of ref skill`: Burning Wheel's `8 pts: A, B or C`."""

    item: TypeExpr
    pos: Position


@dataclass(frozen=True, slots=True)
class OfferType(_Node):
    """`choices of ref talent`: entities given, and choices among others (`Ambidextrous, 1 of (Doomed, Luck)`)."""

    item: TypeExpr
    pos: Position


@dataclass(frozen=True, slots=True)
class CheckType(_Node):
    """`check`, or `check of career_check`: a check rolled with that mechanic (or the only check one)."""

    mechanic: Name | None
    pos: Position


@dataclass(frozen=True, slots=True)
class NamedType(_Node):
    """`formula of slot, level`: a formula and the free names it may use besides attributes."""

    name: Name
    names: tuple[Name, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class MapType(_Node):
    """`map of int`, `map of int by ref skill`: values of one type under keys (words, unless `by` says)."""

    value: TypeExpr
    key: TypeExpr | None
    pos: Position


@dataclass(frozen=True, slots=True)
class RecordType(_Node):
    """`record { name: text  to_hit: int }`: a group of typed fields inside a field."""

    fields: tuple[KindField, ...]
    pos: Position  # from `record` to the '}'


TypeExpr = (
    SimpleType | EnumType | RefType | ListType | PointsType | OfferType | CheckType | NamedType | MapType | RecordType
)


@dataclass(frozen=True, slots=True)
class KindField(_Node):
    key: str
    type: TypeExpr
    optional: bool
    default: Value | None
    doc: String | None
    pos: Position  # from the key to the end of the doc string (or of whatever ends the field)
    key_pos: Position
    trivia: Trivia | None = None


@dataclass(frozen=True, slots=True)
class KindDecl(_Node):
    """`kind weapon "Weapon" { damage: dice ... }`; `override kind spell ...` replaces a built-in kind."""

    name: Name
    title: String | None
    override: bool
    fields: tuple[KindField, ...]
    kind_pos: Position  # the `kind` (or `override`) keyword
    pos: Position  # from that keyword to the '}'
    trivia: Trivia | None = None


# ---- homebrew: changing what an extended ruleset declares


@dataclass(frozen=True, slots=True)
class Patch(_Node):
    """`patch lifepath farmer { resources: 7  leads += x }`."""

    kind: Name
    target: Name | String
    fields: tuple[Field, ...]
    rows: tuple[Row, ...]
    pos: Position  # from `patch` to the '}'
    trivia: Trivia | None = None


@dataclass(frozen=True, slots=True)
class Removal(_Node):
    """`remove spell "Arcane Kindness"`."""

    kind: Name
    target: Name | String
    pos: Position
    trivia: Trivia | None = None


Statement = Block | KindDecl | Patch | Removal


@dataclass(frozen=True, slots=True)
class SourceFile(_Node):
    path: str
    text: str
    blocks: tuple[Statement, ...]
    closing: tuple[Comment, ...] = ()  # the comments after the last statement


plain_methods(globals())
