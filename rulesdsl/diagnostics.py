"""Diagnostics: what every stage reports instead of raising, and how they are shown to people."""

from __future__ import annotations

import difflib
import json
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


def render_text(diagnostics: Sequence[Diagnostic], sources: Mapping[str, str]) -> str:
    """`file:line:col: severity: message`, the source line, a caret under the column, and the hint."""
    out: list[str] = []
    for d in diagnostics:
        if d.pos is None:
            out.append(f"{d.severity}: {d.message} [{d.code}]")
        else:
            p = d.pos
            out.append(f"{p.file}:{p.line}:{p.column}: {d.severity}: {d.message} [{d.code}]")
            lines = sources.get(p.file, "").splitlines()
            if 0 < p.line <= len(lines):
                text = lines[p.line - 1].expandtabs(1)
                width = 1
                if p.end_line == p.line and p.end_column > p.column:
                    width = p.end_column - p.column
                gutter = str(p.line)
                out.append(f" {gutter} | {text}")
                out.append(f" {' ' * len(gutter)} | {' ' * (p.column - 1)}{'^' * width}")
        for note in d.notes:
            out.append(f"  note: {note}")
        if d.hint:
            out.append(f"  hint: {d.hint}")
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
