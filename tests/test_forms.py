"""Small gaps in the forms of the language (issue 19's helpers reported them): a formula parameter named like a
word of the language, and keep or explode after a bracketed count (docs/language.md's examples are checked in
test_language_docs.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulesdsl.compile.pipeline import compile_paths
from rulesdsl.syntax import fast
from rulesdsl.syntax.parse import Parser
from rulesdsl.targets.build import render_all
from rulesdsl.tools.fmt import format_text

from .conftest import run_python, write_ruleset

KEYWORD_PARAMS = """
formula doubled "Doubled" { params: "skill", "any"  formula: "skill" * 2 + "any" }
formula caller "Caller" { params: "trait"  formula: doubled("trait", 1) }
formula aimed "Aimed" { params: "by", "tagged"  formula: if("tagged" > 0, doubled("by", 0), 0) + "tagged" }
"""


@pytest.fixture(scope="module")
def keyword_package(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    folder = tmp_path_factory.mktemp("keywords")
    write_ruleset(folder / "rules" / "demo", {"a.rules": KEYWORD_PARAMS})
    result = compile_paths([folder / "rules"])
    assert not result.diagnostics, [d.message for d in result.diagnostics]
    out = folder / "out"
    files = render_all(result.rulesets)
    for name, text in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text, encoding="utf-8")
    return out, files


def test_a_parameter_named_like_a_word_of_the_language_computes(keyword_package: tuple[Path, dict[str, str]]) -> None:
    # `skill`, `any`, `trait`, `by` and `tagged` are words of the language: quoted, a declared parameter's name
    # is that parameter in its formula (and in a call's arguments), as a bare name would be.
    out, files = keyword_package
    code = """
import demo
print(demo.doubled(skill=3, any=1), demo.caller(trait=2), demo.aimed(by=2, tagged=1), demo.aimed(by=2, tagged=0))
"""
    result = run_python(code, out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["7", "5", "5", "0"]
    assert "def doubled(*, skill: int, any: int) -> int:" in files["demo/_formulas.py"]


def test_the_reference_shows_such_a_parameter_as_a_parameter(keyword_package: tuple[Path, dict[str, str]]) -> None:
    page = keyword_package[1]["site/demo/formula.html"]
    assert "<dd><var>skill</var> \u00d7 2 + <var>any</var></dd>" in page  # parameters, not links
    assert '<a href="formula.html#doubled">Doubled</a>(<var>trait</var>, 1)' in page


def test_a_quoted_name_that_is_no_parameter_is_still_text(tmp_path: Path) -> None:
    write_ruleset(tmp_path / "rules" / "demo", {"a.rules": 'formula f "F" { params: skill2  formula: "skill" * 2 }'})
    result = compile_paths([tmp_path / "rules"])
    assert [d.code for d in result.diagnostics] == ["E327"]


TYPED_KEYWORD_PARAMS = """
kind location "Hit locations" { multiplier: number }
location arm "Arm" { multiplier: 0.5 }
location head "Head" { multiplier: 3 }

formula struck "Struck" {
  params: raw, "by"(ref location), "skill"(bool)
  formula: floor(raw * "by".multiplier) + "skill"
}

formula blow "Blow" { params: "in"(ref location)  formula: struck(10, "in", no) + "struck"(2, head, yes) }
"""


def test_a_typed_parameter_named_like_a_word_of_the_language(tmp_path: Path) -> None:
    """`"by"(ref location)`: quoted, with its type, read alike by both parsers; `"by".multiplier` reads the
    entity it names, and the package's function takes it by its name."""
    write_ruleset(tmp_path / "rules" / "demo", {"a.rules": TYPED_KEYWORD_PARAMS})
    result = compile_paths([tmp_path / "rules"])
    assert not result.diagnostics, [d.message for d in result.diagnostics]
    out = tmp_path / "out"
    files = render_all(result.rulesets)
    for name, text in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text, encoding="utf-8")
    assert "def struck(*, raw: int, by: str, skill: bool) -> int:" in files["demo/_formulas.py"]
    result_ = run_python("import demo\nprint(demo.struck(raw=7, by='arm', skill=True), demo.blow(in_='head'))", out)
    assert result_.returncode == 0, result_.stderr
    assert result_.stdout.split() == ["4", "37"]
    tree, problems = Parser().parse_with_lark("a.rules", TYPED_KEYWORD_PARAMS)
    assert not problems and fast.parse("a.rules", TYPED_KEYWORD_PARAMS) == tree
    assert format_text(TYPED_KEYWORD_PARAMS.lstrip()) == TYPED_KEYWORD_PARAMS.lstrip()


# ---------------------------------------------------------------- keep and explode after a bracketed count

BRACKETED = """
formula best "Best" { params: n  formula: (n)d6kh3 }
formula worst "Worst" { params: n  formula: (n + 1)d6kl1 + (n)d6dl1 }
formula wild "Wild" { params: n  formula: (n)d6! + 1 }
"""


def test_a_bracketed_count_keeps_drops_and_explodes(tmp_path: Path) -> None:
    write_ruleset(tmp_path / "rules" / "demo", {"a.rules": BRACKETED})
    result = compile_paths([tmp_path / "rules"])
    assert not result.diagnostics, [d.message for d in result.diagnostics]
    out = tmp_path / "out"
    files = render_all(result.rulesets)
    for name, text in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text, encoding="utf-8")
    assert "return _rt.dice(n, 6, 'kh3')" in files["demo/_formulas.py"]
    assert "<dd><var>n</var>d6kh3</dd>" in files["site/demo/formula.html"]
    code = """
import random
from fractions import Fraction
import demo
best = demo.best(n=4)
print(best, best.minimum, best.maximum, best.chance(18, 18) == Fraction(21, 1296))
worst = demo.worst(n=2)
print(worst, worst.minimum, worst.maximum)
wild = demo.wild(n=1)
print(wild, wild.chance(8, None) == Fraction(1, 6))
thrown = best.throw(random.Random(7))
print(len(thrown.faces), 3 <= thrown.total <= 18)
for n in (2, 1):
    try:
        demo.best(n=n) if n == 2 else demo.worst(n=n)
    except ValueError as problem:
        print(problem)
"""
    done = run_python(code, out)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "4d6kh3 3 18 True",
        "3d6kl1 + 2d6kh1 2 12",
        "1d6! + 1 True",
        "4 True",
        "cannot roll 2d6kh3: it would keep 3 of 2 dice",
        "cannot roll 1d6dl1: it would keep 0 of 1 dice",
    ]


@pytest.mark.parametrize(
    "source",
    [
        'formula f "F" { params: n  formula: (n)d6kh3 + (n - 1)d8! + (2 * n)d10dl1 }\n',
        'kind monster "Monster" { damage: dice }\nmonster a { damage: 4d6!kh3 }\nmonster b { damage: 2D6!dl1 }\n',
    ],
)
def test_the_fast_path_and_the_formatter_read_them_as_lark_does(source: str) -> None:
    from rulesdsl.syntax import fast as fastparse
    from rulesdsl.syntax.parse import Parser
    from rulesdsl.tools.fmt import format_text

    parser = Parser()
    tree, problems = parser.parse_with_lark("a.rules", source)
    assert problems == []
    assert fastparse.parse("a.rules", source) == tree
    formatted = format_text(source)
    assert format_text(formatted) == formatted
    assert formatted == source.replace("D6", "d6")  # as written, in the canonical spelling
