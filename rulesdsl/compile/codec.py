"""A codec for trees of frozen dataclasses: to JSON-compatible data and back, without pickle's risks.

Decoding cannot run code or make arbitrary objects. It only makes instances of the classes on the
allow-list given to `Codec`, only with field values of the types those classes declare (checked against
their annotations), and only scalars, tuples, lists, dicts and frozensets otherwise. Any other input
raises `CodecError`, and nothing else is raised (not even for data nested too deeply).

The encoding is positional and compact: `[fingerprint, strings, tree]`. The fingerprint names the
allow-list (classes, fields and their types), so data made for other classes is refused. `strings` is
every distinct text found in `str` (or `str | None`) fields, which the tree gives by index: a source
path repeated in every position is stored once and decodes to one shared string. In the tree an
instance of an allowed class is `[tag, field, ...]` (its tag is its place in the allow-list plus 5), a
tuple `[0, item, ...]`, a list `[1, ...]`, a dict `[2, key, value, ...]` (keys may be tuples), a frozenset
`[3, ...]`, a Fraction `[4, numerator, denominator]`; other scalars stand for themselves. A `Mapping` field
is made again as a dict; a union with containers or numbers among its options takes any value the codec
makes (the IR's `Value`), which is still only allowed classes and plain data.

Each class gets its encoder and decoder generated as Python source, as `dataclasses` does for
`__init__`, with the type checks inline: the warm parse cache decodes about a million nodes for a
10,000-entity ruleset, and one function call per field would double that time. The generated text is
made only from the classes' field names and counts, never from data.
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import json
import math
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

Encoder = Callable[[Any, dict[str, int]], Any]  # (value, strings seen so far -> index) -> data
Decoder = Callable[[Any, list[str]], Any]  # (data, the strings) -> value

_TUPLE, _LIST, _DICT, _FROZENSET, _FRACTION = 0, 1, 2, 3, 4
_FIRST_CLASS = 5
_SCALARS = (type(None), bool, int, float, str)
_SEQUENCE_TAGS: dict[type, int] = {tuple: _TUPLE, list: _LIST, frozenset: _FROZENSET}


class CodecError(ValueError):
    """The data is not an encoding of values of the allowed classes, or a value cannot be encoded."""


class Codec:
    """Encodes and decodes values made of the given frozen dataclasses, scalars and containers.

    Fields may be declared as None, bool, int, float, str, Fraction, an allowed class, a union of these,
    `tuple[X, ...]`, `list[X]`, `frozenset[X]`, `dict[K, V]`, `Mapping[K, V]` or `Any` (any value the codec
    can encode).
    """

    def __init__(self, classes: Iterable[type]) -> None:
        self.classes = tuple(classes)
        self._tags = {cls: _FIRST_CLASS + i for i, cls in enumerate(self.classes)}
        # Filled in as the classes' coders are made, and looked up late, so that classes may name each other.
        self._encoders: dict[type, Encoder] = {}
        self._decoders: dict[int, Decoder] = {}
        self._dispatch: list[tuple[dict[int, Decoder], set[int]]] = []  # filled once all decoders exist
        described = []
        for cls in self.classes:
            hints = typing.get_type_hints(cls)
            fields = [(f.name, hints[f.name]) for f in _fields(cls)]
            described.append((cls.__module__, cls.__qualname__, fields))
            encoder, decoder = self._class_coders(cls, fields)
            self._encoders[cls] = encoder
            self._decoders[self._tags[cls]] = decoder
        for by_tag, tags in self._dispatch:
            by_tag.update({tag: self._decoders[tag] for tag in tags})
        self.fingerprint = hashlib.sha256(repr(described).encode()).hexdigest()[:16]

    # -- the public side
    def encode(self, value: object) -> list[Any]:
        strings: dict[str, int] = {}
        try:
            tree = self._encode_any(value, strings)
        except RecursionError as exc:
            raise CodecError("nested too deeply to encode") from exc
        except KeyError as exc:  # the encoders by class, asked for a value of another class
            raise CodecError(f"cannot encode a {exc.args[0]}") from exc
        except TypeError as exc:  # a str field holding something unhashable
            raise CodecError(f"cannot encode: {exc}") from exc
        if not all(type(s) is str for s in strings):  # a str field holding something else: no use storing
            raise CodecError("a str field holds something that is not a string")
        return [self.fingerprint, list(strings), tree]

    def decode(self, data: Any) -> Any:
        """The value `data` encodes; CodecError if it is anything but an encoding made by this codec."""
        if type(data) is not list or len(data) != 3 or data[0] != self.fingerprint:
            raise CodecError("not data encoded for these classes")
        strings = data[1]
        if type(strings) is not list or not all(type(s) is str for s in strings):
            raise CodecError("the strings are not a list of strings")
        try:
            return self._decode_any(data[2], strings)
        except RecursionError as exc:
            raise CodecError("nested too deeply to decode") from exc

    def dumps(self, value: object) -> bytes:
        with _no_collection():
            data = self.encode(value)
            try:
                return json.dumps(data, separators=(",", ":"), allow_nan=False).encode()
            except (ValueError, RecursionError) as exc:  # NaN or infinity, an int too long to write
                raise CodecError(f"cannot encode: {exc}") from exc

    def loads(self, data: bytes) -> Any:
        with _no_collection():
            try:
                parsed = json.loads(data, parse_constant=_no_constant)
            except (ValueError, RecursionError) as exc:  # not JSON or not UTF-8, an int too long, deep nesting
                raise CodecError(f"not JSON: {exc}") from exc
            return self.decode(parsed)

    # -- values of any type: scalars as they are, instances and containers by their tag
    def _encode_any(self, value: Any, strings: dict[str, int]) -> Any:
        kind = type(value)
        encoder = self._encoders.get(kind)
        if encoder is not None:
            return encoder(value, strings)
        if kind in _SCALARS:
            return value
        tag = _SEQUENCE_TAGS.get(kind)
        if tag is not None:
            return [tag, *[self._encode_any(item, strings) for item in value]]
        if kind is Fraction:
            return [_FRACTION, value.numerator, value.denominator]
        if kind is dict:
            return [_DICT, *[self._encode_any(part, strings) for item in value.items() for part in item]]
        raise CodecError(f"cannot encode a {kind.__qualname__}")

    def _decode_any(self, data: Any, strings: list[str]) -> Any:
        if type(data) is not list:
            if type(data) is float and not math.isfinite(data):
                raise CodecError("not a finite number")  # JSON has none: such data was not written by us
            if type(data) in _SCALARS:
                return data
            raise CodecError(f"unexpected {type(data).__name__}")
        tag = _tag(data)
        decoder = self._decoders.get(tag)
        if decoder is not None:
            return decoder(data, strings)
        if tag == _FRACTION:
            return _fraction(data)
        make = _MAKERS.get(tag)
        if make is None:
            raise CodecError(f"unknown tag {tag}")
        return make([self._decode_any(item, strings) for item in data[1:]])

    # -- values of a declared type
    def _coders(self, hint: Any) -> tuple[Encoder, Decoder]:
        """The encoder and decoder for values declared as `hint` (a TypeError for a type not supported)."""
        if hint is Any or hint is object:
            return self._encode_any, self._decode_any
        if hint is str:
            return _encode_str, _decode_str
        if hint is float:
            return _same, _decode_number
        if hint is None or hint in _SCALARS:
            return _same, _exactly(type(None) if hint is None else hint)
        if hint is Fraction:
            return self._encode_any, _decode_fraction
        if hint in self._tags:
            return self._encode_instance, self._instance_decoder({self._tags[hint]})
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if origin is typing.Union or origin is types.UnionType:
            return self._union_coders(args)
        if origin in _SEQUENCE_TAGS and (origin is not tuple or (len(args) == 2 and args[1] is Ellipsis)):
            tag = _SEQUENCE_TAGS[origin]
            return _sequence_coders(tag, self._coders(args[0]), _MAKERS[tag])
        if origin is dict or origin is Mapping:  # a Mapping is encoded, and made again, as a dict
            return _dict_coders(self._coders(args[0]), self._coders(args[1]))
        raise TypeError(f"the codec cannot handle fields of type {hint}")

    def _encode_instance(self, value: Any, strings: dict[str, int]) -> Any:
        encoder = self._encoders.get(type(value))
        if encoder is None:
            raise CodecError(f"cannot encode a {type(value).__qualname__}")
        return encoder(value, strings)

    def _by_tag(self, tags: set[int]) -> dict[int, Decoder]:
        """The decoders of these classes by tag (filled in once all exist): the ones allowed somewhere."""
        by_tag: dict[int, Decoder] = {}
        self._dispatch.append((by_tag, tags))
        return by_tag

    def _instance_decoder(self, tags: set[int]) -> Decoder:
        by_tag = self._by_tag(tags)

        def decode(data: Any, strings: list[str]) -> Any:
            try:
                decoder = by_tag[data[0]]
            except (TypeError, IndexError, KeyError):  # not a list, empty, or no class allowed here
                raise CodecError(f"expected an instance tagged {sorted(tags)}") from None
            return decoder(data, strings)

        return decode

    def _instances(self, hint: Any) -> tuple[set[int], bool] | None:
        """For an allowed class or a union of them (perhaps with None): their tags, and whether None fits."""
        options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
        classes = [o for o in options if o is not type(None)]
        if not classes or not all(o in self._tags for o in classes):
            return None
        return {self._tags[o] for o in classes}, len(classes) < len(options)

    def _union_coders(self, options: tuple[Any, ...]) -> tuple[Encoder, Decoder]:
        if set(options) == {str, type(None)}:  # an optional text: by index, like every str
            return _optional(_encode_str), _optional(_decode_str)
        scalars = tuple(o for o in options if o in _SCALARS)
        classes = {self._tags[o] for o in options if o in self._tags}
        if len(scalars) + len(classes) != len(options):
            # Containers or numbers among the options (the IR's `Value`: `int | Fraction | tuple[Value, ...]
            # | ...`): any value the codec makes may come back here. Still only allowed classes and plain data.
            return self._encode_any, self._decode_any
        # Several kinds of scalar (`str | int`) cannot share the string table: their strings are inline.
        instance = self._instance_decoder(classes)
        allowed = (*scalars, int) if float in scalars else scalars

        def decode(data: Any, strings: list[str]) -> Any:
            if type(data) in allowed and (type(data) is not float or math.isfinite(data)):
                return data
            return instance(data, strings)

        return self._encode_any, decode

    def _class_coders(self, cls: type, fields: list[tuple[str, Any]]) -> tuple[Encoder, Decoder]:
        """Generated source for one class: `[tag, field, ...]` out, checked fields in, one call per node."""
        tag = self._tags[cls]
        names = [f"a{i}" for i in range(len(fields))]
        namespace: dict[str, Any] = {
            "CodecError": CodecError,
            "cls": cls,
            "new": object.__new__,
            "encoders": self._encoders,
        }
        encoded, raw_checks, decoding = [], [], []
        for i, (field, hint) in enumerate(fields):
            local = names[i]
            if hint is str:  # the commonest field: its index into the strings, checked and looked up inline
                raw_checks.append(f"type({local}) is not int or {local} < 0")
                encoded.append(f"strings.setdefault(value.{field}, len(strings))")
                decoding.append(f"{local} = table[{local}]")
            elif hint in (int, bool, type(None)):  # as it is, its type checked inline
                namespace[f"type{i}"] = hint
                raw_checks.append(f"type({local}) is not type{i}")
                encoded.append(f"value.{field}")
            elif (instances := self._instances(hint)) is not None:  # the next commonest: one call per node
                tags, optional = instances
                namespace[f"by_tag{i}"] = self._by_tag(tags)
                encode = f"encoders[type(value.{field})](value.{field}, strings)"
                decode = f"by_tag{i}[{local}[0]]({local}, table)"
                if optional:
                    encode = f"None if value.{field} is None else {encode}"
                    decode = f"None if {local} is None else {decode}"
                encoded.append(encode)
                decoding.append(f"{local} = {decode}")
            elif (items := self._instances(_tuple_item(hint))) is not None and not items[1]:
                namespace[f"by_tag{i}"] = self._by_tag(items[0])
                raw_checks.append(f"type({local}) is not list or {local}[:1] != [{_TUPLE}]")
                encoded.append(f"[{_TUPLE}, *[encoders[type(item)](item, strings) for item in value.{field}]]")
                decoding.append(f"{local} = tuple([by_tag{i}[item[0]](item, table) for item in {local}[1:]])")
            else:
                namespace[f"encode{i}"], namespace[f"decode{i}"] = self._coders(hint)
                encoded.append(f"encode{i}(value.{field}, strings)")
                decoding.append(f"{local} = decode{i}({local}, table)")
        if "__post_init__" in vars(cls) or "__slots__" not in vars(cls):
            # A class that checks its own fields may refuse them in any way: that too is data it cannot decode.
            make = [
                "try:",
                f"    return cls({', '.join(names)})",
                "except Exception as exc:",
                f"    raise CodecError({f'{cls.__qualname__} refused its fields'!r}) from exc",
            ]
        else:  # what the frozen dataclass __init__ does, minus a lookup and a call per field: ~2x faster
            namespace.update({f"set{i}": vars(cls)[field].__set__ for i, (field, _) in enumerate(fields)})
            make = ["made = new(cls)", *[f"set{i}(made, {local})" for i, local in enumerate(names)], "return made"]
        source = "\n".join(
            [
                "def encode(value, strings):",
                f"    return [{', '.join([str(tag), *encoded])}]",
                "def decode(data, table):",
                f"    if type(data) is not list or len(data) != {len(fields) + 1} or data[0] != {tag}:",
                f"        raise CodecError({f'expected {cls.__qualname__} with {len(fields)} fields'!r})",
                f"    {', '.join(['_', *names])}, = data",
                f"    if {' or '.join(raw_checks) or 'False'}:",
                f"        raise CodecError({f'a field of {cls.__qualname__} has the wrong type'!r})",
                "    try:",
                *[f"        {line}" for line in decoding or ["pass"]],
                "    except (IndexError, KeyError, TypeError):  # a string or class index that is not one",
                f"        raise CodecError({f'a field of {cls.__qualname__} is not what it should be'!r}) from None",
                *[f"    {line}" for line in make],
            ]
        )
        exec(compile(source, f"<codec for {cls.__qualname__}>", "exec"), namespace)  # noqa: S102  (our own text)
        return namespace["encode"], namespace["decode"]


@contextmanager
def _no_collection() -> Iterator[None]:
    """Pause the cyclic garbage collector: encoding and decoding make many containers but no cycles, and
    with a large tree already in memory each collection walks all of it (70% of decoding time at 10k)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _no_constant(name: str) -> Any:
    """NaN and infinities are not JSON, and `dumps` refuses them: `loads` must too (or a round trip fails)."""
    raise ValueError(f"{name} is not a JSON number")


def _fields(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    params = getattr(cls, "__dataclass_params__", None)
    if not dataclasses.is_dataclass(cls) or params is None or not params.frozen:
        raise TypeError(f"{cls.__qualname__} is not a frozen dataclass")
    fields = dataclasses.fields(cls)
    if not all(f.init for f in fields):
        raise TypeError(f"{cls.__qualname__} has fields its constructor does not take")
    return fields


def _tuple_item(hint: Any) -> Any:
    """X for `tuple[X, ...]`, else None."""
    args = typing.get_args(hint)
    return args[0] if typing.get_origin(hint) is tuple and len(args) == 2 and args[1] is Ellipsis else None


def _tag(data: list[Any]) -> int:
    tag = data[0] if data else None
    if type(tag) is not int:
        raise CodecError("a list without its tag")
    return tag


def _same(value: Any, strings: dict[str, int]) -> Any:
    return value


def _encode_str(value: Any, strings: dict[str, int]) -> Any:
    return strings.setdefault(value, len(strings))


def _decode_str(data: Any, strings: list[str]) -> Any:
    if type(data) is not int or not 0 <= data < len(strings):
        raise CodecError("expected the index of a string")
    return strings[data]


def _decode_number(data: Any, strings: list[str]) -> Any:
    if type(data) is not float and type(data) is not int:
        raise CodecError(f"expected a number, not {type(data).__name__}")
    if not math.isfinite(data):
        raise CodecError("not a finite number")
    return data


def _exactly(kind: type) -> Decoder:
    def decode(data: Any, strings: list[str]) -> Any:
        if type(data) is not kind:
            raise CodecError(f"expected {kind.__name__}, not {type(data).__name__}")
        return data

    return decode


def _optional(coder: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def code(value: Any, strings: Any) -> Any:
        return None if value is None else coder(value, strings)

    return code


def _sequence_coders(
    tag: int, item: tuple[Encoder, Decoder], make: Callable[[list[Any]], Any]
) -> tuple[Encoder, Decoder]:
    encode_item, decode_item = item

    def encode(value: Any, strings: dict[str, int]) -> Any:
        return [tag, *[encode_item(each, strings) for each in value]]

    def decode(data: Any, strings: list[str]) -> Any:
        if type(data) is not list or _tag(data) != tag:
            raise CodecError(f"expected a container tagged {tag}")
        return make([decode_item(each, strings) for each in data[1:]])

    return encode, decode


def _dict_coders(key: tuple[Encoder, Decoder], value: tuple[Encoder, Decoder]) -> tuple[Encoder, Decoder]:
    (encode_key, decode_key), (encode_value, decode_value) = key, value

    def encode(mapping: Any, strings: dict[str, int]) -> Any:
        parts = [(encode_key(k, strings), encode_value(v, strings)) for k, v in mapping.items()]
        return [_DICT, *[part for pair in parts for part in pair]]

    def decode(data: Any, strings: list[str]) -> Any:
        if type(data) is not list or _tag(data) != _DICT or len(data) % 2 != 1:
            raise CodecError("expected a dict")
        keys = [decode_key(k, strings) for k in data[1::2]]
        return _dict([part for k, v in zip(keys, data[2::2], strict=True) for part in (k, decode_value(v, strings))])

    return encode, decode


def _fraction(data: list[Any]) -> Fraction:
    """`[4, numerator, denominator]`, in lowest terms as `encode` writes it."""
    if len(data) != 3 or type(data[1]) is not int or type(data[2]) is not int or data[2] <= 0:
        raise CodecError("expected a fraction: [4, numerator, denominator]")
    value = Fraction(data[1], data[2])
    if value.denominator != data[2]:
        raise CodecError("a fraction not in lowest terms")
    return value


def _decode_fraction(data: Any, strings: list[str]) -> Any:
    if type(data) is not list or _tag(data) != _FRACTION:
        raise CodecError("expected a fraction")
    return _fraction(data)


def _frozenset(items: list[Any]) -> frozenset[Any]:
    try:
        return frozenset(items)
    except TypeError as exc:  # an unhashable item, e.g. a list
        raise CodecError(f"cannot make a frozenset: {exc}") from exc


def _dict(parts: list[Any]) -> dict[Any, Any]:
    if len(parts) % 2:
        raise CodecError("a dict key without its value")
    try:
        return dict(zip(parts[::2], parts[1::2], strict=True))
    except TypeError as exc:  # an unhashable key
        raise CodecError(f"cannot make a dict: {exc}") from exc


_MAKERS: dict[int, Callable[[list[Any]], Any]] = {_TUPLE: tuple, _LIST: list, _FROZENSET: _frozenset, _DICT: _dict}
