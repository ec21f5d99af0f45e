"""A per-file cache of parse results, so that re-checking a large ruleset only parses what changed.

Keyed by the file's text and display path and by everything that shapes a parse (the grammar, the
parser and model modules, the version), so a stale entry can never be returned. It lives in the user's
cache folder (`RULESDSL_CACHE_DIR`, else `$XDG_CACHE_HOME/rulesdsl`, else `~/.cache/rulesdsl`);
`RULESDSL_CACHE_DIR=off` turns it off. It is only ever a shortcut: any failure to read or write it is
ignored and the file is parsed.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from functools import cache
from pathlib import Path

from . import __version__
from .diagnostics import Diagnostic
from .model import SourceFile

_MAX_ENTRIES = 4000
_HERE = Path(__file__).resolve().parent

Parsed = tuple[SourceFile, list[Diagnostic]]


def cache_folder() -> Path | None:
    setting = os.environ.get("RULESDSL_CACHE_DIR")
    if setting == "off":
        return None
    if setting:
        return Path(setting)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rulesdsl"


@cache
def _parser_digest() -> str:
    from .syntax import GRAMMAR_PATH

    digest = hashlib.sha256(__version__.encode())
    for path in (GRAMMAR_PATH, _HERE / "syntax.py", _HERE / "model.py", _HERE / "diagnostics.py"):
        digest.update(path.read_bytes())
    return digest.hexdigest()


class ParseCache:
    def __init__(self, folder: Path | None) -> None:
        self.folder = folder / "parsed" if folder is not None else None

    def _path(self, shown: str, text: str) -> Path | None:
        if self.folder is None:
            return None
        key = hashlib.sha256(f"{_parser_digest()}\0{shown}\0{text}".encode()).hexdigest()
        return self.folder / f"{key}.pickle"

    def load(self, shown: str, text: str) -> Parsed | None:
        path = self._path(shown, text)
        if path is None:
            return None
        try:
            with open(path, "rb") as handle:
                parsed: Parsed = pickle.load(handle)
            return parsed
        except (OSError, pickle.PickleError, EOFError, AttributeError, ValueError, TypeError):
            return None

    def save(self, shown: str, text: str, parsed: Parsed) -> None:
        path = self._path(shown, text)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(f".{os.getpid()}.tmp")
            with open(partial, "wb") as handle:
                pickle.dump(parsed, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(partial, path)
            self._trim()
        except (OSError, RecursionError, pickle.PicklingError):  # too deep to pickle: just not cached
            pass

    def _trim(self) -> None:
        """Keep the folder bounded: past the limit, forget the least recently written quarter."""
        assert self.folder is not None
        entries = list(self.folder.glob("*.pickle"))
        if len(entries) <= _MAX_ENTRIES:
            return
        entries.sort(key=lambda p: p.stat().st_mtime)
        for stale in entries[: len(entries) // 4]:
            stale.unlink(missing_ok=True)
