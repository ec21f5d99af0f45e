"""The character builder (builder.html) as a player uses it, in Debian's Chromium from file://: burn the
book's and the README's characters by clicking and get the Python package's sheet, share one by its
address, find paths, roll on rulesets without lifepaths, and meet bad input in words."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from . import test_site_browser as shared
from .conftest import write_ruleset
from .test_site_browser import _build, _phone, axe_findings

# the reference's browser tests' fixtures: one browser, a tab failing on any console error, the sites
browser, page, rules_build, rules_site, examples_site = (
    shared.browser,
    shared.page,
    shared.rules_build,
    shared.rules_site,
    shared.examples_site,
)


def url(site: Path, name: str) -> str:
    """A page of the site from file://, with its query string (`builder.html?path=a,b`)."""
    target, mark, query = name.partition("?")
    return (site / target).as_uri() + mark + query


def python_sheet(built: Path, ruleset: str, path: list[str], **options: Any) -> str:
    """The generated Python package's `burn(path, **options).to_json()`, in a fresh interpreter."""
    code = f"import json, {ruleset} as r; print(r.burn({path!r}, **{options!r}).to_json())"
    env = {**os.environ, "PYTHONPATH": str(built.parent)}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
    ).stdout.strip()


def click_path(page: Any, ids: list[str]) -> None:
    """Pick each lifepath by its button, as offered after the one before."""
    for id_ in ids:
        page.locator(f"#b-next button.b-offer[data-id='{id_}']").click()


def shown(page: Any, term: str) -> str:
    return str(
        page.locator("#b-sheet div").filter(has=page.locator(f"dt:text-is('{term}')")).locator("dd").inner_text()
    )


def sheet_json(page: Any) -> str:
    page.locator("details.b-json summary").click()
    return str(page.locator("#b-json").inner_text())


def test_the_books_worked_example_burns_by_clicking(page: Any, rules_site: Path) -> None:
    path = ["citadel_born", "elf_wilderlands_huntsman", "elf_wilderlands_wanderer"]
    page.goto(url(rules_site, "burning_wheel/builder.html"))
    click_path(page, path)
    assert sheet_json(page) == python_sheet(rules_site, "burning_wheel", path)
    assert shown(page, "Age") == "141"
    assert shown(page, "Mental pool") == "10"
    assert shown(page, "Physical pool") == "18 (16 by age + 2)"
    assert shown(page, "Required skills") == "Elven Script, Call of the Wild, Song of Paths and Ways"
    assert shown(page, "Resource points") == "21"
    assert shown(page, "Common traits of the stock") == (
        "Born Under the Silver Stars, Essence of the Earth, Fair and Statuesque, First Born, Grief, Keen Sight"
    )
    assert page.locator("#b-rules ul.b-violations").count() == 0
    assert "age 141" in page.locator("#b-summary").inner_text()  # the live region says the totals
    assert page.url.endswith("builder.html?path=citadel_born,elf_wilderlands_huntsman,elf_wilderlands_wanderer")


def test_the_readme_burns_work_by_clicking_with_their_choices(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "burning_wheel/builder.html"))
    click_path(page, ["born_peasant", "farmer"])
    assert sheet_json(page) == python_sheet(rules_site, "burning_wheel", ["Born Peasant", "Farmer"])

    path = ["born_noble", "reed_page", "marsh_warden", "eel_baron", "lord"]
    page.goto(url(rules_site, "fenmark/builder.html"))
    click_path(page, path)
    fieldsets = page.locator("#b-choices fieldset")
    assert fieldsets.count() == 1 and "+1 to which stat?" in fieldsets.first.inner_text()
    before = page.locator("#b-rules").inner_text()
    assert "choose M or P" in before  # not chosen yet: a broken rule, as Python says
    fieldsets.first.get_by_label("Mental").check()
    assert sheet_json(page) == python_sheet(rules_site, "fenmark", path, either=["M"])
    assert shown(page, "Mental pool") == "10 (7 by age + 3)"
    assert "either=M" in page.url


def test_a_required_choice_is_picked_in_the_page(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "burning_wheel/builder.html?path=born_peasant,archer,cripple"))
    undecided = page.locator("ul.b-undecided li").all_inner_texts()
    assert any("choose Lame or Missing Limb" in u for u in undecided), undecided
    choice = page.locator("#b-choices fieldset").filter(has_text="which required trait?")
    choice.get_by_label("Missing Limb").check()
    path = ["born_peasant", "archer", "cripple"]
    assert sheet_json(page) == python_sheet(rules_site, "burning_wheel", path, picks=["missing_limb"])
    assert "Missing Limb" in shown(page, "Required traits")
    assert page.url.endswith("&pick=missing_limb")


def test_the_address_holds_the_character(browser: Any, page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "fenmark/builder.html"))
    click_path(page, ["born_noble", "reed_page", "marsh_warden", "eel_baron", "lord"])
    page.locator("#b-choices fieldset").first.get_by_label("Physical").check()
    shared, first = page.url, sheet_json(page)
    other = browser.new_context().new_page()
    other.goto(shared)
    assert sheet_json(other) == first
    assert other.locator("#b-choices input[value=P]").is_checked()
    assert other.locator("#b-path li").count() == 5
    other.context.close()
    page.locator("#b-undo").click()  # removing the last lifepath takes it out of the address too
    assert "lord" not in page.url and page.locator("#b-path li").count() == 4


def test_only_legal_lifepaths_are_offered_and_the_others_say_why_not(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "burning_wheel/builder.html?path=born_peasant"))
    offered = page.locator("#b-next button.b-offer").evaluate_all("bs => bs.map(b => b.dataset.id)")
    assert "farmer" in offered and "court_knight" not in offered and "born_noble" not in offered
    page.locator("details.b-why-not summary").click()
    refused = page.locator("ul.b-refused > li > details")
    refused.first.wait_for()  # listed when the disclosure opens
    first = refused.first
    first.locator("summary").click()
    assert first.locator("li").first.inner_text().startswith(("requires:", "restricted to:"))
    # by keyboard: after a pick, the focus is on the first lifepath that may follow
    page.locator("#b-next button.b-offer[data-id='farmer']").focus()
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.classList.contains('b-offer')")
    assert page.locator("#b-path li").count() == 2


def test_an_illegal_or_unknown_path_is_said_in_words(page: Any, rules_site: Path) -> None:
    page.goto(
        url(rules_site, "burning_wheel/builder.html?path=born_peasant,nobody,Knight,court_knight&either=Q&pick=nope")
    )
    problem = page.locator("#b-problem").inner_text()
    assert "“nobody” in the address is no lifepath" in problem
    assert "“Knight” in the address could mean several lifepaths (court_knight, noble_knight)" in problem
    assert "“Q” in the address is no stat choice" in problem
    assert "“nope” in the address is no skill or trait" in problem
    expected = json.loads(python_sheet(rules_site, "burning_wheel", ["born_peasant", "court_knight"], either=[""]))
    assert page.locator("ul.b-violations li").all_inner_texts() == expected["violations"]


def test_a_ruleset_without_born_lifepaths_says_so(page: Any, tmp_path: Path) -> None:
    write_ruleset(
        tmp_path / "rules" / "orphans",
        {
            "a.rules": """
            stock folk "Folk" { }
            setting town "Town" { stock: folk }
            lifepath clerk "Clerk" { time: 4 yrs  resources: 5 }
            """
        },
    )
    site, _ = _build(tmp_path / "gen", tmp_path / "rules")
    page.goto(url(site, "demo/builder.html?path=clerk"))
    assert "first lifepath must be one" in page.locator("#b-rules").inner_text()  # Python's words
    page.locator("#b-clear").click()
    assert "No lifepath of" in page.locator("#b-next").inner_text()
    assert "is a born lifepath" in page.locator("#b-next").inner_text()


def test_the_path_finder_lists_every_path_shortest_first(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "burning_wheel/builder.html"))
    page.select_option("#b-from", "born_peasant")
    page.select_option("#b-to", "Knight")
    page.fill("#b-steps", "3")
    page.locator("#b-finder button[type=submit]").click()
    assert page.locator("#b-found-status").inner_text().startswith("59 paths from Born Peasant to Knight")
    lengths = page.locator("#b-found a").evaluate_all("as => as.map(a => a.textContent.split(' → ').length)")
    assert len(lengths) == 59 and lengths == sorted(lengths) and max(lengths) <= 4
    page.fill("#b-steps", "6")  # too many to list: the search stops, says so and lists the shortest
    page.locator("#b-finder button[type=submit]").click()
    status = page.locator("#b-found-status").inner_text()
    assert status.startswith(("At least 1000 paths", "The search stopped")) and "Fewer steps" in status, status
    longer = page.locator("#b-found a").evaluate_all("as => as.map(a => a.textContent.split(' → ').length)")
    assert 0 < len(longer) <= 200 and longer == sorted(longer) and longer[:59] == lengths
    first = page.locator("#b-found a").first
    with page.expect_navigation():
        first.click()
    assert page.locator("#b-path li").count() == lengths[0]
    assert page.locator("#b-path li").last.inner_text().startswith("Knight")


def test_download_and_print_give_the_sheet(page: Any, rules_site: Path) -> None:
    page.goto(url(rules_site, "burning_wheel/builder.html?path=born_peasant,farmer"))
    with page.expect_download() as info:
        page.locator("#b-download").click()
    saved = Path(info.value.path()).read_text(encoding="utf-8")
    assert saved.strip() == python_sheet(rules_site, "burning_wheel", ["born_peasant", "farmer"])
    page.emulate_media(media="print")
    assert page.locator("#b-sheet").is_visible() and page.locator("#b-path").is_visible()
    for hidden in ("#b-next", "#b-finder", "#b-download", "header.site", "#b-choices"):
        assert page.locator(hidden).is_hidden(), hidden


def test_a_ruleset_without_lifepaths_rolls_tables_and_characteristics(
    page: Any, rules_site: Path, examples_site: Path
) -> None:
    page.goto(url(rules_site, "witcher/builder.html?seed=5"))
    page.locator("#b-roll-table").click()
    first = page.locator("#b-rolled li").all_inner_texts()
    assert first and "rolled" in first[0]
    page.reload()
    page.locator("#b-roll-table").click()
    assert page.locator("#b-rolled li").all_inner_texts() == first  # the same seed, the same rolls
    page.goto(url(examples_site, "nightfall/builder.html?seed=3"))
    page.locator("#b-roll-attributes").click()
    values = {
        a: int(page.locator(f"#b-attr-{a}").input_value()) for a in ("strength", "constitution", "size", "resolve")
    }
    assert all(v % 5 == 0 for v in values.values())
    assert 15 <= values["strength"] <= 90 and 40 <= values["size"] <= 90
    derived = page.locator("#b-derived div").evaluate_all(
        "ds => Object.fromEntries(ds.map(d => [d.children[0].textContent, d.children[1].textContent]))"
    )
    assert derived["Stamina"] == str((values["constitution"] + values["size"]) // 10)
    assert derived["Nerve"] == str(values["resolve"])
    assert "seed=3" in page.url
    # a table rolled for a key it is given: the district is chosen, the roll lands in its rows
    page.goto(url(examples_site, "smokewharf/builder.html?seed=4"))
    page.select_option("#b-table", "encounters")
    page.select_option("#b-given-0", label="The Sunken Ward")
    page.locator("#b-roll-table").click()
    landed = page.locator("#b-rolled li .b-row").first.inner_text()
    sunken = ("spirit that wants", "eel-fishers", "collapsing walkway", "flooded vault")
    assert any(text in landed for text in sunken), landed


def test_axe_finds_nothing_serious_in_the_builder(browser: Any, rules_site: Path) -> None:
    found = []
    for scheme in ("light", "dark"):
        context = browser.new_context(color_scheme=scheme)
        tab = context.new_page()
        for where in ("burning_wheel/builder.html?path=born_peasant,archer,cripple", "riddle_of_steel/builder.html"):
            tab.goto(url(rules_site, where))
            if tab.locator("details.b-why-not summary").count():
                tab.locator("details.b-why-not summary").click()
            checked = axe_findings(tab, None if scheme == "light" else ["color-contrast"])
            found += [(scheme, where, f) for f in checked if f[1] in ("critical", "serious")]
        context.close()
    assert found == []


def test_the_builder_fits_a_phone(browser: Any, rules_site: Path) -> None:
    context, tab = _phone(browser)
    tab.goto(url(rules_site, "fenmark/builder.html?path=born_noble,reed_page,marsh_warden,eel_baron,lord"))
    tab.locator("#b-finder button[type=submit]").click()
    width = tab.evaluate("document.documentElement.scrollWidth")
    context.close()
    assert width <= 390


NODE_SAME = """
import * as esm from %(module)s;
import { readFileSync } from "node:fs";
import vm from "node:vm";
const context = {};
vm.createContext(context);
vm.runInContext(readFileSync(%(classic)s, "utf8"), context);
const classic = context.rulesdsl[%(id)s];
const paths = [["born_peasant", "farmer"], ["citadel_born", "elf_wilderlands_huntsman"], ["farmer"], []];
console.log(JSON.stringify({
  names: [Object.keys(esm).sort(), Object.keys(classic).sort()],
  sheets: paths.map((p) => [esm, classic].map((m) => JSON.stringify(m.burn(p, {either: ["M"]})))),
}));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="Node is not installed")
def test_the_classic_script_is_rules_js_with_the_same_exports_and_answers(rules_site: Path, tmp_path: Path) -> None:
    folder = rules_site / "burning_wheel"
    script = tmp_path / "same.mjs"
    script.write_text(
        NODE_SAME
        % {
            "module": json.dumps((folder / "rules.js").as_uri()),
            "classic": json.dumps(str(folder / "rules.global.js")),
            "id": json.dumps("burning_wheel"),
        },
        encoding="utf-8",
    )
    found = json.loads(subprocess.run(["node", str(script)], check=True, capture_output=True, text=True).stdout)
    esm_names, classic_names = found["names"]
    assert esm_names == classic_names and "burn" in classic_names and "TABLES" in classic_names
    for esm_sheet, classic_sheet in found["sheets"]:
        assert esm_sheet == classic_sheet
