"""Random well-typed rulesets, derived from the kind declarations themselves, and mutations of them.

What a ruleset says is drawn field by field from its kinds as the compiler lowers them: the built-in
kinds of `prelude.rules` (`pipeline.prelude()`) and kinds the generator declares of its own, lowered by
`pipeline.declare_kinds` into `Kind`s of `FieldDecl`s. For every `FieldType` there is a drawer that writes a
value valid for it (bounds, lengths, options, references to entities that exist) as `.rules` text.
Beside the entities: tables with every key and roll form and every column type, formulas in every position,
requirements, mechanics, and a homebrew ruleset that `extends` the first with `patch` and `remove`.

The drawing goes through a `Chooser`, so one generator serves Hypothesis (which shrinks what it finds:
`rulesets()`) and the long seeded run (`benchmarks/fuzz.py --rulesets`: `RandomChooser`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Protocol, TypeVar, assert_never

from hypothesis import strategies as st

from rulesdsl.compile.kinds import COMMON_NAMES, FieldDecl, Kind
from rulesdsl.compile.pipeline import declare_kinds, parser, prelude
from rulesdsl.language import fieldtypes as ft
from rulesdsl.language.names import slug
from rulesdsl.syntax.tree import KindDecl

T = TypeVar("T")


class Chooser(Protocol):
    def integer(self, low: int, high: int) -> int: ...


class RandomChooser:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)


class DrawChooser:
    """Hypothesis draws: what it finds shrinks towards the first option and the lowest number."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))


# Names that are ordinary in the language and awkward in Python (keywords, builtins, the package's own names).
AWKWARD = ("class", "type", "import", "from", "lambda", "print", "list", "runtime", "self", "match", "rows", "id")
WORDS = ("alpha", "brass", "cedar", "dune", "ember", "frost", "gale", "heron", "iris", "jade", "kelp", "lumen")
KEYWORDS = ("check", "skill", "trait", "any", "not", "and", "or", "of", "ref", "kind", "override", "patch", "remove")
SIDES = (2, 3, 4, 6, 8, 10, 12, 20)
UNDER_DICE = (("1d100", 1, 100), ("d20", 1, 20), ("2d6", 2, 12), ("3d6", 3, 18), ("1d20 + 1", 2, 21))  # and sums
ENUM_OPTIONS = ("a", "b", "c", "one", "two", '"§"', '"x y"')
# Record field names besides words and AWKWARD: builtins and class-body names, and pairs that are one name in
# Python (`class` and `class_`: E305).
RECORD_NAMES = ("str", "int", "class_", "Fraction", "_rt", "name", "source", "from", "self", "tuple", "in")
# A record field with a default: (type, ` = default`).
RECORD_DEFAULTS = (
    ("int in 1..5", " = 1"),
    ("int", " = -2"),
    ("bool", " = yes"),
    ("text", ' = "plain"'),
    ("dice", " = 1d6"),
    ("one of a, b", " = b"),
    ("number", " = 1.5"),
    ("multiplier", " = x2"),
    ("range", " = 3+"),
    ("list of int", " = 1, 2"),
    ("list in 1..2 of word", " = alpha, brass"),
    ('list of one of a, "x y"', ' = a, "x y"'),
    ("map of int", " = land 2, sea 3"),
    ("map of text by one of a, b", ' = { b: "t" }'),
    ("record { n: int = 1  t: text? }", " = { }"),
    ("list of record { n: int  m: list of word = alpha }", " = { n: 1 }, { n: 2  m: brass, cedar }"),
)
SWAPS = ("yes", "1d6", "x2", '"t"', "3", "unknown", "none", "a, b", "4^")


@dataclass
class Table:
    id: str
    keys: int  # how many keys a row has
    rolled: bool
    numeric: bool  # one numeric key and one numeric column: formulas may look it up (`t[x]`)
    whole: bool = False  # and its column holds whole numbers (`int`): a lookup yields a whole number
    given: bool = False  # rolled for a key it is given (`roll: where, 1d6`): a chain cannot go on to it


@dataclass
class Formula:
    id: str
    params: list[str]  # those that are whole numbers; `typed` follow them
    numeric: bool  # a number from its params alone: other formulas may call it
    whole: bool = False  # and a whole number: it may stand where whole numbers belong (an index, an argument)
    typed: list[str] = field(default_factory=list)  # the types of the others: `bool`, `ref KIND`


@dataclass
class Ruleset:
    """A generated ruleset (`demo`) and perhaps its homebrew (`brew`): per folder, per file, the blocks as
    text. The manifests are written by `files`, so that many rulesets can be built side by side under ids
    of their own (`demo_7`, `brew_7`: one mypy run checks them all)."""

    folders: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    field_types: frozenset[str] = frozenset()  # the FieldType classes values were drawn for

    def files(self, suffix: str = "") -> dict[str, str]:
        """Path below the `rules/` folder -> text."""
        manifests = {
            "demo": f'ruleset demo{suffix} {{ title: "Demo"  version: "0.1.0" }}',
            "brew": f'ruleset brew{suffix} {{ title: "Brew"  version: "0.1.0"  extends: demo{suffix} }}',
        }
        out = {}
        for folder, files in self.folders.items():
            out[f"{folder}{suffix}/ruleset.rules"] = manifests[folder] + "\n"
            for name, blocks in files.items():
                out[f"{folder}{suffix}/{name}"] = "\n".join(blocks) + "\n"
        return out

    def text(self) -> str:
        return "".join(f"# ---- {path}\n{text}" for path, text in self.files().items())


@dataclass
class Writer:
    """Draws one ruleset. `entities` holds each kind's ids as they are written, so references name what exists."""

    ch: Chooser
    kinds: dict[str, Kind] = field(default_factory=dict)
    entities: dict[str, list[str]] = field(default_factory=dict)
    numeric_fields: list[str] = field(default_factory=list)  # `kind[id].field` a formula may read
    whole_fields: list[str] = field(default_factory=list)  # those of them that hold whole numbers (`int`)
    # (kind, field, whole) of numbers every entity of a kind must give: what `at.field` of a `ref` parameter reads
    ref_fields: list[tuple[str, str, bool]] = field(default_factory=list)
    fractional: set[str] = field(default_factory=set)  # derived attributes (abbr and id) that may be fractions
    abbr_of: dict[str, str] = field(default_factory=dict)  # attribute id -> its abbreviation
    tables: list[Table] = field(default_factory=list)
    formulas: list[Formula] = field(default_factory=list)
    abbrs: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    counter: int = 0
    used_tags: set[str] = field(default_factory=set)  # tags some lifepath carries
    tags_of: dict[str, list[str]] = field(default_factory=dict)  # lifepath id -> its tags
    pools: str = ""  # the stat pools table
    seen: set[str] = field(default_factory=set)  # what was written: field types, roll and key forms, ...
    rejected: list[str] = field(default_factory=list)  # kind declarations the compiler refused
    defaulting: bool = False  # drawing a kind's default: a map's entry with text goes in braces (`= { a: "t" }`)

    # ---------------------------------------------------------------- small draws

    def pick(self, options: Sequence[T]) -> T:
        return options[self.ch.integer(0, len(options) - 1)]

    def coin(self, one_in: int = 2) -> bool:
        return self.ch.integer(1, one_in) == 1

    def fresh(self, stem: str) -> str:
        self.counter += 1
        if self.coin(12):
            return f"{self.pick(AWKWARD)}_{self.counter}" if self.coin() else self.pick(AWKWARD) + str(self.counter)
        return f"{stem}{self.counter}"

    def some(self, options: Sequence[T], low: int, high: int) -> list[T]:
        """Distinct items, between low and high of them (as many as there are)."""
        pool = list(options)
        out = []
        for _ in range(min(len(pool), self.ch.integer(low, max(low, high)))):
            out.append(pool.pop(self.ch.integer(0, len(pool) - 1)))
        return out

    def text_value(self) -> str:
        body = self.pick(["Lamp", 'say \\"hi\\"', "caf\\u00e9", "a, b", "x{y}", "back\\\\slash", "naïve — 1/2"])
        return f'"{body}"'

    def add_table(self, table: Table) -> None:
        self.tables.append(table)
        self.entities.setdefault("table", []).append(table.id)

    def ref(self, kind: str) -> str:
        """An entity of the kind, or `none` when a homebrew removed the last one."""
        return self.pick(self.entities[kind]) if self.entities.get(kind) else "none"

    def named(self, kind: str, id_: str) -> str:
        """How a reference names an entity: by id, or an attribute sometimes by its abbreviation."""
        return self.abbr_of.get(id_, id_) if kind == "attribute" and self.coin(3) else id_

    # ---------------------------------------------------------------- formulas

    def number(self, whole: bool = False) -> str:
        return self.pick(["0", "1", "2", "3", "5", "9"] + ([] if whole else ["1.5", "0.25"]))

    def arith(self, names: Sequence[str], depth: int = 0, *, whole: bool = False) -> str:
        """A number-valued formula over `names` that evaluates for every argument: division only by positive
        constants, lookups only on tables whose rows cover every integer, calls only of formulas that yield
        numbers from their params alone. Table indexes and call arguments are whole numbers (no `/` or
        decimals unless rounded); with `whole`, so is the whole formula (what dice add, a dice count)."""
        if whole:
            names = [n for n in names if n not in self.fractional]
        leaves: list[Callable[[], str]] = [lambda: self.number(whole)]
        if names:
            leaves += [lambda: self.pick(names)] * 3
        fields = self.whole_fields if whole else self.numeric_fields
        if fields:
            leaves.append(lambda: self.pick(fields))
        if depth > 2 or self.coin(3):
            return self.pick(leaves)()

        def sub() -> str:
            return self.arith(names, depth + 1, whole=whole)

        def index() -> str:
            return self.arith(names, depth + 1, whole=True)

        def rounded() -> str:
            return (
                f"{self.pick(['floor', 'ceil', 'round'])}(({self.arith(names, depth + 1)}) / {self.ch.integer(1, 4)})"
            )

        shapes: list[Callable[[], str]] = [
            lambda: f"{sub()} + {sub()}",
            lambda: f"{sub()} - {sub()}",
            lambda: f"({sub()}) * {sub()}",
            rounded,
            lambda: f"{self.pick(['min', 'max'])}({sub()}, {sub()})",
            lambda: f"{self.pick(['min', 'max'])}({sub()}, {sub()}, {sub()})",
            lambda: f"abs({sub()})",
            lambda: f"-({sub()})",
            lambda: f"if({self.condition(names, depth + 1)}, {sub()}, {sub()})",
        ]
        if not whole:
            shapes.append(lambda: f"({sub()}) / {self.ch.integer(1, 4)}")
        lookups = [t for t in self.tables if t.numeric and (t.whole or not whole)]
        if lookups:
            shapes.append(lambda: f"{self.pick(lookups).id}[{index() if self.coin(3) else rounded()}]")
        callable_ = [f for f in self.formulas if f.numeric and (f.whole or not whole)]
        if callable_:
            shapes.append(lambda: self.call(callable_, names, depth))
        return self.pick(shapes)()

    def call(self, formulas: Sequence[Formula], names: Sequence[str], depth: int) -> str:
        """A call: its arguments are whole numbers (a formula's params are), some of them rounded."""
        callee = self.pick(formulas)

        def argument() -> str:
            if self.coin(4):
                return f"{self.pick(['floor', 'ceil', 'round'])}({self.arith(names, depth + 1)})"
            return self.arith(names, depth + 1, whole=True)

        def typed(type_: str) -> str:
            if type_ == "bool":
                return self.pick(["yes", "no"]) if self.coin() else self.condition(names, depth + 1)
            return self.ref(type_.removeprefix("ref "))

        arguments = [argument() for _ in callee.params] + [typed(type_) for type_ in callee.typed]
        return f"{callee.id}({', '.join(arguments)})"

    def condition(self, names: Sequence[str], depth: int = 0) -> str:
        def sub() -> str:
            return self.arith(names, depth + 1)

        shape = self.ch.integer(0, 3 if depth < 3 else 0)
        if shape == 0:
            return f"{sub()} {self.pick(['=', '!=', '<', '<=', '>', '>='])} {sub()}"
        if shape == 1:
            return f"not ({self.condition(names, depth + 1)})"
        if shape == 2:
            return f"{self.condition(names, depth + 1)} and {self.condition(names, depth + 1)}"
        return f"({self.condition(names, depth + 1)} or {self.condition(names, depth + 1)})"

    def formula_entity(self, id_: str, params: list[str]) -> str:
        """A formula of params (and perhaps attributes, which become params too); one that yields a number
        from its params alone may be called by the formulas after it."""
        attributes = self.abbrs[:1] if self.coin(4) else []
        names = params + attributes
        declared, typed, lines = list(params), [], []
        flag = self.fresh("flag") if self.coin(3) else None  # a truth value, read by a step
        if flag:
            declared.append(f"{flag}(bool)")
            typed.append("bool")
        at = self.pick(self.ref_fields) if self.ref_fields and self.coin() else None  # an entity, its number read
        if at:
            declared.append(f"at(ref {at[0]})")
            typed.append(f"ref {at[0]}")
            read = self.fresh("s")
            lines.append(f"let {read} = at.{at[1]}")
            names.append(read)
            if not at[2]:
                self.fractional.add(read)
        for _ in range(self.ch.integer(0, 2) if flag or at else self.ch.integer(0, 1)):
            step, whole_step = self.fresh("s"), self.coin()
            value = self.arith(names, 1, whole=whole_step)
            if flag and self.coin():
                value = f"if({flag}, {value}, {self.arith(names, 1, whole=whole_step)})"
            if at and (at[2] or not whole_step) and self.coin():
                value = f"{value} + at.{at[1]}"
            lines.append(f"let {step} = {value}")
            names.append(step)
            if not whole_step:
                self.fractional.add(step)
        shape = self.ch.integer(0, 5)
        whole = shape > 1 and self.coin()
        body = (
            self.dice_term(params) + f" + {self.arith(names, 1, whole=True)}"
            if shape == 0
            else self.condition(names)
            if shape == 1
            else self.arith(names, whole=whole)
        )
        numeric = shape > 1 and not attributes
        self.formulas.append(Formula(id_, params, numeric=numeric, whole=whole, typed=typed))
        self.entities.setdefault("formula", []).append(id_)
        parts = ["params: " + ", ".join(declared), *lines, f"formula: {body}"]
        return f"formula {id_} {{ {joined(parts)} }}"

    def dice_term(self, names: Sequence[str]) -> str:
        """Dice to roll: a fixed count, or one computed (`(n)d6`, `dice(n, 6)`) and kept small and whole; a
        computed count may keep one die (never explode: the dice may be taken away, which an exploding roll
        cannot be)."""
        count = f"min(abs(floor({self.arith(names, 2)})), 3) + 1"  # a whole number, at least 1
        return self.pick(
            [
                f"{self.ch.integer(1, 3)}d{self.pick(SIDES)}",
                f"({count})d{self.pick(SIDES)}",
                f"({count})d{self.pick(SIDES)}{self.pick(['kh1', 'kl1'])}",
                f"dice({count}, {self.pick(SIDES)})",
            ]
        )

    def dice_algebra(self, names: Sequence[str] = ()) -> str:
        """Dice beyond adding up (issue 19): capitals, keep/drop, exploding, times and divided by whole
        numbers, dice taken from dice, bounds, a constant; in a formula, over computed dice too."""
        count, sides = self.ch.integer(1, 5), self.pick(SIDES)
        kept = self.ch.integer(1, count)
        term = self.dice_term(names) if names and self.coin(3) else f"{count}d{sides}"
        return self.pick(
            [
                f"{count}D{sides}",
                f"{count}d{sides}{self.pick(['kh', 'kl'])}{kept}",
                f"{count}d{sides}{self.pick(['dh', 'dl'])}{kept - 1}",
                f"{count}d{sides}!",
                f"{term} * {self.ch.integer(1, 10)}",
                f"({term} + {self.ch.integer(0, 6)}) * {self.ch.integer(1, 5)}",
                f"{term} / {self.ch.integer(1, 4)}",
                f"{term} - {self.ch.integer(1, 2)}d{self.pick(SIDES)}",
                f"{self.ch.integer(0, 12)} - {term}",
                f"max({self.ch.integer(0, 3)}, {term} - {self.ch.integer(0, 4)})",
                f"min({self.ch.integer(5, 30)}, {term} * 2)",
                f"{count}d{sides}! + {self.ch.integer(0, 3)}",
                str(self.ch.integer(0, 9)),
            ]
        )

    def formula(self, names: Sequence[str], dice: bool = False) -> str:
        """A formula in any position: mostly a number, sometimes a condition (`and`/`or` results), and where
        `dice` allows, dice with whole numbers added or taken away, or dice added to dice (never dice minus
        dice, dice times anything, or dice plus a fraction)."""
        if dice:
            if self.coin(3):
                return self.dice_algebra(names)
            if self.coin(4):
                return f"{self.dice_term(names)} + {self.dice_term(names)}"
            return f"{self.dice_term(names)} {self.pick(['+', '-'])} {self.arith(names, 1, whole=True)}"
        return self.condition(names) if self.coin(6) else self.arith(names)

    # ---------------------------------------------------------------- requirements

    def requirement(self, lifepaths: Sequence[str], depth: int = 0) -> str:
        atoms: list[Callable[[], str]] = [
            lambda: f"age {self.pick(['>', '<', '>=', '<='])} {self.ch.integer(10, 60)}",
            lambda: f"age_at_entry in {self.ch.integer(1, 20)}..{self.ch.integer(20, 60)}",
            lambda: f"position {self.pick(['=', '!=', '>', '<='])} {self.ch.integer(1, 4)}",
            lambda: f"position in {self.ch.integer(1, 2)}..{self.ch.integer(2, 5)}",
            lambda: f"lifepaths <= {self.ch.integer(2, 8)}",
            lambda: f"times_taken <= {self.ch.integer(1, 2)}",
            lambda: f"gender = {self.pick(['female', 'male'])}",
            lambda: "gm_permission",
            lambda: f"trait {self.ref('trait')}",
            lambda: f"skill {self.ref('skill')}",
            lambda: f"any lifepath in setting {self.ref('setting')}",
            lambda: f"{self.ch.integer(1, 3)} of lifepaths in setting {self.ref('setting')}",
        ]
        if self.used_tags:
            atoms.append(lambda: f"{self.ch.integer(1, 2)} of lifepaths tagged {self.pick(sorted(self.used_tags))}")
        if lifepaths:
            atoms += [
                lambda: self.pick(lifepaths),
                lambda: f"previous = {self.pick(lifepaths)}",
                lambda: f"{self.ch.integer(1, 2)} of ({', '.join(self.some(lifepaths, 1, 3))})",
            ]
        declared = [k for k in self.kinds if not self.kinds[k].builtin and self.entities.get(k)]
        if declared:
            atoms.append(lambda: f"{(kind := self.pick(declared))} {self.ref(kind)}")
        if depth > 1 or self.coin(2):
            return self.pick(atoms)()
        shape = self.ch.integer(0, 2)
        left, right = self.requirement(lifepaths, depth + 1), self.requirement(lifepaths, depth + 1)
        return [f"{left} or {right}", f"{left} and {right}", f"not ({left})"][shape]

    # ---------------------------------------------------------------- values by field type

    def value(self, field_type: ft.FieldType, *, kind: str = "", one: bool = False) -> str:
        """A value of the type as `.rules` text; `one`: an item of a list (so never a list itself)."""
        self.seen.add(type(field_type).__name__)
        match field_type:
            case ft.IntType(low, high):
                lo = low if low is not None else (high - 9 if high is not None else -5)
                return str(self.ch.integer(lo, high if high is not None else lo + 12))
            case ft.NumberType(low, high):
                start = Fraction(low) if low is not None else (Fraction(high) - 5 if high is not None else Fraction(-3))
                end = Fraction(high) if high is not None else start + 6
                n = start + (end - start) * Fraction(self.ch.integer(0, 8), 8)
                return str(n.numerator) if n.denominator == 1 else str(float(n))
            case ft.TextType():
                return self.text_value()
            case ft.MarkdownType():
                return self.pick(['"Heals *lots*."', '"a [link](https://example.org) and `code`"', '"1. one\\n2. two"'])
            case ft.BoolType():
                return self.pick(["yes", "no", "true", "false"])
            case ft.DiceType():
                plain = [
                    f"{self.ch.integer(1, 4)}d{self.pick(SIDES)}",
                    f"d{self.pick(SIDES)}",
                    f"2d6+{self.ch.integer(1, 5)}",
                    f"{self.ch.integer(1, 30)} + 1d10",
                ]
                return self.pick(plain) if self.coin() else self.dice_algebra()
            case ft.FormulaType(declared):  # the names its field declares (`formula of slot`), and attributes
                return self.formula([*declared, *self.abbrs[:2]], dice=self.coin(3))
            case ft.RangeType():
                a = self.ch.integer(0, 9)
                return self.pick([f"{a}..{a + self.ch.integer(0, 5)}", f">{a}", f"{a}+", f"<={a}"])
            case ft.MultiplierType():
                return self.pick(["x2", "x3", "x1/2", "x3/4"])
            case ft.EnumType(options):
                option = self.pick(options)
                return option if option.isidentifier() else f'"{option}"'
            case ft.RefType(target):
                return self.named(target, self.ref(target))
            case ft.ListType(item, low, high):
                if isinstance(item, ft.RefType | ft.EnumType):
                    if isinstance(item, ft.RefType) and item.kind not in self.entities:
                        return "none"  # a homebrew removed the last one (as ref() does)
                    pool = self.entities[item.kind] if isinstance(item, ft.RefType) else item.options
                    items = self.some(pool, max(low, 1), min(high if high is not None else 3, len(pool)))
                    return ", ".join(
                        self.value(ft.EnumType((i,))) if isinstance(item, ft.EnumType) else self.named(item.kind, i)
                        for i in items
                    )
                count = self.ch.integer(max(low, 1), high if high is not None else 3)
                return ", ".join(self.value(item, kind=kind, one=True) for _ in range(count))
            case ft.WordType():
                return self.pick(WORDS)
            case ft.AbbreviationType():
                return self.pick(["AB", "Q1", "ZZ", "Ab"])
            case ft.VersionType():
                return '"0.1.0"'
            case ft.YearsType():
                return f"{self.ch.integer(1, 12)} yrs"
            case ft.PointsType():
                points = self.ch.integer(1, 4)
                return f"{points} {'pt' if points == 1 else 'pts'}"
            case ft.StatBonusType():
                bonuses = ["+1 M", "+1 P", "+1 M/P", "-1 P"] + ([] if one else ["+1 M, +1 P"])
                return self.pick(bonuses)
            case ft.ActionsType():
                return self.pick([str(self.ch.integer(1, 20)), f"x{self.ch.integer(2, 4)}"])
            case ft.ChoicesType(target):
                if target not in self.entities:  # a homebrew removed the last one (as for an offer)
                    return "none"
                points = self.ch.integer(1, 8)
                picked = self.some(self.entities[target], 1, 3)
                if len(picked) > 1 and self.coin():
                    picked[-2:] = [f"{picked[-2]} or {picked[-1]}"]
                return f"{points} {'pt' if points == 1 else 'pts'}: {', '.join(picked)}"
            case ft.RequirementType():
                return self.requirement(self.entities.get("lifepath", []))
            case ft.ObstacleType():
                return self.pick([str(self.ch.integer(1, 6)), f"{self.ch.integer(1, 6)}^", '"Target\'s Forte"'])
            case ft.RollType():
                rolls = ["2d6", "d66", "1d6 + 0..1", "1d20"] + ([] if one else ["1d10, 1d10"])
                return self.pick(rolls)
            case ft.RollsType():
                target = self.ref("table")
                return target if target == "none" or self.coin(3) else f"{self.ch.integer(1, 9)} x {target}"
            case ft.CheckType():  # a check's modifier names attributes only
                modifier = self.arith(self.abbrs, whole=True) if self.coin(4) else f"floor({self.arith(self.abbrs)})"
                return f"check {modifier} {self.ch.integer(2, 12)}+"
            case ft.OfferType(target):  # entities given, and a choice among others
                pool = self.entities.get(target)
                if not pool:  # a homebrew removed the last one (as ref() does: `none`, which check judges)
                    return "none"
                options = self.some(pool, 1, 3)
                count = self.ch.integer(1, len(options))
                listed = ", ".join(options)
                choice = f"any ({listed})" if count == 1 and self.coin() else f"{count} of ({listed})"
                return ", ".join([*self.some(pool, 0, 1), choice])
            case ft.ColumnsType():
                return "a, b(int)"
            case ft.MapType(item, key):
                return self.map_value(item, key, kind)
            case ft.RecordType(fields):
                return self.record_value(fields, kind)
            case _:
                assert_never(field_type)

    def record_value(self, fields: Sequence[ft.RecordField], kind: str) -> str:
        """`{ name: "x"  to_hit: 8 }` on one line: required fields always, the others sometimes (or `none`)."""
        given = []
        for f in fields:
            if not f.optional and f.default is None:
                given.append(f"{f.name}: {self.value(f.type, kind=kind)}")
            elif self.coin(3):
                given.append(
                    f"{f.name}: none" if f.optional and self.coin(5) else f"{f.name}: {self.value(f.type, kind=kind)}"
                )
        return "{ " + "  ".join(given) + (" }" if given else "}")

    def map_value(self, item: ft.FieldType, key: ft.FieldType, kind: str) -> str:
        """`land 25, climb 10` where every value is one token, else `{ land: -2  climb: 1d6 + 1 }`."""
        match key:
            case ft.RefType(target):
                pool = list(self.entities.get(target, []))
            case ft.EnumType(options):  # an option that is no name is written as its slug (`"x y"`: x_y)
                pool = [o if o.isidentifier() else slug(o) for o in options]
            case _:
                pool = list(WORDS)
        keys = self.some(pool, 0 if self.coin(6) else 1, 3)
        entries = [(k, self.value(item, kind=kind)) for k in keys]
        # in a default a name and then a string are the default and its doc (`= home "x"`): braces there
        bare = all(_one_token(v) and not (self.defaulting and v.startswith('"')) for _, v in entries)
        if entries and self.coin(3) and bare:
            return ", ".join(f"{k} {v}" for k, v in entries)
        return "{ " + "  ".join(f"{k}: {v}" for k, v in entries) + (" }" if entries else "}")

    # ---------------------------------------------------------------- declared kinds

    def field_type_text(self, kind_names: Sequence[str], depth: int = 0, *, item: bool = False) -> str:
        """A field's type; `item`: a list's item or a map's value (a single value, or a record); `depth`: how
        many records it is inside."""
        a = self.ch.integer(-3, 3)
        simple = [
            "int",
            f"int in {a}..{a + self.ch.integer(0, 6)}",
            f"int in {a}..",
            f"int in ..{a}",
            "number",
            "number in 0..1",
            # A known gap in the language, avoided for now: a negative decimal bound (`number in -1.5..1`
            # is a syntax error, E101).
            f"number in {abs(a)}.5..{abs(a) + 2}",
            "text",
            "markdown",
            "bool",
            "dice",
            "formula",
            "formula of " + ", ".join(self.some(["slot", "level", "x"], 1, 2)) if not item else "formula",
            "range",
            "multiplier",
            "word",
            "abbreviation",
            "version",
            "years",
            "pts",
            "stat_bonus",
            "actions",
            "requirement",
            "obstacle",
            "roll",
            "rolls",
            "check",
            "check of task",
            "one of " + ", ".join(self.some(ENUM_OPTIONS, 1, 4)),
            f"ref {self.pick(kind_names)}",
        ]
        if not item:  # lists hold single values
            simple.append(f"points of ref {self.pick(['skill', 'trait'])}")
            simple.append(f"choices of ref {self.pick(['skill', 'trait'])}")
        if depth < 2 and self.coin(8):
            return self.record_type_text(kind_names, depth + 1)
        if not item and self.coin(4):
            low = self.ch.integer(0, 2)
            bounds = self.pick(["", f" in {low}..{max(low, 1) + self.ch.integer(0, 2)}", f" in {low}.."])
            return f"list{bounds} of {self.field_type_text(kind_names, depth, item=True)}"
        return self.pick(simple)

    def map_type_text(self, kind_names: Sequence[str], depth: int) -> str:
        """`map of T`, `map of T by ref KIND`, `map of T by one of a, b`: T single, a list or a record (now and
        then `points of`, which a map cannot hold: E402)."""
        value = self.field_type_text(kind_names, depth, item=self.coin(8) is False)
        key = self.pick(
            ["", f" by ref {self.pick(kind_names)}", " by one of " + ", ".join(self.some(ENUM_OPTIONS, 1, 4))]
        )
        return f"map of {value}{key}"

    def record_type_text(self, kind_names: Sequence[str], depth: int) -> str:
        """`record { name: text  to_hit: int in 0.. = 0 "doc"  hit: record { ... }? }`, on one line: its fields
        of every type a record may hold (maps, lists and records within), named like words, like Python
        keywords and builtins, now and then two names that are one in Python (E305)."""
        fields: list[str] = []
        names: set[str] = set()
        for _ in range(self.ch.integer(1, 5)):
            name = self.pick([*WORDS[:6], *AWKWARD, *RECORD_NAMES, self.fresh("r")])
            if name in names:
                continue
            names.add(name)
            type_text, default = self.pick(RECORD_DEFAULTS) if self.coin(4) else ("", "")
            if not type_text:
                map_ = self.coin(6)
                type_text = self.map_type_text(kind_names, depth) if map_ else self.field_type_text(kind_names, depth)
            optional = "?" if self.coin(3) else ""
            doc = f' "the {name}"' if self.coin(4) and not default.endswith("+") else ""
            fields.append(f"{name}: {type_text}{optional}{default}{doc}")
        return "record { " + "  ".join(fields) + " }"

    def declare(self, names: Sequence[str]) -> list[str]:
        """Kind declarations of every field type, lowered by the compiler into `self.kinds`; some required
        fields get a default (`= v`) drawn from the lowered type, and the whole is lowered again."""
        referable = [*names, "skill", "trait", "setting", "table", "lifepath", "stock"]
        declared: dict[str, list[list[str]]] = {}  # kind -> [name, type, "?" or "", doc] per field
        for name in names:
            fields: list[list[str]] = []
            for _ in range(self.ch.integer(1, 7)):
                fname = self.fresh("f") if self.coin(3) else self.pick([*WORDS, "level", "damage", "cost", "weight"])
                if fname in {f[0] for f in fields} or fname in COMMON_NAMES:
                    continue
                doc = f' "the {fname}"' if self.coin(3) else ""
                type_text = self.map_type_text(referable, 0) if self.coin(8) else self.field_type_text(referable)
                fields.append([fname, type_text, "?" if self.coin(3) else "", doc])
            declared[name] = fields

        def lowered() -> tuple[list[str], dict[str, Kind] | None]:
            blocks = [
                f'kind {name} "{name.title()} things" {{\n'
                + "".join(f"  {f[0]}: {''.join(f[1:])}\n" for f in fields)
                + "}"
                for name, fields in declared.items()
            ]
            parsed, problems = parser().parse_file("<declared>", "\n".join(blocks) + "\n")
            decls = [s for s in parsed.blocks if isinstance(s, KindDecl)]
            kinds, diagnostics = declare_kinds(decls, [self.kinds])
            if problems or diagnostics:
                # what the compiler will not declare is written all the same (check must report it), but
                # nothing can be drawn from it
                self.rejected += [f"{d.code} {d.message}" for d in problems + diagnostics]
                return blocks, None
            return blocks, kinds

        blocks, kinds = lowered()
        if kinds is None:
            return blocks
        self.defaulting = True
        for name, fields in declared.items():
            for f, decl in zip(fields, kinds[name].own_fields, strict=True):
                if not decl.optional and self.coin(4) and _defaultable(decl.type):
                    f[2] = f" = {self.value(decl.type, one=not isinstance(decl.type, ft.ListType))}"
                    if f[2].endswith("+"):  # `= 5+ "doc"` reads as an addition: see `joined`
                        f[3] = ""
        self.defaulting = False
        blocks, kinds = lowered()
        if kinds is not None:
            self.kinds = kinds
        return blocks

    # ---------------------------------------------------------------- entities of any kind

    def fields(self, kind: str, *, skip: Sequence[str] = (), overrides: dict[str, str] | None = None) -> list[str]:
        """`field: value` for each field of the kind: required ones always, optional ones sometimes."""
        out = []
        overrides = overrides or {}
        for decl in self.kinds[kind].fields.values():
            if decl.name in skip:
                continue
            if decl.name in overrides:
                out.append(f"{decl.name}: {overrides[decl.name]}")
                continue
            required = not decl.optional and decl.default is None
            if required or self.coin(3 if decl.name not in COMMON_NAMES else 8):
                # burning characters reads a lifepath's fields and a stock's traits and pools: never unknown
                # there, and never none where it needs a value (mutations may still write it: E344)
                read = kind == "lifepath" or (kind == "stock" and decl.name in ("common_traits", "stat_pools"))
                empty = [
                    e
                    for e in ("none", "unknown")
                    if not (read and (e == "unknown" or decl.name in ("born", "time", "resources", "setting")))
                ]
                if not required and empty and self.coin(6):
                    out.append(f"{decl.name}: {self.pick(empty)}")
                else:
                    out.append(f"{decl.name}: {self.value(decl.type, kind=kind)}")
        return out

    def entity(self, kind: str, *, stem: str, overrides: dict[str, str] | None = None, skip: Sequence[str] = ()) -> str:
        id_ = self.fresh(stem)
        body = self.fields(kind, overrides=overrides, skip=skip)
        head = f'{kind} {id_} "{id_.replace("_", " ").title()} {self.counter}"' if self.coin() else f"{kind} {id_}"
        self.entities.setdefault(kind, []).append(id_)
        return f"{head} {{ {joined(body, one_line=self.coin())} }}"

    # ---------------------------------------------------------------- tables

    def partition(self, low: int, high: int, *, open_ends: bool = False) -> list[str]:
        """Keys that cover low..high exactly once (with open ends: every integer)."""
        cuts = sorted(self.some(range(low + 1, high + 1), 0, min(5, high - low)))
        bounds = [low, *cuts, high + 1]
        keys = []
        for i in range(len(bounds) - 1):
            lo, hi = bounds[i], bounds[i + 1] - 1
            if open_ends and i == 0:
                keys.append(f"<={hi}")
            elif (open_ends or self.coin(3)) and i == len(bounds) - 2:
                keys.append(f"{lo}+")
            else:
                keys.append(str(lo) if lo == hi else self.pick([f"{lo}-{hi}", f"{lo}..{hi}"]))
        if open_ends and len(keys) == 1:
            keys = [f"<={low}", f"{low + 1}+"]
        return keys

    COLUMN_FORMS = ("text", "int", "number", "multiplier", "dice", "bool", "formula", "markdown", "rolls")

    def columns(self) -> list[tuple[str, str]]:
        """(name, type) of the columns: every column type, references and chains."""
        out = []
        for i in range(self.ch.integer(1, 4)):
            form = self.pick([*self.COLUMN_FORMS, "ref skill", "ref table", "ref trait"])
            out.append((self.pick(["c", "value", "next", "type", "row"]) + str(i), form))
        return out

    def cell(self, form: str, names: Sequence[str] = (), *, full: bool = False) -> str:
        """A cell of the column's type; `names`: what its formulas may use (the table's params and
        attributes); `full`: a number in every row (a table formulas look up)."""
        if not full and self.coin(9):
            return self.pick(["none", "unknown"])
        match form:
            case "text":
                return self.pick([self.text_value(), "Head", "Sergeant-at-Arms"])
            case "ref table":
                rolled = [t.id for t in self.tables if t.rolled and not t.given]
                return self.pick(rolled) if rolled and self.coin(3) else "none"
            case "rolls":  # `2 x t` (a chain rolls on it that many times), `t` (once) or none
                rolled = [t.id for t in self.tables if t.rolled and not t.given]
                if not rolled or not self.coin(3):
                    return "none"
                target = self.pick(rolled)
                return target if self.coin(3) else f"{self.ch.integer(1, 3)} x {target}"
            case "formula":
                return self.formula([*names, *self.abbrs[:1]], dice=self.coin(4))
        field_type = ft.SIMPLE[form] if form in ft.SIMPLE else ft.RefType(form.removeprefix("ref "))
        return self.value(field_type)

    def table_block(
        self, id_: str, head: list[str], keys: list[str], cols: list[tuple[str, str]], *, full: bool = False
    ) -> str:
        col_text = ", ".join(
            f'"{n}"' if n in ("skill", "trait") else n if t == "text" else f"{n}({t})" for n, t in cols
        )
        # formula cells name attributes and the table's params: the params line declares what they may use
        params = self.some(["X", "y", "level"], 1, 2) if any(t == "formula" for _, t in cols) else []
        if params:
            head = [*head, f"params: {', '.join(params)}"]
        rows = []
        for key in keys:
            row = f"  {key} -> {', '.join(self.cell(t, params, full=full) for _, t in cols)}"
            rows.append(row + (' @ "p. 18"' if self.coin(8) else ""))
        return f"table {id_} {{ {'  '.join(head)}\n  columns: {col_text}\n" + "\n".join(rows) + "\n}"

    def lookup_table(self) -> str:
        id_ = self.fresh("bonus")
        low = self.ch.integer(-5, 3)
        # open ends, or closed ones with what the rules do past them (a formula may reach any number)
        ends = self.pick(["open", "open", "clamp: yes", "partial: yes"])
        keys = self.partition(low, low + self.ch.integer(1, 12), open_ends=ends == "open")
        # one numeric key, one numeric column, a number in every row: what a formula may look up
        column = self.pick(["int", "int", "number", "multiplier"])
        head = [] if ends == "open" else [ends]
        block = self.table_block(id_, head, keys, [("v", column)], full=True)
        self.add_table(Table(id_, 1, rolled=False, numeric=True, whole=column == "int"))
        return block

    def sparse(self, keys: list[str]) -> list[str]:
        """Sometimes one row left out and an `otherwise` row for what it would have covered."""
        if len(keys) > 1 and self.coin(4):
            keys = [k for k in keys if k != self.pick(keys)] + ["otherwise"]
        return keys

    def given_keys(self) -> tuple[str, list[str]]:
        """A key a roll is given: the `keys:` entry and the values rows name (skills, by reference, or names)."""
        skills = self.entities.get("skill", [])
        if skills and self.coin():
            return "where(ref skill)", self.some(skills, 1, min(3, len(skills)))
        return "where", self.some(["Hills", "Marsh", '"Old Road"'], 1, 3)

    def rolled_table(self) -> str:
        id_ = self.fresh("t")
        form = self.ch.integer(0, 5)
        cols = self.columns()
        head: list[str] = []
        if form == 0:  # NdS +- m
            count, sides, mod = self.ch.integer(1, 3), self.pick(SIDES), self.ch.integer(-2, 3)
            roll = f"{count}d{sides}" + (f" + {mod}" if mod > 0 else f" - {-mod}" if mod < 0 else "")
            keys = self.sparse(self.partition(count + mod, count * sides + mod))
            if count == 1 and mod == 0 and self.coin(3):
                keys = ["odd", "even"]
        elif form == 1:  # d66
            roll = "d66"
            keys = (
                [f"{t}1-{t}6" for t in range(1, 7)]
                if self.coin()
                else [f"{t}{u}" for t in range(1, 7) for u in (1, 2, 3, 4, 5, 6)][:36]
            )
        elif form == 2:  # a modifier the roll may take
            high = self.ch.integer(1, 3)
            roll = f"1d6 + 0..{high}"
            keys = self.partition(1, 6 + high)
            if self.coin():
                clamp = self.pick(["yes", "no"])
                head.append(f"clamp: {clamp}")
                if clamp == "yes" and self.coin():  # rows for the die alone: the modifiers land on the last
                    keys = self.partition(1, 6)
        elif form == 5:  # a key each roll is given, the rest rolled
            sides = self.pick(SIDES)
            key, values = self.given_keys()
            roll = f"where, 1d{sides}"
            head.append(f"keys: {key}, roll(int)")
            keys = self.sparse([f"{v}, {r}" for v in values for r in self.partition(1, sides)])
        else:  # two dice for two keys
            a, b = self.pick(SIDES[:5]), self.pick(SIDES[:5])
            roll = f"1d{a}, 1d{b}"
            head.append("keys: a(int), b(int)")
            firsts = self.partition(1, a)
            seconds = ["odd", "even"] if self.coin(3) else self.partition(1, b)
            keys = [f"{x}, {y}" for x in firsts for y in seconds]
        head.insert(0, f"roll: {roll}")

        block = self.table_block(id_, head, keys, cols)
        self.add_table(Table(id_, 2 if form >= 3 else 1, rolled=True, numeric=False, given=form == 5))
        return block

    def keyed_table(self) -> str:
        """Looked up by name, or by a name and a number (`keys: zone, level(int)`)."""
        id_ = self.fresh("grid")
        zones = self.some(["Head", "Arm", "Leg", "Torso", '"R. Arm"'], 1, 3)
        cols = self.columns()
        skills = self.entities.get("skill", [])
        if skills and self.coin(3):  # keyed by reference: rows name skills
            keys = self.some(skills, 1, min(3, len(skills)))
            if len(keys) < len(skills) and self.coin():  # some skill has no row: otherwise is for it
                keys.append("otherwise")
            block = self.table_block(id_, ["keys: who(ref skill)"], keys, cols)
            self.add_table(Table(id_, 1, rolled=False, numeric=False))
            return block
        if self.coin():
            block = self.table_block(id_, [], zones, cols)
            self.add_table(Table(id_, 1, rolled=False, numeric=False))
            return block
        levels = self.partition(1, self.ch.integer(1, 6))
        keys = self.sparse([f"{z}, {lv}" for z in zones for lv in levels])
        block = self.table_block(id_, ["keys: zone, level(int)"], keys, cols)
        self.add_table(Table(id_, 2, rolled=False, numeric=False))
        return block

    # ---------------------------------------------------------------- a whole ruleset

    def highest_mechanic(self) -> str:
        """A pool that reads the highest die: bands covering every face, perhaps a critical and a zero-dice rule."""
        sides = self.pick((4, 6, 8, 10, 12))
        bands = self.partition(1, sides)
        outcomes = ", ".join(
            f"{{ faces: {band.replace('-', '..')}  outcome: {name} }}"
            for band, name in zip(bands, ["failure", "partial", "success", "great", "superb", "legend"], strict=False)
        )
        rules = [f"critical: {self.ch.integer(2, 3)}"] if self.coin() else []
        rules += [f"zero_dice: {self.ch.integer(1, 3)}"] if self.coin() else []
        self.entities["mechanic"].append("action")
        return f"mechanic action {{ style: highest  die: d{sides}  outcomes: {outcomes}  {'  '.join(rules)} }}"

    def under_mechanic(self) -> str:
        """A roll-under mechanic: dice added up, perhaps graded successes, and criticals low and fumbles high
        (so that no roll is both), each band for some targets or every one."""
        die, low, high = self.pick(UNDER_DICE)
        middle = (low + high) // 2
        rules = []
        if self.coin():
            divides = sorted(self.some(range(2, 11), 1, 3))
            grades = zip(divides, ["hard", "extreme", "heroic"], strict=False)
            rules.append("grades: " + ", ".join(f"{{ divide: {d}  outcome: {name} }}" for d, name in grades))
        for rule, lowest, highest in (("criticals", low, middle), ("fumbles", middle + 1, high)):
            if self.coin():
                bands = [self.under_band(lowest, highest, low, high) for _ in range(self.ch.integer(1, 2))]
                rules.append(f"{rule}: " + ", ".join(bands))
        self.entities["mechanic"].append("skill_roll")
        return "mechanic skill_roll {\n  " + "\n  ".join([f"style: under  die: {die}", *rules]) + "\n}"

    def under_band(self, lowest: int, highest: int, low: int, high: int) -> str:
        """Rolls within lowest..highest (an open end reaching the dice's own low or high end), perhaps for
        targets a range within (or past) the sums low..high."""
        start = self.ch.integer(lowest, highest)
        end = self.ch.integer(start, highest)
        if start == low and self.coin():
            rolls = f"<={end}"
        elif end == high and self.coin():
            rolls = f"{start}+"
        else:
            rolls = str(start) if start == end else f"{start}..{end}"
        if self.coin():
            return f"{{ rolls: {rolls} }}"
        pivot = self.ch.integer(low - 2, high + 2)
        targets = self.pick([f"<{pivot}", f"{pivot}+", f">={pivot}", f"{pivot}..{pivot + self.ch.integer(0, 9)}"])
        return f"{{ rolls: {rolls}  targets: {targets} }}"

    def core(self) -> list[str]:
        blocks = []
        self.kinds = dict(prelude())
        blocks.append("mechanic task { style: check  die: 2d6 }")
        self.entities["mechanic"] = ["task"]
        if self.coin():
            blocks.append(
                f"mechanic pool {{ style: pool  die: d10  stack_on: {self.ch.integer(6, 10)}  fumble_ones: 2 }}"
            )
        if self.coin():
            die = self.pick(["1d10", "2d6 + 1", "d20"])
            extra = "  explode_on: 10  fumble_on: 1  floor: 0" if die != "2d6 + 1" and self.coin() else ""
            blocks.append(f"mechanic total {{ style: total  die: {die}{extra} }}")
        if self.coin():
            blocks.append("mechanic duel { style: contest  die: 1d20 }")
        if self.coin():
            blocks.append(self.highest_mechanic())
        if self.coin():
            blocks.append(self.under_mechanic())
        # attributes, base ones then derived ones over those before them
        for _ in range(self.ch.integer(1, 3)):
            abbr = self.pick(["AGL", "WTS", "END", "INT", "PRS", "STR", "REF", "BODY", "Ag", "Fel"])
            if abbr in self.abbrs:
                continue
            span = self.pick(["1..10", "0..6", "1..12", "2..10"])  # an attribute's `range`: a range field
            self.seen.add("RangeType")
            blocks.append(f'attribute {abbr.lower()} "{abbr.title()}" {{ abbr: {abbr}  group: base  range: {span} }}')
            self.abbrs.append(abbr)
            self.abbr_of[abbr.lower()] = abbr
            self.entities.setdefault("attribute", []).append(abbr.lower())
        for _ in range(self.ch.integer(0, 2)):
            names = self.abbrs + [i for i in self.entities["attribute"][:1] if i not in KEYWORDS]
            id_ = self.fresh("derived")
            whole = self.coin()
            blocks.append(
                f"attribute {id_} {{ abbr: D{self.counter}  group: derived  "
                f"formula: {self.arith(names, whole=whole)} }}"
            )
            if not whole:
                self.fractional |= {f"D{self.counter}", id_}
            self.abbr_of[id_] = f"D{self.counter}"
            self.abbrs.append(f"D{self.counter}")
            self.entities["attribute"].append(id_)
        # tables formulas may look up, then formulas calling formulas
        for _ in range(self.ch.integer(1, 2)):
            blocks.append(self.lookup_table())
        for _ in range(self.ch.integer(1, 4)):
            params = self.some(["a", "b", "c", "slot", "level", "x"], 1, 3)
            id_ = self.fresh("f")
            blocks.append(self.formula_entity(id_, params))
            self.entities.setdefault("formula", []).append(id_)
        return blocks

    def game(self) -> list[str]:
        """Burning Wheel's kinds, each entity drawn from its prelude declaration."""
        blocks = []
        for _ in range(self.ch.integer(1, 3)):
            blocks.append(self.entity("trait", stem="tr"))
        for _ in range(self.ch.integer(1, 3)):
            blocks.append(self.entity("skill", stem="sk"))
        low = self.ch.integer(1, 10)
        pools = self.pools = self.fresh("pools")
        keys = self.partition(1, low + 5, open_ends=True)
        rows = "\n".join(f"  {k} -> {self.ch.integer(3, 8)}, {self.ch.integer(3, 8)}" for k in keys)
        blocks.append(f"table {pools} {{ columns: mental(int), physical(int)\n{rows}\n}}")
        self.add_table(Table(pools, 1, rolled=False, numeric=False))
        blocks.append(self.entity("stock", stem="folk", overrides={"stat_pools": pools}))
        settings = []
        for _ in range(self.ch.integer(1, 2)):
            blocks.append(self.entity("setting", stem="home", skip=("parent",)))
            settings.append(blocks[-1])
        self.tags = self.some(WORDS, 1, 2)
        for i in range(self.ch.integer(1, 5)):
            tags = self.some(self.tags, 1, 2)
            overrides = {"setting": self.ref("setting"), "tags": ", ".join(tags)}
            if i == 0:
                overrides["born"] = "yes"
                overrides["requires"] = "none"
                overrides["restrictions"] = "none"
            elif self.coin(4):
                overrides["born"] = "no"
            blocks.append(self.entity("lifepath", stem="lp", overrides=overrides))
            self.tags_of[self.entities["lifepath"][-1]] = tags
            self.used_tags.update(tags)
        for _ in range(self.ch.integer(0, 2)):
            blocks.append(self.entity("spell", stem="sp"))
        return blocks

    def tables_and_kinds(self) -> list[str]:
        blocks = []
        for _ in range(self.ch.integer(1, 4)):
            blocks.append(self.rolled_table() if self.coin(3) != 1 else self.keyed_table())
        names = [self.fresh("gadget") for _ in range(self.ch.integer(0, 2))]
        names = [n for n in names if n.isidentifier() and n == n.lower()]
        if not names:
            return blocks
        return blocks + self.declared(names)

    def declared(self, names: Sequence[str]) -> list[str]:
        """Kinds of the generator's own (`declare`), and entities of each."""
        blocks = self.declare(names)
        if self.rejected:
            return blocks
        # kinds may refer to each other (and to themselves): one entity of each is named before any is drawn
        kept = [(name, f"{name}_first") for name in names]
        for name, first in kept:
            self.entities[name] = [first]
        for name, first in kept:
            body = self.fields(name)
            blocks.append(f"{name} {first} {{ {joined(body)} }}")
            for decl in self.kinds[name].own_fields:
                if (
                    isinstance(decl.type, ft.IntType | ft.NumberType)
                    and (not decl.optional or decl.default is not None)
                    and f"{decl.name}: none" not in body
                    and f"{decl.name}: unknown" not in body
                ):
                    self.numeric_fields.append(f"{name}[{first}].{decl.name}")
                    if isinstance(decl.type, ft.IntType):
                        self.whole_fields.append(f"{name}[{first}].{decl.name}")
                    if not decl.optional and decl.default is None:  # every entity gives a number
                        self.ref_fields.append((name, decl.name, isinstance(decl.type, ft.IntType)))
            for _ in range(self.ch.integer(0, 2)):
                blocks.append(self.entity(name, stem=name[:3]))
        return blocks


def _defaultable(field_type: ft.FieldType) -> bool:
    """Whether `declare` may write a default of the type (lists, maps and records too): nothing in it names an
    entity (drawn later, and a homebrew may remove it) or is a check (no default) or a requirement."""
    match field_type:
        case ft.CheckType() | ft.RefType() | ft.ChoicesType() | ft.RequirementType():
            return False
        case ft.ListType(item):
            return _defaultable(item)
        case ft.MapType(item, key):
            return _defaultable(item) and _defaultable(key)
        case ft.RecordType(fields):
            return all(_defaultable(f.type) for f in fields)
        case _:
            return True


def _one_token(value: str) -> bool:
    """Whether a value can follow a map's key without braces (`land 25`, `fly yes`, `bite 1d6`, `"x"`)."""
    quoted = len(value) > 1 and value[0] == value[-1] == '"' and '"' not in value[1:-1].replace('\\"', "")
    number = value.replace(".", "", 1).isdigit()
    dice = value[:1].isdigit() and value.count("d") == 1 and value.replace("d", "").isdigit()
    return number or dice or value.isidentifier() or quoted or (value[:1] == "x" and value[1:].isdigit())


def joined(parts: Sequence[str], *, one_line: bool = True) -> str:
    """Fields of one block, on one line or one a line. A third known gap in the language, avoided for now:
    an open range (`5+`) with more on its line may read as an addition (`range: 6+  aliases += "a"`,
    `r: range = 5+ "doc"`: E201), so a field ending in `+` ends its line."""
    if not one_line or any(p.endswith("+") for p in parts[:-1]):
        return "\n  ".join(parts)
    return "  ".join(parts)


def patched_value(w: Writer, kind: str, target: str, decl: FieldDecl) -> str | None:
    """A new value for a field of an inherited entity, or None where a new one would break what uses it
    (a formula's params, an attribute's abbreviation)."""
    match kind, decl.name:
        case ("formula", "params") | ("attribute", "abbr"):
            return None
        case "formula", "formula":  # whole where it was, so that what calls it still computes; calling only
            # the formulas before it, so that no circle closes
            patched = next(f for f in w.formulas if f.id == target)
            formulas, w.formulas = w.formulas, w.formulas[: w.formulas.index(patched)]
            try:
                return w.arith(patched.params, whole=patched.whole)
            finally:
                w.formulas = formulas
        case "attribute", "formula":  # over base attributes besides itself, so that no circle closes
            bases = [a for a in w.abbrs if not a.startswith("D") and a.lower() != target]
            return w.arith(bases, whole=target not in w.fractional) if bases else "1"
        case "stock", "stat_pools":
            return w.pools
    return w.value(decl.type, kind=kind)


def homebrew(w: Writer, inherited: Sequence[str] = ()) -> list[str]:
    """A ruleset that extends the first: patches of what it inherits, removals, additions and a kind of its own.
    It removes only what nothing else in `inherited` (the first ruleset's blocks) or the patches names."""
    blocks = []
    patchable = [k for k in w.kinds if k not in ("ruleset", "table", "mechanic") and w.entities.get(k)]
    for _ in range(w.ch.integer(1, 4)):
        kind = w.pick(patchable)
        target = w.ref(kind)
        lines = []
        for decl in w.some(list(w.kinds[kind].fields.values()), 1, 2):
            value = patched_value(w, kind, target, decl)
            if value is None:
                continue
            if isinstance(decl.type, ft.ListType) and decl.type.max_items is None and w.coin():
                lines.append(f"{decl.name} += {w.value(ft.ListType(decl.type.item, 1, 1), kind=kind)}")
            else:
                lines.append(f"{decl.name}: {value}")
        blocks.append(f"patch {kind} {target} {{ {joined(lines)} }}")
    words: dict[str, int] = {}
    for block in [*inherited, *blocks]:
        for word in set(_tokens(block)):
            words[word] = words.get(word, 0) + 1
    unused = [
        (kind, target)
        for kind in patchable
        for target in w.entities[kind]
        if words.get(target, 0) <= 1 and words.get(w.abbr_of.get(target, target), 0) <= 1
    ]
    if unused and w.coin(3):
        kind, target = w.pick(unused)
        blocks.append(f"remove {kind} {target}")
        # what the homebrew adds below names only what is left
        w.entities[kind].remove(target)
        if not w.entities[kind]:
            del w.entities[kind]
        w.formulas = [f for f in w.formulas if not (kind == "formula" and f.id == target)]
        if kind == "lifepath":
            w.tags_of.pop(target, None)
            w.used_tags = {t for tags in w.tags_of.values() for t in tags}
        w.numeric_fields = [f for f in w.numeric_fields if not f.startswith(f"{kind}[{target}].")]
        w.whole_fields = [f for f in w.whole_fields if not f.startswith(f"{kind}[{target}].")]
        if kind == "attribute":
            w.abbrs = [a for a in w.abbrs if a != w.abbr_of.get(target)]
        w.tables = [t for t in w.tables if not (kind == "table" and t.id == target)]
    # additions: a skill, a lifepath, a table, and an entity of each kind still around
    if "skill" in w.entities:
        blocks.append(w.entity("skill", stem="brewsk"))
    if "setting" in w.entities and "skill" in w.entities and "trait" in w.entities:
        blocks.append(w.entity("lifepath", stem="brewlp", overrides={"setting": w.ref("setting"), "born": "no"}))
    blocks.append(w.rolled_table())
    if w.coin():
        blocks += w.declared(["brewkind"])
    return blocks


def draw_ruleset(ch: Chooser) -> Ruleset:
    w = Writer(ch)
    demo = w.core()
    demo += w.game()
    demo += w.tables_and_kinds()
    # formulas in the remaining positions: after the tables and fields they may read
    for _ in range(w.ch.integer(0, 2)):
        params = w.some(["a", "b", "n"], 1, 2)
        id_ = w.fresh("g")
        demo.append(w.formula_entity(id_, params))
    split = w.ch.integer(0, len(demo))  # two files: a reference may cross them
    ruleset = Ruleset({"demo": {"a.rules": demo[:split], "b.rules": demo[split:]}})
    if w.coin():
        ruleset.folders["brew"] = {"brew.rules": homebrew(w, demo)}
    ruleset.field_types = frozenset(w.seen)
    return ruleset


# ---------------------------------------------------------------- mutations


def _tokens(line: str) -> list[str]:
    """The words of a line (names and numbers), split at the language's punctuation."""
    out, word = [], ""
    for c in line + " ":
        if c.isalnum() or c == "_":
            word += c
        else:
            if word:
                out.append(word)
            word = ""
    return out


MUTATIONS = (
    *("drop_line", "rename_reference", "number_to_text", "remove_used", "duplicate_block", "swap_value"),
    "break_record",
)


def _break_record(line: str, w: Writer) -> str | None:
    """A record's or a braced map's mistake inside a block: a field or key left out, one it does not declare,
    one given twice, or a record where a single value belongs. None when the line holds no inner braces."""
    opens = [i for i in range(len(line)) if line.startswith("{ ", i)]
    inner = opens[1:] if line.lstrip().split(" ", 1)[0] not in ("patch", "kind") and len(opens) > 1 else []
    if not inner:
        return None
    at = w.pick(inner) + 2
    end = line.find("  ", at)
    close = line.find(" }", at)
    first = line[at : min(e for e in (end, close) if e >= 0)] if max(end, close) >= 0 else ""
    match w.ch.integer(0, 3):
        case 0 if first:  # drop its first field
            return line[:at] + line[at + len(first) :].lstrip()
        case 1:
            return line[:at] + "nonesuch: 1  " + line[at:]
        case 2 if first:
            return line[:at] + first + "  " + line[at:]
        case _:
            if ":" not in first:
                return None
            return line[:at] + first.split(":", 1)[0] + ": { x: 1 }" + line[at + len(first) :]


def mutate(ruleset: Ruleset, ch: Chooser) -> tuple[Ruleset, str]:
    """One edit an author might make by mistake; returns the new ruleset and what was done."""
    w = Writer(ch)
    paths = [(f, n) for f, files in ruleset.folders.items() for n, blocks in files.items() if blocks]
    folder, name = w.pick(paths)
    blocks = list(ruleset.folders[folder][name])
    index = w.ch.integer(0, len(blocks) - 1)
    lines = blocks[index].split("\n")
    operation = w.pick(MUTATIONS)
    line_no = w.ch.integer(0, len(lines) - 1)
    words = _tokens(lines[line_no])
    match operation:
        case "drop_line":
            del lines[line_no]
        case "rename_reference" if words:
            word = w.pick(words)
            lines[line_no] = lines[line_no].replace(word, word + "_renamed", 1)
        case "number_to_text" if any(t.isdigit() for t in words):
            number = w.pick([t for t in words if t.isdigit()])
            lines[line_no] = lines[line_no].replace(number, '"text"', 1)
        case "remove_used":
            others = [b for i, b in enumerate(blocks) if i != index]
            used = [
                i
                for i, b in enumerate(blocks)
                if len(_tokens(b)) > 1 and any(_tokens(b)[1] in _tokens(o) for o in others)
            ]
            if used:
                del blocks[w.pick(used)]
                lines = []
        case "duplicate_block":
            blocks.insert(index, blocks[index])
        case "break_record" if (broken := _break_record(lines[line_no], w)) is not None:
            lines[line_no] = broken
        case "swap_value" if ":" in lines[line_no]:
            head, _, rest = lines[line_no].partition(":")
            tail = rest[rest.find("  ") :] if "  " in rest else ""
            lines[line_no] = f"{head}: {w.pick(SWAPS)}{tail}"
        case _:
            operation = "drop_line"
            del lines[line_no]
    if operation != "remove_used":
        blocks[index] = "\n".join(lines)
    folders = {f: dict(files) for f, files in ruleset.folders.items()}
    folders[folder][name] = blocks
    return Ruleset(folders, ruleset.field_types), f"{operation} in {folder}/{name}, block {index}"


@st.composite
def rulesets(draw: st.DrawFn, *, mutations: bool = True) -> tuple[Ruleset, str]:
    """A generated ruleset, and (one time in three) one or two mutations of it."""
    ch = DrawChooser(draw)
    ruleset = draw_ruleset(ch)
    done = []
    if mutations and ch.integer(0, 2) == 0:
        for _ in range(ch.integer(1, 2)):
            ruleset, what = mutate(ruleset, ch)
            done.append(what)
    return ruleset, "; ".join(done)


def seeded(seed: int, *, mutate_one_in: int = 3) -> tuple[Ruleset, str]:
    ch = RandomChooser(random.Random(seed))
    ruleset = draw_ruleset(ch)
    done = []
    if ch.integer(1, mutate_one_in) == 1:
        ruleset, what = mutate(ruleset, ch)
        done.append(what)
    return ruleset, "; ".join(done)
