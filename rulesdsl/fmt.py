"""The formatter: one canonical layout for `.rules` files, printed from the parsed model.

Text comes from the model (values through `formulas.expr_text`, so operators are spaced and parentheses
minimal); layout comes from the positions: the statements, the lines fields share, the line breaks
between list items and blank lines stay where the author put them (several blank lines become one),
and every comment is kept. A file that does not parse is never rewritten.

The canonical style: statements start in column 1, a multi-line block's fields and rows are indented by
two spaces (continuation lines by four), fields sharing a line are two spaces apart, `key: value` with
one space, table rows aligned (keys, `->`, cells after their commas), a blank line around every
multi-line statement, one newline at the end.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate, pairwise
from pathlib import Path
from typing import assert_never

from . import model as m
from .diagnostics import Diagnostic
from .formulas import expr_text, quote
from .scanner import reads_as_one_name
from .source import SUFFIX
from .words import QUOTED

INDENT = "  "
_MARK = "\x1f"


def written_name(name: str) -> str:
    """How a reference to `name` is written: bare when the scanner reads it as that one name and lowering
    reads it as a name (not `yes`, `none`, ...), else quoted."""
    return name if reads_as_one_name(name) and name not in QUOTED else quote(name)


class NotFormatted(Exception):
    """The file does not parse: it is left as it is, and these say why."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        super().__init__(diagnostics[0].message if diagnostics else "cannot format")
        self.diagnostics = tuple(diagnostics)


@dataclass(frozen=True, slots=True)
class Comment:
    line: int
    text: str  # from the '#' to the end of the line, trailing spaces removed
    own_line: bool  # nothing but spaces before it


@dataclass(slots=True)
class _Line:
    first: int  # the source lines it was printed from
    last: int
    indent: int
    text: str
    comments: list[str]
    inside: bool = False  # within a multi-line block (comments before it are indented)


def comments_of(text: str) -> list[Comment]:
    """Every `# ...` outside a string. Scanned from the text rather than collected from the lexer, so it
    does not depend on how the grammar treats comments (ignored, or folded into line ends)."""
    found = []
    for number, line in enumerate(text.split("\n"), start=1):
        i = 0
        while i < len(line):
            ch = line[i]
            if ch == '"':  # strings end at their quote or, unclosed, at the end of the line
                i += 1
                while i < len(line) and line[i] != '"':
                    i += 2 if line[i] == "\\" else 1
            elif ch == "#":
                found.append(Comment(number, line[i:].rstrip(), not line[:i].strip()))
                break
            i += 1
    return found


class _Printer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = list(accumulate((len(line) + 1 for line in text.split("\n")[:-1]), initial=0))

    def written(self, pos: m.Position) -> str:
        """The source text a node spans (one line's worth)."""
        if pos.line != pos.end_line:
            return ""
        start = self.starts[pos.line - 1]
        return self.text[start + pos.column - 1 : start + pos.end_column - 1]

    def spell(self, value: m.Value) -> str | None:
        """Forms the model does not tell apart but people write on purpose: `any lifepath`, `d6`."""
        if isinstance(value, m.CountOf):
            # `any` is not part of the node's position (it starts at the selector), a count is
            written_any = value.count == 1 and not self.written(value.pos)[:1].isdigit()
            lead = "any " if written_any else f"{value.count} of "
            if isinstance(value.selector, m.SelectListed):
                return lead + "(" + self.items(value.selector.refs) + ")"
            rest = expr_text(value).split(" of ", 1)[1]  # a selector holds only names: nothing else to spell
            return lead + (rest.replace("lifepaths", "lifepath", 1) if written_any else rest)
        if isinstance(value, m.ValueList):
            return self.items(value.items)
        if isinstance(value, m.Points):
            return f"{value.amount} pt{'s' * (value.amount != 1)}: " + self.items(value.items)
        if isinstance(value, m.Call):
            return f"{value.function}(" + self.items(value.args) + ")"
        if isinstance(value, m.Dice) and value.count == 1 and self.written(value.pos) == f"d{value.sides}":
            return f"d{value.sides}"
        return None

    def value(self, value: m.Value) -> str:
        return expr_text(value, self.spell, clarify=True)

    def items(self, items: Sequence[m.Value]) -> str:
        """Items joined by commas, breaking the line where the author did (marked `\n<line>\x1f`: a line
        break in printed text is never anything else, since strings print theirs as `\n`)."""
        text = self.value(items[0]) if items else ""
        for before, item in pairwise(items):
            gap = f"\n{item.pos.line}{_MARK}" if item.pos.line > before.pos.end_line else " "
            text += "," + gap + self.value(item)
        return text

    def broken(self, head: str, value: m.Value, first_line: int, indent: int) -> list[_Line]:
        """A field's lines: the first, then a continuation line for every break kept in its lists."""
        first, *more = (head + self.value(value)).split("\n")
        lines = [_Line(first_line, first_line, indent, first, [])]
        for part in more:
            number, _, text = part.partition(_MARK)
            lines.append(_Line(int(number), int(number), indent + 2, text, []))
        lines[-1].last = max(lines[-1].first, value.pos.end_line)
        return lines

    def field(self, item: m.Field | m.KindField) -> str:
        if isinstance(item, m.KindField):
            return self.kind_field(item)
        separator = ": " if item.op == ":" else f" {item.op} "
        return item.key + separator + self.value(item.value)

    def kind_field(self, item: m.KindField) -> str:
        text = f"{item.key}: {self.type_text(item.type)}" + ("?" if item.optional else "")
        if item.default is not None:
            text += " = " + self.value(item.default)
        if item.doc is not None:
            text += " " + quote(item.doc.value)
        return text

    def type_text(self, node: m.TypeExpr) -> str:
        match node:
            case m.SimpleType(name, low, high, bounded):
                return name.text + (f" in {_bound(low, high)}" if bounded else "")
            case m.EnumType(options):
                return "one of " + ", ".join(self.value(o) for o in options)
            case m.RefType(kind):
                return f"ref {kind.text}"
            case m.ListType(item, low, high):
                bound = f" in {_bound(low, high)}" if low is not None or high is not None else ""
                return f"list{bound} of {self.type_text(item)}"
            case m.PointsType(item):
                return f"points of {self.type_text(item)}"
            case m.CheckType(mechanic):
                return "check" + (f" of {mechanic.text}" if mechanic is not None else "")
            case m.NamedType(name, names):
                return f"{name.text} of {', '.join(n.text for n in names)}"
            case _:
                assert_never(node)

    def key(self, key: m.Value) -> str:
        """Row keys: `2-4` is a range there, written without spaces."""
        if (
            isinstance(key, m.Binary)
            and key.op == "-"
            and isinstance(key.left, m.Integer)
            and isinstance(key.right, m.Integer)
            and key.right.value >= 0
        ):
            return f"{key.left.value}-{key.right.value}"
        return self.value(key)

    # ---- statements
    def header(self, statement: m.Statement) -> str:
        match statement:
            case m.Block(kind, _, block_id, name):
                return " ".join([kind, *([block_id.text] if block_id else []), *([quote(name.value)] if name else [])])
            case m.KindDecl(name, title, override):
                words = ["override"] * override + ["kind", name.text] + ([quote(title.value)] if title else [])
                return " ".join(words)
            case m.Patch(kind, target):
                return f"patch {kind.text} {self.value(target)}"
            case m.Removal(kind, target):
                return f"remove {kind.text} {self.value(target)}"

    def end_line(self, statement: m.Statement) -> int:
        """The line of a statement's closing '}' (positions end at its last field or row): only spaces,
        comments and the opening '{' can come between."""
        pos = statement.pos
        if isinstance(statement, m.Removal):
            return pos.end_line
        at, line = self.starts[pos.end_line - 1] + pos.end_column - 1, pos.end_line
        while at < len(self.text) and self.text[at] != "}":
            if self.text[at] == "#":
                at = self.text.find("\n", at)
                at = len(self.text) if at < 0 else at
                continue
            line += self.text[at] == "\n"
            at += 1
        return line

    def statement(self, statement: m.Statement, end: int, comments_inside: bool) -> list[_Line]:
        pos = statement.pos
        head = self.header(statement)
        if isinstance(statement, m.Removal):
            return [_Line(pos.line, end, 0, head, [])]
        fields: tuple[m.Field | m.KindField, ...] = statement.fields
        rows = () if isinstance(statement, m.KindDecl) else statement.rows
        if not fields and not rows and not comments_inside:
            return [_Line(pos.line, end, 0, head + " { }", [])]
        if pos.line == end and not rows:
            body = "  ".join(self.field(f) for f in fields)
            return [_Line(pos.line, end, 0, f"{head} {{ {body} }}", [])]
        lines = [_Line(pos.line, pos.line, 0, head + " {", [])]
        aligned = self.rows(rows)
        items: list[m.Field | m.KindField | m.Row] = sorted([*fields, *rows], key=lambda i: (i.pos.line, i.pos.column))
        index = 0
        while index < len(items):
            item = items[index]
            if isinstance(item, m.Row):
                lines.append(_Line(item.pos.line, item.pos.end_line, 2, aligned[id(item)], []))
                index += 1
                continue
            group = [item]  # the fields written on this line
            while (
                index + len(group) < len(items)
                and not isinstance(items[index + len(group)], m.Row)
                and items[index + len(group)].pos.line == item.pos.line
            ):
                group.append(items[index + len(group)])  # type: ignore[arg-type]
            index += len(group)
            *before, last = group
            head_text = "".join(self.field(f) + "  " for f in before)
            if isinstance(last, m.Field):
                separator = ": " if last.op == ":" else f" {last.op} "
                lines += self.broken(head_text + last.key + separator, last.value, item.pos.line, 2)
            else:
                lines.append(_Line(item.pos.line, last.pos.end_line, 2, head_text + self.field(last), []))
        lines.append(_Line(end, end, 0, "}", []))
        for line in lines[1:]:
            line.inside = True
        return lines

    def rows(self, rows: Sequence[m.Row]) -> dict[int, str]:
        """Each row's text, keyed by id(row), aligned with the rows written right above and below it."""
        result: dict[int, str] = {}
        run: list[m.Row] = []
        for row in rows:
            if run and row.pos.line > run[-1].pos.end_line + 1:  # a blank line, a comment or a field between
                result.update(self.run(run))
                run = []
            run.append(row)
        result.update(self.run(run))
        return result

    def run(self, rows: Sequence[m.Row]) -> dict[int, str]:
        """Rows written together: keys padded to one width, cells aligned after their commas."""
        keys = [", ".join(self.key(k) for k in row.keys) for row in rows]
        cells = [[self.value(c) for c in row.cells] for row in rows]
        key_width = max((len(k) for k in keys), default=0)
        widths: dict[int, int] = {}
        sourced = any(row.source is not None for row in rows)
        for texts in cells:
            for j, cell in enumerate(texts):
                last = j == len(texts) - 1
                if not last or sourced:
                    widths[j] = max(widths.get(j, 0), len(cell) + (not last))
        result = {}
        for row, key, texts in zip(rows, keys, cells, strict=True):
            parts = []
            for j, cell in enumerate(texts):
                last = j == len(texts) - 1
                text = cell if last else cell + ","
                parts.append(text.ljust(widths[j]) if not last or row.source is not None else text)
            line = f"{key.ljust(key_width)} -> " + " ".join(parts)
            if row.source is not None:
                line += " @ " + quote(row.source.value)
            result[id(row)] = line.rstrip()
        return result


def _bound(low: m.Integer | m.Decimal | None, high: m.Integer | m.Decimal | None) -> str:
    def text(number: m.Integer | m.Decimal | None) -> str:
        return "" if number is None else str(number.value) if isinstance(number, m.Integer) else number.text

    return f"{text(low)}..{text(high)}"


def _between(numbers: Sequence[int], low: int, high: int) -> bool:
    """Whether a sorted list holds a number strictly between low and high (in log time: files have
    thousands of statements, comments and blank lines, and each is asked about)."""
    at = bisect_right(numbers, low)
    return at < len(numbers) and numbers[at] < high


def _place_comments(lines: list[_Line], comments: list[Comment], spans: list[tuple[int, int]]) -> list[_Line]:
    """Own-line comments before the first line printed from a later source line; trailing comments on the
    last line printed from their line or before it."""
    result: list[_Line] = []
    own = [c for c in comments if c.own_line]
    trailing = [c for c in comments if not c.own_line]
    starts = [start for start, _ in spans]  # statements in source order: their spans do not overlap
    k = 0
    for line in lines:
        while k < len(own) and own[k].line < line.first:
            comment = own[k]
            at = bisect_left(starts, comment.line) - 1
            inside = at >= 0 and comment.line < spans[at][1]
            indent = max(2, line.indent) if inside else 0
            result.append(_Line(comment.line, comment.line, indent, comment.text, [], inside))
            k += 1
        result.append(line)
    for comment in own[k:]:
        result.append(_Line(comment.line, comment.line, 0, comment.text, []))
    code = [line for line in result if not line.text.startswith("#")]
    # the last of the lines starting at or before it: later ones were printed from later source lines.
    # Comments come in line order, so one sweep over the lines by their first source line finds each.
    by_first = sorted(range(len(code)), key=lambda i: code[i].first)
    seen, last = 0, -1
    for comment in trailing:
        while seen < len(by_first) and code[by_first[seen]].first <= comment.line:
            last = max(last, by_first[seen])
            seen += 1
        if last >= 0:
            code[last].comments.append(comment.text)
        elif code:
            code[-1].comments.append(comment.text)
        else:  # pragma: no cover - a trailing comment follows code, and code is printed
            result.append(_Line(comment.line, comment.line, 0, comment.text, []))
    return result


def format_text(text: str, path: str = "<text>") -> str:
    """The canonical form of a source file's text; raises NotFormatted when it does not parse."""
    from .pipeline import gc_paused

    # A 4 MiB file is millions of short-lived objects and no cycles: the collector's passes over them all
    # made formatting grow faster than the file.
    with gc_paused():
        return _format(text, path)


def _format(text: str, path: str) -> str:
    from .pipeline import parser  # the compiler's own parser: what formats is what compiles

    try:
        parsed, problems = parser().parse_file(path, text)
    except RecursionError:
        parsed, problems = None, []
    errors = [d for d in problems if d.severity == "error"]
    if parsed is None or errors:
        raise NotFormatted(errors)
    printer = _Printer(text)
    comments = comments_of(text)
    comment_lines = [c.line for c in comments]
    lines: list[_Line] = []
    spans = []
    try:
        for statement in parsed.blocks:
            start, end = statement.pos.line, printer.end_line(statement)
            inside = _between(comment_lines, start, end)
            printed = printer.statement(statement, end, inside)
            lines += printed
            if len(printed) > 1:
                spans.append((start, end))
    except RecursionError:
        raise NotFormatted([]) from None
    placed = _place_comments(lines, comments, spans)
    return _join(placed, spans, text)


def _join(lines: list[_Line], spans: list[tuple[int, int]], text: str) -> str:
    blank = [number for number, line in enumerate(text.split("\n"), start=1) if not line.strip()]
    starts = {start for start, _ in spans}
    ends = {end for _, end in spans}
    out: list[str] = []
    previous: _Line | None = None
    for line in lines:
        if previous is not None:
            written_apart = _between(blank, previous.last, line.first)
            opens_or_closes = previous.text.endswith("{") or line.text == "}"
            # a multi-line statement stands apart (a comment right above it stays with it)
            around_block = (
                line.first in starts and not line.inside and line.indent == 0 and not previous.text.startswith("#")
            ) or (previous.last in ends and previous.text == "}")
            if not opens_or_closes and (written_apart or around_block):
                out.append("")
        body = INDENT * (line.indent // 2) + line.text
        if line.comments:
            body += "  " + " ".join(line.comments)
        out.append(body.rstrip())
        previous = line
    return "\n".join(out) + "\n" if out else ""


def rules_files(paths: Sequence[Path]) -> Iterator[Path]:
    """The `.rules` files named or found below the given folders, in path order."""
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*" + SUFFIX) if p.is_file())
        else:
            yield path
