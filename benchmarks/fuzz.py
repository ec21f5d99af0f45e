"""A long fuzz run of the whole pipeline (the suite runs a short one: tests/test_fuzz.py).

Mutates the seed corpus (tests/fuzz_corpus/) and the seed games' files (rules/) with byte flips, splices
of other seeds, deletions, duplications and hostile strings; checks each result as a one-file ruleset
with `compile_paths`; builds and imports a sample of what checks clean. An input is a crash when the
compiler raises (rulesdsl would exit 3), a diagnostic points outside its file, a clean input fails to
build or import, or it takes longer than --timeout seconds or more memory than --memory-gb.

    .venv/bin/python benchmarks/fuzz.py                   # 100,000 inputs on every core
    .venv/bin/python benchmarks/fuzz.py -n 2000 --seed 7  # a quick one; the same seed makes the same inputs
    .venv/bin/python benchmarks/fuzz.py --rulesets        # 100,000 generated rulesets (tests/generate.py)

With --rulesets the inputs are not mutated bytes but whole rulesets drawn from the kind declarations
(tests/generate.py; one in three mutated), and every one that checks clean is built, imported in a bare
interpreter and exercised (tests/fuzzing.py DRIVER), and its packages go through `mypy --strict` (one run
per chunk of inputs). It prints inputs, clean, built and failures.

Crashing inputs are written to --crashes (default fuzz-crashes/): NAME.rules and, beside it, NAME.txt
with what went wrong. Prints inputs, crashes and time; exits 1 when there were crashes.
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import os
import random
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["RULESDSL_CACHE_DIR"] = "off"  # 100,000 parses must not fill the parse cache

from tests.fuzzing import (  # noqa: E402
    build_and_import,
    check,
    judge_generated,
    mutate,
    mypy_strict,
    random_mutations,
    seeds,
    share_runtime,
)
from tests.generate import seeded  # noqa: E402

CHUNK = 250  # inputs a worker takes at a time
RULESET_CHUNK = 40  # generated rulesets a worker takes at a time (their packages: one mypy run)


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _Timeout


@dataclass
class Tally:
    inputs: int = 0
    clean: int = 0
    built: int = 0
    crashes: list[tuple[bytes, str]] = field(default_factory=list)
    codes: dict[str, int] = field(default_factory=dict)

    def add(self, other: Tally) -> None:
        self.inputs += other.inputs
        self.clean += other.clean
        self.built += other.built
        self.crashes += other.crashes
        for code, count in other.codes.items():
            self.codes[code] = self.codes.get(code, 0) + count


@dataclass(frozen=True)
class Job:
    seed: int
    first: int
    count: int
    build_every: int
    timeout: float
    memory_gb: float
    with_rules: bool
    rulesets: bool = False
    mypy: bool = True


_CORPUS: list[bytes] = []
_SCRATCH: Path = Path()


def _start(memory_gb: float, with_rules: bool) -> None:
    """Each worker: its own scratch folder, a memory ceiling, the corpus read once."""
    global _CORPUS, _SCRATCH
    _CORPUS = seeds(with_rules=with_rules)
    _SCRATCH = Path(tempfile.mkdtemp(prefix="rulesdsl-fuzz-"))
    os.chdir(_SCRATCH)
    if memory_gb > 0:
        limit = int(memory_gb * 1024**3)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    signal.signal(signal.SIGALRM, _alarm)


def _run_rulesets(job: Job) -> Tally:
    """Generated rulesets: the property of tests/test_generated_rulesets.py, and mypy over the chunk."""
    tally = Tally()
    out = _SCRATCH / f"out{job.first}"
    texts: dict[str, bytes] = {}
    built: dict[str, str] = {}  # package -> the input's suffix
    failed: set[str] = set()
    for index in range(job.first, job.first + job.count):
        suffix = f"_{index}"
        signal.setitimer(signal.ITIMER_REAL, job.timeout)
        try:
            ruleset, mutated = seeded(job.seed * 1_000_003 + index)
            texts[suffix] = (
                f"# seed {job.seed} input {index}; mutations: {mutated or 'none'}\n" + ruleset.text()
            ).encode()
            # the reference for one in ten: it is 40% of the time, and the property is about the packages; built
            # again with the renderings kept from the inputs before (other rulesets, the same ids: never taken)
            site = index % 10 == 0
            judged = judge_generated(
                ruleset.files(suffix), _SCRATCH, out, seed=index, site=site, kept=_SCRATCH / "kept"
            )
            problems = list(judged.problems)
            for code in set(judged.codes):
                tally.codes[code] = tally.codes.get(code, 0) + 1
            tally.clean += judged.clean
            if judged.built and not problems:
                tally.built += 1
                built.update((package, suffix) for package in judged.built)
        except _Timeout:
            problems = [f"took longer than {job.timeout} s"]
        except MemoryError:
            problems = [f"needed more than {job.memory_gb} GB"]
        except Exception:  # judge_generated catches the compiler's: this is the generator's own
            problems = ["the generator failed:\n" + traceback.format_exc()]
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        tally.inputs += 1
        if problems:
            failed.add(suffix)
            tally.crashes.append((texts.get(suffix, b""), "\n".join(problems)))
    if job.mypy and built:
        cache = _SCRATCH / "mypy-cache"
        share_runtime(out, sorted(built), _SCRATCH / "shared")
        report = mypy_strict(out, sorted(built), cache=cache, shared=_SCRATCH / "shared")
        for version in cache.glob("3.*"):  # keep the standard library's entries, not the chunk's packages
            for package in built:
                shutil.rmtree(version / package, ignore_errors=True)
        by_input: dict[str, list[str]] = {}
        for line in report.splitlines():
            package = line.split("/", 1)[0]
            if package in built:
                by_input.setdefault(built[package], []).append(line)
        for suffix, lines in sorted(by_input.items()):
            if suffix not in failed:
                tally.built -= 1
                tally.crashes.append((texts[suffix], "mypy --strict:\n" + "\n".join(lines)))
        if report and not by_input:
            tally.crashes.append((b"", "mypy --strict failed:\n" + report))
    shutil.rmtree(out, ignore_errors=True)
    return tally


def _run(job: Job) -> Tally:
    if job.rulesets:
        return _run_rulesets(job)
    tally = Tally()
    for index in range(job.first, job.first + job.count):
        rng = random.Random(job.seed * 1_000_003 + index)
        data = mutate(rng.choice(_CORPUS), random_mutations(rng), _CORPUS)
        folder = _SCRATCH / "rules" / f"in{index % 2}" / "demo"
        signal.setitimer(signal.ITIMER_REAL, job.timeout)
        try:
            outcome = check(folder, data)
            problems = list(outcome.problems)
            for code in set(outcome.codes):
                tally.codes[code] = tally.codes.get(code, 0) + 1
            if outcome.clean:
                tally.clean += 1
                if not problems and rng.randrange(job.build_every) == 0:
                    tally.built += 1
                    problems += build_and_import(folder, _SCRATCH / "out")
        except _Timeout:
            problems = [f"took longer than {job.timeout} s"]
        except MemoryError:
            problems = [f"needed more than {job.memory_gb} GB"]
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        tally.inputs += 1
        if problems:
            tally.crashes.append((data, "\n".join(problems)))
    return tally


def _jobs(args: argparse.Namespace) -> Iterator[Job]:
    chunk = RULESET_CHUNK if args.rulesets else CHUNK
    for first in range(0, args.inputs, chunk):
        count = min(chunk, args.inputs - first)
        yield Job(
            args.seed,
            first,
            count,
            args.build_every,
            args.timeout,
            args.memory_gb,
            not args.no_rules,
            args.rulesets,
            not args.no_mypy,
        )


def _save(crashes: list[tuple[bytes, str]], folder: Path) -> int:
    """Write each crashing input once (by its bytes); returns how many distinct inputs were written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = set()
    for data, problem in crashes:
        name = hashlib.sha256(data).hexdigest()[:16]
        if name in written:
            continue
        written.add(name)
        (folder / f"{name}.rules").write_bytes(data)
        (folder / f"{name}.txt").write_text(problem + "\n", encoding="utf-8")
    return len(written)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--inputs", type=int, default=100_000, help="inputs to try (default 100,000)")
    parser.add_argument("--seed", type=int, default=1, help="the run's seed (default 1)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes (default: cores)")
    parser.add_argument("--crashes", type=Path, default=Path("fuzz-crashes"), help="where crashing inputs go")
    parser.add_argument(
        "--build-every", type=int, default=10, help="build and import one clean input in N, at random (default 10)"
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds one input may take (default 60)")
    parser.add_argument("--memory-gb", type=float, default=4.0, help="memory per worker, 0: no limit (default 4)")
    parser.add_argument("--no-rules", action="store_true", help="mutate only the seed corpus, not rules/")
    parser.add_argument(
        "--rulesets", action="store_true", help="generated rulesets (tests/generate.py) instead of mutated files"
    )
    parser.add_argument("--no-mypy", action="store_true", help="with --rulesets: skip mypy --strict")
    args = parser.parse_args(argv)
    total = Tally()
    started = time.monotonic()
    with multiprocessing.Pool(args.workers, _start, (args.memory_gb, not args.no_rules)) as pool:
        for tally in pool.imap_unordered(_run, _jobs(args)):
            before = total.inputs
            total.add(tally)
            if total.inputs // (1000 if args.rulesets else 10_000) != before // (1000 if args.rulesets else 10_000):
                elapsed = time.monotonic() - started
                print(f"  {total.inputs:,} inputs, {len(total.crashes)} crashes, {elapsed:.0f} s", flush=True)
    elapsed = time.monotonic() - started
    distinct = _save(total.crashes, args.crashes) if total.crashes else 0
    if args.rulesets:
        print(
            f"inputs: {total.inputs:,}  clean: {total.clean:,}  built (imported, ran, mypy --strict): "
            f"{total.built:,}  failures: {len(total.crashes)}  time: {elapsed:.0f} s "
            f"({total.inputs / elapsed:,.1f} inputs/s, {args.workers} workers)"
        )
    else:
        print(
            f"inputs: {total.inputs:,}  checked clean: {total.clean:,}  built and imported: {total.built:,}  "
            f"crashes: {len(total.crashes)} ({distinct} distinct inputs)  time: {elapsed:.0f} s "
            f"({total.inputs / elapsed:,.0f} inputs/s, {args.workers} workers)"
        )
    common = sorted(total.codes.items(), key=lambda item: -item[1])[:12]
    print("most frequent diagnostics (inputs): " + ", ".join(f"{code} {count:,}" for code, count in common))
    if total.crashes:
        print(f"crashing inputs are in {args.crashes}/")
    return 1 if total.crashes else 0


if __name__ == "__main__":
    sys.exit(main())
