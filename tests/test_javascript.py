"""rules.js against the Python package: the same rulesets, the same questions, the same JSON.

Every ruleset of rules/, of tests/examples/, of the complete examples of docs/language.md, a ruleset of
dice algebra, tables and formulas (ALGEBRA), a lifepath ruleset whose common traits are lifepath traits too
(KIN) and random rulesets of tests/generate.py is built both ways;
Node answers through tests/node/differential.mjs and the Python package answers here, Hypothesis choosing
the formulas' arguments and the lifepath paths. Every table's chances (at every modifier and given key),
every dice field's distribution, every formula and formula cell on random arguments, every mechanic's odds,
the derived attributes, and at least 1,000 random burns (legal and illegal) with their requirement
verdicts per lifepath ruleset (100 for the small ones) must give identical JSON (or both an error). The
burns are counted to exercise the age-dependent rules: every condition on the age, the age on entry and the
number of lifepaths met and broken, ages on both ends of a stat pools row and past the table, long paths
and lifepaths taken a third time or more.
"""

from __future__ import annotations

import importlib
import itertools
import json
import shutil
import subprocess
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rulesdsl.compile import ir
from rulesdsl.compile.checks.formulas import columns
from rulesdsl.compile.kinds import CORE_KINDS, record_fields
from rulesdsl.compile.pipeline import CompiledRuleset, compile_paths
from rulesdsl.compile.python_names import identifier, param_name, registry_name
from rulesdsl.language import fieldtypes as t
from rulesdsl.runtime.core import exact, slug, to_json
from rulesdsl.targets.javascript import module as javascript
from rulesdsl.targets.python import package as python
from tests.conftest import ROOT, write_ruleset
from tests.generate import seeded
from tests.test_language_docs import CHECKED

NODE = shutil.which("node")
NODE_DIR = ROOT / "tests" / "node"
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed (apt install nodejs): rules.js is not run")

# What rules.js does not do yet, by ruleset: [kind, id, why]. These entities throw NotSupported, and the
# comparisons below skip exactly them.
NOT_SUPPORTED: dict[str, list[list[str]]] = {}

BURNS = 1000  # random paths per lifepath ruleset
GENERATED = 8  # rulesets of tests/generate.py compared too (those of them that check clean)


def examples(count: int) -> settings:
    """Hypothesis settings: `count` examples, the same ones every run."""
    return settings(
        max_examples=count, database=None, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck)
    )


ALGEBRA = """
kind monster "Monster" { roll: dice  hits: list of dice?  damage: formula of level? }
monster times { roll: 3d6 * 5 }
monster group { roll: (2d6 + 6) * 5  hits: 1d4, 2d20kl1 }
monster half { roll: 1d6 / 2 }
monster spread { roll: 1d6 - 1d6 }
monster keep { roll: 4d6kh3  damage: level * 2 + 1 }
monster drop { roll: 4d6dl1 }
monster top { roll: 3d6kh1 }
monster boom { roll: 1d6! }
monster booms { roll: 2d4! + 1 }
monster calm { roll: 0 }
monster floor { roll: max(1, 1d8 - 3) }
monster ceiling { roll: min(5, 1d6! + 1) }
monster mixed { roll: 1d6 + 1d8 + 2 }
formula hit "Hit" { params: t  formula: max(1, 1d8 + t) }
formula big "Big" { params: n  formula: (2d6 + n) * 5 - 1d6 + 1d6 / 2 }
formula best "Best" { params: n  formula: (n)d6kh3 }
formula worst "Worst" { params: n  formula: (n + 1)d6dh1 }
formula burst "Burst" { params: n  formula: (n)d6! }
formula pool "Pool" { params: n, sides  formula: dice(n, sides) + 2 }
formula ratio "Ratio" { params: a, b(number)  formula: a / b + 1 / 3 }
formula rounding "Rounding" { params: a  formula: round(a / 4) + ceil(a / 3) - floor(a / 5) }
formula logic "Logic" { params: a, b, on(bool)  formula: (a > b and on) or not (a = b) }
formula choose "Choose" { params: a, b  formula: if(a >= b, abs(a - b), -min(a, b, 3)) }
formula stepped "Stepped" {
  params: raw, sp, resistant(bool)
  let through = max(0, raw - sp)
  let taken = if(resistant, floor(through / 2), through)
  formula: taken * 3 / 2
}
formula called "Called" { params: x  formula: stepped(x, 2, yes) + ratio(x, 2) }
table reaction "Reaction" {
  roll: 2d6 + 0..2
  clamp: yes
  columns: mood
  2-5   -> hostile
  6-8   -> wary
  9-12  -> friendly
}
table parity "Parity" {
  roll: 1d10
  params: level
  columns: side, bonus(formula)
  odd  -> left, level + 1
  even -> right, level * 2
}
table tens "Tens and units" {
  roll: d66
  columns: what
  11-36 -> low
  41-66 -> high
}
table sparse "Sparse" {
  roll: 2d6
  columns: what(int)
  2-4 -> 1
  11-12 -> 3
  otherwise -> 0
}
table treasure "Treasure" {
  roll: 1d6
  columns: result, then(rolls)
  1-5 -> "copper bits", none
  6   -> "roll twice more", 2 x treasure
}
table origin "Origin" {
  roll: 1d4
  columns: place, next(ref table)
  1-2 -> "a village", treasure
  3-4 -> "a city", reaction
}
table pairs "Pairs" {
  keys: a(int), b(int)
  roll: 1d4, 1d6
  columns: what
  1-2, 1-3 -> a
  1-2, 4-6 -> b
  3-4, 1-6 -> c
}
table lookup_only "Lookup" {
  columns: bonus(int)
  0-4 -> 5
  5-20 -> 2
}
"""


# Common traits that are also a lifepath's traits, or that a requirement names: the character has them
# from birth (they are in neither rulesets of rules/, so rules.js is held to it here)
KIN = """
stock kin "Kin" { common_traits: Stubborn, Tough  stat_pools: kin_pools }
setting hall "Hall" { stock: kin }
lifepath "Born Kin" { born: yes  time: 10 yrs  resources: 2  leads: hall  traits: 1 pt: Stubborn, Loud }
lifepath "Guard" { time: 5 yrs  resources: 3  traits: 2 pts: Tough  requires: trait Tough }
lifepath "Herald" { time: 4 yrs  resources: 3  traits: 1 pt: Loud, Wise  requires: trait Loud }
lifepath "Elder" { time: 20 yrs  resources: 1  traits: 1 pt: Wise  requires: age > 30 }
trait Stubborn { type: character }
trait Tough { type: die  cost: 2 }
trait Loud { type: character }
trait Wise { type: call_on }
table kin_pools "Kin pools" {
  columns: mental(int), physical(int)
  1-20  -> 5, 10
  21-40 -> 6, 11
}
"""


@dataclass
class Built:
    ruleset: CompiledRuleset
    package: ModuleType
    script: Path

    def json_value(self, value: object) -> str:
        """The package's own `json_value` (its runtime's Dice are its own class)."""
        core = importlib.import_module(f"{self.package.__name__}._runtime.core")
        text: str = core.json_value(value)
        return text


def _built(rulesets: tuple[CompiledRuleset, ...], folder: Path, prefix: str) -> list[Built]:
    folder.mkdir(parents=True, exist_ok=True)
    result = []
    for ruleset in rulesets:
        name = f"{prefix}_{ruleset.id}"
        for path, text in python.render(ruleset).items():
            target = folder / name / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        script = folder / f"{name}.rules.js"
        script.write_text(javascript.render(ruleset), encoding="utf-8")
        result.append(Built(ruleset, importlib.import_module(name), script))
    return result


def _compiled(*paths: Path) -> tuple[CompiledRuleset, ...]:
    compilation = compile_paths(list(paths))
    assert compilation.ok, [d.message for d in compilation.diagnostics if d.severity == "error"]
    return compilation.rulesets


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Built]]:
    out = tmp_path_factory.mktemp("rulesjs")
    sys.path.insert(0, str(out))
    previous, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        built = _built(_compiled(ROOT / "rules"), out, "jsrules")
        built += _built(_compiled(*sorted((ROOT / "tests" / "examples").iterdir())), out, "jsexamples")
        source = write_ruleset(out / "src" / "algebra", {"algebra.rules": ALGEBRA})
        built += _built(_compiled(source.parent), out, "jsalgebra")
        source = write_ruleset(out / "kin" / "demo", {"kin.rules": KIN})
        built += _built(_compiled(source.parent), out, "jskin")
        for example in CHECKED:
            source = write_ruleset(out / f"doc{example.line}" / "demo", {"example.rules": example.text})
            built += _built(_compiled(source.parent), out, f"jsdoc{example.line}")
        for seed in range(GENERATED):  # random rulesets of every field type, roll, key and formula form
            generated, _ = seeded(seed, mutate_one_in=1_000_000)
            folder = out / f"gen{seed}"
            for name, text in generated.files(f"_{seed}").items():
                (folder / name).parent.mkdir(parents=True, exist_ok=True)
                (folder / name).write_text(text, encoding="utf-8")
            compilation = compile_paths([folder])
            if compilation.ok:
                built += _built(compilation.rulesets, out, "jsgen")
        assert len([b for b in built if b.package.__name__.startswith("jsgen")]) >= GENERATED // 2
        yield built
    finally:
        sys.dont_write_bytecode = previous
        sys.path.remove(str(out))


def ask(built: Built, questions: list[dict[str, Any]], tmp_path: Path) -> list[str]:
    """rules.js's answer to each question (JSON text, or `error: Name`)."""
    asked = tmp_path / f"{built.ruleset.id}.questions.json"
    asked.write_text(json.dumps(questions), encoding="utf-8")
    assert NODE is not None
    ran = subprocess.run(
        [NODE, str(NODE_DIR / "differential.mjs"), str(built.script), str(asked)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    answers = ran.stdout.splitlines()
    assert len(answers) == len(questions), ran.stdout[-2000:]
    return answers


def python_answer(compute: Callable[[], str]) -> str:
    try:
        return compute()
    except Exception as exc:  # any error: rules.js must raise one too
        return f"error: {type(exc).__name__}"


def compare(built: Built, cases: list[tuple[dict[str, Any], str]], tmp_path: Path) -> int:
    """Asks rules.js every question and asserts its answers are the Python package's; how many agreed. It
    is asked first what it does not support: exactly NOT_SUPPORTED's list (what the comparisons skip)."""
    unsupported, *answers = ask(built, [{"op": "unsupported"}, *(q for q, _ in cases)], tmp_path)
    assert json.loads(unsupported) == NOT_SUPPORTED.get(built.ruleset.id, []), built.ruleset.id
    wrong = [
        f"{q}\n  python: {expected}\n  js:     {got}"
        for (q, expected), got in zip(cases, answers, strict=True)
        if (expected != got) and not (expected.startswith("error") and got.startswith("error"))
    ]
    assert not wrong, f"{built.ruleset.id}: {len(wrong)} of {len(cases)} differ:\n" + "\n".join(wrong[:10])
    return len(cases)


def skipped(built: Built) -> set[tuple[str, str]]:
    return {(kind, id_) for kind, id_, _ in NOT_SUPPORTED.get(built.ruleset.id, [])}


# ---------------------------------------------------------------- the questions


def _given_values(table: Any) -> list[dict[str, int | str]]:
    """Every combination of the keys a table's roll is given, as its rows name them."""
    names = table.dice.given
    values = [
        sorted({(row.keys[i].name if row.keys[i].name is not None else row.keys[i].low) for row in table.rows}, key=str)
        for i in range(len(names))
    ]
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*values)]


def test_every_tables_chances_are_the_same_and_nothing_unsupported(everything: list[Built], tmp_path: Path) -> None:
    asked = 0
    for built in everything:
        cases = []
        for table_id, table in built.package.TABLES.items():
            if table.dice is None or ("table", table_id) in skipped(built):
                continue
            for modifier in range(table.dice.modifier_low - 1, table.dice.modifier_high + 2):
                for given_keys in _given_values(table):
                    question = {"op": "chances", "table": table_id, "modifier": modifier, "given": given_keys}
                    expected = python_answer(lambda t=table, m=modifier, g=given_keys: t.chances_json(m, **g))
                    cases.append((question, expected))
        asked += compare(built, cases, tmp_path)  # every ruleset: each is asked what it does not support
    assert asked > 60


def _dice_in(
    field_type: t.FieldType, value: object, path: list[str | int]
) -> Iterator[tuple[list[str | int], ir.Dice]]:
    """Every dice value inside a field's value, with the keys that reach it in rules.js."""
    match field_type, value:
        case t.DiceType(), ir.Dice():
            yield path, value
        case t.ListType(item), tuple():
            for index, element in enumerate(value):
                yield from _dice_in(item, element, [*path, index])
        case t.MapType(item), ir.MapValue():
            for key, element in value.entries:
                yield from _dice_in(item, element, [*path, ir.map_key(key)])
        case t.RecordType() as record, ir.Record():
            decls = {d.name: d for d in record_fields(record)}
            for name, element in value.fields:
                yield from _dice_in(decls[name].type, element, [*path, name])
        case _:
            pass


def _all_dice(ruleset: CompiledRuleset) -> Iterator[tuple[list[str | int], ir.Dice]]:
    for kind_name, entities in ruleset.entities.items():
        kind = ruleset.kinds[kind_name]
        registry = "ATTRIBUTES" if kind_name == "attribute" else registry_name(kind_name)
        if kind_name in CORE_KINDS and kind_name != "attribute":
            continue
        for entity_id, entity in entities.items():
            for name, value in entity.fields.items():
                yield from _dice_in(kind.fields[name].type, value, [registry, entity_id, name])
    for table_id, entity in ruleset.entities.get("table", {}).items():
        roll = entity.fields.get("roll")
        if isinstance(roll, ir.Roll):
            for index, dice in enumerate(roll.dice):
                yield ["TABLES", table_id, "dice", "dice", index], dice
        cols = [c for c in entity.fields.get("columns", ()) if isinstance(c, ir.Column)]  # type: ignore[union-attr]
        keyed = [r for r in entity.rows if not r.otherwise]
        for row in entity.rows:
            where: list[str | int] = ["otherwise"] if row.otherwise else ["rows", keyed.index(row)]
            for column, cell in zip(cols, row.cells, strict=True):
                yield from _dice_in(column.type, cell, ["TABLES", table_id, *where, "value", column.name])


def test_every_dice_fields_distribution_is_the_same(everything: list[Built], tmp_path: Path) -> None:
    asked = 0
    for built in everything:
        cases = []
        for path, dice in _all_dice(built.ruleset):
            if (str(path[0]), str(path[1])) in skipped(built):
                continue
            runtime = ir.runtime_dice(dice)
            up_to = None if runtime.maximum is not None else runtime.minimum + 40
            expected = python_answer(lambda r=runtime, u=up_to: r.distribution_json(u))
            cases.append(({"op": "distribution", "path": path, "up_to": up_to}, expected))
        asked += compare(built, cases, tmp_path) if cases else 0
    assert asked > 50


def _argument(value: object) -> object:
    return {"fraction": f"{value.numerator}/{value.denominator}"} if isinstance(value, Fraction) else value


NUMBERS = st.integers(-30, 60)
FRACTIONS = st.fractions(min_value=-20, max_value=20, max_denominator=12)


def _strategy(field_type: t.FieldType, ruleset: CompiledRuleset) -> st.SearchStrategy[object]:
    match field_type:
        case t.BoolType():
            return st.booleans()
        case t.NumberType():
            return st.one_of(NUMBERS, FRACTIONS)
        case t.RefType(kind):
            return st.sampled_from([*sorted(ruleset.entities.get(kind, {})), "no_such_entity"])
        case _:
            return NUMBERS


Case = tuple[dict[str, Any], str]  # a question for rules.js, and the Python package's answer


def collect(strategy: st.SearchStrategy[Any], count: int, answer: Callable[[Any], list[Case]]) -> list[Case]:
    """The cases `answer` makes of `count` examples Hypothesis draws from `strategy` (the Python side
    computes as they are drawn; rules.js is asked them all at once afterwards)."""
    cases: list[Case] = []

    @examples(count)
    @given(strategy)
    def draw(drawn: Any) -> None:
        cases.extend(answer(drawn))

    draw()
    return cases


def _formula_case(built: Built, formula_id: str, function: Any, args: dict[str, object]) -> list[Case]:
    expected = python_answer(lambda: built.json_value(function(**args)))
    return [({"op": "formula", "id": formula_id, "args": {k: _argument(v) for k, v in args.items()}}, expected)]


def _formula_cases(built: Built, count: int) -> list[Case]:
    """Each named formula on `count` argument sets Hypothesis draws."""
    cases: list[Case] = []
    for formula_id, entity in built.ruleset.entities.get("formula", {}).items():
        if ("formula", formula_id) in skipped(built):
            continue
        function = built.package.FORMULAS[formula_id]
        typed = {param_name(c.name, None): _strategy(c.type, built.ruleset) for c in columns(entity, "params")}
        names = list(function.__code__.co_varnames[: function.__code__.co_kwonlyargcount])
        strategies = {name: typed.get(name, st.integers(-5, 20)) for name in names}
        cases += collect(st.fixed_dictionaries(strategies), count, partial(_formula_case, built, formula_id, function))
    return cases


def _cell_case(built: Built, path: list[str | int], formula: Any, values: dict[str, int]) -> list[Case]:
    expected = python_answer(lambda: built.json_value(formula.evaluate(**values)))
    return [({"op": "cell", "path": path, "args": values}, expected)]


def _cell_cases(built: Built, count: int) -> list[Case]:
    """Every formula kept as data in a table cell or an entity's field, on random values of its names."""
    cases: list[Case] = []
    places: list[tuple[list[str | int], Any]] = []
    for table_id, table in built.package.TABLES.items():
        for index, row in enumerate(table.rows):
            for name in vars(type(row.value)).get("__dataclass_fields__", {}):
                places.append((["TABLES", table_id, "rows", index, "value", name], getattr(row.value, name)))
    for kind_name, entities in built.ruleset.entities.items():
        if kind_name in CORE_KINDS:
            continue
        registry = getattr(built.package, registry_name(kind_name))
        for entity_id in entities:
            for name, decl in built.ruleset.kinds[kind_name].fields.items():
                if isinstance(decl.type, t.FormulaType):
                    value = getattr(registry[entity_id], identifier(name))
                    places.append(([registry_name(kind_name), entity_id, name], value))
    for path, formula in places:
        if hasattr(formula, "evaluate") and hasattr(formula, "names"):
            values = st.fixed_dictionaries({n: st.integers(-10, 30) for n in formula.names})
            cases += collect(values, count, partial(_cell_case, built, path, formula))
    return cases


def test_every_formula_gives_the_same_value(everything: list[Built], tmp_path: Path) -> None:
    asked = 0
    for built in everything:
        cases = _formula_cases(built, 60) + _cell_cases(built, 20)
        asked += compare(built, cases, tmp_path) if cases else 0
    assert asked > 2000


def _mechanic_questions(mechanic: Any) -> Iterator[tuple[str, str, list[int]]]:
    """Each mechanic's odds to compare: Python's method, rules.js's, and the arguments."""
    name = type(mechanic).__name__
    if name in ("HighestMechanic",):
        yield from (("chances", "chances", [dice]) for dice in range(0 if mechanic.zero_dice else 1, 6))
    elif name == "UnderMechanic":
        yield from (("chances", "chances", [target]) for target in range(-1, 102, 7))
        yield from (("chance", "chance", [target]) for target in range(0, 20, 3))
    elif name == "PoolMechanic":
        yield from (("success_chances", "successChances", [d, tn]) for d in (1, 3, 5) for tn in (2, 6, 10, 13, 25))
    elif name == "CheckMechanic":
        yield from (("chance", "chance", [m, tn]) for m in (-2, 0, 3) for tn in (2, 7, 12))
    elif name == "ContestMechanic":
        yield from (("chance", "chance", [a, b]) for a in (0, 2) for b in (0, 3))


def _odds_json(value: Any) -> str:
    if isinstance(value, dict):
        return to_json([[k, exact(v)] for k, v in value.items()])
    return to_json(exact(value))


def test_every_mechanics_odds_are_the_same(everything: list[Built], tmp_path: Path) -> None:
    asked = 0
    for built in everything:
        cases = []
        for mechanic_id, mechanic in built.package.MECHANICS.items():
            for method, js_method, args in _mechanic_questions(mechanic):
                expected = python_answer(lambda m=mechanic, f=method, a=args: _odds_json(getattr(m, f)(*a)))
                cases.append(({"op": "mechanic", "id": mechanic_id, "method": js_method, "args": args}, expected))
        asked += compare(built, cases, tmp_path) if cases else 0
    assert asked > 20


def _derive_case(built: Built, values: dict[str, int]) -> list[Case]:
    def derive() -> str:
        derived = built.package.derive_attributes(values)
        return to_json({k: json.loads(built.json_value(v)) for k, v in derived.items()})

    return [({"op": "derive", "values": values}, python_answer(derive))]


def test_derived_attributes_are_the_same(everything: list[Built], tmp_path: Path) -> None:
    asked = 0
    for built in everything:
        attributes = built.ruleset.entities.get("attribute", {})
        if any("formula" in e.fields for e in attributes.values()):
            base = st.fixed_dictionaries(
                {a: st.integers(0, 12) for a, e in attributes.items() if "formula" not in e.fields}
            )
            asked += compare(built, collect(base, 50, partial(_derive_case, built)), tmp_path)
    assert asked >= 50


AGE_SUBJECTS = ("age", "age_at_entry", "lifepaths")  # the facts a path's years and length decide
SHAPES = ("wander", "aged", "long")  # how a path is drawn: see paths()


def _age_conditions(requirement: Any) -> Iterator[Any]:
    """The conditions on a path's years or length inside a requirement (the package's runtime nodes)."""
    if requirement is None:
        return
    if type(requirement).__name__ == "Condition" and requirement.subject in AGE_SUBJECTS:
        yield requirement
    for inner in (*getattr(requirement, "items", ()), getattr(requirement, "item", None)):
        yield from _age_conditions(inner)


def _aged(lifepath: Any) -> bool:
    return any(any(_age_conditions(r)) for r in (lifepath.requires, lifepath.restrictions))


def _either_count(built: Built, path: list[str]) -> int:
    """How many `+1 M/P` or `-1 M/P` a path earns (burn asks a choice for each): the runtime's own repeat
    factors say which times earn its stat."""
    runtime = importlib.import_module(f"{built.package.__name__}._runtime.lifepaths")
    lifepaths = built.package.LIFEPATHS
    return sum(
        abs(lifepaths[lp].stat.either)
        for i, lp in enumerate(path)
        if lifepaths[lp].stat is not None
        and runtime._repeat_factors(built.package.TABLES, path[: i + 1].count(lp)).get("stat", 1)
    )


@st.composite
def paths(draw: st.DrawFn, built: Built) -> dict[str, Any]:
    """A path of lifepaths that mostly follows the rules (a born lifepath, then ones its settings lead to)
    and often does not, with options: +1 M/P choices, a gender, traits held, picks among alternatives.

    Its shape is one of SHAPES: `wander` follows leads for up to seven lifepaths; `aged` ends on a lifepath
    whose requirement names the age, the age on entering it or the number of lifepaths, after up to a dozen
    lifepaths of its setting that require nothing (so the condition is met on some paths, broken on others,
    and the path is often legal); `long` takes 8 to 17 lifepaths, repeating some (the 3rd and 4th+ rows of
    `lifepath_repeats`), for ages across, and past, the stocks' stat pool tables."""
    lifepaths = built.package.LIFEPATHS
    ids = sorted(lifepaths)
    born = [i for i in ids if lifepaths[i].born] or ids
    by_setting: dict[str, list[str]] = {}
    calm: dict[str, list[str]] = {}  # setting -> its lifepaths that are not born and require nothing
    for i in ids:
        lp = lifepaths[i]
        by_setting.setdefault(lp.setting, []).append(i)
        if not lp.born and lp.requires is None and lp.restrictions is None:
            calm.setdefault(lp.setting, []).append(i)
    aged = [i for i in ids if _aged(lifepaths[i])]
    shape = draw(st.sampled_from(SHAPES if aged else SHAPES[::2]))
    if shape == "wander":
        path = [draw(st.sampled_from(born if draw(st.integers(0, 9)) else ids))]
        for _ in range(draw(st.integers(0, 6))):
            last = lifepaths[path[-1]]
            reachable = [i for s in (last.setting, *last.leads) for i in by_setting.get(s, [])] or ids
            path.append(draw(st.sampled_from(reachable if draw(st.integers(0, 7)) else ids)))
    else:
        target = draw(st.sampled_from(aged)) if shape == "aged" else None
        home = lifepaths[target].setting if target is not None else None
        homeborn = [i for i in born if lifepaths[i].setting == home]
        path = [draw(st.sampled_from(homeborn or born))]
        low, high = (0, 12) if shape == "aged" else (7, 16)
        for _ in range(draw(st.integers(low, high))):
            last = lifepaths[path[-1]]
            settings_ = [home] if home in calm else [last.setting, *last.leads]
            nearby = [i for s in settings_ for i in calm.get(s, [])]
            again = not last.born and draw(st.integers(0, 3)) == 0
            path.append(path[-1] if again or not nearby else draw(st.sampled_from(nearby)))
        path += [target] if target is not None else []
    options: dict[str, Any] = {}
    if shape != "wander" and draw(st.integers(0, 3)):  # as many +1 M/P choices as the path has, mostly
        count = _either_count(built, path)
        options["either"] = draw(st.lists(st.sampled_from(["M", "P"]), min_size=count, max_size=count))
    elif draw(st.booleans()):
        options["either"] = draw(st.lists(st.sampled_from(["M", "P", "m", "x"]), max_size=3))
    if draw(st.integers(0, 3)) == 0:
        options["gender"] = draw(st.sampled_from(["female", "male", "Female"]))
    alternatives = sorted(
        {
            o
            for i in path
            for c in (lifepaths[i].skills, lifepaths[i].traits)
            if c
            for e in c.options
            if len(e) > 1
            for o in e
        }
    )
    if alternatives and draw(st.booleans()):
        options["picks"] = draw(st.lists(st.sampled_from(alternatives), max_size=2))
    if draw(st.integers(0, 4)) == 0:
        traits = sorted(getattr(built.package, "TRAITS", {}))
        options["traits"] = draw(st.lists(st.sampled_from(traits), max_size=2)) if traits else []
    if draw(st.integers(0, 9)) == 0:
        path.append("no such lifepath")
    return {"path": path, "options": options, "shape": shape}


def _classes(built: Built, path: list[str], sheet: Any) -> set[str]:
    """The age-dependent rules a legal or illegal burn exercised: each age condition met or broken (by its
    subject), an age on the first or last year of a stat pools row or past the table, a long path, a
    lifepath taken a third time or more."""
    package = built.package
    runtime = importlib.import_module(f"{package.__name__}._runtime.lifepaths")
    found = {"legal" if sheet.legal else "illegal", "long path" if len(path) >= 8 else "short path"}
    found |= {"3rd time or more" for i, lp in enumerate(path) if path[: i + 1].count(lp) >= 3}
    for i, lp in enumerate(path):
        facts = runtime.lifepath_path(package.burning.CATALOG, lp, path[:i], age=sheet.age, lifepaths=len(path))
        for requirement in (package.LIFEPATHS[lp].requires, package.LIFEPATHS[lp].restrictions):
            for condition in _age_conditions(requirement):
                met = condition.judge(facts)
                found.add(f"{condition.subject} {'met' if met else 'broken'}")
                if met and sheet.legal:
                    found.add("an age condition met on a legal path")
                if not met and not sheet.legal:
                    found.add("an age condition broken on an illegal path")
    pools = package.STOCKS[sheet.stock].stat_pools if sheet.stock in package.STOCKS else None
    if pools in package.TABLES:
        keys = [row.keys[0] for row in package.TABLES[pools].rows]
        found |= {"first year of a pools row" for key in keys[1:] if key.low == sheet.age}
        found |= {"last year of a pools row" for key in keys if key.high == sheet.age}
        found |= {"past the pools table" for key in keys[-1:] if key.high is not None and sheet.age > key.high}
    return found


def _burn_cases(built: Built, case: dict[str, Any], classes: Counter[str]) -> list[Case]:
    """The burn of a path, and whether its last lifepath may follow the others (with its reasons); counts
    into `classes` the path's shape and which age-dependent rules it exercised (see _classes)."""
    package = built.package
    sheets = []

    def burnt() -> str:
        sheets.append(package.burn(case["path"], **case["options"]))
        return str(sheets[-1].to_json())

    cases: list[Case] = [({"op": "burn", "path": case["path"], "options": case["options"]}, python_answer(burnt))]
    classes.update({case["shape"]}.union(*(_classes(built, case["path"], sheet) for sheet in sheets)))
    *previous, last = case["path"]
    if all(p in package.LIFEPATHS for p in case["path"]):
        met = {k: v for k, v in case["options"].items() if k in ("traits", "gender")}

        def verdict() -> str:
            return to_json(
                [package.requirement_met(last, previous, **met), package.unmet_requirements(last, previous, **met)]
            )

        cases.append(({"op": "met", "lifepath": last, "previous": previous, "options": met}, python_answer(verdict)))
    return cases


# What the burns of a book ruleset (Burning Wheel, Fenmark) must exercise, besides each subject of its age
# conditions met and broken
BOOK_CLASSES = {
    "legal",
    "illegal",
    "long path",
    "3rd time or more",
    "first year of a pools row",
    "last year of a pools row",
    "past the pools table",
    "an age condition met on a legal path",
    "an age condition broken on an illegal path",
}


def test_burns_and_requirements_are_the_same(everything: list[Built], tmp_path: Path) -> None:
    lifepath_rulesets = [b for b in everything if b.ruleset.entities.get("lifepath")]
    assert {"burning_wheel", "fenmark"} <= {b.ruleset.id for b in lifepath_rulesets}
    for built in lifepath_rulesets:
        book = built.ruleset.id in ("burning_wheel", "fenmark")
        classes: Counter[str] = Counter()
        cases = collect(paths(built), BURNS if book else 100, partial(_burn_cases, built, classes=classes))
        burns = [expected for q, expected in cases if q["op"] == "burn"]
        legal = sum('"violations":[]' in expected for expected in burns)
        assert len(burns) >= 50, built.ruleset.id
        subjects = {
            condition.subject
            for lp in built.package.LIFEPATHS.values()
            for requirement in (lp.requires, lp.restrictions)
            for condition in _age_conditions(requirement)
        }
        wanted = {shape for shape in SHAPES if shape != "aged" or subjects}
        if book:
            assert len(burns) >= BURNS and 0 < legal < len(burns), (built.ruleset.id, legal)
            wanted |= BOOK_CLASSES | {f"{subject} {how}" for subject in subjects for how in ("met", "broken")}
            assert {"age", "age_at_entry", "lifepaths"} <= subjects, subjects
        missing = sorted(wanted - set(classes))
        assert not missing, (built.ruleset.id, missing, sorted(classes.items()))
        compare(built, cases, tmp_path)


def test_common_traits_are_had_from_birth_in_both(everything: list[Built], tmp_path: Path) -> None:
    """Born Kin's first trait and Guard's only one are Kin common traits: Loud is required instead, and
    Guard requires nothing more (its points are free); Guard's `trait Tough` holds, in a burn and when
    requirement_met is asked (it did not see the stock's traits), in Python and in rules.js alike."""
    kin = next(b for b in everything if b.script.name.startswith("jskin"))
    sheet = kin.package.burn(["Born Kin", "Guard", "Herald", "Elder"])
    assert sheet.legal, sheet.violations
    assert (sheet.common_traits, sheet.required_traits, sheet.trait_points) == (
        ("stubborn", "tough"),
        ("loud", "wise"),
        5,
    )
    paths = [["born_kin"], ["born_kin", "guard"], ["born_kin", "herald", "elder"], ["born_kin", "elder"]]
    cases = [({"op": "burn", "path": path, "options": {}}, kin.package.burn(path).to_json()) for path in paths]
    # requirement_met sees them too: Guard's `trait Tough` holds for a Kin before anything is chosen
    assert kin.package.requirement_met("guard", ["born_kin"]) is True
    assert kin.package.unmet_requirements("guard", ["born_kin"]) == []
    assert kin.package.requirement_met("herald", ["born_kin"]) is True  # Loud: a trait of Born Kin
    for last, previous in (("guard", ["born_kin"]), ("herald", ["born_kin"]), ("guard", [])):
        answer = to_json([kin.package.requirement_met(last, previous), kin.package.unmet_requirements(last, previous)])
        cases.append(({"op": "met", "lifepath": last, "previous": previous, "options": {}}, answer))
    assert compare(kin, cases, tmp_path) == len(cases)


# Names as authors write them in other scripts and cases: final sigma, sharp s, ligatures, titlecase digraphs
NAMES = ("Λόγος", "ΣΊΣΥΦΟΣ", "Straße", "STRASSE", "ﬁre", "ǅemal", "Сила", "İstanbul", "ᏣᎳᎩ", "µ-Wert", "Ωμέγα 7")


def test_names_fold_and_slug_as_in_python(everything: list[Built], tmp_path: Path) -> None:
    """rules.js's casefold (which table keys, formula names and ids of names in other scripts go through)
    and slug give what Python's str.casefold and the runtime's slug give, for every character both know
    (Unicode 14, Python 3.11's; Node's is newer) and for whole names: toLowerCase kept a final `ς` that
    Python folds to a middle sigma, so a Greek name got another id in rules.js."""
    texts = [*NAMES]
    for point in range(sys.maxunicode + 1):
        char = chr(point)
        if unicodedata.category(char) not in ("Cn", "Co", "Cs"):
            texts.append(char)
    expected = json.dumps([[text.casefold(), slug(text)] for text in texts], ensure_ascii=False)
    built = everything[0]
    (answer,) = ask(built, [{"op": "names", "texts": texts}], tmp_path)
    got = json.loads(answer)
    wrong = [(t, e, g) for t, e, g in zip(texts, json.loads(expected), got, strict=True) if e != g]
    assert not wrong, f"{len(wrong)} of {len(texts)} differ, e.g. {wrong[:10]}"
    assert got[0] == ["λόγοσ", "u3bb_3cc_3b3_3bf_3c3"]


def test_the_typescript_check_passes() -> None:
    tsc = NODE_DIR / "node_modules" / ".bin" / "tsc"
    assert tsc.exists(), "TypeScript is not installed: run scripts/setup.sh test (npm ci in tests/node)"
    ran = subprocess.run([str(tsc), "-p", str(NODE_DIR / "tsconfig.json")], capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_rules_js_is_the_same_bytes_every_build(everything: list[Built]) -> None:
    for built in everything[:3]:
        assert javascript.render(built.ruleset) == built.script.read_text(encoding="utf-8")


def test_rolls_are_seeded_and_land_on_rows(everything: list[Built], tmp_path: Path) -> None:
    algebra = next(b for b in everything if b.ruleset.id == "demo" and b.script.name.startswith("jsalgebra"))
    script = tmp_path / "rolls.mjs"
    script.write_text(
        f"import * as r from {json.dumps(algebra.script.as_uri())};\n"
        "const a = r.TABLES.origin.rollChain(r.seeded(7)), b = r.TABLES.origin.rollChain(r.seeded(7));\n"
        "if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error('not reproducible');\n"
        "for (let s = 0; s < 200; s++) { const x = r.MONSTERS.boom.roll.throw(r.seeded(s));\n"
        "  if (x.total !== x.faces.reduce((p, q) => p + q, 0)) throw new Error('explode'); }\n"
        "const seen = new Set();\n"
        "for (let s = 0; s < 300; s++) seen.add(r.TABLES.reaction.roll(r.seeded(s), 2).row.mood);\n"
        "console.log([...seen].sort().join(','), r.FORMULAS.best({n: 4}).text, a.length > 0);\n",
        encoding="utf-8",
    )
    assert NODE is not None
    ran = subprocess.run([NODE, str(script)], capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["friendly,hostile,wary", "4d6kh3", "true"]


def _js_example(path: Path, heading: str) -> str:
    """The first ```js block after `heading` in a Markdown file."""
    text = path.read_text(encoding="utf-8")
    after = text[text.index(heading) :]
    start = after.index("```js\n") + len("```js\n")
    return after[start : after.index("```", start)]


@pytest.mark.parametrize(
    ("document", "heading", "site"),
    [("README.md", "## The rules in JavaScript", "./generated/site/"), ("docs/javascript.md", "# rules.js", "./")],
)
def test_the_documented_example_runs_and_burns_as_python(
    everything: list[Built], tmp_path: Path, document: str, heading: str, site: str
) -> None:
    code = _js_example(ROOT / document, heading).replace(f'"{site}', f'"{(ROOT / "generated" / "site").as_uri()}/')
    script = tmp_path / "example.mjs"
    script.write_text(code + "console.log(JSON.stringify(sheet));\n", encoding="utf-8")
    assert NODE is not None
    ran = subprocess.run([NODE, str(script)], capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr
    package = next(b for b in everything if b.ruleset.id == "burning_wheel").package
    assert ran.stdout.strip() == package.burn(["Born Peasant", "Farmer"]).to_json()
    assert json.loads(ran.stdout)["age"] == 16


def test_a_form_not_written_yet_throws_not_supported_for_its_entity_only(
    everything: list[Built], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the emitter meets a form it cannot write (none in this repository), the build still succeeds:
    that entity throws NotSupported when used, NOT_SUPPORTED names it, and everything else works."""
    witcher = next(b for b in everything if b.ruleset.id == "witcher")

    def refuse(*_: object) -> str:
        raise javascript.NotEmitted("a form written for the test")

    monkeypatch.setattr(javascript, "table_code", refuse)
    monkeypatch.setattr(javascript, "formula_function", refuse)
    script = tmp_path / "witcher.mjs"
    script.write_text(javascript.render(witcher.ruleset), encoding="utf-8")
    probe = tmp_path / "probe.mjs"
    probe.write_text(
        f"import * as w from {json.dumps(script.as_uri())};\n"
        "const caught = (f) => { try { f(); return 'none'; } catch (e) { return e.name; } };\n"
        "console.log(JSON.stringify([w.NOT_SUPPORTED.length, w.NOT_SUPPORTED[0],\n"
        "  caught(() => w.FORMULAS.layered_sp({a: 1, b: 2})), caught(() => w.TABLES.bonus_armor.lookup(3)),\n"
        "  Object.keys(w.MECHANICS).length]));\n",
        encoding="utf-8",
    )
    assert NODE is not None
    ran = subprocess.run([NODE, str(probe)], capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr
    count, first, formula, table, mechanics = json.loads(ran.stdout)
    assert count == len(witcher.ruleset.entities["formula"]) + len(witcher.ruleset.entities["table"])
    assert first[2] == "a form written for the test"
    assert (formula, table, mechanics) == ("NotSupported", "NotSupported", 1)
