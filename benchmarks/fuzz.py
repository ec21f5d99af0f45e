"""A long fuzz run of the whole pipeline (the suite runs a short one: tests/test_fuzz.py).

Mutates the seed corpus (tests/fuzz_corpus/) and the seed games' files (rules/) with byte flips, splices
of other seeds, deletions, duplications and hostile strings; checks each result as a one-file ruleset
with `compile_paths`; builds and imports a sample of what checks clean. An input is a crash when the
compiler raises (rulesdsl would exit 3), a diagnostic points outside its file, a clean input fails to
build or import, or it takes longer than --timeout seconds or more memory than --memory-gb.

    .venv/bin/python benchmarks/fuzz.py                   # 100,000 inputs on every core
    .venv/bin/python benchmarks/fuzz.py -n 2000 --seed 7  # a quick one; the same seed makes the same inputs

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
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["RULESDSL_CACHE_DIR"] = "off"  # 100,000 parses must not fill the parse cache

from tests.fuzzing import build_and_import, check, mutate, random_mutations, seeds  # noqa: E402

CHUNK = 250  # inputs a worker takes at a time


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


def _run(job: Job) -> Tally:
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
    for first in range(0, args.inputs, CHUNK):
        count = min(CHUNK, args.inputs - first)
        yield Job(args.seed, first, count, args.build_every, args.timeout, args.memory_gb, not args.no_rules)


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
    args = parser.parse_args(argv)
    total = Tally()
    started = time.monotonic()
    with multiprocessing.Pool(args.workers, _start, (args.memory_gb, not args.no_rules)) as pool:
        for tally in pool.imap_unordered(_run, _jobs(args)):
            before = total.inputs
            total.add(tally)
            if total.inputs // 10_000 != before // 10_000:
                elapsed = time.monotonic() - started
                print(f"  {total.inputs:,} inputs, {len(total.crashes)} crashes, {elapsed:.0f} s", flush=True)
    elapsed = time.monotonic() - started
    distinct = _save(total.crashes, args.crashes) if total.crashes else 0
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
