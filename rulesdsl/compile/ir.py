"""The typed intermediate representation: what lowering produces and every later stage consumes.

Formulas, requirements, dice, references and the structured values of fields are frozen dataclasses,
each with the source position it was read from. Consumers dispatch over the unions below with one
`match` ending in `assert_never`, so that mypy names every consumer a new node has not reached.
JSON is only a serialisation of these (see jsonform.py), for schema validation and `export`.

References are written as `Ref`s with `id=None` by lowering; the semantic stage resolves them and
returns entities whose every `Ref` has its `id`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from fractions import Fraction
from typing import Any, assert_never

from rulesdsl.language.fieldtypes import FieldType
from rulesdsl.language.names import slug
from rulesdsl.reprs import plain_methods
from rulesdsl.runtime import core as rt
from rulesdsl.syntax.tree import Position


@dataclass(frozen=True, slots=True)
class Ref:
    """A name written where an entity of `kind` is expected; `id` is what it names, once resolved."""

    kind: str
    text: str
    pos: Position
    id: str | None = None

    @property
    def target(self) -> str:
        """The resolved id (the semantic stage guarantees one on every entity it passes on)."""
        assert self.id is not None, f"unresolved reference to {self.kind} {self.text!r}"
        return self.id


@dataclass(frozen=True, slots=True)
class Unknown:
    """`unknown`: the source is unreadable or silent here; never invented."""

    pos: Position


@dataclass(frozen=True, slots=True)
class NoneValue:
    """`none` or `—`: the rules give no value here."""

    pos: Position


# ---------------------------------------------------------------- dice


@dataclass(frozen=True, slots=True)
class DiceTerm:
    """`count` dice of `sides`; `keep` of them count, the highest or (`lowest`) the lowest: `4d6kh3`, `4d6dl1`
    (also the highest three), `2d20kl1`; `explode`: a die showing its highest face is rolled again (`1d6!`)."""

    count: int
    sides: int
    keep: int | None = None
    lowest: bool = False
    explode: bool = False

    @property
    def plain(self) -> bool:
        return self.keep is None and not self.explode


@dataclass(frozen=True, slots=True)
class ScaledDice:
    """`3d6 * 5`, `(2d6 + 6) * 5`; a factor of -1 is a roll taken away (`1d6 - 1d6`)."""

    dice: Dice
    factor: int


@dataclass(frozen=True, slots=True)
class DividedDice:
    """`1d6 / 2`: rounded down."""

    dice: Dice
    divisor: int


@dataclass(frozen=True, slots=True)
class BoundedDice:
    """`max(1, 1d8 + 2)`, `min(10, ...)`: a roll kept within bounds (None: none that way)."""

    dice: Dice
    low: int | None
    high: int | None


DicePart = ScaledDice | DividedDice | BoundedDice


@dataclass(frozen=True, slots=True)
class Dice:
    """`1d10`, `2d6+3`, `30 + 1d10`: dice terms plus a constant; `parts`: rolls multiplied, divided or
    bounded, added on (`3d6 * 5`, `1d6 - 1d6`). `0` alone is dice too: a roll that is always 0."""

    terms: tuple[DiceTerm, ...]
    modifier: int
    text: str
    pos: Position
    parts: tuple[DicePart, ...] = ()

    @property
    def plain(self) -> bool:
        """Dice added up and a number: what tables and mechanics roll (their odds have a closed form)."""
        return not self.parts and all(t.plain for t in self.terms)

    @property
    def low(self) -> int:
        """The lowest total (of plain dice; the runtime's Dice knows every roll's)."""
        return sum(t.count for t in self.terms) + self.modifier

    @property
    def high(self) -> int:
        return sum(t.count * t.sides for t in self.terms) + self.modifier

    @property
    def single_die(self) -> bool:
        """One die and nothing added: what an exploding total or a pool is rolled with."""
        return self.plain and len(self.terms) == 1 and self.terms[0].count == 1 and self.modifier == 0

    def dice_count(self) -> int:
        """Every die the roll throws (its parts' too; an exploding die counted once)."""
        return sum(t.count for t in self.terms) + sum(p.dice.dice_count() for p in self.parts)


# ---------------------------------------------------------------- formulas


@dataclass(frozen=True, slots=True)
class Num:
    """A number: `3`, `1.5`, or a multiplier written in a formula (`x1/2`)."""

    value: int | Fraction
    pos: Position


@dataclass(frozen=True, slots=True)
class Text:
    """Quoted text inside a formula-like value (a spell's `"Target's Forte"`)."""

    value: str
    pos: Position


@dataclass(frozen=True, slots=True)
class Var:
    """A name in a formula: a parameter, or an attribute (by abbreviation or id).

    `attribute` is the attribute's id once the semantic stage has resolved it.
    """

    name: str
    pos: Position
    attribute: str | None = None


@dataclass(frozen=True, slots=True)
class Caret:
    """`4^`: Burning Wheel's obstacle-times-the-stat marker."""

    value: int
    pos: Position


@dataclass(frozen=True, slots=True)
class DiceExpr:
    """Dice written inside a formula (`1d6`)."""

    dice: Dice
    pos: Position


@dataclass(frozen=True, slots=True)
class DiceOf:
    """Dice made by a formula: `(slot - 3)d6`, `dice(n, 6)`; `(n)d6kh3`: kept, dropped or exploding as `suffix`
    says (`kh3`, `kl1`, `dh1`, `dl1`, `!`: how many dice that leaves is known only once the count is)."""

    count: Expr
    sides: Expr
    pos: Position
    suffix: str = ""


@dataclass(frozen=True, slots=True)
class BinOp:
    op: str  # + - * /
    left: Expr
    right: Expr
    pos: Position


@dataclass(frozen=True, slots=True)
class Neg:
    operand: Expr
    pos: Position


@dataclass(frozen=True, slots=True)
class Compare:
    op: str  # = != < <= > >=
    left: Expr
    right: Expr
    pos: Position


@dataclass(frozen=True, slots=True)
class Logic:
    op: str  # and, or
    items: tuple[Expr, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class NotExpr:
    operand: Expr
    pos: Position


@dataclass(frozen=True, slots=True)
class If:
    condition: Expr
    then: Expr
    otherwise: Expr
    pos: Position


@dataclass(frozen=True, slots=True)
class Call:
    """A built-in function: floor, ceil, round, abs, min, max."""

    function: str
    args: tuple[Expr, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class Lookup:
    """`bonus_armor[abs(a - b)]`: the one column of a one-key table, looked up."""

    table: Ref
    index: Expr
    pos: Position


@dataclass(frozen=True, slots=True)
class FieldOf:
    """`weapon[longsword].reach`: a number a field of an entity holds; `value` once resolved."""

    entity: Ref
    field: str
    pos: Position
    value: int | Fraction | None = None


@dataclass(frozen=True, slots=True)
class ParamField:
    """`where.multiplier`: a number a field holds of the entity a `ref KIND` parameter names. The semantic
    stage gives it the kind and every entity's number (`numbers`, by `ids`, sorted), as FieldOf has its one."""

    param: str
    field: str
    pos: Position
    kind: str | None = None
    ids: tuple[str, ...] = ()
    numbers: tuple[int | Fraction, ...] = ()

    @property
    def values(self) -> tuple[tuple[str, int | Fraction], ...]:
        return tuple(zip(self.ids, self.numbers, strict=True))


@dataclass(frozen=True, slots=True)
class EntityArg:
    """An entity named where a call gives a `ref KIND` parameter (`damage_taken(14, head, 4, no)`): made
    from the name by the semantic stage, which knows the parameter's kind, and resolved like any Ref."""

    entity: Ref
    pos: Position


@dataclass(frozen=True, slots=True)
class FormulaCall:
    """`layered_sp(a, b)`: another formula, its parameters given in order."""

    formula: Ref
    args: tuple[Expr, ...]
    pos: Position


Expr = (
    Num
    | Text
    | Var
    | Caret
    | DiceExpr
    | DiceOf
    | BinOp
    | Neg
    | Compare
    | Logic
    | NotExpr
    | If
    | Call
    | Lookup
    | FieldOf
    | ParamField
    | EntityArg
    | FormulaCall
)


def subexpressions(expr: Expr) -> tuple[Expr, ...]:
    """The expressions directly inside one (the one place that knows each node's children)."""
    match expr:
        case Num() | Text() | Var() | Caret() | DiceExpr() | FieldOf() | ParamField() | EntityArg():
            return ()
        case BinOp(_, left, right) | Compare(_, left, right) | DiceOf(left, right):
            return (left, right)
        case Neg(operand) | NotExpr(operand):
            return (operand,)
        case Logic(_, items):
            return items
        case If(condition, then, otherwise):
            return (condition, then, otherwise)
        case Call(_, args) | FormulaCall(_, args):
            return args
        case Lookup(_, index):
            return (index,)
        case _:
            assert_never(expr)


def expr_nodes(expr: Expr) -> Iterator[Expr]:
    """Every node of a formula, parents first, in writing order (no recursion: any depth is safe)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(subexpressions(node)))


@dataclass(frozen=True, slots=True)
class NameSpan:
    """Where a name (a quoted one, a called formula's) stands in a formula's text: `text[start:end]`, and
    `pos`, where it was written, which the nodes naming things carry (what they resolve to links there)."""

    start: int
    end: int
    pos: Position


@dataclass(frozen=True, slots=True)
class Formula:
    """A formula and its canonical text (what the reference and docstrings show). A formula entity may be
    computed in `steps` (`let through = max(0, raw - sp)`), in order, each naming its parameters and the
    steps before it; `expr` then names them all."""

    text: str
    expr: Expr
    pos: Position
    names: tuple[NameSpan, ...] = ()
    steps: tuple[Step, ...] = ()

    def exprs(self) -> tuple[Expr, ...]:
        """Its steps' formulas, then its own: everything it computes, in order."""
        return (*(step.formula.expr for step in self.steps), self.expr)


@dataclass(frozen=True, slots=True)
class Step:
    """`let name = formula`: one step of a formula entity."""

    name: str
    formula: Formula
    pos: Position  # the name, where it is written


def formula_nodes(formula: Formula) -> Iterator[Expr]:
    """Every node of a formula and of its steps (`expr_nodes` over each, steps first)."""
    for expr in formula.exprs():
        yield from expr_nodes(expr)


# ---------------------------------------------------------------- requirements


@dataclass(frozen=True, slots=True)
class TookLifepath:
    lifepath: Ref
    pos: Position


@dataclass(frozen=True, slots=True)
class HasTrait:
    trait: Ref
    pos: Position


@dataclass(frozen=True, slots=True)
class HasSkill:
    skill: Ref
    pos: Position


@dataclass(frozen=True, slots=True)
class Holds:
    """`career navy`: the character holds, or has done, that entity of a kind (any kind but the
    lifepath-shaped ones above, which keep their own meaning)."""

    kind: str
    entity: Ref
    pos: Position


@dataclass(frozen=True, slots=True)
class Previous:
    """`previous = Page`: the lifepath taken just before."""

    lifepath: Ref
    pos: Position


@dataclass(frozen=True, slots=True)
class GmPermission:
    pos: Position


@dataclass(frozen=True, slots=True)
class AllOf:
    items: tuple[Requirement, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class AnyOf:
    items: tuple[Requirement, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class NotReq:
    item: Requirement
    pos: Position


@dataclass(frozen=True, slots=True)
class Tag:
    text: str  # as an id
    pos: Position


@dataclass(frozen=True, slots=True)
class CountOf:
    """`2 of lifepaths in setting host tagged guard`, `any lifepath ...`, `2 of (A, B)`."""

    count: int
    setting: Ref | None
    tag: Tag | None
    lifepaths: tuple[Ref, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class Condition:
    """`age > 50`, `gender = female`; `value` is a number, or an id for gender."""

    subject: str
    op: str
    value: int | str
    pos: Position


@dataclass(frozen=True, slots=True)
class ConditionIn:
    """`position in 2..3`."""

    subject: str
    low: int | None
    high: int | None
    pos: Position


Requirement = (
    TookLifepath
    | HasTrait
    | HasSkill
    | Holds
    | Previous
    | GmPermission
    | AllOf
    | AnyOf
    | NotReq
    | CountOf
    | Condition
    | ConditionIn
)


REQUIREMENT_TYPES = (
    TookLifepath,
    HasTrait,
    HasSkill,
    Holds,
    Previous,
    GmPermission,
    AllOf,
    AnyOf,
    NotReq,
    CountOf,
    Condition,
    ConditionIn,
)


# ---------------------------------------------------------------- structured field values


@dataclass(frozen=True, slots=True)
class Range:
    """`1..10`, `2-4`, `>9`, `10+`: either end may be open (None)."""

    low: int | None
    high: int | None
    pos: Position


@dataclass(frozen=True, slots=True)
class Multiplier:
    """`x3`, `x1/2`."""

    value: Fraction
    pos: Position


@dataclass(frozen=True, slots=True)
class Choices:
    """`8 pts: A, B or C`: points, and what they buy (each entry the options to choose one from)."""

    points: int
    options: tuple[tuple[Ref, ...], ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class Pick:
    """`1 of (Doomed, Luck)`: choose `count` of the options."""

    count: int
    options: tuple[Ref, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class Offer:
    """`Ambidextrous, 1 of (Doomed, Luck)`: what a `choices of ref KIND` field gives: the entities `fixed`,
    and choices among others (`picks`), in the order written."""

    fixed: tuple[Ref, ...]
    picks: tuple[Pick, ...]
    pos: Position


@dataclass(frozen=True, slots=True)
class StatBonus:
    """`+1 M`, `+1 P`, `+1 M/P` (either: the player chooses)."""

    mental: int
    physical: int
    either: int
    pos: Position


@dataclass(frozen=True, slots=True)
class Actions:
    """A spell's casting time: `10` actions, or `x3` (times the obstacle)."""

    count: int
    per_obstacle: bool
    pos: Position


@dataclass(frozen=True, slots=True)
class Given:
    """A key named in a table's roll (`region` in `roll: region, 1d20`): each roll is given its value."""

    key: str
    pos: Position


@dataclass(frozen=True, slots=True)
class Roll:
    """A table's dice, one per key; `modifier`: the range of modifiers its rows must also cover (`+ 0..1`);
    `tens_units`: d66, two d6 read as tens and units. `given`: the keys a roll is given rather than rolls
    (`roll: region, 1d20`), the table's first keys; the dice roll the keys after them."""

    dice: tuple[Dice, ...]
    modifier: Range | None
    tens_units: bool
    text: str
    pos: Position
    given: tuple[Given, ...] = ()

    def spans(self, key: int) -> list[tuple[int, int]]:
        """The numbers key `key` can come up as, as ranges."""
        low_mod, high_mod = (self.modifier.low or 0, self.modifier.high or 0) if self.modifier else (0, 0)
        if self.tens_units:
            return [(10 * t + 1 + low_mod, 10 * t + 6 + high_mod) for t in range(1, 7)]
        dice = self.dice[key]
        return [(dice.low + low_mod, dice.high + high_mod)]

    def range_text(self, key: int) -> str:
        spans = self.spans(key)
        if len(spans) > 1:
            return ", ".join(f"{lo}-{hi}" for lo, hi in spans)
        return f"{spans[0][0]}-{spans[0][1]}"


@dataclass(frozen=True, slots=True)
class Rolls:
    """`2 x treasure`: roll on a table `count` times (a `rolls` cell, followed by `roll_chain`)."""

    count: int
    table: Ref
    pos: Position


@dataclass(frozen=True, slots=True)
class CheckSpec:
    """`check END 5+`: the mechanic's dice plus the modifier against the target. `mechanic` is None when
    the kind does not name one: the semantic stage then gives it the ruleset's only check mechanic."""

    modifier: Formula
    target: int
    mechanic: Ref | None
    pos: Position


@dataclass(frozen=True, slots=True)
class Column:
    """A table column or key: `to_hit(int)`, `next(ref table)`."""

    name: str
    type: FieldType
    pos: Position


# ---------------------------------------------------------------- tables


@dataclass(frozen=True, slots=True)
class NameKey:
    """A name: as written (`III`), or, under a `ref KIND` key, a reference (`species(ref species)`): checked,
    linked, and matched by the id it resolves to."""

    text: str
    pos: Position
    ref: Ref | None = None

    @property
    def name(self) -> str:
        """What the key matches: the id of the entity it names, else the name as written."""
        return self.ref.id if self.ref is not None and self.ref.id is not None else self.text


@dataclass(frozen=True, slots=True)
class ParityKey:
    """`odd` or `even` in a rolled table."""

    odd: bool
    pos: Position


Key = Range | NameKey | ParityKey


def range_text(low: int | None, high: int | None) -> str:
    """`3`, `2-4`, `10+`, `<=3`: a range as the rules write it."""
    if low is None:
        return f"<={high}"
    if high is None:
        return f"{low}+"
    return str(low) if low == high else f"{low}-{high}"


def key_text(key: Key) -> str:
    match key:
        case NameKey(text):
            return text
        case ParityKey(odd):
            return "odd" if odd else "even"
        case Range(low, high):
            return range_text(low, high)
        case _:
            assert_never(key)


def row_text(row: TableRow) -> str:
    """`III, 2`: a row's keys as written; `otherwise` for the row of every cell no other row names."""
    return ", ".join(key_text(k) for k in row.keys) if row.keys else "otherwise"


Cell = int | Fraction | str | bool | Unknown | NoneValue | Dice | Formula | Multiplier | Ref | CheckSpec | Rolls


@dataclass(frozen=True, slots=True)
class TableRow:
    """A row: its keys and cells. `otherwise -> ...` is the row with no keys: it fills every cell no other row
    names (a lookup or roll that finds no row lands on it)."""

    keys: tuple[Key, ...]
    cells: tuple[Cell, ...]
    source: str | None
    pos: Position

    @property
    def otherwise(self) -> bool:
        return not self.keys


@dataclass(frozen=True, slots=True)
class Record:
    """A record's fields as given, in the order its type declares them (a left-out optional field is absent)."""

    names: tuple[str, ...]
    values: tuple[Value, ...]  # one for each of `names` (pairs would not be a tuple of one type: see codec.py)
    pos: Position

    @property
    def fields(self) -> tuple[tuple[str, Value], ...]:
        return tuple(zip(self.names, self.values, strict=True))

    def get(self, name: str) -> Value | None:
        return next((value for key, value in self.fields if key == name), None)


@dataclass(frozen=True, slots=True)
class MapValue:
    """A map's entries in writing order; a key is a word, an option, or a `Ref` when the map is `by ref KIND`."""

    keys: tuple[str | Ref, ...]
    values: tuple[Value, ...]  # one for each of `keys`
    pos: Position

    @property
    def entries(self) -> tuple[tuple[str | Ref, Value], ...]:
        return tuple(zip(self.keys, self.values, strict=True))


def map_key(key: str | Ref) -> str:
    """An entry's key as the package and documents spell it: the id a reference names (its slug before the
    semantic stage resolves it), or the word itself."""
    if isinstance(key, str):
        return key
    return key.id if key.id is not None else slug(key.text)


Value = (
    int
    | Fraction
    | str
    | bool
    | Ref
    | Unknown
    | NoneValue
    | Dice
    | Formula
    | Requirement
    | Range
    | Multiplier
    | Choices
    | Offer
    | StatBonus
    | Actions
    | Column
    | Roll
    | Rolls
    | CheckSpec
    | Record
    | MapValue
    | tuple["Value", ...]
)


# ---------------------------------------------------------------- entities


Path = tuple[str | int, ...]  # where a part of an entity sits in its JSON document: ("skills", "items", 0)


@dataclass(frozen=True, slots=True)
class Entity:
    """One block, lowered: the fields it gives (as declared by its kind), and rows for tables."""

    kind: str
    id: str
    name: str
    fields: Mapping[str, Value]
    positions: Mapping[Path, Position]  # where each field (and each list item, row, key, cell) was written
    rows: tuple[TableRow, ...]
    failed: frozenset[str]  # fields whose value could not be read (already reported)
    id_pos: Position
    pos: Position
    file: str = field(default="")  # the file it was written in (display path)

    def position(self, *path: str | int) -> Position:
        """Where the closest enclosing part of `path` was written, or the entity's header."""
        for end in range(len(path), 0, -1):
            found = self.positions.get(path[:end])
            if found is not None:
                return found
        return self.id_pos

    def get(self, name: str) -> Value | None:
        return self.fields.get(name)


# ---------------------------------------------------------------- generic walks


def children(node: object) -> Iterator[object]:
    """The nodes directly inside an IR node (tuples are looked into), in field order."""
    if type(node) is tuple:
        yield from node
        return
    for name in _node_fields(type(node)) or ():
        value = getattr(node, name)
        if type(value) is tuple:
            yield from value
        elif _node_fields(type(value)) is not None:
            yield value


def walk(node: object) -> Iterator[object]:
    """Every IR node at and below `node`, parents first, in writing order (no recursion: any depth is safe)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(list(children(current))))


def refs_in(node: object) -> Iterator[Ref]:
    """Every Ref at and below `node`, in writing order (`walk`, filtered, without making the other nodes' lists)."""
    stack = [node]
    while stack:
        current = stack.pop()
        kind = type(current)
        if kind is Ref:
            yield current  # type: ignore[misc]
        elif kind is tuple:
            stack.extend(reversed(current))  # type: ignore[call-overload]
        else:
            names = _node_fields(kind)
            if names:
                stack.extend(reversed([getattr(current, name) for name in names]))


_FIELDS: dict[type, tuple[str, ...]] = {}


_NODES: dict[type, tuple[str, ...] | None] = {}


def _node_fields(cls: type) -> tuple[str, ...] | None:
    """The fields of an IR node's class (a dataclass other than Position); None for anything else."""
    try:
        return _NODES[cls]
    except KeyError:
        names = tuple(f.name for f in fields(cls)) if is_dataclass(cls) and cls is not Position else None
        _NODES[cls] = names
        return names


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(f.name for f in fields(cls)) if is_dataclass(cls) and cls is not Position else ()
        _FIELDS[cls] = names
    return names


def rebuild(node: Any, change: Callable[[Any], Any]) -> Any:
    """`node` rebuilt bottom-up with `change` applied to every IR node (tuples looked into); `change`
    returns its argument for nodes it leaves alone, and unchanged subtrees are shared, not copied."""
    if type(node) is tuple:
        items = tuple(rebuild(item, change) for item in node)
        return node if all(a is b for a, b in zip(items, node, strict=True)) else items
    names = _field_names(type(node))
    if not names:
        return node
    values = [getattr(node, name) for name in names]
    new = [rebuild(v, change) if type(v) is tuple or _field_names(type(v)) else v for v in values]
    if any(a is not b for a, b in zip(new, values, strict=True)):
        node = type(node)(*new)
    return change(node)


def runtime_roll(roll: Roll) -> rt.Roll:
    """A table's roll as the runtime rolls it (its dice, the modifiers it may take, d66)."""
    low, high = (roll.modifier.low or 0, roll.modifier.high or 0) if roll.modifier else (0, 0)
    return rt.Roll(roll.text, tuple(runtime_dice(d) for d in roll.dice), low, high, roll.tens_units)


def row_chance(runtime: rt.Roll, keys: tuple[Key, ...]) -> Fraction:
    """The exact chance that an unmodified roll lands on these rolled keys (each key its own die)."""
    exact = Fraction(1)
    for index, key in enumerate(keys[: len(runtime.dice)]):
        match key:
            case ParityKey(odd):
                exact *= runtime.parity_chance(index, int(odd))
            case Range(low, high):
                exact *= runtime.chance(index, low, high)
            case NameKey():
                exact = Fraction(0)
            case _:
                assert_never(key)
    return exact


def runtime_dice(dice: Dice) -> rt.Dice:
    """The runtime's dice for these (the compiler reads odds and bounds with the code the package runs)."""
    terms = tuple(rt.DiceTerm(t.count, t.sides, t.keep, t.lowest, t.explode) for t in dice.terms)
    parts: list[rt.DicePart] = []
    for part in dice.parts:
        match part:
            case ScaledDice(inner, factor):
                parts.append(rt.Scaled(runtime_dice(inner), factor))
            case DividedDice(inner, divisor):
                parts.append(rt.Divided(runtime_dice(inner), divisor))
            case BoundedDice(inner, low, high):
                parts.append(rt.Bounded(runtime_dice(inner), low, high))
            case _:
                assert_never(part)
    return rt.Dice(dice.text, terms, dice.modifier, tuple(parts))


plain_methods(globals())
