"""The IR's, the field types' and positions' reprs (rulesdsl/reprs.py) are the text `@dataclass` writes: a
build knows an entity it rendered before by the digest of its repr (targets/digests.py), and a repr that said
less than the dataclass's would let two different entities pass for one."""

from __future__ import annotations

import hashlib
import subprocess
import sys

from .conftest import ROOT

# Prints a digest of the reprs of every entity and kind of rules/ and of the examples, as compiled.
_REPRS = """
import sys, hashlib
{before}
from pathlib import Path
from rulesdsl.compile.pipeline import compile_paths
digest = hashlib.sha256()
for folder in ("rules", "tests/examples"):
    for ruleset in compile_paths([Path(folder)]).rulesets:
        for group in ruleset.entities.values():
            for entity in group.values():
                digest.update(repr(entity).encode())
        digest.update(repr(sorted(ruleset.kinds.items())).encode())
print(digest.hexdigest())
"""


def _reprs(before: str) -> str:
    env = {"RULESDSL_CACHE_DIR": "off", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", _REPRS.format(before=before)], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_plain_reprs_are_the_reprs_dataclass_writes() -> None:
    """The same entities and kinds, once with the plain reprs and once with the ones `@dataclass` writes
    (plain_reprs turned off before any class is made), give the same text."""
    plain = _reprs("")
    written = _reprs("import rulesdsl.reprs; rulesdsl.reprs.plain_reprs = lambda namespace: None")
    assert plain == written
    assert plain != hashlib.sha256().hexdigest()


def test_plain_reprs_replace_the_guarded_ones() -> None:
    """Every frozen dataclass of the IR, the field types, the kinds and positions has the plain repr."""
    from rulesdsl import diagnostics
    from rulesdsl.compile import ir, kinds
    from rulesdsl.language import fieldtypes

    for module in (ir, fieldtypes, kinds, diagnostics):
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == module.__name__ and "__repr__" in vars(value):
                assert not hasattr(value.__repr__, "__wrapped__"), value


def test_plain_inits_make_what_dataclass_inits_make() -> None:
    """The same entities and kinds, once with the plain inits and once with the ones `@dataclass` writes."""
    plain = _reprs("")
    written = _reprs("import rulesdsl.reprs; rulesdsl.reprs.plain_inits = lambda namespace: None")
    assert plain == written


def test_each_plain_init_takes_and_sets_what_the_written_one_does() -> None:
    """Class by class: the same parameters (names, order, defaults, annotations), and every slot set to the
    same argument, with the defaults left out too."""
    import dataclasses
    import inspect

    from rulesdsl import diagnostics
    from rulesdsl.compile import ir, kinds
    from rulesdsl.language import fieldtypes
    from rulesdsl.syntax import tree

    replaced = 0
    for module in (ir, fieldtypes, kinds, diagnostics, tree):
        for cls in vars(module).values():
            if not (isinstance(cls, type) and cls.__module__ == module.__name__ and dataclasses.is_dataclass(cls)):
                continue
            written = getattr(vars(cls)["__init__"], "__written__", None)
            if written is None:
                continue
            replaced += 1
            assert inspect.signature(cls.__init__) == inspect.signature(written), cls
            names = [f.name for f in dataclasses.fields(cls)]
            required = [f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING]
            for given in (required, names):  # the defaults left to the init, then every field given
                args = {name: object() for name in given}
                by_plain, by_written = object.__new__(cls), object.__new__(cls)
                cls.__init__(by_plain, **args)
                written(by_written, **args)
                for name in names:
                    assert getattr(by_plain, name) is getattr(by_written, name), (cls, name)
    assert replaced > 100  # the IR, the tree, field types and positions: nearly every class
