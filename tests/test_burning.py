"""Burning Wheel character burning through the generated package: the book's own characters."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from .conftest import GENERATED


@pytest.fixture(scope="module")
def bw(generated_packages: Path) -> ModuleType:
    import burning_wheel

    return burning_wheel


def test_varda_the_burning_chapter_example(bw: ModuleType) -> None:
    """pp. 81-103: Citadel Born, Huntsman, Wanderer; every number the chapter states."""
    sheet = bw.burn(["Citadel Born", "elf_wilderlands_huntsman", "elf_wilderlands_wanderer"])
    assert sheet.legal, sheet.violations
    assert sheet.stock == "elf"
    assert sheet.age == 141  # 140 years + 1 lead
    assert (sheet.mental_pool, sheet.physical_pool) == (10, 16)
    assert (sheet.mental, sheet.physical) == (10, 18)  # +1 P twice
    assert (sheet.lifepath_skill_points, sheet.general_skill_points) == (15, 5)
    assert sheet.required_skills == ("elven_script", "call_of_the_wild", "song_of_paths_and_ways")
    assert sheet.trait_points == 3
    assert sheet.required_traits == ("watchful",)
    assert sheet.resource_points == 21


@pytest.mark.parametrize(
    ("lifepaths", "either", "age", "mental", "physical"),
    [
        # The Ambitious Noblewoman, p. 162 (printed age 30, all stats B4 = 8 mental, 16 physical)
        (["Born Noble", "noble_page", "noble_young_lady", "Criminal"], ["P"], 30, 8, 16),
        # The Dwarven Coward, p. 109 (print reads "51"; the lifepaths and two leads give 59)
        (["Born Clansman", "Herder", "Banner Bearer", "Coward"], ["M"], 59, 9, 17),
        # The Elven Lancer, p. 130 (111 years old)
        (["Born Wilder Elf", "elf_wilderlands_rider", "Outrider", "Lancer"], [], 111, 9, 18),
        # Astride the Beast, p. 227 (24 years old)
        (["Born Chattel", "Ravager", "Black Hunter", "Astride the Beast"], [], 24, 5, 17),
    ],
)
def test_the_books_sample_characters(
    bw: ModuleType, lifepaths: list[str], either: list[str], age: int, mental: int, physical: int
) -> None:
    sheet = bw.burn(lifepaths, either=either)
    assert sheet.legal, sheet.violations
    assert (sheet.age, sheet.mental, sheet.physical) == (age, mental, physical)


def test_illegal_paths_say_exactly_why(bw: ModuleType) -> None:
    sheet = bw.burn(["Farmer", "Born Peasant"])
    assert sheet.violations == (
        "Farmer is not a born lifepath, and the first lifepath must be one",
        "Born Peasant is a born lifepath and can only be the first",
    )
    sheet = bw.burn(["Born Peasant", "Farmer", "Village Sergeant"], either=["M"])
    assert sheet.violations == (
        "Village Sergeant (lifepath 3) requires: Village Tough or Squire (Noble Setting) or "
        "Squire (Noble Court Subsetting) or Freebooter or Sergeant-at-Arms or Man-at-Arms",
    )
    sheet = bw.burn(["Born Peasant", "Farmer", "court_young_lady"], either=[])
    assert (
        "Farmer has no lead to the Noble Court Subsetting, so Young Lady (Noble Court Subsetting) cannot follow it"
        in (sheet.violations)
    )


def test_age_and_gender_requirements(bw: ModuleType) -> None:
    # Elder (Peasant) needs a character who starts the game over 50
    young = bw.burn(["Born Peasant", "Farmer", "peasant_elder"], either=["M"])
    assert any("Elder" in v and "age > 50" in v for v in young.violations)
    old = bw.burn(["Born Peasant", "Farmer", "Farmer", "Farmer", "Farmer", "peasant_elder"], either=["M"])
    assert old.age > 50
    assert not any("age" in v for v in old.violations)


def test_repeating_a_lifepath_has_diminishing_returns(bw: ModuleType) -> None:
    """p. 84: the 2nd time earns in full (2nd skill and trait required), the 3rd half, the 4th nothing."""
    sheet = bw.burn(["Born Peasant", "Farmer", "Farmer", "Farmer", "Farmer"])
    assert sheet.lifepath_skill_points == 8 + 8 + 4 + 0
    assert sheet.required_skills == ("farming", "mending", "animal_husbandry")
    assert sheet.physical_bonus == 2  # +1 P the first two times only
    assert sheet.resource_points == 3 + 5 + 5 + 2 + 2
    assert sheet.trait_points == 2 + 1 + 0  # Born Peasant 2, Farmer 1; 2nd Farmer has no 2nd trait: -1
    assert sheet.age == 8 + 4 * 8


def test_unknown_and_ambiguous_names_are_lookup_errors(bw: ModuleType) -> None:
    with pytest.raises(LookupError, match="no lifepath named 'Farmr'"):
        bw.burn(["Born Peasant", "Farmr"])
    with pytest.raises(LookupError, match="could mean several lifepaths"):
        bw.burn(["Born Noble", "Young Lady"])


def test_command_line_sheet() -> None:
    command = [sys.executable, "-m", "burning_wheel", "burn", "Born Peasant", "Farmer"]
    env = {"PYTHONPATH": str(GENERATED), "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    assert result.returncode == 0, result.stderr
    assert "Age:            16" in result.stdout
    assert "Legal path." in result.stdout
    bad = subprocess.run([*command[:4], "Farmer"], capture_output=True, text=True, check=False, env=env)
    assert bad.returncode == 1 and "Not a legal path:" in bad.stdout
    unknown = subprocess.run([*command[:4], "Nobody"], capture_output=True, text=True, check=False, env=env)
    assert unknown.returncode == 2 and "no lifepath named 'Nobody'" in unknown.stderr
