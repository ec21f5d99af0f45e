"""Exact odds of dice algebra (standard library only; copied verbatim into every generated package).

A roll's spread is either finite (how many of its equally likely outcomes give each total) or, once a die
explodes, a series with no highest total: the chances are the coefficients of a rational generating function
top(z) / bottom(z), read one total at a time by the recurrence its bottom gives. Every operation of the
algebra (adding, multiplying or dividing by a whole number, keeping the highest or lowest dice, bounding)
works on spreads, never on enumerated rolls, and counts its work against a budget: past it, OddsTooCostly.
"""

from __future__ import annotations

import math
from fractions import Fraction

from .records import Value, record

# The work one spread may take (additions of counts); a book's rolls take a few thousand. The compiler
# refuses a roll past it where it is written (E211), so only dice a formula builds at run time can meet it.
MAX_WORK = 2_000_000
# How far into an exploding roll's endless tail a chance is read: totals past its lowest.
MAX_TAIL = 10_000


class OddsTooCostly(ValueError):
    """The exact odds of this roll would take more work than MAX_WORK (or read past MAX_TAIL)."""


@record
class Finite(Value):
    """Totals -> how many of `outcomes` equally likely rolls give them."""

    ways: tuple[tuple[int, int], ...]  # (total, ways), ascending
    outcomes: int

    @property
    def low(self) -> int:
        return self.ways[0][0]

    @property
    def high(self) -> int:
        return self.ways[-1][0]


@record
class Series(Value):
    """A roll with no highest total: P(low + i) is coefficient i of top(z) / bottom(z) (bottom[0] != 0)."""

    low: int
    top: tuple[Fraction, ...]
    bottom: tuple[Fraction, ...]


Spread = Finite | Series


def _finite(counts: dict[int, int], outcomes: int) -> Finite:
    return Finite(tuple(sorted((t, w) for t, w in counts.items() if w)), outcomes)


def constant(value: int) -> Finite:
    return Finite(((value, 1),), 1)


def _charge(work: int) -> None:
    if work > MAX_WORK:
        raise OddsTooCostly(f"the exact odds of this roll take about {work:,} steps; at most {MAX_WORK:,}")


def plain(count: int, sides: int) -> Finite:
    """`count` dice of `sides` sides added up (one die at a time: a sliding sum over the totals so far)."""
    _charge(count * count * sides)
    ways = [1]
    for _ in range(count):
        result, running = [0] * (len(ways) + sides - 1), 0
        for i in range(len(result)):
            running += ways[i] if i < len(ways) else 0
            running -= ways[i - sides] if i >= sides else 0
            result[i] = running
        ways = result
    return Finite(tuple((count + i, w) for i, w in enumerate(ways) if w), sides**count)


def keep_work(count: int, sides: int, keep: int) -> int:
    """The work `kept` takes: faces x dice placed x kept totals x dice showing a face."""
    return sides * keep * (keep * sides + 1) * (count + 1)


def kept(count: int, sides: int, keep: int, lowest: bool) -> Finite:
    """The `keep` highest (or lowest) of `count` dice. Faces are placed from the highest down: how many dice
    show each face, with the multinomial ways; once `keep` dice are placed the rest only have to show less."""
    _charge(keep_work(count, sides, keep))
    final: dict[int, int] = {}
    states: dict[tuple[int, int], int] = {(0, 0): 1}  # (dice placed, their total) -> ways, while fewer than keep
    for face in range(sides, 0, -1):
        following: dict[tuple[int, int], int] = {}
        for (placed, total), ways in states.items():
            left = count - placed
            for showing in range(left + 1):
                here = ways * math.comb(left, showing)
                if placed + showing >= keep:
                    kept_total = total + (keep - placed) * face
                    final[kept_total] = final.get(kept_total, 0) + here * (face - 1) ** (left - showing)
                else:
                    key = (placed + showing, total + showing * face)
                    following[key] = following.get(key, 0) + here
        states = following
    if lowest:  # the lowest of the dice are the highest of the dice turned over (a face f read as sides+1-f)
        final = {keep * (sides + 1) - t: w for t, w in final.items()}
    return _finite(final, sides**count)


def exploding(sides: int) -> Series:
    """One die that is rolled again and added while it shows its highest face: P(t) = 1/sides for t below
    it, and P(sides + t) = P(t) / sides."""
    chance = Fraction(1, sides)
    return Series(1, (chance,) * (sides - 1), (Fraction(1),) + (Fraction(0),) * (sides - 1) + (-chance,))


def _multiply(a: tuple[Fraction, ...], b: tuple[Fraction, ...]) -> tuple[Fraction, ...]:
    _charge(len(a) * len(b))
    result = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                result[i + j] += x * y
    return tuple(result)


def _as_series(spread: Finite) -> Series:
    low = spread.low
    top = [Fraction(0)] * (spread.high - low + 1)
    for total, ways in spread.ways:
        top[total - low] = Fraction(ways, spread.outcomes)
    return Series(low, tuple(top), (Fraction(1),))


def add(a: Spread, b: Spread) -> Spread:
    """The spread of two independent rolls added together."""
    if isinstance(a, Finite) and isinstance(b, Finite):
        _charge(len(a.ways) * len(b.ways))
        counts: dict[int, int] = {}
        for x, u in a.ways:
            for y, v in b.ways:
                counts[x + y] = counts.get(x + y, 0) + u * v
        return _finite(counts, a.outcomes * b.outcomes)
    first = a if isinstance(a, Series) else _as_series(a)
    second = b if isinstance(b, Series) else _as_series(b)
    top, bottom = _multiply(first.top, second.top), _multiply(first.bottom, second.bottom)
    return Series(first.low + second.low, top, bottom)


def scale(spread: Spread, factor: int) -> Spread:
    """Every total times a whole number (`3d6 * 5`; -1 to take a roll away)."""
    if isinstance(spread, Finite):
        return _finite({t * factor: w for t, w in spread.ways}, spread.outcomes)
    if factor < 1:
        raise ValueError("an exploding roll has no highest total, so it cannot be taken away or turned over")

    def spaced(poly: tuple[Fraction, ...]) -> tuple[Fraction, ...]:
        result = [Fraction(0)] * ((len(poly) - 1) * factor + 1)
        result[::factor] = poly
        return tuple(result)

    return Series(spread.low * factor, spaced(spread.top), spaced(spread.bottom))


def divide(spread: Spread, divisor: int) -> Spread:
    """Every total divided by a whole number, rounded down (`1d6 / 2`)."""
    if isinstance(spread, Finite):
        counts: dict[int, int] = {}
        for total, ways in spread.ways:
            counts[total // divisor] = counts.get(total // divisor, 0) + ways
        return _finite(counts, spread.outcomes)
    raise ValueError("an exploding roll has no highest total, so it cannot be divided")


def bound(spread: Spread, low: int | None, high: int | None) -> Spread:
    """`max(low, roll)` and `min(high, roll)`: totals past a bound count as the bound."""
    if low is not None and high is not None and low > high:
        return constant(high)
    if isinstance(spread, Finite):
        counts: dict[int, int] = {}
        for total, ways in spread.ways:
            here = max(low, total) if low is not None else total
            here = min(high, here) if high is not None else here
            counts[here] = counts.get(here, 0) + ways
        return _finite(counts, spread.outcomes)
    if high is not None:  # an endless tail cut off: every total from `high` on is `high`
        below = head(spread, high - 1)
        denominator = math.lcm(*(c.denominator for c in below.values())) if below else 1
        counts = {t: int(c * denominator) for t, c in below.items()}
        rest = denominator - sum(counts.values())
        capped = _finite({**counts, high: rest}, denominator)
        return bound(capped, low, None) if low is not None else capped
    if low is None or low <= spread.low:
        return spread
    # the head below `low` is moved onto `low`: top - bottom * head + (its mass) * z^(low - spread.low) * bottom
    coefficients = _coefficients(spread, low - spread.low - 1)
    moved = list(_multiply(spread.bottom, tuple(coefficients)))
    top = list(spread.top) + [Fraction(0)] * max(0, len(moved) - len(spread.top))
    for i, c in enumerate(moved):
        top[i] -= c
    mass = [Fraction(0)] * (low - spread.low) + [sum(coefficients, Fraction(0)) * b for b in spread.bottom]
    top += [Fraction(0)] * max(0, len(mass) - len(top))
    for i, c in enumerate(mass):
        top[i] += c
    shift = low - spread.low  # the new series starts at `low`: its first `shift` coefficients are now 0
    while len(top) > 1 and top[-1] == 0:
        top.pop()
    return Series(low, tuple(top[shift:]), spread.bottom) if all(c == 0 for c in top[:shift]) else spread


_SERIES_CACHE: dict[Series, list[Fraction]] = {}


def _coefficients(spread: Series, last: int) -> list[Fraction]:
    """The chances of totals low .. low + last, by the recurrence bottom(z) * P(z) = top(z)."""
    if last < 0:
        return []
    if last > MAX_TAIL:
        raise OddsTooCostly(f"the odds {last:,} totals into an exploding roll; at most {MAX_TAIL:,} are read")
    known = _SERIES_CACHE.get(spread)
    if known is None:
        if len(_SERIES_CACHE) >= 32:
            _SERIES_CACHE.clear()
        known = _SERIES_CACHE[spread] = []
    top, bottom = spread.top, spread.bottom
    _charge(last * len(bottom))
    while len(known) <= last:
        i = len(known)
        value = top[i] if i < len(top) else Fraction(0)
        for k in range(1, min(i, len(bottom) - 1) + 1):
            if bottom[k]:
                value -= bottom[k] * known[i - k]
        known.append(value / bottom[0])
    return known[: last + 1]


def head(spread: Spread, up_to: int) -> dict[int, Fraction]:
    """The chance of every total up to `up_to` (every total, when the roll has a highest)."""
    if isinstance(spread, Finite):
        return {t: Fraction(w, spread.outcomes) for t, w in spread.ways if t <= up_to}
    found = _coefficients(spread, up_to - spread.low)
    return {spread.low + i: c for i, c in enumerate(found) if c}


def at_most(spread: Spread, total: int) -> Fraction:
    if isinstance(spread, Finite):
        return Fraction(sum(w for t, w in spread.ways if t <= total), spread.outcomes)
    return sum(_coefficients(spread, total - spread.low), Fraction(0))
