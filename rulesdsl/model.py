"""The syntax model: what the parser produces, as plain frozen dataclasses with source positions.

Every value node carries the position of its first character so that any later stage (lowering,
schema validation, semantic checks) can point at it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, order=True)
class Position:
    file: str
    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True, slots=True)
class Integer:
    value: int
    pos: Position


@dataclass(frozen=True, slots=True)
class Decimal:
    text: str
    pos: Position


@dataclass(frozen=True, slots=True)
class String:
    value: str
    pos: Position


@dataclass(frozen=True, slots=True)
class Name:
    text: str
    pos: Position


@dataclass(frozen=True, slots=True)
class Dice:
    count: int
    sides: int
    pos: Position


@dataclass(frozen=True, slots=True)
class Multiplier:
    numerator: int
    denominator: int
    pos: Position


@dataclass(frozen=True, slots=True)
class AtLeast:
    """`10+`: ten or more."""

    value: int
    pos: Position


@dataclass(frozen=True, slots=True)
class OpenRange:
    """`>9`, `<=3`: a comparison with its left side left out."""

    op: str
    operand: Value
    pos: Position


@dataclass(frozen=True, slots=True)
class ClosedRange:
    low: Value
    high: Value
    pos: Position


@dataclass(frozen=True, slots=True)
class Quantity:
    """`8 yrs`, `+1 M/P`: a number and a unit written on the same line."""

    amount: int
    unit: str
    signed: bool
    pos: Position


@dataclass(frozen=True, slots=True)
class Points:
    """`8 pts: A, B`: a point budget and the items it may be spent on."""

    amount: int
    items: tuple[Value, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class ValueList:
    items: tuple[Value, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class Binary:
    op: str
    left: Value
    right: Value
    pos: Position


@dataclass(frozen=True, slots=True)
class Negative:
    operand: Value
    pos: Position


@dataclass(frozen=True, slots=True)
class Call:
    function: str
    args: tuple[Value, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class Subscript:
    target: Value
    index: Value
    pos: Position


@dataclass(frozen=True, slots=True)
class Caret:
    """`4^`: Burning Wheel's 'obstacle times the stat' marker."""

    value: int
    pos: Position


@dataclass(frozen=True, slots=True)
class Comparison:
    op: str
    left: Value
    right: Value
    pos: Position


@dataclass(frozen=True, slots=True)
class Membership:
    subject: Value
    range: Value
    pos: Position


@dataclass(frozen=True, slots=True)
class AnyOf:
    items: tuple[Value, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class AllOf:
    items: tuple[Value, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class Not:
    operand: Value
    pos: Position


@dataclass(frozen=True, slots=True)
class HasTrait:
    ref: Name | String
    pos: Position


@dataclass(frozen=True, slots=True)
class HasSkill:
    ref: Name | String
    pos: Position


@dataclass(frozen=True, slots=True)
class InSetting:
    ref: Name | String
    pos: Position


@dataclass(frozen=True, slots=True)
class Tagged:
    ref: Name | String
    pos: Position


@dataclass(frozen=True, slots=True)
class SelectLifepaths:
    filters: tuple[InSetting | Tagged, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class SelectListed:
    refs: tuple[Name | String, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class CountOf:
    count: int
    selector: SelectLifepaths | SelectListed
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
    | Caret
    | Comparison
    | Membership
    | AnyOf
    | AllOf
    | Not
    | HasTrait
    | HasSkill
    | CountOf
)


@dataclass(frozen=True, slots=True)
class Field:
    key: str
    value: Value
    pos: Position


@dataclass(frozen=True, slots=True)
class Row:
    keys: tuple[Value, ...]  # one per key of the table: `III, 2 -> ...`
    cells: tuple[Value, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class Block:
    kind: str
    kind_pos: Position
    id: Name | None
    name: String | None
    fields: tuple[Field, ...]
    rows: tuple[Row, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str
    text: str
    blocks: tuple[Block, ...]
