"""The scanner: the one reader of `.rules` text below the parsers. Its terminals, their patterns, their order
and the words of the language come from the grammar (words.py); what is its own is the layout that makes it
fast (one pattern, terminals grouped by the characters they can start with).

`TOKEN` reads one token at a time as Lark's lexer would with every terminal allowed; the fast path's
tokenizer (fastparse.tokens) runs it over a whole file. `scan` reads text that may hold mistakes and never
gives up: error recovery, the text before an error and "may this file declare kinds" read its tokens.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from rulesdsl.language import words

# The scanner's layout: which terminals can start with which characters (the terminals themselves, their
# patterns and their order come from the grammar, words.TERMINALS). Terminals of different groups never match
# at the same place, so which group comes first makes no difference, and the common ones can come first.
# tests/test_words.py checks every terminal's first characters against this.
_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        r"[^\W\d]",
        (
            *("FIELD_KEY", "FIELD_APPEND", "FIELD_REMOVE", "MULTIPLIER", "DICE", "FUNCTION", "NAME"),
            *("IN_SETTING", "POINTS_OF", "CHOICES_OF", "LIST_IN", "LIST_OF", "ONE_OF", "MAP_OF", "RECORD", "LET"),
        ),
    ),
    ('"', ("QUOTED_FUNCTION", "STRING")),
    (r"\n", ("_NL",)),
    (r"\d", ("POINTS", "TIMES", "QUANTITY", "DICE", "INT_PLUS", "DECIMAL", "INT")),
    (r"[+-]", ("QUANTITY", "ARROW", "MINUS", "PLUS")),
    (
        "",
        (
            *("CMP", "DOTS", "CIRCUMFLEX", "COMMA", "DOT", "LBRACE", "LPAR", "LSQB", "NONE_DASH", "OPTIONAL"),
            *("RBRACE", "RPAR", "RSQB", "SLASH", "STAR", "ROW_SOURCE"),
        ),
    ),
)
# Field keys (`x:`, `x +=`, `x -=`) are one alternative, FIELD: what follows the name tells them apart.
_FIELD_KEYS = ("FIELD_KEY", "FIELD_APPEND", "FIELD_REMOVE")
# Terminals of the grammar the scanner does not place (the fast path is off while there are any).
UNPLACED = frozenset(dict(words.TERMINALS)) - words.IGNORED - {n for _, group in _GROUPS for n in group}


def _possessive(pattern: str) -> str:
    """Repeated character classes that give nothing back. Where this is used, what follows such a class never
    starts with one of its characters, so it matches the same without backtracking (tests/test_fastparse.py
    holds the scanner to Lark's lexer)."""
    return pattern.replace("]*+", "]*").replace("]*", "]*+")


def _field_keys(terminals: dict[str, str]) -> str:
    """FIELD_KEY, FIELD_APPEND and FIELD_REMOVE as one alternative: their common start once, then each ending."""
    patterns = [terminals[n] for n in _FIELD_KEYS]
    common = 0
    while all(len(p) > common and p[common] == patterns[0][common] for p in patterns):
        common += 1
    return _possessive(patterns[0][:common]) + "(?:" + "|".join(p[common:] for p in patterns) + ")"


def _scanner() -> tuple[str, dict[str, str]]:
    """One pattern for all tokens, the same as trying the terminals in Lark's order, only faster; and the
    alternatives renamed (a terminal that can start with characters of two groups is in both: `DICE_` is
    `2d6`, `DICE` is `d6`) with the terminal each stands for."""
    terminals = dict(words.TERMINALS)
    order = {name: i for i, (name, _) in enumerate(words.TERMINALS)}
    renamed: dict[str, str] = {}
    taken: set[str] = set()
    alternatives = []
    for start, names in _GROUPS:
        group = []
        for name in sorted((n for n in names if n in terminals), key=order.__getitem__):
            if name in _FIELD_KEYS:
                if name == _FIELD_KEYS[0]:
                    group.append(f"(?P<FIELD>{_field_keys(terminals)})")
                continue
            alias = name
            while alias in taken:
                alias += "_"
            taken.add(alias)
            if alias != name:
                renamed[alias] = name
            pattern = _possessive(terminals[name]) if name == "FUNCTION" else terminals[name]
            group.append(f"(?P<{alias}>{pattern})")
        alternatives.append((f"(?={start})" if start else "") + "(?:" + "|".join(group) + ")")
    return "|".join(alternatives), renamed


# Whitespace and comments (the grammar's ignored terminals) are skipped in front of every token.
def _skip(ws: str, comment: str) -> str:
    """Whitespace, then a comment, possessively (no backtracking over long runs); `[...]+` as `[...]*+`, which
    Python's engine runs a little faster than an optional group."""
    return (ws[:-1] + "*+" if ws.endswith("]+") else f"(?:{ws})?+") + f"(?:{comment})?+"


_SKIP = _skip(dict(words.TERMINALS)["WS"], dict(words.TERMINALS)["COMMENT"])
_ALTERNATIVES, RENAMED = _scanner()
TOKEN = re.compile(_SKIP + "(?:" + _ALTERNATIVES + ")")
FIELDS = {":": "FIELD_KEY", "+": "FIELD_APPEND", "-": "FIELD_REMOVE"}  # a FIELD's type by its operator
TRAILING = re.compile(_SKIP + r"\Z")  # nothing but whitespace and a comment left
# TOKEN, or where no token starts: a string not closed on its line (the STRING terminal without its closing
# quote, to the line's end), else the characters up to a space or a token (at least one).
_UNCLOSED_STRING = dict(words.TERMINALS)["STRING"].removesuffix('"') + r"\\?"
_ANY_TOKEN = re.sub(r"\(\?P<\w+>", "(?:", _ALTERNATIVES)  # the alternatives, unnamed (a name is used once)
_ERROR = f'(?:(?!{_ANY_TOKEN}|")\\S)++|.'
_TOLERANT = re.compile(_SKIP + f"(?:{_ALTERNATIVES}|(?P<UNCLOSED_STRING>{_UNCLOSED_STRING})|(?P<ERROR>{_ERROR}))")


_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}
# a surrogate pair written as two escapes is one character; a lone half is not a character at all
_ESCAPE_RE = re.compile(r"\\(u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)")


class StringEscapeError(ValueError):
    def __init__(self, escape: str, offset: int, message: str | None = None) -> None:
        super().__init__(escape)
        self.escape = escape
        self.offset = offset
        self.message = message or f"unknown escape '{escape}' in a string"


def unescape(body: str) -> str:
    def replace(match: re.Match[str]) -> str:
        code = match.group(1)
        if code in _ESCAPES:
            return _ESCAPES[code]
        if len(code) == 11:  # a surrogate pair: \uD83D\uDE00
            high, low = int(code[1:5], 16), int(code[7:], 16)
            return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
        if code.startswith("u") and len(code) == 5:
            if 0xD800 <= int(code[1:], 16) <= 0xDFFF:
                raise StringEscapeError(
                    "\\" + code, match.start(), f"'\\{code}' is half of a surrogate pair, not a character"
                )
            return chr(int(code[1:], 16))
        raise StringEscapeError("\\" + code, match.start())

    return _ESCAPE_RE.sub(replace, body)


class Scanned(NamedTuple):
    type: str  # the terminal (keywords renamed, as Lark's lexer names them), UNCLOSED_STRING or ERROR
    text: str
    start: int  # offset in the text
    line: int
    column: int  # 1-based, in characters

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def type_of(group: str, text: str) -> str:
    """The terminal a match of TOKEN's `group` is: a word may be a keyword, a FIELD one of the field keys."""
    if group == "NAME":
        return words.KEYWORDS.get(text, "NAME")
    if group == "FIELD":
        return FIELDS[text[-1] if text[-1] == ":" else text[-2]]
    return RENAMED.get(group, group)


def scan(text: str) -> Iterator[Scanned]:
    """Every token of `text` as the scanner reads it with no parser behind it (so a word of the language is
    its keyword wherever it stands), mistakes included: a string not closed on its line is one
    UNCLOSED_STRING token to the line's end, other characters that start no token an ERROR token (a run of
    them up to a space or a token; a space the grammar does not know, like a no-break space, on its own).
    Every line end is a `_NL` token (a run of them is one); whitespace and comments are passed over."""
    line, line_start, pos = 1, 0, 0
    make = Scanned._make
    for found in _TOLERANT.finditer(text):
        if found.start() != pos:
            return  # only whitespace and a comment were left: a search further on would look inside them
        pos = found.end()
        group = found.lastgroup
        assert group is not None
        value = found.group(group)
        start = found.start(group)
        kind = type_of(group, value)
        yield make((kind, value, start, line, start - line_start + 1))
        if kind == "_NL":
            line += value.count("\n")
            line_start = pos


def dice_parts(text: str) -> tuple[str, str, str]:
    """A DICE token's parts: `4D6kh3` -> ("4", "6", "kh3"): the count as written (empty in `d6`), the sides, and
    what follows them (a keep or drop such as `kh3` or `dl1`, `!` to explode, or nothing)."""
    split = text.lower().index("d")
    end = split + 1
    while end < len(text) and text[end].isdigit():
        end += 1
    return text[:split], text[split + 1 : end], text[end:]


# Brackets: inside them the parser sees no line end (a list or a call goes on over lines).
BRACKETS = {"LPAR": 1, "LSQB": 1, "RPAR": -1, "RSQB": -1}


def scan_lines(text: str) -> Iterator[Scanned]:
    """`scan`'s tokens with the line ends the parser sees, as the line-end postlexer (and the fast path's
    tokenizer) keeps them: none inside brackets, none after a token the line goes on after
    (words.CONTINUES), none at the start, a run of them as one. What no token takes stays an ERROR token
    (an UNCLOSED_STRING to its line's end), and the next token is read after it, so the rest of a broken
    line is read too; white space the grammar does not know (a no-break space) is passed over. On text
    without mistakes these are the fast path's tokens (tests/test_locate.py holds it to them)."""
    depth, previous = 0, "_NL"
    continues = words.CONTINUES
    for tok in scan(text):
        kind = tok.type
        if kind == "_NL":
            if depth > 0 or previous in continues or previous == "_NL":
                continue
        elif kind in BRACKETS:
            depth = max(0, depth + BRACKETS[kind])
        elif kind == "ERROR" and tok.text.isspace():
            continue
        yield tok
        previous = kind


def let_key(text: str) -> tuple[str, int]:
    """The name a LET token (`let through =`) declares, and where in the token it starts."""
    rest = text[3:]
    start = len(text) - len(rest.lstrip(" \t"))
    return text[start:].rstrip("= \t"), start


def reads_as_one_name(text: str) -> bool:
    """Whether `text` written bare is one name to the scanner (not a keyword, dice, two words, ...)."""
    found = TOKEN.fullmatch(text)
    return found is not None and found.lastgroup == "NAME" and found.start("NAME") == 0 and text not in words.KEYWORDS
