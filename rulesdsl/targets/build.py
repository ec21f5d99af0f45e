"""Build: render every output file in memory, then either compare with disk or replace the output folder.

Replacing the output folder `out` never leaves it half-written, missing or shared by two builds:

- A lock file `.<name>.lock` beside `out` (held with flock) keeps builds of one folder apart: a second
  build waits for the first, up to LOCK_WAIT seconds, then gives up with an OutputError.
- The new tree is assembled in a sibling staging folder `.<name>.new-*`. Files whose bytes did not change
  are hard links to the current ones (copies where the file system refuses links) and keep their inode and
  modification time; only changed files are written. With nothing changed, nothing is written at all.
- Staging and `out` are then exchanged in one step (Linux `renameat2(RENAME_EXCHANGE)`) and the old tree,
  now in the staging folder, is deleted. Where no exchange is possible, two renames are used, with a
  journal `.<name>.journal` naming the retired tree written first: a build killed between the renames
  leaves no `out`, and the next build (or `build --check`) puts the old tree back before anything else.
- Leftovers of killed builds (staging and retired folders, recognised by name and by our marker inside)
  are removed by the next build, under the lock, so never while a live build is using them.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from functools import cache
from pathlib import Path

from rulesdsl.compile.cache import ParseCache, cache_folder
from rulesdsl.compile.pipeline import CompiledRuleset, gc_paused
from rulesdsl.syntax.source import display_path, ruleset_root
from rulesdsl.targets import digests
from rulesdsl.targets.digests import Digests, renderer_digest
from rulesdsl.targets.html import site as html
from rulesdsl.targets.javascript import module as javascript
from rulesdsl.targets.javascript import npm
from rulesdsl.targets.python import package as python
from rulesdsl.targets.python.wheel import build_wheel

if sys.platform != "win32":
    import fcntl

MARKER = ".rulesdsl-output"
MARKER_TEXT = "This folder is written by `rulesdsl build`. Do not edit: rebuild instead.\n"
IGNORED_PARTS = {"__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"}
LOCK_WAIT = 30.0  # seconds a build waits for another build of the same folder before giving up
_sleep = time.sleep  # between looks at a busy lock

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


class OutputError(Exception):
    """The output folder cannot be written (it is not ours, or the file system refused)."""


def render_all(rulesets: tuple[CompiledRuleset, ...], kept: Kept | None = None) -> dict[str, str]:
    """Every output file, by path relative to the output folder (always with '/'). `kept`: what the last build
    rendered of each entity (see Kept), left holding this render's; its rules.js codes serve render_npm too."""
    # Each collection would walk the whole compiled ruleset (a quarter of the time at 10,000 entities).
    with gc_paused():
        return _render_all(rulesets, kept)


def _render_all(rulesets: tuple[CompiledRuleset, ...], kept: Kept | None) -> dict[str, str]:
    files: dict[str, str] = {MARKER: MARKER_TEXT}
    for ruleset in rulesets:
        for name, text in python.render(ruleset, None if kept is None else kept.package).items():
            files[f"{ruleset.id}/{name}"] = text
    for name, text in html.render(rulesets, None if kept is None else kept.site).items():
        files[f"site/{name}"] = text
    for ruleset in rulesets:
        scripts = site_scripts(ruleset, None if kept is None else kept.code)
        files.update({f"site/{name}": text for name, text in scripts.items()})
    return dict(sorted(files.items()))


def render_npm(rulesets: tuple[CompiledRuleset, ...], code_memo: javascript.CodeMemo | None = None) -> dict[str, str]:
    """Every file of an npm folder (`build --npm-dir`): a package per ruleset, `<ruleset>/package.json` ...
    (npm.check must have found nothing wrong with them). `code_memo`: see render_all."""
    with gc_paused():
        files = {f"{r.id}/{name}": text for r in rulesets for name, text in npm.render(r, code_memo).items()}
    return dict(sorted(files.items()))


def site_scripts(ruleset: CompiledRuleset, memo: javascript.CodeMemo | None = None) -> dict[str, str]:
    """A ruleset's rules as JavaScript, beside its pages: rules.js (an ES module) and rules.global.js (the same
    as a classic script, which the builder page loads, from file:// too). Paths relative to the site. `memo`:
    a long-running process's (see javascript.CodeMemo)."""
    module = javascript.render(ruleset, memo)
    return {f"{ruleset.id}/rules.js": module, f"{ruleset.id}/rules.global.js": javascript.classic(module, ruleset.id)}


class Kept:
    """What the last `rulesdsl build` rendered of each entity (the site's cards and rows, the code of rules.js
    and of the package's kind modules), kept in the cache folder (`RULESDSL_CACHE_DIR`) between runs, one
    entry per ruleset and target, so that a build after an edit renders again only the entities the edit can
    have changed (see RenderMemo, CodeMemo, PackageMemo). An entry says first what renderings depend on
    besides their inputs (digests.renderer_digest), and is checked like any entry of the cache; one made by
    another renderer, or that cannot be read, is a build that renders everything. Its key is the ruleset and
    the target only, so that a new renderer (an upgrade of rulesdsl, of Jinja or of Python) writes over the
    entries of the last one: at 10,000 lifepaths they take 50 MB, and the cache is bounded by its number of
    entries, not their size.

    An entry is written again only once what it would keep differs from what it keeps in more than one
    entity in DRIFT: writing 50 MB (at 10,000 lifepaths) costs as much as rendering again a few hundred
    entities, so a build that renders again the few an edit changed leaves the entry as it is, and the next
    build renders them again too (each taken by its digest: never a stale one)."""

    DRIFT = 20

    def __init__(self, cache: ParseCache | None, rulesets: tuple[CompiledRuleset, ...]) -> None:
        self.cache = cache
        # Without a cache: nothing to keep for the next run, only rules.js's codes for the npm packages.
        self.digests = Digests() if cache is not None else None
        self.site = html.RenderMemo(self.digests) if self.digests is not None else None
        self.code = javascript.CodeMemo(self.digests)
        self.package = python.PackageMemo(self.digests) if self.digests is not None else None
        self._targets: list[tuple[str, html.RenderMemo | javascript.CodeMemo | python.PackageMemo]] = []
        if self.site is not None and self.package is not None:
            self._targets = [("site", self.site), ("js", self.code), ("package", self.package)]
        self._loaded: dict[str, tuple[object, dict[object, object]]] = {}  # entry key -> what it keeps (digests)
        if cache is not None:
            self._load(cache, rulesets)

    def _load(self, cache: ParseCache, rulesets: tuple[CompiledRuleset, ...]) -> None:
        for ruleset in rulesets:
            for target, memo in self._targets:
                key = self._key(target, ruleset.id)
                payload = self._payload(cache, key)
                if payload is None:
                    continue
                with suppress(ValueError, TypeError, RecursionError):
                    if memo.load(ruleset.id, *digests.unpack(payload)):
                        self._loaded[key] = memo.digests_of(ruleset.id)
        # The search index's pieces, for all the rulesets together.
        if self.site is not None and (payload := self._payload(cache, self._search_key(rulesets))) is not None:
            with suppress(ValueError, TypeError, RecursionError):
                self.site.search.load(*digests.unpack(payload))

    @staticmethod
    def _renderer() -> bytes:
        """The first line of every entry: the renderer that made it."""
        return renderer_digest().encode() + b"\n"

    @classmethod
    def _payload(cls, cache: ParseCache, key: str) -> bytes | None:
        """An entry's payload after its renderer's digest, if it is this renderer's."""
        payload, renderer = cache.load_raw(key), cls._renderer()
        return payload[len(renderer) :] if payload is not None and payload.startswith(renderer) else None

    def _save(self, key: str, data: object, aside: digests.Aside) -> None:
        assert self.cache is not None
        self.cache.save_raw(key, self._renderer() + digests.pack(data, aside))

    @classmethod
    def open(cls, rulesets: tuple[CompiledRuleset, ...]) -> Kept:
        """The renderings kept in the user's cache folder (none where there is no cache)."""
        cache, _ = ParseCache.open(cache_folder())  # a folder refused is warned about by the check before
        return cls(cache if cache.entries is not None else None, rulesets)

    def save(self, rulesets: tuple[CompiledRuleset, ...]) -> None:
        """Keep what this build rendered, for the next (where it differs enough from what is kept)."""
        if self.cache is None:
            return
        for ruleset in rulesets:
            for target, memo in self._targets:
                key = self._key(target, ruleset.id)
                now, before = memo.digests_of(ruleset.id), self._loaded.get(key)
                if before is not None and self._drift(before, now) * self.DRIFT <= len(now[1]):
                    continue
                aside = digests.Aside()
                data = memo.data(ruleset.id, aside)
                if data is not None:
                    self._save(key, data, aside)
        if self.site is not None and self.site.search.made:  # pieces are small: kept whenever one is new
            aside = digests.Aside()
            self._save(self._search_key(rulesets), self.site.search.data(aside), aside)

    @staticmethod
    def _drift(before: tuple[object, dict[object, object]], now: tuple[object, dict[object, object]]) -> int:
        """In how many entities `now` differs from `before` (in all where their contexts differ)."""
        if before[0] != now[0]:
            return len(now[1])
        kept = before[1]
        return sum(1 for key, deps in now[1].items() if kept.get(key) != deps)

    @staticmethod
    def _key(target: str, ruleset: str) -> str:
        return hashlib.sha256(f"rendered\0{target}\0{ruleset}".encode()).hexdigest()

    @classmethod
    def _search_key(cls, rulesets: tuple[CompiledRuleset, ...]) -> str:
        return cls._key("search", "\0".join(r.id for r in rulesets))


def _encoded(files: Mapping[str, str]) -> dict[str, bytes]:
    """The bytes to write, the marker always among them (first: see _stage)."""
    return {name: text.encode("utf-8") for name, text in {MARKER: MARKER_TEXT, **files}.items()}


def _on_disk(out: Path) -> dict[str, int]:
    """What `out` holds, links never followed: relative path -> size of each regular file, -1 for anything
    else (a link, a pipe), which no build writes. Bytecode and tool caches are left out."""
    found: dict[str, int] = {}
    for here, folders, names in os.walk(out):
        folders[:] = [name for name in folders if name not in IGNORED_PARTS]
        for name in [*folders, *names]:
            path = Path(here, name)
            try:
                info = path.lstat()
            except OSError:  # gone meanwhile
                continue
            if stat.S_ISDIR(info.st_mode) or name.endswith(".pyc"):
                continue
            found[path.relative_to(out).as_posix()] = info.st_size if stat.S_ISREG(info.st_mode) else -1
    return found


def _unchanged(out: Path, on_disk: Mapping[str, int], files: Mapping[str, bytes]) -> set[str]:
    """The files whose bytes on disk are already the ones to write."""
    same = set()
    for name, data in files.items():
        if on_disk.get(name) == len(data):
            with suppress(OSError):
                if (out / name).read_bytes() == data:
                    same.add(name)
    return same


def stale_files(out: Path, files: Mapping[str, str]) -> list[str]:
    """Files that differ between what a build would write and what is on disk (missing, changed, extra)."""
    if not out.is_dir():
        return sorted(files)
    data = _encoded(files)
    on_disk = _on_disk(out)
    same = _unchanged(out, on_disk, data)
    return sorted([name for name in data if name not in same] + [name for name in on_disk if name not in data])


def _beside(out: Path, what: str) -> Path:
    """A name next to `out` that only builds of `out` use: `.<name>.<what>`."""
    return out.parent / f".{out.name}.{what}"


def _is_leftover(out: Path, name: str) -> bool:
    """A staging (`new`) or retired (`old`) folder name of a build of `out` (the suffix has no dot, so the
    folders of another output called, say, `gen.new-x` never match those of `gen`)."""
    return re.fullmatch(rf"\.{re.escape(out.name)}\.(new|old)-[A-Za-z0-9_]+", name) is not None


def _has_marker(folder: Path) -> bool:
    with suppress(OSError):
        return stat.S_ISREG((folder / MARKER).lstat().st_mode)
    return False


def _discard(folder: Path) -> None:
    """Delete one of our trees, its marker last, so that a build killed meanwhile leaves one still seen as ours
    (and removed next time). Never follows links out of it."""
    with suppress(OSError):
        for name in os.listdir(folder):
            path = folder / name
            if name == MARKER:
                continue
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                with suppress(OSError):
                    path.unlink()
        if set(os.listdir(folder)) - {MARKER}:
            return  # something could not be deleted: keep the marker, the next build tries again
        (folder / MARKER).unlink(missing_ok=True)
        folder.rmdir()


def _absolute(out: Path) -> Path:
    """`out` made absolute without resolving links (so a link named as the output is seen as a link)."""
    return Path(os.path.abspath(out))


def _check_parent(out: Path) -> None:
    """The folder that holds `out` must exist and be writable: rulesdsl creates only `out` itself, so that
    a mistyped --out is an error and nothing is ever written outside it (but its staging and lock)."""
    if not out.name:
        raise OutputError(f"{display_path(out)} cannot be an output folder")
    nearest = out.parent
    while not os.path.lexists(nearest):
        nearest = nearest.parent
    if not nearest.is_dir():
        raise OutputError(f"cannot write {display_path(out)}: {display_path(nearest)} is a file, not a folder")
    if nearest != out.parent:
        raise OutputError(
            f"cannot write {display_path(out)}: the folder {display_path(out.parent)} does not exist (create it first; "
            "rulesdsl creates only the output folder itself)"
        )
    if not os.access(out.parent, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write {display_path(out)}: the folder {display_path(out.parent)} is not writable")


def _check_replaceable(out: Path) -> None:
    """`out` may be missing, an empty folder, or a folder an earlier build wrote; nothing else."""
    if out.is_symlink():
        raise OutputError(f"{display_path(out)} is a symbolic link; give the folder itself as --out")
    if not os.path.lexists(out):
        return
    if not out.is_dir():
        raise OutputError(f"{display_path(out)} is a file, not a folder; refusing to replace it")
    if any(out.iterdir()) and not _has_marker(out):
        raise OutputError(
            f"{display_path(out)} exists and was not written by rulesdsl (no {MARKER} in it); refusing to replace it"
        )


def check_out(out: Path, sources: Sequence[Path], *, writing: bool, option: str = "--out") -> None:
    """Refuse, before any work, an output folder that overlaps the sources or (when writing) cannot be written;
    `option`: how the command line names it."""
    where = Path(os.path.realpath(out))
    reals = [Path(os.path.realpath(given)) for given in sources]
    folders = list(dict.fromkeys([*reals, *(root for root in map(ruleset_root, reals) if root is not None)]))
    overlaps: list[tuple[str, Callable[[Path], bool]]] = [
        ("is one of the sources ({})", lambda folder: where == folder),
        ("is inside the sources {}: a build must not write where it reads", where.is_relative_to),
        ("holds the sources {}: replacing it would delete them", lambda folder: folder.is_relative_to(where)),
    ]
    for problem, overlap in overlaps:
        for folder in folders:
            if overlap(folder):
                raise OutputError(f"{option} {out} " + problem.format(display_path(folder)))
    if writing:
        _check_parent(_absolute(out))
        _check_replaceable(_absolute(out))


@contextmanager
def _locked(out: Path, notify: Callable[[str], None] | None) -> Iterator[None]:
    """Hold the lock of `out`'s builds; the lock file is removed again on release."""
    if sys.platform == "win32":  # no flock: builds of one folder must not overlap
        yield
        return
    path = _beside(out, "lock")
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode("ascii", "replace").strip()
            os.close(fd)
            if time.monotonic() >= deadline:
                raise OutputError(
                    f"another rulesdsl build (pid {holder or '?'}) is writing {display_path(out)}; "
                    f"gave up after waiting {LOCK_WAIT:g} s"
                ) from None
            if notify is not None:
                notify(f"rulesdsl: waiting for another build (pid {holder or '?'}) of {display_path(out)} to finish")
                notify = None
            _sleep(0.05)
            continue
        try:
            current = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            current = None
        if current is not None and os.path.samestat(os.fstat(fd), current):
            break
        os.close(fd)  # the build before us removed the file we locked: that lock guards nothing, start over
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())  # for the message a waiting build prints
        yield
    finally:
        try:
            with suppress(OSError):
                os.unlink(path)  # while still holding it: a build that opened it meanwhile sees it is gone
        finally:
            os.close(fd)


def _recover(out: Path) -> None:
    """Put back the tree a build killed between its two renames (see _swap) left without a name."""
    journal = _beside(out, "journal")
    try:
        retired: Path | None = out.parent / json.loads(journal.read_text(encoding="utf-8"))["retired"]
    except FileNotFoundError:
        return
    except (OSError, ValueError, KeyError, TypeError):
        retired = None  # only partly written: the kill came before the renames, so `out` is intact
    if (
        retired is not None
        and retired.parent == out.parent
        and _is_leftover(out, retired.name)
        and retired.is_dir()
        and not retired.is_symlink()
        and not os.path.lexists(out)
    ):
        os.rename(retired, out)
    journal.unlink()


def recover_output(out: Path) -> None:
    """What `build --check` does before comparing: undo a half-done swap, if a killed build left one."""
    out = _absolute(out)
    if not os.path.lexists(_beside(out, "journal")):
        return
    try:
        with _locked(out, None):
            _recover(out)
    except OSError as exc:
        raise OutputError(f"cannot recover {display_path(out)}: {exc.strerror or exc}") from exc


def _remove_leftovers(out: Path) -> None:
    """Staging and retired folders of killed builds of `out`; called under the lock, so none is in use."""
    for name in os.listdir(out.parent):
        folder = out.parent / name
        if not (_is_leftover(out, name) and folder.is_dir() and not folder.is_symlink()):
            continue
        if _has_marker(folder):
            _discard(folder)
        else:
            with suppress(OSError):
                folder.rmdir()  # only when empty: killed before it held anything; otherwise not ours


def _reuse(current: Path, target: Path) -> None:
    """Carry an unchanged file over: a hard link keeps inode and modification time, a copy at least the time."""
    try:
        os.link(current, target, follow_symlinks=False)
    except OSError:  # no hard links here (some file systems, or a link count limit)
        shutil.copy2(current, target, follow_symlinks=False)


def _stage(out: Path, files: Mapping[str, bytes], same: set[str]) -> Path:
    """A sibling folder holding exactly `files`, unchanged ones taken from `out`."""
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=out.parent))
    try:
        os.chmod(staging, 0o755)  # mkdtemp makes it private; the output is meant to be shared
        for name in sorted(files, key=lambda name: name != MARKER):  # the marker first: a leftover is seen as ours
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if name in same:
                _reuse(out / name, target)
            else:
                with open(target, "wb") as handle:
                    handle.write(files[name])
    except BaseException:
        _discard(staging)
        raise
    return staging


@cache
def _renameat2() -> Callable[..., int] | None:
    if sys.platform != "linux":
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # a C library without renameat2 (glibc before 2.28, older musl)
        return None
    function.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    function.restype = ctypes.c_int
    exchange: Callable[..., int] = function
    return exchange


def _exchange(first: Path, second: Path) -> bool:
    """Swap two paths in one step; False where this system or file system cannot (then _swap uses a journal)."""
    renameat2 = _renameat2()
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(second))


def _swap(staging: Path, out: Path) -> Path | None:
    """Put `staging` in the place of `out`; returns where the old tree now is (None when there was none)."""
    if not os.path.lexists(out):
        os.rename(staging, out)
        return None
    if _exchange(staging, out):
        return staging
    # Two renames leave a moment with no `out`: first record where the old tree goes, so that _recover can
    # put it back if this process dies in that moment.
    retired = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    journal = _beside(out, "journal")
    try:
        journal.write_text(json.dumps({"retired": retired.name}) + "\n", encoding="utf-8")
        os.replace(out, retired)  # onto the empty folder mkdtemp reserved
        os.replace(staging, out)
    except BaseException:
        if not os.path.lexists(out):
            os.replace(retired, out)  # stopped between the renames: put the old tree back now
        journal.unlink(missing_ok=True)
        with suppress(OSError):
            retired.rmdir()  # reserved, never used
        raise
    journal.unlink()
    return retired


def write_output(out: Path, files: Mapping[str, str], notify: Callable[[str], None] | None = None) -> int:
    """Make `out` hold exactly `files` (see the module docstring); returns how many files were written.

    `notify` is told when the build has to wait for another build of the same folder.
    """
    out = _absolute(out)
    _check_parent(out)
    data = _encoded(files)
    try:
        with _locked(out, notify):
            _recover(out)
            _remove_leftovers(out)
            _check_replaceable(out)
            on_disk = _on_disk(out) if out.is_dir() else {}
            same = _unchanged(out, on_disk, data)
            if out.is_dir() and len(same) == len(data) and on_disk.keys() <= data.keys():
                return 0
            staging = _stage(out, data, same)
            try:
                old = _swap(staging, out)
            except BaseException:
                _discard(staging)
                raise
            if old is not None:
                _discard(old)
    except OSError as exc:
        where = f" ({display_path(Path(exc.filename))})" if exc.filename else ""
        raise OutputError(f"cannot write {display_path(out)}: {exc.strerror or exc}{where}") from exc
    return len(data) - len(same)


# ---------------------------------------------------------------- wheels (--wheel-dir)


def render_wheels(rulesets: tuple[CompiledRuleset, ...], files: Mapping[str, str]) -> dict[str, bytes]:
    """A wheel per ruleset, by file name, from the packages render_all made (`files`)."""
    wheels: dict[str, bytes] = {}
    for ruleset in rulesets:
        prefix = f"{ruleset.id}/"
        package = {name.removeprefix(prefix): text for name, text in files.items() if name.startswith(prefix)}
        name, data = build_wheel(ruleset, package)
        wheels[name] = data
    return dict(sorted(wheels.items()))


def check_npm_dir(folder: Path, sources: Sequence[Path], *, out: Path, wheel_dir: Path | None, writing: bool) -> None:
    """--npm-dir is held to what --out is (see check_out), and apart from --out and --wheel-dir: each build
    replaces its whole folder, so neither may hold the other."""
    check_out(folder, sources, writing=writing, option="--npm-dir")
    where = Path(os.path.realpath(folder))
    for option, other in (("--out", out), ("--wheel-dir", wheel_dir)):
        there = Path(os.path.realpath(other)) if other is not None else None
        if there is not None and (where.is_relative_to(there) or there.is_relative_to(where)):
            raise OutputError(f"--npm-dir {folder} and {option} {other} overlap: a build replaces all of --npm-dir")


def check_wheel_dir(folder: Path, out: Path) -> None:
    """Refuse, before any work, a --wheel-dir that is a file, cannot be written, or lies inside --out (the next
    build would replace it with the output tree)."""
    where = _absolute(folder)
    if Path(os.path.realpath(where)).is_relative_to(os.path.realpath(out)):
        raise OutputError(
            f"--wheel-dir {display_path(folder)} is inside --out {display_path(out)}, which every build replaces"
        )
    if not os.path.lexists(where):
        _check_parent(where)  # created by the build, and nothing above it
        return
    if not where.is_dir():
        raise OutputError(f"--wheel-dir {display_path(folder)} is a file, not a folder")
    if not os.access(where, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write wheels to {display_path(folder)}: the folder is not writable")


def write_wheels(folder: Path, wheels: Mapping[str, bytes]) -> int:
    """Put the wheels in `folder` (made if missing); returns how many were written. A wheel whose bytes are
    already there is left alone. Every changed wheel is written to a temporary file first and only then are
    they renamed into place, each in one step: a failed write leaves each wheel old or new, never half."""
    where = _absolute(folder)
    staged: list[tuple[str, str]] = []
    try:
        where.mkdir(exist_ok=True)
        umask = os.umask(0)
        os.umask(umask)
        for name, data in wheels.items():
            with suppress(OSError):
                if (where / name).read_bytes() == data:
                    continue
            fd, temporary = tempfile.mkstemp(dir=where, prefix=f".{name}.", suffix=".tmp")
            staged.append((temporary, name))
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.chmod(temporary, 0o666 & ~umask)
        for temporary, name in staged:
            os.replace(temporary, where / name)
    except OSError as exc:
        raise OutputError(f"cannot write wheels to {display_path(folder)}: {exc.strerror or exc}") from exc
    finally:
        for temporary, _ in staged:
            with suppress(OSError):
                os.unlink(temporary)  # only those not renamed: a failed write leaves no temporary file
    return len(staged)
