"""`rulesdsl build --wheel-dir`: a standard wheel per ruleset, the same bytes every time, that pip installs
into a fresh venv; and what a wheel needs of the manifest (a distribution name, a PEP 440 version, an SPDX
licence), checked with `packaging`, the library pip itself reads wheels with."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import re
import subprocess
import sys
import tomllib
import venv
import zipfile
from collections.abc import Callable
from pathlib import Path
from subprocess import PIPE

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.metadata import Metadata
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from rulesdsl import __version__
from rulesdsl.language.distributions import VERSION_PATTERN, is_distribution_name, normal_version
from rulesdsl.language.names import slug
from rulesdsl.targets.python.wheel import REQUIRES_PYTHON

from .conftest import FIXTURES, ROOT, write_ruleset
from .test_build import read_only  # noqa: F401 (a fixture)

Cli = Callable[..., tuple[int, str, str]]

RULESETS = ("burning_wheel", "fenmark", "riddle_of_steel", "witcher")


@pytest.fixture(scope="module")
def two_builds(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, bytes]]:
    """The wheels of `rulesdsl build rules --wheel-dir`, by name, twice: two processes at once, each with its
    own hash seed and folder, so that no set or dict order, time or path can reach the bytes unseen."""
    runs = []
    for seed in ("1", "2"):
        folder = tmp_path_factory.mktemp(f"build{seed}")
        wheels = str(folder / "wheels")
        command = [sys.executable, "-m", "rulesdsl", "build", "--out", str(folder / "out"), "--wheel-dir", wheels]
        env = {**os.environ, "PYTHONHASHSEED": seed}
        runs.append((folder, subprocess.Popen(command, cwd=ROOT, env=env, stdout=PIPE, stderr=PIPE, text=True)))
    found = []
    for folder, process in runs:
        stdout, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stderr
        assert f"wrote {len(RULESETS)} wheels to {folder / 'wheels'}" in stdout
        found.append({path.name: path.read_bytes() for path in sorted((folder / "wheels").iterdir())})
    return found


@pytest.fixture(scope="module")
def rules_wheels(two_builds: list[dict[str, bytes]]) -> dict[str, bytes]:
    return two_builds[0]


def test_two_builds_write_the_same_bytes(two_builds: list[dict[str, bytes]]) -> None:
    first, second = two_builds
    assert sorted(first) == [f"{name}-0.1.0-py3-none-any.whl" for name in RULESETS]
    assert first == second


def _record(archive: zipfile.ZipFile, dist_info: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(archive.read(f"{dist_info}/RECORD").decode("utf-8"))))


@pytest.mark.parametrize("ruleset", RULESETS)
def test_each_wheel_is_what_the_wheel_spec_asks(rules_wheels: dict[str, bytes], ruleset: str) -> None:
    name = f"{ruleset}-0.1.0-py3-none-any.whl"
    distribution, version, build, tags = parse_wheel_filename(name)
    assert (distribution, version, build, [str(tag) for tag in tags]) == (
        canonicalize_name(ruleset),
        Version("0.1.0"),
        (),
        ["py3-none-any"],
    )
    dist_info = f"{ruleset}-0.1.0.dist-info"
    with zipfile.ZipFile(io.BytesIO(rules_wheels[name])) as archive:
        infos = archive.infolist()
        paths = [info.filename for info in infos]
        assert archive.testzip() is None
        # the package sorted, then its metadata, RECORD last
        package = [path for path in paths if not path.startswith(dist_info)]
        assert package == sorted(package) and all(path.startswith(f"{ruleset}/") for path in package)
        assert paths[len(package) :] == [f"{dist_info}/{file}" for file in ("METADATA", "WHEEL", "RECORD")]
        assert {f"{ruleset}/__init__.py", f"{ruleset}/py.typed", f"{ruleset}/_runtime/LICENSE"} <= set(package)
        for info in infos:
            assert info.date_time == (1980, 1, 1, 0, 0, 0), info
            assert (info.external_attr >> 16, info.create_system) == (0o100644, 3), info
        # RECORD: every file once, with its urlsafe-base64 sha256 (no padding) and size; itself without
        rows = _record(archive, dist_info)
        assert [row[0] for row in rows] == paths
        assert rows[-1] == [f"{dist_info}/RECORD", "", ""]
        for path, digest, size in rows[:-1]:
            data = archive.read(path)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert (digest, size) == (f"sha256={expected}", str(len(data))), path
        wheel = archive.read(f"{dist_info}/WHEEL").decode()
        assert (
            wheel
            == f"Wheel-Version: 1.0\nGenerator: rulesdsl {__version__}\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        metadata = Metadata.from_email(archive.read(f"{dist_info}/METADATA"), validate=True)
    assert (metadata.name, metadata.version, str(metadata.requires_python)) == (ruleset, Version("0.1.0"), ">=3.11")
    assert metadata.requires_dist is None and metadata.license_expression is None  # rules/ names no licence
    assert metadata.summary is not None and metadata.summary.endswith(": rules generated by rulesdsl")
    assert metadata.description is not None and f"import {ruleset}" in metadata.description


def test_a_fresh_venv_installs_the_wheel_offline_and_imports_it_from_anywhere(
    rules_wheels: dict[str, bytes], tmp_path: Path
) -> None:
    wheel = tmp_path / "witcher-0.1.0-py3-none-any.whl"
    wheel.write_bytes(rules_wheels[wheel.name])
    venv.create(tmp_path / "venv", with_pip=True)
    python = str(tmp_path / "venv" / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    pip = [python, "-m", "pip", "install", "--no-index", "--no-deps", "--disable-pip-version-check", str(wheel)]
    installed = subprocess.run(pip, capture_output=True, text=True, check=False, env=env, timeout=120)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script = (
        "import importlib.metadata, importlib.resources, witcher\n"
        "print(witcher.__file__)\n"
        "print(witcher.TABLES['humanoid_hit_location'].lookup(3).location)\n"
        "print(importlib.metadata.version('witcher'), importlib.metadata.metadata('witcher')['Requires-Python'])\n"
        "print(importlib.resources.files('witcher').joinpath('py.typed').is_file())\n"
    )
    ran = subprocess.run([python, "-c", script], cwd=elsewhere, capture_output=True, text=True, check=False, env=env)
    assert ran.returncode == 0, ran.stderr
    where, location, version, typed = ran.stdout.splitlines()
    assert Path(where).is_relative_to(tmp_path / "venv") and "site-packages" in where
    assert (location, version, typed) == ("Torso", "0.1.0 >=3.11", "True")


MANIFEST = 'ruleset marsh { title: "Marsh Folk"  version: "1.0.0-beta.2"  license: "CC-BY-4.0 OR MIT" }\n'


def test_the_manifest_s_licence_and_version_reach_the_wheel_and_the_docstring(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_ruleset(
        tmp_path / "rules" / "marsh",
        {"skills.rules": "skill Fishing { root: Perception  type: peasant  tools: yes }\n"},
        MANIFEST,
    )
    code, out, err = cli("build", "rules", "--out", "out", "--wheel-dir", "wheels")
    assert code == 0, err
    assert "wrote 1 wheel to wheels (0 unchanged)" in out
    docstring = (tmp_path / "out" / "marsh" / "__init__.py").read_text(encoding="utf-8")
    assert "Licence: CC-BY-4.0 OR MIT (the rules' own" in docstring
    wheel = tmp_path / "wheels" / "marsh-1.0.0b2-py3-none-any.whl"  # the normal form of 1.0.0-beta.2
    with zipfile.ZipFile(wheel) as archive:
        metadata = Metadata.from_email(archive.read("marsh-1.0.0b2.dist-info/METADATA"), validate=True)
        assert archive.read("marsh/__init__.py").decode() == docstring
    assert (metadata.version, str(metadata.license_expression)) == (Version("1.0.0b2"), "CC-BY-4.0 OR MIT")
    # A second build leaves the wheel alone (same bytes, same file).
    before = wheel.stat()
    code, out, _ = cli("build", "rules", "--out", "out", "--wheel-dir", "wheels")
    assert code == 0 and "wrote 0 wheels to wheels (1 unchanged)" in out
    assert wheel.stat().st_ino == before.st_ino and wheel.stat().st_mtime_ns == before.st_mtime_ns


# ---------------------------------------------------------------- bad input: exit 2, nothing written


def _refused(cli: Cli, tmp_path: Path, wheel_dir: Path, *more: str) -> str:
    out = tmp_path / "out"
    code, stdout, err = cli("build", str(FIXTURES / "mini"), "--out", str(out), "--wheel-dir", str(wheel_dir), *more)
    assert code == 2, err
    assert stdout == "" and err.count("\n") == 1 and err.startswith("rulesdsl: error: "), err
    assert not out.exists(), "refused before anything is written"
    return err


def test_a_wheel_dir_that_is_a_file_is_refused(tmp_path: Path, cli: Cli) -> None:
    (tmp_path / "a-file").write_text("mine")
    assert "is a file, not a folder" in _refused(cli, tmp_path, tmp_path / "a-file")
    assert "is a file, not a folder" in _refused(cli, tmp_path, tmp_path / "a-file" / "wheels")
    assert "does not exist" in _refused(cli, tmp_path, tmp_path / "missing" / "wheels")
    assert (tmp_path / "a-file").read_text() == "mine" and [p.name for p in tmp_path.iterdir()] == ["a-file"]


def test_a_wheel_dir_that_is_not_writable_is_refused(read_only: Path, tmp_path: Path, cli: Cli) -> None:  # noqa: F811
    for wheel_dir in (read_only, read_only / "wheels"):
        err = _refused(cli, tmp_path, wheel_dir)
        assert "not writable" in err
    assert list(read_only.iterdir()) == []


def test_a_wheel_dir_inside_the_output_or_with_check_is_refused(tmp_path: Path, cli: Cli) -> None:
    assert "which every build replaces" in _refused(cli, tmp_path, tmp_path / "out" / "wheels")
    assert "build --check writes nothing" in _refused(cli, tmp_path, tmp_path / "wheels", "--check")
    assert list(tmp_path.iterdir()) == []


def test_sources_with_errors_write_no_wheel(tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_ruleset(tmp_path / "rules" / "marsh", {}, 'ruleset marsh { title: "Marsh"  version: "banana" }\n')
    code, _, err = cli("build", "rules", "--out", "out", "--wheel-dir", "wheels")
    assert code == 1 and "[E210]" in err and "PEP 440" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rules"]


def test_a_failed_write_leaves_every_wheel_whole_and_no_temporary_file(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("aaa", "zzz"):
        write_ruleset(tmp_path / "rules" / name, {}, f'ruleset {name} {{ title: "{name}"  version: "1.0" }}\n')
    (tmp_path / "wheels" / "zzz-1.0-py3-none-any.whl").mkdir(parents=True)  # in the way of the second wheel
    code, _, err = cli("build", "rules", "--out", "out", "--wheel-dir", "wheels")
    assert code == 2 and "cannot write wheels to wheels" in err, err
    for path in (tmp_path / "wheels").iterdir():
        assert not path.name.endswith(".tmp"), path
        if path.is_file():
            with zipfile.ZipFile(path) as archive:
                assert archive.testzip() is None


# ---------------------------------------------------------------- names and versions


def test_requires_python_is_the_compiler_s() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["requires-python"] == REQUIRES_PYTHON


@given(st.text())
def test_every_ruleset_id_but_the_letterless_one_is_a_normal_distribution_name(text: str) -> None:
    """Why E304 needs to refuse only `_`: an id is a slug, and every other slug is a distribution name
    (PEP 508) already in the normal form a wheel's file name and .dist-info folder use, and the same
    name pip looks up (`pip install witcher` finds the wheel `witcher-...`)."""
    ruleset_id = slug(text)
    if ruleset_id == "_":
        assert not is_distribution_name(ruleset_id)
        return
    assert is_distribution_name(ruleset_id)
    assert re.fullmatch(r"^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$", ruleset_id, re.IGNORECASE)  # PEP 508's
    assert re.sub(r"[-_.]+", "_", ruleset_id).lower() == ruleset_id  # the wheel spec's escaped name
    assert canonicalize_name(ruleset_id) == ruleset_id.replace("_", "-")


_VERSIONISH = st.one_of(
    st.from_regex(VERSION_PATTERN, fullmatch=True),
    st.text(alphabet="0123456789.-_+!abcdeilnoprstvw", max_size=16),
)


@given(_VERSIONISH)
def test_a_version_is_accepted_and_normalised_as_packaging_does(text: str) -> None:
    """The `version` type's pattern is PEP 440's (in lower case, without a leading `v`), and a wheel's version
    the normal form packaging gives."""
    try:
        expected: str | None = str(Version(text))
    except InvalidVersion:
        expected = None
    if text.startswith("v"):
        assert normal_version(text) is None
        return
    assert normal_version(text) == expected


def test_a_version_of_thousands_of_digits_is_not_an_internal_error() -> None:
    assert normal_version("1" + "0" * 5000 + ".0") == "1" + "0" * 5000 + ".0"
    assert normal_version("0" * 5000 + "7") == "7"
