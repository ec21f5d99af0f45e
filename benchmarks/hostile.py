"""Benchmark: what hostile input costs (issue 8), so that "nothing runs for ever" stays measured.

Not a test: run it by hand (`.venv/bin/python benchmarks/hostile.py`, add `--big` for 4 MiB files, which
takes several minutes) and read the medians. Each case is one ruleset of one file; `check` runs in this
process with the parser built, `--big` runs `rulesdsl check` in a fresh process and reports its peak memory.

The growth cases (issue 17) run each stage at two sizes, the second twice the first, and print the ratio of
their times: about 2 is linear, 4 quadratic. With `--big` the larger `fmt` file is just under 4 MiB.
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import statistics
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["RULESDSL_CACHE_DIR"] = "off"

from rulesdsl.compile.pipeline import compile_paths, prelude  # noqa: E402
from rulesdsl.diagnostics import did_you_mean  # noqa: E402
from rulesdsl.runtime import core  # noqa: E402
from rulesdsl.syntax import parse as syntax  # noqa: E402
from rulesdsl.syntax.source import MAX_SOURCE_BYTES  # noqa: E402
from rulesdsl.targets.build import render_all  # noqa: E402
from rulesdsl.tools.fmt import format_text  # noqa: E402
from rulesdsl.tools.importer import convert  # noqa: E402

MANIFEST = 'ruleset demo { title: "Demo"  version: "0.1.0" }\n'


def median_seconds(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def ruleset(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ruleset.rules").write_text(MANIFEST, encoding="utf-8")
    (folder / "a.rules").write_text(text, encoding="utf-8")
    return folder


def table(roll: str, low: int, high: int, rows: int) -> str:
    """A table rolled on `roll` whose `rows` rows cover low..high."""
    step = max(1, (high - low + 1) // rows)
    keys = [f"{low + i * step}-{low + (i + 1) * step - 1}" for i in range(rows - 1)] + [f"{low + (rows - 1) * step}+"]
    return (
        f"table t {{\n  roll: {roll}\n  columns: x\n" + "".join(f"  {k} -> r{i}\n" for i, k in enumerate(keys)) + "}\n"
    )


def without_row_limit(folder: Path) -> object:
    """How the checks themselves (coverage above all) scale past the row limit."""
    previous, syntax.MAX_ROWS = syntax.MAX_ROWS, 1_000_000
    try:
        return compile_paths([folder])
    finally:
        syntax.MAX_ROWS = previous


def build(folder: Path) -> dict[str, str]:
    """What `rulesdsl build` computes (everything but writing the files), from a cold start."""
    core._cumulative.cache_clear()  # a build is one process: the odds of mixed dice are counted anew
    return render_all(compile_paths([folder]).rulesets)


def small_cases(scratch: Path) -> dict[str, Callable[[], object]]:
    rng = random.Random(1)
    names = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(5, 25))) for _ in range(5000)]
    alike = ["a" * 190 + str(i) for i in range(3000)]
    cases: dict[str, Callable[[], object]] = {
        "did_you_mean, 5,000 names": lambda: did_you_mean(names[10][:-1] + "x", names),
        "did_you_mean, 3,000 alike 190-letter names": lambda: did_you_mean("a" * 191, alike),
        "did_you_mean, an 80,000-letter word": lambda: did_you_mean("a" * 80_000, names),
    }
    files = {
        "check, a syntax error after an 80,000-letter name": "trait T { type: " + "a" * 80_000 + " 3 }\n",
        "check, a 4,301-digit number": "trait T { type: die  cost: " + "9" * 4301 + " }\n",
        "check, a 1 MiB string": 'trait T { type: die  description: "' + "a" * (1 << 20) + '" }\n',
        "check, a table of 10,000 rows": "table t { columns: x\n"
        + "".join(f"  {i} -> r\n" for i in range(10_000))
        + "}\n",
        "check, a table of 100,000 rows (E107)": "table t { columns: x\n"
        + "".join(f"  {i} -> r\n" for i in range(100_000))
        + "}\n",
        "check, a two-key table of 100 x 100 rows": "table t { keys: zone, level(int)\n  columns: x\n"
        + "".join(f"  z{z}, {lv} -> r\n" for z in range(100) for lv in range(100))
        + "}\n",
    }
    for n, (label, text) in enumerate(files.items()):
        folder = ruleset(scratch / f"c{n}" / "demo", text)
        cases[label] = functools.partial(compile_paths, [folder])
    lifted = ruleset(
        scratch / "lifted" / "demo", "table t { columns: x\n" + "".join(f"  {i} -> r\n" for i in range(100_000)) + "}\n"
    )
    cases["check, a table of 100,000 rows (the limit lifted)"] = functools.partial(without_row_limit, lifted)
    builds = {
        "build, a 100d1000 table of 10 rows": table("100d1000", 100, 100_000, 10),
        "build, a 100d1000 table of 1,000 rows": table("100d1000", 100, 100_000, 1000),
        "build, a 50d999 + 50d1000 table of 10 rows": table("50d999 + 50d1000", 100, 99_950, 10),
    }
    for n, (label, text) in enumerate(builds.items()):
        folder = ruleset(scratch / f"b{n}" / "demo", text)
        cases[label] = functools.partial(build, folder)
    return cases


def lsp_cases(scratch: Path) -> dict[str, Callable[[], object]]:
    """The language server's outline and diagnostics of one large file (issue 17: they were quadratic)."""
    from rulesdsl.tools import lsp

    text = "".join(f"trait t{i} {{ type: die  cost: 1  rol: 2 }}\n" for i in range(20_000))  # an error in each
    path = (ruleset(scratch / "lsp" / "demo", text) / "a.rules").resolve()
    analyser = lsp.Analyser()
    snapshot = analyser.analyse(path)
    analyser.close()
    assert snapshot is not None

    def uncached(run: Callable[[], object]) -> Callable[[], object]:
        def cold() -> object:
            lsp.lines_of.cache_clear()  # the split of the text is part of each run
            return run()

        return cold

    return {
        "lsp outline, 20,000 blocks": uncached(lambda: lsp.symbols(text, path)),
        "lsp diagnostics, 20,000 blocks, an error each": uncached(lambda: lsp.diagnostics_for(snapshot, path)),
    }


# 4 MiB files (just under the file limit) of the shapes that cost most per byte.
BIG = {
    "one string": ('trait T { type: die  description: "', "a", '" }\n'),
    "one hyphenated name": ("trait T { type: die  description: ", "a-", "a }\n"),
    "line ends": ("trait T {", "\n", "type: die }\n"),
    "a list of one-letter names": ("trait T { type: die  description: ", "a,", "a }\n"),
    "tiny blocks": ("", "trait a{type:die}\n", ""),
    "rows": ("table t {\n  columns: x\n", "1 -> a\n", "}\n"),
    "unclosed blocks (garbage)": ("", "a{\n", ""),
}


def big_case(scratch: Path, head: str, unit: str, tail: str) -> tuple[float, int]:
    """Wall seconds and peak memory (bytes) of `rulesdsl check` on a file just under the size limit."""
    count = (MAX_SOURCE_BYTES - 64 - len(head) - len(tail)) // len(unit)
    folder = ruleset(scratch / "big" / "demo", head + unit * count + tail)
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "rulesdsl", "check", str(folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, _, usage = os.wait4(process.pid, 0)
    return time.perf_counter() - started, usage.ru_maxrss * 1024


# ---------------------------------------------------------------- growth: each stage at n and 2n


def unknown_names(scratch: Path, n: int) -> Callable[[], object]:
    """n skills, and a lifepath naming n skills that are none of them (each gets a did-you-mean hint)."""
    skills = "".join(
        f"skill s{i}q{i * 7919 % 1000} {{ root: Perception  type: peasant  tools: no }}\n" for i in range(n)
    )
    names = ", ".join(f"u{i}v{i * 31 % 97}" for i in range(n))
    text = skills + f"lifepath L {{ time: 5 yrs  resources: 1  skills: 5 pts: {names} }}\n"
    return functools.partial(compile_paths, [ruleset(scratch / f"unknown{n}" / "demo", text)])


def patches(scratch: Path, n: int) -> Callable[[], object]:
    """A base of n traits and a homebrew on it: n patches, and removals of n names that are not there."""
    base = ruleset(
        scratch / f"patches{n}" / "base", "".join(f"trait t{i}q{i * 7919 % 1000} {{ type: die }}\n" for i in range(n))
    )
    (base / "ruleset.rules").write_text('ruleset base { title: "Base"  version: "0.1.0" }\n', encoding="utf-8")
    text = "".join(
        f"patch trait t{i}q{i * 7919 % 1000} {{ cost: 2 }}\nremove trait u{i}v{i * 31 % 97}\n" for i in range(n)
    )
    layer = ruleset(scratch / f"patches{n}" / "layer", text)
    (layer / "ruleset.rules").write_text(
        'ruleset layer { title: "Layer"  version: "0.1.0"  extends: base }\n', encoding="utf-8"
    )
    return functools.partial(compile_paths, [base, layer])


def declared_kinds(scratch: Path, n: int) -> Callable[[], object]:
    """n declared kinds of one entry each, and as many stocks with a setting each: the reference."""
    text = "".join(f'kind k{i} "Kind {i}" {{ weight: int }}\nk{i} e{i} {{ weight: {i} }}\n' for i in range(n))
    text += "".join(f"stock s{i} {{ }}\nsetting z{i} {{ stock: s{i} }}\n" for i in range(n))
    folder = ruleset(scratch / f"kinds{n}" / "demo", text)

    def run() -> int:
        files = build(folder)
        return sum(len(t.encode()) for name, t in files.items() if name.startswith("site/"))

    return run


def leads(scratch: Path, n: int) -> Callable[[], object]:
    """One stock of n settings, each with a lifepath leading to the next two: the stock's drawing of leads."""
    text = "stock folk { }\n" + "".join(f"setting s{i} {{ stock: folk }}\n" for i in range(n))
    text += "".join(
        f'lifepath "P{i}" {{ setting: s{i}  time: 1 yrs  resources: 1  stat: +1 M/P  leads: s{(i + 1) % n}, '
        f"s{(i + 2) % n} }}\n"
        for i in range(n)
    )
    folder = ruleset(scratch / f"leads{n}" / "demo", text)
    return lambda: sum(len(t.encode()) for name, t in build(folder).items() if name.startswith("site/"))


def commented(n: int) -> str:
    """n statements, each with comments inside and around it and blank lines (what fmt keeps)."""
    return "".join(
        f"# about t{i}\ntrait t{i} {{  # open\n  type: die  # a die\n\n  cost: 2\n}}\n\n\n" for i in range(n)
    )


def records(n: int) -> Callable[[], object]:
    rows = [{"name": f"Skill {i}", "root": "Will", "type": "social", "tools": "no"} for i in range(n)]
    return functools.partial(convert, rows, prelude()["skill"])


def growth_cases(scratch: Path, big: bool) -> dict[str, tuple[int, Callable[[int], Callable[[], object]]]]:
    """label -> (the smaller size n, what runs at a size)."""
    statement = len(commented(1)) + 3 * 5  # a statement names its number three times: up to 6 digits
    fmt_n = (MAX_SOURCE_BYTES - 64) // statement // 2 if big else 4000
    return {
        "check, n unknown names among n skills": (2000, lambda n: unknown_names(scratch, n)),
        "check, n patches and n mistaken removals": (1000, lambda n: patches(scratch, n)),
        "build, n declared kinds and n stocks": (150, lambda n: declared_kinds(scratch, n)),
        "build, a stock of n settings leading on": (400, lambda n: leads(scratch, n)),
        "fmt, n commented statements": (fmt_n, lambda n: functools.partial(format_text, commented(n))),
        "import, n records": (2000, records),
    }


def report_growth(scratch: Path, repeat: int, big: bool) -> None:
    for label, (n, make) in growth_cases(scratch, big).items():
        small, large = make(n), make(2 * n)
        small(), large()  # warm: the parser, the templates
        first, second = median_seconds(small, repeat), median_seconds(large, repeat)
        extra = f"  ({large():,} bytes at 2n)" if label.startswith("build") else ""
        times = f"{first * 1000:>9.1f} ms  2n: {second * 1000:>9.1f} ms"
        print(f"{label:<40} n={n:<7,} {times}  x{second / first:.2f}{extra}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="runs per case; the median is shown (default 3)")
    parser.add_argument("--big", action="store_true", help="also check 4 MiB files (minutes), once each")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        compile_paths([ruleset(Path(scratch) / "warm" / "demo", "trait T { type: die }\n")])  # build the parser
        for label, run in {**small_cases(Path(scratch)), **lsp_cases(Path(scratch))}.items():
            print(f"{label:<55} {median_seconds(run, args.repeat) * 1000:>9.1f} ms", flush=True)
        report_growth(Path(scratch), args.repeat, args.big)
        if args.big:
            for label, (head, unit, tail) in BIG.items():
                seconds, peak = big_case(Path(scratch), head, unit, tail)
                print(f"check, 4 MiB: {label:<40} {seconds:>7.1f} s {peak / 2**20:>8,.0f} MiB", flush=True)


if __name__ == "__main__":
    main()
