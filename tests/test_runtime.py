"""The runtime generated packages carry, tested where it is written (rulesdsl/runtime/)."""

from __future__ import annotations

import copy
import dataclasses
import json
import random
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, cast

import pytest

from rulesdsl.runtime import core as rt
from rulesdsl.runtime import lifepaths as lp

D6 = rt.Dice("1d6", (rt.DiceTerm(1, 6),))
TWO_D6 = rt.Dice("2d6", (rt.DiceTerm(2, 6),))


def test_arithmetic_is_exact_and_rounds_halves_up() -> None:
    assert rt.div(7, 2) == Fraction(7, 2)
    assert (rt.floor(Fraction(7, 2)), rt.ceil(Fraction(7, 2)), rt.round_half_up(Fraction(5, 2))) == (3, 4, 3)
    assert rt.round_half_up(Fraction(-5, 2)) == -2


def test_unknown_is_one_falsy_marker() -> None:
    assert repr(rt.UNKNOWN) == "UNKNOWN" and not rt.UNKNOWN
    assert rt.Unknown("unknown") is rt.UNKNOWN


def test_slug() -> None:
    assert rt.slug("Sergeant-at-Arms") == "sergeant_at_arms"
    assert (rt.slug("Épée"), rt.slug("!!"), rt.slug("3 Kings")) == ("epee", "_", "n3_kings")
    # no Latin letter at all: spelt by code points, not all `_` (which made every such name one id)
    assert (rt.slug("Сила"), rt.slug("СИЛА"), rt.slug("力")) == ("u441_438_43b_430", "u441_438_43b_430", "u529b")


def test_formula_values_by_name_in_any_case() -> None:
    formula = rt.Formula("6 - PRS", ("PRS",), lambda v: 6 - v["prs"])
    assert formula.evaluate(prs=4) == formula.evaluate(PRS=4) == 2
    assert str(formula) == "6 - PRS"
    with pytest.raises(KeyError, match="needs a value for PRS"):
        formula.evaluate()


def test_dice_bounds_rolls_and_exact_odds() -> None:
    dice = rt.Dice("2d6+3", (rt.DiceTerm(2, 6),), 3)
    assert (dice.minimum, dice.maximum, dice.outcomes, str(dice)) == (5, 15, 36, "2d6+3")
    assert dice.roll(random.Random(3)) == dice.roll(random.Random(3))
    spread = dice.distribution()
    assert spread[10] == Fraction(6, 36) and sum(spread.values()) == 1
    assert dice.chance(10, 10) == Fraction(1, 6)
    assert dice.chance(None, 6) == Fraction(3, 36) and dice.chance(14, None) == Fraction(3, 36)
    mixed = rt.Dice("1d4 + 1d8", (rt.DiceTerm(1, 4), rt.DiceTerm(1, 8)))
    assert all(mixed.chance(n, n) == p for n, p in mixed.distribution().items())


def test_odds_of_a_hundred_d1000_are_exact_and_quick() -> None:
    huge = rt.Dice("100d1000", (rt.DiceTerm(100, 1000),))
    assert huge.chance(None, None) == 1
    assert huge.chance(100, 100) == Fraction(1, 1000**100)
    half = huge.chance(None, 50050)
    assert Fraction(49, 100) < half < Fraction(51, 100)


def test_pool_mechanic_stacks_and_fumbles() -> None:
    pool = rt.PoolMechanic("pool", "Pool", 10, stack_on=10, fumble_ones=2)
    assert pool.judge([1, 3, [10, 7]], 17).successes == 1
    assert pool.judge([1, 1, 4], 7).fumble and not pool.judge([1, 1, 9], 7).fumble
    assert pool.roll(random.Random(2), 6, 12) == pool.roll(random.Random(2), 6, 12)
    assert pool.success_chance(8) == Fraction(3, 10)
    assert pool.success_chance(17) == Fraction(4, 100)
    assert pool.success_chance(20) == Fraction(1, 100)
    assert pool.success_chance(1) == 1
    assert sum(pool.success_chances(3, 8).values()) == 1
    assert pool.success_chances(2, 8)[2] == Fraction(9, 100)
    plain = rt.PoolMechanic("p", "P", 6)
    assert plain.success_chance(7) == 0


def test_total_mechanic_explodes_and_fumbles_on_one_die() -> None:
    d10 = rt.TotalMechanic("d", "D", rt.Dice("1d10", (rt.DiceTerm(1, 10),)), explode_on=10, fumble_on=1, floor=0)
    assert d10.sides == 10
    assert (d10.total([10, 7]), d10.total([1, 7], base=13), d10.total([1, 10, 4], base=13)) == (17, 6, 0)
    assert d10.total([5], base=2) == 7
    result, faces = d10.roll(random.Random(5))
    assert d10.total(faces) == result
    assert any(len(d10.roll(random.Random(seed))[1]) > 1 for seed in range(50))
    plain = rt.TotalMechanic("t", "T", rt.Dice("3d6+2", (rt.DiceTerm(3, 6),), 2))
    assert plain.total([1, 2, 3]) == 8
    assert plain.roll(random.Random(1))[1] == plain.roll(random.Random(1))[1]


@dataclass(frozen=True, slots=True)
class Cell:
    x: str


def test_tables_look_up_roll_and_give_each_rows_chance() -> None:
    rows = (rt.Row((rt.Key(1, 3),), Cell("low")), rt.Row((rt.Key(4, None),), Cell("high"), "p. 2"))
    table = rt.Table("t", "T", rt.Roll("1d6", (D6,)), rows)
    assert table.lookup(2).x == "low" and table.lookup(6).x == "high"
    rolled = table.roll(random.Random(1))
    assert rolled == table.roll(random.Random(1)) and rolled.row == table.lookup(*rolled.numbers)
    assert [c for _, c in table.chances()] == [Fraction(1, 2), Fraction(1, 2)]
    assert [r.key_text for r in table] == ["1-3", "4+"]
    with pytest.raises(LookupError, match="no row for 0"):
        table.lookup(0)
    named = rt.Table("n", "N", None, (rt.Row((rt.Key(name="Head"), rt.Key(None, 2)), Cell("h")),))
    assert named.lookup("head", 1).x == "h" and named.rows[0].key_text == "Head, <=2"
    assert not rt.Key(name="Head").matches(1) and not rt.Key(1, 2).matches("x")
    for call in (lambda: named.roll(random.Random(1)), named.chances):
        with pytest.raises(TypeError):
            call()


def test_modifiers_clamp_or_refuse() -> None:
    """`roll: 1d6 + 0..1` covers 1-7; past the rows a clamping table takes the last row, another refuses."""
    rows = (rt.Row((rt.Key(1, 3),), Cell("low")), rt.Row((rt.Key(4, 7),), Cell("high")))
    roll = rt.Roll("1d6 + 0..1", (D6,), 0, 1)
    strict = rt.Table("t", "T", roll, rows)
    assert {strict.roll(random.Random(s), modifier=1).numbers[0] for s in range(40)} == {2, 3, 4, 5, 6, 7}
    assert [c for _, c in strict.chances(modifier=1)] == [Fraction(2, 6), Fraction(4, 6)]
    with pytest.raises(LookupError, match="past its rows"):
        [strict.roll(random.Random(s), modifier=2) for s in range(40)]
    clamping = rt.Table("c", "C", roll, rows, clamp=True)
    results = [clamping.roll(random.Random(s), modifier=-3) for s in range(40)]
    assert {r.row.x for r in results if r.clamped} == {"low"} and any(r.clamped for r in results)


def test_d66_two_dice_and_parity() -> None:
    d66 = rt.Roll("d66", (rt.Dice("d66", (rt.DiceTerm(1, 6), rt.DiceTerm(1, 6))),), tens_units=True)
    numbers = {d66.roll(random.Random(s))[0] for s in range(400)}
    assert numbers == {10 * t + u for t in range(1, 7) for u in range(1, 7)}
    assert d66.chance(0, 11, 16) == Fraction(1, 6) and d66.chance(0, 17, 20) == 0
    assert d66.parity_chance(0, 1) == Fraction(1, 2)
    two = rt.Roll("1d10, 1d10", (rt.Dice("1d10", (rt.DiceTerm(1, 10),)),) * 2)
    grid = rt.Table(
        "g",
        "G",
        two,
        (
            rt.Row((rt.Key(1, 5), rt.Key(parity=1)), Cell("odd")),
            rt.Row((rt.Key(1, 5), rt.Key(parity=0)), Cell("even")),
            rt.Row((rt.Key(6, 10), rt.Key(1, 10)), Cell("high")),
        ),
    )
    assert sum(c for _, c in grid.chances()) == 1 and len(grid.roll(random.Random(4)).numbers) == 2
    assert rt.Key(parity=1).text == "odd" and rt.Key(parity=0).matches(4)


def test_rolls_chain_from_table_to_table() -> None:
    registry: dict[str, rt.Table[Any]] = {}
    roll = rt.Roll("1d6", (D6,))
    end = rt.Table(
        "end", "End", roll, (rt.Row((rt.Key(1, 6),), Link("done", None)),), chains=("next",), registry=registry
    )
    loop = rt.Table(
        "loop",
        "Loop",
        roll,
        (rt.Row((rt.Key(1, 5),), Link("again", "loop")), rt.Row((rt.Key(6, 6),), Link("out", "end"))),
        chains=("next",),
        registry=registry,
    )
    registry.update({"end": end, "loop": loop})
    steps = loop.roll_chain(random.Random(3))
    assert steps[-1].table == "end" and all(s.table == "loop" for s in steps[:-1])
    forever = rt.Table("f", "F", roll, (rt.Row((rt.Key(1, 6),), Link("x", "f")),), chains=("next",), registry=registry)
    registry["f"] = forever
    with pytest.raises(RuntimeError, match="still rolling"):
        forever.roll_chain(random.Random(1))


@dataclass(frozen=True, slots=True)
class Link:
    x: str
    next: str | None


def test_dice_made_by_formulas_add_up() -> None:
    slot = 5
    fireball = rt.dice(8, 6) + rt.dice(slot - 3, 6)
    assert (fireball.text, fireball.minimum, fireball.maximum) == ("10d6", 10, 60)
    assert (rt.dice(1, 8) + 2).text == "1d8 + 2" and (3 + rt.dice(2, 4) - 5).text == "2d4 - 2"
    assert (rt.dice(1, 6) + rt.dice(1, 8)).text == "1d6 + 1d8" and rt.dice(0, 6).text == "0"
    assert rt.dice(Fraction(4, 2), 6).text == "2d6"
    for bad in ((-1, 6), (Fraction(1, 2), 6), (2, 0)):
        with pytest.raises(ValueError, match="cannot roll"):
            rt.dice(*bad)


def test_checks_and_contests() -> None:
    mechanic = rt.CheckMechanic("task", "Task", TWO_D6)
    made = mechanic.judge([4, 3], 1, 8)
    assert (made.total, made.success, made.effect) == (8, True, 0)
    assert mechanic.chance(0, 8) == Fraction(15, 36)
    check = rt.Check(mechanic, rt.Formula("END", ("END",), lambda v: v["end"] // 3 - 2), 5)
    assert check.chance(END=9) == mechanic.chance(1, 5) and str(check) == "END 5+"
    assert check.roll(random.Random(2), END=9) == check.roll(random.Random(2), END=9)
    halves = rt.Check(mechanic, rt.Formula("x / 2", ("x",), lambda v: Fraction(v["x"], 2)), 5)
    with pytest.raises(ValueError, match="not a whole number"):
        halves.chance(x=3)
    contest = rt.ContestMechanic("duel", "Duel", TWO_D6)
    assert contest.judge(7, 9) == rt.ContestResult(7, 9, 1, 2) and contest.judge(5, 5).winner is None
    even = contest.chance()
    assert even == contest.chance(1, 1) and even < Fraction(1, 2) and contest.chance(3, 0) > Fraction(1, 2)
    assert contest.roll(random.Random(8), 1, 0) == contest.roll(random.Random(8), 1, 0)


def test_field_values() -> None:
    assert 3 in rt.Range(1, 5) and 9 not in rt.Range(None, 5) and "x" not in rt.Range()
    assert rt.Choices(3, (("a",), ("b", "c"))).all == ("a", "b", "c")
    assert rt.StatBonus(1).mental == 1 and rt.Actions(3, True).per_obstacle


@dataclass(frozen=True, slots=True)
class Life:
    id: str
    name: str
    setting: str
    time: int
    resources: int
    born: bool = False
    stat: rt.StatBonus | None = None
    leads: tuple[str, ...] = ()
    skills: rt.Choices | None = None
    general: int | None = None
    traits: rt.Choices | None = None
    requires: rt.Requirement | None = None
    restrictions: rt.Requirement | None = None
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Place:
    stock: str


@dataclass(frozen=True, slots=True)
class Folk:
    stat_pools: str | None
    common_traits: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Pools:
    mental: int
    physical: int


@dataclass(frozen=True, slots=True)
class Repeats:
    skill_points: Fraction
    trait_points: Fraction
    stat: Fraction


LIFEPATHS = {
    "born": Life("born", "Born", "village", 8, 3, born=True, leads=("city",), traits=rt.Choices(1, (("tough",),))),
    "smith": Life(
        "smith",
        "Smith",
        "village",
        5,
        4,
        stat=rt.StatBonus(0, 1, 1),
        skills=rt.Choices(4, (("forge",), ("haggle", "sing"))),
        traits=rt.Choices(1, (("burly",),)),
        general=1,
        tags=("craft",),
        aliases=("Blacksmith",),
    ),
    "guard": Life(
        "guard",
        "Guard",
        "city",
        3,
        2,
        requires=rt.AllOf((rt.AnyOf((rt.TookLifepath("smith"), rt.HasTrait("brave"))), rt.Not(rt.Previous("born")))),
        restrictions=rt.AllOf((rt.Condition("age", ">", 10), rt.Condition("position", low=2, high=4))),
    ),
    "elder": Life(
        "elder",
        "Elder",
        "village",
        10,
        1,
        requires=rt.AnyOf((rt.CountOf(2, setting="village", tag="craft"), rt.HasSkill("forge"), rt.GmPermission())),
        restrictions=rt.Condition("gender", "!=", "male"),
    ),
}
NAMES = {"lifepath": {i: e.name for i, e in LIFEPATHS.items()}, "setting": {"city": "City"}, "stock": {"folk": "Folk"}}
POOLS = rt.Table("pools", "Pools", None, (rt.Row((rt.Key(1, 20),), Pools(5, 6)),))
REPEATS = rt.Table(
    "lifepath_repeats",
    "Repeats",
    None,
    (
        rt.Row((rt.Key(1, 1),), Repeats(Fraction(1), Fraction(1), Fraction(1))),
        rt.Row((rt.Key(2, None),), Repeats(Fraction(1, 2), Fraction(1), Fraction(0))),
    ),
)


def burn(path: list[str], common: tuple[str, ...] = (), **options: object) -> lp.Sheet:
    catalog = lp.Catalog(LIFEPATHS)
    tables = {"pools": POOLS, "lifepath_repeats": REPEATS}
    return lp.burn(
        catalog,
        {"village": Place("folk"), "city": Place("folk")},
        {"folk": Folk("pools", common)},
        tables,
        NAMES,
        path,
        **options,
    )  # type: ignore[arg-type]


def test_catalog_finds_lifepaths_by_id_name_or_alias() -> None:
    catalog = lp.Catalog(LIFEPATHS)
    assert (catalog.find("smith"), catalog.find("Smith"), catalog.find("blacksmith")) == ("smith", "smith", "smith")
    with pytest.raises(LookupError, match="no lifepath named 'Baker'"):
        catalog.find("Baker")
    twins = lp.Catalog({"a": LIFEPATHS["smith"], "b": Life("b", "Smith", "city", 1, 1)})
    with pytest.raises(LookupError, match="could mean several"):
        twins.find("Smith")


def test_requirements_are_three_valued_and_described() -> None:
    catalog = lp.Catalog(LIFEPATHS)
    path = lp.lifepath_path(catalog, "guard", ["born", "smith"], age=30)
    assert path.fact("age_at_entry") == 14 and path.fact("position") == 3 and path.fact("times_taken") == 1
    assert lp.verdict(LIFEPATHS["guard"], path) is True
    young = lp.lifepath_path(catalog, "guard", ["born", "smith"], age=9)
    assert lp.reasons(LIFEPATHS["guard"], young, NAMES, False) == ["restricted to: age > 10 and position 2..4"]
    unknown_age = lp.lifepath_path(catalog, "guard", ["born", "smith"])
    assert lp.verdict(LIFEPATHS["guard"], unknown_age) is None
    right_after = lp.lifepath_path(catalog, "guard", ["born"], age=30, traits=["brave"])
    assert lp.reasons(LIFEPATHS["guard"], right_after, NAMES, False) == [
        "requires: (Smith or the brave trait) and not Born just before"
    ]
    elder = lp.lifepath_path(catalog, "elder", ["born", "smith"], gender="Female")
    assert lp.verdict(LIFEPATHS["elder"], elder) is True
    assert rt.CountOf(2, setting="village", tag="craft").judge(elder) is False
    described = LIFEPATHS["elder"].requires.describe(NAMES)  # type: ignore[union-attr]
    assert described == (
        "2 village lifepaths tagged craft or an earlier lifepath with the forge skill or the GM's permission"
    )
    assert rt.CountOf(1, lifepaths=("smith",)).describe(NAMES) == "any lifepath: Smith"
    assert rt.CountOf(2, lifepaths=("smith", "born")).describe(NAMES) == "2 lifepaths among Smith, Born"
    assert rt.Condition("gender", "<", "x").judge(elder) is False
    assert rt.Condition("position", "<=", 3).judge(elder) is True


def test_burning_adds_up_a_path_and_names_what_it_breaks() -> None:
    sheet = burn(["born", "smith", "smith"], either=["M"], picks=["sing"])  # the 2nd skill: haggle or sing
    assert sheet.legal and sheet.age == 18 and (sheet.mental_pool, sheet.physical_pool) == (5, 6)
    assert (sheet.mental_bonus, sheet.physical_bonus) == (1, 1)  # the second pass earns no stat (x0)
    assert (sheet.lifepath_skill_points, sheet.general_skill_points, sheet.trait_points) == (6, 2, 2)
    assert sheet.required_skills == ("forge", "sing") and sheet.required_traits == ("tough", "burly")
    assert not sheet.undecided
    unpicked = burn(["born", "smith", "smith"], either=["M"])
    assert unpicked.legal and unpicked.required_skills == ("forge",)  # never a guess between the two
    assert unpicked.undecided == ("choose haggle or sing for Smith (lifepath 3), its required skill",)
    assert "Legal path, if these hold (facts or choices not given):" in unpicked.text(NAMES)
    assert (sheet.mental, sheet.physical, sheet.resource_points) == (6, 7, 11)
    text = sheet.text(NAMES)
    assert "Legal path." in text and "Mental pool:    6 (5 by age +1 from lifepaths)" in text
    broken = burn(["smith", "born", "guard"])
    assert broken.violations == (
        "Smith is not a born lifepath, and the first lifepath must be one",
        "Born is a born lifepath and can only be the first",
        "Guard (lifepath 3) requires: (Smith or the brave trait) and not Born just before",
        "choose M or P for the +1 M/P of Smith (lifepath 1)",
    )
    assert "Not a legal path:" in broken.text(NAMES)
    undecided = burn(["born", "elder"], either=["X"])
    assert undecided.undecided == ("Elder (lifepath 2) restricted to: gender != male",)
    assert "1 stat choice(s) left over" in undecided.violations[-1]
    assert "? Elder" in undecided.text(NAMES)
    old = burn(["born", "smith", "elder", "elder"], either=["P"])
    assert old.mental_pool is None and old.violations[-1] == "no stat pools for age 33 in Pools"
    assert "unknown (no stat pools" in old.text(NAMES)
    assert burn([]).violations[0] == "a character needs at least a born lifepath"
    moved = burn(["born", "elder", "guard"])
    assert "Elder has no lead to the City, so Guard cannot follow it" in moved.violations


def test_the_stocks_common_traits_are_on_the_sheet_free_and_had_from_birth() -> None:
    plain = burn(["born", "smith"], either=["M"])
    assert plain.common_traits == () and "Common traits:  none" in plain.text(NAMES)
    sheet = burn(["born", "smith"], common=("stout", "tough", "brave"), either=["M"])
    assert sheet.common_traits == ("stout", "tough", "brave")  # the stock's order
    assert "Common traits:  stout, tough, brave\n" in sheet.text(NAMES)
    keys = list(json.loads(sheet.to_json()))
    assert keys[keys.index("required_traits") + 1] == "common_traits"
    # Born's only trait, tough, is common: already had, so nothing more is required of Born (the book's rule
    # for a trait the character has), and it costs no trait points: they stay Born's 1 and Smith's 1
    assert sheet.required_traits == ("burly",) and plain.required_traits == ("tough", "burly")
    assert sheet.trait_points == plain.trait_points == 2
    # A requirement naming a common trait holds: Guard needs Smith or the brave trait
    broken = "Guard (lifepath 3) requires: (Smith or the brave trait) and not Born just before"
    assert broken in burn(["born", "elder", "guard"]).violations
    assert broken not in burn(["born", "elder", "guard"], common=("brave",)).violations


def _as_dataclass(value: rt.Value) -> object:
    """`value` rebuilt as `@dataclass(frozen=True, slots=True)` writes a class of the same name and fields."""
    declared = dataclasses.fields(cast(Any, value))
    reference = dataclasses.make_dataclass(
        type(value).__name__,
        [(f.name, object, dataclasses.field(repr=f.repr, compare=f.compare, hash=f.hash)) for f in declared],
        frozen=True,
        slots=True,
    )
    return reference(*(getattr(value, f.name) for f in declared))


@pytest.mark.parametrize(
    "value",
    [
        rt.StatBonus(1, 0, 2),
        rt.Choices(2, (("a",), ("b", "c"))),
        rt.Formula("6 - PRS", ("PRS",), lambda v: 6 - v["prs"]),  # compute: neither shown nor compared
        rt.AnyOf((rt.TookLifepath("farmer"), rt.Not(rt.HasTrait("lame")))),
        rt.CountOf(2, setting="outcast", lifepaths=("a", "b")),
        rt.GmPermission(),
        D6,
    ],
    ids=lambda value: type(value).__name__,
)
def test_values_show_compare_and_hash_as_their_dataclass_would(value: rt.Value) -> None:
    reference = _as_dataclass(value)
    assert repr(value) == repr(reference)
    assert hash(value) == hash(reference)
    twin = copy.copy(value)
    assert twin == value and hash(twin) == hash(value)
    assert value != reference  # another class, even with the same fields, as a dataclass compares
    assert value.__eq__(reference) is NotImplemented


def test_values_differ_by_class_and_by_any_compared_field() -> None:
    assert rt.AllOf((rt.TookLifepath("a"),)) != rt.AnyOf((rt.TookLifepath("a"),))
    assert rt.StatBonus(1, 0, 0) != rt.StatBonus(1, 0, 1)
    same = rt.Formula("x", (), lambda v: 1), rt.Formula("x", (), lambda v: 2)
    assert same[0] == same[1] and len(set(same)) == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        rt.StatBonus(1, 0, 0).mental = 2  # type: ignore[misc]


def test_a_registry_builds_each_entity_once_and_only_when_read() -> None:
    built: list[tuple[object, ...]] = []

    def make(*args: object, **keywords: object) -> tuple[object, ...]:
        built.append((*args, keywords))
        return (*args, keywords)

    registry: rt.Registry[tuple[object, ...]] = rt.Registry(
        ((make, ()), (make, ("tags", "extra")), (rt.UNKNOWN, None), (rt.StatBonus, ())),
        {
            "plain": (0, "plain", (-1, "x", (-1,)), (-2, "k", (3, 1, 0, 0)), None, True, -3),
            "keywords": (1, "keywords", (-1, "a"), (2,)),
        },
    )
    assert len(registry) == 2 and list(registry) == ["plain", "keywords"] and "plain" in registry
    assert "nothing" not in registry and built == []  # nothing built to answer these
    plain = registry["plain"]
    assert plain == ("plain", ("x", ()), {"k": rt.StatBonus(1, 0, 0)}, None, True, -3, {})
    assert registry["plain"] is plain and len(built) == 1
    assert registry["keywords"] == ("keywords", {"tags": ("a",), "extra": rt.UNKNOWN})
    with pytest.raises(KeyError):
        registry["nothing"]
    assert registry.get("nothing") is None and len(built) == 2
    assert dict(registry) == {"plain": plain, "keywords": registry["keywords"]} and len(built) == 2
