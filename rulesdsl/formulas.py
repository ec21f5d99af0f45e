"""Formula helpers: the built-in functions, and the canonical text of a written value."""

from __future__ import annotations

import json
from typing import assert_never

from . import model as m

# name -> number of arguments (None: one or more)
FUNCTIONS: dict[str, int | None] = {"floor": 1, "ceil": 1, "round": 1, "abs": 1, "min": None, "max": None}

_PRECEDENCE = {"or": 1, "and": 2, "not": 3, "cmp": 4, "range": 5, "+": 6, "-": 6, "*": 7, "/": 7, "unary": 8}


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def expr_text(value: m.Value) -> str:
    """The canonical text of a value: spaces around operators, parentheses only where needed."""
    return _text(value, 0)


def _wrap(text: str, own: int, outer: int) -> str:
    return f"({text})" if own < outer else text


def _text(value: m.Value, outer: int) -> str:
    match value:
        case m.Integer(number):
            return str(number)
        case m.Decimal(text):
            return text
        case m.String(text):
            return _quote(text)
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
            return f"{op}{_text(operand, _PRECEDENCE['unary'])}"
        case m.ClosedRange(low, high):
            return _wrap(f"{_text(low, 6)}..{_text(high, 6)}", 5, outer)
        case m.Binary(op, left, right):
            own = _PRECEDENCE[op]
            return _wrap(f"{_text(left, own)} {op} {_text(right, own + 1)}", own, outer)
        case m.Negative(operand):
            return f"-{_text(operand, _PRECEDENCE['unary'])}"
        case m.Call(function, args):
            return f"{function}({', '.join(_text(a, 0) for a in args)})"
        case m.Subscript(target, index):
            return f"{_text(target, 9)}[{_text(index, 0)}]"
        case m.Attribute(target, name):
            return f"{_text(target, 9)}.{name.text}"
        case m.Comparison(op, left, right):
            return _wrap(f"{_text(left, 6)} {op} {_text(right, 6)}", 4, outer)
        case m.Membership(subject, within):
            return _wrap(f"{_text(subject, 6)} in {_text(within, 5)}", 4, outer)
        case m.AnyOf(items):
            return _wrap(" or ".join(_text(i, 2) for i in items), 1, outer)
        case m.AllOf(items):
            return _wrap(" and ".join(_text(i, 3) for i in items), 2, outer)
        case m.Not(operand):
            return _wrap(f"not {_text(operand, 3)}", 3, outer)
        case m.HasTrait(ref):
            return f"trait {_text(ref, 10)}"
        case m.HasSkill(ref):
            return f"skill {_text(ref, 10)}"
        case m.CountOf(count, selector):
            return f"{count} of {_selector_text(selector)}"
        case m.Points(amount, items):
            return f"{amount} pt{'s' * (amount != 1)}: " + ", ".join(_text(i, 0) for i in items)
        case m.ValueList(items):
            return ", ".join(_text(i, 0) for i in items)
        case m.DiceCount(count, sides):
            return f"({_text(count, 0)})d{sides}"
        case m.RefMarker(kind):
            return f"ref {kind.text}"
        case m.Check(modifier, target):
            return f"check {_text(modifier, 6)} {target}+"
        case _:
            assert_never(value)


def _selector_text(selector: m.SelectLifepaths | m.SelectListed) -> str:
    if isinstance(selector, m.SelectListed):
        return "(" + ", ".join(_text(r, 0) for r in selector.refs) + ")"
    parts = ["lifepaths"]
    for flt in selector.filters:
        parts.append(
            f"in setting {_text(flt.ref, 10)}" if isinstance(flt, m.InSetting) else f"tagged {_text(flt.ref, 10)}"
        )
    return " ".join(parts)
