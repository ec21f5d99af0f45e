"""Every regular expression in rulesdsl/, with what it reads and what it is for.

Only the scanner reads `.rules` text (scanner.py, and the fast path's tokenizer in fastparse.py); everything
else reads the scanner's tokens or the syntax tree. Regular expressions over other things (Markdown, HTML,
file names, the grammar) are fine, listed here with their purpose. A new one fails this test until it is
listed; one that is gone fails it until it is struck off."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "rulesdsl"

SCANNER = "the scanner: reads .rules text"
OTHER = "reads no .rules text"

# (module, where: the module-level name or the function it stands in, the `re` function) -> (what, why)
LISTED: dict[tuple[str, str, str], tuple[str, str]] = {
    ("syntax/scanner.py", "TOKEN", "compile"): (SCANNER, "every terminal of the grammar in one pattern"),
    ("syntax/scanner.py", "TRAILING", "compile"): (SCANNER, "nothing but whitespace and a comment left at the end"),
    ("syntax/scanner.py", "_TOLERANT", "compile"): (SCANNER, "TOKEN, an unclosed string, or what no token takes"),
    ("syntax/scanner.py", "_ANY_TOKEN", "sub"): (OTHER, "TOKEN's pattern without its group names"),
    ("syntax/scanner.py", "_ESCAPE_RE", "compile"): (SCANNER, "the escapes in a string token"),
    ("syntax/fast.py", "_LONG_NUMBER", "compile"): (SCANNER, "a number over the limit (E104): Lark's path reports it"),
    ("language/words.py", "keywords", "fullmatch"): (OTHER, "the grammar's literals that NAME matches"),
    ("targets/build.py", "_is_leftover", "fullmatch"): (OTHER, "a build's staging or retired folder names"),
    ("targets/build.py", "_is_leftover", "escape"): (OTHER, "the output folder's name inside that pattern"),
    ("tools/explain.py", "_ROW", "compile"): (OTHER, "docs/diagnostics.md: a row of the table of codes"),
    ("tools/explain.py", "_SECTION", "compile"): (OTHER, "docs/diagnostics.md: a code's section"),
    ("tools/explain.py", "_FENCE", "compile"): (OTHER, "docs/diagnostics.md: the Wrong/Right examples"),
    ("tools/explain.py", "_LINK", "compile"): (OTHER, "Markdown links, shown as their text"),
    ("targets/javascript/npm.py", "SEMVER", "compile"): (OTHER, "a version npm reads (semantic versioning 2.0.0)"),
    ("targets/javascript/npm.py", "npm_version", "match"): (OTHER, "the numbers a ruleset's version begins with"),
    ("targets/html/markdown.py", "_SAFE_LINK", "compile"): (OTHER, "Markdown: link targets that are safe in HTML"),
    ("targets/html/markdown.py", "heading_ids", "sub"): (OTHER, "a heading's text to an anchor"),
    ("targets/html/search.py", "_TAGS", "compile"): (OTHER, "HTML tags dropped from the search index's text"),
    ("targets/html/search.py", "_ODDS", "compile"): (OTHER, "dice odds tables dropped from the search index's text"),
    ("targets/html/search.py", "_WORD", "compile"): (OTHER, "the search index's words (site.js splits alike)"),
    ("targets/html/values.py", "PLACEHOLDER", "compile"): (OTHER, "link placeholders in rendered HTML"),
    ("tools/lsp.py", "_TAG", "compile"): (OTHER, "HTML tags dropped from a hover's rendered value"),
    ("runtime/core.py", "_NON_WORD", "compile"): (OTHER, "slug: a name to its id"),
    ("language/distributions.py", "_VERSION", "compile"): (OTHER, "a PEP 440 version (a lowered `version` value)"),
}

# Over .rules text, outside the scanner: being replaced. The LSP work removes lsp.py's, the TARGETS work
# html_values' formula words; strike each off here as it goes (the lead then makes this list empty and strict).
TO_BE_REMOVED: dict[tuple[str, str, str], str] = {}  # empty: the language server and the reference read the tree


def _found() -> set[tuple[str, str, str]]:
    """(module, where, function) of every call of the `re` module in the package."""
    found: set[tuple[str, str, str]] = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for statement in tree.body:
            places: list[tuple[str, ast.AST]] = []
            if isinstance(statement, ast.FunctionDef | ast.ClassDef):
                places = [(statement.name, statement)]
            elif isinstance(statement, ast.Assign | ast.AnnAssign):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                places = [(t.id, statement) for t in targets if isinstance(t, ast.Name)]
            else:
                places = [("<module>", statement)]
            for where, node in places:
                for call in ast.walk(node):
                    if (
                        isinstance(call, ast.Call)
                        and isinstance(call.func, ast.Attribute)
                        and isinstance(call.func.value, ast.Name)
                        and call.func.value.id == "re"
                    ):
                        found.add((module, where, call.func.attr))
    return found


def test_every_regular_expression_is_listed_with_its_purpose() -> None:
    found = _found()
    listed = set(LISTED) | set(TO_BE_REMOVED)
    assert not found - listed, f"not listed here (what does it read, and why?): {sorted(found - listed)}"
    assert not listed - found, f"listed, but gone: strike them off {sorted(listed - found)}"


def test_only_the_scanner_reads_rules_text() -> None:
    readers = {module for (module, _, _), (what, _) in LISTED.items() if what == SCANNER}
    assert readers <= {"syntax/scanner.py", "syntax/fast.py"}


def test_no_regular_expression_reads_a_diagnostic_s_message() -> None:
    """What a diagnostic is about travels as data (Diagnostic.about), not as words in its message."""
    for path in sorted(PACKAGE.rglob("*.py")):
        for call in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
                read = [n for arg in call.args for n in ast.walk(arg) if isinstance(n, ast.Attribute)]
                assert not any(n.attr == "message" for n in read) or not (
                    isinstance(call.func.value, ast.Name) and call.func.value.id == "re"
                ), f"{path.name}:{call.lineno}"
