"""The command line: `rulesdsl check | build | export | fmt | import | explain | serve | lsp`.

Exit codes: 0 success; 1 the sources have errors (or, with `build --check`, the output is stale;
with `fmt --check`, a file is not formatted); 2 usage errors (bad arguments, missing paths, an output
folder that is not ours or cannot be written); 3 an internal error in rulesdsl itself (a bug: please
report it).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from rulesdsl import __version__
from rulesdsl.diagnostics import Diagnostic, render_github, render_json, render_text, summary, use_color
from rulesdsl.tools.common import (
    EXIT_DIAGNOSTICS,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    write_atomically,
)

if TYPE_CHECKING:
    from rulesdsl.compile.pipeline import Compilation, CompiledRuleset
    from rulesdsl.targets.build import Kept

Stage = Callable[[str], None]  # says which stage a long run is in


class _Parser(argparse.ArgumentParser):
    """argparse, with its usage errors raised (so that `--format json` can print them as JSON)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see: {self.prog} --help)")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rulesdsl",
        description="Compile tabletop rules written in .rules files into a Python package and an HTML reference.",
        epilog="Exit codes: 0 ok, 1 errors in the sources (or stale output with build --check, unformatted files "
        "with fmt --check), 2 usage, 3 internal error.",
    )
    parser.add_argument("--version", action="version", version=f"rulesdsl {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    def add(name: str, help_text: str, *, formats: tuple[str, ...] = ("text", "json")) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument(
            "paths", nargs="*", type=Path, metavar="PATH", help="rulesets or folders of rulesets (default: rules/)"
        )
        sub.add_argument("--format", choices=formats, default="text", help="how to print diagnostics")
        sub.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="colour the output")
        sub.add_argument(
            "--max-errors",
            type=int,
            default=50,
            metavar="N",
            help="show N diagnostics in full, then count the rest by code (default 50; 0: all)",
        )
        sub.add_argument("--strict", action="store_true", help="fail on warnings too")
        return sub

    ci = ("text", "json", "github")  # github: workflow commands, annotations on a pull request
    add("check", "check the rules and report every problem", formats=ci)
    build = add("build", "check the rules and write the Python packages and the HTML reference", formats=ci)
    build.add_argument("--out", type=Path, default=Path("generated"), help="output folder (default: generated/)")
    build.add_argument("--check", action="store_true", help="write nothing; exit 1 when the output on disk is stale")
    build.add_argument(
        "--wheel-dir",
        type=Path,
        metavar="DIR",
        help="also write a wheel per ruleset (witcher-0.1.0-py3-none-any.whl) here",
    )
    build.add_argument(
        "--npm-dir", type=Path, metavar="DIR", help="also write an npm package per ruleset, in DIR/<ruleset>/"
    )
    export = add(
        "export",
        "print the rulesets (kinds and validated entities) as one JSON object, see docs/export.md (--format "
        "yaml: as YAML; --format json: diagnostics as JSON on standard error)",
        formats=("text", "json", "yaml"),
    )
    export.add_argument("--schema", action="store_true", help="print the JSON Schema of the export instead")
    fmt = add("fmt", "rewrite .rules files in the canonical layout, keeping every comment")
    fmt.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file is not formatted")
    serve = add("serve", "build the reference, serve it on localhost and rebuild it on every save")
    serve.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000; 0: any free port)")
    importer = commands.add_parser(
        "import",
        help="turn a YAML or JSON list of records into .rules blocks",
        description="turn a YAML or JSON list of records into .rules blocks of one kind",
    )
    importer.add_argument("file", type=Path, metavar="FILE", help="a .yaml, .yml or .json file holding a list")
    importer.add_argument("--kind", required=True, help="the kind of every record (skill, spell, ...)")
    importer.add_argument("--out", type=Path, help="write the blocks to this .rules file (default: print them)")
    importer.add_argument(
        "--ruleset", type=Path, help="a ruleset whose own kind declarations apply (for kinds it declares)"
    )
    importer.add_argument("--format", choices=("text", "json"), default="text", help="how to print problems")
    explain = commands.add_parser(
        "explain", help="what a diagnostic code means, with an example", description="explain a diagnostic code"
    )
    explain.add_argument("code", metavar="CODE", help="a code such as E303")
    explain.add_argument("--format", choices=("text", "json"), default="text", help="how to print it")
    commands.add_parser(
        "lsp", help="run the language server on standard input and output", description="run the language server"
    )
    new = commands.add_parser("new", help="start a ruleset: a manifest and an example that builds as it is")
    new.add_argument("name", help="the ruleset's id (snake_case; it names the Python package)")
    new.add_argument("--extends", metavar="RULESET", help="build on this ruleset (a homebrew)")
    new.add_argument("--in", dest="folder", type=Path, default=Path("."), help="where to create it (default: here)")
    return parser


def _wants_json(args: Sequence[str]) -> bool:
    return "--format=json" in args or ("--format", "json") in pairwise(args)


def _usage(message: str, as_json: bool) -> int:
    if as_json:
        item = {"severity": "error", "code": "usage", "message": message}
        sys.stdout.write(json.dumps({"diagnostics": [item]}, indent=2, ensure_ascii=False) + "\n")
    else:
        print(f"rulesdsl: error: {message}", file=sys.stderr)
    return EXIT_USAGE


_LONG_RUNNING = frozenset({"lsp", "serve"})  # commands that live on: they keep the cyclic collector
# In a command that ends (run()), what it compiled, kept to the end: os._exit frees it with the process, where
# dropping it at the end of _run took 0.1 s (3% of a cold check of 10,000 lifepaths), object by object. None elsewhere
# (main() called in-process, by tests), so nothing is kept there.
_until_exit: list[object] | None = None


def run() -> NoReturn:
    """The `rulesdsl` command. A command that ends (check, build, export, ...) runs without the cyclic
    garbage collector and leaves by `os._exit`: what it made dies with the process, and the collector's
    passes over a large ruleset in memory (a fifth of a cold `check` of 10,000 lifepaths), then tearing
    that ruleset down object by object at exit, bought nothing. Its heavy stages already pause the
    collector (`gc_paused`): they make no cycles. Output is flushed first; files are closed where written."""
    argv = sys.argv[1:]
    if argv[:1] and argv[0] in _LONG_RUNNING:
        sys.exit(main(argv))
    gc.disable()
    global _until_exit
    _until_exit = []
    code = main(argv)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe (`rulesdsl check | head`)
            stream.flush()
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _parser().parse_args(argv)
    except UsageError as exc:
        return _usage(str(exc), _wants_json(argv))
    try:
        return _run(args)
    except UsageError as exc:
        return _usage(str(exc), getattr(args, "format", "text") == "json")
    except KeyboardInterrupt:
        return 130
    except Exception:  # a bug in rulesdsl, never the user's input: say so briefly
        print("rulesdsl: internal error (this is a bug in rulesdsl, please report it):", file=sys.stderr)
        print(traceback.format_exc(limit=-3), file=sys.stderr)
        return EXIT_INTERNAL


def _run(args: argparse.Namespace) -> int:
    if args.command == "lsp":
        from rulesdsl.tools.lsp import serve_stdio

        serve_stdio()
        return EXIT_OK
    if args.command == "explain":
        return _explain(args.code, args.format)
    if args.command == "import":
        from rulesdsl.tools.importer import run_import

        return run_import(args.file, args.kind, args.out, args.ruleset, as_json=args.format == "json")
    if args.command == "new":
        from rulesdsl.tools.scaffold import create

        made, why = create(args.name, args.folder, args.extends)
        if made is None:
            raise UsageError(why)
        print(f"created {made}: try `rulesdsl check {made}` and `rulesdsl build {made} --out {made.name}-out`")
        return EXIT_OK

    paths: list[Path] = args.paths or [Path("rules")]
    missing = [p for p in paths if not p.exists()]
    if missing and args.command != "serve":  # serve waits for a folder that comes back
        raise UsageError("; ".join(f"no such file or folder: {path}" for path in missing))
    if args.max_errors < 0:
        raise UsageError("--max-errors takes a number of 0 or more (0: all)")
    if args.command == "fmt":
        return _fmt(args, paths)
    if args.command == "serve":
        from rulesdsl.tools.serve import serve

        return serve(paths, args.port, color=use_color(sys.stderr, args.color))
    if args.command == "build":  # a bad --out is known before compiling anything
        from rulesdsl.targets.build import OutputError, check_npm_dir, check_out

        try:
            check_out(args.out, paths, writing=not args.check)
            _check_wheel_dir(args)
            if args.npm_dir is not None:
                check_npm_dir(args.npm_dir, paths, out=args.out, wheel_dir=args.wheel_dir, writing=not args.check)
        except OutputError as exc:
            raise UsageError(str(exc)) from None
    started = time.monotonic()
    with _progress(args.command, started) as stage:
        from rulesdsl.compile.pipeline import compile_paths  # imported here so --help and --version stay fast

        stage("checking")
        # check says only what it found: a check of unchanged files is answered from the cache
        compilation = compile_paths(paths, diagnostics_only=args.command == "check")
    if _until_exit is not None:
        _until_exit.append(compilation)
    if args.command == "build" and args.npm_dir is not None and compilation.ok:
        from rulesdsl.targets.javascript.npm import check as npm_problems

        # reported with the others (one JSON document with --format json), before anything is written
        found = tuple(d for ruleset in compilation.rulesets for d in npm_problems(ruleset))
        compilation = replace(compilation, diagnostics=compilation.diagnostics + found)
    if _report(args, compilation):
        return EXIT_DIAGNOSTICS
    if not compilation.summary:
        raise UsageError("no ruleset found (a ruleset is a folder with a ruleset.rules)")
    if args.command == "check":
        if args.format != "json":
            counts = ", ".join(f"{ruleset}: {count} entities" for ruleset, count in compilation.summary)
            print(f"ok ({counts})")
        return EXIT_OK
    if args.command == "export":
        _export(args.format, compilation.rulesets, schema=args.schema)
        return EXIT_OK
    from rulesdsl.targets.build import Kept

    # What the last build rendered of each entity, from the cache folder: an edit renders again what it changed.
    # Its rules.js codes serve the site and each npm package: an entity's code is written once.
    kept = Kept.open(compilation.rulesets)
    if args.npm_dir is None:
        return _build(args, compilation.rulesets, started, kept)
    built = _build(args, compilation.rulesets, started, kept)
    return max(built, _build_npm(args, compilation.rulesets, kept))


def _build_npm(args: argparse.Namespace, rulesets: tuple[CompiledRuleset, ...], kept: Kept) -> int:
    from rulesdsl.targets.build import OutputError, recover_output, render_npm, stale_files, write_output

    npm_dir: Path = args.npm_dir
    try:
        files = render_npm(rulesets, kept.code)
        if args.check:
            recover_output(npm_dir)
            return _report_stale(npm_dir, stale_files(npm_dir, files), len(files))
        written = write_output(npm_dir, files, notify=lambda message: print(message, file=sys.stderr))
    except OutputError as exc:
        raise UsageError(str(exc)) from None
    state = f"wrote {written} files" if written else "nothing written"
    print(f"npm packages: {', '.join(str(npm_dir / r.id) for r in rulesets)} ({state})")
    return EXIT_OK


def _report(args: argparse.Namespace, compilation: Compilation) -> bool:
    """Print the diagnostics as asked; whether they fail the run (errors, or warnings with --strict)."""
    diagnostics = list(compilation.diagnostics)
    failed = not compilation.ok or (args.strict and bool(diagnostics))
    if args.format == "json":
        # export's standard output is the documents, so its diagnostics go to standard error
        if args.command == "export":
            if diagnostics:
                sys.stderr.write(render_json(diagnostics))
        else:
            sys.stdout.write(render_json(diagnostics))
        return failed
    if args.format == "github":  # every one: an annotation each, on the line it is about
        sys.stdout.write(render_github(diagnostics))
    elif diagnostics:
        color = use_color(sys.stderr, args.color)
        limit = args.max_errors or None
        sys.stderr.write(render_text(diagnostics, compilation.sources, color=color, max_errors=limit))
    if diagnostics:
        sys.stderr.write(summary(diagnostics) + (" (--strict: warnings fail)" if args.strict else "") + "\n")
    return failed


def _export(form: str, rulesets: tuple[CompiledRuleset, ...], *, schema: bool) -> None:
    from rulesdsl.compile.export import envelope, envelope_schema

    export = envelope_schema(rulesets) if schema else envelope(rulesets)
    if form == "yaml":
        import yaml

        sys.stdout.write(yaml.safe_dump(export, allow_unicode=True, sort_keys=True, width=120))
    else:
        sys.stdout.write(json.dumps(export, indent=2, ensure_ascii=False, sort_keys=True) + "\n")


@contextmanager
def _progress(command: str, started: float) -> Iterator[Stage]:
    """Once a run has taken a second, say what it is doing: one line redrawn on a terminal (and wiped
    before anything else is printed), a line per stage otherwise (logs). Quick runs print nothing."""
    current = [""]
    done = threading.Event()
    tty = sys.stderr.isatty()
    shown = [0]  # width of the line on the terminal

    def line() -> str:
        return f"rulesdsl {command}: {current[0]}... {time.monotonic() - started:.1f} s"

    def stage(name: str) -> None:
        current[0] = name
        if not tty and time.monotonic() - started > 1:
            print(line(), file=sys.stderr, flush=True)

    def tick() -> None:
        while not done.wait(0.25 if shown[0] else max(0.0, started + 1 - time.monotonic())):
            text = line()
            sys.stderr.write("\r" + text.ljust(shown[0]))
            sys.stderr.flush()
            shown[0] = len(text)

    ticker = threading.Thread(target=tick, daemon=True)
    if tty:
        ticker.start()
    try:
        yield stage
    finally:
        done.set()
        if tty:
            ticker.join()
        if shown[0]:
            sys.stderr.write("\r" + " " * shown[0] + "\r")
            sys.stderr.flush()


def _check_wheel_dir(args: argparse.Namespace) -> None:
    from rulesdsl.targets.build import check_wheel_dir

    if args.wheel_dir is None:
        return
    if args.check:
        raise UsageError("--wheel-dir writes wheels, and build --check writes nothing: give one or the other")
    check_wheel_dir(args.wheel_dir, args.out)


def _build(args: argparse.Namespace, rulesets: tuple[CompiledRuleset, ...], started: float, kept: Kept) -> int:
    from rulesdsl.targets.build import OutputError, recover_output, render_all, stale_files, write_output

    out: Path = args.out
    try:
        with _progress(args.command, started) as stage:
            stage("rendering")
            files = render_all(rulesets, kept)
            kept.save(rulesets)
            if args.check:
                recover_output(out)  # a build killed mid-swap must not make the output look missing
                stale = stale_files(out, files)
            else:
                wheels = _wheels(args, rulesets, files)  # in memory before anything is written
                stage("writing")
                written = write_output(out, files, notify=lambda message: print(message, file=sys.stderr))
                wheels_written = _write_wheels(args.wheel_dir, wheels)
    except OutputError as exc:
        raise UsageError(str(exc)) from None
    if args.check:
        return _report_stale(out, stale, len(files))
    if written:
        print(f"wrote {written} files to {out} ({len(files) - written} unchanged)")
    else:
        print(f"{out} is up to date ({len(files)} files); nothing written")
    if args.wheel_dir is not None:
        wheel_s = "wheel" if wheels_written == 1 else "wheels"
        print(f"wrote {wheels_written} {wheel_s} to {args.wheel_dir} ({len(wheels) - wheels_written} unchanged)")
    if "site/index.html" in files:
        print(f"reference: {out / 'site' / 'index.html'}")
    return EXIT_OK


def _wheels(args: argparse.Namespace, rulesets: tuple[CompiledRuleset, ...], files: dict[str, str]) -> dict[str, bytes]:
    from rulesdsl.targets.build import render_wheels

    return {} if args.wheel_dir is None else render_wheels(rulesets, files)


def _write_wheels(folder: Path | None, wheels: dict[str, bytes]) -> int:
    from rulesdsl.targets.build import write_wheels

    return 0 if folder is None else write_wheels(folder, wheels)


def _report_stale(out: Path, stale: list[str], total: int) -> int:
    if not stale:
        print(f"{out} is up to date ({total} files)")
        return EXIT_OK
    print(f"{out} is stale: {len(stale)} file(s) differ from a fresh build:", file=sys.stderr)
    for name in stale[:20]:
        print(f"  {name}", file=sys.stderr)
    if len(stale) > 20:
        print(f"  ... and {len(stale) - 20} more", file=sys.stderr)
    print("run `rulesdsl build` to update it", file=sys.stderr)
    return EXIT_DIAGNOSTICS


def _fmt(args: argparse.Namespace, paths: list[Path]) -> int:
    from rulesdsl.syntax.source import display_path, read_source
    from rulesdsl.tools.fmt import NotFormatted, format_text, rules_files

    color = use_color(sys.stderr, args.color)
    changed, unchanged, refused = [], 0, 0
    problems: list[Diagnostic] = []
    sources: dict[str, str] = {}
    for path in rules_files(paths):
        shown = display_path(path)
        text, problem = read_source(path)
        if problem is not None or text is None:
            problems += [problem] if problem is not None else []
            refused += 1
            continue
        try:
            formatted = format_text(text, shown)
        except NotFormatted as exc:
            refused += 1
            sources[shown] = text
            problems += exc.diagnostics
            print(f"{shown}: not formatted: it does not parse (fix the errors below first)", file=sys.stderr)
            continue
        if formatted == text:
            unchanged += 1
            continue
        changed.append(shown)
        if args.check:
            print(f"would reformat {shown}", file=sys.stderr)
        else:
            write_atomically(path, formatted)
    if args.format == "json":
        sys.stdout.write(render_json(problems))
    elif problems:
        sys.stderr.write(render_text(problems, sources, color=color, max_errors=args.max_errors or None))
    verb = "would reformat" if args.check else "reformatted"
    if args.format == "text":
        print(
            f"{verb} {len(changed)} file{'s' * (len(changed) != 1)}, {unchanged} unchanged"
            + (f", {refused} not parsed" if refused else "")
        )
    return EXIT_DIAGNOSTICS if refused or (args.check and changed) else EXIT_OK


def _explain(code: str, form: str) -> int:
    from rulesdsl.tools.explain import explanation

    found = explanation(code.upper())
    if found is None:
        raise UsageError(f"no diagnostic code '{code}' (codes look like E303 or W341)")
    if form == "json":
        sys.stdout.write(json.dumps(found.as_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(found.text(color=use_color(sys.stdout)))
    return EXIT_OK
