"""Formulas, wherever they stand: every name resolved, every formula typed by the one checker.

A formula stands in a formula entity, a derived attribute, a formula field of any kind (`damage: formula of
slot`), a check (`check END 5+`), a table's formula cell, and inside those in dice counts, calls and
lookups. Each place says which free names its formulas may use (a formula's `params`, a field's `of`
names, a table's `params`; attributes everywhere, by abbreviation or id) and what it must yield; names are
resolved against that scope (did-you-mean on a miss) and the result is typed by `formula_types.check`,
which the Python emitter reads too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from rulesdsl.compile import formula_types as ft
from rulesdsl.compile import ir
from rulesdsl.compile.kinds import Kind, defaults, with_defaults
from rulesdsl.diagnostics import Diagnostic, error, naming_hint, suggest
from rulesdsl.language import fieldtypes as t
from rulesdsl.language.names import slug
from rulesdsl.language.words import TRUTH_WORDS
from rulesdsl.syntax.tree import Position

Entities = Mapping[str, Mapping[str, ir.Entity]]  # kind -> id -> entity

ANY = (ft.NUMBER, ft.BOOL, ft.DICE)  # what a formula may yield where nothing narrower is asked


@dataclass(frozen=True, slots=True)
class Site:
    """One place a formula stands: which free names it may use, what it must yield, how to say where."""

    entity: ir.Entity
    formula: ir.Formula
    where: str  # put before a message: "column 'tn': "
    yields: tuple[str, ...]
    names: tuple[str, ...]  # the free names it may use besides attributes
    variables: Mapping[str, str] = field(default_factory=dict)  # the types of those that are not whole numbers


def unresolved(entity: ir.Entity, kind: Kind) -> Iterator[ir.Var]:
    """The names in `entity`'s formulas that are neither an attribute nor a name their place declares."""
    for site in _entity_sites(entity, kind):
        for node in ir.formula_nodes(site.formula):
            if isinstance(node, ir.Var) and node.attribute is None and slug(node.name) not in site.names:
                yield node


def params(entity: ir.Entity) -> tuple[str, ...]:
    """A formula entity's (or a table's) declared parameter names."""
    value = entity.fields.get("params", ())
    if not isinstance(value, tuple):
        return ()
    return tuple(p.name if isinstance(p, ir.Column) else p for p in value if isinstance(p, str | ir.Column))


def param_types(entity: ir.Entity) -> dict[str, str]:
    """A formula entity's parameters that are not whole numbers, with their types (formula_types')."""
    types: dict[str, str] = {}
    for column in columns(entity, "params"):
        match column.type:
            case t.BoolType():
                types[column.name] = ft.BOOL
            case t.NumberType():
                types[column.name] = ft.NUMBER
            case t.RefType(kind):
                types[column.name] = ft.ref_type(kind)
    return types


def step_names(formula: ir.Value | None) -> tuple[str, ...]:
    """The names a formula's steps give (`let through = ...`), as its names are matched: by slug."""
    return tuple(slug(step.name) for step in formula.steps) if isinstance(formula, ir.Formula) else ()


def columns(entity: ir.Entity, name: str) -> tuple[ir.Column, ...]:
    value = entity.fields.get(name, ())
    return tuple(c for c in value if isinstance(c, ir.Column)) if isinstance(value, tuple) else ()


def abbreviations(attributes: Mapping[str, ir.Entity]) -> dict[str, str]:
    """How formulas may name attributes: by abbreviation or by id."""
    names = {attr_id: attr_id for attr_id in attributes}
    for attr_id, attribute in attributes.items():
        abbr = attribute.fields.get("abbr")
        if isinstance(abbr, str):
            names[abbr] = attr_id
    return names


Evaluated = t.FormulaType | t.CheckType


def _evaluates(field_type: t.FieldType) -> bool:
    """Whether a field's values may hold formulas or checks (in lists, maps and records too)."""
    return t.holds(field_type, (t.FormulaType, t.CheckType))


def _formula_fields(kind: Kind) -> Iterator[tuple[str, t.FieldType]]:
    """The fields of a kind that hold evaluated formulas or checks, with their declared types."""
    for name, decl in kind.fields.items():
        if _evaluates(decl.type):
            yield name, decl.type


Change = Callable[[Evaluated, ir.Value, str], ir.Value]


def _evaluated(field_type: t.FieldType, value: ir.Value, change: Change, where: str) -> ir.Value:
    """`value` (of `field_type`, in the field `where`) with `change` applied to each formula or check in it,
    with the type that holds it (what names it may use) and the field that declares that type (a record's
    own field, in a record): in lists, maps and records too."""
    match field_type:
        case t.FormulaType() | t.CheckType():
            return change(field_type, value, where)
        case t.ListType(item) if isinstance(value, tuple):
            return tuple(_evaluated(item, v, change, where) for v in value)
        case t.MapType(item) if isinstance(value, ir.MapValue):
            return replace(value, values=tuple(_evaluated(item, v, change, where) for v in value.values))
        case t.RecordType(fields) if isinstance(value, ir.Record):
            types = {f.name: f.type for f in fields}
            return replace(value, values=tuple(_evaluated(types[n], v, change, n) for n, v in value.fields))
        case _:
            return value


def _held(field_type: t.FieldType, value: ir.Value, where: str) -> list[tuple[Evaluated, ir.Value, str]]:
    """The formulas and checks in a field's value: each with its type and the field declaring that type."""
    held: list[tuple[Evaluated, ir.Value, str]] = []

    def note(item: Evaluated, inner: ir.Value, at: str) -> ir.Value:
        held.append((item, inner, at))
        return inner

    _evaluated(field_type, value, note, where)
    return held


def _with_formulas(
    entities: Entities, kinds: Mapping[str, Kind]
) -> Iterator[tuple[str, Mapping[str, ir.Entity], Kind, Mapping[str, t.FieldType]]]:
    """The kinds whose entities may hold formulas (tables, and kinds with fields that hold them), each with
    its entities and those fields: found once per kind, the same for each of its entities."""
    for kind_name, group in entities.items():
        kind = kinds.get(kind_name)
        if kind is None or not group:
            continue
        holding = _holding(next(iter(group.values())), kind)
        if holding or kind_name == "table":
            yield kind_name, group, kind, holding


def sites(entities: Entities, kinds: Mapping[str, Kind]) -> Iterator[Site]:
    """Every formula of a ruleset, with its scope, in a fixed order."""
    for _, group, kind, holding in _with_formulas(entities, kinds):
        for entity in group.values():
            yield from _entity_sites(entity, kind, holding)


def scope(entity: ir.Entity, name: str, item: t.FormulaType | t.CheckType) -> tuple[tuple[str, ...], str | None]:
    """The free names a formula in field `name` of `entity` may use besides attributes, and how to declare
    another (the start of a declaration the unknown name completes)."""
    if entity.kind == "formula":
        return (*params(entity), *step_names(entity.fields.get("formula"))), "declare it: params: "
    if entity.kind == "table":
        return params(entity), "declare it: params: "
    if entity.kind == "attribute" or isinstance(item, t.CheckType):
        return (), None
    return item.names, f"declare it in the kind: {name}: formula of "


_OWN_FORMULA: Mapping[str, t.FieldType] = {"formula": t.FormulaType()}  # a formula's or attribute's own field


def _holding(entity: ir.Entity, kind: Kind) -> Mapping[str, t.FieldType]:
    """The fields of `entity` that hold formulas to evaluate (a table's are in its rows)."""
    if entity.kind in ("formula", "attribute"):
        return _OWN_FORMULA
    if entity.kind == "table":
        return {}
    return dict(_formula_fields(kind))


def _entity_sites(entity: ir.Entity, kind: Kind, holding: Mapping[str, t.FieldType] | None = None) -> Iterator[Site]:
    """The formulas of one entity (`holding`: its kind's fields that hold them, when already known)."""
    if entity.kind == "table":
        cols = columns(entity, "columns")
        names = params(entity)
        for row in entity.rows:
            for column, cell in zip(cols, row.cells, strict=False):
                if isinstance(cell, ir.Formula):
                    yield Site(entity, cell, f"column '{column.name}': ", ANY, names)
        return
    for name, declared in (_holding(entity, kind) if holding is None else holding).items():
        value = entity.fields.get(name)
        if value is not None:
            yield from _value_sites(entity, name, declared, value)


def _value_sites(
    entity: ir.Entity, name: str, declared: t.FieldType, value: ir.Value, about: str = ""
) -> Iterator[Site]:
    """The formulas and checks in one value of field `name` of `entity` (`about` put before what is said)."""
    for item, inner, where in _held(declared, value, name):
        names = scope(entity, where, item)[0]
        for node in ir.walk(inner):
            if isinstance(node, ir.CheckSpec) and isinstance(item, t.CheckType):
                yield Site(entity, node.modifier, about + "the check's modifier: ", (ft.INT,), names)
            elif isinstance(node, ir.Formula) and isinstance(item, t.FormulaType):
                yields = (ft.NUMBER,) if entity.kind == "attribute" else ANY
                yield Site(entity, node, about, yields, names, param_types(entity))


def _defaults_scope(kind: Kind) -> ir.Entity:
    """What a kind's defaults are read as: an entity of the kind that gives nothing (no params, no steps)."""
    pos = kind.pos or Position("", 1, 1, 1, 1)
    return ir.Entity(kind.name, "", kind.title, {}, {}, (), frozenset(), pos, pos)


def default_sites(kinds: Mapping[str, Kind]) -> Iterator[Site]:
    """Every formula and check in the kinds' defaults (see `kinds.with_defaults`), with its scope."""
    for kind in kinds.values():
        at = _defaults_scope(kind)
        for name, declared, value in defaults(kind):
            if _evaluates(declared):
                yield from _value_sites(at, name, declared, value, f"the default of '{name}': ")


# ---------------------------------------------------------------- names


@dataclass
class _Namer:
    """Gives each attribute named in one field's formulas its id; reports each unknown name once."""

    names: tuple[str, ...]
    by_name: Mapping[str, str]
    declare: str | None
    diagnostics: list[Diagnostic]
    reported: set[str] = field(default_factory=set)
    refs: Mapping[str, str] = field(default_factory=dict)  # the parameters that name entities: name -> kind
    entities: Entities = field(default_factory=dict)
    kinds: Mapping[str, Kind] = field(default_factory=dict)

    def __call__(self, node: Any) -> Any:
        if isinstance(node, ir.ParamField):
            return self.param_field(node)
        if isinstance(node, ir.Text) and slug(node.value) in self.names:
            # A quoted name the formula declares is that name, as quoted names are everywhere: the way to
            # use a parameter named like a word of the language (`params: "skill"`, then `"skill" * 2`).
            return ir.Var(node.value, node.pos)
        if not isinstance(node, ir.Var) or slug(node.name) in self.names:
            return node  # a free name, matched as declared names are (`params: ATN` declares `atn`)
        target = self.by_name.get(node.name)
        if target is not None:
            return replace(node, attribute=target)
        if node.name not in self.reported:
            self.reported.add(node.name)
            what = "parameter or attribute" if self.names or self.declare else "attribute"
            known = sorted({*self.names, *self.by_name})
            declared = f"{self.declare}{', '.join((*self.names, node.name))}" if self.declare else None
            close = suggest(node.name, known)
            hint = (
                naming_hint(close)
                or declared
                or f"declare it: attribute {slug(node.name)} {{ abbr: {node.name}  group: ... }}"
            )
            message = f"formula names '{node.name}', which is no {what}"
            self.diagnostics.append(error("E321", message, node.pos, hint, close))
        return node

    def param_field(self, node: ir.ParamField) -> ir.ParamField:
        """`where.multiplier`: the kind `where` names, and that field's number in every entity of it."""
        kind = self.refs.get(slug(node.param))
        if kind is None:
            what = "no parameter" if slug(node.param) not in self.names else "a parameter that names no entity"
            hint = f"declare it: params: {node.param}(ref KIND), or write KIND[id].{node.field}"
            self.report(error("E363", f"'{node.param}' is {what}, so it has no '{node.field}'", node.pos, hint))
            return node
        declared = self.kinds.get(kind)
        if declared is None:
            return node  # a parameter of a kind that does not exist: reported at the parameter
        decl = declared.fields.get(node.field)
        if decl is None:
            close = suggest(node.field, list(declared.fields))
            hint = naming_hint(close) or number_fields_hint(declared)
            self.report(error("E330", f"a {kind} has no field '{node.field}'", node.pos, hint, close))
            return node
        values: list[tuple[str, int | Fraction]] = []
        for entity_id, entity in sorted(self.entities.get(kind, {}).items()):
            value = entity.fields.get(node.field, decl.default)
            if isinstance(value, ir.Multiplier):
                value = value.value
            if value is None:
                hint = "give it one, or a default in the kind"
                self.report(error("E330", f"{entity.name} gives no '{node.field}'", node.pos, hint, about=(entity_id,)))
                return node
            if isinstance(value, bool) or not isinstance(value, int | Fraction):
                shown = t.type_text(decl.type)
                message = f"'{node.field}' of a {kind} is {shown}, not a number to compute with"
                self.report(error("E330", message, node.pos, number_fields_hint(declared)))
                return node
            values.append((entity_id, value))
        return replace(node, kind=kind, ids=tuple(i for i, _ in values), numbers=tuple(v for _, v in values))

    def report(self, diagnostic: Diagnostic) -> None:
        if diagnostic.message not in self.reported:
            self.reported.add(diagnostic.message)
            self.diagnostics.append(diagnostic)


def resolve_names(
    entities: dict[str, dict[str, ir.Entity]], kinds: Mapping[str, Kind], diagnostics: list[Diagnostic]
) -> dict[str, dict[str, ir.Entity]]:
    """Every name in every formula resolved: a free name stays a name, an attribute gets its id, anything
    else is reported (once per field) with what it may have meant."""
    by_name = abbreviations(entities.get("attribute", {}))
    result = dict(entities)
    for kind_name, group, kind, _ in _with_formulas(entities, kinds):
        result[kind_name] = {i: _named(e, kind, by_name, diagnostics, entities, kinds) for i, e in group.items()}
    return result


def resolve_default_names(
    kinds: Mapping[str, Kind], entities: Entities, diagnostics: list[Diagnostic]
) -> dict[str, Kind]:
    """Every name in the formulas of the kinds' defaults resolved as an entity's are (an unknown one reported)."""
    by_name = abbreviations(entities.get("attribute", {}))
    result = {}
    for kind_name, kind in kinds.items():
        at = _defaults_scope(kind)

        def named(name: str, declared: t.FieldType, value: ir.Value, at: ir.Entity = at) -> ir.Value:
            if not _evaluates(declared):
                return value
            return _named_field(at, name, declared, value, by_name, diagnostics, entities, kinds)

        result[kind_name] = with_defaults(kind, named)
    return result


def _refs(entity: ir.Entity) -> dict[str, str]:
    """A formula's parameters that name entities: name -> kind."""
    return {c.name: c.type.kind for c in columns(entity, "params") if isinstance(c.type, t.RefType)}


def _named(
    entity: ir.Entity,
    kind: Kind,
    by_name: Mapping[str, str],
    diagnostics: list[Diagnostic],
    entities: Entities,
    kinds: Mapping[str, Kind],
) -> ir.Entity:
    if entity.kind == "table":
        names, declare = scope(entity, "", t.FormulaType())
        namer = _Namer(names, by_name, declare, diagnostics, entities=entities, kinds=kinds)
        rows = tuple(
            replace(row, cells=tuple(ir.rebuild(c, namer) if isinstance(c, ir.Formula) else c for c in row.cells))
            if any(isinstance(c, ir.Formula) for c in row.cells)
            else row
            for row in entity.rows
        )
        return replace(entity, rows=rows)
    fields = dict(entity.fields)
    for name, declared in _holding(entity, kind).items():
        value = fields.get(name)
        if value is None:
            continue
        fields[name] = _named_field(entity, name, declared, value, by_name, diagnostics, entities, kinds)
    if entity.kind == "formula":
        diagnostics += _steps_in_order(fields.get("formula"))
    return replace(entity, fields=fields)


def _named_field(
    entity: ir.Entity,
    name: str,
    declared: t.FieldType,
    value: ir.Value,
    by_name: Mapping[str, str],
    diagnostics: list[Diagnostic],
    entities: Entities,
    kinds: Mapping[str, Kind],
) -> ir.Value:
    """A field's value with the names in its formulas resolved, each in its own scope (a record's field
    declares its own: `formula of slot`)."""
    namers: dict[tuple[Evaluated, str], _Namer] = {}  # one a scope: each unknown name reported once

    def named(item: Evaluated, inner: ir.Value, where: str) -> ir.Value:
        if (item, where) not in namers:
            names, declare = scope(entity, where, item)
            refs = _refs(entity)
            namers[item, where] = _Namer(
                names, by_name, declare, diagnostics, refs=refs, entities=entities, kinds=kinds
            )
        return ir.rebuild(inner, namers[item, where])  # type: ignore[no-any-return]

    return _evaluated(declared, value, named, name)


def _steps_in_order(formula: ir.Value | None) -> list[Diagnostic]:
    """Each step names only the steps before it (a later one is not computed yet)."""
    if not isinstance(formula, ir.Formula):
        return []
    diagnostics = []
    later = set(step_names(formula))
    for step in formula.steps:
        later.discard(slug(step.name))
        for node in ir.expr_nodes(step.formula.expr):
            if isinstance(node, ir.Var) and node.attribute is None and slug(node.name) in later:
                message = f"step '{step.name}' names '{node.name}', a step that comes after it"
                diagnostics.append(error("E321", message, node.pos, "put the steps in the order they are computed"))
    return diagnostics


def entity_arguments(
    entities: dict[str, dict[str, ir.Entity]], kinds: Mapping[str, Kind], find: Callable[[str], str | None]
) -> dict[str, dict[str, ir.Entity]]:
    """A call's arguments for `ref KIND` parameters that name an entity (`damage_taken(14, head, 4, no)`,
    `"L. Leg"`) made EntityArgs, so that they are resolved as references are; a name the calling formula
    declares stays a name (a `ref` parameter passed on). `find`: the id of the formula a call names."""
    naming = _argument_naming(entities, find)
    if naming is None:
        return entities
    result = dict(entities)
    for kind_name, group in entities.items():
        kind = kinds.get(kind_name)
        if kind is None:
            continue
        changed = {}
        for entity_id, entity in group.items():
            if entity.kind == "table":
                change = naming(scope(entity, "", t.FormulaType())[0])
                rows = tuple(
                    replace(
                        row, cells=tuple(ir.rebuild(c, change) if isinstance(c, ir.Formula) else c for c in row.cells)
                    )
                    for row in entity.rows
                )
                changed[entity_id] = replace(entity, rows=rows)
                continue
            fields = dict(entity.fields)
            for name, declared in _holding(entity, kind).items():
                if name in fields:
                    fields[name] = _named_arguments(entity, name, declared, fields[name], naming)
            changed[entity_id] = replace(entity, fields=fields)
        result[kind_name] = changed
    return result


def default_arguments(
    kinds: Mapping[str, Kind], entities: Entities, find: Callable[[str], str | None]
) -> dict[str, Kind]:
    """`entity_arguments` in the formulas of the kinds' defaults."""
    found = _argument_naming(entities, find)
    if found is None:
        return dict(kinds)
    naming: _Naming = found
    result = {}
    for kind_name, kind in kinds.items():
        at = _defaults_scope(kind)

        def named(name: str, declared: t.FieldType, value: ir.Value, at: ir.Entity = at) -> ir.Value:
            return _named_arguments(at, name, declared, value, naming) if _evaluates(declared) else value

        result[kind_name] = with_defaults(kind, named)
    return result


def _named_arguments(entity: ir.Entity, name: str, declared: t.FieldType, value: ir.Value, naming: _Naming) -> ir.Value:
    """A value of field `name` of `entity` with the entities its formulas' calls give made EntityArgs."""

    def named(item: Evaluated, inner: ir.Value, where: str) -> ir.Value:
        return ir.rebuild(inner, naming(scope(entity, where, item)[0]))  # type: ignore[no-any-return]

    return _evaluated(declared, value, named, name)


# Given the names a formula declares, what makes its calls' entity arguments EntityArgs.
_Naming = Callable[[tuple[str, ...]], Callable[[Any], Any]]


def _argument_naming(entities: Entities, find: Callable[[str], str | None]) -> _Naming | None:
    """See `entity_arguments`; None where no formula has a `ref` or `bool` parameter."""
    formulas = entities.get("formula", {})
    kinds_of: dict[str, dict[int, str]] = {}  # formula -> the place of each ref or bool parameter -> its kind
    for formula_id, entity in formulas.items():
        kinds_of[formula_id] = {
            i: c.type.kind if isinstance(c.type, t.RefType) else _TRUTH
            for i, c in enumerate(columns(entity, "params"))
            if isinstance(c.type, t.RefType | t.BoolType)
        }
    if not any(kinds_of.values()):
        return None

    def naming(names: tuple[str, ...]) -> Callable[[Any], Any]:
        def change(node: Any) -> Any:
            if not isinstance(node, ir.FormulaCall):
                return node
            callee = find(node.formula.text)
            wanted = kinds_of.get(callee or "", {})
            if not wanted:
                return node
            args = list(node.args)
            for i, arg in enumerate(args):
                kind = wanted.get(i)
                if kind is None:
                    continue
                if kind == _TRUTH:  # `yes`, `no`: a truth value, as a field's are (the same, always)
                    if isinstance(arg, ir.Var) and slug(arg.name) not in names and arg.name.lower() in TRUTH_WORDS:
                        truth = ir.Num(int(TRUTH_WORDS[arg.name.lower()]), arg.pos)
                        args[i] = ir.Compare("=", truth, ir.Num(1, arg.pos), arg.pos)
                elif isinstance(arg, ir.Var) and slug(arg.name) not in names:
                    args[i] = ir.EntityArg(ir.Ref(kind, arg.name, arg.pos), arg.pos)
                elif isinstance(arg, ir.Text) and slug(arg.value) not in names:  # else a parameter (_Namer)
                    args[i] = ir.EntityArg(ir.Ref(kind, arg.value, arg.pos), arg.pos)
            return replace(node, args=tuple(args))

        return change

    return naming


_TRUTH = ""  # the "kind" of a bool parameter in `entity_arguments` (no kind is named so)


def check_params(entities: Entities, kinds: Mapping[str, Kind]) -> list[Diagnostic]:
    """A formula's `ref KIND` parameters name kinds that exist."""
    diagnostics = []
    for entity in entities.get("formula", {}).values():
        for column in columns(entity, "params"):
            if isinstance(column.type, t.RefType) and column.type.kind not in kinds:
                kind = column.type.kind
                close = suggest(kind, kinds)
                hint = naming_hint(close) or "declare the kind: kind " + kind + ' "..." { ... }'
                diagnostics.append(
                    error("E363", f"parameter '{column.name}' names no kind: '{kind}'", column.pos, hint, close)
                )
    return diagnostics


# ---------------------------------------------------------------- types


def _table(entity: ir.Entity) -> ft.Table:
    """What looking `entity` up in a formula yields, or why a formula cannot."""
    cols, keys = columns(entity, "columns"), columns(entity, "keys")
    if len(cols) != 1 or len(keys) > 1:
        why = f"{max(len(keys), 1)} key(s) and {len(cols)} column(s)"
        return ft.Table(
            None,
            problem=f"formulas look up tables with one key and one column; '{entity.id}' has {why}",
            hint=f"look up a table of one key and one number column: split '{entity.id}' into such tables",
        )
    column = cols[0]
    returns = {t.IntType: ft.INT, t.MultiplierType: ft.FRACTION, t.NumberType: ft.NUMBER}.get(type(column.type))
    if returns is None:
        shown = t.type_text(column.type)
        return ft.Table(
            None,
            problem=f"'{entity.id}' holds {shown}, not numbers to compute with",
            hint=f"declare its column a number, as in columns: {column.name}(int)",
        )
    if any(isinstance(k, ir.NameKey) for row in entity.rows for k in row.keys):
        return ft.Table(
            None,
            problem=f"'{entity.id}' is keyed by names, and a formula looks a table up by a number",
            hint=f"key the rows of '{entity.id}' by numbers (1, 2-4, 5+) to look it up",
        )
    otherwise = any(row.otherwise for row in entity.rows)  # it fills every number the other rows leave out
    gap = None if otherwise else _gap(entity.rows)
    if gap is not None:
        return ft.Table(
            None,
            problem=f"'{entity.id}' has no row for {gap}: a lookup of it would find nothing",
            hint=f"add a row for {gap}, or an otherwise row",
        )
    empty = [row for row in entity.rows if row.cells and isinstance(row.cells[0], ir.Unknown | ir.NoneValue)]
    if empty:
        which = ir.row_text(empty[0])
        why = f"'{entity.id}' gives no number at {which} (none or unknown): a lookup there has nothing to compute with"
        return ft.Table(None, problem=why, hint=f"give the row {which} a number")
    if entity.fields.get("clamp") is True or entity.fields.get("partial") is True or otherwise:
        return ft.Table(returns, column.name)
    covers, stops = _covers(entity.rows)
    return ft.Table(returns, column.name, covers=covers, stops=stops)


def _ranges(rows: tuple[ir.TableRow, ...]) -> list[tuple[int | None, int | None]]:
    """The numbers each row's keys cover (None: an open end)."""
    return [(k.low, k.high) for row in rows for k in row.keys if isinstance(k, ir.Range)]


def _gap(rows: tuple[ir.TableRow, ...]) -> int | None:
    """The first whole number between a table's lowest and highest keys that no row covers (None: none)."""
    spans = sorted(_ranges(rows), key=lambda span: -(10**18) if span[0] is None else span[0])
    reached: int | None = None  # the highest number covered so far
    for low, high in spans:
        if reached is not None and low is not None and low > reached + 1:
            return reached + 1
        if high is None:
            return None  # open above: everything from here on is covered
        reached = high if reached is None else max(reached, high)
    return None


def _covers(rows: tuple[ir.TableRow, ...]) -> tuple[ft.Span, str]:
    """The numbers a table's rows cover (None at an open end), and where they stop, in words."""
    spans = _ranges(rows)
    lows = [low for low, _ in spans if low is not None]
    highs = [high for _, high in spans if high is not None]
    low = min(lows) if spans and len(lows) == len(spans) else None  # one open end opens it all
    high = max(highs) if spans and len(highs) == len(spans) else None
    if low is None and high is None:
        return (None, None), ""
    if low is None:
        words = f"has no row above {high}"
    elif high is None:
        words = f"has no row below {low}"
    else:
        words = f"has rows for {low} to {high} only"
    return (None if low is None else Fraction(low), None if high is None else Fraction(high)), words


def environment(entities: Entities) -> ft.Env:
    """What a formula's calls and lookups yield, for the checks and the emitter alike: tables first, then
    each named formula typed after the formulas it calls (post-order, no recursion)."""
    tables = {table_id: _table(entity) for table_id, entity in entities.get("table", {}).items()}
    formulas = entities.get("formula", {})

    def called(formula_id: str) -> list[str]:
        formula = formulas[formula_id].fields.get("formula")
        if not isinstance(formula, ir.Formula):
            return []
        return [n.formula.id for n in ir.formula_nodes(formula) if isinstance(n, ir.FormulaCall) and n.formula.id]

    order: list[str] = []
    seen: set[str] = set()
    for root in formulas:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(called(root)))]
        while stack:
            node, pending = stack[-1]
            following = next(pending, None)
            if following is None:
                stack.pop()
                order.append(node)
            elif following in formulas and following not in seen:
                seen.add(following)
                stack.append((following, iter(called(following))))
    callees: dict[str, ft.Callee] = {}
    for formula_id in order:
        entity = formulas[formula_id]
        formula = entity.fields.get("formula")
        if not isinstance(formula, ir.Formula):
            continue
        own = params(entity)
        types = param_types(entity)
        typing = ft.check_formula(formula, ft.Env(types, callees, tables))
        known = {*own, *step_names(formula)}
        extra = sorted(
            {n.name for n in ir.formula_nodes(formula) if isinstance(n, ir.Var) and slug(n.name) not in known}
        )
        wants = tuple(types.get(p, ft.INT) for p in own)
        callees[formula_id] = ft.Callee(own, typing.returns, tuple(extra), wants, explodes=typing.explodes)
    return ft.Env({}, callees, tables)


def attribute_types(attributes: Mapping[str, ir.Entity], env: ft.Env) -> dict[str, str]:
    """What each derived attribute yields, inputs first (a base attribute is a whole number); attributes in a
    cycle (reported apart) count as whole numbers."""
    uses = {
        attr_id: [n.attribute for n in ir.expr_nodes(f.expr) if isinstance(n, ir.Var) and n.attribute]
        for attr_id, entity in attributes.items()
        if isinstance(f := entity.fields.get("formula"), ir.Formula)
    }
    types: dict[str, str] = {}
    state: dict[str, int] = {}  # 1: being typed, 2: typed
    for root in sorted(uses):
        stack = [root]
        while stack:
            node = stack[-1]
            if state.get(node) == 2:
                stack.pop()
                continue
            state[node] = 1
            waiting = [u for u in uses.get(node, ()) if u in uses and u is not None and state.get(u) is None]
            if waiting:
                stack.extend(waiting)
                continue
            formula = attributes[node].fields["formula"]
            assert isinstance(formula, ir.Formula)
            types[node] = ft.check(formula.expr, replace(env, variables=types)).returns
            state[node] = 2
            stack.pop()
    return types


# What comes before a problem's own words, by its code.
_CANNOT = {"E327": "the generated package cannot evaluate this: ", "E324": "", "E325": "", "E326": "", "E362": ""}


def check_formulas(entities: Entities, kinds: Mapping[str, Kind]) -> list[Diagnostic]:
    """Every formula typed: what the generated package could not compute, and results of the wrong type."""
    env = environment(entities)
    derived = replace(env, variables=attribute_types(entities.get("attribute", {}), env))
    diagnostics: list[Diagnostic] = []
    for site in [*sites(entities, kinds), *default_sites(kinds)]:
        at = derived if site.entity.kind == "attribute" else replace(env, variables=site.variables)
        typing = ft.check_formula(site.formula, at)
        diagnostics += [
            error(p.code, site.where + _CANNOT[p.code] + p.message, p.pos, p.hint, about=p.about)
            for p in typing.problems
        ]
        if typing.problems or any(ft.fits(typing.returns, wanted) for wanted in site.yields):
            continue
        made = ft.shown(typing.returns)
        wanted = " or ".join(ft.shown(w) for w in site.yields)
        rounds = site.yields == (ft.INT,) and typing.returns in (ft.NUMBER, ft.FRACTION)
        hint = "round it: floor(...), ceil(...) or round(...)" if rounds else f"write {wanted} here"
        if typing.returns == ft.DICE and not rounds:
            hint = f"dice are rolled, not computed here: write {wanted}"
        message = f"{site.where}this formula makes {made}, and {wanted} belongs here"
        diagnostics.append(error("E327", message, site.formula.pos, hint))
    return diagnostics


def number_fields_hint(kind: Kind) -> str:
    """E330's hint: the fields of a kind a formula can compute with (`weapon[dagger].weight`)."""
    numbers = [d.name for d in kind.fields.values() if isinstance(d.type, t.IntType | t.NumberType | t.MultiplierType)]
    if numbers:
        return f"a formula computes with a {kind.name}'s number fields: {', '.join(numbers)}"
    return f"a {kind.name} has no number field to compute with: declare one, such as weight: int"


def unknown_kind(node: ir.FieldOf, kinds: Mapping[str, Kind], pos: Position) -> Diagnostic:
    """`foo[bar].x` where `foo` is no kind."""
    close = suggest(node.entity.kind, kinds)
    return error(
        "E330",
        f"no kind named '{node.entity.kind}'",
        pos,
        naming_hint(close) or "write KIND[id].field, or TABLE[number] for a table's one column",
        close,
    )
