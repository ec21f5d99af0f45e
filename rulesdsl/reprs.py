"""Plain reprs for the frozen dataclasses values are made of (the IR, field types, positions)."""

from __future__ import annotations

import dataclasses
from typing import Any


def plain_reprs(namespace: dict[str, Any]) -> None:
    """Give each frozen dataclass defined in `namespace` (a module's globals) the repr `@dataclass` writes,
    the same text, without its guard against a value that holds itself (`reprlib.recursive_repr`). A frozen
    value is made from parts that exist before it, so none holds itself; and the guard is most of the time
    of a repr, which is how a build knows an entity it rendered before (targets/digests.py)."""
    module = namespace["__name__"]
    for cls in list(namespace.values()):
        if not (isinstance(cls, type) and cls.__module__ == module and dataclasses.is_dataclass(cls)):
            continue
        written = vars(cls).get("__repr__")
        if not cls.__dataclass_params__.frozen or not hasattr(written, "__wrapped__"):  # type: ignore[attr-defined]
            continue  # not frozen, or a repr of its own (the one @dataclass writes is wrapped by the guard)
        shown = ", ".join(f"{f.name}={{self.{f.name}!r}}" for f in dataclasses.fields(cls) if f.repr)
        code = f"def __repr__(self):\n    return f'{{type(self).__qualname__}}({shown})'\n"
        scope: dict[str, Any] = {}
        exec(code, scope)  # noqa: S102  (made from field names only, as @dataclass makes its repr)
        scope["__repr__"].__qualname__ = f"{cls.__qualname__}.__repr__"
        cls.__repr__ = scope["__repr__"]  # type: ignore[method-assign]
