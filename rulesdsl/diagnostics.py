"""Diagnostics: what every stage reports instead of raising, and how they are shown to people."""

from __future__ import annotations

import difflib
import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .model import Position


@dataclass(frozen=True, slots=True)
class Diagnostic:
    severity: str  # "error" or "warning"
    code: str  # stable identifier, documented in docs/diagnostics.md
    message: str
    pos: Position | None
    hint: str | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def sort_key(self) -> tuple[str, int, int, str, str]:
        if self.pos is None:
            return ("", 0, 0, self.code, self.message)
        return (self.pos.file, self.pos.line, self.pos.column, self.code, self.message)


def error(code: str, message: str, pos: Position | None, hint: str | None = None) -> Diagnostic:
    return Diagnostic("error", code, message, pos, hint)


def warning(code: str, message: str, pos: Position | None, hint: str | None = None) -> Diagnostic:
    return Diagnostic("warning", code, message, pos, hint)


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """A 'did you mean' hint for the closest candidates, or None when nothing is close."""
    pool = sorted(set(candidates))
    close = difflib.get_close_matches(word, pool, n=3, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in pool}
        close = [lowered[m] for m in difflib.get_close_matches(word.lower(), sorted(lowered), n=3)]
    if not close:
        return None
    return "did you mean " + " or ".join(f"'{c}'" for c in close) + "?"


def deduplicate(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Each diagnostic once, in source order."""
    return sorted(set(diagnostics), key=lambda d: d.sort_key)


# ANSI styles: bold red errors, bold yellow warnings, bold locations, cyan hints, red carets
_STYLE = {"error": "1;31", "warning": "1;33", "where": "1", "hint": "36", "caret": "1;31", "dim": "2"}


def use_color(stream: object, choice: str = "auto") -> bool:
    """Colour on a terminal, never when piped or when NO_COLOR is set (https://no-color.org)."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def paint(text: str, style: str, color: bool) -> str:
    return f"\x1b[{_STYLE[style]}m{text}\x1b[0m" if color and text else text


def render_text(
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, str],
    *,
    color: bool = False,
    max_errors: int | None = None,
) -> str:
    """`file:line:col: severity: message`, the source line, a caret under the column, and the hint.

    With `max_errors`, only that many are shown in full; the rest are counted by code."""
    shown = diagnostics if max_errors is None else diagnostics[:max_errors]
    out: list[str] = []
    for d in shown:
        severity = paint(f"{d.severity}:", d.severity, color)
        if d.pos is None:
            out.append(f"{severity} {d.message} [{d.code}]")
        else:
            p = d.pos
            where = paint(f"{p.file}:{p.line}:{p.column}:", "where", color)
            out.append(f"{where} {severity} {d.message} [{d.code}]")
            lines = sources.get(p.file, "").splitlines()
            if 0 < p.line <= len(lines):
                text = lines[p.line - 1].expandtabs(1)
                width = 1
                if p.end_line == p.line and p.end_column > p.column:
                    width = p.end_column - p.column
                gutter = str(p.line)
                bar = paint("|", "dim", color)
                out.append(f" {gutter} {bar} {text}")
                out.append(f" {' ' * len(gutter)} {bar} {' ' * (p.column - 1)}{paint('^' * width, 'caret', color)}")
        for note in d.notes:
            out.append(f"  note: {note}")
        if d.hint:
            out.append(f"  {paint('hint:', 'hint', color)} {d.hint}")
    rest = diagnostics[len(shown) :]
    if rest:
        counts = Counter(d.code for d in rest)
        by_code = ", ".join(f"{code} \u00d7{n}" for code, n in sorted(counts.items(), key=lambda i: (-i[1], i[0])))
        out.append(f"... and {len(rest)} more ({by_code}); --max-errors 0 shows them all")
    return "\n".join(out) + ("\n" if out else "")


def render_json(diagnostics: Sequence[Diagnostic]) -> str:
    items = []
    for d in diagnostics:
        item: dict[str, object] = {"severity": d.severity, "code": d.code, "message": d.message}
        if d.pos is not None:
            item.update(
                file=d.pos.file,
                line=d.pos.line,
                column=d.pos.column,
                end_line=d.pos.end_line,
                end_column=d.pos.end_column,
            )
        if d.hint:
            item["hint"] = d.hint
        if d.notes:
            item["notes"] = list(d.notes)
        items.append(item)
    return json.dumps({"diagnostics": items}, indent=2, ensure_ascii=False) + "\n"


def summary(diagnostics: Sequence[Diagnostic]) -> str:
    errors = sum(d.severity == "error" for d in diagnostics)
    warnings = len(diagnostics) - errors
    return f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"
