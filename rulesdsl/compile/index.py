"""Finding entities by what people write: an id, a display name (by its slug) or an alias."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from rulesdsl.compile import ir
from rulesdsl.language.names import slug


class EntityIndex:
    """Entities of one kind, findable by id, by the slug of their display name, by an alias, or by an
    abbreviation (an attribute's `abbr`: `advances: WS, Ag` names attributes as formulas do)."""

    def __init__(self, entities: Iterable[ir.Entity]) -> None:
        self.by_id: dict[str, ir.Entity] = {}
        self.by_name: dict[str, list[str]] = defaultdict(list)
        for e in entities:
            self.by_id[e.id] = e
            aliases = e.fields.get("aliases", ())
            abbr = e.fields.get("abbr")
            for name in (e.name, *(aliases if isinstance(aliases, tuple) else ()), abbr):
                if isinstance(name, str):
                    self.by_name[slug(name)].append(e.id)

    def find(self, text: str) -> list[str]:
        key = slug(text)
        if key in self.by_id:
            return [key]
        return sorted(set(self.by_name.get(key, [])))

    def candidates(self) -> list[str]:
        """What to suggest: display names, and ids where they are not just the slug of the name."""
        return sorted({e.name for e in self.by_id.values()} | {i for i, e in self.by_id.items() if i != slug(e.name)})
