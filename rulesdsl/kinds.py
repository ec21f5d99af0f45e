"""The kinds of entity, read from the JSON Schemas shipped in rulesdsl/schemas/.

Each kind's schema lists its own fields; the fields every entity has (`kind`, `id`, `name`, `source`,
`uncertain`, `note`) live once in defs.schema.json and are merged in here. A field's `x-value`
annotation tells the lowering stage how to read the written value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
DEFS_ID = "urn:rulesdsl:defs"


@dataclass(frozen=True, slots=True)
class Kind:
    name: str
    schema: Mapping[str, Any]
    value_types: Mapping[str, str]  # field -> how lowering reads it (the x-value annotation)

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(self.schema["properties"])


def _read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@cache
def defs_schema() -> dict[str, Any]:
    return _read(SCHEMA_DIR / "defs.schema.json")


@cache
def kinds() -> Mapping[str, Kind]:
    common = defs_schema()["$defs"]["common"]
    found: dict[str, Kind] = {}
    for path in sorted(SCHEMA_DIR.glob("*.schema.json")):
        if path.name == "defs.schema.json":
            continue
        schema = _read(path)
        name = path.name.removesuffix(".schema.json")
        properties = {**common["properties"], **schema["properties"]}
        properties["kind"] = {"const": name}
        schema["properties"] = properties
        schema["required"] = [*common["required"], *schema["required"]]
        value_types = {f: spec["x-value"] for f, spec in properties.items() if "x-value" in spec}
        found[name] = Kind(name, schema, value_types)
    return found


def _localize(node: Any) -> Any:
    """Point references into the shared definitions at the copy bundled into each kind's schema."""
    if isinstance(node, dict):
        return {
            k: (v.replace(DEFS_ID + "#", "#") if k == "$ref" and isinstance(v, str) else _localize(v))
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_localize(v) for v in node]
    return node


@cache
def bundled_schema(kind_name: str) -> dict[str, Any]:
    """A kind's schema with the shared definitions copied in: self-contained, no registry needed."""
    schema: dict[str, Any] = _localize(dict(kinds()[kind_name].schema))
    schema["$defs"] = _localize(defs_schema()["$defs"])
    return schema
