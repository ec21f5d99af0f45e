"""The peers rulesdsl is measured against: the same entities written by hand as YAML (or JSON), loaded with
PyYAML's C loader (or `json.load`), each document validated by jsonschema-rs against its kind's schema, and
every cross-reference checked in plain Python.

Run by benchmarks/bench.py in a child process per measurement: `peers.py yaml|json FOLDER`. The folder holds
one `.yaml`/`.json` file per `.rules` source file (a list of documents), `schemas.json` (kind -> schema) and
`refs.json` (kind -> field -> [shape, target kind]), all written by bench.py from the same corpus.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import jsonschema_rs
import yaml


def _requirement_refs(node: Any) -> list[tuple[str, str]]:
    """(kind, id) of every entity a requirement names."""
    found: list[tuple[str, str]] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if not isinstance(item, dict):
            continue
        for key, kind in (("lifepath", "lifepath"), ("previous", "lifepath"), ("trait", "trait"), ("skill", "skill")):
            if isinstance(item.get(key), str):
                found.append((kind, item[key]))
        for key in ("any", "all"):
            stack += item.get(key, [])
        if "not" in item:
            stack.append(item["not"])
        of = item.get("of")
        if isinstance(of, dict):
            if of.get("setting"):
                found.append(("setting", of["setting"]))
            found += [("lifepath", i) for i in of.get("lifepaths", [])]
    return found


def _refs(value: Any, shape: str, target: str) -> list[tuple[str, str]]:
    if value is None or (isinstance(value, dict) and value.get("unknown")):
        return []
    if shape == "ref":
        return [(target, value)]
    if shape == "list":
        return [(target, v) for v in value if isinstance(v, str)]
    if shape == "choices":
        items = value.get("items", [])
        return [(target, i) for item in items for i in (item["one_of"] if isinstance(item, dict) else [item])]
    return _requirement_refs(value)


def check(folder: Path, suffix: str) -> dict[str, int]:
    schemas = json.loads((folder / "schemas.json").read_text(encoding="utf-8"))
    refs: dict[str, dict[str, list[str]]] = json.loads((folder / "refs.json").read_text(encoding="utf-8"))
    validators = {kind: jsonschema_rs.validator_for(schema) for kind, schema in schemas.items()}
    documents: list[tuple[str, dict[str, Any]]] = []  # (ruleset, document)
    for path in sorted(folder.glob(f"f*.{suffix}")):
        ruleset = path.stem.split("-", 1)[1]  # f0001-RULESET.yaml
        with open(path, "rb") as handle:
            loaded = yaml.load(handle, Loader=yaml.CSafeLoader) if suffix == "yaml" else json.load(handle)
        documents += [(ruleset, doc) for doc in loaded]
    errors = 0
    ids: dict[str, set[str]] = defaultdict(set)  # "ruleset/kind" -> ids
    for ruleset, doc in documents:
        where = f"{ruleset}/{doc['kind']}"
        if doc["id"] in ids[where]:
            errors += 1
        ids[where].add(doc["id"])
    for ruleset, doc in documents:
        where = f"{ruleset}/{doc['kind']}"
        if not validators[where].is_valid(doc):
            errors += 1
        for name, (shape, target) in refs.get(where, {}).items():
            for kind, entity_id in _refs(doc.get(name), shape, target):
                if entity_id not in ids[f"{ruleset}/{kind}"]:
                    errors += 1
    return {"documents": len(documents), "errors": errors}


if __name__ == "__main__":
    result = check(Path(sys.argv[2]), sys.argv[1])
    print(json.dumps(result))
    sys.exit(1 if result["errors"] else 0)
