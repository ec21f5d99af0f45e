"""The command line: `rulesdsl check | build | export`.

Exit codes: 0 success; 1 the sources have errors (or, with `build --check`, the output is stale);
2 usage errors (bad arguments, missing paths, an output folder that is not ours or cannot be
written); 3 an internal error in rulesdsl itself (a bug: please report it).
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .diagnostics import render_json, render_text, summary

if TYPE_CHECKING:
    from .pipeline import CompiledRuleset

EXIT_OK, EXIT_DIAGNOSTICS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rulesdsl",
        description="Compile tabletop rules written in .rules files into a Python package and an HTML reference.",
        epilog="Exit codes: 0 ok, 1 errors in the sources (or stale output with build --check), 2 usage, "
        "3 internal error.",
    )
    parser.add_argument("--version", action="version", version=f"rulesdsl {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument(
            "paths", nargs="*", type=Path, metavar="PATH", help="rulesets or folders of rulesets (default: rules/)"
        )
        sub.add_argument("--format", choices=("text", "json"), default="text", help="how to print diagnostics")
        return sub

    add("check", "check the rules and report every problem")
    build = add("build", "check the rules and write the Python packages and the HTML reference")
    build.add_argument("--out", type=Path, default=Path("generated"), help="output folder (default: generated/)")
    build.add_argument("--check", action="store_true", help="write nothing; exit 1 when the output on disk is stale")
    add("export", "print the validated documents as one JSON object")
    new = commands.add_parser("new", help="start a ruleset: a manifest and an example that builds as it is")
    new.add_argument("name", help="the ruleset's id (snake_case; it names the Python package)")
    new.add_argument("--extends", metavar="RULESET", help="build on this ruleset (a homebrew)")
    new.add_argument("--in", dest="folder", type=Path, default=Path("."), help="where to create it (default: here)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except KeyboardInterrupt:
        return 130
    except Exception:  # a bug in rulesdsl, never the user's input: say so briefly
        print("rulesdsl: internal error (this is a bug in rulesdsl, please report it):", file=sys.stderr)
        print(traceback.format_exc(limit=-3), file=sys.stderr)
        return EXIT_INTERNAL


def _run(args: argparse.Namespace) -> int:
    from .pipeline import compile_paths  # imported here so --help and --version stay fast

    if args.command == "new":
        from .scaffold import create

        made, why = create(args.name, args.folder, args.extends)
        if made is None:
            print(f"rulesdsl: error: {why}", file=sys.stderr)
            return EXIT_USAGE
        print(f"created {made}: try `rulesdsl check {made}` and `rulesdsl build {made} --out {made.name}-out`")
        return EXIT_OK

    paths: list[Path] = args.paths or [Path("rules")]
    missing = [p for p in paths if not p.exists()]
    if missing:
        for path in missing:
            print(f"rulesdsl: error: no such file or folder: {path}", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "build":  # a bad --out is known before compiling anything
        from .build import OutputError, check_out

        try:
            check_out(args.out, paths, writing=not args.check)
        except OutputError as exc:
            print(f"rulesdsl: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
    compilation = compile_paths(paths)
    diagnostics = list(compilation.diagnostics)
    if args.format == "json":
        # export's standard output is the documents, so its diagnostics go to standard error
        if args.command == "export":
            if diagnostics:
                sys.stderr.write(render_json(diagnostics))
        else:
            sys.stdout.write(render_json(diagnostics))
    elif diagnostics:
        sys.stderr.write(render_text(diagnostics, compilation.sources))
        sys.stderr.write(summary(diagnostics) + "\n")
    if not compilation.ok:
        return EXIT_DIAGNOSTICS
    if not compilation.rulesets:
        print("rulesdsl: error: no ruleset found (a ruleset is a folder with a ruleset.rules)", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "check":
        if args.format == "text":
            counts = ", ".join(
                f"{r.id}: {sum(len(d) for d in r.entities.values())} entities" for r in compilation.rulesets
            )
            print(f"ok ({counts})")
        return EXIT_OK
    if args.command == "export":
        export = {"rulesets": {r.id: r.documents() for r in compilation.rulesets}}
        sys.stdout.write(json.dumps(export, indent=2, ensure_ascii=False, sort_keys=True) + "\n")
        return EXIT_OK
    return _build(args, compilation.rulesets)


def _build(args: argparse.Namespace, rulesets: tuple[CompiledRuleset, ...]) -> int:
    from .build import OutputError, recover_output, render_all, stale_files, write_output

    files = render_all(rulesets)
    out: Path = args.out
    try:
        if args.check:
            recover_output(out)  # a build killed mid-swap must not make the output look missing
            return _report_stale(out, stale_files(out, files), len(files))
        written = write_output(out, files, notify=lambda message: print(message, file=sys.stderr))
    except OutputError as exc:
        print(f"rulesdsl: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if written:
        print(f"wrote {written} files to {out} ({len(files) - written} unchanged)")
    else:
        print(f"{out} is up to date ({len(files)} files); nothing written")
    return EXIT_OK


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
