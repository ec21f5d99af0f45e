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
from dataclasses import dataclass, replace

from rulesdsl.compile.ir import Entity, NameKey, ParityKey, Range, Roll, TableRow, key_text
from rulesdsl.compile.ir import row_text as ir_row_text
from rulesdsl.diagnostics import Diagnostic, error, warning
from rulesdsl.syntax.tree import Position

_OPEN = 10**18  # an open end, as a number the sweep can compare
_MAX_REPORTED = 5  # gaps and overlaps named per table; the rest are counted


def row_text(row: TableRow) -> str:
    return ir_row_text(row)


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


def _span(key: Range | NameKey | ParityKey, bounds: tuple[int, int] | None) -> tuple[int, int] | None:
    """A numeric key as low..high, open ends closed by the dice (or left open); None for a name."""
    if not isinstance(key, Range):
        return None
    low = key.low if key.low is not None else (bounds[0] if bounds else -_OPEN)
    high = key.high if key.high is not None else (bounds[1] if bounds else _OPEN)
    return low, high


@dataclass
class _Report:
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


def _pieces(row: TableRow, domains: Sequence[list[tuple[int, int]]]) -> list[TableRow]:
    """A row with open ends closed at the edge of each axis (a `10+` row on 1d10 covers 10 only), and
    an `odd`/`even` key cut into the numbers of that parity the axis can come up as."""
    options: list[list[Range | NameKey]] = []
    for key, domain in zip(row.keys, domains, strict=True):
        if isinstance(key, ParityKey):
            wanted = 1 if key.odd else 0
            options.append([Range(n, n, key.pos) for lo, hi in domain for n in range(lo, hi + 1) if n % 2 == wanted])
        elif isinstance(key, Range) and domain:
            low = key.low if key.low is not None else min(d[0] for d in domain)
            high = key.high if key.high is not None else max(d[1] for d in domain)
            options.append([Range(low, high, key.pos)])
        else:
            options.append([key])
    return [TableRow(tuple(keys), row.cells, row.source, row.pos) for keys in itertools.product(*options)]


def _reachable(
    key: Range | NameKey | ParityKey, spans: list[tuple[int, int]], roll: Roll, pos: Position
) -> list[Diagnostic]:
    """E311/E313: a rolled key that is a name, that can never come up, or that reaches past the dice."""
    shown = roll.range_text(0) if len(roll.dice) == 1 else ", ".join(f"{lo}-{hi}" for lo, hi in spans)
    if isinstance(key, NameKey):
        return [
            error(
                "E311",
                f"row '{key.text}' has a name, but the table is rolled on {roll.text}",
                pos,
                "rolled tables are keyed by numbers and ranges (and odd or even)",
            )
        ]
    if isinstance(key, ParityKey):
        return []
    low, high = spans[0][0], spans[-1][1]
    span = _span(key, (low, high))
    assert span is not None
    if not any(span[0] <= hi and lo <= span[1] for lo, hi in spans):
        message = f"row {key_text(key)} can never come up on {roll.text} ({shown})"
        return [error("E313", message, pos, f"key it by what {roll.text} rolls ({shown}), or remove the row")]
    beyond = [n for n in (key.low, key.high) if n is not None and not low <= n <= high]
    if beyond:
        start = low if key.low is None else max(key.low, low)
        end = high if key.high is None else min(key.high, high)
        fixed = f"{start}" if start == end else f"{start}-{end}"
        message = f"row {key_text(key)} reaches {beyond[0]}, beyond what {roll.text} rolls ({shown})"
        return [error("E313", message, pos, f"write {fixed}")]
    return []


def _named(row: TableRow) -> TableRow:
    """The row with each name key as what it matches: a reference by its id (`Human` and `human` are one)."""
    if not any(isinstance(k, NameKey) and k.ref is not None for k in row.keys):
        return row
    keys = tuple(NameKey(k.name, k.pos) if isinstance(k, NameKey) else k for k in row.keys)
    return TableRow(keys, row.cells, row.source, row.pos)


def _clamped(
    spans: list[tuple[int, int]], unmodified: list[tuple[int, int]], keys: list[Range]
) -> list[tuple[int, int]]:
    """What rows a clamping table needs on a rolled key: every number the dice roll unmodified, and every
    number between its lowest and highest row; a modifier's results past those land on the first or last row."""
    low = min([unmodified[0][0], *(k.low if k.low is not None else -_OPEN for k in keys)])
    high = max([unmodified[-1][1], *(k.high if k.high is not None else _OPEN for k in keys)])
    return [(max(lo, low), min(hi, high)) for lo, hi in spans if lo <= high and hi >= low]


def check_coverage(
    entity: Entity,
    roll: Roll | None,
    roll_pos_field: str | None,
    *,
    clamp: bool = False,
    every: Sequence[frozenset[str] | None] = (),
) -> list[Diagnostic]:
    """Gaps and overlaps of a table whose rows were all read; `roll`: its dice (one per key after the keys it is
    given, from the first). `clamp`: results past the rows land on the first or last (rows are needed only for
    what the dice roll unmodified). `every`: per key, every name it can take (the ids of a `ref KIND` key; None:
    open), to tell whether an `otherwise` row can ever be reached (W320)."""
    original = [i for i, row in enumerate(entity.rows) if not row.otherwise]
    table = [_named(entity.rows[i]) for i in original]
    otherwise = next((row for row in entity.rows if row.otherwise), None)
    if not table:
        return []
    width = len(table[0].keys)
    given = len(roll.given) if roll is not None else 0
    if roll is not None and given + len(roll.dice) < width:
        # a key no die rolls would be matched by any number: every row would come up every time
        dice = f"{len(roll.dice)} {'die' if len(roll.dice) == 1 else 'dice'}"
        return [
            error(
                "E319",
                f"the table has {width} keys but is rolled on {dice}" + (f" and given {given}" if given else ""),
                roll.pos,
                "roll a die per key: roll: 1d6, 1d6 (or leave out the roll to look the table up by its keys)",
            )
        ]
    diagnostics: list[Diagnostic] = []
    domains: list[list[tuple[int, int]]] = []
    names: list[set[str]] = []
    usable = list(range(len(table)))
    for axis in range(width):
        if roll is not None and axis >= given:
            spans = roll.spans(axis - given)
            for i, row in enumerate(table):
                found = _reachable(row.keys[axis], spans, roll, entity.position("rows", original[i], "keys", axis))
                diagnostics += found
                if any(d.message.startswith("row") and "never" in d.message for d in found) and i in usable:
                    usable.remove(i)
            if clamp:
                unmodified = replace(roll, modifier=None).spans(axis - given)
                spans = _clamped(spans, unmodified, [k for r in table if isinstance(k := r.keys[axis], Range)])
            domains.append(spans)
            names.append(set())
        else:
            found_spans = [s for r in table if (s := _span(_plain(r.keys[axis]), None)) is not None]
            domains.append(_merge(found_spans) if width > 1 else [])
            names.append({k.text for r in table if isinstance(k := r.keys[axis], NameKey)} if width > 1 else set())
    if any(d.code == "E311" for d in diagnostics):
        return diagnostics
    report = _Report([], {})
    pieces: list[TableRow] = []
    origin: list[int] = []
    for i in usable:
        for piece in _pieces(table[i], domains):
            pieces.append(piece)
            origin.append(i)
    _check_axes(list(range(len(pieces))), pieces, 0, domains, names, "", report)
    pairs = list(dict.fromkeys((origin[a], origin[b], shared) for (a, b), shared in report.overlaps.items()))
    for first, second, shared in pairs[:_MAX_REPORTED]:
        a, b = table[first], table[second]
        where = entity.position("rows", original[second], "keys", 0)
        first_text, second_text = row_text(entity.rows[original[first]]), row_text(entity.rows[original[second]])
        if row_text(a) == row_text(b):
            hint = "keep one of them, or key one of them otherwise"
            diagnostics.append(error("E312", f"two rows are keyed '{second_text}'", where, hint))
        else:
            message = f"rows {first_text} and {second_text} overlap on {shared}"
            hint = f"a result keys one row: take {shared} out of {first_text} or out of {second_text}"
            diagnostics.append(error("E314", message, where, hint))
    if len(pairs) > _MAX_REPORTED:
        message = f"{len(pairs) - _MAX_REPORTED} more overlapping rows"
        diagnostics.append(
            error("E314", message, entity.position("rows"), "a result keys one row: fix those above first")
        )
    if otherwise is not None:
        # the gaps are otherwise's; where there can be none, it is never reached
        if _full(pieces, domains, every, roll is not None, given):
            what = "result of the dice" if width == 1 and roll is not None else "combination of keys"
            diagnostics.append(
                warning(
                    "W320",
                    f"'otherwise' is never reached: the other rows already cover every {what}",
                    otherwise.pos,
                    "remove the otherwise row (or the rows it is meant to stand for)",
                )
            )
        return diagnostics
    if report.gaps:
        shown = "; ".join(report.gaps[:_MAX_REPORTED]) + (
            f"; and {len(report.gaps) - _MAX_REPORTED} more" if len(report.gaps) > _MAX_REPORTED else ""
        )
        if width == 1 and roll is not None:
            message = f"no row for {shown} ({roll.text} rolls {_shown_range(domains[0])})"
        else:
            message = f"no row for {shown}"
        diagnostics.append(
            error(
                "E315",
                message,
                entity.position(roll_pos_field) if roll_pos_field else entity.id_pos,
                "add rows so that every result of the dice has exactly one row"
                if roll is not None
                else "every combination of keys needs exactly one row",
            )
        )
    return diagnostics


def _shown_range(spans: list[tuple[int, int]]) -> str:
    return ", ".join(f"{lo}-{hi}" for lo, hi in spans)


def _full(
    pieces: list[TableRow],
    domains: Sequence[list[tuple[int, int]]],
    every: Sequence[frozenset[str] | None],
    rolled: bool,
    given: int,
) -> bool:
    """Whether the rows leave nothing to look up or roll: every key is rolled or names a kind (all of whose
    entities then have rows), and no combination of them lacks a row."""
    closed_names: list[set[str]] = []
    for axis in range(len(domains)):
        if rolled and axis >= given:
            closed_names.append(set())
        elif axis < len(every) and every[axis] is not None:
            closed_names.append(set(every[axis] or ()))
        else:
            return False  # numbers or free names: something can always be looked up that no row has
    report = _Report([], {})
    closed = [d if rolled and axis >= given else [] for axis, d in enumerate(domains)]
    _check_axes(list(range(len(pieces))), pieces, 0, closed, closed_names, "", report)
    return not report.gaps


def _plain(key: Range | NameKey | ParityKey) -> Range | NameKey:
    """Keys of unrolled axes: parity only exists on rolled ones."""
    return key if not isinstance(key, ParityKey) else NameKey("odd" if key.odd else "even", key.pos)
