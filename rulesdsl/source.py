"""Sources: find the rulesets under the paths given and read their files.

A ruleset is a folder holding a `ruleset.rules` manifest; every `.rules` file below it belongs to it,
unless a deeper folder has a manifest of its own. A path inside a ruleset selects the whole ruleset:
references cross files, so a ruleset is always checked as one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .diagnostics import Diagnostic, error

MANIFEST = "ruleset.rules"
SUFFIX = ".rules"


@dataclass(frozen=True, slots=True)
class RulesetFiles:
    root: Path
    files: tuple[Path, ...]  # the manifest first, then the others in path order


def display_path(path: Path) -> str:
    """Paths in messages: relative to the working folder when below it, always with '/'."""
    try:
        return Path(os.path.relpath(path)).as_posix() if path.is_relative_to(Path.cwd()) else path.as_posix()
    except ValueError:
        return path.as_posix()


def _ruleset_root(path: Path) -> Path | None:
    for folder in (path if path.is_dir() else path.parent, *(path if path.is_dir() else path.parent).parents):
        if (folder / MANIFEST).is_file():
            return folder
    return None


def _files_of(root: Path) -> tuple[Path, ...]:
    found = []
    for file in sorted(root.rglob("*" + SUFFIX)):
        if file.is_file() and _ruleset_root(file) == root:
            found.append(file)
    manifest = root / MANIFEST
    return (manifest, *(f for f in found if f != manifest))


def discover(paths: Sequence[Path]) -> tuple[list[RulesetFiles], list[Diagnostic]]:
    """The rulesets selected by `paths` (which must exist), and diagnostics for stray files."""
    roots: set[Path] = set()
    diagnostics: list[Diagnostic] = []
    for given in paths:
        path = given.resolve()
        root = _ruleset_root(path)
        if root is not None:
            roots.add(root)
        if path.is_dir():
            for file in sorted(path.rglob("*" + SUFFIX)):
                file_root = _ruleset_root(file)
                if file_root is None:
                    diagnostics.append(
                        error(
                            "E001",
                            f"{display_path(file)} is not inside a ruleset",
                            None,
                            f"add a {MANIFEST} with a 'ruleset' block to its folder or a parent folder",
                        )
                    )
                else:
                    roots.add(file_root)
        elif root is None:
            diagnostics.append(
                error(
                    "E001",
                    f"{display_path(path)} is not inside a ruleset",
                    None,
                    f"add a {MANIFEST} with a 'ruleset' block to its folder or a parent folder",
                )
            )
    return [RulesetFiles(root, _files_of(root)) for root in sorted(roots)], diagnostics
