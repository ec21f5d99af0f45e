"""Formula helpers: the built-in functions, and the canonical text of a written value."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import assert_never

from rulesdsl.syntax import tree as m

# name -> number of arguments (None: two or more: the least or greatest of one value is a mistake)
FUNCTIONS: dict[str, int | None] = {"floor": 1, "ceil": 1, "round": 1, "abs": 1, "min": None, "max": None}

_PRECEDENCE = {"or": 1, "and": 2, "not": 3, "cmp": 4, "range": 5, "+": 6, "-": 6, "*": 7, "/": 7, "unary": 8}


# The escapes the grammar reads back (scanner.unescape); other control characters as \uXXXX.
_ESCAPED = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t"}

# Joins the texts of a list's items (a list, a points list, a call's arguments, listed lifepaths): the
# formatter breaks the line where the author did.
Join = Callable[[Sequence[m.Value | m.Name | m.String], Sequence[str]], str]


def _commas(_items: Sequence[m.Value | m.Name | m.String], texts: Sequence[str]) -> str:
    return ", ".join(texts)


def quote(text: str) -> str:
    """`text` as a string literal the grammar reads back as `text`."""
    return '"' + "".join(_ESCAPED.get(c) or (f"\\u{ord(c):04x}" if ord(c) < 32 else c) for c in text) + '"'


def expr_text(value: m.Value, *, written: bool = False, clarify: bool = False, join: Join = _commas) -> str:
    """The canonical text of a value: spaces around operators, parentheses only where needed (and, with
    `clarify`, around an `and` inside an `or`, where readers look for them). With `written`, spellings
    are kept as the author chose them (`d6`, `any lifepath`, `check 8+`, `1 pts`); without, the text is
    the one the compiler records (`1d6`, `1 of lifepaths`, `check 0 8+`, `1 pt`)."""
    printer = _Printer(written, clarify, join)
    printer.value(value, 0)
    return "".join(printer.parts)


# Where a name stands in a canonical text: the position it was written at, and its start and end there.
NameAt = tuple[m.Position, int, int]


def expr_text_names(value: m.Value) -> tuple[str, tuple[NameAt, ...]]:
    """The canonical text of a value, and where each name, quoted name and called function's name stands
    in it (keyed by the position it was written at: what the IR's nodes carry)."""
    printer = _Printer(False, False, _commas)
    printer.value(value, 0)
    return "".join(printer.parts), tuple(printer.names)


class _Printer:
    """Writes a value's canonical text piece by piece, so that it knows where each name lands."""

    def __init__(self, written: bool, clarify: bool, join: Join) -> None:
        self.written = written
        self.clarify = clarify
        self.joining = join
        self.parts: list[str] = []
        self.at = 0
        self.names: list[NameAt] = []

    def put(self, *texts: str) -> None:
        for text in texts:
            self.parts.append(text)
            self.at += len(text)

    def name(self, pos: m.Position, text: str) -> None:
        self.names.append((pos, self.at, self.at + len(text)))
        self.put(text)

    def join(self, separator: str, items: Sequence[m.Value], level: int) -> None:
        for n, item in enumerate(items):
            if n:
                self.put(separator)
            self.value(item, level)

    def items(self, items: Sequence[m.Value]) -> None:
        """A list's items, joined as the caller asks (the formatter keeps the author's line breaks; names
        are then not tracked: only the compiler's own text links its names)."""
        if self.joining is _commas:
            self.join(", ", items, 0)
            return
        texts = [expr_text(item, written=self.written, clarify=self.clarify, join=self.joining) for item in items]
        self.put(self.joining(items, texts))

    @contextmanager
    def wrap(self, own: int, outer: int) -> Iterator[None]:
        """Parentheses around what is written inside, where the value binds less tightly than its place."""
        if own < outer:
            self.put("(")
        yield
        if own < outer:
            self.put(")")

    def value(self, value: m.Value, outer: int) -> None:
        match value:
            case m.Integer(number):
                self.put(str(number))
            case m.Decimal(text):
                self.put(text)
            case m.String(text):
                self.name(value.pos, quote(text))
            case m.Name(text):
                self.name(value.pos, text)
            case m.Dice(count, sides, _, count_written, suffix):
                self.put(f"{count if count_written or not self.written else ''}d{sides}{suffix}")
            case m.Multiplier(num, den):
                self.put(f"x{num}" + (f"/{den}" if den != 1 else ""))
            case m.AtLeast(number):
                self.put(f"{number}+")
            case m.Caret(number):
                self.put(f"{number}^")
            case m.Quantity(amount, unit, signed):
                self.put(f"{'+' if signed and amount >= 0 else ''}{amount} {unit}")
            case m.OpenRange(op, operand):
                self.put(op)
                self.value(operand, _PRECEDENCE["unary"])
            case m.ClosedRange(low, high):
                with self.wrap(5, outer):
                    self.value(low, 6)
                    self.put("..")
                    self.value(high, 6)
            case m.Binary(op, left, right):
                own = _PRECEDENCE[op]
                with self.wrap(own, outer):
                    self.value(left, own)
                    self.put(f" {op} ")
                    self.value(right, own + 1)
            case m.Negative(operand):
                self.put("-")
                self.value(operand, _PRECEDENCE["unary"])
            case m.Call(function, args, _, quoted):
                self.name(value.pos, quote(function) if quoted else function)
                self.put("(")
                self.items(args)
                self.put(")")
            case m.Subscript(target, index):
                self.value(target, 9)
                self.put("[")
                self.value(index, 0)
                self.put("]")
            case m.Attribute(target, name):
                self.value(target, 9)
                self.put(".", name.text)
            case m.Comparison(op, left, right):
                with self.wrap(4, outer):
                    self.value(left, 6)
                    self.put(f" {op} ")
                    self.value(right, 6)
            case m.Membership(subject, within):
                with self.wrap(4, outer):
                    self.value(subject, 6)
                    self.put(" in ")
                    self.value(within, 5)
            case m.AnyOf(items):
                with self.wrap(1, outer):
                    self.join(" or ", items, 3 if self.clarify else 2)
            case m.AllOf(items):
                with self.wrap(2, outer):
                    self.join(" and ", items, 3)
            case m.Not(operand):
                with self.wrap(3, outer):
                    self.put("not ")
                    self.value(operand, 3)
            case m.HasTrait(ref):
                self.put("trait ")
                self.value(ref, 10)
            case m.HasSkill(ref):
                self.put("skill ")
                self.value(ref, 10)
            case m.Holds(kind, ref):
                self.put(f"{kind.text} ")
                self.value(ref, 10)
            case m.CountOf(count, selector, _, written_any):
                self.put("any " if written_any and self.written else f"{count} of ")
                self.selector(selector)
            case m.Points(amount, items, _, singular):
                plural = not singular if self.written else amount != 1
                self.put(f"{amount} pt{'s' * plural}: ")
                self.items(items)
            case m.ValueList(items):
                self.items(items)
            case m.DiceCount(count, sides, _, suffix):
                self.put("(")
                self.value(count, 0)
                self.put(f")d{sides}{suffix}")
            case m.RefMarker(kind):
                self.put(f"ref {kind.text}")
            case m.Repeat(count, table):
                self.put(f"{count} x ")
                self.value(table, 10)
            case m.Check(modifier, target):
                if modifier is None:  # adds nothing
                    self.put(f"check {target}+" if self.written else f"check 0 {target}+")
                else:
                    self.put("check ")
                    self.value(modifier, 6)
                    self.put(f" {target}+")
            case m.Record(fields):
                self.put("{")
                for n, fld in enumerate(fields):
                    self.put("  " if n else " ", f"{fld.key}: ")
                    self.value(fld.value, 0)
                self.put(" }")
            case m.MapEntry(key, entry):
                self.put(f"{key.text} ")
                self.value(entry, 10)
            case _:
                assert_never(value)

    def selector(self, selector: m.SelectLifepaths | m.SelectListed) -> None:
        if isinstance(selector, m.SelectListed):
            self.put("(")
            self.items(selector.refs)
            self.put(")")
        else:
            self.put("lifepaths" if selector.plural or not self.written else "lifepath")
            for flt in selector.filters:
                self.put(" in setting " if isinstance(flt, m.InSetting) else " tagged ")
                self.value(flt.ref, 10)
