"""Names and ids: the one slug function every stage uses (the generated packages' own, so that a name
is found the same way by the compiler and by a package at run time)."""

from __future__ import annotations

from functools import lru_cache

from rulesdsl.runtime import core

__all__ = ["slug"]

# Memoised: every reference is looked up by the slug of what is written, and the same names come back
# thousands of times in a large ruleset.
slug = lru_cache(maxsize=1 << 16)(core.slug)
