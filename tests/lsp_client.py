"""A small JSON-RPC client that drives `rulesdsl lsp` over a subprocess's stdio, as an editor does."""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

Message = dict[str, Any]


class LspClient:
    def __init__(self, cwd: Path) -> None:
        # the server's log goes to a file: a pipe nobody reads would fill up and stop the server
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close(), after the server has exited
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rulesdsl", "lsp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            cwd=cwd,
        )
        self.messages: queue.Queue[Message] = queue.Queue()
        self.notifications: list[Message] = []
        self.requests: list[Message] = []  # what the server asked of the client
        self.next_id = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            headers: dict[str, str] = {}
            while True:
                line = stream.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.decode().partition(":")
                headers[name.lower()] = value.strip()
            body = stream.read(int(headers["content-length"]))
            self.messages.put(json.loads(body))

    def _send(self, message: Message) -> None:
        data = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(data) + data)

    def send_bytes(self, data: bytes) -> None:
        """Bytes as they are, framed or not (what a broken client might write)."""
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def request(self, method: str, params: Any, timeout: float = 60) -> Any:
        """The result of a request; fails on an error response or when no answer comes."""
        answer = self.answer(method, params, timeout)
        assert "error" not in answer, answer["error"]
        return answer.get("result")

    def answer(self, method: str, params: Any, timeout: float = 60) -> Message:
        """The response to a request, a result or an error; fails when none comes."""
        self.next_id += 1
        self._send({"id": self.next_id, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            message = self.messages.get(timeout=max(0.01, deadline - time.monotonic()))
            if message.get("id") == self.next_id and "method" not in message:
                return message
            self._keep(message)

    def _keep(self, message: Message) -> None:
        if "method" in message and "id" in message:  # a request from the server (e.g. progress): accept it
            self.requests.append(message)
            self._send({"id": message["id"], "result": None})
        elif "method" in message:
            self.notifications.append(message)

    def wait_for(self, method: str, test: Callable[[Any], bool], timeout: float = 60) -> Any:
        """The params of the first notification `method` that passes `test`, polling as they arrive."""
        deadline = time.monotonic() + timeout
        while True:
            for index, message in enumerate(self.notifications):
                if message["method"] == method and test(message["params"]):
                    del self.notifications[: index + 1]
                    return message["params"]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no {method} passing the test within {timeout} s: {self.notifications[-3:]}")
            with contextlib.suppress(queue.Empty):
                self._keep(self.messages.get(timeout=min(remaining, 0.5)))

    def collect(self, method: str, done: Callable[[list[Any]], bool], timeout: float = 60) -> list[Any]:
        """The params of every notification `method` from here on, in order, once `done` holds for them (each
        taken: a later wait_for does not see them)."""
        found: list[Any] = []
        deadline = time.monotonic() + timeout
        while True:
            kept = [m for m in self.notifications if m["method"] == method]
            self.notifications = [m for m in self.notifications if m["method"] != method]
            found += [m["params"] for m in kept]
            if done(found):
                return found
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"{method}: not done within {timeout} s: {found[-3:]}")
            with contextlib.suppress(queue.Empty):
                self._keep(self.messages.get(timeout=min(remaining, 0.5)))

    def stderr(self) -> str:
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=20)
            self.notify("exit", None)
            self.process.wait(timeout=20)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self.log.close()
