"""The reference in a real browser (Debian's Chromium, headless) from file:// with no network."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rulesdsl.build import render_all, write_output
from rulesdsl.pipeline import compile_paths

from .conftest import FIXTURES

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
playwright_api = pytest.importorskip("playwright.sync_api")

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (scripts/test.sh installs Debian's chromium)"
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "gen"
    write_output(out, render_all(compile_paths([FIXTURES / "mini"]).rulesets))
    return out / "site"


def test_search_and_follow_a_link_from_file_url(site: Path) -> None:
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
                "--disable-sync",
            ],
        )
        page = browser.new_page()
        errors: list[str] = []
        requests: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.on("request", lambda req: requests.append(req.url))
        page.goto((site / "index.html").as_uri())
        assert page.title() == "Rules reference"
        page.fill("#search", "épée")  # accents folded: matches "Épée Master"
        results = page.locator("#search-results a")
        results.first.wait_for()
        assert results.first.inner_text() == "Épée Master"
        page.fill("#search", "farm")
        assert page.locator("#search-results a").all_inner_texts()[:2] == ["Farmer", "Farming"]
        page.locator("#search-results a").first.click()
        page.wait_for_url("**/mini/lifepath.html#farmer")
        assert page.locator("section#farmer h3").inner_text() == "Farmer"
        page.locator("section#farmer a", has_text="Farming").first.click()
        page.wait_for_url("**/mini/skill.html#farming")
        page.goto((site / "mini" / "lifepath.html").as_uri())
        page.fill("#filter", "rustic")  # the Farmer is tagged rustic; the Épée Master requires such a lifepath
        assert page.locator("section.entity:visible h3").all_inner_texts() == ["Épée Master", "Farmer"]
        assert page.locator("#filter-count").inner_text() == "2 of 4"
        page.fill("#filter", "rustic stubborn")  # every word must match
        assert page.locator("section.entity:visible h3").all_inner_texts() == ["Épée Master", "Farmer"]
        page.fill("#filter", "tags rustic")
        assert page.locator("section.entity:visible h3").all_inner_texts() == ["Farmer"]
        assert page.locator("h2.group:visible").all_inner_texts() == ["Village"]
        assert page.locator("ol.toc li:visible").all_inner_texts() == ["Farmer"]
        page.fill("#filter", "")
        assert page.locator("section.entity:visible").count() == 4
        browser.close()
    assert errors == []
    assert all(url.startswith("file://") for url in requests), requests
