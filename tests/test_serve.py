"""`rulesdsl serve`: edit a file and the served page changes; a broken build shows in the page and keeps
the last good site; a source folder that disappears and comes back is picked up again."""

from __future__ import annotations

import contextlib
import http.client
import json
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import ROOT

WAIT = 60.0  # generous on a noisy machine: the tests poll, they never sleep for a fixed time


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode("utf-8"))


def poll(check: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + WAIT
    while True:
        try:
            found = check()
        except OSError:
            found = None
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {WAIT} s: {what}")
        time.sleep(0.05)


@contextlib.contextmanager
def serving(tmp_path: Path, before: str = "") -> Iterator[tuple[str, Path]]:
    """`rulesdsl serve` on a copy of the Witcher excerpt, with `before` run first in its process."""
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules" / "witcher", rules / "witcher")
    start = f"import sys\n{before}\nfrom rulesdsl.tools.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    process = subprocess.Popen(
        [sys.executable, "-c", start, "serve", str(rules), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=tmp_path,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert "serving the reference at http://127.0.0.1:" in line, line
        yield line.split(" at ")[1].split()[0], rules / "witcher"
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    with serving(tmp_path) as found:
        yield found


def status(base: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(get(base + "__rulesdsl/status"))
    return result


def test_an_edit_shows_in_the_served_page(served: tuple[str, Path]) -> None:
    base, folder = served
    page = get(base + "witcher/table.html")
    assert "Humanoid Hit Location" in page and "__rulesdsl/status" in page  # the reload script, served only
    version = status(base)["version"]
    source = folder / "hit_location.rules"
    source.write_text(source.read_text().replace("Humanoid Hit Location", "Where Blows Land"))
    poll(lambda: "Where Blows Land" in get(base + "witcher/table.html"), "the edited name in the page")
    assert status(base)["version"] > version


def test_a_broken_build_shows_in_the_page_and_keeps_the_last_good_site(served: tuple[str, Path]) -> None:
    base, folder = served
    source = folder / "hit_location.rules"
    good = source.read_text()
    source.write_text(good.replace("roll: 1d10", "roll: 1d10\n  rol: 2", 1))
    errors = poll(lambda: status(base)["errors"], "the build's errors")
    assert any("hit_location.rules:" in e and "[E210]" in e for e in errors), errors
    assert "Humanoid Hit Location" in get(base + "witcher/table.html")  # the last good build
    source.write_text(good)
    poll(lambda: status(base)["errors"] is None, "the errors to clear")


def test_a_source_folder_that_disappears_and_comes_back(served: tuple[str, Path], tmp_path: Path) -> None:
    base, folder = served
    aside = tmp_path / "aside"
    shutil.move(folder.parent, aside)
    poll(lambda: status(base)["errors"], "a missing folder reported")
    assert "Humanoid Hit Location" in get(base + "witcher/table.html")
    version = status(base)["version"]
    shutil.move(aside, folder.parent)
    (folder / "hit_location.rules").write_text(
        (folder / "hit_location.rules").read_text().replace("Humanoid Hit Location", "Back Again")
    )
    poll(lambda: "Back Again" in get(base + "witcher/table.html"), "the folder picked up again")
    assert status(base)["version"] > version and status(base)["errors"] is None


def fetch(base: str, path: str, host: str) -> tuple[int, str]:
    """A GET of `path` whose Host header is `host` (what a page elsewhere sends after DNS rebinding)."""
    port = int(base.rstrip("/").rsplit(":", 1)[1])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest("GET", path, skip_host=True)
        connection.putheader("Host", host)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8")
    finally:
        connection.close()


def test_only_requests_for_this_machine_are_answered(served: tuple[str, Path]) -> None:
    base, _ = served
    port = base.rstrip("/").rsplit(":", 1)[1]
    for host in ("127.0.0.1", f"127.0.0.1:{port}", "localhost", f"LocalHost:{port}", "[::1]", f"[::1]:{port}"):
        found, page = fetch(base, "/witcher/table.html", host)
        assert found == 200 and "Humanoid Hit Location" in page, host
    for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", "localhost.", "", "[::1]:x"):
        for path in ("/witcher/table.html", "/__rulesdsl/status", "/"):
            found, body = fetch(base, path, host)
            assert found == 403 and "Hit Location" not in body and "version" not in body, (host, path)
            assert len(body) < 200


# the compiler, made to crash on a file that says so (as a bug of the compiler's would, on some input)
CRASHING = """
import rulesdsl.compile.pipeline
real = rulesdsl.compile.pipeline.compile_paths
def compile_paths(paths, *args, **kwargs):
    if any("CRASH" in f.read_text() for p in paths for f in p.rglob("*.rules")):
        raise ZeroDivisionError("an injected bug")
    return real(paths, *args, **kwargs)
rulesdsl.compile.pipeline.compile_paths = compile_paths
"""


def save(path: Path, text: str) -> None:
    """As an editor saves: in one step, so that no build sees the file empty."""
    (path.parent / "saving.tmp").write_text(text)
    (path.parent / "saving.tmp").replace(path)


def test_a_crash_of_the_compiler_shows_in_the_page_and_the_next_save_recovers(tmp_path: Path) -> None:
    """The rebuild thread died with the crash: the page kept the old build and said nothing, for ever."""
    with serving(tmp_path, CRASHING) as (base, folder):
        source = folder / "hit_location.rules"
        good = source.read_text()
        # a build that reads the file as it changes may not crash: the crash comes after this one is served
        save(source, good.replace("Humanoid Hit Location", "Before the Crash"))
        poll(lambda: "Before the Crash" in get(base + "witcher/table.html"), "a first rebuild")
        save(source, good.replace("Humanoid Hit Location", "CRASH"))
        errors = poll(lambda: status(base)["errors"], "the crash reported")
        assert any("ZeroDivisionError" in e and "an injected bug" in e for e in errors), errors
        page = get(base + "witcher/table.html")  # the last good build, with the script that shows the errors
        assert "Before the Crash" in page and "__rulesdsl/status" in page
        save(source, good.replace("Humanoid Hit Location", "After the Crash"))
        poll(lambda: "After the Crash" in get(base + "witcher/table.html"), "a rebuild after the crash")
        assert status(base)["errors"] is None
