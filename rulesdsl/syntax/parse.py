"""Syntax: split a source file into top-level blocks and parse each with Lark (LALR, inline transformer).

Parsing block by block keeps one mistake from hiding the others: every block that parses is kept,
every block that does not yields exactly one diagnostic.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeGuard

from rulesdsl.diagnostics import Diagnostic, error
from rulesdsl.language.words import CONTINUES, KEYWORDS
from rulesdsl.resources import GRAMMAR
from rulesdsl.syntax import tree as m
from rulesdsl.syntax import trivia
from rulesdsl.syntax.limits import MAX_DIGITS, MAX_ROWS, MAX_STRING, MAX_SYNTAX_ERRORS
from rulesdsl.syntax.scanner import Scanned, StringEscapeError, dice_parts, let_key, scan, unescape
from rulesdsl.syntax.written import quote

if TYPE_CHECKING:  # lark is imported only when a file needs it: the fast path (fastparse.py) parses most
    from lark import Lark, Token
    from lark.exceptions import UnexpectedInput

GRAMMAR_PATH = GRAMMAR

_OPENERS = {"LPAR": 1, "LSQB": 1, "RPAR": -1, "RSQB": -1}


class _LineEnds:
    """Keeps a line end only where it can end an entry: not after a token after which the grammar never
    takes one (`continues`, read from the parse table: words.continuation), not inside brackets, not twice
    in a row.

    It never holds a token back: the contextual lexer asks the parser what may come next, so the
    parser must have seen every token before the next one is lexed.
    """

    always_accept = ("_NL",)

    def __init__(self) -> None:
        self.continues: frozenset[str] = frozenset()  # set once the parse table is built

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        depth = 0
        previous = "_NL"  # a block never starts with a line end
        continues = self.continues
        for tok in stream:
            if tok.type == "_NL" and (depth > 0 or previous in continues or previous == "_NL"):
                continue
            depth = max(0, depth + _OPENERS.get(tok.type, 0))
            previous = tok.type
            yield tok


class _Recording(_LineEnds):
    """The line-end postlexer, keeping the tokens it passes to the parser: the inline transformer is given
    no `}` or `)` and no signs, so where a statement, field or row starts and ends is read from them."""

    def __init__(self) -> None:
        self.seen: list[Token] = []
        self.depths: list[int] = []  # beside `seen`: the brackets open before each token
        self.ended = False  # the parser has every token, and reduces what is left on the end of the text

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        self.seen = []
        self.depths = []
        self.ended = False
        depth = 0
        for tok in super().process(stream):
            self.seen.append(tok)
            self.depths.append(depth)
            depth += _OPENERS.get(tok.type, 0)
            yield tok
        self.ended = True

    def last(self) -> int:
        """The index of the last token of what is being reduced: the one before the lookahead."""
        return len(self.seen) - (1 if self.ended else 2)

    def first(self, at: int, lead: int) -> int:
        """The index of the first token of what is being reduced, whose first child starts at `at`: the
        brackets a grouped first child opens with (`(a + b) * 2`) are the reduction's, and so are the `lead`
        words before them (`not`, `trait`, `-`). A reduction's brackets balance, so a `(` right before `at`
        is its own when the brackets open after its last token are no more than before that `(`."""
        last = self.last()
        after = self.depths[last] + _OPENERS.get(self.seen[last].type, 0)
        while at > 0 and self.seen[at - 1].type == "LPAR" and after <= self.depths[at - 1]:
            at -= 1
        return at - lead

    def trim(self) -> None:
        """Forget all but the last two tokens: no later node looks further back than its own statement."""
        del self.seen[:-2]
        del self.depths[:-2]


def _is_token(child: object) -> TypeGuard[Token]:
    return isinstance(child, str)  # Lark's tokens are strings; the nodes built from them are not


class _ToModel:
    """Builds model nodes while parsing (Lark's inline transformer: it calls these methods by rule name).
    Positions are shifted by where the block starts in its file. Lark's tokens are strings: a child that is a
    `str` is a token, any other a node."""

    def __init__(self, recorded: _Recording) -> None:
        self.file = ""
        self.line_offset = 0
        self.column_offset = 0
        self.rows = 0  # rows since the last block ended
        self.recorded = recorded
        self.comments: list[m.Comment] = []

    def comment(self, tok: Token) -> Token:
        """Lark's lexer hands every comment here (a lexer callback) though the grammar ignores them."""
        pos = self._tok_pos(tok)
        self.comments.append(trivia.comment(self.file, str(tok), pos.line, pos.column))
        return tok

    # -- positions
    def _span(self, children: list[Any]) -> m.Position:
        """From the first child's start to the last child's end (the inline transformer has no meta)."""
        spans = [self._tok_pos(c) if _is_token(c) else c.pos for c in children if c is not None]
        first, last = spans[0], spans[-1]
        return m.Position(first.file, first.line, first.column, last.end_line, last.end_column)

    def _through_last(self, first: m.Position) -> m.Position:
        """From `first` to the end of the last token of what is being reduced."""
        last = self._tok_pos(self.recorded.seen[self.recorded.last()])
        return m.Position(first.file, first.line, first.column, last.end_line, last.end_column)

    def _statement_done(self) -> None:
        self.recorded.trim()

    def _whole(self, children: list[Any], lead: int = 0) -> m.Position:
        """An expression's whole text: from the first token of its reduction (a grouped first operand's
        brackets and `lead` words before it included) to its last (closing brackets included)."""
        first = next(c for c in children if c is not None)
        start = self._tok_pos(first) if _is_token(first) else first.pos
        seen = self.recorded.seen
        at = bisect.bisect_left(seen, (start.line, start.column), key=lambda t: self._start(t))
        return self._through_last(self._tok_pos(seen[self.recorded.first(at, lead)]))

    def _start(self, tok: Token) -> tuple[int, int]:
        pos = self._tok_pos(tok)
        return pos.line, pos.column

    def _tok_pos(self, tok: Token) -> m.Position:
        return self._at(tok.line or 1, tok.column or 1, tok.end_line or 1, tok.end_column or 1)

    def _at(self, line: int, column: int, end_line: int, end_column: int) -> m.Position:
        col = column + (self.column_offset if line == 1 else 0)
        end_col = end_column + (self.column_offset if end_line == 1 else 0)
        return m.Position(self.file, line + self.line_offset, col, end_line + self.line_offset, end_col)

    # -- structure
    def start(self, children: list[Any]) -> m.Statement:
        statement: m.Statement = children[0]
        return statement

    def blocks(self, children: list[Any]) -> list[m.Statement]:
        return [c for c in children if isinstance(c, m.Block | m.KindDecl | m.Patch | m.Removal)]

    def block(self, children: list[Any]) -> m.Block:
        self.rows = 0
        kind_tok: Token = children[0]
        block_id: m.Name | None = None
        name: m.String | None = None
        fields: list[m.Field] = []
        rows: list[m.Row] = []
        for child in children[1:]:
            if _is_token(child) and child.type == "NAME":
                block_id = m.Name(str(child), self._tok_pos(child))
            elif _is_token(child) and child.type == "STRING":
                name = self._string_token(child)
            elif isinstance(child, m.Field):
                fields.append(child)
            elif isinstance(child, m.Row):
                rows.append(child)
        kind_pos = self._tok_pos(kind_tok)
        pos = self._through_last(kind_pos)
        self._statement_done()
        return m.Block(str(kind_tok), kind_pos, block_id, name, tuple(fields), tuple(rows), pos)

    def field(self, children: list[Any]) -> m.Field:
        return self._field(children[0], ":", children[1])

    def _key(self, key_tok: Token) -> tuple[str, m.Position]:
        """A field's key and where it is written (without the ':')."""
        key = str(key_tok).rstrip(":+-= \t")
        end = key_tok.column + len(key) if key_tok.column else 1
        return key, self._at(key_tok.line or 1, key_tok.column or 1, key_tok.line or 1, end)

    def _field(self, key_tok: Token, op: str, value: m.Value) -> m.Field:
        key, key_pos = self._key(key_tok)
        return m.Field(key, value, self._through_last(key_pos), op, key_pos)

    def let_step(self, children: list[Any]) -> m.Field:
        """`let name = value`: a field-like step, spanning from `let`; its key is the name."""
        let_tok: Token = children[0]
        key, offset = let_key(str(let_tok))
        start = self._tok_pos(let_tok)
        key_pos = m.Position(
            start.file, start.line, start.column + offset, start.line, start.column + offset + len(key)
        )
        return m.Field(key, children[1], self._through_last(start), "let", key_pos)

    def append_field(self, children: list[Any]) -> m.Field:
        return self._field(children[0], "+=", children[1])

    def remove_field(self, children: list[Any]) -> m.Field:
        return self._field(children[0], "-=", children[1])

    def _name_tok(self, tok: Token) -> m.Name:
        return m.Name(str(tok), self._tok_pos(tok))

    def patch(self, children: list[Any]) -> m.Patch:
        self.rows = 0
        fields = tuple(c for c in children[3:] if isinstance(c, m.Field))
        rows = tuple(c for c in children[3:] if isinstance(c, m.Row))
        pos = self._through_last(self._tok_pos(children[0]))
        self._statement_done()
        return m.Patch(self._name_tok(children[1]), children[2], fields, rows, pos)

    def removal(self, children: list[Any]) -> m.Removal:
        self._statement_done()
        return m.Removal(self._name_tok(children[1]), children[2], self._span(children))

    # -- kind declarations
    def kind_decl(self, children: list[Any]) -> m.KindDecl:
        override, keyword, name = children[0], children[1], children[2]
        title = next((self._string_token(c) for c in children[3:] if _is_token(c)), None)
        fields = tuple(c for c in children[3:] if isinstance(c, m.KindField))
        first = self._tok_pos(override if override is not None else keyword)
        pos = self._through_last(first)
        self._statement_done()
        return m.KindDecl(self._name_tok(name), title, override is not None, fields, first, pos)

    def kind_field(self, children: list[Any]) -> m.KindField:
        key_tok, type_expr, optional, equals, default, doc = children
        if equals is not None and str(equals) != "=":
            raise _Problem("E101", f"unexpected '{equals}'", self._tok_pos(equals), "a default is written '= value'")
        key, key_pos = self._key(key_tok)
        described = self._string_token(doc) if doc is not None else None
        return m.KindField(
            key, type_expr, optional is not None, default, described, self._through_last(key_pos), key_pos
        )

    def simple_type(self, children: list[Any]) -> m.SimpleType:
        name = self._name_tok(children[0])
        return m.SimpleType(name, None, None, False, name.pos)

    def bounded_type(self, children: list[Any]) -> m.SimpleType:
        low, high, last = children[1]
        return m.SimpleType(self._name_tok(children[0]), low, high, True, self._span([children[0], last]))

    def bound(self, children: list[Any]) -> tuple[Any, Any, Any]:
        low, dots, high = children
        return (low, high, high if high is not None else dots)

    def negative_integer(self, children: list[Any]) -> m.Integer:
        return m.Integer(-self._int(children[0], children[0]), self._whole(children, 1))

    def enum_type(self, children: list[Any]) -> m.EnumType:
        options = tuple(self._string_token(c) if c.type == "STRING" else self._name_tok(c) for c in children[1:])
        return m.EnumType(options, self._span(children))

    def ref_type(self, children: list[Any]) -> m.RefType:
        return m.RefType(self._name_tok(children[1]), self._span(children))

    def list_type(self, children: list[Any]) -> m.ListType:
        low, high, _ = children[1] if len(children) == 3 else (None, None, None)
        return m.ListType(children[-1], low, high, self._span([children[0], children[-1]]))

    def check_type(self, children: list[Any]) -> m.CheckType:
        mechanic = self._name_tok(children[1]) if children[1] is not None else None
        return m.CheckType(mechanic, self._span([c for c in children if c is not None]))

    def named_type(self, children: list[Any]) -> m.NamedType:
        names = tuple(self._name_tok(c) for c in children[1:])
        return m.NamedType(self._name_tok(children[0]), names, self._span(children))

    def map_type(self, children: list[Any]) -> m.MapType:
        value, key = children[1], children[2]
        return m.MapType(value, key, self._span([children[0], key if key is not None else value]))

    def record_type(self, children: list[Any]) -> m.RecordType:
        fields = tuple(c for c in children[1:] if isinstance(c, m.KindField))
        return m.RecordType(fields, self._through_last(self._tok_pos(children[0])))

    def map_entry(self, children: list[Any]) -> m.MapEntry:
        key = self._name_tok(children[0])
        return m.MapEntry(key, children[1], self._span([key, children[1]]))

    def record(self, children: list[Any]) -> m.Record:
        # the inline transformer is not given the braces: the '{' is the one the last '}' closes
        seen, depth = self.recorded.seen, 0
        for at in range(self.recorded.last(), -1, -1):
            depth += {"RBRACE": 1, "LBRACE": -1}.get(seen[at].type, 0)
            if depth == 0:
                break
        fields = tuple(c for c in children if isinstance(c, m.Field))
        return m.Record(fields, self._through_last(self._tok_pos(seen[at])))

    def check(self, children: list[Any]) -> m.Check | m.Name:
        modifier, target = children[1], children[2]
        if modifier is None:  # `style: check`: the word, not a check
            return m.Name(str(children[0]), self._tok_pos(children[0]))
        if target is not None:
            return m.Check(modifier, self._int(str(target)[:-1], target), self._span(children), self._tok_pos(target))
        if isinstance(modifier, m.AtLeast):  # `check 8+`: no modifier
            return m.Check(None, modifier.value, self._span(children[:2]), modifier.pos)
        raise _Problem(
            "E101", "a check needs a target", self._span(children[:2]), "write it after the modifier: check END 5+"
        )

    def points_type(self, children: list[Any]) -> m.PointsType:
        return m.PointsType(children[1], self._span(children))

    def offer_type(self, children: list[Any]) -> m.OfferType:
        return m.OfferType(children[1], self._span(children))

    def row(self, children: list[Any]) -> m.Row:
        self.rows += 1
        if self.rows > MAX_ROWS:
            raise _Problem(
                "E107",
                f"a table of more than {MAX_ROWS:,} rows: the table was not read",
                self._span(children),
                "split it into several tables",
            )
        arrow = next(i for i, c in enumerate(children) if _is_token(c) and c.type == "ARROW")
        *cells, source = children[arrow + 1 :]  # the optional `@ "..."` is None when left out
        if _is_token(source):
            source = self._string_token(source.new_borrow_pos("STRING", source[source.index('"') :], source))
        # a row starts its line (or follows the `{`), signs and brackets before its first key included
        seen = self.recorded.seen
        first = self.recorded.last()
        while first > 0 and seen[first - 1].type not in ("_NL", "LBRACE"):
            first -= 1
        return m.Row(tuple(children[:arrow]), tuple(cells), source, self._through_last(self._tok_pos(seen[first])))

    # -- lists
    def value_list(self, children: list[Any]) -> m.Value:
        if len(children) == 1:  # the grammar's alias wraps single items too
            return children[0]  # type: ignore[no-any-return]
        return m.ValueList(tuple(children), self._span(children))

    def points(self, children: list[Any]) -> m.Points:
        number, word = str(children[0]).split()[:2]  # the POINTS token is "8 pts:"
        rest = children[1]
        items = rest.items if isinstance(rest, m.ValueList) else (rest,)
        return m.Points(self._int(number, children[0]), items, self._span(children), not word.startswith("pts"))

    def quantity(self, children: list[Any]) -> m.Quantity:
        text = str(children[0])
        number, unit = text.split(None, 1)
        return m.Quantity(self._int(number, children[0]), unit.strip(), number[0] in "+-", self._span(children))

    # -- atoms
    def _string_token(self, tok: Token) -> m.String:
        body = str(tok)[1:-1]
        if len(body) > MAX_STRING:
            raise _Problem(
                "E105",
                f"this string is {len(body):,} characters long; a string holds at most {MAX_STRING:,}",
                self._at(tok.line or 1, tok.column or 1, tok.line or 1, (tok.column or 1) + 1),
                "keep long text out of rules files: link to it, or split it over fields",
            )
        try:
            return m.String(unescape(body), self._tok_pos(tok))
        except StringEscapeError as exc:
            column = (tok.column or 1) + 1 + exc.offset
            at = self._at(tok.line or 1, column, tok.line or 1, column + len(exc.escape))
            raise _Problem("E102", exc.message, at, 'use \\" \\\\ \\n \\t or \\uXXXX') from None

    def _int(self, digits: str, tok: Token, offset: int = 0) -> int:
        """A number written at `offset` in `tok` (digits, perhaps signed), refused past MAX_DIGITS digits."""
        written = digits.lstrip("+-")
        if len(written) > MAX_DIGITS:
            line, column = tok.line or 1, (tok.column or 1) + offset + len(digits) - len(written)
            raise _Problem(
                "E104",
                f"a number of {len(written):,} digits; numbers have at most {MAX_DIGITS}",
                self._at(line, column, line, column + len(written)),
                f"the largest number rules can hold is {10**MAX_DIGITS - 1:,}",
            )
        return int(digits)

    def string(self, children: list[Any]) -> m.String:
        return self._string_token(children[0])

    def integer(self, children: list[Any]) -> m.Integer:
        return m.Integer(self._int(children[0], children[0]), self._span(children))

    def decimal(self, children: list[Any]) -> m.Decimal:
        whole, fraction = str(children[0]).split(".")
        self._int(whole, children[0])
        self._int(fraction, children[0], len(whole) + 1)
        return m.Decimal(str(children[0]), self._span(children))

    def negative_decimal(self, children: list[Any]) -> m.Decimal:
        number = self.decimal(children)
        return m.Decimal("-" + number.text, self._whole(children, 1))

    def at_least(self, children: list[Any]) -> m.AtLeast:
        return m.AtLeast(self._int(str(children[0])[:-1], children[0]), self._span(children))

    def dice(self, children: list[Any]) -> m.Dice:
        count, sides, suffix = dice_parts(str(children[0]))
        tok = children[0]
        sides_number = self._int(sides, tok, len(count) + 1)
        return m.Dice(self._int(count or "1", tok), sides_number, self._span(children), bool(count), suffix.lower())

    def multiplier(self, children: list[Any]) -> m.Multiplier:
        num, _, den = str(children[0])[1:].partition("/")
        tok = children[0]
        return m.Multiplier(self._int(num, tok, 1), self._int(den or "1", tok, 2 + len(num)), self._span(children))

    def name(self, children: list[Any]) -> m.Name:
        return m.Name(str(children[0]), self._span(children))

    def call(self, children: list[Any]) -> m.Call:
        args = tuple(c for c in children[1:] if c is not None)
        function: Token = children[0]
        if function.type == "QUOTED_FUNCTION":  # `"by"(ref location)`: the name inside the quotes
            return m.Call(self._string_token(function).value, args, self._whole(children), True)
        return m.Call(str(function), args, self._whole(children))

    def caret(self, children: list[Any]) -> m.Caret:
        return m.Caret(self._int(children[0], children[0]), self._whole(children))

    def dice_count(self, children: list[Any]) -> m.DiceCount:
        count, dice = children
        written, sides, suffix = dice_parts(str(dice))
        if written:
            raise _Problem(
                "E101",
                f"'{dice}' after a bracket",
                self._tok_pos(dice),
                f"write (count)d{sides}, e.g. (slot - 3)d{sides}",
            )
        return m.DiceCount(count, self._int(sides, dice, 1), self._whole(children), suffix.lower())

    def none_dash(self, children: list[Any]) -> m.Name:
        return m.Name(str(children[0]), self._span(children))

    def ref_marker(self, children: list[Any]) -> m.RefMarker:
        return m.RefMarker(self._name_tok(children[1]), self._whole(children))

    def attribute(self, children: list[Any]) -> m.Attribute:
        return m.Attribute(children[0], self._name_tok(children[2]), self._whole(children))

    def subscript(self, children: list[Any]) -> m.Subscript:
        return m.Subscript(children[0], children[1], self._whole(children))

    # -- operators
    def _binary(self, op: str, children: list[Any]) -> m.Binary:
        return m.Binary(op, children[0], children[1], self._whole(children))

    def add(self, children: list[Any]) -> m.Binary:
        return self._binary("+", children)

    def sub(self, children: list[Any]) -> m.Binary:
        return self._binary("-", children)

    def mul(self, children: list[Any]) -> m.Binary:
        return self._binary("*", children)

    def div(self, children: list[Any]) -> m.Binary:
        return self._binary("/", children)

    def neg(self, children: list[Any]) -> m.Value:
        operand = children[0]
        if isinstance(operand, m.Integer):
            return m.Integer(-operand.value, self._whole(children, 1))
        return m.Negative(operand, self._whole(children, 1))

    def pos(self, children: list[Any]) -> m.Value:
        value: m.Value = children[0]
        return replace(value, pos=self._whole(children, 1))  # the `+` is dropped, not its text

    def open_range(self, children: list[Any]) -> m.OpenRange:
        return m.OpenRange(str(children[0]), children[1], self._whole(children))

    def closed_range(self, children: list[Any]) -> m.ClosedRange:
        return m.ClosedRange(children[0], children[2], self._whole(children))

    def comparison(self, children: list[Any]) -> m.Comparison:
        op = "=" if str(children[1]) == "==" else str(children[1])
        return m.Comparison(op, children[0], children[2], self._whole(children))

    def membership(self, children: list[Any]) -> m.Membership:
        return m.Membership(children[0], children[1], self._whole(children))

    def any_of(self, children: list[Any]) -> m.Value:
        if len(children) == 1:  # the grammar's alias wraps single items too
            return children[0]  # type: ignore[no-any-return]
        return m.AnyOf(tuple(children), self._whole(children))

    def all_of(self, children: list[Any]) -> m.Value:
        if len(children) == 1:  # the grammar's alias wraps single items too
            return children[0]  # type: ignore[no-any-return]
        return m.AllOf(tuple(children), self._whole(children))

    def negate(self, children: list[Any]) -> m.Not:
        return m.Not(children[0], self._whole(children, 1))

    def has_trait(self, children: list[Any]) -> m.HasTrait:
        return m.HasTrait(children[0], self._whole(children, 1))

    def has_skill(self, children: list[Any]) -> m.HasSkill:
        return m.HasSkill(children[0], self._whole(children, 1))

    def holds(self, children: list[Any]) -> m.Holds:
        return m.Holds(self._name_tok(children[0]), self._name_tok(children[1]), self._whole(children))

    def count_of(self, children: list[Any]) -> m.CountOf:
        return m.CountOf(self._int(children[0], children[0]), children[1], self._whole(children))

    def repeat(self, children: list[Any]) -> m.Repeat:
        digits = children[0].split()[0]
        return m.Repeat(self._int(digits, children[0]), children[1], self._whole(children))

    def any_one(self, children: list[Any]) -> m.CountOf:
        return m.CountOf(1, children[0], self._whole(children, 1), True)

    def select_lifepaths(self, children: list[Any]) -> m.SelectLifepaths:
        filters = tuple(c for c in children if isinstance(c, m.InSetting | m.Tagged))
        return m.SelectLifepaths(filters, self._whole(children), children[0].type == "LIFEPATHS")

    def select_listed(self, children: list[Any]) -> m.SelectListed:
        return m.SelectListed(tuple(children), self._whole(children))

    def in_setting(self, children: list[Any]) -> m.InSetting:
        return m.InSetting(children[1], self._whole(children))

    def tagged(self, children: list[Any]) -> m.Tagged:
        return m.Tagged(children[0], self._whole(children, 1))


class _Problem(Exception):
    """A mistake the transformer finds while building nodes (bad escapes, malformed forms)."""

    def __init__(self, code: str, message: str, pos: m.Position, hint: str | None = None) -> None:
        super().__init__(message)
        self.diagnostic = error(code, message, pos, hint)


class Parser:
    """One LALR parser (built once per process) and the block splitter in front of it.

    Lark could keep the analysed grammar on disk (`cache=`: ~15 ms to load instead of ~140 ms to build),
    but as a pickle, a file that runs code when loaded. Not worth it: the parser is built only when some
    file is not in the parse cache (cache.py), which is no pickle.
    """

    def __init__(self) -> None:
        self._postlex = _Recording()
        self._transformer = _ToModel(self._postlex)
        self._built: Lark | None = None

    @property
    def _lark(self) -> Lark:
        """Built on first use: a file the fast path (fastparse.py) parses never needs it."""
        if self._built is None:
            from lark import Lark

            from rulesdsl.language.words import continuation

            self._built = Lark(
                GRAMMAR_PATH.read_text(encoding="utf-8"),
                parser="lalr",
                lexer="contextual",
                postlex=self._postlex,
                lexer_callbacks={"COMMENT": self._transformer.comment},
                maybe_placeholders=True,
                start=["start", "blocks"],
                transformer=self._transformer,
            )
            self._postlex.continues = continuation(self._built)
        return self._built

    def parse_file(self, path: str, text: str) -> tuple[m.SourceFile, list[Diagnostic]]:
        """Parse a whole file in one go (by the fast path when it can, else by Lark); only when that fails,
        parse block by block to report each mistake."""
        from rulesdsl.syntax import fast as fastparse  # here: it imports this module

        if fastparse.enabled():
            try:
                return fastparse.parse(path, text), []
            except fastparse.Fallback:
                pass
        return self.parse_with_lark(path, text)

    def parse_with_lark(self, path: str, text: str) -> tuple[m.SourceFile, list[Diagnostic]]:
        """What `parse_file` gives, always by the grammar of record (the fast path's differential tests)."""
        from lark.exceptions import UnexpectedInput

        self._transformer.file = path
        self._transformer.line_offset = 0
        self._transformer.column_offset = 0
        self._transformer.rows = 0
        self._transformer.comments = []
        try:
            whole: list[m.Statement] = self._lark.parse(text, start="blocks")  # type: ignore[assignment]
            return m.SourceFile(path, text, *trivia.attach(whole, self._transformer.comments)), []
        except (UnexpectedInput, _Problem):
            pass
        # block by block: the comments of the blocks that parse are kept, those between blocks are not read
        self._transformer.comments = []
        blocks: list[m.Statement] = []
        diagnostics: list[Diagnostic] = []
        for chunk in split_blocks(text):
            if len(diagnostics) >= MAX_SYNTAX_ERRORS:  # not a rules file, or a badly broken one: stop here
                pos = m.Position(path, chunk.line, chunk.column, chunk.line, chunk.column + 1)
                message = f"{MAX_SYNTAX_ERRORS} syntax errors so far: the rest of this file was not read"
                diagnostics.append(error("E106", message, pos, "fix the errors above first"))
                break
            if chunk.problem is not None:
                line, column = chunk.problem_at
                pos = m.Position(path, line, column, line, column + 1)
                code, message, hint = chunk.problem
                diagnostics.append(error(code, message, pos, hint))
                continue
            self._transformer.file = path
            self._transformer.line_offset = chunk.line - 1
            self._transformer.column_offset = chunk.column - 1
            self._transformer.rows = 0
            comments = len(self._transformer.comments)
            try:
                block: m.Statement = self._lark.parse(chunk.text, start="start")  # type: ignore[assignment]
                blocks.append(block)
            except _Problem as exc:
                diagnostics.append(exc.diagnostic)
                del self._transformer.comments[comments:]
            except UnexpectedInput as exc:
                diagnostics.append(self._syntax_error(path, chunk, exc))
                del self._transformer.comments[comments:]
        return m.SourceFile(path, text, *trivia.attach(blocks, self._transformer.comments)), diagnostics

    def _syntax_error(self, path: str, chunk: Chunk, exc: UnexpectedInput) -> Diagnostic:
        from lark.exceptions import UnexpectedEOF, UnexpectedToken

        line = exc.line if exc.line and exc.line > 0 else 1
        column = exc.column if exc.column and exc.column > 0 else 1
        width = 1
        if isinstance(exc, UnexpectedToken) and exc.token.type != "$END":
            width = max(1, len(str(exc.token).split("\n")[0]))
        if isinstance(exc, UnexpectedEOF) or (isinstance(exc, UnexpectedToken) and exc.token.type == "$END"):
            lines = chunk.text.split("\n")
            line, column = len(lines), len(lines[-1]) + 1
        if line == 1:
            column += chunk.column - 1
        line += chunk.line - 1
        pos = m.Position(path, line, column, line, column + width)
        offset = exc.pos_in_stream if isinstance(exc.pos_in_stream, int) else len(chunk.text)
        went_on = ran_on(self._postlex.seen, line - chunk.line + 1)
        message, hint = describe_syntax_error(exc, chunk.text[:offset], went_on)
        return error("E101", message, pos, hint)


_TERMINAL_WORDS = {
    "FIELD_KEY": "a field ('name: value')",
    "NAME": "a name",
    "STRING": "a quoted string",
    "INT": "a number",
    "RBRACE": "'}'",
    "LBRACE": "'{'",
    "ARROW": "'->'",
    "COMMA": "','",
    "RPAR": "')'",
    "_NL": "the end of the line",
    "$END": "the end of the block",
}


def _token_words(tok: Token) -> str:
    """What came unexpectedly, after the word 'unexpected'."""
    if tok.type == "$END":
        return "end of the block"
    if tok.type == "_NL":
        return "end of the line"
    return f"'{tok!s}'"


def _last_tokens(before: str) -> list[Scanned]:
    """The scanner's tokens of `before` (a block's text up to an error)."""
    return list(scan(before))


def field_before(before: str) -> str | None:
    """The key of a field that `before` ends in with no value yet (`name:`, then at most spaces and one line end)."""
    tokens = _last_tokens(before)
    if tokens and tokens[-1].type == "_NL" and tokens[-1].text == "\n" and tokens[-1].end == len(before):
        tokens.pop()
        before = before[:-1]
    if not tokens or tokens[-1].type != "FIELD_KEY" or before[tokens[-1].end :].strip(" \t"):
        return None
    return tokens[-1].text[:-1].rstrip(" \t")


_WORDS = frozenset({"NAME", *KEYWORDS.values()})


def word_before(before: str) -> bool:
    """Whether `before` ends in a bare word and a space (`career "Star Navy"`): a word standing on its own
    (after a space, a `(` or a field key, or first)."""
    tokens = _last_tokens(before)
    if not tokens or tokens[-1].type not in _WORDS:
        return False
    word = tokens[-1]
    if not before[word.end :] or before[word.end :].strip(" \t"):
        return False
    if len(tokens) == 1:
        return True
    previous = tokens[-2]
    return previous.end < word.start or previous.type in ("LPAR", "FIELD_KEY")


# The words of the language after which a line goes on (`skill`, `trait`, `or`, `in`, ...): one ending a line
# makes the parser read the next line as its rest, and a name spelt like it must be quoted.
CONTINUING_WORDS = frozenset(KEYWORDS.values()) & CONTINUES


def ran_on(tokens: Sequence[Token], line: int) -> str | None:
    """The word of the language the line before `line` ended with, when the parser went on past that line
    end into `line` (CONTINUING_WORDS): `tokens` are the ones the parser was given (the line-end postlexer
    keeps a line end only where one may stand), lines counted in the same text. Where the line ended, the
    last token before `line` is its line end, and nothing ran on."""
    for tok in reversed(tokens):
        if (tok.line or 1) < line:
            return str(tok) if tok.type in CONTINUING_WORDS else None
    return None


def ran_on_hint(word: str) -> str:
    """The hint of a syntax error on a line the line before ran onto, ending with `word` (lsp.py's quick fix
    to quote the word is offered where the hint is this)."""
    return (
        f"the line before ends with '{word}', a word of the language, so it went on onto this line; "
        f"if '{word}' is a name, quote it: {quote(word)}"
    )


_DICE_HINT = "dice are written like 2d6, d66 or 1d6+1"


def describe_syntax_error(exc: UnexpectedInput, before: str = "", went_on: str | None = None) -> tuple[str, str | None]:
    """The error in words; `before` is the block's text up to the error, `went_on` the word of the language
    the line before ended with when the parser went on into the error's line (`ran_on`): the mistake is
    most likely that word, a name written bare, and the hint says so."""
    from lark.exceptions import UnexpectedCharacters

    message, hint = _described(exc, before, went_on is not None)
    unclosed = isinstance(exc, UnexpectedCharacters) and exc.char == '"'  # a mistake of its own line
    if went_on is not None and not unclosed:
        return message, ran_on_hint(went_on)
    return message, hint


# a closing bracket's token: the opening one's token and text
_CLOSES = {"RPAR": ("LPAR", "("), "RSQB": ("LSQB", "[")}


def _left_open(before: str, closer: str) -> bool:
    """Whether `before` (a block's text up to an error) leaves open a bracket that the token `closer` closes."""
    opener = _CLOSES[closer][0]
    depth = 0
    for tok in _last_tokens(before):
        depth += (tok.type == opener) - (tok.type == closer)
    return depth > 0


def _described(exc: UnexpectedInput, before: str, went_on: bool) -> tuple[str, str | None]:
    from lark.exceptions import UnexpectedCharacters, UnexpectedToken

    empty_field = field_before(before)
    if isinstance(exc, UnexpectedCharacters):
        char = exc.char
        if char == '"':
            return "a string is not closed on this line", 'close it with " (strings cannot span lines)'
        if char == ":":  # a field's name with a mistake, or taken by the value before it
            return "unexpected character ':'", "a ':' ends a field's name (name: value); the text before it is not one"
        return f"unexpected character '{char}'", f"'{char}' is no part of the language; quote text that holds it"
    if isinstance(exc, UnexpectedToken):
        # LALR shares states between blocks, patches and kind declarations: leave out what only a patch
        # (`+=`) or a declaration (a trailing doc string) would take there
        expected = set(exc.expected) - {"FIELD_APPEND", "FIELD_REMOVE"}
        if expected & {"RBRACE", "FIELD_KEY"}:
            expected.discard("STRING")
        tok = exc.token
        got = _token_words(tok)
        if empty_field and tok.type in {"RBRACE", "FIELD_KEY", "_NL", "$END"}:
            return f"'{empty_field}' has no value", "write a value after the ':', or leave the field out"
        if tok.type == "$END" and "RBRACE" in expected:
            return "the block is not closed", "add '}' at its end"
        dangling = before.rstrip()[-1:]
        if dangling in ("+", "-") and tok.type in {"RBRACE", "FIELD_KEY", "_NL", "$END"}:
            what = "adds (like 1d6+1)" if dangling == "+" else "takes away (like 1d6-1)"
            return f"'{dangling}' has nothing after it", f"write what it {what}, or leave the '{dangling}' out"
        if tok.type == "NAME" and before[-1:].isdigit():  # `2d`, `2D6`, `2e6`: dice misspelt
            return f"unexpected {got}", _DICE_HINT
        if tok.type in {"QUANTITY", "INT", "NAME", "STRING", "DICE"} and "ARROW" in expected:
            return f"unexpected {got}", "a field is written 'name: value' (is a ':' missing?)"
        if tok.type == "ARROW":
            return f"unexpected {got}", "table rows go inside a table block, one per line"
        if tok.type == "STRING" and word_before(before):
            return f"unexpected {got}", "quote the whole text; a requirement names an entity by its id: career navy"
        if tok.type == "FIELD_KEY" and expected - {"RBRACE", "FIELD_KEY"} and not went_on:  # it has one, ran on
            return f"unexpected {got}: the previous field has no value", "give it a value, or leave it out"
        if tok.type in _CLOSES and not _left_open(before, tok.type):
            opener = _CLOSES[tok.type][1]
            return f"unexpected {got}", f"it closes no '{opener}': remove it, or add the '{opener}' it closes"
        if empty_field:
            return f"unexpected {got}", f"a value of '{empty_field}' cannot begin so: write one, or leave the field out"
        words = sorted({_TERMINAL_WORDS.get(e, "") for e in expected} - {""})
        hint = ("expected " + ", ".join(words)) if words and len(words) <= 4 else None
        return f"unexpected {got}", hint or f"{got} cannot come here: remove it, or check the text just before it"
    return "the block is not closed", "add '}' at its end"


@dataclass(frozen=True, slots=True)
class Chunk:
    text: str
    line: int
    column: int
    problem: tuple[str, str, str | None] | None = None
    problem_at: tuple[int, int] = (0, 0)


# What a block's header is made of before its "{": its kind, id and title.
_HEADER_WORDS = frozenset({"NAME", "STRING", "DICE", "MULTIPLIER", *KEYWORDS.values()})


def _is_header(line: list[Scanned]) -> bool:
    """Whether a line's tokens start with a block header in column 1: words and quoted names, then "{"."""
    if not line or line[0].column != 1 or line[0].type not in _WORDS:
        return False
    for tok in line[1:]:
        if tok.type == "LBRACE":
            return True
        if tok.type not in _HEADER_WORDS:
            return False
    return False


def _lines(tokens: Iterator[Scanned]) -> Iterator[list[Scanned]]:
    """Tokens a line at a time, each line with the line end that closes it."""
    line: list[Scanned] = []
    for tok in tokens:
        line.append(tok)
        if tok.type == "_NL":
            yield line
            line = []
    if line:
        yield line


def _problem(at: Scanned, code: str, message: str, hint: str) -> Chunk:
    """A mistake found while splitting, at a token."""
    return Chunk("", at.line, at.column, (code, message, hint), (at.line, at.column))


def _not_closed(start: Scanned) -> Chunk:
    return _problem(start, "E103", "this block is not closed", "add '}' at its end")


def split_blocks(text: str) -> Iterator[Chunk]:
    """Cut a file into top-level statements by the brace depth of its tokens (the scanner's, mistakes and all).

    A line that starts (in column 1) with a block header while a block is still open means that block
    lost its '}': it is reported and the new block starts there. `remove KIND name` has no braces and
    ends at its line's end.
    """
    depth = 0
    start: Scanned | None = None  # the current statement's first token
    removal = False
    lines = _lines(scan(text))  # a line ahead: a header there may end a block that lost its "}"
    line = next(lines, None)
    while line is not None:
        following = next(lines, None)
        for tok in line:
            if tok.type == "_NL":
                if removal and start is not None:
                    yield Chunk(text[start.start : tok.start], start.line, start.column)
                    start, removal = None, False
                if depth > 0 and start is not None and following is not None and _is_header(following):
                    yield _not_closed(start)
                    depth, start = 0, None
                continue
            if tok.type == "ERROR" and tok.text.isspace():
                continue  # white space the grammar does not know (a no-break space): passed over between statements
            if start is None:
                start = tok
                removal = tok.type == "REMOVE"
            if tok.type == "LBRACE" or tok.type == "RECORD":  # `record {` opens a record type
                depth += 1
            elif tok.type == "RBRACE":
                depth -= 1
                if depth <= 0:
                    yield (
                        Chunk(text[start.start : tok.end], start.line, start.column)
                        if depth == 0
                        else _problem(tok, "E101", "unexpected '}'", "it closes no block")
                    )
                    depth, start, removal = 0, None, False
        line = following
    if start is not None:
        if depth > 0:
            yield _not_closed(start)
        else:
            yield Chunk(text[start.start :], start.line, start.column)
