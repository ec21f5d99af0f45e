"""Emit the static HTML rules reference: pages that read like the book, search, previews, graphs.

Works from file:// with no network: the search index and the hover previews are scripts injected on
first use (fetch() fails from file://), never loaded with every page. Every text from the sources is
escaped by Jinja2's autoescape or markupsafe; descriptions are Markdown rendered without raw HTML.

How entities are laid out follows their kinds' declarations, so declared kinds get the same treatment:
- a kind whose first field is a required reference to another kind is *nested* in it (a lifepath in its
  setting, a setting in its stock), and is shown on its parent's page in the book's compact columns;
- a kind others are nested in gets a page per entity (a page per setting, a page per stock);
- every other kind is listed alphabetically, split into pages when it is big.
Links are placeholders until every entity has its page (see html_values), then resolved.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from markupsafe import Markup, escape

from rulesdsl import __version__
from rulesdsl.compile import ir, jsonform
from rulesdsl.compile.jsonform import schema_file, value_json
from rulesdsl.compile.kinds import COMMON_NAMES, CORE_KINDS, Kind
from rulesdsl.compile.mechanics import total_mechanic
from rulesdsl.compile.pipeline import CompiledRuleset
from rulesdsl.language import fieldtypes as t
from rulesdsl.resources import DOCS
from rulesdsl.syntax.tree import Position
from rulesdsl.targets.digests import Aside, Digests, digest
from rulesdsl.targets.html import changes, graphs
from rulesdsl.targets.html.facets import (
    Facet,
    entry_data,
    entry_texts,
    facets,
    reads_as_number,
    sort_kind,
    sort_number,
)
from rulesdsl.targets.html.markdown import document, first_paragraph, markdown
from rulesdsl.targets.html.search import ALIAS, DESCRIPTION, NAME, OTHER, SearchIndex, SearchMemo, text_of
from rulesdsl.targets.html.values import (
    PLACEHOLDER,
    OutcomeOdds,
    PoolOdds,
    TableView,
    Values,
    heading,
    href,
    odds_table,
    short_type,
    total_odds,
)
from rulesdsl.targets.labels import labels
from rulesdsl.targets.templating import environment, template_context

PREVIEW_TABLE = 6000  # characters: a table no longer than this shows whole in a preview
PAGE_BUDGET = 120_000  # characters of entries on one page before the next page starts
CONTENTS_LIMIT = 2_000  # a contents page lists entries by name up to this many, else only their pages
NAV_KINDS = 40  # the bar atop every page of a ruleset links each kind up to this many, else its contents
_SHOWN_APART = {"source", "uncertain", "note", "aliases", "description", "columns", "keys"}
_DOCS = (DOCS,)


def _language_doc() -> str | None:
    """docs/language.md: packaged beside the code in a wheel, in the repository's docs/ otherwise."""
    for folder in _DOCS:
        path = folder / "language.md"
        if path.is_file():
            return path.read_text(encoding="utf-8")
    return None


# ---------------------------------------------------------------- layout from the declarations


def nesting(ruleset: CompiledRuleset) -> dict[str, tuple[str, str]]:
    """kind -> (field, parent kind): a kind whose first field is a required reference to another kind's
    entries (`setting: ref setting` first in a lifepath) is shown in them. The core kinds (tables,
    formulas, mechanics, attributes) are rules, never containers."""
    found: dict[str, tuple[str, str]] = {}
    for name, kind in ruleset.kinds.items():
        first = kind.own_fields[0] if kind.own_fields else None
        if name not in ruleset.entities or first is None or not isinstance(first.type, t.RefType):
            continue
        target = first.type.kind
        if target != name and target not in CORE_KINDS and not first.optional and target in ruleset.entities:
            found[name] = (first.name, target)
    for name in list(found):  # a loop of kinds nested in each other nests none of them
        seen, current = {name}, found[name][1]
        while current in found and current not in seen:
            seen.add(current)
            current = found[current][1]
        if current in seen:
            found.pop(name, None)
    return found


def unique_labels(ruleset: CompiledRuleset, parents: dict[str, tuple[str, str]]) -> dict[str, dict[str, str]]:
    """Labels that tell entities of one kind apart: the shared ones (labels.py) and, where two still read
    the same, what tells them apart: their parent ("Born Noble (Noble Setting, Dwarves)"), a reference,
    a word naming another entity (a spell's stock: "Dark of Night (Orcs)"); else the source, or the id."""
    base = labels(ruleset)
    qualifiers: dict[tuple[str, str], list[str]] = {}

    def qualifier(kind: str, id_: str) -> list[str]:
        key = (kind, id_)
        if key not in qualifiers:
            qualifiers[key] = []  # no loops
            qualifiers[key] = _qualifier(kind, id_)
        return qualifiers[key]

    def _qualifier(kind: str, id_: str) -> list[str]:
        entity = ruleset.entities[kind][id_]
        if kind in parents:
            ref = entity.fields.get(parents[kind][0])
            if isinstance(ref, ir.Ref) and ref.target in ruleset.entities.get(ref.kind, {}):
                parent = ruleset.entities[ref.kind][ref.target]
                return [parent.name, *(qualifier(ref.kind, ref.target) if clashes(ref.kind, ref.target) else [])]
        for decl in ruleset.kinds[kind].own_fields:
            value = entity.fields.get(decl.name)
            if isinstance(value, ir.Ref) and value.target in ruleset.entities.get(value.kind, {}):
                return [ruleset.entities[value.kind][value.target].name]
            named = ruleset.entities.get(decl.name, {})
            if isinstance(value, tuple) and named:
                hits = [named[v].name for v in value if isinstance(v, str) and v in named]
                if hits:
                    return hits
        return []

    clashing: dict[str, set[str]] = {}
    for kind, group in ruleset.entities.items():
        seen: dict[str, list[str]] = {}
        for id_, entity in group.items():
            seen.setdefault(entity.name, []).append(id_)
        clashing[kind] = {i for ids in seen.values() if len(ids) > 1 for i in ids}

    def clashes(kind: str, id_: str) -> bool:
        return id_ in clashing.get(kind, set())

    result = {kind: dict(group) for kind, group in base.items()}
    for kind, group in ruleset.entities.items():
        by_label: dict[str, list[str]] = {}
        for id_ in group:
            by_label.setdefault(result[kind][id_], []).append(id_)
        for ids in by_label.values():
            if len(ids) < 2:
                continue
            made = {i: f"{group[i].name} ({', '.join(q)})" if (q := qualifier(kind, i)) else group[i].name for i in ids}
            if len(set(made.values())) < len(ids):  # then where the sources put them, at last their ids
                sources = {i: group[i].fields.get("source") for i in ids}
                made = {i: f"{made[i]} ({s})" if isinstance(s := sources[i], str) else made[i] for i in ids}
            if len(set(made.values())) < len(ids):
                made = {i: f"{group[i].name} ({i})" for i in ids}
            result[kind].update(made)
    return result


@dataclass
class Backlinks:
    """Who names whom, by the field that names it (children are their parent's content, not listed)."""

    found: dict[tuple[str, str], dict[tuple[str, str], list[str]]] = field(default_factory=dict)

    def add(self, target: tuple[str, str], source: tuple[str, str, str]) -> None:
        kind, field_name, id_ = source
        ids = self.found.setdefault(target, {}).setdefault((kind, field_name), [])
        if not ids or ids[-1] != id_:
            ids.append(id_)

    def of(self, kind: str, id_: str) -> dict[tuple[str, str], list[str]]:
        return self.found.get((kind, id_), {})


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(node: object) -> tuple[str, ...]:
    """The fields of a node type `named_in` walks into: a dataclass's but its position."""
    if dataclasses.is_dataclass(node) and type(node) is not Position:
        return tuple(f.name for f in dataclasses.fields(node) if f.name != "pos")
    return ()


def named_in(value: object) -> list[tuple[str, str]]:
    """What a value names, in writing order: resolved references, and the attributes formulas use.
    (ir.walk's generic walk, with each node type's fields looked up once: it ran for every field.)"""
    found: list[tuple[str, str]] = []
    stack: list[object] = [value]
    while stack:
        node = stack.pop()
        node_type = type(node)
        if node_type is tuple:
            stack.extend(reversed(cast("tuple[object, ...]", node)))
        elif isinstance(node, ir.Ref):
            if node.id is not None:
                found.append((node.kind, node.id))
        elif isinstance(node, ir.Var):
            if node.attribute is not None:
                found.append(("attribute", node.attribute))
        else:
            names = _CHILD_FIELDS.get(node_type)
            if names is None:
                names = _CHILD_FIELDS[node_type] = _child_fields(node)
            stack.extend(reversed([getattr(node, name) for name in names]))
    return found


def backlinks(
    ruleset: CompiledRuleset, parents: dict[str, tuple[str, str]], order: dict[str, list[str]]
) -> tuple[Backlinks, dict[tuple[str, str], dict[str, list[tuple[str, str]]]]]:
    """Who names whom, and what each entity names by field (its table rows as "rows")."""
    links = Backlinks()
    names: dict[tuple[str, str], dict[str, list[tuple[str, str]]]] = {}
    for kind in ruleset.entities:
        skip = parents.get(kind, ("",))[0]
        for id_ in order[kind]:
            entity = ruleset.entities[kind][id_]
            by_field = {name: named_in(value) for name, value in entity.fields.items()}
            if entity.rows:
                by_field["rows"] = named_in(entity.rows)
            names[(kind, id_)] = by_field
            named: dict[tuple[str, str], str] = {}
            for name, targets in by_field.items():
                if name != skip:
                    for target in targets:
                        named.setdefault(target, name)
            for target, name in named.items():
                if target != (kind, id_):
                    links.add(target, (kind, name, id_))
    return links, names


def page_order(ruleset: CompiledRuleset, kind: str, parents: dict[str, tuple[str, str]]) -> list[str]:
    """Nested kinds in book order (the sources' order); everything else alphabetical, as in the book's indexes."""
    entities = ruleset.entities[kind]
    if kind in parents:
        order = [i for i in ruleset.source_order.get(kind, ()) if i in entities]
        return order + sorted(set(entities) - set(order))
    return sorted(entities, key=lambda i: (entities[i].name.casefold(), i))


# ---------------------------------------------------------------- one ruleset's pages


_NOTHING = Markup("")


@dataclass(frozen=True, slots=True)
class LifepathGraph:
    """Where an entity of a nested kind (a lifepath) can come from and lead to: (kind, id) of each."""

    came_from: list[tuple[str, str, int]]  # its own parent first, then those whose leads come here (how many)
    required: list[tuple[str, str]]  # entities of its own kind its requirements name
    leads_to: list[tuple[str, str]]  # its own parent first, then those its leads name


@dataclass(frozen=True, slots=True)
class EntityView:
    """What the pages show of an entity, built once per entity (RulesetSite.entity_data)."""

    kind: str
    kind_title: str
    id: str
    name: str
    label: str
    heading: str
    level: int
    context: str  # the parent it sits in, or ""
    flags: list[str]
    short: dict[str, Markup]  # short fields, shown as columns or facts
    short_items: list[tuple[str, Markup]]
    lines: list[tuple[str, Markup]]  # the other fields, one line each
    aliases: list[str]
    uncertain: str | None
    note: str | None
    source: str | None
    origin: str | None  # where a homebrew's version came from
    description: Markup | None
    summary: Markup | None
    backlinks: list[tuple[str, int, Markup]]
    graph: LifepathGraph | None
    table_html: Markup | None
    preview_table: Markup | None  # the table for a preview (no row ids: it is shown over other pages), if small
    odds_html: Markup | None
    flags_html: Markup
    facts_html: Markup
    lines_html: Markup
    has_body: bool = False
    preview: Markup = _NOTHING
    body_html: Markup = _NOTHING
    authors_html: Markup = _NOTHING  # ids, where it is written, its JSON: folded away, for authors


@dataclass
class Rendered:
    """One entity, rendered for its page (placeholders unresolved)."""

    kind: str
    id: str
    html: Markup
    preview: Markup
    texts: list[tuple[str, int, str]]  # (text, weight, field) for the search index
    graph: LifepathGraph | None = None  # drawn on demand, from the page's graphs script


# ---------------------------------------------------------------- what the templates are given
# Each page template's context is a dataclass, so a misspelt name fails mypy, not a render.

Crumbs = list[tuple[str, str]]  # (href, label), from the reference down


@dataclass(frozen=True, slots=True)
class Common:
    """What every page of a ruleset shows: the header, the navigation, the trail."""

    crumbs: Crumbs
    ruleset: CompiledRuleset
    counts: list[tuple[str, str, int]]  # (kind, title, entries) of every kind with entries
    nav: list[tuple[str, str, int]]  # the same, where few enough to list in the header
    version: str
    root: str
    title: str
    page: str
    has_language: bool


@dataclass(frozen=True, slots=True)
class PagePart:
    """One page of a listing split into pages: where it is and the names it runs from and to."""

    page: str
    first: str
    last: str
    count: int


@dataclass(frozen=True, slots=True)
class ListingPage:
    common: Common
    kind: str
    columns: list[str] | None  # the short fields shown as columns (None: cards)
    ranges: list[PagePart] | None
    facets: list[Facet] = field(default_factory=list)  # the filters its kind's declaration gives it
    sorts: list[tuple[str, str]] | None = None  # (field, how it sorts: "number", "text" or "") by column, name first
    count: int = 0  # entries on this page


@dataclass(frozen=True, slots=True)
class Member:
    """A parent on a kind's contents page, with the children of that kind it holds."""

    head: Markup
    count: int
    links: list[Markup]


@dataclass(frozen=True, slots=True)
class Group:
    """A heading on a contents page: owners summarised in rows, or parents with their members."""

    head: Markup | None
    summary: Markup | None = None
    members: list[Member] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ContentsPage:
    common: Common
    kind: str
    groups: list[Group]
    ranges: list[PagePart] | None
    letters: dict[str, list[tuple[str, Markup, Markup]]] | None  # (label, link, its filters' attributes)
    facets: list[Facet] | None = None  # a big kind's filters, over its names here (its pages hold parts)


@dataclass(frozen=True, slots=True)
class Section:
    """The children of one kind on an owner's page: summarised rows, or the entries themselves."""

    kind: str
    title: str
    count: int
    summary: Markup | None
    entries: list[Rendered]
    columns: list[str] | None
    facets: list[Facet] | None = None  # its filters, when it is the page's one list of entries
    sorts: list[tuple[str, str]] | None = None


@dataclass(frozen=True, slots=True)
class OwnerPage:
    common: Common
    kind: str
    entity: EntityView
    head: Markup | None  # the entity's own card (first part only)
    named: Markup | None
    graph: Markup | None
    graph_kind: str
    parts: list[str]
    part: int
    sections: list[Section]


@dataclass(frozen=True, slots=True)
class Holding:
    """A top-level owner on the ruleset's page, with what it holds by kind."""

    head: Markup
    held: list[tuple[str, list[Markup]]]


@dataclass(frozen=True, slots=True)
class RulesetPage:
    common: Common
    groups: list[Holding]
    bases: list[tuple[str, str]]  # the rulesets it builds on: id (their folder), title


@dataclass(frozen=True, slots=True)
class FieldRow:
    name: str
    type: str
    required: bool
    default: str
    doc: str
    common: bool


@dataclass(frozen=True, slots=True)
class KindInfo:
    name: str
    title: str
    builtin: bool
    rows: list[FieldRow]
    count: int
    schema: str


@dataclass(frozen=True, slots=True)
class KindsPage:
    common: Common
    kinds: list[KindInfo]


@dataclass(frozen=True, slots=True)
class Summary:
    """A ruleset on the reference's front page."""

    ruleset: CompiledRuleset
    counts: list[tuple[str, str, int]]
    by_stock: list[StockCounts]
    urls: dict[str, str]  # stock id -> its page


@dataclass(frozen=True, slots=True)
class SitePage:
    """A page of the whole reference (front page, search, the language), above every ruleset."""

    title: str
    version: str
    has_language: bool
    root: str = ""
    ruleset: None = None
    crumbs: Crumbs = field(default_factory=list)
    summaries: list[Summary] = field(default_factory=list)
    body: Markup | None = None  # the language page's text
    headings: list[tuple[int, str, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class BuilderPage:
    """The character builder: its controls are made by assets/builder.js from rules.global.js."""

    common: Common
    lifepaths: bool  # the ruleset has lifepaths: burn a character, else roll what it declares
    data: Markup  # JSON for builder.js (script-safe): links into the reference, what rolls a characteristic


PageContext = ListingPage | ContentsPage | OwnerPage | RulesetPage | KindsPage | BuilderPage


def page_context(context: PageContext | Common) -> dict[str, object]:
    """The names a page template renders with: the common part's and the page's own, side by side."""
    if isinstance(context, Common):
        return template_context(context)
    own = template_context(context)
    return {**template_context(context.common), **{k: v for k, v in own.items() if k != "common"}}


@dataclass
class Page:
    name: str  # file name in the ruleset's folder
    template: str
    context: PageContext
    entries: list[Rendered] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class SummaryRow:
    """An entity with a page of its own, as a row of its kind's summary (parts.html `summary_table`)."""

    link: Markup
    flags: list[str]
    cells: list[Markup]  # its short fields, by column
    counts: list[int]  # how many of each kind it holds


class Parts(Protocol):
    """The macros of templates/parts.html that Python calls, typed (Jinja's module of them is not)."""

    # positional only: Jinja's names for the macros' arguments are not checked
    def summary_table(self, rows: list[SummaryRow], headers: list[str], /) -> Markup: ...
    def table_view(self, tv: TableView, id_: str, /) -> Markup: ...
    def pool_odds(self, odds: PoolOdds, level: int, /) -> Markup: ...
    def outcome_odds(self, odds: OutcomeOdds, level: int, /) -> Markup: ...


@dataclass(slots=True)
class _SiteMemo:
    digests: Digests | None = None  # across runs: what entities are made from is kept as digests (see RenderMemo)
    context: object = ()  # across runs: its digest
    entries: dict[tuple[object, ...], tuple[object, Rendered]] = field(default_factory=dict)
    used: dict[tuple[object, ...], tuple[object, Rendered]] = field(default_factory=dict)
    reused: int = 0  # entities the render in progress took from `entries`
    made: list[tuple[object, ...]] = field(default_factory=list)  # ... and the keys of those it made


class RenderMemo:
    """What render() made of each entity, kept for the next render: after a save (`rulesdsl serve`), or
    after an edit (`rulesdsl build`, which keeps it in the cache folder: given `digests`), only the entities it
    can have changed are rendered again. An entity's card or row is reused when
    everything it is made from equals last time's: the entity itself (fields and positions), where it is
    shown (columns, the field left out, heading level, its list's facets), who names it (with their names
    and parents) and its lineage graph; and, for its whole ruleset, the kinds, every label, the nesting, what
    a homebrew changed, the files' names, the order of kinds, the attributes (formulas spell them), the
    rulesets' titles. Any change to the latter renders every entity of the ruleset again. Mechanics (their
    odds read other entities) are always rendered. It keeps what the last render used: one site at most.
    In one process what an entity is made from is compared as it is; across runs, by its digest (see
    targets/digests.py), and the memo is written and read as JSON (`data`, `load`)."""

    def __init__(self, digests: Digests | None = None) -> None:
        self.digests = digests  # across runs: the build's (see digests.Digests)
        self.sites: dict[str, _SiteMemo] = {}
        self.reused = 0  # entity renderings the last render took from the memo
        self.rendered = 0  # ... and those it made
        self.made: set[tuple[object, ...]] = set()  # their keys: kind, id and how it was shown
        self.search = SearchMemo()  # the search index's pieces, for every ruleset together

    def site(self, ruleset: str) -> _SiteMemo:
        memo = self.sites.get(ruleset)
        if memo is None:
            memo = self.sites[ruleset] = _SiteMemo(self.digests)
        return memo

    def keep_only(self, rulesets: Iterable[str]) -> None:
        """After a render: forget rulesets it did not render, and entries it did not use."""
        wanted = set(rulesets)
        self.sites = {r: m for r, m in self.sites.items() if r in wanted}
        self.reused = sum(m.reused for m in self.sites.values())
        self.rendered = sum(len(m.used) for m in self.sites.values()) - self.reused
        self.made = {key for m in self.sites.values() for key in m.made}
        for memo in self.sites.values():
            memo.entries, memo.used, memo.reused, memo.made = memo.used, {}, 0, []

    def digests_of(self, ruleset: str) -> tuple[object, dict[object, object]]:
        """The context and each entry's digest (across runs): how far two memos differ (see build.Kept)."""
        memo = self.site(ruleset)
        return memo.context, {key: deps for key, (deps, _) in memo.entries.items()}

    def data(self, ruleset: str, aside: Aside) -> dict[str, Any]:
        """A ruleset's entries as JSON-compatible data, their HTML `aside` (across runs only: the rest are
        compared as objects)."""
        assert self.digests is not None
        memo = self.site(ruleset)
        entries = [
            [*key, deps, *_rendered_data(r, aside)] for key, (deps, r) in memo.entries.items() if deps is not None
        ]
        return {"context": memo.context, "entries": entries}

    def load(self, ruleset: str, data: object, aside: Aside) -> bool:
        """Entries of a ruleset as `data` gave them (from the cache folder); False, and none, where `data` is
        anything else."""
        assert self.digests is not None
        try:
            entries = _loaded_entries(data, aside)
        except (TypeError, ValueError, KeyError, IndexError):
            return False
        assert isinstance(data, dict)
        self.sites[ruleset] = _SiteMemo(self.digests, data["context"], entries)
        return True


def _rendered_data(rendered: Rendered, aside: Aside) -> list[object]:
    """A rendering as data (its kind and id are its key's: see _loaded_entries)."""
    graph = rendered.graph
    return [
        aside.put(str(rendered.html)),
        aside.put(str(rendered.preview)),
        rendered.texts,
        None if graph is None else [graph.came_from, graph.required, graph.leads_to],
    ]


def _loaded_entries(data: object, aside: Aside) -> dict[tuple[object, ...], tuple[object, Rendered]]:
    """The entries `RenderMemo.data` wrote; TypeError (or ValueError, KeyError, IndexError) for anything else."""
    if type(data) is not dict or type(data["context"]) is not str:
        raise TypeError("not a memo")
    entries: dict[tuple[object, ...], tuple[object, Rendered]] = {}
    for kind, id_, columns, skip, level, listed, deps, html, preview, texts, graph in data["entries"]:
        if not (type(kind) is str and type(id_) is str and type(deps) is str and type(level) is int):
            raise TypeError("not a memo")
        if not (type(listed) is bool and (skip is None or type(skip) is str)):
            raise TypeError("not a memo")
        if columns is not None and not all(type(c) is str for c in columns):
            raise TypeError("not a memo")
        found = [(text, weight, name) for text, weight, name in texts]
        if not all(type(text) is str and type(weight) is int and type(name) is str for text, weight, name in found):
            raise TypeError("not a memo")
        lineage = None if graph is None else _lineage(graph)
        key = (kind, id_, None if columns is None else tuple(columns), skip, level, listed)
        rendered = Rendered(kind, id_, Markup(aside.get(html)), Markup(aside.get(preview)), found, lineage)
        entries[key] = (deps, rendered)
    return entries


def _lineage(graph: list[list[list[Any]]]) -> LifepathGraph:
    came, required, leads = graph
    if not all(type(k) is str and type(i) is str and type(n) is int for k, i, n in came):
        raise TypeError("not a memo")
    if not all(type(k) is str and type(i) is str for k, i in (*required, *leads)):
        raise TypeError("not a memo")
    return LifepathGraph([(k, i, n) for k, i, n in came], [(k, i) for k, i in required], [(k, i) for k, i in leads])


class RulesetSite:
    def __init__(
        self,
        ruleset: CompiledRuleset,
        has_language: bool,
        titles: Mapping[str, str] | None = None,
        memo: _SiteMemo | None = None,
    ) -> None:
        self.ruleset = ruleset
        self.has_language = has_language
        self.titles = titles or {}  # every ruleset's title, by id: a base is named by its title
        self.env = environment()
        self.parts = cast(Parts, self.env.get_template("html/parts.html").module)
        self.parents = nesting(ruleset)
        self.owners = {parent for _, parent in self.parents.values()}
        self.labels = unique_labels(ruleset, self.parents)
        self.values = Values(ruleset, self.labels)
        self.order = {kind: page_order(ruleset, kind, self.parents) for kind in ruleset.entities}
        self.back, self.named = backlinks(ruleset, self.parents, self.order)
        self.children: dict[tuple[str, str], dict[str, list[str]]] = {}  # (kind, id) -> child kind -> ids
        for kind, (name, parent) in self.parents.items():
            for id_ in self.order[kind]:
                ref = ruleset.entities[kind][id_].fields.get(name)
                if isinstance(ref, ir.Ref):
                    self.children.setdefault((parent, ref.target), {}).setdefault(kind, []).append(id_)
        self.urls: dict[tuple[str, str], str] = {}
        self.pages: list[Page] = []
        self.owner_texts: dict[str, tuple[str, str, EntityView]] = {}  # page -> the entity it is about
        self._came: dict[tuple[str, str], dict[str, int]] = {}
        self._written: dict[str, str] = {}  # file -> as the ruleset names it
        self.origins = changes.notes(ruleset)  # what a homebrew added or changed, said on the entity
        self.counts = [(kind, ruleset.kinds[kind].title, len(group)) for kind, group in ruleset.entities.items()]
        # every page's bar of kinds: past NAV_KINDS, one link to the ruleset's contents, else pages x kinds
        self.nav = self.counts if len(self.counts) <= NAV_KINDS else []
        self.memo = memo
        if memo is not None:
            context = (
                dict(ruleset.kinds),
                self.labels,
                self.parents,
                self.origins,
                tuple(name for name, _ in ruleset.sources),
                tuple(ruleset.entities),
                dict(ruleset.entities.get("attribute", {})),
                dict(self.titles),
                has_language,
            )
            kept: object = digest(context) if memo.digests is not None else context
            if memo.context != kept or kept is None:
                memo.context, memo.entries = kept, {}
            memo.used = {}

    # ------------------------------------------------------------ entities

    def kind_title(self, kind: str) -> str:
        return self.ruleset.kinds[kind].title

    def bases(self) -> list[tuple[str, str]]:
        return [(base, self.titles.get(base, base)) for base in self.ruleset.extends]

    def parent_of(self, kind: str, id_: str) -> tuple[str, str] | None:
        if kind not in self.parents:
            return None
        ref = self.ruleset.entities[kind][id_].fields.get(self.parents[kind][0])
        return (ref.kind, ref.target) if isinstance(ref, ir.Ref) else None

    def columns_of(self, kind: str, ids: list[str], skip: str | None) -> list[str]:
        """The short fields any of these entities has: the columns of their listing (book order)."""
        decls = self.ruleset.kinds[kind].fields.values()
        present: set[str] = set()
        for id_ in ids:
            present.update(self.ruleset.entities[kind][id_].fields)
        return [
            d.name
            for d in decls
            if d.name in present
            and d.name not in _SHOWN_APART
            and d.name != skip
            and short_type(d.type)
            and not isinstance(d.type, t.BoolType)
        ]

    def fields(
        self, entity: ir.Entity, skip: str | None, level: int = 3
    ) -> tuple[list[str], dict[str, Markup], list[tuple[str, Markup]]]:
        """(flags, short values by field, long values as lines) of an entity; `level`: its heading's, under
        which headings in its Markdown fields go (as in its description)."""
        kind = self.ruleset.kinds[entity.kind]
        flags, short, lines = [], {}, []
        for decl in kind.fields.values():
            if decl.name not in entity.fields or decl.name in _SHOWN_APART or decl.name == skip:
                continue
            value = entity.fields[decl.name]
            if isinstance(decl.type, t.BoolType):
                if value is True:
                    flags.append(heading(decl.name))
                elif decl.default is None:
                    short[decl.name] = self.values.value(decl.type, value)
            elif short_type(decl.type):
                short[decl.name] = self.values.value(decl.type, value)
            elif isinstance(decl.type, t.MarkdownType) and isinstance(value, str):
                lines.append((heading(decl.name), markdown(value, heading_offset=level)))
            else:
                lines.append((heading(decl.name), self.values.value(decl.type, value)))
        return flags, short, lines

    def mechanic_odds(self, entity: ir.Entity, level: int) -> Markup | None:
        """The exact odds of a pool, highest-die or roll-under mechanic, as a section headed at `level`."""
        pool = self.values.pool_odds(entity)
        if pool is not None:
            return self.parts.pool_odds(pool, level)
        outcomes = self.values.highest_odds(entity) or self.values.under_odds(entity)
        if outcomes is not None:
            return self.parts.outcome_odds(outcomes, level)
        total = total_mechanic(entity)
        if total is None or (total.explode_on is None and total.fumble_on is None):
            return None  # plain dice: its die's own odds say it
        shown = total_odds(total)
        if shown is None:
            return None
        span, lines = shown
        return Markup(
            '<section class="odds"><h{0}>Chance of each result <small>{1}</small></h{0}>{2}</section>'
        ).format(level, span, odds_table(lines))

    def entity_data(self, entity: ir.Entity, skip: str | None, level: int) -> EntityView:
        """What the templates show of an entity. `skip`: the field naming the parent whose page it is on;
        `level`: its heading's level on that page."""
        flags, short, lines = self.fields(entity, skip, level)
        description = entity.fields.get("description")
        aliases = entity.fields.get("aliases")
        kind = entity.kind
        parent = self.parent_of(kind, entity.id)
        table = self.values.table(entity) if self.ruleset.kinds[kind].has_rows else None
        short_items = [(heading(name), value) for name, value in short.items()]
        table_html = self.parts.table_view(table, entity.id) if table is not None else None
        preview_table = self.parts.table_view(table.unanchored(), entity.id) if table is not None else None
        if preview_table is not None and len(preview_table) >= PREVIEW_TABLE:
            preview_table = None
        data = EntityView(
            kind=kind,
            kind_title=self.kind_title(kind),
            id=entity.id,
            name=entity.name,
            label=self.values.label(kind, entity.id),
            heading=entity.name if skip else self.values.label(kind, entity.id),
            level=level,
            context=self.values.label(*parent) if parent is not None else "",
            flags=flags,
            short=short,
            short_items=short_items,
            lines=lines,
            aliases=[a for a in aliases if isinstance(a, str)] if isinstance(aliases, tuple) else [],
            uncertain=_text(entity, "uncertain"),
            note=_text(entity, "note"),
            source=_text(entity, "source"),
            origin=self.origins.get((kind, entity.id)),
            description=markdown(description, heading_offset=level) if isinstance(description, str) else None,
            summary=first_paragraph(description) if isinstance(description, str) else None,
            backlinks=self.backlink_lines(kind, entity.id),
            graph=self.lifepath_graph(entity),
            table_html=table_html,
            preview_table=preview_table,
            odds_html=self.mechanic_odds(entity, level + 1) if kind == "mechanic" else None,
            flags_html=Markup("").join(Markup(' <span class="flag">{}</span>').format(f) for f in flags),
            facts_html=_pairs("facts", short_items),
            lines_html=_pairs("lines", lines),
        )
        data = dataclasses.replace(data, has_body=True, authors_html=self.authors(entity))
        data = dataclasses.replace(data, preview=self.preview(data))
        return dataclasses.replace(data, body_html=self.body(data))

    def without_backlinks(self, data: EntityView) -> EntityView:
        """An owner's own card: who names it comes at the end of its page, after what it holds."""
        head = dataclasses.replace(data, backlinks=[])
        head = dataclasses.replace(head, body_html=self.body(head))
        return head

    def body(self, data: EntityView) -> Markup:
        """Everything below an entity's heading and columns. Built here rather than in a template macro:
        it is called for every entity, and a macro call cost a fifth of the build."""
        parts: list[str] = []
        if data.origin:
            changed = '<a href="changes.html">What this ruleset changes</a>'
            parts.append(f'<p class="origin">{escape(data.origin)} {changed}</p>')
        if data.aliases:
            parts.append(f'<p class="aliases">Also written: {escape(", ".join(data.aliases))}</p>')
        if data.uncertain:
            parts.append(f'<p class="uncertain"><strong>Uncertain:</strong> {escape(data.uncertain)}</p>')
        parts.append(data.lines_html)
        if data.description:
            parts.append(f'<div class="description">{data.description}</div>')
        if data.note:
            parts.append(f'<p class="note">{escape(data.note)}</p>')
        parts += [data.table_html or "", data.odds_html or ""]
        if data.backlinks:
            parts.append(backlinks_list(data))
        if data.graph:
            summary = "<summary>Where it can come from and lead to</summary>"
            parts.append(f'<details class="graph" hidden>{summary}</details>')
        if data.source:
            parts.append(f'<p class="source">Source: {escape(data.source)}</p>')
        parts.append(data.authors_html)
        return Markup("\n".join(p for p in parts if p))

    def written_as(self, file: str) -> str:
        """A file as the ruleset names it (its path in the ruleset folder), else its name; found once per file
        (per entity, the search was the number of files times the number of entities)."""
        shown = self._written.get(file)
        if shown is None:
            sources = (name for name, _ in self.ruleset.sources)
            written = next((name for name in sources if file == name or file.endswith("/" + name)), None)
            shown = self._written[file] = written or file.rsplit("/", 1)[-1]
        return shown

    def authors(self, entity: ir.Entity) -> Markup:
        """What an author looks for and a player need not read: the entity's kind and id, the file and line it
        is written at, and its JSON (as the package's data and `rulesdsl export` give it)."""
        file = entity.file or entity.pos.file
        where = f"{self.written_as(file)}:{entity.pos.line}"
        # on one line (the browser wraps it): indented, it was 40% of a list page's bytes, which players load too
        text = json.dumps(jsonform.document(entity), ensure_ascii=False, separators=(", ", ": "))
        shown = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")  # text of a <pre>
        return Markup(
            '<details class="authors"><summary>For authors</summary><p>Id <code>{}:{}</code>, written in '
            "<code>{}</code></p><pre>{}</pre></details>"
        ).format(entity.kind, entity.id, where, Markup(shown))

    def preview(self, data: EntityView) -> Markup:
        """What a hover or a tap on a link to the entity shows: what it is, its fields, its description's
        first paragraph, a small table whole."""
        where = data.kind_title + (f" · {data.context}" if data.context else "")
        parts = [
            Markup('<p class="pv-kind">{}</p><p class="pv-name">{}{}</p>').format(where, data.label, data.flags_html),
            data.facts_html,
            data.lines_html,
        ]
        if data.summary:
            parts.append(Markup('<div class="description">{}</div>').format(data.summary))
        if data.preview_table:
            parts.append(data.preview_table)
        return Markup("").join(parts)

    def backlink_lines(self, kind: str, id_: str) -> list[tuple[str, int, Markup]]:
        lines = []
        for (source_kind, name), ids in sorted(
            self.back.of(kind, id_).items(),
            key=lambda item: (list(self.ruleset.entities).index(item[0][0]), item[0][1]),
        ):
            title = f"{self.kind_title(source_kind)} with it in {heading(name).lower()} ({len(ids)})"
            lines.append((title, len(ids), self.grouped_links(source_kind, ids)))
        return lines

    def grouped_links(self, kind: str, ids: list[str]) -> Markup:
        """Links to entities; nested ones grouped under their parents ("Peasant Setting: Farmer, Miller")."""
        if kind not in self.parents or len(ids) <= 3:
            return Markup(", ").join(self.values.link(kind, i) for i in ids)
        groups: dict[tuple[str, str] | None, list[str]] = {}
        for id_ in ids:
            groups.setdefault(self.parent_of(kind, id_), []).append(id_)
        items = []
        for parent, members in groups.items():
            links = Markup(", ").join(self.values.link(kind, i, self.ruleset.entities[kind][i].name) for i in members)
            if parent is None:
                items.append(Markup("<li>{}</li>").format(links))
            else:
                items.append(Markup("<li>{}: {}</li>").format(self.values.link(*parent), links))
        return Markup('<ul class="grouped">{}</ul>').format(Markup("").join(items))

    def render_entity(
        self,
        entity: ir.Entity,
        columns: list[str] | None,
        skip: str | None,
        level: int,
        found: list[Facet] | None = None,
    ) -> Rendered:
        """As a row of its listing (`columns` given) or as a card of its own; `found`: its list's facets,
        whose values it carries for the page's filters. Taken from the memo when nothing it is made of changed
        (see RenderMemo)."""
        memo = self.memo
        if memo is None or entity.kind == "mechanic":
            return self._render_entity(entity, columns, skip, level, found)
        key = (entity.kind, entity.id, None if columns is None else tuple(columns), skip, level, found is None)
        back = tuple(
            (source, tuple((i, self.ruleset.entities[source[0]][i].name, self.parent_of(source[0], i)) for i in ids))
            for source, ids in self.back.of(entity.kind, entity.id).items()
        )
        graph = self.lifepath_graph(entity)
        deps: object = (entity, None if found is None else tuple(found), back, graph)
        if memo.digests is not None:
            deps = self._digest_of(memo.digests, entity, found, back, graph)
        kept = memo.entries.get(key)
        if kept is not None and deps is not None and kept[0] == deps:
            rendered = kept[1]
            memo_hit = True
        else:
            rendered = self._render_entity(entity, columns, skip, level, found)
            memo_hit = False
            memo.made.append(key)
        memo.used[key] = (deps, rendered)
        memo.reused += memo_hit
        return rendered

    def _digest_of(
        self, digests: Digests, entity: ir.Entity, found: list[Facet] | None, back: object, graph: LifepathGraph | None
    ) -> str | None:
        """What render_entity compares, as a digest (across runs): the entity's and the facets' are made
        once each (an entity is a row and a card; a list's facets are the same for every row)."""
        own = digests.of(entity)
        facets = None if found is None else digests.of(found)
        if own is None or (found is not None and facets is None):
            return None
        return digest((own, facets, back, graph))

    def _render_entity(
        self,
        entity: ir.Entity,
        columns: list[str] | None,
        skip: str | None,
        level: int,
        found: list[Facet] | None,
    ) -> Rendered:
        data = self.entity_data(entity, skip, level)
        attributes = self.facet_attributes(entity, found) if found is not None else ""
        if columns is not None:
            decls = self.ruleset.kinds[entity.kind].fields
            numbers = {}
            for c in columns if found is not None else []:
                value = entity.fields.get(c)
                if value is None or reads_as_number(decls[c].type):  # site.js reads "6 yrs" as 6 itself
                    continue
                number = sort_number(decls[c].type, value)
                if number is not None:
                    numbers[c] = str(number.numerator) if number.denominator == 1 else f"{float(number):g}"
                elif sort_kind(decls[c].type) == "number":
                    numbers[c] = ""  # not a number ("6 + Will"): sorted after the numbers
            html = entity_row(data, columns, numbers, attributes)
        else:
            html = entity_card(data, level, attributes)
        return Rendered(entity.kind, entity.id, html, data.preview, self.search_texts(data), data.graph)

    def facet_attributes(self, entity: ir.Entity, found: list[Facet]) -> str:
        """An entry's values for its list's filters, as attributes of its element (see facets.py)."""
        kind = self.ruleset.kinds[entity.kind]
        data = entry_data(kind, entity, found, self.values.label)
        attributes = f' data-f="{data}"' if data else ""
        texts = entry_texts(kind, entity, found, self.values.label)
        for n, facet in enumerate(found):
            if facet.is_text and facet.field in texts:
                attributes += f' data-t{n}="{escape(texts[facet.field])}"'
        return attributes

    def search_texts(self, data: EntityView) -> list[tuple[str, int, str]]:
        """Every word the entry shows, weighted (its name, its aliases, everything else, its description),
        with the field it is in, for a result to say where it matched."""
        texts = [(data.name, NAME, ""), (data.label, OTHER, ""), *((a, ALIAS, "") for a in data.aliases)]
        shown = [
            *((heading(name), value) for name, value in data.short.items()),
            *data.lines,
            ("Table", data.table_html),
        ]
        texts += [(text_of(str(v)), OTHER, label) for label, v in shown if v]
        if data.description:
            texts.append((text_of(str(data.description)), DESCRIPTION, ""))
        texts += [(flag, OTHER, "") for flag in data.flags]
        said = [("Note", data.note), ("Uncertain", data.uncertain), ("Source", data.source)]
        texts += [(text, OTHER, label) for label, text in said if text]
        return texts

    def came_from(self, kind: str, parent_kind: str, parent_id: str, lead_fields: list[str]) -> dict[str, int]:
        """Other parents whose children lead into this one, with how many do (shared by its children)."""
        key = (kind, parent_id)
        if key not in self._came:
            came: dict[str, int] = {}
            for (source_kind, name), ids in self.back.of(parent_kind, parent_id).items():
                if source_kind == kind and name in lead_fields:
                    for id_ in ids:
                        parent = self.parent_of(kind, id_)
                        if parent is not None and parent[1] != parent_id:
                            came[parent[1]] = came.get(parent[1], 0) + 1
            self._came[key] = came
        return self._came[key]

    def lifepath_graph(self, entity: ir.Entity) -> LifepathGraph | None:
        """Where an entity of a nested kind that leads to parents (a lifepath's leads) can come from and go
        (what the page's script draws when a reader opens it)."""
        kind = entity.kind
        if kind not in self.parents:
            return None
        own_field, parent_kind = self.parents[kind]
        lead_fields = self.lead_fields(kind, parent_kind)
        own = entity.fields.get(own_field)
        if not lead_fields or not isinstance(own, ir.Ref):
            return None
        came = self.came_from(kind, parent_kind, own.target, lead_fields)
        named = self.named[(kind, entity.id)]
        required = list(
            dict.fromkeys(
                target
                for d in self.ruleset.kinds[kind].own_fields
                if isinstance(d.type, t.RequirementType)
                for k, target in named.get(d.name, ())
                if k == kind
            )
        )
        leads = [target for name in lead_fields for _, target in named.get(name, ())]
        sources = [own.target, *came]
        targets = list(dict.fromkeys([own.target, *leads]))
        return LifepathGraph(
            came_from=[(parent_kind, s, came.get(s, 1)) for s in sources],
            required=[(kind, r) for r in required],
            leads_to=[(parent_kind, s) for s in targets],
        )

    def lead_fields(self, kind: str, target: str) -> list[str]:
        """A kind's fields listing entities of `target` kind (a lifepath's leads, to settings)."""
        return [
            d.name
            for d in self.ruleset.kinds[kind].own_fields
            if isinstance(d.type, t.ListType) and d.type.item == t.RefType(target)
        ]

    def leads_graph(self, parent: str, parent_id: str) -> tuple[str, Markup] | None:
        """For an entity whose children are themselves owners (a stock's settings), the leads between them:
        (what they are, the drawing)."""
        members = self.children.get((parent, parent_id), {})
        for kind, ids in members.items():
            for child_kind, (_, owner) in self.parents.items():
                lead_fields = self.lead_fields(child_kind, kind) if owner == kind else []
                if lead_fields:
                    drawing = self._leads_graph(parent, parent_id, kind, ids, child_kind, lead_fields)
                    return self.kind_title(kind).lower(), drawing
        return None

    def _leads_graph(
        self, parent: str, parent_id: str, kind: str, ids: list[str], child_kind: str, lead_fields: list[str]
    ) -> Markup:
        counts: dict[tuple[str, str], int] = {}
        for id_ in ids:
            for child in self.children.get((kind, id_), {}).get(child_kind, []):
                entity = self.ruleset.entities[child_kind][child]
                for target in dict.fromkeys(
                    r.target for n in lead_fields for r in ir.refs_in(entity.fields.get(n, ()))
                ):
                    counts[(id_, target)] = counts.get((id_, target), 0) + 1
        outside = [target for _, target in counts if target not in ids]
        nodes = [graphs.Node(i, self.values.label(kind, i), href(kind, i), "member") for i in ids]
        nodes += [graphs.Node(i, self.values.label(kind, i), href(kind, i), "outside") for i in dict.fromkeys(outside)]
        edges = [
            graphs.Edge(a, b, n, f"{self.values.label(kind, a)} → {self.values.label(kind, b)}: {n} lifepath(s)")
            for (a, b), n in counts.items()
            if a != b
        ]
        name = self.ruleset.entities[parent][parent_id].name
        title = f"Leads between the {self.kind_title(kind).lower()} of {name}"
        description = "; ".join(
            f"{self.values.label(kind, a)} leads to {self.values.label(kind, b)}" for (a, b) in counts if a != b
        )
        return graphs.layered(parent_id, title, nodes, edges, description)

    # ------------------------------------------------------------ listings

    def listing(
        self, kind: str, ids: list[str], skip: str | None, level: int, found: list[Facet] | None = None
    ) -> tuple[list[Rendered], list[str] | None]:
        """Entities as rows of the book's compact columns, or as cards (tables, mechanics: they need room);
        `found`: the list's facets, when it has them."""
        columns = None if self.as_cards(kind) else self.columns_of(kind, ids, skip)
        entities = self.ruleset.entities[kind]
        return [self.render_entity(entities[i], columns, skip, level, found) for i in ids], columns

    def facets(self, kind: str, ids: list[str] | None = None, skip: str | None = None) -> list[Facet]:
        """The filters of a list of a kind's entities (all of them by default), from the kind's declaration
        and the values the entries hold; `skip`: the field naming the parent the list is in."""
        entities = [self.ruleset.entities[kind][i] for i in (self.order[kind] if ids is None else ids)]
        return facets(self.ruleset.kinds[kind], entities, skip, self.values.label)

    def sorts(self, kind: str, columns: list[str] | None) -> list[tuple[str, str]] | None:
        """Each column of a list, the name's first, with how it sorts (cards do not sort)."""
        if columns is None:
            return None
        decls = self.ruleset.kinds[kind].fields
        return [("name", "text"), *((c, sort_kind(decls[c].type)) for c in columns)]

    def as_cards(self, kind: str) -> bool:
        return self.ruleset.kinds[kind].has_rows or kind == "mechanic"

    def summary(self, kind: str, ids: list[str], skip: str | None) -> Markup:
        """Entities with pages of their own, one row each: a link, their short fields, how many they hold."""
        columns = self.columns_of(kind, ids, skip)
        held = [k for k in self.ruleset.entities if any(k in self.children.get((kind, i), {}) for i in ids)]
        rows: list[SummaryRow] = []
        for id_ in ids:
            entity = self.ruleset.entities[kind][id_]
            flags, short, _ = self.fields(entity, skip)
            rows.append(
                SummaryRow(
                    link=self.values.link(kind, id_, entity.name),
                    flags=flags,
                    cells=[short.get(c, Markup("")) for c in columns],
                    counts=[len(self.children.get((kind, id_), {}).get(k, [])) for k in held],
                )
            )
        headers = [heading(c) for c in columns] + [self.kind_title(k) for k in held]
        return self.parts.summary_table(rows, headers)

    # ------------------------------------------------------------ pages

    def crumbs(self, kind: str | None, parent: tuple[str, str] | None = None) -> list[tuple[str, str]]:
        """The breadcrumb trail above a page: the reference, the ruleset, the kind, the parent."""
        trail = [("../index.html", "Reference"), ("index.html", self.ruleset.title)]
        if kind is not None:
            trail.append((f"{kind}.html", self.kind_title(kind)))
        if parent is not None:
            trail.append((href(*parent), self.values.label(*parent)))
        return trail

    def common(self, title: str, name: str, crumbs: Crumbs | None = None) -> Common:
        if crumbs is None:
            crumbs = self.crumbs(None) if name != "index.html" else [("../index.html", "Reference")]
        return Common(crumbs, self.ruleset, self.counts, self.nav, __version__, "../", title, name, self.has_language)

    def build(self) -> None:
        for kind in self.ruleset.entities:
            if kind in self.owners:
                self.owner_pages(kind)
            elif kind not in self.parents:
                self.flat_pages(kind)
        for kind in self.ruleset.entities:
            if kind in self.owners or kind in self.parents:
                self.contents_page(kind)
        index = self.common(self.ruleset.title, "index.html")
        self.add_page(
            Page("index.html", "html/ruleset.html", RulesetPage(index, self.ruleset_contents(), self.bases()))
        )
        kinds = self.common("Kinds and their fields", "kinds.html")
        self.add_page(Page("kinds.html", "html/kinds.html", KindsPage(kinds, kinds=self.kind_fields())))
        # last: its links are to every page above
        title = "Character builder" if self.ruleset.entities.get("lifepath") else "Roll a character"
        builder = BuilderPage(
            self.common(title, "builder.html"), bool(self.ruleset.entities.get("lifepath")), self.builder_data()
        )
        self.add_page(Page("builder.html", "html/builder.html", builder))

    def given_keys(self) -> dict[str, list[list[list[str]]]]:
        """Per table rolled for a key it is given (`roll: region, 1d20`): per such key, the names its rows
        are keyed by, each [what the key matches, its label], for the builder to offer (none: a number)."""
        found: dict[str, list[list[list[str]]]] = {}
        for table_id, table in self.ruleset.entities.get("table", {}).items():
            roll = table.fields.get("roll")
            if not isinstance(roll, ir.Roll) or not roll.given:
                continue
            per_key: list[list[list[str]]] = []
            for index in range(len(roll.given)):
                seen: dict[str, str] = {}
                for row in table.rows:
                    key = row.keys[index] if index < len(row.keys) else None
                    if isinstance(key, ir.NameKey) and key.name not in seen:
                        ref = key.ref
                        named = self.ruleset.entities.get(ref.kind, {}).get(key.name) if ref is not None else None
                        seen[key.name] = named.name if named is not None else key.text
                per_key.append([[name, label] for name, label in seen.items()])
            found[table_id] = per_key
        return found

    def builder_data(self) -> Markup:
        """What builder.js needs beyond rules.js: where each entry the builder names is in the reference, and
        the dice of each characteristic (a table keyed by attribute with a dice column: `STR -> 3d6 * 5`)."""
        links = {
            kind: {
                id_: self.urls[(kind, id_)] for id_ in self.ruleset.entities.get(kind, {}) if (kind, id_) in self.urls
            }
            for kind in ("lifepath", "setting", "skill", "stock", "trait", "table", "attribute")
        }
        attributes = self.ruleset.entities.get("attribute", {})
        dice: dict[str, list[str]] = {}
        for table_id, table in self.ruleset.entities.get("table", {}).items():
            keys, cols = table.fields.get("keys"), table.fields.get("columns")
            if not (isinstance(keys, tuple) and len(keys) == 1 and isinstance(cols, tuple)):
                continue
            key = keys[0]
            if not (isinstance(key, ir.Column) and isinstance(key.type, t.RefType) and key.type.kind == "attribute"):
                continue
            rolled = [c.name for c in cols if isinstance(c, ir.Column) and isinstance(c.type, t.DiceType)]
            for row in table.rows if rolled else ():
                named = row.keys[0] if row.keys else None
                if isinstance(named, ir.NameKey) and named.name in attributes:
                    dice.setdefault(named.name, [table_id, named.name, rolled[0]])
        data = {
            "ruleset": self.ruleset.id,
            "title": self.ruleset.title,
            "links": links,
            "dice": dice,
            "given": self.given_keys(),
        }
        text = json.dumps(data, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
        return Markup(text.replace("<", "\\u003c"))

    def add_page(self, page: Page, owner: tuple[str, str] | None = None) -> None:
        if owner is not None:
            self.urls.setdefault(owner, page.name)
        for entry in page.entries:
            self.urls.setdefault((entry.kind, entry.id), f"{page.name}#{entry.id}")
        self.pages.append(page)

    def flat_pages(self, kind: str) -> None:
        found = self.facets(kind)
        rendered, columns = self.listing(kind, self.order[kind], None, 2, found)
        chunks = pack(rendered)
        title = self.kind_title(kind)
        headers = [heading(c) for c in columns] if columns is not None else None
        sorts = self.sorts(kind, columns)
        if len(chunks) == 1:
            common = self.common(title, f"{kind}.html", self.crumbs(None))
            listing = ListingPage(common, kind, headers, None, found, sorts, len(rendered))
            self.add_page(Page(f"{kind}.html", "html/listing.html", listing, rendered))
            return
        ranges = []
        for n, chunk in enumerate(chunks, start=1):
            first = self.ruleset.entities[kind][chunk[0].id].name
            last = self.ruleset.entities[kind][chunk[-1].id].name
            ranges.append(PagePart(f"{kind}.{n}.html", first, last, len(chunk)))
        for n, chunk in enumerate(chunks, start=1):
            name = f"{kind}.{n}.html"
            title_n = f"{title}: {ranges[n - 1].first} to {ranges[n - 1].last}"
            common = self.common(title_n, name, self.crumbs(kind))
            listing = ListingPage(common, kind, headers, ranges, found, sorts, len(chunk))
            self.add_page(Page(name, "html/listing.html", listing, chunk))
        letters: dict[str, list[tuple[str, Markup, Markup]]] = {}
        for id_ in self.order[kind] if len(self.order[kind]) <= CONTENTS_LIMIT else []:
            label = self.values.label(kind, id_)
            data = Markup(' class="entity"' + self.facet_attributes(self.ruleset.entities[kind][id_], found))
            letters.setdefault(label[:1].upper(), []).append((label, self.values.link(kind, id_), data))
        common = self.common(title, f"{kind}.html")
        contents = ContentsPage(common, kind, [], ranges, letters, found if letters else None)
        self.add_page(Page(f"{kind}.html", "html/contents.html", contents))

    def owner_pages(self, kind: str) -> None:
        for id_ in self.order[kind]:
            entity = self.ruleset.entities[kind][id_]
            data = self.entity_data(entity, None, 1)
            sections: list[Section] = []
            more: list[Section] = []
            held = self.children.get((kind, id_), {})
            lists = [k for k in held if k not in self.owners]  # one list of entries filters by the URL
            for child_kind, ids in held.items():
                own = self.parents[child_kind][0]
                title = self.kind_title(child_kind)
                if child_kind in self.owners:  # with pages of their own: one row each, linked
                    sections.append(Section(child_kind, title, len(ids), self.summary(child_kind, ids, own), [], None))
                else:
                    found = self.facets(child_kind, ids, own) if len(lists) == 1 else None
                    rendered, columns = self.listing(child_kind, ids, own, 3, found)
                    chunks = pack(rendered)
                    headers = [heading(c) for c in columns] if columns is not None else None
                    sorts = self.sorts(child_kind, columns) if found is not None else None
                    section = Section(child_kind, title, len(ids), None, chunks[0], headers, found, sorts)
                    sections.append(section)
                    more += [dataclasses.replace(section, entries=chunk) for chunk in chunks[1:]]
            graph = self.leads_graph(kind, id_)
            name = f"{kind}.{id_}.html"
            parts = [name] + [f"{kind}.{id_}.{n}.html" for n in range(2, len(more) + 2)]
            context = OwnerPage(
                common=self.common(data.label, name, self.crumbs(kind, self.parent_of(kind, id_))),
                kind=kind,
                entity=data,
                head=entity_card(self.without_backlinks(data), 1),
                named=backlinks_list(data) if data.backlinks else None,
                graph=graph[1] if graph else None,
                graph_kind=graph[0] if graph else "",
                parts=parts,
                part=1,
                sections=sections,
            )
            page = Page(name, "html/owner.html", context)
            page.entries = [e for s in sections for e in s.entries]
            self.add_page(page, owner=(kind, id_))
            self.owner_texts[name] = (kind, id_, data)
            for n, section in enumerate(more, start=2):
                common_n = dataclasses.replace(context.common, page=parts[n - 1])
                context_n = dataclasses.replace(
                    context, common=common_n, part=n, head=None, graph=None, sections=[section]
                )
                self.add_page(Page(parts[n - 1], "html/owner.html", context_n, section.entries))

    def contents_page(self, kind: str) -> None:
        """The kind's page: owners as rows grouped by their parent; nested kinds by parent (and grandparent)."""
        title = self.kind_title(kind)
        groups: list[Group] = []
        if kind in self.owners:
            skip = self.parents[kind][0] if kind in self.parents else None
            for parent, ids in self.grouped(kind):
                groups.append(Group(self.values.link(*parent) if parent else None, self.summary(kind, ids, skip)))
        else:
            parent_kind = self.parents[kind][1]
            total = len(self.order[kind])
            for grand, parent_ids in self.grouped(parent_kind):
                members = []
                for parent_id in parent_ids:
                    ids = self.children.get((parent_kind, parent_id), {}).get(kind, [])
                    links = [self.values.link(kind, i, self.ruleset.entities[kind][i].name) for i in ids]
                    head = self.values.link(parent_kind, parent_id)
                    members.append(Member(head, len(ids), links if total <= CONTENTS_LIMIT else []))
                groups.append(Group(self.values.link(*grand) if grand else None, members=members))
        common = self.common(title, f"{kind}.html")
        contents = ContentsPage(common, kind=kind, groups=groups, ranges=None, letters=None)
        self.add_page(Page(f"{kind}.html", "html/contents.html", contents))

    def grouped(self, kind: str) -> list[tuple[tuple[str, str] | None, list[str]]]:
        """A kind's ids grouped by their parent (in the parent's order), or all in one group."""
        if kind not in self.parents:
            return [(None, self.order[kind])]
        parent_kind = self.parents[kind][1]
        groups: dict[str, list[str]] = {p: [] for p in self.order[parent_kind]}
        for id_ in self.order[kind]:
            parent = self.parent_of(kind, id_)
            if parent is not None:
                groups[parent[1]].append(id_)
        return [((parent_kind, p), ids) for p, ids in groups.items() if ids]

    def ruleset_contents(self) -> list[Holding]:
        """Top-level owners (stocks) with what they hold (settings): the book's contents."""
        groups = []
        for kind in self.ruleset.entities:
            if kind not in self.owners or kind in self.parents:
                continue
            for id_ in self.order[kind]:
                held = [
                    (self.kind_title(k), [self.values.link(k, i, self.ruleset.entities[k][i].name) for i in ids])
                    for k, ids in self.children.get((kind, id_), {}).items()
                    if k in self.owners
                ]
                groups.append(Holding(self.values.link(kind, id_), held))
        return groups

    def kind_fields(self) -> list[KindInfo]:
        shown = [k for k in self.ruleset.kinds if k in self.ruleset.entities or k in self.ruleset.own_kinds]
        return [self.kind_info(self.ruleset.kinds[k]) for k in shown]

    def kind_info(self, kind: Kind) -> KindInfo:
        rows = []
        for decl in kind.fields.values():
            default = json.dumps(value_json(decl.default), ensure_ascii=False) if decl.default is not None else ""
            rows.append(
                FieldRow(
                    name=decl.name,
                    type=t.type_text(decl.type) + ("?" if decl.optional else ""),
                    required=not decl.optional and decl.default is None,
                    default=default,
                    doc=decl.doc or "",
                    common=decl.name in COMMON_NAMES,
                )
            )
        count = len(self.ruleset.entities.get(kind.name, {}))
        return KindInfo(kind.name, kind.title, kind.builtin, rows, count, f"{kind.name}.schema.json")

    # ------------------------------------------------------------ output

    def resolve(self, text: str) -> str:
        """`text` with its link placeholders made links: to the entity's page, or its kind's if it has none.
        (Split and joined, not `sub` with a function: that was a call and a match object per link, 275,000 of
        them at 10,000 lifepaths.)"""
        parts = PLACEHOLDER.split(text)  # text, kind, id, text, kind, id, ..., text
        if len(parts) > 1:
            urls = self.urls
            links = zip(parts[1::3], parts[2::3], strict=True)
            parts[1::3] = ['href="' + urls.get((kind, id_), kind + ".html") + '"' for kind, id_ in links]
            parts[2::3] = [""] * (len(parts) // 3)
        return "".join(parts)

    def files(self, search: SearchIndex) -> dict[str, str]:
        prefix = f"{self.ruleset.id}/"
        files: dict[str, str] = {}
        changed = {(c.kind, c.id) for c in (*self.ruleset.changes.added, *self.ruleset.changes.patched)}
        bases = self.ruleset.extends

        def inherited(kind: str, id_: str) -> bool:
            """Taken unchanged from a base, whose entry in the search says it is here too."""
            return bool(bases) and (kind, id_) not in changed and search.add_also(bases, kind, id_, self.ruleset.id)

        for page in self.pages:
            template = self.env.get_template(page.template)
            files[prefix + page.name] = self.resolve(template.render(page_context(page.context), entries=page.entries))
            previews = {e.id: self.resolve(str(e.preview)) for e in page.entries}
            if page.name in self.owner_texts:
                kind, id_, data = self.owner_texts[page.name]
                previews[""] = self.resolve(str(data.preview))
                if not inherited(kind, id_):
                    search.add(
                        self.ruleset.id,
                        kind,
                        self.kind_title(kind),
                        data.label,
                        prefix + page.name,
                        "",
                        self.context_of(kind, id_),
                        self.search_texts(data),
                        id_,
                    )
            for entry in page.entries:
                if inherited(entry.kind, entry.id):
                    continue
                search.add(
                    self.ruleset.id,
                    entry.kind,
                    self.kind_title(entry.kind),
                    self.values.label(entry.kind, entry.id),
                    prefix + page.name,
                    entry.id,
                    self.context_of(entry.kind, entry.id),
                    entry.texts,
                    entry.id,
                )
            # every page of a ruleset has a preview script, so a preview never asks for a missing file
            data_text = json.dumps(previews, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
            target = json.dumps(prefix + page.name)
            files[f"previews/{prefix}{page.name[:-5]}.js"] = (
                "window.rulesdslPreviews(" + target + ", " + data_text.replace("</", "<\\/") + ");\n"
            )
            graph_data = self.graph_data(page)
            if graph_data is not None:
                files[f"previews/{prefix}{page.name[:-5]}.graphs.js"] = (
                    "window.rulesdslGraphs(" + target + ", " + graph_data.replace("</", "<\\/") + ");\n"
                )
        for info in self.kind_fields():
            files[prefix + info.schema] = schema_file(self.ruleset.kinds[info.name])
        return files

    def graph_data(self, page: Page) -> str | None:
        """The lifepath graphs of a page, compactly: the nodes once ([label, link]), then per entity the
        nodes it comes from (with how many lead in), is required after, and leads to."""
        nodes: dict[tuple[str, str], int] = {}
        entries: dict[str, tuple[int, list[list[int]], list[int], list[int]]] = {}  # JSON arrays

        def at(kind: str, id_: str) -> int:
            return nodes.setdefault((kind, id_), len(nodes))

        for entry in page.entries:
            if entry.graph is None:
                continue
            graph = entry.graph
            entries[entry.id] = (
                at(entry.kind, entry.id),
                [[at(k, i), n] for k, i, n in graph.came_from],
                [at(k, i) for k, i in graph.required],
                [at(k, i) for k, i in graph.leads_to],
            )
        if not entries:
            return None
        table = [[self.values.label(k, i), self.urls.get((k, i), f"{k}.html")] for k, i in nodes]
        return json.dumps({"nodes": table, "graphs": entries}, ensure_ascii=True, sort_keys=True, separators=(",", ":"))

    def context_of(self, kind: str, id_: str) -> str:
        """What a search result says besides its label: the parent it sits in, else its kind."""
        parent = self.parent_of(kind, id_)
        return self.values.label(*parent) if parent is not None else ""


# ---------------------------------------------------------------- the whole site


def entity_row(e: EntityView, columns: list[str], numbers: dict[str, str] | None = None, data: str = "") -> Markup:
    """An entry as rows of its listing's table: its name and short fields in columns, the rest below.
    `numbers`: what a column's cell sorts by, where it is a number; `data`: its values for the filters."""
    numbers = numbers or {}
    cells = "".join(
        f'<td data-label="{escape(heading(c))}"'
        + (f' data-sort="{numbers[c]}"' if c in numbers else "")
        + f">{e.short.get(c, '')}</td>"
        for c in columns
    )
    level, id_ = e.level, e.id
    name = f'<h{level}><a class="anchor" href="#{id_}">{escape(e.heading)}</a>{e.flags_html}</h{level}>'
    body = f'<tr class="body"><td colspan="{len(columns) + 1}">\n{e.body_html}</td></tr>\n' if e.has_body else ""
    head = f'<tr class="head"><td class="name">{name}</td>{cells}</tr>\n'
    return Markup(f'<tbody class="entity" id="{id_}"{data}>\n{head}{body}</tbody>\n')


def entity_card(e: EntityView, level: int, data: str = "") -> Markup:
    """An entry on its own: a table or a mechanic in a listing (level 2 or 3), or the head of its page (1)."""
    if level == 1:
        where = e.kind_title + (f" · {e.context}" if e.context else "")
        head = f'<h1>{escape(e.label)}{e.flags_html}</h1>\n<p class="kind-of">{escape(where)}</p>\n'
        opening = '<section class="entity card">'
    else:
        anchor = f'<a class="anchor" href="#{e.id}">{escape(e.heading)}</a>'
        head = f"<h{level}>{anchor}{e.flags_html}</h{level}>\n"
        opening = f'<section class="entity card" id="{e.id}"{data}>'
    return Markup(f"{opening}\n{head}{e.facts_html}\n{e.body_html}</section>\n")


def backlinks_list(e: EntityView) -> Markup:
    items = "".join(f"<div><dt>{escape(title)}</dt><dd>{links}</dd></div>" for title, _, links in e.backlinks)
    return Markup(f'<dl class="backlinks">{items}</dl>')


def _pairs(css: str, items: list[tuple[str, Markup]]) -> Markup:
    """A definition list of (label, value) pairs, each in its own div (for layout)."""
    if not items:
        return Markup("")
    inner = "".join(f"<div><dt>{escape(label)}</dt><dd>{value}</dd></div>" for label, value in items)
    return Markup(f'<dl class="{css}">{inner}</dl>')


def pack(entries: list[Rendered], budget: int = PAGE_BUDGET) -> list[list[Rendered]]:
    """Entries in order, split into pages of at most `budget` characters (one entry never splits)."""
    pages: list[list[Rendered]] = [[]]
    size = 0
    for entry in entries:
        if pages[-1] and size + len(entry.html) > budget:
            pages.append([])
            size = 0
        pages[-1].append(entry)
        size += len(entry.html)
    return pages


def _text(entity: ir.Entity, name: str) -> str | None:
    value = entity.fields.get(name)
    return value if isinstance(value, str) else None


def _words(entity: ir.Entity, name: str) -> tuple[str, ...]:
    value = entity.fields.get(name, ())
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, tuple) else ()


def _refs_of(entity: ir.Entity, name: str) -> Iterator[str]:
    value = entity.fields.get(name)
    if value is not None:
        yield from (r.target for r in ir.refs_in(value))


@dataclass(frozen=True, slots=True)
class StockCounts:
    """A stock's row on the front page: how many of each kind are its own."""

    name: str
    id: str
    settings: int
    lifepaths: int
    skills: int
    traits: int
    spells: int


def by_stock(ruleset: CompiledRuleset) -> list[StockCounts]:
    """Settings, lifepaths, and stock-restricted skills, traits and spells per stock (Burning Wheel's shape).
    Counted in one pass over each kind, not once per stock: a ruleset may declare thousands of stocks."""
    entities = ruleset.entities
    stocks_of: dict[str, set[str]] = {}  # setting -> its stocks
    for setting_id, setting in entities.get("setting", {}).items():
        stocks_of[setting_id] = set(_refs_of(setting, "stock"))
    counts: dict[str, Counter[str]] = {"settings": Counter(), "lifepaths": Counter()}
    for stocks in stocks_of.values():
        counts["settings"].update(stocks)
    for lifepath in entities.get("lifepath", {}).values():
        counts["lifepaths"].update(set().union(*(stocks_of.get(s, set()) for s in _refs_of(lifepath, "setting"))))
    for kind in ("skill", "trait", "spell"):
        counts[kind + "s"] = Counter(s for e in entities.get(kind, {}).values() for s in set(_words(e, "stock")))
    return [
        StockCounts(
            stock.name,
            stock_id,
            settings=counts["settings"][stock_id],
            lifepaths=counts["lifepaths"][stock_id],
            skills=counts["skills"][stock_id],
            traits=counts["traits"][stock_id],
            spells=counts["spells"][stock_id],
        )
        for stock_id, stock in sorted(entities.get("stock", {}).items())
    ]


def _assets(files: Iterable[str]) -> dict[str, str]:
    """Copied as they are (not templates: a stylesheet or a script may well contain `{{`)."""
    env = environment()
    assert env.loader is not None
    return {f"assets/{name}": env.loader.get_source(env, f"html/{name}")[0] for name in files}


def _changes_page(ruleset: CompiledRuleset, sites: dict[str, RulesetSite]) -> dict[str, str]:
    """A homebrew's "what this changes" page (see changes.py), its links resolved in every ruleset."""

    def link(ruleset_id: str, kind: str, id_: str) -> str:
        site = sites.get(ruleset_id)
        found = site.urls.get((kind, id_), f"{kind}.html") if site is not None else "index.html"
        return found if ruleset_id == ruleset.id else f"../{ruleset_id}/{found}"

    def value(owner: CompiledRuleset, kind: str, field: str, value: ir.Value) -> Markup:
        site = sites[owner.id]
        shown = site.resolve(str(site.values.value(owner.kinds[kind].fields[field].type, value)))
        return Markup(shown if owner.id == ruleset.id else shown.replace('href="', f'href="../{owner.id}/'))

    site = sites[ruleset.id]
    context = page_context(site.common("What it changes", "changes.html", site.crumbs(None)))
    page = changes.render(ruleset, {r: s.ruleset for r, s in sites.items()}, value, link, context)
    if page is None:
        return {}
    shard = f"window.rulesdslPreviews({json.dumps(ruleset.id + '/changes.html')}, {{}});\n"
    return {f"{ruleset.id}/changes.html": site.resolve(page), f"previews/{ruleset.id}/changes.js": shard}


def render(rulesets: tuple[CompiledRuleset, ...], memo: RenderMemo | None = None) -> dict[str, str]:
    """Every file of the site, by path. With `memo` (a long-running process's), entities whose rendering
    nothing changed are taken from it, and it is left holding this render's."""
    files = _render(rulesets, memo)
    if memo is not None:
        memo.keep_only(r.id for r in rulesets)
    return files


def _render(rulesets: tuple[CompiledRuleset, ...], memo: RenderMemo | None) -> dict[str, str]:
    env = environment()
    language = _language_doc()
    files = _assets(["style.css", "site.js", "builder.js"])
    search = SearchIndex()
    summaries = []
    sites: dict[str, RulesetSite] = {}
    titles = {ruleset.id: ruleset.title for ruleset in rulesets}
    for ruleset in rulesets:
        search.add_ruleset(ruleset.id, ruleset.title)
        site = sites[ruleset.id] = RulesetSite(
            ruleset, language is not None, titles, None if memo is None else memo.site(ruleset.id)
        )
        site.build()
        files.update(site.files(search))
        urls = {id_: site.urls.get(("stock", id_), "stock.html") for id_ in ruleset.entities.get("stock", {})}
        summaries.append(Summary(ruleset, site.counts, by_stock(ruleset), urls))
    for ruleset in rulesets:
        files.update(_changes_page(ruleset, sites))
    front = SitePage("Rules reference", __version__, language is not None, summaries=summaries)
    files["index.html"] = env.get_template("html/index.html").render(template_context(front))
    search_page = SitePage("Search", __version__, language is not None)
    files["search.html"] = env.get_template("html/search.html").render(template_context(search_page))
    if language is not None:
        body, headings = document(language)
        page = SitePage("The rules language", __version__, True, body=body, headings=headings)
        files["language.html"] = env.get_template("html/language.html").render(template_context(page))
    files.update(search.files(None if memo is None else memo.search))
    return files
