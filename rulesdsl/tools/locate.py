"""Where am I: the statement, field, list item and string a cursor is in, for the language server.

Read from the parsed tree (which statements parsed, and what they are) and from the scanner's tokens
(scanner.scan_lines), which exist for broken text too: the statement being typed usually does not parse. No regular
expression over the source text here: whatever is a word, a string or a key is what the scanner says.

A statement spans its header to its `}`; one whose `}` is missing ends where the next header starts in
column 1 (the rule error recovery splits blocks by), so a broken block never runs into the next one.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from rulesdsl.language import words
from rulesdsl.syntax import fast as fastparse
from rulesdsl.syntax import scanner
from rulesdsl.syntax import tree as m

Token = fastparse.Token
# The scanner's tokens for broken text: an unterminated string (to the line's end), and characters that
# start no token (a run of them up to a space or a token).
OPEN_STRING = "UNCLOSED_STRING"
UNREADABLE = "ERROR"
KEYS = frozenset({"FIELD_KEY", "FIELD_APPEND", "FIELD_REMOVE"})
_OPS = {"FIELD_KEY": ":", "FIELD_APPEND": "+=", "FIELD_REMOVE": "-="}
_WORDS = frozenset({"NAME", *words.KEYWORDS.values()})  # a header's words: names, and words of the language
_DEPTH = scanner.BRACKETS
_NAMES = frozenset({"NAME", "STRING", OPEN_STRING})
NAME_TYPES = _WORDS  # the types of a bare word: a name, or a word of the language (`or`, `ref`, ...)
# After these a value goes on (a list after a comma, an expression after an operator), also on the next line.
_GOES_ON = words.CONTINUES - KEYS - {"POINTS", "LBRACE"}


@dataclass(frozen=True, slots=True)
class Statement:
    """A top-level statement as far as it is written: parsed (`node`) or not (None)."""

    kind: str  # the block's kind; for `kind`, `patch` and `remove` that word
    target: str | None  # the kind a patch or removal changes, the kind a `kind` declares
    id: str | None  # the id or name written in the header (a string without its quotes)
    id_span: m.Position | None  # where that id or name is written
    span: m.Position  # the header to the `}` inclusive, or to where it breaks off
    closed: bool  # its `}` is there
    node: m.Statement | None
    first: int  # its tokens, [first, end)
    end: int


@dataclass(frozen=True, slots=True)
class FieldAt:
    key: str
    op: str  # ":", "+=" or "-="
    key_span: m.Position  # the name, without the ":"
    span: m.Position  # the key to the end of its value
    value: m.Position | None  # None while nothing is written after the key


@dataclass(frozen=True, slots=True)
class Cell:
    """Where in a table row the cursor is: among its keys (before the `->`) or its cells, and which one."""

    keys: bool
    index: int  # from 0


@dataclass(frozen=True, slots=True)
class Place:
    """What a cursor (line, column, both from 1; the column of the character after it) is in."""

    statement: Statement | None
    in_header: bool
    field: FieldAt | None  # the field the cursor's value belongs to (or, in key position, the one before)
    row: m.Position | None  # a table row the cursor is in
    item: int | None  # which item of the field's list (from 0)
    key_position: bool  # where a field's key goes: the start of an entry
    word: Token | None  # the word, string or key the cursor is in or right after
    typed: str  # what is typed of that word before the cursor (a string's without its opening quote)
    quoted: bool  # after a string's opening quote (and before its closing one)
    before: Token | None  # the token before the word: `trait` in `requires: trait Bo`
    cell: Cell | None = None  # in a table row (or a row's keys being typed): which key or cell


# ---------------------------------------------------------------- tokens, broken text too


@functools.lru_cache(maxsize=8)
def lenient_tokens(text: str) -> tuple[Token, ...]:
    """The scanner's tokens of `text` with the line ends the parser sees (scanner.scan_lines), broken text
    too: an unterminated string is one OPEN_STRING token to its line's end, characters no token takes an
    UNREADABLE one, and the scanner reads on after them. On text without mistakes, the fast path's tokens."""
    return tuple((t.type, t.text, t.line, t.column) for t in scanner.scan_lines(text))


def _end(tok: Token) -> tuple[int, int]:
    return tok[2], tok[3] + len(tok[1])


def _span(file: str, first: Token, last: Token) -> m.Position:
    return m.Position(file, first[2], first[3], *_end(last))


# ---------------------------------------------------------------- statements


def statements(source: m.SourceFile) -> list[Statement]:
    """The file's statements, parsed or not, in order."""
    return list(_statements(source))


_last: list[tuple[m.SourceFile, tuple[Statement, ...]]] = []  # by identity: hashing a tree walks all of it


def _statements(source: m.SourceFile) -> tuple[Statement, ...]:
    for known, found in _last:
        if known is source:
            return found
    found = _split(source)
    _last[:] = [(source, found), *_last[:3]]
    return found


def _split(source: m.SourceFile) -> tuple[Statement, ...]:
    toks = lenient_tokens(source.text)
    parsed = {(node.pos.line, node.pos.column): node for node in source.blocks}
    found: list[Statement] = []
    i = 0
    while i < len(toks):
        if toks[i][0] in ("_NL", "RBRACE"):  # a stray `}` belongs to nothing
            i += 1
            continue
        end, closed = _statement_end(toks, i)
        node = parsed.get((toks[i][2], toks[i][3]))
        found.append(_statement(source.path, toks, i, end, closed, node))
        i = end
    return tuple(found)


def _statement_end(toks: Sequence[Token], first: int) -> tuple[int, bool]:
    """Where the statement starting at `first` ends (after its `}`), and whether it was closed."""
    if toks[first][0] == "REMOVE":  # no braces: to the line's end
        i = first
        while i < len(toks) and toks[i][0] != "_NL" and toks[i][2] == toks[first][2]:
            i += 1
        return i, True
    depth = 0
    i = first
    while i < len(toks):
        kind = toks[i][0]
        if kind == "LBRACE":
            depth += 1
        elif kind == "RBRACE":
            depth -= 1
            if depth <= 0:
                return i + 1, True
        elif depth > 0 and i > first and _header_starts(toks, i):
            return i, False  # it lost its `}`: the next block starts here
        elif depth == 0 and kind == "_NL" and i > first:
            return i, False  # a header's line ended before its `{`: words on their own, not the next block's
        i += 1
    return i, False


def _header_starts(toks: Sequence[Token], i: int) -> bool:
    """A block header in column 1 of a new line: words and strings, then `{` (or `remove` ...)."""
    tok = toks[i]
    if tok[3] != 1 or toks[i - 1][2] == tok[2] or tok[0] not in _WORDS:
        return False
    if tok[0] == "REMOVE":
        return True
    j = i
    while j < len(toks) and toks[j][2] == tok[2] and toks[j][0] in (*_WORDS, "STRING"):
        j += 1
    return j < len(toks) and toks[j][0] == "LBRACE" and toks[j][2] == tok[2]


def _statement(
    file: str, toks: Sequence[Token], first: int, end: int, closed: bool, node: m.Statement | None
) -> Statement:
    header = []
    i = first
    while i < end and toks[i][0] not in ("LBRACE", "_NL"):
        header.append(toks[i])
        i += 1
    words = [t for t in header if t[0] != "OVERRIDE"]
    kind = words[0][1] if words else ""
    names = words[1:]
    target = None
    if kind in ("patch", "remove") and names:
        target, names = names[0][1], names[1:]
    elif kind == "kind" and names:
        target = names[0][1]
    # the id when one is written, else the name (a string, without its quotes)
    written = next((t for t in names if t[0] != "STRING"), names[0] if names else None)
    id_ = None if written is None else written[1][1:-1] if written[0] == "STRING" else written[1]
    id_span = None if written is None else _span(file, written, written)
    last = toks[end - 1]
    while last[0] == "_NL" and end - 1 > first:  # a broken block ends at its last token, not a line end
        end -= 1
        last = toks[end - 1]
    span = node.pos if node is not None else _span(file, toks[first], last)  # a parsed one spans to its }
    return Statement(kind, target, id_, id_span, span, closed, node, first, end)


def statement_at(source: m.SourceFile, line: int, column: int) -> Statement | None:
    """The statement the cursor is in: from its first character to just before its `}`; one not closed
    reaches to the next statement (what is typed below it is still its own)."""
    found = _statements(source)
    for index, statement in enumerate(found):
        span = statement.span
        if statement.closed:
            last = (span.end_line, span.end_column - (statement.kind != "remove"))
        elif index + 1 < len(found):
            following = found[index + 1].span
            last = (following.line, following.column - 1)
        else:
            last = (line, column)
        if (span.line, span.column) <= (line, column) <= last:
            return statement
    return None


# ---------------------------------------------------------------- the cursor


def locate(source: m.SourceFile, line: int, column: int) -> Place:
    """Where the cursor at (line, column) is. `source` is the buffer's parse (its `text` is read too)."""
    statement = statement_at(source, line, column)
    nowhere = Place(statement, False, None, None, None, False, None, "", False, None)
    if statement is None:
        return nowhere
    toks = lenient_tokens(source.text)
    body = statement.first
    while body < statement.end and toks[body][0] != "LBRACE":
        body += 1
    word_index = _word_at(toks, statement.first, statement.end, line, column)
    word = toks[word_index] if word_index is not None else None
    # the tokens before the cursor (and before the word it is typing)
    stop = word_index if word_index is not None else _before(toks, statement.first, statement.end, line, column)
    typed, quoted = _typed(word, column)
    if stop <= body or body >= statement.end:
        return Place(statement, True, None, None, None, False, word, typed, quoted, None)
    if word is not None and word[0] in KEYS and column <= word[3] + len(key_name(word)):
        return Place(statement, False, None, None, None, True, word, typed, False, toks[stop - 1])
    # back to the start of the entry the cursor is in: the field's key, a line end, or the `{`
    start = stop - 1
    depth = 0
    while start > body and toks[start][0] not in KEYS and not (toks[start][0] == "_NL" and depth == 0):
        depth -= _DEPTH.get(toks[start][0], 0)
        start -= 1
    before = toks[stop - 1]
    field = _field(source.path, toks, start, statement.end) if toks[start][0] in KEYS else None
    # inside brackets a value goes on over line ends (the scanner drops them there)
    open_brackets = depth < 0
    new_line = before[2] < line and not open_brackets
    key_position = before[0] in ("LBRACE", "_NL") or (
        before[0] not in _GOES_ON and not open_brackets and (new_line or before[0] not in (*KEYS, "POINTS"))
    )
    if field is None:
        if key_position:
            return Place(statement, False, None, None, None, True, word, typed, quoted, before)
        row = _row(source.path, toks, start + 1, statement.end)
        cell = _cell(toks[start + 1 : stop])
        return Place(statement, False, None, row, None, False, word, typed, quoted, before, cell)
    item = None if key_position else _commas(toks[start + 1 : stop])
    return Place(statement, False, field, None, item, key_position, word, typed, quoted, before)


def _cell(entry: Sequence[Token]) -> Cell:
    """Which key or cell of a row comes after these tokens of it."""
    arrow = next((i for i, t in enumerate(entry) if t[0] == "ARROW"), None)
    return Cell(True, _commas(entry)) if arrow is None else Cell(False, _commas(entry[arrow + 1 :]))


def _items(toks: Sequence[Token]) -> list[tuple[Token, ...]]:
    """The tokens split at the commas outside brackets."""
    items: list[tuple[Token, ...]] = []
    depth, begin = 0, 0
    for i, tok in enumerate(toks):
        depth += _DEPTH.get(tok[0], 0)
        if tok[0] == "COMMA" and depth == 0:
            items.append(tuple(toks[begin:i]))
            begin = i + 1
    return [*items, tuple(toks[begin:])]


def field_items(source: m.SourceFile, statement: Statement, key: str) -> list[tuple[Token, ...]]:
    """The items of the field `key` as the statement writes it (its tokens, broken or not), split at the
    commas outside brackets: `next(ref table)` is one item. [] when the statement has no such field."""
    toks = lenient_tokens(source.text)
    for i in range(statement.first, statement.end):
        if toks[i][0] == "FIELD_KEY" and key_name(toks[i]) == key:
            return _items(toks[i + 1 : _value_end(toks, i, statement.end)])
    return []


def rows(source: m.SourceFile, statement: Statement) -> list[tuple[list[tuple[Token, ...]], list[tuple[Token, ...]]]]:
    """The statement's table rows as written (broken or not): each row's keys and cells, as tokens."""
    toks = lenient_tokens(source.text)
    found = []
    i = statement.first
    while i < statement.end and toks[i][0] != "LBRACE":
        i += 1
    while i < statement.end:
        begin = i + 1
        i = begin
        while i < statement.end and toks[i][0] not in ("_NL", "RBRACE", *KEYS):
            i += 1
        entry = [t for t in toks[begin:i] if t[0] != "ROW_SOURCE"]
        arrow = next((j for j, t in enumerate(entry) if t[0] == "ARROW"), None)
        if arrow is not None:
            found.append((_items(entry[:arrow]), _items(entry[arrow + 1 :])))
        if i < statement.end and toks[i][0] in KEYS:
            i = _value_end(toks, i, statement.end) - 1  # past the field's value (a `->` there is no row's)
    return found


def _commas(toks: Sequence[Token]) -> int:
    """The commas outside brackets: which item of a list comes after these tokens."""
    depth = count = 0
    for tok in toks:
        depth += _DEPTH.get(tok[0], 0)
        count += tok[0] == "COMMA" and depth == 0
    return count


def _word_at(toks: Sequence[Token], first: int, end: int, line: int, column: int) -> int | None:
    """The index of the word, string or key the cursor is inside of or right after."""
    for i in range(first, end):
        tok = toks[i]
        if tok[2] == line and tok[3] < column <= tok[3] + len(tok[1]) and tok[0] in (*_WORDS, *_NAMES, *KEYS):
            return i
    return None


def _before(toks: Sequence[Token], first: int, end: int, line: int, column: int) -> int:
    """The index of the first token at or after the cursor."""
    i = first
    while i < end and (toks[i][2], toks[i][3]) < (line, column):
        i += 1
    return i


def _typed(word: Token | None, column: int) -> tuple[str, bool]:
    if word is None:
        return "", False
    typed = word[1][: column - word[3]]
    if word[0] == OPEN_STRING or (word[0] == "STRING" and column < word[3] + len(word[1])):
        return typed[1:], True
    return typed, False


def key_name(tok: Token) -> str:
    """A key token's name: `skills` of `skills :`."""
    return tok[1].rstrip(":+-= \t")


def _value_end(toks: Sequence[Token], key: int, end: int) -> int:
    """Where the value of the key at `key` ends: at the next key, line end (outside brackets) or `}`."""
    i = key + 1
    depth = 0
    while i < end and not (toks[i][0] in (*KEYS, "RBRACE") or (toks[i][0] == "_NL" and depth == 0)):
        depth += _DEPTH.get(toks[i][0], 0)
        i += 1
    return i


def _field(file: str, toks: Sequence[Token], key: int, end: int) -> FieldAt:
    """The field whose key is at `key`: its value runs to the next key, line end (outside brackets) or `}`."""
    i = _value_end(toks, key, end)
    tok = toks[key]
    name = key_name(tok)
    key_span = m.Position(file, tok[2], tok[3], tok[2], tok[3] + len(name))
    value = _span(file, toks[key + 1], toks[i - 1]) if i > key + 1 else None
    return FieldAt(name, _OPS[tok[0]], key_span, _span(file, tok, toks[i - 1]), value)


def _row(file: str, toks: Sequence[Token], first: int, end: int) -> m.Position | None:
    """The table row starting at `first`, if the entry there is one (it has a `->`)."""
    i = first
    while i < end and toks[i][0] not in ("_NL", "RBRACE", *KEYS):
        i += 1
    entry = toks[first:i]
    if i == first or not any(t[0] == "ARROW" for t in entry):
        return None
    return _span(file, entry[0], entry[-1])
