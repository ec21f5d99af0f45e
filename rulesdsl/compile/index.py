"""Finding entities by what people write: an id, a display name (by its slug) or an alias."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from rulesdsl.compile import ir
from rulesdsl.diagnostics import Suggestions
from rulesdsl.language.names import slug


class EntityIndex:
    """Entities of one kind, findable by id, by the slug of their display name, by an alias, or by an
    abbreviation (an attribute's `abbr`: `advances: WS, Ag` names attributes as formulas do)."""

    def __init__(self, entities: Iterable[ir.Entity]) -> None:
        self.by_id: dict[str, ir.Entity] = {}
        self.by_name: dict[str, list[str]] = defaultdict(list)
        # candidates (see `candidates`), by how many entities give each: counted when first asked for
        self._shown: Counter[str] | None = None
        self._pool: Suggestions | None = None  # made at the first `close`
        self._pooled: frozenset[str] = frozenset()  # what it was made of
        for e in entities:
            self.add(e)

    def add(self, e: ir.Entity) -> None:
        self.by_id[e.id] = e
        keys = _keys(e)
        for key in keys:
            self.by_name[key].append(e.id)
        if self._shown is not None:
            for shown in _shown(e, keys[0]):
                self._shown[shown] += 1
                if self._pool is not None and shown not in self._pooled:
                    self._pool = None  # a name the pool lacks (a renamed entity): made again when asked

    def discard(self, e: ir.Entity) -> None:
        """Forget an entity added before (a patch changes it, a removal takes it away)."""
        if self.by_id.get(e.id) is not e:
            return
        del self.by_id[e.id]
        keys = _keys(e)
        for key in keys:
            ids = self.by_name[key]
            ids.remove(e.id)
            if not ids:
                del self.by_name[key]
        if self._shown is not None:
            for shown in _shown(e, keys[0]):
                self._shown[shown] -= 1  # the pool keeps it, but `close` names only what is still here

    def find(self, text: str) -> list[str]:
        key = slug(text)
        if key in self.by_id:
            return [key]
        return sorted(set(self.by_name.get(key, [])))

    def candidates(self) -> list[str]:
        """What to suggest: display names, and ids where they are not just the slug of the name."""
        return sorted(name for name, count in self._counted().items() if count > 0)

    def _counted(self) -> Counter[str]:
        if self._shown is None:
            self._shown = Counter(name for e in self.by_id.values() for name in _shown(e, slug(e.name)))
        return self._shown

    def close(self, text: str) -> tuple[str, ...]:
        """The candidates closest to `text` (diagnostics.Suggestions): one pool for every question asked
        (a pool per question made a homebrew of many mistaken names quadratic), never naming an entity
        gone since."""
        if self._pool is None:
            candidates = self.candidates()
            self._pool, self._pooled = Suggestions(candidates), frozenset(candidates)
        return tuple(c for c in self._pool.close(text) if self._counted()[c] > 0)


def _keys(e: ir.Entity) -> list[str]:
    """The slugs an entity is found by (its id aside): its name (first), its aliases and its abbreviation."""
    aliases = e.fields.get("aliases", ())
    abbr = e.fields.get("abbr")
    names = (*(aliases if isinstance(aliases, tuple) else ()), abbr)
    return [slug(e.name), *(slug(name) for name in names if isinstance(name, str))]


def _shown(e: ir.Entity, name_slug: str) -> tuple[str, ...]:
    """What an entity is suggested as: its display name, and its id where that is not the name's slug."""
    return (e.name,) if e.id == name_slug else (e.name, e.id)
