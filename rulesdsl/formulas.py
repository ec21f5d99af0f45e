"""Formula helpers: the built-in functions, and the canonical text of a written value."""

from __future__ import annotations

from collections.abc import Callable
from typing import assert_never

from . import model as m

# name -> number of arguments (None: two or more: the least or greatest of one value is a mistake)
FUNCTIONS: dict[str, int | None] = {"floor": 1, "ceil": 1, "round": 1, "abs": 1, "min": None, "max": None}

_PRECEDENCE = {"or": 1, "and": 2, "not": 3, "cmp": 4, "range": 5, "+": 6, "-": 6, "*": 7, "/": 7, "unary": 8}


# The escapes the grammar reads back (scanner.unescape); other control characters as \uXXXX.
_ESCAPED = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t"}

# Lets a caller spell some nodes its own way (the formatter keeps `any lifepath` and `d6` as written).
Spelling = Callable[[m.Value], str | None]


def quote(text: str) -> str:
    """`text` as a string literal the grammar reads back as `text`."""
    return '"' + "".join(_ESCAPED.get(c) or (f"\\u{ord(c):04x}" if ord(c) < 32 else c) for c in text) + '"'


def expr_text(value: m.Value, spell: Spelling | None = None, *, clarify: bool = False) -> str:
    """The canonical text of a value: spaces around operators, parentheses only where needed (and, with
    `clarify`, around an `and` inside an `or`, where readers look for them)."""
    return _text(value, 0, spell, clarify)


def _wrap(text: str, own: int, outer: int) -> str:
    return f"({text})" if own < outer else text


def _text(value: m.Value, outer: int, spell: Spelling | None, clarify: bool = False) -> str:
    if spell is not None:
        spelt = spell(value)
        if spelt is not None:
            return spelt

    def sub(inner: m.Value, level: int) -> str:
        return _text(inner, level, spell, clarify)

    match value:
        case m.Integer(number):
            return str(number)
        case m.Decimal(text):
            return text
        case m.String(text):
            return quote(text)
        case m.Name(text):
            return text
        case m.Dice(count, sides):
            return f"{count}d{sides}"
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
            return f"{function}({', '.join(sub(a, 0) for a in args)})"
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
        case m.CountOf(count, selector):
            return f"{count} of {_selector_text(selector, spell)}"
        case m.Points(amount, items):
            return f"{amount} pt{'s' * (amount != 1)}: " + ", ".join(sub(i, 0) for i in items)
        case m.ValueList(items):
            return ", ".join(sub(i, 0) for i in items)
        case m.DiceCount(count, sides):
            return f"({sub(count, 0)})d{sides}"
        case m.RefMarker(kind):
            return f"ref {kind.text}"
        case m.Check(modifier, target):
            return f"check {sub(modifier, 6)} {target}+"
        case _:
            assert_never(value)


def _selector_text(selector: m.SelectLifepaths | m.SelectListed, spell: Spelling | None) -> str:
    if isinstance(selector, m.SelectListed):
        return "(" + ", ".join(_text(r, 0, spell) for r in selector.refs) + ")"
    parts = ["lifepaths"]
    for flt in selector.filters:
        ref = _text(flt.ref, 10, spell)
        parts.append(f"in setting {ref}" if isinstance(flt, m.InSetting) else f"tagged {ref}")
    return " ".join(parts)
