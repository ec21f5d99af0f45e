"""`rulesdsl import`: a YAML or JSON list of records (a spell list, a skill table) as `.rules` blocks.

Each record becomes one block of the given kind; each value is written by the type its kind declares
(the one source of truth), read either as plain data (`actions: 10`, `element: [anima, heart]`) or in the
form `rulesdsl export` gives it (`{"text": "1d10", ...}`, requirement trees, table rows), so an export
comes back as the same rules. Every block is then read back by the compiler (parse, lowering, schema):
a record that cannot be mapped is reported with its index and field, and then nothing is written at all.

YAML as people write it: an unquoted `yes`, `on`, `12` or `1.10` is loaded as a `Spelt` string that also
knows what YAML 1.1 reads it as (True, 12, 1.1). The field's declared type decides which one counts: a
field whose values are words (`one of yes, no, expendable`, `word`, `ref`, `text`, `version`) takes it as
written, any other (`bool`, `int`, a requirement) as the value.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, assert_never

from rulesdsl.compile.kinds import Kind, record_fields
from rulesdsl.diagnostics import Diagnostic, render_json
from rulesdsl.language import fieldtypes as t
from rulesdsl.language.names import slug
from rulesdsl.language.words import TRUTH_WORDS
from rulesdsl.syntax import tree as m
from rulesdsl.syntax.written import quote
from rulesdsl.tools.fmt import NotFormatted, format_text, written_name

_META = ("kind", "id", "name", "rows")


class Unmappable(ValueError):
    """A value that cannot be written as its field's type; `path` says where inside the field it is (a record's
    field `.type`, a list's item `[1]`), added as the problem travels out."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.message, self.path = message, path

    def within(self, part: str) -> Unmappable:
        return Unmappable(self.message, part + self.path)


class Spelt(str):
    """An unquoted YAML scalar (or a JSON number) the loader read as a boolean or a number: the text as
    written, and `value`, what it was read as. Which one a record means is up to the field's type."""

    value: bool | int | float

    def __new__(cls, text: str, value: bool | int | float) -> Spelt:
        spelt = super().__new__(cls, text)
        spelt.value = value
        return spelt


def _plain(value: Any) -> Any:
    """`value` as YAML 1.1 reads it, every `Spelt` inside it replaced by its value: for the field types
    that read numbers and booleans (and the export's forms of requirements, formulas and rows)."""
    if isinstance(value, Spelt):
        return value.value
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, Mapping):
        return {_plain(key): _plain(item) for key, item in value.items()}
    return value


# What YAML 1.1 (PyYAML) reads as a boolean when unquoted, by the boolean: an option spelt like one of them
# is the one meant when the file's own spelling is not an option (`tools: Yes`, `tools: on`).
_YAML_BOOLEANS = {True: ("yes", "true", "on"), False: ("no", "false", "off")}


def _not_a_name(value: Any, what: str = "a name") -> Unmappable:
    hint = (
        " (YAML reads an unquoted yes, no, on, off, true or false as a boolean: quote it, 'yes')"
        if isinstance(value, bool)
        else ""
    )
    return Unmappable(f"{value!r} is not {what}{hint}")


def _option_for(value: Any, options: tuple[str, ...]) -> str | None:
    """The option a scalar names: the one spelt as written, else (a boolean) the one option spelt like a
    boolean of that truth (`one of yes, no, partial` given `on` or JSON's `true`)."""
    if isinstance(value, str) and value in options:
        return str(value)
    truth = value.value if isinstance(value, Spelt) else value
    if not isinstance(truth, bool):
        return None
    spelt = [o for o in options if o.lower() in _YAML_BOOLEANS[truth]]
    return spelt[0] if len(spelt) == 1 else None


def _option_text(option: str) -> str:
    """An option as the rules write it: `tools: yes` bare (lowering reads a truth word as the option)."""
    return option if option in TRUTH_WORDS else written_name(option)


@dataclass(frozen=True, slots=True)
class Problem:
    index: int | None  # the record's place in the list, from 0; None for the file as a whole
    message: str

    def text(self) -> str:
        return f"record {self.index}: {self.message}" if self.index is not None else self.message


def load_records(path: Path, kind: str) -> list[Any]:
    """The records in a file: a list, a mapping of id -> record, or `rulesdsl export`'s output, of now or
    before 0.5 (every ruleset's records of `kind`). PyYAML's safe loader only: a data file never constructs objects."""
    text = path.read_text(encoding="utf-8")
    try:
        data = _load_json(text) if path.suffix.lower() == ".json" else _load_yaml(text)
    except RecursionError:
        raise Unmappable("it is nested too deeply") from None
    if isinstance(data, Mapping) and isinstance(data.get("rulesets"), Mapping):
        found: list[Any] = []
        for ruleset in data["rulesets"].values():
            if isinstance(ruleset, Mapping):
                # the envelope (docs/export.md) holds a ruleset's entities under `entities`; before 0.5 the
                # ruleset was its entities
                entities = ruleset.get("entities") if "format" in data else ruleset
                found += list(((entities or {}).get(kind) or {}).values())
        return found
    if isinstance(data, Mapping):
        return [{"id": key, **value} if isinstance(value, Mapping) else value for key, value in data.items()]
    if isinstance(data, list):
        return data
    raise Unmappable(f"{path.name} holds {type(data).__name__}, not a list of records")


# What one file may expand to, aliases counted every time they are used: a 1 KB file of nested aliases
# (a "billion laughs") would otherwise become billions of values, and minutes and gigabytes of work.
MAX_EXPANDED_VALUES = 2_000_000
MAX_EXPANDED_BYTES = 64 << 20  # of the scalars' text


def _load_json(text: str) -> Any:
    """JSON, its numbers kept as written (`1.10` is a version to a text field, 1.1 to a number field)."""
    return json.loads(text, parse_int=lambda s: Spelt(s, int(s)), parse_float=lambda s: Spelt(s, float(s)))


def _load_yaml(text: str) -> Any:
    """PyYAML's safe loader, refusing (Unmappable) a document that expands past the limits above: the
    composed node graph is walked with a budget before anything is constructed. An unquoted boolean or
    number is loaded as a `Spelt`: what it reads as, and how it was written."""
    import yaml

    class BoundedLoader(yaml.SafeLoader):
        def construct_document(self, node: yaml.Node) -> Any:
            _check_expansion(node)
            return super().construct_document(node)

    for tag, read in (
        ("bool", yaml.SafeLoader.construct_yaml_bool),
        ("int", yaml.SafeLoader.construct_yaml_int),
        ("float", yaml.SafeLoader.construct_yaml_float),
    ):

        def spelt(loader: yaml.SafeLoader, node: yaml.ScalarNode, read: Any = read) -> Any:
            value = read(loader, node)
            return Spelt(node.value, value) if node.style is None else value

        BoundedLoader.add_constructor(f"tag:yaml.org,2002:{tag}", spelt)
    return yaml.load(text, Loader=BoundedLoader)  # a SafeLoader: constructs no objects


def _check_expansion(root: Any) -> None:
    import yaml

    values, size = 0, 0
    stack = [root]
    while stack:  # a stack, not recursion: as deep as the file nests, and an alias may even loop back
        node = stack.pop()
        values += 1
        if isinstance(node, yaml.ScalarNode):
            size += len(node.value)
        elif isinstance(node, yaml.SequenceNode):
            stack += node.value
        elif isinstance(node, yaml.MappingNode):
            stack += (part for pair in node.value for part in pair)
        if values > MAX_EXPANDED_VALUES or size > MAX_EXPANDED_BYTES:
            raise Unmappable(
                f"it expands to more than {MAX_EXPANDED_VALUES:,} values or {MAX_EXPANDED_BYTES >> 20} MiB of text"
                " (an alias counts each time it is used); nothing imported"
            )


# ---------------------------------------------------------------- values, by declared type


def _number(value: Any) -> str:
    if isinstance(value, bool):
        raise Unmappable(f"{value!r} is not a number")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Mapping) and {"num", "den"} <= value.keys():
        fraction = Fraction(value["num"], value["den"])
    elif isinstance(value, float | str):
        try:
            fraction = Fraction(str(value))
        except ValueError:
            raise Unmappable(f"{value!r} is not a number") from None
    else:
        raise Unmappable(f"{value!r} is not a number")
    if fraction.denominator == 1:
        return str(fraction.numerator)
    decimal = f"{float(fraction):.10g}"
    if Fraction(decimal) != fraction:
        raise Unmappable(f"{fraction} cannot be written as a decimal number")
    return decimal


def _range(value: Any) -> str:
    if isinstance(value, Mapping) and {"min", "max"} <= value.keys():
        low, high = value["min"], value["max"]
        if low is not None and high is not None:
            return str(low) if low == high else f"{low}..{high}"
        if low is not None:
            return f"{low}+"
        if high is not None:
            return f"<={high}"
    if isinstance(value, int | str) and not isinstance(value, bool):
        return str(value)
    raise Unmappable(f"{value!r} is not a range")


def _key(value: Any) -> str:
    """A row key: a name, or a number or range (`2-4` in a key)."""
    if isinstance(value, Mapping) and "name" in value:
        return written_name(str(value["name"]))
    if isinstance(value, Mapping) and value.get("min") is not None and value.get("max") is not None:
        low, high = value["min"], value["max"]
        return str(low) if low == high else f"{low}-{high}"
    if isinstance(value, str) and not value.strip().lstrip("-").replace("-", "").isdigit():
        return written_name(value)
    return _range(value)


def _ratio(value: Any) -> str:
    if isinstance(value, Mapping) and {"num", "den"} <= value.keys():
        return f"x{value['num']}" + (f"/{value['den']}" if value["den"] != 1 else "")
    if isinstance(value, str) and value.startswith("x"):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return f"x{value}"
    raise Unmappable(f"{value!r} is not a multiplier")


def _text_of(value: Any, what: str) -> str:
    """Formulas and dice: export's `{"text": ...}`, or the text itself."""
    if isinstance(value, Mapping) and isinstance(value.get("text"), str):
        return str(value["text"])
    if isinstance(value, str | int) and not isinstance(value, bool):
        return str(value)
    raise Unmappable(f"{value!r} is not {what}")


def _requirement(value: Any, nested: bool = False) -> str:
    if isinstance(value, str):
        return value
    if not isinstance(value, Mapping):
        raise Unmappable(f"{value!r} is not a requirement")
    if "any" in value or "all" in value:
        word = " or " if "any" in value else " and "
        text = word.join(_requirement(item, True) for item in value.get("any", value.get("all")) or [])
        return f"({text})" if nested else text
    if "not" in value:
        return "not " + _requirement(value["not"], True)
    for key, prefix in (("lifepath", ""), ("trait", "trait "), ("skill", "skill "), ("previous", "previous = ")):
        if key in value:
            return prefix + written_name(str(value[key]))
    if isinstance(value.get("holds"), Mapping):
        return f"{value['holds']['kind']} {value['holds']['id']}"
    if value.get("gm_permission"):
        return "gm_permission"
    if "count" in value:
        of = value.get("of") or {}
        if of.get("lifepaths"):
            selector = "(" + ", ".join(written_name(str(r)) for r in of["lifepaths"]) + ")"
        else:
            selector = "lifepaths"
            if of.get("setting"):
                selector += " in setting " + written_name(str(of["setting"]))
            if of.get("tag"):
                selector += " tagged " + written_name(str(of["tag"]))
        return f"{value['count']} of {selector}"
    if "condition" in value:
        if "in" in value:
            return f"{value['condition']} in {_range(value['in']).replace('+', '..')}"
        return f"{value['condition']} {value['op']} {value['value']}"
    raise Unmappable(f"{value!r} is not a requirement")


def _stat(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        parts = [
            f"{value[k]:+d} {u}" for k, u in (("mental", "M"), ("physical", "P"), ("either", "M/P")) if value.get(k)
        ]
        return ", ".join(parts) or "none"
    raise Unmappable(f"{value!r} is not a stat bonus")


def _choices(value: Any, item: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value} pt{'s' * (value != 1)}"
    if isinstance(value, Mapping) and "points" in value:
        points = int(value["points"])
        options = []
        for option in value.get("items") or []:
            choice = option.get("one_of") if isinstance(option, Mapping) else [option]
            options.append(" or ".join(written_name(str(c)) for c in choice or []))
        head = f"{points} pt{'s' * (points != 1)}"
        return head + (": " + ", ".join(options) if options else "")
    if isinstance(value, str):
        return value
    raise Unmappable(f"{value!r} is not a {item} point budget")


def _offer(value: Any, item: str) -> str:
    """`{"fixed": [a], "choices": [{"count": 1, "of": [b, c]}]}` as written: `a, 1 of (b, c)`."""
    if not isinstance(value, Mapping) or not isinstance(value.get("fixed", []), list):
        raise Unmappable(f"{value!r} is not {item}s to choose from")
    written = [written_name(str(name)) for name in value.get("fixed", [])]
    for choice in value.get("choices") or []:
        if not isinstance(choice, Mapping) or not isinstance(choice.get("of"), list):
            raise Unmappable(f"{choice!r} is not a choice of {item}s")
        options = ", ".join(written_name(str(name)) for name in choice["of"])
        written.append(f"{_number(choice.get('count', 1))} of ({options})")
    return ", ".join(written)


def _columns(value: Any) -> str:
    if isinstance(value, str):
        return value
    items = value if isinstance(value, list) else [value]
    written = []
    for column in items:
        if isinstance(column, str):
            written.append(column)
        elif isinstance(column, Mapping) and "name" in column:
            kind = column.get("type", "text")
            written.append(column["name"] if kind == "text" else f"{column['name']}({kind})")
        else:
            raise Unmappable(f"{column!r} is not a column")
    return ", ".join(written)


# The field types whose values are written words: a scalar YAML or JSON read as a boolean or a number is
# taken as it was written. A bare boolean (JSON's, or from a caller's own YAML loader) has lost how it was
# spelt, so only an option spelt like it is taken.
_AS_WRITTEN = (t.TextType, t.MarkdownType, t.VersionType, t.EnumType, t.WordType, t.AbbreviationType, t.RefType)


def value_text(field_type: t.FieldType, value: Any) -> str:
    """`value` written as a value of `field_type`."""
    if isinstance(field_type, _AS_WRITTEN) and isinstance(value, Spelt):
        value = str(value) if _option_for(value, getattr(field_type, "options", ())) is None else value
    elif not isinstance(field_type, t.ListType | t.MapType | t.RecordType):  # those read their items by type
        value = _plain(value)
    if value is None:
        return "none"
    if isinstance(value, Mapping) and len(value) == 1 and _plain(value) == {"unknown": True}:
        return "unknown"
    match field_type:
        case t.IntType() | t.NumberType():
            return _number(value)
        case t.TextType() | t.MarkdownType() | t.VersionType():
            if isinstance(value, list | Mapping):
                raise Unmappable(f"{value!r} is not text")
            return quote(str(value))
        case t.BoolType():
            if isinstance(value, bool):
                return "yes" if value else "no"
            if str(value).lower() in ("yes", "no", "true", "false"):
                return str(value).lower()
            raise Unmappable(f"{value!r} is not yes or no")
        case t.DiceType():
            return _text_of(value, "dice")
        case t.FormulaType() | t.ObstacleType():
            return _text_of(value, "a formula")
        case t.RangeType():
            return _range(value)
        case t.MultiplierType():
            return _ratio(value)
        case t.EnumType(options):
            if isinstance(value, list | Mapping) or (isinstance(value, bool) and _option_for(value, options) is None):
                raise _not_a_name(value)
            return _option_text(_option_for(value, options) or str(value))
        case t.WordType() | t.AbbreviationType() | t.RefType():
            if isinstance(value, list | Mapping | bool):
                raise _not_a_name(value)
            return written_name(str(value))
        case t.ListType(item):
            items = value if isinstance(value, list) else [value]
            written = []
            for index, v in enumerate(items):
                try:
                    written.append(value_text(item, v))
                except Unmappable as exc:
                    raise exc.within(f"[{index}]") if isinstance(value, list) else exc from None
            return ", ".join(written)
        case t.YearsType():
            return f"{_number(value)} yrs"
        case t.PointsType():
            return f"{_number(value)} pt{'s' * (value != 1)}"
        case t.StatBonusType():
            return _stat(value)
        case t.ActionsType():
            if isinstance(value, Mapping):
                return ("x" if value.get("per_obstacle") else "") + str(value["count"])
            return str(value)
        case t.ChoicesType(kind):
            return _choices(value, kind)
        case t.OfferType(kind):
            return _offer(value, kind)
        case t.RequirementType():
            return _requirement(value)
        case t.ColumnsType():
            return _columns(value)
        case t.RollType():
            return _text_of(value, "dice to roll")
        case t.RollsType():
            if isinstance(value, Mapping) and {"times", "table"} <= value.keys():
                return f"{_number(value['times'])} x {written_name(str(value['table']))}"
            if isinstance(value, str):
                return written_name(value)
            raise Unmappable(f"{value!r} is not rolls on a table")
        case t.CheckType():
            if isinstance(value, Mapping) and "target" in value:
                return f"check {_text_of(value.get('modifier'), 'a modifier')} {value['target']}+"
            return _text_of(value, "a check")
        case t.MapType(item, key_type):
            keys = {_map_key(k, key_type): v for k, v in value.items()} if isinstance(value, Mapping) else value
            return _braced(keys, "a map", dict.fromkeys(keys, item) if isinstance(keys, Mapping) else {})
        case t.RecordType() as record:
            return _braced(value, "a record", {d.name: d.type for d in record_fields(record)})
        case _:
            assert_never(field_type)


def _map_key(key: Any, key_type: t.FieldType) -> Any:
    """A map's key as the rules write it: a boolean YAML read is the option spelt like it, if one is."""
    if isinstance(key_type, t.EnumType):
        return _option_for(key, key_type.options) or _plain(key)
    return str(key) if isinstance(key, Spelt) and isinstance(key_type, _AS_WRITTEN) else _plain(key)


def _braced(value: Any, what: str, types: Mapping[str, t.FieldType]) -> str:
    """A record, or a map (`{ land: 25  climb: 10 }`: the form that takes any value): `{ key: value ... }`."""
    if not isinstance(value, Mapping):
        raise Unmappable(f"{value!r} is not {what}")
    parts = []
    for key, item in value.items():
        if key not in types:
            raise Unmappable(f"{what} has no field {key!r}")
        if not (isinstance(key, str) and key.isidentifier() and key.isascii()):
            raise _not_a_name(key, "a key the rules can write (a name)").within(f"[{key!r}]")
        try:
            parts.append(f"{key}: {value_text(types[key], item)}")
        except Unmappable as exc:
            raise exc.within(f".{key}") from None
    return "{ " + "  ".join(parts) + " }" if parts else "{ }"


def _steps(field_type: t.FieldType, value: Any) -> list[str]:
    """A formula's steps (export's `steps`, each a name and a formula) as `let` lines, written before it."""
    if not isinstance(field_type, t.FormulaType) or not isinstance(value, Mapping) or not value.get("steps"):
        return []
    value = _plain(value)
    if not isinstance(value["steps"], list):
        raise Unmappable(f"{value['steps']!r} is not a list of steps")
    lines = []
    for step in value["steps"]:
        if not isinstance(step, Mapping) or not isinstance(step.get("name"), str):
            raise Unmappable(f"{step!r} is not a step (a name and a formula)")
        lines.append(f"  let {step['name']} = {_text_of(step.get('formula'), 'a formula')}")
    return lines


def _cell(value: Any) -> str:
    """A table cell by its shape (the columns say its type; every shape export gives is distinct)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Mapping):
        if value == {"unknown": True}:
            return "unknown"
        if {"num", "den"} <= value.keys():
            return _ratio(value)
        if {"modifier", "target"} <= value.keys():
            return value_text(t.CheckType(), value)
        if {"times", "table"} <= value.keys():
            return value_text(t.RollsType(), value)
        return _text_of(value, "a cell")
    if isinstance(value, float):
        return _number(value)
    return quote(str(value))


@dataclass(slots=True)
class Block:
    """A record written as a block: its lines, the field each line writes (None: the header, a row), and
    what could not be written, field by field."""

    lines: list[str]
    fields: list[str | None]
    problems: list[str]

    def text(self) -> str:
        return "\n".join(self.lines) + "\n}\n"

    def field_at(self, line: int) -> str | None:
        return self.fields[line - 1] if 0 < line <= len(self.fields) else None


def record_block(kind: Kind, record: Any) -> Block:
    """A record as a block of `kind`; a record that is not one at all raises Unmappable."""
    if not isinstance(record, Mapping):
        raise Unmappable(f"a record is a mapping of fields, not {type(record).__name__}")
    if record.get("kind") not in (None, kind.name):
        raise Unmappable(f"it is a {record['kind']}, not a {kind.name}")
    name, id_ = record.get("name"), record.get("id")
    if not name and not id_:
        raise Unmappable("it has neither a name nor an id")
    for meta, value in (("name", name), ("id", id_)):
        if isinstance(value, list | Mapping):
            raise Unmappable(f"field '{meta}': {value!r} is not a name")
    header = [kind.name]
    if id_ and (not name or slug(str(name)) != id_):
        if slug(str(id_)) != str(id_):
            raise Unmappable(f"its id '{id_}' is not snake_case (write it as a name instead)")
        header.append(str(id_))
    if name:
        header.append(quote(str(name)))
    unknown = [k for k in record if k not in kind.fields and k not in _META]
    if unknown:
        raise Unmappable(f"{kind.name} has no field {', '.join(repr(k) for k in unknown)}")
    block = Block([" ".join(header) + " {"], [None], [])
    for decl in kind.fields.values():
        if decl.name in record:
            try:
                steps = _steps(decl.type, record[decl.name])
                line = f"  {decl.name}: {value_text(decl.type, record[decl.name])}"
            except Unmappable as exc:
                block.problems.append(f"field '{decl.name}{exc.path}': {exc.message}")
                continue
            except (TypeError, KeyError, ValueError) as exc:
                block.problems.append(f"field '{decl.name}': {exc}")
                continue
            except RecursionError:
                block.problems.append(f"field '{decl.name}': it is nested too deeply")
                continue
            block.lines += [*steps, line]
            block.fields += [decl.name] * (len(steps) + 1)
    for row in _plain(record.get("rows")) or []:
        if not isinstance(row, Mapping) or not row.get("cells") or not isinstance(row.get("keys"), list):
            raise Unmappable(f"{row!r} is not a row (keys and cells)")
        keys = ", ".join(_key(k) for k in row["keys"]) or "otherwise"  # no keys: the row for every other cell
        line = keys + " -> " + ", ".join(_cell(c) for c in row["cells"])
        if row.get("source"):
            line += " @ " + quote(str(row["source"]))
        block.lines.append("  " + line)
        block.fields.append(None)
    return block


def _checked(kind: Kind, text: str) -> list[Diagnostic]:
    """What the compiler says about one block on its own (references aside: they need the ruleset)."""
    from rulesdsl.compile.checks import schema
    from rulesdsl.compile.lower import lower_block
    from rulesdsl.compile.pipeline import parser

    parsed, problems = parser().parse_file("<import>", text)
    if problems:
        return problems
    [block] = parsed.blocks
    assert isinstance(block, m.Block)
    entity, more = lower_block(block, kind, file_defaults={})
    return [d for d in more + schema.check(entity, kind) if d.severity == "error"]


def convert(records: list[Any], kind: Kind) -> tuple[str, list[Problem]]:
    from rulesdsl.compile.pipeline import gc_paused

    with gc_paused():  # many short-lived objects, no cycles: the collector's passes made it superlinear
        return _convert(records, kind)


def _convert(records: list[Any], kind: Kind) -> tuple[str, list[Problem]]:
    blocks, problems = [], []
    for index, record in enumerate(records):
        try:
            block = record_block(kind, record)
        except Unmappable as exc:
            problems.append(Problem(index, str(exc)))
            continue
        problems += [Problem(index, problem) for problem in block.problems]
        text = block.text()
        found = _checked(kind, text)
        for d in found:
            field = block.field_at(d.pos.line) if d.pos is not None else None
            if block.problems and field is None:  # a field left out above may be what it misses
                continue
            where = f"field '{field}': " if field is not None else ""
            problems.append(Problem(index, where + f"{d.message} [{d.code}]" + (f" ({d.hint})" if d.hint else "")))
        if not found and not block.problems:
            blocks.append(text)
    if not records:
        problems.append(Problem(None, "the file holds no records"))
    text = "\n".join(blocks)
    try:
        return format_text(text, "<import>"), problems
    except NotFormatted as exc:  # pragma: no cover - every block was read back on its own above
        return "", [*problems, *(Problem(None, d.message) for d in exc.diagnostics)]


def kinds_for(ruleset: Path | None) -> dict[str, Kind]:
    from rulesdsl.compile.pipeline import compile_paths, prelude

    if ruleset is None:
        return dict(prelude())
    compilation = compile_paths([ruleset])
    return dict(compilation.rulesets[0].kinds) if compilation.rulesets else dict(prelude())


def run_import(file: Path, kind_name: str, out: Path | None, ruleset: Path | None, *, as_json: bool = False) -> int:
    from rulesdsl.diagnostics import did_you_mean
    from rulesdsl.tools.common import EXIT_DIAGNOSTICS, EXIT_OK, UsageError, write_atomically

    if not file.is_file():
        raise UsageError(f"no such file: {file}")
    if out is not None and out.suffix != ".rules":
        raise UsageError(f"--out names a .rules file, not {out}")
    kinds = kinds_for(ruleset)
    kind = kinds.get(kind_name)
    if kind is None or kind_name == "ruleset":
        hint = did_you_mean(kind_name, kinds) or "kinds: " + ", ".join(k for k in kinds if k != "ruleset")
        raise UsageError(f"no kind '{kind_name}' to import into; {hint}")
    try:
        records = load_records(file, kind_name)
    except (Unmappable, ValueError) as exc:  # JSON and YAML errors are ValueErrors or YAMLErrors
        return _report([Problem(None, f"{file}: {exc}")], as_json)
    except Exception as exc:  # PyYAML's errors share no base with ValueError
        if type(exc).__module__.startswith("yaml"):
            return _report([Problem(None, f"{file}: not YAML: {exc}")], as_json)
        raise
    text, problems = convert(records, kind)
    if problems:
        return _report(problems, as_json) or EXIT_DIAGNOSTICS
    if out is None:
        sys.stdout.write(text)
    else:
        write_atomically(out, text)
        print(f"wrote {len(records)} {kind_name} block{'s' * (len(records) != 1)} to {out}", file=sys.stderr)
    return EXIT_OK


def _report(problems: list[Problem], as_json: bool) -> int:
    if as_json:
        items = [Diagnostic("error", "import", p.text(), None) for p in problems]
        sys.stdout.write(render_json(items))
    else:
        for problem in problems:
            print(f"rulesdsl import: {problem.text()}", file=sys.stderr)
        print(f"{len(problems)} problem{'s' * (len(problems) != 1)}; nothing written", file=sys.stderr)
    return 1
