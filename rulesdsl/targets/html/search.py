"""The search index: every word of every entry (names, aliases, what its fields name, table cells, notes,
descriptions), as an inverted index in pieces, small enough to load lazily and fast to query in the browser.

Shipped as scripts (`window.SEARCH_INDEX = {...}`, then `window.rulesdslSearchPiece(n, {...})` for each
piece), never fetched: fetch() fails from file://. The browser side is in templates/site.js: it loads the
pieces on first use and joins them into one index; it must fold and split words exactly as `words` does.

In pieces so that a build after an edit makes again only the pieces whose entries changed (see
SearchMemo): a piece is a run of entries in the order they are added (page by page), cut where a ruleset
begins and, past PIECE entries, where a page begins; its entries and pages are numbered in the piece.

Format (all lists in a fixed order, so the output is deterministic):
  search-index.js: r: [[ruleset id, title]]   k: [[ruleset index, kind, kind title]]   n: how many pieces
  search/N.js, piece N:
  g: [page path]
  e: [[label, kind index, page index, anchor, context]]  (anchor "" for an entity that is its page)
  t: [term], sorted               p: [postings of each term]
  f: [field], the fields a word can be found in besides the name, aliases and description
  a: [[entry, ruleset index, ...]]: the homebrews an entry is also in, unchanged (listed once, where defined)
A posting list is "entry*4+weight" numbers, ascending, each written as the difference to the one before,
in base 36, joined by ","; weight 3 is the name, 2 an alias, 1 anything else, 0 the description only
(an entry is posted once per term, with the best weight its texts give it). A weight-1 posting is
followed by "." and the field it was found in (its index in f, base 36).
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import unicodedata
from dataclasses import dataclass, field

from rulesdsl.reprs import plain_reprs
from rulesdsl.targets.digests import Aside

_TAGS = re.compile(r"<[^>]*>")
# A dice value's table of odds (values.dice_html): numbers, not words anyone searches for.
_ODDS = re.compile(r'<table class="odds">.*?</table>', re.DOTALL)
_WORD = re.compile(r"[^\W_]+")
NAME, ALIAS, OTHER, DESCRIPTION = 3, 2, 1, 0


def fold(text: str) -> str:
    """Lower case without accents: NFKD, marks dropped (the browser does the same)."""
    if text.isascii():
        return text.lower()
    return "".join(
        c for c in unicodedata.normalize("NFKD", text) if not unicodedata.category(c).startswith("M")
    ).lower()


def words(text: str) -> list[str]:
    return _WORD.findall(fold(text))


def text_of(markup: str) -> str:
    """The words a reader sees in rendered HTML (our own markup: source text in it is always escaped)."""
    return html.unescape(_TAGS.sub(" ", _ODDS.sub(" ", markup)))


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if not number:
            return out


PIECE = 500  # entries a piece reaches before a new page starts the next

Texts = tuple[tuple[str, int, str], ...]  # (text, weight, field) of an entry


@dataclass(frozen=True, slots=True)
class _Entry:
    kind: int  # its index in the kinds
    label: str
    page: str
    anchor: str
    context: str
    texts: Texts
    ruleset: int  # its index in the rulesets


@dataclass
class SearchMemo:
    """The pieces the last index made, by the digest of what each is made from (its number, its entries with
    their texts, the rulesets and kinds), kept for the next: across runs in the cache folder (build.Kept),
    or in `rulesdsl serve`. It keeps what the last index used."""

    pieces: dict[str, str] = field(default_factory=dict)
    used: dict[str, str] = field(default_factory=dict)
    made: int = 0  # pieces the last index made (the rest it took)

    def take(self, key: str) -> str | None:
        text = self.pieces.get(key)
        if text is not None:
            self.used[key] = text
        return text

    def keep(self, key: str, text: str) -> None:
        self.used[key] = text
        self.made += 1

    def done(self) -> None:
        """After an index: keep only what it used."""
        self.pieces, self.used = self.used, {}

    def data(self, aside: Aside) -> list[list[object]]:
        return [[key, aside.put(text)] for key, text in sorted(self.pieces.items())]

    def load(self, data: object, aside: Aside) -> bool:
        """The pieces `data` gave (from the cache folder); False, and none, where it is anything else."""
        if type(data) is not list or not all(type(row) is list and len(row) == 2 for row in data):
            return False
        try:
            loaded = {key: aside.get(at) for key, at in data if type(key) is str}
        except TypeError:
            return False
        if len(loaded) != len(data):
            return False
        self.pieces = loaded
        return True


@dataclass
class SearchIndex:
    rulesets: list[list[str]] = field(default_factory=list)
    kinds: list[list[object]] = field(default_factory=list)
    entries: list[_Entry] = field(default_factory=list)
    also: dict[int, list[int]] = field(default_factory=dict)  # entry -> rulesets it is in unchanged
    _kind_at: dict[tuple[str, str], int] = field(default_factory=dict)
    _ruleset_at: dict[str, int] = field(default_factory=dict)
    _entry_at: dict[tuple[str, str, str], int] = field(default_factory=dict)  # (ruleset, kind, id) -> entry

    def add_ruleset(self, ruleset_id: str, title: str) -> None:
        self._ruleset_at[ruleset_id] = len(self.rulesets)
        self.rulesets.append([ruleset_id, title])

    def add(
        self,
        ruleset_id: str,
        kind: str,
        kind_title: str,
        label: str,
        page: str,
        anchor: str,
        context: str,
        texts: list[tuple[str, int, str]],
        id_: str = "",
    ) -> None:
        """One entry (entity `id_`), found at `page#anchor`, with its texts, their weights and the fields
        they are in ("" where a reader is not told: the name, an alias, the description)."""
        key = (ruleset_id, kind)
        ruleset_at = self._ruleset_at[ruleset_id]
        if key not in self._kind_at:
            self._kind_at[key] = len(self.kinds)
            self.kinds.append([ruleset_at, kind, kind_title])
        if id_:
            self._entry_at[(ruleset_id, kind, id_)] = len(self.entries)
        entry = _Entry(self._kind_at[key], label, page, anchor, context, tuple(texts), ruleset_at)
        self.entries.append(entry)

    def add_also(self, bases: tuple[str, ...], kind: str, id_: str, ruleset_id: str) -> bool:
        """An entity a homebrew took unchanged from one of its `bases`: said on the first base's entry
        ("also in Fenmark") rather than listed twice. False when no base has it indexed."""
        for base in bases:
            entry = self._entry_at.get((base, kind, id_))
            if entry is not None:
                self._entry_at[(ruleset_id, kind, id_)] = entry
                ruleset_at = self._ruleset_at[ruleset_id]
                if ruleset_at not in self.also.setdefault(entry, []):
                    self.also[entry].append(ruleset_at)
                return True
        return False

    def pieces(self) -> list[range]:
        """The entries of each piece: a new one where a ruleset begins, and where a page begins once the
        piece has PIECE entries."""
        pieces: list[range] = []
        start = 0
        for at in range(1, len(self.entries) + 1):
            if at == len(self.entries):
                pieces.append(range(start, at))
                break
            entry, last = self.entries[at], self.entries[at - 1]
            if entry.ruleset != last.ruleset or (at - start >= PIECE and entry.page != last.page):
                pieces.append(range(start, at))
                start = at
        return pieces

    def files(self, memo: SearchMemo | None = None) -> dict[str, str]:
        """The index's scripts by path: `search-index.js` and its pieces. With `memo`, a piece made from
        what one it holds was made from is taken from it, and it is left holding this index's."""
        memo = memo if memo is not None else SearchMemo()
        memo.made = 0
        pieces = self.pieces()
        head = {"r": self.rulesets, "k": self.kinds, "n": len(pieces)}
        files = {"search-index.js": f"window.SEARCH_INDEX = {_json(head)};\n"}
        for n, entries in enumerate(pieces):
            also = [(at - entries.start, self.also[at]) for at in entries if at in self.also]
            held = [self.entries[at] for at in entries]
            key = hashlib.sha256(repr((n, self.rulesets, self.kinds, held, also)).encode()).hexdigest()
            text = memo.take(key)
            if text is None:
                text = _piece(n, held, also)
                memo.keep(key, text)
            files[f"search/{n}.js"] = text
        memo.done()
        return files


def _piece(n: int, entries: list[_Entry], also: list[tuple[int, list[int]]]) -> str:
    """Piece `n`'s script: its entries (numbered from 0), their pages and words."""
    pages: dict[str, int] = {}
    fields: dict[str, int] = {}
    postings: dict[str, dict[int, tuple[int, int]]] = {}  # term -> entry -> best (weight, field)
    rows = []
    for at, entry in enumerate(entries):
        rows.append([entry.label, entry.kind, pages.setdefault(entry.page, len(pages)), entry.anchor, entry.context])
        for text, weight, field_name in entry.texts:
            index = fields.setdefault(field_name, len(fields)) if weight == OTHER else -1
            for word in words(text):
                found = postings.setdefault(word, {})
                if found.get(at, (-1, -1))[0] < weight:
                    found[at] = (weight, index)
    terms = sorted(postings)
    lists = []
    for term in terms:
        previous = 0
        encoded = []
        for at, (weight, index) in sorted(postings[term].items()):
            value = at * 4 + weight
            encoded.append(_base36(value - previous) + (f".{_base36(index)}" if index >= 0 else ""))
            previous = value
        lists.append(",".join(encoded))
    data = {
        "g": list(pages),
        "e": rows,
        "t": terms,
        "p": lists,
        "f": list(fields),
        "a": [[at, *rulesets] for at, rulesets in also],
    }
    return f"window.rulesdslSearchPiece({n}, {_json(data)});\n"


def _json(data: object) -> str:
    return json.dumps(data, ensure_ascii=True, separators=(",", ":")).replace("</", "<\\/")


plain_reprs(globals())
