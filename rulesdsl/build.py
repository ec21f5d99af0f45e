"""Build: render every output file in memory, then either compare with disk or replace the output folder.

The output folder is replaced only after the whole build succeeded: files are written to a sibling
temporary folder which is then swapped in, so a failed build never leaves it half-written.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from .emit import html, python
from .pipeline import CompiledRuleset

MARKER = ".rulesdsl-output"
MARKER_TEXT = "This folder is written by `rulesdsl build`. Do not edit: rebuild instead.\n"
IGNORED_PARTS = {"__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"}


class OutputError(Exception):
    """The output folder cannot be written (it is not ours, or the file system refused)."""


def render_all(rulesets: tuple[CompiledRuleset, ...]) -> dict[str, str]:
    """Every output file, by path relative to the output folder (always with '/')."""
    files: dict[str, str] = {MARKER: MARKER_TEXT}
    for ruleset in rulesets:
        for name, text in python.render(ruleset).items():
            files[f"{ruleset.id}/{name}"] = text
    for name, text in html.render(rulesets).items():
        files[f"site/{name}"] = text
    return dict(sorted(files.items()))


def _on_disk(out: Path) -> Iterator[str]:
    for path in sorted(out.rglob("*")):
        relative = path.relative_to(out)
        if path.is_file() and not IGNORED_PARTS.intersection(relative.parts) and path.suffix != ".pyc":
            yield relative.as_posix()


def stale_files(out: Path, files: Mapping[str, str]) -> list[str]:
    """Files that differ between what a build would write and what is on disk (missing, changed, extra)."""
    if not out.is_dir():
        return sorted(files)
    stale = []
    for name, text in files.items():
        target = out / name
        if not target.is_file() or target.read_bytes() != text.encode("utf-8"):
            stale.append(name)
    stale += [name for name in _on_disk(out) if name not in files]
    return sorted(stale)


def write_output(out: Path, files: Mapping[str, str]) -> None:
    """Replace `out` with exactly `files`, atomically as far as the file system allows."""
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).is_file())):
        raise OutputError(f"{out} exists and was not written by rulesdsl (no {MARKER} in it); refusing to replace it")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=out.parent))
    os.chmod(staging, 0o755)  # mkdtemp makes it private; the output is meant to be shared
    try:
        for name, text in files.items():
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
        retired = None
        if out.exists():
            retired = out.parent / f".{out.name}.old-{os.getpid()}"
            os.replace(out, retired)
        os.replace(staging, out)
        if retired is not None:
            shutil.rmtree(retired, ignore_errors=True)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise OutputError(f"cannot write {out}: {exc.strerror or exc}") from exc
