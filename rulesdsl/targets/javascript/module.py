"""Emit a ruleset as one standard ES module, `rules.js`: no dependencies, no network.

It is written from the same typed IR as the Python package (`CompiledRuleset`): the runtime
(`runtime.js`, beside this file, type-checked by TypeScript) is copied in verbatim, then the ruleset's
entities as plain frozen objects, its tables, mechanics, formulas (compiled to JavaScript functions, not
interpreted), derived attributes and, where it has lifepaths, burning. Every literal goes through `js()`
(JSON), so no text from the sources can become code. An entity whose form this target cannot yet write
becomes one that throws `NotSupported` when used, and is listed in the module's NOT_SUPPORTED.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import partial
from pathlib import Path
from typing import Any, assert_never

from rulesdsl import __version__
from rulesdsl.compile import formula_types as ft
from rulesdsl.compile import ir
from rulesdsl.compile.checks.formulas import attribute_types, columns, param_types
from rulesdsl.compile.checks.formulas import environment as environment_of
from rulesdsl.compile.kinds import CORE_KINDS, FieldDecl, Kind, record_fields
from rulesdsl.compile.mechanics import highest_mechanic, under_mechanic
from rulesdsl.compile.pipeline import CompiledRuleset
from rulesdsl.compile.python_names import param_name, registry_name
from rulesdsl.language import fieldtypes as t
from rulesdsl.language.names import slug
from rulesdsl.targets.digests import Aside, Digests, digest
from rulesdsl.targets.labels import labels
from rulesdsl.targets.python.package import derived_order

RUNTIME_JS = Path(__file__).with_name("runtime.js")
SAFE = 2**53 - 1  # the whole numbers a JS number holds exactly
# The kinds whose display names requirements and sheets show (as the Python package's burning NAMES).
NAMED_KINDS = ("lifepath", "setting", "skill", "stock", "trait")
# Mechanic styles and the runtime class each is written as; a style missing here is NotSupported.
MECHANIC_CLASSES = {
    "pool": "PoolMechanic",
    "total": "TotalMechanic",
    "check": "CheckMechanic",
    "contest": "ContestMechanic",
    "highest": "HighestMechanic",
    "under": "UnderMechanic",
}
MECHANIC_RULES = {"pool": ("stack_on", "fumble_ones"), "total": ("explode_on", "fumble_on", "floor")}


class NotEmitted(Exception):
    """A form this target does not write yet: the entity holding it throws NotSupported instead."""


def _json(data: object) -> str:
    """JSON text with every `<` escaped: a `</script>` in the sources stays text even where rules.js is
    written inside an HTML page."""
    return json.dumps(data, ensure_ascii=True).replace("<", "\\u003c")


def js(value: object) -> str:
    """A JavaScript literal for plain data (JSON, which JavaScript reads as its own literals)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return _json(value)
    if isinstance(value, int):
        if abs(value) > SAFE:
            raise NotEmitted(f"the whole number {value} is past what a JavaScript number holds exactly")
        return str(value)
    if isinstance(value, Fraction):
        if value.denominator == 1:
            return js(value.numerator)
        return f"frac({value.numerator}n, {value.denominator}n)"
    if isinstance(value, tuple | list):
        return "[" + ", ".join(js(v) for v in value) + "]"
    raise TypeError(f"no JavaScript literal for {type(value).__name__}")


def _fraction(value: Fraction) -> str:
    """A Fraction kept a Fraction (a multiplier of 1 too), as the Python package keeps it."""
    return f"frac({value.numerator}n, {value.denominator}n)"


def _number(value: int | Fraction) -> str:
    return js(value) if isinstance(value, int) or value.denominator == 1 else _fraction(value)


# ---------------------------------------------------------------- values


def dice_code(dice: ir.Dice) -> str:
    terms = ", ".join(_term_code(term) for term in dice.terms)
    parts = ", ".join(_part_code(part) for part in dice.parts)
    return f"new Dice({js(dice.text)}, [{terms}], {js(dice.modifier)}, [{parts}])"


def _term_code(term: ir.DiceTerm) -> str:
    return f"new DiceTerm({term.count}, {term.sides}, {js(term.keep)}, {js(term.lowest)}, {js(term.explode)})"


def _part_code(part: ir.DicePart) -> str:
    match part:
        case ir.ScaledDice(inner, factor):
            return f'{{kind: "scaled", dice: {dice_code(inner)}, factor: {js(factor)}}}'
        case ir.DividedDice(inner, divisor):
            return f'{{kind: "divided", dice: {dice_code(inner)}, divisor: {js(divisor)}}}'
        case ir.BoundedDice(inner, low, high):
            return f'{{kind: "bounded", dice: {dice_code(inner)}, low: {js(low)}, high: {js(high)}}}'
        case _:
            assert_never(part)


def requirement_code(req: ir.Requirement) -> str:
    match req:
        case ir.TookLifepath(ref):
            return f"new TookLifepath({js(ref.target)})"
        case ir.HasTrait(ref):
            return f"new HasTrait({js(ref.target)})"
        case ir.HasSkill(ref):
            return f"new HasSkill({js(ref.target)})"
        case ir.Holds(kind, ref):
            return f"new Holds({js(kind)}, {js(ref.target)})"
        case ir.Previous(ref):
            return f"new Previous({js(ref.target)})"
        case ir.GmPermission():
            return "new GmPermission()"
        case ir.NotReq(item):
            return f"new Not({requirement_code(item)})"
        case ir.AnyOf(items):
            return "new AnyOf([" + ", ".join(requirement_code(r) for r in items) + "])"
        case ir.AllOf(items):
            return "new AllOf([" + ", ".join(requirement_code(r) for r in items) + "])"
        case ir.CountOf(count, setting, tag, lifepaths):
            setting_id = setting.target if setting is not None else None
            tag_text = tag.text if tag is not None else None
            return f"new CountOf({count}, {js(setting_id)}, {js(tag_text)}, {js([r.target for r in lifepaths])})"
        case ir.Condition(subject, op, value):
            return f"new Condition({js(subject)}, {js(op)}, {js(value)})"
        case ir.ConditionIn(subject, low, high):
            return f"new Condition({js(subject)}, {js('=')}, null, {js(low)}, {js(high)})"
        case _:
            assert_never(req)


def roll_code(roll: ir.Roll) -> str:
    low, high = (roll.modifier.low or 0, roll.modifier.high or 0) if roll.modifier else (0, 0)
    dice = ", ".join(dice_code(d) for d in roll.dice)
    given = js([g.key for g in roll.given])
    return f"new Roll({js(roll.text)}, [{dice}], {js(low)}, {js(high)}, {js(roll.tens_units)}, {given})"


def _record(pairs: Iterator[tuple[str, str]]) -> str:
    """An object literal; a key `__proto__` is computed, so that it is a key and never sets the prototype."""
    return "{" + ", ".join(f"{_property(name)}: {code}" for name, code in pairs) + "}"


def _property(name: str) -> str:
    return f"[{js(name)}]" if name == "__proto__" else js(name)


@dataclass(frozen=True, slots=True)
class Names:
    """What the names in a formula become in JavaScript, and what its calls and lookups yield."""

    params: Mapping[str, str]  # name (attribute id or parameter) -> JavaScript code
    env: ft.Env
    formulas: Mapping[str, str]  # formula id -> the function's name
    mechanics: Mapping[str, str]  # mechanic id -> its constant


def value_code(field_type: t.FieldType, value: ir.Value, names: Names) -> str:
    """A field's value (or a cell) as a JavaScript expression."""
    match value:
        case ir.Unknown():
            return "UNKNOWN"
        case ir.NoneValue():
            return "null"
    match field_type:
        case t.IntType() | t.YearsType() | t.PointsType() | t.BoolType():
            assert isinstance(value, int)
            return js(value)
        case t.NumberType():
            assert isinstance(value, int | Fraction)
            return _number(value)
        case t.MultiplierType():
            assert isinstance(value, ir.Multiplier)
            return _fraction(value.value)
        case t.TextType() | t.MarkdownType() | t.WordType() | t.AbbreviationType() | t.VersionType() | t.EnumType():
            assert isinstance(value, str)
            return js(value)
        case t.RefType():
            assert isinstance(value, ir.Ref)
            return js(value.target)
        case t.ObstacleType():
            assert isinstance(value, ir.Formula)
            return js(value.text)
        case t.DiceType():
            assert isinstance(value, ir.Dice)
            return dice_code(value)
        case t.FormulaType():
            assert isinstance(value, ir.Formula)
            return formula_value(value, names)
        case t.RangeType():
            assert isinstance(value, ir.Range)
            return _record(iter((("low", js(value.low)), ("high", js(value.high)))))
        case t.StatBonusType():
            assert isinstance(value, ir.StatBonus)
            return _record(
                iter((("mental", js(value.mental)), ("physical", js(value.physical)), ("either", js(value.either))))
            )
        case t.ActionsType():
            assert isinstance(value, ir.Actions)
            return _record(iter((("count", js(value.count)), ("per_obstacle", js(value.per_obstacle)))))
        case t.ChoicesType():
            assert isinstance(value, ir.Choices)
            options = [[r.target for r in option] for option in value.options]
            return _record(iter((("points", js(value.points)), ("options", js(options)))))
        case t.OfferType():
            assert isinstance(value, ir.Offer)
            picks = [
                _record(iter((("count", js(p.count)), ("options", js([r.target for r in p.options])))))
                for p in value.picks
            ]
            return f"new Offer({js([r.target for r in value.fixed])}, [{', '.join(picks)}])"
        case t.RequirementType():
            assert isinstance(value, ir.REQUIREMENT_TYPES)
            return requirement_code(value)
        case t.ColumnsType():
            assert isinstance(value, tuple)
            return js([c.name for c in value if isinstance(c, ir.Column)])
        case t.ListType(item):
            assert isinstance(value, tuple)
            return "[" + ", ".join(value_code(item, v, names) for v in value) + "]"
        case t.RollType():
            assert isinstance(value, ir.Roll)
            return roll_code(value)
        case t.RollsType():
            assert isinstance(value, ir.Rolls)
            return f"new Rolls({js(value.count)}, {js(value.table.target)})"
        case t.CheckType():
            assert isinstance(value, ir.CheckSpec)
            if value.mechanic is None or value.mechanic.target not in names.mechanics:
                raise NotEmitted("a check on a mechanic this target does not write")
            mechanic = names.mechanics[value.mechanic.target]
            return f"new Check({mechanic}, {formula_value(value.modifier, names)}, {js(value.target)})"
        case t.MapType(value_type):
            assert isinstance(value, ir.MapValue)
            return _record((ir.map_key(k), value_code(value_type, v, names)) for k, v in value.entries)
        case t.RecordType() as record:
            assert isinstance(value, ir.Record)
            return _record(_fields(record_fields(record), dict(value.fields), names))
        case _:
            assert_never(field_type)


def _fields(decls: tuple[FieldDecl, ...], given: Mapping[str, ir.Value], names: Names) -> Iterator[tuple[str, str]]:
    """Every declared field, in declaration order: as given, else its default, an empty list or null (the
    shape the Python package's dataclass gives it)."""
    for decl in decls:
        value = given.get(decl.name)
        if value is not None:
            yield decl.name, value_code(decl.type, value, names)
        elif decl.default is not None:
            yield decl.name, value_code(decl.type, decl.default, names)
        else:
            yield decl.name, "[]" if isinstance(decl.type, t.ListType) else "null"


# ---------------------------------------------------------------- formulas


def formula_code(expr: ir.Expr, names: Names) -> str:
    """JavaScript for a formula: exact arithmetic through the runtime's helpers, as the Python package's."""
    return _code(expr, names, ft.check(expr, names.env))


def _code(expr: ir.Expr, names: Names, typing: ft.Typing) -> str:
    def sub(node: ir.Expr) -> str:
        return _code(node, names, typing)

    def args(nodes: tuple[ir.Expr, ...]) -> str:
        return ", ".join(sub(a) for a in nodes)

    match expr:
        case ir.Num(value):
            return _number(value)
        case ir.Var(name, _, attribute):
            return names.params[attribute or slug(name)]
        case ir.DiceExpr(dice):
            return dice_code(dice)
        case ir.DiceOf(count, sides, _, suffix):
            return f"dice({sub(count)}, {sub(sides)}, {js(suffix)})"
        case ir.BinOp("/", left, right) if typing.of(expr) == ft.DICE:
            return f"floordiv({sub(left)}, {sub(right)})"
        case ir.Call("floor", (operand,)) if typing.of(expr) == ft.DICE:
            return sub(operand)
        case ir.Call("max" | "min" as function, call_args) if typing.of(expr) == ft.DICE:
            return f"dice{function.capitalize()}({args(call_args)})"
        case ir.BinOp(op, left, right):
            helper = {"+": "add", "-": "sub", "*": "mul", "/": "div"}[op]
            return f"{helper}({sub(left)}, {sub(right)})"
        case ir.Neg(operand):
            return f"neg({sub(operand)})"
        case ir.Compare(op, left, right):
            a, b = ft.constant(left), ft.constant(right)
            if a is not None and b is not None:  # `2 = 5`: decided here, as the Python package does
                return js(compare_constants(op, a, b))
            return f"compare({js(op)}, {sub(left)}, {sub(right)})"
        case ir.Logic(op, items):
            return "(" + f" {'&&' if op == 'and' else '||'} ".join(f"truth({sub(i)})" for i in items) + ")"
        case ir.NotExpr(operand):
            return f"!truth({sub(operand)})"
        case ir.If(condition, then, otherwise):
            return f"(truth({sub(condition)}) ? {sub(then)} : {sub(otherwise)})"
        case ir.Call(function, call_args):
            if function not in ("floor", "ceil", "round", "abs", "min", "max"):
                raise NotEmitted(f"the function {function}")
            return f"{function}({args(call_args)})"
        case ir.FieldOf(_, _, _, value):
            assert value is not None, "the semantic checks give every field reference its value"
            return _number(value)
        case ir.Lookup(table, index):
            column = names.env.tables[table.target].column
            assert column is not None, "the checks let formulas look up only tables with one number column"
            return f"TABLES[{js(table.target)}].at({sub(index)})[{js(column)}]"
        case ir.FormulaCall(formula, call_args):
            params = names.env.callees[formula.target].params
            given = ", ".join(f"{js(param_name(p, None))}: {sub(a)}" for p, a in zip(params, call_args, strict=True))
            return f"{names.formulas[formula.target]}({{{given}}})"
        case ir.ParamField(param, name, _, kind):
            assert kind is not None, "the semantic checks give every parameter's field its kind"
            numbers = "{" + ", ".join(f"{js(i)}: {_number(v)}" for i, v in expr.values) + "}"
            return f"{numbers}[{names.params[slug(param)]}]"
        case ir.EntityArg(entity):
            return js(entity.target)
        case ir.Text() | ir.Caret():
            raise NotEmitted(f"{type(expr).__name__} in an evaluated formula")
        case _:
            assert_never(expr)


def compare_constants(op: str, a: Fraction, b: Fraction) -> bool:
    match op:
        case "=":
            return a == b
        case "!=":
            return a != b
        case "<":
            return a < b
        case "<=":
            return a <= b
        case ">":
            return a > b
        case ">=":
            return a >= b
        case _:
            raise AssertionError(f"no comparison {op}")


def formula_value(formula: ir.Formula, names: Names) -> str:
    """A formula kept as data, evaluated by name: `new Formula("6 - PRS", ["PRS"], (v) => ...)`."""
    written: dict[str, str] = {}
    for node in ir.expr_nodes(formula.expr):
        if isinstance(node, ir.Var):
            written.setdefault(node.attribute or slug(node.name), node.name)
    params = {key: f"v[{js(name.casefold())}]" for key, name in written.items()}  # as Formula.evaluate folds
    code = formula_code(formula.expr, replace(names, params=params))
    needed = list(dict.fromkeys(written.values()))
    return f"new Formula({js(formula.text)}, {js(needed)}, (v) => {code})"


# ---------------------------------------------------------------- the module


# What rules.js defines besides the kinds' registries: a registry takes none of these names.
GENERATED_NAMES = frozenset(
    {
        "ID",
        "TITLE",
        "VERSION",
        "SOURCE_SHA256",
        "NAMES",
        "MECHANICS",
        "FORMULAS",
        "TABLES",
        "ATTRIBUTES",
        "NOT_SUPPORTED",
    }
)


def runtime_names() -> frozenset[str]:
    """The names runtime.js declares at its top level (`export function x`, `class X`, `const X`)."""
    found = set()
    for line in RUNTIME_JS.read_text(encoding="utf-8").splitlines():
        words = line.split() if line[:1] not in (" ", "\t") else []
        if words[:1] == ["export"]:
            words = words[1:]
        if len(words) > 1 and words[0] in ("function", "class", "const", "let"):
            found.add(words[1].split("(")[0].split("=")[0])
    return frozenset(found)


def registry_names(ruleset: CompiledRuleset) -> dict[str, str]:
    """The constant each kind's registry is exported as: the Python package's name (`LIFEPATHS`), with `_`
    added while it would be a name the module already defines."""
    taken = set(GENERATED_NAMES | runtime_names())
    result = {}
    for kind in ruleset.kinds:
        name = registry_name(kind)
        while name in taken:
            name += "_"
        taken.add(name)
        result[kind] = name
    return result


def registry_kinds(ruleset: CompiledRuleset) -> list[str]:
    """The kinds rules.js exports a registry of besides ATTRIBUTES: every kind not a core one, the built-in
    ones only where they have entities."""
    return [
        name
        for name, kind in ruleset.kinds.items()
        if name not in CORE_KINDS and not (kind.builtin and not ruleset.entities.get(name))
    ]


@dataclass(frozen=True, slots=True)
class Module:
    """rules.js, and what it does not do yet: (kind, id, why) of each entity that throws NotSupported."""

    text: str
    unsupported: tuple[tuple[str, str, str], ...]


_Codes = dict[tuple[str, str], tuple[object, str]]  # (kind, id) -> (name and fields, or their digest; code)


class CodeMemo:
    """Each entity's code in rules.js, kept for the next emit (`rulesdsl serve`, a build that writes rules.js
    twice, or the next `rulesdsl build`, which keeps it in the cache folder: given `digests`), by ruleset and
    entity: reused when the entity's id, name and fields are last time's, and the ruleset's kinds and what
    names become (Names) are too (else none is reused). It holds what the last emit of each ruleset used,
    nothing more. Across runs, what is compared is kept as digests (see targets/digests.py)."""

    def __init__(self, digests: Digests | None = None) -> None:
        self.digests = digests  # across runs: the build's (see digests.Digests)
        self._kept: dict[str, tuple[object, _Codes]] = {}
        self.made = 0  # entities whose code emits made (rather than took from the memo)

    def of(self, ruleset: str, context: object) -> _Codes:
        """Last emit's codes of the ruleset, if it was made in this context (kinds, Names)."""
        last = self._kept.get(ruleset)
        return last[1] if last is not None and context is not None and last[0] == context else {}

    def keep(self, ruleset: str, context: object, used: _Codes) -> None:
        self._kept[ruleset] = (context, used)

    def keep_only(self, rulesets: Collection[str]) -> None:
        self._kept = {r: kept for r, kept in self._kept.items() if r in rulesets}

    def digests_of(self, ruleset: str) -> tuple[object, dict[object, object]]:
        """The context and each code's digest (across runs): how far two memos differ (see build.Kept)."""
        kept = self._kept.get(ruleset)
        return (None, {}) if kept is None else (kept[0], {key: deps for key, (deps, _) in kept[1].items()})

    def data(self, ruleset: str, aside: Aside) -> dict[str, Any] | None:
        """A ruleset's codes as JSON-compatible data, the codes `aside` (across runs only); None if none are
        kept."""
        assert self.digests is not None
        kept = self._kept.get(ruleset)
        if kept is None or kept[0] is None:
            return None
        codes = [
            [kind, id_, deps, aside.put(code)] for (kind, id_), (deps, code) in kept[1].items() if deps is not None
        ]
        return {"context": kept[0], "codes": codes}

    def load(self, ruleset: str, data: object, aside: Aside) -> bool:
        """A ruleset's codes as `data` gave them (from the cache folder); False, and none, for anything else."""
        assert self.digests is not None
        if type(data) is not dict or type(data.get("context")) is not str or type(data.get("codes")) is not list:
            return False
        codes: _Codes = {}
        for item in data["codes"]:
            if type(item) is not list or len(item) != 4 or not all(type(v) is str for v in item[:3]):
                return False
            try:
                codes[(item[0], item[1])] = (item[2], aside.get(item[3]))
            except TypeError:
                return False
        self._kept[ruleset] = (data["context"], codes)
        return True


def render(ruleset: CompiledRuleset, memo: CodeMemo | None = None) -> str:
    """rules.js: the runtime, then the ruleset."""
    return emit(ruleset, memo).text


def emit(ruleset: CompiledRuleset, memo: CodeMemo | None = None) -> Module:
    """rules.js (see render), with the entities it writes as throwing NotSupported."""
    env = environment_of(ruleset.entities)
    unsupported: list[tuple[str, str, str]] = []
    out: list[str] = []

    def attempt(kind: str, entity_id: str, write: Callable[[], str]) -> str:
        """`write()`, or where it holds a form not written yet, an entity every use of which throws."""
        try:
            return write()
        except NotEmitted as exc:
            unsupported.append((kind, entity_id, str(exc)))
            return f"notSupported({js(kind)}, {js(entity_id)}, {js(str(exc))})"

    registries = registry_names(ruleset)
    formula_ids = list(ruleset.entities.get("formula", {}))
    formula_names = {fid: f"$formula{i}" for i, fid in enumerate(formula_ids)}
    mechanic_ids = [
        mid for mid, e in ruleset.entities.get("mechanic", {}).items() if str(e.fields.get("style")) in MECHANIC_CLASSES
    ]
    mechanic_names = {mid: f"$mechanic{i}" for i, mid in enumerate(ruleset.entities.get("mechanic", {}))}
    names = Names({}, env, formula_names, {m: mechanic_names[m] for m in mechanic_ids})
    context: object = (dict(ruleset.kinds), names)
    if memo is not None and memo.digests is not None:
        context = digest(context)
    kept = memo.of(ruleset.id, context) if memo is not None else {}
    used: _Codes = {}

    def code_of(kind: Kind, entity: ir.Entity) -> str:
        """entity_code, or last emit's where nothing it reads changed (see CodeMemo)."""
        if memo is None:
            return entity_code(kind, entity, names)
        key = (kind.name, entity.id)
        # across runs: the whole entity's digest (its positions too: one digest serves every target)
        deps = (entity.name, entity.fields) if memo.digests is None else memo.digests.of(entity)
        last = kept.get(key)
        if last is not None and deps is not None and last[0] == deps:
            code = last[1]
        else:
            code = entity_code(kind, entity, names)
            memo.made += 1
        used[key] = (deps, code)
        return code

    out.append(f"// ---------------------------------------------------------------- {ruleset.id}")
    out.append(f"export const ID = {js(ruleset.id)};")
    out.append(f"export const TITLE = {js(ruleset.title)};")
    out.append(f"export const VERSION = {js(ruleset.version)};")
    out.append(f"export const SOURCE_SHA256 = {js(ruleset.digest)};")
    shown = labels(ruleset)
    named = {kind: shown.get(kind, {}) for kind in NAMED_KINDS}
    out.append(f"/** @type {{Names}} */\nexport const NAMES = freeze({_json(named)});")

    # mechanics
    out.append("\n// mechanics")
    for mid, entity in ruleset.entities.get("mechanic", {}).items():
        out.append(f"const {mechanic_names[mid]} = {attempt('mechanic', mid, partial(mechanic_code, entity))};")
    out.append(
        "export const MECHANICS = freeze({"
        + ", ".join(f"{js(mid)}: {mechanic_names[mid]}" for mid in ruleset.entities.get("mechanic", {}))
        + "});"
    )

    # formulas
    out.append("\n// formulas: each a function of one object giving its parameters by name")
    for fid, entity in ruleset.entities.get("formula", {}).items():
        code = attempt("formula", fid, partial(formula_function, formula_names[fid], entity, names, ruleset))
        if code.startswith("notSupported("):
            code = f"function {formula_names[fid]}() {{ return {code}.evaluate(); }}"
        out.append(code)
    out.append(
        "export const FORMULAS = freeze({"
        + ", ".join(f"{js(fid)}: {formula_names[fid]}" for fid in formula_ids)
        + "});"
    )

    # tables
    out.append("\n// tables (filled in below: tables whose rows name other tables roll on through it)")
    out.append("/** @type {Record<string, Table<any>>} */\nexport const TABLES = {};")
    for tid, entity in ruleset.entities.get("table", {}).items():
        out.append(f"TABLES[{js(tid)}] = {attempt('table', tid, partial(table_code, entity, names))};")
    out.append("Object.freeze(TABLES);")

    # attributes
    attributes = ruleset.entities.get("attribute", {})
    attribute_kind = ruleset.kinds["attribute"]
    out.append("\n// attributes")
    out.append(
        "export const ATTRIBUTES = freeze({"
        + ", ".join(
            f"{js(aid)}: {attempt('attribute', aid, partial(code_of, attribute_kind, e))}"
            for aid, e in attributes.items()
        )
        + "});"
    )
    derive = attempt("attribute", "*", partial(derive_code, ruleset, env, names))
    if derive.startswith("notSupported("):
        derive = f"export function deriveAttributes() {{ return {derive}.evaluate(); }}"
    out.append(derive)

    # the other kinds
    for kind_name in registry_kinds(ruleset):
        kind = ruleset.kinds[kind_name]
        entities = ruleset.entities.get(kind_name, {})
        out.append(f"\n// {kind.title}")
        items = ",\n".join(
            f"  {js(eid)}: {attempt(kind_name, eid, partial(code_of, kind, e))}" for eid, e in entities.items()
        )
        out.append(f"export const {registries[kind_name]} = freeze({{\n{items}\n}});")

    if ruleset.entities.get("lifepath"):
        out.append(BURNING.replace("$LIFEPATHS", registries["lifepath"]).replace("$SETTINGS", registries["setting"]))
        out[-1] = out[-1].replace("$STOCKS", registries["stock"])
    out.append("\n/** What this module does not do yet: [kind, id, why] of each entity that throws NotSupported. */")
    out.append(f"export const NOT_SUPPORTED = freeze({js([list(u) for u in unsupported])});")
    if memo is not None:
        memo.keep(ruleset.id, context, used)
    header = (
        f"// Generated by rulesdsl {__version__} from ruleset {ruleset.id!r}: its rules as one ES module.\n"
        "// Do not edit: change the .rules sources and run `rulesdsl build`.\n"
    )
    text = header + RUNTIME_JS.read_text(encoding="utf-8") + "\n" + "\n".join(out) + "\n"
    return Module(text, tuple(unsupported))


BURNING = """
// lifepaths and burning
const $catalog = new Catalog($LIFEPATHS);

/** @param {string} id */
function $lifepath(id) {
  if (!Object.hasOwn($LIFEPATHS, id)) throw new RangeError(`no lifepath has the id '${id}'`);
  return $LIFEPATHS[id];
}

/** The facts a requirement of `lifepath` is judged on; the traits given and the stock's common traits.
 * @param {string} lifepath @param {readonly string[]} previous @param {PathOptions} options */
function $facts(lifepath, previous, options) {
  const traits = [...(options.traits ?? []), ...commonTraits($catalog, $SETTINGS, $STOCKS, [...previous, lifepath])];
  return new PathFacts($catalog, lifepath, previous, { ...options, traits });
}

/** Whether `lifepath` may follow the lifepaths `previous` (ids, born lifepath first): true, false, or null
 * when that depends on a fact left out.
 * @param {string} lifepath @param {readonly string[]} previous @param {PathOptions} [options] */
export function requirementMet(lifepath, previous, options = {}) {
  return verdict($lifepath(lifepath), $facts(lifepath, previous, options));
}

/** Why `lifepath` may not follow `previous`; empty if it may (or if that depends on a fact left out).
 * @param {string} lifepath @param {readonly string[]} previous @param {PathOptions} [options] */
export function unmetRequirements(lifepath, previous, options = {}) {
  return reasons($lifepath(lifepath), $facts(lifepath, previous, options), NAMES, false);
}

/** Burn a character from lifepaths (ids, display names or aliases, born lifepath first); options:
 * {either: ["M", "P"], gender, traits, held: {kind: [ids]}, picks}. JSON.stringify of the sheet is the
 * Python sheet's to_json(). @param {readonly string[]} path @param {BurnOptions} [options] */
export function burn(path, options = {}) {
  const ids = path.map((p) => $catalog.find(p));
  return burnCharacter($catalog, $SETTINGS, $STOCKS, TABLES, NAMES, ids, options);
}
"""


def mechanic_code(entity: ir.Entity) -> str:
    style = str(entity.fields.get("style"))
    head = f"{js(entity.id)}, {js(entity.name)}"
    die = entity.fields["die"]
    assert isinstance(die, ir.Dice)
    if style == "highest":
        highest = highest_mechanic(entity)
        assert highest is not None
        outcomes = [
            _record(iter((("name", js(o.name)), ("low", js(o.low)), ("high", js(o.high))))) for o in highest.outcomes
        ]
        rules = f"{js(highest.critical)}, {js(highest.zero_dice)}"
        return f"new HighestMechanic({head}, {highest.sides}, [{', '.join(outcomes)}], {rules})"
    if style == "under":
        under = under_mechanic(entity)
        assert under is not None
        grades = [_record(iter((("divide", js(g.divide)), ("outcome", js(g.outcome))))) for g in under.grades]
        bands = {
            name: [
                _record(
                    iter(
                        (
                            ("low", js(b.low)),
                            ("high", js(b.high)),
                            ("targets_low", js(b.targets_low)),
                            ("targets_high", js(b.targets_high)),
                        )
                    )
                )
                for b in found
            ]
            for name, found in (("criticals", under.criticals), ("fumbles", under.fumbles))
        }
        rules = _record(
            iter((("grades", f"[{', '.join(grades)}]"), *((k, f"[{', '.join(v)}]") for k, v in bands.items())))
        )
        return f"new UnderMechanic({head}, {dice_code(die)}, {rules})"
    if style not in MECHANIC_CLASSES:
        raise NotEmitted(f"{style} mechanics")
    dice = str(die.terms[0].sides) if style == "pool" else dice_code(die)
    rules = _record((k, js(entity.fields[k])) for k in MECHANIC_RULES.get(style, ()) if k in entity.fields)
    extra = f", {rules}" if style in MECHANIC_RULES else ""
    return f"new {MECHANIC_CLASSES[style]}({head}, {dice}{extra})"


def entity_code(kind: Kind, entity: ir.Entity, names: Names) -> str:
    """A plain object: id, name, then every declared field."""
    fields = _fields(tuple(kind.fields.values()), entity.fields, names)
    return _record(iter((("id", js(entity.id)), ("name", js(entity.name)), *fields)))


def table_code(entity: ir.Entity, names: Names) -> str:
    columns_value = entity.fields.get("columns", ())
    cols = [c for c in columns_value if isinstance(c, ir.Column)] if isinstance(columns_value, tuple) else []
    rows: list[str] = []
    otherwise = "null"
    for row in entity.rows:
        cells = _record((c.name, value_code(c.type, v, names)) for v, c in zip(row.cells, cols, strict=True))
        code = f"new Row([{', '.join(_key(k) for k in row.keys)}], {cells}, {js(row.source)})"
        if row.otherwise:
            otherwise = code
        else:
            rows.append(code)
    roll = entity.fields.get("roll")
    source = entity.fields.get("source")
    chains = [
        c.name
        for c in cols
        if isinstance(c.type, t.RollsType) or (isinstance(c.type, t.RefType) and c.type.kind == "table")
    ]
    spec = [
        ("id", js(entity.id)),
        ("name", js(entity.name)),
        ("dice", roll_code(roll) if isinstance(roll, ir.Roll) else "null"),
        ("rows", "[\n    " + ",\n    ".join(rows) + "]"),
        ("source", js(source if isinstance(source, str) else None)),
        ("clamp", js(entity.fields.get("clamp") is True)),
        ("partial", js(entity.fields.get("partial") is True)),
        ("chains", js(chains)),
        ("registry", "TABLES"),
        ("otherwise", otherwise),
    ]
    return "new Table({" + ", ".join(f"{k}: {v}" for k, v in spec) + "})"


def _key(key: ir.Key) -> str:
    match key:
        case ir.NameKey():
            return f"new Key(null, null, {js(key.name)})"
        case ir.ParityKey(odd):
            return f"new Key(null, null, null, {int(odd)})"
        case ir.Range(low, high):
            return f"new Key({js(low)}, {js(high)})"
        case _:
            assert_never(key)


def formula_params(entity: ir.Entity, ruleset: CompiledRuleset) -> dict[str, str]:
    """A named formula's parameters, then the attributes it names: each (by slug) -> the key its function's
    object gives it by (the Python function's keyword name)."""
    formula = entity.fields["formula"]
    assert isinstance(formula, ir.Formula)
    attributes = ruleset.entities.get("attribute", {})
    params = {column.name: param_name(column.name, None) for column in columns(entity, "params")}
    for node in ir.formula_nodes(formula):
        if isinstance(node, ir.Var) and node.attribute and node.attribute not in params:
            abbr = attributes[node.attribute].fields.get("abbr")
            params[node.attribute] = param_name(node.attribute, abbr if isinstance(abbr, str) else None)
    return params


def formula_function(function: str, entity: ir.Entity, names: Names, ruleset: CompiledRuleset) -> str:
    """A named formula as a function of one object of its parameters (the Python function's keyword names)."""
    formula = entity.fields["formula"]
    assert isinstance(formula, ir.Formula)
    params = formula_params(entity, ruleset)
    lines: list[str] = []
    locals_ = {key: f"$p{i}" for i, key in enumerate(params)}
    lines.append(
        f"const [{', '.join(locals_.values())}] = argsOf(given, {js(list(params.values()))}, {js(entity.id)});"
    )
    for column in columns(entity, "params"):
        if isinstance(column.type, t.RefType):
            kind = column.type.kind
            known = sorted(ruleset.entities.get(kind, {}))
            local = locals_[column.name]
            lines.append(f"knownId({js(kind)}, {js(params[column.name])}, {local}, {js(known)});")
    variables = dict(param_types(entity))
    for i, step in enumerate(formula.steps):
        step_env = replace(names.env, variables=variables)
        code = formula_code(step.formula.expr, replace(names, params=locals_, env=step_env))
        lines.append(f"const $s{i} = {code};")
        variables[slug(step.name)] = ft.check(step.formula.expr, step_env).returns
        locals_ = {**locals_, slug(step.name): f"$s{i}"}
    body = formula_code(formula.expr, replace(names, params=locals_, env=replace(names.env, variables=variables)))
    text = "; ".join([*(f"let {s.name} = {s.formula.text}" for s in formula.steps), formula.text])
    inner = "".join(f"  {line}\n" for line in lines)
    return (
        f"/** {_comment(entity.name)} = {_comment(text)} @param {{Record<string, any>}} given */\n"
        f"function {function}(given) {{\n{inner}  return {body};\n}}"
    )


def _comment(text: str) -> str:
    """Text inside a /** */ comment: never its end, on one line."""
    return " ".join(text.replace("*/", "* /").replace("<", "\\u003c").split())


def derive_code(ruleset: CompiledRuleset, env: ft.Env, names: Names) -> str:
    """deriveAttributes(values): the given attributes (by id) plus every derived one."""
    attributes = ruleset.entities.get("attribute", {})
    derived = replace(env, variables=attribute_types(attributes, env))
    lines = []
    for attr_id, uses in derived_order(attributes):
        formula = attributes[attr_id].fields["formula"]
        assert isinstance(formula, ir.Formula)
        inputs = {u: f"attribute(result, {js(u)})" for u in uses}
        lines.append(
            f"  result[{js(attr_id)}] = {formula_code(formula.expr, replace(names, params=inputs, env=derived))};"
        )
    return (
        "/** The given attributes (by id) plus every derived one, each computed from its formula.\n"
        " * @param {Record<string, Num>} values @returns {Record<string, any>} */\n"
        "export function deriveAttributes(values) {\n"
        "  /** @type {Record<string, any>} */\n  const result = {...values};\n"
        + "\n".join(lines)
        + "\n  return result;\n}"
    )


def classic(module: str, ruleset_id: str) -> str:
    """rules.js as a classic script (`rules.global.js`): browsers run no ES module from file://, so a page
    opened from the disk (the reference's builder) loads this instead. The same code, its `export`s kept
    inside one function, whose exports land in `globalThis.rulesdsl[ID]`."""
    exported: list[str] = []
    lines = []
    for line in module.splitlines():
        if line.startswith("export "):
            line = line.removeprefix("export ")
            words = line.split()
            assert words[0] in ("function", "class", "const", "let"), f"an export rules.js does not write: {line}"
            exported.append(words[1].split("(")[0].split("=")[0])
        lines.append(line)
    names = ", ".join(exported)
    return (
        "// rules.js as a classic script, for pages opened from file:// (where browsers refuse ES modules):\n"
        f"// the same code; its exports are globalThis.rulesdsl[{js(ruleset_id)}].\n"
        "(function () {\n"
        '"use strict";\n' + "\n".join(lines) + "\n"
        f"(globalThis.rulesdsl ??= {{}})[{js(ruleset_id)}] = Object.freeze({{{names}}});\n"
        "})();\n"
    )
