"""Names and ids: the one slug function every stage uses (the generated packages' own, so that a name
is found the same way by the compiler and by a package at run time)."""

from __future__ import annotations

from .runtime.core import slug

__all__ = ["slug"]
