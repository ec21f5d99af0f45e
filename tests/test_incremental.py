"""Lowered entities in the cache: every IR node and field type round-trips through the codec, and a check after
a one-file edit lowers only that file and reports exactly what a cold check reports."""

from __future__ import annotations

import shutil
import types
import typing
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from rulesdsl.compile import ir, pipeline
from rulesdsl.compile.cache import CACHED_CLASSES, _codec
from rulesdsl.compile.pipeline import compile_paths
from rulesdsl.language import fieldtypes

ROOT = Path(__file__).resolve().parent.parent
IR_CLASSES = [c for c in CACHED_CLASSES if c.__module__ in (ir.__name__, fieldtypes.__name__)]


def sample(hint: Any, depth: int = 0) -> Any:
    """A value of the declared type, with every optional part given (nested values where the type allows)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        classes = [a for a in options if isinstance(a, type) and a in CACHED_CLASSES]
        plain = [a for a in options if a not in classes]
        return sample(
            (classes if classes and depth < 4 else plain or classes)[depth % max(1, len(classes))]
            if classes and depth < 4
            else (plain or classes)[0],
            depth + 1,
        )
    if origin is tuple:  # empty deep down: a class may hold itself through a tuple (a Formula's steps)
        return (sample(args[0], depth + 1), sample(args[0], depth + 1)) if depth < 8 else ()
    if origin in (dict, typing.Mapping, __import__("collections.abc").abc.Mapping):
        return {sample(args[0], depth + 1): sample(args[1], depth + 1)}
    if origin is frozenset:
        return frozenset({sample(args[0], depth + 1)})
    if isinstance(hint, (typing.ForwardRef, str)):
        return 7
    if hint is str:
        return f"text {depth}"
    if hint is bool:
        return True
    if hint is int:
        return 3 + depth
    if hint is Fraction:
        return Fraction(2, 3)
    if hint is Any or hint is object:
        return (1, "x")
    if isinstance(hint, type) and hint in CACHED_CLASSES:
        hints = typing.get_type_hints(hint)
        return hint(*(sample(hints[f], depth + 1) for f in hint.__dataclass_fields__))  # type: ignore[attr-defined]
    raise AssertionError(f"no sample for {hint}")


@pytest.mark.parametrize("cls", IR_CLASSES, ids=lambda c: f"{c.__module__.split('.')[-1]}.{c.__qualname__}")
def test_every_ir_node_and_field_type_round_trips(cls: type) -> None:
    value = sample(cls)
    assert _codec().loads(_codec().dumps(value)) == value


def test_every_entity_of_the_seeds_round_trips(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RULESDSL_CACHE_DIR", "off")
    result = compile_paths([ROOT / "rules"])
    entities = tuple(e for r in result.rulesets for group in r.entities.values() for e in group.values())
    assert len(entities) > 2000
    assert _codec().loads(_codec().dumps(entities)) == entities


def test_a_check_after_a_one_file_edit_lowers_only_that_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RULESDSL_CACHE_DIR", str(tmp_path / "cache"))
    compile_paths([Path("rules")])
    edited = Path("rules/burning_wheel/human/peasant.rules")
    edited.write_text(edited.read_text(encoding="utf-8").replace("resources: 4", "resources: 99", 1), "utf-8")
    lowered: list[str] = []
    real = pipeline.lower_block

    def counting(block: Any, kind: Any, *, file_defaults: Any) -> Any:
        if block.kind != "ruleset":  # each manifest is read every run, for the ruleset's id and bases
            lowered.append(block.kind_pos.file)
        return real(block, kind, file_defaults=file_defaults)

    monkeypatch.setattr(pipeline, "lower_block", counting)
    warm = compile_paths([Path("rules")])
    assert set(lowered) == {edited.as_posix()}
    monkeypatch.setenv("RULESDSL_CACHE_DIR", "off")
    cold = compile_paths([Path("rules")])
    assert warm.diagnostics == cold.diagnostics
    assert [r.entities for r in warm.rulesets] == [r.entities for r in cold.rulesets]
    farmer = [e for r in warm.rulesets if r.id == "burning_wheel" for e in r.entities["lifepath"].values()]
    assert 99 in {e.fields.get("resources") for e in farmer}


def test_a_one_file_edit_changes_only_the_files_it_affects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sources' digest is in each package's _manifest.py only: an edit to one lifepath changes the lifepaths
    modules (of its ruleset and of the one extending it) and its ruleset's manifest, never the whole package."""
    from rulesdsl.targets.build import render_all

    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    monkeypatch.chdir(tmp_path)
    before = render_all(compile_paths([Path("rules")]).rulesets)
    edited = Path("rules/burning_wheel/human/peasant.rules")
    edited.write_text(edited.read_text(encoding="utf-8").replace("resources: 4", "resources: 99", 1), "utf-8")
    after = render_all(compile_paths([Path("rules")]).rulesets)
    changed = {name for name in after if before.get(name) != after[name] and not name.startswith("site/")}
    assert changed == {"burning_wheel/_lifepaths.py", "burning_wheel/_manifest.py", "fenmark/_lifepaths.py"}
