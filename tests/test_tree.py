"""The syntax tree is lossless: every statement, field and row spans its whole text, every comment and blank
line is kept by the node it stands by, and the spellings an author chooses are kept; the formatter prints
all of it back. Both parsers (the fast path and Lark) build the same tree."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rulesdsl.compile.pipeline import compile_paths
from rulesdsl.syntax import fast as fastparse
from rulesdsl.syntax import tree as m
from rulesdsl.syntax.parse import Parser
from rulesdsl.tools.fmt import NotFormatted, format_text

from .conftest import ROOT, write_ruleset
from .test_fmt import comments_of, tree_comments

Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture(scope="module")
def lark() -> Parser:
    return Parser()


def both(lark: Parser, text: str) -> m.SourceFile:
    """The tree both parsers make of a text (they must agree)."""
    slow, problems = lark.parse_with_lark("x.rules", text)
    assert problems == []
    fast = fastparse.parse("x.rules", text)
    assert fast == slow
    return fast


def spanned(text: str, pos: m.Position) -> str:
    lines = text.split("\n")
    if pos.line == pos.end_line:
        return lines[pos.line - 1][pos.column - 1 : pos.end_column - 1]
    middle = lines[pos.line : pos.end_line - 1]
    return "\n".join([lines[pos.line - 1][pos.column - 1 :], *middle, lines[pos.end_line - 1][: pos.end_column - 1]])


SPANS = """\
table hit "Hit" {
  roll: 1d6
  columns: location, to_hit(int)
  -1 -> Head, max(1, 2) @ "p. 3"
  (2) -> "Torso", weapon[sword]
}
skill A { root: Will }
lifepath b "B" {
  requires: not (Farmer
    or trait Brave)
}
kind weapon "W" {
  reach: int in 1..5 = 1 "how far"
  cost: points of ref skill?
}
patch lifepath farmer { resources: 7
  leads += x, y }
remove skill "Sing"
"""


def test_every_statement_field_and_row_spans_its_whole_text(lark: Parser) -> None:
    tree = both(lark, SPANS)
    table, skill, lifepath, kind, patch, removal = tree.blocks
    assert isinstance(table, m.Block) and isinstance(lifepath, m.Block) and isinstance(skill, m.Block)
    assert spanned(SPANS, table.pos).startswith('table hit "Hit" {') and spanned(SPANS, table.pos).endswith("]\n}")
    assert spanned(SPANS, skill.pos) == "skill A { root: Will }"
    assert [spanned(SPANS, f.pos) for f in table.fields] == ["roll: 1d6", "columns: location, to_hit(int)"]
    assert [spanned(SPANS, f.key_pos) for f in table.fields] == ["roll", "columns"]
    assert [spanned(SPANS, r.pos) for r in table.rows] == [
        '-1 -> Head, max(1, 2) @ "p. 3"',
        '(2) -> "Torso", weapon[sword]',
    ]
    assert spanned(SPANS, lifepath.fields[0].pos) == "requires: not (Farmer\n    or trait Brave)"
    assert isinstance(kind, m.KindDecl)
    assert [spanned(SPANS, f.pos) for f in kind.fields] == [
        'reach: int in 1..5 = 1 "how far"',
        "cost: points of ref skill?",
    ]
    assert spanned(SPANS, kind.pos).endswith("skill?\n}")
    assert isinstance(patch, m.Patch)
    assert spanned(SPANS, patch.pos) == "patch lifepath farmer { resources: 7\n  leads += x, y }"
    assert spanned(SPANS, removal.pos) == 'remove skill "Sing"'


TRIVIA = """\
# about the file

# about A
skill A { root: Will }  # after A


lifepath b "B" {  # after the brace
  # before time
  time: 3 yrs  resources: 2  # after resources

  skills: 2 pts: x,  # after x
    # among the items
    y
  # before the brace
}
# at the end
"""


def test_comments_and_blank_lines_go_to_the_node_they_stand_by(lark: Parser) -> None:
    tree = both(lark, TRIVIA)
    skill, lifepath = tree.blocks
    assert skill.trivia is not None and lifepath.trivia is not None and isinstance(lifepath, m.Block)
    assert [c.text for c in skill.trivia.leading] == ["# about the file", "# about A"]
    assert [c.blank_lines for c in skill.trivia.leading] == [0, 1]
    assert skill.trivia.trailing is not None and skill.trivia.trailing.text == "# after A"
    assert lifepath.trivia.blank_lines == 2
    assert [c.text for c in lifepath.trivia.inner] == ["# after the brace"]
    assert [c.text for c in lifepath.trivia.closing] == ["# before the brace"]
    time, resources, skills = lifepath.fields
    assert time.trivia is not None and [c.text for c in time.trivia.leading] == ["# before time"]
    assert resources.trivia is not None and resources.trivia.trailing is not None
    assert resources.trivia.trailing.text == "# after resources"
    assert skills.trivia is not None and skills.trivia.blank_lines == 1
    assert [c.text for c in skills.trivia.inner] == ["# after x", "# among the items"]
    assert [c.text for c in tree.closing] == ["# at the end"]
    # several blank lines print as one, and a statement over several lines stands apart
    assert format_text(TRIVIA) == TRIVIA.replace("\n\n\nlifepath", "\n\nlifepath").replace("}\n#", "}\n\n#")


def rules_files() -> list[Path]:
    return [*sorted((ROOT / "rules").rglob("*.rules")), *sorted((ROOT / "tests" / "examples").rglob("*.rules"))]


def test_the_tree_holds_every_comment_of_every_file_once() -> None:
    parser = Parser()
    for path in rules_files():
        text = path.read_text(encoding="utf-8")
        parsed, problems = parser.parse_file(path.name, text)
        if problems:
            continue
        assert sorted(tree_comments(parsed)) == sorted(comments_of(text)), path


# Every spelling the grammar allows for one meaning where the author chooses: each is printed back as written.
SPELLINGS = """\
career scout {
  a: check 8+  b: check 0 8+  c: check END 5+
  d: d6  e: 1d6  f: d66  g: (slot - 3)d6
  h: any lifepath tagged t  i: any lifepaths  j: 1 of lifepaths  k: 2 of lifepath in setting s
  l: any (A, "B")  m: 1 of (A)
  n: 1 pt: x  o: 1 pts: x  p: 2 pts: x, y  q: 2 pt: x
  s: 2..4  t: <=3  u: >=4  v: 10+  w: x2  x: x1/2  y: 4^  z: —
  aa: +1 M/P  ab: 8 yrs  ac: "q" or (trait T and skill "S")  ad: career navy  ae: ref table
  af: "by"(ref location), by(int)  ag: "f"("a", b)
}

table t {
  2-4  -> a
  5..6 -> b
  <=1  -> c
  7+   -> d
}

kind k { a: int in 0..  b: int in ..10  c: list in 1..2 of text  d: check of task  e: number in -1.5..-0.25 }
override kind spell { a: one of x, "y z" = x "doc" }
kind l { a: list of word = x, "y" "doc"  b: map of int = land 25, fly x2  c: map of text = { home: "x" } }
kind r { a: record { b: list of int = 1, 2 } = { b: 3 }  c: list of record { d: int } = { d: 1 }, { d: 2 } }
kind s { a: map of dice = f 1d6  b: years = 8 yrs }
"""


def test_every_spelling_round_trips(lark: Parser) -> None:
    assert format_text(SPELLINGS) == SPELLINGS
    tree = both(lark, SPELLINGS)
    career = tree.blocks[0]
    assert isinstance(career, m.Block)
    check = career.fields[0].value
    assert isinstance(check, m.Check) and check.modifier is None and check.target == 8
    params = career.fields[-2].value
    assert isinstance(params, m.ValueList)
    quoted, bare = params.items
    assert isinstance(quoted, m.Call) and quoted.function == "by" and quoted.quoted
    assert isinstance(bare, m.Call) and bare.function == "by" and not bare.quoted
    listed = tree.blocks[-3]
    assert isinstance(listed, m.KindDecl) and listed.fields[0].doc is not None and listed.fields[0].doc.value == "doc"
    assert isinstance(listed.fields[0].default, m.ValueList) and isinstance(listed.fields[2].default, m.Record)


def test_a_check_without_a_modifier_means_a_modifier_of_0(tmp_path: Path) -> None:
    """`check 8+` and `check 0 8+` compile to the same thing."""

    def compiled(check: str) -> object:
        folder = write_ruleset(
            tmp_path / check.replace(" ", "_").replace("+", "p"),
            {
                "a.rules": "kind career { survival: check }\nmechanic task { style: check  die: 2d6 }\n"
                f"career scout {{ survival: {check} }}\n"
            },
        )
        compilation = compile_paths([folder])
        assert compilation.ok, [d.message for d in compilation.diagnostics]
        return [r.documents() for r in compilation.rulesets]

    assert compiled("check 8+") == compiled("check 0 8+")


def test_fmt_is_idempotent_on_rules_and_the_examples(cli: Cli) -> None:
    code, out, err = cli("fmt", "--check", str(ROOT / "rules"), str(ROOT / "tests" / "examples"))
    assert code == 0, err
    assert "would reformat 0 files" in out


def test_a_file_with_a_syntax_error_is_left_alone_and_fmt_says_where(cli: Cli, tmp_path: Path) -> None:
    text = "# keep me\nskill A {root: Will}\nskill B { root: }\n"
    folder = write_ruleset(tmp_path / "r", {"a.rules": text})
    for args in (("fmt",), ("fmt", "--check")):
        code, _out, err = cli(*args, str(folder))
        assert code == 1
        assert "a.rules: not formatted: it does not parse" in err
        assert "a.rules:3:17: error: 'root' has no value [E101]" in err, err
        assert (folder / "a.rules").read_text() == text
    with pytest.raises(NotFormatted):
        format_text(text)


EXPRESSIONS = """\
formula f "F" {
  params: a, b, t
  formula: not (a > 1) and -(a + b) * 2 >= +b or max(1, (a)) in (1 + 1)..t[a - 1] or 3^ = a.x
}
lifepath g "G" {
  requires: trait "Brave" or skill Sword or any lifepath in setting x tagged y or
    2 of (a, b) or not career navy or ((a)) or -3 > -(2)
}
table r "R" {
  roll: (2 + a)d6 + 1
  columns: next(ref table), n
  1-6 -> none, 2 x r
}
kind k "K" { v: int in -3..-1 = -2  w: number in -1.5..2.5 }
"""


def _expressions(node: object) -> list[m.Value]:
    """Every expression node below `node` (a value of a field, a row's keys and cells, a type's bounds)."""
    found: list[m.Value] = []
    if isinstance(node, tuple):
        for item in node:
            found += _expressions(item)
    elif isinstance(node, m.Value):  # type: ignore[misc,arg-type]
        found.append(node)  # type: ignore[arg-type]
    if isinstance(node, m._Node) and not isinstance(node, m.Position | m.Trivia | m.Comment):
        for name in type(node).__slots__:
            child = getattr(node, name)
            if isinstance(child, m._Node | tuple) and child is not node:
                found += _expressions(child)
    return found


def _bare(node: object) -> object:
    """A node without its positions (and trivia): what it means, to compare a re-read with the original."""
    if isinstance(node, tuple):
        return tuple(_bare(item) for item in node)
    if isinstance(node, m._Node) and not isinstance(node, m.Position):
        names = type(node).__slots__
        return (type(node).__name__, *(_bare(getattr(node, n)) for n in names if n not in ("pos", "trivia")))
    return node


@pytest.mark.parametrize("source", ["EXPRESSIONS", "rules"])
def test_every_expression_spans_its_whole_text(lark: Parser, source: str) -> None:
    """Every expression node (`not x`, `trait X`, `-x`, a call to its `)`, a grouped first operand's brackets)
    spans exactly its text: that text, read again on its own, is the same expression."""
    if source == "EXPRESSIONS":
        texts = {"x.rules": EXPRESSIONS}
    else:
        texts = {str(p): p.read_text(encoding="utf-8") for p in sorted((ROOT / "rules").rglob("*.rules"))[::7]}
    checked = 0
    for path, text in texts.items():
        tree = both(lark, text) if source == "EXPRESSIONS" else fastparse.parse(path, text)
        blocks = tuple(b for b in tree.blocks if not isinstance(b, m.KindDecl))
        for node in _expressions(blocks):
            if isinstance(node, m.Points | m.Quantity | m.Check | m.Record | m.MapEntry | m.RefMarker):
                continue  # field values of their own, not expressions that can stand alone in a formula
            written = spanned(text, node.pos)
            again = fastparse.parse("y.rules", f"skill s {{\n  x: {written}\n}}\n").blocks[0]
            assert isinstance(again, m.Block)
            assert _bare(again.fields[0].value) == _bare(node), (path, node.pos, written)
            checked += 1
    assert checked > (40 if source == "EXPRESSIONS" else 500)
    if source == "EXPRESSIONS":  # a type's bounds (a negative decimal there is one number, not `-(1.5)`)
        kind = tree.blocks[-1]
        assert isinstance(kind, m.KindDecl)
        bounds = [b for f in kind.fields for b in (f.type.low, f.type.high) if isinstance(f.type, m.SimpleType)]
        assert [spanned(EXPRESSIONS, b.pos) for b in bounds if b is not None] == ["-3", "-1", "-1.5", "2.5"]
