"""What checks clean builds a package that imports, lints and type-checks, whatever the ids and docs:
names that are keywords, builtins or the package's own are renamed by one rule (targets.python_name),
soft keywords stay as written, and docstrings hold any text exactly."""

from __future__ import annotations

import keyword
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from rulesdsl.compile.pipeline import Compilation
from rulesdsl.compile.python_names import (
    BODY_NAMES,
    CLASS_NAMES,
    HARD_KEYWORDS,
    PACKAGE_NAMES,
    function_name,
    identifier,
    kind_class,
    kind_module,
    param_name,
)
from rulesdsl.targets.build import render_all, write_output
from rulesdsl.targets.templating import doc_line

from .conftest import quality_command, run_python

HOSTILE_DOCS = ['ends in \\"', "ends in \\\\", "nul \\u0000 here", 'three \\"\\"\\" quotes', "tab\\tand \\u2028"]
HOSTILE_TEXTS = ['ends in "', "ends in \\", "nul \x00 here", 'three """ quotes', "tab\tand \u2028"]

# Each id here broke the generated package before names went through one rule.
NAMES = """
formula list { params: a  formula: a + 1 }
formula dict { params: a  formula: a + 2 }
formula max { params: min  formula: min + 3 }
formula class { params: a  formula: a + 4 }
formula tables { params: a  formula: a + 5 }
formula twice { params: a  formula: list(a) + dict(a) + class(a) }
kind none "Nones" { size: int? }
none nothing { size: 1 }
kind fraction "Fractions" { str: text?  int: int?  type: text?  match: int?  _: int? }
fraction half { str: "one half"  int: 2  type: "vulgar"  match: 3  _: 4 }
kind literal "Literals" { for: int? }
literal lit { for: 3 }
kind i "Letters" { x: int? }
i aye { x: 1 }
table tables { columns: x(int)
  1 -> 5
}
mechanic for "For" { style: total  die: 1d6 }
mechanic mechanics "Mechanics" { style: pool  die: 1d10 }
"""


def hostile_docs() -> str:
    fields = "  ".join(f'f{n}: int? "{doc}"' for n, doc in enumerate(HOSTILE_DOCS))
    return f'kind widget "Widgets \\\\" {{ {fields} }}\nwidget w {{ f0: 1 }}\n'


@pytest.fixture
def built(compile_rules: Callable[..., Compilation], tmp_path: Path) -> Callable[[str], Path]:
    def build(text: str) -> Path:
        result = compile_rules({"a.rules": text})
        assert result.ok, [f"{d.code} {d.message}" for d in result.diagnostics]
        write_output(tmp_path / "out", render_all(result.rulesets))
        return tmp_path / "out"

    return build


@pytest.mark.parametrize("text", [*HOSTILE_TEXTS, '"', "\\", '""""', "a\r\nb", "\ud800", "é \U000e0001 \x7f"])
def test_a_docstring_is_the_text_exactly_on_one_line(text: str) -> None:
    source = f'"""{doc_line(text)}"""'
    assert eval(source) == text
    assert "\n" not in source and "\r" not in source and "\x00" not in source


def test_hostile_field_docs_build_a_package_that_imports(built: Callable[[str], Path]) -> None:
    out = built(hostile_docs())
    ran = run_python("import demo\nprint(demo.WIDGETS['w'].f0)", out)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "1"
    widgets = (out / "demo" / "_widgets.py").read_text(encoding="utf-8")
    docs = [eval(line.strip()) for line in widgets.splitlines() if line.startswith('    """')]
    assert [d for d in docs if d in HOSTILE_TEXTS] == HOSTILE_TEXTS


def test_names_the_package_uses_are_renamed_and_it_imports(built: Callable[[str], Path]) -> None:
    out = built(NAMES)
    code = """
import demo
from demo import is_
assert demo.list_(a=1) == 2 and demo.dict_(a=1) == 3 and demo.max_(min_=1) == 4 and demo.class_(a=1) == 5
assert demo.twice(a=1) == 10
assert demo.FORMULAS["list"] is demo.list_ and demo.FORMULAS["class"](a=0) == 4
assert isinstance(demo.NONES["nothing"], demo.None_) and demo.NONES["nothing"].size == 1
half = demo.FRACTIONS["half"]
assert isinstance(half, demo.Fraction_) and (half.str_, half.int_, half.type) == ("one half", 2, "vulgar")
assert (half.match, half._) == (3, 4)
assert demo.LITERALS["lit"].for_ == 3 and is_.IS["aye"].x == 1
assert demo.TABLES["tables"].lookup(1).x == 5 and demo.tables_(a=0) == 5 and demo.tables.TABLES is demo.TABLES
assert demo.MECHANICS["for"].name == "For" and demo.MECHANICS["mechanics"].name == "Mechanics"
print("ok")
"""
    ran = run_python(code, out)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "ok"


@pytest.mark.parametrize("tool", ["ruff", "mypy"])
def test_renamed_names_are_lint_and_type_clean(built: Callable[[str], Path], tool: str) -> None:
    out = built(NAMES + hostile_docs())
    result = subprocess.run(quality_command(tool, "demo"), cwd=out, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_hard_keywords_are_the_interpreters_and_soft_keywords_stay() -> None:
    assert frozenset(keyword.kwlist) == HARD_KEYWORDS  # the same list on 3.11, 3.12 and 3.13
    for soft in ("type", "match", "case", "_"):
        assert identifier(soft) == function_name(soft) == param_name(soft, None) == soft
    assert (identifier("class"), identifier("str"), function_name("list"), kind_class("none")) == (
        "class_",
        "str_",
        "list_",
        "None_",
    )
    assert kind_module("i") == "is_" and param_name("max", None) == "max_"


# The rules language's own words cannot be ids; every other name Python or the package cares about can.
LANGUAGE_WORDS = {"and", "or", "not", "any", "all", "of", "in", "if", "then", "else", "is", "none", "true", "false"}
EVERY_NAME = sorted(
    {n.lower().strip("_") for n in (*HARD_KEYWORDS, *PACKAGE_NAMES, *CLASS_NAMES, *BODY_NAMES, *keyword.softkwlist)}
    - LANGUAGE_WORDS
    - {"", "id", "name"}
)

KINDS = (
    *("fraction", "literal", "any", "callable", "typed_dict", "i_d", "registry", "name", "tuple"),
    *("derive_attribute", "unmet_requirement"),  # their modules named like the package's top-level functions
)
# Every name a formula too, those of the kinds' modules included (`names` beside the kind `name`).
FORMULAS = EVERY_NAME


def every_name_everywhere() -> str:
    """A formula (with a parameter), a mechanic, a table and a column of every name, and a kind with a
    field of every name, and kinds named like the package's own classes."""
    fields = "  ".join(f"{n}: int?" for n in EVERY_NAME)
    text = f'kind gadget "Gadgets" {{ {fields} }}\ngadget g {{ {EVERY_NAME[0]}: 1 }}\n'
    for kind in KINDS:
        text += f'kind {kind} "K" {{ x: int? }}\n{kind} e_{kind} {{ x: 1 }}\n'
    columns, cells = ", ".join(EVERY_NAME), ", ".join("1" for _ in EVERY_NAME)
    for n in EVERY_NAME:
        text += f"formula {n} {{ params: {n}, p_{n}  formula: {n} + p_{n} }}\n"
        text += f'mechanic {n} "M" {{ style: total  die: 1d6 }}\n'
        text += f"table {n} {{ columns: {columns}\n  1 -> {cells}\n}}\n"
    return text


def test_every_reserved_name_in_every_place_builds_a_clean_package(built: Callable[[str], Path]) -> None:
    out = built(every_name_everywhere())
    params = {n: param_name(n, None) for n in FORMULAS}
    code = f"""
import demo, keyword
params = {params!r}
assert sorted(demo.FORMULAS) == sorted(params) and sorted(demo.MECHANICS) == sorted(demo.TABLES) == {EVERY_NAME!r}
for n, param in params.items():
    assert demo.FORMULAS[n](**{{param: 1, "p_" + n: 2}}) == 3, n
for n in {EVERY_NAME!r}:
    assert demo.TABLES[n].lookup(1) == demo.TABLES[n].rows[0].value and demo.MECHANICS[n].name == "M"
    # each is its typed name as written in its kind's module, whatever the package calls things itself
    typed = n + "_" if keyword.iskeyword(n) else n
    assert getattr(demo.tables, typed) is demo.TABLES[n] and getattr(demo.mechanics, typed) is demo.MECHANICS[n]
    assert getattr(demo.formulas, typed) is demo.FORMULAS[n], n
print("ok")
"""
    ran = run_python(code, out)
    assert ran.returncode == 0, ran.stderr
    for tool in ("ruff", "mypy"):
        result = subprocess.run(quality_command(tool, "demo"), cwd=out, capture_output=True, text=True, check=False)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


# Ids named like what the package has itself (its registries, modules, helpers, the runtime's methods).
OWN_NAMES = """
table names { columns: x(int)
  1 -> 5
}
table tables { roll: 1d6  columns: lookup(int), roll
  1-6 -> 2, "high"
}
table lookup { columns: names(int)
  1 -> 7
}
mechanic registry "Registry" { style: total  die: 1d6 }
mechanic mechanics "Mechanics" { style: pool  die: 1d10 }
formula names { params: a  formula: a + 1 }
formula formulas { params: a  formula: a + 2 }
formula derive_attributes { params: a  formula: a + 3 }
kind name "Names" { x: int? }
name lookup { x: 1 }
name burn { x: 2 }
name class { x: 3 }
"""

TYPED_CONSUMER = """
import random

import demo

row = demo.tables.names.lookup(1)
x: int = row.x
chained: str = demo.tables.tables.roll(random.Random(1)).row.roll
looked: int = demo.tables.lookup.lookup(1).names
one: int = demo.formulas.names(a=0)
two: int = demo.formulas.formulas(a=0)
three: int = demo.formulas.derive_attributes(a=0)
total: int = demo.mechanics.registry.total([3])
pool = demo.mechanics.mechanics.judge([10, 1], 6).successes
named: int | None = demo.names.lookup.x
burnt: int | None = demo.names.burn.x
keyword: int | None = demo.names.class_.x
entity: demo.names.Name = demo.names.NAMES_["lookup"]
assert (x, looked, one, two, three, named, burnt, keyword, pool) == (5, 7, 1, 2, 3, 1, 2, 3, 1)
assert chained == "high" and 1 <= total <= 6 + 3 and entity is demo.names.lookup
assert demo.TABLES["names"] is demo.tables.names and demo.FORMULAS["names"] is demo.formulas.names
# at the top level, beside the module `names`, the formula is renamed by the one rule
assert demo.names_ is demo.formulas.names and demo.formulas_(a=0) == 2 and demo.derive_attributes_(a=0) == 3
print("ok")
"""


def test_ids_named_like_the_packages_own_names_are_typed_names_as_written(
    built: Callable[[str], Path], tmp_path: Path
) -> None:
    """No id is refused or renamed for a name the package uses itself: `names`, `tables`, `lookup`,
    `formulas`, `derive_attributes`, a formula `names` beside the kind `name` (E305 before) are each their
    kind module's typed name, and mypy --strict follows them (a misspelt column is an error)."""
    out = built(OWN_NAMES)
    ran = run_python(TYPED_CONSUMER, out)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "ok"

    def mypy(code: str) -> subprocess.CompletedProcess[str]:
        (out / "consumer.py").write_text(code, encoding="utf-8")
        command = quality_command("mypy", "consumer.py")
        return subprocess.run(command, cwd=out, capture_output=True, text=True, check=False)

    checked = mypy(TYPED_CONSUMER)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    misspelt = TYPED_CONSUMER.replace("row.x", "row.y").replace(".roll(random", ".rol(random")
    checked = mypy(misspelt.replace("demo.names.burn.x", "demo.names.brun.x"))
    assert checked.returncode == 1
    assert '"NamesRow" has no attribute "y"' in checked.stdout
    assert 'has no attribute "rol"' in checked.stdout
    assert 'Module has no attribute "brun"' in checked.stdout  # an entity's name too (read on first access)
