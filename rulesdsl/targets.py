"""The Python target: what a generated package can evaluate, and the Python names it gives things.

Both the semantic checks (which report, at its position, anything the target cannot do) and the Python
emitter (which relies on it) read this module, so the two cannot drift apart.
"""

from __future__ import annotations

import keyword

from .kinds import class_name, plural

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
