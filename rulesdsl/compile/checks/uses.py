"""Checked against every use: a name a homebrew's `remove` or `patch` took away that something still
names; what a table column names, and what a chain of rolls rolls on.

One walk over the resolved entities, after the semantic checks resolved what they could: every `Ref`
left without an id (in any field, row, cell, formula, requirement, lead, chain, mechanic, ...) and every
formula name left without an attribute is a use; the ones of a name a change took away are reported at
the change (E507), naming each use by file and line, rather than where they are written, in a base the
homebrew's author may not even have at hand.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from rulesdsl.compile import ir
from rulesdsl.compile.checks.formulas import columns as table_columns
from rulesdsl.compile.checks.formulas import unresolved
from rulesdsl.compile.kinds import Kind, no_such_kind
from rulesdsl.compile.merge import Gone
from rulesdsl.diagnostics import Diagnostic, error
from rulesdsl.language import fieldtypes as t
from rulesdsl.language.names import slug
from rulesdsl.syntax.tree import Position

_SHOWN = 8  # entities named in one message; the rest are counted


def check_uses(
    entities: Mapping[str, Mapping[str, ir.Entity]], gone: Sequence[Gone], kinds: Mapping[str, Kind]
) -> tuple[list[Diagnostic], set[Position]]:
    """E507 at each change whose names are still used, and the positions of those uses (what the other
    checks reported there, a formula naming no attribute, is said here instead)."""
    if not gone:
        return [], set()
    by_name = {(g.kind, name): g for g in gone for name in g.names}
    by_word = {word: g for g in gone for word in g.words}
    users: dict[Gone, dict[tuple[str, str], list[Position]]] = {}
    named: dict[tuple[str, str], ir.Entity] = {}
    for group in entities.values():
        for entity in group.values():
            for change, pos in _uses(entity, kinds.get(entity.kind), by_name, by_word):
                users.setdefault(change, {}).setdefault((entity.kind, entity.id), []).append(pos)
                named[(entity.kind, entity.id)] = entity
    diagnostics = []
    for change in gone:
        if change not in users:
            continue
        found = sorted(users[change].items(), key=lambda item: _first(item[1]))
        shown = [_user(named[key], positions) for key, positions in found[:_SHOWN]]
        if len(found) > _SHOWN:
            shown.append(f"{len(found) - _SHOWN} more")
        listed = shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"
        diagnostics.append(
            error(
                "E507",
                f"{change.what}, but {listed} still name{'s' * (len(found) == 1)} it",
                change.pos,
                "change them too, or keep it",
            )
        )
    return diagnostics, {pos for found in users.values() for positions in found.values() for pos in positions}


def _uses(
    entity: ir.Entity, kind: Kind | None, by_name: Mapping[tuple[str, str], Gone], by_word: Mapping[str, Gone]
) -> Iterator[tuple[Gone, Position]]:
    for ref in ir.refs_in((tuple(entity.fields.values()), entity.rows)):
        if ref.id is None:
            change = by_name.get((ref.kind, slug(ref.text)))
            if change is not None:
                yield change, ref.pos
    if by_word and kind is not None:  # a name in any formula (a check, a cell, a field) left without its attribute
        for node in unresolved(entity, kind):
            change = by_word.get(node.name)
            if change is not None:
                yield change, node.pos


def _first(positions: list[Position]) -> tuple[str, int, int]:
    first = min(positions, key=lambda p: (p.file, p.line, p.column))
    return first.file, first.line, first.column


def _user(entity: ir.Entity, positions: list[Position]) -> str:
    """`table mods (rules/base/things.rules:9, 10)`: where an entity names it (a patch may be elsewhere)."""
    lines: dict[str, set[int]] = {}
    for pos in positions:
        lines.setdefault(pos.file, set()).add(pos.line)
    where = "; ".join(f"{file}:{', '.join(map(str, sorted(found)))}" for file, found in sorted(lines.items()))
    return f"{entity.kind} {entity.name} ({where})"


def check_tables(tables: Mapping[str, ir.Entity], kinds: Mapping[str, Kind]) -> list[Diagnostic]:
    """A table's keys and columns name kinds there are (E407, as in a kind's fields); a rolled table's
    `ref table` cells, which `roll_chain` rolls on next, name tables that have a roll (E318)."""
    diagnostics: list[Diagnostic] = []
    for table in tables.values():
        columns = table_columns(table, "columns")
        for column in (*table_columns(table, "keys"), *columns):
            for named in t.referenced_kinds(column.type):
                if named not in kinds:
                    diagnostics.append(no_such_kind(named, kinds, column.pos))
        if not isinstance(table.fields.get("roll"), ir.Roll):
            continue  # never rolled, so never rolled on from: its `ref table` cells are plain references
        chains = {
            j
            for j, c in enumerate(columns)
            if isinstance(c.type, t.RollsType) or (isinstance(c.type, t.RefType) and c.type.kind == "table")
        }
        for row in table.rows:
            for j, cell in enumerate(row.cells):
                ref = cell.table if isinstance(cell, ir.Rolls) else cell
                if j not in chains or not isinstance(ref, ir.Ref) or ref.id is None or ref.id not in tables:
                    continue
                problem = _chain_problem(table, tables[ref.id], columns[j])
                if problem is not None:
                    diagnostics.append(error("E318", problem[0], ref.pos, problem[1]))
    return diagnostics


def _chain_problem(table: ir.Entity, target: ir.Entity, column: ir.Column) -> tuple[str, str] | None:
    """Why `roll_chain` cannot roll on `target` after `table` (message, hint): it has no roll, or it is given
    a key (`roll: region, 1d20`) that the chain is not given (a chain passes on the keys it is given)."""
    roll, after = target.fields.get("roll"), table.fields.get("roll")
    if not isinstance(roll, ir.Roll):
        what = t.type_text(column.type)
        hint = f"give {target.id} a roll (roll: 1d6): a rolled table's '{column.name}' ({what}) is rolled on next"
        return f"rolling on {table.id} goes on to {target.id}, which has no roll", hint
    passed = {g.key for g in after.given} if isinstance(after, ir.Roll) else set()
    missing = [g.key for g in roll.given if g.key not in passed]
    if missing:
        return (
            f"rolling on {table.id} goes on to {target.id}, which is given '{missing[0]}', but {table.id} is not",
            f"a chain passes on the keys it is given: give {table.id} '{missing[0]}' too (roll: {missing[0]}, ...)",
        )
    return None
