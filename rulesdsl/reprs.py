"""Plain reprs and inits for the frozen dataclasses values are made of (the IR, field types, positions).

Each module's are written as one source text and compiled at once: compiling them one by one took longer
than the classes themselves (about 0.1 ms each, for some 150 classes at every start)."""

from __future__ import annotations

import dataclasses
from typing import Any


def _frozen_dataclasses(namespace: dict[str, Any]) -> list[type]:
    module = namespace["__name__"]
    return [
        cls
        for cls in list(namespace.values())
        if isinstance(cls, type)
        and cls.__module__ == module
        and dataclasses.is_dataclass(cls)
        and cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
    ]


def _compiled(functions: list[str], scope: dict[str, Any], module: str) -> dict[str, Any]:
    """The functions' source compiled as one text in `scope` (names given to them by their source)."""
    if functions:
        # made from field names and counts only, as @dataclass makes its methods
        exec(compile("".join(functions), f"<plain methods of {module}>", "exec"), scope)  # noqa: S102
    return scope


def plain_reprs(namespace: dict[str, Any]) -> None:
    """Give each frozen dataclass defined in `namespace` (a module's globals) the repr `@dataclass` writes,
    the same text, without its guard against a value that holds itself (`reprlib.recursive_repr`). A frozen
    value is made from parts that exist before it, so none holds itself; and the guard is most of the time
    of a repr, which is how a build knows an entity it rendered before (targets/digests.py)."""
    classes: list[type] = []
    functions: list[str] = []
    for cls in _frozen_dataclasses(namespace):
        if not hasattr(vars(cls).get("__repr__"), "__wrapped__"):
            continue  # a repr of its own (the one @dataclass writes is wrapped by the guard)
        shown = ", ".join(f"{f.name}={{self.{f.name}!r}}" for f in dataclasses.fields(cls) if f.repr)
        functions.append(f"def repr{len(classes)}(self):\n    return f'{{type(self).__qualname__}}({shown})'\n")
        classes.append(cls)
    scope = _compiled(functions, {}, namespace["__name__"])
    for i, cls in enumerate(classes):
        method = scope[f"repr{i}"]
        method.__name__, method.__qualname__ = "__repr__", f"{cls.__qualname__}.__repr__"
        cls.__repr__ = method  # type: ignore[method-assign]


def plain_inits(namespace: dict[str, Any]) -> None:
    """Give each frozen, slotted dataclass defined in `namespace` an `__init__` that sets its slots directly:
    the same parameters, defaults and effect as the one `@dataclass` writes, which goes through
    `object.__setattr__` field by field (a frozen class refuses its own `__setattr__`) and takes about half
    again as long. Compiling a ruleset makes hundreds of thousands of these. Classes that ask more of their
    `__init__` (a default factory, a field left out of it, keyword-only fields, `__post_init__`) keep theirs."""
    classes: list[tuple[type, Any]] = []
    functions: list[str] = []
    scope: dict[str, Any] = {}
    for cls in _frozen_dataclasses(namespace):
        written = vars(cls).get("__init__")
        if "__slots__" not in vars(cls) or written is None or hasattr(cls, "__post_init__"):
            continue
        fields = dataclasses.fields(cls)
        if any(not f.init or f.kw_only or f.default_factory is not dataclasses.MISSING for f in fields):
            continue
        n = len(classes)
        signature, body = [], []
        for i, f in enumerate(fields):
            owner = next(k for k in cls.__mro__ if f.name in vars(k))  # the class whose slot it is
            scope[f"set{n}_{i}"] = vars(owner)[f.name].__set__
            if f.default is dataclasses.MISSING:
                signature.append(f.name)
            else:
                scope[f"default{n}_{i}"] = f.default
                signature.append(f"{f.name}=default{n}_{i}")
            body.append(f"    set{n}_{i}(self, {f.name})\n")
        functions.append(f"def init{n}(self, {', '.join(signature)}):\n" + ("".join(body) or "    pass\n"))
        classes.append((cls, written))
    _compiled(functions, scope, namespace["__name__"])
    for i, (cls, written) in enumerate(classes):
        init = scope[f"init{i}"]
        init.__name__, init.__qualname__ = "__init__", f"{cls.__qualname__}.__init__"
        init.__annotations__ = written.__annotations__
        init.__doc__ = written.__doc__
        init.__written__ = written  # the one @dataclass wrote (tests/test_reprs.py holds the two to one effect)
        cls.__init__ = init  # type: ignore[misc]


def plain_methods(namespace: dict[str, Any]) -> None:
    """The plain reprs and inits of the frozen dataclasses defined in `namespace` (a module's globals)."""
    plain_reprs(namespace)
    plain_inits(namespace)
