"""Live preview (`rulesdsl serve`): build the reference, serve it on 127.0.0.1, rebuild on every save.

The site is rendered into memory and served from there, so a rebuild replaces it in one step and a
failed build leaves the last good site served. Pages get a small script (only when served, never in
the built files) that listens to `/__rulesdsl/events` (server-sent events: the server pushes each build's
outcome the moment it is known, nothing polls): it reloads the page when a new build is ready and shows a
failed build's diagnostics (file:line:col and message) over the page. `/__rulesdsl/status` answers the same
once, for scripts. The sources are watched
with watchfiles from the nearest folder that exists, so a source folder that disappears and comes back
is picked up again.
"""

from __future__ import annotations

import html
import json
import mimetypes
import sys
import threading
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from rulesdsl.compile.memo import Memo
from rulesdsl.diagnostics import Diagnostic, render_text, summary
from rulesdsl.syntax.source import SUFFIX
from rulesdsl.targets.html.site import RenderMemo
from rulesdsl.targets.javascript.module import CodeMemo

STATUS_PATH = "/__rulesdsl/status"
EVENTS_PATH = "/__rulesdsl/events"
KEEP_ALIVE_S = 15.0  # a comment line this often on an idle stream, so a closed tab ends its thread
MAX_SHOWN = 20  # diagnostics shown over the page; the terminal has them all

_SCRIPT = """<script>/* rulesdsl serve: live reload */
(function () {
  var seen = %(version)d;
  function show(errors) {
    var box = document.getElementById("rulesdsl-errors");
    if (!errors) { if (box) box.remove(); return; }
    if (!box) {
      box = document.createElement("pre");
      box.id = "rulesdsl-errors";
      box.style.cssText = "position:fixed;left:0;right:0;bottom:0;max-height:50vh;overflow:auto;margin:0;" +
        "padding:1em;background:#fff0f0;color:#900;border-top:3px solid #c00;font:13px monospace;z-index:9999";
      document.body.appendChild(box);
    }
    box.textContent = "The last build failed; this is the last good build.\\n\\n" + errors.join("\\n");
  }
  // the server pushes each build's outcome; EventSource reconnects by itself if the server restarts
  new EventSource("%(events)s").onmessage = function (event) {
    var s = JSON.parse(event.data);
    if (s.version !== seen) { location.reload(); return; }
    show(s.errors);
  };
})();
</script>"""


@dataclass
class State:
    """What is being served: the last good site, and the last build's errors (if it failed)."""

    files: dict[str, bytes] = field(default_factory=dict)  # path in the site -> content
    version: int = 0  # counts good builds
    errors: list[str] | None = None
    lock: threading.Condition = field(default_factory=threading.Condition)  # notified when a build ends
    builds: int = 0  # counts builds, good and failed: what the event streams wait for
    # What the last build derived, for the next: each file's parse and lowering, each entity's rendering.
    memo: Memo = field(default_factory=Memo)
    render_memo: RenderMemo = field(default_factory=RenderMemo)
    code_memo: CodeMemo = field(default_factory=CodeMemo)

    def status(self) -> dict[str, Any]:
        with self.lock:
            return {"version": self.version, "errors": self.errors}

    def ended(self) -> None:
        """A build ended (the lock held): wake every event stream."""
        self.builds += 1
        self.lock.notify_all()

    def next_status(self, after: int, timeout: float) -> tuple[int, dict[str, Any] | None]:
        """The status once a build after the `after`-th has ended, or None after `timeout` seconds."""
        with self.lock:
            if not self.lock.wait_for(lambda: self.builds > after, timeout):
                return after, None
            return self.builds, {"version": self.version, "errors": self.errors}


def build_once(paths: Sequence[Path], state: State, color: bool = False) -> bool:
    """One build into `state`; diagnostics go to the terminal and, when it fails, to the page. A crash of
    the compiler is a failed build too: the page says so, and the next save builds again."""
    try:
        return _build(paths, state, color)
    except Exception as exc:  # a bug in rulesdsl, but the preview goes on: the next save may not hit it
        traceback.print_exc()
        return _failed(state, [f"rulesdsl crashed while building (a bug in rulesdsl; please report it): {exc!r}"])


def _build(paths: Sequence[Path], state: State, color: bool) -> bool:
    from rulesdsl.compile.pipeline import compile_paths, gc_paused
    from rulesdsl.targets.build import site_scripts
    from rulesdsl.targets.html import site as html_site

    started = time.monotonic()
    missing = [p for p in paths if not p.exists()]
    if missing:
        return _failed(state, [f"{p}: no such file or folder (waiting for it to come back)" for p in missing])
    compilation = compile_paths(paths, memo=state.memo)
    diagnostics = list(compilation.diagnostics)
    if diagnostics:
        sys.stderr.write(render_text(diagnostics, compilation.sources, color=color, max_errors=MAX_SHOWN))
        sys.stderr.write(summary(diagnostics) + "\n")
    if not compilation.ok or not compilation.rulesets:
        problems = [_line(d) for d in diagnostics if d.severity == "error"][:MAX_SHOWN]
        return _failed(state, problems or ["no ruleset found (a ruleset is a folder with a ruleset.rules)"])
    # Like `build`, without the cyclic collector: it would walk the whole ruleset at each pass (gc_paused).
    with gc_paused():
        rendered = html_site.render(compilation.rulesets, state.render_memo)
        for ruleset in compilation.rulesets:  # rules.js too: the builder page runs on it
            rendered.update(site_scripts(ruleset, state.code_memo))
        state.code_memo.keep_only({r.id for r in compilation.rulesets})
    site = {name: text.encode("utf-8") for name, text in rendered.items()}
    with state.lock:
        if site != state.files:  # an unchanged site reloads no page
            state.files = site
            state.version += 1
        state.errors = None
        state.ended()
    print(f"built in {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
    return True


def _line(d: Diagnostic) -> str:
    where = f"{d.pos.file}:{d.pos.line}:{d.pos.column}: " if d.pos is not None else ""
    return f"{where}{d.severity}: {d.message} [{d.code}]"


def _failed(state: State, errors: list[str]) -> bool:
    with state.lock:
        state.errors = errors
        state.ended()
    print("build failed; still serving the last good build", file=sys.stderr, flush=True)
    return False


# A page on another site may resolve its own name to 127.0.0.1 (DNS rebinding) and read what is served here:
# its requests name that site in their Host header, so only requests naming this machine are answered.
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})


def local_host(header: str | None) -> bool:
    """Whether a Host header names this machine: one of LOCAL_HOSTS, with a port or without."""
    if header is None:
        return False
    value = header.strip().lower()
    host, colon, port = value.rpartition(":")
    if not colon or "]" in port:  # no port: the last colon, if any, is inside "[::1]"
        return value in LOCAL_HOSTS
    return host in LOCAL_HOSTS and port.isascii() and port.isdigit() and len(port) <= 5


def _handler(state: State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if not local_host(self.headers.get("Host")):
                body = b"rulesdsl serve answers only requests for 127.0.0.1, localhost or [::1]\n"
                self._send(body, "text/plain", HTTPStatus.FORBIDDEN)
                return
            path = unquote(urlparse(self.path).path)
            if path == STATUS_PATH:
                self._send(json.dumps(state.status()).encode(), "application/json")
                return
            if path == EVENTS_PATH:
                self._events()
                return
            name = path.lstrip("/") or "index.html"
            if name.endswith("/"):
                name += "index.html"
            with state.lock:
                content, version, errors = state.files.get(name), state.version, state.errors
            if content is None and version == 0 and name.endswith(".html"):
                content = _waiting_page(errors)  # no good build yet: say why, and reload when there is one
            if content is None and name == "favicon.ico":  # browsers ask; the reference has none
                self._send(b"", "image/x-icon", HTTPStatus.NO_CONTENT)
                return
            if content is None:
                self.send_error(HTTPStatus.NOT_FOUND, "not in the reference")
                return
            kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
            if name.endswith(".html"):
                script = _SCRIPT % {"version": version, "events": EVENTS_PATH}
                text = content.decode("utf-8")
                at = text.rfind("</body>")
                content = (text[:at] + script + text[at:] if at >= 0 else text + script).encode("utf-8")
            self._send(content, kind)

        def _send(self, body: bytes, kind: str, status: HTTPStatus = HTTPStatus.OK) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind + ("; charset=utf-8" if kind.startswith("text/") else ""))
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def _events(self) -> None:
            """Server-sent events: the status now, then after every build, until the page goes away."""
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            with state.lock:
                seen, now = state.builds, {"version": state.version, "errors": state.errors}
            try:
                self.wfile.write(f"data: {json.dumps(now)}\n\n".encode())
                self.wfile.flush()
                while True:
                    seen, status = state.next_status(seen, KEEP_ALIVE_S)
                    line = f"data: {json.dumps(status)}\n\n" if status is not None else ": still here\n\n"
                    self.wfile.write(line.encode())
                    self.wfile.flush()
            except OSError:  # the page was closed or reloaded
                return

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the terminal shows builds, not every request

    return Handler


def _waiting_page(errors: list[str] | None) -> bytes:
    body = "<br>".join(html.escape(e) for e in errors or ["building..."])
    return f"<!doctype html><html><head><title>rulesdsl</title></head><body><p>{body}</p></body></html>".encode()


def _nearest_existing(path: Path) -> Path:
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def watch(
    paths: Sequence[Path], state: State, stop: threading.Event, ready: threading.Event, color: bool = False
) -> None:
    """Rebuild whenever a .rules file under `paths` changes, or one of them appears or vanishes; `ready`
    is set once the first watch is in place."""
    import watchfiles

    wanted = [p.absolute() for p in paths]

    def relevant(change: watchfiles.Change, name: str) -> bool:
        changed = Path(name)
        return any(changed.is_relative_to(p) or p.is_relative_to(changed) for p in wanted) and (
            name.endswith(SUFFIX) or not changed.suffix
        )

    while not stop.is_set():
        roots = sorted({_nearest_existing(p) for p in wanted})
        try:
            for changes in watchfiles.watch(
                *roots,
                watch_filter=relevant,
                stop_event=stop,
                debounce=150,
                step=50,
                rust_timeout=500,
                yield_on_timeout=True,
                raise_interrupt=False,
            ):
                if not ready.is_set():  # watching now: catch up with edits made while it started
                    ready.set()
                    build_once(paths, state, color)
                elif changes:
                    build_once(paths, state, color)
                if sorted({_nearest_existing(p) for p in wanted}) != roots:
                    build_once(paths, state, color)  # a folder came back (or went): watch from there
                    break
        except (FileNotFoundError, RuntimeError, OSError):  # the watched folder itself went away
            time.sleep(0.2)
        except Exception:  # never lose the watcher: a preview that stops rebuilding looks like a working one
            traceback.print_exc()
            time.sleep(0.2)


def serve(paths: Sequence[Path], port: int, *, color: bool = False) -> int:
    state = State()
    build_once(paths, state, color)
    server = ThreadingHTTPServer(("127.0.0.1", port), _handler(state))
    server.daemon_threads = True
    stop = threading.Event()
    ready = threading.Event()
    watcher = threading.Thread(target=watch, args=(paths, state, stop, ready, color), daemon=True)
    watcher.start()
    ready.wait(timeout=30)
    print(f"serving the reference at http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        server.server_close()
        watcher.join(timeout=2)
    return 0
