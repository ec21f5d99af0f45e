"""Comments and blank lines onto the tree: one pass both parsers run, so they attach trivia identically.

Each parser gives its statements (every node spanning its whole text) and the file's comments in order.
With all comments known and every node spanning its text, the lines between two of them are blank.
A comment goes to:
- the statement, field or row it follows on the same line (`trailing`);
- the one it lies within (`inner`: in a value written over several lines, or after a statement's `{`);
- else the next one on (`leading`), or, with nothing after it, the block's `closing` (before its `}`)
  or the file's.
Nodes with nothing to attach keep `trivia=None` and are not rebuilt: most nodes have none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TypeVar, assert_never

from rulesdsl.syntax import tree as m

_T = TypeVar("_T")
_END = 1 << 62  # past the last line of any file
_Item = m.Block | m.KindDecl | m.Patch | m.Removal | m.Field | m.Row | m.KindField
# What an item holds within it: the item (its own items given their trivia), its inner comments, the
# comments closing it.
_Inside = Callable[[_Item, "_Comments"], tuple[_Item, tuple[m.Comment, ...], tuple[m.Comment, ...]]]


class _Comments:
    """The file's comments in order, taken from the front as they are placed."""

    def __init__(self, comments: Sequence[m.Comment]) -> None:
        self.items = comments
        self.at = 0

    def line(self) -> int:
        """The line of the next comment."""
        return self.items[self.at].pos.line if self.at < len(self.items) else _END

    def take(self, before_line: int, after: int | None = None) -> tuple[tuple[m.Comment, ...], int]:
        """The comments on lines before `before_line`; given `after` (the last line holding something),
        each with the count of blank lines above it. Returns them and the last line they hold."""
        taken = []
        while self.line() < before_line:
            comment = self.items[self.at]
            self.at += 1
            if after is not None:
                blank = comment.pos.line - after - 1
                comment = replace(comment, blank_lines=blank) if blank > 0 else comment
                after = comment.pos.line
            taken.append(comment)
        return tuple(taken), after or 0


def attach(
    statements: Sequence[m.Statement], comments: Sequence[m.Comment]
) -> tuple[tuple[m.Statement, ...], tuple[m.Comment, ...]]:
    """The statements with their trivia, and the comments after the last of them."""
    if not comments and _compact(statements):
        return tuple(statements), ()  # nothing to attach: no comment, no blank line
    queue = _Comments(comments)
    placed, line = _spread(statements, queue, 0, _statement)
    closing, _ = queue.take(_END, line)
    return tuple(s for s in placed if isinstance(s, m.Block | m.KindDecl | m.Patch | m.Removal)), closing


def _compact(statements: Sequence[m.Statement]) -> bool:
    """Whether the statements are one line each, one after the other (no blank line anywhere)."""
    line = 0
    for statement in statements:
        if statement.pos.line != line + 1 or statement.pos.end_line != statement.pos.line:
            return False
        line = statement.pos.end_line
    return True


def _spread(items: Sequence[_Item], queue: _Comments, line: int, inside: _Inside) -> tuple[list[_Item], int]:
    """The items of one body, in source order, given their trivia; `line` is the last line holding
    something before them. Returns them and the last line they hold."""
    result: list[_Item] = []
    for k, item in enumerate(items):
        pos = item.pos
        leading, line = queue.take(pos.line, line)
        blank = max(0, pos.line - line - 1)
        item, inner, closing = inside(item, queue)
        trailing = None
        if queue.line() == pos.end_line and (k + 1 == len(items) or items[k + 1].pos.line > pos.end_line):
            trailing = queue.items[queue.at]
            queue.at += 1
        line = pos.end_line
        if leading or blank or trailing is not None or inner or closing:
            item = replace(item, trivia=m.Trivia(leading, blank, trailing, inner, closing))
        result.append(item)
    return result, line


def _within(item: _Item, queue: _Comments) -> tuple[_Item, tuple[m.Comment, ...], tuple[m.Comment, ...]]:
    """A field's, row's or removal's comments: those on its lines before its last."""
    return item, queue.take(item.pos.end_line)[0], ()


def _statement(item: _Item, queue: _Comments) -> tuple[_Item, tuple[m.Comment, ...], tuple[m.Comment, ...]]:
    end = item.pos.end_line
    if item.pos.line == end and queue.line() >= end:
        return item, (), ()  # on one line, with no comment before its end
    match item:
        case m.Removal() | m.Field() | m.Row() | m.KindField():
            return _within(item, queue)
        case m.Block(_, kind_pos, block_id, name, fields, rows):
            header = (name.pos if name else block_id.pos if block_id else kind_pos).end_line
            if queue.line() >= end and _packed((*fields, *rows), header):
                return item, (), ()  # no comment inside, no blank line: nothing to give (most blocks)
            body, inner, closing = _body((*fields, *rows), queue, header, end)
            if body is not None:
                item = replace(item, fields=_only(body, m.Field), rows=_only(body, m.Row))
            return item, inner, closing
        case m.Patch(_, target, fields, rows):
            body, inner, closing = _body((*fields, *rows), queue, target.pos.end_line, end)
            if body is not None:
                item = replace(item, fields=_only(body, m.Field), rows=_only(body, m.Row))
            return item, inner, closing
        case m.KindDecl(name, title, _, kind_fields):
            body, inner, closing = _body(kind_fields, queue, (title or name).pos.end_line, end)
            if body is not None:
                item = replace(item, fields=_only(body, m.KindField))
            return item, inner, closing
        case _:
            assert_never(item)


def _packed(items: Sequence[m.Field | m.Row], header: int) -> bool:
    """Whether the items follow the header's line with no blank line before any of them (where _body, given
    no comment, would give none of them trivia)."""
    line = header
    for item in sorted(items, key=lambda i: (i.pos.line, i.pos.column)):
        if item.pos.line > line + 1:
            return False
        line = item.pos.end_line
    return True


def _only(items: Sequence[_Item], cls: type[_T]) -> tuple[_T, ...]:
    return tuple(i for i in items if isinstance(i, cls))


def _body(
    items: Sequence[m.Field | m.Row | m.KindField], queue: _Comments, header: int, end: int
) -> tuple[list[_Item] | None, tuple[m.Comment, ...], tuple[m.Comment, ...]]:
    """A block's fields and rows (or a kind's fields) after its header's last line, before its `}` on line
    `end`: comments on the header's lines go inside the block, those after its last item close it. The
    items come back only if one of them was given trivia."""
    ordered: list[_Item] = sorted(items, key=lambda i: (i.pos.line, i.pos.column))
    first = ordered[0].pos.line if ordered else end
    inner, _ = queue.take(header + 1 if first > header else header)
    placed, line = _spread(ordered, queue, header, _within)
    closing, _ = queue.take(end, line)
    changed = any(a is not b for a, b in zip(placed, ordered, strict=True))
    return (placed if changed else None), inner, closing


def comment(file: str, text: str, line: int, column: int) -> m.Comment:
    """A comment as a lexer gives it: from its '#' to its line's end."""
    text = text.rstrip()
    return m.Comment(text, m.Position(file, line, column, line, column + len(text)))
