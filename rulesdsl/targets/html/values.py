"""Field values as HTML for the reference: every reference a link, requirements as nested lists,
tables with their exact odds (one key as rows, two keys as a grid), pool mechanics' odds.

Links are written as placeholders (`href="@kind:id@"`) and resolved once every entity has its page
(see html.py): where an entity lands depends on the size of what is rendered. A placeholder cannot
come from the sources: their text is escaped, so it never holds a raw `"`.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Literal, assert_never

from markupsafe import Markup, escape

from rulesdsl.compile import ir
from rulesdsl.compile.kinds import record_fields
from rulesdsl.compile.mechanics import highest_mechanic, under_mechanic
from rulesdsl.compile.pipeline import CompiledRuleset
from rulesdsl.language import fieldtypes as t
from rulesdsl.runtime import odds
from rulesdsl.runtime.core import Dice as RuntimeDice
from rulesdsl.runtime.core import PoolMechanic, TotalMechanic
from rulesdsl.targets.html.markdown import markdown

PLACEHOLDER = re.compile(r'href="@([a-z0-9_]+):([a-z0-9_]*)@"')
_INLINE_ITEMS = 3  # "A or B or C" stays on one line; longer junctions become lists


def href(kind: str, id_: str) -> str:
    """The placeholder for the page of an entity (resolved by html.py)."""
    return f"@{kind}:{id_}@"


# A dice value's odds on the reference: at most this many lines (more totals are grouped, a few to a line),
# and an exploding roll's totals until fewer than 1 roll in 100 goes higher (the rest is "N or more").
MAX_ODDS_LINES = 24
TAIL_SHOWN = Fraction(1, 100)


@functools.lru_cache(maxsize=4096)
def dice_odds(dice: RuntimeDice) -> tuple[str, tuple[tuple[str, Fraction], ...]] | None:
    """A dice value's range and the exact chance of each total (or group of totals, or the tail); None for a
    constant, or for odds past the runtime's limits (the value is still shown, without them)."""
    try:
        low, high = dice.minimum, dice.maximum
        if high == low:
            return None
        up_to = high
        if up_to is None:  # explodes: read on until what is left is unlikely, within the runtime's tail
            up_to = low + max(dice.minimum, 6)
            while dice.chance(up_to + 1, None) >= TAIL_SHOWN and up_to - low < odds.MAX_TAIL // 2:
                up_to = low + 2 * (up_to - low)
        spread = [(total, p) for total, p in sorted(dice.distribution(up_to).items()) if p]
        tail = dice.chance(up_to + 1, None) if high is None else Fraction(0)
    except odds.OddsTooCostly:
        return None
    lines = grouped(spread)
    if tail:
        lines.append((f"{up_to + 1} or more", tail))
    return (f"{low}-{high}" if high is not None else f"{low} or more"), tuple(lines)


def grouped(spread: list[tuple[int, Fraction]], most: int = MAX_ODDS_LINES) -> list[tuple[str, Fraction]]:
    """Totals and their chances, a few totals to a line where there are more than `most`."""
    size = -(-len(spread) // most)  # totals to a line
    lines = []
    for start in range(0, len(spread), size):
        group = spread[start : start + size]
        first, last = group[0][0], group[-1][0]
        lines.append((str(first) if first == last else f"{first}-{last}", sum((p for _, p in group), Fraction(0))))
    return lines


def total_odds(mechanic: TotalMechanic) -> tuple[str, tuple[tuple[str, Fraction], ...]] | None:
    """A total mechanic's result (with nothing added) and its exact chances, as `dice_odds` gives a dice
    value's: its one die exploding (`explode_on`: roll again and add, again on each further such face) or
    fumbling (`fumble_on`: roll again and subtract, the rolls after exploding the same way), then its floor.
    Chains of explosions are followed until fewer than 1 roll in 100 goes on; the rest is one line."""
    explode, fumble, floor = mechanic.explode_on, mechanic.fumble_on, mechanic.floor
    if explode is None and fumble is None:
        return dice_odds(mechanic.dice)
    sides = mechanic.sides
    one = Fraction(1, sides)
    longest = 0  # explosions followed, in one chain
    while explode is not None and one ** (longest + 2) >= TAIL_SHOWN:  # the chance a longer chain has
        longest += 1
    chain: dict[int, Fraction] = {}  # what the rolls after the first add up to, by chains of `longest` or fewer
    for exploded in range(longest + 1):
        for face in range(1, sides + 1):
            if face != explode:
                total = exploded * (explode or 0) + face
                chain[total] = chain.get(total, Fraction(0)) + one ** (exploded + 1)
    further = one ** (longest + 1) if explode is not None else Fraction(0)  # chains that explode on past it
    past = (longest + 1) * (explode or 0) + 1  # the least such a chain adds
    results: dict[int, Fraction] = {}
    high_tail = low_tail = Fraction(0)
    for first in range(1, sides + 1):
        if first == fumble:
            outcomes = [(-total, p) for total, p in chain.items()]
            low_tail += one * further
        elif first == explode:
            outcomes = [(first + total, p) for total, p in chain.items()]
            high_tail += one * further
        else:
            outcomes = [(first, Fraction(1))]
        for result, p in outcomes:
            result = result if floor is None else max(floor, result)
            results[result] = results.get(result, Fraction(0)) + one * p
    if floor is not None and -past <= floor:  # the long fumbles all stop at the floor
        results[floor] = results.get(floor, Fraction(0)) + low_tail
        low_tail = Fraction(0)
    lines = grouped(sorted(results.items()), 2 * MAX_ODDS_LINES)  # gaps between the chains: none grouped over
    top = (explode or 0) + past
    if low_tail:
        lines.insert(0, (f"{-past} or less", low_tail))
    if high_tail:
        lines.append((f"{top} or more", high_tail))
    least, most = min(results), max(results)
    if low_tail and high_tail:
        span = "any total"
    elif high_tail:
        span = f"{least} or more"
    else:
        span = f"{most} or less" if low_tail else f"{least}-{most}"
    return span, tuple(lines)


def dice_html(value: ir.Dice) -> Markup:
    """A dice value: as written, and its range, opening to the exact chance of each total."""
    shown = dice_odds(ir.runtime_dice(value))
    if shown is None:
        return escape(value.text)
    span, lines = shown
    return Markup('<details class="dice-odds"><summary>{} <small>{}</small></summary>{}</details>').format(
        value.text, span, odds_table(lines)
    )


def odds_table(lines: tuple[tuple[str, Fraction], ...]) -> Markup:
    """Totals and the exact chance of each (the fraction on hover)."""
    rows = Markup("").join(
        Markup('<tr><th scope="row">{}</th><td title="{}">{}</td></tr>').format(label, str(p), percent(p))
        for label, p in lines
    )
    return Markup(
        '<table class="odds"><thead><tr><th scope="col">Total</th><th scope="col">Chance</th></tr></thead>'
        "<tbody>{}</tbody></table>"
    ).format(rows)


def percent(chance: Fraction) -> str:
    """A chance as a percentage a reader can take in: exact where it is whole, never rounded to 0 or 100."""
    hundred = chance * 100
    if hundred == round(hundred):
        return f"{round(hundred)}%"
    value = float(hundred)
    if value < 0.01:
        return "<0.01%"
    if value > 99.9:
        return ">99.9%"
    return f"{value:.2g}%" if value < 1 else f"{value:.1f}%"


def key_data(key: ir.Key) -> object:
    """A key as the roll button matches numbers to it: [low, high] (None: open), "odd"/"even", or a name."""
    match key:
        case ir.NameKey(text):
            return {"name": text}
        case ir.ParityKey(odd):
            return "odd" if odd else "even"
        case ir.Range(low, high):
            return [low, high]
        case _:
            assert_never(key)


def key_words(key: ir.Key) -> str:
    """A row's key as a reader reads it: as written, a name's underscores spaces (`attacker_more`)."""
    match key:
        case ir.NameKey(text):
            return text.replace("_", " ")
        case ir.ParityKey() | ir.Range():
            return ir.key_text(key)
        case _:
            assert_never(key)


class Anchors:
    """The ids of one table's rows: the table's id, then the keys in letters and digits (`hits--3-4`), made
    unique on the page (an entity's id has no `-`, so no row's id is an entity's)."""

    def __init__(self, table: str) -> None:
        self.table = table
        self.taken: set[str] = set()

    def of(self, keys: tuple[str, ...]) -> str:
        parts = []
        for key in keys:
            spelt = "".join(c if c.isalnum() else " " for c in key.casefold().replace("+", " up").replace("<=", "to "))
            parts.append("-".join(spelt.split()) or "x")
        anchor = base = "--".join([self.table, *parts])
        n = 2
        while anchor in self.taken:
            anchor, n = f"{base}-{n}", n + 1
        self.taken.add(anchor)
        return anchor


def stat_text(stat: ir.StatBonus) -> str:
    parts = [f"{n:+d} {label}" for n, label in ((stat.mental, "M"), (stat.physical, "P"), (stat.either, "M/P")) if n]
    return ", ".join(parts)


def heading(name: str) -> str:
    """A field or column name as a header: `blood_loss` -> `Blood loss`."""
    text = name.replace("_", " ").strip()
    return text[:1].upper() + text[1:]


def _ratio_text(value: Fraction) -> str:
    return f"\u00d7{value.numerator}" + (f"/{value.denominator}" if value.denominator != 1 else "")


def short_type(field_type: t.FieldType) -> bool:
    """Values short enough for a column of the book's compact layout (the rest get a line each)."""
    match field_type:
        case (
            t.IntType()
            | t.NumberType()
            | t.BoolType()
            | t.DiceType()
            | t.RangeType()
            | t.MultiplierType()
            | t.EnumType()
            | t.RefType()
            | t.WordType()
            | t.AbbreviationType()
            | t.VersionType()
            | t.YearsType()
            | t.PointsType()
            | t.StatBonusType()
            | t.ActionsType()
            | t.ObstacleType()
            | t.RollType()
            | t.RollsType()
            | t.CheckType()
            | t.ColumnsType(params=True)  # a formula's parameters: a few names
        ):
            return True
        case t.ListType(item):
            return short_type(item)
        case (
            t.TextType()
            | t.MarkdownType()
            | t.FormulaType()
            | t.ChoicesType()
            | t.OfferType()
            | t.RequirementType()
            | t.ColumnsType()
            | t.MapType()
            | t.RecordType()
        ):
            return False
        case _:
            assert_never(field_type)


@dataclass(frozen=True, slots=True)
class RowView:
    """A table's row as the reference shows it."""

    keys: tuple[Markup, ...]
    match: str  # the keys as JSON, for the roll button to find the row it lands on
    anchor: str  # its id on the page, for a link to it (the table's id, then its keys)
    said: tuple[str, ...]  # its keys in words, for that link's name
    chance: tuple[str, str] | None  # a percentage and the exact fraction, where the table is rolled
    cells: tuple[Markup, ...]
    unknown: tuple[bool, ...]  # per cell: the source leaves it unknown
    source: str | None


@dataclass(frozen=True, slots=True)
class OtherwiseView:
    """The row for every key no other row names."""

    cells: tuple[Markup, ...]
    unknown: tuple[bool, ...]
    source: str | None
    chance: str | None  # what the other rows leave, per value of the keys a roll is given; None: not rolled
    anchor: str = ""


@dataclass(frozen=True, slots=True)
class GridCell:
    """A cell of a grid: the row its keys name, the otherwise row's, or none."""

    state: Literal["known", "unknown", "otherwise", "missing"]
    parts: tuple[tuple[str, Markup, bool], ...]  # per column: its heading, its value, whether it is unknown
    source: str | None
    match: str | None
    chance: tuple[str, str] | None
    anchor: str = ""  # the id of the row it shows, if any


@dataclass(frozen=True, slots=True)
class GridRow:
    key: Markup  # the first key, down the side
    cells: tuple[GridCell, ...]
    anchor: str = ""  # its id on the page (the table's id, then the key)
    said: str = ""


@dataclass(frozen=True, slots=True)
class GridView:
    across: tuple[Markup, ...]  # the other keys, across the top
    rows: tuple[GridRow, ...]
    single: bool  # one column: a cell shows its value alone, without the column's heading


@dataclass(frozen=True, slots=True)
class TableView:
    """A table as the reference shows it: rows (one key) or a grid (two keys or more)."""

    key_headers: tuple[str, ...]  # a key's name, else the roll; "" where the rules give neither
    columns: tuple[str, ...]
    rows: tuple[RowView, ...]
    rolled: bool
    roll: ir.Roll | None
    roll_data: str  # the dice as JSON, for the roll button: per key [[count, sides], ..., modifier]
    sourced: bool
    grid: GridView | None  # row keys, column keys, cells[row][column]
    given: tuple[str, ...] = ()  # the keys each roll is given (`roll: region, 1d20`): a row's chance is for its own
    otherwise: OtherwiseView | None = None  # the row for every key no other row names

    def unanchored(self) -> TableView:
        """The same table without its rows' ids and links: for a preview, shown over another page."""
        grid = self.grid
        if grid is not None:
            rows = tuple(replace(r, anchor="", cells=tuple(replace(c, anchor="") for c in r.cells)) for r in grid.rows)
            grid = replace(grid, rows=rows)
        otherwise = replace(self.otherwise, anchor="") if self.otherwise is not None else None
        return replace(self, rows=tuple(replace(r, anchor="") for r in self.rows), grid=grid, otherwise=otherwise)


@dataclass(frozen=True, slots=True)
class PoolTarget:
    target: int
    odds: tuple[str, ...]  # the chance of 0, 1, ... successes, as percentages
    at_least: tuple[str, ...] = ()  # the chance of at least 1, 2, ... successes


@dataclass(frozen=True, slots=True)
class PoolSize:
    dice: int
    rows: tuple[PoolTarget, ...]


@dataclass(frozen=True, slots=True)
class PoolOdds:
    """A pool mechanic's odds: per pool size, per target number, the chance of each number of successes."""

    pools: tuple[PoolSize, ...]
    sides: int


@dataclass(frozen=True, slots=True)
class OutcomeRow:
    key: int  # the dice in the pool, or the target
    odds: tuple[tuple[str, str], ...]  # per outcome: a percentage and the exact fraction


@dataclass(frozen=True, slots=True)
class OutcomeOdds:
    """A mechanic's odds of each outcome, a row for each pool size (highest) or target (under)."""

    heading: str
    caption: str
    key: str  # what a row is for: Dice, Target
    outcomes: tuple[str, ...]
    rows: tuple[OutcomeRow, ...]


def _outcome_row(key: int, chances: Mapping[str, Fraction], names: Sequence[str]) -> OutcomeRow:
    return OutcomeRow(key, tuple((percent(chances[n]), str(chances[n])) for n in names))


class Values:
    """Renders the field values of one ruleset as HTML, every reference a (placeholder) link."""

    def __init__(self, ruleset: CompiledRuleset, labels: dict[str, dict[str, str]]) -> None:
        self.ruleset = ruleset
        self.labels = labels

    def label(self, kind: str, id_: str) -> str:
        return self.labels.get(kind, {}).get(id_, id_)

    def link(self, kind: str, id_: str, text: str | None = None) -> Markup:
        shown = escape(self.label(kind, id_) if text is None else text)
        return Markup(f'<a href="@{kind}:{id_}@">{shown}</a>')  # kinds and ids are slugs: nothing to escape

    def ref(self, ref: ir.Ref) -> Markup:
        return self.link(ref.kind, ref.target)

    def value(self, field_type: t.FieldType, value: ir.Value) -> Markup:
        """A field's value (or a cell) as HTML, by its declared type."""
        match value:
            case ir.Unknown():
                return Markup('<span class="unknown">unknown</span>')
            case ir.NoneValue():
                return Markup('<span class="none" title="none">—</span>')
        match field_type:
            case t.RefType():
                assert isinstance(value, ir.Ref)
                return self.ref(value)
            case t.ListType(t.RecordType() as record):  # a list of records is one table, a row each
                assert isinstance(value, tuple)
                return self.records(record, value)
            case t.RecordType():
                return self.records(field_type, (value,))
            case t.MapType(value_type):
                assert isinstance(value, ir.MapValue)
                items = (
                    Markup('<li><span class="map-key">{}</span> {}</li>').format(
                        self.ref(key) if isinstance(key, ir.Ref) else key.replace("_", " "), self.value(value_type, v)
                    )
                    for key, v in value.entries
                )
                return Markup('<ul class="map">{}</ul>').format(Markup("").join(items))
            case t.ListType(item):
                assert isinstance(value, tuple)
                if isinstance(item, t.WordType | t.EnumType):
                    return escape(", ".join(str(v).replace("_", " ") for v in value))
                return Markup(", ").join(self.value(item, v) for v in value)
            case t.ChoicesType():
                assert isinstance(value, ir.Choices)
                return self.points(value)
            case t.OfferType():
                assert isinstance(value, ir.Offer)
                return self.offer(value)
            case t.RequirementType():
                assert isinstance(value, ir.REQUIREMENT_TYPES)
                return self.requirement(value)
            case t.FormulaType() | t.ObstacleType():
                assert isinstance(value, ir.Formula)
                return self.formula(value)
            case t.DiceType():
                assert isinstance(value, ir.Dice)
                return dice_html(value)
            case t.RangeType():
                assert isinstance(value, ir.Range)
                return escape(ir.range_text(value.low, value.high))
            case t.StatBonusType():
                assert isinstance(value, ir.StatBonus)
                return escape(stat_text(value) or "none")
            case t.YearsType():
                return escape(f"{value} yrs")
            case t.PointsType():
                return escape(f"{value} pt{'s' * (value != 1)}")
            case t.ActionsType():
                assert isinstance(value, ir.Actions)
                times = "\u00d7 (times the obstacle)" if value.per_obstacle else ""
                return escape(f"{value.count}{times}")
            case t.BoolType():
                return escape("yes" if value else "no")
            case t.MultiplierType():
                assert isinstance(value, ir.Multiplier)
                return escape(_ratio_text(value.value))
            case t.IntType():
                assert isinstance(value, int)
                return escape(f"{value:+d}" if value < 0 else str(value))
            case t.NumberType():
                return escape(str(value))
            case t.WordType():
                return escape(str(value).replace("_", " "))
            case t.RollType():
                assert isinstance(value, ir.Roll)
                return escape(value.text)
            case t.RollsType():
                assert isinstance(value, ir.Rolls)
                link = self.ref(value.table)
                return link if value.count == 1 else Markup("{} \u00d7 {}").format(value.count, link)
            case t.CheckType():
                assert isinstance(value, ir.CheckSpec)
                text = Markup("{} {}+").format(self.formula(value.modifier), value.target)
                return Markup("{} ({})").format(text, self.ref(value.mechanic)) if value.mechanic else text
            case t.ColumnsType(params=True):  # a formula's: in words, the types that are not whole numbers said
                assert isinstance(value, tuple)
                return Markup(", ").join(
                    _var(c.name) + (Markup(" ({})").format(said) if (said := _param_type(c.type)) else Markup(""))
                    for c in value
                    if isinstance(c, ir.Column)
                )
            case t.ColumnsType():
                assert isinstance(value, tuple)
                return escape(", ".join(heading(c.name) for c in value if isinstance(c, ir.Column)))
            case t.MarkdownType():  # as a description is (an entry's own fields get its heading level there)
                return markdown(str(value), heading_offset=3)
            case t.EnumType():  # one of the names the kind declares: in words
                return escape(str(value).replace("_", " "))
            case t.TextType() | t.AbbreviationType() | t.VersionType():
                return escape(str(value))
            case _:
                assert_never(field_type)

    def records(self, record: t.RecordType, values: tuple[ir.Value, ...]) -> Markup:
        """Records as a table: a column for each declared field, a row for each record (a left-out field is
        its default, or empty)."""
        decls = record_fields(record)
        head = Markup("").join(Markup("<th>{}</th>").format(heading(d.name)) for d in decls)
        rows = []
        for value in values:
            given = value.fields if isinstance(value, ir.Record) else ()
            cells = []
            for decl in decls:
                cell = dict(given).get(decl.name, decl.default)
                # labelled, for a phone, where each record's fields stack (style.css)
                shown = self.value(decl.type, cell) if cell is not None else ""
                cells.append(Markup('<td data-label="{}">{}</td>').format(heading(decl.name), shown))
            rows.append(Markup("<tr>{}</tr>").format(Markup("").join(cells)))
        return Markup('<table class="record"><thead><tr>{}</tr></thead><tbody>{}</tbody></table>').format(
            head, Markup("").join(rows)
        )

    def formula(self, formula: ir.Formula) -> Markup:
        """A formula in the book's notation, read from its expression (never its source text): ⌊WIL ÷ 2⌋,
        times, minus and at-most signs, attributes as the ruleset spells them and every name it resolved
        (attributes, tables, formulas, entities) a link; parameters in italics, quoted text without its
        quotes. A formula in steps shows each step on a line of its own (`let through = ...`), in order,
        then what it gives."""
        lines = [
            Markup('<span class="step">let {} = {}</span>').format(_var(step.name), self.expr(step.formula.expr))
            for step in formula.steps
        ]
        return Markup("<br>").join([*lines, self.expr(formula.expr)])

    def expr(self, node: ir.Expr) -> Markup:
        """An expression in mathematical notation (see `formula`)."""
        return self._expr(node)[0]

    def _operand(self, node: ir.Expr, above: int) -> Markup:
        """An operand, bracketed where it binds more loosely than the operator `above` it."""
        shown, binds = self._expr(node)
        return Markup("({})").format(shown) if binds < above else shown

    def _expr(self, node: ir.Expr) -> tuple[Markup, int]:
        match node:
            case ir.Num(value):
                return escape(_number(value)), _ATOM if value >= 0 and isinstance(value, int) else _PRODUCT
            case ir.Text(value):
                return escape(value), _ATOM
            case ir.Var(name, _, attribute):
                if attribute is None:
                    return _var(name), _ATOM
                return self.link("attribute", attribute, self.attribute_name(attribute, name)), _ATOM
            case ir.Caret(value):
                return escape(f"{value}^"), _ATOM
            case ir.DiceExpr(dice):
                return escape(dice.text), _ATOM
            case ir.DiceOf(count, sides, _, suffix):
                return Markup("{}d{}{}").format(self._operand(count, _ATOM), self._operand(sides, _ATOM), suffix), _ATOM
            case ir.BinOp(op, left, right):
                binds = _SUM if op in "+-" else _PRODUCT
                # a - (b - c), a / (b * c): the right operand of - and / keeps brackets at its own level
                tighter = binds + 1 if op in "-/" else binds
                return Markup("{} {} {}").format(
                    self._operand(left, binds), _OPERATORS[op], self._operand(right, tighter)
                ), binds
            case ir.Neg(operand):
                return Markup("\u2212{}").format(self._operand(operand, _ATOM)), _NEGATED
            case ir.Compare("=", ir.Num(truth), ir.Num(1)) if truth in (0, 1):  # `yes`, `no`, as a call gives them
                return escape("yes" if truth == 1 else "no"), _ATOM
            case ir.Compare(op, left, right):
                return Markup("{} {} {}").format(
                    self._operand(left, _SUM), _OPERATORS[op], self._operand(right, _SUM)
                ), _COMPARED
            case ir.Logic(op, items):
                binds = _AND if op == "and" else _OR
                return Markup(f" {op} ").join(self._operand(i, binds + 1) for i in items), binds
            case ir.NotExpr(operand):
                return Markup("not {}").format(self._operand(operand, _NOT)), _NOT
            case ir.If(condition, then, otherwise):
                # `if c then a else b`; an else that is itself an if reads on: `else if d then ...`
                rest = self._expr(otherwise)[0] if isinstance(otherwise, ir.If) else self._operand(otherwise, _OR)
                return Markup("if {} then {} else {}").format(
                    self.expr(condition), self._operand(then, _OR), rest
                ), _CHOICE
            case ir.Call(function, args):
                inner = Markup(", ").join(self.expr(a) for a in args)
                match function:
                    case "floor":
                        return Markup("\u230a{}\u230b").format(inner), _ATOM
                    case "ceil":
                        return Markup("\u2308{}\u2309").format(inner), _ATOM
                    case "abs":
                        return Markup("|{}|").format(inner), _ATOM
                    case _:
                        return Markup("{}({})").format(function, inner), _ATOM
            case ir.Lookup(table, index):
                return Markup("{}({})").format(self.named(table), self.expr(index)), _ATOM
            case ir.FieldOf(entity, field):
                return Markup("{} of {}").format(_var(field, italic=False), self.named(entity)), _PRODUCT
            case ir.ParamField(param, field):
                return Markup("{} of {}").format(_var(field, italic=False), _var(param)), _PRODUCT
            case ir.EntityArg(entity):
                return self.named(entity), _ATOM
            case ir.FormulaCall(formula, args):
                inner = Markup(", ").join(self.expr(a) for a in args)
                return Markup("{}({})").format(self.named(formula), inner), _ATOM
            case _:
                assert_never(node)

    def named(self, ref: ir.Ref) -> Markup:
        """What a formula names: a link, by its name, once resolved; as written before."""
        return self.ref(ref) if ref.id is not None else escape(ref.text)

    def attribute_name(self, attribute: str, written: str) -> str:
        """An attribute as the ruleset spells it: its abbreviation where the formula wrote that (in any case),
        else its name."""
        entity = self.ruleset.entities.get("attribute", {}).get(attribute)
        if entity is None:
            return written
        abbr = entity.fields.get("abbr")
        if isinstance(abbr, str) and abbr.casefold() == written.casefold():
            return abbr
        return entity.name

    def offer(self, value: ir.Offer) -> Markup:
        """`Ambidextrous, and one of: Doomed or Luck`: what is given, then each choice and how many it takes."""
        parts = [self.ref(r) for r in value.fixed]
        for pick in value.picks:
            options = Markup(" or ").join(self.ref(r) for r in pick.options)
            count = "one" if pick.count == 1 else str(pick.count)
            parts.append(Markup('<span class="choice">{} of: {}</span>').format(count, options))
        return Markup(", ").join(parts)

    def points(self, value: ir.Choices) -> Markup:
        """`8 pts: A, B or C`; the first entry is the one the lifepath requires, and is marked so."""
        items = []
        for n, option in enumerate(value.options):
            links = Markup(" or ").join(self.ref(r) for r in option)
            items.append(
                Markup('<strong class="required" title="required">{}</strong>').format(links) if n == 0 else links
            )
        head = escape(f"{value.points} pt{'s' * (value.points != 1)}")
        return head + (Markup(": ") + Markup(", ").join(items) if items else Markup(""))

    def requirement(self, req: ir.Requirement) -> Markup:
        """A requirement: short ones inline ("A or B"), longer ones as nested "any of / all of" lists."""
        if self._inline(req):
            return self._atom_or_inline(req)
        return Markup('<div class="req">{}</div>').format(self._block(req))

    def _inline(self, req: ir.Requirement) -> bool:
        match req:
            case ir.AnyOf(items) | ir.AllOf(items):
                return len(items) <= _INLINE_ITEMS and not any(isinstance(i, ir.AnyOf | ir.AllOf) for i in items)
            case ir.NotReq(item):
                return self._inline(item)
            case _:
                return True

    def _atom_or_inline(self, req: ir.Requirement) -> Markup:
        match req:
            case ir.AnyOf(items) | ir.AllOf(items):
                word = Markup(" <em>or</em> ") if isinstance(req, ir.AnyOf) else Markup(" <em>and</em> ")
                return word.join(self._atom_or_inline(r) for r in items)
            case _:
                return self.atom(req)

    def _block(self, req: ir.Requirement) -> Markup:
        match req:
            case ir.AnyOf(items) | ir.AllOf(items):
                head = "any of" if isinstance(req, ir.AnyOf) else "all of"
                inner = Markup("").join(
                    Markup("<li>{}</li>").format(self._atom_or_inline(i) if self._inline(i) else self._block(i))
                    for i in items
                )
                return Markup('<span class="junction">{}:</span><ul>{}</ul>').format(head, inner)
            case ir.NotReq(item) if not self._inline(item):
                return Markup('<span class="junction">none of:</span><ul><li>{}</li></ul>').format(self._block(item))
            case _:
                return self._atom_or_inline(req)

    def atom(self, req: ir.Requirement) -> Markup:
        match req:
            case ir.AnyOf() | ir.AllOf():
                return Markup("({})").format(self._atom_or_inline(req))
            case ir.TookLifepath(ref):
                return self.ref(ref)
            case ir.HasTrait(ref):
                return Markup('the <strong class="required">{}</strong> trait').format(self.ref(ref))
            case ir.HasSkill(ref):
                return Markup('a lifepath with the <strong class="required">{}</strong> skill').format(self.ref(ref))
            case ir.Holds(kind, ref):
                return Markup('the <strong class="required">{}</strong> {}').format(
                    self.ref(ref), kind.replace("_", " ")
                )
            case ir.Previous(ref):
                return Markup("{} just before").format(self.ref(ref))
            case ir.NotReq(item):
                return Markup("not {}").format(self.atom(item))
            case ir.GmPermission():
                return Markup("the GM's permission")
            case ir.CountOf(count, setting, tag, lifepaths):
                return self._count_of(count, setting, tag, lifepaths)
            case ir.Condition(subject, op, value):
                return escape(condition_words(subject, op, value))
            case ir.ConditionIn(subject, low, high):
                return escape(condition_in_words(subject, low, high))
            case _:
                assert_never(req)

    def _count_of(
        self, count: int, setting: ir.Ref | None, tag: ir.Tag | None, lifepaths: tuple[ir.Ref, ...]
    ) -> Markup:
        if len(lifepaths) == 1 and setting is None and tag is None:  # `2 of (Mercenary Captain)`: taken twice
            times = {1: "", 2: " twice", 3: " three times"}.get(count, f" {count} times")
            return Markup("{}{}").format(self.ref(lifepaths[0]), times)
        what: Markup = escape("lifepath" + ("s" if count != 1 else ""))
        if setting is not None:
            what = Markup("{} in the {}").format(what, self.ref(setting))
        if lifepaths:
            what = Markup("{} of {}").format(what, Markup(", ").join(self.ref(r) for r in lifepaths))
        if tag is not None:
            what = Markup("{} tagged {}").format(what, tag.text.replace("_", " "))
        return Markup("{} {}").format("any" if count == 1 else count, what)

    # ------------------------------------------------------------ tables and mechanics

    def table(self, entity: ir.Entity) -> TableView:
        roll = entity.fields.get("roll")
        rolled = roll if isinstance(roll, ir.Roll) else None
        runtime = ir.runtime_roll(rolled) if rolled is not None else None
        given = len(rolled.given) if rolled is not None else 0
        columns = [c for c in _tuple(entity.fields.get("columns")) if isinstance(c, ir.Column)]
        keys = [c for c in _tuple(entity.fields.get("keys")) if isinstance(c, ir.Column)]
        rows: list[RowView] = []
        otherwise: OtherwiseView | None = None
        totals: dict[tuple[str, ...], Fraction] = {}  # per value of the keys given: the chance the rows take
        anchors = Anchors(entity.id)
        for row in entity.rows:
            cells = tuple(self.value(c.type, v) for v, c in zip(row.cells, columns, strict=True))
            unknown = tuple(isinstance(v, ir.Unknown) for v in row.cells)
            if row.otherwise:  # its chance: what the rows leave
                otherwise = OtherwiseView(cells, unknown, row.source, None, anchors.of(("otherwise",)))
                continue
            chance = None
            if runtime is not None:
                exact = ir.row_chance(runtime, row.keys[given:])
                shown = tuple(ir.key_text(k) for k in row.keys[:given])
                totals[shown] = totals.get(shown, Fraction(0)) + exact
                chance = (percent(exact), f"{exact.numerator}/{exact.denominator}")
            said = tuple(key_words(k) for k in row.keys)
            rows.append(
                RowView(
                    keys=tuple(self.key(k) for k in row.keys),
                    match=json.dumps([key_data(k) for k in row.keys], ensure_ascii=False),
                    anchor=anchors.of(said),
                    said=said,
                    chance=chance,
                    cells=cells,
                    unknown=unknown,
                    source=row.source,
                )
            )
        if otherwise is not None and runtime is not None:
            left = {shown: 1 - total for shown, total in totals.items()} or {(): Fraction(1)}
            chance_left = "; ".join(
                (f"{', '.join(shown)}: " if shown else "") + f"{percent(c)} ({c.numerator}/{c.denominator})"
                for shown, c in left.items()
            )
            otherwise = replace(otherwise, chance=chance_left)
        key_headers = tuple(heading(k.name) for k in keys) or (rolled.text if rolled is not None else "",)
        column_headers = tuple(heading(c.name) for c in columns)
        # a table rolled for a key it is given lists its rows, each chance for its own key
        grid = self._grid(column_headers, rows, otherwise, anchors) if len(key_headers) >= 2 and not given else None
        roll_data = None
        if runtime is not None and not given:  # the button rolls; what a roll is given, the reader picks (not yet)
            dice = [[[d.count, d.sides] for d in term.terms] + [term.modifier] for term in runtime.dice]
            roll_data = json.dumps(
                {"dice": dice, "tens": runtime.tens_units, "low": runtime.modifier_low, "high": runtime.modifier_high}
            )
        return TableView(
            key_headers,
            column_headers,
            tuple(rows),
            runtime is not None,
            rolled,
            roll_data or "",
            any(row.source for row in rows) or bool(otherwise and otherwise.source),
            grid,
            key_headers[:given],
            otherwise,
        )

    def key(self, key: ir.Key) -> Markup:
        """A row key as the rules write it; a reference (`species(ref species)`) links to what it names."""
        if isinstance(key, ir.NameKey) and key.ref is not None and key.ref.id is not None:
            return self.ref(key.ref)
        return escape(key_words(key))

    def _grid(
        self, columns: tuple[str, ...], rows: list[RowView], otherwise: OtherwiseView | None, anchors: Anchors
    ) -> GridView:
        """Two keys (or more) as a grid: the first key down the side, the others across; a cell no row names
        shows the otherwise row's, where there is one."""
        down: dict[Markup, None] = {}
        across: dict[Markup, None] = {}
        cells: dict[tuple[Markup, Markup], RowView] = {}
        said: dict[Markup, str] = {}  # the first key in words
        for row in rows:
            first, rest = row.keys[0], Markup(", ").join(row.keys[1:])
            said.setdefault(first, row.said[0])
            down.setdefault(first, None)
            across.setdefault(rest, None)
            cells[(first, rest)] = row
        grid_rows: list[GridRow] = []
        for first in down:
            line: list[GridCell] = []
            for rest in across:
                found = cells.get((first, rest))
                if found is None and otherwise is not None:
                    parts = tuple(zip(columns, otherwise.cells, otherwise.unknown, strict=True))
                    line.append(GridCell("otherwise", parts, None, None, None))
                elif found is None:
                    line.append(GridCell("missing", (), None, None, None))
                else:
                    parts = tuple(zip(columns, found.cells, found.unknown, strict=True))
                    state: Literal["known", "unknown"] = "unknown" if all(found.unknown) else "known"
                    line.append(GridCell(state, parts, found.source, found.match, found.chance, found.anchor))
            grid_rows.append(GridRow(first, tuple(line), anchors.of((said[first], "row")), said[first]))
        return GridView(tuple(across), tuple(grid_rows), len(columns) == 1)

    def pool_odds(self, entity: ir.Entity) -> PoolOdds | None:
        """A pool mechanic's exact odds: per pool size (1-10 dice), the chance of each number of successes
        against each target number."""
        die = entity.fields.get("die")
        if entity.fields.get("style") != "pool" or not isinstance(die, ir.Dice) or not die.terms:
            return None
        stack = entity.fields.get("stack_on")
        fumble = entity.fields.get("fumble_ones")
        sides = die.terms[0].sides
        mechanic = PoolMechanic(
            entity.id,
            entity.name,
            sides,
            stack if isinstance(stack, int) else None,
            fumble if isinstance(fumble, int) else None,
        )
        highest = min(sides + (sides if mechanic.stack_on is not None else 0), 20)
        targets = list(range(2, highest + 1))
        pools: list[PoolSize] = []
        for dice in range(1, 11):
            table: list[PoolTarget] = []
            for target in targets:
                odds = mechanic.success_chances(dice, target)
                at_least = [sum((odds[n] for n in range(k, dice + 1)), Fraction(0)) for k in range(1, dice + 1)]
                exact = tuple(percent(odds[k]) for k in range(dice + 1))
                table.append(PoolTarget(target, exact, tuple(percent(p) for p in at_least)))
            pools.append(PoolSize(dice, tuple(table)))
        return PoolOdds(tuple(pools), sides)

    def highest_odds(self, entity: ir.Entity) -> OutcomeOdds | None:
        """A highest-die mechanic's exact odds: per pool of 0 (when it has a zero-dice rule) to 6 dice, the
        chance of each outcome (a percentage, and the exact fraction)."""
        mechanic = highest_mechanic(entity)
        if mechanic is None:
            return None
        pools = range(0 if mechanic.zero_dice is not None else 1, 7)
        zero = f" (no dice: the lowest of {mechanic.zero_dice})" if mechanic.zero_dice is not None else ""
        return OutcomeOdds(
            "Chance of each outcome, by dice in the pool",
            f"The highest d{mechanic.sides}{zero}",
            "Dice",
            mechanic.names,
            tuple(_outcome_row(dice, mechanic.chances(dice), mechanic.names) for dice in pools),
        )

    def under_odds(self, entity: ir.Entity) -> OutcomeOdds | None:
        """A roll-under mechanic's exact odds of each outcome against a few targets: a fifth, a half and
        four fifths of the way from its lowest sum to its highest (20, 50 and 80 on 1d100, 6, 10 and 15 on
        3d6)."""
        mechanic = under_mechanic(entity)
        if mechanic is None:
            return None
        lowest, highest = mechanic.dice.minimum, mechanic.dice.maximum or mechanic.dice.minimum
        targets = sorted({lowest + (highest - lowest) * tenths // 10 for tenths in (2, 5, 8)})
        return OutcomeOdds(
            "Chance of each outcome, by target",
            f"{mechanic.dice.text}: a sum at most the target succeeds",
            "Target",
            mechanic.names,
            tuple(_outcome_row(target, mechanic.chances(target), mechanic.names) for target in targets),
        )


# ---------------------------------------------------------------- formulas and conditions in words

# How tightly each form of a formula binds, loosest first: an operand that binds more loosely than the
# operator it stands in is bracketed.
_CHOICE, _OR, _AND, _NOT, _COMPARED, _SUM, _PRODUCT, _NEGATED, _ATOM = range(9)
_OPERATORS = {
    "+": "+",
    "-": "\u2212",
    "*": "\u00d7",
    "/": "\u00f7",
    "=": "=",
    "!=": "\u2260",
    "<": "<",
    "<=": "\u2264",
    ">": ">",
    ">=": "\u2265",
}


def _param_type(field_type: t.FieldType) -> str:
    """What a formula's parameter takes, in words; "" for a whole number (most do)."""
    match field_type:
        case t.IntType():
            return ""
        case t.BoolType():
            return "yes or no"
        case t.NumberType():
            return "a number"
        case t.RefType(kind):
            return f"a {kind.replace('_', ' ')}"
        case _:
            return t.type_text(field_type)


def _var(name: str, *, italic: bool = True) -> Markup:
    """A name a formula gives (a parameter, a step, a field), in words: `so_far` -> so far, in italics."""
    words = name.replace("_", " ")
    return Markup("<var>{}</var>").format(words) if italic else escape(words)


def _number(value: int | Fraction) -> str:
    text = str(value)  # a Fraction's str is `1/2`, a whole one's `3`
    return "\u2212" + text[1:] if text.startswith("-") else text


_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def ordinal(n: int) -> str:
    """`2` -> second; past tenth, `11th`, `22nd`."""
    if 1 <= n <= len(_ORDINALS):
        return _ORDINALS[n - 1]
    suffix = "th" if n % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("s" if n != 1 else "")


def condition_words(subject: str, op: str, value: int | str) -> str:
    """A requirement's condition as the book words it: `position != 2` -> not as the second lifepath,
    `age > 50` -> older than 50, `times_taken <= 1` -> taken at most once, `gender = female` -> a female
    character."""
    if isinstance(value, str):  # a name: the only condition on one is the gender's
        article = "an" if value[:1] in tuple("aeiou") else "a"
        said = f"{article} {value.replace('_', ' ')} character"
        return said if op == "=" else f"not {said}"
    match subject:
        case "position":
            place = f"the {ordinal(value)} lifepath"
            return {
                "=": f"as {place}",
                "!=": f"not as {place}",
                "<": f"before {place}",
                "<=": f"as {place} or earlier",
                ">": f"after {place}",
                ">=": f"as {place} or later",
            }[op]
        case "age" | "age_at_entry":
            when = " when taken" if subject == "age_at_entry" else ""
            return {
                "=": f"aged exactly {value}",
                "!=": f"not aged {value}",
                "<": f"younger than {value}",
                "<=": f"aged {value} or younger",
                ">": f"older than {value}",
                ">=": f"aged {value} or older",
            }[op] + when
        case "lifepaths":
            count = _plural(value, "lifepath")
            return {
                "=": f"exactly {count} in all",
                "!=": f"not exactly {count} in all",
                "<": f"fewer than {count} in all",
                "<=": f"at most {count} in all",
                ">": f"more than {count} in all",
                ">=": f"at least {count} in all",
            }[op]
        case "times_taken":
            return {
                "=": f"taken exactly {times(value)}",
                "!=": f"not taken exactly {times(value)}",
                "<": f"taken fewer than {_plural(value, 'time')}",
                "<=": f"taken at most {times(value)}",
                ">": f"taken more than {times(value)}",
                ">=": f"taken at least {times(value)}",
            }[op]
        case _:  # a condition the language adds later, before its words are written here
            verb = {
                "=": "is",
                "!=": "is not",
                "<": "is below",
                "<=": "is at most",
                ">": "is above",
                ">=": "is at least",
            }
            return f"{subject.replace('_', ' ')} {verb[op]} {value}"


def condition_in_words(subject: str, low: int | None, high: int | None) -> str:
    """`position in 2..3` -> as the second or third lifepath; `age_at_entry in 40..49` -> aged 40 to 49 when
    taken; an open or one-value range as the comparison it is."""
    if low is None or high is None or low == high:
        op = "<=" if low is None else ">=" if high is None else "="
        bound = low if low is not None else high
        assert bound is not None  # a range has a bound
        return condition_words(subject, op, bound)
    match subject:
        case "position":
            joint = "or" if high == low + 1 else "to"
            return f"as the {ordinal(low)} {joint} {ordinal(high)} lifepath"
        case "age" | "age_at_entry":
            return f"aged {low} to {high}" + (" when taken" if subject == "age_at_entry" else "")
        case "lifepaths":
            return f"{low} to {high} lifepaths in all"
        case "times_taken":
            return f"taken {low} to {high} times"
        case _:
            return f"{subject.replace('_', ' ')} is {low} to {high}"


def _tuple(value: ir.Value | None) -> tuple[ir.Value, ...]:
    return value if isinstance(value, tuple) else ()
