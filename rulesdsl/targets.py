"""The Python target: what a generated package can evaluate, and the Python names it gives things.

Both the semantic checks (which report, at its position, anything the target cannot do) and the Python
emitter (which relies on it) read this module, so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import assert_never

from . import ir
from .kinds import class_name, plural
from .model import Position

# The hard keywords of every Python the packages support (3.11 to 3.13; the same list on each). Fixed
# here, not read from the running interpreter's `keyword` module, so that every interpreter names things
# alike. Soft keywords (`type`, `match`, `case`, `_`) are legal names everywhere and stay as written.
HARD_KEYWORDS = frozenset(
    {
        *("False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue"),
        *("def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in"),
        *("is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield"),
    }
)
# Names the generated modules use at module level (imports, their own definitions, the builtins their
# annotations and bodies call): a formula, table, mechanic or kind named like one would shadow it.
PACKAGE_NAMES = frozenset(
    {
        *("_rt", "_tables", "_formulas", "_mechanics", "_lifepaths", "_lp", "runtime", "Fraction", "Callable"),
        *("Mapping", "Sequence", "Iterable", "Any", "Literal", "TypedDict", "dataclass", "field", "annotations"),
        *("main", "burn", "sheet_text", "requirement_met", "unmet_requirements", "derive_attributes", "values"),
        *("ID", "TITLE", "VERSION", "SOURCE_SHA256", "CATALOG", "NAMES", "REGISTRIES"),
        *("TABLES", "FORMULAS", "ATTRIBUTES", "MECHANICS", "KINDS"),
        *("abs", "bool", "dict", "int", "list", "max", "min", "str", "tuple"),
        *("attributes", "burning", "formulas", "mechanics", "tables"),  # submodules, beside functions
    }
)
# What generated function bodies call: a parameter of that name would shadow it.
BODY_NAMES = frozenset({"min", "max", "abs", "_rt", "_tables", "_formulas", "Fraction"})
# What the class body of a generated dataclass reads (its annotations and defaults): a field of that name
# would shadow it for the fields after it.
CLASS_NAMES = frozenset(
    {"str", "int", "bool", "tuple", "Fraction", "Literal", "_rt", "_formulas", "_mechanics", "_tables"}
)
# The package's own modules: a declared kind's module must not be one of them.
MODULES = frozenset(
    {"tables", "formulas", "attributes", "mechanics", "burning", "_runtime", "_manifest", "__main__", "__init__"}
)


def python_name(name: str, taken: frozenset[str]) -> str:
    """The one way a name from the sources becomes a Python name: as written, unless it is a hard keyword
    or one of the names `taken` in its scope; then with a trailing '_' (`class` -> `class_`), as many
    as it takes. Deterministic, so every part of the package agrees on it."""
    while name in HARD_KEYWORDS or name in taken:
        name += "_"
    return name


def identifier(name: str) -> str:
    """A field or column as a dataclass attribute (`class` -> `class_`, `str` -> `str_`, `type` stays)."""
    return python_name(name, CLASS_NAMES)


def function_name(entity_id: str) -> str:
    """What a formula or derived attribute is called in the package."""
    return python_name(entity_id, PACKAGE_NAMES)


def constant_name(table_id: str) -> str:
    """A table's or mechanic's constant (`tables` -> `TABLES_`, not the package's TABLES)."""
    return python_name(table_id.upper(), PACKAGE_NAMES)


def row_class(table_id: str) -> str:
    return python_name(class_name(table_id) + "Row", PACKAGE_NAMES)


def kind_class(kind: str) -> str:
    """A kind's dataclass (`none` -> `None_`, `fraction` -> `Fraction_`)."""
    return python_name(class_name(kind), PACKAGE_NAMES)


def kind_module(kind: str) -> str:
    return python_name(plural(kind), frozenset())


def registry_name(kind: str) -> str:
    return python_name(plural(kind).upper(), PACKAGE_NAMES)


def param_name(name: str, abbr: str | None) -> str:
    """Attributes are passed by their abbreviation as the rules write it (`AGL=6`), parameters by name."""
    return python_name(abbr or name, BODY_NAMES)


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
