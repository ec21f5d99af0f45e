"""Formula helpers: the built-in functions, and the canonical text of a written value."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import assert_never

from . import model as m

# name -> number of arguments (None: two or more: the least or greatest of one value is a mistake)
FUNCTIONS: dict[str, int | None] = {"floor": 1, "ceil": 1, "round": 1, "abs": 1, "min": None, "max": None}

_PRECEDENCE = {"or": 1, "and": 2, "not": 3, "cmp": 4, "range": 5, "+": 6, "-": 6, "*": 7, "/": 7, "unary": 8}


# The escapes the grammar reads back (syntax.unescape); other control characters as \uXXXX.
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
    return _Text(written, clarify, join).text(value, 0)


def _wrap(text: str, own: int, outer: int) -> str:
    return f"({text})" if own < outer else text


class _Text:
    def __init__(self, written: bool, clarify: bool, join: Join) -> None:
        self.written = written
        self.clarify = clarify
        self.join = join

    def text(self, value: m.Value, outer: int) -> str:
        sub = self.text
        clarify = self.clarify
        match value:
            case m.Integer(number):
                return str(number)
            case m.Decimal(text):
                return text
            case m.String(text):
                return quote(text)
            case m.Name(text):
                return text
            case m.Dice(count, sides, _, count_written):
                return f"{count if count_written or not self.written else ''}d{sides}"
            case m.Multiplier(num, den):
                return f"x{num}" + (f"/{den}" if den != 1 else "")
            case m.AtLeast(number):
                return f"{number}+"
            case m.Caret(number):
                return f"{number}^"
            case m.Quantity(amount, unit, signed):
                return f"{'+' if signed and amount >= 0 else ''}{amount} {unit}"
            case m.OpenRange(op, operand):
                return f"{op}{sub(operand, _PRECEDENCE['unary'])}"
            case m.ClosedRange(low, high):
                return _wrap(f"{sub(low, 6)}..{sub(high, 6)}", 5, outer)
            case m.Binary(op, left, right):
                own = _PRECEDENCE[op]
                return _wrap(f"{sub(left, own)} {op} {sub(right, own + 1)}", own, outer)
            case m.Negative(operand):
                return f"-{sub(operand, _PRECEDENCE['unary'])}"
            case m.Call(function, args):
                return f"{function}({self.join(args, [sub(a, 0) for a in args])})"
            case m.Subscript(target, index):
                return f"{sub(target, 9)}[{sub(index, 0)}]"
            case m.Attribute(target, name):
                return f"{sub(target, 9)}.{name.text}"
            case m.Comparison(op, left, right):
                return _wrap(f"{sub(left, 6)} {op} {sub(right, 6)}", 4, outer)
            case m.Membership(subject, within):
                return _wrap(f"{sub(subject, 6)} in {sub(within, 5)}", 4, outer)
            case m.AnyOf(items):
                return _wrap(" or ".join(sub(i, 3 if clarify else 2) for i in items), 1, outer)
            case m.AllOf(items):
                return _wrap(" and ".join(sub(i, 3) for i in items), 2, outer)
            case m.Not(operand):
                return _wrap(f"not {sub(operand, 3)}", 3, outer)
            case m.HasTrait(ref):
                return f"trait {sub(ref, 10)}"
            case m.HasSkill(ref):
                return f"skill {sub(ref, 10)}"
            case m.Holds(kind, ref):
                return f"{kind.text} {sub(ref, 10)}"
            case m.CountOf(count, selector, _, written_any):
                lead = "any" if written_any and self.written else f"{count} of"
                return f"{lead} {self.selector(selector)}"
            case m.Points(amount, items, _, singular):
                plural = not singular if self.written else amount != 1
                return f"{amount} pt{'s' * plural}: " + self.join(items, [sub(i, 0) for i in items])
            case m.ValueList(items):
                return self.join(items, [sub(i, 0) for i in items])
            case m.DiceCount(count, sides):
                return f"({sub(count, 0)})d{sides}"
            case m.RefMarker(kind):
                return f"ref {kind.text}"
            case m.Check(modifier, target):
                if modifier is None:  # adds nothing
                    return f"check {target}+" if self.written else f"check 0 {target}+"
                return f"check {sub(modifier, 6)} {target}+"
            case _:
                assert_never(value)

    def selector(self, selector: m.SelectLifepaths | m.SelectListed) -> str:
        if isinstance(selector, m.SelectListed):
            return "(" + self.join(selector.refs, [self.text(r, 0) for r in selector.refs]) + ")"
        parts = ["lifepaths" if selector.plural or not self.written else "lifepath"]
        for flt in selector.filters:
            ref = self.text(flt.ref, 10)
            parts.append(f"in setting {ref}" if isinstance(flt, m.InSetting) else f"tagged {ref}")
        return " ".join(parts)
