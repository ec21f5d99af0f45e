"""The build under faults: killed or failing at every step, two builds at once, leftovers of killed builds.

After anything short of a finished build, the output folder must be exactly the old tree or exactly the
new one (the fallback swap may need the next build or `build --check` to put it back), and the next
build must succeed and leave nothing but the output beside it.
"""

from __future__ import annotations

import builtins
import errno
import fcntl
import io
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

from rulesdsl.targets import build
from rulesdsl.targets.build import MARKER, MARKER_TEXT, OutputError, recover_output, write_output

from .conftest import FIXTURES
from .test_build import digest

Cli = Callable[..., tuple[int, str, str]]

OLD = {
    MARKER: MARKER_TEXT,
    "pkg/__init__.py": "old\n",
    "pkg/same.py": "same\n",
    "site/index.html": "<p>old</p>\n",
    "site/gone.html": "only in the old tree\n",
}
NEW = {
    MARKER: MARKER_TEXT,
    "pkg/__init__.py": "new\n",
    "pkg/same.py": "same\n",
    "site/index.html": "<p>new</p>\n",
    "site/added.html": "only in the new tree\n",
    "site/deeper/page.html": "new folder\n",
}
KILLED = 77


def beside(out: Path) -> list[str]:
    """Everything in the output's parent folder."""
    return sorted(p.name for p in out.parent.iterdir())


def exchange_works() -> bool:
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "a").mkdir()
        (Path(folder) / "b").mkdir()
        return build._exchange(Path(folder) / "a", Path(folder) / "b")


@pytest.fixture(params=["exchange", "fallback"])
def swap(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with the one-step exchange, and again with the two-rename fallback and its journal."""
    if request.param == "exchange":
        if not exchange_works():
            pytest.skip("this system or file system cannot exchange two paths")
    else:
        monkeypatch.setattr(build, "_exchange", lambda first, second: False)
    return str(request.param)


def test_the_exchange_swaps_two_folders_in_one_step(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (first / "one").write_text("1")
    (second / "two").write_text("2")
    if not build._exchange(first, second):
        pytest.skip("this system or file system cannot exchange two paths")
    assert [p.name for p in first.iterdir()] == ["two"] and [p.name for p in second.iterdir()] == ["one"]


def test_a_build_uses_the_exchange_where_it_can(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if sys.platform != "linux":
        pytest.skip("renameat2 is Linux's")
    out = tmp_path / "gen"
    write_output(out, OLD)
    calls: list[bool] = []
    real = build._exchange

    def spy(first: Path, second: Path) -> bool:
        calls.append(real(first, second))
        return calls[-1]

    monkeypatch.setattr(build, "_exchange", spy)
    write_output(out, NEW)
    assert calls == [True], "on Linux (ext4, tmpfs, btrfs, xfs) the swap is one exchange"
    assert digest(out) == digest_of(NEW)


def digest_of(files: dict[str, str]) -> dict[str, str]:
    """The digest of the tree a build of `files` writes (built aside, in a folder of its own)."""
    with tempfile.TemporaryDirectory() as folder:
        write_output(Path(folder) / "tree", files)
        return digest(Path(folder) / "tree")


class Faults:
    """Counts the changes a build makes to the file system and stops it at the n-th, before it happens."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, at: int, stop: Callable[[], None]) -> None:
        self.calls = 0
        self.at = at
        self.stop = stop
        for module, name in [
            (os, "open"),
            (os, "rename"),
            (os, "replace"),
            (os, "link"),
            (os, "mkdir"),
            (os, "rmdir"),
            (os, "unlink"),
            (os, "chmod"),
            (os, "ftruncate"),
            (build, "_exchange"),
        ]:
            monkeypatch.setattr(module, name, self._counted(getattr(module, name)))
        for module in (builtins, io):  # files written with open() and with Path.write_text()
            monkeypatch.setattr(module, "open", self._counted(module.open, writing_only=True))

    def _counted(self, function: Callable[..., Any], writing_only: bool = False) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            mode = str(args[1] if len(args) > 1 else kwargs.get("mode", "r"))
            if not writing_only or set(mode) & set("wxa+"):
                self.calls += 1
                if self.calls == self.at:
                    self.stop()
            return function(*args, **kwargs)

        return counted


def killed_at(step: int, out: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """Build NEW over `out` in a child process killed (os._exit: no cleanup at all) before its step-th change."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            Faults(monkeypatch, step, lambda: os._exit(KILLED))
            write_output(out, NEW)
            os._exit(0)
        except BaseException:
            traceback.print_exc()
            os._exit(1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_killed_at_every_step_the_output_is_old_or_new(
    swap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = digest_of(OLD), digest_of(NEW)
    out = tmp_path / "work" / "gen"
    out.parent.mkdir()
    outcomes: Counter[str] = Counter()
    for step in range(1, 1000):
        shutil.rmtree(out.parent)
        out.parent.mkdir()
        write_output(out, OLD)
        code = killed_at(step, out, monkeypatch)
        if code == 0:
            break  # the build needed fewer changes than `step`: every point has been tried
        assert code == KILLED
        if not out.exists():
            assert swap == "fallback", f"killed before change {step}, the exchange left no output"
            assert ".gen.journal" in beside(out), f"killed before change {step}: no output and no journal"
            recover_output(out)  # what `build --check` does first
            outcomes["missing, put back"] += 1
        assert digest(out) in (old, new), f"killed before change {step}: a mixed tree"
        outcomes["old" if digest(out) == old else "new"] += 1
        outcomes["left something beside it"] += beside(out) != ["gen"]
        write_output(out, NEW)
        assert digest(out) == new and beside(out) == ["gen"], f"killed before change {step}: not cleaned up"
    else:
        pytest.fail("the build never finished")
    print(f"\n{swap}: {step - 1} kill points: {dict(outcomes)}")
    assert outcomes["old"] and outcomes["new"] and outcomes["left something beside it"]
    assert outcomes["missing, put back"] if swap == "fallback" else not outcomes["missing, put back"]


@pytest.mark.parametrize("fault", [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt()])
def test_failing_at_every_step_the_output_is_old_or_new(
    swap: str, fault: BaseException, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change that fails (or an interrupt) leaves, at once, the old tree or the new one: never neither."""
    old, new = digest_of(OLD), digest_of(NEW)
    out = tmp_path / "work" / "gen"
    out.parent.mkdir()
    for step in range(1, 1000):
        shutil.rmtree(out.parent)
        out.parent.mkdir()
        write_output(out, OLD)

        def fail(fault: BaseException = fault) -> None:
            raise fault

        with monkeypatch.context() as patched:
            faults = Faults(patched, step, fail)
            with suppress(OutputError, KeyboardInterrupt):
                write_output(out, NEW)
        if faults.calls < step:
            break  # the build needed fewer changes than `step`: every point has been tried
        assert digest(out) in (old, new), f"failed at change {step}"
        write_output(out, NEW)
        assert digest(out) == new and beside(out) == ["gen"], f"failed at change {step}: not cleaned up"


def test_check_puts_back_an_output_a_killed_build_left_missing(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "gen"
    assert cli("build", str(FIXTURES / "mini"), "--out", str(out))[0] == 0
    before = digest(out)
    # the state of a fallback swap killed between its renames
    retired = tmp_path / ".gen.old-k1ll3d"
    os.rename(out, retired)
    (tmp_path / ".gen.journal").write_text('{"retired": ".gen.old-k1ll3d"}\n')
    code, stdout, _ = cli("build", str(FIXTURES / "mini"), "--out", str(out), "--check")
    assert code == 0 and "up to date" in stdout
    assert digest(out) == before and beside(out) == ["gen"]


def test_a_journal_cut_short_or_forged_moves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    write_output(out, OLD)
    before = digest(out)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / MARKER).write_text(MARKER_TEXT)
    for journal in ['{"retir', '{"retired": "../elsewhere"}', '{"retired": 3}', "[]"]:
        os.rename(out, tmp_path / "moved")
        (tmp_path / ".gen.journal").write_text(journal)
        recover_output(out)
        assert not out.exists() and elsewhere.is_dir(), journal
        os.rename(tmp_path / "moved", out)
    assert digest(out) == before


def test_leftovers_of_killed_builds_are_removed_but_nothing_else(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    write_output(out, OLD)
    for name in (".gen.new-abc123", ".gen.old-4242"):  # ours: our name and our marker
        (tmp_path / name / "pkg").mkdir(parents=True)
        (tmp_path / name / MARKER).write_text(MARKER_TEXT)
        (tmp_path / name / "pkg" / "x.py").write_text("half written")
    (tmp_path / ".gen.new-empty1").mkdir()  # killed right after creating it
    (tmp_path / ".gen.lock").write_text("12345\n")  # the lock of a killed build
    (tmp_path / ".gen.journal").write_text('{"retir')  # cut short
    foreign = tmp_path / ".gen.new-mine"  # our name but not our marker: someone else's
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep")
    other = tmp_path / "gen.new-x"  # another output whose name starts like a leftover of ours
    write_output(other, OLD)
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / MARKER).write_text(MARKER_TEXT)
    (tmp_path / ".gen.old-link").symlink_to(kept, target_is_directory=True)  # a link is never followed
    write_output(out, NEW)
    assert beside(out) == [".gen.new-mine", ".gen.old-link", "gen", "gen.new-x", "kept"]
    assert (foreign / "notes.txt").read_text() == "keep" and (kept / MARKER).exists()
    assert digest(other) == digest_of(OLD)


@contextmanager
def holding_the_lock(out: Path) -> Iterator[int]:
    """Be another build of `out`: hold its lock (a separate open file, so flock conflicts in-process too)."""
    fd = os.open(out.parent / f".{out.name}.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, b"4242\n")
    try:
        yield fd
    finally:
        os.close(fd)


def test_a_second_build_gives_up_while_another_holds_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    out = tmp_path / "gen"
    write_output(out, OLD)
    before = digest(out)
    (tmp_path / ".gen.new-abc123").mkdir()  # the other build's staging folder
    (tmp_path / ".gen.new-abc123" / MARKER).write_text(MARKER_TEXT)
    monkeypatch.setattr(build, "LOCK_WAIT", 0)
    with holding_the_lock(out):
        with pytest.raises(OutputError, match=r"another rulesdsl build \(pid 4242\) is writing"):
            write_output(out, NEW)
        code, _, err = cli("build", str(FIXTURES / "mini"), "--out", str(out))
    assert code == 2 and err.count("\n") == 1 and "another rulesdsl build" in err
    assert digest(out) == before
    assert (tmp_path / ".gen.new-abc123").is_dir(), "a live build's staging folder must not be removed"


def test_a_second_build_waits_for_the_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "gen"
    write_output(out, OLD)
    told: list[str] = []
    with holding_the_lock(out) as other:

        def first_build_finishes(seconds: float) -> None:  # called while the second build waits
            os.unlink(out.parent / ".gen.lock")  # as a build releasing its lock does
            fcntl.flock(other, fcntl.LOCK_UN)

        monkeypatch.setattr(build, "_sleep", first_build_finishes)
        assert write_output(out, NEW, notify=told.append) > 0
    assert len(told) == 1 and "waiting for another build (pid 4242)" in told[0]
    assert digest(out) == digest_of(NEW) and beside(out) == ["gen"]


def test_two_real_builds_at_once_both_succeed(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    command = [sys.executable, "-m", "rulesdsl", "build", str(FIXTURES / "mini"), "--out", str(out)]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [(*run.communicate(), run.returncode) for run in runs]
    assert [code for _, _, code in results] == [0, 0], results
    assert beside(out) == ["gen"]
    reference = tmp_path / "reference"
    subprocess.run([*command[:-1], str(reference)], check=True, capture_output=True)
    assert digest(out) == digest(reference)


CHILD = """
import os, sys
import rulesdsl.targets.build as build
if os.environ.get("NO_EXCHANGE"):
    build._exchange = lambda first, second: False
real = build.write_output
def announced(*args, **kwargs):
    print("writing", flush=True)  # the test kills from here on, at a random moment
    return real(*args, **kwargs)
build.write_output = announced
from rulesdsl.tools.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_sigkill_at_random_moments_of_a_real_build(tmp_path: Path) -> None:
    """`kill -9` a real `rulesdsl build` at random moments of its write; builds alternate between two rulesets."""
    sources = {"old": tmp_path / "old" / "mini", "new": tmp_path / "new" / "mini"}
    for folder in sources.values():
        shutil.copytree(FIXTURES / "mini", folder)
    with open(sources["new"] / "city.rules", "a", encoding="utf-8") as handle:
        handle.write('trait "Killjoy" { type: character  cost: 1 }\n')
    trees = {}
    for name, folder in sources.items():
        command = [sys.executable, "-m", "rulesdsl", "build", str(folder), "--out", str(tmp_path / name / "gen")]
        subprocess.run(command, check=True, capture_output=True)
        trees[name] = digest(tmp_path / name / "gen")
    assert trees["old"] != trees["new"]
    out = tmp_path / "work" / "gen"
    shutil.copytree(tmp_path / "old" / "gen", out)  # an output to replace from the first kill on
    rng = random.Random(20261201)
    outcomes: Counter[str] = Counter()
    for kill in range(32):
        mode = "fallback" if kill % 2 else "exchange"
        wanted = "new" if kill % 4 < 2 else "old"
        env = {**os.environ, "NO_EXCHANGE": "1" if mode == "fallback" else ""}
        command = [sys.executable, "-c", CHILD, "build", str(sources[wanted]), "--out", str(out)]
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env) as child:
            assert child.stdout is not None
            assert child.stdout.readline() == "writing\n"
            time.sleep(rng.uniform(0, 0.008))  # about the length of its write: kills land before, in and after it
            child.kill()
            code = child.wait()
        outcomes["finished before the kill" if code == 0 else "killed"] += 1
        if not out.exists():
            assert mode == "fallback", f"kill {kill}: the exchange left no output"
            recover_output(out)
            outcomes["missing, put back"] += 1
        assert digest(out) in trees.values(), f"kill {kill} ({mode}): a mixed tree"
        outcomes["holds the tree being built" if digest(out) == trees[wanted] else "holds the tree before"] += 1
        outcomes["left something beside it"] += beside(out) != ["gen"]
    result = subprocess.run(
        [sys.executable, "-m", "rulesdsl", "build", str(sources["new"]), "--out", str(out)], capture_output=True
    )
    assert result.returncode == 0 and digest(out) == trees["new"] and beside(out) == ["gen"]
    print(f"\n32 SIGKILLs: {dict(outcomes)}")
    assert outcomes["killed"] > 0
