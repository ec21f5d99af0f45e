"""The editor support shipped in editors/: a TextMate grammar that cannot drift from the language, and
a VS Code extension whose files fit together."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
from types import ModuleType

import pytest

from rulesdsl.syntax.parse import GRAMMAR_PATH

from .conftest import ROOT

EDITORS = ROOT / "editors"
VSCODE = EDITORS / "vscode"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_grammar", EDITORS / "make_grammar.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_grammar_is_what_the_language_generates() -> None:
    committed = (VSCODE / "syntaxes" / "rules.tmLanguage.json").read_text(encoding="utf-8")
    assert committed == generator().render(), "run: python editors/make_grammar.py"


def test_every_word_of_the_grammar_is_highlighted() -> None:
    words = generator().grammar_words(GRAMMAR_PATH.read_text(encoding="utf-8"))
    assert {"or", "and", "not", "of", "any", "trait", "skill", "tagged", "setting", "kind", "patch", "ref"} <= set(
        words
    )
    grammar = json.loads((VSCODE / "syntaxes" / "rules.tmLanguage.json").read_text(encoding="utf-8"))
    patterns = json.dumps(grammar)
    for word in words:
        assert re.search(rf"[|(:]{word}[|)]", patterns), word


def scopes(line: str) -> dict[str, str]:
    """Which scope each pattern gives, matched the simple way (first match per pattern, Python's re)."""
    grammar = json.loads((VSCODE / "syntaxes" / "rules.tmLanguage.json").read_text(encoding="utf-8"))
    found = {}
    repository = grammar["repository"]
    for rule in [repository["comment"], *repository["value"]["patterns"]]:
        if "match" in rule:
            match = re.search(rule["match"], line)
            if match:
                found[match.group(0)] = rule["name"]
    return found


def test_the_patterns_mean_what_they_say() -> None:
    found = scopes("  requires: any lifepath tagged female or Farmer  # note")
    assert found["any"] == "keyword.operator.word.rules"
    assert found["# note"] == "comment.line.number-sign.rules"
    assert scopes("  formula: floor((AGL + WTS) / 2)")["floor"] == "support.function.rules"
    assert scopes("  roll: 2d6")["2d6"] == "constant.numeric.dice.rules"
    assert "or" not in scopes("  note: order")  # words, not parts of words
    header = json.loads((VSCODE / "syntaxes" / "rules.tmLanguage.json").read_text())["repository"]["header"]
    match = re.match(header["match"], 'lifepath farmer "Farmer" {')
    assert match is not None and match.groups() == ("lifepath", "farmer")


def test_the_vscode_extension_fits_together() -> None:
    package = json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))
    [language] = package["contributes"]["languages"]
    [grammar] = package["contributes"]["grammars"]
    assert language["extensions"] == [".rules"] and grammar["language"] == language["id"]
    assert (VSCODE / grammar["path"]).is_file() and (VSCODE / language["configuration"]).is_file()
    assert json.loads((VSCODE / grammar["path"]).read_text())["scopeName"] == grammar["scopeName"]
    assert (VSCODE / package["main"]).is_file()
    assert package["contributes"]["configuration"]["properties"]["rulesdsl.command"]["default"] == ["rulesdsl", "lsp"]
    assert "vscode-languageclient" in package["dependencies"]
    json.loads((VSCODE / "language-configuration.json").read_text(encoding="utf-8"))


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_extension_script_parses() -> None:
    node = shutil.which("node")
    assert node is not None
    result = subprocess.run([node, "--check", str(VSCODE / "extension.js")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
