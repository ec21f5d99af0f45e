"""Golden diagnostics: one file per error class, rendered exactly as a user sees them.

Run with UPDATE_GOLDEN=1 to rewrite the .txt files after an intended change (then read the diff).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rulesdsl.diagnostics import render_json, render_text, summary
from rulesdsl.pipeline import compile_paths

from .conftest import write_ruleset

GOLDEN = Path(__file__).resolve().parent / "golden" / "diagnostics"
CASES = sorted(p.stem for p in GOLDEN.glob("*.rules"))


def render_case(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)
    source = (GOLDEN / f"{name}.rules").read_text(encoding="utf-8")
    write_ruleset(tmp_path / "rules" / "demo", {f"{name}.rules": source})
    result = compile_paths([Path("rules")])
    return render_text(result.diagnostics, result.sources) + summary(result.diagnostics) + "\n"


@pytest.mark.parametrize("name", CASES)
def test_golden_diagnostics(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rendered = render_case(name, tmp_path, monkeypatch)
    expected_path = GOLDEN / f"{name}.txt"
    if os.environ.get("UPDATE_GOLDEN"):
        expected_path.write_text(rendered, encoding="utf-8")
    assert rendered == expected_path.read_text(encoding="utf-8")
    assert "Traceback" not in rendered


def test_every_error_code_has_a_golden_case() -> None:
    rendered = "".join((GOLDEN / f"{name}.txt").read_text() for name in CASES)
    codes = {
        "E101",
        "E102",
        "E103",
        "E200",
        "E201",
        "E202",
        "E203",
        "E204",
        "E210",
        "E301",
        "E302",
        "E303",
        "E311",
        "E312",
        "E313",
        "E314",
        "E315",
        "E321",
        "E322",
        "E323",
        "E324",
        "E325",
        "E326",
        "E331",
        "W332",
    }
    missing = sorted(code for code in codes if f"[{code}]" not in rendered)
    assert missing == []


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
