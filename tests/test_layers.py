"""The layout is the pipeline: each folder of rulesdsl/ imports only from itself and the folders below it,
and no module imports itself round a cycle (docs/architecture.md draws the layers)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import rulesdsl

PACKAGE = Path(rulesdsl.__file__).resolve().parent

# Bottom to top. The base: the runtime generated packages carry (standard library only, so that the
# compiler finds names exactly as a package does), positions and diagnostics, where the data files are, and
# the plain reprs of frozen dataclasses.
LAYERS = (
    ("runtime",),
    ("__init__", "diagnostics", "resources", "reprs"),
    ("language",),
    ("syntax",),
    ("compile",),
    ("targets",),
    ("tools",),
    ("__main__",),
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(name: str, path: Path, known: set[str]) -> Iterator[str]:
    """The rulesdsl modules `name` imports, anywhere in it (inside a function too: a cycle put off until
    a call is still a cycle)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".")
            base = parts[: len(parts) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            targets = [f"{module}.{alias.name}" for alias in node.names] + [module]
        else:
            continue
        for target in targets:
            # the longest known module the name lies in: `rulesdsl.compile.ir.Value` -> rulesdsl.compile.ir
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target.startswith("rulesdsl") and target != name:
                yield target


@cache
def graph() -> dict[str, frozenset[str]]:
    found = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "templates" not in p.parts}
    known = set(found)
    edges = {name: frozenset(imports(name, path, known)) for name, path in found.items()}
    # a package's __init__ is imported on the way to its modules: an edge to it says nothing of layering
    return {name: frozenset(t for t in targets if t != "rulesdsl") for name, targets in edges.items()}


def layer(name: str) -> int:
    top = name.split(".")[1] if "." in name else "__init__"
    for index, members in enumerate(LAYERS):
        if top in members:
            return index
    raise AssertionError(f"{name} is in no layer: add its folder to LAYERS and to docs/architecture.md")


def test_each_folder_imports_only_from_below() -> None:
    wrong = [
        f"{name} (layer {layer(name)}) imports {target} (layer {layer(target)})"
        for name, targets in sorted(graph().items())
        for target in sorted(targets)
        if layer(target) > layer(name)
    ]
    assert wrong == []


def test_the_runtime_is_the_standard_library_alone() -> None:
    runtime = [name for name in graph() if name.startswith("rulesdsl.runtime")]
    assert len(runtime) >= 2
    for name in runtime:
        assert all(target.startswith("rulesdsl.runtime") for target in graph()[name]), name


def _cycles(edges: dict[str, frozenset[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        work = [(start, iter(sorted(edges[start])))]
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        cycles.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return cycles


def test_no_import_cycles() -> None:
    assert _cycles(graph()) == []


def test_the_contract_can_fail() -> None:
    """It sees every stage and hundreds of imports, and it finds a cycle and an upward import when given one."""
    found = graph()
    for number in range(len(LAYERS)):
        assert any(layer(name) == number for name in found), LAYERS[number]
    assert sum(len(targets) for targets in found.values()) > 150
    assert _cycles({"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"})}) == [["a", "b", "c"]]
    assert layer("rulesdsl.syntax.tree") < layer("rulesdsl.compile.ir") < layer("rulesdsl.tools.cli")


def test_every_target_is_in_the_targets_layer() -> None:
    """rules.js's emitter sits beside the Python package's and the reference's, under the same rule."""
    targets = {name for name in graph() if name.startswith("rulesdsl.targets.")}
    assert {"rulesdsl.targets.javascript.module", "rulesdsl.targets.python.package"} <= targets
    assert {layer(name) for name in targets} == {LAYERS.index(("targets",))}
