"""The Jinja2 environment both emitters share, and the one filter that writes Python literals."""

from __future__ import annotations

import contextlib
import itertools
import marshal
import os
import sys
import tempfile
import types
from dataclasses import fields
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2
from jinja2 import Environment, PackageLoader, PrefixLoader, StrictUndefined, select_autoescape
from jinja2.bccache import Bucket, BytecodeCache

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


class TemplateBytecode(BytecodeCache):
    """Compiled templates kept beside rulesdsl's own bytecode (its `__pycache__`), where Python keeps each
    module's: compiling the templates took 0.1 s of every build. Not in the cache folder, whose entries
    never run; not with Jinja's FileSystemBytecodeCache either, which reads the source's checksum with
    pickle. An entry is used only for the very source it was compiled from (Jinja's checksum of it), by this
    Jinja and this Python; anything else, or a file that cannot be read, is compiled again. Written unless
    Python writes no bytecode (PYTHONDONTWRITEBYTECODE), and never where it cannot write."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, bucket: Bucket) -> Path:
        return self.folder / f"{bucket.key}.{sys.implementation.cache_tag}.jinja"

    @staticmethod
    def _header(bucket: Bucket) -> bytes:
        return f"rulesdsl-template 1 {jinja2.__version__} {sys.implementation.cache_tag} {bucket.checksum}\n".encode()

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            data = self._path(bucket).read_bytes()
        except OSError:
            return
        header = self._header(bucket)
        if not data.startswith(header):
            return
        try:
            code = marshal.loads(data[len(header) :])
        except (EOFError, ValueError, TypeError):  # cut short or damaged
            return
        if isinstance(code, types.CodeType):
            bucket.code = code

    def dump_bytecode(self, bucket: Bucket) -> None:
        if sys.dont_write_bytecode or bucket.code is None:
            return
        with contextlib.suppress(OSError):  # a folder it cannot write (an install for all users): not kept
            self.folder.mkdir(parents=True, exist_ok=True)
            handle, partial = tempfile.mkstemp(".tmp", dir=self.folder)
            try:
                with open(handle, "wb") as out:
                    out.write(self._header(bucket) + marshal.dumps(bucket.code))
                os.replace(partial, self._path(bucket))
            except OSError:
                os.unlink(partial)
                raise

    def clear(self) -> None:
        for path in self.folder.glob("*.jinja"):
            with contextlib.suppress(OSError):
                path.unlink()


TEMPLATES_COMPILED = Path(__file__).resolve().parent / "__pycache__" / "templates"


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
        bytecode_cache=TemplateBytecode(TEMPLATES_COMPILED),
    )
    env.filters["py"] = py
    env.filters["doc_line"] = doc_line
    env.filters["tuple"] = tuple
    env.filters["natural"] = lambda pairs: sorted(pairs, key=lambda pair: natural(pair[0]))
    return env
