"""The runtime every generated rules package carries (standard library only): dice, tables, formulas,
requirement predicates and the values fields hold.

This file is copied verbatim into each package as `_runtime/core.py`; the compiler uses it too (odds on
the reference, slugs). Every roll takes a `random.Random`, so results are reproducible from a seed.
"""

from __future__ import annotations

import enum
import functools
import itertools
import math
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Generic,
    Literal,
    Protocol,
    TypeVar,
    cast,
    dataclass_transform,
)

from . import odds, records
from .records import field

if TYPE_CHECKING:  # rolls take a caller's random.Random: importing the package need not import `random`
    import random

# A package's classes are `_rt.Value`s declared `@_rt.record` (see records.py); named here, in the module
# each package's code imports as `_rt`.
Value = records.Value
_C = TypeVar("_C", bound=type)


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: _C) -> _C:
    """A frozen, slotted record (`records.record`)."""
    return records.record(cls)


Number = int | Fraction

# ---------------------------------------------------------------- names


_NON_WORD = re.compile(r"[^a-z0-9]+")


def _normalized(form: Literal["NFC", "NFD", "NFKC", "NFKD"], text: str) -> str:
    import unicodedata  # only for names beyond ASCII: importing a package need not import it

    return unicodedata.normalize(form, text)


def slug(text: str) -> str:
    """The id a display name gets: `"Sergeant-at-Arms"` -> `sergeant_at_arms` (accents dropped). A name
    with no Latin letter or digit at all is spelt by its letters' code points: `"Сила"` -> `u441_438_43b_430`
    (so that names in other scripts get ids of their own, found again from the name)."""
    ascii_text = text if text.isascii() else _normalized("NFKD", text).encode("ascii", "ignore").decode("ascii")
    result = _NON_WORD.sub("_", ascii_text.lower()).strip("_")
    if not result:
        letters = [f"{ord(c):x}" for c in _normalized("NFKC", text).casefold() if c.isalnum()]
        return "u" + "_".join(letters) if letters else "_"
    return "n" + result if result[0].isdigit() else result


class Unknown(enum.Enum):
    """The marker for a value the source does not give (`unknown` in the rules); `none` is None."""

    UNKNOWN = "unknown"

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        return False


UNKNOWN = Unknown.UNKNOWN


# ---------------------------------------------------------------- JSON forms (the same in rules.js)


def exact(value: Fraction | int) -> str:
    """An exact number as the string `"numerator/denominator"` in lowest terms (`"1/6"`, `"1/1"`): how
    chances are written in JSON, here and in rules.js."""
    value = Fraction(value)
    return f"{value.numerator}/{value.denominator}"


def to_json(data: object) -> str:
    """JSON text as JavaScript's `JSON.stringify` writes it: compact, non-ASCII as itself."""
    import json  # here, not at the top: importing a package should not cost what only a sheet's JSON needs

    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def json_value(value: object) -> str:
    """A formula's value as JSON text, the same as rules.js's `jsonValue`: a whole number (a Fraction with
    denominator 1 too) as a number, any other fraction as `"n/d"`, a truth value, dice as their text."""
    if isinstance(value, Fraction):
        return str(value.numerator) if value.denominator == 1 else to_json(exact(value))
    if isinstance(value, Dice):
        return to_json(value.text)
    return to_json(value)


# ---------------------------------------------------------------- entities formulas are given


class UnknownId(ValueError):
    """A formula's `ref KIND` parameter was given a name that is no id of that kind."""

    def __init__(self, kind: str, param: str, given: object, ids: Sequence[str]) -> None:
        shown = ", ".join(ids[:12]) + (", ..." if len(ids) > 12 else "")
        super().__init__(f"{param}={given!r} is no {kind}: give the id of one ({shown or 'there are none'})")
        self.kind = kind
        self.param = param
        self.given = given
        self.ids = tuple(ids)  # the ids it may be given


def known_id(kind: str, param: str, given: str, ids: Sequence[str]) -> str:
    """`given`, when it is the id of an entity of `kind` (`ids`); else UnknownId, which names them."""
    if given not in ids:
        raise UnknownId(kind, param, given, ids)
    return given


# ---------------------------------------------------------------- arithmetic used by formulas


def div(a: Number, b: Number) -> Fraction:
    """Exact division: formulas never lose precision before an explicit floor/ceil/round."""
    return Fraction(a) / Fraction(b)


def floor(x: Number) -> int:
    return math.floor(x)


def ceil(x: Number) -> int:
    return math.ceil(x)


def round_half_up(x: Number) -> int:
    """Rounding as a table would do it: halves go up (Python's round() goes to even)."""
    return math.floor(Fraction(x) + Fraction(1, 2))


def least(first: Number, *rest: Number) -> Number:
    """`min` over whole numbers and fractions together: typed as one union, where the builtin called on an int
    and a Fraction is typed only as a comparison protocol."""
    return min(first, *rest)


def absolute(value: Number) -> Number:
    """`abs` of a value that may be a whole number or a fraction, typed as that union."""
    return -value if value < 0 else value


def greatest(first: Number, *rest: Number) -> Number:
    """`max` over whole numbers and fractions together."""
    return max(first, *rest)


# The values a formula is computed from are whole numbers, as characteristics are.
Values = Mapping[str, int]
# What a formula kept as data yields: a whole number, a fraction, either, a truth value or dice.
Y_co = TypeVar("Y_co", covariant=True)


@record
class Formula(Value, Generic[Y_co]):
    """A formula kept as data (a table cell such as `6 - PRS`): `evaluate(PRS=4)` computes it.

    `names` are the values it needs, as written; `evaluate` takes them in any case. `Formula[int]` yields
    whole numbers; the compiler's type checker gives each field the type its formulas yield.
    """

    text: str
    names: tuple[str, ...]
    compute: Callable[[Values], Y_co] = field(repr=False, compare=False)

    def evaluate(self, **values: int) -> Y_co:
        given = {k.casefold(): v for k, v in values.items()}
        missing = [n for n in self.names if n.casefold() not in given]
        if missing:
            raise KeyError(f"{self.text} needs a value for {', '.join(missing)}")
        return self.compute(given)

    def __str__(self) -> str:
        return self.text


# ---------------------------------------------------------------- dice


@record
class DiceTerm(Value):
    """`count` dice of `sides` sides, added up. `keep`: only that many of them count, the highest, or with
    `lowest` the lowest (`4d6kh3`, `2d20kl1`); `explode`: a die showing its highest face is rolled again and
    added, as often as it shows it (`1d6!`)."""

    count: int
    sides: int
    keep: int | None = None
    lowest: bool = False
    explode: bool = False

    def __post_init__(self) -> None:
        if self.count < 0 or self.sides < 1 or (self.keep is not None and not 0 < self.keep <= self.count):
            raise ValueError(f"cannot roll {self.text}")
        if self.explode and self.sides < 2:
            raise ValueError(f"{self.text} would explode for ever: a 1-sided die always shows its highest face")

    @property
    def plain(self) -> bool:
        """Every die counts once: no keep, no explode."""
        return self.keep is None and not self.explode

    @property
    def text(self) -> str:
        suffix = "!" if self.explode else ""
        if self.keep is not None:
            suffix = f"k{'l' if self.lowest else 'h'}{self.keep}"
        return f"{self.count}d{self.sides}{suffix}"

    def throw(self, rng: random.Random) -> tuple[int, list[int]]:
        """The total these dice make and every face rolled, in order."""
        faces, counted = [], []
        for _ in range(self.count):
            face = rng.randint(1, self.sides)
            faces.append(face)
            value = face
            while self.explode and face == self.sides:
                face = rng.randint(1, self.sides)
                faces.append(face)
                value += face
            counted.append(value)
        if self.keep is not None:
            counted = sorted(counted, reverse=not self.lowest)[: self.keep]
        return sum(counted), faces


@record
class Scaled(Value):
    """A roll times a whole number: `3d6 * 5`, `(2d6 + 6) * 5`; a factor of -1 takes it away (`1d6 - 1d6`)."""

    dice: Dice
    factor: int


@record
class Divided(Value):
    """A roll divided by a whole number, rounded down: `1d6 / 2`."""

    dice: Dice
    divisor: int

    def __post_init__(self) -> None:
        if self.divisor < 1:
            raise ValueError(f"cannot divide a roll by {self.divisor}")


@record
class Bounded(Value):
    """A roll kept within bounds: `max(1, 1d8 + CON)` is at least 1 (None: no bound that way)."""

    dice: Dice
    low: int | None = None
    high: int | None = None


DicePart = Scaled | Divided | Bounded


@record
class Throw(Value):
    """One roll of dice: its total and every die rolled, in order (dropped dice and explosions included)."""

    total: int
    faces: tuple[int, ...]


def _ways_at_most(count: int, sides: int, total: int) -> int:
    """How many rolls of `count` dice with `sides` sides sum to at most `total` (inclusion-exclusion)."""
    if total < count:
        return 0
    if total >= count * sides:
        every: int = sides**count
        return every
    ways = 0
    for k in range(min(count, (total - count) // sides) + 1):
        ways += (-1) ** k * math.comb(count, k) * math.comb(total - k * sides, count)
    return ways


def _convolve(ways: list[int], sides: int) -> list[int]:
    """Add one die: each new total is a sliding sum over the old ones (no enumeration of outcomes)."""
    result = [0] * (len(ways) + sides - 1)
    running = 0
    for i in range(len(result)):
        if i < len(ways):
            running += ways[i]
        if i >= sides:
            running -= ways[i - sides]
        result[i] = running
    return result


@functools.lru_cache(maxsize=16)
def _cumulative(terms: tuple[DiceTerm, ...]) -> tuple[int, ...]:
    """Rolls of `terms` coming to at most each total from the lowest up (built once per table's dice: a
    table asks for every row's odds)."""
    return tuple(itertools.accumulate(_ways(terms)))


def _ways(terms: Sequence[DiceTerm]) -> list[int]:
    """How many rolls of `terms` come to each total, from the lowest up (one die added at a time)."""
    ways = [1]
    for term in terms:
        for _ in range(term.count):
            ways = _convolve(ways, term.sides)
    return ways


@record
class Dice(Value):
    """A dice expression such as `1d10`, `2d6+3` or `30 + 1d10`, and the algebra on it: `parts` are rolls
    multiplied, divided or bounded (`3d6 * 5`, `1d6 / 2`, `max(1, 1d8 + 2)`, `1d6 - 1d6`), added on.

    A roll with an exploding die has no highest total: its `maximum` is None, and its odds are exact for
    every total (`chance(7, None)` of `1d6!` is 1/6), read up to `odds.MAX_TAIL` totals into the tail."""

    text: str
    terms: tuple[DiceTerm, ...]
    modifier: int = 0
    parts: tuple[DicePart, ...] = ()

    @property
    def plain(self) -> bool:
        """Dice added up and a number: the odds have a closed form, and tables and mechanics roll them."""
        return not self.parts and all(t.plain for t in self.terms)

    @property
    def minimum(self) -> int:
        if self.plain:
            return sum(t.count for t in self.terms) + self.modifier
        spread = _spread(self)
        return spread.low

    @property
    def maximum(self) -> int | None:
        """The highest total; None when a die explodes (there is none)."""
        if self.plain:
            return sum(t.count * t.sides for t in self.terms) + self.modifier
        spread = _spread(self)
        return spread.high if isinstance(spread, odds.Finite) else None

    @property
    def outcomes(self) -> int:
        """How many equally likely rolls there are (a roll with an exploding die has no such number)."""
        if self.plain:
            return math.prod(t.sides**t.count for t in self.terms)
        spread = _spread(self)
        if isinstance(spread, odds.Finite):
            return spread.outcomes
        raise ValueError(f"{self.text} explodes: it has no number of equally likely rolls")

    def throw(self, rng: random.Random) -> Throw:
        """Roll: the total, and every die rolled in order."""
        total, faces = self.modifier, []
        for term in self.terms:
            value, rolled = term.throw(rng)
            total += value
            faces += rolled
        for part in self.parts:
            inner = part.dice.throw(rng)
            faces += inner.faces
            match part:
                case Scaled(_, factor):
                    total += inner.total * factor
                case Divided(_, divisor):
                    total += inner.total // divisor
                case Bounded(_, low, high):
                    value = inner.total if low is None else max(low, inner.total)
                    total += value if high is None else min(high, value)
        return Throw(total, tuple(faces))

    def roll(self, rng: random.Random) -> int:
        if self.plain:  # the common case, without building a Throw
            return self.modifier + sum(rng.randint(1, t.sides) for t in self.terms for _ in range(t.count))
        return self.throw(rng).total

    def chance(self, low: int | None, high: int | None) -> Fraction:
        """The exact chance that a roll lands in low..high (None: open)."""
        if not self.plain:
            spread = _spread(self)
            below = odds.at_most(spread, high) if high is not None else Fraction(1)
            return below - (odds.at_most(spread, low - 1) if low is not None else Fraction(0))
        top = self._at_most(high) if high is not None else self.outcomes
        bottom = self._at_most(low - 1) if low is not None else 0
        return Fraction(top - bottom, self.outcomes)

    def _at_most(self, total: int) -> int:
        """How many of the equally likely rolls come to at most `total`."""
        if len({t.sides for t in self.terms}) == 1:  # NdS: a closed formula, no table of totals needed
            return _ways_at_most(sum(t.count for t in self.terms), self.terms[0].sides, total - self.modifier)
        cumulative = _cumulative(self.terms)  # dice of several sizes: count every total once, then look up
        index = total - self.minimum
        return 0 if index < 0 else cumulative[min(index, len(cumulative) - 1)]

    def distribution(self, up_to: int | None = None) -> dict[int, Fraction]:
        """The chance of every total (up to `up_to`), exactly. A roll with an exploding die has no end: give
        `up_to`, and take `chance(up_to + 1, None)` for the rest."""
        if self.plain:
            low, outcomes = self.minimum, self.outcomes
            spread = {low + i: Fraction(w, outcomes) for i, w in enumerate(_ways(self.terms)) if w}
            return spread if up_to is None else {t: c for t, c in spread.items() if t <= up_to}
        found = _spread(self)
        if up_to is None:
            if isinstance(found, odds.Series):
                raise ValueError(f"{self.text} explodes: its totals have no end; give up_to")
            up_to = found.high
        return odds.head(found, up_to)

    def distribution_json(self, up_to: int | None = None) -> str:
        """`distribution` as JSON text, the same as rules.js's `distributionJson`: `[[total, "n/d"], ...]`."""
        return to_json([[total, exact(chance)] for total, chance in self.distribution(up_to).items()])

    def __add__(self, other: Dice | int) -> Dice:
        """Dice made by a formula: `8d6 + (slot - 3)d6` is 10d6 at slot 5; adding a number adds it on."""
        if isinstance(other, int):
            return _dice(self.terms, self.modifier + other, self.parts)
        counts: dict[int, int] = {}
        kept = []
        for term in (*self.terms, *other.terms):
            if term.plain:
                counts[term.sides] = counts.get(term.sides, 0) + term.count
            else:
                kept.append(term)
        plain = tuple(DiceTerm(c, s) for s, c in counts.items() if c)
        return _dice((*plain, *kept), self.modifier + other.modifier, (*self.parts, *other.parts))

    def __radd__(self, other: int) -> Dice:
        return self + other

    def __sub__(self, other: Dice | int) -> Dice:
        return self + (-other)

    def __rsub__(self, other: int) -> Dice:
        return -self + other

    def __neg__(self) -> Dice:
        return self * -1

    def __mul__(self, factor: int) -> Dice:
        """`3d6 * 5`: every total times a whole number."""
        if factor == 1:
            return self
        if factor == 0:
            return _dice((), 0)
        return _dice((), 0, (Scaled(self, factor),))

    def __rmul__(self, factor: int) -> Dice:
        return self * factor

    def __floordiv__(self, divisor: int) -> Dice:
        """`1d6 / 2`: every total divided by a whole number, rounded down."""
        return self if divisor == 1 else _dice((), 0, (Divided(self, divisor),))

    def __str__(self) -> str:
        return self.text


@functools.lru_cache(maxsize=64)
def _spread(dice: Dice) -> odds.Spread:
    """The exact spread of a roll of dice algebra (built once per roll: a table or page asks many times)."""
    spread: odds.Spread = odds.constant(dice.modifier)
    for term in dice.terms:
        if term.explode:
            one = odds.exploding(term.sides)
            for _ in range(term.count):
                spread = odds.add(spread, one)
        elif term.keep is not None:
            spread = odds.add(spread, odds.kept(term.count, term.sides, term.keep, term.lowest))
        else:
            spread = odds.add(spread, odds.plain(term.count, term.sides))
    for part in dice.parts:
        inner = _spread(part.dice)
        match part:
            case Scaled(_, factor):
                spread = odds.add(spread, odds.scale(inner, factor))
            case Divided(_, divisor):
                spread = odds.add(spread, odds.divide(inner, divisor))
            case Bounded(_, low, high):
                spread = odds.add(spread, odds.bound(inner, low, high))
    return spread


def _grouped(dice: Dice) -> str:
    """A roll's text as one operand: `(2d6 + 6)` where it is more than one term."""
    return dice.text if len(dice.terms) + len(dice.parts) == 1 and not dice.modifier else f"({dice.text})"


def _part_text(part: DicePart) -> str:
    match part:
        case Scaled(dice, -1):
            return f"-{_grouped(dice)}"
        case Scaled(dice, factor):
            return f"{_grouped(dice)} * {factor}"
        case Divided(dice, divisor):
            return f"{_grouped(dice)} / {divisor}"
        case Bounded(dice, low, high):
            text = dice.text if low is None else f"max({low}, {dice.text})"
            return text if high is None else f"min({high}, {text})"


def _dice(terms: tuple[DiceTerm, ...], modifier: int, parts: tuple[DicePart, ...] = ()) -> Dice:
    """Dice with their text written the usual way: `10d6 + 2`, `3d6 * 5 - 1d6`."""
    pieces = [t.text for t in terms] + [_part_text(p) for p in parts]
    text = ""
    for piece in pieces:
        if not text:
            text = piece
        else:
            text += f" - {piece[1:]}" if piece.startswith("-") else f" + {piece}"
    if not text:
        text = str(modifier)
    elif modifier:
        text += f" {'+' if modifier > 0 else '-'} {abs(modifier)}"
    return Dice(text, terms, modifier, parts)


def dice(count: Number, sides: Number, suffix: str = "") -> Dice:
    """`dice(n, 6)`, `(slot - 3)d6`: dice whose count (or sides) a formula computes; `(n)d6kh3`, `(n)d6dl1`,
    `(n)d6!`: with what follows written dice (`suffix`: keep or drop the highest or lowest, or explode).
    Keeping more dice than the count gives (or dropping them all) is a ValueError, as is any other suffix."""
    if Fraction(count).denominator != 1 or Fraction(sides).denominator != 1 or count < 0 or sides < 1:
        raise ValueError(f"cannot roll {count} dice of {sides} sides")
    count, sides = int(count), int(sides)
    if suffix == "!":
        return _dice((DiceTerm(count, sides, explode=True),) if count else (), 0)
    if not suffix:
        return _dice((DiceTerm(count, sides),) if count else (), 0)
    how, number = suffix[:2], suffix[2:]
    if how not in ("kh", "kl", "dh", "dl") or not number.isdigit():
        raise ValueError(f"cannot roll {count}d{sides}{suffix}: keep (kh3, kl1), drop (dh1, dl1) or explode (!)")
    keep = int(number) if how[0] == "k" else count - int(number)
    if not 0 < keep <= count:
        raise ValueError(f"cannot roll {count}d{sides}{suffix}: it would keep {max(keep, 0)} of {count} dice")
    # dropping the highest keeps the lowest, and dropping the lowest keeps the highest
    lowest = (how == "kl") or (how == "dh")
    return _dice((DiceTerm(count, sides, keep, lowest),), 0)


def _bounded(values: tuple[Dice | int, ...], low: bool) -> Dice:
    rolls = [v for v in values if isinstance(v, Dice)]
    numbers = [v for v in values if isinstance(v, int)]
    if len(rolls) != 1:
        raise ValueError("max and min take one roll among whole numbers")
    bound = (max if low else min)(numbers) if numbers else None
    if bound is None:
        return rolls[0]
    return _dice((), 0, (Bounded(rolls[0], bound, None) if low else Bounded(rolls[0], None, bound),))


def dice_max(*values: Dice | int) -> Dice:
    """`max(1, 1d8 + CON)`: a roll that is at least the greatest of the numbers."""
    return _bounded(values, low=True)


def dice_min(*values: Dice | int) -> Dice:
    """`min(10, 2d6 * 2)`: a roll that is at most the least of the numbers."""
    return _bounded(values, low=False)


# ---------------------------------------------------------------- dice mechanics

Die = int | Sequence[int]  # one die: its face, or the faces of a die rolled again (stacked or exploded)


@record
class PoolResult(Value):
    totals: tuple[int, ...]  # each die's value, stacked dice added up
    successes: int
    fumble: bool


@record
class PoolMechanic(Value):
    """A pool of dice against a target number: each die at or over it is a success.

    `stack_on`: a die showing it may be rolled again and added (so a target over the die's sides can be
    reached). `fumble_ones`: that many 1s and no success is a fumble.
    """

    id: str
    name: str
    sides: int
    stack_on: int | None = None
    fumble_ones: int | None = None

    def judge(self, dice: Sequence[Die], target: int) -> PoolResult:
        """Read dice already rolled; a stacked die is given as its faces, e.g. [10, 7] for 17."""
        totals = tuple(d if isinstance(d, int) else sum(d) for d in dice)
        successes = sum(1 for t in totals if t >= target)
        ones = sum(1 for d in dice if (d if isinstance(d, int) else d[0]) == 1)
        fumble = self.fumble_ones is not None and successes == 0 and ones >= self.fumble_ones
        return PoolResult(totals, successes, fumble)

    def roll(self, rng: random.Random, dice: int, target: int) -> PoolResult:
        """Roll `dice` dice; a die that stacks is rolled again only when that could still matter."""
        rolled: list[Die] = []
        for _ in range(dice):
            faces = [rng.randint(1, self.sides)]
            while self.stack_on is not None and faces[-1] == self.stack_on and sum(faces) < target:
                faces.append(rng.randint(1, self.sides))
            rolled.append(faces[0] if len(faces) == 1 else faces)
        return self.judge(rolled, target)

    def success_chance(self, target: int) -> Fraction:
        """The exact chance that one die reaches `target`, stacking where it may."""
        chance, weight = Fraction(0), Fraction(1)
        while target > 1:
            chance += weight * Fraction(max(0, self.sides - target + 1), self.sides)
            if self.stack_on is None or self.stack_on >= target:
                return chance  # no stacking, or the stacking face already reaches the target
            weight /= self.sides  # the die shows stack_on and is rolled again
            target -= self.stack_on
        return chance + weight

    def success_chances(self, dice: int, target: int) -> dict[int, Fraction]:
        """The exact chance of each number of successes with `dice` dice against `target`."""
        one = self.success_chance(target)
        return {k: math.comb(dice, k) * one**k * (1 - one) ** (dice - k) for k in range(dice + 1)}


@record
class TotalMechanic(Value):
    """Dice added to a base. With one die, `explode_on` rolls again and adds (repeatedly); `fumble_on`
    rolls again and subtracts from the base (exploding the same way); `floor` bounds the result."""

    id: str
    name: str
    dice: Dice
    explode_on: int | None = None
    fumble_on: int | None = None
    floor: int | None = None

    @property
    def sides(self) -> int:
        return self.dice.terms[0].sides

    def total(self, faces: Sequence[int], base: int = 0) -> int:
        """The result of faces already rolled, in order: [10, 7] -> base + 17; [1, 7] -> base - 7.

        Without exploding or fumbling every face counts, and the dice's modifier is added."""
        if self.explode_on is None and self.fumble_on is None:
            result = base + sum(faces) + self.dice.modifier
        else:
            first, rest = faces[0], list(faces[1:])
            if self.fumble_on is not None and first == self.fumble_on:
                result = base - self._chain(rest)
            elif self.explode_on is not None and first == self.explode_on:
                result = base + first + self._chain(rest)
            else:
                result = base + first
        return result if self.floor is None else max(self.floor, result)

    def _chain(self, faces: Sequence[int]) -> int:
        """The faces that count after the first: each explode adds the next one."""
        total = 0
        for face in faces:
            total += face
            if face != self.explode_on:
                break
        return total

    def roll(self, rng: random.Random, base: int = 0) -> tuple[int, tuple[int, ...]]:
        """Roll, returning the result and every face rolled."""
        if self.explode_on is None and self.fumble_on is None:
            faces = [rng.randint(1, t.sides) for t in self.dice.terms for _ in range(t.count)]
            return self.total(faces, base), tuple(faces)
        faces = [rng.randint(1, self.sides)]
        if faces[0] in (self.explode_on, self.fumble_on):
            faces.append(rng.randint(1, self.sides))
            while faces[-1] == self.explode_on:
                faces.append(rng.randint(1, self.sides))
        return self.total(faces, base), tuple(faces)


@record
class Outcome(Value):
    """One band of a highest-die mechanic: the highest die showing `low`..`high` reads as `name`."""

    name: str
    low: int
    high: int


@record
class HighestResult(Value):
    dice: tuple[int, ...]  # every die rolled
    read: int  # the die read: the highest (the lowest of the zero-dice roll)
    outcome: str  # the band `read` falls in, or the critical's name
    critical: bool


@record
class HighestMechanic(Value):
    """Roll a number of one kind of die and read the highest (Blades in the Dark's action roll).

    `outcomes`: the bands the highest die falls in, covering every face. `critical`: that many dice showing
    the top face read as `critical_name` instead. `zero_dice`: with no dice, roll that many and read the
    lowest (never a critical); without it, a roll of no dice is a ValueError.
    """

    id: str
    name: str
    sides: int
    outcomes: tuple[Outcome, ...]
    critical: int | None = None
    zero_dice: int | None = None
    critical_name: ClassVar[str] = "critical"

    @property
    def names(self) -> tuple[str, ...]:
        """Every outcome it can read, in order (the critical last)."""
        return tuple(o.name for o in self.outcomes) + ((self.critical_name,) if self.critical is not None else ())

    def _band(self, face: int) -> str:
        return next(o.name for o in self.outcomes if o.low <= face <= o.high)

    def _rolled(self, dice: int) -> int:
        """How many dice are rolled for a pool of `dice`."""
        if dice < 0:
            raise ValueError(f"{self.name}: a pool of {dice} dice")
        if dice > 0:
            return dice
        if self.zero_dice is None:
            raise ValueError(f"{self.name}: a pool of no dice, and no zero_dice rule")
        return self.zero_dice

    def judge(self, faces: Sequence[int], dice: int | None = None) -> HighestResult:
        """Read dice already rolled; `dice=0` says they are the zero-dice roll (the lowest is read)."""
        if not faces or any(not 1 <= f <= self.sides for f in faces):
            raise ValueError(f"{self.name}: {list(faces)} are not faces of d{self.sides}")
        zero = dice == 0
        read = min(faces) if zero else max(faces)
        critical = not zero and self.critical is not None and faces.count(self.sides) >= self.critical
        return HighestResult(tuple(faces), read, self.critical_name if critical else self._band(read), critical)

    def roll(self, rng: random.Random, dice: int) -> HighestResult:
        """Roll a pool of `dice` (0: the zero-dice rule) and read it."""
        faces = [rng.randint(1, self.sides) for _ in range(self._rolled(dice))]
        return self.judge(faces, dice)

    def chances(self, dice: int) -> dict[str, Fraction]:
        """The exact chance of each outcome with a pool of `dice`, in the order of `names`."""
        rolled, s = self._rolled(dice), self.sides
        odds._charge(rolled * rolled * s)  # fractions of s**rolled: as costly as adding up that many dice
        if dice == 0:
            # The lowest of `rolled` dice: P(lowest >= k) = ((s - k + 1) / s) ** rolled.
            at_least = [Fraction(s - k + 1, s) ** rolled for k in range(1, s + 2)]
            read = {k: at_least[k - 1] - at_least[k] for k in range(1, s + 1)}
            critical = Fraction(0)
        else:
            # The highest of `rolled` dice: P(highest <= k) = (k / s) ** rolled.
            at_most = [Fraction(k, s) ** rolled for k in range(s + 1)]
            read = {k: at_most[k] - at_most[k - 1] for k in range(1, s + 1)}
            critical = Fraction(0)
            if self.critical is not None:
                top = Fraction(1, s)
                critical = sum(
                    (
                        math.comb(rolled, j) * top**j * (1 - top) ** (rolled - j)
                        for j in range(self.critical, rolled + 1)
                    ),
                    Fraction(0),
                )
                read[s] -= critical  # a critical is read instead of the top face's band
        result = {o.name: sum((read[k] for k in range(o.low, o.high + 1)), Fraction(0)) for o in self.outcomes}
        if self.critical is not None:
            result[self.critical_name] = critical
        return result


@record
class Grade(Value):
    """A graded success of a roll-under mechanic: a total at most the target divided by `divide` (rounded
    down) reads as `outcome`."""

    divide: int
    outcome: str

    def __post_init__(self) -> None:
        if self.divide < 1:
            raise ValueError(f"a grade divides the target by {self.divide}")

    def limit(self, target: int) -> int:
        """The highest total that makes the grade against `target`."""
        return target // self.divide


@record
class RollBand(Value):
    """Totals `low`..`high` that read as a critical or a fumble, when the target is within
    `targets_low`..`targets_high` (None: open that way)."""

    low: int
    high: int
    targets_low: int | None = None
    targets_high: int | None = None

    def holds(self, total: int, target: int) -> bool:
        return (
            self.low <= total <= self.high
            and (self.targets_low is None or target >= self.targets_low)
            and (self.targets_high is None or target <= self.targets_high)
        )


@record
class UnderResult(Value):
    dice: tuple[int, ...]  # every die rolled
    total: int  # the faces and the dice's own modifier
    target: int
    outcome: str  # failure, success, a grade's outcome, or critical or fumble
    success: bool
    margin: int  # by how much the total is under the target (target - total; below 0: over it)


def _whole(value: Number, what: str) -> int:
    """`value` as a whole number (a formula's Fraction with denominator 1 is one); a ValueError if not."""
    if isinstance(value, bool) or not isinstance(value, int | Fraction) or Fraction(value).denominator != 1:
        raise ValueError(f"{what} is {value}, not a whole number")
    return int(value)


@record
class UnderMechanic(Value):
    """Roll dice against a target from below (a percentile skill, a d20 or 3d6 roll-under): a total at
    most the target is a success, graded by `grades` (the hardest met: at most a half of the target is
    `hard`, ...). A total in one of `criticals` is a critical, a success whatever the target; one in
    `fumbles` a fumble, a failure whatever the target. A band applies to the targets it names only (a
    fumble on 96-100 under 50, on 100 only from 50).
    """

    id: str
    name: str
    dice: Dice
    grades: tuple[Grade, ...] = ()
    criticals: tuple[RollBand, ...] = ()
    fumbles: tuple[RollBand, ...] = ()
    success_name: ClassVar[str] = "success"
    failure_name: ClassVar[str] = "failure"
    critical_name: ClassVar[str] = "critical"
    fumble_name: ClassVar[str] = "fumble"

    @property
    def names(self) -> tuple[str, ...]:
        """Every outcome it can read, from the worst to the best: the fumble (when it has one), failure,
        success, the grades from the easiest to the hardest, the critical (when it has one)."""
        grades = tuple(g.outcome for g in sorted(self.grades, key=lambda g: g.divide))
        return (
            ((self.fumble_name,) if self.fumbles else ())
            + (self.failure_name, self.success_name)
            + grades
            + ((self.critical_name,) if self.criticals else ())
        )

    def read(self, total: int, target: int) -> tuple[str, bool]:
        """The outcome of a total against a target, and whether it is a success."""
        if any(band.holds(total, target) for band in self.criticals):
            return self.critical_name, True
        if any(band.holds(total, target) for band in self.fumbles):
            return self.fumble_name, False
        if total > target:
            return self.failure_name, False
        made = [g for g in self.grades if total <= g.limit(target)]
        return (max(made, key=lambda g: g.divide).outcome if made else self.success_name), True

    def judge(self, faces: Sequence[int], target: int) -> UnderResult:
        """Read dice already rolled (one face per die, in the order of the dice's terms)."""
        target = _whole(target, f"{self.name}: the target")
        sides = [t.sides for t in self.dice.terms for _ in range(t.count)]
        if len(faces) != len(sides) or any(not 1 <= f <= s for f, s in zip(faces, sides, strict=False)):
            raise ValueError(f"{self.name}: {list(faces)} are not faces of {self.dice.text}")
        total = sum(faces) + self.dice.modifier
        outcome, success = self.read(total, target)
        return UnderResult(tuple(faces), total, target, outcome, success, target - total)

    def roll(self, rng: random.Random, target: int) -> UnderResult:
        """Roll against `target` (a skill's chance, an attribute): the outcome and every die rolled."""
        faces = [rng.randint(1, t.sides) for t in self.dice.terms for _ in range(t.count)]
        return self.judge(faces, target)

    def __post_init__(self) -> None:
        if not self.dice.plain or not self.dice.terms:
            raise ValueError(f"{self.name}: a roll-under total is dice added up, not {self.dice.text}")

    def _distribution(self) -> dict[int, Fraction]:
        """The chance of every total (charged as adding up the dice one at a time)."""
        spread = (self.dice.maximum or self.dice.minimum) - self.dice.minimum + 1
        odds._charge(sum(t.count for t in self.dice.terms) * spread)
        return self.dice.distribution()

    def chances(self, target: int) -> dict[str, Fraction]:
        """The exact chance of each outcome against `target`, in the order of `names` (they add up to 1)."""
        target = _whole(target, f"{self.name}: the target")
        result = dict.fromkeys(self.names, Fraction(0))
        for total, chance in self._distribution().items():
            result[self.read(total, target)[0]] += chance
        return result

    def chance(self, target: int) -> Fraction:
        """The exact chance of a success of any grade (a critical too) against `target`."""
        target = _whole(target, f"{self.name}: the target")
        return sum((p for total, p in self._distribution().items() if self.read(total, target)[1]), Fraction(0))


@record
class CheckResult(Value):
    numbers: tuple[int, ...]  # the faces rolled
    total: int  # the faces, the dice's own modifier and the check's
    target: int
    success: bool
    effect: int  # by how much it made (or missed) the target: total - target


@record
class CheckMechanic(Value):
    """Dice plus a modifier against a target number: made when the total reaches it; the effect is the
    margin (`check END 5+` on 2d6: 2d6 + END, 5 or more)."""

    id: str
    name: str
    dice: Dice

    def judge(self, faces: Sequence[int], modifier: int, target: int) -> CheckResult:
        total = sum(faces) + self.dice.modifier + modifier
        return CheckResult(tuple(faces), total, target, total >= target, total - target)

    def roll(self, rng: random.Random, modifier: int = 0, target: int = 0) -> CheckResult:
        faces = [rng.randint(1, t.sides) for t in self.dice.terms for _ in range(t.count)]
        return self.judge(faces, modifier, target)

    def chance(self, modifier: int, target: int) -> Fraction:
        """The exact chance of making `target` with `modifier`."""
        return self.dice.chance(target - modifier, None)


@record
class ContestResult(Value):
    first: int
    second: int
    winner: int | None  # 0: the first side, 1: the second, None: a tie
    margin: int


@record
class ContestMechanic(Value):
    """Two sides each roll the dice plus their modifier; the higher total wins, by the difference."""

    id: str
    name: str
    dice: Dice

    def judge(self, first: int, second: int) -> ContestResult:
        winner = None if first == second else (0 if first > second else 1)
        return ContestResult(first, second, winner, abs(first - second))

    def roll(self, rng: random.Random, first: int = 0, second: int = 0) -> ContestResult:
        return self.judge(self.dice.roll(rng) + first, self.dice.roll(rng) + second)

    def chance(self, first: int = 0, second: int = 0) -> Fraction:
        """The exact chance that the first side wins outright."""
        spread = self.dice.distribution()
        return sum((p * self.dice.chance(None, total + first - second - 1) for total, p in spread.items()), Fraction(0))


@record
class Check(Value):
    """A check a field names (`survival: check END 5+`): its mechanic, the modifier (a formula of the
    character's values) and the target."""

    mechanic: CheckMechanic
    modifier: Formula[int]
    target: int

    def _modifier(self, values: Mapping[str, int]) -> int:
        return _whole(self.modifier.evaluate(**values), f"the modifier {self.modifier}")

    def roll(self, rng: random.Random, **values: int) -> CheckResult:
        return self.mechanic.roll(rng, self._modifier(values), self.target)

    def chance(self, **values: int) -> Fraction:
        return self.mechanic.chance(self._modifier(values), self.target)

    def __str__(self) -> str:
        return f"{self.modifier} {self.target}+"


# ---------------------------------------------------------------- values of fields


_K = TypeVar("_K")
_V = TypeVar("_V")


_E = TypeVar("_E")


class Registry(Mapping[str, _E]):
    """A kind's entities by id (`LIFEPATHS`): read like a dict, never changed, each entity built the first time
    it is read, so that importing a package does not build them all. Each is given as a compact literal:
    a plain value as itself, a tuple as `(-1, item, ...)`, a dict as `(-2, key, value, ...)`, and anything
    else as `(n, arg, ..., keyword value, ...)`: `calls[n]` is `(callee, keyword names)`, called with them
    (keyword names None: the callee itself is the value)."""

    __slots__ = ("_built", "_calls", "_literals")

    def __init__(self, calls: Sequence[tuple[Any, tuple[str, ...] | None]], literals: Mapping[str, object]) -> None:
        self._calls = calls
        self._literals = literals
        self._built: dict[str, _E] = {}

    def __getitem__(self, key: str) -> _E:
        try:
            return self._built[key]
        except KeyError:
            pass
        entity = cast(_E, self._build(self._literals[key]))
        return self._built.setdefault(key, entity)  # one entity per id, whichever thread built it first

    def _build(self, literal: object) -> object:
        if type(literal) is not tuple:
            return literal
        tag = literal[0]
        items = [self._build(item) for item in literal[1:]]
        if tag == -1:
            return tuple(items)
        if tag == -2:
            return dict(zip(items[::2], items[1::2], strict=True))
        callee, keywords = self._calls[tag]
        if keywords is None:
            return callee
        if not keywords:
            return callee(*items)
        split = len(items) - len(keywords)
        return callee(*items[:split], **dict(zip(keywords, items[split:], strict=True)))

    def __contains__(self, key: object) -> bool:
        return key in self._literals

    def __iter__(self) -> Iterator[str]:
        return iter(self._literals)

    def __len__(self) -> int:
        return len(self._literals)

    def __repr__(self) -> str:
        return repr(dict(self))


class FrozenMap(Mapping[_K, _V]):
    """A map field's value (`speeds: land 25, climb 10`): read like a dict, never changed, hashable (the
    entity holding it is a frozen dataclass), equal to any mapping with the same entries."""

    __slots__ = ("_hash", "_items")

    def __init__(self, items: Mapping[_K, _V] | None = None) -> None:
        self._items: dict[_K, _V] = dict(items or {})
        self._hash: int | None = None

    def __getitem__(self, key: _K) -> _V:
        return self._items[key]

    def __iter__(self) -> Iterator[_K]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._items.items()))
        return self._hash

    def __repr__(self) -> str:
        return f"FrozenMap({self._items!r})"


@record
class Range(Value):
    low: int | None = None
    high: int | None = None

    def __contains__(self, value: object) -> bool:
        return (
            isinstance(value, int)
            and (self.low is None or value >= self.low)
            and (self.high is None or value <= self.high)
        )


@record
class Pick(Value):
    """`1 of (Doomed, Luck)`: choose `count` of the `options` (ids)."""

    count: int
    options: tuple[str, ...]


@record
class Offer(Value):
    """What a `choices of ref KIND` field gives (`Ambidextrous, 1 of (Doomed, Luck)`): the ids `fixed`, and
    the `picks` a player makes, in the order written."""

    fixed: tuple[str, ...] = ()
    picks: tuple[Pick, ...] = ()

    @property
    def options(self) -> tuple[str, ...]:
        """Every id it may give: the fixed ones, then each pick's options."""
        return tuple(dict.fromkeys((*self.fixed, *(o for pick in self.picks for o in pick.options))))

    def choose(self, *chosen: Sequence[str]) -> tuple[str, ...]:
        """The fixed ids, then what was chosen for each pick (one sequence of ids per pick, as many as it
        asks, among its options, none twice); ValueError naming the pick otherwise."""
        if len(chosen) != len(self.picks):
            raise ValueError(f"{len(self.picks)} pick(s) to make, {len(chosen)} given")
        result = list(self.fixed)
        for pick, ids in zip(self.picks, chosen, strict=True):
            wrong = [i for i in ids if i not in pick.options]
            if wrong or len(ids) != pick.count or len(set(ids)) != len(ids):
                raise ValueError(f"choose {pick.count} of {', '.join(pick.options)}; not {', '.join(ids) or 'none'}")
            result += ids
        return tuple(result)

    def pick(self, rng: random.Random) -> tuple[str, ...]:
        """A random choice for every pick (character generation), with the fixed ids."""
        return self.choose(*(rng.sample(pick.options, pick.count) for pick in self.picks))


@record
class StatBonus(Value):
    mental: int = 0
    physical: int = 0
    either: int = 0  # `+1 M/P`: the player chooses where it goes


@record
class Actions(Value):
    count: int
    per_obstacle: bool = False  # `x3`: the count times the obstacle


@record
class Choices(Value):
    """Points, and what they buy: each entry is an id, or the ids to choose one from."""

    points: int
    options: tuple[tuple[str, ...], ...] = ()

    @property
    def all(self) -> tuple[str, ...]:
        return tuple(item for choice in self.options for item in choice)


# ---------------------------------------------------------------- tables

R = TypeVar("R")


@record
class Key(Value):
    """One key of a row: a range of numbers (either end may be open) or a name."""

    low: int | None = None
    high: int | None = None
    name: str | None = None
    parity: int | None = None  # `odd` (1) or `even` (0) in a rolled table

    def matches(self, key: int | str) -> bool:
        if isinstance(key, str):
            return self.name is not None and self.name.casefold() == key.casefold()
        if self.name is not None:
            return False
        if self.parity is not None:
            return key % 2 == self.parity
        return (self.low is None or key >= self.low) and (self.high is None or key <= self.high)

    @property
    def text(self) -> str:
        if self.name is not None:
            return self.name
        if self.parity is not None:
            return "odd" if self.parity else "even"
        if self.low is None:
            return f"<={self.high}"
        if self.high is None:
            return f"{self.low}+"
        return str(self.low) if self.low == self.high else f"{self.low}-{self.high}"


@record
class Row(Value, Generic[R]):
    keys: tuple[Key, ...]
    value: R
    source: str | None = None  # where this row comes from, when it differs from the table's

    def matches(self, keys: Sequence[int | str]) -> bool:
        return len(keys) == len(self.keys) and all(k.matches(v) for k, v in zip(self.keys, keys, strict=True))

    def matches_given(self, given: Sequence[int | str]) -> bool:
        """Whether the row's first keys are these (the keys a roll is given)."""
        return len(given) <= len(self.keys) and all(k.matches(v) for k, v in zip(self.keys, given, strict=False))

    @property
    def key_text(self) -> str:
        """Its keys as the rules write them; `otherwise` for the row of every key no other row names."""
        return ", ".join(k.text for k in self.keys) if self.keys else "otherwise"


@record
class Roll(Value):
    """What a table is rolled on: a die (or dice) per key; `d66` reads two d6 as tens and units; the
    modifiers a roll may take run from modifier_low to modifier_high (the rows cover them all). `given`: the
    keys each roll is given rather than rolls (`roll: region, 1d20`), the table's first; the dice roll the rest."""

    text: str
    dice: tuple[Dice, ...]
    modifier_low: int = 0
    modifier_high: int = 0
    tens_units: bool = False
    given: tuple[str, ...] = ()

    def roll(self, rng: random.Random, modifier: int = 0) -> tuple[int, ...]:
        """The number for each key; the modifier goes on the first."""
        if self.tens_units:
            return (10 * rng.randint(1, 6) + rng.randint(1, 6) + modifier,)
        return tuple(d.roll(rng) + (modifier if i == 0 else 0) for i, d in enumerate(self.dice))

    def chance(self, key: int, low: int | None, high: int | None, modifier: int = 0) -> Fraction:
        """The exact chance that key `key` comes up within low..high (None: open)."""
        shift = modifier if key == 0 else 0
        if self.tens_units:
            hits = sum(
                1
                for tens in range(1, 7)
                for units in range(1, 7)
                if (low is None or 10 * tens + units + shift >= low)
                and (high is None or 10 * tens + units + shift <= high)
            )
            return Fraction(hits, 36)
        return self.dice[key].chance(None if low is None else low - shift, None if high is None else high - shift)

    def parity_chance(self, key: int, parity: int, modifier: int = 0) -> Fraction:
        dice = self.dice[key]
        highest = dice.maximum
        if highest is None:  # the compiler rolls tables on plain dice only (E208)
            raise ValueError(f"{dice.text} has no highest total to read odd and even rows by")
        numbers = range(11, 67) if self.tens_units else range(dice.minimum, highest + 1)
        shift = modifier if key == 0 else 0
        return sum((self.chance(key, n, n) for n in numbers if (n + shift) % 2 == parity), Fraction(0))

    def __str__(self) -> str:
        return self.text


@record
class Rolled(Value, Generic[R]):
    """One roll on a table: the numbers rolled (modifier included) and the row they landed on; `given`: the
    keys it was given (`region="forest"`), in the table's order."""

    table: str
    numbers: tuple[int, ...]
    row: R
    clamped: bool = False  # the numbers went past the rows and counted as the first or last
    given: tuple[int | str, ...] = ()


@record
class Rolls(Value):
    """`2 x treasure` in a `rolls` cell: roll on that table `times` times (`roll_chain` follows it)."""

    times: int
    table: str


class PastRows(LookupError):
    """A number past the rows of a table the rules leave partial (`partial: yes`): no answer to give."""

    def __init__(self, table: str, message: str) -> None:
        super().__init__(message)
        self.table = table


MAX_CHAIN = 1000  # rolls followed before giving up on a chain that keeps going


@record
class Table(Value, Generic[R]):
    id: str
    name: str
    dice: Roll | None
    rows: tuple[Row[R], ...]
    source: str | None = None
    clamp: bool = False  # a result past the rows counts as the first or last row
    partial: bool = False  # the rules give no row past these: a formula's lookup there raises PastRows
    chains: tuple[str, ...] = ()  # the columns naming the table to roll on next (`ref table`, `rolls`)
    registry: Mapping[str, Table[Any]] = field(default_factory=dict, compare=False, repr=False)
    otherwise: Row[R] | None = None  # `otherwise -> ...` (no keys): what every key no row names finds

    def _row(self, keys: Sequence[int | str]) -> Row[R] | None:
        for row in self.rows:
            if row.matches(keys):
                return row
        return None

    def lookup(self, *keys: int | str) -> R:
        """The row for a number or a name (one per key of the table: `lookup("III", 2)`); the otherwise row
        where no row has them."""
        row = self._row(keys) or self.otherwise
        if row is not None:
            return row.value
        shown = ", ".join(repr(k) for k in keys)
        raise LookupError(f"{self.name}: no row for {shown}")

    def _bounds(self, key: int, rows: Sequence[Row[R]]) -> tuple[int | None, int | None]:
        """The lowest and highest number `rows` take on `key` (None: open, or no numbered rows)."""
        numbered = [r.keys[key] for r in rows if r.keys[key].name is None and r.keys[key].parity is None]
        lows = [k.low for k in numbered if k.low is not None]
        highs = [k.high for k in numbered if k.high is not None]
        low = min(lows) if numbered and len(lows) == len(numbered) else None
        high = max(highs) if numbered and len(highs) == len(numbered) else None
        return low, high

    def _given(self, given: Mapping[str, int | str]) -> tuple[int | str, ...]:
        """The keys a roll is given, in the table's order (`region="forest"`)."""
        names = self.dice.given if self.dice is not None else ()
        unknown = sorted(set(given) - set(names))
        if unknown:
            raise TypeError(
                f"{self.name} is not given {', '.join(unknown)}" + (f" (only {', '.join(names)})" * bool(names))
            )
        missing = [n for n in names if n not in given]
        if missing:
            raise TypeError(f"{self.name} is rolled for a {missing[0]}: roll(rng, {missing[0]}=...)")
        return tuple(given[n] for n in names)

    def roll(self, rng: random.Random, modifier: int = 0, **given: int | str) -> Rolled[R]:
        """Roll the table's dice (plus `modifier`) and look the numbers up, after the keys it is given
        (`roll(rng, region="forest")`). A result past the rows counts as the first or last row where the table
        clamps; elsewhere the otherwise row takes it, and without one it raises LookupError."""
        if self.dice is None:
            raise TypeError(f"{self.name} is not rolled on dice; use lookup()")
        values = self._given(given)
        numbers = self.dice.roll(rng, modifier)
        found, clamped = self._find((*values, *numbers), len(values))
        return Rolled(self.id, numbers, found, clamped=clamped, given=values)

    def at(self, *numbers: int) -> R:
        """The row a formula looks up: past the rows, the first or last row where the table clamps;
        PastRows where the rules leave the table partial (they give no answer there: no guess is made)."""
        try:
            return self._find(numbers, 0)[0]
        except LookupError as exc:
            if self.partial:
                raise PastRows(self.id, str(exc)) from None
            raise

    def _find(self, keys: tuple[int | str, ...], given: int) -> tuple[R, bool]:
        """The row for `keys` (the first `given` of them given, the rest numbers), and whether it clamped."""
        row = self._row(keys)
        if row is not None:
            return row.value, False
        if self.clamp:
            # past the rows of the same given keys: the first or last of them
            same = [r for r in self.rows if r.matches_given(keys[:given])]
            clamped: list[int | str] = list(keys[:given])
            for key, number in enumerate(keys[given:], start=given):
                low, high = self._bounds(key, same)
                if isinstance(number, int):
                    number = max(low, number) if low is not None else number
                    number = min(high, number) if high is not None else number
                clamped.append(number)
            row = self._row(clamped)
            if row is not None:
                return row.value, tuple(clamped) != keys
        if self.otherwise is not None:
            return self.otherwise.value, False
        shown = ", ".join(map(str, keys))
        if not self.clamp:
            raise LookupError(f"{self.name}: {shown} is past its rows (it does not clamp)")
        raise LookupError(f"{self.name}: no row for {shown}")

    def roll_chain(self, rng: random.Random, modifier: int = 0, **given: int | str) -> list[Rolled[Any]]:
        """Roll here, then on every table the row names (in column order; `2 x treasure` twice), and so on to the
        end. The keys given (`region="forest"`) are given to every table of the chain that is rolled for them."""
        steps: list[Rolled[Any]] = []
        pending: list[tuple[Table[Any], int]] = [(self, modifier)]
        while pending:
            table, extra = pending.pop(0)
            if len(steps) >= MAX_CHAIN:
                raise RuntimeError(f"{self.name}: still rolling after {MAX_CHAIN} tables")
            names = table.dice.given if table.dice is not None else ()
            rolled = table.roll(rng, extra, **{n: given[n] for n in names if n in given})
            steps.append(rolled)
            following: list[tuple[Table[Any], int]] = []
            for column in table.chains:
                cell = getattr(rolled.row, column)
                if isinstance(cell, str):
                    following.append((table.registry[cell], 0))
                elif isinstance(cell, Rolls):
                    following += [(table.registry[cell.table], 0)] * cell.times
            pending[:0] = following
        return steps

    def chances(self, modifier: int = 0, **given: int | str) -> list[tuple[Row[R], Fraction]]:
        """Each row (for the keys given: `region="forest"`) with the exact chance that a roll (with this
        modifier) lands on it; where the table clamps, the first and last rows take what falls past them; the
        otherwise row, last, takes the rest."""
        roll = self.dice
        if roll is None:
            raise TypeError(f"{self.name} is not rolled on dice")
        values = self._given(given)
        rows = [r for r in self.rows if r.matches_given(values)]
        bounds = [self._bounds(key, rows) for key in range(len(values), len(values) + len(roll.dice))]
        result = []
        for row in rows:
            chance = Fraction(1)
            for index, key in enumerate(row.keys[len(values) : len(values) + len(roll.dice)]):
                if key.parity is not None:
                    chance *= roll.parity_chance(index, key.parity, modifier)
                    continue
                low, high = key.low, key.high
                if self.clamp:  # the ends take every result past them
                    low = None if low is not None and low == bounds[index][0] else low
                    high = None if high is not None and high == bounds[index][1] else high
                chance *= roll.chance(index, low, high, modifier)
            result.append((row, chance))
        if self.otherwise is not None:
            result.append((self.otherwise, 1 - sum((c for _, c in result), Fraction(0))))
        return result

    def chances_json(self, modifier: int = 0, **given: int | str) -> str:
        """`chances` as JSON text, the same as rules.js's `chancesJson`: `[[row keys, "n/d"], ...]`."""
        return to_json([[row.key_text, exact(chance)] for row, chance in self.chances(modifier, **given)])

    def __iter__(self) -> Iterator[Row[R]]:
        return iter(self.rows)


# ---------------------------------------------------------------- requirements

Names = Mapping[str, Mapping[str, str]]  # kind -> id -> display name
Verdict = bool | None  # None: unknown (a fact the check needs was not given)


class Facts(Protocol):
    """What requirements are judged against: the lifepaths taken before, and facts about the character.

    A fact that is None is unknown; a condition on it is neither met nor failed."""

    @property
    def previous(self) -> tuple[str, ...]: ...

    def fact(self, subject: str) -> int | str | None: ...

    def holds(self, kind: str, entity: str) -> Verdict:
        """Whether the character holds (or has done) that entity of that kind; None if not known."""
        ...

    def skills_of(self, lifepath: str) -> tuple[str, ...]: ...

    def setting_of(self, lifepath: str) -> str | None: ...

    def tags_of(self, lifepath: str) -> tuple[str, ...]: ...


@record
class Character(Value):
    """Facts to judge requirements on where no lifepaths are walked: what the character holds of each
    kind (ids; a kind left out is unknown, so a requirement on it is undecided) and facts by name
    (`age`, `gender`, ...; one left out is unknown too)."""

    held: Mapping[str, Collection[str]] = field(default_factory=dict)
    known: Mapping[str, int | str] = field(default_factory=dict)
    previous: tuple[str, ...] = ()

    def fact(self, subject: str) -> int | str | None:
        return self.known.get(subject)

    def holds(self, kind: str, entity: str) -> Verdict:
        if kind == "lifepath":
            return entity in self.previous
        held = self.held.get(kind)
        return None if held is None else entity in held

    def skills_of(self, lifepath: str) -> tuple[str, ...]:
        return ()

    def setting_of(self, lifepath: str) -> str | None:
        return None

    def tags_of(self, lifepath: str) -> tuple[str, ...]:
        return ()


def name_of(names: Names, kind: str, id_: str) -> str:
    return names.get(kind, {}).get(id_, id_)


class Requirement(Value):
    def judge(self, facts: Facts) -> Verdict:
        raise NotImplementedError

    def describe(self, names: Names) -> str:
        raise NotImplementedError


@record
class TookLifepath(Requirement):
    lifepath: str

    def judge(self, facts: Facts) -> Verdict:
        return self.lifepath in facts.previous

    def describe(self, names: Names) -> str:
        return name_of(names, "lifepath", self.lifepath)


@record
class HasTrait(Requirement):
    trait: str

    def judge(self, facts: Facts) -> Verdict:
        return facts.holds("trait", self.trait)

    def describe(self, names: Names) -> str:
        return f"the {name_of(names, 'trait', self.trait)} trait"


@record
class HasSkill(Requirement):
    skill: str

    def judge(self, facts: Facts) -> Verdict:
        return any(self.skill in facts.skills_of(lp) for lp in facts.previous)

    def describe(self, names: Names) -> str:
        return f"an earlier lifepath with the {name_of(names, 'skill', self.skill)} skill"


@record
class Holds(Requirement):
    """`career navy`: the character holds, or has done, that entity of that kind."""

    kind: str
    entity: str

    def judge(self, facts: Facts) -> Verdict:
        return facts.holds(self.kind, self.entity)

    def describe(self, names: Names) -> str:
        return f"the {name_of(names, self.kind, self.entity)} {self.kind.replace('_', ' ')}"


@record
class Previous(Requirement):
    lifepath: str

    def judge(self, facts: Facts) -> Verdict:
        return bool(facts.previous) and facts.previous[-1] == self.lifepath

    def describe(self, names: Names) -> str:
        return f"{name_of(names, 'lifepath', self.lifepath)} just before"


@record
class CountOf(Requirement):
    count: int
    setting: str | None = None
    tag: str | None = None
    lifepaths: tuple[str, ...] = ()

    def _selects(self, lifepath: str, facts: Facts) -> bool:
        if self.lifepaths and lifepath not in self.lifepaths:
            return False
        if self.setting is not None and facts.setting_of(lifepath) != self.setting:
            return False
        return self.tag is None or self.tag in facts.tags_of(lifepath)

    def judge(self, facts: Facts) -> Verdict:
        return sum(self._selects(lp, facts) for lp in facts.previous) >= self.count

    def describe(self, names: Names) -> str:
        what = "lifepath" + ("s" if self.count != 1 else "")
        if self.lifepaths:
            listed = ", ".join(name_of(names, "lifepath", i) for i in self.lifepaths)
            what = f"{what} among {listed}" if len(self.lifepaths) > 1 else f"{what}: {listed}"
        if self.setting is not None:
            what = f"{name_of(names, 'setting', self.setting)} {what}"
        if self.tag is not None:
            what = f"{what} tagged {self.tag}"
        return f"{'any' if self.count == 1 else self.count} {what}"


def _compare(op: str, fact: int | str, value: int | str) -> bool:
    if op == "=":
        return fact == value
    if op == "!=":
        return fact != value
    if isinstance(fact, str) or isinstance(value, str):
        return False  # names are only ever equal or not
    orders = {"<": fact < value, "<=": fact <= value, ">": fact > value, ">=": fact >= value}
    return orders[op]


@record
class Condition(Requirement):
    """`age > 50`, `position in 2..3`, `gender = female`, ..."""

    subject: str
    op: str = "="
    value: int | str | None = None
    low: int | None = None
    high: int | None = None

    def judge(self, facts: Facts) -> Verdict:
        fact = facts.fact(self.subject)
        if fact is None:
            return None
        if self.value is None:
            return (
                isinstance(fact, int)
                and (self.low is None or fact >= self.low)
                and (self.high is None or fact <= self.high)
            )
        return _compare(self.op, fact, self.value)

    def describe(self, names: Names) -> str:
        subject = self.subject.replace("_", " ")
        if self.value is None:
            return f"{subject} {'' if self.low is None else self.low}..{'' if self.high is None else self.high}"
        return f"{subject} {self.op} {self.value}"


@record
class GmPermission(Requirement):
    """Needs the GM's say-so: recorded and shown, never enforced."""

    def judge(self, facts: Facts) -> Verdict:
        return True

    def describe(self, names: Names) -> str:
        return "the GM's permission"


@record
class _Junction(Requirement):
    """All of / any of, three-valued: one decisive verdict settles it, else an unknown leaves it open."""

    items: tuple[Requirement, ...] = ()
    decisive: ClassVar[bool] = False
    word: ClassVar[str] = " and "

    def judge(self, facts: Facts) -> Verdict:
        verdicts = [item.judge(facts) for item in self.items]
        if self.decisive in verdicts:
            return self.decisive
        return None if None in verdicts else not self.decisive

    def describe(self, names: Names) -> str:
        return self.word.join(_group(item, names) for item in self.items)


@record
class AllOf(_Junction):
    decisive: ClassVar[bool] = False
    word: ClassVar[str] = " and "


@record
class AnyOf(_Junction):
    decisive: ClassVar[bool] = True
    word: ClassVar[str] = " or "


@record
class Not(Requirement):
    item: Requirement

    def judge(self, facts: Facts) -> Verdict:
        verdict = self.item.judge(facts)
        return None if verdict is None else not verdict

    def describe(self, names: Names) -> str:
        return f"not {_group(self.item, names)}"


def _group(item: Requirement, names: Names) -> str:
    text = item.describe(names)
    return f"({text})" if isinstance(item, _Junction) else text
