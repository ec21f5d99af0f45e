"""What a ruleset's id and version must be to name a Python distribution (its wheel): a name as PEP 508
allows it and a version as PEP 440 does, and the version's normal form (what the wheel's file name and
metadata carry, and what `importlib.metadata.version` then reports)."""

from __future__ import annotations

import re

# PEP 440's versions in lower case (the `version` field type never took capitals), without the leading `v`
# and the blanks around it that PEP 440 tolerates. One pattern for Python's `re` and for the JSON Schema
# (ECMA 262): no inline flags, no named groups.
VERSION_PATTERN = (
    r"^(?:([0-9]+)!)?"  # epoch
    r"([0-9]+(?:\.[0-9]+)*)"  # release
    r"(?:[-_.]?(alpha|a|beta|b|preview|pre|c|rc)[-_.]?([0-9]+)?)?"  # pre-release
    r"(?:-([0-9]+)|[-_.]?(post|rev|r)[-_.]?([0-9]+)?)?"  # post-release
    r"(?:[-_.]?(dev)[-_.]?([0-9]+)?)?"  # development release
    r"(?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?$"  # local version
)
_VERSION = re.compile(VERSION_PATTERN)

_PRE = {"alpha": "a", "beta": "b", "c": "rc", "pre": "rc", "preview": "rc"}


def _number(digits: str | None) -> str:
    # Not int(): a version of 5,000 digits is bad input, not a ValueError past Python's digit limit.
    return (digits or "0").lstrip("0") or "0"


def normal_version(text: str) -> str | None:
    """The normal form of a PEP 440 version (`1.0.0-beta.2` -> `1.0.0b2`), None when it is not one."""
    found = _VERSION.fullmatch(text)  # not match: `$` would let a line break after the version through
    if found is None:
        return None
    epoch, release, pre, pre_n, post_dash, post, post_n, dev, dev_n, local = found.groups()
    normal = f"{_number(epoch)}!" if epoch is not None and _number(epoch) != "0" else ""
    normal += ".".join(_number(part) for part in release.split("."))
    if pre is not None:
        normal += _PRE.get(pre, pre) + _number(pre_n)
    if post_dash is not None or post is not None:
        normal += ".post" + _number(post_dash if post_dash is not None else post_n)
    if dev is not None:
        normal += ".dev" + _number(dev_n)
    if local is not None:
        parts = local.replace("-", ".").replace("_", ".").split(".")
        normal += "+" + ".".join(_number(part) if part.isdigit() else part for part in parts)
    return normal


def is_distribution_name(name: str) -> bool:
    """Whether `name` is a valid distribution name (PEP 508): ASCII letters, digits, `.`, `_` and `-`,
    beginning and ending with a letter or a digit."""
    return (
        name.isascii()
        and name[:1].isalnum()
        and name[-1:].isalnum()
        and all(char.isalnum() or char in "._-" for char in name)
    )


_OPERATORS = ("AND", "OR")
_DEEPEST = 32


def _idstring(text: str) -> bool:
    return bool(text) and text.isascii() and all(char.isalnum() or char in "-." for char in text)


def _license(token: str) -> bool:
    """A licence id (`MIT`, `GPL-2.0+`) or reference (`LicenseRef-house`, `DocumentRef-a:LicenseRef-b`)."""
    document, colon, reference = token.rpartition(":")
    if colon and not (document.startswith("DocumentRef-") and _idstring(document.removeprefix("DocumentRef-"))):
        return False
    if reference.startswith("LicenseRef-"):
        return _idstring(reference.removeprefix("LicenseRef-"))
    return not colon and token not in ("WITH", *_OPERATORS) and _idstring(token.removesuffix("+"))


def is_license_expression(text: str) -> bool:
    """Whether `text` is an SPDX licence expression by its syntax (SPDX 2.3, annex D; what PEP 639's
    License-Expression holds): `CC-BY-4.0`, `MIT OR Apache-2.0`, `(MIT AND CC-BY-4.0) OR LicenseRef-mine`,
    `GPL-3.0-or-later WITH Classpath-exception-2.0`. Whether each id is on the SPDX list is not checked.
    At most _DEEPEST parentheses (no licence needs more, and the parser recurses into each)."""
    tokens = text.replace("(", " ( ").replace(")", " ) ").split()
    at = 0
    if text.count("(") > _DEEPEST:
        return False

    def expression() -> bool:  # term (AND|OR term)*
        nonlocal at
        if not term():
            return False
        while at < len(tokens) and tokens[at] in _OPERATORS:
            at += 1
            if not term():
                return False
        return True

    def term() -> bool:  # "(" expression ")" | licence [WITH exception]
        nonlocal at
        if at < len(tokens) and tokens[at] == "(":
            at += 1
            if not expression() or at >= len(tokens) or tokens[at] != ")":
                return False
            at += 1
            return True
        if at >= len(tokens) or not _license(tokens[at]):
            return False
        at += 1
        if at < len(tokens) and tokens[at] == "WITH":
            at += 2
            return at <= len(tokens) and _idstring(tokens[at - 1])
        return True

    return expression() and at == len(tokens)
