"""The leads between the settings of a stock, drawn at build time as inline SVG (no external program,
no script), with the same leads as a list for narrow screens. Every node is a link.

The drawing is layered (Sugiyama's method, deterministic): cycles are broken by the Eades-Lin-Smith
ordering, settings are put in columns by the longest path that reaches them (so a setting sits next to
the ones it leads to), an edge spanning several columns passes through placeholder points, the order in
each column minimises crossings by barycentric sweeps (the best order seen is kept), and the heights
follow the neighbours (isotonic regression keeps the order and the spacing). Labels are never cut: a
long one wraps. Text widths are estimated (no fonts are measured), so boxes are generous. (A lifepath's
own graph is drawn by site.js, in the same style, when a reader opens it: thousands of drawings would
weigh more than the pages.)
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from itertools import pairwise

from markupsafe import Markup, escape

CHAR = 7.2  # estimated width of a character at the graphs' font size (12px), generous
LINE_H = 15.0  # one line of a label
BOX_PAD_Y = 6.0
PAD = 10.0
WRAP = 20  # characters on a label's line before it wraps (a longer word stays whole)
GAP_X = 56.0  # between columns
GAP_Y = 14.0  # between boxes in a column
DUMMY_H = 8.0  # the room an edge passing through a column takes
SWEEPS = 12
MOST = 3  # a dense graph draws each node's MOST heaviest leads (the list has them all)


@dataclass(frozen=True, slots=True)
class Node:
    key: str
    label: str
    href: str  # placeholder or relative link
    css: str = ""  # "member", "outside", ...


@dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str
    weight: int  # how many lifepaths make it
    title: str
    dashed: bool = False


def wrap(label: str) -> list[str]:
    """A label's lines: words joined while they fit in WRAP characters; nothing is cut."""
    lines: list[str] = []
    for word in label.split():
        if lines and len(lines[-1]) + 1 + len(word) <= WRAP:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [""]


def _size(label: str) -> tuple[float, float]:
    lines = wrap(label)
    return max(len(line) for line in lines) * CHAR + 2 * PAD, len(lines) * LINE_H + 2 * BOX_PAD_Y


def _n(value: float) -> str:
    """Coordinates to one decimal, without trailing zeros: small and deterministic."""
    text = f"{value:.1f}"
    text = "0.0" if text == "-0.0" else text
    return text[:-2] if text.endswith(".0") else text


# ---------------------------------------------------------------- layout


@dataclass(frozen=True, slots=True)
class _Line:
    """One drawn line: from `first` to `last` (in column order) through placeholder points `via`; `ahead`
    is an arrowhead at `last`, `back` one at `first` (an edge reversed to break a cycle, or both ways)."""

    owner: str  # the node whose group holds it (the edge's source)
    first: str
    last: str
    via: tuple[str, ...]
    ahead: bool
    back: bool
    edge: Edge


def _feedback_order(keys: list[str], weights: dict[tuple[str, str], int]) -> dict[str, int]:
    """Eades-Lin-Smith: an order of the nodes with few (light) edges pointing backwards; ties by input order.

    In passes over the nodes left, in input order, a sink goes last and (else) a source goes first, until a
    pass takes none; then the node with the largest out-weight minus in-weight goes first (the first such on
    ties), and passes begin again. Near-linear: degrees are kept as nodes go, a pass visits only the nodes
    that have become sinks or sources (by index: one found behind the pass waits for the next), and the
    largest difference comes from a heap whose stale entries are dropped when seen."""
    index = {key: i for i, key in enumerate(keys)}
    out_w = dict.fromkeys(keys, 0)
    in_w = dict.fromkeys(keys, 0)
    outgoing: dict[str, list[tuple[str, int]]] = {key: [] for key in keys}
    incoming: dict[str, list[tuple[str, int]]] = {key: [] for key in keys}
    for (a, b), w in weights.items():
        if a in index and b in index:
            out_w[a] += w
            in_w[b] += w
            outgoing[a].append((b, w))
            incoming[b].append((a, w))
    left = set(keys)
    head: list[str] = []
    tail: list[str] = []  # reversed at the end: each sink goes before the ones found earlier
    biggest = [(in_w[k] - out_w[k], index[k]) for k in keys]  # heapq is a min-heap: the difference negated
    heapq.heapify(biggest)
    this_pass = [index[k] for k in keys if out_w[k] == 0 or in_w[k] == 0]
    heapq.heapify(this_pass)
    next_pass: list[int] = []

    def remove(key: str, at: int) -> None:
        """Take `key` (visited at index `at`); the nodes it makes sinks or sources wait for their visit."""
        left.discard(key)
        touched = []
        for b, w in outgoing[key]:
            if b in left:
                in_w[b] -= w
                touched.append(b)
        for a, w in incoming[key]:
            if a in left:
                out_w[a] -= w
                touched.append(a)
        for k in touched:
            heapq.heappush(biggest, (in_w[k] - out_w[k], index[k]))
            if out_w[k] == 0 or in_w[k] == 0:
                heapq.heappush(this_pass if index[k] > at else next_pass, index[k])

    while left:
        changed = True
        while changed:
            changed = False
            while this_pass:
                at = heapq.heappop(this_pass)
                key = keys[at]
                if key not in left:
                    continue
                if out_w[key] == 0:  # a sink goes last
                    tail.append(key)
                else:  # a source goes first (only sinks and sources are queued, and degrees only fall)
                    head.append(key)
                remove(key, at)
                changed = True
            this_pass, next_pass = next_pass, []
        if left:
            while True:
                difference, at = heapq.heappop(biggest)
                key = keys[at]
                if key in left and difference == in_w[key] - out_w[key]:
                    break
            head.append(key)
            remove(key, -1)  # the nodes it makes sinks or sources: the next round of passes, from the first
    return {key: i for i, key in enumerate(head + tail[::-1])}


def _crossings(layers: list[list[str]], links: list[tuple[str, str]], position: dict[str, int]) -> int:
    """How many pairs of links between the same two columns cross: per column, the inversions of the far
    ends' places once the links are sorted by their near ends (a merge sort: n log n, not n squared)."""
    total = 0
    by_layer: dict[int, list[tuple[int, int]]] = {}
    layer_of = {key: i for i, layer in enumerate(layers) for key in layer}
    for a, b in links:
        by_layer.setdefault(layer_of[a], []).append((position[a], position[b]))
    for pairs in by_layer.values():
        pairs.sort()  # by near end, then far end: links sharing an end are never counted
        total += _inversions([b for _, b in pairs])
    return total


def _inversions(values: list[int]) -> int:
    """Pairs i < j with values[i] > values[j]; sorts `values`."""
    if len(values) < 2:
        return 0
    middle = len(values) // 2
    first, second = values[:middle], values[middle:]
    count = _inversions(first) + _inversions(second)
    i = j = 0
    for k in range(len(values)):
        if j == len(second) or (i < len(first) and first[i] <= second[j]):
            values[k] = first[i]
            i += 1
        else:
            values[k] = second[j]
            count += len(first) - i
            j += 1
    return count


def _isotonic(wanted: list[float], spacing: list[float]) -> list[float]:
    """Positions as near `wanted` as possible (least squares) keeping order and `spacing[i]` between i and i+1."""
    offsets = [0.0]
    for gap in spacing:
        offsets.append(offsets[-1] + gap)
    blocks: list[list[float]] = []  # [mean, count]
    for value in (w - o for w, o in zip(wanted, offsets, strict=True)):
        blocks.append([value, 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            mean, count = blocks.pop()
            blocks[-1] = [
                (blocks[-1][0] * blocks[-1][1] + mean * count) / (blocks[-1][1] + count),
                blocks[-1][1] + count,
            ]
    flat = [mean for mean, count in blocks for _ in range(int(count))]
    return [value + offset for value, offset in zip(flat, offsets, strict=True)]


@dataclass(frozen=True, slots=True)
class Layout:
    layers: list[list[str]]  # node keys and placeholder points ("\0" + n) by column, in drawing order
    places: dict[str, tuple[float, float]]  # centres
    sizes: dict[str, tuple[float, float]]
    lines: list[_Line]
    crossings: int


def layout(nodes: list[Node], edges: list[Edge]) -> Layout:
    """Columns, orders and places; deterministic for the same nodes and edges in the same order."""
    keys = [n.key for n in nodes]
    sizes = {n.key: _size(n.label) for n in nodes}
    pairs = {(e.source, e.target) for e in edges}
    drawn = [
        e for e in edges if e.source != e.target and not ((e.target, e.source) in pairs and e.source > e.target)
    ]  # self-loops are not drawn; a pair both ways is one line with two heads
    weights: dict[tuple[str, str], int] = {}
    for e in drawn:
        weights[(e.source, e.target)] = weights.get((e.source, e.target), 0) + e.weight
        if (e.target, e.source) in pairs:
            weights[(e.target, e.source)] = weights[(e.source, e.target)]
    order = _feedback_order(keys, weights)
    forward = [(e, order[e.source] < order[e.target]) for e in drawn]
    before: dict[str, list[str]] = {}  # each node's neighbours earlier in the order
    for e, ahead in forward:
        before.setdefault(e.target if ahead else e.source, []).append(e.source if ahead else e.target)
    layer: dict[str, int] = {}
    for key in sorted(keys, key=order.__getitem__):  # longest path, in an order where every edge points on
        layer[key] = max([layer[k] + 1 for k in before.get(key, ())] + [0])
    layers: list[list[str]] = [[] for _ in range(max(layer.values(), default=0) + 1)]
    for key in keys:
        layers[layer[key]].append(key)
    lines: list[_Line] = []
    links: list[tuple[str, str]] = []  # between neighbouring columns, for the crossings
    for number, (e, ahead) in enumerate(forward):
        first, last = (e.source, e.target) if ahead else (e.target, e.source)
        via = tuple(f"\0{number}.{c}" for c in range(layer[first] + 1, layer[last]))
        for point, column in zip(via, range(layer[first] + 1, layer[last]), strict=True):
            layers[column].append(point)
            sizes[point] = (0.0, DUMMY_H)
        chain = [first, *via, last]
        links += list(pairwise(chain))
        both = (e.target, e.source) in pairs
        lines.append(_Line(e.source, first, last, via, ahead or both, not ahead or both, e))
    best, best_crossings = _minimise(layers, links)
    return Layout(best, _places(best, links, sizes), sizes, lines, best_crossings)


def _by_barycentre(column: list[str], neighbours: dict[str, list[str]], at: dict[str, int]) -> list[str]:
    """A column sorted by the mean position of each one's neighbours in the column swept from (a node with
    none keeps its place); ties keep the current order."""

    def centre(key: str) -> float:
        near = neighbours.get(key, [])
        return sum(at[k] for k in near) / len(near) if near else float(at[key])

    return sorted(column, key=lambda k: (centre(k), at[k]))


def _minimise(layers: list[list[str]], links: list[tuple[str, str]]) -> tuple[list[list[str]], int]:
    """Barycentric sweeps down and up the columns; the order with the fewest crossings seen wins (the first
    such on ties)."""
    current = [list(column) for column in layers]
    before: dict[str, list[str]] = {}
    after: dict[str, list[str]] = {}
    for a, b in links:
        after.setdefault(a, []).append(b)
        before.setdefault(b, []).append(a)

    at = {key: i for column in current for i, key in enumerate(column)}  # kept up to date column by column
    best = [list(column) for column in current]
    best_crossings = _crossings(current, links, at)
    for sweep in range(SWEEPS):
        down = sweep % 2 == 0
        columns = range(1, len(current)) if down else range(len(current) - 2, -1, -1)
        for c in columns:
            current[c] = _by_barycentre(current[c], before if down else after, at)
            at.update((key, i) for i, key in enumerate(current[c]))
        count = _crossings(current, links, at)
        if count < best_crossings:
            best, best_crossings = [list(column) for column in current], count
    return best, best_crossings


def _places(
    layers: list[list[str]], links: list[tuple[str, str]], sizes: dict[str, tuple[float, float]]
) -> dict[str, tuple[float, float]]:
    """Columns side by side, each as wide as its widest box; heights drawn towards the neighbours."""
    places: dict[str, tuple[float, float]] = {}
    x = 0.0
    neighbours: dict[str, list[str]] = {}
    for a, b in links:
        neighbours.setdefault(a, []).append(b)
        neighbours.setdefault(b, []).append(a)
    spacing = [[(sizes[a][1] + sizes[b][1]) / 2 + GAP_Y for a, b in pairwise(column)] for column in layers]
    ys: dict[str, float] = {}
    for column, gaps in zip(layers, spacing, strict=True):
        y = 0.0
        for i, key in enumerate(column):
            ys[key] = y
            y += gaps[i] if i < len(gaps) else 0.0
    tallest = max((ys[c[-1]] for c in layers if c), default=0.0)
    for column in layers:  # centred to start with
        if column:
            shift = (tallest - ys[column[-1]]) / 2
            for key in column:
                ys[key] += shift
    for _ in range(4):  # then towards the neighbours, keeping order and spacing
        for column, gaps in zip(layers, spacing, strict=True):
            if not column:
                continue
            wanted = [
                sum(ys[k] for k in neighbours[key]) / len(neighbours[key]) if neighbours.get(key) else ys[key]
                for key in column
            ]
            for key, y in zip(column, _isotonic(wanted, gaps), strict=True):
                ys[key] = y
    for column in layers:
        widest = max((sizes[k][0] for k in column), default=0.0)
        for key in column:
            places[key] = (x + widest / 2, ys[key])
        x += widest + GAP_X
    return places


# ---------------------------------------------------------------- drawing


def _path(points: list[tuple[float, float]]) -> str:
    """Smooth curves through the points, leaving and entering each horizontally."""
    (x0, y0), parts = points[0], [f"M{_n(points[0][0])},{_n(points[0][1])}"]
    for x1, y1 in points[1:]:
        mid = (x1 - x0) / 2
        parts.append(f"C{_n(x0 + mid)},{_n(y0)} {_n(x1 - mid)},{_n(y1)} {_n(x1)},{_n(y1)}")
        x0, y0 = x1, y1
    return "".join(parts)


def _svg(key: str, title: str, nodes: list[Node], drawing: Layout, description: str) -> str:
    """The drawing; `key` makes its arrowhead's id unique in the page (ids with '-' are never entities')."""
    marker = f"rd-arrow-{key}"
    places, sizes = drawing.places, drawing.sizes
    by_key = {n.key: n for n in nodes}
    xs = [places[k][0] + s * sizes[k][0] / 2 for k in by_key for s in (-1, 1)]
    ys = [places[k][1] + s * sizes[k][1] / 2 for k in places for s in (-1, 1)]
    left, top = min(xs) - PAD, min(ys) - PAD
    width, height = max(xs) - left + PAD, max(ys) - top + PAD
    # Plain strings with every text escaped: Markup.format per element was most of the build's time.
    parts = [
        f'<svg class="graph" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="{_n(left)} {_n(top)} {_n(width)} {_n(height)}" width="{_n(width)}" height="{_n(height)}" '
        f'role="group" aria-label="{escape(title)}"><desc>{escape(description)}</desc>'
        f'<defs><marker id="{marker}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" markerHeight="9" '
        'markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
        '<path d="M0,0L10,5L0,10z" class="arrowhead"/></marker></defs>'
    ]
    lines: dict[str, list[str]] = {n.key: [] for n in nodes}
    for line in drawing.lines:
        (x1, y1), (x2, y2) = places[line.first], places[line.last]
        points = [(x1 + sizes[line.first][0] / 2 + 2, y1), *(places[v] for v in line.via)]
        points.append((x2 - sizes[line.last][0] / 2 - 2, y2))
        heads = (f' marker-start="url(#{marker})"' if line.back else "") + (
            f' marker-end="url(#{marker})"' if line.ahead else ""
        )
        edge = line.edge
        tip = f"<title>{escape(edge.title)}</title>" if edge.title else ""
        lines[line.owner].append(
            f'<path class="edge{" dashed" if edge.dashed else ""}" d="{_path(points)}" fill="none" '
            f'stroke-width="{_n(min(1 + edge.weight / 8, 3))}"{heads}>{tip}</path>'
        )
    # Each node with the lines leaving it, so that pointing at a node picks its lines out (CSS :hover);
    # in column order, so that the keyboard goes through them as they are drawn.
    for key in (k for column in drawing.layers for k in column if k in by_key):
        node = by_key[key]
        (x, y), (w, h) = places[key], sizes[key]
        rows = wrap(node.label)
        first = y - (len(rows) - 1) * LINE_H / 2 + 4
        text = " ".join(
            f'<tspan x="{_n(x)}" y="{_n(first + i * LINE_H)}">{escape(row)}</tspan>' for i, row in enumerate(rows)
        )
        parts.append(
            f'<g class="n">{"".join(lines[key])}<a href="{escape(node.href)}" class="node {node.css}">'
            f'<rect x="{_n(x - w / 2)}" y="{_n(y - h / 2)}" width="{_n(w)}" height="{_n(h)}" rx="5"/>'
            f'<text text-anchor="middle">{text}</text></a></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _list(nodes: list[Node], edges: list[Edge], drawing: Layout) -> str:
    """The same leads as a list (shown on a narrow screen instead of the drawing): each node, in the
    drawing's column order, and where it leads, most often first."""
    by_key = {n.key: n for n in nodes}
    order = {k: i for i, k in enumerate(k for column in drawing.layers for k in column if k in by_key)}
    leads: dict[str, list[tuple[str, int]]] = {}
    for e in edges:
        if e.source != e.target:
            leads.setdefault(e.source, []).append((e.target, e.weight))
    items = []
    for key in sorted(by_key, key=order.__getitem__):
        node = by_key[key]
        targets = sorted(leads.get(key, []), key=lambda t: (-t[1], order[t[0]]))  # most often first
        if not targets and node.css == "outside":
            continue  # a setting of another stock is listed where a member leads to it
        where = ", ".join(
            f'<a href="{escape(by_key[t].href)}">{escape(by_key[t].label)}</a> <small>({n})</small>' for t, n in targets
        )
        items.append(
            f'<li><a href="{escape(node.href)}">{escape(node.label)}</a>'
            + (f" leads to {where}" if targets else "")
            + "</li>"
        )
    return '<ul class="graph-list">' + "".join(items) + "</ul>"


def main_leads(nodes: list[Node], edges: list[Edge]) -> list[Edge]:
    """The edges to draw: all of them, unless there are more than MOST a node (Men's ten settings lead to
    each other 82 ways): then each node's MOST heaviest (the first on ties)."""
    real = [e for e in edges if e.source != e.target]
    if len(real) <= MOST * len(nodes):
        return real
    kept: set[int] = set()
    for node in nodes:
        own = sorted((i for i, e in enumerate(real) if e.source == node.key), key=lambda i: (-real[i].weight, i))
        kept.update(own[:MOST])
    return [e for i, e in enumerate(real) if i in kept]


def layered(key: str, title: str, nodes: list[Node], edges: list[Edge], description: str) -> Markup:
    """The drawing (in a box that scrolls sideways) and the list of every lead."""
    if not nodes:
        return Markup("")
    shown = main_leads(nodes, edges)
    drawing = layout(nodes, shown)
    real = sum(1 for e in edges if e.source != e.target)
    note = (
        f'<p class="hint graph-note">Drawn: the {MOST} leads each makes most often ({len(shown)} of {real}); '
        "the list has every one.</p>"
        if len(shown) < real
        else ""
    )
    return Markup(
        f'<div class="scroll graph-drawing">{_svg(key, title, nodes, drawing, description)}</div>'
        + note
        + _list(nodes, edges, drawing)
    )
