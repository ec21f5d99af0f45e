"""The codec behind the parse cache: what it encodes comes back exactly; anything else is refused.

"Refused" always means a CodecError: never another exception, never an object of a class that is not
on the allow-list, never a field of the wrong type.
"""

from __future__ import annotations

import copy
import gc
import json
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rulesdsl.compile.cache import CACHED_CLASSES
from rulesdsl.compile.codec import Codec, CodecError
from rulesdsl.compile.pipeline import parser
from rulesdsl.diagnostics import Diagnostic
from rulesdsl.syntax.tree import Integer, Position, SourceFile

from .conftest import ROOT

CODEC = Codec(CACHED_CLASSES)
Parsed = tuple[SourceFile, tuple[Diagnostic, ...]]


def every_source() -> list[Path]:
    """The repository's rulesets, the test fixtures and the golden cases (whose diagnostics have hints)."""
    return sorted([*(ROOT / "rules").rglob("*.rules"), *(ROOT / "tests").rglob("*.rules")])


@pytest.fixture(scope="module")
def parses() -> list[Parsed]:
    parsed = []
    for path in every_source():
        tree, diagnostics = parser().parse_file(
            path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8", errors="replace")
        )
        parsed.append((tree, tuple(diagnostics)))
    assert any(diagnostics for _, diagnostics in parsed) and any(not d for _, d in parsed)
    return parsed


def small() -> Parsed:
    text = 'trait "Brave" { type: die  cost: 2 }\n'
    tree, diagnostics = parser().parse_file("a.rules", text)
    return tree, (*diagnostics, Diagnostic("warning", "W999", "note", None, "a hint", ("one", "two")))


def test_every_parse_in_the_repository_comes_back_exactly(parses: list[Parsed]) -> None:
    for value in parses:
        back = CODEC.loads(CODEC.dumps(value))
        assert back == value
        assert repr(back) == repr(value)  # the same types too: True is not 1, a tuple is not a list


def test_the_encoding_is_plain_json(parses: list[Parsed]) -> None:
    for value in parses[:5]:
        assert CODEC.decode(json.loads(json.dumps(CODEC.encode(value), allow_nan=False))) == value


def test_a_path_repeated_in_every_position_is_stored_once() -> None:
    data = CODEC.dumps(small())
    assert data.count(b'"a.rules"') == 1
    back: Parsed = CODEC.loads(data)
    assert back[0].blocks[0].pos.file is back[0].blocks[0].kind_pos.file  # one string, not one per node


def test_text_of_any_kind_comes_back() -> None:
    for text in ["", "é ü 漢字 🎲", "\ud800 lone surrogate", '"quotes" \\ \n \t \x00', "x" * 100_000]:
        value = Diagnostic("error", "E1", text, Position(text, 1, 2, 3, 4), text, (text,))
        assert CODEC.loads(CODEC.dumps(value)) == value


def tag_of(cls: type) -> int:
    """The tag the codec gives a class (the first item of its encoding)."""
    sample = {Position: Position("f", 1, 1, 1, 2), Integer: Integer(1, Position("f", 1, 1, 1, 2))}[cls]
    tree = CODEC.encode(sample)[2]
    assert isinstance(tree, list) and isinstance(tree[0], int)
    return tree[0]


def first(data: Any, tag: int) -> list[Any]:
    """The first encoded value with this tag, depth first (to damage it in place)."""
    if isinstance(data, list) and data and data[0] == tag:
        return data
    for item in data if isinstance(data, list) else []:
        try:
            return first(item, tag)
        except LookupError:
            pass
    raise LookupError(tag)


def damage_position(change: Any) -> Any:
    encoded = CODEC.encode(small())
    change(first(encoded[2], tag_of(Position)), encoded)
    return encoded


DAMAGE = {
    "made for other classes": lambda pos, data: data.__setitem__(0, "0123456789abcdef"),
    "strings that are not strings": lambda pos, data: data[1].__setitem__(0, 7),
    "strings that are not a list": lambda pos, data: data.__setitem__(1, {"a": "b"}),
    "a class that is not allowed": lambda pos, data: pos.__setitem__(0, 999),
    "a class not allowed here": lambda pos, data: pos.__setitem__(0, tag_of(Integer)),
    "a container where a class belongs": lambda pos, data: pos.__setitem__(0, 0),
    "a field too many": lambda pos, data: pos.append(1),
    "a field too few": lambda pos, data: pos.pop(),
    "no tag": lambda pos, data: pos.clear(),
    "a tag that is a list": lambda pos, data: pos.__setitem__(0, [4]),
    "a string index out of range": lambda pos, data: pos.__setitem__(1, 10_000),
    "a negative string index": lambda pos, data: pos.__setitem__(1, -1),
    "a string where its index belongs": lambda pos, data: pos.__setitem__(1, "a.rules"),
    "a bool where an int belongs": lambda pos, data: pos.__setitem__(2, True),
    "a float where an int belongs": lambda pos, data: pos.__setitem__(2, 1.0),
    "None where an int belongs": lambda pos, data: pos.__setitem__(2, None),
    "a dict where a value belongs": lambda pos, data: pos.__setitem__(2, {}),
    "a dict with a key but no value": lambda pos, data: data.__setitem__(2, [2, "k"]),
    "a frozenset of lists": lambda pos, data: data.__setitem__(2, [3, [1], [1]]),
    "something JSON cannot hold": lambda pos, data: pos.__setitem__(2, {1}),
    "nothing but the fingerprint": lambda pos, data: data.__delitem__(slice(1, None)),
}


@pytest.mark.parametrize("damage", DAMAGE, ids=list(DAMAGE))
def test_damaged_data_is_refused(damage: str) -> None:
    with pytest.raises(CodecError):
        CODEC.decode(damage_position(DAMAGE[damage]))


@pytest.mark.parametrize(
    "data",
    [b"", b"not json", b"\xff\xfe\x00", b"null", b'{"a": 1}', b"[" * 100_000 + b"]" * 100_000, b"9" * 5000],
    ids=["empty", "not json", "not utf-8", "null", "an object", "nested too deeply", "an int too long"],
)
def test_bytes_that_are_no_encoding_are_refused(data: bytes) -> None:
    with pytest.raises(CodecError):
        CODEC.loads(data)


def test_values_it_cannot_encode_are_refused() -> None:
    deep: tuple[Any, ...] = ()
    for _ in range(100_000):
        deep = (deep,)
    for value in [object(), {1, 2}, float("nan"), deep, Integer]:
        with pytest.raises(CodecError):
            CODEC.dumps(value)
    # Fractions are data (the IR's numbers): they round-trip exactly, and only in lowest terms
    assert CODEC.loads(CODEC.dumps(Fraction(-3, 6))) == Fraction(-1, 2)
    for bad in ([4, 2, 4], [4, 1, 0], [4, 1], [4, 1.5, 2]):
        with pytest.raises(CodecError):
            CODEC.decode([CODEC.fingerprint, [], bad])


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3)
        | st.tuples(st.integers(-1, len(CACHED_CLASSES) + 5), st.lists(inner, max_size=7)).map(lambda t: [t[0], *t[1]])
    ),
    max_leaves=30,
)


def refused_or_round_trips(data: Any) -> None:
    try:
        value = CODEC.decode(data)
    except CodecError:
        return
    assert CODEC.loads(CODEC.dumps(value)) == value


@settings(max_examples=300, deadline=None)
@given(JSON, st.lists(st.text(max_size=3), max_size=3))
def test_any_json_is_refused_or_a_value_that_round_trips(tree: Any, strings: list[str]) -> None:
    refused_or_round_trips([CODEC.fingerprint, strings, tree])


@settings(max_examples=300, deadline=None)
@given(st.data(), JSON)
def test_a_real_encoding_with_any_part_replaced_is_refused_or_round_trips(data: st.DataObject, part: Any) -> None:
    encoded = CODEC.encode(small())
    lists: list[list[Any]] = []
    stack: list[Any] = [encoded]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            lists.append(item)
            stack.extend(item)
    target = data.draw(st.sampled_from(lists))
    if target:
        target[data.draw(st.integers(0, len(target) - 1))] = part
    refused_or_round_trips(encoded)


# -- other classes: the allow-list is the codec's parameter


@dataclass(frozen=True, slots=True)
class Leaf:
    label: str
    weight: float
    tags: frozenset[str]
    note: str | None = None


@dataclass(frozen=True)
class Branch:  # not slotted, to show both ways of building an instance
    name: str
    children: tuple[Branch | Leaf, ...]
    counts: dict[str, int]
    sizes: list[int]
    anything: Any = None


@dataclass(frozen=True, slots=True)
class Checked:
    value: int

    def __post_init__(self) -> None:
        if self.value < 0:
            raise ValueError("negative")


def test_any_frozen_dataclasses_can_be_allowed() -> None:
    codec = Codec([Leaf, Branch])
    tree = Branch(
        "root",
        (Leaf("a", 1.5, frozenset({"x", "y"})), Branch("b", (), {"k": 1}, [1, 2], {"any": [(1, "x"), None]})),
        {},
        [],
        frozenset({(1, 2)}),
    )
    assert codec.loads(codec.dumps(tree)) == tree
    assert Leaf("b", 2, frozenset(), "n") == codec.loads(codec.dumps(Leaf("b", 2, frozenset(), "n")))
    with pytest.raises(CodecError):  # made for other classes
        CODEC.loads(codec.dumps(tree))


def test_a_class_that_refuses_its_fields_is_refused_data() -> None:
    codec = Codec([Checked])
    data = json.loads(codec.dumps(Checked(1)))
    data[2][1] = -1
    with pytest.raises(CodecError):
        codec.decode(data)


@dataclass
class Mutable:
    value: int


@dataclass(frozen=True)
class Unsupported:
    value: set[int]


@dataclass(frozen=True)
class NotInit:
    value: int = field(init=False, default=0)


@pytest.mark.parametrize("cls", [Mutable, Unsupported, NotInit, int])
def test_only_frozen_dataclasses_of_supported_fields_can_be_allowed(cls: type) -> None:
    with pytest.raises(TypeError):
        Codec([cls])


@pytest.mark.parametrize("collecting", [True, False])
def test_the_garbage_collector_is_left_as_it_was(collecting: bool) -> None:
    previously = gc.isenabled()
    (gc.enable if collecting else gc.disable)()
    try:
        CODEC.loads(CODEC.dumps(small()))
        with pytest.raises(CodecError):
            CODEC.loads(b"[")
        assert gc.isenabled() is collecting
    finally:
        (gc.enable if previously else gc.disable)()


def test_decoding_does_not_change_its_input() -> None:
    encoded = CODEC.encode(small())
    kept = copy.deepcopy(encoded)
    CODEC.decode(encoded)
    assert encoded == kept


def test_numbers_json_cannot_hold_are_refused() -> None:
    """Hypothesis found it: an infinity (which `json.loads` reads as `Infinity`) decoded, then could not be
    written back."""
    for value in (float("inf"), float("-inf")):
        with pytest.raises(CodecError):
            CODEC.decode([CODEC.fingerprint, [], value])
    with pytest.raises(CodecError):
        CODEC.loads(b'["' + CODEC.fingerprint.encode() + b'", [], Infinity]')
