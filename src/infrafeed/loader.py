"""Load and validate ``entries/``: every file, every problem, in one pass.

Reading stops at nothing: each file is parsed and validated on its own, then
the cross-file rules run (file name vs date, known modules, unique ids). All
problems are raised together as one :class:`DataError`, so a maintainer fixes
a release file in one round instead of one error at a time.
"""

from __future__ import annotations

import datetime as dt
import difflib
import hashlib
import os
import re
import stat
import tomllib
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from . import inline
from .errors import DataError, Problem
from .models import MAX_ITEMS_PER_RELEASE, Release, Site
from .paths import below

try:
    # tomli's compiled wheel is the parser tomllib was copied from, so it gives
    # the same values, about 1.7 times faster (bench/NOTES.md). A file it refuses
    # is parsed again by tomllib, so messages and line numbers stay the standard
    # library's.
    from tomli import loads as _fast_loads
except ImportError:  # an environment set up before tomli was a dependency: slower, same result
    from tomllib import loads as _fast_loads

M = TypeVar("M", bound=BaseModel)

SITE_FILE = "site.toml"
MAX_FILE_BYTES = 1_048_576
# A release file is named by its date; a second release on the same date adds "-2".
_RELEASE_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:-([2-9]|[1-9]\d))?\.toml$")
_TOML_LINE = re.compile(r"\(at line (\d+), column \d+\)")


class ReleaseFile:
    """A validated release and where it came from.

    A file the build cache vouches for (unchanged, and valid under the same
    settings and versions: see release_cache.py) is not parsed at all: its
    date and sequence come from its name, which validation tied to its
    content, and its release is read again only if something asks for it.
    """

    __slots__ = ("_release", "_reload", "_vouched", "date", "digest", "parsed", "path", "sequence")

    def __init__(
        self,
        path: str,
        sequence: int,
        release: Release | None = None,
        parsed: inline.Parsed | None = None,
        *,
        digest: str = "",
        date: dt.date | None = None,
        reload: Callable[[], Release] | None = None,
        vouched: bool = False,
    ) -> None:
        if release is None and (reload is None or date is None):
            raise ValueError("a release file needs its release, or its date and a way to read it")
        self.path = path  # as reported in messages: relative to the entries folder's parent
        self.sequence = sequence  # 1 for YYYY-MM-DD.toml, N for YYYY-MM-DD-N.toml
        self.date: dt.date = release.date if release is not None else date  # type: ignore[assignment]
        self.digest = digest  # sha256 of the file's bytes ("" when not read from a file)
        # The nodes of its Markdown texts as validation parsed them: see nodes().
        self.parsed = parsed if parsed is not None else inline.Parsed()
        self._release = release
        self._reload = reload  # reads the file again, once its release was let go
        self._vouched = vouched

    @property
    def release(self) -> Release:
        if self._release is None:
            assert self._reload is not None
            self._release = self._reload()
        return self._release

    @property
    def known(self) -> bool:
        """Whether the build cache vouched for the file (it was not parsed)."""
        return self._vouched

    def forget(self) -> None:
        """Let the release and its parsed texts go, if the file can be read again.

        A build needs them only until its items and page sections are made;
        at 100,000 items they weigh more than the items.
        """
        if self._reload is not None:
            self._release = None
            self.parsed = inline.Parsed()

    def nodes(self, text: str) -> tuple[inline.Node, ...]:
        """The inline nodes of one of the release's Markdown texts, without parsing it again.

        A text without markup was not kept: one regex scan gives it back.
        """
        return self.parsed.nodes(text)

    @property
    def anchor(self) -> str:
        """The changelog page's heading id for this release (see pages.md)."""
        day = self.date.isoformat()
        return day if self.sequence == 1 else f"{day}-{self.sequence}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ReleaseFile):
            return NotImplemented
        return (self.path, self.sequence, self.release) == (
            other.path,
            other.sequence,
            other.release,
        )

    def __hash__(self) -> int:
        return hash((self.path, self.sequence, self.date))

    def __repr__(self) -> str:
        return f"ReleaseFile({self.path!r}, {self.sequence})"


@dataclass(frozen=True)
class Changelog:
    site: Site
    releases: tuple[ReleaseFile, ...]  # newest first, as the page shows them


# What the uniqueness check needs of one release: (date, id, kind, field) per change.
IdKey = tuple[str, str, str, str]
# The build cache's answer for a file's shown name and sha256: the id keys of
# that exact file, valid under the same settings, or None (see release_cache.py).
Known = Callable[[str, str], Sequence[IdKey] | None]


def load(
    entries: Path,
    known: Known | None = None,
    digests: Mapping[str, str] | None = None,
    listing: Sequence[tuple[str, Path]] | None = None,
) -> Changelog:
    """Read ``entries/site.toml`` and every release file below ``entries``.

    ``known`` lets a build skip parsing and validating the files its cache
    vouches for; the result is the same as without it. ``digests`` are the
    sha256 of files the build has just hashed (by path below ``entries``): a
    file its cache vouches for by that digest is not even read. ``listing``
    is every path below ``entries`` as ``entries.rglob("*")`` gave it to the
    build just now (build.inputs_digest): the folders are not walked again.
    """
    problems: list[Problem] = []
    if not entries.is_dir():
        raise DataError([Problem(str(entries), "(folder)", "no such folder")])
    shown = _Shown(entries)

    site_path = entries / SITE_FILE
    site = _read_toml(site_path, shown(site_path), problems, entries)
    releases: dict[str, dict[str, Any]] = {}
    read: dict[str, str] = {}  # sha256 of each release file parsed
    reloaders: dict[str, Callable[[], Release]] = {}
    vouched: list[tuple[ReleaseFile, Sequence[IdKey]]] = []
    for relative, path in _release_paths(entries, listing):
        name = shown(path)
        match = _RELEASE_NAME.match(path.name)
        if match is None:
            problems.append(_misnamed(name))
            continue
        # Only regular files have a digest from the build (build.inputs_digest):
        # a symbolic link is read, and checked, every time.
        hashed = digests.get(relative) if digests else None
        keys = known(name, hashed) if known is not None and hashed is not None else None
        raw = None
        digest = hashed
        if keys is None:
            raw = _read_bytes(path, name, problems, entries)
            if raw is None:
                continue
            digest = hashlib.sha256(raw).hexdigest()
            if known is not None and digest != hashed:
                keys = known(name, digest)
        if keys is not None:
            assert digest is not None
            rf = ReleaseFile(
                name,
                int(match.group(2) or 1),
                digest=digest,
                date=dt.date.fromisoformat(match.group(1)),
                reload=_reloader(path, name, entries, digest),
                vouched=True,
            )
            vouched.append((rf, keys))
            continue
        assert raw is not None and digest is not None
        data = _parse_toml(raw, name, problems)
        if data is not None:
            releases[name] = data
            read[name] = digest
            reloaders[name] = _reloader(path, name, entries, digest)
    return _assemble(site, shown(site_path), releases, problems, read, vouched, reloaders)


def _reloader(path: Path, name: str, entries: Path, digest: str) -> Callable[[], Release]:
    """Read the file again, as it was when the build first read it (``digest``), or fail."""

    def reload() -> Release:
        problems: list[Problem] = []
        raw = _read_bytes(path, name, problems, entries)
        if raw is not None and hashlib.sha256(raw).hexdigest() != digest:
            # What the build made from it so far came from other bytes.
            problems.append(Problem(name, "(file)", "changed during the build; build again"))
            raw = None
        data = _parse_toml(raw, name, problems) if raw is not None else None
        release = _validate(Release, data, name, problems) if data is not None else None
        if release is None:
            raise DataError(problems or [Problem(name, "(file)", "changed during the build")])
        return release

    return reload


def from_data(
    site: Mapping[str, Any],
    releases: Mapping[str, Mapping[str, Any]],
    *,
    site_name: str = SITE_FILE,
) -> Changelog:
    """Validate settings and releases already read as TOML tables, as :func:`load` does.

    ``releases`` maps each release's file name (as messages should show it,
    e.g. ``entries/2026/2026-11-07.toml``) to its table. For tools and tests
    that hold entries in memory, including text no TOML file can carry.
    """
    problems: list[Problem] = []
    tables: dict[str, dict[str, Any]] = {}
    for name, data in releases.items():
        if _RELEASE_NAME.match(PurePosixPath(name).name) is None:
            problems.append(_misnamed(name))
        else:
            tables[name] = dict(data)
    return _assemble(dict(site), site_name, tables, problems)


def _misnamed(name: str) -> Problem:
    return Problem(
        name,
        "(file name)",
        "a release file is named by its date, YYYY-MM-DD.toml "
        "(or YYYY-MM-DD-2.toml for a second release that day)",
    )


def _assemble(
    site_data: dict[str, Any] | None,
    site_name: str,
    release_data: Mapping[str, dict[str, Any]],
    problems: list[Problem],
    digests: Mapping[str, str] | None = None,
    vouched: Sequence[tuple[ReleaseFile, Sequence[IdKey]]] = (),
    reloaders: Mapping[str, Callable[[], Release]] | None = None,
) -> Changelog:
    site: Site | None = None
    if site_data is not None:
        site = _validate(Site, site_data, site_name, problems)

    releases: list[ReleaseFile] = []
    for name, data in release_data.items():
        file_name = PurePosixPath(name).name
        match = _RELEASE_NAME.match(file_name)
        assert match is not None  # misnamed files were reported before reading
        parsed = inline.Parsed()
        release = _validate(Release, data, name, problems, parsed)
        if release is None:
            continue
        if release.date.isoformat() != match.group(1):
            problems.append(
                Problem(
                    name,
                    "date",
                    f"is {release.date.isoformat()} but the file is named {file_name}; "
                    "make the date and the file name agree",
                )
            )
            continue
        digest = digests.get(name, "") if digests is not None else ""
        reload = reloaders.get(name) if reloaders is not None else None
        rf = ReleaseFile(
            name, int(match.group(2) or 1), release, parsed, digest=digest, reload=reload
        )
        releases.append(rf)

    # Files the cache vouched for passed the per-file rules under these same
    # settings; only the rule across files runs again for them.
    if site is not None:
        problems.extend(_check_modules(site, releases))
    problems.extend(_check_sizes(releases))
    keyed: list[tuple[str, Sequence[IdKey]]] = [(rf.path, release_keys(rf)) for rf in releases]
    keyed += [(rf.path, keys) for rf, keys in vouched]
    problems.extend(_check_unique_ids(keyed))
    if problems:
        raise DataError(problems)
    assert site is not None
    releases += [rf for rf, _ in vouched]
    releases.sort(key=lambda r: (r.date, r.sequence), reverse=True)
    return Changelog(site, tuple(releases))


def load_site(entries: Path) -> Site:
    """Read and validate only ``entries/site.toml`` (for commands that add releases)."""
    problems: list[Problem] = []
    site_path = entries / SITE_FILE
    shown = site_path.as_posix()
    data = _read_toml(site_path, shown, problems)
    site = _validate(Site, data, shown, problems) if data is not None else None
    if site is None:
        raise DataError(problems)
    return site


class _Shown:
    """Paths as the maintainer typed them: relative to where the entries folder lives."""

    def __init__(self, entries: Path) -> None:
        self.entries = entries

    def __call__(self, path: Path) -> str:
        # Every path here is the entries folder joined with a path below it
        # (rglob's, or site.toml): as typed already.
        return path.as_posix()


def _release_paths(
    entries: Path, listing: Sequence[tuple[str, Path]] | None = None
) -> list[tuple[str, Path]]:
    """Every ``*.toml`` below ``entries`` except the site file, with its path below ``entries``.

    Hidden files and folders (editor backups, ``.git``) are skipped; sorting
    makes the result independent of the file system's listing order. From
    ``listing`` (every path below ``entries``), when given, instead of a walk.
    """
    if listing is None:
        relative_of = below(entries)
        listing = [(relative_of(path), path) for path in entries.rglob("*.toml")]
    found = []
    for relative, path in listing:
        # rglob("*.toml") matches names: "*" is anything, a leading dot included.
        if not relative.endswith(".toml") or relative == SITE_FILE:
            continue
        if any(part.startswith(".") for part in relative.split("/")):
            continue
        found.append((relative, path))
    return sorted(found, key=lambda pair: pair[0])


def _read_toml(
    path: Path, name: str, problems: list[Problem], root: Path | None = None
) -> dict[str, Any] | None:
    """Parse one TOML file below ``root`` (the entries folder; by default its folder)."""
    raw = _read_bytes(path, name, problems, root)
    return _parse_toml(raw, name, problems) if raw is not None else None


def _read_bytes(
    path: Path, name: str, problems: list[Problem], root: Path | None = None
) -> bytes | None:
    """The bytes of one file below ``root``, or None with the problem recorded."""
    # Entries come from pull requests, and git carries symbolic links: a link
    # to a file elsewhere on the server, or to /dev/zero, must not be read.
    # (realpath, not Path.resolve, which raises on a symlink loop; only for a
    # link, as it costs a system call per folder of the path.)
    if path.is_symlink():
        inside = os.path.realpath(root if root is not None else path.parent)
        if not Path(os.path.realpath(path)).is_relative_to(inside):
            problems.append(
                Problem(
                    name,
                    "(file)",
                    "is a symbolic link to a file outside the entries folder; "
                    "put the file itself here",
                )
            )
            return None
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            problems.append(
                Problem(name, "(file)", "is not a regular file (a folder, device or FIFO)")
            )
            return None
        with os.fdopen(fd, "rb") as handle:
            # Read at most one byte more than allowed: the size stat() gives may lie
            # (a file still growing), the limit may not.
            raw = handle.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            size = max(info.st_size, len(raw))
            problems.append(
                Problem(name, "(file)", f"is {size} bytes; the limit is {MAX_FILE_BYTES}")
            )
            return None
    except FileNotFoundError:
        problems.append(Problem(name, "(file)", "is missing"))
        return None
    except OSError as exc:
        problems.append(Problem(name, "(file)", f"cannot be read: {exc.strerror}"))
        return None
    return raw


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
        try:
            return _fast_loads(text)
        except ValueError:  # tomli's TOMLDecodeError; tomllib's message is the one users see
            pass
        return tomllib.loads(text)
    except RecursionError:
        # Both parsers recurse per level of inline arrays and tables: a file of
        # "[[[[..." must be refused like any other bad TOML, not crash the build.
        problems.append(
            Problem(name, "(toml)", "not valid TOML: arrays or tables nested too deeply")
        )
        return None
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


def _validate(
    model: type[M],
    data: dict[str, Any],
    name: str,
    problems: list[Problem],
    parsed: inline.Parsed | None = None,
) -> M | None:
    try:
        return model.model_validate(data, context=parsed)
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


def release_keys(rf: ReleaseFile) -> list[IdKey]:
    """Each change of ``rf`` as the uniqueness check sees it: (date, id, kind, field)."""
    day = rf.date.isoformat()
    keys: list[IdKey] = []
    for g, group in enumerate(rf.release.groups, start=1):
        for i, article in enumerate(group.articles, start=1):
            keys.append((day, article.id, group.kind, f"groups[{g}].articles[{i}]"))
        for i, note in enumerate(group.notes, start=1):
            keys.append((day, note.id, group.kind, f"groups[{g}].notes[{i}]"))
    return keys


def _check_unique_ids(releases: Iterable[tuple[str, Sequence[IdKey]]]) -> Iterator[Problem]:
    """An item id is minted from date, id and kind, so that triple must be unique."""
    seen: dict[tuple[str, str, str], str] = {}
    for path, keys in sorted(releases, key=lambda r: r[0]):
        for day, item_id, kind, where in keys:
            first = seen.setdefault((day, item_id, kind), f"{path} {where}")
            if first != f"{path} {where}":
                yield Problem(
                    path,
                    f"{where}.id",
                    f"'{item_id}' is already used for a '{kind}' change on {day} "
                    f"({first}); give this change its own id",
                )
