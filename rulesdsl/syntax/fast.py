"""The fast path of the syntax stage: a hand-written scanner and recursive-descent parser for files that parse
cleanly, building exactly the tree Lark builds (the same `model` nodes, the same positions).

Lark (grammar/rules.lark, syntax.py) stays the grammar of record and the path that explains mistakes:
whenever this parser meets anything it does not handle exactly (a mistake, an unusual form, a word of
the language used as a name where only Lark's contextual lexer knows what it is), it raises `Fallback`
and the file is parsed by Lark. tests/test_fastparse.py holds the two to identical trees and diagnostics
over every `.rules` file we have, the benchmark corpora and generated sources.

Why it can use one scanner for the whole file where Lark's lexer depends on the parser state: the scanner
tries the terminals in Lark's order (priority, then width), as Lark's contextual lexer does for the ones a
state accepts. When the parser below accepts a token, its grammar allows that token there, so the LALR
state accepts it too, and Lark's lexer (trying the same terminals in the same order) makes the same token.
Where the parser wants something else, it falls back. The one exception it makes on purpose: in places
that take only a name (a block's kind and id, `ref X`, `trait X`, ...), words of the language are names,
as they are for Lark there (only NAME and STRING are accepted in those states).

Its tokens come from the scanner (scanner.py), built from the grammar's own terminals and keywords (words.py).
The parser was written for one version of the grammar: if grammar/rules.lark changes, the fast path turns
itself off (every file goes to Lark) until it is brought up to date and its words are generated again from
the grammar (tests say so, naming any terminal or keyword it lacks).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from sys import intern
from typing import Any, TypeVar

from rulesdsl.language import words
from rulesdsl.resources import GRAMMAR as GRAMMAR_PATH
from rulesdsl.syntax import scanner, trivia
from rulesdsl.syntax import tree as m
from rulesdsl.syntax.limits import MAX_DIGITS, MAX_ROWS, MAX_STRING
from rulesdsl.syntax.scanner import StringEscapeError, let_key, unescape

# sha256 of the grammar this parser implements; see the module docstring.
GRAMMAR_SHA256 = "797d1a762a515bda4e13a134b01ac5550b60a48ab17c900b72fd5d97b2024f74"


class Fallback(Exception):
    """This file is for Lark: it has a mistake, or a form the fast path leaves to the grammar of record."""


@cache
def enabled() -> bool:
    """Whether the fast path implements the grammar in use: the grammar it was written for, its words
    generated from that grammar (words.py), every terminal placed in the scanner."""
    grammar = GRAMMAR_PATH.read_bytes()
    return hashlib.sha256(grammar).hexdigest() == GRAMMAR_SHA256 and words.fresh(grammar) and not scanner.UNPLACED


_DEPTH = scanner.BRACKETS
_KEYWORD_TYPES = frozenset(words.KEYWORDS.values())
_TOKEN, _RENAMED, _FIELDS = scanner.TOKEN, scanner.RENAMED, scanner.FIELDS
# How the scanner treats a token type: 1 a line end, 2 a word (maybe of the language), 3 a field key, 4 renamed,
# 5 a bracket; any other type is taken as it is.
_SPECIAL = {"_NL": 1, "NAME": 2, "FIELD": 3, **dict.fromkeys(_RENAMED, 4), **dict.fromkeys(_DEPTH, 5)}
_TRAILING = scanner.TRAILING
# Each group of the scanner's pattern by its number: the token type it makes and how (see _SPECIAL). Every
# group of the pattern is a token's (named), so the last group a match closes is its token's.
assert _TOKEN.groups == len(_TOKEN.groupindex), "the scanner's pattern has a group that is not a token"
_GROUP_NAMES: list[str] = [""] * (_TOKEN.groups + 1)
for _name, _number in _TOKEN.groupindex.items():
    _GROUP_NAMES[_number] = _name
_GROUP_HOWS: list[int | None] = [_SPECIAL.get(name) for name in _GROUP_NAMES]

# Types that can start an expression (an `atom`, or a unary operator in front of one).
_ATOM_START = frozenset(
    {
        *("INT", "INT_PLUS", "DECIMAL", "DICE", "MULTIPLIER", "STRING", "NAME", "FUNCTION", "LPAR", "NONE_DASH"),
        *("TIMES", "QUOTED_FUNCTION"),
        *("REF", "TRAIT", "SKILL", "ANY", "MINUS", "PLUS", "CMP", "NOT"),
    }
)

_T = TypeVar("_T")
Token = tuple[str, str, int, int]  # type, text, line, column (1-based); no token but line ends spans lines


def tokens(text: str, comments: list[Token] | None = None) -> tuple[list[Token], set[int]]:
    """The file's tokens as Lark's lexer and line-end postlexer give them, and the indexes of tokens whose
    following line end was dropped because of their type (where a word is a name after all, that line end
    would have counted: the parser falls back there). Given a list, the comments go into it (as COMMENT
    tokens, spaces and a '\r' at their end left on): a comment is what the scanner skips before a line end,
    or at the end of the file."""
    result: list[Token] = []
    dropped: set[int] = set()
    append = result.append
    line, line_start, depth, previous = 1, 0, 0, "_NL"
    pos = 0
    keywords = words.KEYWORDS
    continues = words.CONTINUES
    names, hows = _GROUP_NAMES, _GROUP_HOWS
    # A token is read where the last one ended (None: the end, after a last comment, or a mistake); it is its
    # group's span, found by the group's number (cheaper than by name).
    match = _TOKEN.match
    while (found := match(text, pos)) is not None:
        index = found.lastindex
        assert index is not None  # every alternative of the pattern is a group
        start, pos = found.span(index)
        how = hows[index]
        if how is None:  # the commonest: the token as it is
            kind = names[index]
            append((kind, text[start:pos], line, start - line_start + 1))
            previous = kind
            continue
        value = text[start:pos]
        if how == 1:  # a line end
            if comments is not None and (at := text.find("#", found.start(), start)) >= 0:
                comments.append(("COMMENT", text[at:start], line, at - line_start + 1))
            if depth <= 0 and previous != "_NL":
                if previous in continues:
                    dropped.add(len(result) - 1)
                else:
                    append(("_NL", value, line, start - line_start + 1))
                    previous = "_NL"
            line += value.count("\n")
            line_start = pos
            continue
        kind = names[index]
        if how == 2:
            kind = keywords.get(value, "NAME")
            value = intern(value)  # names come back again and again: one string each
        elif how == 3:
            kind = _FIELDS[value[-1] if value[-1] == ":" else value[-2]]
        elif how == 4:
            kind = _RENAMED[kind]
        else:
            depth = max(0, depth + _DEPTH[kind])
        append((kind, value, line, start - line_start + 1))
        previous = kind
    if not _TRAILING.match(text, pos):
        raise Fallback("no token here")
    if comments is not None and (at := text.find("#", pos)) >= 0:
        comments.append(("COMMENT", text[at:], line, at - line_start + 1))
    end = len(text)
    append(("$END", "", line, end - line_start + 1))
    return result, dropped


def _maker(cls: type[_T]) -> Callable[..., _T]:
    """A constructor for a frozen slotted node that sets its slots directly: what the dataclass `__init__`
    does, about twice as fast (the fast path makes hundreds of thousands of nodes)."""
    names: tuple[str, ...] = cls.__slots__  # type: ignore[attr-defined]
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls}
    namespace.update({f"s{i}": vars(cls)[name].__set__ for i, name in enumerate(names)})
    args = ", ".join(f"a{i}" for i in range(len(names)))
    body = "".join(f"    s{i}(o, a{i})\n" for i in range(len(names)))
    exec(f"def make({args}):\n    o = new(cls)\n{body}    return o\n", namespace)  # noqa: S102  (names by number)
    return namespace["make"]  # type: ignore[no-any-return]


_P = _maker(m.Position)
_Name = _maker(m.Name)
_String = _maker(m.String)
_Integer = _maker(m.Integer)
_Field = _maker(m.Field)
_Binary = _maker(m.Binary)
# The nodes made most often besides (one or more in each lifepath), each with every field given.
_Block, _Row, _Quantity, _Points = _maker(m.Block), _maker(m.Row), _maker(m.Quantity), _maker(m.Points)
_ValueList, _AnyOf, _CountOf = _maker(m.ValueList), _maker(m.AnyOf), _maker(m.CountOf)
_InSetting, _SelectLifepaths = _maker(m.InSetting), _maker(m.SelectLifepaths)

_PARENT_FREE = frozenset({"NAME", "STRING", "INT", "DECIMAL", "DICE", "MULTIPLIER", "INT_PLUS", "NONE_DASH"})
# What may follow a complete value in a field: the field ends there.
_VALUE_END = frozenset({"FIELD_KEY", "_NL", "RBRACE", "FIELD_APPEND", "FIELD_REMOVE", "LET"})
# The values a map's entry may have after its key (`land 25`): one token each; in a default, no string.
_PLAIN_ENTRIES = frozenset({"INT", "DECIMAL", "DICE", "MULTIPLIER"})
_ENTRY_VALUES = _PLAIN_ENTRIES | {"STRING"}


class _Parser:
    def __init__(self, path: str, text: str) -> None:
        self.file = path
        self.comments: list[Token] = []
        self.toks, self.dropped = tokens(text, self.comments)
        self.i = 0

    # -- tokens and positions
    def fail(self, why: str = "") -> Fallback:
        return Fallback(why or f"token {self.toks[self.i]}")

    def expect(self, kind: str) -> Token:
        tok = self.toks[self.i]
        if tok[0] != kind:
            raise self.fail()
        self.i += 1
        return tok

    def pos(self, tok: Token) -> m.Position:
        return _P(self.file, tok[2], tok[3], tok[2], tok[3] + len(tok[1]))

    def span(self, first: m.Position, last: m.Position) -> m.Position:
        return _P(self.file, first.line, first.column, last.end_line, last.end_column)

    def through_last(self, first: m.Position) -> m.Position:
        """From `first` to the end of the last token taken."""
        tok = self.toks[self.i - 1]
        return _P(self.file, first.line, first.column, tok[2], tok[3] + len(tok[1]))

    def name_token(self) -> Token:
        """A token where only a name (or a string) may stand: words of the language are names there."""
        tok = self.toks[self.i]
        if tok[0] != "NAME" and (
            tok[1] not in words.KEYWORDS or tok[0] != words.KEYWORDS[tok[1]] or self.i in self.dropped
        ):
            raise self.fail()
        self.i += 1
        return tok

    def name(self) -> m.Name:
        tok = self.name_token()
        return _Name(tok[1], self.pos(tok))

    def string(self, tok: Token) -> m.String:
        if len(tok[1]) - 2 > MAX_STRING:
            raise self.fail("a string over the limit (E105)")
        body = intern(tok[1][1:-1])
        if "\\" in body:
            try:
                body = unescape(body)
            except StringEscapeError:
                raise self.fail("bad escape") from None
        return _String(body, self.pos(tok))

    def ref(self) -> m.Name | m.String:
        tok = self.toks[self.i]
        if tok[0] == "STRING":
            self.i += 1
            return self.string(tok)
        return self.name()

    # -- statements
    def source_file(self) -> tuple[m.Statement, ...]:
        toks = self.toks
        statements: list[m.Statement] = []
        while True:
            kind = toks[self.i][0]
            if kind == "_NL":
                self.i += 1
            elif kind == "$END":
                return tuple(statements)
            elif kind == "KIND" or kind == "OVERRIDE":
                statements.append(self.kind_decl())
            elif kind == "PATCH":
                statements.append(self.patch())
            elif kind == "REMOVE":
                statements.append(self.removal())
            else:
                statements.append(self.block())

    def block(self) -> m.Block:
        toks = self.toks
        kind_tok = self.name_token()
        kind_pos = self.pos(kind_tok)
        block_id = None
        title = None
        if toks[self.i][0] != "STRING" and toks[self.i][0] != "LBRACE":
            block_id = self.name()
        if toks[self.i][0] == "STRING":
            title = self.string(toks[self.i])
            self.i += 1
        self.expect("LBRACE")
        fields, rows = self.body(False)
        return _Block(kind_tok[1], kind_pos, block_id, title, fields, rows, self.through_last(kind_pos), None)

    def body(self, patch: bool) -> tuple[tuple[m.Field, ...], tuple[m.Row, ...]]:
        """`{ row? (field | _NL row?)* }`, after the `{`, through the `}`."""
        toks = self.toks
        fields: list[m.Field] = []
        rows: list[m.Row] = []
        row_ok = True
        while True:
            tok = toks[self.i]
            kind = tok[0]
            if kind == "RBRACE":
                self.i += 1
                return tuple(fields), tuple(rows)
            if kind == "_NL":
                self.i += 1
                row_ok = True
                continue
            if kind == "FIELD_KEY" or (patch and (kind == "FIELD_APPEND" or kind == "FIELD_REMOVE")):
                self.i += 1
                value = self.value()
                key = intern(tok[1].rstrip(":+-= \t"))
                key_pos = _P(self.file, tok[2], tok[3], tok[2], tok[3] + len(key))
                op = ":" if kind == "FIELD_KEY" else ("+=" if kind == "FIELD_APPEND" else "-=")
                fields.append(_Field(key, value, self.through_last(key_pos), op, key_pos, None))
                row_ok = False
                continue
            if kind == "LET" and not patch:
                self.i += 1
                value = self.expr()
                key, offset = let_key(tok[1])
                start = self.pos(tok)
                key_pos = _P(self.file, tok[2], tok[3] + offset, tok[2], tok[3] + offset + len(key))
                fields.append(_Field(intern(key), value, self.through_last(start), "let", key_pos, None))
                row_ok = False
                continue
            if not row_ok:
                raise self.fail()
            row = self.row()
            rows.append(row)
            if len(rows) > MAX_ROWS:
                raise self.fail("a table over the limit (E107)")
            row_ok = False

    def row(self) -> m.Row:
        toks = self.toks
        first = self.pos(toks[self.i])  # a row spans its signs and brackets too: `-1 -> ...`, `(a) -> ...`
        keys = [self.expr()]
        while toks[self.i][0] == "COMMA":
            self.i += 1
            keys.append(self.expr())
        self.expect("ARROW")
        cells = [self.expr()]
        while toks[self.i][0] == "COMMA":
            self.i += 1
            cells.append(self.expr())
        source = None
        tok = toks[self.i]
        if tok[0] == "ROW_SOURCE":
            self.i += 1
            at = tok[1].index('"')
            body = self.string(("STRING", tok[1][at:], tok[2], tok[3])).value
            source = _String(body, self.pos(tok))
        return _Row(tuple(keys), tuple(cells), source, self.through_last(first), None)

    def patch(self) -> m.Patch:
        patch_tok = self.expect("PATCH")
        kind = self.name()
        target = self.ref()
        self.expect("LBRACE")
        fields, rows = self.body(True)
        return m.Patch(kind, target, fields, rows, self.through_last(self.pos(patch_tok)))

    def removal(self) -> m.Removal:
        remove_tok = self.expect("REMOVE")
        kind = self.name()
        target = self.ref()
        if self.toks[self.i][0] not in ("_NL", "$END"):
            raise self.fail()
        return m.Removal(kind, target, self.span(self.pos(remove_tok), target.pos))

    # -- kind declarations
    def kind_decl(self) -> m.KindDecl:
        toks = self.toks
        override = None
        if toks[self.i][0] == "OVERRIDE":
            override = self.pos(toks[self.i])
            self.i += 1
        keyword = self.pos(self.expect("KIND"))
        name = self.name()
        title = None
        if toks[self.i][0] == "STRING":
            title = self.string(toks[self.i])
            self.i += 1
        self.expect("LBRACE")
        if toks[self.i][0] == "_NL":
            self.i += 1
        fields: list[m.KindField] = []
        while toks[self.i][0] != "RBRACE":
            fields.append(self.kind_field())
            if toks[self.i][0] == "_NL":
                self.i += 1
        self.i += 1
        first = override if override is not None else keyword
        return m.KindDecl(name, title, override is not None, tuple(fields), first, self.through_last(first))

    def kind_field(self) -> m.KindField:
        toks = self.toks
        key_tok = self.expect("FIELD_KEY")
        type_expr = self.type_term()
        optional = False
        if toks[self.i][0] == "OPTIONAL":
            optional = True
            self.i += 1
        default: m.Value | None = None
        if toks[self.i][0] == "CMP":
            if toks[self.i][1] != "=":
                raise self.fail("a default is written '= value'")
            self.i += 1
            default = self.items(self.default_item)
        doc = None
        if toks[self.i][0] == "STRING":
            doc = self.string(toks[self.i])
            self.i += 1
        key = key_tok[1].rstrip(":+-= \t")
        key_pos = _P(self.file, key_tok[2], key_tok[3], key_tok[2], key_tok[3] + len(key))
        return m.KindField(key, type_expr, optional, default, doc, self.through_last(key_pos), key_pos)

    def type_term(self) -> m.TypeExpr:
        toks = self.toks
        tok = toks[self.i]
        kind = tok[0]
        if kind == "REF":
            self.i += 1
            name = self.name()
            return m.RefType(name, self.span(self.pos(tok), name.pos))
        if kind == "ONE_OF":
            self.i += 1
            options = [self.ref()]
            while toks[self.i][0] == "COMMA":
                self.i += 1
                options.append(self.ref())
            return m.EnumType(tuple(options), self.span(self.pos(tok), options[-1].pos))
        if kind == "LIST_OF" or kind == "POINTS_OF" or kind == "CHOICES_OF":
            self.i += 1
            item = self.type_term()
            if isinstance(item, m.MapType):
                raise self.fail("a map in a list: Lark says so")
            if kind == "POINTS_OF":
                return m.PointsType(item, self.span(self.pos(tok), item.pos))
            if kind == "CHOICES_OF":
                return m.OfferType(item, self.span(self.pos(tok), item.pos))
            return m.ListType(item, None, None, self.span(self.pos(tok), item.pos))
        if kind == "LIST_IN":
            self.i += 1
            low, high, _ = self.bound()
            self.expect("OF")
            item = self.type_term()
            if isinstance(item, m.MapType):
                raise self.fail("a map in a list: Lark says so")
            return m.ListType(item, low, high, self.span(self.pos(tok), item.pos))
        if kind == "MAP_OF":
            self.i += 1
            value = self.type_term()
            key = None
            if toks[self.i][0] == "BY":
                self.i += 1
                key = self.type_term()
            if isinstance(value, m.MapType) or isinstance(key, m.MapType):
                raise self.fail("a map in a map: Lark says so")
            return m.MapType(value, key, self.span(self.pos(tok), (key or value).pos))
        if kind == "RECORD":
            self.i += 1
            fields: list[m.KindField] = []
            while toks[self.i][0] != "RBRACE":
                fields.append(self.kind_field())
            self.i += 1
            return m.RecordType(tuple(fields), self.through_last(self.pos(tok)))
        if kind == "CHECK":
            self.i += 1
            mechanic = None
            if toks[self.i][0] == "OF":
                self.i += 1
                mechanic = self.name()
            return m.CheckType(mechanic, self.span(self.pos(tok), mechanic.pos if mechanic else self.pos(tok)))
        if kind in _KEYWORD_TYPES and kind != "NAME" and kind not in ("CHECK", "REF"):
            tok = self.name_token()
        elif kind == "NAME":
            self.i += 1
        else:
            raise self.fail()
        name = _Name(tok[1], self.pos(tok))
        if toks[self.i][0] == "OF":
            self.i += 1
            names = [self.name()]
            while toks[self.i][0] == "COMMA":
                self.i += 1
                names.append(self.name())
            return m.NamedType(name, tuple(names), self.span(name.pos, names[-1].pos))
        if toks[self.i][0] == "IN":
            self.i += 1
            low, high, last = self.bound()
            return m.SimpleType(name, low, high, True, self.span(name.pos, last))
        return m.SimpleType(name, None, None, False, name.pos)

    def bound(self) -> tuple[m.Integer | m.Decimal | None, m.Integer | m.Decimal | None, m.Position]:
        low = self.signed_number() if self.toks[self.i][0] != "DOTS" else None
        dots = self.pos(self.expect("DOTS"))
        kind = self.toks[self.i][0]
        high = self.signed_number() if kind in ("INT", "MINUS", "DECIMAL") else None
        return low, high, high.pos if high is not None else dots

    def signed_number(self) -> m.Integer | m.Decimal:
        tok = self.toks[self.i]
        self.i += 1
        if tok[0] == "INT":
            return _Integer(int(tok[1]), self.pos(tok))
        if tok[0] == "DECIMAL":
            return m.Decimal(tok[1], self.pos(tok))
        if tok[0] == "MINUS" and self.toks[self.i][0] == "DECIMAL":  # `-1.5`: a bound below zero
            self.i += 1
            return m.Decimal("-" + self.toks[self.i - 1][1], self.through_last(self.pos(tok)))
        if tok[0] == "MINUS":
            number = self.expect("INT")
            return _Integer(-int(number[1]), self.through_last(self.pos(tok)))
        raise self.fail()

    # -- values
    def quantity(self, tok: Token) -> m.Quantity:
        number, unit = tok[1].split(None, 1)
        return _Quantity(int(number), unit.strip(), number[0] in "+-", self.pos(tok))

    def value(self) -> m.Value:
        """`items`, or `POINTS items`."""
        toks = self.toks
        tok = toks[self.i]
        if tok[0] == "POINTS":
            self.i += 1
            rest = self.items(self.item)
            items = rest.items if isinstance(rest, m.ValueList) else (rest,)
            amount, word = tok[1].split()[:2]
            return _Points(int(amount), items, self.span(self.pos(tok), rest.pos), not word.startswith("pts"))
        # The commonest value by far: one name, string or number, and the field ends.
        following = toks[self.i + 1][0]
        if following in _VALUE_END:
            kind = tok[0]
            if kind == "NAME":
                self.i += 1
                return _Name(tok[1], self.pos(tok))
            if kind == "STRING":
                self.i += 1
                return self.string(tok)
            if kind == "INT":
                self.i += 1
                return _Integer(int(tok[1]), self.pos(tok))
            if kind == "QUANTITY":
                self.i += 1
                return self.quantity(tok)
        return self.items(self.item)

    def items(self, item: Callable[[], m.Value]) -> m.Value:
        """Items, each read by `item`, separated by commas (one item is itself)."""
        toks = self.toks
        first = item()
        if toks[self.i][0] != "COMMA":
            return first
        items = [first]
        while toks[self.i][0] == "COMMA":
            self.i += 1
            items.append(item())
        return _ValueList(tuple(items), self.span(first.pos, items[-1].pos))

    def item(self) -> m.Value:
        """An item of a field's value: a check, or what a default's item may be (a map's entry with text too)."""
        toks = self.toks
        tok = toks[self.i]
        kind = tok[0]
        # The commonest item by far: a name or a string, alone (`leads: a, b`, `skills: 3 pts: "A", "B"`), as
        # `expr` takes it without a ladder to climb.
        if (kind == "STRING" or kind == "NAME") and toks[self.i + 1][0] in _SIMPLE_END:
            self.i += 1
            return self.string(tok) if kind == "STRING" else _Name(tok[1], self.pos(tok))
        if kind == "CHECK":
            self.i += 1
            following = toks[self.i][0]
            if following not in _ATOM_START:
                if following in _KEYWORD_TYPES or following in ("FIELD_APPEND", "FIELD_REMOVE"):
                    raise self.fail()
                return _Name(tok[1], self.pos(tok))  # `style: check`: the word, not a check
            modifier = self.sum()
            if toks[self.i][0] == "INT_PLUS":
                target = toks[self.i]
                self.i += 1
                target_pos = self.pos(target)
                return m.Check(modifier, int(target[1][:-1]), self.span(self.pos(tok), target_pos), target_pos)
            if isinstance(modifier, m.AtLeast):  # `check 8+`: no modifier
                return m.Check(None, modifier.value, self.span(self.pos(tok), modifier.pos), modifier.pos)
            raise self.fail("a check needs a target")
        return self.default_item(_ENTRY_VALUES)

    def default_item(self, entries: frozenset[str] = _PLAIN_ENTRIES) -> m.Value:
        """An item of a kind's default: a quantity, a record, a map's entry or an expression. In a default a
        name and then a string are the default and the field's doc, so a map's entry there takes no string."""
        toks = self.toks
        tok = toks[self.i]
        if tok[0] == "QUANTITY":
            self.i += 1
            return self.quantity(tok)
        if tok[0] == "LBRACE":
            return self.record()
        if tok[0] == "NAME" and toks[self.i + 1][0] in entries:  # `land 25`: a map's entry
            self.i += 2
            key = _Name(tok[1], self.pos(tok))
            entry = self.atom_of(toks[self.i - 1])
            return m.MapEntry(key, entry, self.span(key.pos, entry.pos))
        return self.expr()

    def record(self) -> m.Record:
        """`{ field* }`, on one line."""
        toks = self.toks
        first = self.pos(self.expect("LBRACE"))
        fields: list[m.Field] = []
        while toks[self.i][0] == "FIELD_KEY":
            tok = toks[self.i]
            self.i += 1
            value = self.value()
            key = intern(tok[1].rstrip(": \t"))
            key_pos = _P(self.file, tok[2], tok[3], tok[2], tok[3] + len(key))
            fields.append(_Field(key, value, self.through_last(key_pos), ":", key_pos, None))
        self.expect("RBRACE")
        return m.Record(tuple(fields), self.through_last(first))

    # -- expressions: one function per level of the grammar's precedence ladder
    def expr(self) -> m.Value:
        toks = self.toks
        i = self.i
        tok = toks[i]
        # A lone name, string or number (most keys, cells and list items): no ladder to climb.
        if tok[0] in _PARENT_FREE and toks[i + 1][0] in _SIMPLE_END:
            self.i = i + 1
            return self.atom_of(tok)
        first = self.and_expr()
        if toks[self.i][0] != "OR":
            return first
        items = [first]
        while toks[self.i][0] == "OR":
            self.i += 1
            items.append(self.and_expr())
        return _AnyOf(tuple(items), self.through_last(self.pos(tok)))

    def and_expr(self) -> m.Value:
        toks = self.toks
        start = self.pos(toks[self.i])
        first = self.not_expr()
        if toks[self.i][0] != "AND":
            return first
        items = [first]
        while toks[self.i][0] == "AND":
            self.i += 1
            items.append(self.not_expr())
        return m.AllOf(tuple(items), self.through_last(start))

    def not_expr(self) -> m.Value:
        tok = self.toks[self.i]
        if tok[0] == "NOT":
            self.i += 1
            operand = self.not_expr()
            return m.Not(operand, self.through_last(self.pos(tok)))
        return self.compare()

    def compare(self) -> m.Value:
        toks = self.toks
        start = self.pos(toks[self.i])
        left = self.sum()
        tok = toks[self.i]
        kind = tok[0]
        if kind == "CMP":
            self.i += 1
            right = self.sum()
            op = "=" if tok[1] == "==" else tok[1]
            return m.Comparison(op, left, right, self.through_last(start))
        if kind == "IN":
            self.i += 1
            low_start = self.pos(toks[self.i])
            low = self.sum()
            self.expect("DOTS")
            high = self.sum()
            within = m.ClosedRange(low, high, self.through_last(low_start))
            return m.Membership(left, within, self.through_last(start))
        if kind == "DOTS":
            self.i += 1
            high = self.sum()
            return m.ClosedRange(left, high, self.through_last(start))
        return left

    def sum(self) -> m.Value:
        toks = self.toks
        start = self.pos(toks[self.i])
        left = self.product()
        while True:
            kind = toks[self.i][0]
            if kind != "PLUS" and kind != "MINUS":
                return left
            self.i += 1
            right = self.product()
            left = _Binary("+" if kind == "PLUS" else "-", left, right, self.through_last(start))

    def product(self) -> m.Value:
        toks = self.toks
        start = self.pos(toks[self.i])
        left = self.unary()
        while True:
            kind = toks[self.i][0]
            if kind != "STAR" and kind != "SLASH":
                return left
            self.i += 1
            right = self.unary()
            left = _Binary("*" if kind == "STAR" else "/", left, right, self.through_last(start))

    def unary(self) -> m.Value:
        tok = self.toks[self.i]
        kind = tok[0]
        if kind == "MINUS":
            self.i += 1
            operand = self.unary()
            if isinstance(operand, m.Integer):
                return _Integer(-operand.value, self.through_last(self.pos(tok)))
            return m.Negative(operand, self.through_last(self.pos(tok)))
        if kind == "PLUS":  # dropped, but not its text
            self.i += 1
            return replace(self.unary(), pos=self.through_last(self.pos(tok)))
        if kind == "CMP":
            self.i += 1
            operand = self.unary()
            return m.OpenRange(tok[1], operand, self.through_last(self.pos(tok)))
        return self.postfix()

    def postfix(self) -> m.Value:
        toks = self.toks
        tok = toks[self.i]
        start = self.pos(tok)
        if tok[0] == "INT" and toks[self.i + 1][0] == "CIRCUMFLEX":
            self.i += 2
            value: m.Value = m.Caret(int(tok[1]), self.through_last(start))
        else:
            value = self.atom()
        while True:
            kind = toks[self.i][0]
            if kind == "LSQB":
                self.i += 1
                index = self.expr()
                self.expect("RSQB")
                value = m.Subscript(value, index, self.through_last(start))
            elif kind == "DOT":
                self.i += 1
                name = self.name()
                value = m.Attribute(value, name, self.through_last(start))
            else:
                return value

    def atom_of(self, tok: Token) -> m.Value:
        """A one-token atom."""
        kind = tok[0]
        if kind == "NAME" or kind == "NONE_DASH":
            return _Name(tok[1], self.pos(tok))
        if kind == "STRING":
            return self.string(tok)
        if kind == "INT":
            return _Integer(int(tok[1]), self.pos(tok))
        if kind == "DECIMAL":
            return m.Decimal(tok[1], self.pos(tok))
        if kind == "DICE":
            count, sides, suffix = scanner.dice_parts(tok[1])
            return m.Dice(int(count or 1), int(sides), self.pos(tok), bool(count), suffix.lower())
        if kind == "MULTIPLIER":
            num, _, den = tok[1][1:].partition("/")
            return m.Multiplier(int(num), int(den or 1), self.pos(tok))
        if kind == "INT_PLUS":
            return m.AtLeast(int(tok[1][:-1]), self.pos(tok))
        raise self.fail()

    def atom(self) -> m.Value:
        toks = self.toks
        tok = toks[self.i]
        kind = tok[0]
        self.i += 1
        if kind in _PARENT_FREE:
            if kind == "NAME" and toks[self.i][0] == "NAME":  # `career navy`: an entity of a kind, by id
                second = toks[self.i]
                self.i += 1
                first = _Name(tok[1], self.pos(tok))
                entity = _Name(second[1], self.pos(second))
                return m.Holds(first, entity, self.through_last(first.pos))
            if kind == "INT" and toks[self.i][0] == "OF":
                self.i += 1
                selector = self.selector()
                return _CountOf(int(tok[1]), selector, self.through_last(self.pos(tok)), False)
            return self.atom_of(tok)
        if kind == "FUNCTION" or kind == "QUOTED_FUNCTION":
            quoted = kind == "QUOTED_FUNCTION"  # `"by"(ref location)`: the name inside the quotes
            function = self.string(tok).value if quoted else tok[1]
            self.expect("LPAR")
            args: list[m.Value] = []
            if toks[self.i][0] != "RPAR":
                args.append(self.expr())
                while toks[self.i][0] == "COMMA":
                    self.i += 1
                    args.append(self.expr())
            self.expect("RPAR")
            return m.Call(function, tuple(args), self.through_last(self.pos(tok)), quoted)
        if kind == "LPAR":
            inner = self.expr()
            self.expect("RPAR")
            dice = toks[self.i]
            if dice[0] != "DICE":
                return inner
            self.i += 1
            written, sides, suffix = scanner.dice_parts(dice[1])
            if written:
                raise self.fail("dice count after a bracket")
            return m.DiceCount(inner, int(sides), self.through_last(self.pos(tok)), suffix.lower())
        if kind == "REF":
            name = self.name()
            return m.RefMarker(name, self.through_last(self.pos(tok)))
        if kind == "TIMES":  # `2 x treasure`
            table = self.ref()
            return m.Repeat(int(tok[1].split()[0]), table, self.through_last(self.pos(tok)))
        if kind == "TRAIT" or kind == "SKILL":
            ref = self.ref()
            return (m.HasTrait if kind == "TRAIT" else m.HasSkill)(ref, self.through_last(self.pos(tok)))
        if kind == "ANY":
            selector = self.selector()
            return _CountOf(1, selector, self.through_last(self.pos(tok)), True)
        if kind in _NAMES_AT_ATOMS:  # no state that starts an atom takes these words: there they are names
            self.i -= 1
            return self.name()
        raise self.fail()

    def selector(self) -> m.SelectLifepaths | m.SelectListed:
        toks = self.toks
        kind = toks[self.i][0]
        if kind == "LPAR":
            lpar = self.pos(toks[self.i])
            self.i += 1
            refs = [self.ref()]
            while toks[self.i][0] == "COMMA":
                self.i += 1
                refs.append(self.ref())
            self.expect("RPAR")
            return m.SelectListed(tuple(refs), self.through_last(lpar))
        if kind != "LIFEPATH" and kind != "LIFEPATHS":
            raise self.fail()
        plural = kind == "LIFEPATHS"
        word = self.pos(toks[self.i])
        self.i += 1
        filters: list[m.InSetting | m.Tagged] = []
        while True:
            tok = toks[self.i]
            if tok[0] == "IN_SETTING":
                self.i += 1
                ref = self.ref()
                filters.append(_InSetting(ref, self.through_last(self.pos(tok))))
            elif tok[0] == "TAGGED":
                self.i += 1
                ref = self.ref()
                filters.append(m.Tagged(ref, self.through_last(self.pos(tok))))
            else:
                break
        return _SelectLifepaths(tuple(filters), self.through_last(word), plural)


# Words of the language that no parser state starting an atom accepts (checked against Lark's parse table by
# tests/test_fastparse.py), so Lark's contextual lexer makes them names there: `lifepaths <= 3`. A `check`
# that starts an item is a check (see `item`); anywhere else in an expression it is a name too.
_NAMES_AT_ATOMS = frozenset(
    {"LIFEPATH", "LIFEPATHS", "TAGGED", "AND", "OR", "IN", "OF", "KIND", "OVERRIDE", "PATCH", "REMOVE", "CHECK", "BY"}
)

# What may follow a lone atom for it to be a whole expression.
_SIMPLE_END = frozenset({"COMMA", "_NL", "RBRACE", "FIELD_KEY", "LET", "RPAR", "RSQB", "ARROW", "ROW_SOURCE", "$END"})


# More digits in a row than a number may have (E104): Lark's path reports it, wherever it is.
_LONG_NUMBER = re.compile(rf"\d{{{MAX_DIGITS + 1}}}")


def parse(path: str, text: str) -> m.SourceFile:
    """The file's syntax tree, exactly as Lark makes it; `Fallback` when Lark must parse it."""
    if _LONG_NUMBER.search(text):
        raise Fallback("a number over the limit (E104)")
    try:
        parser = _Parser(path, text)
        statements = parser.source_file()
    except (IndexError, ValueError, RecursionError) as exc:  # ran off the end, a number too long: Lark decides
        raise Fallback(str(exc)) from None
    comments = [trivia.comment(path, tok[1], tok[2], tok[3]) for tok in parser.comments]
    placed, closing = trivia.attach(statements, comments)
    return m.SourceFile(path, text, placed, closing)
