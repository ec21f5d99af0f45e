"""Semantic checks: what no schema can say.

Duplicate ids; references that must resolve in the right kind (each `Ref` gets its id); tables that
cover their keys exactly once; formulas over declared names, without cycles, that the generated package
can evaluate; requirements that can hold; and everything the generated package relies on (Python
names that cannot collide, the tables burning characters reads). Produces the resolved entities.
"""

from __future__ import annotations

import dataclasses
import keyword
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from rulesdsl.compile import ir
from rulesdsl.compile.checks import formulas
from rulesdsl.compile.checks.coverage import check_coverage
from rulesdsl.compile.checks.formulas import columns as table_columns
from rulesdsl.compile.checks.paths import check_paths
from rulesdsl.compile.checks.pynames import check_python_names
from rulesdsl.compile.index import EntityIndex
from rulesdsl.compile.kinds import Kind, with_defaults
from rulesdsl.compile.lower import requirement_nodes
from rulesdsl.compile.mechanics import records, under_bands
from rulesdsl.diagnostics import Diagnostic, Suggestions, did_you_mean, error, naming_hint, suggest, warning
from rulesdsl.language import fieldtypes as t
from rulesdsl.language.distributions import is_distribution_name, is_license_expression
from rulesdsl.language.names import slug
from rulesdsl.runtime.core import RollBand, UnderMechanic
from rulesdsl.syntax.tree import Position
from rulesdsl.syntax.written import FUNCTIONS, quote

Entities = Mapping[str, Mapping[str, ir.Entity]]  # kind -> id -> entity


@dataclass(slots=True)
class Resolutions:
    """What resolving each entity's references gave in the last check of a ruleset in this process, for the
    next (issue 20: an edit re-runs what it can affect). An entity of a file not edited since is the same
    object then, and resolves the same while what resolving reads besides it is the same: the names of every
    kind (`EntityIndex`'s ids and keys), the kinds, the names a homebrew removed. Kept only for an entity
    resolved without a diagnostic (a hint names other entities) and without a number read from another
    entity (`weapon[longsword].reach`)."""

    reads: object = None
    # by id(): the entity (held, so that its id is no other's meanwhile) and the entity resolved
    kept: dict[int, tuple[ir.Entity, ir.Entity]] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Resolved:
    """One ruleset after the checks: entities by kind, then by id, both sorted; every Ref resolved, in the
    entities and in the kinds' defaults (what a left-out field means: `type: ref damage_type = slashing`)."""

    entities: dict[str, dict[str, ir.Entity]]
    kinds: dict[str, Kind]


def check_ruleset(
    ruleset_id: str,
    manifest_pos: Position,
    entities: Sequence[ir.Entity],
    kinds: Mapping[str, Kind],
    removed: Mapping[tuple[str, str], Position] | None = None,
    checkpoint: Callable[[], None] = lambda: None,
    resolutions: Resolutions | None = None,
) -> tuple[Resolved, list[Diagnostic]]:
    """`removed`: (kind, slug of a name) of entities a homebrew removed; references to them are reported
    at the removal (E507), so not again where they are written. `checkpoint` is called between the checks
    (it may raise to stop them: see pipeline.compile_paths). `resolutions`: the last check's, reused where
    they hold, and replaced by this one's."""
    diagnostics: list[Diagnostic] = []
    diagnostics += _check_package_name(ruleset_id, manifest_pos)
    unique: dict[str, dict[str, ir.Entity]] = defaultdict(dict)
    for entity in entities:
        seen = unique[entity.kind]
        if entity.id in seen:
            first = seen[entity.id].pos
            diagnostics.append(
                error(
                    "E301",
                    f"{entity.kind} '{entity.id}' is defined twice (first at {first.file}:{first.line})",
                    entity.id_pos,
                    'give one of them an explicit id: KIND some_id "Name" { ... }',
                )
            )
        else:
            seen[entity.id] = entity
    indexes = {kind: EntityIndex(list(group.values())) for kind, group in unique.items()}

    def formula_named(text: str) -> str | None:
        found = indexes["formula"].find(text) if "formula" in indexes else []
        return found[0] if len(found) == 1 else None

    unique = defaultdict(dict, formulas.entity_arguments(dict(unique), kinds, formula_named))
    kinds = formulas.default_arguments(kinds, unique, formula_named)
    resolved: dict[str, dict[str, ir.Entity]] = {}
    read_another: list[bool] = [False]
    resolve = _resolver(indexes, kinds, diagnostics, removed or {}, read_another)
    reads = (
        {
            kind: (frozenset(index.by_id), {k: tuple(ids) for k, ids in index.by_name.items()})
            for kind, index in indexes.items()
        },
        kinds,
        frozenset(removed or ()),
    )
    before = resolutions.kept if resolutions is not None and resolutions.reads == reads else {}
    kept: dict[int, tuple[ir.Entity, ir.Entity]] = {}
    for kind, group in sorted(unique.items()):
        resolved[kind] = {}
        for n, (entity_id, entity) in enumerate(sorted(group.items())):
            if n % 500 == 0:  # every few hundredths of a second
                checkpoint()
            found = before.get(id(entity))
            keep = found is not None and found[0] is entity
            if found is None or not keep:
                reported, read_another[0] = len(diagnostics), False
                found = (entity, _resolve(entity, resolve))
                keep = len(diagnostics) == reported and not read_another[0]
            if keep:
                kept[id(entity)] = found
            resolved[kind][entity_id] = found[1]
    if resolutions is not None:
        resolutions.reads, resolutions.kept = reads, kept
    kinds = {name: _resolve_defaults(kind, resolve) for name, kind in kinds.items()}
    resolved = formulas.resolve_names(resolved, kinds, diagnostics)
    kinds = formulas.resolve_default_names(kinds, resolved, diagnostics)
    resolved, kinds = _default_check_mechanics(resolved, kinds, diagnostics)
    checkpoint()
    diagnostics += _check_chains(resolved.get("table", {}))
    for entity in resolved.get("table", {}).values():
        diagnostics += _check_table(entity, resolved)
    checks: tuple[Callable[[], list[Diagnostic]], ...] = (
        lambda: formulas.check_params(resolved, kinds),
        lambda: formulas.check_formulas(resolved, kinds),
        lambda: _check_formula_graph(resolved),
        lambda: _check_mechanics(resolved.get("mechanic", {})),
        lambda: _check_requirements(resolved),
        lambda: check_paths(resolved),
        lambda: _check_burning(resolved, kinds),
        lambda: check_python_names(resolved, kinds),
    )
    for check in checks:
        checkpoint()
        diagnostics += check()
    return Resolved(resolved, kinds), diagnostics


def _check_package_name(ruleset_id: str, pos: Position) -> list[Diagnostic]:
    if keyword.iskeyword(ruleset_id) or ruleset_id in sys.stdlib_module_names or ruleset_id in ("site", "rulesdsl"):
        return [
            error(
                "E304",
                f"the ruleset id '{ruleset_id}' cannot be a Python package name",
                pos,
                f"choose another id, e.g. '{ruleset_id}_rules'",
            )
        ]
    # An id is a slug, so this is only the name with no letter or digit at all (`_`); tests/test_wheels.py
    # holds every other slug to be a distribution name already in its normal form.
    if not is_distribution_name(ruleset_id):
        return [
            error(
                "E304",
                f"the ruleset id '{ruleset_id}' cannot name a Python distribution (a wheel)",
                pos,
                "a ruleset id begins and ends with a letter or a digit, e.g. 'marsh_folk'",
            )
        ]
    return []


def check_license(manifest: ir.Entity) -> list[Diagnostic]:
    """A manifest's `license` is an SPDX expression, as its wheel's License-Expression must be (PEP 639)."""
    license = manifest.fields.get("license")
    if not isinstance(license, str) or is_license_expression(license):
        return []
    return [
        error(
            "E307",
            f"the licence '{license}' is not an SPDX licence expression",
            manifest.position("license"),
            "name it by its SPDX id (CC-BY-4.0, CC-BY-SA-4.0, MIT), join several with AND or OR, "
            "or call a licence of your own LicenseRef-NAME",
        )
    ]


# ---------------------------------------------------------------- references


def _field_value(
    node: ir.FieldOf, indexes: Mapping[str, EntityIndex], kinds: Mapping[str, Kind]
) -> ir.FieldOf | Diagnostic:
    """`weapon[longsword].reach` with its number, or why it has none."""
    target = indexes[node.entity.kind].by_id[node.entity.target]
    decl = kinds[node.entity.kind].fields.get(node.field)
    if decl is None:
        fields = [d.name for d in kinds[node.entity.kind].fields.values()]
        close = suggest(node.field, fields)
        hint = naming_hint(close) or formulas.number_fields_hint(kinds[node.entity.kind])
        return error("E330", f"a {node.entity.kind} has no field '{node.field}'", node.pos, hint, close)
    value = target.fields.get(node.field, decl.default)
    if value is None:
        return error(
            "E330", f"{target.name} gives no '{node.field}'", node.pos, "give it one, or a default in the kind"
        )
    if isinstance(value, bool) or not isinstance(value, int | Fraction):
        shown = t.type_text(decl.type)
        message = f"'{node.field}' of {target.name} is {shown}, not a number to compute with"
        return error("E330", message, node.pos, formulas.number_fields_hint(kinds[node.entity.kind]))
    return replace(node, value=value)


def _resolver(
    indexes: Mapping[str, EntityIndex],
    kinds: Mapping[str, Kind],
    diagnostics: list[Diagnostic],
    removed: Mapping[tuple[str, str], Position],
    read_another: list[bool],
) -> Callable[[Any], Any]:
    """What resolving does to each node: a Ref gets its id (an unresolvable one is reported and left without),
    a FieldOf its number (and `read_another[0]` is set: the value is another entity's)."""
    found_ids: dict[tuple[str, str], str | None] = {}
    suggestions: dict[str, Suggestions] = {}

    def resolve(node: Any) -> Any:
        if isinstance(node, ir.FieldOf) and node.entity.kind not in kinds:
            diagnostics.append(formulas.unknown_kind(node, kinds, node.entity.pos))
            return node
        if isinstance(node, ir.FieldOf) and node.entity.id is not None:
            read_another[0] = True
            valued = _field_value(node, indexes, kinds)
            if isinstance(valued, Diagnostic):
                diagnostics.append(valued)
                return node
            return valued
        if isinstance(node, ir.Holds) and node.kind not in kinds:
            diagnostics.append(
                error(
                    "E200",
                    f"unknown kind '{node.kind}'",
                    node.pos,
                    did_you_mean(node.kind, kinds) or "a requirement names a kind, then one of its entities",
                )
            )
            return node
        if not isinstance(node, ir.Ref):
            return node
        if node.kind not in kinds:
            return node  # only a requirement names a kind this freely; reported at the requirement
        key = (node.kind, node.text)
        if key in found_ids:  # the same name written again: found the same way (or reported again, below)
            target = found_ids[key]
            if target is not None:
                return ir.Ref(node.kind, node.text, node.pos, target)
        index = indexes.get(node.kind) or EntityIndex(())
        found = index.find(node.text)
        if len(found) == 1:
            found_ids[key] = found[0]
            return ir.Ref(node.kind, node.text, node.pos, found[0])
        found_ids[key] = None
        if found:
            diagnostics.append(
                error(
                    "E302",
                    f"'{node.text}' could mean several {node.kind}s: {', '.join(found)}",
                    node.pos,
                    "write the id of the one you mean",
                )
            )
        elif (node.kind, slug(node.text)) not in removed:
            if node.kind not in suggestions:  # one pool per kind: every unknown name asks it
                functions = sorted(FUNCTIONS) if node.kind == "formula" else []
                suggestions[node.kind] = Suggestions(index.candidates() + functions)
            what = "function or formula" if node.kind == "formula" else node.kind
            close = suggestions[node.kind].close(node.text)
            hint = naming_hint(close) or _declare_hint(node.kind, node.text, bool(index.by_id))
            diagnostics.append(error("E303", f"no {what} named '{node.text}'", node.pos, hint, close))
        return node

    return resolve


def _resolve_defaults(kind: Kind, resolve: Callable[[Any], Any]) -> Kind:
    """The kind with the references in its fields' defaults resolved (in records' fields too): an entity
    that leaves the field out gets the default, and the package writes it as it writes the entity's own."""
    return with_defaults(kind, lambda _name, _type, default: _resolved(default, resolve))


def _resolve(entity: ir.Entity, resolve: Callable[[Any], Any]) -> ir.Entity:
    """The entity with every Ref's id set (an unresolvable one is reported and left without)."""
    fields = {name: _resolved(value, resolve) for name, value in entity.fields.items()}
    rows = tuple(_resolved(row, resolve) for row in entity.rows) if entity.rows else entity.rows
    e = entity
    return ir.Entity(e.kind, e.id, e.name, fields, e.positions, rows, e.failed, e.id_pos, e.pos, e.file)


# Values that hold no reference: left as they are without looking inside.
_NO_REFS = (int, str, bool, Fraction, ir.Dice, ir.Range, ir.StatBonus, ir.Multiplier, ir.Actions, ir.Unknown)
_NO_REFS_TYPES = frozenset({*_NO_REFS, ir.NoneValue, ir.Roll, ir.Column, type(None)})
_ONE_REF = {ir.TookLifepath: "lifepath", ir.HasTrait: "trait", ir.HasSkill: "skill", ir.Previous: "lifepath"}


def _resolved(value: Any, resolve: Callable[[Any], Any]) -> Any:
    """`ir.rebuild(value, resolve)`, with the values lifepaths are made of (references, lists, points,
    requirements) taken apart directly: resolving is done for every reference of every entity."""
    kind = type(value)
    if kind in _NO_REFS_TYPES:
        return value
    if kind is ir.Ref:
        return resolve(value)
    if kind is tuple:
        items = tuple([_resolved(item, resolve) for item in value])
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if kind is ir.Choices:
        options = tuple([tuple([resolve(r) for r in option]) for option in value.options])
        return ir.Choices(value.points, options, value.pos)
    if kind in _ONE_REF:
        ref = resolve(getattr(value, _ONE_REF[kind]))
        return kind(ref, value.pos)
    if kind is ir.AnyOf or kind is ir.AllOf:
        return kind(tuple([_resolved(item, resolve) for item in value.items]), value.pos)
    if kind is ir.NotReq:
        return ir.NotReq(_resolved(value.item, resolve), value.pos)
    if kind is ir.CountOf:
        setting = resolve(value.setting) if value.setting is not None else None
        lifepaths = tuple([resolve(r) for r in value.lifepaths])
        return ir.CountOf(value.count, setting, value.tag, lifepaths, value.pos)
    return ir.rebuild(value, resolve)


# ---------------------------------------------------------------- tables


def _check_table(entity: ir.Entity, entities: Entities) -> list[Diagnostic]:
    diagnostics: list[Diagnostic] = []
    columns = table_columns(entity, "columns")
    seen: dict[str, ir.Column] = {}
    for column in (*table_columns(entity, "keys"), *columns):
        if column.name in seen:
            message = f"'{column.name}' is declared twice in this table"
            hint = f"declare '{column.name}' once, and name the other column otherwise"
            diagnostics.append(error("E316", message, column.pos, hint))
        seen[column.name] = column
    if "rows" in entity.failed:
        return diagnostics
    roll = entity.fields.get("roll")
    keys = table_columns(entity, "keys")
    rolled = roll if isinstance(roll, ir.Roll) else None
    if rolled is not None and rolled.given:
        problems = _given_problems(rolled, keys)
        if problems:
            return diagnostics + problems
    if rolled is not None and len(rolled.given) + len(rolled.dice) > max(len(keys), 1):
        diagnostics.append(
            error(
                "E319",
                f"the table is rolled on {len(rolled.dice)} dice but has {max(len(keys), 1)} key(s)",
                rolled.pos,
                "declare a key per die: keys: first(int), second(int)",
            )
        )
        return diagnostics
    # what a `ref KIND` key can be: every entity of the kind (an `otherwise` beside rows for all is never reached)
    every = [frozenset(entities.get(k.type.kind, {})) if isinstance(k.type, t.RefType) else None for k in keys]
    diagnostics += check_coverage(
        entity,
        rolled,
        "roll" if rolled else ("keys" if keys else None),
        clamp=entity.fields.get("clamp") is True,
        every=every,
    )
    return diagnostics


def _given_problems(roll: ir.Roll, keys: Sequence[ir.Column]) -> list[Diagnostic]:
    """E310: the keys a roll is given (`roll: region, 1d20`) are the table's first keys, in order, and can be
    passed to `roll(rng, region=...)` beside its own arguments."""
    for i, given in enumerate(roll.given):
        names = [k.name for k in keys]
        if given.key not in names:
            hint = did_you_mean(given.key, names) or (
                "declare it: keys: " + ", ".join([given.key, *names]) if names else f"keys: {given.key}, roll(int)"
            )
            return [error("E310", f"the roll names '{given.key}', which is no key of the table", given.pos, hint)]
        if names.index(given.key) != i:
            order = ", ".join(g.key for g in roll.given)
            return [
                error(
                    "E310",
                    f"the roll is given '{given.key}', which is not the table's key number {i + 1}",
                    given.pos,
                    f"declare the keys it is given first, in that order: keys: {order}, ...",
                )
            ]
        if given.key in ("rng", "modifier"):
            return [
                error(
                    "E310",
                    f"a key given to a roll cannot be called '{given.key}': roll(rng, modifier=...) has that argument",
                    given.pos,
                    "rename the key",
                )
            ]
    return []


# ---------------------------------------------------------------- formulas


def _check_formula_graph(entities: Entities) -> list[Diagnostic]:
    """Formulas that use one another in a circle, and a formula named like a derived attribute."""
    diagnostics: list[Diagnostic] = []
    attributes = entities.get("attribute", {})
    for entity in entities.get("formula", {}).values():
        if entity.id in attributes and "formula" in attributes[entity.id].fields:
            diagnostics.append(
                error(
                    "E323",
                    f"the formula '{entity.id}' has the name of a derived attribute",
                    entity.id_pos,
                    "give one of them another id",
                )
            )
    for kind, node_type in (("attribute", ir.Var), ("formula", ir.FormulaCall)):
        uses = {}
        for entity in entities.get(kind, {}).values():
            formula = entity.fields.get("formula")
            if isinstance(formula, ir.Formula):
                uses[entity.id] = [_used(n) for n in ir.formula_nodes(formula) if isinstance(n, node_type)]
        for cycle in cycles(uses):
            entity = entities[kind][cycle[0]]
            message = "formulas go round in a circle: " + " -> ".join([*cycle, cycle[0]])
            hint = f"break the circle: compute {cycle[0]} without {cycle[1 % len(cycle)]}, or another without the next"
            diagnostics.append(error("E322", message, entity.position("formula"), hint))
    return diagnostics


def _used(node: ir.Expr) -> str | None:
    """The attribute or formula a name or call uses (None: unresolved)."""
    if isinstance(node, ir.Var):
        return node.attribute
    return node.formula.id if isinstance(node, ir.FormulaCall) else None


def cycles(uses: Mapping[str, Sequence[str | None]]) -> list[list[str]]:
    """One cycle through each strongly connected group of names using one another (Tarjan, iterative:
    linear in names and uses), each starting at its smallest name."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    for root in sorted(uses):
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            targets = [u for u in uses.get(node, ()) if u is not None and u in uses]
            if i < len(targets):
                work.append((node, i + 1))
                nxt = targets[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1 or node in uses.get(node, ()):
                    groups.append(sorted(group))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return sorted(_cycle_in(group, uses) for group in groups)


def _cycle_in(group: list[str], uses: Mapping[str, Sequence[str | None]]) -> list[str]:
    """A path from the group's smallest name back to itself, within the group (breadth first)."""
    members = set(group)
    start = group[0]
    came_from: dict[str, str] = {}
    queue = [start]
    for node in queue:
        for nxt in uses.get(node, ()):
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return path[::-1]
            if nxt in members and nxt not in came_from and nxt is not None:
                came_from[nxt] = node
                queue.append(nxt)
    return [start]  # pragma: no cover - a group always has a cycle through its smallest member


def _chained(row: ir.TableRow) -> list[str]:
    """The tables a row goes on to: `ref table` cells, and `rolls` cells (`2 x treasure`)."""
    refs = (c.table if isinstance(c, ir.Rolls) else c for c in row.cells)
    return [c.id for c in refs if isinstance(c, ir.Ref) and c.kind == "table" and c.id]


def _has_checks(field_type: t.FieldType) -> bool:
    """Whether a field's values may hold checks (in lists, maps and records too)."""
    return t.holds(field_type, (t.CheckType,))


def _follow_ups(table: ir.Entity) -> dict[str, Fraction] | None:
    """How many rolls on each table one roll on `table` leads to, on average (the most, over the values of
    the keys it is given); None where it has no roll to weigh its rows by (E318 says so)."""
    roll = table.fields.get("roll")
    if not isinstance(roll, ir.Roll):
        return None
    runtime = ir.runtime_roll(roll)
    given = len(roll.given)
    groups: dict[tuple[str, ...], dict[str, Fraction]] = {}  # per value of the given keys
    taken: dict[tuple[str, ...], Fraction] = {}
    otherwise = next((row for row in table.rows if not row.keys), None)
    for row in table.rows:
        if not row.keys:
            continue
        group = tuple(ir.key_text(k) for k in row.keys[:given])
        chance = ir.row_chance(runtime, row.keys[given:])
        taken[group] = taken.get(group, Fraction(0)) + chance
        leads = groups.setdefault(group, {})
        for cell in row.cells:
            _add_rolls(leads, cell, chance)
    if otherwise is not None:
        for group in list(groups) or [()]:  # with no other row, the one group of every value
            leads = groups.setdefault(group, {})
            for cell in otherwise.cells:
                _add_rolls(leads, cell, 1 - taken.get(group, Fraction(0)))
    most: dict[str, Fraction] = {}
    for leads in groups.values():
        for target, mean in leads.items():
            most[target] = max(most.get(target, Fraction(0)), mean)
    return most


def _add_rolls(leads: dict[str, Fraction], cell: ir.Cell, chance: Fraction) -> None:
    """A cell's rolls on further tables (`2 x treasure`, a `ref table`), weighted by its row's chance."""
    ref, times = (cell.table, cell.count) if isinstance(cell, ir.Rolls) else (cell, 1)
    if isinstance(ref, ir.Ref) and ref.kind == "table" and ref.id:
        leads[ref.id] = leads.get(ref.id, Fraction(0)) + chance * times


def _expected_rolls(follow: Mapping[str, Mapping[str, Fraction]]) -> dict[str, Fraction] | None:
    """The expected number of rolls a chain from each table takes: x = 1 + M x, solved exactly. None when it
    has no finite answer (each roll leads, on average, to one or more: the chain may never end); a chain
    whose every step leads to fewer than one on average ends, and x > 0 says so (Collatz-Wielandt)."""
    ids = sorted(follow)
    at = {table_id: i for i, table_id in enumerate(ids)}
    size = len(ids)
    # (I - M) x = 1, in exact fractions; M only among tables that chain on (the rest end at once)
    matrix = [[Fraction(int(i == j)) for j in range(size)] + [Fraction(1)] for i in range(size)]
    for table_id, leads in follow.items():
        for target, mean in leads.items():
            if target in at:
                matrix[at[table_id]][at[target]] -= mean
            else:
                matrix[at[table_id]][size] += mean  # a table that does not chain on: one roll, then it ends
    for column in range(size):
        pivot = next((r for r in range(column, size) if matrix[r][column] != 0), None)
        if pivot is None:
            return None
        matrix[column], matrix[pivot] = matrix[pivot], matrix[column]
        lead = matrix[column][column]
        matrix[column] = [value / lead for value in matrix[column]]
        for r in range(size):
            if r != column and matrix[r][column] != 0:
                factor = matrix[r][column]
                matrix[r] = [a - factor * b for a, b in zip(matrix[r], matrix[column], strict=True)]
    found = {table_id: matrix[at[table_id]][size] for table_id in ids}
    return found if all(x > 0 for x in found.values()) else None


MAX_CHAINING = 64  # tables in one chain weighed exactly (a linear system per ruleset); more: the rule below only


def _check_chains(tables: Mapping[str, ir.Entity]) -> list[Diagnostic]:
    """Rolling on through `ref table` and `rolls` cells must be able to stop: a table ends when one of its
    rows chains only to tables that end (or to none). "Roll again on this table" rows are fine, as long as
    a roll leads to fewer than one more on average: `6 -> 2 x treasure` on a d6 ends, `2-6 -> 3 x treasure`
    goes on for ever (the package would give up after 1,000 rolls)."""
    diagnostics = _check_chain_ends(tables)
    if diagnostics:
        return diagnostics
    follow = {t_id: f for t_id, e in tables.items() if any(_chained(r) for r in e.rows) and (f := _follow_ups(e))}
    if not follow or len(follow) > MAX_CHAINING or _expected_rolls(follow) is not None:
        return []
    # rolls on tables that end at once end the chain; the rest go on
    onward = {t_id: sum((m for t, m in leads.items() if t in follow), Fraction(0)) for t_id, leads in follow.items()}
    looping = sorted(t_id for t_id, mean in onward.items() if mean >= 1)
    return [
        error(
            "E317",
            f"rolling on {table_id} may never end: on average each roll leads to {_shown(onward[table_id])} "
            "more that go on rolling",
            tables[table_id].id_pos,
            "make the rows that roll again rarer, or roll fewer times (a chain ends when each roll leads to "
            "fewer than one more, on average)",
        )
        for table_id in looping or sorted(follow)
    ]


def _shown(mean: Fraction) -> str:
    return str(mean.numerator) if mean.denominator == 1 else f"{float(mean):.3g}"


def _check_chain_ends(tables: Mapping[str, ir.Entity]) -> list[Diagnostic]:
    """A table ends when one of its rows chains only to tables that end (or to none)."""
    chaining = {t_id for t_id, e in tables.items() if any(_chained(r) for r in e.rows)}
    ends = set(tables) - chaining
    changed = True
    while changed:
        changed = False
        for table_id in sorted(chaining - ends):
            if any(all(target in ends for target in _chained(r)) for r in tables[table_id].rows):
                ends.add(table_id)
                changed = True
    return [
        error(
            "E317",
            f"rolling on {table_id} never ends: every row chains on to a table that goes on chaining",
            tables[table_id].id_pos,
            "give some row a cell that stops the chain (none, or —)",
        )
        for table_id in sorted(chaining - ends)
    ]


# ---------------------------------------------------------------- mechanics


def _default_check_mechanics(
    entities: dict[str, dict[str, ir.Entity]], kinds: Mapping[str, Kind], diagnostics: list[Diagnostic]
) -> tuple[dict[str, dict[str, ir.Entity]], dict[str, Kind]]:
    """A `check` that names no mechanic uses the ruleset's only check mechanic; a named one must be a check.
    In the kinds' defaults too (a record's default may hold a check)."""
    mechanics = entities.get("mechanic", {})
    checks = sorted(m_id for m_id, e in mechanics.items() if e.fields.get("style") == "check")

    def settle(node: Any) -> Any:
        if not isinstance(node, ir.CheckSpec):
            return node
        if node.mechanic is not None:
            named = mechanics.get(node.mechanic.id or "")
            if named is not None and named.fields.get("style") != "check":
                diagnostics.append(
                    error(
                        "E329",
                        f"{named.id} is {_a(named.fields.get('style'))} mechanic, not a check",
                        node.pos,
                        f"a check rolls with a mechanic of style check: name one, as in check of {checks[0]}"
                        if checks
                        else f"a check rolls with a mechanic of style check: give {named.id} style: check, "
                        "or declare one and name it (check of NAME)",
                        about=(named.id,),
                    )
                )
            return node
        if len(checks) == 1:
            return replace(node, mechanic=ir.Ref("mechanic", checks[0], node.pos, checks[0]))
        which = f"several check mechanics ({', '.join(checks)})" if checks else "no mechanic of style check"
        diagnostics.append(
            error(
                "E329",
                f"this check needs a mechanic to roll with, and the ruleset has {which}",
                node.pos,
                "declare one: mechanic task { style: check  die: 2d6 }, or name it in the kind: check of task"
                if not checks
                else f"name one in the kind: check of {checks[0]}",
                about=(*checks, "mechanic"),
            )
        )
        return node

    result = dict(entities)
    for kind, group in entities.items():
        if not any(_has_checks(d.type) for d in kinds[kind].fields.values()):
            continue
        result[kind] = {
            i: replace(e, fields={n: ir.rebuild(v, settle) for n, v in e.fields.items()}) for i, e in group.items()
        }

    def settled(_name: str, field_type: t.FieldType, default: ir.Value) -> ir.Value:
        return ir.rebuild(default, settle) if _has_checks(field_type) else default

    return result, {name: with_defaults(kind, settled) for name, kind in kinds.items()}


def _repeat_column_hint(name: str) -> str:
    """E343's hint for a column of lifepath_repeats: its type, or the name it most likely means."""
    if name in REPEAT_COLUMNS:
        return f"write {name}(multiplier)"
    close = suggest(name, REPEAT_COLUMNS)
    return f"write {(close or REPEAT_COLUMNS)[0]}(multiplier)"


def _declare_hint(kind: str, name: str, any_of_kind: bool) -> str:
    """The hint for a name nothing of its kind has, and nothing close: declare it."""
    written = name if name.replace("_", "").isalnum() else quote(name)
    declare = f"{kind} {written} {{ ... }}"
    return f"declare it: {declare}" if not any_of_kind else f"check the spelling, or declare it: {declare}"


def _a(style: object) -> str:
    """A mechanic's style with its article: `a pool`, `an under`."""
    return f"{'an' if str(style)[:1] in tuple('aeiou') else 'a'} {style}"


def _check_mechanics(mechanics: Mapping[str, ir.Entity]) -> list[Diagnostic]:
    """What the generated mechanics can roll: a pool is one kind of die; exploding needs one die."""
    diagnostics = []
    for entity in mechanics.values():
        die = entity.fields.get("die")
        if not isinstance(die, ir.Dice):
            continue
        style = entity.fields.get("style")
        if not die.plain or not die.terms:
            diagnostics.append(
                error(
                    "E328",
                    f"a mechanic rolls dice added up, not {die.text}",
                    entity.position("die"),
                    "its rules say how dice are read: explode_on, a pool's target, the highest die",
                )
            )
            continue
        foreign = [f for f in entity.fields if f in _STYLE_RULES and style not in _STYLE_RULES[f]]
        own = [f for f, styles in _STYLE_RULES.items() if style in styles]
        diagnostics += [
            error(
                "E328",
                f"{name} is not a rule of {_a(style)} mechanic",
                entity.position(name),
                f"its rules: {', '.join(own)}" if own else f"a {style} mechanic has no rules besides its die",
            )
            for name in foreign
        ]
        if style == "under":
            diagnostics += _check_under(entity, die)
        if style in ("check", "contest", "under"):
            continue
        rerolls = [f for f in ("explode_on", "fumble_on", "stack_on") if f in entity.fields and f not in foreign]
        if style in ("pool", "highest") and not die.single_die:
            diagnostics.append(
                error(
                    "E328",
                    f"a {style} mechanic rolls a number of one kind of die, not {die.text}",
                    entity.position("die"),
                    f"write die: d{die.terms[0].sides}; the number of dice is given when rolling",
                )
            )
        elif style == "highest":
            diagnostics += _check_outcomes(entity, die.terms[0].sides)
        elif rerolls and not die.single_die:
            diagnostics.append(
                error(
                    "E328",
                    f"{rerolls[0]} needs a single die to roll again, not {die.text}",
                    entity.position(rerolls[0]),
                    "exploding and fumbling are rules for one die",
                )
            )
        for name in rerolls:
            face = entity.fields[name]
            if isinstance(face, int) and die.single_die and not 1 <= face <= die.terms[0].sides:
                message = f"{name} {face} is not a face of {die.text}"
                hint = f"write a face from 1 to {die.terms[0].sides}"
                diagnostics.append(error("E328", message, entity.position(name), hint))
    return diagnostics


# Which styles each style-specific rule of a mechanic belongs to.
_STYLE_RULES = {
    "stack_on": ("pool",),
    "fumble_ones": ("pool",),
    "explode_on": ("total",),
    "fumble_on": ("total",),
    "floor": ("total",),
    "outcomes": ("highest",),
    "critical": ("highest",),
    "zero_dice": ("highest",),
    "grades": ("under",),
    "criticals": ("under",),
    "fumbles": ("under",),
}


def _check_outcomes(entity: ir.Entity, sides: int) -> list[Diagnostic]:
    """A highest-die mechanic's bands: each face of the die reads as exactly one outcome, each named once."""
    outcomes = entity.fields.get("outcomes")
    if not isinstance(outcomes, tuple) or not outcomes:
        return [
            error(
                "E328",
                "a highest mechanic needs the outcomes its highest die reads as",
                entity.position("style"),
                "outcomes: { faces: 1..3  outcome: failure }, { faces: 4..5  outcome: partial }, "
                "{ faces: 6  outcome: success }",
            )
        ]
    diagnostics = []
    owner: dict[int, str] = {}  # face -> the outcome reading it
    names = {"critical"} if "critical" in entity.fields else set()
    for index, band in enumerate(outcomes):
        faces, name = (band.get("faces"), band.get("outcome")) if isinstance(band, ir.Record) else (None, None)
        if not isinstance(faces, ir.Range) or not isinstance(name, str):
            continue  # the schema reported it
        where = entity.position("outcomes", index)
        if name in names:
            diagnostics.append(
                error(
                    "E328",
                    f"the outcome {name} is named twice",
                    where,
                    "name each band once (a critical reads as critical)",
                )
            )
        names.add(name)
        low, high = faces.low if faces.low is not None else 1, faces.high if faces.high is not None else sides
        if low < 1 or high > sides or low > high:
            diagnostics.append(
                error("E328", f"{name}: faces {low}..{high} are not faces of d{sides}", where, f"faces run 1..{sides}")
            )
            continue
        for face in range(low, high + 1):
            if face in owner:
                diagnostics.append(
                    error(
                        "E328", f"face {face} reads as both {owner[face]} and {name}", where, "bands must not overlap"
                    )
                )
                break
            owner[face] = name
    missing = [face for face in range(1, sides + 1) if face not in owner]
    if missing and not diagnostics:
        diagnostics.append(
            error(
                "E328",
                f"no outcome reads a highest die of {', '.join(map(str, missing))}",
                entity.position("outcomes"),
                f"the bands must cover every face, 1..{sides}",
            )
        )
    return diagnostics


def _check_under(entity: ir.Entity, die: ir.Dice) -> list[Diagnostic]:
    """A roll-under mechanic's grades and bands: grades from the easiest to the hardest, each outcome named
    once; bands within the sums its dice make; no sum both a critical and a fumble against one target."""
    dice = ir.runtime_dice(die)
    lowest, highest = dice.minimum, dice.maximum
    assert highest is not None  # plain dice, checked before
    bands = {field: under_bands(entity, field, lowest, highest) for field in ("criticals", "fumbles")}
    named = {UnderMechanic.failure_name, UnderMechanic.success_name}
    if bands["criticals"]:
        named.add(UnderMechanic.critical_name)
    if bands["fumbles"]:
        named.add(UnderMechanic.fumble_name)
    reads = ", ".join(sorted(named))
    diagnostics = []
    before: tuple[int, str] | None = None
    for index, grade in enumerate(records(entity, "grades")):
        divide, name = grade.get("divide"), grade.get("outcome")
        if not isinstance(divide, int) or not isinstance(name, str):
            continue  # the schema reported it
        if name in named:
            diagnostics.append(
                error(
                    "E328",
                    f"the outcome {name} is named twice",
                    entity.position("grades", index),
                    f"name each grade once, and none {reads}: the mechanic reads those itself",
                )
            )
        if before is not None and divide <= before[0]:
            diagnostics.append(
                error(
                    "E328",
                    f"the grade {name} divides by {divide}, the grade before it ({before[1]}) by {before[0]}",
                    entity.position("grades", index, "divide"),
                    "list the grades from the easiest to the hardest, each dividing by more",
                )
            )
        named.add(name)
        before = (divide, name)
    for field, found in bands.items():
        for index, band in enumerate(found):
            if lowest <= band.low <= band.high <= highest:
                continue
            diagnostics.append(
                error(
                    "E328",
                    f"{field}: rolls {_span(band.low, band.high)} are not sums of {die.text}",
                    entity.position(field, index),
                    f"its sums run {lowest}..{highest}",
                )
            )
    for index, fumble in enumerate(bands["fumbles"]):
        for critical in bands["criticals"]:
            both = _both(critical, fumble)
            if both is not None:
                diagnostics.append(
                    error(
                        "E328",
                        f"a roll of {both} reads as both critical and fumble",
                        entity.position("fumbles", index),
                        "a sum is a critical or a fumble, never both: narrow the rolls or give each band its targets",
                    )
                )
                break
    return diagnostics


def _span(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}..{high}"


def _both(first: RollBand, second: RollBand) -> str | None:
    """The rolls and targets two bands share, as words (`100 against a target up to 49`); None: none."""
    low, high = max(first.low, second.low), min(first.high, second.high)
    lows = [b for b in (first.targets_low, second.targets_low) if b is not None]
    highs = [b for b in (first.targets_high, second.targets_high) if b is not None]
    from_, to = (max(lows) if lows else None), (min(highs) if highs else None)
    if low > high or (from_ is not None and to is not None and from_ > to):
        return None
    rolls = _span(low, high)
    if from_ is None and to is None:
        return rolls
    if from_ is None:
        return f"{rolls} against a target up to {to}"
    if to is None:
        return f"{rolls} against a target from {from_}"
    return f"{rolls} against a target {from_}..{to}"


# ---------------------------------------------------------------- requirements


def _requirements(entity: ir.Entity) -> Iterator[tuple[str, ir.Requirement]]:
    for name, value in entity.fields.items():
        if isinstance(value, ir.REQUIREMENT_TYPES):
            yield name, value


def _check_requirements(entities: Entities) -> list[Diagnostic]:
    lifepaths = entities.get("lifepath", {})
    tags = {tag for lp in lifepaths.values() for tag in _words(lp, "tags")}
    diagnostics = []
    for kind_entities in entities.values():
        for entity in kind_entities.values():
            for name, req in _requirements(entity):
                for node in requirement_nodes(req):
                    if isinstance(node, ir.CountOf) and node.tag is not None and node.tag.text not in tags:
                        close = suggest(node.tag.text, tags)
                        diagnostics.append(
                            error(
                                "E331",
                                f"no lifepath is tagged '{node.tag.text}'",
                                node.tag.pos,
                                naming_hint(close) or "tag lifepaths with 'tags: ...'",
                                close,
                            )
                        )
                if entity.kind == "lifepath" and name == "requires" and entity.fields.get("born") is True:
                    diagnostics.append(
                        warning(
                            "W332",
                            "a born lifepath is always first, so its requirement can never hold",
                            entity.position("requires"),
                            "remove its requires, or its born: yes if it is not a first lifepath",
                        )
                    )
    return diagnostics


def _words(entity: ir.Entity, name: str) -> tuple[str, ...]:
    value = entity.fields.get(name, ())
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, tuple) else ()


# ---------------------------------------------------------------- what burning characters reads


REPEAT_COLUMNS = ("years", "skill_points", "general_points", "trait_points", "resources", "stat")
LIFEPATH_FIELDS: dict[str, tuple[type, ...]] = {
    "setting": (t.RefType,),
    "born": (t.BoolType,),
    "time": (t.YearsType, t.IntType),
    "resources": (t.IntType,),
    "stat": (t.StatBonusType,),
    "leads": (t.ListType,),
    "skills": (t.ChoicesType,),
    "general": (t.PointsType, t.IntType),
    "traits": (t.ChoicesType,),
    "requires": (t.RequirementType,),
    "restrictions": (t.RequirementType,),
    "tags": (t.ListType,),
}
# The other kinds' fields burning reads (the stock of the born lifepath's setting, its pools and common traits)
BURNING_FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "lifepath": LIFEPATH_FIELDS,
    "setting": {"stock": (t.RefType,)},
    "stock": {"common_traits": (t.ListType,), "stat_pools": (t.RefType,)},
}


# What burning reads that cannot be left `none` (it has no "no value" to burn with); `unknown` is refused
# wherever burning reads.
_NEVER_NONE = ("born", "time", "resources", "setting")


def _burning_values(lifepaths: Mapping[str, ir.Entity], stocks: Mapping[str, ir.Entity]) -> list[Diagnostic]:
    """`unknown` (and, where burning needs a value, `none`) in a field burning reads: the package could not
    burn with it, so it is said here rather than at run time."""
    diagnostics = []
    read = [(lp, name) for lp in lifepaths.values() for name in LIFEPATH_FIELDS]
    read += [(stock, name) for stock in stocks.values() for name in BURNING_FIELDS["stock"]]
    for entity, name in read:
        value = entity.fields.get(name)
        if isinstance(value, ir.Unknown) or (isinstance(value, ir.NoneValue) and name in _NEVER_NONE):
            word = "unknown" if isinstance(value, ir.Unknown) else "none"
            diagnostics.append(
                error(
                    "E344",
                    f"burning characters reads the {name} of every {entity.kind}, so it cannot be {word}",
                    entity.position(name),
                    'give the value the sources most likely mean, and say so in uncertain: "..."',
                )
            )
    return diagnostics


def _check_burning(entities: Entities, kinds: Mapping[str, Kind]) -> list[Diagnostic]:
    """Burning characters (generated when a ruleset has lifepaths) reads stocks' stat pools, the
    `lifepath_repeats` table and the lifepath fields: each is checked here, where it is written."""
    lifepaths = entities.get("lifepath", {})
    if not lifepaths:
        return []
    diagnostics = []
    for kind_name, read in BURNING_FIELDS.items():
        kind = kinds[kind_name]
        wrong = [
            name
            for name, allowed in read.items()
            if name not in kind.fields or not isinstance(kind.fields[name].type, allowed)
        ]
        if wrong:
            diagnostics.append(
                error(
                    "E341",
                    f"burning characters reads these {kind_name} fields, missing or of another type here: "
                    + ", ".join(wrong),
                    kind.pos or next(iter(lifepaths.values())).pos,
                    f"keep the built-in {kind_name} fields (with their types) when overriding the kind",
                )
            )
    diagnostics += _burning_values(lifepaths, entities.get("stock", {}))
    tables = entities.get("table", {})
    for stock in entities.get("stock", {}).values():
        pools = stock.fields.get("stat_pools")
        if not isinstance(pools, ir.Ref) or pools.id is None or pools.id not in tables:
            continue
        table = tables[pools.id]
        columns = {c.name: c for c in table_columns(table, "columns")}
        missing = [c for c in ("mental", "physical") if c not in columns or not isinstance(columns[c].type, t.IntType)]
        if missing or len(table_columns(table, "keys")) > 1:
            diagnostics.append(
                error(
                    "E342",
                    f"the stat pools table '{table.id}' needs int columns mental and physical, keyed by age",
                    pools.pos,
                    "columns: mental(int), physical(int)",
                )
            )
    repeats = tables.get("lifepath_repeats")
    if repeats is not None:
        for column in table_columns(repeats, "columns"):
            if column.name not in REPEAT_COLUMNS or not isinstance(column.type, t.MultiplierType):
                diagnostics.append(
                    error(
                        "E343",
                        f"lifepath_repeats columns are multipliers named {', '.join(REPEAT_COLUMNS)}, not "
                        f"{column.name}({t.type_text(column.type)})",
                        column.pos,
                        _repeat_column_hint(column.name),
                    )
                )
        if len(table_columns(repeats, "keys")) > 1:
            message = "lifepath_repeats is keyed by the number of times taken"
            diagnostics.append(error("E343", message, repeats.id_pos, "key it by that number alone: keys: times(int)"))
    return diagnostics
