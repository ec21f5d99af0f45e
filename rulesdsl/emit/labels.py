"""Display labels shared by both emitters: lifepaths whose name recurs in other settings also name
their setting ("Squire (Noble Setting)"), so that neither the reference nor a sheet is ambiguous."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any


def labels(documents: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> dict[str, dict[str, str]]:
    """kind -> id -> the label to show."""
    result = {kind: {i: str(doc["name"]) for i, doc in docs.items()} for kind, docs in documents.items()}
    lifepaths = documents.get("lifepath", {})
    settings = documents.get("setting", {})
    counts = Counter(doc["name"] for doc in lifepaths.values())
    for lp_id, doc in lifepaths.items():
        if counts[doc["name"]] > 1:
            setting = settings.get(doc.get("setting", ""), {})
            result["lifepath"][lp_id] = f"{doc['name']} ({setting.get('name', doc.get('setting'))})"
    return result
