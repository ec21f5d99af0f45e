"""Plain reprs and inits for the frozen dataclasses values are made of (the IR, field types, positions)."""

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


def plain_inits(namespace: dict[str, Any]) -> None:
    """Give each frozen, slotted dataclass defined in `namespace` an `__init__` that sets its slots directly:
    the same parameters, defaults and effect as the one `@dataclass` writes, which goes through
    `object.__setattr__` field by field (a frozen class refuses its own `__setattr__`) and takes about half
    again as long. Compiling a ruleset makes hundreds of thousands of these. Classes that ask more of their
    `__init__` (a default factory, a field left out of it, keyword-only fields, `__post_init__`) keep theirs."""
    module = namespace["__name__"]
    for cls in list(namespace.values()):
        if not (isinstance(cls, type) and cls.__module__ == module and dataclasses.is_dataclass(cls)):
            continue
        params = cls.__dataclass_params__  # type: ignore[attr-defined]
        written = vars(cls).get("__init__")
        if not params.frozen or "__slots__" not in vars(cls) or written is None or hasattr(cls, "__post_init__"):
            continue
        fields = dataclasses.fields(cls)
        if any(not f.init or f.kw_only or f.default_factory is not dataclasses.MISSING for f in fields):
            continue
        scope: dict[str, Any] = {}
        signature, body = [], []
        for i, f in enumerate(fields):
            owner = next(k for k in cls.__mro__ if f.name in vars(k))  # the class whose slot it is
            scope[f"set{i}"] = vars(owner)[f.name].__set__
            if f.default is dataclasses.MISSING:
                signature.append(f.name)
            else:
                scope[f"default{i}"] = f.default
                signature.append(f"{f.name}=default{i}")
            body.append(f"    set{i}(self, {f.name})\n")
        code = f"def __init__(self, {', '.join(signature)}):\n" + ("".join(body) or "    pass\n")
        exec(code, scope)  # noqa: S102  (made from field names only, as @dataclass makes its __init__)
        init = scope["__init__"]
        init.__qualname__ = f"{cls.__qualname__}.__init__"
        init.__annotations__ = written.__annotations__
        init.__doc__ = written.__doc__
        init.__written__ = written  # the one @dataclass wrote (tests/test_reprs.py holds the two to one effect)
        cls.__init__ = init  # type: ignore[method-assign]
