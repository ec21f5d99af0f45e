"""The reference as a person uses it, in a real browser (Debian's Chromium, headless), from file:// with no
network: search by keyboard, follow links, open graphs, roll tables, read grids, on a phone and on paper."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rulesdsl.compile import ir
from rulesdsl.compile.pipeline import CompiledRuleset, compile_paths
from rulesdsl.targets.build import render_all, write_output

from .conftest import FIXTURES, ROOT, write_ruleset

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
playwright_api = pytest.importorskip("playwright.sync_api")

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (scripts/test.sh installs Debian's chromium)"
)
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def _build(out: Path, source: Path) -> tuple[Path, tuple[CompiledRuleset, ...]]:
    rulesets = compile_paths([source]).rulesets
    write_output(out, render_all(rulesets))
    return out / "site", rulesets


@pytest.fixture(scope="module")
def mini_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build(tmp_path_factory.mktemp("mini") / "gen", FIXTURES / "mini")[0]


@pytest.fixture(scope="module")
def rules_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple[CompiledRuleset, ...]]:
    return _build(tmp_path_factory.mktemp("rules") / "gen", ROOT / "rules")


@pytest.fixture(scope="module")
def rules_site(rules_build: tuple[Path, tuple[CompiledRuleset, ...]]) -> Path:
    return rules_build[0]


@pytest.fixture(scope="module")
def examples_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build(tmp_path_factory.mktemp("examples") / "gen", ROOT / "tests" / "examples")[0]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A tab that fails the test on any console error, uncaught exception or request off file://."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    tab.on("request", lambda req: None if req.url.startswith("file://") else errors.append(req.url))
    yield tab
    context.close()
    assert errors == []


def url(site: Path, name: str) -> str:
    target, _, anchor = name.partition("#")
    return (site / target).as_uri() + (f"#{anchor}" if anchor else "")


def page_with(site: Path, element_id: str) -> str:
    """The page of the site that holds an element with this id (big kinds are split into pages)."""
    for path in sorted(site.rglob("*.html")):
        if f'id="{element_id}"' in path.read_text(encoding="utf-8"):
            return path.relative_to(site).as_posix()
    raise AssertionError(f"no page has #{element_id}")


# ---------------------------------------------------------------- search


def test_a_misspelled_lifepath_is_reached_by_keyboard(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "index.html"))
    page.keyboard.press("/")  # the shortcut to the search box
    box = page.locator("#rd-search")
    assert page.evaluate("document.activeElement.id") == "rd-search"
    box.press_sequentially("cort sorcerrer")  # two typos
    page.locator("#rd-results [role=option]").first.wait_for()
    assert box.get_attribute("aria-expanded") == "true"
    first = page.locator("#rd-results [role=option]").first
    assert first.locator(".r-name").inner_text() == "Court Sorcerer"
    assert "Noble Court Subsetting" in first.locator(".r-where").inner_text()
    assert re.search(r"[?&]q=cort(\+|%20)sorcerrer", page.url), page.url  # the query lives in the URL
    box.press("ArrowDown")
    assert box.get_attribute("aria-activedescendant") == "rd-option-0"
    assert first.get_attribute("aria-selected") == "true"
    box.press("Enter")
    page.wait_for_url("**/burning_wheel/setting.court.html#court_sorcerer")
    target = page.locator(":target")
    assert target.get_attribute("id") == "court_sorcerer"
    assert target.locator("h3").inner_text().startswith("Court Sorcerer")
    assert target.is_visible()


def test_escape_closes_the_results_and_the_url_reopens_them(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "index.html") + "?q=hit%20location")
    options = page.locator("#rd-results [role=option] .r-name")
    options.first.wait_for()
    assert options.all_inner_texts()[:2] == ["Monster Hit Location", "Humanoid Hit Location"]
    page.locator("#rd-search").press("Escape")
    assert page.locator("#rd-results").is_hidden()
    assert page.locator("#rd-search").input_value() == "hit location"
    page.locator("#rd-search").press("Escape")  # a second Escape clears
    assert page.locator("#rd-search").input_value() == ""
    assert "q=" not in page.url


def test_searching_sorcery_finds_the_lifepaths_that_teach_it(
    page: Any, rules_build: tuple[Path, tuple[CompiledRuleset, ...]]
) -> None:
    site, rulesets = rules_build
    burning = next(r for r in rulesets if r.id == "burning_wheel")
    teaching = {  # the lifepaths that teach Sorcery or require it
        e.name
        for e in burning.entities["lifepath"].values()
        if any(r.target == "sorcery" for value in e.fields.values() for r in ir.refs_in(value))
    }
    assert len(teaching) >= 5
    page.goto(url(site, "search.html") + "?q=sorcery")
    results = page.locator("#rd-page-results .r-name")
    results.first.wait_for()
    names = results.all_inner_texts()
    assert names[0] == "Sorcery"  # the name itself first
    assert teaching <= {n.split(" (")[0] for n in names}
    assert "results" in page.locator("#rd-page-status").inner_text()


def test_a_word_only_in_a_traits_description_finds_it_and_says_so(page: Any, rules_site: Path) -> None:
    """Issue 23: descriptions are searchable, and a result says it matched the description."""
    page.goto(url(rules_site, "index.html"))
    page.locator("#rd-search").fill("argument runs")  # both words only in Stubborn's description
    rows = page.locator("#rd-results [role=option]")
    rows.first.wait_for()
    stubborn = rows.filter(has=page.locator(".r-name", has_text=re.compile(r"^Stubborn$")))
    assert stubborn.count() >= 1
    assert stubborn.first.locator(".r-described").inner_text() == "in the description"
    # the same on the search page, where a match in a name or another field ranks above the description
    page.goto(url(rules_site, "search.html") + "?q=sorcery")
    results = page.locator("#rd-page-results li")
    results.first.wait_for()
    assert results.first.locator(".r-name").inner_text() == "Sorcery"
    assert results.first.locator(".r-described").count() == 0
    described = [row.locator(".r-described").count() == 1 for row in results.all()]
    assert any(described) and not all(described)
    for group in page.locator("#rd-page-results section").all():  # results are grouped by kind
        described = [row.locator(".r-described").count() == 1 for row in group.locator("li").all()]
        assert described == sorted(described)  # in each, every match in the description comes after the others


# ---------------------------------------------------------------- links, previews, graphs


def test_a_skills_backlink_leads_to_the_lifepath(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, page_with(rules_site, "sorcery") + "#sorcery"))
    skill = page.locator("#sorcery")
    line = skill.locator("dl.backlinks div", has_text="Lifepaths with it in skills")
    assert line.is_visible()
    line.locator("a", has_text="Court Sorcerer").click()
    page.wait_for_url("**/setting.court.html#court_sorcerer")
    assert page.locator(":target h3").inner_text().startswith("Court Sorcerer")


def test_hovering_a_link_previews_its_entry(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "burning_wheel/setting.court.html#court_sorcerer"))
    link = page.locator("#court_sorcerer a", has_text="Alchemy").first
    link.hover()
    preview = page.locator("#rd-preview")
    preview.wait_for(state="visible")
    assert preview.locator(".pv-name").inner_text().startswith("Alchemy")
    assert "Skills" in preview.locator(".pv-kind").inner_text()
    page.mouse.move(5, 5)
    preview.wait_for(state="hidden")


def test_a_malformed_fragment_is_no_error(page: Any, rules_site: Path) -> None:
    """`#%E0%A4%A` is not valid percent-encoding: decodeURIComponent threw "URI malformed" at the link."""
    page.goto(url(rules_site, "burning_wheel/setting.court.html#%E0%A4%A"))
    page.evaluate(
        """() => {
        const link = document.querySelector("#court_sorcerer a[href*='#']");
        link.setAttribute("href", link.getAttribute("href").split("#")[0] + "#%E0%A4%A");
        link.id = "malformed";
    }"""
    )
    page.locator("#malformed").focus()  # a focused link is previewed at once
    page.locator("#court_sorcerer a", has_text="Alchemy").first.focus()
    preview = page.locator("#rd-preview")
    preview.wait_for(state="visible")  # the script still runs; the page fixture fails on any error
    assert preview.locator(".pv-name").inner_text().startswith("Alchemy")


def test_a_node_of_the_leads_graph_opens_its_setting(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "burning_wheel/stock.human.html"))
    graph = page.locator("section.leads svg.graph")
    assert graph.is_visible()
    assert graph.locator("a.node").count() == 10
    graph.locator("a.node", has_text="City Dweller Setting").click()
    page.wait_for_url("**/burning_wheel/setting.city.html")
    assert page.locator("h1").inner_text() == "City Dweller Setting"


def test_a_lifepaths_graph_shows_where_it_comes_from_and_leads(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "burning_wheel/setting.court.html#court_sorcerer"))
    details = page.locator("#court_sorcerer details.graph")
    details.locator("summary").click()
    svg = details.locator("svg.graph")
    svg.wait_for()
    assert svg.locator("a.node.self text").text_content() == "Court Sorcerer"
    targets = svg.locator("a.node.to text").all_text_contents()
    assert targets == ["Noble Court Subsetting", "Outcast Subsetting (Men)", "City Dweller Setting"]
    assert svg.locator("a.node.from").count() >= 2
    required = svg.locator("a.node.required text").all_text_contents()
    assert required == ["Arcane Devotee", "Rogue Wizard", "Sorcerer"]
    svg.locator("a.node.to", has_text="City Dweller Setting").click()
    page.wait_for_url("**/burning_wheel/setting.city.html")


# ---------------------------------------------------------------- tables


def test_rolling_a_table_picks_a_row_and_a_seed_repeats_it(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, page_with(rules_site, "humanoid_hit_location") + "#humanoid_hit_location"))
    table = page.locator("#humanoid_hit_location")
    table.locator(".roll-seed").fill("table night")
    table.locator("button.roll-button").click()
    shown = table.locator("output.roll-result").inner_text()
    match = re.match(r"Rolled (\d+): (.+)", shown)
    assert match, shown
    rolled = int(match.group(1))
    hit = table.locator("tr.rolled")
    assert hit.count() == 1
    low, high = json.loads(hit.get_attribute("data-k") or "")[0]
    assert low <= rolled <= high
    assert hit.locator("td").nth(2).inner_text() in match.group(2)
    page.reload()
    table.locator(".roll-seed").fill("table night")
    table.locator("button.roll-button").click()
    assert table.locator("output.roll-result").inner_text() == shown  # the same seed, the same roll
    for _ in range(20):  # without a seed every roll lands on some row
        table.locator(".roll-seed").fill("")
        table.locator("button.roll-button").click()
        assert table.locator("tr.rolled").count() == 1


def test_a_table_rolled_on_two_dice_lights_up_its_cell(page: Any, examples_site: Path) -> None:
    page.goto(url(examples_site, "streetlife/table.html#events"))
    table = page.locator("#events")
    assert table.locator("table.grid th.axes").inner_text() == "Kind \u2572 Detail"
    table.locator(".roll-seed").fill("1")
    for _ in range(10):
        table.locator("button.roll-button").click()
        shown = table.locator("output.roll-result").inner_text()
        match = re.match(r"Rolled (\d+), (\d+)", shown)
        assert match, shown
        cell = table.locator("td.rolled")
        assert cell.count() == 1
        assert cell.inner_text() in shown
        first, second = json.loads(cell.get_attribute("data-k") or "")
        kind, detail = int(match.group(1)), int(match.group(2))
        assert first[0] <= kind <= first[1]
        assert second == ("odd" if detail % 2 else "even") or second[0] <= detail <= second[1]


def test_a_two_key_table_reads_as_a_grid(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "riddle_of_steel/table.html#damage_table"))
    grid = page.locator("#damage_table table.grid")
    assert grid.is_visible()
    assert grid.locator("th.axes").inner_text() == "Zone ╲ Level"
    assert grid.locator("thead th").all_inner_texts()[1:] == ["1", "2", "3", "4", "5"]
    row = grid.locator("tr", has=page.locator("th[scope=row]", has_text=re.compile(r"^III(\s|$)")))  # its # link after
    cells = row.locator("td")
    assert "bleeding" in cells.nth(1).inner_text()
    assert cells.nth(0).get_attribute("class") == "unknown"

    def background(index: int) -> str:
        return str(cells.nth(index).evaluate("c => getComputedStyle(c).backgroundColor"))

    assert background(0) != background(1)  # unknown cells are greyed


def test_pool_odds_show_one_pool_size_at_a_time(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "riddle_of_steel/mechanic.html"))
    assert page.locator(".pool:visible").count() == 1
    page.locator("select.pool-select").select_option("3")
    visible = page.locator(".pool:visible")
    assert visible.get_attribute("data-dice") == "3"
    exact, at_least = visible.locator("table").nth(0), visible.locator("table").nth(1)
    assert exact.locator("thead th").all_inner_texts() == ["Target", "0", "1", "2", "3"]
    assert at_least.locator("thead th").all_inner_texts() == ["Target", "1+", "2+", "3+"]  # beside the exact counts


def test_a_table_rows_permalink_opens_the_page_at_that_row(page: Any, rules_site: Path) -> None:
    name = page_with(rules_site, "humanoid_hit_location--5")
    page.goto(url(rules_site, name))
    row = page.locator("#humanoid_hit_location--5")
    link = row.locator("a.row-link")
    assert link.get_attribute("aria-label") == "Link to the row 5"
    box = link.bounding_box()
    assert box is not None and box["height"] >= 24 and box["width"] >= 24  # a target a finger can take
    link.click()
    assert page.url.endswith(f"{name}#humanoid_hit_location--5")
    assert page.evaluate("() => document.querySelector(':target').id") == "humanoid_hit_location--5"
    assert row.evaluate("r => getComputedStyle(r.cells[0]).outlineStyle") == "solid"  # the row linked to is marked
    page.goto("about:blank")
    page.goto(url(rules_site, f"{name}#humanoid_hit_location--5"))  # the link, shared, opens at the row
    top = row.evaluate("r => r.getBoundingClientRect().top")
    assert 0 <= top < 900


# ---------------------------------------------------------------- for people: phones, filters, paper


def _pages(site: Path) -> list[str]:
    return [p.relative_to(site).as_posix() for p in sorted(site.rglob("*.html"))]


def test_no_page_scrolls_sideways_on_a_phone(browser: Any, mini_site: Path, rules_site: Path) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    wide = []
    for site in (mini_site, rules_site):
        for name in _pages(site):
            tab.goto(url(site, name))
            width = tab.evaluate("document.documentElement.scrollWidth")
            if width > 390:
                wide.append((name, width))
    context.close()
    assert wide == []
    assert errors == []


# A stat block with records wider than a phone: eight columns of long words, and a map of many entries.
STRIKE = (
    "record { name: text  to_hit: int  damage: dice  type: ref damage_type  reach: int = 1  traits: text?  "
    "notes: text?  range_increment: int? }"
)
LONG_STRIKE = (
    '{ name: "Dogslicer of the Extraordinarily Long Name"  to_hit: 8  damage: 2d6 + 4  type: slashing  '
    'traits: "agile, backstabber, finesse, versatile piercing, deadly d10"  '
    'notes: "an_extraordinarily_long_unbroken_word_that_must_wrap_somewhere"  range_increment: 60 }'
)
WIDE_RECORDS = f"""
kind damage_type "Damage type" {{ }}
damage_type slashing "Slashing" {{ }}
kind creature "Creature" {{
  speeds: map of int
  strikes: list of {STRIKE}
}}
creature goblin "Goblin Warrior" {{
  speeds: land 25, climb 10, swim 15, burrow 5, fly 40, teleportation_across_the_plane 100
  strikes: {LONG_STRIKE},
    {{ name: "Shortbow"  to_hit: 8  damage: 1d6  type: slashing }}
}}
"""


def test_records_and_maps_fit_a_phone(browser: Any, tmp_path: Path) -> None:
    """A record's fields stack, each labelled, and a map's entries wrap: nothing scrolls sideways."""
    write_ruleset(tmp_path / "rules" / "demo", {"creatures.rules": WIDE_RECORDS})
    site, _ = _build(tmp_path / "gen", tmp_path / "rules")
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    tab = context.new_page()
    wide = []
    for name in _pages(site):
        tab.goto(url(site, name))
        if tab.evaluate("document.documentElement.scrollWidth") > 390:
            wide.append(name)
    tab.goto(url(site, "demo/creature.html"))
    labels = tab.locator("table.record td").evaluate_all(
        "cells => cells.filter(c => c.offsetParent !== null).map(c => getComputedStyle(c, '::before').content)"
    )
    widest = tab.locator("table.record, ul.map").evaluate_all("els => Math.max(...els.map(e => e.scrollWidth))")
    context.close()
    assert wide == []
    assert '"To hit: "' in labels and '"Notes: "' in labels, labels
    assert widest <= 390


def test_tap_targets_are_at_least_24_pixels(page: Any, rules_site: Path) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(url(rules_site, "burning_wheel/setting.noble.html"))
    small = page.evaluate(
        """() => [...document.querySelectorAll('nav a, summary, button, input, .names a')]
             .filter(e => e.offsetParent !== null)
             .map(e => [e.textContent.trim(), e.getBoundingClientRect().height])
             .filter(([, h]) => h < 24)"""
    )
    assert small == []


def test_skip_link_and_labelled_navigation(page: Any, mini_site: Path) -> None:
    page.goto(url(mini_site, "mini/setting.village.html"))
    page.keyboard.press("Tab")
    skip = page.locator("a.skip")
    assert page.evaluate("document.activeElement.className") == "skip"
    assert skip.is_visible()
    skip.press("Enter")
    assert page.evaluate("document.activeElement.id") == "rd-main"
    labels = page.locator("nav").evaluate_all("navs => navs.map(n => n.getAttribute('aria-label'))")
    assert all(labels) and len(labels) >= 2


def test_filter_narrows_a_settings_lifepaths(page: Any, mini_site: Path) -> None:
    page.goto(url(mini_site, "mini/setting.village.html"))
    page.fill(".filter-input", "rustic")  # the Farmer is tagged rustic
    assert page.locator("tbody.entity:visible h3").all_inner_texts() == ["Farmer"]
    assert page.locator(".filter-count").inner_text() == "1 of 3"
    page.fill(".filter-input", "")
    assert page.locator("tbody.entity:visible").count() == 3


def test_escaped_names_show_as_written(page: Any, mini_site: Path) -> None:
    page.goto(url(mini_site, "mini/setting.village.html#triple"))
    assert page.locator("#triple h3").inner_text() == 'Say """hi""" {{ x }} {% raw %}'
    page.fill("#rd-search", "épée")  # accents folded: matches "Épée Master"
    first = page.locator("#rd-results [role=option] .r-name").first
    first.wait_for()
    assert first.inner_text() == "Épée Master"


def test_dark_mode_follows_the_system(browser: Any, mini_site: Path) -> None:
    context = browser.new_context(color_scheme="dark")
    tab = context.new_page()
    tab.goto(url(mini_site, "index.html"))
    background = tab.evaluate("getComputedStyle(document.body).backgroundColor")
    context.close()
    channels = [int(c) for c in re.findall(r"\d+", background)[:3]]
    assert max(channels) < 60, background


def test_a_setting_prints_compactly(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "burning_wheel/setting.noble.html"))
    page.emulate_media(media="print")
    assert page.locator("header.site").is_hidden()
    assert page.locator("form.facets").count() == 1 and page.locator("form.facets").is_hidden()
    pdf = page.pdf(format="A4")
    pages = len(re.findall(rb"/Type\s*/Page[^s]", pdf))
    assert 1 <= pages <= 6, pages  # 18 lifepaths; the whole lifepath list once took 146 pages


def test_tapping_a_link_on_a_phone_previews_it_first(browser: Any, rules_site: Path) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    tab = context.new_page()
    tab.goto(url(rules_site, "burning_wheel/setting.court.html#court_sorcerer"))
    before = tab.url
    tab.locator("#court_sorcerer a", has_text="Alchemy").first.tap()
    preview = tab.locator("#rd-preview")
    preview.wait_for(state="visible")
    assert tab.url == before  # the first tap only previews
    assert preview.locator(".pv-name").inner_text().startswith("Alchemy")
    preview.locator("a.pv-open").tap()
    tab.wait_for_url("**/burning_wheel/skill.*.html#alchemy")
    context.close()


# ---------------------------------------------------------------- lists: facets and sorting


def _shown(page: Any) -> list[str]:
    return page.locator("tbody.entity:visible h2 a.anchor").all_inner_texts()


def test_spells_at_an_obstacle_are_counted_and_the_view_lives_in_the_url(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "burning_wheel/spell.html"))
    obstacle = page.locator("form.facets select[name=obstacle]")
    assert obstacle.locator("option[value='3']").inner_text() == "3 (11)"  # counted before anything is chosen
    assert obstacle.locator("option[value='3^']").inner_text() == "3^ (14)"
    obstacle.select_option("3")
    assert len(_shown(page)) == 11
    assert page.locator("form.facets .filter-count").inner_text() == "11 of 77"
    assert "obstacle=3" in page.url
    element = page.locator("form.facets select[name=element]")
    assert element.locator("option[value='fire']").inner_text() == "fire (2)"  # Flame Finger, Pyrotechnics
    obstacle.select_option("")
    assert element.locator("option[value='fire']").inner_text() == "fire (7)"
    element.select_option("fire")
    fire = _shown(page)
    assert len(fire) == 7 and "Bilious Smoke" in fire
    shared = page.url
    other = page.context.new_page()
    other.goto(shared)  # the same view, from the URL alone
    assert other.locator("form.facets select[name=element]").input_value() == "fire"
    assert other.locator("tbody.entity:visible h2 a.anchor").all_inner_texts() == fire
    other.close()
    page.locator("form.facets button[type=reset]").click()
    page.wait_for_function("document.querySelectorAll('tbody.entity[hidden]').length === 0")
    assert "element=" not in page.url


def test_a_column_sorts_by_its_numbers_both_ways(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "burning_wheel/spell.html"))
    header = page.locator("table.entities th[data-field=obstacle]")
    assert header.get_attribute("aria-sort") is None
    header.locator("button").click()
    assert header.get_attribute("aria-sort") == "ascending"
    assert re.search(r"[?&]sort=obstacle(&|$)", page.url), page.url
    cells = page.locator("tbody.entity td[data-label=Obstacle]").all_inner_texts()
    numbers = [c for c in cells if re.fullmatch(r"\d\^?", c)]
    assert numbers == sorted(numbers, key=lambda c: (int(c[0]), c.endswith("^")))  # 3 before 3^ before 4
    assert cells[: len(numbers)] == numbers  # obstacles that are not numbers come last
    header.locator("button").click()
    assert header.get_attribute("aria-sort") == "descending"
    cells = page.locator("tbody.entity td[data-label=Obstacle]").all_inner_texts()
    assert cells[0] == "6^" and "sort=-obstacle" in page.url
    page.goto(url(rules_site, "burning_wheel/spell.html") + "?sort=-name")
    names = _shown(page)
    assert names == sorted(names, key=str.casefold, reverse=True)
    assert page.locator("th[data-field=name]").get_attribute("aria-sort") == "descending"
    order = page.locator("form.facets select:not([name])")  # the same choice where the headers are out of sight
    assert order.input_value() == "-name"
    order.select_option("resources")
    assert page.locator("th[data-field=resources]").get_attribute("aria-sort") == "ascending"
    assert "sort=resources" in page.url
    page.locator("form.facets button[type=reset]").click()  # show all: as listed again
    page.wait_for_function("!location.search.includes('sort=')")
    assert _shown(page) == sorted(names, key=str.casefold)


def test_a_settings_lifepaths_filter_by_where_they_lead(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "burning_wheel/setting.peasant.html") + "?leads=outcast")
    shown = page.locator("tbody.entity:visible")
    assert shown.count() >= 1
    for row in shown.all():
        assert "Outcast" in row.locator("td[data-label=Leads]").inner_text()
    total = page.locator("tbody.entity").count()
    assert page.locator("form.facets .filter-count").inner_text() == f"{shown.count()} of {total}"


def test_a_homebrew_kind_gets_facets_and_bad_parameters_a_note(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "fenmark/fen_beast.html") + "?habitat=mud&colour=green&danger=9")
    assert _shown(page) == ["Mire Hound"]
    note = page.locator("form.facets .facet-note")
    assert note.is_visible()
    assert "colour" in note.inner_text() and "“9”" in note.inner_text()
    assert page.locator("form.facets select[name=danger]").input_value() == ""


def test_without_javascript_a_list_shows_whole_and_no_controls(browser: Any, rules_site: Path) -> None:
    context = browser.new_context(java_script_enabled=False)
    tab = context.new_page()
    tab.goto(url(rules_site, "burning_wheel/spell.html") + "?obstacle=3&sort=-name")
    assert tab.locator("tbody.entity:visible").count() == 77
    assert tab.locator("form.facets").is_hidden()
    assert tab.locator("th button, select:visible, input:visible").count() == 0  # the search box needs it too
    context.close()


# ---------------------------------------------------------------- search that knows where it is


def test_search_inside_a_ruleset_stays_there_until_the_chip_is_clicked(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "witcher/index.html"))
    chip = page.locator("#rd-scope")
    assert chip.is_visible() and chip.get_attribute("aria-pressed") == "true"
    page.locator("#rd-search").fill("location")
    options = page.locator("#rd-results [role=option]")
    options.first.wait_for()
    where = options.locator(".r-where").all_inner_texts()
    assert where and all("Witcher" in w for w in where), where
    chip.click()
    assert chip.get_attribute("aria-pressed") == "false"
    page.wait_for_function(
        "[...document.querySelectorAll('#rd-results .r-where')].some(e => e.textContent.includes('Riddle'))"
    )
    assert page.evaluate("document.activeElement.id") == "rd-search"  # the box keeps the focus


def test_results_are_grouped_by_kind_and_say_which_field_matched(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "burning_wheel/index.html"))
    page.locator("#rd-search").fill("sorcery")
    page.locator("#rd-results [role=option]").first.wait_for()
    groups = page.locator("#rd-results [role=group]")
    titles = groups.locator(".r-group").all_inner_texts()
    assert titles[0].casefold() == "skills" and "lifepaths" in [t.casefold() for t in titles]
    assert len(titles) == len(set(titles))  # one group per kind
    lifepaths = groups.nth([t.casefold() for t in titles].index("lifepaths"))
    said = lifepaths.locator(".r-field").all_inner_texts()
    assert said and all(s.startswith("matched in ") for s in said)
    assert any("skills" in s for s in said)  # the lifepaths teach it
    first = page.locator("#rd-results [role=option]").first  # the keyboard still starts at the best hit
    assert first.locator(".r-name").inner_text() == "Sorcery"


def test_an_inherited_entry_appears_once_with_where_else(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "index.html"))  # above the rulesets: every ruleset
    page.locator("#rd-search").fill("alchemy")
    page.locator("#rd-results [role=option]").first.wait_for()
    alchemy = page.locator("#rd-results [role=option]").filter(
        has=page.locator(".r-name", has_text=re.compile(r"^Alchemy$"))
    )
    assert alchemy.count() == 1
    assert "Burning Wheel" in alchemy.locator(".r-where").inner_text()
    assert "also in Fenmark" in alchemy.locator(".r-where").inner_text()
    page.goto(url(rules_site, "fenmark/index.html"))  # kept to Fenmark, it is still found
    page.locator("#rd-search").fill("alchemy")
    page.locator("#rd-results [role=option]").first.wait_for()
    assert page.locator("#rd-results [role=option] .r-name").first.inner_text() == "Alchemy"


def test_enter_on_an_exact_name_opens_it(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "burning_wheel/spell.html"))
    box = page.locator("#rd-search")
    box.fill("alchemy")
    page.locator("#rd-results [role=option]").first.wait_for()
    box.press("Enter")
    page.wait_for_url("**/burning_wheel/skill.*.html#alchemy")
    page.goto(url(rules_site, "burning_wheel/spell.html"))
    box.fill("alchem")  # not a name: the search page, kept to the ruleset
    page.locator("#rd-results [role=option]").first.wait_for()
    box.press("Enter")
    page.wait_for_url("**/search.html?q=alchem&in=burning_wheel")
    page.locator("#rd-page-results li").first.wait_for()
    assert page.locator("#rd-page-scope").get_attribute("aria-pressed") == "true"
    assert page.locator("#rd-page-results h2").first.inner_text().startswith("Skills")


def test_a_big_kinds_contents_filter_every_name(
    page: Any, rules_build: tuple[Path, tuple[CompiledRuleset, ...]]
) -> None:
    """Skills span six pages: their contents page filters all of them, names linking to their pages."""
    site, rulesets = rules_build
    skills = next(r for r in rulesets if r.id == "burning_wheel").entities["skill"].values()
    sorcerous = sorted(s.name for s in skills if s.fields.get("type") == "sorcerous")
    page.goto(url(site, "burning_wheel/skill.html") + "?type=sorcerous")
    names = page.locator("li.entity:visible a").all_inner_texts()
    assert sorted(names) == sorcerous
    assert page.locator("form.facets .filter-count").inner_text() == f"{len(sorcerous)} of {len(skills)}"
    assert page.locator("section.letter:visible h2").count() < page.locator("section.letter h2").count()


def test_a_filter_hides_rows_on_a_phone_too(browser: Any, rules_site: Path) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    tab = context.new_page()
    tab.goto(url(rules_site, "burning_wheel/spell.html") + "?element=fire&sort=-resources")
    assert tab.locator("tbody.entity:visible").count() == 7  # stacked rows are blocks: hidden must still hide
    order = tab.locator("form.facets select:not([name])")  # the headers are out of sight: sorting is here
    assert order.is_visible() and order.input_value() == "-resources"
    tab.goto(url(rules_site, "burning_wheel/spell.html"))  # nothing chosen: the choices fold away on a phone
    assert order.is_hidden() and tab.locator("form.facets select[name=element]").is_hidden()
    tab.locator("form.facets summary").tap()
    assert tab.locator("form.facets select[name=element]").is_visible()
    context.close()


# ---------------------------------------------------------------- accessibility (issue 24): axe-core, no script, print

AXE = ROOT / "tests" / "node" / "node_modules" / "axe-core" / "axe.min.js"
# One page of every type, and what to do there first: the search open, a lifepath's graph open.
PAGE_TYPES = {
    "index": ("index.html", None),
    "ruleset": ("burning_wheel/index.html", None),
    "kind list": ("burning_wheel/skill.1.html", None),
    "fields": ("burning_wheel/kinds.html", None),
    "entity": ("burning_wheel/setting.court.html#court_sorcerer", "#court_sorcerer details.graph summary"),
    "table": ("riddle_of_steel/table.html", None),
    "odds": ("riddle_of_steel/mechanic.html", None),
    "graphs": ("burning_wheel/stock.human.html", None),
    "search open": ("index.html?q=sorcery", "#rd-results [role=option]"),
    "search page": ("search.html?q=sorcery", "#rd-page-results li"),
    "language": ("language.html", None),
    "changes": ("fenmark/changes.html", None),
    "builder": ("burning_wheel/builder.html", "#b-next button.b-offer"),
}


def axe_findings(tab: Any, only: list[str] | None = None) -> list[tuple[str, str, int, list[str]]]:
    """axe-core's findings on the page as it is now: (rule, impact, nodes, first targets). Every rule, the
    2.2 target-size rule (24 px) switched on (axe leaves it off by default), or `only` these."""
    if not AXE.exists():
        pytest.skip("axe-core is not installed (scripts/setup.sh test runs npm ci in tests/node)")
    tab.add_script_tag(path=str(AXE))
    options = {"runOnly": only} if only else {"rules": {"target-size": {"enabled": True}}}
    found = tab.evaluate(
        """async (options) => {
        const result = await axe.run(document, options);
        return result.violations.map(v => [v.id, v.impact, v.nodes.length,
                                           v.nodes.slice(0, 3).map(n => n.target.join(" "))]);
    }""",
        options,
    )
    return [(rule, impact, count, targets) for rule, impact, count, targets in found]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_nothing_serious_on_any_page_type(browser: Any, rules_site: Path, scheme: str) -> None:
    """Every rule in the light scheme; in the dark one only contrast changes, so only contrast is checked."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    serious = {}
    for name, (where, first) in PAGE_TYPES.items():
        tab.goto(url(rules_site, where.split("?")[0]) + ("?" + where.split("?")[1] if "?" in where else ""))
        if first and first.endswith("summary"):
            tab.locator(first).click()
            tab.locator(first.replace("summary", "svg")).wait_for()
        elif first:
            tab.locator(first).first.wait_for()
        checked = axe_findings(tab, None if scheme == "light" else ["color-contrast"])
        found = [f for f in checked if f[1] in ("critical", "serious")]
        if found:
            serious[name] = found
    context.close()
    report = [
        f"{page}: {rule} ({impact}, {count} nodes) e.g. {targets}"
        for page, found in serious.items()
        for rule, impact, count, targets in found
    ]
    assert report == [], "\n".join(report)
    assert errors == []


def _phone(browser: Any, **options: Any) -> tuple[Any, Any]:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, **options)
    return context, context.new_page()


def test_the_open_search_fits_a_phone(browser: Any, rules_site: Path) -> None:
    context, tab = _phone(browser)
    tab.goto(url(rules_site, "burning_wheel/setting.court.html") + "?q=sorcery")
    options = tab.locator("#rd-results [role=option]")
    options.first.wait_for()
    assert options.count() > 5
    width = tab.evaluate("document.documentElement.scrollWidth")
    right = tab.locator("#rd-results").evaluate("e => e.getBoundingClientRect().right")
    context.close()
    assert width <= 390
    assert right <= 390


def test_a_search_option_is_followed_by_enter_and_by_a_tap(page: Any, rules_site: Path) -> None:
    """The options hold no links (axe: nested-interactive): Enter and a click still open the entry, and the
    last option opens every result."""
    page.goto(url(rules_site, "index.html") + "?q=sorcery")
    options = page.locator("#rd-results [role=option]")
    options.first.wait_for()
    assert page.locator("#rd-results a").count() == 0
    box = page.locator("#rd-search")
    box.press("ArrowUp")  # from the top, up wraps round to the last option: every result
    assert box.get_attribute("aria-activedescendant") == "rd-option-more"
    box.press("Enter")
    page.wait_for_url("**/search.html?q=sorcery")
    page.goto(url(rules_site, "index.html") + "?q=sorcery")
    page.locator("#rd-results [role=option] .r-name", has_text=re.compile("^Sorcery$")).first.click()
    page.wait_for_url("**/burning_wheel/skill.*.html#sorcery")


def test_graphs_are_lists_on_a_phone(browser: Any, rules_site: Path) -> None:
    context, tab = _phone(browser)
    tab.goto(url(rules_site, "burning_wheel/stock.human.html"))
    leads = tab.locator("section.leads")
    assert leads.locator("svg.graph").is_hidden()
    items = leads.locator("ul.graph-list > li")
    assert items.count() == 10  # every setting of Men, each with where it leads
    city = items.filter(has=tab.locator("a", has_text=re.compile("^City Dweller Setting$"))).first
    assert "leads to" in city.inner_text() and city.locator("a").count() >= 5
    width = tab.evaluate("document.documentElement.scrollWidth")
    tab.goto(url(rules_site, "burning_wheel/setting.court.html#court_sorcerer"))
    tab.locator("#court_sorcerer details.graph summary").tap()
    listed = tab.locator("#court_sorcerer details.graph ul.graph-list")
    listed.wait_for()
    assert tab.locator("#court_sorcerer details.graph svg").is_hidden()
    text = listed.inner_text()
    assert "Leads to: Noble Court Subsetting, Outcast Subsetting (Men), City Dweller Setting" in text
    assert "Named in its requirements: Arcane Devotee, Rogue Wizard, Sorcerer" in text
    widths = [width, tab.evaluate("document.documentElement.scrollWidth")]
    context.close()
    assert max(widths) <= 390


def test_without_javascript_no_control_is_shown_that_does_nothing(browser: Any, rules_site: Path) -> None:
    context = browser.new_context(java_script_enabled=False)
    tab = context.new_page()
    shown = {}
    for name, (where, _) in PAGE_TYPES.items():
        tab.goto(url(rules_site, where.split("?")[0].split("#")[0]))
        controls = tab.evaluate(
            """() => [...document.querySelectorAll(
                   'button, input, select, textarea, [role=combobox], details.graph, p.roll, p.filter, p.pool-pick')]
                 .filter(e => e.getClientRects().length > 0)
                 .map(e => e.outerHTML.slice(0, 60))"""
        )
        if controls:
            shown[name] = controls
    # what works without a script stays: the pools' odds all shown, every entry linked from the contents
    tab.goto(url(rules_site, "riddle_of_steel/mechanic.html"))
    pools = tab.locator(".pool:visible").count()
    notice = tab.locator("noscript p.noscript").count()
    context.close()
    assert shown == {}
    assert pools > 1 and notice == 1


def test_the_leads_graph_is_links_for_the_keyboard_and_screen_readers(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "burning_wheel/stock.human.html"))
    graph = page.locator("section.leads svg.graph")
    # a screen reader sees a group of links, not an image hiding them
    assert graph.get_attribute("role") == "group"
    named = page.get_by_role("group", name="Leads between the settings of Men")
    assert named.get_by_role("link").count() == 10
    named.get_by_role("link", name="City Dweller Setting").focus()
    assert page.evaluate("document.activeElement.closest('svg') !== null")
    page.keyboard.press("Enter")
    page.wait_for_url("**/burning_wheel/setting.city.html")
    page.go_back()
    page.locator("section.leads h2").click()
    tabbed = []
    for _ in range(40):  # Tab walks through the boxes
        page.keyboard.press("Tab")
        tabbed.append(
            page.evaluate("document.activeElement.closest('svg.graph') ? document.activeElement.textContent : null")
        )
    assert len({t for t in tabbed if t}) == 10


WHOLE_LABELS = """nodes => nodes.map(a => {
            const r = a.querySelector('rect').getBBox(), t = a.querySelector('text').getBBox();
            const inside = t.x >= r.x && t.x + t.width <= r.x + r.width
                && t.y >= r.y && t.y + t.height <= r.y + r.height;
            const name = a.querySelector('text').textContent;
            return { name: name, x: r.x, y: r.y, w: r.width, h: r.height, inside: inside };
        })"""


def test_a_lifepaths_graph_shows_whole_names(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "burning_wheel/setting.soldier.html"))
    page.locator("details.graph summary").first.click()
    svg = page.locator("details.graph svg.graph").first
    svg.wait_for()
    boxes = svg.locator("a.node").evaluate_all(WHOLE_LABELS)
    assert any(len(b["name"]) > 20 for b in boxes)  # some wrap
    assert [b["name"] for b in boxes if not b["inside"] or "…" in b["name"]] == []
    assert "Professional Soldier Subsetting" in [b["name"] for b in boxes]  # 31 characters: once cut


def test_the_leads_graph_is_layered_and_its_labels_are_whole(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "burning_wheel/stock.human.html"))
    svg = page.locator("section.leads svg.graph")
    boxes = svg.locator("a.node").evaluate_all(WHOLE_LABELS)
    assert len(boxes) == 10
    assert [b["name"] for b in boxes if not b["inside"]] == []  # no label cut or spilling out of its box
    assert not any("…" in b["name"] for b in boxes)
    columns = sorted({round(b["x"] + b["w"] / 2) for b in boxes})
    assert 3 <= len(columns) <= 8  # in layers
    for a in boxes:  # no two boxes overlap
        for b in boxes:
            if a is not b:
                assert (
                    a["x"] + a["w"] <= b["x"]
                    or b["x"] + b["w"] <= a["x"]
                    or a["y"] + a["h"] <= b["y"]
                    or b["y"] + b["h"] <= a["y"]
                )


def test_print_keeps_sources_and_graphs_and_notes_no_larger_than_entries(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "burning_wheel/setting.noble.html"))
    page.emulate_media(media="print")
    sources = page.locator("tbody.entity .source")
    assert sources.count() >= 10
    assert all(sources.nth(i).is_visible() for i in range(sources.count()))
    assert sources.first.inner_text().startswith("Source:")
    sizes = page.evaluate(
        """() => {
        const size = e => parseFloat(getComputedStyle(e).fontSize);
        return [...document.querySelectorAll('tbody.entity')].flatMap(entry => {
            const text = entry.querySelector('tr.body td');
            return [...entry.querySelectorAll('.note, .source')].map(n => [n.className, size(n), size(text)]);
        });
    }"""
    )
    assert any(kind == "note" for kind, _, _ in sizes)
    assert [s for s in sizes if s[1] > s[2]] == []  # a note or a source prints no larger than its entry
    page.goto(url(rules_site, "burning_wheel/stock.human.html"))
    page.emulate_media(media="print")
    graph = page.locator("section.leads svg.graph")
    assert graph.is_visible()
    box = graph.bounding_box()
    page_width = page.evaluate("document.documentElement.clientWidth")
    assert box is not None and box["width"] <= page_width
    assert page.locator("section.leads .graph-list").is_visible()  # every lead, in words


def test_the_leads_graph_is_the_same_at_every_build(
    tmp_path: Path, rules_build: tuple[Path, tuple[CompiledRuleset, ...]]
) -> None:
    site, _ = rules_build
    again, _ = _build(tmp_path / "gen", ROOT / "rules" / "burning_wheel")
    for name in ("stock.human.html", "stock.dwarf.html"):
        assert (again / "burning_wheel" / name).read_bytes() == (site / "burning_wheel" / name).read_bytes()
