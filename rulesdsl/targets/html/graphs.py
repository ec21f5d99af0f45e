"""The leads between the settings of a stock, drawn at build time as inline SVG (no external program,
no script). Every node is a link.

The layout is simple and deterministic: a ring (a grid when there are many). Text widths are estimated
(no fonts are measured), so boxes are generous. (A lifepath's own graph is drawn by site.js, in the same
style, when a reader opens it: thousands of drawings would weigh more than the pages.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from markupsafe import Markup, escape

CHAR = 7.0  # estimated width of a character at the graphs' font size (12px)
BOX_H = 26.0
PAD = 10.0
MAX_CHARS = 30
RING_LIMIT = 16  # more nodes than this go on a grid


@dataclass(frozen=True, slots=True)
class Node:
    key: str
    label: str
    href: str  # placeholder or relative link
    css: str = ""  # "self", "outside", "from", "to", "required"


@dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str
    weight: int  # how many lifepaths make it
    title: str
    dashed: bool = False


def _short(label: str) -> str:
    return label if len(label) <= MAX_CHARS else label[: MAX_CHARS - 1] + "…"


def _width(label: str) -> float:
    return len(_short(label)) * CHAR + 2 * PAD


def _clip(x1: float, y1: float, x2: float, y2: float, half_w: float, half_h: float) -> tuple[float, float]:
    """Where the line from the centre (x1, y1) towards (x2, y2) leaves a box of that half size."""
    dx, dy = x2 - x1, y2 - y1
    if dx == 0 and dy == 0:
        return x1, y1
    scale = min(half_w / abs(dx) if dx else math.inf, half_h / abs(dy) if dy else math.inf)
    return x1 + dx * scale, y1 + dy * scale


def _svg(
    key: str,
    title: str,
    nodes: list[Node],
    edges: list[Edge],
    places: dict[str, tuple[float, float]],
    description: str,
) -> Markup:
    """The drawing; `key` makes its arrowhead's id unique in the page (ids with '-' are never entities')."""
    marker = f"rd-arrow-{key}"
    widths = {n.key: _width(n.label) for n in nodes}
    xs = [places[n.key][0] - widths[n.key] / 2 for n in nodes] + [places[n.key][0] + widths[n.key] / 2 for n in nodes]
    ys = [places[n.key][1] for n in nodes]
    left, top = min(xs) - PAD, min(ys) - BOX_H
    width, height = max(xs) - left + PAD, max(ys) - top + BOX_H
    pairs = {(e.source, e.target) for e in edges}
    # Plain strings with every text escaped: Markup.format per element was most of the build's time.
    parts = [
        f'<svg class="graph" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="{_n(left)} {_n(top)} {_n(width)} {_n(height)}" width="{_n(width)}" height="{_n(height)}" '
        f'role="img" aria-label="{escape(title)}"><desc>{escape(description)}</desc>'
        f'<defs><marker id="{marker}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" markerHeight="9" '
        'markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
        '<path d="M0,0L10,5L0,10z" class="arrowhead"/></marker></defs>'
    ]
    lines: dict[str, list[str]] = {n.key: [] for n in nodes}
    for edge in edges:
        if edge.source == edge.target or ((edge.target, edge.source) in pairs and edge.source > edge.target):
            continue  # self-loops are not drawn; a pair both ways is one line with two heads
        (x1, y1), (x2, y2) = places[edge.source], places[edge.target]
        sx, sy = _clip(x1, y1, x2, y2, widths[edge.source] / 2 + 2, BOX_H / 2 + 2)
        tx, ty = _clip(x2, y2, x1, y1, widths[edge.target] / 2 + 2, BOX_H / 2 + 2)
        start = f' marker-start="url(#{marker})"' if (edge.target, edge.source) in pairs else ""
        title = f"<title>{escape(edge.title)}</title>" if edge.title else ""
        lines[edge.source].append(
            f'<line class="edge{" dashed" if edge.dashed else ""}" x1="{_n(sx)}" y1="{_n(sy)}" x2="{_n(tx)}" '
            f'y2="{_n(ty)}" stroke-width="{_n(min(1 + edge.weight / 8, 3))}"{start} marker-end="url(#{marker})">'
            f"{title}</line>"
        )
    # Each node with the lines leaving it, so that pointing at a node picks its lines out (CSS :hover).
    for node in nodes:
        x, y = places[node.key]
        w = widths[node.key]
        shown = _short(node.label)
        title = f"<title>{escape(node.label)}</title>" if shown != node.label else ""
        parts.append(
            f'<g class="n">{"".join(lines[node.key])}<a href="{escape(node.href)}" class="node {node.css}">{title}'
            f'<rect x="{_n(x - w / 2)}" y="{_n(y - BOX_H / 2)}" width="{_n(w)}" height="{_n(BOX_H)}" rx="5"/>'
            f'<text x="{_n(x)}" y="{_n(y + 4)}" text-anchor="middle">{escape(shown)}</text></a></g>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def _n(value: float) -> str:
    """Coordinates to one decimal, without trailing zeros: small and deterministic."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def ring(key: str, title: str, nodes: list[Node], edges: list[Edge], description: str) -> Markup:
    """Nodes on an ellipse (on a grid when there are many), edges as straight arrows."""
    if not nodes:
        return Markup("")
    widest = max(_width(n.label) for n in nodes)
    places: dict[str, tuple[float, float]] = {}
    count = len(nodes)
    if count == 1:
        places[nodes[0].key] = (0.0, 0.0)
    elif count <= RING_LIMIT:
        ry = max(60.0 if count <= 4 else 150.0, (BOX_H + 14) / (2 * math.sin(math.pi / count)))
        rx = max(ry * 1.5, widest * 1.1 / (2 * math.sin(math.pi / count)) if count > 2 else widest)
        for i, node in enumerate(nodes):
            angle = 2 * math.pi * i / count - math.pi / 2
            places[node.key] = (rx * math.cos(angle), ry * math.sin(angle))
    else:
        columns = math.ceil(math.sqrt(count))
        for i, node in enumerate(nodes):
            row, column = divmod(i, columns)
            places[node.key] = (column * (widest + 40), row * (BOX_H + 50) + (column % 2) * 20)
    return _svg(key, title, nodes, edges, places, description)
