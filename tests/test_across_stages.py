"""Across the stages: what checks clean builds, imports with the standard library alone, and runs.

Hypothesis writes whole rulesets (every built-in kind, every value form, formulas calling formulas and
looking tables up, rolled and two-key tables, requirements) as an author would, then the generated
package is imported in a bare interpreter and exercised: every formula and formula cell evaluates,
every rolled table rolls, every covered key is looked up.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rulesdsl.compile.pipeline import compile_paths
from rulesdsl.targets.build import render_all, write_output

from .conftest import run_python, write_ruleset

SIDES = [4, 6, 8, 10, 12, 20]


@st.composite
def arithmetic(draw: st.DrawFn, names: list[str], depth: int = 0) -> str:
    """A formula over `names` that always evaluates (division only by positive constants)."""
    leaf = st.one_of(st.integers(0, 9).map(str), st.sampled_from(names)) if names else st.integers(0, 9).map(str)
    if depth > 2 or draw(st.booleans()):
        return draw(leaf)
    left, right = draw(arithmetic(names, depth + 1)), draw(arithmetic(names, depth + 1))
    shape = draw(
        st.sampled_from(
            [
                "{a} + {b}",
                "{a} - {b}",
                "{a} * {b}",
                "({a}) / {n}",
                "floor(({a}) / {n})",
                "max({a}, {b})",
                "min({a}, {b})",
                "abs({a} - {b})",
                "round({a} / 2)",
                "if({a} > {b}, {a}, {b})",
                "if({a} = {b} or not {a} < 3, 1, 0)",
            ]
        )
    )
    return shape.format(a=left, b=right, n=draw(st.integers(1, 5)))


@st.composite
def partition(draw: st.DrawFn, low: int, high: int) -> list[str]:
    """Row keys that cover low..high exactly once, as ranges, single numbers and open ends."""
    cuts = sorted(draw(st.sets(st.integers(low + 1, high), max_size=min(6, high - low))))
    bounds = [low, *cuts, high + 1]
    keys = []
    for i in range(len(bounds) - 1):
        lo, hi = bounds[i], bounds[i + 1] - 1
        if i == len(bounds) - 2 and draw(st.booleans()):
            keys.append(f"{lo}+")
        else:
            keys.append(str(lo) if lo == hi else f"{lo}-{hi}")
    return keys


@st.composite
def rulesets(draw: st.DrawFn) -> str:
    parts = []
    # attributes: a few plain ones, derived ones over those declared before them
    attrs = [f"A{i}" for i in range(draw(st.integers(1, 3)))]
    for abbr in attrs:
        parts.append(f'attribute {abbr.lower()} "{abbr} attr" {{ abbr: {abbr}  group: base  range: 1..10 }}')
    for i in range(draw(st.integers(0, 2))):
        formula = draw(arithmetic(attrs))
        parts.append(f"attribute d{i} {{ abbr: D{i}  group: derived  formula: {formula} }}")
        attrs.append(f"D{i}")
    # a one-key lookup table formulas may use: it stops at 0, so it says what a lookup below does
    bonus_keys = draw(partition(0, 20))
    rows = "\n".join(f"  {k} -> {n}" for n, k in enumerate(bonus_keys))
    parts.append("table bonus { clamp: yes  columns: b(int)\n" + rows + "\n}")
    formulas: list[tuple[str, list[str]]] = []
    for i in range(draw(st.integers(1, 4))):
        params = [f"p{j}" for j in range(draw(st.integers(1, 3)))]
        body = draw(arithmetic(params))
        if draw(st.booleans()):
            body = f"{body} + bonus[abs({params[0]}) + 0]"
        if formulas and draw(st.booleans()):
            callee, callee_params = draw(st.sampled_from(formulas))
            body = f"{body} + {callee}({', '.join(draw(st.sampled_from(params)) for _ in callee_params)})"
        parts.append(f"formula f{i} {{ params: {', '.join(params)}  formula: {body} }}")
        formulas.append((f"f{i}", params))
    # rolled tables with every column type
    for i in range(draw(st.integers(1, 3))):
        count, sides = draw(st.integers(1, 3)), draw(st.sampled_from(SIDES))
        modifier = draw(st.integers(-2, 3))
        roll = f"{count}d{sides}" + (f" + {modifier}" if modifier > 0 else f" - {-modifier}" if modifier < 0 else "")
        keys = draw(partition(count + modifier, count * sides + modifier))
        rows = []
        for n, key in enumerate(keys):
            cell = draw(arithmetic(["X", "y"]))
            if formulas and draw(st.booleans()):
                name, params = draw(st.sampled_from(formulas))
                cell = f"{name}({', '.join('X' for _ in params)})"
            empty = draw(st.sampled_from(["unknown", "none", f'"word {n}"']))
            rows.append(f"  {key} -> {cell}, {n}, x{n + 1}/2, 1d{sides}+{n}, {'yes' if n % 2 else 'no'}, {empty}")
        parts.append(
            f'table t{i} "Table {i}" {{\n  roll: {roll}\n  params: X, y\n'
            "  columns: f(formula), n(int), m(multiplier), d(dice), b(bool), t\n" + "\n".join(rows) + "\n}"
        )
    # a two-key grid
    zones = draw(st.lists(st.sampled_from(["Head", "Arm", "Leg", "Torso"]), min_size=1, max_size=3, unique=True))
    levels = draw(partition(1, 5))
    grid = [f"  {z}, {lv} -> {n}" for z in zones for n, lv in enumerate(levels)]
    parts.append("table grid { keys: zone, level(int)\n  columns: v(int)\n" + "\n".join(grid) + "\n}")
    # mechanics
    parts.append("mechanic pool { style: pool  die: d10  stack_on: 10  fumble_ones: 2 }")
    parts.append(f"mechanic total {{ style: total  die: {draw(st.integers(1, 3))}d6 + 1 }}")
    # Burning-Wheel-shaped content: stocks, settings, lifepaths with requirements, skills, traits, spells
    parts.append("stock folk { stat_pools: pools }")
    parts.append("table pools { columns: mental(int), physical(int)\n  1-200 -> 5, 6\n}")
    parts.append("setting home { stock: folk }\nsetting away { stock: folk }")
    parts.append("skill Craft { root: Will  type: craftsman }\ntrait Tough { type: die  cost: 2 }")
    parts.append(
        'spell "Spark" { obstacle: 3^  actions: x2  origin: personal  duration: instant  area: caster\n'
        "  element: fire  impetus: create  resources: 4 }"
    )
    parts.append("lifepath Born { setting: home  born: yes  time: 8 yrs  resources: 2  leads: away }")
    lifepaths = ["Born"]
    for i in range(draw(st.integers(1, 4))):
        requirement = draw(
            st.sampled_from(
                [
                    "",
                    f"requires: {draw(st.sampled_from(lifepaths))}",
                    "requires: any lifepath in setting home or trait Tough",
                    "restrictions: position in 2..4 and not age > 90",
                    "requires: skill Craft or gender = female",
                ]
            )
        )
        stat = draw(st.sampled_from(["", "stat: +1 M", "stat: +1 M, +1 P"]))
        parts.append(
            f"lifepath L{i} {{ setting: {draw(st.sampled_from(['home', 'away']))}  time: {i + 2} yrs  resources: {i}\n"
            f"  leads: home, away  skills: 3 pts: Craft  traits: 1 pt: Tough  {stat}  {requirement} }}"
        )
        lifepaths.append(f"L{i}")
    parts += draw(open_language())
    return "\n".join(parts) + "\n"


@st.composite
def open_language(draw: st.DrawFn) -> list[str]:
    """Declared kinds with every field type, checks, dice formulas, rolls with modifiers, d66, two dice,
    odd/even keys and chains of tables."""
    parts = [
        "mechanic task { style: check  die: 2d6 }",
        'attribute endurance "Endurance" { abbr: END  group: base }',
        "mechanic duel { style: contest  die: 1d20 }",
        'kind gadget "Gadgets" {\n'
        "  level: int in 0..9 = 1\n  weight: number?\n  label: text?\n  notes: markdown?\n  works: bool = yes\n"
        "  damage: formula of slot?\n  hit: dice?\n  band: range?\n  factor: multiplier?\n"
        "  size: one of small, large = small\n  needs: ref skill?\n  parts: list of text?\n"
        "  test: check?\n  kinds: list in 0..3 of one of a, b, c\n  requires: requirement?\n}",
    ]
    for i in range(draw(st.integers(1, 3))):
        fields = [f"level: {draw(st.integers(0, 9))}"]
        if draw(st.booleans()):
            fields.append(f"weight: {draw(st.sampled_from(['1.5', '2', '1/3']))}")
        if draw(st.booleans()):
            fields.append(
                f"damage: {draw(st.sampled_from(['8d6 + (slot - 3)d6', 'dice(slot + 1, 4) + slot', 'slot * 2']))}"
            )
        if draw(st.booleans()):
            fields.append(f"test: check floor({draw(arithmetic(['END']))}) {draw(st.integers(2, 12))}+")
        if i and draw(st.booleans()):
            requirement = draw(st.sampled_from(["gadget g0", "not gadget g0 or age > 3", "skill Craft"]))
            fields.append(f"requires: {requirement}")
        label = draw(st.sampled_from(["none", "unknown", '"Lamp"']))
        fields.append(f"label: {label}")
        fields.append('hit: 1d6+1  band: 2..5  factor: x1/2  size: large  needs: Craft  parts: "a", "b"  kinds: a, c')
        parts.append(f"gadget g{i} {{ {'  '.join(fields)} }}")
    modifier = draw(st.integers(0, 2))
    keys = draw(partition(1, 6 + modifier))
    parts.append(
        f"table boost {{ roll: 1d6 + 0..{modifier}  clamp: {draw(st.sampled_from(['yes', 'no']))}\n  columns: v(int)\n"
        + "\n".join(f"  {k} -> {n}" for n, k in enumerate(keys))
        + "\n}"
    )
    parts.append(
        "table d66 { roll: d66\n  columns: v, next(ref table)\n"
        + "\n".join(f"  {t}1-{t}6 -> r{t}, {draw(st.sampled_from(['none', 'pair', 'boost']))}" for t in range(1, 7))
        + "\n}"
    )
    parts.append(
        "table pair { roll: 1d10, 1d10\n  keys: a(int), b(int)\n  columns: v\n"
        "  1-5, odd -> x\n  1-5, even -> y\n  6-10, 1-10 -> z\n}"
    )
    return parts


EXERCISE = """
import inspect, json, random, sys
import demo
from fractions import Fraction
assert "rulesdsl" not in sys.modules and "lark" not in sys.modules and "jinja2" not in sys.modules
report = {}
def key_value(k):
    if k.name is not None:
        return k.name
    if k.parity is not None:
        return k.parity or 2
    return k.low if k.low is not None else k.high
for name, function in demo.FORMULAS.items():
    params = inspect.signature(function).parameters
    report[name] = str(function(**{p: 3 for p in params}))
for table_id, table in demo.TABLES.items():
    for row in table:
        keys = [key_value(k) for k in row.keys]
        assert table.lookup(*keys) == row.value, (table_id, keys)
        for value in vars(row.value).values() if hasattr(row.value, "__dict__") else [
            getattr(row.value, f) for f in row.value.__dataclass_fields__
        ]:
            if isinstance(value, demo.runtime.Formula):
                value.evaluate(**{n: 2 for n in value.names})
            if isinstance(value, demo.runtime.Dice):
                assert value.minimum <= value.roll(random.Random(1)) <= value.maximum
    if table.dice is not None:
        assert sum(chance for _, chance in table.chances()) == 1
        for seed in range(5):
            table.roll(random.Random(seed))
derived = demo.derive_attributes({a.id: 4 for a in demo.ATTRIBUTES.values() if a.formula is None})
assert all(a.id in derived for a in demo.ATTRIBUTES.values())
by_abbr = {(a.abbr or a.id): a.id for a in demo.ATTRIBUTES.values()}
for attribute in demo.ATTRIBUTES.values():
    if attribute.formula is not None:
        inputs = {n: derived[by_abbr[n]] for n in attribute.formula.names}
        assert attribute.formula.evaluate(**inputs) == derived[attribute.id]
sheet = demo.burn(["Born", *[lp for lp in demo.LIFEPATHS if lp != "born"][:2]], either=["M"] * 9)
assert sheet.age > 0
for gadget in demo.GADGETS.values():
    if gadget.damage is not None:
        made = gadget.damage.evaluate(slot=5)
        assert isinstance(made, (int, demo.runtime.Dice))
    if gadget.test is not None:
        assert 0 <= gadget.test.chance(END=7) <= 1
        gadget.test.roll(random.Random(1), END=7)
    assert gadget.hit.minimum == 2 and gadget.band.low == 2 and gadget.size == "large"
    if gadget.requires is not None:
        held = demo.runtime.Character(held={"gadget": {"g0"}}, known={"age": 5})
        said = gadget.requires.describe({})  # no lifepaths were taken, so a skill from one is not held
        assert gadget.requires.judge(held) is ("skill" not in said), said
for seed in range(20):
    demo.TABLES["d66"].roll_chain(random.Random(seed))
    boost = demo.TABLES["boost"]
    try:
        boost.roll(random.Random(seed), modifier=seed % 5)
    except LookupError:
        assert not boost.clamp  # only a table that does not clamp refuses a result past its rows
    assert len(demo.TABLES["pair"].roll(random.Random(seed)).numbers) == 2
assert demo.MECHANICS["duel"].roll(random.Random(3), 1, 0).margin >= 0
print(json.dumps(report, sort_keys=True))
"""


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rulesets())
def test_what_checks_clean_builds_imports_and_runs(tmp_path_factory: object, source: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        folder = write_ruleset(Path(scratch) / "rules" / "demo", {"a.rules": source})
        result = compile_paths([folder])
        assert result.ok, [f"{d.code} {d.message}" for d in result.diagnostics]
        out = Path(scratch) / "out"
        write_output(out, render_all(result.rulesets))
        ran = run_python(EXERCISE, out)
        assert ran.returncode == 0, ran.stderr + "\n" + source
        assert json.loads(ran.stdout.splitlines()[-1]).keys() == {
            f["id"] for f in result.rulesets[0].documents().get("formula", {}).values()
        }
