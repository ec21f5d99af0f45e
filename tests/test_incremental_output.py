"""The live preview renders after a save only what the save can have changed (targets/html/site.py
RenderMemo, targets/javascript/module.py CodeMemo), and what it serves is always exactly a cold render of the
same rulesets: over random edit sequences of a homebrew and its base, and over real edits of rules/."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from unittest import mock

from hypothesis import given, settings

from rulesdsl.compile.memo import Memo
from rulesdsl.compile.pipeline import CompiledRuleset, compile_paths
from rulesdsl.targets.build import site_scripts
from rulesdsl.targets.html import site as html
from rulesdsl.targets.html.site import RenderMemo
from rulesdsl.targets.javascript.module import CodeMemo
from rulesdsl.tools.serve import State, build_once

from .conftest import ROOT, write_ruleset
from .test_overlay import EDITS, Editor


def rendered(rulesets: tuple[CompiledRuleset, ...], memo: RenderMemo | None, code: CodeMemo | None) -> dict[str, str]:
    files = html.render(rulesets, memo)
    for ruleset in rulesets:
        files.update(site_scripts(ruleset, code))
    return files


@settings(max_examples=20, deadline=None)
@given(edits=EDITS)
def test_a_render_with_memos_is_a_cold_render_edit_after_edit(edits: list[tuple[int, str, int, int]]) -> None:
    """A homebrew over a base, edited at random (snippets, renames, its manifest, files saved, closed,
    deleted): after every edit that compiles, the site rendered with the memos of the renders before equals
    the site rendered from nothing."""
    with tempfile.TemporaryDirectory() as work:
        editor = Editor(Path(work), Memo())
        memo, code = RenderMemo(), CodeMemo()
        for compiled in editor.compiled_after(edits):
            assert rendered(compiled.rulesets, memo, code) == rendered(compiled.rulesets, None, None)


def _edit(path: Path, pattern: str, replacement: str) -> None:
    text = path.read_text(encoding="utf-8")
    changed, count = re.subn(pattern, replacement, text, count=1)
    assert count == 1, pattern
    path.write_text(changed, encoding="utf-8")


def test_a_save_renders_again_only_what_it_changed_and_serves_a_cold_build(tmp_path: Path) -> None:
    """`rulesdsl serve` over rules/: after a lifepath's resources change, two of its 4,000 entity renderings
    are made again (its row and its card) and the rest reused (mechanics, whose odds read other entities,
    are always made, and not counted); after a lifepath gains a skill, the skill's too
    (who names it changed); after a skill is renamed (every label may change), all of the ruleset's. Each
    time the site served is the one a cold render of the saved files gives."""
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    rules = tmp_path / "rules"
    state = State()
    city = rules / "burning_wheel" / "human" / "city.rules"

    def served_is_cold() -> None:
        with mock.patch.dict(os.environ, {"RULESDSL_CACHE_DIR": "off"}):
            compiled = compile_paths([rules])
        expected = {name: text.encode("utf-8") for name, text in rendered(compiled.rulesets, None, None).items()}
        assert {name: data for name, data in state.files.items() if name in expected} == expected

    with mock.patch.dict(os.environ, {"RULESDSL_CACHE_DIR": str(tmp_path / "cache")}):
        assert build_once([rules], state)
        total = state.render_memo.rendered
        assert state.render_memo.reused == 0 and total > 4000

        _edit(city, r"resources: 10\b", "resources: 11")
        assert build_once([rules], state)
        assert (state.render_memo.rendered, state.render_memo.reused) == (2, total - 2)
        served_is_cold()

        _edit(city, r"skills: 3 pts: Streetwise, Inconspicuous", "skills: 3 pts: Streetwise, Inconspicuous, Acting")
        assert build_once([rules], state)
        # the lifepath's row and card, and Acting's (who names it changed)
        assert (state.render_memo.rendered, state.render_memo.reused) == (4, total - 4)
        served_is_cold()

        skills = rules / "burning_wheel" / "skills.rules"
        _edit(skills, r'skill "Acting" \{', 'skill acting "Stage Acting" {')  # the same id, a new label
        assert build_once([rules], state)
        assert state.render_memo.reused < total // 2  # labels changed: the ruleset's entities are made again
        served_is_cold()

        _edit(city, r"resources: 11\b", "resources: 12")
        assert build_once([rules], state)
        assert (state.render_memo.rendered, state.render_memo.reused) == (2, total - 2)
        served_is_cold()


MONSTERS = """
kind monster "Monsters" { hits: formula of level }
monster orc "Orc" { hits: twice(level) + 1 }
"""
TWICE = 'formula twice "Twice" { params: x  formula: x * 2 }\n'


def test_an_unchanged_entity_is_written_again_when_what_its_names_become_changes(tmp_path: Path) -> None:
    """The orc's file is the same before and after, but a formula declared before the one it calls, in
    another file, gives that one another name in rules.js (`$formula1`, not `$formula0`): the orc's kept
    code would call the wrong function."""
    folder = tmp_path / "rules" / "demo"
    memo, code = RenderMemo(), CodeMemo()
    for formulas in (TWICE, 'formula thrice "Thrice" { params: x  formula: x * 3 }\n' + TWICE):
        write_ruleset(folder, {"monsters.rules": MONSTERS, "formulas.rules": formulas})
        with mock.patch.dict(os.environ, {"RULESDSL_CACHE_DIR": "off"}):
            compiled = compile_paths([folder])
        assert compiled.ok, [d.message for d in compiled.diagnostics]
        assert rendered(compiled.rulesets, memo, code) == rendered(compiled.rulesets, None, None)
    assert "add($formula1(" in site_scripts(compiled.rulesets[0])["demo/rules.js"]
