"""Filters and sorting for a kind's list, derived from its declaration (never a hand-made list per kind).

- A field of a type with few values a reader picks among (an option, yes/no, a whole number, a reference,
  a word, an obstacle, a short text, or a list of them) becomes a *facet*: a choice among the values its
  entries have, with how many have each (site.js counts them as the other filters change).
- Such a field with more than FACET_LIMIT distinct values gets a text filter instead (a number gets none:
  it sorts).
- A column sorts when its values are numbers (by the number: `3` before `3^` before `4`) or words.

The page carries each entry's values as option numbers (`data-f`), so a filter never reads rendered text;
the URL's query string holds the chosen values by field name (`?obstacle=3%5E&sort=-resources`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import assert_never

from rulesdsl.compile import ir
from rulesdsl.compile.kinds import Kind
from rulesdsl.language import fieldtypes as t
from rulesdsl.targets.html.values import heading

FACET_LIMIT = 25  # distinct values a facet lists; past it, a text filter
RESERVED = ("q", "sort", "text")  # the query parameters of the search box, the sort, the words filter
_LEFT_OUT = {"source", "uncertain", "note", "aliases", "description", "columns", "keys"}

Order = tuple[int, Fraction, str]  # numbers in order first, then words alphabetically


@dataclass(frozen=True, slots=True)
class FacetOption:
    key: str  # as the URL writes it
    label: str
    order: Order


@dataclass(frozen=True, slots=True)
class Facet:
    """A filter on one field: a choice among `options`, or (no options) words to find in its values."""

    field: str
    param: str  # its query parameter: the field's name, unless the list's own parameters take it
    label: str
    options: tuple[FacetOption, ...]

    @property
    def is_text(self) -> bool:
        return not self.options


@dataclass(frozen=True, slots=True)
class ListColumn:
    """A column of a list's table: its header, and how it sorts ("number", "text", or "" not at all)."""

    field: str
    label: str
    sort: str


Label = Callable[[str, str], str]  # (kind, id) -> what a reader calls that entity


def _number(value: int | Fraction) -> Order:
    return (0, Fraction(value), "")


def _word(text: str) -> Order:
    return (1, Fraction(0), text.casefold())


def obstacle_number(formula: ir.Formula) -> Fraction | None:
    """An obstacle's place among numbers: `3` is 3, `3^` just after it (3.5); a stat or a text none."""
    match formula.expr:
        case ir.Num(value):
            return Fraction(value)
        case ir.Caret(value):
            return Fraction(value) + Fraction(1, 2)
        case _:
            return None


def sort_number(field_type: t.FieldType, value: ir.Value) -> Fraction | None:
    """The number a value sorts by in its column, if it is a number (else the column sorts as text)."""
    match field_type:
        case t.IntType() | t.NumberType() | t.YearsType() | t.PointsType():
            return Fraction(value) if isinstance(value, int | Fraction) and not isinstance(value, bool) else None
        case t.ActionsType():
            return Fraction(value.count) if isinstance(value, ir.Actions) else None
        case t.ObstacleType():
            return obstacle_number(value) if isinstance(value, ir.Formula) else None
        case _:
            return None


def reads_as_number(field_type: t.FieldType) -> bool:
    """A column whose shown text starts with the number it sorts by (`6`, `-2`, `6 yrs`, `2 pts`): the page
    need not carry the number apart (an obstacle, `3^`, or a fraction, `3/2`, does)."""
    return isinstance(field_type, t.IntType | t.YearsType | t.PointsType)


def sort_kind(field_type: t.FieldType) -> str:
    """How a column of this type sorts: "number", "text", or "" (dice, ranges, bonuses: no order to read)."""
    match field_type:
        case t.IntType() | t.NumberType() | t.YearsType() | t.PointsType() | t.ActionsType() | t.ObstacleType():
            return "number"
        case t.TextType() | t.WordType() | t.EnumType() | t.RefType() | t.AbbreviationType():
            return "text"
        case t.ListType(item):
            return "text" if sort_kind(item) == "text" else ""
        case _:
            return ""


def _numeric(field_type: t.FieldType) -> bool:
    return isinstance(field_type, t.IntType | t.NumberType | t.YearsType | t.PointsType | t.ActionsType)


def facetable(field_type: t.FieldType) -> bool:
    """Types whose values a reader picks among (a list of them: each item is a value)."""
    match field_type:
        case (
            t.BoolType()
            | t.EnumType()
            | t.IntType()
            | t.NumberType()
            | t.YearsType()
            | t.PointsType()
            | t.ActionsType()
            | t.RefType()
            | t.WordType()
            | t.ObstacleType()
            | t.TextType()
        ):
            return True
        case t.ListType(item):
            return not isinstance(item, t.ListType) and facetable(item)
        case (
            t.MarkdownType()
            | t.DiceType()
            | t.FormulaType()
            | t.RangeType()
            | t.MultiplierType()
            | t.AbbreviationType()
            | t.VersionType()
            | t.StatBonusType()
            | t.ChoicesType()
            | t.OfferType()
            | t.RequirementType()
            | t.ColumnsType()
            | t.RollType()
            | t.RollsType()
            | t.CheckType()
            | t.MapType()
            | t.RecordType()
        ):
            return False
        case _:
            assert_never(field_type)


def values_of(field_type: t.FieldType, value: ir.Value, label: Label) -> list[FacetOption]:
    """The facet values one field's value holds (a list: one per item), keyed as the URL writes them."""
    match field_type:
        case t.ListType(item):
            if not isinstance(value, tuple):
                return []
            return [option for v in value for option in values_of(item, v, label)]
        case t.BoolType():
            if not isinstance(value, bool):
                return []
            return [FacetOption("yes" if value else "no", "yes" if value else "no", (0, Fraction(not value), ""))]
        case t.EnumType(options):
            if not isinstance(value, str):
                return []
            at = options.index(value) if value in options else len(options)
            return [FacetOption(value, value.replace("_", " "), (0, Fraction(at), ""))]
        case t.IntType() | t.NumberType() | t.YearsType() | t.PointsType():
            if isinstance(value, int | Fraction) and not isinstance(value, bool):
                return [FacetOption(str(value), str(value), _number(value))]
            return []
        case t.ActionsType():
            if isinstance(value, ir.Actions):
                text = f"\u00d7{value.count}" if value.per_obstacle else str(value.count)
                return [FacetOption(text, text, (0, Fraction(value.count), text))]
            return []
        case t.RefType(kind):
            if isinstance(value, ir.Ref) and value.id is not None:
                shown = label(kind, value.id)
                return [FacetOption(value.id, shown, _word(shown))]
            return []
        case t.ObstacleType():
            if not isinstance(value, ir.Formula):
                return []
            text = value.text.replace('"', "")
            number = obstacle_number(value)
            return [FacetOption(text, text, (0, number, text) if number is not None else _word(text))]
        case t.WordType() | t.TextType():
            if not isinstance(value, str):  # unknown (ir.Unknown): no value to pick
                return []
            shown = value.replace("_", " ") if isinstance(field_type, t.WordType) else value
            return [FacetOption(value, shown, _word(shown))]
        case _:
            return []


def facets(kind: Kind, entities: list[ir.Entity], skip: str | None, label: Label) -> list[Facet]:
    """The facets of a list of a kind's entities: each declared field of a facetable type whose entries
    hold at least two values (one value filters nothing), in declaration order."""
    found: list[Facet] = []
    if len(entities) < 2:  # one entry: nothing to narrow
        return found
    for decl in kind.fields.values():
        if decl.name in _LEFT_OUT or decl.name == skip or not facetable(decl.type):
            continue
        seen: dict[str, FacetOption] = {}
        for entity in entities:
            value = entity.fields.get(decl.name)
            if value is None:
                continue
            for option in values_of(decl.type, value, label):
                seen.setdefault(option.key, option)
        if len(seen) < 2:
            continue
        param = decl.name if decl.name not in RESERVED else f"{decl.name}_"
        title = heading(decl.name)
        if len(seen) > FACET_LIMIT:
            if not _numeric(decl.type.item if isinstance(decl.type, t.ListType) else decl.type):
                found.append(Facet(decl.name, param, title, ()))
            continue
        options = tuple(sorted(seen.values(), key=lambda o: (o.order, o.key)))
        found.append(Facet(decl.name, param, title, options))
    return found


def entry_data(kind: Kind, entity: ir.Entity, found: list[Facet], label: Label) -> str:
    """An entry's values of the list's choice facets, as the options' numbers: `.`-joined per facet, the
    facets `,`-joined (site.js reads them back); text facets are carried apart (`entry_texts`)."""
    parts = []
    for facet in found:
        if facet.is_text:
            continue
        value = entity.fields.get(facet.field)
        keys = {o.key for o in values_of(kind.fields[facet.field].type, value, label)} if value is not None else set()
        parts.append(".".join(str(i) for i, o in enumerate(facet.options) if o.key in keys))
    return ",".join(parts)


def entry_texts(kind: Kind, entity: ir.Entity, found: list[Facet], label: Label) -> dict[str, str]:
    """An entry's values of the list's text facets, by field, as a reader would type them."""
    texts = {}
    for facet in found:
        value = entity.fields.get(facet.field)
        if facet.is_text and value is not None:
            texts[facet.field] = ", ".join(o.label for o in values_of(kind.fields[facet.field].type, value, label))
    return texts
