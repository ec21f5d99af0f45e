"""The Jinja2 environment both emitters share, and the one filter that writes Python literals."""

from __future__ import annotations

import itertools
from dataclasses import fields
from fractions import Fraction
from functools import cache
from typing import TYPE_CHECKING

from jinja2 import Environment, PackageLoader, PrefixLoader, StrictUndefined, select_autoescape

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


def py(value: object) -> str:
    """A Python literal for `value`. Only plain data is accepted, so source text can never become code."""
    if isinstance(value, str):
        text = repr(value)
        if text[0] == "'" and '"' not in value:  # prefer double quotes, as formatters do
            text = '"' + text[1:-1] + '"'
        return text
    if value is None or isinstance(value, bool | int):
        return repr(value)
    if isinstance(value, Fraction):
        return f"Fraction({value.numerator}, {value.denominator})"
    if isinstance(value, tuple):
        if len(value) == 1:
            return f"({py(value[0])},)"
        return "(" + ", ".join(py(v) for v in value) + ")"
    raise TypeError(f"no Python literal for {type(value).__name__}")


def doc_line(text: str) -> str:
    """`text` escaped for inside a triple-quoted docstring, exactly: the docstring is `text`, whatever it
    holds. Backslashes are escaped, and so is a double quote before another or at the end (so no quote
    ends it early and no backslash escapes its end); every character Python would not show as itself (line
    breaks, NUL, other controls) is written as `repr` writes it, so the docstring stays on one line."""
    return "".join(_doc_char(c, text[i + 1 : i + 2]) for i, c in enumerate(text))


def _doc_char(char: str, following: str) -> str:
    if char == "\\":
        return "\\\\"
    if char == '"':  # escaped before another quote or at the end: never three in a row, never at the end
        return '\\"' if following in ('"', "") else char
    return char if char.isprintable() else repr(char)[1:-1]


def natural(name: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key in natural order, as isort and ruff sort names: `x2` before `x10`."""
    runs = ("".join(run) for _, run in itertools.groupby(name, str.isdigit))
    return tuple((0, int(run)) if run.isdigit() else (1, run) for run in runs)


def template_context(context: DataclassInstance) -> dict[str, object]:
    """A template's typed context (a dataclass, so a misspelt name fails mypy, not a render) as the names
    Jinja renders with: its fields, shallow."""
    return {f.name: getattr(context, f.name) for f in fields(context)}


@cache
def environment() -> Environment:
    env = Environment(
        loader=PrefixLoader(
            {
                "python": PackageLoader("rulesdsl.targets.python", "templates"),
                "html": PackageLoader("rulesdsl.targets.html", "templates"),
            }
        ),
        autoescape=select_autoescape(["html", "htm", "xml"], default_for_string=False),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["py"] = py
    env.filters["doc_line"] = doc_line
    env.filters["tuple"] = tuple
    env.filters["natural"] = lambda pairs: sorted(pairs, key=lambda pair: natural(pair[0]))
    return env
