"""Compiled templates are kept beside rulesdsl's own bytecode (targets/templating.py TemplateBytecode): used
only for the very source they were compiled from, never read with pickle, and a file that cannot be used,
or a folder that cannot be written, is a template compiled again, rendering the same."""

from __future__ import annotations

import marshal
import os
import sys
from pathlib import Path
from unittest import mock

import pytest
from jinja2 import DictLoader, Environment, StrictUndefined

from rulesdsl.targets import templating
from rulesdsl.targets.digests import renderer_digest
from rulesdsl.targets.templating import TemplateBytecode

SOURCE = "{% for x in items %}<li>{{ x }}</li>{% endfor %}"


def _env(folder: Path, source: str = SOURCE) -> Environment:
    return Environment(
        loader=DictLoader({"t.html": source}), undefined=StrictUndefined, bytecode_cache=TemplateBytecode(folder)
    )


def _render(env: Environment) -> str:
    return env.get_template("t.html").render(items=["a", "<b>"])


def test_a_compiled_template_is_kept_and_used_for_its_own_source_only(tmp_path: Path) -> None:
    cold = _render(_env(tmp_path / "none", SOURCE))
    with mock.patch.object(sys, "dont_write_bytecode", False):
        assert _render(_env(tmp_path)) == cold
    [kept] = tmp_path.glob("*.jinja")
    assert sys.implementation.cache_tag in kept.name and b"pickle" not in kept.read_bytes()[:80]
    env = _env(tmp_path)
    bucket = env.bytecode_cache.get_bucket(env, "t.html", None, SOURCE)  # type: ignore[union-attr]
    assert bucket.code is not None  # taken from the file
    assert _render(env) == cold
    # another source under the same name: not the kept code
    other = _env(tmp_path, SOURCE + "!")
    bucket = other.bytecode_cache.get_bucket(other, "t.html", None, SOURCE + "!")  # type: ignore[union-attr]
    assert bucket.code is None
    assert _render(other) == cold + "!"


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[: len(b) // 2],
        lambda b: b[:-1],
        lambda b: b"x" + b,
        lambda b: b.replace(b"\n", b"\n\0", 1),
        lambda b: b[: b.index(b"\n") + 1] + marshal.dumps(42),  # the right header, then no code
    ],
)
def test_a_damaged_file_is_a_template_compiled_again(tmp_path: Path, damage: object) -> None:
    with mock.patch.object(sys, "dont_write_bytecode", False):
        cold = _render(_env(tmp_path))
        [kept] = tmp_path.glob("*.jinja")
        kept.write_bytes(damage(kept.read_bytes()))  # type: ignore[operator]
        assert _render(_env(tmp_path)) == cold


def test_nothing_is_written_without_bytecode_or_where_it_cannot_write(tmp_path: Path) -> None:
    with mock.patch.object(sys, "dont_write_bytecode", True):
        _render(_env(tmp_path / "a"))
    assert not (tmp_path / "a").exists()
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the folder would be")
    with mock.patch.object(sys, "dont_write_bytecode", False):
        assert _render(_env(blocked)) == _render(_env(tmp_path / "none"))
    if os.geteuid() != 0:  # root writes anywhere
        readonly = tmp_path / "readonly"
        readonly.mkdir(mode=0o500)
        with mock.patch.object(sys, "dont_write_bytecode", False):
            _render(_env(readonly))
        assert not list(readonly.iterdir())


def test_the_kept_templates_are_beside_the_bytecode_and_change_no_digest() -> None:
    """They live in rulesdsl's own __pycache__, which the renderer's digest leaves out (a kept rendering would
    otherwise never be used again after the first build)."""
    assert templating.TEMPLATES_COMPILED.parent.name == "__pycache__"
    assert "__pycache__" in templating.TEMPLATES_COMPILED.parts
    before = renderer_digest()
    renderer_digest.cache_clear()
    with mock.patch.object(sys, "dont_write_bytecode", False):
        templating.environment.cache_clear()
        env = templating.environment()
        for name in env.list_templates():
            if name.endswith((".html", ".j2")):
                env.get_template(name)
    assert list(templating.TEMPLATES_COMPILED.glob("*.jinja"))
    assert renderer_digest() == before
