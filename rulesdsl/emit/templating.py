"""The Jinja2 environment both emitters share, and the one filter that writes Python literals."""

from __future__ import annotations

from fractions import Fraction
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape


def py(value: Any) -> str:
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
    """Text safe inside a triple-quoted docstring on one line."""
    return " ".join(text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').split())


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("rulesdsl", "templates"),
        autoescape=select_autoescape(["html", "htm", "xml"], default_for_string=False),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["py"] = py
    env.filters["doc_line"] = doc_line
    env.filters["tuple"] = tuple
    return env
