"""The fast parser (rulesdsl/fastparse.py) against Lark, the grammar of record: identical trees and diagnostics
on every `.rules` file we have, the benchmark's corpus and generated sources; and the facts about Lark's
lexer and parse table that the fast parser relies on."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rulesdsl.language import words
from rulesdsl.syntax import fast as fastparse
from rulesdsl.syntax.parse import Parser

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def parser() -> Parser:
    return Parser()


def same_as_lark(parser: Parser, path: str, text: str) -> bool:
    """parse_file (fast path or not) gives exactly what Lark gives; True when the fast path took the file."""
    return compared(parser, path, text)[0]


def compared(parser: Parser, path: str, text: str) -> tuple[bool, bool]:
    """As `same_as_lark`, and also whether Lark found the file free of mistakes."""
    want = parser.parse_with_lark(path, text)
    assert parser.parse_file(path, text) == want
    try:
        fast = fastparse.parse(path, text)
    except fastparse.Fallback:
        return False, not want[1]
    assert want[1] == [], "the fast path accepted a file that has mistakes"
    assert fast == want[0]
    return True, True


def test_the_fast_path_implements_this_grammar() -> None:
    assert fastparse.enabled(), (
        "grammar/rules.lark changed: bring rulesdsl/fastparse.py up to date (until then every file is parsed by "
        "Lark), run python -m rulesdsl.language.words (tests/test_words.py names what the fast path lacks), then "
        "set its "
        "GRAMMAR_SHA256"
    )


def test_words_the_fast_path_reads_as_names_are_names_to_lark_there(parser: Parser) -> None:
    table = parser._lark.parser.parser.parser.parse_table
    atom_starts = [set(actions) for actions in table.states.values() if "NONE_DASH" in actions]
    assert atom_starts
    for accepted in atom_starts:
        assert not (accepted & (fastparse._NAMES_AT_ATOMS - {"CHECK"}))
        if "CHECK" in accepted:  # only where an item starts, which `item` handles before any atom
            assert "QUANTITY" in accepted


def rules_files() -> list[Path]:
    found = [*sorted((ROOT / "rules").rglob("*.rules")), *sorted((ROOT / "tests").rglob("*.rules"))]
    return [*found, ROOT / "rulesdsl" / "language" / "prelude.rules"]


def test_every_rules_file_parses_as_lark_parses_it(parser: Parser) -> None:
    fast = clean = 0
    for path in rules_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        took, without_mistakes = compared(parser, path.relative_to(ROOT).as_posix(), text)
        fast += took
        clean += without_mistakes
    assert clean >= 100
    assert fast >= 0.9 * clean  # the fast path must not quietly hand files without mistakes to Lark


def test_the_benchmark_corpus_parses_as_lark_parses_it(parser: Parser, tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("bench", ROOT / "benchmarks" / "bench.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench"] = bench  # its dataclasses look their module up
    spec.loader.exec_module(bench)
    folder = bench.synthetic_ruleset(tmp_path / "synth", 600)
    for path in sorted(folder.glob("*.rules")):
        assert same_as_lark(parser, path.name, path.read_text(encoding="utf-8"))


# ---------------------------------------------------------------- generated sources

WORDS = [
    "a",
    "Farmer",
    "x_1",
    "s2",
    "lifepath",
    "lifepaths",
    "check",
    "or",
    "and",
    "not",
    "in",
    "of",
    "any",
    "trait",
    "skill",
    "ref",
    "tagged",
    "kind",
    "patch",
    "remove",
    "gm_permission",
    "age",
    "Sergeant-at-Arms",
    "setting",
    "none",
    "unknown",
    "odd",
    "d",
    "x",
    "pts",
    "yrs",
    "M",
    "P",
    "end",
    "é",
]
ATOMS = [
    '"Quoted"',
    '"es\\"c"',
    '"bad\\q"',
    "3",
    "0",
    "1.5",
    "2d6",
    "d6",
    "d66",
    "1D6",
    "4d6kh3",
    "2d20kl1",
    "4d6dl1",
    "1d6!",
    "d6!",
    "D6",
    "1d6!=2",
    "x2",
    "x1/2",
    "10+",
    "—",
    "4^",
    "8 yrs",
    "+1 M/P",
    "-2 P",
    "2 of lifepaths in setting s",
    "any lifepath tagged t",
    "any lifepaths",
    "2 of lifepath",
    "1 of lifepaths in setting s",
    "any (A)",
    '2 of (A, "B")',
    "trait Brave",
    'skill "Sword"',
    "ref table",
    "lifepaths",
    '"by"(ref location)',
    '"f"(1, a)',
    '"x"()',
    "land 25",
    'home "x"',
    "fly x2",
    "{ a: 1  b: x, y }",
    "{ }",
]
OPS = [" + ", " - ", " * ", " / ", " or ", " and ", " = ", " == ", " <= ", " > ", " != ", "..", " in ", " +", "-"]
SEPARATORS = [" ", "  ", "\n", "\n\n", " # note\n", ",\n ", "\t"]


def expressions() -> st.SearchStrategy[str]:
    atom = st.sampled_from(WORDS) | st.sampled_from(ATOMS)
    return st.recursive(
        atom,
        lambda inner: (
            st.tuples(inner, st.sampled_from(OPS), inner).map("".join)
            | inner.map(lambda e: f"({e})")
            | inner.map(lambda e: f"({e})d6")
            | inner.map(lambda e: f"not {e}")
            | inner.map(lambda e: f"-{e}")
            | inner.map(lambda e: f">= {e}")
            | st.tuples(st.sampled_from(["floor", "max", "f", "dice"]), st.lists(inner, max_size=3)).map(
                lambda t: f"{t[0]}({', '.join(t[1])})"
            )
            | st.tuples(inner, inner).map(lambda t: f"{t[0]}[{t[1]}]")
            | inner.map(lambda e: f"{e}.reach")
            | st.lists(inner, min_size=2, max_size=3).map(", ".join)
            | inner.map(lambda e: f"check {e} 5+")
            | inner.map(lambda e: f"6 pts: {e}")
            | inner.map(lambda e: f"1 pt: {e}")
            | st.sampled_from(["check 8+", "check 0 8+", "check d6 4+"])
        ),
        max_leaves=8,
    )


def statements() -> st.SearchStrategy[str]:
    value = expressions()
    key = st.sampled_from(["a", "requires", "check", "x_1", "leads", "in"])
    field = st.tuples(key, st.sampled_from([": ", ":", " += ", " -= "]), value).map("".join)
    step = st.tuples(key, st.sampled_from([" = ", "=", "  =  "]), value).map(lambda t: f"let {''.join(t)}")
    fields = st.lists(field | step, max_size=4)
    row = st.tuples(value, value).map(lambda t: f"{t[0]} -> {t[1]}") | value.map(lambda e: f'{e} -> 1 @ "p. 3"')
    line_end = st.sampled_from(["\n", "  # note\n", "\n\n", "\n  # own line\n", "\n\n# apart\n\n"])
    body = st.lists(st.tuples(fields.map("  ".join) | row, line_end).map("".join), max_size=3).map("".join)
    header = st.tuples(
        st.sampled_from(WORDS),
        st.sampled_from(["", " id", ' "Name"', ' check "N"', " or"]),
        st.sampled_from(["", "\n"]),
    ).map("".join)
    block = st.tuples(header, body).map(lambda t: f"{t[0]} {{\n{t[1]}\n}}")
    type_term = st.sampled_from(
        [
            "int",
            "int in 1..5",
            "int in -2..",
            "list of ref skill",
            "list in 1..2 of text",
            'one of a, "b c"',
            "points of ref skill",
            "choices of ref talent",
            "check",
            "check of task",
            "number in 0.5..",
            "number in -1.5..-0.25",
            "formula of slot",
            "formula of slot, level",
            "lifepath",
            "map of int",
            "record { a: int = 1  b: list of word = x, y }",
            "list of record { name: text }",
        ]
    )
    default = st.sampled_from(
        [
            " = 3",
            " = 8 yrs",
            " = a, b",
            " = a,\n b",
            ' = a, "b" "doc"',
            " = land 25, fly x2",
            ' = home "x"',
            " = { a: 1 }",
            ' = { name: "x"  to_hit: 2 }, { name: "y" }',
            " = check",
            " = check END 5+",
            " = 2 pts: a",
            " = land 1d6, sea 1.5",
        ]
    )
    suffix = st.sampled_from(["", "?", " < 3", ' "doc"']) | st.tuples(
        st.sampled_from(["", "?"]), default, st.sampled_from(["", ' "doc"'])
    ).map("".join)
    kind_field = st.tuples(key, type_term, suffix).map(lambda t: f"{t[0]}: {t[1]}{t[2]}")
    kind_decl = st.tuples(
        st.lists(kind_field, max_size=3), st.sampled_from(["\n  ", "  # k\n  ", "\n\n  # k\n  "])
    ).map(lambda t: 'kind weapon "W" {  # w\n  ' + t[1].join(t[0]) + "\n}")
    patch = st.tuples(st.sampled_from(WORDS), body).map(lambda t: f"patch lifepath {t[0]} {{\n{t[1]}\n}}")
    removal = st.sampled_from(WORDS).map(lambda w: f"remove skill {w}")
    return block | kind_decl | patch | removal


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(statements(), st.sampled_from(SEPARATORS)).map("".join), max_size=3))
def test_generated_sources_parse_as_lark_parses_them(statements: list[str]) -> None:
    same_as_lark(PARSER, "gen.rules", "\n".join(statements))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('ab1 2d:+-=\n"{}(),.x#<>—@^[]?*/')), max_size=40))
def test_any_text_parses_as_lark_parses_it(text: str) -> None:
    same_as_lark(PARSER, "gen.rules", f"thing t {{\n  a: {text}\n}}\n")


PARSER = Parser()


NAIVE = re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in words.TERMINALS))


def naive_tokens(text: str) -> list[tuple[str, str]] | None:
    """Lark's lexer without its parser: the terminals tried in order at each place, words renamed."""
    found, pos = [], 0
    while pos < len(text):
        match = NAIVE.match(text, pos)
        if match is None:
            return None
        kind, value = match.lastgroup or "", match.group()
        if kind not in ("WS", "COMMENT", "_NL"):
            found.append((words.KEYWORDS.get(value, kind) if kind == "NAME" else kind, value))
        pos = match.end()
    return found


PIECES = [*'ab_xdé1 9\t\r\n"\\{}(),.:+-=<>!#@^[]?*/—', "pts", "in setting", "of", "check", "or", "8 yrs", "x2", '"b"(']


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from([*PIECES, "2d6", "3+", "1.5", "list of", "d6"]), max_size=20).map("".join))
def test_the_scanner_makes_the_tokens_lark_s_lexer_makes(text: str) -> None:
    expected = naive_tokens(text)
    try:
        made = [(kind, value) for kind, value, _, _ in fastparse.tokens(text)[0] if kind not in ("_NL", "$END")]
    except fastparse.Fallback:
        assert expected is None
        return
    assert made == expected
