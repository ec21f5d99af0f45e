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
    found = _VERSION.match(text)
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
