"""The Witcher damage excerpt (pp. 154-158): its worked examples and every table row, through the generated package."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from types import ModuleType

import pytest


@pytest.fixture(scope="module")
def witcher(generated_packages: Path) -> ModuleType:
    import witcher

    return witcher


# --- Layering (pp. 155-156)

BONUS_ARMOR = [(0, 4, 5), (5, 8, 4), (9, 14, 3), (15, 20, 2)]


@pytest.mark.parametrize(("low", "high", "bonus"), BONUS_ARMOR)
def test_bonus_armor_rows(witcher: ModuleType, low: int, high: int, bonus: int) -> None:
    table = witcher.TABLES["bonus_armor"]
    for difference in range(low, high + 1):
        assert table.lookup(difference).bonus == bonus, difference


def test_bonus_armor_has_no_row_over_20(witcher: ModuleType) -> None:
    assert [row.key_text for row in witcher.TABLES["bonus_armor"]] == ["0-4", "5-8", "9-14", "15-20"]
    with pytest.raises(LookupError):
        witcher.TABLES["bonus_armor"].lookup(21)
    with pytest.raises(LookupError):
        witcher.layered_sp(a=25, b=3)


def test_layering_example_gambeson_brigandine_plate(witcher: ModuleType) -> None:
    """p. 156: gambeson 3 + brigandine 12 -> 15 (difference 9, +3); 15 against plate 20 -> 24 (difference 5, +4)."""
    assert witcher.layered_sp(a=3, b=12) == 15
    assert witcher.layered_sp(a=15, b=20) == 24
    assert witcher.layered_sp(a=12, b=3) == 15  # order inside a pair does not matter
    assert witcher.layered_sp3(a=3, b=12, c=20) == 24
    assert witcher.layered_sp3(a=3, b=12, c=20) == witcher.layered_sp(a=witcher.layered_sp(a=3, b=12), b=20)
    assert witcher.FORMULAS["layered_sp3"](a=3, b=12, c=20) == 24


def test_layering_example_encumbrance(witcher: ModuleType) -> None:
    """p. 156: the same three layers have EV 3 (first light/medium layer free, medium +1, heavy +2)."""
    table = witcher.TABLES["layering_ev"]
    layers = ["light", "medium", "heavy"]  # gambeson, brigandine, plate
    ev = 0
    free_used = False
    for kind in layers:
        row = table.lookup(kind)
        if row.first_is_free and not free_used:
            free_used = True
            continue
        ev += row.ev
    assert ev == 3
    assert [(table.lookup(k).ev, table.lookup(k).first_is_free) for k in layers] == [(1, True), (1, True), (2, False)]


def test_layering_limits_allow_the_example(witcher: ModuleType) -> None:
    limits = witcher.TABLES["layer_limits"]
    assert (limits.lookup("total").max_layers, limits.lookup("heavy").max_layers) == (3, 1)
    assert limits.lookup("medium").max_layers == 1
    layers = ["light", "medium", "heavy"]
    assert len(layers) <= limits.lookup("total").max_layers
    for kind in ("heavy", "medium"):
        assert layers.count(kind) <= limits.lookup(kind).max_layers
    with pytest.raises(LookupError):
        limits.lookup("light")  # no limit of its own beyond the total


# --- Cover and human shields (p. 156)

COVER = [
    ("Stone wall", 30),
    ("Large tree", 30),
    ("Brick wall", 25),
    ("Wooden wall", 5),
    ("Heavy wooden door", 15),
    ("Steel door", 20),
    ("Cart", 10),
    ("Tent", 5),
    ("Thatch roof", 7),
    ("Wooden barrel", 10),
    ("Brambles", 7),
]


def test_common_cover_rows(witcher: ModuleType) -> None:
    table = witcher.TABLES["common_cover"]
    assert [(row.key_text, row.value.sp) for row in table] == COVER
    for name, sp in COVER:
        assert table.lookup(name).sp == sp
    assert table.source == "p. 156"


def test_human_shield(witcher: ModuleType) -> None:
    assert witcher.human_shield_sp(body=6, torso_sp=12) == 18
    assert witcher.human_shield_sp(body=4, torso_sp=0) == 4


# --- Resistance, piercing, staged penetration (pp. 155-157)


def test_damage_resistance_halves(witcher: ModuleType) -> None:
    assert witcher.resisted_damage(damage=10) == 5
    assert witcher.resisted_damage(damage=7) == Fraction(7, 2)  # rounding is not stated


def test_armor_piercing_levels(witcher: ModuleType) -> None:
    table = witcher.TABLES["armor_piercing"]
    assert [row.key_text for row in table] == ["Armor piercing", "Improved armor piercing"]
    plain, improved = table.lookup("Armor piercing"), table.lookup("Improved armor piercing")
    assert (plain.ignores_resistance, plain.sp) == (True, Fraction(1))
    assert (improved.ignores_resistance, improved.sp) == (True, Fraction(1, 2))
    assert 20 * improved.sp == 10


def test_staged_penetration(witcher: ModuleType) -> None:
    assert witcher.staged_sp(sp=12, hits=1) == 11
    assert witcher.staged_sp(sp=12, hits=3) == 9
    assert witcher.staged_sp(sp=2, hits=5) == 0  # broken, soaks nothing
    assert witcher.worn_by_blocks(value=10, blocks=1) == 9
    assert witcher.worn_by_blocks(value=1, blocks=2) == 0


# --- Wounds (p. 157)

THRESHOLDS = [
    (15, 3),
    (20, 4),
    (25, 5),
    (30, 6),
    (35, 7),
    (40, 8),
    (45, 9),
    (50, 10),
    (55, 11),
    (60, 12),
    (65, 13),
    (70, 14),
]


def test_wound_thresholds(witcher: ModuleType) -> None:
    table = witcher.TABLES["wound_threshold"]
    assert [(int(row.key_text), row.value.threshold) for row in table] == THRESHOLDS
    for health, threshold in THRESHOLDS:
        assert table.lookup(health).threshold == threshold == health // 5
    with pytest.raises(LookupError):
        table.lookup(75)


def test_wound_effects(witcher: ModuleType) -> None:
    table = witcher.TABLES["wound_effects"]
    assert [row.key_text for row in table] == ["REF", "DEX", "INT", "WILL"]
    assert all(row.value.factor == Fraction(1, 2) for row in table)
    assert 8 * table.lookup("REF").factor == 4


# --- Criticals and fumbles (p. 157)


def test_criticals(witcher: ModuleType) -> None:
    d10 = witcher.MECHANICS["witcher_d10"]
    assert (d10.sides, d10.explode_on, d10.fumble_on, d10.floor) == (10, 10, 1, 0)
    assert d10.total([10, 7]) == 17
    assert d10.total([10, 10, 3]) == 23  # a second 10 adds to the 20 already rolled
    assert d10.total([6], base=13) == 19


def test_fumbles(witcher: ModuleType) -> None:
    d10 = witcher.MECHANICS["witcher_d10"]
    assert d10.total([1, 7], base=13) == 6  # REF 7 + Swordsmanship 6
    assert d10.total([1, 10, 4], base=13) == 0  # 14 off 13 bottoms out


MELEE = "Reflex (Melee)"
DEFENDING = "Reflex (Defending)"
FUMBLES = [
    (range(1, 6), MELEE, None),
    ([6], MELEE, None),
    ([7], MELEE, None),
    ([8], MELEE, "1d10"),
    ([9], MELEE, None),
    ([10, 11, 14, 30], MELEE, None),
    (range(1, 6), DEFENDING, None),
    ([6], DEFENDING, "1d6"),
    ([7], DEFENDING, "1d6"),
    ([8], DEFENDING, None),
    ([9], DEFENDING, "2d6"),
    ([10, 11, 14, 30], DEFENDING, None),
]


@pytest.mark.parametrize(("rolls", "roll_type", "dice"), FUMBLES)
def test_fumble_rows_and_dice(witcher: ModuleType, rolls: list[int], roll_type: str, dice: str | None) -> None:
    table = witcher.TABLES["fumbles"]
    for roll in rolls:
        row = table.lookup(roll, roll_type)
        assert (row.dice.text if row.dice else None) == dice, roll
        if dice is not None:
            assert (row.dice.minimum, row.dice.maximum) == {"1d10": (1, 10), "1d6": (1, 6), "2d6": (2, 12)}[dice]


def test_fumble_table_shape(witcher: ModuleType) -> None:
    table = witcher.TABLES["fumbles"]
    assert [row.key_text for row in table] == [
        f"{k}, {t}" for t in (MELEE, DEFENDING) for k in ("1-5", "6", "7", "8", "9", "10+")
    ]
    assert table.lookup(3, MELEE).effect == table.lookup(3, DEFENDING).effect == "no serious mishap"
    assert "staggered" in table.lookup(6, MELEE).effect
    assert "1 round" in table.lookup(7, MELEE).effect
    assert "prone" in table.lookup(8, DEFENDING).effect
    assert "cut off" in table.lookup(10, DEFENDING).effect  # the excerpt ends mid-row
    with pytest.raises(LookupError):
        table.lookup(7, "Reflex (Ranged)")


def test_the_fumble_example_lands_on_the_table(witcher: ModuleType) -> None:
    """The 7 subtracted after a 1 reads row 7; the 1, 10, 4 chain subtracts 14, a 10+ row."""
    table = witcher.TABLES["fumbles"]
    assert "stuck" in table.lookup(7, MELEE).effect
    assert table.lookup(10 + 4, MELEE) is table.lookup(10, MELEE)


# --- Modifiers (pp. 154-155)


def test_combat_modifiers(witcher: ModuleType) -> None:
    table = witcher.TABLES["combat_modifiers"]
    assert [row.key_text for row in table] == ["Strong strike", "Fast draw", "Ambush", "Party initiative"]
    strong, fast, ambush, party = (
        table.lookup(n) for n in ("Strong strike", "Fast draw", "Ambush", "Party initiative")
    )
    assert (strong.attack, strong.damage, strong.initiative.evaluate(INIT=12)) == (-3, Fraction(2), 12)
    assert (fast.attack, fast.damage, fast.initiative.evaluate(INIT=12)) == (-3, Fraction(1), 15)
    assert (ambush.attack, ambush.damage, ambush.initiative.evaluate(INIT=12)) == (5, Fraction(1), 12)
    assert (party.attack, party.damage) == (0, Fraction(1))
    assert party.initiative.names == ("LEADER", "REF")
    assert party.initiative.evaluate(LEADER=7, REF=6) == 13
    assert "no aiming" in fast.limits
    assert "unaware" in ambush.limits


def test_damage_categories_types_and_attacks_on_every_location(witcher: ModuleType) -> None:
    """p. 154: lethal and non-lethal damage, four damage types; p. 156: bombs hit every location."""
    assert sorted(witcher.DAMAGE_CATEGORIES) == ["lethal", "non_lethal"]
    assert "dying" in witcher.DAMAGE_CATEGORIES["lethal"].at_health
    assert "unconscious" in witcher.DAMAGE_CATEGORIES["non_lethal"].at_health
    assert witcher.damage_state(lethal=30, non_lethal=0, hp=30) == 2
    assert witcher.damage_state(lethal=10, non_lethal=30, hp=30) == 1
    assert witcher.damage_state(lethal=29, non_lethal=29, hp=30) == 0
    assert sorted(witcher.DAMAGE_TYPES) == ["bludgeoning", "elemental", "piercing", "slashing"]
    bombs = witcher.AREA_ATTACKS["bombs_and_traps"]
    assert (bombs.hits, bombs.damage) == ("every_location", "rolled_per_location")
    assert witcher.AREA_ATTACKS["some_spells"].damage is witcher.runtime.UNKNOWN
    assert "next round" in witcher.COMBAT_OPTIONS["hold_action"].limit


# --- The damage pipeline as one formula (pp. 154-156)
# The excerpt prints no numbered example of a whole hit, so these follow its stated order and numbers:
# cover SP first (p. 156), resistance halves before armour (p. 155), armour SP (p. 155), then the location's
# multiplier on what is left (p. 154), with the excerpt's own cover SPs and its layering example's SP 24.


def test_locations_agree_with_the_hit_location_tables(witcher: ModuleType) -> None:
    locations = witcher.LOCATIONS
    by_name = {location.name: location for location in locations.values()}
    for table, body in (("humanoid_hit_location", "humanoid"), ("monster_hit_location", "monster")):
        rows = list(witcher.TABLES[table])
        assert {row.value.location for row in rows} == {n for n, loc in by_name.items() if body in loc.on}
        for row in rows:
            location = by_name[row.value.location]
            assert (location.penalty, location.multiplier) == (row.value.to_hit, row.value.damage), row.key_text
            assert location.source == "p. 155"


def test_damage_taken_location_multiplier(witcher: ModuleType) -> None:
    """p. 154: what is left after armour is multiplied by the location's factor (x3 head, x1 torso, x1/2 limbs)."""
    hit = {"raw": 14, "cover_sp": 0, "resistant": False, "sp": 4}
    assert witcher.damage_taken(**hit, where="head") == 30
    assert witcher.damage_taken(**hit, where="torso") == 10
    assert witcher.damage_taken(**hit, where="l_leg") == 5
    assert witcher.damage_taken(**hit, where="special") == 5
    assert witcher.damage_taken(raw=13, cover_sp=0, resistant=False, sp=4, where="r_arm") == Fraction(9, 2)
    assert witcher.FORMULAS["damage_taken"](**hit, where="head") == 30


def test_damage_taken_halves_before_armour(witcher: ModuleType) -> None:
    """p. 155: resisted damage is halved before armour SP comes off, so 20 against SP 6 leaves 4, not 7."""
    assert witcher.damage_taken(raw=20, cover_sp=0, resistant=True, sp=6, where="torso") == 4
    assert witcher.damage_taken(raw=20, cover_sp=0, resistant=False, sp=6, where="torso") == 14
    assert (
        witcher.damage_taken(raw=20, cover_sp=0, resistant=True, sp=6, where="torso")
        == witcher.resisted_damage(damage=20) - 6
    )
    assert witcher.damage_taken(raw=9, cover_sp=0, resistant=True, sp=0, where="torso") == Fraction(9, 2)


def test_damage_taken_through_cover_then_armour(witcher: ModuleType) -> None:
    """p. 156: only damage over the cover's SP goes on, and it must still get through armour."""
    barrel = witcher.TABLES["common_cover"].lookup("Wooden barrel").sp
    stone = witcher.TABLES["common_cover"].lookup("Stone wall").sp
    torso_sp = witcher.layered_sp3(a=3, b=12, c=20)  # the layering example's armour, SP 24
    assert witcher.damage_taken(raw=40, cover_sp=barrel, resistant=False, sp=torso_sp, where="torso") == 6
    assert witcher.damage_taken(raw=40, cover_sp=barrel, resistant=False, sp=torso_sp, where="head") == 18
    assert witcher.damage_taken(raw=25, cover_sp=stone, resistant=False, sp=0, where="head") == 0
    assert witcher.damage_taken(raw=30, cover_sp=0, resistant=False, sp=torso_sp, where="head") == 18
    shield = witcher.human_shield_sp(body=6, torso_sp=12)  # a human shield is cover of BODY + torso SP
    assert witcher.damage_taken(raw=20, cover_sp=shield, resistant=False, sp=0, where="torso") == 2


def test_damage_taken_armour_stops_everything(witcher: ModuleType) -> None:
    assert witcher.damage_taken(raw=10, cover_sp=0, resistant=False, sp=24, where="head") == 0
    assert witcher.damage_taken(raw=0, cover_sp=5, resistant=True, sp=0, where="head") == 0


def test_damage_taken_with_a_strong_strike(witcher: ModuleType) -> None:
    """pp. 154-155: a strong strike doubles the damage rolled, before any of the steps."""
    double = witcher.TABLES["combat_modifiers"].lookup("Strong strike").damage
    assert witcher.damage_taken(raw=int(12 * double), cover_sp=0, resistant=False, sp=4, where="head") == 60


def test_damage_taken_refuses_an_unknown_location(witcher: ModuleType) -> None:
    with pytest.raises(ValueError, match="neck"):
        witcher.damage_taken(raw=10, cover_sp=0, resistant=False, sp=0, where="neck")
