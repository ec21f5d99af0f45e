"""The search index: every word of every entry (names, aliases, what its fields name, table cells, notes,
descriptions), as an inverted index small enough to load lazily and fast to query in the browser.

Shipped as a script (`window.SEARCH_INDEX = {...}`), never fetched: fetch() fails from file://. The
browser side is in templates/html/site.js and must fold and split words exactly as `words` does here.

Format (all lists in a fixed order, so the output is deterministic):
  r: [[ruleset id, title]]        k: [[ruleset index, kind, kind title]]       g: [page path]
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

import html
import json
import re
import unicodedata
from dataclasses import dataclass, field

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


@dataclass
class SearchIndex:
    rulesets: list[list[str]] = field(default_factory=list)
    kinds: list[list[object]] = field(default_factory=list)
    pages: list[str] = field(default_factory=list)
    entries: list[list[object]] = field(default_factory=list)
    postings: dict[str, dict[int, tuple[int, int]]] = field(
        default_factory=dict
    )  # term -> entry -> best (weight, field)
    also: dict[int, list[int]] = field(default_factory=dict)  # entry -> rulesets it is in unchanged
    _kind_at: dict[tuple[str, str], int] = field(default_factory=dict)
    _page_at: dict[str, int] = field(default_factory=dict)
    _field_at: dict[str, int] = field(default_factory=dict)
    _entry_at: dict[tuple[str, str, str], int] = field(default_factory=dict)  # (ruleset, kind, id) -> entry

    def add_ruleset(self, ruleset_id: str, title: str) -> None:
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
        if key not in self._kind_at:
            ruleset_at = next(i for i, r in enumerate(self.rulesets) if r[0] == ruleset_id)
            self._kind_at[key] = len(self.kinds)
            self.kinds.append([ruleset_at, kind, kind_title])
        if page not in self._page_at:
            self._page_at[page] = len(self.pages)
            self.pages.append(page)
        entry = len(self.entries)
        self.entries.append([label, self._kind_at[key], self._page_at[page], anchor, context])
        if id_:
            self._entry_at[(ruleset_id, kind, id_)] = entry
        for text, weight, field_name in texts:
            at = self._field_at.setdefault(field_name, len(self._field_at)) if weight == OTHER else -1
            for word in words(text):
                found = self.postings.setdefault(word, {})
                if found.get(entry, (-1, -1))[0] < weight:
                    found[entry] = (weight, at)

    def add_also(self, bases: tuple[str, ...], kind: str, id_: str, ruleset_id: str) -> bool:
        """An entity a homebrew took unchanged from one of its `bases`: said on the first base's entry
        ("also in Fenmark") rather than listed twice. False when no base has it indexed."""
        for base in bases:
            entry = self._entry_at.get((base, kind, id_))
            if entry is not None:
                self._entry_at[(ruleset_id, kind, id_)] = entry
                ruleset_at = next(i for i, r in enumerate(self.rulesets) if r[0] == ruleset_id)
                if ruleset_at not in self.also.setdefault(entry, []):
                    self.also[entry].append(ruleset_at)
                return True
        return False

    def script(self) -> str:
        terms = sorted(self.postings)
        lists = []
        for term in terms:
            previous = 0
            encoded = []
            for entry, (weight, at) in sorted(self.postings[term].items()):
                value = entry * 4 + weight
                encoded.append(_base36(value - previous) + (f".{_base36(at)}" if at >= 0 else ""))
                previous = value
            lists.append(",".join(encoded))
        fields = sorted(self._field_at, key=self._field_at.__getitem__)
        also = [[entry, *rulesets] for entry, rulesets in sorted(self.also.items())]
        data = {
            "r": self.rulesets,
            "k": self.kinds,
            "g": self.pages,
            "e": self.entries,
            "t": terms,
            "p": lists,
            "f": fields,
            "a": also,
        }
        text = json.dumps(data, ensure_ascii=True, separators=(",", ":")).replace("</", "<\\/")
        return f"window.SEARCH_INDEX = {text};\n"
