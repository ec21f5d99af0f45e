"""What a kind's list offers to filter and sort by, derived from its declaration (facets.py, site.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rulesdsl.compile.pipeline import Compilation, CompiledRuleset, compile_paths
from rulesdsl.targets.html import facets as f
from rulesdsl.targets.html.site import RulesetSite

from .conftest import ROOT


@pytest.fixture(scope="module")
def rulesets() -> dict[str, CompiledRuleset]:
    return {r.id: r for r in compile_paths([ROOT / "rules"]).rulesets}


def _facets(ruleset: CompiledRuleset, kind: str) -> dict[str, f.Facet]:
    return {facet.field: facet for facet in RulesetSite(ruleset, False).facets(kind)}


def _counts(ruleset: CompiledRuleset, kind: str, facet: f.Facet) -> dict[str, int]:
    """How many entries have each option, read back from what the page carries (data-f), as site.js does."""
    site = RulesetSite(ruleset, False)
    found = site.facets(kind)
    at = [x for x in found if not x.is_text].index(facet)
    counts = dict.fromkeys((o.key for o in facet.options), 0)
    for entity in ruleset.entities[kind].values():
        part = f.entry_data(ruleset.kinds[kind], entity, found, site.values.label).split(",")[at]
        for i in part.split(".") if part else []:
            counts[facet.options[int(i)].key] += 1
    return counts


def test_spells_filter_by_obstacle_element_and_more_in_number_order(rulesets: dict[str, CompiledRuleset]) -> None:
    spells = rulesets["burning_wheel"]
    found = _facets(spells, "spell")
    assert list(found) == [
        "obstacle", "origin", "duration", "area", "element", "impetus", "resources", "length", "range"
    ]  # fmt: skip
    obstacle = found["obstacle"]
    keys = [o.key for o in obstacle.options]
    assert keys[:11] == ["1", "2", "2^", "3", "3^", "4", "4^", "5", "5^", "6", "6^"]  # numbers first, ^ after
    assert "Target's Forte" in keys  # quoted obstacles without their quotes
    counts = _counts(spells, "spell", obstacle)
    assert (counts["3"], counts["3^"]) == (11, 14)  # the "spells at Ob 3"
    assert _counts(spells, "spell", found["element"])["fire"] == 7  # a list: each item is a value
    assert [o.key for o in found["element"].options][:3] == ["anima", "arcana", "air"]  # declared order
    assert "actions" not in found  # 28 different numbers: it sorts instead


def test_a_homebrew_kind_gets_facets_and_a_reference_its_labels(rulesets: dict[str, CompiledRuleset]) -> None:
    found = _facets(rulesets["fenmark"], "fen_beast")
    assert [o.key for o in found["habitat"].options] == ["reeds", "open_water", "mud"]
    assert [o.label for o in found["habitat"].options][1] == "open water"
    assert [o.key for o in found["danger"].options] == ["2", "3", "4"]
    skills = found["hunted_with"]
    assert [o.label for o in skills.options] == ["Fishing", "Hunting", "Trapper"]


def test_columns_sort_by_number_or_word(rulesets: dict[str, CompiledRuleset]) -> None:
    site = RulesetSite(rulesets["burning_wheel"], False)
    sorts = dict(site.sorts("spell", ["obstacle", "actions", "element", "resources"]) or [])
    assert sorts == {
        "name": "text",
        "obstacle": "number",
        "actions": "number",
        "element": "text",
        "resources": "number",
    }
    spell = rulesets["burning_wheel"].entities["spell"]["arcane_kindness"]
    obstacle = site.ruleset.kinds["spell"].fields["obstacle"].type
    assert f.sort_number(obstacle, spell.fields["obstacle"]) == 4.5  # 4^: after 4, before 5
    assert site.sorts("table", None) is None  # cards do not sort


def test_a_field_with_many_values_gets_a_text_filter_and_one_value_none(
    compile_rules: Callable[..., Compilation], tmp_path: Path
) -> None:
    beasts = "\n".join(
        f'beast b{n} "Beast {n}" {{ lair: cave_{n}  size: {n}  wild: yes  kin: one }}' for n in range(40)
    )
    compilation = compile_rules(
        {
            "beasts.rules": 'kind beast "Beasts" {\n lair: word\n size: int\n wild: bool\n kin: one of one, two\n}\n'
            + beasts
        }
    )
    assert not compilation.diagnostics, compilation.diagnostics
    found = _facets(compilation.rulesets[0], "beast")
    assert found["lair"].is_text  # 40 words: typed, not listed
    assert "size" not in found  # 40 numbers: sorted, not filtered
    assert "wild" not in found and "kin" not in found  # one value: nothing to choose
    site = RulesetSite(compilation.rulesets[0], False)
    entity = compilation.rulesets[0].entities["beast"]["b7"]
    assert f.entry_texts(site.ruleset.kinds["beast"], entity, list(found.values()), site.values.label) == {
        "lair": "cave 7"
    }


def test_a_field_named_like_a_list_parameter_gets_its_own(compile_rules: Callable[..., Compilation]) -> None:
    compilation = compile_rules(
        {"x.rules": 'kind thing "Things" {\n sort: one of a, b\n}\nthing x "X" { sort: a }\nthing y "Y" { sort: b }\n'}
    )
    assert not compilation.diagnostics, compilation.diagnostics
    assert _facets(compilation.rulesets[0], "thing")["sort"].param == "sort_"


def test_an_unknown_value_is_no_option(rulesets: dict[str, CompiledRuleset]) -> None:
    found = _facets(rulesets["witcher"], "area_attack")  # damage: one entry's is `unknown`
    assert [o.key for o in found["hits"].options] == ["every_location", "several_locations"]
    assert "damage" not in found  # one known value left: nothing to choose
