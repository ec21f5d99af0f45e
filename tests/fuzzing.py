"""Fuzzing the whole pipeline: mutations of seed files, and what every result must satisfy.

Shared by the fuzz tests in the suite (tests/test_fuzz.py, driven by Hypothesis) and the long run by hand
(benchmarks/fuzz.py, driven by a seeded random generator). An input is one `.rules` file in a ruleset of its
own; it is checked, and when it checks clean it is built and the package imported in a bare interpreter.
"""

from __future__ import annotations

import random
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rulesdsl.build import render_all, write_output
from rulesdsl.diagnostics import render_json, render_text, source_lines
from rulesdsl.pipeline import Compilation, compile_paths

from .conftest import MANIFEST, run_python

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
    if table.dice is not None:
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
