"""The editor support shipped in editors/: a TextMate grammar and a Vim syntax file that cannot drift from
the language, a Vim runtime folder that Vim and Neovim load, and a VS Code extension whose files fit
together."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from rulesdsl.syntax.parse import GRAMMAR_PATH

from .conftest import ROOT

EDITORS = ROOT / "editors"
VSCODE = EDITORS / "vscode"
VIM = EDITORS / "vim"


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


def test_the_committed_vim_syntax_is_what_the_language_generates() -> None:
    committed = (VIM / "syntax" / "rules.vim").read_text(encoding="utf-8")
    assert committed == generator().render_vim(), "run: python editors/make_grammar.py"


def test_every_word_of_the_grammar_is_highlighted_in_vim() -> None:
    words = generator().grammar_words(GRAMMAR_PATH.read_text(encoding="utf-8"))
    syntax = (VIM / "syntax" / "rules.vim").read_text(encoding="utf-8")
    for word in words:
        assert re.search(rf"[(|]{word}\\[|)]", syntax), word


SAMPLE = """\
# a comment
lifepath farmer "Farmer" {
  time: 8 yrs  resources: 3  born: yes
  skills: 4 pts: Farming, "Animal Husbandry"
  requires: any lifepath tagged peasant or not age > 40
  note: "say \\"hi\\" # not a comment"  # said
}
patch skill Sorcery { tools: yes }
kind career "Careers" { ranks: ref table  max_terms: int = 7 }
table t { roll: 2d6  columns: a, b(int)
  2 -> "x", floor(3 / 2) @ "p. 1"
}
"""

# what a word of SAMPLE is highlighted as (its first character's syntax group)
GROUPS = {
    "# a comment": "rulesComment",
    "lifepath farmer": "rulesHeader",
    'farmer "Farmer"': "rulesEntityId",
    '"Farmer"': "rulesString",
    "time:": "rulesField",
    "yes\n": "rulesConstant",
    "4 pts:": "rulesPoints",
    '"Animal': "rulesString",
    "any ": "rulesOperatorWord",
    "tagged": "rulesOperatorWord",
    "40": "rulesNumber",
    '\\"hi': "rulesEscape",
    "# not a comment": "rulesString",
    "# said": "rulesComment",
    "patch": "rulesDeclaration",
    "skill Sorcery": "rulesDeclared",
    "table  max": "rulesKindRef",
    "int =": "rulesFieldType",
    "2d6": "rulesDice",
    "->": "rulesArrow",
    "floor": "rulesFunction",
    "@": "rulesSource",
}


def syntax_groups(editor: str, folder: Path) -> list[str]:
    """Open SAMPLE in `editor` (no user configuration, editors/vim on the runtimepath) and say its filetype,
    comment format, last error, and the syntax group of each GROUPS word."""
    sample, out, script = folder / "sample.rules", folder / "out.txt", folder / "probe.vim"
    sample.write_text(SAMPLE, encoding="utf-8")
    places = []
    for needle in GROUPS:
        index = SAMPLE.index(needle)
        places.append(f"[{SAMPLE.count(chr(10), 0, index) + 1}, {index - SAMPLE.rfind(chr(10), 0, index)}]")
    script.write_text(
        "\n".join(
            [
                f"set runtimepath^={VIM}",
                "filetype plugin on",
                "syntax on",
                f"edit {sample}",
                "let out = [&filetype, &commentstring, v:errmsg]",
                f"for [l, c] in [{', '.join(places)}]",
                "  call add(out, synIDattr(synID(l, c, 1), 'name'))",
                "endfor",
                f"call writefile(out, '{out}')",
                "qa!",
            ]
        ),
        encoding="utf-8",
    )
    command = {
        "nvim": ["nvim", "--headless", "-u", "NONE", "-i", "NONE", "-n", "-S", str(script)],
        "vim": ["vim", "-Es", "-u", "NONE", "-i", "NONE", "-N", "-n", "-S", str(script)],
    }[editor]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=folder)
    assert result.returncode == 0 and not result.stderr.strip(), result.stderr
    return out.read_text(encoding="utf-8").split("\n")[:-1]


@pytest.mark.parametrize("editor", ["nvim", "vim"])
def test_vim_and_neovim_load_the_syntax_file_and_highlight(editor: str, tmp_path: Path) -> None:
    """Issue 22: no highlighting in Neovim. editors/vim (ftdetect, ftplugin, syntax) loads without an error
    in Debian's Vim and Neovim (0.7), whichever is installed; *.rules is detected (not Snort's 'hog')."""
    if shutil.which(editor) is None:
        pytest.skip(f"{editor} is not installed")
    filetype, commentstring, error, *groups = syntax_groups(editor, tmp_path)
    assert (filetype, commentstring, error) == ("rules", "# %s", "")
    assert dict(zip(GROUPS, groups, strict=True)) == GROUPS


def readme_block(marker: str) -> str:
    """The fenced block of the README that follows `<!-- marker: ... -->`."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(rf"<!-- {marker}:[^\n]*-->\n\s*```\w*\n(.*?)\n\s*```", readme, re.S)
    assert found is not None, marker
    return textwrap.dedent(found.group(1))


@pytest.mark.skipif(shutil.which("nvim") is None, reason="nvim is not installed")
def test_the_readmes_neovim_setup_works_in_the_installed_neovim(tmp_path: Path) -> None:
    """Issue 22: the README asked for Neovim 0.10 (vim.lsp.start, vim.fs.root); Debian ships 0.7. Its
    set-up, as written, starts the server in the installed Neovim, which then answers: go to definition
    lands on the skill, and the buffer is highlighted as rules."""
    folder = tmp_path / "rules" / "demo"
    folder.mkdir(parents=True)
    (folder / "ruleset.rules").write_text('ruleset demo { title: "Demo"  version: "0.1.0" }\n', encoding="utf-8")
    (folder / "skills.rules").write_text("skill Fishing { root: perception  type: peasant }\n", encoding="utf-8")
    lifepath = 'lifepath "Eel Catcher" { time: 5 yrs  resources: 6  skills: 5 pts: Fishing }\n'
    (folder / "catch.rules").write_text(lifepath, encoding="utf-8")
    init = tmp_path / "init.lua"
    init.write_text(f'vim.opt.runtimepath:append("{VIM}")\n' + readme_block("neovim-setup") + "\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    probe = tmp_path / "probe.lua"
    probe.write_text(
        f"""
vim.cmd("edit {folder / "catch.rules"}")
local ready = vim.wait(30000, function()
  local clients = vim.lsp.buf_get_clients(0)
  return next(clients) ~= nil and select(2, next(clients)).initialized
end, 100)
local answers = vim.lsp.buf_request_sync(0, "textDocument/definition", {{
  textDocument = {{ uri = vim.uri_from_bufnr(0) }},
  position = {{ line = 0, character = {lifepath.index("Fishing") + 2} }},
}}, 30000) or {{}}
local target = ""
for _, answer in pairs(answers) do
  local result = answer.result and (answer.result[1] or answer.result)
  if result and result.uri then target = result.uri .. ":" .. result.range.start.line end
end
vim.fn.writefile({{ tostring(ready), vim.bo.filetype, vim.bo.omnifunc, target, vim.v.errmsg }}, "{out}")
vim.cmd("qa!")
""",
        encoding="utf-8",
    )
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    command = ["nvim", "--headless", "-u", str(init), "-i", "NONE", "-n", "-c", f"luafile {probe}"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert result.returncode == 0 and not result.stderr.strip(), result.stderr
    ready, filetype, omnifunc, target, error = out.read_text(encoding="utf-8").split("\n")[:5]
    assert (ready, filetype, omnifunc, error) == ("true", "rules", "v:lua.vim.lsp.omnifunc", "")
    assert target == (folder / "skills.rules").resolve().as_uri() + ":0"
