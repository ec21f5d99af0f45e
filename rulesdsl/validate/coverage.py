"""Table coverage: every combination of keys has exactly one row, in O(n log n) per key axis.

Each key is an axis. A numeric axis of a rolled table spans what its dice roll; otherwise an axis spans
what its rows name (the union of their ranges, or the set of names). The rows must partition the
product of the axes: a combination with no row is a gap, one with two rows an overlap. One key and no
dice can have no gaps by that rule, only overlaps: a lookup table may leave numbers out.

The check cuts the first axis into elementary segments (between the ends of the rows' ranges), takes
the rows over each segment, and checks them on the next axis; the last axis is a sorted sweep.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..diagnostics import Diagnostic, error
from ..ir import Dice, Entity, NameKey, Range, TableRow

_OPEN = 10**18  # an open end, as a number the sweep can compare
_MAX_REPORTED = 5  # gaps and overlaps named per table; the rest are counted


def key_text(key: Range | NameKey) -> str:
    if isinstance(key, NameKey):
        return key.text
    low, high = key.low, key.high
    if low is None:
        return f"<={high}"
    if high is None:
        return f"{low}+"
    return str(low) if low == high else f"{low}-{high}"


def row_text(row: TableRow) -> str:
    return ", ".join(key_text(k) for k in row.keys)


def runs(numbers: Sequence[tuple[int, int]]) -> str:
    """[(1, 3), (5, 5)] -> '1-3, 5'."""
    return ", ".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in numbers)


@dataclass(frozen=True, slots=True)
class _Segment:
    """A piece of one axis: a name, or the numbers low..high."""

    name: str | None
    low: int
    high: int

    @property
    def text(self) -> str:
        if self.name is not None:
            return self.name
        low = "" if self.low <= -_OPEN else str(self.low)
        high = "" if self.high >= _OPEN else str(self.high)
        if not low:
            return f"<={high}"
        if not high:
            return f"{low}+"
        return low if low == high else f"{low}-{high}"


def _span(key: Range | NameKey, bounds: tuple[int, int] | None) -> tuple[int, int] | None:
    """A numeric key as low..high, open ends closed by the dice (or left open); None for a name."""
    if isinstance(key, NameKey):
        return None
    low = key.low if key.low is not None else (bounds[0] if bounds else -_OPEN)
    high = key.high if key.high is not None else (bounds[1] if bounds else _OPEN)
    return low, high


@dataclass
class _Report:
    entity: Entity
    gaps: list[str]
    overlaps: dict[tuple[int, int], str]  # row pair -> where they first overlap


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    spans.sort()
    merged: list[tuple[int, int]] = []
    for low, high in spans:
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


def _segments(
    rows: Sequence[int], table: Sequence[TableRow], axis: int, domain: list[tuple[int, int]]
) -> Iterator[tuple[_Segment, list[int]]]:
    """The axis cut where any row's range starts or ends, with the rows over each piece."""
    names: dict[str, list[int]] = {}
    cuts: set[int] = set()
    for i in rows:
        key = table[i].keys[axis]
        if isinstance(key, NameKey):
            names.setdefault(key.text, []).append(i)
    for low, high in domain:
        cuts.update((low, high + 1))
    spans = {i: _span(table[i].keys[axis], None) for i in rows}
    for span in spans.values():
        if span is not None:
            cuts.update((span[0], span[1] + 1))
    edges = sorted(cuts)
    starts = sorted((span[0], i) for i, span in spans.items() if span is not None)
    active: list[int] = []
    position = 0
    for low, high_edge in itertools.pairwise(edges):
        high = high_edge - 1
        if not any(d_low <= low and high <= d_high for d_low, d_high in domain):
            continue
        while position < len(starts) and starts[position][0] <= low:
            active.append(starts[position][1])
            position += 1
        active = [i for i in active if spans[i] is not None and spans[i][1] >= low]  # type: ignore[index]
        yield _Segment(None, low, high), sorted(active)
    for name in sorted(names):
        yield _Segment(name, 0, 0), names[name]


def _sweep(
    rows: Sequence[int], table: Sequence[TableRow], domain: list[tuple[int, int]], where: str, report: _Report
) -> None:
    """The last axis: sort the rows' ranges and walk them once, naming overlaps and gaps."""
    axis = len(table[rows[0]].keys) - 1 if rows else 0
    spans = sorted((span[0], span[1], i) for i in rows if (span := _span(table[i].keys[axis], None)) is not None)
    names: dict[str, int] = {}
    for i in rows:
        key = table[i].keys[axis]
        if isinstance(key, NameKey):
            if key.text in names:
                pair = (names[key.text], i)
                report.overlaps.setdefault(pair, where + key.text)
            else:
                names[key.text] = i
    furthest: tuple[int, int] | None = None  # (high, row) of the row reaching furthest so far
    covered: list[tuple[int, int]] = []
    for low, high, i in spans:
        if furthest is not None and low <= furthest[0]:
            shared = _Segment(None, low, min(high, furthest[0])).text
            report.overlaps.setdefault((furthest[1], i), where + shared)
        if furthest is None or high > furthest[0]:
            furthest = (high, i)
        covered.append((low, high))
    covered = _merge(covered)
    for d_low, d_high in domain:
        cursor = d_low
        for low, high in covered:
            if high < cursor or low > d_high:
                continue
            if low > cursor:
                report.gaps.append(where + runs([(cursor, low - 1)]))
            cursor = max(cursor, high + 1)
        if cursor <= d_high:
            report.gaps.append(where + runs([(cursor, d_high)]))


def _check_axes(
    rows: list[int],
    table: Sequence[TableRow],
    axis: int,
    domains: Sequence[list[tuple[int, int]]],
    names: Sequence[set[str]],
    where: str,
    report: _Report,
) -> None:
    last = axis == len(domains) - 1
    if last:
        _sweep(rows, table, domains[axis], where, report)
        present = {table[i].keys[axis].text for i in rows if isinstance(table[i].keys[axis], NameKey)}  # type: ignore[union-attr]
        for missing in sorted(names[axis] - present):
            report.gaps.append(where + missing)
        return
    seen_names: set[str] = set()
    for segment, over in _segments(rows, table, axis, domains[axis]):
        if segment.name is not None:
            seen_names.add(segment.name)
        if not over:
            report.gaps.append(where + segment.text + ", *")
            continue
        _check_axes(over, table, axis + 1, domains, names, where + segment.text + ", ", report)
    for missing in sorted(names[axis] - seen_names):
        report.gaps.append(where + missing + ", *")


def check_coverage(entity: Entity, rolls: Sequence[Dice | None], roll_pos_field: str | None) -> list[Diagnostic]:
    """Gaps and overlaps of a table whose rows were all read. `rolls`: the dice of each key (or None)."""
    table = entity.rows
    if not table:
        return []
    width = len(table[0].keys)
    diagnostics: list[Diagnostic] = []
    domains: list[list[tuple[int, int]]] = []
    names: list[set[str]] = []
    usable = list(range(len(table)))
    for axis in range(width):
        dice = rolls[axis] if axis < len(rolls) else None
        axis_names = {k.text for r in table if isinstance(k := r.keys[axis], NameKey)}
        if dice is not None:
            bounds = (dice.low, dice.high)
            for i, row in enumerate(table):
                key = row.keys[axis]
                pos = entity.position("rows", i, "keys", axis)
                if isinstance(key, NameKey):
                    diagnostics.append(
                        error(
                            "E311",
                            f"row '{key.text}' has a name, but the table is rolled on {dice.text}",
                            pos,
                            "rolled tables are keyed by numbers and ranges",
                        )
                    )
                    continue
                span = _span(key, bounds)
                assert span is not None
                if span[1] < bounds[0] or span[0] > bounds[1]:
                    diagnostics.append(
                        error(
                            "E313",
                            f"row {key_text(key)} can never come up on {dice.text} ({bounds[0]}-{bounds[1]})",
                            pos,
                        )
                    )
                    if i in usable:
                        usable.remove(i)
                    continue
                beyond = [n for n in (key.low, key.high) if n is not None and not bounds[0] <= n <= bounds[1]]
                if beyond:
                    diagnostics.append(
                        error(
                            "E313",
                            f"row {key_text(key)} reaches {beyond[0]}, beyond what {dice.text} rolls "
                            f"({bounds[0]}-{bounds[1]})",
                            pos,
                        )
                    )
            domains.append([bounds])
            names.append(set())
        else:
            spans = [s for r in table if (s := _span(r.keys[axis], None)) is not None]
            domains.append(_merge(spans) if width > 1 else [])
            names.append(axis_names if width > 1 else set())
    if any(d.code == "E311" for d in diagnostics):
        return diagnostics
    report = _Report(entity, [], {})
    clipped = [_clip(table[i], domains) for i in usable]
    _check_axes(list(range(len(clipped))), clipped, 0, domains, names, "", report)
    for (first, second), shared in list(report.overlaps.items())[:_MAX_REPORTED]:
        a, b = table[usable[first]], table[usable[second]]
        code = "E312" if row_text(a) == row_text(b) else "E314"
        message = (
            f"two rows are keyed '{row_text(a)}'"
            if code == "E312"
            else f"rows {row_text(a)} and {row_text(b)} overlap on {shared}"
        )
        diagnostics.append(error(code, message, entity.position("rows", usable[second], "keys", 0)))
    if len(report.overlaps) > _MAX_REPORTED:
        diagnostics.append(
            error("E314", f"{len(report.overlaps) - _MAX_REPORTED} more overlapping rows", entity.position("rows"))
        )
    if report.gaps:
        shown = "; ".join(report.gaps[:_MAX_REPORTED]) + (
            f"; and {len(report.gaps) - _MAX_REPORTED} more" if len(report.gaps) > _MAX_REPORTED else ""
        )
        rolled = [d for d in rolls if d is not None]
        if width == 1 and rolled:
            dice = rolled[0]
            message = f"no row for {shown} ({dice.text} rolls {dice.low}-{dice.high})"
        else:
            message = f"no row for {shown}"
        diagnostics.append(
            error(
                "E315",
                message,
                entity.position(roll_pos_field) if roll_pos_field else entity.id_pos,
                "add rows so that every result of the dice has exactly one row"
                if rolled
                else "every combination of keys needs exactly one row",
            )
        )
    return diagnostics


def _clip(row: TableRow, domains: Sequence[list[tuple[int, int]]]) -> TableRow:
    """Open ends closed at the edge of the axis (a `10+` row on 1d10 covers 10 only)."""
    keys: list[Range | NameKey] = []
    for key, domain in zip(row.keys, domains, strict=True):
        if isinstance(key, Range) and domain:
            low = key.low if key.low is not None else min(d[0] for d in domain)
            high = key.high if key.high is not None else max(d[1] for d in domain)
            keys.append(Range(low, high, key.pos))
        else:
            keys.append(key)
    return TableRow(tuple(keys), row.cells, row.source, row.pos)
