"""Diagnostics: what every stage reports instead of raising, and how they are shown to people."""

from __future__ import annotations

import difflib
import heapq
import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from rulesdsl.reprs import plain_methods


@dataclass(frozen=True, slots=True, order=True)
class Position:
    """Where a node is: its first character and the one after its last (lines and columns from 1)."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int

    def __reduce__(self) -> tuple[type, tuple[str, int, int, int, int]]:
        # as (class, fields): frozen-slots dataclasses pickle ~10x slower, and the parse cache loads many
        return (Position, (self.file, self.line, self.column, self.end_line, self.end_column))


@dataclass(frozen=True, slots=True)
class Diagnostic:
    severity: str  # "error" or "warning"
    code: str  # stable identifier, documented in docs/diagnostics.md
    message: str
    pos: Position | None
    hint: str | None = None
    notes: tuple[str, ...] = field(default=())
    # what the hint suggests writing instead of the text at `pos` ("did you mean"): the editor's quick fixes
    suggestions: tuple[str, ...] = field(default=())
    # The ids (or kinds) of the entities it is about, as data: the pipeline reports a homebrew's diagnostic at
    # the change to one of them, and never reads the message for them.
    about: tuple[str, ...] = field(default=())

    @property
    def sort_key(self) -> tuple[str, int, int, str, str]:
        if self.pos is None:
            return ("", 0, 0, self.code, self.message)
        return (self.pos.file, self.pos.line, self.pos.column, self.code, self.message)


def error(
    code: str,
    message: str,
    pos: Position | None,
    hint: str | None = None,
    suggestions: Sequence[str] = (),
    *,
    about: tuple[str, ...] = (),
) -> Diagnostic:
    return Diagnostic("error", code, message, pos, hint, suggestions=tuple(suggestions), about=about)


def warning(
    code: str, message: str, pos: Position | None, hint: str | None = None, *, about: tuple[str, ...] = ()
) -> Diagnostic:
    return Diagnostic("warning", code, message, pos, hint, about=about)


# Hints compare names only up to this length (names are at most 200 characters): beyond it nobody
# misspelt a name, and difflib's full comparison costs the product of the two lengths.
HINT_LENGTH = 200
_SHORTLIST = 12  # candidates compared in full, the closest by difflib's cheap upper bound


def _close_matches(word: str, pool: Sequence[str], cutoff: float) -> list[str]:
    """difflib.get_close_matches (n=3), linear in the pool: every candidate gets the cheap upper bounds
    (length, then letters in common), and only a shortlist the full, quadratic comparison."""
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(word)
    bounded: list[tuple[float, str]] = []
    for candidate in pool:
        if len(candidate) > HINT_LENGTH:
            continue
        matcher.set_seq1(candidate)
        if matcher.real_quick_ratio() >= cutoff and (bound := matcher.quick_ratio()) >= cutoff:
            bounded.append((bound, candidate))
    scored: list[tuple[float, str]] = []
    for _, candidate in heapq.nlargest(_SHORTLIST, bounded):
        matcher.set_seq1(candidate)
        if (ratio := matcher.ratio()) >= cutoff:
            scored.append((ratio, candidate))
    return [candidate for _, candidate in heapq.nlargest(3, scored)]


def naming_hint(close: Sequence[str]) -> str | None:
    """The hint naming these candidates ('did you mean ...?'), or None when there are none."""
    return "did you mean " + " or ".join(f"'{c}'" for c in close) + "?" if close else None


def _lowered(pool: Sequence[str]) -> dict[str, str]:
    return {c.lower(): c for c in pool}


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """A 'did you mean' hint for the closest candidates, or None when nothing is close. Linear in the
    candidates: to ask one pool about many words, make it a `Suggestions` once."""
    return Suggestions(candidates).hint(word)


def suggest(word: str, candidates: Iterable[str]) -> tuple[str, ...]:
    """The candidates closest to `word` (at most three, the closest first): what a diagnostic whose
    position is that word carries as its `suggestions` (the editor's quick fixes), and its hint names
    (`naming_hint`). Linear in the candidates, as `did_you_mean` is."""
    return tuple(Suggestions(candidates).close(word))


def _grams(word: str) -> set[str]:
    padded = f" {word.lower()} "
    return {padded[i : i + 2] for i in range(len(padded) - 1)}


class Suggestions:
    """A pool of names asked for hints about many words (every unknown name of a kind): each word costs
    a bounded amount of work whatever the size of the pool, so that a file of thousands of unknown names
    among thousands of candidates stays linear.

    The first word is compared with every candidate (as `did_you_mean` does); from the second on, a pool
    bigger than SHORTLIST_POOL is indexed by letter pairs, and only the SHORTLIST_POOL candidates sharing
    the most pairs with the word (reading at most POSTINGS index entries, rarest pairs first) are compared.
    Past HINTED_WORDS words such a pool gives no more hints: nobody reads thousands of them."""

    SHORTLIST_POOL = 32
    POSTINGS = 4_000
    HINTED_WORDS = 2_000

    def __init__(self, candidates: Iterable[str]) -> None:
        self.pool = sorted(set(candidates))
        self.asked = 0
        self._index: dict[str, list[int]] | None = None

    def hint(self, word: str) -> str | None:
        return naming_hint(self.close(word))

    def close(self, word: str) -> list[str]:
        """The candidates closest to `word` (at most three, the closest first), what `hint` names."""
        if len(word) > HINT_LENGTH:
            return []
        self.asked += 1
        big = len(self.pool) > self.SHORTLIST_POOL
        if not big or self.asked == 1:
            pool = self.pool
        elif self.asked > self.HINTED_WORDS:
            return []
        else:
            pool = self._shortlist(word)
        close = _close_matches(word, pool, 0.6)
        if not close:
            lowered = _lowered(pool)
            close = [lowered[m] for m in _close_matches(word.lower(), sorted(lowered), 0.6)]
        return close

    def _shortlist(self, word: str) -> list[str]:
        """The candidates sharing the most letter pairs with the word (in pool order)."""
        if self._index is None:
            self._index = {}
            for number, candidate in enumerate(self.pool):
                if len(candidate) <= HINT_LENGTH:
                    for gram in _grams(candidate):
                        self._index.setdefault(gram, []).append(number)
        postings = sorted((self._index.get(g, []) for g in _grams(word)), key=len)
        shared: Counter[int] = Counter()
        budget = self.POSTINGS
        for numbers in postings:
            if not numbers or (budget <= 0 and shared):
                continue
            shared.update(numbers[: max(budget, 1)])
            budget -= len(numbers)
        return [self.pool[n] for n in sorted(n for n, _ in shared.most_common(self.SHORTLIST_POOL))]


def deduplicate(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Each diagnostic once, in source order."""
    return sorted(set(diagnostics), key=lambda d: d.sort_key)


ECHO_WIDTH = 160  # characters of a source line shown under a diagnostic; longer lines are cut around the column


def source_lines(text: str) -> list[str]:
    """A file's lines as positions count them: split at '\\n' only. (str.splitlines also splits at
    \\f, \\x85, U+2028 and others, which would make the echoed line disagree with the line number.)"""
    return text.split("\n")


def _echo(line: str, column: int, width: int) -> tuple[str, int, int]:
    """The line as shown (tabs as one space, unprintable characters as U+FFFD, cut to ECHO_WIDTH around
    the column) and the caret's column and width in it."""
    line = line.removesuffix("\r").expandtabs(1)
    start = 0
    if len(line) > ECHO_WIDTH:
        start = min(max(0, column - 1 - ECHO_WIDTH // 3), len(line) - ECHO_WIDTH + 1)
        end = start + ECHO_WIDTH
        line = ("…" if start else "") + line[start:end] + ("…" if end < len(line) else "")
        start -= 1 if start else 0  # the "…" takes the first column
    if not line.isprintable():
        line = "".join(c if c.isprintable() else "\ufffd" for c in line)
    caret = max(1, column - start)
    return line, caret, max(1, min(width, len(line) + 1 - caret))


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
    split: dict[str, list[str]] = {}
    for d in shown:
        severity = paint(f"{d.severity}:", d.severity, color)
        if d.pos is None:
            out.append(f"{severity} {d.message} [{d.code}]")
        else:
            p = d.pos
            where = paint(f"{p.file}:{p.line}:{p.column}:", "where", color)
            out.append(f"{where} {severity} {d.message} [{d.code}]")
            if p.file not in split:
                text = sources.get(p.file, "")
                split[p.file] = source_lines(text) if text else []  # nothing read: nothing to show
            lines = split[p.file]
            if 0 < p.line <= len(lines):
                width = 1
                if p.end_line == p.line and p.end_column > p.column:
                    width = p.end_column - p.column
                echoed, caret, width = _echo(lines[p.line - 1], p.column, width)
                gutter = str(p.line)
                bar = paint("|", "dim", color)
                out.append(f" {gutter} {bar} {echoed}")
                out.append(f" {' ' * len(gutter)} {bar} {' ' * (caret - 1)}{paint('^' * width, 'caret', color)}")
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


def _github_data(text: str) -> str:
    """Text as a workflow command's message carries it (GitHub's `escapeData`)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _github_property(text: str) -> str:
    """Text as a workflow command's property carries it (`escapeProperty`: also `:` and `,`)."""
    return _github_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(diagnostics: Sequence[Diagnostic]) -> str:
    """GitHub Actions workflow commands, one line each: `::error file=F,line=L,col=C,endLine=..,endColumn=..,
    title=CODE::message`, the notes and hint on lines of their own in the message (a pull request shows each
    on the line it is about). https://docs.github.com/actions/reference/workflow-commands-for-github-actions"""
    out: list[str] = []
    for d in diagnostics:
        where: list[tuple[str, object]] = []
        if d.pos is not None:
            p = d.pos
            where = [("file", p.file), ("line", p.line), ("col", p.column)]
            if (p.end_line, p.end_column) > (p.line, p.column):
                where += [("endLine", p.end_line), ("endColumn", p.end_column)]
        properties = ",".join(f"{name}={_github_property(str(value))}" for name, value in [*where, ("title", d.code)])
        message = "\n".join([d.message, *(f"note: {n}" for n in d.notes), *([f"hint: {d.hint}"] if d.hint else [])])
        out.append(f"::{d.severity} {properties}::{_github_data(message)}\n")
    return "".join(out)


def summary(diagnostics: Sequence[Diagnostic]) -> str:
    errors = sum(d.severity == "error" for d in diagnostics)
    warnings = len(diagnostics) - errors
    return f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"


plain_methods(globals())
