"""What every command shares: exit codes, the usage error, and writing a file in one step."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

EXIT_OK, EXIT_DIAGNOSTICS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class UsageError(Exception):
    """A mistake in how rulesdsl was called: exit 2, printed as `--format` asks."""


def write_atomically(path: Path, text: str) -> None:
    """Replace a file in one step: an interrupted `fmt` leaves the old text or the new, never half. A
    refused write (read-only folder, full disk) leaves the old file and is a UsageError naming the path
    (exit 2, as a build that cannot write its output)."""

    from rulesdsl.syntax.source import display_path

    temporary: str | None = None
    try:
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException as exc:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise UsageError(f"cannot write {display_path(path)}: {exc.strerror or exc}") from exc
        raise
