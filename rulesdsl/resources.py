"""Where the files the compiler reads beside its code are, in a checkout and inside an installed wheel
(where the grammar and the docs ship inside the package: pyproject.toml's force-include)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = PACKAGE.parent


def _shipped(*parts: str) -> Path:
    """Inside the package (a wheel) if it is there, else in the checkout's top level."""
    inside = PACKAGE.joinpath(*parts)
    return inside if inside.exists() else _CHECKOUT.joinpath(*parts)


GRAMMAR = _shipped("grammar", "rules.lark")
DOCS = _shipped("docs")
PRELUDE = PACKAGE / "language" / "prelude.rules"
SCHEMAS = PACKAGE / "compile" / "schemas"
RUNTIME = PACKAGE / "runtime"
LICENSE = _shipped("LICENSE")  # rulesdsl's: a generated package carries it beside the runtime it copies
