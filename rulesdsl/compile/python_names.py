"""The Python target: what a generated package can evaluate, and the Python names it gives things.

Both the semantic checks (which report, at its position, anything the target cannot do) and the Python
emitter (which relies on it) read this module, so the two cannot drift apart.
"""

from __future__ import annotations

from rulesdsl.compile.kinds import class_name, plural

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
# The package's own modules: a declared kind's module must not be one of them. Each kind has a public
# namespace module (`tables`) and a private one that defines it (`_tables`).
CORE_MODULES = ("attributes", "formulas", "mechanics", "tables")
MODULES = frozenset(
    {*CORE_MODULES, *(f"_{m}" for m in CORE_MODULES), "burning", "_runtime", "_manifest", "__main__", "__init__"}
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


def function_name(entity_id: str, modules: frozenset[str] = frozenset()) -> str:
    """What a formula or derived attribute is called in the package's top level and its private modules;
    `modules`: the kinds' namespace modules beside it there (a formula `spells` beside the kind `spell` is
    `spells_`). Its typed name, as written, is `formulas.<member_name>`."""
    return python_name(entity_id, PACKAGE_NAMES | modules)


def member_name(entity_id: str) -> str:
    """An entity's typed name in its kind's namespace module (`tables.humanoid_hit_location`): the id as
    written, a hard keyword aside (`class_`). Nothing else there is named like an id (ids are lower case
    and never begin or end with '_'; the namespace's other names are upper case, classes, or private), so
    no id is renamed or refused for a name the package uses itself."""
    return python_name(entity_id, frozenset())


def constant_name(table_id: str) -> str:
    """A table's or mechanic's constant (`tables` -> `TABLES_`, not the package's TABLES)."""
    return python_name(table_id.upper(), PACKAGE_NAMES)


def row_class(table_id: str) -> str:
    return python_name(class_name(table_id) + "Row", PACKAGE_NAMES)


def kind_class(kind: str) -> str:
    """A kind's dataclass (`none` -> `None_`, `fraction` -> `Fraction_`)."""
    return python_name(class_name(kind), PACKAGE_NAMES)


# The package's top-level functions and modules a kind's namespace module stands beside (formulas give way
# to the modules; these do not: `derive_attribute` is the kind of the module `derive_attributes_`).
TOP_LEVEL = frozenset({"runtime", "derive_attributes", "burn", "requirement_met", "unmet_requirements"})


def kind_module(kind: str) -> str:
    """A kind's public namespace module: its entities by typed name, its registry and classes."""
    return python_name(plural(kind), TOP_LEVEL)


def private_module(module: str) -> str:
    """The private module that defines what a namespace module (`tables`, `lifepaths`) shows."""
    return "_" + module.rstrip("_")


def registry_name(kind: str) -> str:
    return python_name(plural(kind).upper(), PACKAGE_NAMES)


def param_name(name: str, abbr: str | None) -> str:
    """Attributes are passed by their abbreviation as the rules write it (`AGL=6`), parameters by name."""
    return python_name(abbr or name, BODY_NAMES)
