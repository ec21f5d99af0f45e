"""Frozen records: the runtime's value classes and a generated package's (kinds, records, table rows).

Copied verbatim into every generated package as `_runtime/records.py`. A class declared `@record` is a
frozen, slotted dataclass to everything that asks: type checkers (PEP 681), `dataclasses.fields`,
`replace`, `asdict` and `is_dataclass`, `copy.replace`, `inspect.signature`, `match`, `copy` and
`pickle`; its `repr`, `==` and `hash` are `@dataclass(frozen=True)`'s. What it saves: `@dataclass`
imports `inspect` and compiles three or more methods for each class (`exec`), which was most of the cost
of importing a package (issue 20). Here one `__init__`, `__setattr__`, `__repr__`, `==` and `hash`
serve every record, reading the fields `@record` lists once per class; a class that builds many values
gets an `__init__` of its own then, compiled as `@dataclass` compiles it. `dataclasses` (or `inspect`) is
imported only when a tool asks for a class's dataclass fields (or its signature).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    TypeVar,
    cast,
    dataclass_transform,
    overload,
)

if TYPE_CHECKING:
    import dataclasses
    import inspect

_T = TypeVar("_T")
_C = TypeVar("_C", bound=type)


class _Missing:
    """No default (as `dataclasses.MISSING`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class _Factory:
    """A default made by a factory, as a signature shows it (as `dataclasses` does)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


class Field:
    """One field of a record: its name, its annotation as written, its default or default factory, and
    whether it shows in the `repr`, counts in `==` and in the `hash` (as `dataclasses.Field`)."""

    __slots__ = ("compare", "default", "default_factory", "hash", "name", "repr", "type")

    def __init__(self, default: object, default_factory: object, repr: bool, compare: bool, hash: bool | None) -> None:
        self.name = ""
        self.type: object = None
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.compare = compare
        self.hash = hash

    @property
    def has_factory(self) -> bool:
        return self.default_factory is not MISSING

    @property
    def required(self) -> bool:
        return self.default is MISSING and not self.has_factory


@overload
def field(*, default: _T, repr: bool = True, compare: bool = True, hash: bool | None = None) -> _T: ...


@overload
def field(
    *, default_factory: Callable[[], _T], repr: bool = True, compare: bool = True, hash: bool | None = None
) -> _T: ...


@overload
def field(*, repr: bool = True, compare: bool = True, hash: bool | None = None) -> Any: ...


def field(
    *,
    default: object = MISSING,
    default_factory: object = MISSING,
    repr: bool = True,
    compare: bool = True,
    hash: bool | None = None,
) -> Any:
    """A field's default and flags, as `dataclasses.field` takes them."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory, repr, compare, hash)


def _getter(names: list[str]) -> Callable[[object], tuple[object, ...]]:
    """The fields' values as one tuple (what `@dataclass` compares and hashes)."""
    if len(names) > 1:
        return operator.attrgetter(*names)  # a tuple with two names or more
    if names:
        one = operator.attrgetter(names[0])
        return lambda value: (one(value),)
    return lambda value: ()


class _Record:
    """What `@record` finds once for a class: its fields in order (a base's first), and what `__init__`,
    `__repr__`, `==`, `hash` and the dataclass description read of them."""

    __slots__ = (
        "_compared",
        "_dataclass",
        "_hashed",
        "_index",
        "defaults",
        "fields",
        "made",
        "names",
        "owner",
        "post_init",
    )

    def __init__(self, fields: tuple[Field, ...], post_init: bool) -> None:
        self.fields = fields
        self.names = tuple(f.name for f in fields)
        self.defaults = tuple(f.default for f in fields)  # MISSING: none, or made by its default_factory
        self.post_init = post_init
        self.made = 0  # values built by the shared __init__ (see Value.__init__)
        self.owner: type | None = None  # the class `@record` made with these fields
        # Made when first needed: most classes of a package are never compared, hashed or misused.
        self._compared: Callable[[object], tuple[object, ...]] | None = None
        self._hashed: Callable[[object], tuple[object, ...]] | None = None
        self._index: dict[str, Field] | None = None
        self._dataclass: type | None = None

    @property
    def shown(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if f.repr)

    @property
    def compared(self) -> Callable[[object], tuple[object, ...]]:
        if self._compared is None:
            self._compared = _getter([f.name for f in self.fields if f.compare])
        return self._compared

    @property
    def hashed(self) -> Callable[[object], tuple[object, ...]]:
        if self._hashed is None:
            self._hashed = _getter([f.name for f in self.fields if (f.compare if f.hash is None else f.hash)])
        return self._hashed

    @property
    def index(self) -> dict[str, Field]:
        if self._index is None:
            self._index = dict(zip(self.names, self.fields, strict=True))
        return self._index

    def dataclass(self, cls: type) -> type:
        """A dataclass with these very fields and flags, made on first use, whose `__dataclass_fields__` and
        `__dataclass_params__` describe the record (so `dataclasses` is imported only when asked)."""
        if self._dataclass is None:
            import dataclasses

            def described(f: Field) -> Any:
                return cast(Any, dataclasses.field)(
                    default=dataclasses.MISSING if f.default is MISSING else f.default,
                    default_factory=dataclasses.MISSING if f.default_factory is MISSING else f.default_factory,
                    repr=f.repr,
                    compare=f.compare,
                    hash=f.hash,
                )

            specs = [(f.name, f.type, described(f)) for f in self.fields]
            self._dataclass = dataclasses.make_dataclass(
                cls.__name__, specs, frozen=True, slots=True, repr=False, eq=False
            )
        return self._dataclass


_NOT_A_RECORD = _Record((), post_init=False)


class _Described:
    """`__dataclass_fields__` and `__dataclass_params__` of a record class, read from a dataclass made with
    the same fields the first time they are asked for; a class that is no record has neither."""

    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    def __get__(self, instance: object, owner: type) -> Any:
        found: _Record = owner.__record__  # type: ignore[attr-defined]
        if found is _NOT_A_RECORD:
            raise AttributeError(self.attribute)
        return getattr(found.dataclass(owner), self.attribute)


class _Signature:
    """A record class's `__signature__` (what `inspect.signature` and `help` show): its fields, in order."""

    def __get__(self, instance: object, owner: type) -> inspect.Signature:
        found: _Record = owner.__record__  # type: ignore[attr-defined]
        if instance is not None or found is _NOT_A_RECORD:
            raise AttributeError("__signature__")
        import inspect

        return inspect.Signature(
            [
                inspect.Parameter(
                    f.name,
                    inspect.Parameter.POSITIONAL_OR_KEYWORD,
                    default=inspect.Parameter.empty if f.required else _FACTORY if f.has_factory else f.default,
                    annotation=f.type,
                )
                for f in found.fields
            ],
            return_annotation=None,
        )


def _frozen(action: str, name: str) -> AttributeError:
    import dataclasses

    return dataclasses.FrozenInstanceError(f"cannot {action} field {name!r}")


class Value:
    """The base of every record: one `__init__`, `repr`, `==`, `hash`, frozen `__setattr__` and pickling
    for all, each as `@dataclass(frozen=True, slots=True)` writes it for a class (same text, same
    results), reading the fields `@record` listed for the record's class."""

    __slots__ = ()
    __record__: _Record = _NOT_A_RECORD
    __dataclass_fields__: dict[str, dataclasses.Field[Any]] = _Described("__dataclass_fields__")  # type: ignore[assignment]
    __dataclass_params__: Any = _Described("__dataclass_params__")
    __signature__: inspect.Signature = _Signature()  # type: ignore[assignment]

    def __init__(self, /, *args: object, **kwargs: object) -> None:  # a field may be named `self`
        """Every record's `__init__` until its class has built `_SPECIALISE_AFTER` values: then the class gets
        one of its own, compiled as `@dataclass` compiles it (fast for the many values a kind has, and paid
        for only by the classes that build many)."""
        found = self.__record__
        found.made += 1
        if found.made == _SPECIALISE_AFTER and found.owner is not None:
            found.owner.__init__ = _specialised(found)  # type: ignore[misc]
        put = object.__setattr__
        if not kwargs and len(args) == len(found.names):  # every field given in order
            for name, value in zip(found.names, args, strict=True):
                put(self, name, value)
        else:
            self._fill(found, args, kwargs)
        if found.post_init:
            self.__post_init__()  # type: ignore[attr-defined]

    def _fill(self, found: _Record, args: tuple[object, ...], kwargs: dict[str, object]) -> None:
        """Set the fields from arguments as `@dataclass`'s `__init__` takes them: in order, then by name,
        then the defaults; a TypeError for a missing, repeated, unknown or extra one."""
        names = found.names
        if len(args) > len(names):
            raise TypeError(
                f"{type(self).__qualname__}() takes {len(names)} positional arguments but {len(args)} were given"
            )
        put = object.__setattr__
        for name, value in zip(names, args, strict=False):  # fewer arguments than fields: the rest below
            put(self, name, value)
        start = len(args)
        for name, default in zip(names[start:], found.defaults[start:], strict=True):
            value = kwargs.pop(name, default) if kwargs else default
            if value is MISSING:
                declared = found.index[name]
                if not declared.has_factory:
                    raise TypeError(f"{type(self).__qualname__}() missing 1 required argument: '{name}'")
                value = declared.default_factory()  # type: ignore[operator]
            put(self, name, value)
        if kwargs:
            name = next(iter(kwargs))
            if name in found.index:
                raise TypeError(f"{type(self).__qualname__}() got multiple values for argument '{name}'")
            raise TypeError(f"{type(self).__qualname__}() got an unexpected keyword argument '{name}'")

    def __setattr__(self, name: str, value: object) -> None:
        raise _frozen("assign to", name)

    def __delattr__(self, name: str) -> None:
        raise _frozen("delete", name)

    def __repr__(self) -> str:
        shown = self.__record__.shown
        return f"{type(self).__qualname__}({', '.join(f'{name}={getattr(self, name)!r}' for name in shown)})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            compared = self.__record__.compared
            return compared(self) == compared(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.__record__.hashed(self))

    def __getstate__(self) -> list[object]:
        return [getattr(self, f.name) for f in self.__record__.fields]

    def __setstate__(self, state: list[object]) -> None:
        for f, value in zip(self.__record__.fields, state, strict=True):
            object.__setattr__(self, f.name, value)

    def __replace__(self, /, **changes: object) -> Any:
        """`copy.replace(value, field=...)` (Python 3.13), as `dataclasses.replace`."""
        for f in self.__record__.fields:
            changes.setdefault(f.name, getattr(self, f.name))
        return type(self)(**changes)


def field_names(value: object) -> tuple[str, ...]:
    """The fields of a record (or of its class), in order."""
    cls = value if isinstance(value, type) else type(value)
    found: _Record = getattr(cls, "__record__", _NOT_A_RECORD)
    return tuple(f.name for f in found.fields)


_SHARED_INIT = Value.__init__
# A class that builds this many values gets an `__init__` of its own (a kind's entities, a table's keys): about
# what compiling it costs (40-150 µs) in building values with the shared one.
_SPECIALISE_AFTER = 64


def _specialised(found: _Record) -> Callable[..., None]:
    """An `__init__` for exactly these fields, compiled from its text as `@dataclass` writes it: their
    names are identifiers (annotated in a class body) and everything else it reads is bound by name."""
    scope: dict[str, object] = {"__record_set__": object.__setattr__, "__record_missing__": MISSING}
    parameters, lines = [], []
    for n, f in enumerate(found.fields):
        if f.default is not MISSING:
            scope[f"__record_default_{n}__"] = f.default
            parameters.append(f"{f.name}=__record_default_{n}__")
        elif f.has_factory:
            scope[f"__record_factory_{n}__"] = f.default_factory
            parameters.append(f"{f.name}=__record_missing__")
            lines.append(f"if {f.name} is __record_missing__: {f.name} = __record_factory_{n}__()")
        else:
            parameters.append(f.name)
    lines += [f"__record_set__(__record_self__, {f.name!r}, {f.name})" for f in found.fields]
    if found.post_init:
        lines.append("__record_self__.__post_init__()")
    text = f"def __init__(__record_self__, {', '.join(parameters)}):\n " + "\n ".join(lines or ["pass"])
    exec(text, scope)  # noqa: S102  (the names and defaults are the class's own, see above)
    made = scope["__init__"]
    assert callable(made)
    return cast("Callable[..., None]", made)  # what exec made is only `object` to a type checker


_CLASS_VAR = ("ClassVar[", "typing.ClassVar[")


def _is_class_var(annotation: object) -> bool:
    """Whether a field's annotation, as written (a string) or evaluated, is a `ClassVar` (not a field)."""
    if type(annotation) is str:
        return annotation.startswith(_CLASS_VAR) or annotation == "ClassVar"
    return annotation is ClassVar or getattr(annotation, "__origin__", None) is ClassVar


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: _C) -> _C:
    """Make `cls` (a subclass of Value, its fields annotated in its body) a frozen, slotted record."""
    fields: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for f in base.__dict__.get("__record__", _NOT_A_RECORD).fields:
            fields[f.name] = f
    namespace = dict(cls.__dict__)
    own: list[str] = []
    for name, annotation in namespace.get("__annotations__", {}).items():
        if _is_class_var(annotation):
            continue
        given = namespace.pop(name, MISSING)
        declared = given if isinstance(given, Field) else Field(given, MISSING, True, True, None)
        declared.name, declared.type = name, annotation
        if name not in fields:
            own.append(name)
        fields[name] = declared
    defaulted = ""
    for f in fields.values():
        if not f.required:
            defaulted = f.name
        elif defaulted:
            raise TypeError(f"non-default argument {f.name!r} follows default argument {defaulted!r}")
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    namespace["__slots__"] = tuple(own)
    found = namespace["__record__"] = _Record(tuple(fields.values()), post_init=hasattr(cls, "__post_init__"))
    namespace.setdefault("__match_args__", tuple(fields))
    made: type = type(cls)(cls.__name__, cls.__bases__, namespace)
    made.__qualname__ = cls.__qualname__
    if "__init__" not in namespace:  # the shared one until it has built enough values (Value.__init__)
        made.__init__ = _SHARED_INIT  # type: ignore[misc]
        found.owner = made
    return cast("_C", made)  # made by `type(cls)(...)`: the type checkers cannot tell it is `cls`'s class
