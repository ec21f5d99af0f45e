"""The formatter: canonical, idempotent, meaning-preserving, comment-keeping, and refusing what does not parse."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rulesdsl.compile.pipeline import compile_paths, parser
from rulesdsl.syntax import fast as fastparse
from rulesdsl.syntax import tree as m
from rulesdsl.tools.fmt import NotFormatted, format_text, rules_files

from .conftest import ROOT, WRITE_FAULTS, leftovers, refuse_writes, write_ruleset
from .test_properties import _PIECES

Cli = Callable[..., tuple[int, str, str]]
RULES = ROOT / "rules"


def shape(node: object) -> object:
    """A parsed node without its positions: what the text means, not where it was written."""
    if isinstance(node, tuple | list):
        return tuple(shape(n) for n in node)
    if is_dataclass(node) and not isinstance(node, m.Position):
        return (
            (type(node).__name__,)
            + tuple(
                shape(getattr(node, f.name))
                for f in fields(node)
                if f.name not in ("pos", "kind_pos", "key_pos", "target_pos", "trivia", "text", "path")
            )
            + ((node.text,) if isinstance(node, m.Name | m.Decimal) else ())
        )
    return node


def comments_of(text: str) -> list[str]:
    """Every comment in the text, as the scanner finds them."""
    found: list[fastparse.Token] = []
    fastparse.tokens(text, found)
    return [c[1].rstrip() for c in found]


def tree_comments(parsed: m.SourceFile) -> list[str]:
    """Every comment the tree holds, in the order the formatter prints them."""
    found: list[m.Comment | None] = []

    def of(node: m.Statement | m.Field | m.Row | m.KindField) -> None:
        trivia = node.trivia or m.Trivia()
        found.extend(trivia.leading)
        found.extend(trivia.inner)
        if isinstance(node, m.Block | m.Patch | m.KindDecl):
            items = sorted([*node.fields, *getattr(node, "rows", ())], key=lambda i: (i.pos.line, i.pos.column))
            for item in items:
                of(item)
        found.extend(trivia.closing)
        found.append(trivia.trailing)

    for statement in parsed.blocks:
        of(statement)
    return [c.text for c in [*found, *parsed.closing] if c is not None]


def parsed_shape(text: str) -> object:
    result, problems = parser().parse_file("x.rules", text)
    assert not problems, [p.message for p in problems]
    return shape(result.blocks)


def export(root: Path) -> str:
    compilation = compile_paths([root])
    assert compilation.ok, [d.message for d in compilation.diagnostics][:5]
    return json.dumps({r.id: r.documents() for r in compilation.rulesets}, sort_keys=True)


def test_every_file_in_rules_round_trips(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Formatting all of rules/ keeps the export, every comment, and a second pass changes nothing."""
    copy = tmp_path / "rules"
    shutil.copytree(RULES, copy)
    # unformatted on purpose: the committed files are formatted already, so squash their layout first
    for path in rules_files([copy]):
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("  ", " ").replace(" ->", "->"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    before = export(Path("rules"))
    files = list(rules_files([Path("rules")]))
    assert len(files) > 50
    for path in files:
        text = path.read_text(encoding="utf-8")
        formatted = format_text(text, str(path))
        assert format_text(formatted, str(path)) == formatted, f"{path}: a second pass changes it"
        assert comments_of(formatted) == comments_of(text), path
        assert parsed_shape(formatted) == parsed_shape(text), path
        path.write_text(formatted, encoding="utf-8")
    assert export(Path("rules")) == before


def test_rules_folder_is_formatted(cli: Cli) -> None:
    code, out, err = cli("fmt", "--check", str(RULES))
    assert code == 0, err
    assert "would reformat 0 files" in out


def test_canonical_layout() -> None:
    source = (
        "# top\n\n\n"
        'table hit "Hit" {   # header note\n'
        "  roll:1d10\n"
        "  columns: location,to_hit(int)\n"
        "  # rows\n"
        "  1 -> Head,-6\n"
        "  2-4-> Torso, -1   # most hits\n"
        '  5-10 -> "L. Leg", -2 @"p. 18"\n'
        "\n\n"
        "}\n"
        "skill A {root: Will   type: x tools: no}\n"
        'lifepath "Midwife" { time: 10 yrs  resources: 15\n'
        '  skills: 7 pts: "Animal Husbandry", Herbalism,\n'
        "       # the second line\n"
        "     Midwifery, Omen-wise\n"
        "  requires: any lifepath tagged female or (Farmer and not age>40)\n"
        "  # last\n"
        "}\n"
        "mechanic check { style: total  die: d10 }\n"
    )
    assert format_text(source) == (
        "# top\n\n"
        'table hit "Hit" {  # header note\n'
        "  roll: 1d10\n"
        "  columns: location, to_hit(int)\n"
        "  # rows\n"
        "  1    -> Head,     -6\n"
        "  2-4  -> Torso,    -1  # most hits\n"
        '  5-10 -> "L. Leg", -2 @ "p. 18"\n'
        "}\n\n"
        "skill A { root: Will  type: x  tools: no }\n\n"
        'lifepath "Midwife" {\n'
        "  time: 10 yrs  resources: 15\n"
        '  skills: 7 pts: "Animal Husbandry", Herbalism,\n'
        "    # the second line\n"
        "    Midwifery, Omen-wise\n"
        "  requires: any lifepath tagged female or (Farmer and not age > 40)\n"
        "  # last\n"
        "}\n\n"
        "mechanic check { style: total  die: d10 }\n"
    )


def test_kind_declarations_patches_and_removals() -> None:
    source = (
        'kind weapon "Weapon" {   reach: int in 1..5 = 1 "doc"\n'
        '  hands: one of one,two, "two or more"\n'
        "  parts: list in 1..2 of ref skill?\n"
        "  cost: points of ref skill?   stack_on: int in 2..?\n"
        "}\n"
        "patch lifepath farmer { resources: 7\n  leads += x, y\n  skills -= Sing }\n"
        'remove   spell   "Arcane Kindness"\n'
    )
    formatted = format_text(source)
    assert format_text(formatted) == formatted
    assert parsed_shape(formatted) == parsed_shape(source)
    assert 'hands: one of one, two, "two or more"' in formatted
    assert "cost: points of ref skill?  stack_on: int in 2..?" in formatted
    assert "  leads += x, y\n  skills -= Sing\n" in formatted
    assert formatted.endswith('remove spell "Arcane Kindness"\n')


def test_defaults_keep_their_line_breaks_and_comments() -> None:
    source = (
        'kind brawler "Brawler" {\n'
        '  tags: list of word = unarmed,close,\n     quick,   # and fast\n     sly "doc"\n'
        '  fist: record { name: text  moves: list of word = jab,\n hook } = {name: "Fist"}'
        "  speeds: map of int = land 3\n"
        "}\n"
    )
    formatted = format_text(source)
    assert format_text(formatted) == formatted
    assert parsed_shape(formatted) == parsed_shape(source)
    assert '  tags: list of word = unarmed, close,\n    quick,  # and fast\n    sly "doc"\n' in formatted
    # a record type is on one line, its fields' defaults too (the field after it began on a line of its own)
    assert '  fist: record { name: text  moves: list of word = jab, hook } = { name: "Fist" }\n  speeds:' in formatted


def test_formula_steps() -> None:
    source = (
        'formula damage_taken "Damage taken" {\n'
        "  params: raw, where(ref location), sp,resistant(bool)\n"
        "  let through=max(0, raw -  sp)   # armour first\n"
        "  let taken =  if(resistant,\n     floor(through / 2), through)\n"
        "  formula: floor(taken * where.multiplier)\n"
        "}\n"
        "formula twice { params: a   let b = a * 2  formula: b }\n"
    )
    formatted = format_text(source)
    assert format_text(formatted) == formatted
    assert parsed_shape(formatted) == parsed_shape(source)
    assert "  let through = max(0, raw - sp)  # armour first\n" in formatted
    assert "  let taken = if(resistant,\n    floor(through / 2), through)\n" in formatted  # the author's break kept
    assert "formula twice { params: a  let b = a * 2  formula: b }" in formatted


def test_a_file_that_does_not_parse_is_refused_and_left_alone(cli: Cli, tmp_path: Path) -> None:
    folder = write_ruleset(tmp_path / "r", {"a.rules": "trait A {type: die}\ntrait B { type: \n"})
    before = (folder / "a.rules").read_text()
    code, _out, err = cli("fmt", str(folder))
    assert code == 1
    assert "a.rules: not formatted: it does not parse" in err and "[E10" in err
    assert (folder / "a.rules").read_text() == before
    with pytest.raises(NotFormatted):
        format_text(before)


def test_check_fails_on_an_unformatted_file_and_fmt_fixes_it(cli: Cli, tmp_path: Path) -> None:
    folder = write_ruleset(tmp_path / "r", {"a.rules": "trait A {type: die}\n"})
    code, _out, err = cli("fmt", "--check", str(folder))
    assert code == 1 and "would reformat" in err and "a.rules" in err
    assert cli("fmt", str(folder))[0] == 0
    assert (folder / "a.rules").read_text() == "trait A { type: die }\n"
    assert cli("fmt", "--check", str(folder))[0] == 0


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES), max_size=40).map(" ".join))
def test_whatever_parses_formats_to_the_same_meaning(text: str) -> None:
    """The compiler's fuzzing inputs: a file either is refused, or formats to text that parses to the
    same model, keeps its comments, and is a fixed point."""
    try:
        formatted = format_text(text)
    except NotFormatted:
        return
    assert parsed_shape(formatted) == parsed_shape(text)
    assert format_text(formatted) == formatted
    assert comments_of(formatted) == comments_of(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_no_text_crashes_the_formatter(text: str) -> None:
    try:
        formatted = format_text(text)
    except NotFormatted as exc:
        assert all(d.message for d in exc.diagnostics)
        return
    assert format_text(formatted) == formatted


@pytest.mark.parametrize("fault", WRITE_FAULTS)
def test_a_refused_write_names_the_file_and_leaves_it_as_it_was(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    """Issue 17: `fmt` on a read-only or full disk was an internal error (exit 3)."""
    folder = write_ruleset(tmp_path / "r", {"a.rules": "trait A {type: die}\n"})
    refuse_writes(monkeypatch, fault)
    code, _out, err = cli("fmt", str(folder))
    assert code == 2, err
    assert "cannot write" in err and "a.rules" in err and "internal error" not in err
    assert (folder / "a.rules").read_text() == "trait A {type: die}\n"
    assert leftovers(folder) == []
