"""The reference reads as rules, not source: requirements in words, formulas in the book's notation, exact
odds for exploding dice and pools (issue 24)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from fractions import Fraction
from html.parser import HTMLParser

import pytest
from markupsafe import Markup

from rulesdsl.compile import ir
from rulesdsl.compile.pipeline import Compilation, CompiledRuleset, compile_paths
from rulesdsl.language import fieldtypes as t
from rulesdsl.runtime.core import Dice, DiceTerm, TotalMechanic
from rulesdsl.targets.html import site as html
from rulesdsl.targets.html.values import condition_in_words, condition_words, total_odds

from .conftest import ROOT
from .test_emit_html import site_of


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def plain(markup: str) -> str:
    """What a reader reads of some HTML: its text, the tags gone (and nothing put in their place)."""
    parser = _Text()
    parser.feed(markup)
    return "".join(parser.parts)


@pytest.fixture(scope="module")
def burning_wheel() -> CompiledRuleset:
    compilation = compile_paths([ROOT / "rules" / "burning_wheel"])
    assert not compilation.diagnostics
    return compilation.rulesets[0]


@pytest.fixture(scope="module")
def bw_site(burning_wheel: CompiledRuleset) -> html.RulesetSite:
    return html.RulesetSite(burning_wheel, has_language=False)


def shown(site: html.RulesetSite, lifepath: str, field: str) -> str:
    """What a reader reads of a lifepath's requirement or restriction: its words, links and tags gone."""
    entity = site.ruleset.entities["lifepath"][lifepath]
    value = entity.fields[field]
    assert isinstance(value, ir.REQUIREMENT_TYPES)
    return " ".join(plain(site.values.requirement(value)).split())


@pytest.mark.parametrize(
    ("lifepath", "field", "words"),
    [
        ("city_taskmaster", "restrictions", "not as the second lifepath"),  # position != 2
        ("peasant_elder", "requires", "older than 50"),  # age > 50
        ("thinker", "restrictions", "aged 36 or older"),  # age >= 36
        ("bastard", "restrictions", "as the second lifepath and taken at most once"),  # position = 2, times_taken
        ("city_urchin", "restrictions", "as the second or third lifepath"),  # position in 2..3
        ("alewife", "restrictions", "a female character"),  # gender = female
        ("elf_wilderlands_elder", "requires", "aged 600 or older when taken or the GM's permission"),
        ("goblin", "restrictions", "not Born Great"),
    ],
)
def test_requirements_in_the_rules_read_as_words(
    bw_site: html.RulesetSite, lifepath: str, field: str, words: str
) -> None:
    assert shown(bw_site, lifepath, field) == words


def test_longer_requirements_keep_their_words(bw_site: html.RulesetSite) -> None:
    assert "aged 40 to 49 when taken" in shown(bw_site, "crazy_old_sailor", "requires")  # age_at_entry in 40..49
    mate = shown(bw_site, "officer_s_mate", "restrictions")  # position = 2 or (position = 3 and previous = ...)
    assert "as the second lifepath" in mate and "as the third lifepath" in mate and "just before" in mate


def test_no_requirement_in_the_rules_reads_as_source(bw_site: html.RulesetSite) -> None:
    # every requirement form the rules use: no comparison sign, no id, no condition's name
    for entity in bw_site.ruleset.entities["lifepath"].values():
        for field in ("requires", "restrictions"):
            if isinstance(entity.fields.get(field), ir.REQUIREMENT_TYPES):
                words = shown(bw_site, entity.id, field)
                for source in ("=", "<", ">", "_", "position", "age_at_entry", "times_taken", "lifepaths <"):
                    assert source not in words, (entity.id, field, words)


@pytest.mark.parametrize(
    ("subject", "op", "value", "words"),
    [
        ("position", "=", 2, "as the second lifepath"),
        ("position", "!=", 2, "not as the second lifepath"),
        ("position", "<=", 3, "as the third lifepath or earlier"),
        ("position", ">=", 12, "as the 12th lifepath or later"),
        ("position", "<", 4, "before the fourth lifepath"),
        ("position", ">", 1, "after the first lifepath"),
        ("age", ">", 50, "older than 50"),
        ("age", "<", 20, "younger than 20"),
        ("age", "<=", 20, "aged 20 or younger"),
        ("age", "=", 30, "aged exactly 30"),
        ("age_at_entry", ">=", 600, "aged 600 or older when taken"),
        ("lifepaths", "<=", 3, "at most 3 lifepaths in all"),
        ("lifepaths", ">", 1, "more than 1 lifepath in all"),
        ("times_taken", "<=", 1, "taken at most once"),
        ("times_taken", ">=", 2, "taken at least twice"),
        ("times_taken", "<", 3, "taken fewer than 3 times"),
        ("gender", "=", "female", "a female character"),
        ("gender", "!=", "other", "not an other character"),
    ],
)
def test_each_condition_in_words(subject: str, op: str, value: int | str, words: str) -> None:
    assert condition_words(subject, op, value) == words


def test_ranges_of_conditions_in_words() -> None:
    assert condition_in_words("position", 2, 3) == "as the second or third lifepath"
    assert condition_in_words("position", 2, 5) == "as the second to fifth lifepath"
    assert condition_in_words("position", 3, None) == "as the third lifepath or later"
    assert condition_in_words("age_at_entry", 40, 49) == "aged 40 to 49 when taken"
    assert condition_in_words("lifepaths", None, 4) == "at most 4 lifepaths in all"
    assert condition_in_words("times_taken", 2, 2) == "taken exactly twice"


# ---------------------------------------------------------------- formulas


def formula_words(site: html.RulesetSite, kind: str, id_: str, field: str) -> str:
    value = site.ruleset.entities[kind][id_].fields[field]
    assert isinstance(value, ir.Formula)
    return plain(site.values.formula(value))


def test_formulas_of_the_rules_in_the_books_notation(bw_site: html.RulesetSite) -> None:
    # circles: max(1, floor(WIL / 2)) + min(1, floor(RPC / 50)), the attributes as the book abbreviates them
    assert (
        formula_words(bw_site, "attribute", "circles", "formula")
        == "max(1, \u230aWIL \u00f7 2\u230b) + min(1, \u230aRPC \u00f7 50\u230b)"
    )
    assert formula_words(bw_site, "attribute", "hesitation", "formula") == "10 \u2212 WIL"
    # an obstacle written as quoted text: no quotes
    assert formula_words(bw_site, "spell", "delirium_tremens", "obstacle") == "Target's Forte"


def test_formulas_bracket_only_where_the_sums_need_it(compile_rules: Callable[..., Compilation]) -> None:
    compilation = compile_rules(
        {
            "a.rules": """
            attribute will "Will" { abbr: WIL  group: mind  range: 1..10 }
            formula f1 "F1" { params: a, b, c  formula: a - (b - c) }
            formula f2 "F2" { params: a, b, c  formula: (a + b) * c }
            formula f3 "F3" { params: a, b  formula: -(a + b) + a / (b * 2) }
            formula f4 "F4" {
              params: hit_points
              formula: if(hit_points >= 3 and WIL != 2, ceil(hit_points / 2), abs(1 - will))
            }
            formula f5 "F5" { params: wounded(bool)  formula: f6(wounded) + f6(no) }
            formula f6 "F6" { params: w(bool)  formula: if(w, 1, 0) }
            formula f7 "F7" { params: n  formula: (n - 1)d6 + a_b(n) }
            formula a_b "A B" { params: x  formula: x <= 2 or not x > 5 }
            """
        }
    )
    assert not compilation.diagnostics
    site = html.RulesetSite(compilation.rulesets[0], has_language=False)
    expected = {
        "f1": "a \u2212 (b \u2212 c)",
        "f2": "(a + b) \u00d7 c",
        "f3": "\u2212(a + b) + a \u00f7 (b \u00d7 2)",
        "f4": "if hit points \u2265 3 and WIL \u2260 2 then \u2308hit points \u00f7 2\u2309 else |1 \u2212 Will|",
        "f5": "F6(wounded) + F6(no)",
        "f7": "(n \u2212 1)d6 + A B(n)",
        "a_b": "x \u2264 2 or not x > 5",
    }
    for id_, words in expected.items():
        assert formula_words(site, "formula", id_, "formula") == words, id_
    # parameters are italic, named things link
    f4 = str(site.values.formula(_formula(site, "f4")))
    assert "<var>hit points</var>" in f4 and '<a href="@attribute:will@">WIL</a>' in f4
    params = site.ruleset.entities["formula"]["f5"].fields["params"]
    assert plain(site.values.value(t.ColumnsType(params=True), params)) == "wounded (yes or no)"


def _formula(site: html.RulesetSite, id_: str) -> ir.Formula:
    value = site.ruleset.entities["formula"][id_].fields["formula"]
    assert isinstance(value, ir.Formula)
    return value


# ---------------------------------------------------------------- odds


def test_an_exploding_fumbling_d10_has_exact_odds() -> None:
    # the Witcher's: a 10 rolls again and adds (10s chain), a 1 rolls again and subtracts, never below 0
    witcher = TotalMechanic("d10", "d10", Dice("1d10", (DiceTerm(1, 10),)), explode_on=10, fumble_on=1, floor=0)
    shown = total_odds(witcher)
    assert shown is not None
    span, lines = shown
    assert span == "0 or more"
    chances = dict(lines)
    assert chances["0"] == Fraction(1, 10)  # every fumble, floored
    assert "1" not in chances and "10" not in chances  # a 1 fumbles, a 10 explodes
    assert chances["7"] == Fraction(1, 10) and chances["13"] == Fraction(1, 100) and chances["27"] == Fraction(1, 1000)
    assert chances["31 or more"] == Fraction(1, 1000)
    assert sum(chances.values()) == 1
    # the same chances as the runtime's own reading of every sequence of faces
    exact: dict[int, Fraction] = {}
    for length in range(1, 4):
        for faces in itertools.product(range(1, 11), repeat=length):
            stops = (length == 1 and faces[0] not in (1, 10)) or (length > 1 and faces[-1] != 10)
            chained = all(f == 10 for f in faces[1:-1]) and (length == 1 or faces[0] in (1, 10))
            if stops and chained:
                total = witcher.total(faces)
                exact[total] = exact.get(total, Fraction(0)) + Fraction(1, 10**length)
    for total, p in exact.items():  # every face sequence that makes 2 to 29 has three rolls or fewer
        if total != 0:  # a fumble's chain of any length ends at 0
            assert chances[str(total)] == p, total
    assert len(exact) == 1 + 8 + 9 + 9


def test_pools_show_at_least_k_successes_beside_exact_counts(compile_rules: Callable[..., Compilation]) -> None:
    compilation = compile_rules({"a.rules": 'mechanic pool "Pool" { style: pool  die: 1d6 }\n'})
    assert not compilation.diagnostics
    page = site_of(compilation)["demo/mechanic.html"]
    two = page.split('<div class="pool" data-dice="2">')[1].split('<div class="pool"')[0]
    exact, at_least = two.split('<table class="odds at-least">')
    assert "exactly this many successes" in exact and "at least this many successes" in at_least
    # two d6 against 4: each succeeds half the time; at least one success is 3/4, both 1/4
    row = at_least.split('<tr><th scope="row">4</th>')[1].split("</tr>")[0]
    assert row == "<td>75%</td><td>25%</td>"
    assert '<th scope="col">1+</th><th scope="col">2+</th>' in at_least


def test_keep_and_exploding_dice_values_show_exact_odds(compile_rules: Callable[..., Compilation]) -> None:
    compilation = compile_rules(
        {
            "a.rules": """
            kind attack "Attacks" { damage: dice }
            attack best "Best" { damage: 4d6kh3 }
            attack wild "Wild" { damage: 1d6! }
            """
        }
    )
    assert not compilation.diagnostics
    site = html.RulesetSite(compilation.rulesets[0], has_language=False)
    best = str(site.fields(site.ruleset.entities["attack"]["best"], None)[1]["damage"])
    assert "<small>3-18</small>" in best and 'title="1/1296">0.077%' in best  # 3: all four dice show 1
    wild = str(site.fields(site.ruleset.entities["attack"]["wild"], None)[1]["damage"])
    assert "<small>1 or more</small>" in wild and "or more</th>" in wild
    assert isinstance(site.fields(site.ruleset.entities["attack"]["wild"], None)[1]["damage"], Markup)
