"""Where am I (rulesdsl/locate.py): the statement, field, item and string a cursor is in, in every layout
the formatter writes and in broken text. `|` marks the cursor in each case."""

from __future__ import annotations

import random

import pytest

from rulesdsl.compile.pipeline import parser
from rulesdsl.syntax import fast as fastparse
from rulesdsl.tools.locate import OPEN_STRING, UNREADABLE, Place, lenient_tokens, locate, statements

from .conftest import ROOT
from .test_properties import _PIECES


def place(marked: str) -> Place:
    at = marked.index("|")
    text = marked.replace("|", "", 1)
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    source, _ = parser().parse_file("a.rules", text)
    return locate(source, line, column)


def summary(found: Place) -> tuple[str | None, str | None, str, str | None, int | None, str]:
    """(statement id, its kind, key or value, the field, the item, what is typed)"""
    statement = found.statement
    return (
        statement.id if statement else None,
        statement.kind if statement else None,
        "key" if found.key_position else "value",
        found.field.key if found.field else None,
        found.item,
        found.typed,
    )


@pytest.mark.parametrize(
    ("marked", "expected"),
    [
        # one-line blocks, as fmt writes short ones: fields apart by two spaces, `}` on the line
        ('skill a { root: Will  no|te: "x" }', ("a", "skill", "key", None, None, "no")),
        ('skill a { root: Will  |note: "x" }', ("a", "skill", "key", "root", None, "")),
        ('skill a { root: Wi|ll  note: "x" }', ("a", "skill", "value", "root", 0, "Wi")),
        ("skill a { root: Will, Perc| }", ("a", "skill", "value", "root", 1, "Perc")),
        ('skill a { root: Will  note: "x" |}', ("a", "skill", "key", "note", None, "")),
        # many lines, the `}` on the cursor's line
        ("lifepath b {\n  time: 3 yrs\n  |}", ("b", "lifepath", "key", None, None, "")),
        ("lifepath b {\n  skills: 3 pts: Foo, Bar |}", ("b", "lifepath", "key", "skills", None, "")),
        # a continued list: the first word of the next line is its next item, not a key
        ("lifepath b {\n  skills: 3 pts: Foo,\n    B|ar\n}", ("b", "lifepath", "value", "skills", 1, "B")),
        ("lifepath b {\n  skills: 3 pts: Foo,\n    |\n}", ("b", "lifepath", "value", "skills", 1, "")),
        # a key with nothing after it, then a new line: a new field is being started
        ("lifepath b {\n  skills: 3 pts: \n  |\n}", ("b", "lifepath", "key", "skills", None, "")),
        ("lifepath b {\n  requires: trait Bo|\n}", ("b", "lifepath", "value", "requires", 0, "Bo")),
        ("patch lifepath farmer { leads += |}", ("farmer", "patch", "value", "leads", 0, "")),
        ("lifepath b { skills: 3 pts: max(Foo,\n  |", ("b", "lifepath", "value", "skills", 0, "")),
    ],
)
def test_where_the_cursor_is(marked: str, expected: tuple[object, ...]) -> None:
    assert summary(place(marked)) == expected


def test_after_a_typed_quote_the_cursor_is_in_the_string() -> None:
    unterminated = place('skill a {\n  root: "Wi|\n}\nskill b { root: x }')
    assert unterminated.quoted and unterminated.typed == "Wi" and unterminated.field is not None
    assert unterminated.statement is not None and unterminated.statement.id == "a"
    closed = place('lifepath b { skills: 3 pts: "Animal Hus|bandry" }')
    assert closed.quoted and closed.typed == "Animal Hus" and closed.item == 0
    after = place('lifepath b { skills: 3 pts: "Animal Husbandry"| }')
    assert not after.quoted and after.word is not None and after.word[1] == '"Animal Husbandry"'


def test_two_blocks_on_a_line_are_two_statements() -> None:
    text = "skill Bold { root: will }  skill Brave { root: will }"
    bold = place(text.replace("Bold", "B|old"))
    assert bold.statement is not None and bold.statement.id == "Bold" and bold.in_header
    brave = place(text.replace("Brave", "Br|ave"))
    assert brave.statement is not None and brave.statement.id == "Brave" and brave.in_header
    between = place(text.replace("}  skill", "} | skill"))
    assert between.statement is None


def test_a_broken_block_ends_where_the_next_header_starts() -> None:
    """A block without its `}` (or with a string left open) never runs into the next one."""
    text = 'lifepath a {\n  time: 3 yrs\n  note: "half\nskill b { root: will  |}\n'
    found = place(text)
    assert found.statement is not None and (found.statement.id, found.statement.kind) == ("b", "skill")
    assert found.key_position and found.field is not None and found.field.key == "root"
    typing = place("lifepath a {\n  time: 3 yrs\n  sk|\nskill b { root: will }\n")
    assert typing.statement is not None and typing.statement.id == "a" and typing.key_position
    source, _ = parser().parse_file("a.rules", text.replace("|", ""))
    found_statements = statements(source)
    assert [(s.kind, s.id, s.closed, s.node is not None) for s in found_statements] == [
        ("lifepath", "a", False, False),
        ("skill", "b", True, True),
    ]
    assert found_statements[0].span.end_line == 3  # at its last token, before the next header


def test_statements_span_their_header_to_their_closing_brace() -> None:
    text = 'skill a { root: will }\n\nlifepath "B" {\n  time: 3 yrs\n}\nremove skill c\n'
    source, _ = parser().parse_file("a.rules", text)
    spans = [(s.span.line, s.span.column, s.span.end_line, s.span.end_column) for s in statements(source)]
    assert spans == [(1, 1, 1, 23), (3, 1, 5, 2), (6, 1, 6, 15)]


def test_tokens_of_broken_text() -> None:
    """The scanner's own reading of broken text: an unterminated string to the line's end, a character no
    token takes on its own, and the rest of the line (and the next lines) read on."""
    toks = lenient_tokens('a { b: "open\n  c: $ d\n}\n')
    assert [(t[0], t[1]) for t in toks if t[0] != "_NL"] == [
        ("NAME", "a"),
        ("LBRACE", "{"),
        ("FIELD_KEY", "b:"),
        (OPEN_STRING, '"open'),
        ("FIELD_KEY", "c:"),
        (UNREADABLE, "$"),
        ("NAME", "d"),
        ("RBRACE", "}"),
    ]
    assert toks[3][2:] == (1, 8) and toks[6][2:] == (2, 6)


def test_line_ends_of_broken_text_are_the_parsers() -> None:
    """No line end inside brackets or after a token the line goes on after, broken text or not."""
    toks = lenient_tokens('a { b: max(1,\n 2) $\n  c: x,\n  y  "open\n}\n')
    assert [(t[0], t[2]) for t in toks if t[0] in ("_NL", OPEN_STRING, UNREADABLE)] == [
        (UNREADABLE, 2),
        ("_NL", 2),
        (OPEN_STRING, 4),
        ("_NL", 4),
        ("_NL", 5),
    ]


def _corpus() -> list[str]:
    texts = []
    for folder in ("rules", "tests/golden"):
        for path in sorted((ROOT / folder).rglob("*.rules")):
            try:
                texts.append(path.read_text(encoding="utf-8"))
            except UnicodeDecodeError:
                continue
    rng = random.Random(3)
    texts += [" ".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 60))) for _ in range(300)]
    return texts


def test_on_text_without_mistakes_they_are_the_fast_paths_tokens() -> None:
    """One reader of text with mistakes (scanner.scan_lines), the same as the fast path's where there are none."""
    compared = 0
    for text in _corpus():
        try:
            expected = fastparse.tokens(text)[0][:-1]
        except fastparse.Fallback:
            continue
        compared += 1
        assert list(lenient_tokens(text)) == expected
    assert compared > 100


def test_a_header_line_without_its_brace_does_not_swallow_the_next_block() -> None:
    """Words on a line of their own (a header being typed) are a statement to their line's end."""
    source, _ = parser().parse_file("a.rules", "lifepath Zz\nskill b { root: will }\n")
    # (the parser's recovery reads the two as one chunk, so neither parses; locate keeps them apart)
    assert [(s.kind, s.id, s.span.line) for s in statements(source)] == [("lifepath", "Zz", 1), ("skill", "b", 2)]
