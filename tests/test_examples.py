"""Three rulesets that are not our seeds, written as homebrew authors would (tests/examples/): careers
with checks (Traveller-style), a 5e-style spell list with damage that scales, and a chain of d10 lifepath
tables. Each builds, and its generated package alone makes a character, casts, or rolls the chain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rulesdsl.compile.pipeline import compile_paths
from rulesdsl.targets.build import render_all, write_output

from .conftest import run_python

EXAMPLES = Path(__file__).resolve().parent / "examples"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    result = compile_paths([EXAMPLES])
    assert result.ok, [f"{d.code} {d.message}" for d in result.diagnostics]
    assert [r.id for r in result.rulesets] == ["careers", "spellbook", "streetlife"]
    out = tmp_path_factory.mktemp("examples")
    write_output(out, render_all(result.rulesets))
    return out


def run(built: Path, code: str) -> list[str]:
    ran = run_python(code, built)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.splitlines()


def test_a_career_character_from_the_package_alone(built: Path) -> None:
    lines = run(
        built,
        """
import random
import careers
from careers import runtime as rt

first = rt.Character(held={"career": ()})  # no career served yet

def make(seed):
    rng = random.Random(seed)
    values = {a.abbr: rt.dice(2, 6).roll(rng) for a in careers.ATTRIBUTES.values()}
    for career in careers.CAREERS.values():
        if career.requires is not None and not career.requires.judge(first):
            continue
        if career.qualification.roll(rng, **values).success:
            break
    else:
        return None
    terms, rank, skills, aging = 0, 0, [], []
    while terms < career.max_terms:
        terms += 1
        table = careers.TABLES[rng.choice(career.skills)]
        skills.append(table.roll(rng).row.skill)
        if not career.survival.roll(rng, **values).success:
            break
        if career.advancement.roll(rng, **values).success:
            rank += 1
        if terms >= 4:
            aging.append(careers.TABLES["aging"].roll(rng, modifier=-terms).row.loss)
    title = careers.TABLES[career.ranks].lookup(rank).title
    cash = careers.TABLES["mustering_out"].roll(rng, modifier=1 if rank >= 5 else 0).row.credits
    return career.id, terms, title, skills, aging, cash

made = [make(seed) for seed in range(200)]
assert made == [make(seed) for seed in range(200)]  # reproducible from the seed
people = [m for m in made if m is not None]
print(len(people) > 150, {m[0] for m in people} <= set(careers.CAREERS))
print(all(1 <= terms <= 7 and cash >= 1000 for _, terms, _, _, _, cash in people))
print(any(aging for *_, aging, _ in people), all(loss in (0, 1, 2, 3) for *_, aging, _ in people for loss in aging))
navy = careers.CAREERS["navy"]
print(navy.qualification.chance(INT=9), navy.qualification.chance(INT=2), str(navy.survival))
scout = careers.CAREERS["scout"]
print(careers.dm(score=2), careers.dm(score=7), careers.dm(score=12), navy.max_terms, scout.max_terms)
print(careers.TABLES["scout_service"].lookup(3).skill, careers.TABLES["navy_training"].lookup(1).skill)
commando = careers.CAREERS["commando"].requires
print(commando.judge(rt.Character(held={"career": {"scout"}})), commando.judge(first), commando.judge(rt.Character()))
names = {"career": {c.id: c.name for c in careers.CAREERS.values()}}
print(commando.describe(names), "commando" not in {m[0] for m in people})
""",
    )
    assert lines == [
        "True True",
        "True",
        "True True",
        "5/6 5/12 dm(INT) 5+",
        "-2 0 2 7 5",
        "Survey None",
        "True False None",
        "the Star Navy career or the Survey Scouts career True",
    ]


def test_spells_with_damage_that_scales_with_the_slot(built: Path) -> None:
    lines = run(
        built,
        """
import spellbook
spells = spellbook.SPELLS
fireball = spells["fireball"].damage
print(fireball.evaluate(slot=3).text, fireball.evaluate(slot=5).text, fireball.names)
dice = fireball.evaluate(slot=4)
print(dice.minimum, dice.maximum, sum(n * p for n, p in dice.distribution().items()))
print(spells["magic_missile"].damage.evaluate(slot=1).text, spells["cure_wounds"].damage.evaluate(slot=2).text)
print(sorted(s.id for s in spells.values() if "warlock" in s.classes), spells["hex"].concentration)
print(spells["shield"].damage, spells["fire_bolt"].level, spells["fire_bolt"].components)
print(spellbook.CLASSES["ranger"].casting, spellbook.CLASSES["wizard"].hit_die.text)
""",
    )
    assert lines == [
        "8d6 10d6 ('slot',)",
        "9 54 63/2",
        "3d4 + 3 2d8",
        "['hex'] True",
        "None 0 ('V', 'S')",
        "half 1d6",
    ]


def test_the_lifepath_chain_rolls_to_its_end(built: Path) -> None:
    lines = run(
        built,
        """
import random
import streetlife
ends = set()
for seed in range(300):
    steps = streetlife.TABLES["origin"].roll_chain(random.Random(seed))
    assert steps[0].table == "origin" and steps[1].table == "family"
    ends.add(steps[-1].table)
    if steps[-1].table == "events":
        assert len(steps[-1].numbers) == 2
print(sorted(ends))
events = streetlife.TABLES["events"]
print(sum(c for _, c in events.chances()), events.lookup(5, 3).event, events.lookup(5, 4).event)
""",
    )
    assert lines == ["['childhood', 'events']", "1 Made an enemy Fell in love"]


def test_the_reference_has_a_page_for_each_declared_kind(built: Path) -> None:
    assert (built / "site" / "careers" / "career.html").is_file()
    assert (built / "site" / "spellbook" / "class.html").is_file()
    page = (built / "site" / "careers" / "career.html").read_text(encoding="utf-8")
    assert 'href="table.html#navy_ranks"' in page and 'href="formula.html#dm"' in page


def test_each_kind_schema_is_written_beside_the_package_and_validates_its_entities(built: Path) -> None:
    from jsonschema import Draft202012Validator

    result = compile_paths([EXAMPLES])
    for ruleset in result.rulesets:
        for kind, docs in ruleset.documents().items():
            path = built / ruleset.id / "schemas" / f"{kind}.schema.json"
            validator = Draft202012Validator(json.loads(path.read_text(encoding="utf-8")))
            for doc in docs.values():
                assert list(validator.iter_errors(doc)) == [], (ruleset.id, kind, doc["id"])
