"""`rulesdsl serve`: edit a file and the served page changes; a broken build shows in the page and keeps
the last good site; a source folder that disappears and comes back is picked up again."""

from __future__ import annotations

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


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules" / "witcher", rules / "witcher")
    process = subprocess.Popen(
        [sys.executable, "-m", "rulesdsl", "serve", str(rules), "--port", "0"],
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
