"""One type checker for formulas, wherever a formula stands (issue: what checks clean is right).

Each test below was a defect on main: a ruleset that checked clean, then failed to build, import, pass
`mypy --strict` or compute. The checker's own rules are unit-tested first.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest

from rulesdsl.compile import formula_types as ft
from rulesdsl.compile import ir
from rulesdsl.compile.pipeline import Compilation, compile_paths
from rulesdsl.syntax.tree import Position
from rulesdsl.targets.build import render_all, write_output

from .conftest import messages, quality_command, run_python, write_ruleset

AT = Position("f.rules", 1, 1, 1, 2)


def num(value: int | Fraction) -> ir.Num:
    return ir.Num(value, AT)


def var(name: str) -> ir.Var:
    return ir.Var(name, AT)


def dice(text: str = "1d6") -> ir.DiceExpr:
    return ir.DiceExpr(ir.Dice((ir.DiceTerm(1, 6),), 0, text, AT), AT)


@pytest.mark.parametrize(
    ("expr", "returns"),
    [
        (ir.BinOp("+", num(1), num(2), AT), ft.INT),
        (ir.BinOp("/", num(1), num(2), AT), ft.FRACTION),
        (ir.BinOp("*", var("a"), num(Fraction(3, 2)), AT), ft.FRACTION),
        (ir.Call("min", (num(1), num(Fraction(3, 2))), AT), ft.NUMBER),  # min gives one of them, either type
        (ir.Call("max", (num(1), var("a")), AT), ft.INT),
        (ir.Call("floor", (num(Fraction(3, 2)),), AT), ft.INT),
        (ir.Logic("or", (var("a"), var("b")), AT), ft.BOOL),
        (ir.If(ir.Compare(">", var("a"), num(1), AT), num(1), num(Fraction(1, 2)), AT), ft.NUMBER),
        (ir.BinOp("+", dice(), num(3), AT), ft.DICE),
        (ir.BinOp("-", dice(), dice(), AT), ft.DICE),  # issue 19: dice taken away from dice
        (ir.BinOp("*", dice(), num(2), AT), ft.DICE),
        (ir.BinOp("/", dice(), num(2), AT), ft.DICE),  # rounded down
        (ir.Call("max", (num(1), dice()), AT), ft.DICE),
        (ir.Neg(dice(), AT), ft.DICE),
    ],
)
def test_what_a_formula_yields(expr: ir.Expr, returns: str) -> None:
    typing = ft.check(expr, ft.Env())
    assert typing.problems == []
    assert typing.returns == returns


@pytest.mark.parametrize(
    ("expr", "words"),
    [
        (ir.BinOp("/", var("a"), ir.BinOp("-", num(2), num(2), AT), AT), "divides by zero"),
        (ir.BinOp("+", dice(), num(Fraction(1, 2)), AT), "dice add only dice and whole numbers"),
        (ir.BinOp("*", dice(), num(Fraction(3, 2)), AT), "a roll is multiplied by whole numbers only"),
        (ir.BinOp("*", dice(), dice(), AT), "a roll cannot be multiplied by a roll"),
        (ir.BinOp("/", num(6), dice(), AT), "nothing is divided by a roll"),
        (ir.BinOp("/", dice(), num(0), AT), "divide by 1 or more"),
        (ir.Call("max", (dice(), dice()), AT), "bounds one roll by whole numbers, not two rolls"),
        (ir.If(dice(), num(1), num(2), AT), "this is dice, where a number or a bool belongs"),
        (ir.DiceOf(ir.BinOp("/", var("a"), num(2), AT), num(6), AT), "where a whole number of dice belongs"),
    ],
)
def test_what_a_formula_cannot_compute(expr: ir.Expr, words: str) -> None:
    problems = ft.check(expr, ft.Env()).problems
    assert [p.message for p in problems if words in p.message], [p.message for p in problems]


def test_any_depth_is_typed_without_recursion() -> None:
    expr: ir.Expr = num(0)
    for _ in range(5000):
        expr = ir.BinOp("+", expr, num(1), AT)
    assert ft.check(expr, ft.Env()).returns == ft.INT


# ---------------------------------------------------------------- checks clean => builds, imports, type-checks, runs

TYPED = """
attribute body { abbr: BODY  group: physical }
attribute hits { abbr: HP  group: derived  formula: bonus[BODY] * 2 }
table bonus { columns: b(int)
  <=5 -> 1
  6+  -> 3
}
formula either { params: a, b  formula: a or b }
formula both { params: a, b  formula: a and not b }
formula least { params: a  formula: min(a, 1.5) }
formula hit { params: n  formula: (n)d6 + 1 }
formula again { params: n  formula: hit(n) }
table cells { params: a, ATN  columns: x(formula)
  half -> a * 1.5
  tn   -> ATN + 1
}
kind spell "Spells" { damage: formula of slot  tags: list in 2..3 of int? }
spell bolt "Bolt" { damage: (slot - 1)d6 + 2  tags: none }
formula constant { params: a  formula: if(2 = 5, a, 1) + if(3 <= 3, 1, a) }
formula constant_dice { params: a  formula: 1d3 + if(9 = 5 and 0 > a, a, a) }
formula magnitude { params: a  formula: abs(min(a, 1.5)) + abs(if(a > 1, a, a / 2)) }
kind weapon "Weapons" { reach: int }
weapon sword "Sword" { reach: 1 }
formula reach_test { params: a  formula: if(9 = weapon[sword].reach, a, 2) }
formula decided_if { params: a  formula: 3 != -(if(0.25 <= 5, 5, a)) }
attribute str "Strength" { group: physical }
attribute brawn "Brawn" { group: derived  formula: str + 1 }
attribute might "Might" { group: derived  formula: brawn * 2 }
"""


def _build(tmp_path: Path, source: str) -> Path:
    folder = write_ruleset(tmp_path / "rules" / "demo", {"a.rules": source})
    result = compile_paths([folder])
    assert result.ok, messages(result)
    out = tmp_path / "out"
    write_output(out, render_all(result.rulesets))
    return out


def test_typed_formulas_build_import_and_compute(tmp_path: Path) -> None:
    """`a or b` returned a number from a function declared `-> bool`; an attribute looking a table up raised
    KeyError at build time; a decimal in a formula cell raised NameError: Fraction when evaluated; a
    declared kind's formula never had its names checked. Found by the generated-ruleset run: `2 = 5`,
    `abs()` of a number that may be a fraction and `none` for a list that cannot be empty failed mypy."""
    out = _build(tmp_path, TYPED)
    ran = run_python(
        "import demo\n"
        "print(demo.either(a=2, b=0), demo.both(a=3, b=0), demo.least(a=4), demo.again(n=2))\n"
        "print(demo.derive_attributes({'body': 7, 'str': 3})['hits'])\n"
        "t = demo.TABLES['cells']\n"
        "print(t.lookup('half').x.evaluate(a=3), t.lookup('tn').x.evaluate(atn=7))\n"
        "print(demo.SPELLS['bolt'].damage.evaluate(slot=3), demo.SPELLS['bolt'].tags)\n"
        "print(demo.constant(a=4), demo.constant_dice(a=2), demo.magnitude(a=-3), demo.reach_test(a=5))\n"
        "print(demo.derive_attributes({'body': 7, 'str': 3})['might'], demo.decided_if(a=1))\n",
        out,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == [
        "True True 3/2 2d6 + 1",
        "6",
        "9/2 8",
        "2d6 + 2 None",
        "2 1d3 + 2 9/2 2",
        "8 True",
    ]


def test_typed_formulas_pass_mypy_strict(tmp_path: Path) -> None:
    out = _build(tmp_path, TYPED)
    checked = subprocess.run(quality_command("mypy", "demo"), cwd=out, capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize(
    ("source", "words"),
    [
        # a misspelt name in a check, a formula cell and a declared kind's formula field
        (
            "attribute e { abbr: END  group: g }\nmechanic m { style: check  die: 2d6 }\n"
            'kind career "C" { survival: check }\ncareer c { survival: check ENDD 8+ }\n',
            "did you mean 'END'?",
        ),
        ("table t { params: blow  columns: x(formula)\n  1 -> blw + 1\n}\n", "did you mean 'blow'?"),
        (
            'attribute b { abbr: BODY  group: g }\nkind m "M" { wounds: formula }\nm x { wounds: 2 * TBB + 1 }\n',
            "formula of TBB",
        ),
        # `kind[id].field` naming something that is not a kind exited 3 at build
        ("formula f { params: x  formula: x + nokind[thing].field }\n", "no kind named 'nokind'"),
        ("formula f { params: x  formula: min(x) }\n", "min() takes two or more arguments"),
        ("formula f { params: x  formula: x / 0 }\n", "divides by zero"),
        # a lookup table with a gap: a formula's lookup there raised LookupError (the generated-ruleset run)
        (
            "table t { columns: v(int)\n  <=-3 -> 1\n  -1 -> 2\n  0+ -> 3\n}\nformula f { params: x  formula: t[x] }\n",
            "has no row for -2",
        ),
        # a lookup past a table's last row raised LookupError (the generated-ruleset run, 3,000 rulesets)
        (
            "table t { columns: v(int)\n  1-3 -> 1\n  4-6 -> 2\n}\nformula f { params: x  formula: t[x] }\n",
            "has rows for 1 to 6 only",
        ),
        ("table t { columns: v(int)\n  <=3 -> 1\n  4 -> 2\n}\nformula f { params: x  formula: t[x] }\n", "above 4"),
        # what the formula's shape tells counts: abs() is never below 0, abs() - 1 may be
        (
            "table t { columns: v(int)\n  0-3 -> 1\n  4+ -> 2\n}\nformula f { params: x  formula: t[abs(x) - 1] }\n",
            "this lookup may go below 0",
        ),
        ("formula f { params: x  formula: 1d6 + 0.5 }\n", "dice add only dice and whole numbers"),
        # a `none` cell reached by a lookup gave None + 1
        (
            "table t { columns: v(int)\n  <=1 -> none\n  2+ -> 3\n}\nformula f { params: x  formula: t[x] + 1 }\n",
            "gives no number at",
        ),
    ],
)
def test_what_would_fail_later_is_a_diagnostic(
    compile_rules: Callable[..., Compilation], source: str, words: str
) -> None:
    result = compile_rules({"a.rules": source})
    assert not result.ok
    shown = [f"{d.message} {d.hint or ''}" for d in result.diagnostics]
    assert any(words in line for line in shown), shown
    assert all(d.pos is not None and d.pos.line >= 1 for d in result.diagnostics)


def test_a_lookup_past_the_rows_does_what_the_table_says(tmp_path: Path) -> None:
    """`clamp: yes` gives the first or last row; `partial: yes` raises PastRows (the rules give no answer
    there: the package does not guess), and an open end covers every number past it."""
    source = (
        "table c { clamp: yes  columns: v(int)\n  1-3 -> 1\n  4-6 -> 2\n}\n"
        "table p { partial: yes  columns: v(int)\n  1-3 -> 1\n  4-6 -> 2\n}\n"
        "table o { columns: v(int)\n  <=3 -> 1\n  4+ -> 2\n}\n"
        "table z { columns: v(int)\n  0-3 -> 1\n  4+ -> 2\n}\n"
        "formula fz { params: x, y  formula: z[max(abs(x - y) + 1, -x)] }\n"
        "formula fc { params: x  formula: c[x] }\nformula fp { params: x  formula: p[x] }\n"
        "formula fo { params: x  formula: o[x] }\n"
    )
    out = _build(tmp_path, source)
    ran = run_python(
        "import demo\n"
        "print(demo.fc(x=-5), demo.fc(x=5), demo.fc(x=50), demo.fo(x=-50), demo.fo(x=50), demo.fp(x=2))\n"
        "print(demo.fz(x=-9, y=9), demo.fz(x=1, y=1))\n"
        "try:\n    demo.fp(x=7)\nexcept demo.runtime.PastRows as exc:\n    print(exc.table, exc)\n",
        out,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == ["1 2 2 1 2 1", "2 1", "p p: 7 is past its rows (it does not clamp)"]


@pytest.mark.parametrize(
    "formula",
    ["-(1d6!)", "10 - 1d6!", "(1d6! + 2) / 2", "1d6 - boom(x)"],
)
def test_an_exploding_roll_is_not_taken_away_or_divided(
    compile_rules: Callable[..., Compilation], formula: str
) -> None:
    """The package raised ValueError when such a formula ran; the checks now say so where it is written."""
    source = f"formula boom {{ params: x  formula: 1d6! + x }}\nformula f {{ params: x  formula: {formula} }}\n"
    result = compile_rules({"a.rules": source})
    assert [d.code for d in result.diagnostics] == ["E327"], messages(result)
    assert "exploding roll has no highest total" in result.diagnostics[0].message


def test_an_exploding_roll_adds_multiplies_and_is_bounded(compile_rules: Callable[..., Compilation]) -> None:
    source = "formula f { params: x  formula: max(1, (1d6! + x) * 2 - 1d4) }\n"
    assert compile_rules({"a.rules": source}).ok


def test_an_exploding_step_is_not_taken_away_later(compile_rules: Callable[..., Compilation]) -> None:
    source = "formula f { params: x\n  let r = 1d6! + x\n  formula: 10 - r\n}\n"
    result = compile_rules({"a.rules": source})
    assert [d.code for d in result.diagnostics] == ["E327"], messages(result)
