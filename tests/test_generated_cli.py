"""`python -m <package>`: list, readable roll and lookup, did-you-mean for misspelled names."""

from __future__ import annotations

import subprocess
import sys

from .conftest import GENERATED


def run(package: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(GENERATED), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-m", package, *args], capture_output=True, text=True, check=False, env=env)


def test_list_a_kind() -> None:
    result = run("burning_wheel", "list", "skills")
    lines = result.stdout.splitlines()
    assert result.returncode == 0 and len(lines) == 642
    assert lines[0].split() == ["abbey_wise", "Abbey-wise"]
    assert run("witcher", "list", "table").stdout.splitlines()[0].startswith("armor_piercing")
    wrong = run("witcher", "list", "tabels")
    assert wrong.returncode == 2 and "did you mean 'table'?" in wrong.stderr


def test_roll_and_lookup_read_like_the_book() -> None:
    rolled = run("witcher", "roll", "Humanoid Hit Location", "--seed", "1")
    assert rolled.returncode == 0, rolled.stderr
    assert rolled.stdout.startswith("Humanoid Hit Location: 1d10 -> ")
    assert "  location: " in rolled.stdout and "Row(" not in rolled.stdout and "Fraction" not in rolled.stdout
    looked = run("riddle_of_steel", "lookup", "damage_table", "III", "2")
    assert looked.returncode == 0, looked.stderr
    assert looked.stdout.splitlines()[1:4] == ["  blood loss: 5", "  shock: 3", "  pain: 6 - PRS"]
    half = run("witcher", "lookup", "humanoid_hit_location", "6")
    assert "  damage: 1/2" in half.stdout


def test_misspelled_names_get_suggestions() -> None:
    table = run("witcher", "roll", "hit_locaton")
    assert table.returncode == 2 and "no table named 'hit_locaton'; did you mean" in table.stderr
    assert "humanoid_hit_location" in table.stderr
    row = run("riddle_of_steel", "lookup", "damage_table", "IIII", "2")
    assert row.returncode == 2 and "did you mean 'III'" in row.stderr
    lifepath = run("burning_wheel", "burn", "Born Peasnt", "Farmer")
    assert lifepath.returncode == 2 and "did you mean 'Born Peasant'" in lifepath.stderr
    unrolled = run("witcher", "roll", "bonus_armor")
    assert unrolled.returncode == 2 and "use: lookup bonus_armor KEY" in unrolled.stderr


def test_burn_only_where_there_are_lifepaths() -> None:
    assert "burn" in run("burning_wheel", "--help").stdout
    assert "burn" not in run("witcher", "--help").stdout
