"""Every example in docs/language.md is checked: one that is a whole ruleset (a plain fence, or ```rules)
compiles without errors, and a fragment (```rules-fragment: it names what is defined elsewhere) at least
parses. A ```rules-sketch shows the shape of the language with placeholders and is not rules. (A fence's
info string, not an HTML comment: the reference shows raw HTML as text.)"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from rulesdsl.compile.pipeline import compile_paths
from rulesdsl.syntax.parse import Parser

from .conftest import write_ruleset

LANGUAGE = Path(__file__).resolve().parent.parent / "docs" / "language.md"
FENCE = "```"
MARKS = {"": "", "rules": "", "rules-fragment": "fragment", "rules-sketch": "sketch"}


@dataclass(frozen=True)
class Example:
    line: int  # of the opening fence, 1-based
    mark: str  # "", "fragment" or "sketch"
    text: str


def examples(path: Path = LANGUAGE) -> list[Example]:
    """The fenced blocks of a Markdown file, with the mark their fence's info string gives."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Example] = []
    n = 0
    while n < len(lines):
        if not lines[n].startswith(FENCE):
            n += 1
            continue
        start = n
        info = lines[n].removeprefix(FENCE).strip()
        mark = MARKS.get(info, info)  # an unknown info string is its own mark: the test below refuses it
        n += 1
        while n < len(lines) and not lines[n].startswith(FENCE):
            n += 1
        found.append(Example(start + 1, mark, "\n".join(lines[start + 1 : n]) + "\n"))
        n += 1
    return found


EXAMPLES = examples()
CHECKED = [e for e in EXAMPLES if e.mark == ""]
FRAGMENTS = [e for e in EXAMPLES if e.mark == "fragment"]


def test_every_example_is_marked_as_known() -> None:
    assert {e.mark for e in EXAMPLES} <= {"", "fragment", "sketch"}
    assert len([e for e in EXAMPLES if e.mark == "sketch"]) <= 1  # the grammar's shape, at the top: no more
    assert len(CHECKED) >= 3 * len(FRAGMENTS)  # fragments stay the exception


@pytest.mark.parametrize("example", [*CHECKED, *FRAGMENTS], ids=lambda e: f"line{e.line}")
def test_every_example_parses(example: Example) -> None:
    _, problems = Parser().parse_file("language.rules", example.text)
    assert not problems, [p.message for p in problems]


@pytest.mark.parametrize("example", CHECKED, ids=lambda e: f"line{e.line}")
def test_every_whole_example_compiles_clean(example: Example, tmp_path: Path) -> None:
    write_ruleset(tmp_path / "rules" / "demo", {"example.rules": example.text})
    result = compile_paths([tmp_path / "rules"])
    errors = [f"{d.code} {d.message}" for d in result.diagnostics if d.severity == "error"]
    assert not errors, f"docs/language.md line {example.line}: {errors}"


def test_the_new_forms_are_among_the_checked_examples() -> None:
    # records, maps, choices, steps, typed params, tables (reference keys, a name key beside a rolled one,
    # `otherwise`, `N x table`), highest-die pools and dice algebra: each in an example that compiles
    checked = "\n".join(e.text for e in CHECKED)
    for form in (
        "record {",
        "map of int",
        "choices of ref",
        "1 of (",
        "let ",
        "(ref location)",
        "(bool)",
        "keys: species(ref species)",
        "roll: region, 1d20",
        "otherwise ->",
        "2 x treasure",
        "style: highest",
        "4d6kh3",
        "(n)d6kh3",
        '"skill" * 2',
    ):
        assert form in checked, form
