"""Display labels shared by both emitters: lifepaths whose name recurs in other settings also name
their setting ("Squire (Noble Setting)"), so that neither the reference nor a sheet is ambiguous."""

from __future__ import annotations

from collections import Counter

from rulesdsl.compile.ir import Ref
from rulesdsl.compile.pipeline import CompiledRuleset


def labels(ruleset: CompiledRuleset) -> dict[str, dict[str, str]]:
    """kind -> id -> the label to show."""
    entities = ruleset.entities
    result = {kind: {i: e.name for i, e in group.items()} for kind, group in entities.items()}
    lifepaths = entities.get("lifepath", {})
    settings = entities.get("setting", {})
    counts = Counter(e.name for e in lifepaths.values())
    for lp_id, entity in lifepaths.items():
        if counts[entity.name] > 1:
            setting = entity.fields.get("setting")
            setting_id = setting.target if isinstance(setting, Ref) else ""
            shown = settings[setting_id].name if setting_id in settings else setting_id
            result["lifepath"][lp_id] = f"{entity.name} ({shown})"
    return result
