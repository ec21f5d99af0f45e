"""What each file derived, kept in memory between compilations in one process (the language server), so that
re-checking a ruleset after an edit of one file parses and lowers only that file, and decodes nothing from
the on-disk cache (`cache.py`) that it decoded before.

Each file (by display path) keeps what one text of it derived: its outline with its syntax diagnostics, and
its lowered entities with their diagnostics under the digest of the kinds that read them (the last two such
digests). The text is known by its sha256 and the compiler's own cache key, as on disk; a new text of a file
replaces what the old one derived, so a thousand edits of a file hold one. It is bounded: past `limit`
(files plus outline statements plus entities) the least recently used files are forgotten.

`Caches` puts a memo in front of the on-disk cache. The on-disk cache keeps texts that are on disk: an open
buffer (whose text changes with every keystroke) is neither read from it nor written to it.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Collection
from dataclasses import dataclass, field

from rulesdsl.compile.cache import Lowered, ParseCache, Parsed, compiler_digest
from rulesdsl.compile.checks.semantic import Resolutions

DEFAULT_LIMIT = 500_000  # about a gigabyte at the most: entities of a large lifepath are about 2 KB each
_KINDS_KEPT = 2  # digests of kinds a file's entities are kept for (a kind edited back and forth)


@dataclass(slots=True)
class _Derived:
    key: str  # sha256 of the compiler's key and the text
    outline: Parsed | None = None
    lowered: dict[str, Lowered] = field(default_factory=dict)  # kinds digest -> entities, oldest first

    @property
    def size(self) -> int:
        outline = len(self.outline[0].blocks) if self.outline is not None else 0
        return 1 + outline + sum(len(entities) for entities, _ in self.lowered.values())


def text_key(text: str) -> str:
    return hashlib.sha256(f"{compiler_digest()}\0{text}".encode()).hexdigest()


class Memo:
    """A bounded map of display path -> what one text of the file derived (least recently used forgotten)."""

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self.limit = limit
        self._files: OrderedDict[str, _Derived] = OrderedDict()
        self._size = 0
        self._resolutions: dict[str, Resolutions] = {}  # by ruleset id: of its last check (its entities, once)

    @property
    def size(self) -> int:
        """Files, outline statements and entities held: what `limit` bounds."""
        return self._size

    def __len__(self) -> int:
        return len(self._files)

    def clear(self) -> None:
        self._files.clear()
        self._size = 0
        self._resolutions.clear()

    def resolutions(self, ruleset: str) -> Resolutions:
        """The references resolved in the last check of the ruleset, for the next (see semantic.Resolutions)."""
        return self._resolutions.setdefault(ruleset, Resolutions())

    def _found(self, shown: str, text: str) -> _Derived | None:
        derived = self._files.get(shown)
        if derived is None or derived.key != text_key(text):
            return None
        self._files.move_to_end(shown)
        return derived

    def _kept(self, shown: str, text: str) -> _Derived:
        derived = self._found(shown, text)
        if derived is None:  # a new text: what the old one derived goes
            old = self._files.pop(shown, None)
            self._size -= old.size if old is not None else 0
            derived = self._files[shown] = _Derived(text_key(text))
            self._size += derived.size
        return derived

    def _grown(self, derived: _Derived, before: int) -> None:
        self._size += derived.size - before
        while self._size > self.limit and len(self._files) > 1:
            _, oldest = self._files.popitem(last=False)
            self._size -= oldest.size

    def load(self, shown: str, text: str) -> Parsed | None:
        derived = self._found(shown, text)
        if derived is None or derived.outline is None:
            return None
        outline, diagnostics = derived.outline
        return outline, list(diagnostics)

    def save(self, shown: str, text: str, parsed: Parsed) -> None:
        derived = self._kept(shown, text)
        before = derived.size
        derived.outline = (parsed[0], list(parsed[1]))
        self._grown(derived, before)

    def load_lowered(self, shown: str, text: str, kinds: str) -> Lowered | None:
        derived = self._found(shown, text)
        found = derived.lowered.get(kinds) if derived is not None else None
        return None if found is None else (list(found[0]), list(found[1]))

    def save_lowered(self, shown: str, text: str, kinds: str, lowered: Lowered) -> None:
        derived = self._kept(shown, text)
        before = derived.size
        derived.lowered.pop(kinds, None)
        derived.lowered[kinds] = (list(lowered[0]), list(lowered[1]))
        while len(derived.lowered) > _KINDS_KEPT:
            del derived.lowered[next(iter(derived.lowered))]
        self._grown(derived, before)


class Caches:
    """The memo (if any) in front of the on-disk cache; `unsaved`: display paths of open buffers, which the
    on-disk cache never sees."""

    def __init__(self, disk: ParseCache, memo: Memo | None = None, unsaved: Collection[str] = ()) -> None:
        self.disk = disk
        self.memo = memo
        self.unsaved = frozenset(unsaved)

    def load(self, shown: str, text: str) -> Parsed | None:
        found = self.memo.load(shown, text) if self.memo is not None else None
        if found is None and shown not in self.unsaved:
            found = self.disk.load(shown, text)
            if found is not None and self.memo is not None:
                self.memo.save(shown, text, found)
        return found

    def save(self, shown: str, text: str, parsed: Parsed) -> None:
        if self.memo is not None:
            self.memo.save(shown, text, parsed)
        if shown not in self.unsaved:
            self.disk.save(shown, text, parsed)

    def load_lowered(self, shown: str, text: str, kinds: str) -> Lowered | None:
        found = self.memo.load_lowered(shown, text, kinds) if self.memo is not None else None
        if found is None and shown not in self.unsaved:
            found = self.disk.load_lowered(shown, text, kinds)
            if found is not None and self.memo is not None:
                self.memo.save_lowered(shown, text, kinds, found)
        return found

    def save_lowered(self, shown: str, text: str, kinds: str, lowered: Lowered) -> None:
        if self.memo is not None:
            self.memo.save_lowered(shown, text, kinds, lowered)
        if shown not in self.unsaved:
            self.disk.save_lowered(shown, text, kinds, lowered)
