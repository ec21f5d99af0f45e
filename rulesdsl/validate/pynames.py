"""Python names: every identifier the generated package will define is checked here, at the entity that
gives it, against keywords, builtins, the package's own names and each other (targets.py says how
each is named). A collision is an error, never a package that fails on import.
"""

from __future__ import annotations

import keyword
from collections.abc import Iterable, Mapping

from .. import ir
from ..diagnostics import Diagnostic, error
from ..kinds import CORE_KINDS, Kind, class_name
from ..model import Position
from ..targets import (
    MODULES,
    RESERVED,
    constant_name,
    function_name,
    identifier,
    kind_module,
    param_name,
    registry_name,
    row_class,
)

Entities = Mapping[str, Mapping[str, ir.Entity]]


def _unique(
    named: Iterable[tuple[str, str, Position]], what: str, code: str, reserved: frozenset[str]
) -> list[Diagnostic]:
    """(python name, what the user wrote, where): each python name once, none reserved."""
    diagnostics = []
    seen: dict[str, str] = {}
    for python, written, pos in named:
        if python in reserved:
            diagnostics.append(
                error(
                    code,
                    f"the {what} '{written}' would be '{python}' in Python, a name the package already uses",
                    pos,
                    "give it another id",
                )
            )
        elif python in seen and seen[python] != written:
            diagnostics.append(
                error(
                    code,
                    f"the {what}s '{seen[python]}' and '{written}' would both be '{python}' in Python",
                    pos,
                    "give one of them another id",
                )
            )
        seen.setdefault(python, written)
    return diagnostics


def check_python_names(entities: Entities, kinds: Mapping[str, Kind]) -> list[Diagnostic]:
    diagnostics: list[Diagnostic] = []
    used_kinds = [k for name, k in sorted(kinds.items()) if not k.builtin or entities.get(name)]
    for kind in used_kinds:
        pos = kind.pos or Position("", 1, 1, 1, 2)
        if kind.name in CORE_KINDS:
            continue  # the package's own modules are theirs
        module = kind_module(kind.name)
        if module in MODULES or keyword.iskeyword(module):
            what = "a Python keyword" if keyword.iskeyword(module) else "one of the package's own modules"
            diagnostics.append(
                error(
                    "E305", f"the kind '{kind.name}' would be the module '{module}', {what}", pos, "choose another name"
                )
            )
        diagnostics += _unique(
            ((identifier(f), f, (kind.fields[f].pos or pos)) for f in kind.fields), "field", "E305", frozenset()
        )
    diagnostics += _unique(
        ((class_name(k.name), k.name, k.pos or Position("", 1, 1, 1, 2)) for k in used_kinds),
        "kind",
        "E305",
        frozenset(),
    )
    diagnostics += _unique(
        ((registry_name(k.name), k.name, k.pos or Position("", 1, 1, 1, 2)) for k in used_kinds),
        "kind",
        "E305",
        frozenset(RESERVED - {registry_name(n) for n in kinds}),
    )
    functions = [
        (function_name(e.id), e.id, e.id_pos)
        for kind in ("formula", "attribute")
        for e in entities.get(kind, {}).values()
        if isinstance(e.fields.get("formula"), ir.Formula)
    ]
    diagnostics += _unique(functions, "formula", "E305", RESERVED)
    tables = list(entities.get("table", {}).values())
    diagnostics += _unique(((constant_name(e.id), e.id, e.id_pos) for e in tables), "table", "E305", RESERVED)
    diagnostics += _unique(((row_class(e.id), e.id, e.id_pos) for e in tables), "table", "E305", RESERVED)
    for table in tables:
        columns = table.fields.get("columns", ())
        if isinstance(columns, tuple):
            named = ((identifier(c.name), c.name, c.pos) for c in columns if isinstance(c, ir.Column))
            diagnostics += _unique(named, "column", "E316", frozenset())
    diagnostics += _parameters(entities)
    return diagnostics


def _parameters(entities: Entities) -> list[Diagnostic]:
    """The parameters of each generated function: distinct, and not names its body needs."""
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
            for node in ir.expr_nodes(formula.expr):
                if isinstance(node, ir.Var) and node.attribute is not None and node.attribute in attributes:
                    abbr = attributes[node.attribute].fields.get("abbr")
                    python = param_name(node.attribute, abbr if isinstance(abbr, str) else None)
                    named.append((python, node.attribute, node.pos))
            called = {
                function_name(n.formula.id)
                for n in ir.expr_nodes(formula.expr)
                if isinstance(n, ir.FormulaCall) and n.formula.id
            }
            seen: dict[str, str] = {}
            for python, written, pos in named:
                if python in RESERVED or python in called:
                    diagnostics.append(
                        error("E306", f"'{written}' would be the parameter '{python}', a name the formula needs", pos)
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
