"""A per-file cache of parse and lowering results, so that re-checking a large ruleset only reads what changed.

Where: the user's cache folder (`RULESDSL_CACHE_DIR`, else `$XDG_CACHE_HOME/rulesdsl`, else
`~/.cache/rulesdsl`); `RULESDSL_CACHE_DIR=off` turns it off. Each file has two entries in `parsed/`:
its outline (the statements that are not entities: kind declarations, patches, removals, the manifest)
with its syntax diagnostics, keyed by the sha256 of the file's text and display path; and its lowered
entities (the IR, as plain data) with their lowering and schema diagnostics, keyed also by the kinds
they were read by. A `check` adds one entry for the whole run: its diagnostics and summary, keyed by every
file it read (path and hash) and the rulesets they make, so a check of unchanged files reads and hashes
them and no more. Every key covers the compiler (every module of rulesdsl, the grammar, the prelude and
the schemas), so a stale entry is never even looked at.

What it trusts, and why that is safe:
- Nothing in an entry can run code. Entries are JSON read by `codec.Codec`, which makes only the syntax
  model's, the IR's and the field types' classes and `Diagnostic`, with fields of their declared types.
  No pickle anywhere (Lark's own grammar cache is a pickle, so the parser does not use it).
- An entry is used only if its header names this format, this compiler and this key, and its payload's
  sha256 (keyed by the entry key, so by the text, path and compiler) matches; the decoded tree must also
  be of that very path and text. A truncated, damaged, foreign or stale entry is a miss: the file is
  parsed and the entry rewritten. These checks catch accidents, not an attacker who can write there:
- so the folder must be private. It is made 0700 (with the parents rulesdsl makes) and refused, with
  one warning (W006) and no cache for the run, if it or `parsed/` is not the user's own, can be written
  by group or others, or is a symbolic link someone else made or to something not the user's. rulesdsl
  never falls back to a shared place such as /tmp. Entries are written 0600 to a temporary file and
  renamed into place, so a reader sees a whole entry or none.
- It is bounded: about 4,000 entries. The folder is listed once per run (which also tells which files
  have no entry without asking for each) and trimmed at most once per run, down to three quarters of
  the limit, least recently written first but never an entry the run has used; a run that fills it
  again stops writing. Listing a large folder after every write would make a big ruleset slower to
  check with the cache than without, and so would a ruleset larger than the cache that replaced its
  own entries on every run.
- And a file keeps at most three entries of each kind (its outline, its lowered entities): each saved edit
  writes new ones, and at 10,000 lifepaths a file's are a megabyte, so the count alone let an afternoon's
  saves take gigabytes. Writing one forgets the file's oldest beyond three (never one the run has used):
  the text now and two before it, for an undo or a switch of branch. An entry's name begins with its
  family (a digest of the compiler, what it holds and the file's path) to tell them apart.

It is only ever a shortcut: failing to read or write it is not an error, the file is just parsed.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import stat
import tempfile
from functools import cache
from pathlib import Path

from rulesdsl import __version__
from rulesdsl.compile import ir
from rulesdsl.compile.codec import Codec, CodecError
from rulesdsl.diagnostics import Diagnostic, Position, warning
from rulesdsl.language import fieldtypes
from rulesdsl.resources import PACKAGE
from rulesdsl.syntax import tree as model
from rulesdsl.syntax.tree import SourceFile

FORMAT = b"rulesdsl-parse-cache 1"  # the entry layout; the compiler digest covers what is in it
SUFFIX = ".entry"
_MAX_ENTRIES = 4000
_VERSIONS = 3  # entries kept per file and kind of entry (see the module docstring)
_FAMILY = 16  # hex digits of an entry's family, before the dash
_HERE = PACKAGE

Parsed = tuple[SourceFile, list[Diagnostic]]


def cache_folder() -> Path | None:
    setting = os.environ.get("RULESDSL_CACHE_DIR")
    if setting == "off":
        return None
    if setting:
        return Path(setting)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rulesdsl"


def _dataclasses(module: object) -> list[type]:
    """The frozen dataclasses a module defines."""
    return [
        c
        for c in vars(module).values()
        if isinstance(c, type) and c.__module__ == getattr(module, "__name__", "") and "__dataclass_fields__" in vars(c)
    ]


# All an entry may hold: the syntax model's nodes, the IR's nodes and entities, field types and diagnostics.
CACHED_CLASSES: tuple[type, ...] = (
    *(c for c in vars(model).values() if isinstance(c, type) and issubclass(c, model._Node) and c is not model._Node),
    Diagnostic,
    Position,
    *_dataclasses(ir),
    *_dataclasses(fieldtypes),
)
Lowered = tuple[list[ir.Entity], list[Diagnostic]]
Checked = tuple[list[Diagnostic], tuple[tuple[str, int], ...]]


@cache
def _codec() -> Codec:
    return Codec(CACHED_CLASSES)  # built on first use: generating its code takes ~10 ms


@cache
def compiler_digest() -> str:
    from rulesdsl.syntax.parse import GRAMMAR_PATH

    digest = hashlib.sha256(__version__.encode())
    # Every module, the prelude and the schemas: what lowering and checking make of a file depends on them.
    for path in sorted([*_HERE.rglob("*.py"), *_HERE.rglob("*.rules"), *_HERE.rglob("*.json")]):
        if "__pycache__" not in path.parts:
            digest.update(path.relative_to(_HERE).as_posix().encode() + b"\0" + path.read_bytes())
    digest.update(GRAMMAR_PATH.read_bytes())
    digest.update(_codec().fingerprint.encode())
    return digest.hexdigest()


def _key(shown: str, text: str, kinds: str | None = None) -> str:
    """`FAMILY-DIGEST`: the family is the file's (and what the entry holds), the digest this very text's."""
    what = "" if kinds is None else f"lowered by {kinds}\0"
    family = hashlib.sha256(f"{compiler_digest()}\0{'parsed' if kinds is None else 'lowered'}\0{shown}".encode())
    exact = hashlib.sha256(f"{compiler_digest()}\0{what}{shown}\0{text}".encode())
    return f"{family.hexdigest()[:_FAMILY]}-{exact.hexdigest()}"


def checked_key(inputs: str) -> str:
    """The key of a whole check's result: `inputs` names every file read (display path and sha256 of its
    text), the rulesets they make and where bases were looked for; the compiler digest covers the rest."""
    return hashlib.sha256(f"{compiler_digest()}\0checked\0{inputs}".encode()).hexdigest()


def _header(key: str) -> bytes:
    """Everything before the payload's checksum: format, compiler and key, so a foreign entry is refused."""
    return b"%s %s %s " % (FORMAT, compiler_digest().encode(), key.encode())


def _checksum(key: str, payload: bytes) -> bytes:
    # Keyed by the entry key (a hash of compiler, path and text): a payload moved from another entry fails.
    return hmac.digest(key.encode(), payload, "sha256").hex().encode()


def pack(key: str, payload: bytes) -> bytes:
    """An entry: one header line, then the payload."""
    return _header(key) + _checksum(key, payload) + b"\n" + payload


def unpack(key: str, entry: bytes) -> bytes | None:
    """The payload of an entry made by `pack` for this key and compiler; None for anything else."""
    header, newline, payload = entry.partition(b"\n")
    expected = _header(key)
    if not newline or header[: len(expected)] != expected:
        return None
    return payload if hmac.compare_digest(header[len(expected) :], _checksum(key, payload)) else None


class ParseCache:
    """Made by `open`; with no folder (turned off or refused) it finds nothing and keeps nothing."""

    def __init__(self, entries: Path | None) -> None:
        self.entries = entries
        # The entries there are, listed once per run when first needed: a file that is not there is then
        # known without asking the file system (a ruleset of 50,000 new files asks 50,000 times).
        self._listed: set[str] | None = None
        self._room = 0  # entries this run may still add
        self._trimmed = False
        self._in_use: set[str] = set()  # entries this run read or wrote: it never trims them
        self._families: dict[str, set[str]] | None = None  # family -> its entries' names, made at a first write

    @classmethod
    def open(cls, folder: Path | None) -> tuple[ParseCache, list[Diagnostic]]:
        """The cache in `folder` (made private if new), or none and a warning if the folder is not private."""
        if folder is None:
            return cls(None), []
        try:
            place, problem = _private_folder(folder)
        except OSError:  # cannot be made or looked at (a read-only home, say): no cache, as when it is off
            return cls(None), []
        if problem is None:
            return cls(place), []
        what = "it" if place == Path(os.path.abspath(folder)) else str(place)
        return cls(None), [
            warning(
                "W006",
                f"not using the parse cache in {folder}: {what} {problem}",
                None,
                "anyone who can write there could change what rulesdsl reads; make it a folder only you can "
                f"write (chmod 700 {folder if what == 'it' else place}), set RULESDSL_CACHE_DIR to another "
                "folder, or to 'off'",
            )
        ]

    def load(self, shown: str, text: str) -> Parsed | None:
        """A file's outline (see the module docstring) and its syntax diagnostics."""
        if self.entries is None:  # no cache: not even its key (the compiler's digest reads every module)
            return None
        value = self._load(_key(shown, text))
        # The codec checked every field's type; what remains is the shape at the top, and that the tree
        # really is of this file (a second line of defence after the key and checksum).
        if not (type(value) is tuple and len(value) == 2 and type(value[1]) is tuple):
            return None
        parsed, diagnostics = value
        if type(parsed) is not SourceFile or parsed.path != shown or parsed.text != text:
            return None
        if not all(type(d) is Diagnostic for d in diagnostics):
            return None
        return parsed, list(diagnostics)

    def save(self, shown: str, text: str, parsed: Parsed) -> None:
        if self.entries is not None:
            self._save(_key(shown, text), (parsed[0], tuple(parsed[1])))

    def load_lowered(self, shown: str, text: str, kinds: str) -> Lowered | None:
        """A file's entities as lowered by the kinds whose digest is `kinds`, with their diagnostics."""
        if self.entries is None:
            return None
        value = self._load(_key(shown, text, kinds))
        if not (type(value) is tuple and len(value) == 4 and value[:2] == (shown, kinds)):
            return None
        _, _, entities, diagnostics = value
        if type(entities) is not tuple or not all(type(e) is ir.Entity and e.file == shown for e in entities):
            return None
        if type(diagnostics) is not tuple or not all(type(d) is Diagnostic for d in diagnostics):
            return None
        return list(entities), list(diagnostics)

    def save_lowered(self, shown: str, text: str, kinds: str, lowered: Lowered) -> None:
        if self.entries is not None:
            self._save(_key(shown, text, kinds), (shown, kinds, tuple(lowered[0]), tuple(lowered[1])))

    def load_checked(self, key: str) -> Checked | None:
        """What a `check` of exactly these inputs found (see `checked_key`): its diagnostics after reading,
        and each compiled ruleset's id and number of entities."""
        value = self._load(key)
        if not (type(value) is tuple and len(value) == 3 and value[0] == "checked"):
            return None
        _, diagnostics, summary = value
        if type(diagnostics) is not tuple or not all(type(d) is Diagnostic for d in diagnostics):
            return None
        if type(summary) is not tuple or not all(
            type(s) is tuple and len(s) == 2 and type(s[0]) is str and type(s[1]) is int for s in summary
        ):
            return None
        return list(diagnostics), summary

    def save_checked(self, key: str, checked: Checked) -> None:
        self._save(key, ("checked", tuple(checked[0]), checked[1]))

    def load_raw(self, key: str) -> bytes | None:
        """The payload of an entry that is not made by the codec (its reader checks it): see `save_raw`."""
        if self.entries is None or key + SUFFIX not in self._entries():
            return None
        try:
            payload = unpack(key, _read_entry(self.entries / f"{key}{SUFFIX}"))
        except OSError:
            return None
        if payload is not None:
            self._in_use.add(key + SUFFIX)
        return payload

    def save_raw(self, key: str, payload: bytes) -> None:
        """An entry of `payload` as it is (another stage's, such as a build's renderings, as JSON)."""
        if self.entries is None:
            return
        if key + SUFFIX not in self._entries() and not self._make_room():  # a damaged entry needs no room
            return
        with contextlib.suppress(OSError):  # cannot write: just not cached
            self._write(key, pack(key, payload))

    def _load(self, key: str) -> object:
        payload = self.load_raw(key)
        if payload is None:
            return None
        try:
            return _codec().loads(payload)
        except CodecError:
            return None

    def _save(self, key: str, value: object) -> None:
        if self.entries is None:
            return
        try:
            payload = _codec().dumps(value)
        except CodecError:  # nested too deeply to encode: just not cached
            return
        self.save_raw(key, payload)

    def _write(self, key: str, entry: bytes) -> None:
        assert self.entries is not None
        handle, partial = tempfile.mkstemp(SUFFIX + ".tmp", key, self.entries)  # 0600, a fresh name
        try:
            with open(handle, "wb") as out:
                out.write(entry)
            os.replace(partial, self.entries / f"{key}{SUFFIX}")
        except OSError:
            os.unlink(partial)
            raise
        self._entries().add(key + SUFFIX)
        self._in_use.add(key + SUFFIX)
        self._supersede(key + SUFFIX)

    def _supersede(self, name: str) -> None:
        """Forget the oldest entries of `name`'s family beyond _VERSIONS, but none this run has used."""
        family, dash, _ = name.partition("-")
        if not dash:  # a whole check's result, a build's renderings: one entry each, no family
            return
        if self._families is None:
            self._families = {}
            for each in self._entries():
                if each[_FAMILY : _FAMILY + 1] == "-":
                    self._families.setdefault(each[:_FAMILY], set()).add(each)
        members = self._families.setdefault(family, set())
        members.add(name)
        folder = self.entries
        assert folder is not None
        spare = sorted(members - self._in_use, key=lambda each: _written(folder, each))  # oldest first
        for each in spare[: max(0, len(members) - _VERSIONS)]:
            self._forget(each)

    def _forget(self, name: str) -> None:
        assert self.entries is not None
        with contextlib.suppress(OSError):
            os.unlink(self.entries / name)
        self._entries().discard(name)
        self._room += 1
        if self._families is not None:
            self._families.get(name[:_FAMILY], set()).discard(name)

    def _entries(self) -> set[str]:
        """The names in the folder, listed at the first call (the only listing of the run)."""
        if self._listed is None:
            assert self.entries is not None
            try:
                self._listed = set(os.listdir(self.entries))
                self._room = _MAX_ENTRIES - len(self._listed)
            except OSError:  # gone meanwhile: no room and no trimming, so no cache for the rest of the run
                self._listed, self._trimmed = set(), True
        return self._listed

    def _make_room(self) -> bool:
        """Whether one more entry fits; the first time the folder is full, trim it."""
        entries = self._entries()
        if self._room <= 0 and not self._trimmed:
            self._trimmed = True  # at most once a run: a run with more files than fit stops writing instead
            self._trim(entries)
            self._room = _MAX_ENTRIES - len(entries)
        self._room -= 1
        return self._room >= 0

    def _trim(self, names: set[str]) -> None:
        """Forget the least recently written entries, down to three quarters of the limit, but none this run
        has used: with more files than fit, it would replace the entries of its first files by those of its
        last, and the next run the other way round, for no gain."""
        folder = self.entries
        assert folder is not None
        oldest = sorted(names - self._in_use, key=lambda name: _written(folder, name))
        for name in oldest[: max(0, len(names) - _MAX_ENTRIES * 3 // 4)]:
            self._forget(name)


def _read_entry(path: Path) -> bytes:
    """An entry's bytes, if it is a regular file: rulesdsl writes nothing else there, and a link to a device
    (`/dev/zero`) or a pipe would be read for ever (OSError: a miss)."""
    with open(path, "rb", opener=_open_entry) as entry:
        if not stat.S_ISREG(os.fstat(entry.fileno()).st_mode):
            raise OSError(f"{path} is not a regular file")
        return entry.read()


def _open_entry(path: str, flags: int) -> int:
    # Not following a link, and not waiting on a pipe's writer, even to find out what it is.
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))


def _written(folder: Path, name: str) -> float:
    try:
        return os.lstat(folder / name).st_mtime
    except OSError:  # gone meanwhile (another run trimming too): forget it first
        return 0.0


def _private_folder(folder: Path) -> tuple[Path, str | None]:
    """Make `folder` and its entries subfolder if missing; the subfolder's real path, or a folder that is
    not private and why."""
    folder = Path(os.path.abspath(folder))
    for made in _make_folders(folder):
        # Any of these that someone else made meanwhile made our mkdir fail: it is checked like the rest.
        problem = _not_private(made)
        if problem is not None:
            return made, problem
    problem = _not_private(folder)
    if problem is not None:
        return folder, problem
    entries = Path(os.path.realpath(folder)) / "parsed"  # resolved once: a link changed later does not matter
    _make_folders(entries)
    return entries, _not_private(entries)


def _make_folders(folder: Path) -> list[Path]:
    """Make `folder` and its missing parents, each 0700; the ones that were missing."""
    missing = []
    for path in (folder, *folder.parents):
        if os.path.lexists(path):
            break
        missing.append(path)
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made meanwhile by someone else: checked by the caller
            os.mkdir(path, 0o700)  # the umask can only take bits away
    return missing


def _not_private(path: Path) -> str | None:
    """Why `path` is not a folder of this user's that only they can write, or None when it is."""
    if not hasattr(os, "geteuid"):  # Windows: no POSIX owners or modes; the default folder is per user
        return None
    user = os.geteuid()
    info = os.lstat(path)
    linked = stat.S_ISLNK(info.st_mode)
    if linked:
        if info.st_uid != user:
            return "is a symbolic link another user made"
        try:
            info = os.stat(path)
        except FileNotFoundError:
            return "is a symbolic link to nothing"
    if not stat.S_ISDIR(info.st_mode):
        return "is not a folder"
    if info.st_uid != user:
        return "is a symbolic link to a folder of another user" if linked else "belongs to another user"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "is a symbolic link to a folder others can write" if linked else "can be written by other users"
    return None
