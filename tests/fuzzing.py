"""Fuzzing the whole pipeline: mutations of seed files, and what every result must satisfy.

Shared by the fuzz tests in the suite (tests/test_fuzz.py, driven by Hypothesis) and the long run by hand
(benchmarks/fuzz.py, driven by a seeded random generator). An input is one `.rules` file in a ruleset of its
own; it is checked, and when it checks clean it is built and the package imported in a bare interpreter.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rulesdsl.compile.cache import ParseCache
from rulesdsl.compile.pipeline import Compilation, CompiledRuleset, compile_paths
from rulesdsl.diagnostics import render_json, render_text, source_lines
from rulesdsl.targets.build import Kept, render_all, write_output
from rulesdsl.targets.python import package as python

from .conftest import MANIFEST, quality_command, run_python

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(__file__).resolve().parent / "fuzz_corpus"


def seeds(*, with_rules: bool = False) -> list[bytes]:
    """The seed corpus (one reproducer a file), and with `with_rules` every file of the seed games."""
    paths = sorted(CORPUS.glob("*.rules"))
    if with_rules:
        paths += sorted((ROOT / "rules").rglob("*.rules"))
    return [p.read_bytes() for p in paths]


# What the mutations insert: limits just past their edges, escapes and characters that broke positions,
# dice whose odds were slow, names that made hints slow, and the language's own punctuation and keywords.
HOSTILE: tuple[bytes, ...] = tuple(
    s.encode("utf-8", "surrogatepass") if isinstance(s, str) else s
    for s in (
        "9" * 4301,
        "1" * 16,
        "999999999999999",
        "1." + "5" * 16,
        '"\\ud800"',
        '"\\udc00\\ud800"',
        '"\\ud83d\\ude00"',
        '"\\uffff\\u0000"',
        "\\",
        '"',
        '"abc\\',
        "\x0c",
        "\x0b",
        "\x1c",
        "\x85",
        "\u2028",
        "\u2029",
        "\r",
        "\r\n",
        "\t",
        "\x00",
        "\ufeff",
        "\u0301",
        "😀",
        "—",
        b"\xff",
        b"\xc3",
        b"\xe2\x80",
        b"\xed\xa0\x80",  # a surrogate encoded as UTF-8: not UTF-8 at all
        "100d1000",
        "101d6",
        "1d1001",
        "50d999 + 50d1000",
        "0d6",
        "1d1",
        "(1 + 2)d6",
        "a" * 5000,
        "a-" * 500 + "a",
        "(" * 300,
        ")" * 300,
        "not " * 200,
        "-" * 200,
        "x + " * 300 + "x",
        "3 of lifepaths in",
        "3 of lifepaths",
        "any lifepath in setting",
        "e or a or h/n",
        "g(x)",
        "g(g(g(x)))",
        "t[1]",
        "x1/0",
        "1/0",
        "10+",
        ">-5",
        "-3-5",
        "5..1",
        "2 pts:",
        "+1 M/P",
        "8 yrs",
        "4^",
        "unknown",
        "none",
        "yes",
        "ref table",
        "kind",
        "override kind lifepath {",
        "patch lifepath x {",
        "remove trait x",
        "ruleset",
        "table",
        "formula",
        "lifepath",
        "{",
        "}",
        "->",
        ":",
        ",",
        "#",
        '@ "p. 1"',
        "\n",
        " " * 100,
    )
)

# Bytes a flip writes: mostly the language's punctuation, some that are not UTF-8 on their own.
FLIP_BYTES = b'{}()[]":,#\\\n\r\t -+*/<>=.^@?0123456789adx_\xff\x80\xc3\x00\x0c'

OPERATIONS = ("flip", "delete", "duplicate", "hostile", "splice", "splice_line")


@dataclass(frozen=True, slots=True)
class Mutation:
    """One edit: where (`at`, wrapped into the text), how much (`size`), and which byte, hostile string or
    seed (`pick`, wrapped into its list)."""

    operation: str
    at: int
    size: int
    pick: int


def mutate(data: bytes, mutations: Sequence[Mutation], corpus: Sequence[bytes]) -> bytes:
    out = bytearray(data)
    for mutation in mutations:
        at = mutation.at % (len(out) + 1)
        match mutation.operation:
            case "flip":
                if out:
                    out[at % len(out)] = FLIP_BYTES[mutation.pick % len(FLIP_BYTES)]
            case "delete":
                del out[at : at + mutation.size]
            case "duplicate":
                chunk = bytes(out[at : at + mutation.size])
                out[at:at] = chunk * (1 + mutation.pick % 8)
            case "hostile":
                out[at:at] = HOSTILE[mutation.pick % len(HOSTILE)]
            case "splice":
                other = corpus[mutation.pick % len(corpus)]
                start = (mutation.size * 7919) % (len(other) + 1)
                out[at:at] = other[start : start + 1 + mutation.size * 4]
            case "splice_line":
                lines = corpus[mutation.pick % len(corpus)].splitlines(keepends=True) or [b""]
                line = lines[mutation.size % len(lines)]
                start = out.rfind(b"\n", 0, at) + 1  # whole lines go in at a line start
                out[start:start] = line if line.endswith(b"\n") else line + b"\n"
            case _:
                raise ValueError(mutation.operation)
    return bytes(out)


def random_mutations(rng: random.Random) -> list[Mutation]:
    return [
        Mutation(rng.choice(OPERATIONS), rng.randrange(1 << 20), rng.randrange(64), rng.randrange(1 << 16))
        for _ in range(rng.randint(1, 6))
    ]


# Exercises a package that checked clean, with the standard library alone: every rolled table's odds add
# up to one and it rolls; every row of every table is found again by its keys.
EXERCISE = """
import random
import demo
for table_id, table in demo.TABLES.items():
    if table.dice is not None and not table.dice.given:
        assert sum(chance for _, chance in table.chances()) == 1, table_id
        for seed in range(3):
            table.roll(random.Random(seed))
print("ok")
"""


def positions_outside(result: Compilation) -> list[str]:
    """Diagnostics that point outside the file they name: a line it does not have, or a column past the
    end of that line. One past the last character is the end of the line, where a caret may point (so
    the end of its span, which is exclusive, may be one further)."""
    problems = []
    lines: dict[str, list[str]] = {}
    for d in result.diagnostics:
        if d.pos is None or d.pos.file not in result.sources:
            continue
        p = d.pos
        if p.file not in lines:
            lines[p.file] = source_lines(result.sources[p.file])
        file_lines = lines[p.file]
        for line, column, past in ((p.line, p.column, 1), (p.end_line, p.end_column, 2)):
            if not (1 <= line <= len(file_lines) and 1 <= column <= len(file_lines[line - 1]) + past):
                problems.append(f"{d.code} at {line}:{column} is outside {p.file}: {d.message}")
                break
        else:
            if (p.end_line, p.end_column) < (p.line, p.column):
                problems.append(f"{d.code} ends before it starts ({p.line}:{p.column}-{p.end_line}:{p.end_column})")
    return problems


@dataclass(frozen=True, slots=True)
class Outcome:
    problems: tuple[str, ...]  # empty: the input was handled as it must be
    clean: bool  # it checked clean (and so may be built)
    codes: tuple[str, ...]  # the diagnostics' codes


def check(folder: Path, data: bytes) -> Outcome:
    """Check one input as the only file beside the manifest in `folder` (a ruleset folder)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ruleset.rules").write_text(MANIFEST, encoding="utf-8")
    (folder / "a.rules").write_bytes(data)
    try:
        result = compile_paths([folder])
        render_text(result.diagnostics, result.sources)
        render_json(result.diagnostics)
    except Exception:  # an internal error: what `rulesdsl` would exit 3 on
        return Outcome((traceback.format_exc(),), False, ())
    codes = tuple(d.code for d in result.diagnostics)
    return Outcome(tuple(positions_outside(result)), result.ok, codes)


def build_and_import(folder: Path, out: Path) -> list[str]:
    """Build what checked clean into `out` and import it in a bare interpreter."""
    try:
        result = compile_paths([folder])
        write_output(out, render_all(result.rulesets))
    except Exception:
        return [traceback.format_exc()]
    ran = run_python(EXERCISE, out)
    if ran.returncode != 0 or ran.stdout.strip() != "ok":
        return [f"the built package failed (exit {ran.returncode}):\n{ran.stderr}"]
    return []


# ---------------------------------------------------------------- generated rulesets (tests/generate.py)

# Exercises generated packages with the standard library alone (`python -I -S`; argv: seed, packages):
# every table rolls (with each modifier its roll may take, and along its chains) and every row is found
# again by its keys; every formula evaluates on random arguments of its parameters' types and gives a
# value of its declared return type; derived attributes derive; every field of every entity that computes
# (formulas, checks, dice, requirements) is computed; every requirement judges; random paths burn; every
# entity is its typed name in its kind's module (`package.tables.<id>`).
DRIVER = r'''
import dataclasses, importlib, inspect, itertools, keyword, random, sys, types
from collections.abc import Mapping
from fractions import Fraction

seed, packages = int(sys.argv[1]), sys.argv[2:]
assert "rulesdsl" not in sys.modules and "lark" not in sys.modules and "jinja2" not in sys.modules


def number(rng, annotation=""):
    text = str(annotation)
    if text == "bool" or annotation is bool:
        return rng.random() < 0.5
    if "Fraction" in text and "int" not in text:
        return Fraction(rng.randint(-12, 12), rng.randint(1, 4))
    if "Fraction" in text and rng.random() < 0.3:
        return Fraction(rng.randint(-12, 12), rng.randint(1, 4))
    return rng.randint(-3, 12)


def fits(value, annotation, rt):
    """Whether a computed value is of the annotated return type (int | Fraction | bool | Dice)."""
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    if annotation is inspect.Signature.empty:
        return True
    kinds = {"bool": bool, "int": int, "Fraction": Fraction, "Dice": rt.Dice, "None": type(None)}
    allowed = tuple(t for name, t in kinds.items() if name in str(annotation) or name in text)
    return not allowed or isinstance(value, allowed)


def partial(call, rt):
    """A formula's value, or None where it looks a `partial: yes` table up past its rows: the rules give no
    answer there and the package says so (PastRows). Any other exception is a defect."""
    try:
        return call()
    except rt.PastRows as exc:
        assert TABLES[exc.table].partial, (exc.table, "raised PastRows but is not partial")
        return None


def ids_given(function, arguments, rng, rt):
    """The formula's value, each `ref` parameter (a `str`: an id) given an id of its kind, which the
    package names when it refuses another (UnknownId); None where a kind has no entities to give."""
    for _ in range(len(arguments) + 1):
        try:
            return function(**arguments)
        except rt.UnknownId as exc:
            if not exc.ids or isinstance(arguments[exc.param], str):
                return None if not exc.ids else function(**arguments)
            arguments[exc.param] = rng.choice(exc.ids)
    return function(**arguments)


TABLES = {}


def check_dice(value, rng, where):
    """A roll lands within its range, reports a face for every die, and its exact odds add up to 1 (an
    exploding roll's: the totals up to a point and the chance of the rest)."""
    low, high = value.minimum, value.maximum
    throw = value.throw(rng)
    assert low <= throw.total and (high is None or throw.total <= high), (where, throw)
    assert value.throw(random.Random(7)) == value.throw(random.Random(7)), where
    if high is None:
        head = value.distribution(up_to=low + 40)
        assert sum(head.values()) + value.chance(low + 41, None) == 1, where
    else:
        assert sum(value.chance(n, n) for n in range(low, high + 1)) == 1, where


def compute(value, rng, rt, where, names):
    held = {k: set(v) for k, v in names.items()}
    if isinstance(value, rt.Formula):
        result = partial(lambda: value.evaluate(**{n: number(rng) for n in value.names}), rt)
        if result is None:
            return
        assert isinstance(result, (int, Fraction, rt.Dice)), (where, value.text, result)
        if isinstance(result, rt.Dice):
            check_dice(result, rng, where)
    elif isinstance(value, rt.Check):
        values = {n: rng.randint(0, 12) for n in value.modifier.names}
        chance = partial(lambda: value.chance(**values), rt)
        assert chance is None or 0 <= chance <= 1, where
        partial(lambda: value.roll(rng, **values), rt)
    elif isinstance(value, rt.Dice):
        check_dice(value, rng, where)
    elif isinstance(value, rt.Requirement):
        held = {k: set(rng.sample(sorted(v), min(len(v), 1))) for k, v in held.items()}
        known = {"age": rng.randint(1, 80), "gender": "female", "position": 2}
        for facts in (rt.Character(), rt.Character(held=held, known=known)):
            assert value.judge(facts) in (True, False, None), where
        assert isinstance(value.describe(names), str), where
    elif isinstance(value, tuple):
        for item in value:
            compute(item, rng, rt, where, names)
    elif isinstance(value, rt.FrozenMap):
        for key, item in value.items():
            compute(item, rng, rt, f"{where}[{key!r}]", names)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            compute(getattr(value, f.name), rng, rt, f"{where}.{f.name}", names)


def key_value(key, rng):
    if key.name is not None:
        return key.name
    if key.parity is not None:
        return 2 * rng.randint(0, 5) + key.parity
    if key.low is None:
        return key.high - rng.randint(0, 3)
    if key.high is None:
        return key.low + rng.randint(0, 3)
    return rng.randint(key.low, key.high)


def exercise(name):
    package = importlib.import_module(name)
    rt = package.runtime
    rng = random.Random(seed)
    TABLES.clear()
    TABLES.update(package.TABLES)
    registries = {
        n: getattr(package, n) for n in package.__all__ if n.isupper() and isinstance(getattr(package, n), Mapping)
    }
    names = {}  # kind -> id -> display name, as requirements describe themselves
    for registry in registries.values():
        for entity_id, entity in registry.items():
            kind = "".join("_" + c.lower() if c.isupper() else c for c in type(entity).__name__).lstrip("_")
            names.setdefault(kind, {})[entity_id] = getattr(entity, "name", entity_id)
    held = {k: set(v) for k, v in names.items()}
    modules = [getattr(package, n) for n in package.__all__ if isinstance(getattr(package, n), types.ModuleType)]
    for module in modules:
        if module is rt:
            continue
        registry = [getattr(module, n) for n in module.__all__ if n in registries][0]
        for entity_id, entity in registry.items():
            typed = entity_id + "_" if keyword.iskeyword(entity_id) else entity_id
            assert getattr(module, typed) is entity, (module.__name__, entity_id)
    assert {m.__name__.rpartition(".")[2] for m in modules} >= {"tables", "formulas", "mechanics", "attributes"}
    for table_id, table in package.TABLES.items():
        for row in table:
            keys = [key_value(k, rng) for k in row.keys]
            assert table.lookup(*keys) == row.value, (table_id, keys)
            compute(row.value, rng, rt, f"TABLES[{table_id!r}]", names)
        if table.dice is not None:
            # a table rolled for keys it is given (`roll: where, 1d6`): rolled for each value its rows name
            given_keys = table.dice.given
            givens = sorted({tuple(key_value(k, rng) for k in row.keys[: len(given_keys)]) for row in table}, key=repr)
            # no row names a value (an `otherwise` row alone): any value lands there
            for values in givens or [tuple("anything" for _ in given_keys)]:
                given = dict(zip(given_keys, values))
                for modifier in range(table.dice.modifier_low, table.dice.modifier_high + 1):
                    chances = table.chances(modifier, **given)
                    assert sum(chance for _, chance in chances) == 1, (table_id, modifier, given)
                    for _ in range(3):
                        table.roll(rng, modifier, **given)
                        table.roll_chain(rng, modifier, **given)
    for formula_id, function in package.FORMULAS.items():
        signature = inspect.signature(function)
        for _ in range(5):
            arguments = {p.name: number(rng, p.annotation) for p in signature.parameters.values()}
            result = partial(lambda: ids_given(function, arguments, rng, rt), rt)
            fitting = result is None or fits(result, signature.return_annotation, rt)
            assert fitting, (formula_id, arguments, result, signature)
    if hasattr(package, "derive_attributes"):
        base = {a.id: rng.randint(1, 10) for a in package.ATTRIBUTES.values() if a.formula is None}
        derived = partial(lambda: package.derive_attributes(base), rt)
        assert derived is None or set(derived) == set(package.ATTRIBUTES), (set(derived), set(package.ATTRIBUTES))
    for registry_name, registry in registries.items():
        if registry_name in ("TABLES", "FORMULAS"):
            continue
        for entity_id, entity in registry.items():
            compute(entity, rng, rt, f"{registry_name}[{entity_id!r}]", names)
    for mechanic in getattr(package, "MECHANICS", {}).values():
        style = type(mechanic).__name__
        if style == "CheckMechanic":
            assert 0 <= mechanic.chance(rng.randint(-3, 3), rng.randint(2, 12)) <= 1
            mechanic.roll(rng, rng.randint(-3, 3), rng.randint(2, 12))
        elif style == "ContestMechanic":
            mechanic.roll(rng, rng.randint(0, 5), rng.randint(0, 5))
        elif style == "PoolMechanic":
            mechanic.roll(rng, rng.randint(1, 6), rng.randint(2, 10))
        elif style == "TotalMechanic":
            mechanic.roll(rng, rng.randint(0, 10))
        elif style == "HighestMechanic":
            dice = rng.randint(0 if mechanic.zero_dice is not None else 1, 8)
            chances = mechanic.chances(dice)
            assert list(chances) == list(mechanic.names) and sum(chances.values()) == 1, chances
            result = mechanic.roll(rng, dice)
            assert result.outcome in chances and chances[result.outcome] > 0, (result, chances)
        elif style == "UnderMechanic":
            low, high = mechanic.dice.minimum, mechanic.dice.maximum
            target = rng.randint(low - 3, high + 3)
            chances = mechanic.chances(target)
            assert list(chances) == list(mechanic.names) and sum(chances.values()) == 1, chances
            result = mechanic.roll(rng, target)
            assert result.outcome in chances and chances[result.outcome] > 0, (result, chances)
            assert result.success == (result.outcome not in ("failure", "fumble")), result
            assert result.total == sum(result.dice) + mechanic.dice.modifier == target - result.margin, result
            if mechanic.dice.outcomes <= 10_000:  # the exact odds against a count over every way the dice fall
                sides = [t.sides for t in mechanic.dice.terms for _ in range(t.count)]
                ways = {}
                for faces in itertools.product(*(range(1, s + 1) for s in sides)):
                    outcome = mechanic.judge(faces, target).outcome
                    ways[outcome] = ways.get(outcome, 0) + 1
                counted = {n: Fraction(w, mechanic.dice.outcomes) for n, w in ways.items()}
                assert counted == {n: p for n, p in chances.items() if p}, (target, counted, chances)
        else:
            raise AssertionError(f"a mechanic the harness does not know: {style}")
    lifepaths = getattr(package, "LIFEPATHS", {})
    if lifepaths:
        ids = sorted(lifepaths)
        born = [i for i in ids if lifepaths[i].born] or ids
        for _ in range(8):
            path = [rng.choice(born)] + [rng.choice(ids) for _ in range(rng.randint(0, 4))]
            sheet = package.burn(
                path, either=[rng.choice("MP") for _ in path], gender=rng.choice([None, "female"]),
                traits=sorted(names.get("trait", {}))[:1], held=held, picks=sorted(names.get("skill", {}))[-1:],
            )
            package.burning.sheet_text(sheet)
            for lifepath in ids:
                verdict = package.requirement_met(lifepath, path, age=rng.choice([None, 30]), held=held)
                assert verdict in (True, False, None), verdict
                package.unmet_requirements(lifepath, path)


for name in packages:
    exercise(name)
print("ok")
'''


@dataclass(frozen=True, slots=True)
class Judged:
    problems: tuple[str, ...]  # empty: handled as it must be
    clean: bool
    built: tuple[str, ...]  # the packages built (ids), for one mypy run over many
    codes: tuple[str, ...]


def write_rules(rules: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (rules / name).parent.mkdir(parents=True, exist_ok=True)
        (rules / name).write_text(text, encoding="utf-8")


def kept_build(rulesets: tuple[CompiledRuleset, ...], cache: Path) -> tuple[dict[str, str], Kept]:
    """A build as the command line makes it, in a process of its own: what the cache keeps read first, and
    what it rendered kept after."""
    opened, _ = ParseCache.open(cache)
    kept = Kept(opened, rulesets)
    files = render_all(rulesets, kept)
    kept.save(rulesets)
    return files, kept


def judge_generated(
    files: dict[str, str], scratch: Path, out: Path, *, seed: int = 0, site: bool = True, kept: Path | None = None
) -> Judged:
    """The property for one generated ruleset (files below `rules/`): `check` reports diagnostics, each
    with a position inside its file, or the rulesets build, import in a bare interpreter and run (DRIVER).
    The packages are written to `out`, which may hold others (mypy runs over them all, later). Without
    `site` only the packages are rendered (the reference is 40% of the time; a long run renders it for a
    sample). With `kept` (a cache folder, maybe holding other rulesets' renderings under the same ids), the
    build is made twice more as `rulesdsl build` makes it, keeping its renderings there (targets/build.py
    Kept): both must be the cold build, the first taking what is there, the second all it kept."""
    rules = scratch / "rules"
    shutil.rmtree(rules, ignore_errors=True)
    write_rules(rules, files)
    try:
        result = compile_paths([rules])
        render_text(result.diagnostics, result.sources)
    except Exception:
        return Judged((traceback.format_exc(),), False, (), ())
    codes = tuple(d.code for d in result.diagnostics)
    problems = positions_outside(result)
    problems += [f"{d.code} has no position: {d.message}" for d in result.diagnostics if d.pos is None]
    if not result.ok:
        if not any(d.severity == "error" for d in result.diagnostics):
            problems.append("the compilation failed without an error: " + ", ".join(codes))
        return Judged(tuple(problems), False, (), codes)
    if problems:
        return Judged(tuple(problems), True, (), codes)
    built = tuple(r.id for r in result.rulesets)
    try:
        if site:
            files_out = render_all(result.rulesets)
            for again in range(2 if kept is not None else 0):
                assert kept is not None
                if kept_build(result.rulesets, kept)[0] != files_out:
                    return Judged(
                        (f"a build with kept renderings (run {again + 1}) is not the cold one",), True, (), codes
                    )
        else:
            files_out = {f"{r.id}/{name}": text for r in result.rulesets for name, text in python.render(r).items()}
        for name, text in files_out.items():
            if name.split("/", 1)[0] in built:  # the site is not what this property is about
                target = out / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
    except Exception:
        return Judged((traceback.format_exc(),), True, (), codes)
    ran = subprocess.run(
        [sys.executable, "-I", "-S", "-c", f"import sys; sys.path[:0] = [{str(out)!r}]\n" + DRIVER, str(seed), *built],
        capture_output=True,
        text=True,
        check=False,
    )
    if ran.returncode != 0 or ran.stdout.strip() != "ok":
        return Judged((f"the built package failed (exit {ran.returncode}):\n{ran.stderr[-4000:]}",), True, built, codes)
    return Judged((), True, built, codes)


SHARED_RUNTIME = "rulesdsl_fuzz_runtime"  # the one copy of the runtime that share_runtime's packages use


def share_runtime(out: Path, packages: Sequence[str], shared: Path) -> list[str]:
    """Point the packages' runtimes at one copy, for a long run's mypy: each package carries the runtime
    verbatim, and checking those 2,500 identical lines again for every package was four fifths of the
    run. A package's `_runtime/NAME.py` whose text is rulesdsl's runtime byte for byte (under its header)
    becomes `from rulesdsl_fuzz_runtime.NAME import *` (a star import re-exports every public name, and
    the generated modules use no private one: if one did, mypy would say so); the copy lives in `shared`
    (give it to mypy_strict), where mypy's cache keeps it checked. A runtime that differs in any byte stays
    as it is and is checked in full. Returns the packages whose runtime was shared."""
    copy = shared / SHARED_RUNTIME
    copy.mkdir(parents=True, exist_ok=True)
    texts = {path.stem: path.read_text(encoding="utf-8") for path in python.RUNTIME_DIR.glob("*.py")}
    for name, text in texts.items():
        target = copy / f"{name}.py"
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
    sharing = []
    for package in packages:
        modules = sorted((out / package / "_runtime").glob("*.py"))
        verbatim = (m.stem in texts and m.read_text(encoding="utf-8").endswith("\n" + texts[m.stem]) for m in modules)
        if modules and all(verbatim):
            for module in modules:
                name = SHARED_RUNTIME if module.stem == "__init__" else f"{SHARED_RUNTIME}.{module.stem}"
                module.write_text(f"from {name} import *  # noqa: F403\n", encoding="utf-8")
            sharing.append(package)
    return sharing


def mypy_strict(out: Path, packages: Sequence[str], cache: Path | None = None, shared: Path | None = None) -> str:
    """One `mypy --strict` run over many built packages; its report when it fails, else ''. With `cache`,
    mypy keeps what it learnt of the standard library there between runs (a long run's packages have
    names of their own, so nothing of theirs is reused); `shared` is where share_runtime put the runtime."""
    if not packages:
        return ""
    command = quality_command("mypy", *packages)
    if cache is not None:
        command = [*command[: command.index("--no-incremental")], "--cache-dir", str(cache), *packages]
    env = None if shared is None else {**os.environ, "MYPYPATH": str(shared)}
    ran = subprocess.run(command, cwd=out, capture_output=True, text=True, check=False, env=env)
    return "" if ran.returncode == 0 else ran.stdout + ran.stderr
