"""The words of the language, in one place: the terminals, the keywords and the tokens after which a line
goes on, all read from the grammar of record (grammar/rules.lark) through Lark itself.

Reading them needs Lark and its parse table (~80 ms), which a run the fast path serves never loads, so they
are generated into `words_from_grammar.py` by `python -m rulesdsl.language.words`; tests/test_words.py fails when
that file is not what the grammar gives, and the fast path stays off until it is (`fresh`). The Lark path
derives the continuation set from its own parse table with the same function (`continuation`), so it is
right for whatever grammar it parses with.

Besides the grammar's words, lowering gives meaning to a few names (`yes`, `none`, `unknown`, ...): a name
spelt like either kind of word must be quoted (`QUOTED`, read by the formatter and the language server).
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rulesdsl.language.words_from_grammar import CONTINUES as CONTINUES
from rulesdsl.language.words_from_grammar import GRAMMAR_SHA256
from rulesdsl.language.words_from_grammar import IGNORED as IGNORED
from rulesdsl.language.words_from_grammar import KEYWORDS as KEYWORDS
from rulesdsl.language.words_from_grammar import TERMINALS as TERMINALS

if TYPE_CHECKING:
    from lark import Lark

# Names that lowering reads as values, not as references: `born: yes`, `leads: none`, `age: unknown`.
TRUTH_WORDS: Mapping[str, bool] = {"yes": True, "true": True, "no": False, "false": False}
NONE_WORDS = ("none", "—")
UNKNOWN = "unknown"
VALUE_WORDS = frozenset({*TRUTH_WORDS, *NONE_WORDS, UNKNOWN})

# A name spelt like one of these is written quoted: the grammar or lowering would read the bare word otherwise.
QUOTED = frozenset({*KEYWORDS, *VALUE_WORDS})

GENERATED = Path(__file__).resolve().parent / "words_from_grammar.py"


def fresh(grammar: bytes) -> bool:
    """Whether words_from_grammar.py was generated from this grammar."""
    return hashlib.sha256(grammar).hexdigest() == GRAMMAR_SHA256


# -- reading the grammar (Lark is imported by the caller: only the generator and the Lark path get here)


def lexer_order(lark: Lark) -> list[Any]:
    """Lark's terminals in the order its lexer tries them: priority, then width, then pattern length, then name."""
    return sorted(lark.terminals, key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name))


def keywords(lark: Lark) -> dict[str, str]:
    """The grammar's string literals that are also names (`"or"`, `"check"`): word -> its terminal's name.
    Lark's lexer reads such a word as NAME and then renames it; where only a name can stand (the contextual
    lexer's state takes no keyword) it stays a NAME."""
    name = next(t for t in lark.terminals if t.name == "NAME").pattern.to_regexp()
    return {
        t.pattern.value: t.name
        for t in lexer_order(lark)
        if type(t.pattern).__name__ == "PatternStr" and re.fullmatch(name, t.pattern.value)  # the grammar's text
    }


def continuation(lark: Lark) -> frozenset[str]:
    """The terminals after which a line end never ends anything: in no parser state reached by reading one is
    a line end (`_NL`) acceptable, so the line goes on (`a,` / `2 *` / `name:` / `trait`)."""
    table = lark.parser.parser.parser.parse_table
    terminals = {t.name for t in lark.terminals}
    after: dict[str, list[Any]] = {}
    for actions in table.states.values():
        for symbol, (action, target) in actions.items():
            if symbol in terminals and action.name == "Shift":
                after.setdefault(symbol, []).append(target)
    return frozenset(t for t, states in after.items() if all("_NL" not in table.states[s] for s in states))


def derived(lark: Lark) -> tuple[tuple[tuple[str, str], ...], dict[str, str], frozenset[str], tuple[str, ...]]:
    """TERMINALS, KEYWORDS, CONTINUES and IGNORED as this grammar gives them."""
    words = keywords(lark)
    terminals = tuple((t.name, t.pattern.to_regexp()) for t in lexer_order(lark) if t.name not in words.values())
    return terminals, words, continuation(lark), tuple(lark.ignore_tokens)


def generated_text() -> str:
    """words_from_grammar.py as the grammar of record gives it today."""
    from lark import Lark

    from rulesdsl.resources import GRAMMAR

    # the parser's own settings, less its postlexer: terminals, keywords and the parse table are the same
    lark = Lark(GRAMMAR.read_text(encoding="utf-8"), parser="lalr", lexer="contextual", start=["start", "blocks"])
    terminals, words, continues, ignored = derived(lark)
    digest = hashlib.sha256(GRAMMAR.read_bytes()).hexdigest()
    lines = [
        '"""Generated from grammar/rules.lark by `python -m rulesdsl.language.words`: do not edit (see words.py)."""',
        "",
        f'GRAMMAR_SHA256 = "{digest}"',
        "",
        "# Lark's terminals in the order its lexer tries them, the keywords left out (the lexer reads them as NAME).",
        "TERMINALS: tuple[tuple[str, str], ...] = (",
        *(_pair(name, pattern) for name, pattern in terminals),
        ")",
        "# The grammar's string literals that are names too: word -> its terminal's name.",
        "KEYWORDS: dict[str, str] = {",
        *(f"    {_literal(word)}: {_literal(name)}," for word, name in words.items()),
        "}",
        "# The terminals after which a line end does not end an entry: the line goes on.",
        "CONTINUES = frozenset(",
        "    {",
        *(f"        {_literal(name)}," for name in sorted(continues)),
        "    }",
        ")",
        "# What the lexer passes over between tokens.",
        f"IGNORED = frozenset({{{', '.join(_literal(name) for name in sorted(ignored))}}})",
    ]
    return "\n".join(lines) + "\n"


def _pair(name: str, pattern: str) -> str:
    """One entry of TERMINALS, laid out as `ruff format` lays it out."""
    line = f"    ({_literal(name)}, {_literal(pattern)}),"
    if len(line) <= 120:
        return line
    pieces = [pattern[i : i + 80] for i in range(0, len(pattern), 80)]
    return "\n".join(["    (", f"        {_literal(name)},", *(f"        {_literal(p)}" for p in pieces)]) + ",\n    ),"


def _literal(text: str) -> str:
    """A string literal in the quotes `ruff format` prefers: double, unless the text holds one and no single."""
    quote = "'" if '"' in text and "'" not in text else '"'
    escaped = ("\\" + ch if ch in ("\\", quote) else ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    return quote + "".join(escaped) + quote


def main(argv: Iterable[str] = ()) -> int:
    """Write words_from_grammar.py from the grammar (`--check`: only say whether it is up to date)."""
    text = generated_text()
    if "--check" in argv:
        current = GENERATED.read_text(encoding="utf-8")
        print("up to date" if current == text else f"{GENERATED.name} is stale: run python -m rulesdsl.language.words")
        return 0 if current == text else 1
    GENERATED.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
