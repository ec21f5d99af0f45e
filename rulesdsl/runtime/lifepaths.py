"""Lifepaths and character burning (Burning Wheel's shape): the facts a requirement is judged on, and
`burn`, which adds up a path and names every rule it breaks.

Copied verbatim into a generated package as `_runtime/lifepaths.py` when its ruleset has lifepaths. It
reads lifepaths, settings and stocks through the protocols below; the compiler checks that the kinds
have these fields, and that the stat pools and `lifepath_repeats` tables have the columns read here.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any, Protocol

from .core import (
    Choices,
    Names,
    Requirement,
    StatBonus,
    Table,
    Value,
    Verdict,
    name_of,
    slug,
    to_json,
)
from .records import field, field_names, record


class Lifepath(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def setting(self) -> str: ...
    @property
    def born(self) -> bool: ...
    @property
    def time(self) -> int: ...
    @property
    def resources(self) -> int: ...
    @property
    def stat(self) -> StatBonus | None: ...
    @property
    def leads(self) -> tuple[str, ...]: ...
    @property
    def skills(self) -> Choices | None: ...
    @property
    def general(self) -> int | None: ...
    @property
    def traits(self) -> Choices | None: ...
    @property
    def requires(self) -> Requirement | None: ...
    @property
    def restrictions(self) -> Requirement | None: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def aliases(self) -> tuple[str, ...]: ...


class Setting(Protocol):
    @property
    def stock(self) -> str: ...


class Stock(Protocol):
    @property
    def common_traits(self) -> tuple[str, ...]: ...
    @property
    def stat_pools(self) -> str | None: ...


def _choices(choices: Choices | None) -> tuple[tuple[str, ...], ...]:
    return choices.options if choices is not None else ()


class Catalog:
    """Lookups over the lifepaths that requirements need, built once per package, when first read (a package
    makes its catalog at import, before any lifepath is built)."""

    def __init__(self, lifepaths: Mapping[str, Lifepath]) -> None:
        self.lifepaths = lifepaths

    @functools.cached_property
    def settings(self) -> dict[str, str]:
        return {lp.id: lp.setting for lp in self.lifepaths.values()}

    @functools.cached_property
    def tags(self) -> dict[str, tuple[str, ...]]:
        return {lp.id: lp.tags for lp in self.lifepaths.values()}

    @functools.cached_property
    def skills(self) -> dict[str, tuple[str, ...]]:
        return {lp.id: tuple(s for c in _choices(lp.skills) for s in c) for lp in self.lifepaths.values()}

    @functools.cached_property
    def traits(self) -> dict[str, tuple[str, ...]]:
        return {lp.id: tuple(s for c in _choices(lp.traits) for s in c) for lp in self.lifepaths.values()}

    def find(self, text: str) -> str:
        """The id of the lifepath written as an id, a display name or an alias; LookupError otherwise."""
        if text in self.lifepaths:
            return text
        key = slug(text)
        if key in self.lifepaths:
            return key
        found = sorted(
            lp.id for lp in self.lifepaths.values() if key in {slug(name) for name in (lp.name, *lp.aliases)}
        )
        if len(found) == 1:
            return found[0]
        if found:
            raise LookupError(f"'{text}' could mean several lifepaths: {', '.join(found)}")
        raise LookupError(f"no lifepath named '{text}'")


@record
class Path(Value):
    """The facts a requirement of `lifepath` is judged on: the lifepaths taken before it, and what is
    known of the character (None: not given, so conditions on it are undecided)."""

    previous: tuple[str, ...]
    catalog: Catalog
    lifepath: str = ""
    chosen_traits: frozenset[str] = frozenset()
    age: int | None = None
    age_at_entry: int | None = None
    lifepaths: int | None = None
    gender: str | None = None
    held: Mapping[str, frozenset[str]] = field(default_factory=dict)  # other kinds: kind -> ids

    def fact(self, subject: str) -> int | str | None:
        facts: dict[str, int | str | None] = {
            "age": self.age,
            "age_at_entry": self.age_at_entry,
            "lifepaths": self.lifepaths,
            "gender": None if self.gender is None else slug(self.gender),
            "position": len(self.previous) + 1,
            "times_taken": self.previous.count(self.lifepath) + 1,
        }
        return facts[subject]

    def holds(self, kind: str, entity: str) -> Verdict:
        match kind:
            case "lifepath":
                return entity in self.previous
            case "trait":
                return entity in self.chosen_traits or any(
                    entity in self.catalog.traits.get(lp, ()) for lp in self.previous
                )
            case _:
                held = self.held.get(kind)
                return None if held is None else entity in held

    def skills_of(self, lifepath: str) -> tuple[str, ...]:
        return self.catalog.skills.get(lifepath, ())

    def setting_of(self, lifepath: str) -> str | None:
        return self.catalog.settings.get(lifepath)

    def tags_of(self, lifepath: str) -> tuple[str, ...]:
        return self.catalog.tags.get(lifepath, ())


def age_before(catalog: Catalog, previous: Sequence[str], lifepath: str | None = None) -> int:
    """Years lived before `lifepath` (or after all of `previous`): lifepath years plus a year per lead."""
    known = [catalog.lifepaths[lp] for lp in previous if lp in catalog.lifepaths]
    here = catalog.lifepaths.get(lifepath) if lifepath is not None else None
    chain = [*known, here] if here is not None else known
    leads = sum(1 for before, after in itertools.pairwise(chain) if before.setting != after.setting)
    return sum(lp.time for lp in known) + leads


def lifepath_path(
    catalog: Catalog,
    lifepath: str,
    previous: Sequence[str],
    *,
    traits: Sequence[str] = (),
    age: int | None = None,
    lifepaths: int | None = None,
    gender: str | None = None,
    held: Mapping[str, Iterable[str]] | None = None,
) -> Path:
    """The facts a requirement of `lifepath`, taken after `previous`, is judged on; `held` says what
    the character holds of other kinds (kind -> ids), for requirements such as `career navy`."""
    return Path(
        previous=tuple(previous),
        catalog=catalog,
        lifepath=lifepath,
        chosen_traits=frozenset(traits),
        age=age,
        age_at_entry=age_before(catalog, previous, lifepath),
        lifepaths=lifepaths,
        gender=gender,
        held={kind: frozenset(ids) for kind, ids in (held or {}).items()},
    )


def born_stock(catalog: Catalog, settings: Mapping[str, Setting], lifepaths: Sequence[str]) -> str | None:
    """The character's stock: the stock of the setting of its born lifepath (the first of `lifepaths`); None
    when that lifepath or its setting is unknown."""
    first = catalog.lifepaths.get(lifepaths[0]) if lifepaths else None
    return settings[first.setting].stock if first is not None and first.setting in settings else None


def common_traits(
    catalog: Catalog, settings: Mapping[str, Setting], stocks: Mapping[str, Stock], lifepaths: Sequence[str]
) -> tuple[str, ...]:
    """The common traits of the character's stock (born_stock), in the stock's order: the character has them
    from birth, so a requirement naming one of them holds."""
    stock = born_stock(catalog, settings, lifepaths)
    return tuple(stocks[stock].common_traits) if stock is not None and stock in stocks else ()


def verdict(lifepath: Lifepath, path: Path) -> Verdict:
    """Whether `lifepath` may be taken on `path`: True, False, or None when it depends on facts not given."""
    verdicts = [r.judge(path) for r in (lifepath.requires, lifepath.restrictions) if r is not None]
    if False in verdicts:
        return False
    return None if None in verdicts else True


def reasons(lifepath: Lifepath, path: Path, names: Names, decided: Verdict) -> list[str]:
    """The requirements of `lifepath` whose verdict on `path` is `decided` (False: broken; None: undecided)."""
    found = []
    for requirement, label in ((lifepath.requires, "requires"), (lifepath.restrictions, "restricted to")):
        if requirement is not None and requirement.judge(path) is decided:
            found.append(f"{label}: {requirement.describe(names)}")
    return found


@record
class Sheet(Value):
    """The totals of a burnt character, every rule the path breaks (empty when it is legal) and, in
    `undecided`, every requirement that depends on a fact not given (gender, say) and every required skill
    or trait that is a choice the player has not picked (it is then in neither `required_*` tuple). Every
    field is a number, an id or a tuple in path order: the same path and arguments give an equal sheet.

    `common_traits` are the stock's, in the stock's order: free (no trait points) and the character's from
    birth, so a lifepath whose first trait is one of them requires its next trait instead (as for any trait
    the character already has); a trait is never in both tuples."""

    lifepaths: tuple[str, ...]
    stock: str | None
    age: int
    mental_pool: int | None  # by age, from the stock's table; None when the stock has none
    physical_pool: int | None
    mental_bonus: int
    physical_bonus: int
    lifepath_skill_points: int
    general_skill_points: int
    required_skills: tuple[str, ...]
    trait_points: int
    required_traits: tuple[str, ...]
    common_traits: tuple[str, ...]
    resource_points: int
    violations: tuple[str, ...]
    undecided: tuple[str, ...] = ()

    @property
    def legal(self) -> bool:
        return not self.violations

    @property
    def mental(self) -> int | None:
        return None if self.mental_pool is None else self.mental_pool + self.mental_bonus

    @property
    def physical(self) -> int | None:
        return None if self.physical_pool is None else self.physical_pool + self.physical_bonus

    def to_json(self) -> str:
        """The sheet as JSON text: every field in order, tuples as lists. rules.js's `burn` gives a sheet whose
        `JSON.stringify` is the same text for the same path and options."""
        return to_json({name: getattr(self, name) for name in field_names(self)})

    def text(self, names: Names) -> str:
        """The sheet as people read it."""

        def named(kind: str, ids: Sequence[str]) -> str:
            return ", ".join(name_of(names, kind, i) for i in ids) or "none"

        lines = [
            f"Lifepaths:      {named('lifepath', self.lifepaths)}",
            f"Stock:          {name_of(names, 'stock', self.stock) if self.stock else 'unknown'}",
            f"Age:            {self.age}",
            _pool_line("Mental pool:   ", self.mental_pool, self.mental_bonus),
            _pool_line("Physical pool: ", self.physical_pool, self.physical_bonus),
            f"Skill points:   {self.lifepath_skill_points} lifepath, {self.general_skill_points} general",
            f"Required skills: {named('skill', self.required_skills)}",
            f"Trait points:   {self.trait_points}",
            f"Required traits: {named('trait', self.required_traits)}",
            f"Common traits:  {named('trait', self.common_traits)}",
            f"Resources:      {self.resource_points} rp",
        ]
        if self.violations:
            lines.append("Not a legal path:")
            lines += [f"  - {v}" for v in self.violations]
        else:
            lines.append(
                "Legal path." if not self.undecided else "Legal path, if these hold (facts or choices not given):"
            )
        lines += [f"  ? {u}" for u in self.undecided]
        return "\n".join(lines) + "\n"


def _pool_line(label: str, by_age: int | None, bonus: int) -> str:
    if by_age is None:
        return f"{label} unknown (no stat pools for this stock and age) {bonus:+d} from lifepaths"
    return f"{label} {by_age + bonus} ({by_age} by age {bonus:+d} from lifepaths)"


REPEAT_COLUMNS = ("years", "skill_points", "general_points", "trait_points", "resources", "stat")


def _repeat_factors(tables: Mapping[str, Table[Any]], times: int) -> dict[str, Fraction]:
    """What the nth time through a lifepath still earns, from the optional `lifepath_repeats` table.

    Its rows are keyed by the time taken (1, 2, 3+) and its multiplier columns are among REPEAT_COLUMNS
    (the compiler checks that); a column left out, or a time without a row, counts in full.
    """
    table = tables.get("lifepath_repeats")
    if table is None:
        return {}
    try:
        row = table.lookup(times)
    except LookupError:
        return {}
    return {name: Fraction(getattr(row, name)) for name in REPEAT_COLUMNS if hasattr(row, name)}


def _first_new(
    choices: Sequence[tuple[str, ...]], owned: set[str], open_: set[tuple[str, ...]]
) -> tuple[str, ...] | None:
    """The first entry not already owned: an alternative counts as owned when any of its options is, or
    when it is `open_` (met earlier on the path and left to the player: no pick, or more than one)."""
    for options in choices:
        if not owned.intersection(options) and options not in open_:
            return options
    return None


@record
class _Picks(Value):
    """The player's picks among a path's alternatives: each as given and as the id it names (an option's
    id as written, else the slug of a display name), and the ids that settled an alternative."""

    given: dict[str, str]  # as given -> id, in the caller's order
    ids: frozenset[str]
    used: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, picks: Sequence[str], catalog: Catalog) -> _Picks:
        known = {option for kind in (catalog.skills, catalog.traits) for ids in kind.values() for option in ids}
        given = {pick: pick if pick in known else slug(pick) for pick in picks}
        return cls(given, frozenset(given.values()))

    def unused(self, names: Names) -> list[str]:
        """A sentence for each pick that settled no required alternative (unknown, or not asked for)."""
        return [
            f"{_shown(names, given, id_)} was picked, but no skill or trait this path requires offers it as a choice"
            for given, id_ in self.given.items()
            if id_ not in self.used
        ]


def _shown(names: Names, given: str, id_: str) -> str:
    for kind in ("skill", "trait"):
        if id_ in names.get(kind, {}):
            return names[kind][id_]
    return f"'{given}'"


@record
class _Required(Value):
    """What a path requires of one kind (skill or trait), entry by entry, and what the character owns."""

    kind: str
    owned: set[str]
    required: list[str] = field(default_factory=list)
    open: set[tuple[str, ...]] = field(default_factory=set)

    def next(self, choices: Choices | None) -> tuple[str, ...] | None:
        return _first_new(_choices(choices), self.owned, self.open)

    def settle(self, entry: tuple[str, ...], picks: _Picks, names: Names, where: str) -> tuple[str | None, str | None]:
        """Require `entry` (an id, or an alternative settled by the player's picks). Returns what is left
        undecided and what is broken (each None, or a sentence): never a guess among the options."""
        picked = list(entry)
        if len(entry) > 1:
            picked = [option for option in entry if option in picks.ids]
            picks.used.update(picked)
        if len(picked) == 1:
            self.required.append(picked[0])
            self.owned.add(picked[0])
            return None, None
        self.open.add(entry)
        options = _listed([name_of(names, self.kind, option) for option in entry], "or")
        if not picked:
            return f"choose {options} for {where}, its required {self.kind}", None
        several = _listed([name_of(names, self.kind, option) for option in picked], "and")
        return None, f"{where} requires one {self.kind} of {options}, but {several} were picked: keep one"


def _listed(words: Sequence[str], last: str) -> str:
    """`A, B or C` (`last` is the word before the last one)."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {last} {words[-1]}"


def burn(
    catalog: Catalog,
    settings: Mapping[str, Setting],
    stocks: Mapping[str, Stock],
    tables: Mapping[str, Table[Any]],
    names: Names,
    lifepaths: Sequence[str],
    *,
    either: Sequence[str] = (),
    gender: str | None = None,
    traits: Sequence[str] = (),
    held: Mapping[str, Iterable[str]] | None = None,
    picks: Sequence[str] = (),
) -> Sheet:
    """Burn a character from lifepath ids (born lifepath first). `either` places each `+1 M/P` (and `-1 M/P`), in order;
    `held` is what the character holds of other kinds, for requirements that name them; `picks` are the
    options the player took where a required skill or trait is an alternative (`Lame or "Missing Limb"`).
    An alternative with no pick is undecided (never guessed), with two picks or more it is a violation,
    and so is a pick that settles none."""
    violations: list[str] = []
    undecided: list[str] = []
    path = [catalog.lifepaths[lp] for lp in lifepaths]

    def label(lp: Lifepath) -> str:
        return name_of(names, "lifepath", lp.id)

    if not path:
        violations.append("a character needs at least a born lifepath")
    for i, lp in enumerate(path):
        if i == 0 and not lp.born:
            violations.append(f"{label(lp)} is not a born lifepath, and the first lifepath must be one")
        if i > 0 and lp.born:
            violations.append(f"{label(lp)} is a born lifepath and can only be the first")
        if i > 0 and lp.setting != path[i - 1].setting and lp.setting not in path[i - 1].leads:
            target = name_of(names, "setting", lp.setting)
            violations.append(f"{label(path[i - 1])} has no lead to the {target}, so {label(lp)} cannot follow it")
    factors = [_repeat_factors(tables, lifepaths[: i + 1].count(lp.id)) for i, lp in enumerate(path)]
    years = sum(math.floor(lp.time * f.get("years", Fraction(1))) for lp, f in zip(path, factors, strict=True))
    age = years + sum(1 for a, b in itertools.pairwise(path) if a.setting != b.setting)
    stock = born_stock(catalog, settings, lifepaths)
    # The stock's common traits are the character's from birth: requirements naming a trait see them
    common = common_traits(catalog, settings, stocks, lifepaths)
    had = (*traits, *common)
    for i, lp in enumerate(path):
        facts = lifepath_path(
            catalog, lp.id, lifepaths[:i], traits=had, age=age, lifepaths=len(path), gender=gender, held=held
        )
        violations += [f"{label(lp)} (lifepath {i + 1}) {r}" for r in reasons(lp, facts, names, False)]
        undecided += [f"{label(lp)} (lifepath {i + 1}) {r}" for r in reasons(lp, facts, names, None)]
    mental_pool: int | None = None
    physical_pool: int | None = None
    pools_table = stocks[stock].stat_pools if stock is not None and stock in stocks else None
    if pools_table is not None and pools_table in tables:
        try:
            row = tables[pools_table].lookup(age)
            mental_pool, physical_pool = int(row.mental), int(row.physical)
        except LookupError:
            violations.append(f"no stat pools for age {age} in {tables[pools_table].name}")
    mental_bonus = physical_bonus = 0
    skill_points = general = trait_points = resources = 0
    choices = list(either)
    chosen = _Picks.of(picks, catalog)
    skill_entries = _Required("skill", set())
    trait_entries = _Required("trait", set(had))  # a trait already had: the next is required

    def settle(required: _Required, entry: tuple[str, ...], where: str) -> None:
        open_, broken = required.settle(entry, chosen, names, where)
        undecided.extend([open_] if open_ is not None else [])
        violations.extend([broken] if broken is not None else [])

    for i, (lp, factor) in enumerate(zip(path, factors, strict=True)):
        times = lifepaths[: i + 1].count(lp.id)

        def earned(name: str, amount: int, factor: dict[str, Fraction] = factor) -> int:
            return math.floor(amount * factor.get(name, Fraction(1)))

        stat = lp.stat or StatBonus()
        if factor.get("stat", Fraction(1)):
            mental_bonus += stat.mental
            physical_bonus += stat.physical
            step = 1 if stat.either > 0 else -1  # a `-1 M/P` (Born Slave) takes one from the pool chosen
            for _ in range(abs(stat.either)):
                choice = choices.pop(0).upper() if choices else None
                if choice == "M":
                    mental_bonus += step
                elif choice == "P":
                    physical_bonus += step
                else:
                    bonus = f"{'+' if step > 0 else '-'}1 M/P"
                    violations.append(f"choose M or P for the {bonus} of {label(lp)} (lifepath {i + 1})")
        skill_points += earned("skill_points", lp.skills.points if lp.skills else 0)
        general += earned("general_points", lp.general or 0)
        trait_points += earned("trait_points", lp.traits.points if lp.traits else 0)
        resources += earned("resources", lp.resources)
        skill = skill_entries.next(lp.skills)
        if skill is not None and factor.get("skill_points", Fraction(1)):
            settle(skill_entries, skill, f"{label(lp)} (lifepath {i + 1})")
        trait = trait_entries.next(lp.traits)
        has_points = bool(lp.traits and lp.traits.points)
        if trait is not None and has_points and factor.get("trait_points", Fraction(1)):
            settle(trait_entries, trait, f"{label(lp)} (lifepath {i + 1})")
        elif trait is None and times > 1 and _choices(lp.traits) and factor.get("trait_points", Fraction(1)):
            trait_points -= 1  # taken again with no further trait to require: one point fewer
    if choices:
        violations.append(f"{len(choices)} stat choice(s) left over: the path has fewer M/P bonuses")
    violations += chosen.unused(names)
    return Sheet(
        lifepaths=tuple(lifepaths),
        stock=stock,
        age=age,
        mental_pool=mental_pool,
        physical_pool=physical_pool,
        mental_bonus=mental_bonus,
        physical_bonus=physical_bonus,
        lifepath_skill_points=skill_points,
        general_skill_points=general,
        required_skills=tuple(skill_entries.required),
        trait_points=trait_points,
        required_traits=tuple(trait_entries.required),
        common_traits=common,
        resource_points=resources,
        violations=tuple(violations),
        undecided=tuple(undecided),
    )
