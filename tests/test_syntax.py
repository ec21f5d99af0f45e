"""Stage 1, syntax: the grammar, block splitting and error recovery."""

from __future__ import annotations

import pytest

from rulesdsl.language.words import KEYWORDS
from rulesdsl.syntax import tree as m
from rulesdsl.syntax.parse import CONTINUING_WORDS, Parser, ran_on_hint, split_blocks
from rulesdsl.syntax.scanner import unescape


@pytest.fixture(scope="module")
def parser() -> Parser:
    return Parser()


def field_values(parser: Parser, body: str) -> dict[str, m.Value]:
    parsed, diagnostics = parser.parse_file("t.rules", "thing x {\n" + body + "\n}\n")
    assert diagnostics == []
    return {f.key: f.value for f in parsed.blocks[0].fields}


def test_block_header_forms(parser: Parser) -> None:
    text = 'lifepath "Farmer" { }\nruleset witcher { }\ntable t "T" { }\n'
    parsed, diagnostics = parser.parse_file("t.rules", text)
    assert diagnostics == []
    heads = [(b.kind, b.id.text if b.id else None, b.name.value if b.name else None) for b in parsed.blocks]
    assert heads == [("lifepath", None, "Farmer"), ("ruleset", "witcher", None), ("table", "t", "T")]


def test_value_forms(parser: Parser) -> None:
    values = field_values(
        parser,
        """
        number: 5  negative: -6  text: "R. Arm"  name: Sergeant-at-Arms
        time: 8 yrs  stat: +1 M/P
        skills: 8 pts: Farming, "Animal Husbandry", Javelin or Bow
        dice: 2d6+3  income: 30 + 1d10
        closed: 1..10  above: >9  open: 10+  mult: x1/2  caret: 4^
        formula: floor((AGL + WTS) / 2)
        """,
    )
    assert values["number"] == m.Integer(5, values["number"].pos)
    assert isinstance(values["negative"], m.Integer) and values["negative"].value == -6
    assert isinstance(values["text"], m.String) and values["text"].value == "R. Arm"
    assert isinstance(values["name"], m.Name) and values["name"].text == "Sergeant-at-Arms"
    assert isinstance(values["time"], m.Quantity) and (values["time"].amount, values["time"].unit) == (8, "yrs")
    assert isinstance(values["stat"], m.Quantity) and values["stat"].unit == "M/P" and values["stat"].signed
    skills = values["skills"]
    assert isinstance(skills, m.Points) and skills.amount == 8 and len(skills.items) == 3
    assert isinstance(skills.items[2], m.AnyOf)
    assert isinstance(values["dice"], m.Binary) and isinstance(values["dice"].left, m.Dice)
    assert isinstance(values["income"], m.Binary) and isinstance(values["income"].right, m.Dice)
    assert isinstance(values["closed"], m.ClosedRange)
    assert isinstance(values["above"], m.OpenRange) and values["above"].op == ">"
    assert values["open"] == m.AtLeast(10, values["open"].pos)
    assert isinstance(values["mult"], m.Multiplier) and (values["mult"].numerator, values["mult"].denominator) == (1, 2)
    assert isinstance(values["caret"], m.Caret) and values["caret"].value == 4
    assert isinstance(values["formula"], m.Call) and values["formula"].function == "floor"


def test_requirement_precedence(parser: Parser) -> None:
    req = field_values(parser, "requires: A or B and not C or 2 of lifepaths in setting host")["requires"]
    assert isinstance(req, m.AnyOf) and len(req.items) == 3
    assert isinstance(req.items[1], m.AllOf) and isinstance(req.items[1].items[1], m.Not)
    count = req.items[2]
    assert isinstance(count, m.CountOf) and count.count == 2
    assert isinstance(count.selector, m.SelectLifepaths)
    assert isinstance(count.selector.filters[0], m.InSetting)


def test_lists_continue_after_a_comma_and_rows_end_at_line_ends(parser: Parser) -> None:
    text = "table t {\n  leads: a,\n    b\n  1 -> x, -1\n  >1 -> y, 2\n  Head -> 3\n  Torso -> 4\n}\n"
    parsed, diagnostics = parser.parse_file("t.rules", text)
    assert diagnostics == []
    block = parsed.blocks[0]
    assert isinstance(block.fields[0].value, m.ValueList) and len(block.fields[0].value.items) == 2
    assert len(block.rows) == 4
    assert isinstance(block.rows[1].keys[0], m.OpenRange)


def test_several_fields_on_one_line(parser: Parser) -> None:
    values = field_values(parser, "abbr: AGL  group: temporal  range: 1..10  time: 8 yrs  resources: 5")
    assert list(values) == ["abbr", "group", "range", "time", "resources"]
    assert isinstance(values["resources"], m.Integer)


def test_positions_point_at_the_source(parser: Parser) -> None:
    text = "# comment\n\nlifepath x {\n  time: 8 yrs\n  leads: a, bee\n}\n"
    parsed, _ = parser.parse_file("t.rules", text)
    leads = parsed.blocks[0].fields[1]
    assert (leads.pos.line, leads.pos.column) == (5, 3)
    bee = leads.value.items[1]  # type: ignore[union-attr]
    assert (bee.pos.line, bee.pos.column, bee.pos.end_column) == (5, 13, 16)


def test_each_broken_block_reports_once_and_the_others_survive(parser: Parser) -> None:
    text = (
        "lifepath a { time: 1 yrs }\n"
        "lifepath b { time 8 yrs }\n"
        "lifepath c { time: 2 yrs }\n"
        'lifepath d { note: "unterminated }\n'
        "lifepath e { time: 3 yrs }\n"
    )
    parsed, diagnostics = parser.parse_file("t.rules", text)
    assert [b.id.text for b in parsed.blocks if b.id] == ["a", "c", "e"]
    assert [d.pos.line for d in diagnostics if d.pos] == [2, 4]


def test_unclosed_block_is_reported_where_it_starts(parser: Parser) -> None:
    text = "lifepath a {\n  time: 1 yrs\n\nlifepath b { time: 2 yrs }\n"
    parsed, diagnostics = parser.parse_file("t.rules", text)
    assert [b.id.text for b in parsed.blocks if b.id] == ["b"]
    assert len(diagnostics) == 1 and diagnostics[0].code == "E103" and diagnostics[0].pos.line == 1  # type: ignore[union-attr]


def test_split_ignores_braces_in_strings_and_comments() -> None:
    text = 'a x { s: "}{" # }\n}\nb y { }'
    chunks = list(split_blocks(text))
    assert [c.text for c in chunks] == ['a x { s: "}{" # }\n}', "b y { }"]


@pytest.mark.parametrize(
    ("body", "expected"),
    [(r"a\"b", 'a"b'), (r"back\\slash", "back\\slash"), (r"l1\nl2", "l1\nl2"), (r"caf\u00e9", "café")],
)
def test_string_escapes(body: str, expected: str) -> None:
    assert unescape(body) == expected


def test_grammar_has_no_terminal_collisions() -> None:
    """Lark's strict mode refuses grammars whose terminals can collide (too slow for run time)."""
    from lark import Lark

    from rulesdsl.syntax.parse import GRAMMAR_PATH, _LineEnds

    pytest.importorskip("interegular")
    Lark(GRAMMAR_PATH.read_text(), parser="lalr", postlex=_LineEnds(), strict=True)


def test_a_header_the_grammar_reads_ends_a_block_that_lost_its_brace(parser: Parser) -> None:
    """The splitter reads the scanner's tokens: a header is a name, then names and strings, then "{", on one
    line from column 1, whatever letters the name starts with; a `{` in an unclosed string is no header."""
    text = 'lifepath a {\n  note: "open {\nélan b "B" {\n  time: 2 yrs\n}\nremove lifepath c\nlifepath d { }\n'
    chunks = list(split_blocks(text))
    assert [(c.line, c.problem[0] if c.problem else c.text.split("\n")[0]) for c in chunks] == [
        (1, "E103"),
        (3, 'élan b "B" {'),
        (6, "remove lifepath c"),
        (7, "lifepath d { }"),
    ]
    parsed, diagnostics = parser.parse_file("t.rules", text)
    assert [d.code for d in diagnostics] == ["E103"]
    assert [type(s).__name__ for s in parsed.blocks] == ["Block", "Removal", "Block"]
    assert parsed.blocks[0].kind == "élan"  # type: ignore[union-attr]


def test_a_line_goes_on_after_a_token_that_never_ends_one(parser: Parser) -> None:
    """Lists and expressions continue on the next line after a comma, an operator or a field key; a line that
    ends where an entry can end ends the entry (`style: check`)."""
    text = "mechanic m {\n  style:\n    check\n  rules: a,\n    b or\n    c\n}\n"
    parsed, diagnostics = parser.parse_file("t.rules", text)
    assert diagnostics == []
    fields = {f.key: f.value for f in parsed.blocks[0].fields}  # type: ignore[union-attr]
    assert getattr(fields["style"], "text", None) == "check"
    assert len(getattr(fields["rules"], "items", ())) == 2


# A line ending in each word of the language after which lines go on (parse.CONTINUING_WORDS), where the parser
# reads it as that word, followed by a line it cannot read as the word's rest: `remove` is left out, as a
# removal ends at its line's end whatever its last word.
RAN_ON = {
    "skill": 'formula c "C" {{\n  params: {w}\n  formula: 1\n}}\n',
    "trait": 'formula c "C" {{\n  params: rank\n  formula: rank + {w}\n  note: "x"\n}}\n',
    "or": "lifepath x {{\n  requires: farmer {w}\n  years: 1\n}}\n",
    "and": "lifepath x {{\n  requires: farmer {w}\n  years: 1\n}}\n",
    "not": "lifepath x {{\n  requires: {w}\n  years: 1\n}}\n",
    "in": "lifepath x {{\n  requires: age {w}\n  years: 1\n}}\n",
    "any": "lifepath x {{\n  requires: {w}\n  years: 1\n}}\n",
    "ref": "lifepath x {{\n  skill: {w}\n  years: 1\n}}\n",
    "of": "lifepath x {{\n  requires: 2 {w}\n  years: 1\n}}\n",
    "tagged": "lifepath x {{\n  requires: any lifepaths {w}\n  years: 1\n}}\n",
    "by": "kind weapon {{\n  reach: map of int {w}\n  cost: int\n}}\n",
    "kind": "override {w}\n  weapon: int\n",
    "override": "{w}\n  kind: int\n",
    "patch": "{w}\n  lifepath: int\n",
}


def test_every_word_a_line_goes_on_after_is_covered() -> None:
    assert {w for w, t in KEYWORDS.items() if t in CONTINUING_WORDS} == {*RAN_ON, "remove"}


@pytest.mark.parametrize("word", sorted(RAN_ON))
def test_a_syntax_error_on_a_line_the_line_before_ran_onto_says_so(parser: Parser, word: str) -> None:
    text = RAN_ON[word].format(w=word)
    _, diagnostics = parser.parse_file("t.rules", text)
    [found] = diagnostics
    assert found.code == "E101" and found.pos is not None
    ran_onto = next(i for i, line in enumerate(text.split("\n"), 1) if line.endswith(f" {word}") or line == word) + 1
    assert found.pos.line == ran_onto
    assert found.hint == ran_on_hint(word)
    assert f"ends with '{word}'" in found.hint and f'quote it: "{word}"' in found.hint
    assert "previous field has no value" not in found.message  # it has one: the line went on
    quoted = text.replace(f" {word}\n", f' "{word}"\n', 1)
    if quoted != text:  # where it stands for a name, quoting it ends the line there
        assert all(d.hint != found.hint for d in parser.parse_file("t.rules", quoted)[1])


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        # `and` where only a name can stand is a name: the line ended, the error is the next line's own
        ("lifepath x {\n  requires: and\n  years: )\n}\n", "it closes no '(': remove it, or add the '(' it closes"),
        # the word and the error on one line: nothing ran on
        (
            'formula c "C" { params: skill formula: 1 }\n',
            "a ':' ends a field's name (name: value); the text before it is not one",
        ),
        # a string not closed is a mistake of its own line, whatever the line before
        ('lifepath x {\n  params: skill\n  "unclosed\n}\n', 'close it with " (strings cannot span lines)'),
        # comments and blank lines between: the line still ran on (the parser passes over them)
        (
            'formula c "C" {\n  params: skill  # the rating\n\n  # more\n  formula: 1\n}\n',
            "the line before ends with 'skill', a word of the language, so it went on onto this line; "
            "if 'skill' is a name, quote it: \"skill\"",
        ),
        # the last line crossed is the one that counts: `skill` took `Fighting`, `or` ran on
        (
            "lifepath x {\n  requires: skill\n  Fighting or\n  years: 1\n}\n",
            "the line before ends with 'or', a word of the language, so it went on onto this line; "
            "if 'or' is a name, quote it: \"or\"",
        ),
    ],
)
def test_the_ran_on_hint_only_where_the_line_ran_on(parser: Parser, text: str, hint: str | None) -> None:
    _, diagnostics = parser.parse_file("t.rules", text)
    assert [d.hint for d in diagnostics] == [hint]
