"""Proof by generation: what checks clean is right.

tests/generate.py writes random well-typed rulesets from the kind declarations themselves (the prelude's
and kinds of its own with every field type), with tables of every key and roll form, formulas in every
position, requirements, mechanics and a homebrew that extends, patches and removes; and mutations of them.
The property (tests/fuzzing.py, `judge_generated`): either `check` reports diagnostics, each positioned
inside its file, or the rulesets build, their packages import in a fresh interpreter with the standard
library alone and everything in them computes (tables roll, formulas evaluate on random arguments of their
types, requirements judge, characters burn), and the packages pass `mypy --strict`.

A deterministic sample runs here (the `ci` Hypothesis profile, tests/conftest.py); `benchmarks/fuzz.py
--rulesets` runs the same property over 100,000.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given, settings

from rulesdsl.compile.pipeline import compile_paths
from rulesdsl.language import fieldtypes

from .fuzzing import judge_generated, mypy_strict, share_runtime, write_rules
from .generate import Ruleset, rulesets, seeded

PROFILE = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def _report(ruleset: Ruleset, mutated: str, problems: tuple[str, ...]) -> str:
    return "\n".join(problems) + f"\n--- mutations: {mutated or 'none'}\n" + ruleset.text()


@settings(PROFILE)
@given(rulesets())
def test_what_checks_clean_builds_imports_and_runs(drawn: tuple[Ruleset, str]) -> None:
    ruleset, mutated = drawn
    with tempfile.TemporaryDirectory() as scratch:
        kept = Path(scratch) / "kept"
        judged = judge_generated(ruleset.files(), Path(scratch), Path(scratch) / "out", kept=kept)
    assert not judged.problems, _report(ruleset, mutated, judged.problems)


def test_the_generated_packages_pass_mypy_strict() -> None:
    """One mypy run over the packages of a seeded sample (each ruleset under ids of its own)."""
    built: list[str] = []
    clean = 0
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "out"
        for seed in range(12):
            ruleset, _ = seeded(seed, mutate_one_in=1_000_000)
            judged = judge_generated(ruleset.files(f"_{seed}"), Path(scratch), out, seed=seed)
            built += judged.built
            clean += bool(judged.built) and not judged.problems
        assert clean >= 8, built  # at least 60% of the sample checks clean and builds
        report = mypy_strict(out, built)
    assert report == "", report[-20_000:]


def test_an_offer_of_a_kind_with_no_entity_left_is_written() -> None:
    """The long run's seed 49, input 1,060: a homebrew's own kind has an `offer of trait` field, and no
    trait is left to offer. The generator failed (KeyError); it writes `none`, and the property holds."""
    ruleset, _ = seeded(49 * 1_000_003 + 1060)
    with tempfile.TemporaryDirectory() as scratch:
        judged = judge_generated(ruleset.files(), Path(scratch), Path(scratch) / "out")
    assert not judged.problems, judged.problems


def test_a_parameters_field_over_a_kind_with_no_entity_left_is_typed_as_checked() -> None:
    """The long run's seed 81, input 2,465: a formula reads `at.cost` of a `ref class_18` parameter, and a
    mutation left no class_18. The checker typed the read `int` (no number that is not whole), the package
    annotated the table of costs `int | Fraction`, and mypy refused `bonus1[s26]`. Both now ask one function."""
    ruleset, _ = seeded(81 * 1_000_003 + 2465)
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "out"
        judged = judge_generated(ruleset.files(), Path(scratch), out)
        assert not judged.problems and judged.built, judged.problems
        assert "_CLASS_18__COST: dict[str, int] = {}" in (out / "demo" / "_formulas.py").read_text("utf-8")
        assert mypy_strict(out, judged.built) == ""


def test_a_choice_of_a_kind_with_no_entity_left_is_written() -> None:
    """The long run's seed 81, input 355: a homebrew removed the last skill, then declared a kind with a
    choice of skills. The generator failed (KeyError); it writes `none`, and the property holds."""
    ruleset, _ = seeded(81 * 1_000_003 + 355)
    with tempfile.TemporaryDirectory() as scratch:
        judged = judge_generated(ruleset.files(), Path(scratch), Path(scratch) / "out")
    assert not judged.problems, judged.problems


def test_a_shared_runtime_still_finds_what_mypy_finds() -> None:
    """The long run (benchmarks/fuzz.py) checks one copy of the runtime, not one per package
    (share_runtime). Every package built here shares it, mypy still passes, and a misuse of the runtime
    written into a generated module is still an error."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "out"
        built: list[str] = []
        for seed in range(3):
            ruleset, _ = seeded(seed, mutate_one_in=1_000_000)
            built += judge_generated(ruleset.files(f"_{seed}"), Path(scratch), out, seed=seed).built
        assert built
        assert share_runtime(out, built, Path(scratch) / "shared") == built
        assert (out / built[0] / "_runtime" / "core.py").stat().st_size < 100
        assert mypy_strict(out, built, shared=Path(scratch) / "shared") == ""
        module = next(m for m in sorted((out / built[0]).glob("*.py")) if "import core as _rt" in m.read_text("utf-8"))
        module.write_text(module.read_text(encoding="utf-8") + '\n_WRONG: int = _rt.slug("x")\n', encoding="utf-8")
        report = mypy_strict(out, built, shared=Path(scratch) / "shared")
    assert 'Incompatible types in assignment (expression has type "str", variable has type "int")' in report, report


def test_the_generator_covers_the_language() -> None:
    """Over 60 seeds: values of every field type, every roll and key form and column type, formulas in
    every position with every operator, requirements, homebrew patches and removals. Unmutated, most
    generated rulesets check clean: the generator writes the language, not noise."""
    texts: list[str] = []
    field_types: set[str] = set()
    clean = 0
    with tempfile.TemporaryDirectory() as scratch:
        for seed in range(60):
            ruleset, _ = seeded(seed, mutate_one_in=1_000_000)
            texts.append(ruleset.text())
            field_types |= ruleset.field_types
            if seed < 20:
                rules = Path(scratch) / str(seed) / "rules"
                write_rules(rules, ruleset.files())
                clean += compile_paths([rules]).ok
    every = {t.__name__ for t in fieldtypes.FieldType.__args__} - {"ColumnsType"}  # columns: tables only
    assert every - field_types == set()
    text = "\n".join(texts)
    forms = [
        "roll: d66",
        "roll: 1d6 + 0..",
        "keys: a(int), b(int)",
        "keys: zone, level(int)",
        "odd ->",
        "-> ",
        "+ ->",
        "<=",
        "(formula)",
        "(ref table)",
        "(rolls)",
        " x t",
        "otherwise ->",
        "roll: where, 1d",
        "keys: where(ref skill), roll(int)",
        "keys: who(ref skill)",
        "(dice)",
        "(multiplier)",
        "(bool)",
        "(markdown)",
        "(number)",
        "(int)",
        "clamp:",
        '@ "p. 18"',
        "if(",
        " and ",
        " or ",
        "not (",
        "min(",
        "max(",
        "floor(",
        "ceil(",
        "round(",
        "abs(",
        ")d",
        "dice(",
        "].",
        "check ",
        "kind ",
        "patch ",
        "remove ",
        " += ",
        "extends: demo",
        "params:",
        "formula:",
        "requires:",
        "restrictions:",
        "of lifepaths in setting",
        "of lifepaths tagged",
        "any lifepath in setting",
        "previous =",
        "gm_permission",
        "trait ",
        "skill ",
        "stack_on:",
        "explode_on:",
        "style: contest",
        "style: highest",
        "zero_dice:",
        "critical:",
        "style: under",
        "grades:",
        "criticals:",
        "fumbles:",
        "targets:",
        "} = {",  # a record's default
        "list of int = 1, 2",
        "kh",
        "kl",
        "dl",
        "! ",
        "D",
        " / ",
        " * ",
        "unknown",
        "none",
    ]
    assert [f for f in forms if f not in text] == []
    assert clean >= 12, clean
