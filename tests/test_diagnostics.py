"""Golden diagnostics: one file per error class, rendered exactly as a user sees them.

Run with UPDATE_GOLDEN=1 to rewrite the .txt files after an intended change (then read the diff).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from rulesdsl.compile.pipeline import compile_paths, prelude
from rulesdsl.diagnostics import render_json, render_text, summary

from .conftest import write_ruleset

GOLDEN = Path(__file__).resolve().parent / "golden" / "diagnostics"
CASES = sorted(p.stem for p in GOLDEN.glob("*.rules"))
# Whole folders (several rulesets, files that are not UTF-8, links), compiled from their `rules/`.
TREES = sorted(p.name for p in (GOLDEN / "trees").iterdir() if p.is_dir())
SOURCE = Path(__file__).resolve().parent.parent / "rulesdsl"


def render(result_paths: list[Path]) -> str:
    result = compile_paths(result_paths)
    return render_text(result.diagnostics, result.sources) + summary(result.diagnostics) + "\n"


def render_case(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)
    source = (GOLDEN / f"{name}.rules").read_text(encoding="utf-8")
    write_ruleset(tmp_path / "rules" / "demo", {f"{name}.rules": source})
    return render([Path("rules")])


def matches_golden(rendered: str, expected_path: Path) -> None:
    if os.environ.get("UPDATE_GOLDEN"):
        expected_path.write_text(rendered, encoding="utf-8")
    assert rendered == expected_path.read_text(encoding="utf-8")
    assert "Traceback" not in rendered


@pytest.mark.parametrize("name", CASES)
def test_golden_diagnostics(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    matches_golden(render_case(name, tmp_path, monkeypatch), GOLDEN / f"{name}.txt")


@pytest.mark.parametrize("name", TREES)
def test_golden_trees(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(GOLDEN / "trees" / name, tmp_path / name, symlinks=True)
    monkeypatch.chdir(tmp_path / name)
    matches_golden(render([Path("rules")]), GOLDEN / "trees" / f"{name}.txt")


def test_golden_files_that_cannot_live_in_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A named pipe where a source should be, and a source over the size limit."""
    monkeypatch.chdir(tmp_path)
    folder = write_ruleset(tmp_path / "rules" / "demo", {"ok.rules": "trait Brave { type: die }\n"})
    os.mkfifo(folder / "pipe.rules")
    with open(folder / "huge.rules", "wb") as handle:
        handle.truncate(17 * 1024 * 1024)  # sparse: nothing is written, and it is never read
    matches_golden(render([Path("rules")]), GOLDEN / "trees" / "unreadable.txt")


def test_golden_shared_cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A parse cache folder others may write to is refused, with one warning, and the run goes on."""
    monkeypatch.chdir(tmp_path)
    write_ruleset(tmp_path / "rules" / "demo", {"ok.rules": "trait Brave { type: die }\n"})
    (tmp_path / "shared").mkdir(mode=0o777)
    os.chmod(tmp_path / "shared", 0o777)
    monkeypatch.setenv("RULESDSL_CACHE_DIR", "shared")
    matches_golden(render([Path("rules")]), GOLDEN / "trees" / "shared_cache.txt")


def codes_in_source() -> set[str]:
    """Every diagnostic code the compiler can report, read from its source."""
    found: set[str] = set()
    for path in SOURCE.rglob("*.py"):
        found |= set(re.findall(r"[\"']([EW]\d{3})[\"']", path.read_text(encoding="utf-8")))
    return found


def test_every_code_has_a_golden_case_and_documentation() -> None:
    codes = codes_in_source()
    assert len(codes) > 40
    golden = "".join(p.read_text(encoding="utf-8") for p in GOLDEN.rglob("*.txt"))
    assert sorted(code for code in codes if f"[{code}]" not in golden) == []
    documented = (SOURCE.parent / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    assert sorted(code for code in codes if f"| {code} " not in documented and f", {code} " not in documented) == []


# A rendered diagnostic's first line: `file:line:col: severity: message [CODE]`, or without a position
_HEADER = re.compile(r"^(?:\S.*?: )?(?:error|warning): .* \[([EW]\d{3})\]$")
_SUMMARY = re.compile(r"^\d+ errors?, \d+ warnings?$")


def rendered_diagnostics(text: str) -> list[tuple[str, list[str]]]:
    """Each diagnostic of a rendered golden file: its code and its lines (header, source, caret, notes, hint)."""
    found: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        header = _HEADER.match(line)
        if header:
            found.append((header.group(1), [line]))
        elif found and not _SUMMARY.match(line):
            found[-1][1].append(line)
    return found


def test_every_golden_error_and_warning_has_a_hint() -> None:
    """The rule: every diagnostic says how to fix it, not only what is wrong."""
    shown = [
        (path, *d) for path in sorted(GOLDEN.rglob("*.txt")) for d in rendered_diagnostics(path.read_text("utf-8"))
    ]
    assert len(shown) > 300  # the goldens are read: every file's diagnostics, with and without a position
    assert {code for _, code, _ in shown} >= {"E003", "E101", "E201", "E210", "W332"}
    hintless = [
        f"{path.relative_to(GOLDEN)}: {lines[0]}"
        for path, _, lines in shown
        if not any(line.startswith("  hint: ") and line[8:].strip() for line in lines[1:])
    ]
    assert hintless == []


def test_the_golden_reader_sees_a_missing_hint() -> None:
    with_hint, without = rendered_diagnostics(
        "a.rules:1:1: error: no skill named 'X' [E303]\n 1 | x\n   | ^\n  hint: did you mean 'Y'?\n"
        "error: cannot read a.rules: not a regular file [E003]\n  note: a note is no hint\n1 error, 0 warnings\n"
    )
    assert with_hint[0] == "E303" and with_hint[1][-1] == "  hint: did you mean 'Y'?"
    assert without == ("E003", ["error: cannot read a.rules: not a regular file [E003]", "  note: a note is no hint"])


def test_a_missing_field_is_hinted_with_a_value_it_could_have(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty block of every built-in kind: each field it needs is named with how to write it."""
    monkeypatch.chdir(tmp_path)
    kinds = sorted(k for k in prelude() if k != "ruleset")
    write_ruleset(tmp_path / "rules" / "demo", {"a.rules": "".join(f"{kind} blank_{kind} {{ }}\n" for kind in kinds)})
    missing = [d for d in compile_paths([Path("rules")]).diagnostics if "needs a '" in d.message]
    assert len(missing) >= len(kinds)  # every kind needs a field or more (a mechanic its style and die, ...)
    for d in missing:
        field = d.message.split("'")[1]
        assert d.hint is not None and d.hint.startswith(f"add {field}") and "..." not in d.hint, d


def test_json_diagnostics_carry_positions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_ruleset(tmp_path / "rules" / "demo", {"a.rules": "trait Brave { tpye: die }\n"})
    result = compile_paths([Path("rules")])
    data = json.loads(render_json(result.diagnostics))
    assert data == {
        "diagnostics": [
            {
                "severity": "error",
                "code": "E210",
                "message": "a trait has no field 'tpye'",
                "file": "rules/demo/a.rules",
                "line": 1,
                "column": 15,
                "end_line": 1,
                "end_column": 19,
                "hint": "did you mean 'type'?",
            }
        ]
    }
