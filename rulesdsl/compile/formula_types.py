"""The one type checker for formulas, wherever a formula stands.

Formula entities, derived attributes, the formula fields of declared kinds, check modifiers, table cells
and dice counts are all checked here, by one function over the resolved IR: what each node yields (a whole
number, a fraction, a number that may be either, a truth value, dice), and what in it the generated package
could not compute, with why. The semantic checks report the problems; the Python emitter reads the same
types for the generated annotations, so a formula's declared return type is what it returns.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Final, Literal, assert_never

from rulesdsl.compile import ir
from rulesdsl.language.names import slug
from rulesdsl.syntax.tree import Position

# What a formula yields. INT and FRACTION are both NUMBERs (a NUMBER may be either); a BOOL computes as 0 or 1.
Type = Literal["int", "fraction", "number", "bool", "dice"]
INT: Final = "int"
FRACTION: Final = "fraction"
NUMBER: Final = "number"
BOOL: Final = "bool"
DICE: Final = "dice"

# How a type reads in a message.
SHOWN: Mapping[str, str] = {
    INT: "a whole number",
    FRACTION: "a number",
    NUMBER: "a number",
    BOOL: "a truth value",
    DICE: "dice",
}


TRUTH = "a number or a bool"  # what a condition may be: a number counts as true unless 0

# A `ref KIND` parameter's type is "ref KIND": an entity of that kind, by id, to read numbers of
# (`where.multiplier`) or pass on to a formula that takes one; nothing to compute with itself.
REF_PREFIX: Final = "ref "


def ref_type(kind: str) -> str:
    return REF_PREFIX + kind


def shown(type_: str) -> str:
    """A type as a message says it: "a whole number", "a location"."""
    if type_.startswith(REF_PREFIX):
        kind = type_.removeprefix(REF_PREFIX)
        return f"a{'n' * (kind[:1] in 'aeiou')} {kind}"
    return SHOWN[type_]


def gives(given: str, wanted: str) -> bool:
    """Whether a call may give a parameter of type `wanted` a value of type `given`: strictly, as the
    generated function's annotation takes it (a truth value is no whole number, a number no truth value)."""
    if wanted == NUMBER:
        return given in (INT, FRACTION, NUMBER)
    return given == wanted


def fits(given: str, wanted: str) -> bool:
    """Whether a value of type `given` may stand where `wanted` is expected."""
    if given == wanted:
        return True
    if wanted == NUMBER:
        return given in (INT, FRACTION, BOOL)
    return wanted == INT and given == BOOL


@dataclass(frozen=True, slots=True)
class Callee:
    """A named formula, as a call sees it: its parameters in order, what it yields, and the names it uses
    besides its parameters (a formula that names attributes cannot be called with arguments alone)."""

    params: tuple[str, ...]
    returns: str
    extra: tuple[str, ...] = ()
    types: tuple[str, ...] = ()  # each parameter's type (INT, NUMBER, BOOL or a ref type); INT where absent
    explodes: bool = False  # it may yield an exploding roll (no highest total)

    def wants(self, index: int) -> str:
        return self.types[index] if index < len(self.types) else INT


Bound = Fraction | None  # None: unbounded that way
Span = tuple[Bound, Bound]  # the least and the greatest value a formula may take
_ANY: Span = (None, None)


@dataclass(frozen=True, slots=True)
class Table:
    """A table as a lookup sees it: what its one column yields, or why it cannot be looked up."""

    returns: str | None
    column: str | None = None  # the column a lookup reads
    problem: str | None = None
    hint: str | None = None  # how to make it one a formula can look up
    # The numbers its rows cover where they stop short and the table says nothing of what lies past them
    # (neither `clamp` nor `partial`); None at an end: open. A lookup must stay inside (E324).
    covers: Span = (None, None)
    stops: str = ""  # the same in words, for the diagnostic: "has rows for 0 to 20 only"


@dataclass(frozen=True, slots=True)
class Env:
    """What the names in a formula are: `variables` by attribute id or parameter name (INT when absent),
    the formulas it may call and the tables it may look up, by id."""

    variables: Mapping[str, str] = field(default_factory=dict)
    callees: Mapping[str, Callee] = field(default_factory=dict)
    tables: Mapping[str, Table] = field(default_factory=dict)
    exploding: frozenset[str] = frozenset()  # the steps (by slug) that may be an exploding roll


@dataclass(frozen=True, slots=True)
class Problem:
    code: str
    pos: Position
    message: str
    hint: str | None = None
    about: tuple[str, ...] = ()  # the ids of the entities it is about (Diagnostic.about)


@dataclass(slots=True)
class Typing:
    """A formula, typed: what it yields, each node's type (by node identity) and its problems."""

    returns: str
    types: dict[int, str]
    problems: list[Problem]
    explodes: bool = False  # it may yield an exploding roll

    def of(self, node: ir.Expr) -> str:
        return self.types[id(node)]


def _numeric(*kinds: str) -> str:
    """What + - * yield over these: whole numbers stay whole, a fraction anywhere makes a fraction."""
    if all(k in (INT, BOOL) for k in kinds):
        return INT
    return FRACTION if FRACTION in kinds else NUMBER


def _one_of(*kinds: str) -> str:
    """What yields one of these values unchanged (`if`, `min`, `max`): their common type."""
    if all(k in (INT, BOOL) for k in kinds):
        return BOOL if all(k == BOOL for k in kinds) else INT
    return kinds[0] if all(k == kinds[0] for k in kinds) else NUMBER


def constant(expr: ir.Expr) -> Fraction | None:
    """The value of a formula made of numbers alone (`2 - 2`, `weapon[sword].reach`), or None."""
    match expr:
        case ir.Num(value) | ir.FieldOf(_, _, _, value) if value is not None:
            return Fraction(value)
        case ir.Neg(operand):
            inner = constant(operand)
            return None if inner is None else -inner
        case ir.BinOp(op, left, right):
            a, b = constant(left), constant(right)
            if a is None or b is None:
                return None
            if op == "/":
                return None if b == 0 else a / b
            return a + b if op == "+" else a - b if op == "-" else a * b
        case ir.If(condition, then, otherwise):
            holds = decided(condition)
            return None if holds is None else constant(then if holds else otherwise)
        case _:
            return None


_DECIDE = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "=": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


def decided(expr: ir.Expr) -> bool | None:
    """Whether a condition of numbers alone holds (`0.25 <= 5`), or None: `if(0.25 <= 5, 5, t[x])` is 5, and
    a comparison with it is decided too (type checkers refuse to compare two literals)."""
    match expr:
        case ir.Compare(op, left, right) if op in _DECIDE:
            a, b = constant(left), constant(right)
            return None if a is None or b is None else bool(_DECIDE[op](a, b))
        case _:
            return None


def numbers_type(numbers: Iterable[int | Fraction]) -> str:
    """The type of a field's numbers over the entities a `ref KIND` parameter may name (`where.multiplier`):
    INT when all are whole (none at all too: no id is then known, so none is ever read), FRACTION when none
    is, else NUMBER. The generated package annotates its table of them with this very type."""
    whole = [isinstance(v, int) or v.denominator == 1 for v in numbers]
    return INT if all(whole) else FRACTION if not any(whole) else NUMBER


def check(expr: ir.Expr, env: Env) -> Typing:
    """Type a formula bottom-up (no recursion: any depth is safe)."""
    types: dict[int, str] = {}
    spans: dict[int, Span] = {}
    opens: set[int] = set()  # the nodes that may be an exploding roll
    problems: list[Problem] = []
    order = list(ir.expr_nodes(expr))
    for node in reversed(order):  # children before parents
        spans[id(node)] = _span(node, spans)
        types[id(node)] = _type(node, types, env, problems)
        if isinstance(node, ir.Lookup):
            _inside(node, spans[id(node.index)], env, problems)
        if _explodes(node, opens, env, problems):
            opens.add(id(node))
    problems.sort(key=lambda p: (p.pos.line, p.pos.column))
    return Typing(types[id(expr)], types, problems, id(expr) in opens)


def _exploding(dice: ir.Dice) -> bool:
    return any(t.explode for t in dice.terms) or any(_exploding(part.dice) for part in dice.parts)


_EXPLODING_HINT = "add an exploding roll, multiply it or bound it"


def _explodes(node: ir.Expr, opens: set[int], env: Env, problems: list[Problem]) -> bool:
    """Whether `node` may be an exploding roll, whose totals have no end: such a roll cannot be turned over,
    taken away or divided (the package could not say its odds), which is said here, not when it runs."""
    match node:
        case ir.DiceExpr(dice):
            return _exploding(dice)
        case ir.Var(name, _, None):
            return slug(name) in env.exploding
        case ir.FormulaCall(formula, _):
            callee = env.callees.get(formula.id or "")
            return callee is not None and callee.explodes
        case ir.Neg(operand) | ir.BinOp("-", _, operand) if id(operand) in opens:
            why = "an exploding roll has no highest total: it cannot be taken away"
            problems.append(Problem("E327", operand.pos, why, _EXPLODING_HINT))
            return True
        case ir.BinOp("/", operand, _) if id(operand) in opens:
            why = "an exploding roll has no highest total: it cannot be divided"
            problems.append(Problem("E327", operand.pos, why, _EXPLODING_HINT))
            return True
        case ir.If(_, then, otherwise):
            return id(then) in opens or id(otherwise) in opens
        case ir.Compare() | ir.Logic() | ir.NotExpr():
            return False  # a truth value
        case _:
            return any(id(child) in opens for child in ir.subexpressions(node))


def check_formula(formula: ir.Formula, env: Env) -> Typing:
    """Type a formula and its steps, in order: each step's type is what its name is to the steps after it
    and to the formula."""
    if not formula.steps:
        return check(formula.expr, env)
    variables = dict(env.variables)
    exploding = set(env.exploding)
    types: dict[int, str] = {}
    problems: list[Problem] = []
    for step in formula.steps:
        typing = check(step.formula.expr, replace(env, variables=variables, exploding=frozenset(exploding)))
        variables[slug(step.name)] = typing.returns
        if typing.explodes:
            exploding.add(slug(step.name))
        types.update(typing.types)
        problems += typing.problems
    final = check(formula.expr, replace(env, variables=variables, exploding=frozenset(exploding)))
    types.update(final.types)
    return Typing(final.returns, types, problems + final.problems, final.explodes)


def _inside(node: ir.Lookup, index: Span, env: Env, problems: list[Problem]) -> None:
    """A lookup of a table whose rows stop short must stay within them: where the index may go past, the
    table says what the rules do there (`clamp`, `partial`) or opens its ends."""
    found = env.tables.get(node.table.id or "")
    if found is None or found.problem is not None or found.covers == _ANY:
        return
    (low, high), (least, greatest) = found.covers, index
    below = low is not None and (least is None or least < low)
    above = high is not None and (greatest is None or greatest > high)
    if below or above:
        past = f"below {low}" if below else f"above {high}"
        why = (
            f"'{node.table.id}' {found.stops}, and this lookup may go {past}, where a lookup finds nothing; "
            "open its first and last rows (`<=N`, `N+`), or say what the rules do there: `clamp: yes` (the "
            "first or last row) or `partial: yes` (no answer: the package raises PastRows)"
        )
        problems.append(Problem("E324", node.pos, why, f"open the rows of '{node.table.id}', or give it clamp: yes"))


def _span(node: ir.Expr, spans: Mapping[int, Span]) -> Span:
    """The least and greatest value a formula may take, as far as its own shape tells (parameters and
    attributes may be any number): enough to see that `t[abs(a - b)]` never goes below 0."""

    def of(child: ir.Expr) -> Span:
        return spans.get(id(child), _ANY)

    def add(a: Bound, b: Bound) -> Bound:
        return None if a is None or b is None else a + b

    def neg(a: Bound) -> Bound:
        return None if a is None else -a

    match node:
        case ir.Num(value) | ir.FieldOf(_, _, _, value) if value is not None:
            return (Fraction(value), Fraction(value))
        case ir.Neg(operand):
            low, high = of(operand)
            return (neg(high), neg(low))
        case ir.BinOp("+", left, right):
            return (add(of(left)[0], of(right)[0]), add(of(left)[1], of(right)[1]))
        case ir.BinOp("-", left, right):
            return (add(of(left)[0], neg(of(right)[1])), add(of(left)[1], neg(of(right)[0])))
        case ir.BinOp("*", left, right):
            ends = [a * b for a in of(left) for b in of(right) if a is not None and b is not None]
            return (min(ends), max(ends)) if len(ends) == 4 else _ANY
        case ir.Call("abs", (operand,)):
            low, high = of(operand)
            if low is not None and low >= 0:
                return (low, high)
            if high is not None and high <= 0:
                return (-high, neg(low))
            return (Fraction(0), None if low is None or high is None else max(-low, high))
        case ir.Call("min" | "max" as function, args):
            lows, highs = [of(a)[0] for a in args], [of(a)[1] for a in args]
            known_lows, known_highs = [b for b in lows if b is not None], [b for b in highs if b is not None]
            if function == "min":  # at most the least high; at least the least low, if every low is known
                return (min(known_lows) if len(known_lows) == len(lows) else None, min(known_highs, default=None))
            return (max(known_lows, default=None), max(known_highs) if len(known_highs) == len(highs) else None)
        case ir.Call("floor" | "ceil" | "round", (operand,)):
            low, high = of(operand)
            return (
                None if low is None else Fraction(math.floor(low)),
                None if high is None else Fraction(math.ceil(high)),
            )
        case ir.If(_, then, otherwise):
            (a, b), (c, d) = of(then), of(otherwise)
            return (None if a is None or c is None else min(a, c), None if b is None or d is None else max(b, d))
        case _:
            return _ANY


def _type(node: ir.Expr, types: Mapping[int, str], env: Env, problems: list[Problem]) -> str:
    def of(child: ir.Expr) -> str:
        return types[id(child)]

    def need(child: ir.Expr, wanted: str, what: str = "") -> str:
        given = of(child)
        if given.startswith(REF_PREFIX):
            why = f"this is {shown(given)}, not a value to compute with"
            problems.append(Problem("E327", child.pos, why, "read a number of it: NAME.field"))
            return NUMBER
        if not fits(given, wanted):
            what = what or ("a whole number" if wanted == INT else "a number")
            said = "dice" if given == DICE else f"a {'bool' if given == BOOL else 'number'}"
            fix = f"write {what} here, not dice" if given == DICE else f"write {what} here"
            problems.append(Problem("E327", child.pos, f"this is {said}, where {what} belongs", fix))
        return given

    match node:
        case ir.Num(value):
            return INT if isinstance(value, int) or value.denominator == 1 else FRACTION
        case ir.Var(name, _, attribute):
            return env.variables.get(attribute or name) or env.variables.get(slug(name), INT)
        case ir.FieldOf(_, _, _, value):
            return FRACTION if isinstance(value, Fraction) and value.denominator != 1 else INT
        case ir.ParamField(numbers=numbers):
            return numbers_type(numbers)
        case ir.EntityArg(entity):
            return ref_type(entity.kind)
        case ir.Text():
            problems.append(
                Problem(
                    "E327", node.pos, "quoted text has no value to compute with", "write a number, or a name unquoted"
                )
            )
            return NUMBER
        case ir.Caret():
            problems.append(
                Problem(
                    "E327",
                    node.pos,
                    "a caret number (4^) is an obstacle to show, not a value to compute",
                    f"write the number alone: {node.value}",
                )
            )
            return NUMBER
        case ir.DiceExpr():
            return DICE
        case ir.DiceOf(count, sides):
            need(count, INT, "a whole number of dice")
            need(sides, INT, "a whole number of sides")
            return DICE
        case ir.BinOp("*" | "/" as op, left, right) if DICE in (of(left), of(right)):
            return _dice_scaled(op, left, right, of(left), of(right), problems)
        case ir.BinOp("/", left, right):
            need(left, NUMBER)
            need(right, NUMBER)
            if constant(right) == 0:
                problems.append(Problem("E327", right.pos, "this divides by zero", "divide by a number that is not 0"))
            return FRACTION
        case ir.BinOp("+" | "-" as op, left, right) if DICE in (of(left), of(right)):
            return _dice_arithmetic(op, left, right, of(left), of(right), problems)
        case ir.BinOp(_, left, right):
            return _numeric(need(left, NUMBER), need(right, NUMBER))
        case ir.Neg(operand) if of(operand) == DICE:
            return DICE  # a roll taken away from nothing
        case ir.Neg(operand):
            return _numeric(need(operand, NUMBER))
        case ir.Compare(_, left, right):
            need(left, NUMBER, TRUTH)
            need(right, NUMBER, TRUTH)
            return BOOL
        case ir.Logic(_, items):
            for item in items:
                need(item, NUMBER, TRUTH)
            return BOOL
        case ir.NotExpr(operand):
            need(operand, NUMBER, TRUTH)
            return BOOL
        case ir.If(condition, then, otherwise):
            need(condition, NUMBER, TRUTH)
            first, second = of(then), of(otherwise)
            if first.startswith(REF_PREFIX) or second.startswith(REF_PREFIX):
                first, second = need(then, NUMBER), need(otherwise, NUMBER)
            if (first == DICE) != (second == DICE):
                problems.append(
                    Problem(
                        "E327",
                        node.pos,
                        "one branch is dice and the other a number",
                        "make both branches dice, or both numbers",
                    )
                )
            return DICE if DICE in (first, second) else _one_of(first, second)
        case ir.Call("min" | "max" | "floor" as function, args) if DICE in [of(a) for a in args]:
            rolls = [a for a in args if of(a) == DICE]
            if function == "floor":  # a roll's totals are whole already (`1d6 / 2` is rounded down)
                return DICE
            for arg in args:
                if arg not in rolls and not fits(of(arg), INT):
                    problems.append(
                        Problem(
                            "E327",
                            arg.pos,
                            f"this is {SHOWN[of(arg)]}: a roll is bounded by whole numbers",
                            "round it: floor(...), ceil(...) or round(...)",
                        )
                    )
            for extra in rolls[1:]:
                problems.append(
                    Problem(
                        "E327",
                        extra.pos,
                        f"{function}() bounds one roll by whole numbers, not two rolls",
                        f"bound each roll on its own: {function}(1, 1d6) + {function}(1, 1d8)",
                    )
                )
            return DICE
        case ir.Call(function, args):
            given = [need(arg, NUMBER) for arg in args]
            if function in ("floor", "ceil", "round"):
                return INT
            if function == "abs":
                return _numeric(*given)
            return _one_of(*given)  # min, max: one of their arguments
        case ir.Lookup(table, index):
            need(index, INT, "a whole number to look up (round it: floor(...))")
            found = env.tables.get(table.id or "")
            if found is None:
                return NUMBER  # an unresolved name: reported where it is resolved
            if found.problem is not None:
                problems.append(Problem("E324", node.pos, found.problem, found.hint, about=(table.id or "",)))
            return found.returns or NUMBER
        case ir.FormulaCall(formula, args):
            callee = env.callees.get(formula.id or "")
            if callee is None:
                return NUMBER  # unresolved, or a formula that could not be read: reported there
            for place, (arg, param) in enumerate(zip(args, callee.params, strict=False)):
                made, wanted = of(arg), callee.wants(place)
                if not gives(made, wanted):
                    rounds = wanted == INT and made in (FRACTION, NUMBER)
                    problems.append(
                        Problem(
                            "E362",
                            arg.pos,
                            f"this is {shown(made)}, and {formula.id}() takes {shown(wanted)} as '{param}'",
                            "round it: floor(...), ceil(...) or round(...)"
                            if rounds
                            else f"give '{param}' {shown(wanted)}, or declare its type in the params of {formula.id}",
                            about=(formula.id or "",),
                        )
                    )
            if callee.extra:
                problems.append(
                    Problem(
                        "E326",
                        node.pos,
                        f"{formula.id}() names {', '.join(callee.extra)} besides its params, so it cannot be called",
                        f"add them to the params of {formula.id}",
                        about=(formula.id or "",),
                    )
                )
            elif len(args) != len(callee.params):
                own = callee.params
                problems.append(
                    Problem(
                        "E325",
                        node.pos,
                        f"{formula.id}() takes {len(own)} argument{'s' * (len(own) != 1)} "
                        f"({', '.join(sorted(own))}), not {len(args)}",
                        f"call it with {len(own)}: {formula.id}({', '.join(own)})",
                        about=(formula.id or "",),
                    )
                )
            return callee.returns
        case _:
            assert_never(node)


def _dice_arithmetic(op: str, left: ir.Expr, right: ir.Expr, first: str, second: str, problems: list[Problem]) -> str:
    """Dice add and take away dice and whole numbers (`1d6 - 1d6`, `10 - 1d6`): a roll's totals are whole."""
    for node, kind in ((left, first), (right, second)):
        if kind not in (DICE, INT, BOOL):
            verb = "add" if op == "+" else "take away"
            problems.append(
                Problem(
                    "E327",
                    node.pos,
                    f"this is {SHOWN[kind]}: dice {verb} only dice and whole numbers",
                    "round it: floor(...), ceil(...) or round(...)",
                )
            )
    return DICE


def _dice_scaled(op: str, left: ir.Expr, right: ir.Expr, first: str, second: str, problems: list[Problem]) -> str:
    """A roll times a whole number (`3d6 * 5`, either way round), or divided by one, rounded down (`1d6 / 2`)."""
    if first == DICE and second == DICE:
        problems.append(
            Problem(
                "E327",
                right.pos,
                f"a roll cannot be {_VERB[op]} a roll",
                f"{'multiply' if op == '*' else 'divide'} it by a whole number",
            )
        )
        return DICE
    if op == "/" and second == DICE:
        problems.append(Problem("E327", right.pos, "nothing is divided by a roll", "divide by a whole number"))
        return DICE
    number, kind = (right, second) if first == DICE else (left, first)
    if not fits(kind, INT):
        problems.append(
            Problem(
                "E327",
                number.pos,
                f"this is {SHOWN[kind]}: a roll is {_VERB[op]} whole numbers only",
                "round it first: floor(...)",
            )
        )
    elif op == "/" and (value := constant(number)) is not None and value < 1:
        problems.append(
            Problem("E327", number.pos, f"a roll divided by {value}: divide by 1 or more", "divide by a whole number")
        )
    return DICE


_VERB = {"*": "multiplied by", "/": "divided by"}
