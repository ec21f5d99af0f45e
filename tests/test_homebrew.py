"""Homebrew on top of an official ruleset: rules/fenmark extends Burning Wheel with patches, a removal,
a new setting and a kind of its own; homebrews extend declared kinds too; `rulesdsl new` starts one."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from rulesdsl.compile.checks import semantic
from rulesdsl.compile.pipeline import compile_paths
from rulesdsl.targets.build import render_all, write_output

from .conftest import GENERATED, ROOT, run_python, write_ruleset

Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture(scope="module")
def fenmark(generated_packages: Path) -> ModuleType:
    import fenmark

    return fenmark


def test_the_issue_snippet_is_part_of_fenmark_as_written() -> None:
    snippet = (ROOT / "rules" / "fenmark" / "changes.rules").read_text(encoding="utf-8")
    for line in (
        'patch lifepath "Born Noble" { leads += fen_nobility }',
        "patch lifepath farmer { resources: 7 }",
        "patch skill Sorcery { tools: yes }",
        'remove spell "Arcane Kindness"',
    ):
        assert line in snippet
    manifest = (ROOT / "rules" / "fenmark" / "ruleset.rules").read_text(encoding="utf-8")
    assert 'ruleset fenmark { title: "Fenmark"  version: "0.1.0"  extends: burning_wheel }' in manifest


def test_checking_the_homebrew_alone_finds_its_base_beside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = compile_paths([ROOT / "rules" / "fenmark"])
    assert result.ok, [d.message for d in result.diagnostics[:5]]
    assert [r.id for r in result.rulesets] == ["burning_wheel", "fenmark"]
    fen = result.rulesets[1]
    assert {c.id for c in fen.changes.patched} == {"born_noble", "farmer", "sorcery"}
    assert [c.id for c in fen.changes.removed] == ["arcane_kindness"]
    assert {"fen_nobility", "reed_page", "marsh_warden", "eel_baron", "mire_witch"} <= {c.id for c in fen.changes.added}


def test_burning_crosses_into_the_homebrew_and_back(fenmark: ModuleType) -> None:
    sheet = fenmark.burn(["Born Noble", "Reed Page", "Marsh Warden", "Eel Baron", "Lord"], either=["M"])
    assert sheet.legal, sheet.violations
    assert fenmark.burn(["Born Noble", "Marsh Warden"], either=["P"]).violations == (
        "Marsh Warden (lifepath 2) requires: Reed Page or Squire (Noble Setting)",
    )
    assert fenmark.LIFEPATHS["farmer"].resources == 7 and fenmark.SKILLS["sorcery"].tools == "yes"
    assert "arcane_kindness" not in fenmark.SPELLS and "will_o_wisp" in fenmark.SPELLS
    assert fenmark.FEN_BEASTS["giant_eel"].hunted_with == ("fishing", "trapper")


def test_the_base_package_and_pages_are_unchanged(generated_packages: Path) -> None:
    import burning_wheel

    assert burning_wheel.LIFEPATHS["farmer"].resources == 5 and "arcane_kindness" in burning_wheel.SPELLS
    assert "fen_nobility" not in burning_wheel.LIFEPATHS["born_noble"].leads
    for path in (GENERATED / "burning_wheel").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "fen_nobility" not in text and "Fenmark" not in text and "Reed Page" not in text, path
    assert "Fen Nobility" not in (GENERATED / "site" / "burning_wheel" / "setting.html").read_text(encoding="utf-8")


def test_the_reference_says_what_the_homebrew_changes() -> None:
    site = GENERATED / "site" / "fenmark"
    changes = (site / "changes.html").read_text(encoding="utf-8")
    # lifepaths are shown on their setting's page, settings have pages of their own (see emit/html.py)
    assert 'href="setting.noble.html#born_noble"' in changes
    assert 'href="../burning_wheel/setting.peasant.html#farmer"' in changes
    assert re.search(r'href="\.\./burning_wheel/spell(\.\d+)?\.html#arcane_kindness"', changes)  # a page of spells
    assert 'href="setting.fen_nobility.html">Fen Nobility</a></td></tr>' in changes  # the lead it adds, as "is now"
    assert "Changed by Fenmark: leads." in (site / "setting.noble.html").read_text(encoding="utf-8")
    assert "Added by Fenmark." in (site / "setting.fen_nobility.html").read_text(encoding="utf-8")
    assert 'href="changes.html"' in (site / "index.html").read_text(encoding="utf-8")


def test_homebrew_on_declared_kinds(tmp_path: Path) -> None:
    """Patches and removals work on a base's declared kinds, and a homebrew may declare kinds of its own."""
    shutil.copytree(ROOT / "tests" / "examples" / "careers", tmp_path / "careers")
    write_ruleset(
        tmp_path / "rim",
        {
            "rim.rules": """
            patch career navy { max_terms: 3  skills -= navy_training }
            remove career merchant
            career belters "Belters" {
              qualification: check dm(END) 6+  survival: check dm(DEX) 6+  advancement: check dm(INT) 9+
              ranks: scout_ranks  skills: scout_service
            }
            kind ship "Ships" { tonnage: int in 100..5000  jump: int in 0..6 = 1 }
            ship far_trader "Far Trader" { tonnage: 200  jump: 2 }
            """
        },
        manifest='ruleset rim { title: "The Rim"  version: "0.1.0"  extends: careers }\n',
    )
    result = compile_paths([tmp_path / "rim"])
    assert result.ok, [d.message for d in result.diagnostics]
    out = tmp_path / "out"
    write_output(out, render_all(result.rulesets))
    ran = run_python(
        "import rim, careers\n"
        "print(sorted(rim.CAREERS), rim.CAREERS['navy'].max_terms, rim.CAREERS['navy'].skills)\n"
        "print(rim.SHIPS['far_trader'].jump, careers.CAREERS['navy'].max_terms, 'merchant' in careers.CAREERS)\n",
        out,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == ["['belters', 'commando', 'navy', 'scout'] 3 ('navy_service',)", "2 7 True"]


def test_new_starts_a_ruleset_that_checks_and_builds(tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli("new", "marsh")[0] == 0
    assert cli("check", "marsh")[0] == 0
    assert cli("build", "marsh", "--out", "marsh-out")[0] == 0
    assert (tmp_path / "marsh-out" / "marsh" / "relics.py").is_file()
    code, _, err = cli("new", "marsh")
    assert code == 2 and "never overwrites" in err
    code, _, err = cli("new", "Bad-Name")
    assert code == 2 and "snake_case" in err
    shutil.copytree(ROOT / "rules" / "witcher", tmp_path / "rules" / "witcher")
    assert cli("new", "lowlands", "--extends", "witcher")[0] == 0
    assert cli("build", "lowlands", "--out", "low-out")[0] == 0
    code, _, err = cli("new", "nowhere", "--extends", "no_such_game")
    assert code == 2 and "no ruleset 'no_such_game'" in err


def test_new_homebrew_on_burning_wheel_leads_into_its_own_setting(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copytree(ROOT / "rules" / "burning_wheel", tmp_path / "rules" / "burning_wheel")
    assert cli("new", "fens", "--extends", "burning_wheel", "--in", "rules")[0] == 0
    code, _, err = cli("check", "rules/fens")
    assert code == 0, err
    text = (tmp_path / "rules" / "fens" / "fens.rules").read_text(encoding="utf-8")
    assert "patch lifepath" in text and "leads += fens_lands" in text


BASE = 'ruleset base { title: "Base"  version: "0.1.0" }\n'
BASE_WITH_FORMULA_CELLS = """
table bonus { columns: bonus(int)
  0-4  -> 5
  5-20 -> 2
}
formula double "Double" { params: a  formula: a * 2 }
table mods "Mods" {
  columns: attack(int), value(formula)
  strong -> 1, double(3)
  weak   -> 2, bonus[4]
}
"""


def test_a_removal_used_only_in_a_formula_cell_is_reported_at_the_removal(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It checked clean, and `build` crashed on the unresolved reference (exit 3)."""
    monkeypatch.chdir(tmp_path)
    write_ruleset(tmp_path / "rules" / "base", {"things.rules": BASE_WITH_FORMULA_CELLS}, manifest=BASE)
    write_ruleset(
        tmp_path / "rules" / "brew",
        {"changes.rules": "remove formula double\nremove table bonus\n"},
        manifest='ruleset brew { title: "Brew"  version: "0.1.0"  extends: base }\n',
    )
    result = compile_paths([Path("rules")])
    assert [(d.code, d.pos.line if d.pos else 0, d.message) for d in result.diagnostics] == [
        ("E507", 1, "formula 'Double' is removed, but table Mods (rules/base/things.rules:9) still names it"),
        ("E507", 2, "table 'bonus' is removed, but table Mods (rules/base/things.rules:10) still names it"),
    ]
    code, _, err = cli("build", "rules", "--out", str(tmp_path / "out"))
    assert code == 1 and "E507" in err and "Traceback" not in err


def test_a_removal_whose_uses_are_patched_away_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_ruleset(tmp_path / "rules" / "base", {"things.rules": BASE_WITH_FORMULA_CELLS}, manifest=BASE)
    write_ruleset(
        tmp_path / "rules" / "brew",
        {"changes.rules": "remove formula double\npatch table mods { strong -> 1, 3 * 2 }\n"},
        manifest='ruleset brew { title: "Brew"  version: "0.1.0"  extends: base }\n',
    )
    result = compile_paths([Path("rules")])
    assert result.ok, [d.message for d in result.diagnostics]
    brew = result.rulesets[1]
    assert "formula" not in brew.entities and len(brew.entities["table"]["mods"].rows) == 2


def test_hints_for_mistaken_targets_name_what_is_there_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One pool of names answers every mistaken patch or removal (a pool each made a homebrew of many mistakes
    quadratic, benchmarks/hostile.py): a name a removal took away is no longer suggested, and past the first
    question the pool still finds the close names among many."""
    monkeypatch.chdir(tmp_path)
    traits = "".join(f"trait filler{i} {{ type: die }}\n" for i in range(60))  # a pool big enough to be indexed
    base = traits + "trait Greedy { type: die }\ntrait Greyed { type: die }\n"
    write_ruleset(tmp_path / "rules" / "base", {"traits.rules": base}, manifest=BASE)
    changes = "remove trait Greedyy\nremove trait Greedy\nremove trait Greedyy\nremove trait filler7x\n"
    write_ruleset(
        tmp_path / "rules" / "brew",
        {"changes.rules": changes},
        manifest='ruleset brew { title: "Brew"  version: "0.1.0"  extends: base }\n',
    )
    result = compile_paths([Path("rules")])
    hints = [(d.pos.line if d.pos else 0, d.hint or "") for d in result.diagnostics]
    assert [d.code for d in result.diagnostics] == ["E504", "E504", "E504"]
    assert hints[:2] == [(1, "did you mean 'Greedy' or 'Greyed'?"), (3, "did you mean 'Greyed'?")]  # Greedy went
    assert hints[2][0] == 4 and hints[2][1].startswith("did you mean 'filler7'")


def test_many_patches_and_mistakes_index_the_names_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Work counted, not timed (benchmarks/hostile.py times it): the names of a kind were indexed again for
    every patch and removal, and listed again for every unknown name, so n of them over n entities took n²."""
    from rulesdsl.compile import index, merge

    made, listed = 0, 0

    class Counting(index.EntityIndex):
        def __init__(self, *args: Any) -> None:
            nonlocal made
            made += 1
            super().__init__(*args)

        def candidates(self) -> list[str]:
            nonlocal listed
            listed += 1
            return super().candidates()

    monkeypatch.setattr(merge, "EntityIndex", Counting)
    monkeypatch.setattr(semantic, "EntityIndex", Counting)
    monkeypatch.chdir(tmp_path)
    n = 40
    base = "".join(f"trait t{i} {{ type: die }}\n" for i in range(n))
    write_ruleset(tmp_path / "rules" / "base", {"traits.rules": base}, manifest=BASE)
    changes = "".join(f"patch trait t{i} {{ cost: 2 }}\nremove trait u{i}\n" for i in range(n))
    changes += (
        'lifepath "Odd" { time: 1 yrs  resources: 1  traits: 1 pt: ' + ", ".join(f"v{i}" for i in range(n)) + " }\n"
    )
    write_ruleset(
        tmp_path / "rules" / "brew",
        {"changes.rules": changes},
        manifest='ruleset brew { title: "Brew"  version: "0.1.0"  extends: base }\n',
    )
    result = compile_paths([Path("rules")])
    codes = [d.code for d in result.diagnostics]
    assert codes.count("E504") == n and codes.count("E303") == n
    assert listed <= 4  # once per pool: patches and removals of traits; the lifepath's traits, in each ruleset
    assert made <= 30  # per kind, not per name
