"""`rulesdsl build --npm-dir DIR`: an npm package per ruleset, used as an app developer would use it.

The packages of rules/witcher and rules/burning_wheel are packed with `npm pack` (offline), installed from
the tarballs into a fresh project, and used from TypeScript (`tsc --strict` compiles an app and the
README's example, and must refuse a misspelt table, column, id or argument) and from Node (look up, roll,
burn: the same answers as the Python package). The declarations are held to the values rules.js really
holds, and a bad --npm-dir or a ruleset npm cannot name or version stops the build before anything is
written.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from rulesdsl.compile.pipeline import compile_paths
from rulesdsl.diagnostics import render_text, summary
from rulesdsl.runtime.core import exact
from rulesdsl.targets.build import render_npm
from rulesdsl.targets.javascript import module as javascript
from rulesdsl.targets.javascript import npm
from rulesdsl.targets.javascript.declarations import RUNTIME_DTS
from rulesdsl.targets.javascript.module import RUNTIME_JS
from tests.conftest import ROOT, write_ruleset
from tests.generate import seeded
from tests.test_build import read_only  # noqa: F401 (a fixture)
from tests.test_diagnostics import GOLDEN, matches_golden

NODE, NPM = shutil.which("node"), shutil.which("npm")
TSC = ROOT / "tests" / "node" / "node_modules" / ".bin" / "tsc"
pytestmark = pytest.mark.skipif(
    NODE is None or NPM is None or not TSC.exists(),
    reason="node, npm or TypeScript (scripts/setup.sh test: npm ci in tests/node) is not installed",
)
RULESETS = ("witcher", "burning_wheel")
GENERATED = 4  # random rulesets of tests/generate.py whose declarations are checked too
Cli = Callable[..., tuple[int, str, str]]


def run(*command: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A command that must not touch the network: npm is told offline, and gets a private cache."""
    env = {**os.environ, "npm_config_cache": str(cwd.parent / "npm-cache"), "npm_config_update_notifier": "false"}
    return subprocess.run(
        [str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`rulesdsl build --npm-dir` of two rulesets of rules/: the folder holding `out/` and `npm/`."""
    from rulesdsl.tools.cli import main

    here = tmp_path_factory.mktemp("npm")
    args = [str(ROOT / "rules" / name) for name in RULESETS]
    assert main(["build", *args, "--out", str(here / "out"), "--npm-dir", str(here / "npm")]) == 0
    return here


@pytest.fixture(scope="module")
def app(built: Path) -> Path:
    """A fresh project with the packages installed from the tarballs `npm pack` makes of their folders."""
    folder = built / "app"
    folder.mkdir()
    tarballs = []
    for name in RULESETS:
        packed = run(NPM or "npm", "pack", "--offline", "--pack-destination", built, cwd=built / "npm" / name)
        assert packed.returncode == 0, packed.stderr
        tarballs.append(built / packed.stdout.strip().splitlines()[-1])
    (folder / "package.json").write_text('{"name": "app", "private": true, "type": "module"}\n', encoding="utf-8")
    installed = run(NPM or "npm", "install", "--offline", "--no-audit", "--no-fund", *tarballs, cwd=folder)
    assert installed.returncode == 0, installed.stderr
    return folder


def test_package_json_says_what_npm_and_typescript_need(built: Path) -> None:
    for name in RULESETS:
        manifest = json.loads((built / "npm" / name / "package.json").read_text(encoding="utf-8"))
        assert manifest["name"] == name and manifest["version"] == "0.1.0"
        assert manifest["type"] == "module" and manifest["types"] == "./rules.d.ts"
        assert manifest["exports"]["."] == {"types": "./rules.d.ts", "default": "./rules.js"}
        assert manifest["license"] == "UNLICENSED"  # the manifests of rules/ give no licence
        assert sorted(manifest["files"]) == sorted(
            p.name for p in (built / "npm" / name).iterdir() if p.name != "package.json"
        )
        assert not any("ependencies" in key for key in manifest)


def test_the_package_holds_the_sites_rules_js_and_the_exported_entities(built: Path) -> None:
    compiled = {r.id: r for r in compile_paths([ROOT / "rules" / name for name in RULESETS]).rulesets}
    for name in RULESETS:
        package = built / "npm" / name
        assert (package / "rules.js").read_bytes() == (built / "out" / "site" / name / "rules.js").read_bytes()
        assert json.loads((package / "data.json").read_text(encoding="utf-8")) == compiled[name].documents()


def test_the_same_bytes_every_build_and_build_check_sees_them_fresh(built: Path, cli: Cli) -> None:
    rulesets = compile_paths([ROOT / "rules" / name for name in RULESETS]).rulesets
    files = render_npm(rulesets)
    assert files == render_npm(rulesets)
    assert {name: (built / "npm" / name).read_text(encoding="utf-8") for name in files} == files
    args = [str(ROOT / "rules" / name) for name in RULESETS]
    code, out, _ = cli("build", *args, "--out", str(built / "out"), "--npm-dir", str(built / "npm"), "--check")
    assert code == 0 and f"{built / 'npm'} is up to date" in out
    (built / "npm" / "witcher" / "rules.d.ts").write_text("stale\n", encoding="utf-8")
    try:
        code, _, err = cli("build", *args, "--out", str(built / "out"), "--npm-dir", str(built / "npm"), "--check")
        assert code == 1 and "witcher/rules.d.ts" in err
    finally:
        (built / "npm" / "witcher" / "rules.d.ts").write_text(files["witcher/rules.d.ts"], encoding="utf-8")


CONSUMER = """\
import { TABLES, FORMULAS, MECHANICS, LOCATIONS, seeded, type Rows } from "witcher";
import * as bw from "burning_wheel";

const row: Rows["humanoid_hit_location"] = TABLES.humanoid_hit_location.lookup(3);
const rolled = TABLES.humanoid_hit_location.roll(seeded(7));
const where: string = rolled.row.location;
const damage = FORMULAS.damage_taken({ raw: 10, cover_sp: 0, resistant: false, sp: 2, where: "torso" });
const sheet = bw.burn(["Born Peasant", "Farmer"]);
const points: number | undefined = bw.LIFEPATHS.farmer.skills?.points;
const met: boolean | null = bw.requirementMet("farmer", ["born_peasant"]);
console.log(JSON.stringify({
  location: row.location, damage: row.damage.toString(), rolled: rolled.numbers, where,
  taken: String(damage), mechanic: MECHANICS.witcher_d10.name, sheet, points, met,
  root: bw.SKILLS.farming.root, head: LOCATIONS.head.name,
}));
"""
# Each a mistake tsc --strict must refuse, with what its message names.
MISTAKES = {
    "column": ("TABLES.humanoid_hit_location.lookup(3).locaton;", "locaton"),
    "rolled_column": ("TABLES.humanoid_hit_location.roll(seeded(1)).row.damgae;", "damgae"),
    "table": ("TABLES.humanoid_hit_locaton;", "humanoid_hit_locaton"),
    "entity": ("bw.SKILLS.farmng;", "farmng"),
    "field": ("bw.LIFEPATHS.farmer.resorces;", "resorces"),
    "argument": (
        'FORMULAS.damage_taken({ raw: 10, cover_sp: 0, resistant: 1, sp: 2, where: "torso" });',
        "to type 'boolean'",
    ),
    "reference": (
        'FORMULAS.damage_taken({ raw: 10, cover_sp: 0, resistant: false, sp: 2, where: "torsoo" });',
        "torsoo",
    ),
    "lifepath": ('bw.requirementMet("farmr", []);', "farmr"),
}
TSCONFIG = {
    "compilerOptions": {
        "strict": True,
        "module": "nodenext",
        "moduleResolution": "nodenext",
        "target": "es2022",
        "outDir": "out",
    },
}


def test_a_typescript_app_compiles_under_strict_and_runs_in_node(app: Path, built: Path) -> None:
    (app / "app.ts").write_text(CONSUMER, encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (app / "readme.ts").write_text(readme.split("```ts\n")[1].split("```")[0], encoding="utf-8")
    head = CONSUMER.split("\n\n")[0] + "\n"
    for name, (line, _) in MISTAKES.items():
        (app / f"wrong_{name}.ts").write_text(head + line + "\n", encoding="utf-8")
    (app / "tsconfig.json").write_text(json.dumps({**TSCONFIG, "include": ["*.ts"]}), encoding="utf-8")
    checked = run(TSC, "-p", "tsconfig.json", cwd=app)
    errors = checked.stdout.splitlines()
    assert [e for e in errors if e.startswith(("app.ts", "readme.ts"))] == []
    for name, (_, word) in MISTAKES.items():
        assert any(e.startswith(f"wrong_{name}.ts") and word in e for e in errors), (name, checked.stdout)
    ran = run(NODE or "node", "out/app.js", cwd=app)
    assert ran.returncode == 0, ran.stderr
    got = json.loads(ran.stdout)

    sys.path.insert(0, str(built / "out"))
    try:
        witcher, burning_wheel = (importlib.import_module(name) for name in RULESETS)
    finally:
        sys.path.remove(str(built / "out"))
    expected = witcher.TABLES["humanoid_hit_location"].lookup(3)
    assert (got["location"], got["damage"]) == (expected.location, exact(expected.damage))
    assert got["where"] == witcher.TABLES["humanoid_hit_location"].lookup(*got["rolled"]).location
    taken = witcher.FORMULAS["damage_taken"](raw=10, cover_sp=0, resistant=False, sp=2, where="torso")
    assert got["taken"] == str(taken)
    assert got["sheet"] == json.loads(burning_wheel.burn(["Born Peasant", "Farmer"]).to_json())
    assert got["points"] == burning_wheel.LIFEPATHS["farmer"].skills.points and got["met"] is True
    assert got["root"] == list(burning_wheel.SKILLS["farming"].root)
    assert got["mechanic"] == witcher.MECHANICS["witcher_d10"].name
    assert got["head"] == witcher.LOCATIONS["head"].name


# rules.js's values as TypeScript infers them from the module itself, against the declared registries:
# inference keeps no literal types, so ids, references and options are compared as strings, and it types
# what a formula yields by the runtime's helpers (`max` of numbers or truth values), so not that either.
DESCRIBED = """\
import * as declared from "./declared.js";
import * as inferred from "./inferred.js";
type Widen<T> = T extends string ? string : T extends Function ? T
  : T extends declared.Formula<any> ? declared.Formula<any>
  : T extends readonly (infer U)[] ? readonly Widen<U>[]
  : T extends object ? { readonly [K in keyof T]: Widen<T[K]> } : T;
"""


def test_the_declarations_describe_the_values_rules_js_holds(tmp_path: Path) -> None:
    """For the rulesets of RULESETS, tests/examples (records, maps, formulas in fields, roll-under ...) and
    random rulesets of tests/generate.py (every field type, roll, key and formula form)."""
    checks = tmp_path / "described"
    rulesets = list(compile_paths([*(ROOT / "rules" / n for n in RULESETS), ROOT / "tests" / "examples"]).rulesets)
    for seed in range(GENERATED):
        generated, _ = seeded(seed, mutate_one_in=1_000_000)
        for name, text in generated.files(f"_{seed}").items():
            (tmp_path / f"gen{seed}" / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / f"gen{seed}" / name).write_text(text, encoding="utf-8")
        compilation = compile_paths([tmp_path / f"gen{seed}"])
        rulesets += compilation.rulesets if compilation.ok else ()
    assert len(rulesets) >= len(RULESETS) + 5 + GENERATED // 2
    wrong = []
    for index, ruleset in enumerate(rulesets):
        folder = checks / f"{index}_{ruleset.id}"
        folder.mkdir(parents=True)
        files = render_npm((ruleset,))
        for name, copy in (("rules.js", "inferred.js"), ("rules.js", "declared.js"), ("rules.d.ts", "declared.d.ts")):
            (folder / copy).write_text(files[f"{ruleset.id}/{name}"], encoding="utf-8")
        names = {**javascript.registry_names(ruleset), "attribute": "ATTRIBUTES"}
        kinds = ["attribute", *javascript.registry_kinds(ruleset)]
        registries = [names[kind] for kind in kinds]
        some = next((names[kind] for kind in kinds if ruleset.entities.get(kind)), None)
        body = "".join(
            f"export const r{i}: Widen<typeof declared.{n}> = inferred.{n};\n" for i, n in enumerate(registries)
        )
        (folder / "check.ts").write_text(DESCRIBED + body, encoding="utf-8")
        if some is not None:  # a check that can fail: what is not that registry is refused as it
            (folder / "wrong.ts").write_text(
                DESCRIBED + f"export const no: Widen<typeof declared.{some}> = inferred.NAMES;\n", encoding="utf-8"
            )
            wrong.append(f"{folder.name}/wrong.ts")
    (checks / "package.json").write_text('{"type": "module"}\n', encoding="utf-8")
    options = {**TSCONFIG["compilerOptions"], "noEmit": True, "allowJs": True, "checkJs": False}
    (checks / "tsconfig.json").write_text(
        json.dumps({"compilerOptions": options, "include": ["*/*.ts"]}), encoding="utf-8"
    )
    checked = run(TSC, "-p", "tsconfig.json", cwd=checks)
    # inferred.js is the module read without its declarations: only the .ts files' errors count (the
    # declarations' own among them)
    errors = [e for e in checked.stdout.splitlines() if e.split("(")[0].endswith(".ts")]
    assert len(wrong) > len(rulesets) // 2
    assert sorted({e.split("(")[0] for e in errors}) == sorted(wrong)


def test_the_runtime_declarations_are_typescripts_reading_of_runtime_js(tmp_path: Path) -> None:
    """runtime.d.ts is what tsc declares for runtime.js (UPDATE_GOLDEN=1 rewrites it after a change)."""
    made = run(
        TSC, "--allowJs", "--declaration", "--emitDeclarationOnly", "--strict", "--target", "es2022",
        "--module", "es2022", "--outDir", tmp_path, RUNTIME_JS, cwd=tmp_path,
    )  # fmt: skip
    assert made.returncode == 0, made.stdout
    fresh = (tmp_path / "runtime.d.ts").read_text(encoding="utf-8")
    if os.environ.get("UPDATE_GOLDEN"):
        RUNTIME_DTS.write_text(fresh, encoding="utf-8")
    assert RUNTIME_DTS.read_text(encoding="utf-8") == fresh


# ---------------------------------------------------------------- bad input


def test_an_npm_dir_that_is_a_file_is_refused_before_anything_is_written(tmp_path: Path, cli: Cli) -> None:
    (tmp_path / "npm").write_text("mine\n", encoding="utf-8")
    code, _, err = cli(
        "build", str(ROOT / "rules" / "witcher"), "--out", str(tmp_path / "out"), "--npm-dir", str(tmp_path / "npm")
    )
    assert code == 2 and "is a file" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["npm"] and (tmp_path / "npm").read_text() == "mine\n"


def test_an_npm_dir_in_a_folder_that_is_not_writable_is_refused(read_only: Path, tmp_path: Path, cli: Cli) -> None:  # noqa: F811
    out = tmp_path / "out"
    code, _, err = cli("build", str(ROOT / "rules" / "witcher"), "--out", str(out), "--npm-dir", str(read_only / "npm"))
    assert code == 2 and "not writable" in err
    assert not out.exists() and list(read_only.iterdir()) == []


def test_an_npm_dir_overlapping_the_output_or_the_sources_is_refused(tmp_path: Path, cli: Cli) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules" / "witcher", rules / "witcher")
    for out, npm_dir, says in [
        (tmp_path / "out", tmp_path / "out" / "npm", "overlap"),
        (tmp_path / "out", tmp_path, "overlap"),
        (tmp_path / "out", rules / "witcher" / "npm", "--npm-dir"),
    ]:
        code, _, err = cli("build", str(rules), "--out", str(out), "--npm-dir", str(npm_dir))
        assert code == 2 and says in err, err
        assert sorted(p.name for p in tmp_path.iterdir()) == ["rules"]
    (tmp_path / "dist").mkdir()
    code, _, err = cli(
        "build", str(rules), "--out", str(tmp_path / "out"), "--wheel-dir", str(tmp_path / "dist"),
        "--npm-dir", str(tmp_path / "dist" / "npm"),
    )  # fmt: skip
    assert code == 2 and "--wheel-dir" in err and "overlap" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dist", "rules"] and not any((tmp_path / "dist").iterdir())


def test_a_ruleset_npm_cannot_name_or_version_is_a_diagnostic_at_its_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    monkeypatch.chdir(tmp_path)
    body = {"a.rules": "trait Brave { type: die }\n"}
    write_ruleset(tmp_path / "rules" / "events", body, 'ruleset events { title: "Events"  version: "1.0.0" }\n')
    write_ruleset(tmp_path / "rules" / "node_modules", body, 'ruleset node_modules { title: "N"  version: "1" }\n')
    write_ruleset(tmp_path / "rules" / "pep", body, 'ruleset pep {\n  title: "PEP 440"\n  version: "1.0a1"\n}\n')
    write_ruleset(tmp_path / "rules" / "fine", body, 'ruleset fine { title: "Fine"  version: "2.1" }\n')
    result = compile_paths([Path("rules")])
    assert result.ok
    problems = [d for r in result.rulesets for d in npm.check(r)]
    matches_golden(render_text(problems, result.sources) + summary(problems) + "\n", GOLDEN / "trees" / "npm.txt")
    assert [(d.code, d.pos.file if d.pos else None, d.pos.line if d.pos else None) for d in problems] == [
        ("E308", "rules/events/ruleset.rules", 1),
        ("E308", "rules/node_modules/ruleset.rules", 1),
        ("E309", "rules/pep/ruleset.rules", 3),
    ]
    code, _, err = cli("build", "--out", "out", "--npm-dir", "npm")
    assert code == 1 and "[E308]" in err and "[E309]" in err
    code, out, _ = cli("build", "--out", "out", "--npm-dir", "npm", "--format", "json")
    assert code == 1 and [d["code"] for d in json.loads(out)["diagnostics"]] == ["E308", "E308", "E309"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rules"]  # neither folder written


def test_npm_versions() -> None:
    assert npm.npm_version("1") == "1.0.0" and npm.npm_version("0") == "0.0.0"
    assert npm.npm_version("2.1") == "2.1.0" and npm.npm_version("0.1.0") == "0.1.0"
    assert npm.npm_version("1.2-beta.1") == "1.2.0-beta.1" and npm.npm_version("1.0.0+build.5") == "1.0.0+build.5"
    for refused in ("1.2.3.4", "1.0a1", "01.2.3", "1.2.3-", "1.2.3-01"):
        assert npm.npm_version(refused) is None, refused


def test_node_builtins_are_all_refused() -> None:
    """Every module the installed Node has under a bare name a ruleset id could take is in NODE_BUILTINS."""
    listed = run(NODE or "node", "-p", "JSON.stringify(require('module').builtinModules)", cwd=ROOT)
    names = {n for n in json.loads(listed.stdout) if "/" not in n and not n.startswith("_")}
    assert names and names <= npm.NODE_BUILTINS


def test_the_licence_is_the_manifests(tmp_path: Path) -> None:
    body = {"a.rules": "trait Brave { type: die }\n"}
    write_ruleset(tmp_path / "marsh", body, 'ruleset marsh { title: "M"  version: "0.1.0"  license: "CC-BY-4.0" }\n')
    write_ruleset(tmp_path / "fen", body, 'ruleset fen { title: "F"  version: "0.1.0" }\n')
    licences = {r.id: json.loads(npm.package_json(r))["license"] for r in compile_paths([tmp_path]).rulesets}
    assert licences == {"marsh": "CC-BY-4.0", "fen": "UNLICENSED"}
