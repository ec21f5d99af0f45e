"""TypeScript declarations of a ruleset's rules.js (`rules.d.ts`, shipped in its npm package).

The runtime's declarations (`runtime.d.ts`, beside this file) are TypeScript's own reading of runtime.js,
copied in verbatim (tests/test_npm.py regenerates them with tsc and compares). The ruleset's follow,
derived from the same IR and kinds as rules.js itself: the ids of every kind, the type of every kind's
entities and of every table's rows (so that a misspelt column or id fails `tsc --strict`), every formula's
parameters and result, every mechanic's class. Types are keyed by id (`Rows["hit_location"]`,
`Entities["lifepath"]`), so no id an author may write can collide with a name the declarations use.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import assert_never

from rulesdsl.compile import formula_types as ft
from rulesdsl.compile import ir
from rulesdsl.compile.checks.formulas import columns, param_types
from rulesdsl.compile.checks.formulas import environment as environment_of
from rulesdsl.compile.kinds import FieldDecl, Kind, record_fields
from rulesdsl.compile.pipeline import CompiledRuleset
from rulesdsl.language import fieldtypes as t
from rulesdsl.language.names import slug
from rulesdsl.targets.javascript.module import (
    MECHANIC_CLASSES,
    Module,
    _comment,
    _json,
    formula_params,
    registry_kinds,
    registry_names,
)
from rulesdsl.targets.python.package import formula_yields

RUNTIME_DTS = Path(__file__).with_name("runtime.d.ts")
NOT_SUPPORTED = "ReturnType<typeof notSupported>"  # an entity rules.js writes as throwing NotSupported

# What each of the formula type checker's types is in TypeScript (rules.js: a whole number is a number,
# any other an exact Fraction).
_FORMULA_TYPES = {
    ft.INT: ("number",),
    ft.FRACTION: ("Fraction",),
    ft.NUMBER: ("number", "Fraction"),
    ft.BOOL: ("boolean",),
    ft.DICE: ("Dice",),
}


def formula_type(types: Iterable[str]) -> str:
    """What values of these formula types are in rules.js, as one union (a number where there are none)."""
    atoms: list[str] = []
    for type_ in sorted(set(types)):
        if type_.startswith(ft.REF_PREFIX):
            atoms.append(_ids(type_.removeprefix(ft.REF_PREFIX)))
        else:
            atoms += _FORMULA_TYPES[type_]
    return _union(atoms or ["number", "Fraction"])


def _union(atoms: Iterable[str]) -> str:
    return " | ".join(dict.fromkeys(atoms))


def _ids(kind: str) -> str:
    return f"Ids[{_json(kind)}]"


def ts_type(field_type: t.FieldType, values: Sequence[ir.Value | None], env: ft.Env) -> str:
    """A value of this field type as rules.js holds it (see module.value_code), for the `values` written
    for it (what their formulas yield; whether a list item or a record's field is ever unknown or none)."""
    match field_type:
        case t.IntType() | t.YearsType() | t.PointsType():
            return "number"
        case t.NumberType():
            return "number | Fraction"
        case t.MultiplierType():
            return "Fraction"
        case t.TextType() | t.MarkdownType() | t.WordType() | t.AbbreviationType() | t.VersionType():
            return "string"
        case t.ObstacleType():
            return "string"
        case t.EnumType(options):
            return _union(_json(o) for o in options)
        case t.RefType(kind):
            return _ids(kind)
        case t.BoolType():
            return "boolean"
        case t.DiceType():
            return "Dice"
        case t.FormulaType():
            return f"Formula<{formula_type(formula_yields(values, env))}>"
        case t.RangeType():
            return "{ readonly low: number | null; readonly high: number | null }"
        case t.StatBonusType():
            return "{ readonly mental: number; readonly physical: number; readonly either: number }"
        case t.ActionsType():
            return "{ readonly count: number; readonly per_obstacle: boolean }"
        case t.ChoicesType(kind):
            return f"{{ readonly points: number; readonly options: readonly (readonly {_ids(kind)}[])[] }}"
        case t.OfferType():
            return "Offer"
        case t.RequirementType():
            return "Requirement"
        case t.ColumnsType():
            return "readonly string[]"
        case t.RollType():
            return "Roll"
        case t.RollsType():
            return "Rolls"
        case t.CheckType():
            return "Check"
        case t.ListType(item):
            items = [x for v in values if isinstance(v, tuple) for x in v]
            return f"readonly ({ts_type(item, items, env)}{_absent(items)})[]"
        case t.MapType(value, key):
            entries = [x for v in values if isinstance(v, ir.MapValue) for x in v.values]
            keys = f"key in {ts_type(key, [], env)}]?" if isinstance(key, t.EnumType | t.RefType) else "key: string]"
            return f"{{ readonly [{keys}: {ts_type(value, entries, env)}{_absent(entries)} }}"
        case t.RecordType() as record:
            records = [dict(v.fields) for v in values if isinstance(v, ir.Record)]
            return _object([], record_fields(record), records, env, None)
        case _:
            assert_never(field_type)


def _absent(given: Sequence[ir.Value | None]) -> str:
    """What a field or cell holds besides its type: UNKNOWN where some entity gives `unknown`, null where
    one gives `none`."""
    extra = " | typeof UNKNOWN" if any(isinstance(v, ir.Unknown) for v in given) else ""
    return extra + (" | null" if any(isinstance(v, ir.NoneValue) for v in given) else "")


def _object(
    head: Sequence[str],
    decls: Sequence[FieldDecl],
    values: Sequence[Mapping[str, ir.Value]],
    env: ft.Env,
    indent: str | None,
) -> str:
    """An object type with every declared field, as module._fields writes them: a field left out holds its
    default, an empty list or null. `indent`: of its closing brace, each field on a line of its own."""
    lines = list(head)
    for decl in decls:
        given = [v.get(decl.name) for v in values]
        annotation = ts_type(decl.type, [*given, decl.default], env) + _absent(given)
        if decl.default is None and decl.optional and not isinstance(decl.type, t.ListType):
            annotation += " | null"  # left out
        if decl.doc:
            lines.append(f"/** {_comment(decl.doc)} */")
        lines.append(f"readonly {_json(decl.name)}: {annotation};")
    if not lines:
        return "{}"
    if indent is None:  # a record, inside a field's type: on one line
        return "{ " + " ".join(lines) + " }"
    inner = "".join(f"{indent}  {line}\n" for line in lines)
    return "{\n" + inner + indent + "}"


def _formula_returns(entity: ir.Entity, env: ft.Env) -> str:
    formula = entity.fields["formula"]
    assert isinstance(formula, ir.Formula)
    variables = dict(param_types(entity))
    for step in formula.steps:
        variables[slug(step.name)] = ft.check(step.formula.expr, replace(env, variables=variables)).returns
    return ft.check(formula.expr, replace(env, variables=variables)).returns


def _param_type(param_type: t.FieldType) -> str:
    """What a formula's parameter is given as (attributes, which are whole numbers, too)."""
    match param_type:
        case t.BoolType():
            return "boolean"
        case t.NumberType():
            return "number | Fraction"
        case t.RefType(kind):
            return _ids(kind)
        case _:
            return "number"


def render(ruleset: CompiledRuleset, module: Module) -> str:
    """rules.d.ts: the runtime's declarations, then the ruleset's (for `module`, its rules.js)."""
    env = environment_of(ruleset.entities)
    broken = {(kind, entity_id) for kind, entity_id, _ in module.unsupported}
    out: list[str] = []

    def entry(kind: str, entity_id: str, declared: str) -> str:
        return f"  readonly {_json(entity_id)}: {NOT_SUPPORTED if (kind, entity_id) in broken else declared};"

    def registry(name: str, doc: str, kind: str, items: Iterable[tuple[str, str]]) -> None:
        body = "".join(entry(kind, i, declared) + "\n" for i, declared in items)
        out.append(f"/** {doc} */\nexport declare const {name}: {{\n{body}}};")

    out.append(f"export declare const ID: {_json(ruleset.id)};")
    out.append("export declare const TITLE: string;\nexport declare const VERSION: string;")
    out.append("export declare const SOURCE_SHA256: string;\nexport declare const NAMES: Names;")
    out.append("export declare const NOT_SUPPORTED: readonly (readonly [string, string, string])[];")

    ids = "".join(
        f"  {_json(kind)}: {_union(_json(i) for i in ruleset.entities.get(kind, {})) or 'never'};\n"
        for kind in ruleset.kinds
    )
    out.append(f"/** The ids of each kind's entities. */\nexport interface Ids {{\n{ids}}}")

    tables = ruleset.entities.get("table", {})
    rows = []
    for table_id, entity in tables.items():
        cols = columns(entity, "columns")
        cells = [[row.cells[i] for row in entity.rows] for i in range(len(cols))]
        lines = [
            f"readonly {_json(c.name)}: {ts_type(c.type, cells[i], env)}{_absent(cells[i])};"
            for i, c in enumerate(cols)
        ]
        body = "{\n" + "".join(f"    {line}\n" for line in lines) + "  }" if lines else "{}"
        rows.append(f"  /** {_comment(entity.name)} */\n  {_json(table_id)}: {body};\n")
    out.append(f"/** Each table's rows, by the table's id. */\nexport interface Rows {{\n{''.join(rows)}}}")
    registry("TABLES", "The tables, by id.", "table", ((i, f"Table<Rows[{_json(i)}]>") for i in tables))

    kinds = ["attribute", *registry_kinds(ruleset)]
    entities = []
    for kind_name in kinds:
        kind: Kind = ruleset.kinds[kind_name]
        values = [e.fields for e in ruleset.entities.get(kind_name, {}).values()]
        head = [f"readonly id: {_ids(kind_name)};", "readonly name: string;"]
        body = _object(head, tuple(kind.fields.values()), values, env, "  ")
        entities.append(f"  /** {_comment(kind.title)} */\n  {_json(kind_name)}: {body};\n")
    out.append(f"/** Each kind's entities, by the kind's name. */\nexport interface Entities {{\n{''.join(entities)}}}")
    names = {**registry_names(ruleset), "attribute": "ATTRIBUTES"}
    for kind_name in kinds:
        declared = f"Entities[{_json(kind_name)}]"
        found = ruleset.entities.get(kind_name, {})
        registry(
            names[kind_name], f"{ruleset.kinds[kind_name].title}, by id.", kind_name, ((i, declared) for i in found)
        )

    formulas = []
    for formula_id, entity in ruleset.entities.get("formula", {}).items():
        params = formula_params(entity, ruleset)
        types = {c.name: _param_type(c.type) for c in columns(entity, "params")}
        given = " ".join(f"readonly {_json(key)}: {types.get(name, 'number')};" for name, key in params.items())
        returns = formula_type([_formula_returns(entity, env)])
        formulas.append((formula_id, f"(given: {{ {given} }}) => {returns}"))
    registry("FORMULAS", "The formulas: each a function of its parameters by name.", "formula", formulas)

    mechanics = ruleset.entities.get("mechanic", {})
    styles = {i: MECHANIC_CLASSES.get(str(e.fields.get("style")), NOT_SUPPORTED) for i, e in mechanics.items()}
    registry("MECHANICS", "The dice mechanics, by id.", "mechanic", styles.items())
    out.append(
        "/** The given attributes (by id) plus every derived one, each computed from its formula. */\n"
        'export declare function deriveAttributes(values: { readonly [id in Ids["attribute"]]?: Num }): '
        "Record<string, any>;"
    )
    if ruleset.entities.get("lifepath"):
        out.append(LIFEPATH_FUNCTIONS)
    header = (
        f"// TypeScript declarations of rules.js, the rules of ruleset {ruleset.id!r} as one ES module.\n"
        "// Generated by rulesdsl: change the .rules sources and rebuild.\n"
    )
    return header + RUNTIME_DTS.read_text(encoding="utf-8") + "\n" + "\n".join(out) + "\n"


LIFEPATH_FUNCTIONS = """/** Whether `lifepath` may follow the lifepaths `previous` (ids, born lifepath first):
 * true, false, or null when that depends on a fact left out. */
export declare function requirementMet(
  lifepath: Ids["lifepath"], previous: readonly Ids["lifepath"][], options?: PathOptions): Verdict;
/** Why `lifepath` may not follow `previous`; empty if it may (or if that depends on a fact left out). */
export declare function unmetRequirements(
  lifepath: Ids["lifepath"], previous: readonly Ids["lifepath"][], options?: PathOptions): string[];
/** Burn a character from lifepaths (ids, display names or aliases, born lifepath first). JSON.stringify of
 * the sheet is the Python sheet's to_json(). */
export declare function burn(path: readonly string[], options?: BurnOptions): Readonly<Sheet>;"""
