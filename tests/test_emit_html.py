"""Stage 5b: the HTML reference: escaped, cross-linked, tables with chances, searchable from file://."""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from rulesdsl.build import render_all
from rulesdsl.pipeline import compile_paths

from .conftest import FIXTURES, golden_folder

GOLDEN = Path(__file__).resolve().parent / "golden" / "site"


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.scripts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(values["id"] or "")
        if tag == "a" and values.get("href"):
            self.links.append(values["href"] or "")
        if tag in ("script", "link") and (values.get("src") or values.get("href")):
            self.scripts.append(values.get("src") or values.get("href") or "")


@pytest.fixture(scope="module")
def site() -> dict[str, str]:
    files = render_all(compile_paths([FIXTURES / "mini"]).rulesets)
    return {name.removeprefix("site/"): text for name, text in files.items() if name.startswith("site/")}


def parse(text: str) -> _Collector:
    collector = _Collector()
    collector.feed(text)
    return collector


def test_site_matches_golden(site: dict[str, str]) -> None:
    assert site == golden_folder(GOLDEN, site)


def test_every_link_and_anchor_resolves(site: dict[str, str]) -> None:
    pages = {name: parse(text) for name, text in site.items() if name.endswith(".html")}
    checked = 0
    for name, page in pages.items():
        base = Path(name).parent
        for href in page.links + page.scripts:
            assert not re.match(r"^[a-z]+://", href), f"{name} links to the network: {href}"
            target, _, anchor = href.partition("#")
            target_name = os.path.normpath(base / target).replace(os.sep, "/") if target else name
            assert target_name in site, f"{name}: broken link {href}"
            if anchor:
                assert anchor in pages[target_name].ids, f"{name}: no anchor #{anchor} in {target_name}"
            checked += 1
    assert checked > 50


def test_every_entity_has_an_anchor_on_its_kind_page(site: dict[str, str]) -> None:
    documents = compile_paths([FIXTURES / "mini"]).rulesets[0].documents()
    for kind, docs in documents.items():
        ids = parse(site[f"mini/{kind}.html"]).ids
        assert set(docs) <= ids


def test_source_text_is_escaped(site: dict[str, str]) -> None:
    everything = "".join(site.values())
    assert "<script>alert(1)</script>" not in everything
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in site["mini/lifepath.html"]
    assert "Mystic &lt;b&gt;Fire&lt;/b&gt;" in site["mini/spell.html"]
    index = site["search-index.js"]
    assert "</script" not in index


def test_references_are_links_and_requirements_read_as_text(site: dict[str, str]) -> None:
    lifepaths = site["mini/lifepath.html"]
    assert '<a href="lifepath.html#farmer">Farmer</a> and not 2 <a href="setting.html#city">' in lifepaths
    assert '<a href="skill.html#farming">Farming</a>' in lifepaths
    assert "position 2-3 and age at entry &lt; 30" in lifepaths


def test_tables_render_with_each_rows_chance(site: dict[str, str]) -> None:
    tables = site["mini/table.html"]
    assert "<th>2d6</th><th>Chance</th><th>sky</th>" in tables
    # 2d6: 2-6 is 15/36, 7 is 6/36, 8-11 is 14/36, 12 is 1/36
    for chance in ("41.7%", "16.7%", "38.9%", "2.8%"):
        assert f"<td>{chance}</td>" in tables


def test_formulas_render_readably(site: dict[str, str]) -> None:
    assert (
        'floor((<a href="attribute.html#might">MGT</a> + <a href="attribute.html#wit">WIT</a>) / 2)'
        in site["mini/attribute.html"]
    )


def test_uncertain_readings_are_shown(site: dict[str, str]) -> None:
    assert "Uncertain:</strong> years hard to read" in site["mini/lifepath.html"]


def test_search_index_is_a_script_not_fetched_json(site: dict[str, str]) -> None:
    index = site["search-index.js"]
    assert index.startswith("window.SEARCH_INDEX = ")
    entries = json.loads(index.removeprefix("window.SEARCH_INDEX = ").rstrip(";\n"))
    assert {"n": "Farmer", "k": "lifepath", "r": "mini", "u": "mini/lifepath.html#farmer"} in entries
    assert "fetch(" not in site["assets/search.js"]
