"""Stage 3 and 4: schema validation and the semantic checks, each reported at its source position."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from rulesdsl.compile.ir import Ref
from rulesdsl.compile.jsonform import schema_of
from rulesdsl.compile.pipeline import Compilation, prelude

from .conftest import FIXTURES, messages, only

LIFEPATH_BASICS = """
stock human { }
setting peasant "Peasant" { stock: human }
"""


def test_every_kind_schema_is_valid_draft_2020_12() -> None:
    kinds = prelude()
    assert {"ruleset", "table", "attribute", "formula", "mechanic", "stock", "setting", "lifepath"} <= set(kinds)
    assert {"skill", "trait", "spell"} <= set(kinds)
    for kind in kinds.values():
        schema = schema_of(kind)
        Draft202012Validator.check_schema(schema)
        assert schema["additionalProperties"] is False
        assert set(schema["properties"]) == {"kind", "id", "name", *kind.fields, *(["rows"] if kind.has_rows else [])}


def test_the_schema_and_the_documents_agree_on_every_kind(compile_rules: Callable[..., Compilation]) -> None:
    """Documents serialised from the IR validate against the schema derived from the same declaration."""
    mini = FIXTURES / "mini"
    result = compile_rules({p.name: p.read_text() for p in mini.glob("*.rules") if p.name != "ruleset.rules"})
    assert result.ok, messages(result)
    ruleset = result.rulesets[0]
    for kind, docs in ruleset.documents().items():
        validator = Draft202012Validator(schema_of(ruleset.kinds[kind]))
        for doc in docs.values():
            assert list(validator.iter_errors(doc)) == [], (kind, doc["id"])


def test_unknown_field_suggests_the_right_one(compile_rules: Callable[..., Compilation]) -> None:
    d = only(compile_rules({"t.rules": "trait T { tpye: die }\n"}))
    assert d.message == "a trait has no field 'tpye'"
    assert d.hint == "did you mean 'type'?"
    assert d.pos is not None and (d.pos.line, d.pos.column) == (1, 11)


def test_missing_required_field(compile_rules: Callable[..., Compilation]) -> None:
    d = only(compile_rules({"t.rules": "trait T { cost: 2 }\n"}))
    assert d.message == "a trait needs a 'type' field"


def test_enum_value_with_suggestion(compile_rules: Callable[..., Compilation]) -> None:
    d = only(compile_rules({"t.rules": "trait T { type: charactr }\n"}))
    assert d.message == "'type' must be one of: character, call_on, die"
    assert d.hint == "did you mean 'character'?"


def test_duplicate_ids(compile_rules: Callable[..., Compilation]) -> None:
    d = only(compile_rules({"a.rules": 'trait "Tough" { type: die }\n', "b.rules": "trait tough { type: die }\n"}))
    assert d.code == "E301" and "defined twice (first at rules/demo/a.rules:1)" in d.message
    assert d.pos is not None and d.pos.file == "rules/demo/b.rules"


def test_ids_are_scoped_by_kind(compile_rules: Callable[..., Compilation]) -> None:
    result = compile_rules(
        {
            "a.rules": LIFEPATH_BASICS + 'lifepath "Miller" { time: 1 yrs  resources: 1  skills: 1 pt: Miller }\n'
            'skill "Miller" { root: Will  type: craftsman }\n'
        }
    )
    assert result.ok, messages(result)


def test_unresolved_reference_suggests(compile_rules: Callable[..., Compilation]) -> None:
    d = only(
        compile_rules(
            {
                "a.rules": LIFEPATH_BASICS + "lifepath Farmer { time: 1 yrs  resources: 1  skills: 1 pt: Farmng }\n"
                'skill "Farming" { root: Will  type: peasant }\n'
            }
        )
    )
    assert d.message == "no skill named 'Farmng'"
    assert d.hint == "did you mean 'Farming'?"


def test_reference_to_the_wrong_kind(compile_rules: Callable[..., Compilation]) -> None:
    d = only(
        compile_rules({"a.rules": LIFEPATH_BASICS + "lifepath Farmer { time: 1 yrs  resources: 1  leads: Farmer }\n"})
    )
    assert d.message == "no setting named 'Farmer'"


def test_ambiguous_display_name(compile_rules: Callable[..., Compilation]) -> None:
    d = only(
        compile_rules(
            {
                "a.rules": LIFEPATH_BASICS + 'lifepath a_captain "Captain" { time: 1 yrs  resources: 1 }\n'
                'lifepath b_captain "Captain" { time: 1 yrs  resources: 1 }\n'
                "lifepath Admiral { time: 1 yrs  resources: 1  requires: Captain }\n"
            }
        )
    )
    assert d.message == "'Captain' could mean several lifepaths: a_captain, b_captain"


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        (
            "1 -> a\n  2-4 -> b\n  7-8 -> c\n  8 -> d\n  9-10 -> e",
            ["no row for 5-6 (1d10 rolls 1-10)", "rows 7-8 and 8 overlap on 8"],
        ),
        ("1-5 -> a\n  6-11 -> b", ["row 6-11 reaches 11, beyond what 1d10 rolls (1-10)"]),
        ("1-9 -> a\n  >8 -> b", ["rows 1-9 and 9+ overlap on 9"]),
        ("1-10 -> a\n  Head -> b", ["row 'Head' has a name, but the table is rolled on 1d10"]),
    ],
)
def test_roll_tables_cover_their_dice_exactly_once(
    compile_rules: Callable[..., Compilation], rows: str, expected: list[str]
) -> None:
    result = compile_rules({"t.rules": f"table t {{\n  roll: 1d10\n  columns: x\n  {rows}\n}}\n"})
    assert messages(result) == expected


def test_rows_outside_the_dice(compile_rules: Callable[..., Compilation]) -> None:
    result = compile_rules({"t.rules": "table t {\n  roll: 1d6\n  columns: x\n  1-6 -> a\n  7 -> b\n}\n"})
    assert messages(result) == ["row 7 can never come up on 1d6 (1-6)"]


def test_formulas_name_declared_attributes(compile_rules: Callable[..., Compilation]) -> None:
    d = only(
        compile_rules(
            {
                "a.rules": "attribute agility { abbr: AGL  group: t }\n"
                "attribute move { group: derived  formula: AGIL + 1 }\n"
            }
        )
    )
    assert d.message == "formula names 'AGIL', which is no attribute"
    assert d.hint is not None and "AGL" in d.hint


def test_formula_cycles(compile_rules: Callable[..., Compilation]) -> None:
    d = only(
        compile_rules(
            {
                "a.rules": "attribute a { abbr: A  group: derived  formula: B + 1 }\n"
                "attribute b { abbr: B  group: derived  formula: C + 1 }\n"
                "attribute c { abbr: C  group: derived  formula: A + 1 }\n"
            }
        )
    )
    assert d.message == "formulas go round in a circle: a -> b -> c -> a"


def test_requirements_name_real_things(compile_rules: Callable[..., Compilation]) -> None:
    result = compile_rules(
        {
            "a.rules": LIFEPATHS_WITH_REQUIREMENT.format(
                req='Farmr or trait "Iron Will" or 2 of lifepaths in setting pesant'
            )
        }
    )
    assert messages(result) == ["no lifepath named 'Farmr'", "no trait named 'Iron Will'", "no setting named 'pesant'"]


def test_tags_in_requirements_must_be_used(compile_rules: Callable[..., Compilation]) -> None:
    result = compile_rules({"a.rules": LIFEPATHS_WITH_REQUIREMENT.format(req="any lifepath tagged gaurd")})
    assert messages(result) == ["no lifepath is tagged 'gaurd'"]
    assert result.diagnostics[0].hint == "did you mean 'guard'?"


def test_unknown_condition(compile_rules: Callable[..., Compilation]) -> None:
    result = compile_rules({"a.rules": LIFEPATHS_WITH_REQUIREMENT.format(req="ages > 50")})
    assert messages(result) == ["unknown condition 'ages'"]
    assert result.diagnostics[0].hint == "did you mean 'age'?"


def test_unknown_kind(compile_rules: Callable[..., Compilation]) -> None:
    d = only(compile_rules({"a.rules": "lifepth Farmer { }\n"}))
    assert d.message == "unknown kind 'lifepth'" and d.hint == "did you mean 'lifepath'?"


LIFEPATHS_WITH_REQUIREMENT = (
    LIFEPATH_BASICS.replace("{", "{{").replace("}", "}}")
    + "lifepath Farmer {{ time: 1 yrs  resources: 1  tags: guard }}\n"
    + "lifepath Elder {{ time: 1 yrs  resources: 1  requires: {req} }}\n"
)


def test_fast_and_reference_validators_agree() -> None:
    """jsonschema-rs decides valid-or-not; jsonschema explains. They must never disagree."""
    from rulesdsl.compile.checks.schema import validators
    from rulesdsl.compile.jsonform import document
    from rulesdsl.compile.lower import lower_block
    from rulesdsl.compile.pipeline import parser
    from rulesdsl.syntax.tree import Block

    sources = sorted((Path(__file__).parent / "golden" / "diagnostics").glob("*.rules"))
    sources += sorted((Path(__file__).parent / "fixtures").rglob("*.rules"))
    kinds = prelude()
    checked = invalid = 0
    for source in sources:
        parsed, _ = parser().parse_file(str(source), source.read_text(encoding="utf-8"))
        for block in parsed.blocks:
            if not isinstance(block, Block) or block.kind not in kinds:
                continue
            entity, _ = lower_block(block, kinds[block.kind], file_defaults={})
            fast, slow = validators(kinds[block.kind])
            slow_valid = slow.is_valid(document(entity))
            assert fast.is_valid(document(entity)) == slow_valid, (source.name, entity.id)
            checked += 1
            invalid += not slow_valid
    assert checked > 50 and invalid >= 5


def test_names_the_sources_abbreviate_resolve_through_aliases(compile_rules: Callable[..., Compilation]) -> None:
    result = compile_rules(
        {
            "a.rules": "stock human { }\n"
            'setting servitude "Servitude and Captive Setting" { aliases: "Serv."  stock: human }\n'
            'setting sea "Seafaring Setting" { aliases: "Sea"  stock: human }\n'
            'lifepath "Ship\'s Captain" { setting: sea  time: 5 yrs  resources: 1  aliases: "Sea Captain" }\n'
            'lifepath Merchant { setting: sea  time: 5 yrs  resources: 1  leads: "Serv.", Sea\n'
            '  requires: "Sea Captain" }\n'
        }
    )
    assert result.ok, messages(result)
    merchant = result.rulesets[0].documents()["lifepath"]["merchant"]
    assert merchant["leads"] == ["servitude", "sea"]
    assert merchant["requires"] == {"lifepath": "ship_s_captain"}


def test_burning_wheel_lead_abbreviations_resolve(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The book prints leads as "Serv., Sea, City": a homebrew lifepath may write them so."""
    import shutil
    from pathlib import Path

    from rulesdsl.compile.pipeline import compile_paths

    from .conftest import ROOT

    monkeypatch.chdir(tmp_path)
    shutil.copytree(ROOT / "rules" / "burning_wheel", tmp_path / "bw")
    (tmp_path / "bw" / "homebrew.rules").write_text(
        'lifepath "Reed Smuggler" { setting: seafaring  time: 4 yrs  resources: 8\n'
        '  leads: "Serv.", City, "Noble Court"\n  requires: "Ship\'s Captain" or Pilot }\n'
    )
    result = compile_paths([Path("bw")])
    assert result.ok, messages(result)
    smuggler = result.rulesets[0].documents()["lifepath"]["reed_smuggler"]
    assert smuggler["leads"] == ["servitude", "city", "court"]


def test_names_in_other_scripts_get_ids_of_their_own(compile_rules: Callable[..., Compilation]) -> None:
    """Both were `_` (E301 between every two such names); now each is spelt by its code points."""
    result = compile_rules(
        {
            "a.rules": """
            attribute "Сила" { group: physical }
            attribute "力" { group: physical }
            kind power "Powers" { needs: ref attribute }
            power "Удар" { needs: "Сила" }
            """
        }
    )
    assert result.ok, messages(result)
    demo = result.rulesets[0]
    assert sorted(demo.entities["attribute"]) == ["u441_438_43b_430", "u529b"]
    assert demo.entities["power"]["u443_434_430_440"].fields["needs"] == Ref(
        "attribute", "Сила", demo.entities["power"]["u443_434_430_440"].position("needs"), "u441_438_43b_430"
    )
