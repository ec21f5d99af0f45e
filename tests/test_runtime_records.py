"""`@record` (rulesdsl/runtime/records.py): a record is the frozen, slotted dataclass it replaces to every
tool that asks, and importing a generated package imports neither `dataclasses` nor `inspect`."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import sys
from typing import ClassVar

import pytest

from rulesdsl.runtime.records import Value, field, field_names, record
from tests.conftest import GENERATED, run_python


@record
class Sample(Value):
    """A record with every kind of field the runtime and the packages declare."""

    count: int
    name: str = "x"
    tags: tuple[str, ...] = field(default_factory=tuple)
    hidden: object = field(default=None, repr=False, compare=False)
    shared: ClassVar[str] = "not a field"


@dataclasses.dataclass(frozen=True, slots=True)
class Reference:
    """What `@dataclass` makes of the same declaration."""

    count: int
    name: str = "x"
    tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)
    hidden: object = dataclasses.field(default=None, repr=False, compare=False)
    shared: ClassVar[str] = "not a field"


@record
class Checked(Value):
    sides: int

    def __post_init__(self) -> None:
        if self.sides < 1:
            raise ValueError("no die has no side")


@record
class Longer(Sample):
    extra: bool = False


@record
class Selfish(Value):
    """Fields named like the parameters of `__init__` and `__replace__` as written."""

    self: int
    args: int = 0
    kwargs: int = 0
    changes: int = 0


def _twins(*args: object, **kwargs: object) -> tuple[Sample, Reference]:
    return Sample(*args, **kwargs), Reference(*args, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((1,), {}), ((2, "y"), {}), ((3,), {"tags": ("a",), "hidden": [1]}), ((), {"count": 4, "name": "z"})],
)
def test_a_record_is_built_shown_compared_and_hashed_as_its_dataclass(
    args: tuple[object, ...], kwargs: dict[str, object]
) -> None:
    made, reference = _twins(*args, **kwargs)
    assert repr(made) == repr(reference).replace("Reference(", "Sample(")
    assert dataclasses.astuple(made) == dataclasses.astuple(reference)
    assert dataclasses.asdict(made) == dataclasses.asdict(reference)
    if not isinstance(made.hidden, list):
        assert hash(made) == hash(reference)
    assert made == Sample(*args, **kwargs) and made != reference  # type: ignore[arg-type]
    assert made == dataclasses.replace(made, hidden="not compared")


def test_a_record_describes_itself_as_its_dataclass() -> None:
    assert dataclasses.is_dataclass(Sample) and dataclasses.is_dataclass(Sample(1))
    assert not dataclasses.is_dataclass(Value) and not hasattr(Value, "__dataclass_fields__")
    ours, theirs = dataclasses.fields(Sample), dataclasses.fields(Reference)
    described = ("name", "type", "default", "repr", "compare", "hash", "init", "kw_only")
    assert [[getattr(f, a) for a in described] for f in ours] == [[getattr(f, a) for a in described] for f in theirs]
    assert [f.default_factory for f in ours] == [f.default_factory for f in theirs]
    assert Sample.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert field_names(Sample) == field_names(Sample(1)) == ("count", "name", "tags", "hidden")
    assert str(inspect.signature(Sample)) == str(inspect.signature(Reference))
    assert Sample.__match_args__ == Reference.__match_args__
    match Sample(5, "five"):
        case Sample(count, name):
            assert (count, name) == (5, "five")
        case _:
            pytest.fail("no match")


def test_a_record_is_frozen_and_slotted() -> None:
    made, reference = _twins(1)
    for target in (made, reference):
        with pytest.raises(dataclasses.FrozenInstanceError) as assigning:
            target.count = 2  # type: ignore[misc]
        with pytest.raises(dataclasses.FrozenInstanceError) as deleting:
            del target.name  # type: ignore[misc]
        assert (str(assigning.value), str(deleting.value)) == (
            "cannot assign to field 'count'",
            "cannot delete field 'name'",
        )
        assert not hasattr(target, "__dict__")


def test_a_record_is_copied_pickled_and_replaced() -> None:
    made = Sample(1, "a", ("t",), hidden=[1, 2])
    for twin in (copy.copy(made), copy.deepcopy(made), pickle.loads(pickle.dumps(made))):
        assert type(twin) is Sample and twin == made and twin.hidden == [1, 2]
    assert dataclasses.replace(made, name="b") == Sample(1, "b", ("t",))
    if sys.version_info >= (3, 13):
        assert copy.replace(made, count=2) == Sample(2, "a", ("t",))  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((), {}), ((1, "a", (), None, "too many"), {}), ((1,), {"count": 2}), ((1,), {"colour": "red"})],
    ids=["missing", "too many", "twice", "unknown"],
)
def test_wrong_arguments_are_refused_as_by_a_dataclass(args: tuple[object, ...], kwargs: dict[str, object]) -> None:
    for cls in (Sample, Reference):
        with pytest.raises(TypeError):
            cls(*args, **kwargs)


def test_defaults_factories_post_init_and_subclasses() -> None:
    first, second = Sample(1), Sample(1)
    assert first.tags == () and first.tags is second.tags  # the factory's empty tuple
    assert Longer(1, extra=True).extra and field_names(Longer) == ("count", "name", "tags", "hidden", "extra")
    assert Longer(1) != Sample(1)  # another class
    with pytest.raises(ValueError, match="no side"):
        Checked(0)
    assert Checked(6).sides == 6


def test_fields_may_be_named_like_the_methods_parameters() -> None:
    made = Selfish(self=1, args=2, kwargs=3, changes=4)
    assert (made.self, made.args, made.kwargs, made.changes) == (1, 2, 3, 4)
    assert dataclasses.replace(made, self=5).self == 5 and made.__replace__(changes=6, self=7).changes == 6
    assert repr(made) == "Selfish(self=1, args=2, kwargs=3, changes=4)"


@pytest.mark.parametrize("cls", [Sample, Longer, Checked, Selfish])
def test_a_class_that_builds_many_values_gets_its_own_init_and_builds_them_the_same(cls: type[Value]) -> None:
    arguments: list[tuple[tuple[object, ...], dict[str, object]]] = {
        Sample: [((1,), {}), ((2, "y"), {"tags": ("t",)}), ((), {"count": 3, "hidden": 4})],
        Longer: [((1,), {"extra": True}), ((2, "n", ()), {})],
        Checked: [((6,), {}), ((), {"sides": 8})],
        Selfish: [((), {"self": 1, "changes": 2}), ((3, 4), {})],
    }[cls]
    shared = []
    for args, kwargs in arguments:  # built by the __init__ every record shares, whatever ran before
        value = cls.__new__(cls)
        Value.__dict__["__init__"](value, *args, **kwargs)
        shared.append(value)
    for _ in range(70):  # past the count that gives the class an __init__ of its own
        cls(*arguments[0][0], **arguments[0][1])
    assert cls.__dict__["__init__"] is not Value.__dict__["__init__"]
    assert [cls(*args, **kwargs) for args, kwargs in arguments] == shared
    assert [repr(cls(*args, **kwargs)) for args, kwargs in arguments] == [repr(v) for v in shared]
    for wrong_args, wrong_kwargs in [((), {}), ((1, 2, 3, 4, 5, 6), {}), ((), {"colour": 1})]:
        with pytest.raises(TypeError):
            cls(*wrong_args, **wrong_kwargs)
    if cls is Checked:
        with pytest.raises(ValueError, match="no side"):
            Checked(0)
    if cls is Sample:
        assert Sample(1).tags == ()  # its factory's


def test_a_required_field_after_a_default_is_refused_when_declared() -> None:
    with pytest.raises(TypeError, match="non-default argument 'late' follows default argument 'early'"):

        @record
        class Wrong(Value):
            early: int = 1
            late: int


def test_importing_a_package_imports_neither_dataclasses_nor_inspect_nor_random() -> None:
    code = """
import sys
import burning_wheel as bw
import witcher, riddle_of_steel
loaded = sorted({"dataclasses", "inspect", "random", "unicodedata"} & set(sys.modules))
print(loaded)
farmer = bw.lifepaths.farmer
bw.burn(["born_peasant", "farmer"])
print(sorted({"dataclasses", "inspect", "random"} & set(sys.modules)))
import dataclasses
print([f.name for f in dataclasses.fields(farmer)][:2], dataclasses.replace(farmer, name="F").name)
"""
    ran = run_python(code, GENERATED)
    assert ran.stdout.splitlines() == ["[]", "[]", "['id', 'name'] F"], ran.stderr
