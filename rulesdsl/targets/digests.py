"""Digests of what a rendering is made from, so that a build can reuse a rendering made by an earlier run.

In one process the memos (site.RenderMemo, module.CodeMemo) compare what an entity's rendering is made from
with `==`. Across runs (`rulesdsl build`, which keeps them in the cache folder: see targets/build.py) there
is nothing to compare with but a digest: the sha256 of the value's `repr`. That is sound where `repr` says
everything `==` looks at, which holds for what the memos compare: frozen dataclasses of the IR and the site
(whose `repr` shows every field), strings, numbers, Fractions, tuples, lists and dicts. Two values with
the same digest are then equal. Where they are equal but written otherwise (dicts in another order,
a frozenset's order under another hash seed) the digests differ: the entity is just rendered again.
A `repr` with an object's address (a class without one of its own) says nothing about its value, so such a
value has no digest and is never reused.
"""

from __future__ import annotations

import hashlib
import json
import sys
from functools import cache
from pathlib import Path

from rulesdsl.resources import DOCS, GRAMMAR, PACKAGE


def digest(value: object) -> str | None:
    """The sha256 of `value`'s repr; None where the repr does not say what the value is."""
    text = repr(value)
    if " object at 0x" in text:
        return None
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@cache
def renderer_digest() -> str:
    """What renderings depend on besides their inputs: every file of rulesdsl (code, templates, assets), the
    grammar and the docs (the site shows them), the libraries that write HTML, and the Python version. A kept
    rendering is used only under the same."""
    import jinja2
    import markdown_it
    import markupsafe

    hashed = hashlib.sha256()
    for folder in (PACKAGE, GRAMMAR.parent, DOCS):
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                hashed.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    # markupsafe's version is deprecated as an attribute (importlib.metadata costs 40 ms): its code instead
    escaping = Path(markupsafe.__file__).read_bytes() if markupsafe.__file__ else b""
    hashed.update(repr((jinja2.__version__, markdown_it.__version__, escaping, sys.version_info[:2])).encode())
    return hashed.hexdigest()


class Digests:
    """Each entity's digest, made once in a build and shared by the targets that keep renderings across runs
    (an entity is a row and a card of the site, code in rules.js and in the package)."""

    def __init__(self) -> None:
        # by id(); the value itself is held beside its digest, so that its id is no other value's meanwhile
        self._made: dict[int, tuple[object, str | None]] = {}

    def of(self, value: object) -> str | None:
        kept = self._made.get(id(value))
        if kept is None or kept[0] is not value:
            kept = self._made[id(value)] = (value, digest(value))
        return kept[1]


class Aside:
    """The long texts of a memo's data (HTML, code), kept beside its JSON rather than in it, each given by its
    index: JSON would escape every quote of them, and reading them back would cost much of what the memo
    saves. See `pack` and `unpack`."""

    def __init__(self, texts: list[str] | None = None) -> None:
        self.texts = texts if texts is not None else []

    def put(self, text: str) -> int:
        self.texts.append(text)
        return len(self.texts) - 1

    def get(self, index: object) -> str:
        """The text of an index `put` gave; TypeError for anything else."""
        if type(index) is not int or not 0 <= index < len(self.texts):
            raise TypeError("not the index of a text")
        return self.texts[index]


def pack(data: object, aside: Aside) -> bytes:
    """`data` as JSON on one line, with the lengths of the texts aside, then the texts one after another."""
    header = json.dumps([data, [len(text) for text in aside.texts]], separators=(",", ":"))  # no line end
    return header.encode() + b"\n" + "".join(aside.texts).encode("utf-8", "surrogatepass")


def unpack(payload: bytes) -> tuple[object, Aside]:
    """What `pack` packed; ValueError (or TypeError) for anything else."""
    end = payload.find(b"\n")
    if end < 0:
        raise ValueError("no texts")
    data, lengths = json.loads(payload[:end])
    text = str(memoryview(payload)[end + 1 :], "utf-8", "surrogatepass")  # not copied first
    if type(lengths) is not list or not all(type(n) is int and n >= 0 for n in lengths) or sum(lengths) != len(text):
        raise ValueError("the texts are not as long as said")
    texts, start = [], 0
    for length in lengths:
        texts.append(text[start : start + length])
        start += length
    return data, Aside(texts)
