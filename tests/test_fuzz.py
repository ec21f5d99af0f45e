"""Fuzzing in the suite: the seed corpus of reproducers, and Hypothesis mutating it.

Whatever the input, the whole pipeline holds: `check` reports diagnostics (never an internal error), each
positioned inside its file; what checks clean builds, and the package imports and rolls its tables with
the standard library alone. benchmarks/fuzz.py runs the same checks over many more mutations.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .fuzzing import CORPUS, OPERATIONS, Mutation, build_and_import, check, mutate, seeds

SEEDS = seeds()
SEED_NAMES = sorted(p.name for p in CORPUS.glob("*.rules"))


def pipeline(data: bytes) -> list[str]:
    """Everything wrong with how the pipeline handled `data`: internal errors, diagnostics outside the
    file, a clean input that fails to build or import."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "rules" / "demo"
        outcome = check(folder, data)
        problems = list(outcome.problems)
        if outcome.clean and not problems:
            problems += build_and_import(folder, Path(scratch) / "out")
    return problems


def test_the_corpus_holds_one_reproducer_a_file() -> None:
    assert len(SEED_NAMES) >= 20
    assert all(0 < len(seed) < 64 * 1024 for seed in SEEDS)


@pytest.mark.parametrize("name", SEED_NAMES)
def test_every_seed_runs_the_whole_pipeline(name: str) -> None:
    assert pipeline((CORPUS / name).read_bytes()) == []


mutations = st.builds(
    Mutation,
    st.sampled_from(OPERATIONS),
    st.integers(0, 1 << 20),
    st.integers(0, 64),
    st.integers(0, 1 << 16),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(SEEDS) - 1), st.lists(mutations, min_size=1, max_size=6))
def test_mutated_seeds_never_crash(seed: int, edits: list[Mutation]) -> None:
    data = mutate(SEEDS[seed], edits, SEEDS)
    assert pipeline(data) == [], data[:2000]


def test_mutations_reach_every_kind_of_edit() -> None:
    """The mutator does what each operation says (so the fuzzing above is not vacuous)."""
    text = b"trait Brave { type: die }\n"
    assert mutate(text, [Mutation("delete", 0, 6, 0)], SEEDS) == b"Brave { type: die }\n"
    assert mutate(text, [Mutation("duplicate", 0, 6, 1)], SEEDS) == b"trait trait trait Brave { type: die }\n"
    assert mutate(text, [Mutation("flip", 0, 0, 0)], SEEDS)[0:1] == b"{"
    assert len(mutate(text, [Mutation("hostile", 0, 0, 0)], SEEDS)) == len(text) + 4301
    spliced = mutate(text, [Mutation("splice_line", 5, 0, 0)], SEEDS)
    assert spliced.endswith(text) and spliced.count(b"\n") == 2
    assert len(mutate(text, [Mutation("splice", 3, 10, 2)], SEEDS)) > len(text)
