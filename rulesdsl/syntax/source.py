"""Sources: find the rulesets under the paths given and read their files.

A ruleset is a folder holding a `ruleset.rules` manifest; every `.rules` file below it belongs to it,
unless a deeper folder has a manifest of its own. A path inside a ruleset selects the whole ruleset:
references cross files, so a ruleset is always checked as one.

Open editor buffers come as an overlay (a real path -> its text): an overlaid file is read from there, never
from disk, and belongs to its ruleset whether or not it exists on disk (a manifest among them makes a ruleset).

Folders are walked without following symbolic links, so what is found never depends on the Python
version. A link that stays inside its ruleset folder is fine; one that leads out of it is reported
(E006) and never read, so a ruleset cannot be made to quote files from elsewhere on the machine.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rulesdsl.diagnostics import Diagnostic, error
from rulesdsl.syntax.tree import Position

MANIFEST = "ruleset.rules"
SUFFIX = ".rules"
# E007: sixty times the largest file of the seeds (63 KB), and small enough that the costliest shape of text
# (a list of one-letter names, about 210 bytes of memory per byte) stays under a gigabyte
MAX_SOURCE_BYTES = 4 * 1024 * 1024

Overlay = Mapping[Path, str]  # open buffers: a file's path (as the walk finds it) -> its text


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


def is_source(path: Path, overlay: Overlay) -> bool:
    """Whether a file is there to read: an open buffer, or a file on disk."""
    return path in overlay or path.is_file()


def ruleset_root(path: Path, overlay: Overlay | None = None) -> Path | None:
    """The ruleset folder `path` belongs to: the nearest folder at or above it with a manifest (on disk, or
    an open buffer)."""
    buffers = overlay or {}
    for folder in (path if path.is_dir() else path.parent, *(path if path.is_dir() else path.parent).parents):
        if is_source(folder / MANIFEST, buffers):
            return folder
    return None


def _walk(folder: Path) -> Iterator[tuple[Path, list[str], list[str]]]:
    """os.walk without following links: a linked folder is listed among the folders but never entered."""
    for here, folders, names in os.walk(folder, followlinks=False):
        folders.sort()
        yield Path(here), folders, sorted(names)


def _leaves(link: Path, root: Path) -> Diagnostic | None:
    """E006 when the symbolic link `link` resolves outside the ruleset folder `root` (which is resolved)."""
    target = Path(os.path.realpath(link))
    if target.is_relative_to(root):
        return None
    shown = display_path(link)
    what = "folder" if target.is_dir() else "file"
    return error(
        "E006",
        f"{shown} is a symbolic link to {display_path(target)}, outside the ruleset folder {display_path(root)}; "
        "it was not read",
        None if what == "folder" else Position(shown, 1, 1, 1, 1),
        f"copy the {what} into the ruleset folder (links are followed only when they stay inside it)",
    )


def _buffers_under(folder: Path, overlay: Overlay) -> list[Path]:
    """The open buffers of `.rules` files below `folder` that are not files on disk (those the walk finds)."""
    return sorted(p for p in overlay if p.name.endswith(SUFFIX) and p.is_relative_to(folder) and not os.path.lexists(p))


def _files_of(root: Path, overlay: Overlay) -> tuple[tuple[Path, ...], list[Diagnostic]]:
    """The ruleset's files (its manifest first), and a diagnostic for every link that leaves it; an open
    buffer not on disk is one of them if no deeper manifest claims it."""
    files: list[Path] = []
    links: list[Path] = []
    diagnostics: list[Diagnostic] = []
    for here, folders, names in _walk(root):
        for name in list(folders):
            folder = here / name
            if folder.is_symlink():
                # a link that stays inside leads to a folder the walk reaches anyway: entering it would read twice
                diagnostics += [d for d in [_leaves(folder, root)] if d is not None]
                folders.remove(name)
            elif is_source(folder / MANIFEST, overlay):
                folders.remove(name)  # a ruleset of its own
        for name in names:
            path = here / name
            if not name.endswith(SUFFIX):
                continue
            if path.is_symlink():
                problem = _leaves(path, root)
                if problem is None:
                    links.append(path)
                else:
                    diagnostics.append(problem)
            else:
                files.append(path)
    files += [p for p in _buffers_under(root, overlay) if ruleset_root(p, overlay) == root]
    # a link to a file the ruleset already has would define everything in it twice
    real = {Path(os.path.realpath(f)) for f in files}
    files += [link for link in links if link.name == MANIFEST or Path(os.path.realpath(link)) not in real]
    manifest = root / MANIFEST
    ordered = [manifest] if manifest in files else []
    return (*ordered, *sorted(f for f in files if f != manifest)), diagnostics


def _not_in_a_ruleset(path: Path) -> Diagnostic:
    return error(
        "E001",
        f"{display_path(path)} is not inside a ruleset",
        None,
        f"add a {MANIFEST} with a 'ruleset' block to its folder or a parent folder",
    )


def discover(paths: Sequence[Path], overlay: Overlay | None = None) -> tuple[list[RulesetFiles], list[Diagnostic]]:
    """The rulesets selected by `paths` (which must exist, or be open buffers), and diagnostics for stray
    files and outward links."""
    buffers = overlay or {}
    roots: set[Path] = set()
    diagnostics: list[Diagnostic] = []
    for given in paths:
        # a file keeps its own name: resolving a link would judge where it points, not where it is
        path = given.resolve() if given.is_dir() else given.parent.resolve() / given.name
        root = ruleset_root(path, buffers)
        if root is not None:
            roots.add(root)
        if path.is_dir():
            found_here = [here / name for here, _, names in _walk(path) for name in names if name.endswith(SUFFIX)]
            for file in [*found_here, *_buffers_under(path, buffers)]:
                file_root = ruleset_root(file, buffers)
                if file_root is None:
                    diagnostics.append(_not_in_a_ruleset(file))
                else:
                    roots.add(file_root)
        elif root is None:
            diagnostics.append(_not_in_a_ruleset(path))
    found = []
    for root in sorted(roots):
        files, more = _files_of(root, buffers)
        found.append(RulesetFiles(root, files))
        diagnostics += more
    return found, diagnostics


def read_source(path: Path, overlay: Overlay | None = None) -> tuple[str | None, Diagnostic | None]:
    """A source file's text (without a byte-order mark), or the problem that keeps it from being compiled;
    an open buffer's text if it is one, judged as if it were saved (as UTF-8).

    E002 comes with the text decoded with replacement characters: not to compile, only to show the line
    the diagnostic points at.
    """
    shown = display_path(path)
    if overlay is not None and path in overlay:
        # a lone surrogate (JSON can carry one) is saved as bytes that are not UTF-8: E002, as on disk
        data = overlay[path].encode("utf-8", "surrogatepass")
        return _decoded(shown, data, len(data))
    try:
        # O_NONBLOCK: opening a named pipe called x.rules must not hang; regular files ignore it
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with open(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                return None, error(
                    "E003",
                    f"cannot read {shown}: not a regular file",
                    None,
                    f"replace it with a regular file, or rename it so that its name does not end in {SUFFIX}",
                )
            data = handle.read(MAX_SOURCE_BYTES + 1)  # never more, even if the file grows meanwhile
    except OSError as exc:
        return None, error("E003", f"cannot read {shown}: {exc.strerror}", None, _unreadable_hint(exc, shown))
    return _decoded(shown, data, info.st_size)


def _unreadable_hint(exc: OSError, shown: str) -> str:
    if isinstance(exc, PermissionError):
        return f"let rulesdsl read it: chmod u+r {shown}"
    if isinstance(exc, FileNotFoundError):  # found by the walk, gone when read: mostly a broken link
        return "it is gone, or a link to nothing: point the link at a file, or remove it"
    return f"make {shown} a regular file rulesdsl may read, or remove it"


def _decoded(shown: str, data: bytes, size_on_disk: int) -> tuple[str | None, Diagnostic | None]:
    """The text of a source file's bytes (read up to one past the limit), or why it cannot be compiled."""
    if len(data) > MAX_SOURCE_BYTES:
        size = max(size_on_disk, len(data)) / (1024 * 1024)
        return None, error(
            "E007",
            f"{shown} is {size:.1f} MiB; a source file may be at most {MAX_SOURCE_BYTES // (1024 * 1024)} MiB",
            Position(shown, 1, 1, 1, 1),
            "split it into several .rules files",
        )
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        # exc.object is the text after any byte-order mark, and everything before exc.start in it is valid
        before = exc.object[: exc.start].decode("utf-8")
        line = before.count("\n") + 1
        column = len(before) - (before.rfind("\n") + 1) + 1
        return data.decode("utf-8-sig", errors="replace"), error(
            "E002",
            f"{shown} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at line {line}, column {column})",
            Position(shown, line, column, line, column + 1),
            "save the file as UTF-8",
        )
