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


# A lifepath whose required trait or skill is a choice (p. 193 Cripple: "Lame or Missing Limb"; Apprentice
# Artisan's third skill, required the third time through: one of five smithing skills).
CRIPPLE = ["City Born", "Cripple"]
ARTISAN = ["City Born", "Apprentice Artisan", "Apprentice Artisan", "Apprentice Artisan"]
SMITHS = "Blacksmith, Coppersmith, Locksmith, Weaponsmith or Whitesmith"


def test_a_required_trait_that_is_a_choice_is_the_players_never_a_guess(bw: ModuleType) -> None:
    unpicked = bw.burn(CRIPPLE)
    assert unpicked.legal and unpicked.required_traits == ()
    assert unpicked.undecided == ("choose Lame or Missing Limb for Cripple (lifepath 2), its required trait",)
    assert "? choose Lame or Missing Limb" in bw.burning.sheet_text(unpicked)
    for pick, trait in (("missing_limb", "missing_limb"), ("Missing Limb", "missing_limb"), ("lame", "lame")):
        picked = bw.burn(CRIPPLE, picks=[pick])
        assert picked.legal and not picked.undecided, (pick, picked.violations)
        assert picked.required_traits == (trait,)
    both = bw.burn(CRIPPLE, picks=["lame", "missing_limb"])
    assert both.required_traits == () and both.violations == (
        "Cripple (lifepath 2) requires one trait of Lame or Missing Limb, but Lame and Missing Limb were picked: "
        "keep one",
    )
    stray = bw.burn(CRIPPLE, picks=["missing_limb", "Matriarchal", "Missing Leg"])
    assert stray.required_traits == ("missing_limb",)
    assert stray.violations == (
        "Matriarchal was picked, but no skill or trait this path requires offers it as a choice",
        "'Missing Leg' was picked, but no skill or trait this path requires offers it as a choice",
    )
    # Taken twice, the choice is still made once; the second time has no further trait: a point fewer
    twice = bw.burn([*CRIPPLE, "Cripple"])
    assert twice.undecided == unpicked.undecided and twice.trait_points == unpicked.trait_points + 1
    assert bw.burn([*CRIPPLE, "Cripple"], picks=["lame"]).required_traits == ("lame",)


def test_a_required_trait_choice_on_the_wilder_elves_path(bw: ModuleType) -> None:
    """The brief's own case: a Matriarch's sheet must not say Patriarchal."""
    path = ["Born Wilder Elf", "Spouse", "Patriarch/Matriarch"]
    assert bw.burn(path, picks=["Matriarchal"]).required_traits == ("matriarchal",)
    assert bw.burn(path).undecided == (
        "choose Patriarchal or Matriarchal for Patriarch/Matriarch (lifepath 3), its required trait",
    )
    # A trait the character already has settles the choice: nothing more is required, nothing to pick
    assert bw.burn(path, traits=["matriarchal"]).undecided == ()
    assert not bw.burn(path, traits=["matriarchal"], picks=["patriarchal"]).legal


def test_a_required_skill_that_is_a_choice_is_the_players_never_a_guess(bw: ModuleType) -> None:
    unpicked = bw.burn(ARTISAN)
    assert unpicked.legal and unpicked.required_skills == ("artisan_wise", "mason")
    assert unpicked.undecided == (f"choose {SMITHS} for Apprentice Artisan (lifepath 4), its required skill",)
    picked = bw.burn(ARTISAN, picks=["Weaponsmith"])
    assert picked.legal and not picked.undecided
    assert picked.required_skills == ("artisan_wise", "mason", "weaponsmith")
    several = bw.burn(ARTISAN, picks=["blacksmith", "locksmith", "whitesmith"])
    assert several.required_skills == ("artisan_wise", "mason") and several.violations == (
        f"Apprentice Artisan (lifepath 4) requires one skill of {SMITHS}, but Blacksmith, Locksmith and "
        "Whitesmith were picked: keep one",
    )
    # Bow is a choice on the Hunter's list, not on this path; twice the artisan never reaches the choice
    assert bw.burn(ARTISAN, picks=["Bow"]).violations == (
        "Bow was picked, but no skill or trait this path requires offers it as a choice",
    )
    assert not bw.burn(ARTISAN[:3], picks=["coppersmith"]).legal


DWARVEN_COMMON = (
    "accustomed_to_the_dark",
    "bearded",
    "greed",
    "oathsworn",
    "shaped_from_earth_and_stone",
    "stout",
    "tough",
)


def test_the_stocks_common_traits_are_on_the_sheet(bw: ModuleType) -> None:
    """Issue 21: a Dwarf's sheet names the seven Dwarven common traits (p. 118) beside Carter's Patient; they
    are free, so the trait points are the lifepaths' alone (Born Clansman 1, Carter 1)."""
    carter = bw.burn(["Born Clansman", "Carter"])
    assert carter.legal, carter.violations
    assert carter.common_traits == DWARVEN_COMMON and carter.required_traits == ("patient",)
    assert carter.trait_points == 2
    assert bw.burn(["Citadel Born", "elf_wilderlands_huntsman"]).common_traits == tuple(bw.STOCKS["elf"].common_traits)
    assert len(bw.burn(["Born Chattel", "Ravager"]).common_traits) == 6  # Orcs
    assert bw.burn(["Born Peasant", "Farmer"]).common_traits == ()  # Men have none (p. 161)
    assert bw.burn(["Farmer"]).common_traits == ()  # an illegal path still names its stock's


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
    assert "Common traits:  none\n" in result.stdout
    dwarf = subprocess.run([*command[:4], "Born Clansman", "Carter"], capture_output=True, text=True, env=env)
    assert dwarf.returncode == 0, dwarf.stderr
    assert "Required traits: Patient\n" in dwarf.stdout
    assert (
        "Common traits:  Accustomed to the Dark, Bearded, Greed, Oathsworn, Shaped from Earth and Stone, Stout, "
        "Tough\n" in dwarf.stdout
    )
    bad = subprocess.run([*command[:4], "Farmer"], capture_output=True, text=True, check=False, env=env)
    assert bad.returncode == 1 and "Not a legal path:" in bad.stdout
    unknown = subprocess.run([*command[:4], "Nobody"], capture_output=True, text=True, check=False, env=env)
    assert unknown.returncode == 2 and "no lifepath named 'Nobody'" in unknown.stderr
    cripple = [*command[:4], *CRIPPLE]
    unpicked = subprocess.run(cripple, capture_output=True, text=True, check=False, env=env)
    assert unpicked.returncode == 0 and "? choose Lame or Missing Limb for Cripple" in unpicked.stdout
    assert "Required traits: none" in unpicked.stdout
    picked = subprocess.run([*cripple, "--pick", "Missing Limb"], capture_output=True, text=True, check=False, env=env)
    assert picked.returncode == 0 and "Required traits: Missing Limb" in picked.stdout
    assert "Legal path.\n" in picked.stdout
    both = [*cripple, "--pick", "lame", "--pick", "missing_limb"]
    assert subprocess.run(both, capture_output=True, text=True, check=False, env=env).returncode == 1


def test_born_slave_takes_one_from_the_pool_the_player_chooses(bw: ModuleType) -> None:
    """Born Slave's stat is -1 M/P: a choice, as +1 M/P is (it was silently ignored: no choice, nothing taken)."""
    mental = bw.burn(["born_slave"], either=["M"])
    physical = bw.burn(["born_slave"], either=["p"])
    assert (mental.mental_bonus, mental.physical_bonus) == (-1, 0)
    assert (physical.mental_bonus, physical.physical_bonus) == (0, -1)
    assert not mental.violations and not physical.violations
    assert "choose M or P for the -1 M/P of Born Slave (lifepath 1)" in bw.burn(["born_slave"], either=[]).violations
