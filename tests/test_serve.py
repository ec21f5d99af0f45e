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
    assert "Humanoid Hit Location" in page and "__rulesdsl/events" in page  # the reload script, served only
    version = status(base)["version"]
    source = folder / "hit_location.rules"
    source.write_text(source.read_text().replace("Humanoid Hit Location", "Where Blows Land"))
    poll(lambda: "Where Blows Land" in get(base + "witcher/table.html"), "the edited name in the page")
    assert status(base)["version"] > version


def test_the_server_pushes_each_build_to_the_page(served: tuple[str, Path]) -> None:
    """The page's script listens to server-sent events: the status at once, then each build's outcome when it
    ends (a good build's new version, a failed build's errors), with nothing polling."""
    base, folder = served
    assert "/__rulesdsl/events" in get(base + "witcher/index.html")
    host, port = base.split("//")[1].rstrip("/").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=WAIT)
    connection.request("GET", "/__rulesdsl/events")
    response = connection.getresponse()
    assert response.getheader("Content-Type", "").startswith("text/event-stream")

    def event(until: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first pushed status that `until` accepts (a build that changed nothing pushes one too); the
        connection's timeout fails the test if none comes."""
        while True:  # skip keep-alive comments and the blank lines between events
            line = response.readline().decode("utf-8")
            assert line, "the stream ended"
            if line.startswith("data: "):
                found: dict[str, Any] = json.loads(line[len("data: ") :])
                if until(found):
                    return found

    first = event(lambda s: True)
    assert first["errors"] is None
    source = folder / "hit_location.rules"
    good = source.read_text()
    source.write_text(good.replace("Humanoid Hit Location", "Where Blows Land"))
    # a build may read the file while it is half-written (an empty file builds too): the pushes go on until one
    # brings the whole edit
    pushed = event(lambda s: s["version"] > first["version"] and "Where Blows Land" in get(base + "witcher/table.html"))
    assert pushed["errors"] is None
    source.write_text(good.replace("roll: 1d10", "roll: 1d10\n  rol: 2", 1))
    failed = event(lambda s: s["errors"] is not None)
    assert failed["version"] == pushed["version"] and any("[E210]" in e for e in failed["errors"])
    connection.close()


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
        assert "Before the Crash" in page and "__rulesdsl/events" in page
        save(source, good.replace("Humanoid Hit Location", "After the Crash"))
        poll(lambda: "After the Crash" in get(base + "witcher/table.html"), "a rebuild after the crash")
        assert status(base)["errors"] is None


def test_a_page_open_in_the_browser_reloads_itself_and_shows_a_failed_build(served: tuple[str, Path]) -> None:
    """In Chromium: the served page reloads when a save builds, and shows a failed build's errors over the last
    good page, with no console errors."""
    from .test_site_browser import ARGS, CHROMIUM

    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (scripts/test.sh installs Debian's chromium)")
    playwright_api = pytest.importorskip("playwright.sync_api")
    base, folder = served
    source = folder / "hit_location.rules"
    good = source.read_text()
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        tab = browser.new_page()
        errors: list[str] = []
        tab.on("pageerror", lambda exc: errors.append(str(exc)))
        tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        tab.goto(base + "witcher/table.html")
        tab.wait_for_load_state()
        source.write_text(good.replace("Humanoid Hit Location", "Where Blows Land"))
        tab.get_by_text("Where Blows Land").first.wait_for(timeout=WAIT * 1000)  # reloaded by itself
        source.write_text(good.replace("roll: 1d10", "roll: 1d10\n  rol: 2", 1))
        box = tab.locator("#rulesdsl-errors")
        box.wait_for(timeout=WAIT * 1000)
        assert "[E210]" in box.inner_text() and "Where Blows Land" in tab.content()
        source.write_text(good.replace("Humanoid Hit Location", "Where Blows Land"))
        box.wait_for(state="detached", timeout=WAIT * 1000)
        browser.close()
    assert errors == []


def test_the_builder_works_when_served(served: tuple[str, Path]) -> None:
    """builder.html over http:// as from file://: its rules load (a classic script), a table rolls, the
    address keeps the seed, and no console error."""
    from .test_site_browser import ARGS, CHROMIUM

    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (scripts/test.sh installs Debian's chromium)")
    playwright_api = pytest.importorskip("playwright.sync_api")
    base, _ = served
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        tab = browser.new_page()
        errors: list[str] = []
        tab.on("pageerror", lambda exc: errors.append(str(exc)))
        tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        tab.goto(base + "witcher/builder.html?seed=2")
        tab.locator("#b-roll-table").click()
        rolled = tab.locator("#b-rolled li").all_inner_texts()
        assert rolled and "rolled" in rolled[0]
        assert tab.locator("#b-problem").is_hidden()
        assert tab.url.endswith("builder.html?seed=2")
        browser.close()
    assert errors == []
