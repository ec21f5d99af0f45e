"""`rulesdsl new NAME [--extends RULESET] [--in DIR]`: a ruleset folder to start from, with a manifest and
a commented example file that checks and builds as it is."""

from __future__ import annotations

import keyword
import sys
from pathlib import Path

from rulesdsl.compile import ir
from rulesdsl.compile.pipeline import CompiledRuleset, compile_paths, search_path
from rulesdsl.language.names import slug

STANDALONE = """\
# A first ruleset: edit freely. `rulesdsl check {folder}` reports every mistake with its place.
# The language is described in docs/language.md of rulesdsl; `rulesdsl build {folder}` makes the package.

stock folk "Folk" {{ }}
setting village "Village" {{ stock: folk }}

lifepath "Born Villager" {{
  setting: village  born: yes
  time: 8 yrs  resources: 2
  skills: 2 pts: Farming
}}

lifepath "Farmer" {{
  setting: village
  time: 6 yrs  resources: 4  stat: +1 P
  skills: 4 pts: Farming, Haggling
  requires: "Born Villager"
}}

skill Farming {{ root: Will  type: peasant  tools: yes }}
skill Haggling {{ root: Will  type: social }}

# A table rolled on 2d6: the rows must cover 2-12 exactly once.
table weather "{title} Weather" {{
  roll: 2d6
  columns: sky, travel(int)
  2-5  -> "Storm", -2
  6-9  -> "Clouds", 0
  10+  -> "Clear", 1
}}

# A kind of your own: give it fields, then write entries of it.
kind relic "Relics" {{
  power: int in 1..5
  cursed: bool = no
}}
relic bone_flute "Bone Flute" {{ power: 2 }}
"""

EXTENDED = """\
# {title}: a homebrew on top of {base}. Everything {base} has is here too; change it with
#   patch KIND NAME {{ field: value   list += items   list -= items }}
#   remove KIND NAME
# and add what is new with ordinary blocks. `rulesdsl check {folder}` checks the whole as one ruleset.
{body}
"""


def _extension(name: str, base: CompiledRuleset) -> str:
    """An example that uses what the base really has: a setting led to from one of its born lifepaths."""
    lifepaths = base.entities.get("lifepath", {})
    born = next((e for e in lifepaths.values() if e.fields.get("born") is True), None)
    home = born.fields.get("setting") if born is not None else None
    setting = base.entities.get("setting", {}).get(home.target) if isinstance(home, ir.Ref) else None
    stock = setting.fields.get("stock") if setting is not None else None
    if born is not None and setting is not None and isinstance(stock, ir.Ref):
        return (
            f'\nsetting {name}_lands "{name.replace("_", " ").title()} Lands" {{ stock: {stock.target} }}\n\n'
            f"patch lifepath {born.id} {{ leads += {name}_lands }}\n\n"
            f'lifepath {name}_wanderer "Wanderer" {{\n'
            f"  setting: {name}_lands\n  time: 4 yrs  resources: 3\n  leads: {setting.id}\n"
            f"  requires: {born.id}\n"
            f'  description: "A first lifepath of your own: it follows {born.name}."\n}}\n'
        )
    return (
        f'\ntable {name}_rumours "Rumours" {{\n  roll: 1d6\n  columns: rumour\n'
        '  1-3 -> "Nothing worth the telling"\n  4-6 -> "Something stirs"\n}\n'
    )


def create(name: str, folder: Path, extends: str | None) -> tuple[Path | None, str]:
    """Write the new ruleset; (its folder, "") or (None, why it was not written)."""
    if slug(name) != name or keyword.iskeyword(name) or name in sys.stdlib_module_names:
        return None, f"'{name}' cannot be a ruleset id (a package name): use snake_case, e.g. '{slug(name)}_rules'"
    target = folder / name
    if target.exists():
        return None, f"{target} exists already; rulesdsl new never overwrites"
    if not folder.is_dir():
        return None, f"{folder} is not a folder"
    title = name.replace("_", " ").title()
    manifest = f'ruleset {name} {{ title: "{title}"  version: "0.1.0"'
    if extends is None:
        body = STANDALONE.format(folder=target.as_posix(), title=title)
    else:
        bases = [r for r in compile_paths(search_path(target)).rulesets if r.id == extends]
        if not bases:
            places = ", ".join(p.as_posix() for p in search_path(target))
            return None, f"no ruleset '{extends}' to extend (looked in {places}; RULESDSL_PATH adds folders)"
        manifest += f"  extends: {extends}"
        body = EXTENDED.format(title=title, base=extends, folder=target.as_posix(), body=_extension(name, bases[0]))
    target.mkdir()
    (target / "ruleset.rules").write_text(manifest + " }\n", encoding="utf-8")
    (target / f"{name}.rules").write_text(body, encoding="utf-8")
    return target, ""
