"""`rulesdsl explain CODE`: what a diagnostic code means, with a wrong and a right example.

The texts live in one place, docs/diagnostics.md (shipped inside the package): the code's row in the
table of codes, and its section under "Examples".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from rulesdsl.diagnostics import paint
from rulesdsl.resources import DOCS

DOC_PATH = DOCS / "diagnostics.md"
_ROW = re.compile(r"^\| ([EW]\d{3}) \| ([^|]+) \| (.+) \|$", re.MULTILINE)
_SECTION = re.compile(r"^### ([EW]\d{3})\n(.*?)(?=^### |^## |\Z)", re.MULTILINE | re.DOTALL)
_FENCE = re.compile(r"^(Wrong|Right):\n```(\w+)\n(.*?)\n```", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True, slots=True)
class Example:
    language: str  # "rules": a file of a ruleset (checked by the tests); "text": files and folders described
    text: str


@dataclass(frozen=True, slots=True)
class Explanation:
    code: str
    stage: str
    meaning: str
    wrong: Example | None
    right: Example | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": "warning" if self.code.startswith("W") else "error",
            "stage": self.stage,
            "meaning": self.meaning,
            "wrong": self.wrong.text if self.wrong else None,
            "right": self.right.text if self.right else None,
        }

    def text(self, *, color: bool = False) -> str:
        severity = "warning" if self.code.startswith("W") else "error"
        lines = [f"{paint(self.code, severity, color)} ({severity}, {self.stage}): {_plain(self.meaning)}", ""]
        for label, example in (("Wrong", self.wrong), ("Right", self.right)):
            if example is not None:
                lines.append(paint(label + ":", "where", color))
                lines += ["    " + line for line in example.text.splitlines()]
                lines.append("")
        lines.append(f"More: {DOC_PATH.name}, and `rulesdsl check` prints where and a hint.")
        return "\n".join(lines) + "\n"


_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def _plain(markdown: str) -> str:
    """Markdown as a terminal shows it: no backquotes, a link as its words (`see [Limits](#limits)`)."""
    return _LINK.sub(r"\1", markdown).replace("`", "")


@cache
def explanations() -> dict[str, Explanation]:
    text = DOC_PATH.read_text(encoding="utf-8")
    examples: dict[str, dict[str, Example]] = {}
    for section in _SECTION.finditer(text):
        examples[section.group(1)] = {
            label.lower(): Example(language, body) for label, language, body in _FENCE.findall(section.group(2))
        }
    return {
        code: Explanation(
            code,
            stage.strip(),
            meaning.strip(),
            examples.get(code, {}).get("wrong"),
            examples.get(code, {}).get("right"),
        )
        for code, stage, meaning in _ROW.findall(text)
    }


def explanation(code: str) -> Explanation | None:
    return explanations().get(code)
