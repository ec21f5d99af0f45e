"""Hostile input: each reproducer of issue 8 as a regression test (the seed corpus in tests/fuzz_corpus/
holds them too), and the positions and echoed lines of characters that end lines for some readers."""

from __future__ import annotations

import cProfile
import difflib
import pstats
import random
import string
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rulesdsl.compile.pipeline import Compilation, compile_paths, prelude
from rulesdsl.diagnostics import HINT_LENGTH, Suggestions, did_you_mean, render_text, source_lines
from rulesdsl.runtime.core import Dice, DiceTerm
from rulesdsl.syntax.parse import field_before, split_blocks
from rulesdsl.targets.build import render_all, write_output
from rulesdsl.tools.fmt import format_text
from rulesdsl.tools.importer import convert

from .conftest import run_python, write_ruleset

Compile = Callable[..., Compilation]


def codes(result: Compilation) -> list[str]:
    return [d.code for d in result.diagnostics]


# ---------------------------------------------------------------- internal errors that were


def test_a_lone_surrogate_is_an_escape_error_not_a_crash(compile_rules: Compile) -> None:
    result = compile_rules(
        {"a.rules": 'trait "\\ud800" { type: die }\ntrait T { type: die  description: "\\udfff" }\n'}
    )
    assert codes(result) == ["E102", "E102"]
    assert result.diagnostics[0].message == "'\\ud800' is half of a surrogate pair, not a character"
    assert result.diagnostics[0].pos is not None
    assert (result.diagnostics[0].pos.column, result.diagnostics[0].pos.end_column) == (8, 14)


def test_a_surrogate_pair_is_one_character_that_builds(compile_rules: Compile, tmp_path: Path) -> None:
    result = compile_rules({"a.rules": 'trait "Grin \\ud83d\\ude00" { type: die }\n'})
    assert result.ok, codes(result)
    write_output(tmp_path / "out", render_all(result.rulesets))
    ran = run_python("import demo; print(ascii(demo.TRAITS['grin'].name))", tmp_path / "out")
    assert ran.stdout.strip() == "'Grin \\U0001f600'", ran.stderr


def test_or_over_a_fraction_in_a_requirement_is_reported(compile_rules: Compile) -> None:
    setting = "stock s { }\nsetting z { stock: s }\n"
    result = compile_rules({"a.rules": setting + "lifepath L { time: 5 yrs  resources: 1  requires: e or h/n }\n"})
    assert codes(result) == ["E201"]


def test_a_multiplier_over_zero_is_reported(compile_rules: Compile) -> None:
    """Found by the long fuzz run: `x11/0` was a ZeroDivisionError (exit 3)."""
    kind = "kind gear { bonus: multiplier }\ngear g { bonus: x11/0 }\n"
    result = compile_rules({"a.rules": kind + "formula f { formula: 2 * x3/0 }\n"})
    assert codes(result) == ["E201", "E201"]
    assert [d.message for d in result.diagnostics] == ["x11/0 divides by zero", "x3/0 divides by zero"]


def test_calling_a_formula_without_a_formula_field_is_reported(compile_rules: Compile) -> None:
    result = compile_rules(
        {
            "a.rules": "formula g { params: x }\nformula f { params: x  formula: g(x) }\n"
            "table t {\n  columns: v(formula)\n  1 -> g(2)\n}\nattribute a { abbr: A  group: g  formula: g(1) }\n"
        }
    )
    assert result.diagnostics and "E210" in codes(result)
    assert all(d.pos is not None for d in result.diagnostics)


def test_a_lifepath_selector_needs_no_filter(compile_rules: Compile) -> None:
    setting = "stock s { }\nsetting z { stock: s }\nlifepath A { time: 5 yrs  resources: 1  born: yes }\n"
    result = compile_rules(
        {"a.rules": setting + "lifepath L { time: 5 yrs  resources: 1  requires: 3 of lifepaths }\n"}
    )
    assert result.ok, codes(result)
    broken = compile_rules(
        {"a.rules": setting + "lifepath L { time: 5 yrs  resources: 1  requires: 3 of lifepaths in }\n"}
    )
    assert codes(broken) == ["E101"]


# ---------------------------------------------------------------- positions


def test_a_backslash_ending_an_unclosed_string_keeps_later_lines_right(compile_rules: Compile) -> None:
    text = 'trait T { type: die  description: "abc\\\n}\ntrait U { type: die  tpye: 3 }\n'
    chunks = list(split_blocks(text))
    assert [c.line for c in chunks] == [1, 3]
    result = compile_rules({"a.rules": text})
    misspelt = next(d for d in result.diagnostics if d.code == "E210")
    assert misspelt.pos is not None and (misspelt.pos.line, misspelt.pos.column) == (3, 22)


LINE_BREAKERS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\r"]


@pytest.mark.parametrize("char", LINE_BREAKERS, ids=[f"U+{ord(c):04X}" for c in LINE_BREAKERS])
def test_positions_and_echoed_lines_agree_whatever_splits_lines(compile_rules: Compile, char: str) -> None:
    """str.splitlines() splits at these characters, positions count only '\\n': the line echoed under a
    diagnostic is the line its number names, the character shown as U+FFFD."""
    text = f"trait T {{ type: die }}{char} trait U {{ tpye: die }}\ntrait V {{\n  tpye: die }}\n"
    result = compile_rules({"a.rules": text})
    found = [(d.pos.line, d.pos.column) for d in result.diagnostics if d.pos is not None]
    assert found == [(1, 34), (3, 3)]
    rendered = render_text(result.diagnostics, result.sources).split("\n")
    assert rendered[1] == " 1 | trait T { type: die }\ufffd trait U { tpye: die }"
    assert rendered[2] == "   | " + " " * 33 + "^^^^"
    assert rendered[5] == " 3 |   tpye: die }"


def test_windows_line_ends_echo_without_the_carriage_return(compile_rules: Compile) -> None:
    result = compile_rules({"a.rules": "trait T {\r\n  tpye: die }\r\n"})
    rendered = render_text(result.diagnostics, result.sources).split("\n")
    assert rendered[1:3] == [" 2 |   tpye: die }", "   |   ^^^^"]


def test_a_long_line_is_echoed_around_its_column() -> None:
    from rulesdsl.diagnostics import ECHO_WIDTH, error
    from rulesdsl.syntax.tree import Position

    line = "".join(random.Random(1).choices(string.ascii_lowercase, k=5000))
    for column in (1, 40, 2500, 4990, 5001):
        diagnostic = error("E101", "here", Position("a.rules", 1, column, 1, column + 3))
        _, echoed, caret = render_text([diagnostic], {"a.rules": line + "\n"}).split("\n")[:3]
        shown = echoed[len(" 1 | ") :]
        at = caret.index("^") - len("   | ")
        assert len(shown) <= ECHO_WIDTH + 2
        assert shown[at : at + 3] == line[column - 1 : column + 2]  # the caret is under the same letters


def test_source_lines_split_only_at_line_feeds() -> None:
    assert source_lines("a\x0cb\u2028c\r\nd") == ["a\x0cb\u2028c\r", "d"]


# ---------------------------------------------------------------- hints that were quadratic


def test_the_missing_value_hint_reads_the_key_before_the_colon() -> None:
    assert field_before("trait T { type:  ") == "type"
    assert field_before("trait T { type:\n") == "type"
    assert field_before("x 9abc:") == "abc"
    assert field_before("trait T { type") is None
    assert field_before("a" * 80_000 + ":") == "a" * 80_000
    assert field_before("a" * 80_000) is None


def test_hints_for_names_past_the_hint_length_are_left_out() -> None:
    assert did_you_mean("a" * (HINT_LENGTH + 1), ["a" * HINT_LENGTH]) is None
    assert did_you_mean("a" * (HINT_LENGTH - 1), ["a" * HINT_LENGTH]) == f"did you mean '{'a' * HINT_LENGTH}'?"


@given(
    st.text(string.ascii_letters + "_ ", min_size=1, max_size=12),
    st.lists(st.text(string.ascii_letters + "_ ", min_size=1, max_size=12), max_size=30),
)
def test_hints_match_difflib_on_small_pools(word: str, pool: list[str]) -> None:
    """The shortlist never changes a hint where difflib could compare every candidate in full."""
    close = difflib.get_close_matches(word, sorted(set(pool)), n=3, cutoff=0.6)
    hint = did_you_mean(word, pool)
    if close:
        assert hint == "did you mean " + " or ".join(f"'{c}'" for c in close) + "?"


def test_hints_over_thousands_of_alike_names_still_find_the_closest() -> None:
    pool = ["a" * 190 + str(i) for i in range(3000)]
    hint = did_you_mean("a" * 190 + "2999", pool)
    assert hint is not None and hint.startswith(f"did you mean '{'a' * 190}2999'")


# ---------------------------------------------------------------- dice odds


@given(
    st.lists(st.tuples(st.integers(1, 4), st.sampled_from([2, 3, 4, 6, 8, 10, 12, 20])), min_size=1, max_size=4),
    st.integers(-5, 5),
    st.data(),
)
def test_chances_agree_with_the_distribution(terms: list[tuple[int, int]], modifier: int, data: st.DataObject) -> None:
    dice = Dice("", tuple(DiceTerm(c, s) for c, s in terms), modifier)
    spread = dice.distribution()
    low = data.draw(st.integers(dice.minimum - 2, dice.maximum + 2))
    high = data.draw(st.integers(low, dice.maximum + 3))
    assert dice.chance(low, high) == sum(p for total, p in spread.items() if low <= total <= high)
    assert dice.chance(None, None) == 1


def test_the_largest_rolls_have_exact_odds() -> None:
    single = Dice("100d1000", (DiceTerm(100, 1000),), 0)
    assert single.chance(100, 100) * 1000**100 == 1
    assert single.chance(None, 50_050) + single.chance(50_051, None) == 1
    mixed = Dice("50d999 + 50d1000", (DiceTerm(50, 999), DiceTerm(50, 1000)), 3)
    assert mixed.chance(103, 103) * 999**50 * 1000**50 == 1
    assert mixed.chance(None, 50_000) + mixed.chance(50_001, None) == 1


# ---------------------------------------------------------------- near-linear inside the size limit


def calls(run: Callable[[], object]) -> int:
    """Python function calls made by `run` (cProfile's count): a measure of work that, unlike time,
    is the same on every machine and every run."""
    profile = cProfile.Profile()
    profile.runcall(run)
    return int(pstats.Stats(profile).total_calls)  # type: ignore[attr-defined]


def growth(work: Callable[[int], object], size: int) -> float:
    """How much the work grows when the input doubles: 2 for linear work, 4 for quadratic."""
    return calls(lambda: work(2 * size)) / calls(lambda: work(size))


def test_many_unknown_names_among_many_candidates_cost_linear_work(tmp_path: Path) -> None:
    """Issue 17: a 282 KB file took 2 min 19 s, each unknown name compared with every skill."""

    def check(n: int) -> Compilation:
        skills = "".join(
            f"skill s{i}q{i * 7919 % 1000} {{ root: Perception  type: peasant  tools: no }}\n" for i in range(n)
        )
        names = ", ".join(f"u{i}v{i * 31 % 97}" for i in range(n))
        lifepath = f"lifepath L {{ time: 5 yrs  resources: 1  skills: 5 pts: {names} }}\n"
        folder = write_ruleset(tmp_path / str(n) / "demo", {"a.rules": skills + lifepath})
        return compile_paths([folder])

    assert [d.code for d in check(400).diagnostics].count("E303") == 400
    assert growth(check, 400) < 2.5


def test_formatting_many_statements_comments_and_blank_lines_costs_linear_work() -> None:
    """Issue 17: `fmt` took 3 minutes on a 4 MiB file (each line looked at every blank line, each
    statement at every comment)."""

    def text(n: int) -> str:
        return "".join(
            f"# about t{i}\ntrait t{i} {{  # open\n  type: die  # a die\n\n  cost: 2\n}}\n\n\n" for i in range(n)
        )

    assert format_text(text(2)) == (
        "# about t0\ntrait t0 {  # open\n  type: die  # a die\n\n  cost: 2\n}\n\n"
        "# about t1\ntrait t1 {  # open\n  type: die  # a die\n\n  cost: 2\n}\n"
    )
    assert growth(lambda n: format_text(text(n)), 500) < 2.3


def test_importing_many_records_costs_linear_work() -> None:
    """Issue 17: `import` slowed quadratically with its number of records (formatting what it writes)."""
    skill = prelude()["skill"]

    def convert_records(n: int) -> str:
        records = [{"name": f"Skill {i}", "root": "Will", "type": "social", "tools": "no"} for i in range(n)]
        text, problems = convert(records, skill)
        assert not problems and text.count("skill ") == n
        return text

    assert growth(convert_records, 300) < 2.3


def test_a_pool_asked_many_times_still_suggests_the_closest_first() -> None:
    rng = random.Random(2)
    pool = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(4, 20))) for _ in range(3000)]
    suggestions = Suggestions(pool)
    for name in rng.sample(pool, 200):
        typo = name[:-1] + ("x" if name[-1] != "x" else "y")
        alone, shortlisted = did_you_mean(typo, pool), suggestions.hint(typo)
        assert alone is not None and shortlisted is not None
        assert shortlisted.split(" or ")[0].rstrip("?") == alone.split(" or ")[0].rstrip("?")


def test_past_the_hinted_words_a_big_pool_gives_no_hints() -> None:
    suggestions = Suggestions(f"name{i}" for i in range(Suggestions.SHORTLIST_POOL + 1))
    for _ in range(Suggestions.HINTED_WORDS):
        assert suggestions.hint("name1x") is not None
    assert suggestions.hint("name1x") is None
    small = Suggestions(["alpha", "beta"])  # a small pool is cheap to ask: it always answers
    for _ in range(Suggestions.HINTED_WORDS + 1):
        assert small.hint("alpah") == "did you mean 'alpha'?"
