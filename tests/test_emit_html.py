"""Stage 5b: the HTML reference: escaped, cross-linked, laid out from the kinds' declarations, tables with
exact odds, a search index that finds every word, deterministic."""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Callable
from fractions import Fraction
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rulesdsl.compile.jsonform import schema_of
from rulesdsl.compile.pipeline import Compilation, CompiledRuleset, compile_paths
from rulesdsl.targets import digests
from rulesdsl.targets.build import render_all
from rulesdsl.targets.html import graphs, search
from rulesdsl.targets.html import site as html
from rulesdsl.targets.html.markdown import markdown
from rulesdsl.targets.html.search import DESCRIPTION, NAME, OTHER, SearchIndex, fold, words
from rulesdsl.targets.html.values import percent

from .conftest import FIXTURES, ROOT, golden_folder, write_ruleset

GOLDEN = Path(__file__).resolve().parent / "golden" / "site"
# Derived from files other stages own (the language reference, the kinds' schemas): checked apart, below.
# rules.js is not the reference: tests/test_javascript.py holds it to the Python package
NOT_GOLDEN = re.compile(r"^language\.html$|\.schema\.json$|/rules\.js$")
PAGE_LIMIT = 300_000  # bytes: the most any page may weigh (the 10,000-lifepath corpus is measured in benchmarks/)


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: list[str] = []
        self.scripts: list[str] = []
        self.headings: list[int] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.append(values["id"] or "")
        if tag == "a" and values.get("href"):
            self.links.append(values["href"] or "")
        if tag in ("script", "link") and (values.get("src") or values.get("href")):
            self.scripts.append(values.get("src") or values.get("href") or "")
        if re.fullmatch(r"h[1-6]", tag):
            self.headings.append(int(tag[1]))


def parse(text: str) -> _Collector:
    collector = _Collector()
    collector.feed(text)
    return collector


def site_of(compilation: Compilation) -> dict[str, str]:
    files = render_all(compilation.rulesets)
    return {name.removeprefix("site/"): text for name, text in files.items() if name.startswith("site/")}


@pytest.fixture(scope="module")
def mini() -> Compilation:
    return compile_paths([FIXTURES / "mini"])


@pytest.fixture(scope="module")
def site(mini: Compilation) -> dict[str, str]:
    return site_of(mini)


@pytest.fixture(scope="module")
def rules() -> Compilation:
    return compile_paths([ROOT / "rules"])


@pytest.fixture(scope="module")
def rules_site(rules: Compilation) -> dict[str, str]:
    return site_of(rules)


def search_index(site: dict[str, str]) -> dict[str, Any]:
    """The index as one, its pieces joined as site.js joins them: entries, pages and fields numbered on, each
    term's postings written again from the first entry of all."""
    text = site["search-index.js"]
    assert text.startswith("window.SEARCH_INDEX = ")
    head: dict[str, Any] = json.loads(text.removeprefix("window.SEARCH_INDEX = ").rstrip(";\n"))
    assert sorted(n for n in site if n.startswith("search/")) == sorted(f"search/{n}.js" for n in range(head["n"]))
    joined: dict[str, Any] = {"r": head["r"], "k": head["k"], "g": [], "e": [], "f": [], "a": []}
    found: dict[str, list[tuple[int, int, int]]] = {}  # term -> (entry, weight, field) of all pieces
    for n in range(head["n"]):
        piece_text = site[f"search/{n}.js"]
        start = f"window.rulesdslSearchPiece({n}, "
        assert piece_text.startswith(start) and piece_text.endswith(");\n")
        piece = json.loads(piece_text.removeprefix(start).removesuffix(");\n"))
        first, first_page = len(joined["e"]), len(joined["g"])
        joined["g"] += piece["g"]
        joined["e"] += [
            [label, kind, page + first_page, anchor, context] for label, kind, page, anchor, context in piece["e"]
        ]
        fields = []
        for name in piece["f"]:
            if name not in joined["f"]:
                joined["f"].append(name)
            fields.append(joined["f"].index(name))
        for term, text_ in zip(piece["t"], piece["p"], strict=True):
            value = 0
            for part in text_.split(","):
                delta, _, field_at = part.partition(".")
                value += int(delta, 36)
                found.setdefault(term, []).append(
                    (first + value // 4, value % 4, fields[int(field_at, 36)] if field_at else -1)
                )
        joined["a"] += [[row[0] + first, *row[1:]] for row in piece["a"]]
    joined["t"] = sorted(found, key=lambda term: term.encode("utf-16-be"))  # as JavaScript sorts
    lists = []
    for term in joined["t"]:
        previous, encoded = 0, []
        for entry, weight, field_at in found[term]:
            value = entry * 4 + weight
            encoded.append(search._base36(value - previous) + (f".{search._base36(field_at)}" if field_at >= 0 else ""))
            previous = value
        lists.append(",".join(encoded))
    joined["p"] = lists
    return joined


def postings(index: dict[str, object], term: str) -> list[tuple[int, int]]:
    """(entry, weight) for a term, decoded as site.js decodes them."""
    terms = index["t"]
    assert isinstance(terms, list)
    lists = index["p"]
    assert isinstance(lists, list)
    if term not in terms:
        return []
    value, found = 0, []
    for part in lists[terms.index(term)].split(","):
        value += int(part.split(".")[0], 36)  # "delta.field": the field it was found in
        found.append((value >> 2, value & 3))
    return found


def labels_found(index: dict[str, object], term: str) -> list[str]:
    entries = index["e"]
    assert isinstance(entries, list)
    return [entries[e][0] for e, _ in postings(index, term)]


# ---------------------------------------------------------------- the whole site


def test_site_matches_golden(site: dict[str, str]) -> None:
    shown = {name: text for name, text in site.items() if not NOT_GOLDEN.search(name)}
    assert shown == golden_folder(GOLDEN, shown)


def test_output_is_deterministic(mini: Compilation) -> None:
    assert site_of(mini) == site_of(compile_paths([FIXTURES / "mini"]))


def check_links(site: dict[str, str]) -> int:
    """Every href and src in every page names a file of the site, and every #anchor an id in it."""
    pages = {name: parse(text) for name, text in site.items() if name.endswith(".html")}
    checked = 0
    for name, page in pages.items():
        base = Path(name).parent
        assert not any(re.match(r"^[a-z]+:", src) for src in page.scripts), f"{name} loads from the network"
        for href in page.links + page.scripts:
            if re.match(r"^(https?|mailto):", href):
                continue  # a web address written in a description: followed only if the reader clicks it
            assert not re.match(r"^[a-z]+:", href), f"{name} links out of the site: {href}"
            target, _, anchor = href.partition("#")
            target = target.partition("?")[0]
            target_name = os.path.normpath(base / target).replace(os.sep, "/") if target else name
            assert target_name in site, f"{name}: broken link {href}"
            if anchor:
                assert anchor in pages[target_name].ids, f"{name}: no anchor #{anchor} in {target_name}"
            checked += 1
        assert len(page.ids) == len(set(page.ids)), f"{name}: an id used twice"
    return checked


def test_every_link_and_anchor_resolves(site: dict[str, str]) -> None:
    assert check_links(site) > 100


def test_every_link_and_anchor_resolves_in_the_reference_of_rules(rules_site: dict[str, str]) -> None:
    assert check_links(rules_site) > 15_000


def test_search_index_and_previews_point_at_existing_anchors(rules_site: dict[str, str]) -> None:
    index = search_index(rules_site)
    pages = index["g"]
    assert isinstance(pages, list)
    entries = index["e"]
    assert isinstance(entries, list)
    ids = {name: set(parse(text).ids) for name, text in rules_site.items() if name.endswith(".html")}
    for label, _, page, anchor, _ in entries:
        assert pages[page] in rules_site, label
        assert not anchor or anchor in ids[pages[page]], f"{label}: #{anchor} not in {pages[page]}"
    for name in rules_site:  # every page of a ruleset has its preview script, so previews never ask in vain
        if name.endswith(".html") and "/" in name:
            assert f"previews/{name[:-5]}.js" in rules_site


def test_every_entity_is_found_on_its_page(mini: Compilation, site: dict[str, str]) -> None:
    index = search_index(site)
    entries, kinds, pages = index["e"], index["k"], index["g"]
    assert isinstance(entries, list) and isinstance(kinds, list) and isinstance(pages, list)
    found = {(kinds[kind][1], anchor or pages[page].split(".")[-2]) for _, kind, page, anchor, _ in entries}
    expected = {(kind, i) for kind, group in mini.rulesets[0].entities.items() for i in group}
    assert found == expected


def test_headings_are_in_order(rules_site: dict[str, str]) -> None:
    for name, text in rules_site.items():
        if not name.endswith(".html"):
            continue
        levels = parse(text).headings
        assert levels and levels[0] == 1, f"{name} starts without an h1"
        assert levels.count(1) == 1, f"{name} has more than one h1"
        for before, after in itertools.pairwise(levels):
            assert after <= before + 1, f"{name}: h{before} then h{after}"


def test_no_page_is_too_big(rules_site: dict[str, str]) -> None:
    sizes = {name: len(text.encode()) for name, text in rules_site.items() if name.endswith(".html")}
    assert max(sizes.values()) < PAGE_LIMIT / 2, max(sizes, key=lambda n: sizes[n])


def test_a_kind_with_many_entries_is_split_into_pages() -> None:
    entries = [html.Rendered("skill", f"s{i}", html.Markup("x" * 1000), html.Markup(""), []) for i in range(300)]
    pages = html.pack(entries, budget=50_000)
    assert [len(p) for p in pages] == [50] * 6
    assert [e.id for p in pages for e in p] == [f"s{i}" for i in range(300)]
    single = html.pack([html.Rendered("t", "big", html.Markup("x" * 99_999), html.Markup(""), [])], budget=10)
    assert len(single) == 1  # one entry never splits


# ---------------------------------------------------------------- what pages say


def test_source_text_is_escaped(site: dict[str, str]) -> None:
    everything = "".join(site.values())
    assert "<script>alert(1)</script>" not in everything
    lifepaths = site["mini/setting.village.html"]
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in lifepaths
    assert "Mystic &lt;b&gt;Fire&lt;/b&gt;" in site["mini/spell.html"]
    for name, text in site.items():
        if name.endswith(".js") and name != "assets/site.js":
            assert "</script" not in text.lower(), name


def test_a_setting_page_lists_its_lifepaths_in_the_books_columns(site: dict[str, str]) -> None:
    page = site["mini/setting.village.html"]
    assert "<h1>Village</h1>" in page
    head = re.search(r"<thead><tr>(.*?)</tr></thead>", page)
    assert head is not None
    assert re.findall(r">([^<>]+)</th>", head.group(1)) == ["Name", "Time", "Resources", "Stat", "Leads", "Tags"]
    farmer = re.search(r'<tbody class="entity" id="farmer"[^>]*>.*?</tbody>', page, re.S)
    assert farmer is not None
    assert '<td data-label="Time">6 yrs</td><td data-label="Resources">4</td><td data-label="Stat">+1 P</td>' in (
        farmer.group(0)
    )
    # the first skill of the list is the one the lifepath requires, and is marked
    assert '<strong class="required" title="required"><a href="skill.html#farming">Farming</a></strong>' in (
        farmer.group(0)
    )


def test_a_setting_lists_its_lifepaths_apart_from_those_leading_into_it(site: dict[str, str]) -> None:
    page = site["mini/setting.village.html"]
    lifepaths, _, named = page.partition("<h2>Named elsewhere</h2>")
    assert 'id="farmer"' in lifepaths and "epee_master" not in lifepaths
    assert "Lifepaths with it in leads (1)" in named and 'href="setting.city.html#epee_master"' in named


def test_references_are_links_and_requirements_read_as_text(site: dict[str, str]) -> None:
    village = site["mini/setting.village.html"]
    assert '<a href="setting.village.html#farmer">Farmer</a> <em>and</em> not 2 lifepaths in the ' in village
    city = site["mini/setting.city.html"]
    assert "as the second or third lifepath <em>and</em> younger than 30 when taken" in city


def test_long_requirements_are_nested_lists() -> None:
    compilation = compile_paths([ROOT / "rules" / "burning_wheel"])
    ruleset = compilation.rulesets[0]
    site = html.RulesetSite(ruleset, has_language=False)
    entity = ruleset.entities["lifepath"]["advisor_to_the_court"]
    shown = site.fields(entity, "setting")[2]
    requires = dict(shown)["Requires"]
    assert requires.startswith('<div class="req"><span class="junction">any of:</span><ul><li>')
    assert requires.count("<li>") >= 4
    once = html.RulesetSite(ruleset, has_language=False).values.atom(
        next(r for r in _walk_requirements(ruleset) if _one_lifepath_twice(r))
    )
    assert "Mercenary Captain</a> twice" in once


def _walk_requirements(ruleset: html.CompiledRuleset) -> list[html.ir.Requirement]:
    found = []
    for entity in ruleset.entities["lifepath"].values():
        for value in entity.fields.values():
            found += [n for n in html.ir.walk(value) if isinstance(n, html.ir.REQUIREMENT_TYPES)]
    return found


def _one_lifepath_twice(req: html.ir.Requirement) -> bool:
    return isinstance(req, html.ir.CountOf) and len(req.lifepaths) == 1 and req.count == 2


def test_labels_tell_apart_what_reads_the_same(rules: Compilation) -> None:
    ruleset = next(r for r in rules.rulesets if r.id == "burning_wheel")
    labels = html.unique_labels(ruleset, html.nesting(ruleset))
    assert labels["setting"]["noble"] == "Noble Setting (Men)"
    assert labels["setting"]["dwarf_noble"] == "Noble Setting (Dwarves)"
    assert labels["spell"]["orc_dark_of_night"] == "Dark of Night (Orcs)"
    born = {labels["lifepath"][i] for i, e in ruleset.entities["lifepath"].items() if e.name == "Born Noble"}
    assert born == {"Born Noble (Noble Setting, Men)", "Born Noble (Noble Setting, Dwarves)"}
    for kind, group in labels.items():
        assert len(set(group.values())) == len(group), kind


def test_tables_show_exact_odds_per_row(site: dict[str, str]) -> None:
    tables = site["mini/table.html"]
    assert '<th scope="col">2d6</th><th scope="col">Chance</th><th scope="col">Sky</th>' in tables
    # 2d6: 2-6 is 15/36, 7 is 6/36, 8-11 is 14/36, 12 is 1/36
    for chance, exact in (("41.7%", "5/12"), ("16.7%", "1/6"), ("38.9%", "7/18"), ("2.8%", "1/36")):
        assert f'<td class="chance">{chance} <small>{exact}</small></td>' in tables
    assert '<p class="roll" hidden data-roll="{&#34;dice&#34;: [[[2, 6], 0]], &#34;tens&#34;: false' in tables
    assert 'data-k="[[12, null]]">' in tables  # what the roll button matches a roll against


def test_two_key_tables_are_grids_with_unknown_cells_greyed(rules_site: dict[str, str]) -> None:
    page = rules_site["riddle_of_steel/table.html"]
    grid = re.search(r'<section class="entity card" id="damage_table">.*?</section>', page, re.S)
    assert grid is not None
    text = grid.group(0)
    assert '<th scope="col" class="axes">Zone \u2572 Level</th>' in text
    assert "".join(f'<th scope="col">{n}</th>' for n in range(1, 6)) in text
    rows = re.findall(r'<tr id="damage_table--[^"]+"><th scope="row">([^<]+) <a class="row-link"', text)
    assert rows == ["I", "II", "III", "IV", "V", "VI", "VII", "Generic"]
    assert len(re.findall(r'<td class="unknown" id="[^"]+">unknown</td>', text)) > 20
    assert "bleeding; muscle badly torn" in text
    assert "<dt>Blood loss</dt><dd>5</dd>" in text  # readable column headers


def test_pool_mechanics_show_the_chance_of_each_number_of_successes(site: dict[str, str]) -> None:
    page = site["mini/mechanic.html"]
    five = re.search(r'<div class="pool" data-dice="5">.*?</table>', page, re.S)
    assert five is not None
    # one d10 against 8 succeeds 3 times in 10 (no stacking needed): 0 successes of 5 is 0.7^5 = 16.8%
    row = re.search(r'<tr><th scope="row">8</th>(.*?)</tr>', five.group(0))
    assert row is not None
    cells = re.findall(r"<td>([^<]+)</td>", row.group(1))
    assert cells == [percent(Fraction(7, 10) ** (5 - k) * Fraction(3, 10) ** k * _comb(5, k)) for k in range(6)]
    assert cells[0] == "16.8%"


def _comb(n: int, k: int) -> int:
    from math import comb

    return comb(n, k)


def test_percentages_never_round_to_certainty() -> None:
    assert percent(Fraction(1, 2)) == "50%"
    assert percent(Fraction(1, 10**6)) == "<0.01%"
    assert percent(1 - Fraction(1, 10**6)) == ">99.9%"
    assert percent(Fraction(1, 36)) == "2.8%"


def test_formulas_render_readably(site: dict[str, str]) -> None:
    assert (
        '\u230a(<a href="attribute.html#might">MGT</a> + <a href="attribute.html#wit">WIT</a>) \u00f7 2\u230b'
        in site["mini/attribute.html"]
    )


def test_formulas_link_only_the_names_they_resolve(compile_rules: Callable[..., Compilation]) -> None:
    # A parameter named like a table, a quoted obstacle holding the table's name, an attribute by its
    # abbreviation and by its id (as a lookup's index), a lookup, a call and a field of an entity: only
    # what the checks resolved links, each to its own page.
    compilation = compile_rules(
        {
            "a.rules": """
            attribute might "Might" { abbr: MGT  group: body  range: 1..10 }
            table level "Level" {
              columns: bonus(int)
              <=4 -> 1
              5+  -> 2
            }
            kind weapon "Weapons" { reach: int }
            weapon sword "Sword" { reach: 1 }
            kind trick "Tricks" { ob: obstacle }
            trick feint "Feint" { ob: "level" + 2 }
            formula half "Half" { params: x  formula: x / 2 }
            formula rank "Rank" {
              params: level
              formula: level + MGT + level[might] + half(level) + weapon[sword].reach
            }
            """
        }
    )
    assert not compilation.diagnostics
    pages = site_of(compilation)
    assert (
        "<dd><var>level</var> + "
        '<a href="attribute.html#might">MGT</a> + '
        '<a href="table.html#level">Level</a>(<a href="attribute.html#might">Might</a>) + '
        '<a href="formula.html#half">Half</a>(<var>level</var>) + '
        'reach of <a href="weapon.html#sword">Sword</a></dd>'
    ) in pages["demo/formula.html"]
    # quoted text, without its quotes
    assert '<td data-label="Ob" data-sort="">level + 2</td>' in pages["demo/trick.html"]


def test_uncertain_readings_are_shown(site: dict[str, str]) -> None:
    assert "Uncertain:</strong> years hard to read" in site["mini/setting.city.html"]


def test_stock_page_draws_the_leads_between_its_settings(site: dict[str, str]) -> None:
    page = site["mini/stock.folk.html"]
    svg = re.search(r"<svg class=\"graph\".*?</svg>", page, re.S)
    assert svg is not None
    nodes = re.findall(r'<a href="([^"]+)" class="node', svg.group(0))
    assert sorted(nodes) == ["setting.city.html", "setting.village.html"]
    assert "Cité Ünïcode leads to Village; Village leads to Cité Ünïcode" in svg.group(0)


def _graph(names: str, pairs: str) -> tuple[list[graphs.Node], list[graphs.Edge]]:
    nodes = [graphs.Node(n, n.upper(), f"{n}.html") for n in names.split()]
    edges = [graphs.Edge(a, b, 1, f"{a} to {b}") for a, _, b in (p.partition(">") for p in pairs.split())]
    return nodes, edges


def test_leads_are_layered_along_their_direction_and_cycles_are_broken() -> None:
    nodes, edges = _graph("d c b a", "a>b b>c c>d d>a a>c")  # a cycle, listed backwards
    drawing = graphs.layout(nodes, edges)
    column = {key: i for i, layer in enumerate(drawing.layers) for key in layer if key in "abcd"}
    assert column == {"a": 0, "b": 1, "c": 2, "d": 3}  # one edge of the cycle turned back (d>a), the rest on
    backwards = [(line.edge.source, line.edge.target) for line in drawing.lines if line.back]
    assert backwards == [("d", "a")]
    passing = [line for line in drawing.lines if line.edge.source == "a" and line.edge.target == "c"]
    assert len(passing[0].via) == 1  # a>c passes column 1 through a placeholder point


def test_barycentric_ordering_removes_crossings_and_is_deterministic() -> None:
    # two sources listed in an order that crosses every edge: a1 leads to the second target, a2 to the first
    nodes, edges = _graph("a1 a2 b2 b1 c1 c2", "a1>b1 a2>b2 b1>c1 b2>c2 a1>b1")
    first = graphs.layout(nodes, edges)
    assert first.crossings == 0
    assert graphs.layout(nodes, edges) == first
    svg = graphs.layered("k", "T", nodes, edges, "")
    assert svg == graphs.layered("k", "T", nodes, edges, "")


def _feedback_order_as_written(keys: list[str], weights: dict[tuple[str, str], int]) -> dict[str, int]:
    """Eades-Lin-Smith as its definition says, in quadratic time: the oracle of graphs._feedback_order."""
    left = dict.fromkeys(keys)
    head: list[str] = []
    tail: list[str] = []

    def degree(key: str, outgoing: bool) -> int:
        return sum(w for (a, b), w in weights.items() if (a if outgoing else b) == key and a in left and b in left)

    while left:
        changed = True
        while changed:
            changed = False
            for key in list(left):
                if degree(key, outgoing=True) == 0:
                    tail.insert(0, key)
                    del left[key]
                    changed = True
                elif degree(key, outgoing=False) == 0:
                    head.append(key)
                    del left[key]
                    changed = True
        if left:
            best = max(left, key=lambda k: degree(k, outgoing=True) - degree(k, outgoing=False))
            head.append(best)
            del left[best]
    return {key: i for i, key in enumerate(head + tail)}


_KEYS = st.lists(st.sampled_from("abcdefghijklmnop"), unique=True, max_size=12)


@given(data=st.data(), keys=_KEYS)
@settings(max_examples=400, deadline=None)
def test_the_order_that_breaks_cycles_is_the_definitions(data: st.DataObject, keys: list[str]) -> None:
    pairs = data.draw(st.lists(st.tuples(st.sampled_from(keys), st.sampled_from(keys)), max_size=40)) if keys else []
    weights = {(a, b): data.draw(st.integers(1, 4)) for a, b in pairs if a != b}
    assert graphs._feedback_order(keys, weights) == _feedback_order_as_written(keys, weights)


@given(data=st.data())
@settings(max_examples=300, deadline=None)
def test_crossings_are_counted_as_every_pair_compared(data: st.DataObject) -> None:
    left = data.draw(st.lists(st.sampled_from("abcdef"), unique=True, min_size=1))
    right = data.draw(st.lists(st.sampled_from("uvwxyz"), unique=True, min_size=1))
    links = data.draw(st.lists(st.tuples(st.sampled_from(left), st.sampled_from(right)), max_size=30))
    position = {key: i for column in (left, right) for i, key in enumerate(column)}
    pairs = [(position[a], position[b]) for a, b in links]
    every_pair = sum(1 for i, (a1, b1) in enumerate(pairs) for a2, b2 in pairs[i + 1 :] if (a1 - a2) * (b1 - b2) < 0)
    assert graphs._crossings([left, right], links, position) == every_pair


def test_a_dense_graph_draws_each_nodes_main_leads_and_lists_them_all() -> None:
    names = "a b c d e"
    nodes = [graphs.Node(n, f"Setting {n}", f"{n}.html") for n in names.split()]
    edges = [graphs.Edge(a, b, 1 + (ord(b) - ord(a)) % 5, "") for a, b in itertools.permutations(names.split(), 2)]
    shown = graphs.main_leads(nodes, edges)
    assert len(shown) == graphs.MOST * len(nodes)
    assert all(e.weight >= 2 for e in shown)  # the lightest lead of each is left out of the drawing
    page = str(graphs.layered("k", "T", nodes, edges, ""))
    listed = re.search(r'<ul class="graph-list">(.*?)</ul>', page, re.S)
    assert listed is not None and listed.group(1).count("<a ") == len(nodes) + len(edges)
    assert f"({len(shown)} of {len(edges)})" in page


def test_a_long_label_wraps_and_is_never_cut() -> None:
    label = "Professional Soldier Subsetting of the Northern Marches"
    assert graphs.wrap(label) == ["Professional Soldier", "Subsetting of the", "Northern Marches"]
    page = str(graphs.layered("k", "T", [graphs.Node("x", label, "x.html")], [], ""))
    assert "…" not in page and ">Northern Marches</tspan>" in page


def test_kinds_page_shows_every_kinds_fields_and_links_its_schema(site: dict[str, str], mini: Compilation) -> None:
    page = site["mini/kinds.html"]
    assert "<tr><td><code>time</code></td><td><code>years</code></td><td>yes</td>" in page
    assert '<a href="lifepath.schema.json">JSON Schema</a>' in page
    ruleset = mini.rulesets[0]
    assert json.loads(site["mini/lifepath.schema.json"]) == schema_of(ruleset.kinds["lifepath"])


def test_the_language_reference_is_a_page(site: dict[str, str]) -> None:
    page = site["language.html"]
    assert '<h1 id="the-rules-language">The rules language</h1>' in page
    assert '<nav class="toc" aria-label="Sections of the language reference">' in page


# ---------------------------------------------------------------- descriptions


@pytest.mark.parametrize(
    ("source", "wanted", "unwanted"),
    [
        ("Deals **double** damage.", "<p>Deals <strong>double</strong> damage.</p>", None),
        ("<script>alert(1)</script> and <b>bold</b>", "&lt;script&gt;alert(1)&lt;/script&gt;", "<script>"),
        ("[click](javascript:alert(1))", "[click](javascript:alert(1))", 'href="javascript'),
        ("[data](data:text/html;base64,AAAA)", None, 'href="data:'),
        ("![pic](https://example.org/x.png)", None, "<img"),
        ("[page](https://example.org/a) and [there](#top)", 'href="https://example.org/a"', None),
        ("# Heading", "<h4>Heading</h4>", "<h1>"),
    ],
)
def test_descriptions_are_markdown_without_raw_html_or_unsafe_links(
    source: str, wanted: str | None, unwanted: str | None
) -> None:
    shown = str(markdown(source, heading_offset=3))
    if wanted:
        assert wanted in shown
    if unwanted:
        assert unwanted not in shown


def test_descriptions_show_on_the_entity_and_in_its_preview(
    compile_rules: Callable[..., Compilation],
) -> None:
    compilation = compile_rules(
        {
            "a.rules": """
            skill Forging { root: Power  type: craftsman  tools: yes
              description: "Makes *tools* and weapons.\\n\\nSecond paragraph <b>here</b>." }
            """
        }
    )
    assert compilation.ok, [d.message for d in compilation.diagnostics]
    files = site_of(compilation)
    page = files["demo/skill.html"]
    assert "<p>Makes <em>tools</em> and weapons.</p>" in page
    assert "Second paragraph &lt;b&gt;here&lt;/b&gt;." in page
    preview = files["previews/demo/skill.js"]
    assert (
        "Makes <em>tools</em> and weapons." in json.loads(preview[preview.index("{") : preview.rindex(")")])["forging"]
    )
    assert "Second paragraph" not in preview
    assert "Forging" in labels_found(search_index(files), "weapons")
    # a word only in the description is posted with weight 0, so the browser can say where it matched
    index = search_index(files)
    entries = index["e"]
    assert isinstance(entries, list)
    assert {entries[e][0]: w for e, w in postings(index, "weapons")}["Forging"] == DESCRIPTION == 0
    assert {entries[e][0]: w for e, w in postings(index, "forging")}["Forging"] == NAME


def test_a_word_only_in_a_description_is_posted_with_weight_0() -> None:
    index = SearchIndex()
    index.add_ruleset("demo", "Demo")
    index.add(
        "demo",
        "trait",
        "Traits",
        "Stubborn",
        "demo/trait.html",
        "stubborn",
        "",
        [("Stubborn", NAME, ""), ("He argues against his Beliefs.", DESCRIPTION, "")],
    )
    index.add(
        "demo",
        "trait",
        "Traits",
        "Argumentative",
        "demo/trait.html",
        "argumentative",
        "",
        [("Argumentative", NAME, ""), ("Beliefs", OTHER, "Note"), ("Beliefs, stubborn beliefs.", DESCRIPTION, "")],
    )
    files = index.files()
    data = search_index(files)
    assert postings(data, "argues") == [(0, DESCRIPTION)]
    assert postings(data, "stubborn") == [(0, NAME), (1, DESCRIPTION)]
    assert postings(data, "beliefs") == [(0, DESCRIPTION), (1, OTHER)]  # the best weight of an entry wins
    # entry 0, weight 0 is the number 0: written "0", and decoded as site.js decodes it
    assert data["p"][data["t"].index("argues")] == "0"
    # a word found in a field besides the name says which: the field's number in "f", after a "."
    assert data["p"][data["t"].index("beliefs")] == "0,5.0" and data["f"] == ["Note"]


def test_an_unchanged_inherited_entry_is_indexed_once_and_says_where_else(rules_site: dict[str, str]) -> None:
    index = search_index(rules_site)
    entries, kinds, rulesets = index["e"], index["k"], index["r"]
    assert isinstance(entries, list) and isinstance(kinds, list) and isinstance(rulesets, list)
    where = [(e[0], rulesets[kinds[e[1]][0]][0]) for e in entries]
    assert where.count(("Alchemy", "burning_wheel")) == 1 and ("Alchemy", "fenmark") not in where
    fenmark = [r[0] for r in rulesets].index("fenmark")
    rows = index["a"]
    assert isinstance(rows, list)
    also = {entries[row[0]][0]: row[1:] for row in rows}
    assert also["Alchemy"] == [fenmark]
    # what Fenmark patches is listed in both; what it removes is not "also in Fenmark"
    assert ("Sorcery", "burning_wheel") in where and ("Sorcery", "fenmark") in where and "Sorcery" not in also
    assert "Arcane Kindness" not in also
    assert ("Fen Beasts", "fenmark") not in where  # a kind's name is not an entry
    assert sum(1 for _, r in where if r == "fenmark") >= 5  # what Fenmark adds or changes is its own
    assert "Giant Eel" in [label for label, r in where if r == "fenmark"]


# ---------------------------------------------------------------- search


def test_search_index_is_a_script_loaded_on_first_use(site: dict[str, str]) -> None:
    index = search_index(site)
    assert "fetch(" not in site["assets/site.js"]
    for name, text in site.items():
        if name.endswith(".html"):
            assert "search-index.js" not in "".join(parse(text).scripts), f"{name} loads the index up front"
    entries, pages = index["e"], index["g"]
    assert isinstance(entries, list) and isinstance(pages, list)
    farmer = next(e for e in entries if e[0] == "Farmer")
    assert (pages[farmer[2]], farmer[3], farmer[4]) == ("mini/setting.village.html", "farmer", "Village")


def test_search_finds_every_word_of_every_field(rules_site: dict[str, str], rules: Compilation) -> None:
    index = search_index(rules_site)
    ruleset = next(r for r in rules.rulesets if r.id == "burning_wheel")
    teaching = {  # lifepaths that teach Sorcery, or require it
        e.name
        for e in ruleset.entities["lifepath"].values()
        if any(r.target == "sorcery" for value in e.fields.values() for r in html.ir.refs_in(value))
    }
    assert len(teaching) >= 6
    found = labels_found(index, "sorcery")
    assert teaching <= {label.split(" (")[0] for label in found}
    # names weigh more than the other fields
    entries = index["e"]
    assert isinstance(entries, list)
    weights = {entries[e][0]: w for e, w in postings(index, "sorcery")}
    assert weights["Sorcery"] == 3 and weights["Sorcerer"] == 1
    # words of tables' cells and of notes are found too
    assert "Humanoid Hit Location" in labels_found(index, "location")
    assert "Target Zones" in labels_found(index, "location")  # by its alias, "Hit Location"
    assert "Damage Table" in labels_found(index, "lightning")


def test_browser_and_build_fold_words_alike() -> None:
    assert words("Épée-Master's  Ünïcode 2d6") == ["epee", "master", "s", "unicode", "2d6"]
    assert fold("ÀÉÎ") == "aei"
    script = (Path(html.__file__).parent / "templates" / "site.js").read_text(encoding="utf-8")
    assert 'normalize("NFKD").replace(/\\p{M}/gu, "").toLowerCase()' in script
    assert "match(/[\\p{L}\\p{N}]+/gu)" in script


# ---------------------------------------------------------------- size: linear in what the sources hold


def declared_kinds_site(folder: Path, kinds: int, stocks: int = 0) -> dict[str, str]:
    """The reference of a ruleset declaring `kinds` kinds of one entry each (and `stocks` stocks)."""
    text = "".join(f'kind k{i} "Kind {i}" {{ weight: int }}\nk{i} e{i} {{ weight: {i} }}\n' for i in range(kinds))
    text += "".join(f"stock s{i} {{ }}\nsetting z{i} {{ stock: s{i} }}\n" for i in range(stocks))
    compilation = compile_paths([write_ruleset(folder / "demo", {"a.rules": text})])
    assert compilation.ok, compilation.diagnostics[:3]
    return site_of(compilation)


def html_bytes(site: dict[str, str]) -> int:
    return sum(len(text.encode()) for name, text in site.items() if name.endswith(".html"))


def test_the_reference_grows_linearly_with_declared_kinds(tmp_path: Path) -> None:
    """Issue 17: a 132 KB ruleset wrote 210 MB of reference: every page linked every kind."""
    small = declared_kinds_site(tmp_path / "small", 60)
    large = declared_kinds_site(tmp_path / "large", 120)
    assert html_bytes(large) / html_bytes(small) < 2.2
    page = parse(large["demo/k7.html"])
    assert "index.html#contents" in page.links and "k8.html" not in page.links  # the contents link every kind
    contents = parse(large["demo/index.html"])
    assert "contents" in contents.ids and {f"k{i}.html" for i in range(120)} <= set(contents.links)
    assert check_links(large)


def test_with_few_kinds_every_page_links_each_kind(site: dict[str, str]) -> None:
    page = parse(site["mini/skill.html"])
    assert {"skill.html", "trait.html", "kinds.html"} <= set(page.links)


def test_the_reference_grows_linearly_with_stocks_and_kinds(tmp_path: Path) -> None:
    """A page per stock and per setting: with many kinds, each must not carry a link to every kind."""
    small = declared_kinds_site(tmp_path / "small", 50, stocks=50)
    large = declared_kinds_site(tmp_path / "large", 100, stocks=100)
    assert html_bytes(large) / html_bytes(small) < 2.2


def test_counting_by_stock_is_one_pass(tmp_path: Path) -> None:
    """The contents' table of stocks counted every kind once per stock: stocks x entries."""
    from .test_hostile import calls

    def ruleset(n: int) -> CompiledRuleset:
        text = "".join(f"stock s{i} {{ }}\nsetting z{i} {{ stock: s{i} }}\n" for i in range(n))
        text += "".join(f"skill k{i} {{ root: Will  type: social  tools: no  stock: s{i} }}\n" for i in range(n))
        compilation = compile_paths([write_ruleset(tmp_path / str(n) / "demo", {"a.rules": text})])
        assert compilation.ok, compilation.diagnostics[:3]
        return compilation.rulesets[0]

    rows = html.by_stock(ruleset(3))
    assert [(r.id, r.settings, r.skills) for r in rows] == [("s0", 1, 1), ("s1", 1, 1), ("s2", 1, 1)]
    small, large = ruleset(300), ruleset(600)
    assert calls(lambda: html.by_stock(large)) / calls(lambda: html.by_stock(small)) < 2.3


def test_every_markdown_field_is_rendered_as_markdown_with_the_descriptions_safety(tmp_path: Path) -> None:
    """Issue 17: `markdown` fields other than `description` were shown as raw text."""
    text = (
        'kind gadget "Gadgets" {\n  lore: markdown\n}\n'
        'gadget g "Gizmo" {\n  lore: "**Bold** lore <script>alert(1)</script> [x](javascript:alert(1)) [ok](#top)"\n}\n'
        'table t { columns: x(markdown)\n  1 -> "*cell*"\n}\n'
    )
    compilation = compile_paths([write_ruleset(tmp_path / "demo", {"a.rules": text})])
    assert compilation.ok, compilation.diagnostics[:3]
    site = site_of(compilation)
    page = next(text for name, text in site.items() if name.startswith("demo/gadget") and "Gizmo" in text)
    assert "<strong>Bold</strong> lore" in page
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert 'href="javascript' not in page and '<a href="#top">ok</a>' in page
    assert "<em>cell</em>" in site["demo/table.html"]


def test_no_key_header_where_the_key_has_a_name_or_a_roll(rules_site: dict[str, str]) -> None:
    tables = [text for name, text in rules_site.items() if name.endswith(".html") and "/table" in name]
    assert tables and not any('<th scope="col">Key</th>' in text for text in tables)
    hit = rules_site["witcher/table.html"].split('id="humanoid_hit_location"')[1].split("</thead>")[0]
    assert '<th scope="col">1d10</th><th scope="col">Chance</th>' in hit  # the roll names a rolled key
    fumbles = rules_site["witcher/table.html"].split('id="fumbles"')[1].split("</thead>")[0]
    assert '<th scope="col" class="axes">Roll \u2572 Roll type</th>' in fumbles  # declared keys by their names
    # a key the rules do not name: no made-up header over the row names
    armour = rules_site["witcher/table.html"].split('id="layering_ev"')[1].split("</thead>")[0]
    assert '<thead><tr><td class="corner"></td><th scope="col">Ev</th>' in armour


def test_every_table_row_has_an_id_and_a_permalink(rules_site: dict[str, str]) -> None:
    rows = 0
    for name, text in rules_site.items():
        if not name.endswith(".html"):
            continue
        for table in re.findall(r'<table class="rows">.*?</table>', text, re.S):
            for row in re.findall(r"<tbody>(.*?)</tbody>", table, re.S)[0].split("\n"):
                if not row.startswith("<tr"):
                    continue
                found = re.match(r'<tr[^>]* id="([^"]+)"', row)
                assert found is not None, (name, row[:200])
                assert f'<a class="row-link" href="#{found.group(1)}" aria-label="Link to the row ' in row
                rows += 1
    assert rows > 500
    page = rules_site["witcher/table.html"]
    assert '<tr id="humanoid_hit_location--1"' in page and '<tr id="humanoid_hit_location--2-4"' in page
    assert '<tr id="fumbles--6--row"><th scope="row">6 <a class="row-link" href="#fumbles--6--row"' in page  # a grid's
    assert '<td class="known" id="fumbles--6--reflex-melee"' in page
    # a preview shows over another page: its rows carry no ids, and no links that would point into that page
    previews = [text for name, text in rules_site.items() if name.startswith("previews/")]
    assert any('<table class=\\"rows\\">' in text for text in previews)
    assert not any("row-link" in text or 'id=\\"humanoid_hit_location--' in text for text in previews)


def test_no_ids_or_quotes_in_what_a_player_reads(rules_site: dict[str, str]) -> None:
    for name, text in rules_site.items():
        if not name.endswith(".html") or name.endswith(("language.html", "kinds.html")):  # pages for authors
            continue
        read = re.sub(r'<details class="authors">.*?</details>', "", text, flags=re.S)
        for source in ("great_bow", "prefixed id", "(first_is_free)", ">call_on<", "&#34;Target&#39;s", "floor("):
            assert source not in read, (name, source)
    spells = "".join(t for n, t in rules_site.items() if n.startswith("burning_wheel/spell."))  # split in pages
    assert '<td data-label="Obstacle" data-sort="">Target&#39;s Forte</td>' in spells  # an obstacle in words, unquoted
    base = '<a href="../burning_wheel/index.html">Burning Wheel Gold (Revised)</a>'  # a base by its title
    assert f"Builds on {base}" in rules_site["fenmark/index.html"]
    changed = rules_site["fenmark/changes.html"]
    assert f"builds on {base}" in changed and "<small>(fen beast)</small>" in changed
    assert "as Burning Wheel Gold (Revised) has it" in changed and "burning_wheel has it" not in changed


def test_the_authoring_view_is_one_click_away(rules_site: dict[str, str]) -> None:
    page = rules_site["witcher/mechanic.html"]
    authors = re.search(r'<details class="authors"><summary>For authors</summary>(.*?)</details>', page, re.S)
    assert authors is not None
    assert "Id <code>mechanic:witcher_d10</code>, written in <code>criticals.rules:3</code>" in authors.group(1)
    assert json.loads(authors.group(1).split("<pre>")[1].split("</pre>")[0])["explode_on"] == 10
    # and the odds of its exploding, fumbling d10, exact
    assert "<h3>Chance of each result <small>0 or more</small></h3>" in page
    assert '<tr><th scope="row">13</th><td title="1/100">1%</td></tr>' in page


def test_the_search_index_comes_in_pieces_that_join_to_one(rules: Compilation, rules_site: dict[str, str]) -> None:
    """rules/'s index is cut where a ruleset begins and, past PIECE entries, where a page begins; joined, as
    site.js joins them, the pieces are the index one piece a ruleset gives (the same entries, words, weights
    and fields, numbered alike)."""
    head = json.loads(rules_site["search-index.js"].removeprefix("window.SEARCH_INDEX = ").rstrip(";\n"))
    assert head["n"] > len(head["r"])  # Burning Wheel's entries are more than one piece's
    joined = search_index(rules_site)
    for n in range(head["n"]):
        piece = json.loads(rules_site[f"search/{n}.js"].split(", ", 1)[1].removesuffix(");\n"))
        rulesets = {head["k"][e[1]][0] for e in piece["e"]}
        assert len(rulesets) == 1, n  # one ruleset a piece
        assert len(piece["e"]) <= search.PIECE + 400, n  # cut at the first page past PIECE (a page is short)
    pages = [e[2] for e in joined["e"]]
    assert pages == sorted(pages)  # a page's entries in one piece, pages in order
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(search, "PIECE", 10**9)
        whole = html.render(rules.rulesets)
    assert json.loads(whole["search-index.js"].split("= ", 1)[1].rstrip(";\n"))["n"] == len(head["r"])
    assert search_index(whole) == joined


def test_a_search_memo_takes_only_pieces_as_it_keeps_them() -> None:
    memo = search.SearchMemo()
    aside = digests.Aside(["window.rulesdslSearchPiece(0, {});\n"])
    for data in ([["key", 1]], [["key"]], {"key": 0}, [[1, 0]], "pieces"):
        assert not memo.load(data, aside) and memo.pieces == {}, data
    assert memo.load([["key", 0]], aside) and memo.pieces == {"key": aside.texts[0]}
