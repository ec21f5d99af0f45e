"""Python names: every identifier the generated package will define is checked here, at the entity that
gives it, against the others in its scope (targets.py says how each is named). A name that is a keyword,
a builtin or a name the package uses itself is renamed by `targets.python_name` (`class` -> `class_`),
never refused; what is left are two ids that would be one Python name, and each is an error with a
free id to use instead, never a package that fails on import.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from rulesdsl.compile import ir
from rulesdsl.compile.kinds import CORE_KINDS, Kind, record_types
from rulesdsl.compile.python_names import (
    MODULES,
    constant_name,
    function_name,
    identifier,
    kind_class,
    kind_module,
    param_name,
    registry_name,
)
from rulesdsl.diagnostics import Diagnostic, error
from rulesdsl.syntax.tree import Position

Entities = Mapping[str, Mapping[str, ir.Entity]]
_NOWHERE = Position("", 1, 1, 1, 2)


def _free(written: str, named: Callable[[str], str], used: Iterable[str]) -> str:
    """An id like `written` whose Python name nothing else has: `hit_location_2`."""
    taken, stem = set(used), written.rstrip("_") or written
    n = 2
    while named(f"{stem}_{n}") in taken:
        n += 1
    return f"{stem}_{n}"


def _unique(
    named: Iterable[tuple[str, str, Position]], what: str, code: str, python: Callable[[str], str], scope: str = ""
) -> list[Diagnostic]:
    """(python name, what the user wrote, where): each python name once. `python` names a written id
    the way these were named, to suggest a free one; `scope` says where they are (` of the record in 'x'`)."""
    items = list(named)
    diagnostics = []
    seen: dict[str, str] = {}
    for name, written, pos in items:
        if name in seen and seen[name] != written:
            free = _free(written, python, (n for n, _, _ in items))
            diagnostics.append(
                error(
                    code,
                    f"the {what}s '{seen[name]}' and '{written}'{scope} would both be '{name}' in Python",
                    pos,
                    f"give one of them another id, such as '{free}'",
                )
            )
        seen.setdefault(name, written)
    return diagnostics


def check_python_names(entities: Entities, kinds: Mapping[str, Kind]) -> list[Diagnostic]:
    diagnostics: list[Diagnostic] = []
    used_kinds = [k for name, k in sorted(kinds.items()) if not k.builtin or entities.get(name)]
    for kind in used_kinds:
        pos = kind.pos or _NOWHERE
        if kind.name in CORE_KINDS:
            continue  # the package's own modules are theirs
        module = kind_module(kind.name)
        if module in MODULES:
            diagnostics.append(
                error(
                    "E305",
                    f"the kind '{kind.name}' would be the module '{module}', one of the package's own modules",
                    pos,
                    "choose another name",
                )
            )
        diagnostics += _attributes([(f, kind.fields[f].pos or pos) for f in kind.fields], "")
        # A record is a dataclass of its own (in the kind's module): its fields are attributes as a kind's are.
        for decl in kind.fields.values():
            for path, record in record_types(decl.type):
                where = f" of the record in '{'.'.join((decl.name, *path))}'"
                diagnostics += _attributes([(f.name, f.pos or decl.pos or pos) for f in record.fields], where)
    diagnostics += _unique(
        ((kind_class(k.name), k.name, k.pos or _NOWHERE) for k in used_kinds), "kind", "E305", kind_class
    )
    diagnostics += _unique(
        ((registry_name(k.name), k.name, k.pos or _NOWHERE) for k in used_kinds), "kind", "E305", registry_name
    )
    # Formulas and derived attributes are functions of the package's top level; one named like a kind's
    # module there is renamed (`spells_`), and its typed name (`formulas.spells`) is as written.
    functions = [
        (function_name(e.id), e.id, e.id_pos)
        for kind in ("formula", "attribute")
        for e in entities.get(kind, {}).values()
        if isinstance(e.fields.get("formula"), ir.Formula)
    ]
    diagnostics += _unique(functions, "formula", "E305", function_name)
    tables = list(entities.get("table", {}).values())
    diagnostics += _unique(((constant_name(e.id), e.id, e.id_pos) for e in tables), "table", "E305", constant_name)
    mechanics = list(entities.get("mechanic", {}).values())
    diagnostics += _unique(
        ((constant_name(e.id), e.id, e.id_pos) for e in mechanics), "mechanic", "E305", constant_name
    )
    for table in tables:
        columns = table.fields.get("columns", ())
        if isinstance(columns, tuple):
            named = ((identifier(c.name), c.name, c.pos) for c in columns if isinstance(c, ir.Column))
            diagnostics += _unique(named, "column", "E316", identifier)
    diagnostics += _parameters(entities)
    return diagnostics


def _attributes(fields: list[tuple[str, Position]], scope: str) -> list[Diagnostic]:
    """The fields of one generated dataclass: distinct in Python, and none that Python would make private."""
    diagnostics = _unique(((identifier(name), name, pos) for name, pos in fields), "field", "E305", identifier, scope)
    for name, pos in fields:
        if name.startswith("__"):  # Python mangles such a name in a class body (`_Gizmo__size`)
            diagnostics.append(
                error(
                    "E305",
                    f"the field '{name}'{scope} cannot be an attribute in Python: a name that begins with '__' "
                    "is private to its class",
                    pos,
                    f"write '{name.strip('_') or 'value'}'",
                )
            )
    return diagnostics


def _parameters(entities: Entities) -> list[Diagnostic]:
    """The parameters of each generated function: distinct, and not the formulas its body calls."""
    attributes = entities.get("attribute", {})
    diagnostics = []
    for kind in ("attribute", "formula"):
        for entity in entities.get(kind, {}).values():
            formula = entity.fields.get("formula")
            if not isinstance(formula, ir.Formula):
                continue
            named: list[tuple[str, str, Position]] = []
            params = entity.fields.get("params", ())
            for p in params if isinstance(params, tuple) else ():
                if isinstance(p, str):
                    named.append((param_name(p, None), p, entity.position("params")))
                elif isinstance(p, ir.Column):
                    named.append((param_name(p.name, None), p.name, p.pos))
            for step in formula.steps:  # a step is a local of the function, beside its parameters
                named.append((param_name(step.name, None), step.name, step.pos))
            for node in ir.formula_nodes(formula):
                if isinstance(node, ir.Var) and node.attribute is not None and node.attribute in attributes:
                    abbr = attributes[node.attribute].fields.get("abbr")
                    python = param_name(node.attribute, abbr if isinstance(abbr, str) else None)
                    named.append((python, node.attribute, node.pos))
            called = {
                function_name(n.formula.id): n.formula.id
                for n in ir.formula_nodes(formula)
                if isinstance(n, ir.FormulaCall) and n.formula.id
            }
            seen: dict[str, str] = {}
            for python, written, pos in named:
                if python in called:
                    diagnostics.append(
                        error(
                            "E306",
                            f"'{written}' would be the parameter '{python}', which is also the formula "
                            f"'{called[python]}' this one calls",
                            pos,
                            f"name the parameter differently, such as '{written}_value'",
                        )
                    )
                elif seen.get(python, written) != written:
                    diagnostics.append(
                        error(
                            "E306",
                            f"'{seen[python]}' and '{written}' would both be the parameter '{python}'",
                            pos,
                            "name one of them differently",
                        )
                    )
                seen.setdefault(python, written)
    return diagnostics
