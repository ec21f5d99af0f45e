"""The words of the language come from the grammar of record: words_from_grammar.py is what grammar/rules.lark
gives, the fast path places every terminal and knows every keyword, the Lark path continues lines after the
same tokens, and the formatter quotes every name the grammar would read as something else."""

from __future__ import annotations

import re
import string
from collections.abc import Iterator

import pytest

from rulesdsl.language import words
from rulesdsl.syntax import fast as fastparse
from rulesdsl.syntax import scanner
from rulesdsl.syntax.parse import Parser
from rulesdsl.tools.fmt import format_text, written_name


@pytest.fixture(scope="module")
def parser() -> Parser:
    return Parser()


def test_the_generated_words_are_the_grammar_s(parser: Parser) -> None:
    terminals, keywords, continues, ignored = words.derived(parser._lark)
    assert terminals == words.TERMINALS, (
        "grammar/rules.lark changed its terminals: run python -m rulesdsl.language.words"
    )
    assert keywords == words.KEYWORDS, "grammar/rules.lark changed its keywords: run python -m rulesdsl.language.words"
    assert continues == words.CONTINUES, (
        "the grammar continues lines elsewhere now: run python -m rulesdsl.language.words"
    )
    assert frozenset(ignored) == words.IGNORED
    assert words.GENERATED.read_text(encoding="utf-8") == words.generated_text()
    assert words.fresh(fastparse.GRAMMAR_PATH.read_bytes())


def test_the_lark_path_continues_lines_after_the_same_tokens(parser: Parser) -> None:
    postlex = parser._lark.options.postlex
    assert postlex.continues == words.CONTINUES


def test_the_scanner_places_every_terminal_of_the_grammar() -> None:
    assert not scanner.UNPLACED, f"the fast path's scanner (scanner._GROUPS) lacks {sorted(scanner.UNPLACED)}"


def test_the_fast_parser_knows_every_keyword_of_the_grammar() -> None:
    """Each word of the language either starts an atom or is a name where an atom starts (`_NAMES_AT_ATOMS`)."""
    known = fastparse._ATOM_START | fastparse._NAMES_AT_ATOMS
    lacking = sorted(set(words.KEYWORDS.values()) - known)
    assert not lacking, f"the fast parser does not handle the keywords {lacking}"


# Characters to try as the first of a token: every kind the scanner's groups tell apart, and some beyond ASCII.
FIRSTS = [*string.printable, "é", "ß", "—", "Ω", "٣"]


def _firsts(items: object) -> tuple[set[str], bool]:
    """The characters of FIRSTS a parsed pattern (re's parser) can start with, and whether it can match nothing."""
    found: set[str] = set()
    for op, arg in items:  # type: ignore[attr-defined]
        name = str(op)
        if name in ("AT", "ASSERT", "ASSERT_NOT"):
            continue  # takes no character
        if name in ("LITERAL", "NOT_LITERAL", "IN", "ANY"):
            one = re.compile(_sre_text(op, arg))
            return found | {c for c in FIRSTS if one.fullmatch(c)}, False
        if name == "SUBPATTERN":
            inner, empty = _firsts(arg[-1])
        elif name == "ATOMIC_GROUP":
            inner, empty = _firsts(arg)
        elif name == "BRANCH":
            parts = [_firsts(p) for p in arg[1]]
            inner, empty = set().union(*(p[0] for p in parts)), any(p[1] for p in parts)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            inner, empty = _firsts(arg[2])
            empty = empty or arg[0] == 0
        else:
            raise AssertionError(f"a pattern element this test does not read: {name}")
        found |= inner
        if not empty:
            return found, False
    return found, True


def _sre_text(op: object, arg: object) -> str:
    """A one-character pattern for a parsed LITERAL, NOT_LITERAL, IN or ANY."""
    name = str(op)
    if name == "LITERAL":
        return re.escape(chr(arg))  # type: ignore[arg-type]
    if name == "NOT_LITERAL":
        return "[^" + re.escape(chr(arg)) + "]"  # type: ignore[arg-type]
    if name == "ANY":
        return "."
    parts, negate = [], ""
    for kind, value in arg:  # type: ignore[attr-defined]
        kind = str(kind)
        if kind == "NEGATE":
            negate = "^"
        elif kind == "LITERAL":
            parts.append(re.escape(chr(value)))
        elif kind == "RANGE":
            parts.append(re.escape(chr(value[0])) + "-" + re.escape(chr(value[1])))
        elif kind == "CATEGORY":
            parts.append(
                {"CATEGORY_DIGIT": r"\d", "CATEGORY_NOT_DIGIT": r"\D", "CATEGORY_WORD": r"\w"}.get(
                    str(value), r"\W" if str(value) == "CATEGORY_NOT_WORD" else r"\s"
                )
            )
    return "[" + negate + "".join(parts) + "]"


def _group_of(char: str) -> Iterator[tuple[str, ...]]:
    """The scanner's group that reads a token starting with `char`: the first whose guard takes it."""
    for start, names in scanner._GROUPS:
        if not start or re.fullmatch(start, char):
            yield names
            return


def test_every_terminal_is_in_the_group_of_each_character_it_can_start_with() -> None:
    """The scanner tries only one group of terminals at a place (the first whose guard takes the character):
    each terminal must be in it, or the scanner would read what Lark's lexer does not. (What the ignored
    terminals start with is skipped before any token: `\r\n` is a line end either way.)"""
    terminals = dict(words.TERMINALS)
    skipped = set().union(*(_firsts(re._parser.parse(terminals[n]))[0] for n in words.IGNORED))  # type: ignore[attr-defined]
    for name, pattern in words.TERMINALS:
        if name in words.IGNORED:
            continue
        firsts, empty = _firsts(re._parser.parse(pattern))  # type: ignore[attr-defined]
        assert not empty, name
        for char in sorted(firsts - skipped):
            (group,) = _group_of(char)
            assert name in group, f"{name} can start with {char!r}, which the scanner reads with {group}"


@pytest.mark.parametrize("word", sorted(words.QUOTED))
def test_a_name_spelt_like_a_word_of_the_language_is_quoted(word: str) -> None:
    assert written_name(word) == f'"{word}"'


def test_names_the_scanner_would_read_as_something_else_are_quoted() -> None:
    assert [written_name(n) for n in ("Fishing", "Sergeant-at-Arms", "é")] == ["Fishing", "Sergeant-at-Arms", "é"]
    assert [written_name(n) for n in ("d6", "x2", "a b", "2nd", "in setting")] == [
        '"d6"',
        '"x2"',
        '"a b"',
        '"2nd"',
        '"in setting"',
    ]


def test_a_written_name_reads_back_as_that_name(parser: Parser) -> None:
    """What the importer and the language server write (`written_name`) parses, and means the name."""
    for name in ("check", "Fishing", "or", "d6", "none", "Sergeant-at-Arms"):
        text = f"lifepath t {{\n  skills: 2 pts: {written_name(name)} or Fishing\n}}\n"
        parsed, problems = parser.parse_file("t.rules", text)
        assert problems == [], (name, problems)
        first = parsed.blocks[0].fields[0].value.items[0].items[0]  # type: ignore[union-attr]
        assert getattr(first, "text", getattr(first, "value", None)) == name
        assert format_text(text, "t.rules") == text


def test_scan_reads_text_with_mistakes_to_its_end() -> None:
    text = 'a { x: "open {\n  y: $$ 2d6 # kind: {\n}\u00a0# kind'
    assert [(t.type, t.text, t.line, t.column) for t in scanner.scan(text)] == [
        ("NAME", "a", 1, 1),
        ("LBRACE", "{", 1, 3),
        ("FIELD_KEY", "x:", 1, 5),
        ("UNCLOSED_STRING", '"open {', 1, 8),
        ("_NL", "\n", 1, 15),
        ("FIELD_KEY", "y:", 2, 3),
        ("ERROR", "$$", 2, 6),
        ("DICE", "2d6", 2, 9),
        ("_NL", "\n", 2, 22),
        ("RBRACE", "}", 3, 1),
        ("ERROR", "\u00a0", 3, 2),
    ]
