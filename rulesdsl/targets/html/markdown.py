"""Markdown for the reference: descriptions written in the rules and the language reference.

Rendered at build time with markdown-it-py (CommonMark plus tables and strikethrough). Sanitised by
construction: raw HTML in the source is shown as text, never passed through; links may only be
relative, #anchors, http(s) or mailto; images are off (the reference loads nothing from the network).
"""

from __future__ import annotations

import re
from functools import cache

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup

_SAFE_LINK = re.compile(r"^(?:https?://|mailto:|#|(?![a-z][a-z0-9+.-]*:))", re.IGNORECASE)


def _safe_link(url: str) -> bool:
    """http(s), mailto, #anchors and relative paths; every other scheme (javascript:, data:, file:) is refused."""
    return bool(_SAFE_LINK.match(url.strip())) and not url.strip().startswith("//")


@cache
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.disable(["image"])
    md.validateLink = _safe_link  # type: ignore[method-assign]
    return md


def markdown(text: str, heading_offset: int = 0) -> Markup:
    """Markdown as safe HTML. `heading_offset` pushes headings down (a description's `#` under an entry's h3)."""
    md = _parser()
    tokens = md.parse(text)
    for token in tokens:
        if token.type in ("heading_open", "heading_close") and heading_offset:
            level = min(6, int(token.tag[1]) + heading_offset)
            token.tag = f"h{level}"
        if token.type == "table_open":  # wide tables scroll inside their own box
            token.attrSet("class", "md-table")
    html: str = md.renderer.render(tokens, md.options, {})
    return Markup(html)


def first_paragraph(text: str) -> Markup:
    """The description's first block: what a hover preview shows."""
    first = text.strip().split("\n\n", 1)[0]
    return markdown(first, heading_offset=3)


def heading_ids(text: str) -> list[tuple[int, str, str]]:
    """(level, id, text) of every heading in a Markdown document, ids as `slug-of-title`, each unique."""
    seen: dict[str, int] = {}
    found = []
    for token, inline in zip(_parser().parse(text), [*_parser().parse(text)[1:], None], strict=True):
        if token.type != "heading_open" or inline is None:
            continue
        title = inline.content
        base = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "section"
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.append((int(token.tag[1]), base if count == 0 else f"{base}-{count + 1}", title))
    return found


def _unlink_outside(tokens: list[Token]) -> None:
    """Links to files beside the document (`../rulesdsl/prelude.rules`) are not in the site: their text
    stays, without the link. Anchors within the document and web addresses stay links."""
    for token in tokens:
        kept: list[Token] = []
        dropped = 0  # open links being dropped (links do not nest, but be safe)
        for child in token.children or []:
            if child.type == "link_open" and not str(child.attrGet("href") or "").startswith(
                ("#", "http://", "https://", "mailto:")
            ):
                dropped += 1
            elif child.type == "link_close" and dropped:
                dropped -= 1
            else:
                kept.append(child)
        if token.children:
            token.children = kept


def document(text: str) -> tuple[Markup, list[tuple[int, str, str]]]:
    """A whole Markdown document (the language reference) with an id on every heading, and its headings."""
    md = _parser()
    tokens = md.parse(text)
    headings = heading_ids(text)
    ids = iter(headings)
    _unlink_outside(tokens)
    for token in tokens:
        if token.type == "heading_open":
            token.attrSet("id", next(ids)[1])
        if token.type == "table_open":
            token.attrSet("class", "md-table")
    html: str = md.renderer.render(tokens, md.options, {})
    return Markup(html), headings
