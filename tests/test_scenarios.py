"""Scenarios: the seeds' own numbers computed through the generated packages in generated/."""

from __future__ import annotations

import random
from fractions import Fraction
from pathlib import Path
from types import ModuleType

import pytest


@pytest.fixture(scope="module")
def generated(generated_packages: Path) -> None:
    return None


def load(name: str) -> ModuleType:
    import importlib

    return importlib.import_module(name)


# --- The Witcher: both hit-location tables, every row (p. 155)

HUMANOID = [
    (1, "Head", -6, Fraction(3)),
    (2, "Torso", -1, Fraction(1)),
    (3, "Torso", -1, Fraction(1)),
    (4, "Torso", -1, Fraction(1)),
    (5, "R. Arm", -3, Fraction(1, 2)),
    (6, "L. Arm", -3, Fraction(1, 2)),
    (7, "R. Leg", -2, Fraction(1, 2)),
    (8, "R. Leg", -2, Fraction(1, 2)),
    (9, "L. Leg", -2, Fraction(1, 2)),
    (10, "L. Leg", -2, Fraction(1, 2)),
]
MONSTER = [
    (1, "Head", -6, Fraction(3)),
    (2, "Torso", -1, Fraction(1)),
    (3, "Torso", -1, Fraction(1)),
    (4, "Torso", -1, Fraction(1)),
    (5, "R. Limb", -3, Fraction(1, 2)),
    (6, "R. Limb", -3, Fraction(1, 2)),
    (7, "R. Limb", -3, Fraction(1, 2)),
    (8, "L. Limb", -3, Fraction(1, 2)),
    (9, "L. Limb", -3, Fraction(1, 2)),
    (10, "Special", -2, Fraction(1, 2)),
]


@pytest.mark.parametrize(("table", "rows"), [("humanoid_hit_location", HUMANOID), ("monster_hit_location", MONSTER)])
def test_witcher_hit_locations(generated: None, table: str, rows: list[tuple[int, str, int, Fraction]]) -> None:
    witcher = load("witcher")
    for roll, location, to_hit, damage in rows:
        row = witcher.TABLES[table].lookup(roll)
        assert (row.location, row.to_hit, row.damage) == (location, to_hit, damage), roll
    assert witcher.TABLES[table].dice.text == "1d10"
    chances = [c for _, c in witcher.TABLES[table].chances()]
    assert sum(chances) == 1


def test_witcher_rolls_are_reproducible(generated: None) -> None:
    witcher = load("witcher")
    table = witcher.TABLES["humanoid_hit_location"]
    first = [table.roll(random.Random(7)) for _ in range(3)]
    assert first == [table.roll(random.Random(7)) for _ in range(3)]
    rng = random.Random(42)
    seen = {table.roll(rng).row.location for _ in range(500)}
    assert seen == {"Head", "Torso", "R. Arm", "L. Arm", "R. Leg", "L. Leg"}


# --- The Riddle of Steel: derived attributes (p. 10)


@pytest.mark.parametrize(
    ("agl", "brn", "wts", "prs", "crd", "res", "mov"),
    [(6, 5, 5, 4, 5, 4, 8), (4, 4, 4, 4, 4, 4, 6), (7, 2, 2, 7, 4, 4, 8), (2, 7, 7, 2, 4, 4, 5)],
)
def test_riddle_of_steel_derived_attributes(
    generated: None, agl: int, brn: int, wts: int, prs: int, crd: int, res: int, mov: int
) -> None:
    ros = load("riddle_of_steel")
    assert ros.coordination(AGL=agl, WTS=wts) == crd
    assert ros.resistance(BRN=brn, PRS=prs) == res
    assert ros.move(AGL=agl, BRN=brn) == mov
    derived = ros.derive_attributes({"agility": agl, "brawn": brn, "wits": wts, "presence": prs})
    assert (derived["coordination"], derived["resistance"], derived["move"]) == (crd, res, mov)
