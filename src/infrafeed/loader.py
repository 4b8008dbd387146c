"""Load and validate ``entries/``: every file, every problem, in one pass.

Reading stops at nothing: each file is parsed and validated on its own, then
the cross-file rules run (file name vs date, known modules, unique ids). All
problems are raised together as one :class:`DataError`, so a maintainer fixes
a release file in one round instead of one error at a time.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
import types
import typing
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .errors import DataError, Problem
from .models import MAX_ITEMS_PER_RELEASE, Release, Site

try:
    # tomli's compiled wheel reads the same TOML as the standard library's
    # tomllib (which is a copy of it) about 2.7 times faster; see bench/NOTES.md.
    from tomli import loads as _fast_toml
except ImportError:  # a venv set up before tomli became a dependency: same result, slower
    from tomllib import loads as _fast_toml

M = TypeVar("M", bound=BaseModel)

SITE_FILE = "site.toml"
MAX_FILE_BYTES = 1_048_576
# A release file is named by its date; a second release on the same date adds "-2".
_RELEASE_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:-([2-9]|[1-9]\d))?\.toml$")
_TOML_LINE = re.compile(r"\(at line (\d+), column \d+\)")


@dataclass(frozen=True)
class ReleaseFile:
    """A validated release and where it came from."""

    path: str  # as reported in messages: relative to the entries folder's parent
    sequence: int  # 1 for YYYY-MM-DD.toml, N for YYYY-MM-DD-N.toml
    release: Release

    @property
    def anchor(self) -> str:
        """The changelog page's heading id for this release (see pages.md)."""
        day = self.release.date.isoformat()
        return day if self.sequence == 1 else f"{day}-{self.sequence}"


@dataclass(frozen=True)
class Changelog:
    site: Site
    releases: tuple[ReleaseFile, ...]  # newest first, as the page shows them


def load(entries: Path) -> Changelog:
    """Read ``entries/site.toml`` and every release file below ``entries``."""
    problems: list[Problem] = []
    if not entries.is_dir():
        raise DataError([Problem(str(entries), "(folder)", "no such folder")])
    shown = _Shown(entries)

    site_path = entries / SITE_FILE
    site: Site | None = None
    raw = _read_file(site_path, shown(site_path), problems)
    data = None if raw is None else _parse_toml(raw, shown(site_path), problems)
    if data is not None:
        site = _validate(Site, data, shown(site_path), problems)

    releases: list[ReleaseFile] = []
    for path in release_paths(entries):
        name = shown(path)
        match = _release_name(path, name, problems)
        if match is None:
            continue
        raw = _read_file(path, name, problems)
        release = None if raw is None else _release(match, path, name, raw, problems)
        if release is not None:
            releases.append(release)

    if site is not None:
        problems.extend(_check_modules(site, releases))
    problems.extend(_check_sizes(releases))
    problems.extend(_check_unique_ids(releases))
    if problems:
        raise DataError(problems)
    assert site is not None
    releases.sort(key=lambda r: (r.release.date, r.sequence), reverse=True)
    return Changelog(site, tuple(releases))


def load_site(name: str, raw: bytes) -> Site:
    """The settings from the bytes of ``site.toml``, as :func:`load` reads them; or DataError."""
    problems: list[Problem] = []
    data = _parse_toml(raw, name, problems)
    site = None if data is None else _validate(Site, data, name, problems)
    if site is None:
        raise DataError(problems)
    return site


def load_release(site: Site, path: Path, name: str, raw: bytes) -> ReleaseFile:
    """One release file from its bytes, checked as :func:`load` checks it; or DataError.

    Only the rule that spans files is left to the caller: an item's date, id
    and kind may not appear in another release file.
    """
    problems: list[Problem] = []
    match = _release_name(path, name, problems)
    release = None
    if match is not None:
        if len(raw) > MAX_FILE_BYTES:
            problems.append(
                Problem(name, "(file)", f"is {len(raw)} bytes; the limit is {MAX_FILE_BYTES}")
            )
        else:
            release = _release(match, path, name, raw, problems)
    if release is not None:
        problems.extend(_check_modules(site, [release]))
        problems.extend(_check_sizes([release]))
        problems.extend(_check_unique_ids([release]))
    if problems or release is None:
        raise DataError(problems)
    return release


def _release_name(path: Path, name: str, problems: list[Problem]) -> re.Match[str] | None:
    match = _RELEASE_NAME.match(path.name)
    if match is None:
        problems.append(
            Problem(
                name,
                "(file name)",
                "a release file is named by its date, YYYY-MM-DD.toml "
                "(or YYYY-MM-DD-2.toml for a second release that day)",
            )
        )
    return match


def _release(
    match: re.Match[str], path: Path, name: str, raw: bytes, problems: list[Problem]
) -> ReleaseFile | None:
    data = _parse_toml(raw, name, problems)
    if data is None:
        return None
    release = _validate(Release, data, name, problems)
    if release is None:
        return None
    if release.date.isoformat() != match.group(1):
        problems.append(
            Problem(
                name,
                "date",
                f"is {release.date.isoformat()} but the file is named {path.name}; "
                "make the date and the file name agree",
            )
        )
        return None
    return ReleaseFile(name, int(match.group(2) or 1), release)


class _Shown:
    """Paths as the maintainer typed them: relative to where the entries folder lives."""

    def __init__(self, entries: Path) -> None:
        self.entries = entries

    def __call__(self, path: Path) -> str:
        return (self.entries / path.relative_to(self.entries)).as_posix()


def release_paths(entries: Path) -> list[Path]:
    """Every ``*.toml`` below ``entries`` except the site file, in a fixed order."""
    return [path for _, path in release_files(entries)]


def release_files(entries: Path) -> list[tuple[str, Path]]:
    """Every ``*.toml`` below ``entries`` but the site file: (relative POSIX path, path).

    Hidden files and folders (editor backups, ``.git``) are skipped; sorting
    makes the result independent of the file system's listing order. The
    files ``entries.rglob("*.toml")`` finds, without pathlib's cost per file.
    """
    found: list[tuple[str, Path]] = []
    _find_toml(entries, "", found)
    found.sort(key=lambda pair: pair[0])
    return [pair for pair in found if pair[0] != SITE_FILE]


def _find_toml(folder: Path, prefix: str, found: list[tuple[str, Path]]) -> None:
    try:
        with os.scandir(folder) as listing:
            children = [(child.name, child.is_dir(follow_symlinks=False)) for child in listing]
    except PermissionError:
        return
    for name, is_dir in children:
        if name.startswith("."):
            continue
        if name.endswith(".toml"):
            found.append((prefix + name, folder / name))
        if is_dir:
            _find_toml(folder / name, f"{prefix}{name}/", found)


def _read_file(path: Path, name: str, problems: list[Problem]) -> bytes | None:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            problems.append(
                Problem(name, "(file)", f"is {size} bytes; the limit is {MAX_FILE_BYTES}")
            )
            return None
        return path.read_bytes()
    except FileNotFoundError:
        problems.append(Problem(name, "(file)", "is missing"))
        return None
    except OSError as exc:
        problems.append(Problem(name, "(file)", f"cannot be read: {exc.strerror}"))
        return None


def _parse_toml(raw: bytes, name: str, problems: list[Problem]) -> dict[str, Any] | None:
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]  # a UTF-8 byte order mark, as some editors write
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(
            Problem(
                name,
                "(file)",
                f"is not UTF-8 (byte 0x{raw[exc.start]:02x}); save the file as UTF-8",
                raw[: exc.start].count(b"\n") + 1,
            )
        )
        return None
    try:
        return _fast_toml(text)
    except ValueError:
        pass  # the message comes from tomllib below, whatever tomli's version says
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = _TOML_LINE.search(message)
        message = _TOML_LINE.sub("", message).strip()
        problems.append(
            Problem(
                name,
                "(toml)",
                f"not valid TOML: {message}",
                int(found.group(1)) if found else None,
            )
        )
        return None


def _validate(model: type[M], data: dict[str, Any], name: str, problems: list[Problem]) -> M | None:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        nested = {tuple(e["loc"][:i]) for e in errors for i in range(len(e["loc"]))}
        for error in errors:
            loc = tuple(error["loc"])
            # pydantic also calls an array "too short" when its only items failed.
            if error["type"] == "too_short" and loc in nested:
                continue
            problems.append(Problem(name, _field_path(loc), _message(model, loc, error)))
        return None


def _field_path(loc: tuple[int | str, ...]) -> str:
    """``("groups", 0, "articles", 2, "title")`` -> ``groups[1].articles[3].title``."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part + 1}]"
        else:
            path += ("." if path else "") + part
    return path or "(file)"


_TYPE_NAMES = {
    str: "text",
    int: "integer",
    float: "decimal number",
    bool: "true/false",
    list: "array",
    dict: "table",
}


def _described(value: object) -> str:
    name = _TYPE_NAMES.get(type(value), type(value).__name__)
    shown = repr(value)
    return f"{name} {shown[:60]}" if len(shown) <= 60 else name


def _message(model: type[BaseModel], loc: tuple[int | str, ...], error: Any) -> str:
    kind = error["type"]
    value = error.get("input")
    if kind == "missing":
        return "is required but missing"
    if kind == "extra_forbidden":
        allowed = _fields_at(model, loc[:-1])
        field = str(loc[-1])
        close = difflib.get_close_matches(field, allowed, n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"allowed: {', '.join(allowed)}"
        return f"unknown field; {hint}"
    if kind == "literal_error":
        expected = error.get("ctx", {}).get("expected", "")
        return f"{value!r} is not allowed; use one of {expected}"
    if kind in ("string_type", "str_type"):
        return f"must be text in quotes, not {_described(value)}"
    if kind == "int_type":
        return f"must be a whole number without quotes, not {_described(value)}"
    if kind == "bool_type":
        return f"must be true or false, not {_described(value)}"
    if kind.startswith("date_"):
        return f"must be a date without quotes, e.g. 2026-11-07, not {_described(value)}"
    if kind in ("tuple_type", "list_type"):
        return f"must be an array, not {_described(value)}"
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        return f"must be a table, not {_described(value)}"
    if kind == "too_short":
        return "must not be empty"
    if kind == "too_long":
        return str(error["msg"]).replace("Tuple", "the array")
    if kind in ("greater_than_equal", "less_than_equal"):
        return f"{value!r} is out of range: {str(error['msg']).lower()}"
    if kind == "string_pattern_mismatch":
        return f"{value!r} has the wrong form ({error['ctx']['pattern']})"
    return str(error["msg"]).removeprefix("Value error, ")


def _fields_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """The field names allowed at ``loc`` inside ``model``, for did-you-mean hints."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return []
        field = current.model_fields.get(part)
        if field is None:
            return []
        current = _innermost_model(field.annotation)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return sorted(current.model_fields)
    return []


def _innermost_model(annotation: Any) -> Any:
    for candidate in _walk_types(annotation):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _walk_types(annotation: Any) -> Iterator[Any]:
    yield annotation
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        yield from _walk_types(typing.get_args(annotation)[0])
        return
    if origin in (tuple, list, dict, typing.Union, types.UnionType) or origin is not None:
        for arg in typing.get_args(annotation):
            if arg is not Ellipsis:
                yield from _walk_types(arg)


def _check_modules(site: Site, releases: Iterable[ReleaseFile]) -> Iterator[Problem]:
    known = ", ".join(str(m.number) for m in site.modules)
    for rf in releases:
        for g, group in enumerate(rf.release.groups, start=1):
            if group.module is not None and site.module(group.module) is None:
                yield Problem(
                    rf.path,
                    f"groups[{g}].module",
                    f"unknown module {group.module}; site.toml has modules {known}",
                )
            for a, article in enumerate(group.articles, start=1):
                field = f"groups[{g}].articles[{a}].module"
                module = article.module if article.module is not None else group.module
                if module is None:
                    yield Problem(
                        rf.path,
                        field,
                        "an article needs a module: set module on the article or on its group",
                    )
                elif article.module is not None and site.module(article.module) is None:
                    yield Problem(
                        rf.path, field, f"unknown module {article.module}; site.toml has {known}"
                    )
            for n, note in enumerate(group.notes, start=1):
                if note.module is not None and site.module(note.module) is None:
                    yield Problem(
                        rf.path,
                        f"groups[{g}].notes[{n}].module",
                        f"unknown module {note.module}; site.toml has modules {known}",
                    )


def _check_sizes(releases: Iterable[ReleaseFile]) -> Iterator[Problem]:
    for rf in releases:
        count = sum(len(g.articles) + len(g.notes) for g in rf.release.groups)
        if count > MAX_ITEMS_PER_RELEASE:
            yield Problem(
                rf.path,
                "groups",
                f"holds {count} changes; a release holds at most {MAX_ITEMS_PER_RELEASE}",
            )


def _check_unique_ids(releases: Iterable[ReleaseFile]) -> Iterator[Problem]:
    """An item id is minted from date, id and kind, so that triple must be unique."""
    seen: dict[tuple[str, str, str], str] = {}
    for rf in sorted(releases, key=lambda r: r.path):
        day = rf.release.date.isoformat()
        for g, group in enumerate(rf.release.groups, start=1):
            entries = [("articles", i, a.id) for i, a in enumerate(group.articles, start=1)]
            entries += [("notes", i, n.id) for i, n in enumerate(group.notes, start=1)]
            for table, index, item_id in entries:
                where = f"groups[{g}].{table}[{index}]"
                key = (day, item_id, group.kind)
                first = seen.setdefault(key, f"{rf.path} {where}")
                if first != f"{rf.path} {where}":
                    yield Problem(
                        rf.path,
                        f"{where}.id",
                        f"'{item_id}' is already used for a '{group.kind}' change on {day} "
                        f"({first}); give this change its own id",
                    )
