"""``infrafeed import``: a changelog page in Markdown becomes release files in ``entries/``.

All is read and validated before anything is written; an existing release file
is replaced only when asked to; each file is written whole or not at all.
"""

from __future__ import annotations

import datetime as dt
import json
import stat
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from .._version import __version__
from ..errors import DataError, PageError, Problem, PublishError
from ..publish.files import write_atomic
from ..source.files import (
    FOLDER_LINK,
    MAX_FILE_BYTES,
    SITE_FILE,
    EntryFile,
    read_entries,
    utf8_text,
)
from ..source.loader import load_site, release_name, validate
from ..source.models import Release
from ..source.schema import schema_line
from .mapping import to_releases
from .reader import read_page

_NOT_A_FILE = "is not a regular file (a folder, device or socket)"
_NUL = "holds a NUL byte, which no text has (is it UTF-16?); save the page as UTF-8"
_MAX_PAGE_BYTES = 16 * MAX_FILE_BYTES  # many release files' worth: some 40,000 changes
_TOO_BIG = (
    f"is over {_MAX_PAGE_BYTES} bytes, the limit; import it in parts, cut at release headings"
)
_TOO_DEEP = "emphasis or links are nested too deeply to read; nest them a few levels at most"


@dataclass(frozen=True)
class Written:
    path: str  # as shown to the user
    articles: int
    notes: int


@dataclass(frozen=True)
class ImportReport:
    written: tuple[Written, ...]
    warnings: tuple[Problem, ...]  # what could not be mapped: "page.md:12: warning: ..."

    @property
    def articles(self) -> int:
        return sum(w.articles for w in self.written)

    @property
    def notes(self) -> int:
        return sum(w.notes for w in self.written)


def import_page(page: Path, entries: Path, *, overwrite: bool = False) -> ImportReport:
    """Write one release file per release of ``page`` into ``entries``."""
    site = load_site(entries)
    source = page.as_posix()
    try:  # the parsers recurse per level of emphasis and links: "**" * 300 must not crash
        parsed = read_page(_read(page, source), source, site)
        releases = to_releases(parsed, site, source)
    except RecursionError:
        raise PageError([Problem(source, "page", _TOO_DEEP)], source) from None
    targets = []
    for found in releases:
        name = release_name(found.release.date, found.sequence)
        targets.append((found.release, entries / name[:4] / f"{name}.toml"))
    # read_entries refuses a year folder that is a link: what it would hold is never read.
    if linked := sorted({p.parent for _, p in targets if p.parent.is_symlink()}):
        raise DataError([Problem(folder.as_posix(), "(folder)", FOLDER_LINK) for folder in linked])
    if not overwrite:
        exists = "already exists; run again with --overwrite to replace it"
        if existing := [Problem(p.as_posix(), "(file)", exists) for _, p in targets if p.exists()]:
            raise DataError(existing)
    first = schema_line(entries)  # each file lands in a year folder, where the line is right
    dumped = [(r, path, (first + dump_release(r)).encode()) for r, path in targets]
    _check_with(entries, {path: data for _, path, data in dumped})
    written: list[Written] = []
    for release, path, data in dumped:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, (data,), overwrite=overwrite)
        except OSError as exc:
            problem = f"could not be written ({exc.strerror})"
            if isinstance(exc, FileExistsError) and not path.parent.is_dir():  # from mkdir
                problem = f"could not be written: {path.parent} is not a folder; move it away"
            elif isinstance(exc, FileExistsError):
                problem = "appeared while importing; left as it is"
            done = ", ".join(w.path for w in written) or "none"
            message = f"{path}: {problem}; release files written before it: {done}"
            raise PublishError(message) from None
        articles = sum(len(group.articles) for group in release.groups)
        notes = sum(len(group.notes) for group in release.groups)
        written.append(Written(path.as_posix(), articles, notes))
    return ImportReport(tuple(written), tuple(parsed.warnings))


def _check_with(entries: Path, files: dict[Path, bytes]) -> None:
    """Raise what ``check`` would say of ``entries`` with ``files`` in them, and not without (an
    id a release of the folder uses already, say): before anything is written."""
    snapshot = read_entries(entries, __version__)
    added = {path.relative_to(entries).as_posix(): data for path, data in files.items()}
    prefix = snapshot.site.shown.removesuffix(SITE_FILE)
    kept = [f for f in snapshot.releases if f.relative not in added]
    new = [EntryFile(relative, prefix + relative, data) for relative, data in added.items()]
    try:
        validate(snapshot._replace(releases=tuple(kept)))
        before: set[str] = set()
    except DataError as exc:
        before = {str(problem) for problem in exc.problems}
    try:
        validate(snapshot._replace(releases=tuple(sorted([*kept, *new]))))
    except DataError as exc:
        if found := [p for p in exc.problems if str(p) not in before]:
            raise DataError(found) from None


def _read(page: Path, source: str) -> str:
    try:
        # A pipe is read, as cat would (`infrafeed import <(git show main:CHANGELOG.md)`); a
        # device is not: /dev/zero would never end.
        if stat.S_ISREG(mode := page.stat().st_mode) or stat.S_ISFIFO(mode):
            with page.open("rb") as handle:  # one byte past the limit at most, never all of it
                data = handle.read(_MAX_PAGE_BYTES + 1)
            if len(data) > _MAX_PAGE_BYTES:
                problem = Problem(source, "(file)", _TOO_BIG)
            elif (nul := (text := utf8_text(data, source, "page")).find("\0")) < 0:
                return text  # (a NUL: Markdown would read it as U+FFFD, silently)
            else:
                problem = Problem(source, "(file)", _NUL, text.count("\n", 0, nul) + 1)
        else:
            problem = Problem(source, "(file)", _NOT_A_FILE)
    except FileNotFoundError:
        problem = Problem(source, "(file)", "no such file")
    except OSError as exc:
        problem = Problem(source, "(file)", f"cannot be read: {exc.strerror}")
    except DataError as exc:  # not UTF-8
        raise PageError(exc.problems, source) from None
    raise PageError([problem], source)


def dump_release(release: Release) -> str:
    """The TOML of a release file, laid out as people write it by hand. Driven by the models'
    fields, so a field added to the schema is written too; fields left at their default
    (``None``, an empty array) are omitted."""
    return "\n".join(_table(release, "")).lstrip("\n") + "\n"


def _table(model: BaseModel, path: str) -> list[str]:
    # TOML: a table's own keys come before its sub-tables, and those before arrays of tables.
    lines: list[str] = []
    tables: list[str] = []
    arrays: list[str] = []
    for name, info in type(model).model_fields.items():
        value, key = getattr(model, name), f"{path}{name}"
        if value is None or value == () or (not info.is_required() and value == info.default):
            continue
        if isinstance(value, BaseModel):
            tables += ["", f"[{key}]", *_table(value, f"{key}.")]
        elif isinstance(value, tuple) and isinstance(value[0], BaseModel):
            for item in value:
                arrays += ["", f"[[{key}]]", *_table(item, f"{key}.")]
        else:
            lines.append(f"{name} = {_value(value)}")
    return lines + tables + arrays


def _value(value: object) -> str:
    # TOML's booleans, integers and basic strings are JSON's: the models refuse every
    # control character but tab and line breaks, and for what remains JSON's escapes are TOML's.
    if isinstance(value, bool | int | str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):
        # An array of rows (a table's cells): one row per line.
        return "[\n" + "".join(f"  {_value(row)},\n" for row in value) + "]"
    if isinstance(value, tuple):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    raise TypeError(f"cannot write {value!r} as TOML")
