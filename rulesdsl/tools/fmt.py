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

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import assert_never

from rulesdsl.diagnostics import Diagnostic
from rulesdsl.language.words import QUOTED
from rulesdsl.syntax import tree as m
from rulesdsl.syntax.scanner import reads_as_one_name
from rulesdsl.syntax.source import SUFFIX
from rulesdsl.syntax.written import expr_text, quote

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


@dataclass(slots=True)
class _Line:
    indent: int  # in spaces
    text: str
    blank: bool = False  # a blank line before it
    comments: list[str] = field(default_factory=list)  # at its end
    first: int = 0  # the source line it was printed from (continuation lines of a field)


class _Printer:
    def value(self, value: m.Value) -> str:
        return expr_text(value, written=True, clarify=True, join=self.items)

    def items(self, items: Sequence[m.Value | m.Name | m.String], texts: Sequence[str]) -> str:
        """Items joined by commas, breaking the line where the author did (marked `\n<line>\x1f`: a line
        break in printed text is never anything else, since strings print theirs as `\n`)."""
        text = texts[0] if texts else ""
        for (before, item), written in zip(pairwise(items), texts[1:], strict=True):
            gap = f"\n{item.pos.line}{_MARK}" if item.pos.line > before.pos.end_line else " "
            text += "," + gap + written
        return text

    def broken(self, text: str, item: m.Field | m.KindField, indent: int) -> list[_Line]:
        """A field's lines, printed as `text` (which ends with the field): the first, then a continuation line
        for every break kept in its lists (a value's or a default's), with the comments written among them."""
        first, *more = text.split("\n")
        lines = [_Line(indent, first, first=item.pos.line)]
        for part in more:
            number, _, text = part.partition(_MARK)
            lines.append(_Line(indent + 2, text, first=int(number)))
        for comment in _inner(item):
            same = [line for line in lines if line.first == comment.pos.line]
            later = [i for i, line in enumerate(lines) if line.first > comment.pos.line]
            if same:
                same[0].comments.append(comment.text)
            elif later:  # on a line of its own, before the next line printed
                lines.insert(later[0], _Line(lines[later[0]].indent, comment.text, first=comment.pos.line))
            else:
                lines[-1].comments.append(comment.text)
        return lines

    def field(self, item: m.Field | m.KindField) -> str:
        if isinstance(item, m.KindField):
            return self.kind_field(item)
        return _lead(item) + self.value(item.value)

    def kind_field(self, item: m.KindField, *, flat: bool = False) -> str:
        """A kind's field; `flat`: a record type's, on one line (its default's line breaks dropped)."""
        text = f"{item.key}: {self.type_text(item.type)}" + ("?" if item.optional else "")
        if item.default is not None:
            default = expr_text(item.default, written=True, clarify=True) if flat else self.value(item.default)
            text += " = " + default
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
            case m.OfferType(item):
                return f"choices of {self.type_text(item)}"
            case m.CheckType(mechanic):
                return "check" + (f" of {mechanic.text}" if mechanic is not None else "")
            case m.NamedType(name, names):
                return f"{name.text} of {', '.join(n.text for n in names)}"
            case m.MapType(value, key):
                return f"map of {self.type_text(value)}" + (f" by {self.type_text(key)}" if key is not None else "")
            case m.RecordType(fields):
                return "record { " + "".join(self.kind_field(f, flat=True) + "  " for f in fields).rstrip() + " }"
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

    def file(self, parsed: m.SourceFile) -> list[_Line]:
        """Every line, blank lines and comments where the tree has them; a statement printed over several
        lines stands apart (a comment right above it stays with it)."""
        lines: list[_Line] = []
        apart = False  # the last statement printed was over several lines
        for statement in parsed.blocks:
            trivia = statement.trivia or _NONE
            printed = self.statement(statement)
            lines += _comments(trivia.leading, 0, apart)
            printed[0].blank = trivia.blank_lines > 0 or (not trivia.leading and (apart or len(printed) > 1))
            lines += printed
            apart = len(printed) > 1
        lines += _comments(parsed.closing, 0, apart)
        if lines:
            lines[0].blank = False
        return lines

    def statement(self, statement: m.Statement) -> list[_Line]:
        trivia = statement.trivia or _NONE
        head = self.header(statement)
        if isinstance(statement, m.Removal):
            return [_Line(0, head, comments=_texts((*trivia.inner, trivia.trailing)))]
        rows = () if isinstance(statement, m.KindDecl) else statement.rows
        items: list[m.Field | m.KindField | m.Row] = sorted(
            [*statement.fields, *rows], key=lambda i: (i.pos.line, i.pos.column)
        )
        trailing = _texts((trivia.trailing,))
        if not items and not trivia.inner and not trivia.closing:
            return [_Line(0, head + " { }", comments=trailing)]
        if statement.pos.line == statement.pos.end_line and not rows:  # written on one line: kept on one
            body = "  ".join(self.field(f) for f in statement.fields)
            return [_Line(0, f"{head} {{ {body} }}", comments=trailing)]
        lines = [_Line(0, head + " {", comments=_texts(trivia.inner))]
        aligned = self.rows(items)
        index = 0
        while index < len(items):
            item = items[index]
            own = item.trivia or _NONE
            lines += _comments(own.leading, 2, False)
            if isinstance(item, m.Row):
                index += 1
                last: m.Field | m.KindField | m.Row = item
                printed = [_Line(2, aligned[id(item)], comments=_texts(_inner(item)))]
            else:
                group: list[m.Field | m.KindField] = [item]  # the fields written on this line
                while index + len(group) < len(items):
                    following = items[index + len(group)]
                    if isinstance(following, m.Row) or following.pos.line != item.pos.line:
                        break
                    group.append(following)
                index += len(group)
                *_, last = group
                printed = self.broken("  ".join(self.field(f) for f in group), last, 2)
            printed[0].blank = own.blank_lines > 0
            printed[-1].comments += _texts(((last.trivia or _NONE).trailing,))
            lines += printed
        lines += _comments(trivia.closing, 2, False)
        lines.append(_Line(0, "}", comments=trailing))
        lines[1].blank = False  # none after the `{`, none before the `}`
        lines[-1].blank = False
        return lines

    def rows(self, items: Sequence[m.Field | m.KindField | m.Row]) -> dict[int, str]:
        """Each row's text, keyed by id(row), aligned with the rows written right above and below it (a
        blank line, a comment or a field between ends a run)."""
        result: dict[int, str] = {}
        run: list[m.Row] = []
        for item in items:
            trivia = item.trivia or _NONE
            if run and (not isinstance(item, m.Row) or trivia.leading or trivia.blank_lines):
                result.update(self.run(run))
                run = []
            if isinstance(item, m.Row):
                run.append(item)
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


def _lead(item: m.Field) -> str:
    """What a field is printed with before its value: `key: `, `key += `, or a step's `let key = `."""
    if item.op == "let":
        return f"let {item.key} = "
    return item.key + (": " if item.op == ":" else f" {item.op} ")


def _bound(low: m.Integer | m.Decimal | None, high: m.Integer | m.Decimal | None) -> str:
    def text(number: m.Integer | m.Decimal | None) -> str:
        return "" if number is None else str(number.value) if isinstance(number, m.Integer) else number.text

    return f"{text(low)}..{text(high)}"


_NONE = m.Trivia()


def _texts(comments: Sequence[m.Comment | None]) -> list[str]:
    return [c.text for c in comments if c is not None]


def _inner(item: m.Field | m.Row | m.KindField) -> tuple[m.Comment, ...]:
    return (item.trivia or _NONE).inner


def _comments(comments: Sequence[m.Comment], indent: int, apart: bool) -> list[_Line]:
    """Comments on lines of their own; the first after a statement printed over several lines stands apart."""
    return [_Line(indent, c.text, c.blank_lines > 0 or (apart and i == 0)) for i, c in enumerate(comments)]


def format_text(text: str, path: str = "<text>") -> str:
    """The canonical form of a source file's text; raises NotFormatted when it does not parse."""
    from rulesdsl.compile.pipeline import gc_paused

    # A 4 MiB file is millions of short-lived objects and no cycles: the collector's passes over them all
    # made formatting grow faster than the file.
    with gc_paused():
        return _format(text, path)


def _format(text: str, path: str) -> str:
    from rulesdsl.compile.pipeline import parser  # the compiler's own parser: what formats is what compiles

    try:
        parsed, problems = parser().parse_file(path, text)
    except RecursionError:
        parsed, problems = None, []
    errors = [d for d in problems if d.severity == "error"]
    if parsed is None or errors:
        raise NotFormatted(errors)
    try:
        lines = _Printer().file(parsed)
    except RecursionError:
        raise NotFormatted([]) from None
    out: list[str] = []
    for line in lines:
        if line.blank:
            out.append("")
        body = " " * line.indent + line.text
        if line.comments:
            body += "  " + " ".join(line.comments)
        out.append(body.rstrip())
    return "\n".join(out) + "\n" if out else ""


def rules_files(paths: Sequence[Path]) -> Iterator[Path]:
    """The `.rules` files named or found below the given folders, in path order."""
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*" + SUFFIX) if p.is_file())
        else:
            yield path
