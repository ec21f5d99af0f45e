"""The Python target: what a generated package can evaluate, and the Python names it gives things.

Both the semantic checks (which report, at its position, anything the target cannot do) and the Python
emitter (which relies on it) read this module, so the two cannot drift apart.
"""

from __future__ import annotations

import keyword
from collections.abc import Mapping
from typing import assert_never

from . import ir
from .kinds import class_name, plural
from .model import Position

# Names the generated modules use themselves: a formula, table or kind named like one would shadow it.
PACKAGE_NAMES = frozenset(
    {
        *("_rt", "_tables", "_formulas", "_lifepaths", "runtime", "Fraction", "Callable", "Mapping", "Sequence"),
        *("Any", "dataclass", "field", "annotations", "main", "burn", "sheet_text", "requirement_met"),
        *("unmet_requirements", "derive_attributes", "ID", "TITLE", "VERSION", "SOURCE_SHA256", "CATALOG", "NAMES"),
        *("TABLES", "FORMULAS", "ATTRIBUTES", "MECHANICS", "KINDS", "values"),
    }
)
# What generated function bodies call: a parameter or formula of that name would shadow it.
BODY_NAMES = frozenset({"min", "max", "abs", "_rt", "_tables", "_formulas", "Fraction", "floor", "ceil", "round"})
RESERVED = PACKAGE_NAMES | BODY_NAMES
# The package's own modules: a declared kind's module must not be one of them.
MODULES = frozenset(
    {"tables", "formulas", "attributes", "mechanics", "burning", "_runtime", "_manifest", "__main__", "__init__"}
)


def identifier(name: str) -> str:
    """An id as a Python identifier: keywords and soft keywords get a trailing '_'."""
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        return name + "_"
    return name


def function_name(entity_id: str) -> str:
    """What a formula or derived attribute is called in the package."""
    return identifier(entity_id)


def constant_name(table_id: str) -> str:
    return identifier(table_id).upper()


def row_class(table_id: str) -> str:
    return class_name(table_id) + "Row"


def kind_module(kind: str) -> str:
    return plural(kind)


def registry_name(kind: str) -> str:
    return plural(kind).upper()


def param_name(name: str, abbr: str | None) -> str:
    """Attributes are passed by their abbreviation as the rules write it (`AGL=6`), parameters by name."""
    return identifier(abbr or name)


# What a formula yields: a whole number (INT) is also a number (NUMBER, which may be a fraction).
INT, NUMBER, BOOL, DICE = "whole number", "number", "bool", "dice"


def typed(
    expr: ir.Expr, callees: Mapping[str, str], lookups: Mapping[str, str] | None = None
) -> tuple[str, list[tuple[Position, str]]]:
    """What a formula yields in the package (a whole number, a number, a truth value or dice to roll), and
    what in it the package cannot compute, with why. `callees`: what each named formula yields;
    `lookups`: what each table's column holds (INT or NUMBER)."""
    problems: list[tuple[Position, str]] = []

    def need(node: ir.Expr, *allowed: str) -> str:
        kind = of(node)
        if kind not in allowed and not (kind == INT and NUMBER in allowed):
            wanted = " or ".join("dice" if a == DICE else f"a {a}" for a in allowed)
            problems.append((node.pos, f"this is {'dice' if kind == DICE else 'a ' + kind}, where {wanted} belongs"))
        return kind

    def numeric(*kinds: str) -> str:
        return INT if all(k in (INT, BOOL) for k in kinds) else NUMBER

    def of(node: ir.Expr) -> str:
        match node:
            case ir.Num(value):
                return INT if isinstance(value, int) or value.denominator == 1 else NUMBER
            case ir.FieldOf(_, _, _, value):
                return NUMBER if value is not None and not isinstance(value, int) else INT
            case ir.Var():
                return INT  # values given to a formula are whole numbers, as characteristics are
            case ir.Text():
                problems.append((node.pos, "quoted text has no value to compute with"))
                return NUMBER
            case ir.Caret():
                problems.append((node.pos, "a caret number (4^) is an obstacle to show, not a value to compute"))
                return NUMBER
            case ir.DiceExpr():
                return DICE
            case ir.DiceOf(count, sides):
                need(count, INT)
                need(sides, INT)
                return DICE
            case ir.BinOp(op, left, right):
                if op in ("+", "-"):
                    kinds = (need(left, NUMBER, DICE), need(right, NUMBER, DICE) if op == "+" else need(right, NUMBER))
                    return DICE if DICE in kinds else numeric(*kinds)
                kinds = (need(left, NUMBER), need(right, NUMBER))
                return NUMBER if op == "/" else numeric(*kinds)
            case ir.Neg(operand):
                return numeric(need(operand, NUMBER))
            case ir.Compare(_, left, right):
                need(left, NUMBER, BOOL)
                need(right, NUMBER, BOOL)
                return BOOL
            case ir.Logic(_, items):
                for item in items:
                    need(item, NUMBER, BOOL)
                return BOOL
            case ir.NotExpr(operand):
                need(operand, NUMBER, BOOL)
                return BOOL
            case ir.If(condition, then, otherwise):
                need(condition, NUMBER, BOOL)
                first, second = of(then), of(otherwise)
                if (first == DICE) != (second == DICE):
                    problems.append((node.pos, "one branch is dice and the other a number"))
                return DICE if DICE in (first, second) else numeric(first, second)
            case ir.Call(function, args):
                given = [need(arg, NUMBER) for arg in args]
                return INT if function in ("floor", "ceil", "round") else numeric(*given)
            case ir.Lookup(table, index):
                need(index, NUMBER)
                return (lookups or {}).get(table.id or "", NUMBER)
            case ir.FormulaCall(formula, args):
                for arg in args:
                    need(arg, NUMBER)
                return callees.get(formula.id or "", NUMBER)
            case _:
                assert_never(node)

    return of(expr), problems
