"""Benchmark: `check` and `build` on rules/ and on synthetic corpora, against json.loads of the same data.

Not a test: run it by hand (`.venv/bin/python benchmarks/bench.py`), read the medians and the ratios.
The machine is shared and noisy, so every figure is a median of several runs and every ratio compares
numbers measured in the same run. `check` and `build` are cold (parse cache off); `warm` is a re-check
with nothing changed, every file coming from the parse cache.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rulesdsl.build import render_all, write_output  # noqa: E402
from rulesdsl.pipeline import compile_paths  # noqa: E402


def synthetic_ruleset(folder: Path, lifepaths: int) -> Path:
    """A Burning-Wheel-like ruleset: settings, skills, traits and `lifepaths` lifepaths with requirements."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ruleset.rules").write_text('ruleset synth { title: "Synthetic"  version: "1.0.0" }\n')
    settings = max(2, lifepaths // 50)
    lines = ['stock folk "Folk" { }']
    lines += [f'setting s{i} "Setting {i}" {{ stock: folk }}' for i in range(settings)]
    lines += [f'skill "Skill {i}" {{ root: Will  type: academic  tools: no }}' for i in range(60)]
    lines += [f'trait "Trait {i}" {{ type: character  cost: 1 }}' for i in range(40)]
    (folder / "common.rules").write_text("\n".join(lines) + "\n")
    per_file = 500
    for start in range(0, lifepaths, per_file):
        blocks = []
        for n in range(start, min(start + per_file, lifepaths)):
            requires = (
                ""
                if n < 3
                else f'\n  requires: "Path {n - 1}" or "Path {n - 2}" or 2 of lifepaths in setting s{n % settings}'
            )
            blocks.append(
                f'lifepath "Path {n}" {{\n'
                f"  setting: s{n % settings}\n"
                f"  time: {n % 9 + 1} yrs  resources: {n % 20}  stat: +1 M/P\n"
                f"  leads: s{(n + 1) % settings}, s{(n + 2) % settings}\n"
                f'  skills: 6 pts: "Skill {n % 60}", "Skill {(n + 7) % 60}", "Skill {(n + 13) % 60}"\n'
                f'  traits: 1 pt: "Trait {n % 40}"{requires}\n'
                f'  source: "p. {n % 300}"\n'
                "}\n"
            )
        (folder / f"lifepaths_{start // per_file:03}.rules").write_text("\n".join(blocks))
    return folder


def formula_chain(folder: Path, length: int) -> Path:
    """Formulas each calling the next twice: a naive cycle search is exponential in the chain's length."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ruleset.rules").write_text('ruleset chain { title: "Chain"  version: "1.0.0" }\n')
    lines = [f"formula f{i} {{ params: x  formula: f{i + 1}(x) + f{i + 1}(x) }}" for i in range(length)]
    (folder / "chain.rules").write_text("\n".join([*lines, f"formula f{length} {{ params: x  formula: x }}"]) + "\n")
    return folder


def median_seconds(action: Callable[[], object], repeats: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """The median of `repeats` runs, by the wall clock or another (time.process_time: CPU seconds)."""
    times = []
    for _ in range(repeats):
        start = clock()
        action()
        times.append(clock() - start)
    return statistics.median(times)


def check(path: Path) -> None:
    result = compile_paths([path])
    if not result.ok:
        raise SystemExit(f"benchmark corpus {path} does not check clean: {result.diagnostics[0].message}")


def build(path: Path, out: Path) -> None:
    result = compile_paths([path])
    write_output(out, render_all(result.rulesets))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5, help="runs per measurement (median reported)")
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 10000], help="synthetic lifepath counts")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rulesdsl-bench-"))
    try:
        corpora = [("rules/", ROOT / "rules")]
        corpora += [(f"{n} lifepaths", synthetic_ruleset(work / f"synth{n}" / "synth", n)) for n in args.sizes]
        print(
            f"{'corpus':<16}{'entities':>9}{'json.loads':>12}{'check':>10}{'warm':>10}{'build':>10}"
            f"{'check/json':>12}{'warm/json':>11}{'build/json':>12}"
        )
        for label, path in corpora:
            result = compile_paths([path])
            entities = sum(len(group) for r in result.rulesets for group in r.entities.values())
            exported = json.dumps({"rulesets": {r.id: r.documents() for r in result.rulesets}})
            repeats = max(1, args.repeats if entities < 5000 else args.repeats // 2)
            loads = median_seconds(lambda exported=exported: json.loads(exported), max(repeats, 5))
            os.environ["RULESDSL_CACHE_DIR"] = "off"  # cold: every file is parsed
            checking = median_seconds(lambda path=path: check(path), repeats)
            fresh = iter(range(10**6))  # a new output folder each time: a cold build writes every file
            building = median_seconds(lambda path=path, n=fresh: build(path, work / f"out{next(n)}"), repeats)
            os.environ["RULESDSL_CACHE_DIR"] = str(work / "cache")  # warm: nothing changed since last time
            check(path)
            warm = median_seconds(lambda path=path: check(path), repeats)
            print(
                f"{label:<16}{entities:>9}{loads * 1000:>10.1f}ms{checking * 1000:>8.0f}ms{warm * 1000:>8.0f}ms"
                f"{building * 1000:>8.0f}ms{checking / loads:>11.0f}x{warm / loads:>10.0f}x{building / loads:>11.0f}x"
            )
        chain = formula_chain(work / "chain" / "chain", 2000)
        os.environ["RULESDSL_CACHE_DIR"] = "off"
        seconds = median_seconds(lambda: check(chain), 3)
        print(f"2,000 formulas calling each other in a chain (cycle detection): check {seconds:.2f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
