"""Benchmark: memory of the long-running processes after many edits (issue 20: "peak memory after 1,000
edits within 10% of after 10").

Not a test: run it by hand (`.venv/bin/python benchmarks/memory.py`, `--edits N` for another count) and read
what it prints. Two processes, each with the cache as a user has it:

- the language server (`rulesdsl lsp`) over a copy of `rules/`: a Burning Wheel file opened, then changed
  (not saved) N times, each change waited for until its diagnostics come; its peak resident memory
  (VmHWM, Linux) read after the 10th change and after the last;
- the preview's rebuild (`rulesdsl serve`'s `build_once`, compile and the whole reference in memory) in a
  child process, on a synthetic ruleset of 100 lifepaths (a save of `rules/` takes seconds: 1,000 of them
  would take an hour), the file saved N times; its peak resident memory (ru_maxrss) after the 10th
  rebuild and after the last.

Peak memory can only grow; a cache that grew with every compile would show as a later peak well above
the early one. Linux only (it reads /proc).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench import synthetic_ruleset  # noqa: E402

EARLY = 10  # the edit after which the first peak is read


def _peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc (not Linux?)")


def _edited(text: str, edit: int) -> str:
    """A change no earlier one made: the first `resources: N` becomes a number never used before."""
    changed, count = re.subn(r"resources: \d+", f"resources: {1000 + edit}", text, count=1)
    assert count == 1
    return changed


def language_server(rules: Path, edits: int) -> tuple[int, int]:
    """Peak resident KiB of `rulesdsl lsp` after EARLY changes and after `edits`."""
    from tests.lsp_client import LspClient

    client = LspClient(rules.parent)
    try:
        client.request("initialize", {"processId": None, "rootUri": rules.parent.as_uri(), "capabilities": {}})
        client.notify("initialized", {})
        path = rules / "burning_wheel" / "human" / "peasant.rules"
        uri, text = path.resolve().as_uri(), path.read_text(encoding="utf-8")
        client.notify(
            "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "rules", "version": 0, "text": text}}
        )
        client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri, timeout=600)
        early = 0
        for version in range(1, edits + 1):
            text = _edited(text, version)
            change = {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}
            client.notify("textDocument/didChange", change)
            client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri, timeout=600)
            if version == EARLY:
                early = _peak_kib(client.process.pid)
        return early, _peak_kib(client.process.pid)
    finally:
        client.close()


SERVE_CHILD = """
import json, re, resource, sys
from pathlib import Path
from rulesdsl.tools.serve import State, build_once
folder, edits, early_at = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
edited = folder / "lifepaths_000.rules"
text = edited.read_text(encoding="utf-8")
state, early = State(), 0
for edit in range(1, edits + 1):
    text, count = re.subn(r"resources: \\d+", f"resources: {1000 + edit}", text, count=1)
    edited.write_text(text, encoding="utf-8")
    assert build_once([folder], state) and state.errors is None
    if edit == early_at:
        early = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps([early, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss]))
"""


def preview(folder: Path, edits: int, env: dict[str, str]) -> tuple[int, int]:
    """Peak resident KiB of serve's rebuild after EARLY saves and after `edits`."""
    ran = subprocess.run(
        [sys.executable, "-c", SERVE_CHILD, str(folder), str(edits), str(EARLY)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    early, late = json.loads(ran.stdout.strip().splitlines()[-1])
    return int(early), int(late)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edits", type=int, default=1000, help="edits per process (default 1,000)")
    parser.add_argument("--only", choices=["lsp", "serve"], help="measure one process only")
    args = parser.parse_args()
    if args.edits <= EARLY:
        parser.error(f"--edits must be more than {EARLY}")
    work = Path(tempfile.mkdtemp(prefix="rulesdsl-memory-"))
    env = {**os.environ, "RULESDSL_CACHE_DIR": str(work / "cache"), "PYTHONPATH": str(ROOT)}
    os.environ.update(env)  # the language server's environment (this is a script)
    try:
        rows = []
        if args.only in (None, "lsp"):
            rules = work / "lsp" / "rules"
            shutil.copytree(ROOT / "rules", rules)
            rows.append(("language server, rules/", *language_server(rules, args.edits)))
        if args.only in (None, "serve"):
            folder = synthetic_ruleset(work / "serve" / "synth", 100)
            rows.append(("serve's rebuild, 100 lifepaths", *preview(folder, args.edits, env)))
        print(f"| process | peak after {EARLY} edits | peak after {args.edits:,} | growth |")
        print("|---|---|---|---|")
        for label, early, late in rows:
            print(f"| {label} | {early / 1024:.0f} MiB | {late / 1024:.0f} MiB | {late / early - 1:+.1%} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
