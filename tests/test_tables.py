"""Tables as issue 19 asks for them: reference keys, a key given beside rolled ones, `N x table` cells,
`otherwise` rows and `clamp` without rows past the dice; checked, built, imported and computed (odds exact, in
the package and on the reference)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from rulesdsl.compile.jsonform import defs_schema
from rulesdsl.compile.lower import MAX_REPEAT
from rulesdsl.compile.pipeline import Compilation, compile_paths, parser
from rulesdsl.runtime.core import MAX_CHAIN
from rulesdsl.syntax import fast as fastparse
from rulesdsl.targets.build import render_all
from rulesdsl.tools.fmt import format_text

from .conftest import quality_command, run_python, write_ruleset
from .test_fmt import parsed_shape

SNIPPETS = """
kind species "Species" { size: int = 1 }
kind region "Regions" { climate: text? }
species human "Human" { }
species dwarf "Dwarf" { }
species "Hill Elf" { }
region forest "Forest" { }
region marsh "Marsh" { }

table wounds "Starting wounds" {
  keys: species(ref species)
  columns: wounds(int)
  human -> 12
  dwarf -> 14
  "Hill Elf" -> 10
}
table encounters "Encounters" {
  keys: region(ref region), roll(int)
  roll: region, 1d20
  columns: what
  forest, 1-12  -> "wolves"
  forest, 13-20 -> "a hermit"
  marsh, 1-20   -> "bog lights"
}
table treasure "Treasure" {
  roll: 1d6
  columns: result, then(rolls)
  1-5 -> "copper bits", none
  6   -> "roll twice more", 2 x treasure
}
table slots "Spell slots" {
  keys: level(int), slot(int)
  columns: count(int)
  1, 1 -> 2
  2, 1 -> 3
  otherwise -> 0
}
table reaction "Reaction" {
  roll: 2d6 + 0..2
  clamp: yes
  columns: mood
  2-5  -> hostile
  6-8  -> wary
  9-12 -> friendly
}
table weather "Weather" {
  roll: 1d6
  columns: sky
  1-2 -> rain
  3   -> sun
  otherwise -> fog
}
table lairs "Lairs" {
  keys: region(ref region), roll(int)
  roll: region, 1d6
  columns: what, then(rolls)
  forest, 1-5 -> "a den", none
  forest, 6   -> "tracks", encounters
  marsh, 1-6  -> "a hollow", none
}
"""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Compilation:
    folder = write_ruleset(tmp_path_factory.mktemp("rules") / "demo", {"t.rules": SNIPPETS})
    return compile_paths([folder])


@pytest.fixture(scope="module")
def files(compiled: Compilation) -> dict[str, str]:
    return render_all(compiled.rulesets)


@pytest.fixture(scope="module")
def out(files: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("gen")
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def compute(out: Path, code: str) -> list[str]:
    result = run_python("import random\nfrom fractions import Fraction\nfrom demo import tables as T\n" + code, out)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_the_snippets_check_clean(compiled: Compilation) -> None:
    assert [(d.code, d.message) for d in compiled.diagnostics] == []


def test_reference_keys_are_looked_up_by_id(out: Path) -> None:
    code = "print(T.WOUNDS.lookup('human').wounds, T.WOUNDS.lookup('hill_elf').wounds, T.WOUNDS.lookup('Dwarf').wounds)"
    assert compute(out, code) == ["12 10 14"]


def test_a_given_key_rolls_the_rest_and_its_odds_are_per_value(out: Path) -> None:
    code = """
rolled = T.ENCOUNTERS.roll(random.Random(1), region="marsh")
print(rolled.given, rolled.row.what, 1 <= rolled.numbers[0] <= 20)
print([(r.value.what, c) for r, c in T.ENCOUNTERS.chances(region="forest")])
print([(r.value.what, c) for r, c in T.ENCOUNTERS.chances(region="marsh")])
seen = {T.ENCOUNTERS.roll(random.Random(seed), region="forest").row.what for seed in range(60)}
print(sorted(seen))
try:
    T.ENCOUNTERS.roll(random.Random(1))
except TypeError as exc:
    print("TypeError", exc)
"""
    assert compute(out, code) == [
        "('marsh',) bog lights True",
        "[('wolves', Fraction(3, 5)), ('a hermit', Fraction(2, 5))]",
        "[('bog lights', Fraction(1, 1))]",
        "['a hermit', 'wolves']",
        "TypeError Encounters is rolled for a region: roll(rng, region=...)",
    ]


def test_n_x_table_is_followed_n_times(out: Path) -> None:
    code = """
for seed in range(200):
    steps = T.TREASURE.roll_chain(random.Random(seed))
    if steps[0].numbers == (6,):
        break
print(steps[0].row.then, len(steps) >= 3)
# every roll of a 6 asks for two more: the chain has 1 + 2 * (number of sixes) rolls
for seed in range(50):
    steps = T.TREASURE.roll_chain(random.Random(seed))
    assert len(steps) == 1 + 2 * sum(s.numbers == (6,) for s in steps), steps
print("ok")
"""
    assert compute(out, code) == ["Rolls(times=2, table='treasure') True", "ok"]


def test_a_chain_passes_on_the_keys_it_is_given(out: Path) -> None:
    code = """
for seed in range(300):
    steps = T.LAIRS.roll_chain(random.Random(seed), region="forest")
    if len(steps) > 1:
        break
print([(s.table, s.given) for s in steps])
"""
    assert compute(out, code) == ["[('lairs', ('forest',)), ('encounters', ('forest',))]"]


def test_otherwise_fills_what_no_row_names(out: Path) -> None:
    code = """
print(T.SLOTS.lookup(1, 1).count, T.SLOTS.lookup(2, 1).count, T.SLOTS.lookup(9, 4).count)
print([(r.key_text, r.value.sky, c) for r, c in T.WEATHER.chances()])
print(sorted({T.WEATHER.roll(random.Random(s)).row.sky for s in range(80)}))
"""
    assert compute(out, code) == [
        "2 3 0",
        "[('1-2', 'rain', Fraction(1, 3)), ('3', 'sun', Fraction(1, 6)), ('otherwise', 'fog', Fraction(1, 2))]",
        "['fog', 'rain', 'sun']",
    ]


def test_clamp_lands_past_the_rows_on_the_last_row(out: Path) -> None:
    code = """
chances = T.REACTION.chances(modifier=2)
print([(r.value.mood, c) for r, c in chances], sum(c for _, c in chances))
rolled = [T.REACTION.roll(random.Random(s), modifier=2) for s in range(200)]
print(any(r.clamped and r.numbers[0] > 12 and r.row.mood == "friendly" for r in rolled))
"""
    # on 2d6 + 2: hostile is 2-3 on the dice (3/36), wary 4-6 (12/36); friendly 9-12 is 7-10 on the dice, and
    # 13-14 (11-12 on the dice) lands on it too: 21/36
    assert compute(out, code) == [
        "[('hostile', Fraction(1, 12)), ('wary', Fraction(1, 3)), ('friendly', Fraction(7, 12))] 1",
        "True",
    ]


def test_the_package_is_lint_and_type_clean(out: Path) -> None:
    for tool in ("ruff", "mypy"):
        result = subprocess.run(quality_command(tool, "demo"), cwd=out, capture_output=True, text=True, check=False)
        assert result.returncode == 0, result.stdout + result.stderr


def test_the_reference_links_keys_and_shows_odds_per_value(files: dict[str, str]) -> None:
    page = next(
        text
        for name, text in files.items()
        if name.startswith("site/") and name.endswith(".html") and "Encounters" in text and "bog lights" in text
    )
    assert 'href="' in page and "Rolled for a given Region" in page
    assert "60%" in page and "40%" in page and "100%" in page  # wolves, a hermit; bog lights: per region
    wounds = next(
        text
        for name, text in files.items()
        if name.startswith("site/") and name.endswith(".html") and "Starting wounds" in text and "Hill Elf" in text
    )
    assert ">Hill Elf</a>" in wounds  # the key links to the species
    weather = next(
        text
        for name, text in files.items()
        if name.startswith("site/") and name.endswith(".html") and "Weather" in text and "fog" in text
    )
    assert "otherwise" in weather and "50% (1/2)" in weather


Check = Callable[[str], list[tuple[str, str]]]


@pytest.fixture
def check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Check:
    monkeypatch.chdir(tmp_path)

    def run(text: str) -> list[tuple[str, str]]:
        folder = write_ruleset(tmp_path / "rules" / "demo", {"a.rules": text})
        return [(d.code, d.message) for d in compile_paths([folder]).diagnostics]

    return run


def test_coverage_is_per_value_of_a_given_key(check: Check) -> None:
    found = check("""
        kind region "Regions" { climate: text? }
        region forest "Forest" { }
        region marsh "Marsh" { }
        table e "E" {
          keys: region(ref region), roll(int)
          roll: region, 1d20
          columns: what
          forest, 1-12 -> a
          forest, 10-20 -> b
          marsh, 1-19 -> c
        }
    """)
    assert ("E314", "rows forest, 1-12 and forest, 10-20 overlap on forest, 10-12") in found
    assert ("E315", "no row for marsh, 20") in found


def test_clamp_needs_rows_for_the_dice_not_for_the_modifiers(check: Check) -> None:
    table = """
        table r "R" {
          roll: 1d6 + 0..2
          %s
          columns: what
          1-3 -> a
          4-6 -> b
        }
    """
    assert check(table % "clamp: yes") == []
    assert check(table % "") == [("E315", "no row for 7-8 (1d6 + 0..2 rolls 1-8)")]


def test_a_chain_that_would_keep_rolling_is_an_error(check: Check) -> None:
    """`2-6 -> 3 x boom` on a d6 leads to 2.5 more rolls per roll: it checked clean, then roll_chain gave up
    after 1,000 rolls. Each roll must lead to fewer than one more on average (also round a cycle)."""
    boom = 'table boom "Boom" { roll: 1d6  columns: then(rolls)\n  1 -> none\n  2-6 -> 3 x boom\n}\n'
    assert check(boom) == [
        ("E317", "rolling on boom may never end: on average each roll leads to 2.5 more that go on rolling")
    ]
    exactly_one = 'table a "A" { roll: 1d6  columns: then(rolls)\n  1-3 -> none\n  4-6 -> 2 x a\n}\n'
    assert [code for code, _ in check(exactly_one)] == ["E317"]
    cycle = (
        'table a "A" { roll: 1d6  columns: then(rolls)\n  1-2 -> none\n  3-6 -> 2 x b\n}\n'
        'table b "B" { roll: 1d6  columns: then(rolls)\n  1 -> none\n  2-6 -> a\n}\n'
    )
    assert [code for code, _ in check(cycle)] == ["E317"]


def test_a_chain_that_ends_on_average_rolls_to_its_end(tmp_path: Path) -> None:
    folder = write_ruleset(
        tmp_path / "rules" / "demo",
        {"a.rules": 'table boom "Boom" { roll: 1d6  columns: then(rolls)\n  1-5 -> none\n  6 -> 2 x boom\n}\n'},
    )
    result = compile_paths([folder])
    assert result.ok, [d.message for d in result.diagnostics]
    out = tmp_path / "gen"
    for name, text in render_all(result.rulesets).items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text, encoding="utf-8")
    code = f"""
import random
from demo import tables as T
lengths = [len(T.BOOM.roll_chain(random.Random(seed))) for seed in range(2000)]
print(max(lengths) < {MAX_CHAIN}, round(sum(lengths) / len(lengths), 1))
"""
    result_run = run_python(code, out)
    # on average 1 / (1 - 2/6) = 1.5 rolls
    assert result_run.stdout.split() == ["True", "1.5"], result_run.stderr


def test_the_new_forms_format_back_and_parse_fast_as_lark_does() -> None:
    text = SNIPPETS + 'table t "T" { roll: 1d6  columns: then(rolls)\n  1-6 -> 12 x "Treasure"\n}\n'
    formatted = format_text(text)
    assert parsed_shape(formatted) == parsed_shape(text)
    assert format_text(formatted) == formatted
    assert "2 x treasure" in formatted and "otherwise -> 0" in formatted and "roll: region, 1d20" in formatted
    for source in (text, formatted):
        lark, problems = parser().parse_with_lark("t.rules", source)
        assert problems == [] and fastparse.parse("t.rules", source) == lark


def test_n_x_table_is_bounded_at_its_edge(check: Check) -> None:
    # rare enough that the chain ends (E317 otherwise): one roll in 1,000 rolls again
    table = 'table t "T" { roll: 1d1000  columns: then(rolls)\n  1-999 -> none\n  1000 -> %d x t\n}\n'
    assert check(table % MAX_REPEAT) == []
    assert check(table % (MAX_REPEAT + 1)) == [
        ("E201", f"column 'then': a roll on a table {MAX_REPEAT + 1} times; a cell rolls 1 to {MAX_REPEAT} times")
    ]
    assert defs_schema()["$defs"]["rolls"]["properties"]["times"]["maximum"] == MAX_REPEAT
