"""Names and ids: the one slug function every stage uses."""

from __future__ import annotations

import keyword
import re
import unicodedata

_NON_WORD = re.compile(r"[^a-z0-9]+")


def slug(text: str) -> str:
    """`"Sergeant-at-Arms"` -> `sergeant_at_arms`; accents are dropped, the result is a valid id."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    result = _NON_WORD.sub("_", ascii_text.lower()).strip("_")
    if not result:
        return "_"
    if result[0].isdigit():
        return "n" + result
    return result


def python_name(id_: str) -> str:
    """An id as a Python identifier: keywords and builtin-shadowing soft keywords get a trailing '_'."""
    if keyword.iskeyword(id_) or keyword.issoftkeyword(id_):
        return id_ + "_"
    return id_
