"""Validate what was read from ``entries/``: every problem at once, to be fixed in one round."""

from __future__ import annotations

import ast
import datetime as dt
import difflib
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from re import Match
from typing import Any, TypeVar, get_args, get_origin
from zoneinfo import ZoneInfo

import tomli
from pydantic import BaseModel, ValidationError

from .._version import __version__
from ..errors import DataError, Problem, count, reads
from .files import SITE_FILE, EntryFile, Snapshot, read_entries, utf8_text
from .icon import icon_of
from .models import KINDS, MAX_RELEASES_PER_DAY, Article, Release, Site

M = TypeVar("M", bound=BaseModel)

# A release file is named by its date; a second release on the same date adds "-2".
# Numbers up to 99 are read, so that one past the limit is told so, not called misnamed.
_RELEASE_NAME = re.compile(r"(\d{4}-\d{2}-\d{2})(?:-([2-9]|[1-9]\d))?\.toml")
_MISNAMED = (
    "a release file is named by its date, YYYY-MM-DD.toml "
    "(or YYYY-MM-DD-2.toml for a second release that day)"
)
# A key of 20 dotted parts, bare or quoted: the parser keeps every prefix of one (its memory
# grows with the square of the parts), and no table of the entries is nearly that deep.
_DEEP_KEY = re.compile(
    r"""^[ \t]*(?:(?:[\w-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')[ \t]*\.[ \t]*){19}""", re.M
)
_TOO_DEEP = "not valid TOML: arrays or tables nested too deeply"
_HUGE = "a number of thousands of digits"


def release_name(day: dt.date, sequence: int) -> str:
    """A release's file name without ``.toml``, and its anchor on the changelog page."""
    return day.isoformat() if sequence == 1 else f"{day.isoformat()}-{sequence}"


@dataclass(frozen=True)
class ReleaseFile:
    path: str  # as reported in messages: the entries folder as given, then the file below it
    sequence: int  # 1 for YYYY-MM-DD.toml, N for YYYY-MM-DD-N.toml
    release: Release

    @property
    def date(self) -> dt.date:
        return self.release.date

    @property
    def anchor(self) -> str:
        return release_name(self.date, self.sequence)


@dataclass(frozen=True)
class Changelog:
    site: Site
    releases: tuple[ReleaseFile, ...]  # newest first, as the page shows them
    icon: str | None = None  # [feeds] icon as a square SVG (source/icon.py); None when unset


def load(entries: Path) -> Changelog:
    """Read and validate ``entries/site.toml`` and every release file below ``entries``."""
    return validate(read_entries(entries, __version__))


def validate(snapshot: Snapshot) -> Changelog:
    """The changelog in ``snapshot``; raise :class:`DataError` with every problem found."""
    problems = [Problem(where, "(file)", why) for where, why in snapshot.problems]
    site = site_of(snapshot.site, problems)
    icon = None if site is None else icon_of(snapshot, site, problems)
    releases = [rf for f in snapshot.releases if (rf := release_of(f, site, problems))]
    return _changelog(site, releases, problems, icon)


def load_site(entries: Path) -> Site:
    """Validate ``entries/site.toml`` alone (for commands that add releases)."""
    problems: list[Problem] = []
    site = site_of(read_entries(entries, __version__).site, problems)
    if site is None:
        raise DataError(problems)
    return site


def site_of(file: EntryFile, problems: list[Problem]) -> Site | None:
    """The validated settings in ``file``, or None with its problems added to ``problems``."""
    data = _parse(file, problems)
    return validated(Site, data, file.shown, problems) if data is not None else None


def release_of(file: EntryFile, site: Site | None, problems: list[Problem]) -> ReleaseFile | None:
    """The validated release in ``file``, or None; its problems are added to ``problems``."""
    if (named := _named(file.shown, problems)) is None:
        return None
    folder, year = PurePosixPath(file.relative).parent.name, named.group(1)[:4]
    if len(folder) == 4 and folder.isdigit() and folder != year:
        why = f"is in the folder {folder} but is a release of {year}; move it to the folder {year}"
        problems.append(Problem(file.shown, "(file name)", why))
        return None
    data = _parse(file, problems)
    return _release(file.shown, named, data, site, problems) if data is not None else None


def from_data(site: Mapping[str, Any], releases: Mapping[str, Mapping[str, Any]]) -> Changelog:
    """Validate TOML tables as :func:`load` validates files: for entries held in memory.

    ``releases`` maps each file name as messages show it (``entries/2026/2026-11-07.toml``)
    to its table, which may hold text no TOML file can carry. ``[feeds] icon`` names a file,
    which entries in memory have none of: it is not read (the changelog's ``icon`` is None).
    """
    problems: list[Problem] = []
    valid = validated(Site, dict(site), SITE_FILE, problems)
    found = []
    for name, data in releases.items():
        named = _named(name, problems)
        if named is not None and (rf := _release(name, named, dict(data), valid, problems)):
            found.append(rf)
    return _changelog(valid, found, problems)


def _named(name: str, problems: list[Problem]) -> Match[str] | None:
    """The date and sequence in a release file's name; None, with a problem, if misnamed."""
    named = _RELEASE_NAME.fullmatch(PurePosixPath(name).name)
    if named is None:
        problems.append(Problem(name, "(file name)", _MISNAMED))
    elif not reads(dt.date.fromisoformat, named.group(1)):
        why = f"{named.group(1)} is not a date (no such day); " + _MISNAMED
        problems.append(Problem(name, "(file name)", why))
        return None
    elif int(named.group(2) or 1) > MAX_RELEASES_PER_DAY:
        day, most = named.group(1), MAX_RELEASES_PER_DAY
        why = (
            f"at most {most} releases a day: number them {day}-2.toml to {day}-{most}.toml; "
            f"put this one's changes in {day}-{most}.toml or release them on a later day"
        )
        problems.append(Problem(name, "(file name)", why))
    return named


def _release(
    name: str, named: Match[str], data: dict[str, Any], site: Site | None, problems: list[Problem]
) -> ReleaseFile | None:
    before = len(problems)
    release = validated(Release, data, name, problems)
    if release is None:
        # "date = …" below a table is that table's in TOML: one problem, that says so.
        found = problems[before:]
        missing = [p for p in found if p.field == "date" and p.message.startswith("is required")]
        below = [p for p in found if p.field.endswith(".date") and "unknown field" in p.message]
        if missing and below:
            why = (
                f"is written below a table, which makes it {below[0].field}; move the line "
                "date = … to the top of the file, above the first [[groups]]"
            )
            rest = [p for p in found if p not in (missing[0], below[0])]
            problems[before:] = [Problem(name, "date", why), *rest]
        return None
    rf = ReleaseFile(name, int(named.group(2) or 1), release)
    if site is not None:  # unknown modules do not drop the release: its ids are still checked
        problems.extend(_check_modules(site, rf))
    if release.date.isoformat() != named.group(1):  # its ids: checked once the date is fixed
        why = (
            f"is {release.date.isoformat()} but the file is named {PurePosixPath(name).name}; "
            "make the date and the file name agree"
        )
        problems.append(Problem(name, "date", why))
        return None
    return rf


def _changelog(
    site: Site | None, releases: list[ReleaseFile], problems: list[Problem], icon: str | None = None
) -> Changelog:
    problems.extend(check_unique((rf.path, release_keys(rf)) for rf in releases))
    if problems:
        raise DataError(problems)
    assert site is not None
    releases.sort(key=lambda r: (r.date, r.sequence), reverse=True)
    return Changelog(site, tuple(releases), icon)


def _parse(file: EntryFile, problems: list[Problem]) -> dict[str, Any] | None:
    if file.data is None:
        problems.append(Problem(file.shown, "(file)", file.problem or "cannot be read"))
        return None
    try:
        text = utf8_text(file.data, file.shown, "file")
        if deep := _DEEP_KEY.search(text):
            problems.append(Problem(file.shown, "(toml)", _TOO_DEEP, _line(text, deep.start())))
            return None
        return tomli.loads(text)
    except DataError as exc:  # not UTF-8
        problems.extend(exc.problems)
    except RecursionError:
        # The parser recurses per level of inline arrays and tables: a file of
        # "[[[[..." must be refused like any other bad TOML, not crash the build.
        problems.append(Problem(file.shown, "(toml)", _TOO_DEEP))
    except tomli.TOMLDecodeError as exc:
        # tomli's line and words; it names no line at the end of the file ("at end of document").
        line = exc.lineno if exc.pos < len(exc.doc) else None
        written = text.split("\n")[line - 1] if line else ""
        why = f"not valid TOML: {_toml_words(exc.msg if line else str(exc), written)}"
        if line:  # "tіtle" (a Cyrillic "і"), "title\u00a0=" or “x” read as no key or value
            key, equals, value = written.partition("=")
            value = value.lstrip(" \t")[:1] if equals else ""
            why += _foreign(key.strip(" \t"), "a key") or _foreign(value, "the value")
        problems.append(Problem(file.shown, "(toml)", why, line))
    except ValueError:  # an integer of more digits than Python reads (4300)
        where = re.search(r"[0-9_]{4300}", text)
        number = _line(text, where.start()) if where else None
        why = f"not valid TOML: {_HUGE}; write one of the size the field needs"
        problems.append(Problem(file.shown, "(toml)", why, number))
    return None


_ARRAYS_OF_TABLES = ("groups", "groups.articles", "groups.notes", "modules")


def _toml_words(message: str, line: str) -> str:
    """The parser's message about ``line``, with a table named as it is written, and the fix."""
    if found := re.fullmatch(r"Cannot declare \((.*)\) twice", message):
        table = ".".join(ast.literal_eval(f"({found[1]})"))
        if table in _ARRAYS_OF_TABLES:
            return f"[{table}] is declared twice; write [[{table}]] for each of several {table}"
        return f"[{table}] is declared twice; put its keys under one [{table}]"
    if message == "Cannot overwrite a value" and (array := re.match(r"\s*\[\[([^\]]*)\]\]", line)):
        table = array[1].strip()  # a [table] above, then [[table]]
        return f"[{table}] above is one table; write [[{table}]] for each of several {table}"
    if message == "Cannot overwrite a value":
        return "a key is given a value twice; keep one"
    if message == "Illegal character '\\n'":  # quotes not closed on their line
        curly = " (a curly ” does not close it)" if re.search("[“”]", line) else ""
        return f'text in quotes is not closed on this line: end it with a straight "{curly}'
    if message.startswith(("Expected newline", "Invalid value")) and re.match(
        r"\s*(pub_)?date\s*=", line
    ):
        return "a date is written YYYY-MM-DD, without quotes: e.g. 2026-11-07"
    if message == "Invalid value":  # a bare word
        return 'Invalid value: text goes in straight quotes, "like this"'
    return message


def _foreign(value: object, what: str = "it") -> str:
    """Why a word that looks right is not: its first letter outside ASCII, named."""
    ch = next((c for c in value if not c.isascii()), None) if isinstance(value, str) else None
    if ch is None:
        return ""
    # Controls, bidi and other format characters are named only: a NEL printed breaks the
    # message's line, a RIGHT-TO-LEFT OVERRIDE reverses it. An NBSP is shown.
    shown = f"'{ch}', " if ch.isprintable() or unicodedata.category(ch) == "Zs" else ""
    return f" ({what} holds {shown}{unicodedata.name(ch, 'a character')} U+{ord(ch):04X})"


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def validated(model: type[M], data: dict[str, Any], name: str, problems: list[Problem]) -> M | None:
    """``model`` from ``data``; None with every problem added to ``problems``, as ``name``'s."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        nested = {tuple(e["loc"][:i]) for e in errors for i in range(len(e["loc"]))}
        for index, error in enumerate(errors):
            loc = tuple(error["loc"])
            # pydantic also calls an array "too short" when its only items failed.
            if error["type"] == "too_short" and loc in nested:
                continue
            # Past a file's first 1,000 (the command prints 200), pydantic's words: ours walk
            # the models, too slow for a file of tens of thousands of unknown fields.
            why = _error_message(model, loc, error) if index < 1_000 else str(error["msg"])
            problems.append(Problem(name, _field_path(loc), why))
        return None


def _field_path(loc: tuple[int | str, ...]) -> str:
    """``("groups", 0, "articles", 2, "title")`` -> ``groups[1].articles[3].title``."""
    path = ""
    for part in loc:
        if part == "[key]":  # pydantic's name for a table's key: the key is the field
            continue
        path += f"[{part + 1}]" if isinstance(part, int) else ("." if path else "") + part
    return path or "(file)"


_TYPE_NAMES = {
    str: "text",
    int: "integer",
    float: "decimal number",
    bool: "true/false",
    list: "array",
    dict: "table",
    dt.datetime: "date-time",
    dt.time: "time",
}


def _described(value: object) -> str:
    name = _TYPE_NAMES.get(type(value), type(value).__name__)
    shown = _repr(value)
    return f"{name} {shown}" if 0 < len(shown) <= 60 else name


def _repr(value: object, depth: int = 0) -> str:
    """``value`` as TOML writes it, where that differs from Python (dates, arrays, tables)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, list | dict):
        pairs = value.items() if isinstance(value, dict) else enumerate(value)
        if depth == 20:  # arrays nested 500 deep (TOML sets no limit) would exhaust recursion
            return "…"
        parts = [(_repr(k), _repr(v, depth + 1)) for k, v in pairs]
        if any(not v for _, v in parts):
            return ""  # it holds a number too long to show
        if isinstance(value, list):
            return f"[{', '.join(v for _, v in parts)}]"
        return f"{{ {', '.join(f'{k} = {v}' for k, v in parts)} }}"
    try:
        return repr(value)
    except ValueError:  # an integer of more than 4300 digits, read from hexadecimal
        return ""


def _error_message(model: type[BaseModel], loc: tuple[int | str, ...], error: Any) -> str:
    """A pydantic error in the entries' words (the importer reports page errors in them too)."""
    kind = error["type"]
    value = error.get("input")
    if kind == "missing":  # a table too: "[[groups]]" says how to write it
        field = _model_at(model, loc[:-1]).model_fields[str(loc[-1])]
        table = _first_model(field.annotation) and _opened(model, loc[:-1], str(loc[-1]))
        return "is required but missing" + (f"; add its table, {table}" if table else "")
    path = ".".join(part for part in loc if isinstance(part, str))
    if kind == "extra_forbidden":
        allowed = _fields_at(model, loc[:-1])
        # An article's field written under [[groups]]: where it belongs, not a look-alike here.
        if below := [f for f in allowed if loc[-1] in _fields_at(model, (*loc[:-1], f))]:
            where = " or ".join(_opened(model, loc[:-1], f) for f in below)
            return f"unknown field here; it belongs in a {where} table"
        # A group's field (kind, context) written in one of its changes: loc is
        # (..., "groups", 1, "articles", 2, "kind").
        group = loc[:-3]
        if len(group) >= 2 and isinstance(loc[-2], int) and loc[-1] in _fields_at(model, group):
            table = _opened(model, group[:-2], str(group[-2]))
            return (
                f"unknown field here; it is a field of the {table} table above, for all its "
                f"changes: put a change with another {loc[-1]} in a group of its own"
            )
        close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"allowed: {', '.join(allowed)}"
        return f"unknown field; {hint}"
    if kind == "literal_error":
        expected = error.get("ctx", {}).get("expected", "")
        shown = _repr(value) or _HUGE
        shown = shown if len(shown) <= 60 else f"{shown[:60]}…"
        return f"{shown} is not allowed; use one of {expected}{_foreign(value)}"
    if kind == "string_type":
        return f"must be text in quotes, not {_described(value)}"
    if kind == "int_type":
        return f"must be a whole number without quotes, not {_described(value)}"
    if kind == "bool_type":
        return f"must be true or false, not {_described(value)}"
    if kind.startswith("date_") and isinstance(value, dt.datetime):
        return f"must be a date without a time of day, e.g. 2026-11-07, not {value.isoformat()}"
    if kind.startswith("date_"):
        return f"must be a date without quotes, e.g. 2026-11-07, not {_described(value)}"
    # [[groups.articles]] with no [[groups]] above it makes "groups" a table of that array.
    below = [k for k, v in value.items() if isinstance(v, list)] if isinstance(value, dict) else []
    if kind == "tuple_type" and below:
        inner = f"a [[{path}.{below[0]}]] belongs below one"
        return f"must be an array of tables, each started by [[{path}]], not a table: {inner}"
    if kind == "tuple_type" and isinstance(value, dict) and _model_at(model, loc):
        return f"must be an array of tables, each started by [[{path}]], not one table [{path}]"
    if kind == "tuple_type":
        return f"must be an array, not {_described(value)}"
    if kind in ("model_type", "dict_type"):
        return f"must be a table, not {_described(value)}"
    if kind == "too_short":
        return "must not be empty"
    if kind == "too_long":
        return str(error["msg"]).replace("Tuple", "the array")
    if kind in ("greater_than_equal", "less_than_equal"):
        return f"{_repr(value) or _HUGE} is out of range: {str(error['msg']).lower()}"
    return str(error["msg"]).removeprefix("Value error, ")


def _fields_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """The field names allowed at ``loc`` inside ``model``, for did-you-mean hints."""
    found = _model_at(model, loc)
    return sorted(found.model_fields) if found is not None else []


def _model_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> Any:
    current: Any = model
    keyed = False  # after a table of tables ([kinds.new]), a part is a key, not a field
    for part in loc:
        if isinstance(part, str) and not keyed:
            field = current.model_fields.get(part) if _is_model(current) else None
            current = None if field is None else _first_model(field.annotation)
            keyed = field is not None and get_origin(field.annotation) is dict
        else:
            keyed = False
    return current if _is_model(current) else None


def _opened(model: type[BaseModel], loc: tuple[int | str, ...], name: str) -> str:
    """How TOML opens the table ``name`` at ``loc``: [feeds], [[groups.articles]], [kinds.new]."""
    path = ".".join([*(part for part in loc if isinstance(part, str)), name])
    opened = {tuple: "[[{}]]", dict: "[{}.<name>]"}  # an array of tables, a table of tables
    origin = get_origin(_model_at(model, loc).model_fields[name].annotation)
    return opened.get(origin, "[{}]").format(path)


def _is_model(candidate: Any) -> bool:
    return isinstance(candidate, type) and issubclass(candidate, BaseModel)


def _first_model(annotation: Any) -> Any:
    """The first model in a field's type: ``Note`` in ``tuple[Note, ...]``, or None."""
    if _is_model(annotation):
        return annotation
    args = get_args(annotation)  # of Annotated[T, ...] too: its metadata holds no model
    return next((found for arg in args if (found := _first_model(arg)) is not None), None)


def _check_modules(site: Site, rf: ReleaseFile) -> Iterator[Problem]:
    known = ", ".join(str(m.number) for m in site.modules)

    def unknown(field: str, module: int | None) -> Iterator[Problem]:
        if module is not None and site.module(module) is None:
            yield Problem(rf.path, field, f"unknown module {module}; site.toml has modules {known}")

    for g, group in enumerate(rf.release.groups, start=1):
        yield from unknown(f"groups[{g}].module", group.module)
    for where, group, change in rf.release.changes():
        if isinstance(change, Article) and change.module is None and group.module is None:
            why = "an article needs a module: set module on the article or on its group"
            yield Problem(rf.path, f"{where}.module", why)
        yield from unknown(f"{where}.module", change.module)
        # "6.1" shown beside "Chương 7": a block copied from the chapter before, most likely.
        if isinstance(change, Article) and change.number and "." in change.number:
            chapter, first = change.chapter or group.chapter, int(change.number.split(".")[0])
            if chapter is not None and first not in (0, chapter):  # a chapter 0 has no group
                whose = "its group's chapter" if change.chapter is None else "its chapter"
                why = (
                    f"{change.number} is a number of chapter {first}, but {whose} is {chapter}: "
                    "fix the number, or set the article's own chapter"
                )
                yield Problem(rf.path, f"{where}.number", why)


# What the check across files needs of one change.
IdKey = tuple[str, str, str, str]  # day, id, kind, where


def release_keys(rf: ReleaseFile) -> tuple[IdKey, ...]:
    """Each change of ``rf`` as the uniqueness check sees it."""
    day = rf.date.isoformat()
    return tuple(
        (day, change.id, group.kind, where) for where, group, change in rf.release.changes()
    )


def check_unique(releases: Iterable[tuple[str, Sequence[IdKey]]]) -> list[Problem]:
    """A release is named by its date and number, and an item id is minted from date, id and
    kind: each must be unique, whichever folders the files are in."""
    problems = []
    seen: dict[tuple[str, str, str], str] = {}
    files: dict[str, str] = {}
    introduced: dict[str, tuple[str, str]] = {}  # an article's id: the day and place it was new

    def order(release: tuple[str, Sequence[IdKey]]) -> tuple[str, int, str]:
        stem = PurePosixPath(release[0]).stem  # YYYY-MM-DD or YYYY-MM-DD-N
        return stem[:10], int(stem[11:]) if stem[11:].isdigit() else 0, release[0]

    # In release order: the later release is told to change, as the earlier may be published.
    for path, keys in sorted(releases, key=order):
        name = PurePosixPath(path).name
        if (first := files.setdefault(name, path)) != path:
            day = name[:10]
            why = (
                f"{first} is the same release of {day}; a day's later releases are "
                f"{day}-2.toml, {day}-3.toml...: rename this file, or delete it if it is a copy"
            )
            problems.append(Problem(path, "(file name)", why))
            continue  # a copy's ids are its first's: one problem is enough
        for day, item_id, kind, where in keys:
            here = f"{path} {where}"
            if (first := seen.setdefault((day, item_id, kind), here)) != here:
                why = (
                    f"'{item_id}' is already used for a '{kind}' change on {day} ({first}); "
                    "give this change its own id"
                )
                problems.append(Problem(path, f"{where}.id", why))
            elif kind == "new" and ".articles[" in where:  # a copied release, most likely
                was, first = introduced.setdefault(item_id, (day, here))
                if first != here:
                    why = (
                        f"'{item_id}' was already new on {was} ({first}): a later change to "
                        "that article is of another kind, such as 'revised'; a new article "
                        "needs its own id"
                    )
                    problems.append(Problem(path, f"{where}.id", why))
    return problems


def dated_ahead(site: Site, dates: Iterable[tuple[str, dt.date]], now: dt.datetime) -> list[str]:
    """Warnings for releases dated after today in the site's time zone: most likely a wrong
    year, which readers would show ahead for months, and which a fix could not take back (a new
    date makes new ids: the items would come again as new). Only a warning: the build's output
    never depends on the clock."""
    today = now.astimezone(ZoneInfo(site.timezone)).date()
    return [
        f"{path}: date: {date} is after today ({today} in {site.timezone}): readers show it "
        "ahead of its time; if the date is wrong, fix it before subscribers fetch it (a date "
        "changed later makes its items new to them again)"
        for path, date in dates
        if date > today
    ]


def describe(changelog: Changelog) -> str:
    """A one-line account of what the entries hold, for ``infrafeed check``."""
    changes = [(g, change) for rf in changelog.releases for _, g, change in rf.release.changes()]
    per_kind = Counter(group.kind for group, _ in changes)
    per_module = Counter(c.module or g.module for g, c in changes if isinstance(c, Article))
    kinds = ", ".join(f"{kind} {per_kind[kind]}" for kind in KINDS if per_kind[kind])
    modules = ", ".join(
        f"{m.number} {m.slug} {per_module[m.number]}" for m in changelog.site.modules
    )
    articles = sum(per_module.values())
    notes = len(changes) - articles  # each change is an article or a note
    return (
        f"ok: {count(len(changelog.releases), 'release')}, {count(articles, 'article change')}, "
        f"{count(notes, 'note')}; by kind: {kinds or 'none'}; articles by module: {modules}"
    )
