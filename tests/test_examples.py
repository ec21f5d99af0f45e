"""Five rulesets that are not our seeds, written as homebrew authors would (tests/examples/): careers
with checks (Traveller-style), a 5e-style spell list with damage that scales, a chain of d10 lifepath
tables, a percentile investigation game (characteristics `3d6 * 5`, occupations whose skill points are
formulas, the skill check a roll-under mechanic with graded successes) and a highest-die pool game
(playbooks, the action roll, a region x d20 encounter table). Each builds, and its generated package
alone makes a character, casts, or rolls the chain."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
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
    assert [r.id for r in result.rulesets] == ["careers", "nightfall", "smokewharf", "spellbook", "streetlife"]
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


SKILL_CHECK = ("fumble", "failure", "success", "hard", "extreme", "critical")


def skill_check_odds(chance: int) -> dict[str, Fraction]:
    """The skill check's odds counted roll by roll: 01 a critical; 98-100 a fumble under a chance of 50, 100
    from 50; at most a fifth of the chance extreme, a half hard, the chance a success."""
    ways = dict.fromkeys(SKILL_CHECK, 0)
    for roll in range(1, 101):
        if roll == 1:
            ways["critical"] += 1
        elif roll >= (98 if chance < 50 else 100):
            ways["fumble"] += 1
        elif roll > chance:
            ways["failure"] += 1
        else:
            ways["extreme" if roll <= chance // 5 else "hard" if roll <= chance // 2 else "success"] += 1
    return {name: Fraction(n, 100) for name, n in ways.items()}


def test_an_investigator_from_the_package_alone(built: Path) -> None:
    lines = run(
        built,
        """
import json
import random
from fractions import Fraction
import nightfall
from nightfall import runtime as rt

TABLES = nightfall.TABLES
ROLLS = TABLES["characteristic_rolls"]
CHARACTERISTICS = sorted(a.id for a in nightfall.ATTRIBUTES.values() if a.group == "characteristic")
ABBR = {a.id: a.abbr for a in nightfall.ATTRIBUTES.values()}
D100 = rt.dice(1, 100)
CHECK = nightfall.MECHANICS["skill_check"]

def spend(rng, chances, skills, points):
    # a point at a time into the skills given, none past 75%: what a player does by hand
    while points and any(chances[s] < 75 for s in skills):
        skill = rng.choice([s for s in skills if chances[s] < 75])
        chances[skill] += 1
        points -= 1

def make(seed):
    rng = random.Random(seed)
    rolled = {c: ROLLS.lookup(c).roll.roll(rng) for c in CHARACTERISTICS}
    by_abbr = {ABBR[c]: v for c, v in rolled.items()}
    derived = nightfall.derive_attributes(rolled)
    open_to = [o for o in nightfall.OCCUPATIONS.values()
               if o.minimum is None or all(rolled[c] >= least for c, least in o.minimum.items())]
    job = rng.choice(open_to)
    points = job.skill_points.evaluate(**by_abbr)
    skills = job.skills.pick(rng)
    chances = {s.id: s.base.evaluate(**by_abbr) for s in nightfall.SKILLS.values()}
    spend(rng, chances, skills, points)
    spend(rng, chances, sorted(chances), nightfall.interest_points(INT=by_abbr["INT"]))
    heft = rolled["strength"] + rolled["size"]
    bonus = TABLES["damage_bonus"].lookup(heft).bonus
    wealth = rng.randint(job.wealth.low, job.wealth.high)
    check = CHECK.roll(rng, chances["spot_hidden"])
    return rolled, derived, job, points, skills, chances, bonus, wealth, check

made = [make(seed) for seed in range(300)]
assert made == [make(seed) for seed in range(300)]  # reproducible from the seed
ranges = {c: nightfall.ATTRIBUTES[c].range for c in CHARACTERISTICS}
print(all(v % 5 == 0 and v in ranges[c] for m in made for c, v in m[0].items()))
print(all(d["stamina"] == (d["constitution"] + d["size"]) // 10 and d["will_points"] == d["resolve"] // 5
          and d["build"] == nightfall.build(STR=d["strength"], SIZ=d["size"]) for _, d, *_ in made))
print(all(job.id != "doctor" or rolled["education"] >= 60 for rolled, _, job, *_ in made))
print(all(set(job.skills.fixed) <= set(skills) <= set(job.skills.options) for _, _, job, _, skills, *_ in made))
print(all(max(chances.values()) <= 90 and sum(chances.values()) > 400 for *_, chances, _, _, _ in made))
print(sorted({m[2].id for m in made}), sorted({TABLES["outcomes"].lookup(m[-1].outcome).level for m in made}))
# every check reports its die, against the chance of the skill rolled, read by the levels of success
def level(roll, chance):
    if roll == 1:
        return "critical"
    if roll >= (98 if chance < 50 else 100):
        return "fumble"
    if roll > chance:
        return "failure"
    return "extreme" if roll <= chance // 5 else "hard" if roll <= chance // 2 else "success"

print(all(c.target == m[5]["spot_hidden"] and len(c.dice) == 1 and c.total == c.dice[0]
          and c.outcome == level(c.total, c.target) and c.success == (c.total <= c.target or c.total == 1)
          and c.success == (c.outcome not in ("failure", "fumble")) for m in made for c in [m[-1]]))
# the dice are the seeded generator's own: one d100
print(all(CHECK.roll(random.Random(seed), 50).dice == (random.Random(seed).randint(1, 100),) for seed in range(50)))
eye = nightfall.OCCUPATIONS["private_eye"].skill_points
print(eye, eye.evaluate(EDU=70, DEX=60, STR=45), nightfall.OCCUPATIONS["archivist"].skill_points.evaluate(EDU=80))
print(nightfall.OCCUPATIONS["doctor"].minimum["education"], nightfall.interest_points(INT=65))
print(nightfall.SKILLS["dodge"].base.evaluate(DEX=55), nightfall.SKILLS["own_language"].base.evaluate(EDU=70))
# exact odds the package gives
strength, size = ROLLS.lookup("strength").roll, ROLLS.lookup("size").roll
print(strength.minimum, strength.maximum, size.minimum, size.maximum, strength.chance(90, 90), size.chance(65, 65))
print(sum(n * p for n, p in strength.distribution().items()), (strength + size).chance(130, None))
bonus = TABLES["damage_bonus"]
print(bonus.lookup(55).bonus, bonus.lookup(150).bonus.text, nightfall.build(STR=80, SIZ=90))
pace = nightfall.pace
print(pace(DEX=70, SIZ=60, STR=65), pace(DEX=50, SIZ=60, STR=65), pace(DEX=40, SIZ=80, STR=45))
levels = [CHECK.judge([r], 60).outcome for r in (1, 12, 13, 30, 31, 60, 61, 99, 100)]
print(levels, [CHECK.judge([r], 40).outcome for r in (97, 98)], D100.chance(2, 12), D100.chance(1, 60))
# exact odds of each level for a chance of 20, 49, 50 and 80, and of any success
print(json.dumps({c: {n: str(p) for n, p in CHECK.chances(c).items()} for c in (20, 49, 50, 80)}))
print(CHECK.chance(60), CHECK.names, [TABLES["outcomes"].lookup(n).level for n in CHECK.names])
horrors = nightfall.HORRORS
print(horrors["corpse"].loss_on_pass.distribution(), horrors["gate"].loss_on_pass.distribution())
thing = horrors["thing"].loss_on_fail
print(thing.maximum, thing.chance(14, None), horrors["gate"].loss_on_fail.chance(12, 12))
""",
    )
    assert lines == [
        "True",
        "True",
        "True",
        "True",
        "True",
        "['archivist', 'dock_hand', 'doctor', 'private_eye', 'reporter'] "
        "['Critical success', 'Extreme success', 'Failure', 'Fumble', 'Hard success', 'Regular success']",
        "True",
        "True",
        "EDU * 2 + max(DEX, STR) * 2 260 320",
        "60 130",
        "27 70",
        "15 90 40 90 1/216 1/6",
        "105/2 791/2592",
        "-2 1d4 2",
        "9 8 7",
        "['critical', 'extreme', 'hard', 'hard', 'success', 'success', 'failure', 'failure', 'fumble'] "
        "['failure', 'fumble'] 11/100 3/5",
        json.dumps({chance: {n: str(p) for n, p in skill_check_odds(chance).items()} for chance in (20, 49, 50, 80)}),
        "3/5 ('fumble', 'failure', 'success', 'hard', 'extreme', 'critical') "
        "['Fumble', 'Failure', 'Regular success', 'Hard success', 'Extreme success', 'Critical success']",
        "{0: Fraction(1, 1)} {0: Fraction(1, 6), 1: Fraction(1, 3), 2: Fraction(1, 3), 3: Fraction(1, 6)}",
        "None 1/6 11/36",
    ]
    # the odds of a damage bonus, counted here by hand: STR + SIZ is 5 * (3d6 + 2d6 + 6), 130 or more
    ways = sum(1 for dice in itertools.product(range(1, 7), repeat=5) if sum(dice) + 6 >= 26)
    assert Fraction(ways, 6**5) == Fraction(791, 2592)


OUTCOMES = ("bad", "partial", "full", "critical")


def counted_odds(dice: int) -> dict[str, Fraction]:
    """The action roll's odds counted over every way the dice can fall: `dice` d6 read by the highest,
    two sixes a critical; none rolls two and reads the lowest, never a critical."""
    rolled = dice or 2
    ways = dict.fromkeys(OUTCOMES, 0)
    for faces in itertools.product(range(1, 7), repeat=rolled):
        read = max(faces) if dice else min(faces)
        critical = dice > 0 and faces.count(6) >= 2
        ways["critical" if critical else "bad" if read <= 3 else "partial" if read <= 5 else "full"] += 1
    return {name: Fraction(n, 6**rolled) for name, n in ways.items()}


def closed_odds(dice: int) -> dict[str, Fraction]:
    """The same odds in closed form for a pool of one or more: the highest is 3 or less with (1/2)^n, a
    six shows with 1 - (5/6)^n, exactly one six (a full success) with n (1/6) (5/6)^(n-1), and two or more
    sixes (the critical) with the rest of the chance of a six."""
    n, six, other = dice, Fraction(1, 6), Fraction(5, 6)
    bad, any_six, one_six = Fraction(1, 2) ** n, 1 - other**n, n * six * other ** (n - 1)
    return {"bad": bad, "partial": 1 - bad - any_six, "full": one_six, "critical": any_six - one_six}


def action_odds(dice: int) -> dict[str, Fraction]:
    """Counted for up to four dice (and none), in closed form beyond, the two agreeing where both are."""
    if dice == 0:
        return counted_odds(0)
    if dice <= 4:
        assert counted_odds(dice) == closed_odds(dice)
        return counted_odds(dice)
    return closed_odds(dice)


def test_a_scoundrel_from_the_package_alone(built: Path) -> None:
    lines = run(
        built,
        """
import json
import random
import smokewharf as sw

ROLL = sw.MECHANICS["action_roll"]
RESULTS = sw.TABLES["action_results"]

def action(rng, rating):
    # the action roll from the mechanic alone: a die for each dot (none: two, the lowest read)
    return ROLL.roll(rng, rating)

def attribute(ratings, kind):
    # an attribute rates one die for each of its four actions with a dot
    dots = [ratings[a.id] for a in sw.ACTIONS.values() if a.attribute == kind]
    return sw.rating_of(**dict(zip(("first", "second", "third", "fourth"), dots, strict=True)))

def make(seed):
    rng = random.Random(seed)
    book = sw.PLAYBOOKS[rng.choice(sorted(sw.PLAYBOOKS))]
    abilities = book.abilities.pick(rng)
    ratings = {a: 0 for a in sw.ACTIONS} | dict(book.ratings)
    for _ in range(4):  # four more dots, none past 2 at the start
        ratings[rng.choice(sorted(a for a, r in ratings.items() if r < 2))] += 1
    attributes = {kind: attribute(ratings, kind) for kind in ("insight", "prowess", "resolve")}
    region = rng.choice(sorted(sw.REGIONS))
    chain = sw.TABLES["encounters"].roll_chain(rng, region=region)
    coin = sum(step.row.coin for step in chain if step.table == "treasure")
    rolls = [action(rng, rating) for rating in sorted(ratings.values())]
    return book.id, abilities, ratings, attributes, region, chain, coin, rolls

made = [make(seed) for seed in range(300)]
assert made == [make(seed) for seed in range(300)]  # reproducible from the seed
print(sorted({m[0] for m in made}), all(sum(m[2].values()) == 7 and max(m[2].values()) <= 2 for m in made))
print(all(sum(m[3].values()) == sum(1 for r in m[2].values() if r) for m in made))
print(all(set(sw.PLAYBOOKS[b].abilities.fixed) <= set(ab) <= set(sw.PLAYBOOKS[b].abilities.options)
          and len(ab) == len(sw.PLAYBOOKS[b].abilities.fixed) + 1 for b, ab, *_ in made))
print(all(chain[0].table == "encounters" and chain[0].given == (region,) for *_, region, chain, _, _ in made))
print(any(len(chain) > 2 for *_, chain, _, _ in made), sorted({step.table for m in made for step in m[5]}))
# every `N x treasure` cell is followed N times: the treasure rolls are what the cells ask for
print(all(sum(s.row.then.times for s in chain if s.row.then) == sum(s.table == "treasure" for s in chain)
          for *_, chain, _, _ in made))
rolls = [(rating, r) for m in made for rating, r in zip(sorted(m[2].values()), m[-1], strict=True)]
print(sorted({r.outcome for _, r in rolls}), sorted(RESULTS.lookup(name).result for name in ROLL.names))
# every roll reports its dice: as many as the rating (two for none), the highest read (the lowest for none),
# two sixes a critical (never for none), else the band of the die read
band = {face: o.name for o in ROLL.outcomes for face in range(o.low, o.high + 1)}
print(all(len(r.dice) == (rating or 2) and r.read == (max if rating else min)(r.dice)
          and r.critical == (rating > 0 and r.dice.count(6) >= 2)
          and r.outcome == ("critical" if r.critical else band[r.read]) for rating, r in rolls))
# criticals come with two dice or more; two sixes on a rating of 0 are read as the lowest, a full success
print(sorted({rating for rating, r in rolls if r.critical}),
      any(not rating and r.dice == (6, 6) and r.outcome == "full" for rating, r in rolls))
# the dice are the seeded generator's own draws, one d6 at a time
def draws(seed, n):
    rng = random.Random(seed)
    return tuple(rng.randint(1, 6) for _ in range(n))

print(all(ROLL.roll(random.Random(seed), n).dice == draws(seed, n or 2) for seed in range(50) for n in range(7)))
print(ROLL.roll(random.Random(1), 3))
print(ROLL.judge([6, 6], dice=0), ROLL.judge([6, 2, 6]).outcome, ROLL.judge([3, 5]).outcome,
      ROLL.judge([2, 5], dice=0).outcome)
hit = ROLL.roll(random.Random(5), 3)
print(sw.stress_to_resist(highest=hit.read, critical=hit.critical) == (-1 if hit.critical else 6 - hit.read))
sneak = sw.PLAYBOOKS["sneak"]
print(sneak.abilities.choose(["tide_sense"]), sw.PLAYBOOKS["bruiser"].abilities.fixed, dict(sneak.ratings))
print([(i.name, i.load, i.fine) for i in sneak.items], sum(i.load for i in sw.PLAYBOOKS["bruiser"].items))
print(sw.stress_to_resist(highest=4, critical=False), sw.stress_to_resist(highest=6, critical=True))
print(sw.rating_of(first=2, second=0, third=1, fourth=0), ROLL.sides, ROLL.critical, ROLL.zero_dice, ROLL.names)
# exact odds the package gives for each rating (the test counts them itself)
print(json.dumps([{name: str(p) for name, p in ROLL.chances(n).items()} for n in range(7)]))
encounters = sw.TABLES["encounters"]
print([(row.value.what, str(p)) for row, p in encounters.chances(region="sunken_ward")])
print(sum(p for _, p in encounters.chances(region="docks")), encounters.lookup("lantern_row", 18).then)
treasure = sw.TABLES["treasure"]
print([(row.key_text, str(p)) for row, p in treasure.chances()], treasure.otherwise.value.find)
print(treasure.lookup(7).find, treasure.lookup(8).then)
""",
    )
    assert lines == [
        "['bruiser', 'go_between', 'lamplighter', 'sneak'] True",
        "True",
        "True",
        "True",
        "True ['encounters', 'treasure']",
        "True",
        "['bad', 'critical', 'full', 'partial'] ['Bad outcome', 'Critical success', 'Full success', 'Partial success']",
        "True",
        "[2] True",
        "True",
        "HighestResult(dice=(2, 5, 1), read=5, outcome='partial', critical=False)",
        "HighestResult(dice=(6, 6), read=6, outcome='full', critical=False) critical partial bad",
        "True",
        "('tide_sense',) ('iron_jaw',) {'prowl': 2, 'finesse': 1}",
        "[('Fine lockpicks', 0, True), ('Grappling line', 2, False), ('Dark cloak', 1, False)] 4",
        "2 -1",
        "2 6 2 2 ('bad', 'partial', 'full', 'critical')",
        json.dumps([{name: str(p) for name, p in action_odds(n).items()} for n in range(7)]),
        "[('a spirit that wants its name back', '2/5'), ('eel-fishers on the rooftops', '7/20'), "
        "('a collapsing walkway', '1/5'), ('a flooded vault, open at low tide', '1/20')]",
        "1 Rolls(times=1, table='treasure')",
        "[('1-3', '3/8'), ('4-5', '1/4'), ('6', '1/8'), ('8', '1/8'), ('otherwise', '1/8')] nothing of worth",
        "nothing of worth Rolls(times=2, table='treasure')",
    ]


def test_the_reference_has_a_page_for_each_declared_kind(built: Path) -> None:
    assert (built / "site" / "careers" / "career.html").is_file()
    assert (built / "site" / "spellbook" / "class.html").is_file()
    page = (built / "site" / "careers" / "career.html").read_text(encoding="utf-8")
    assert 'href="table.html#navy_ranks"' in page and 'href="formula.html#dm"' in page
    # reference keys are linked: a region beside the d20, a characteristic named by its abbreviation
    tables = (built / "site" / "smokewharf" / "table.html").read_text(encoding="utf-8")
    assert 'href="region.html#sunken_ward"' in tables
    tables = (built / "site" / "nightfall" / "table.html").read_text(encoding="utf-8")
    assert 'href="attribute.html#education"' in tables
    assert (built / "site" / "nightfall" / "occupation.html").is_file()
    assert "one of" in (built / "site" / "smokewharf" / "playbook.html").read_text(encoding="utf-8")
    # the action roll's page shows each outcome's exact chance for 0 (two dice, the lowest read) to 6 dice
    page = (built / "site" / "smokewharf" / "mechanic.html").read_text(encoding="utf-8")
    page = page.split("Chance of each outcome", 1)[1].split("</table>", 1)[0]
    assert "no dice: the lowest of 2" in page
    head = "".join(f'<th scope="col">{name}</th>' for name in OUTCOMES)
    assert f'<th scope="col">Dice</th>{head}' in page
    for dice in range(7):
        row = page.split(f'<tr><th scope="row">{dice}</th>', 1)[1].split("</tr>", 1)[0]
        titles = [cell.split('"', 1)[0] for cell in row.split('<td title="')[1:]]
        assert titles == [str(p) for p in action_odds(dice).values()], dice
    # the skill check's page shows each level's exact chance for a skill of 20, 50 and 80
    page = (built / "site" / "nightfall" / "mechanic.html").read_text(encoding="utf-8")
    page = page.split("Chance of each outcome, by target", 1)[1].split("</table>", 1)[0]
    assert "".join(f'<th scope="col">{name}</th>' for name in SKILL_CHECK) in page
    for chance in (20, 50, 80):
        row = page.split(f'<tr><th scope="row">{chance}</th>', 1)[1].split("</tr>", 1)[0]
        titles = [cell.split('"', 1)[0] for cell in row.split('<td title="')[1:]]
        assert titles == [str(p) for p in skill_check_odds(chance).values()], chance


def test_each_kind_schema_is_written_beside_the_package_and_validates_its_entities(built: Path) -> None:
    from jsonschema import Draft202012Validator

    result = compile_paths([EXAMPLES])
    for ruleset in result.rulesets:
        for kind, docs in ruleset.documents().items():
            path = built / ruleset.id / "schemas" / f"{kind}.schema.json"
            validator = Draft202012Validator(json.loads(path.read_text(encoding="utf-8")))
            for doc in docs.values():
                assert list(validator.iter_errors(doc)) == [], (ruleset.id, kind, doc["id"])
