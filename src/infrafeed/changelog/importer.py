"""``infrafeed import``: a changelog page in Markdown becomes release files in ``entries/``.

All is read and validated before anything is written; an existing release file
is replaced only when asked to; each file is written whole or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import DataError, PageError, Problem, PublishError
from ..publish.files import write_atomic
from ..source.files import utf8_text
from ..source.loader import load_site, release_name
from .mapping import to_releases
from .reader import read_page
from .release_toml import dump_release


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
    parsed = read_page(_read(page, source), source, site)
    targets = []
    for found in to_releases(parsed, site, source):
        name = release_name(found.release.date, found.sequence)
        targets.append((found.release, entries / f"{found.release.date:%Y}" / f"{name}.toml"))
    if not overwrite:
        exists = "already exists; run again with --overwrite to replace it"
        if existing := [Problem(p.as_posix(), "(file)", exists) for _, p in targets if p.exists()]:
            raise DataError(existing)
    written: list[Written] = []
    for release, path in targets:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, (dump_release(release).encode(),), overwrite=overwrite)
        except OSError as exc:
            problem = f"could not be written ({exc.strerror})"
            if isinstance(exc, FileExistsError):
                problem = "appeared while importing; left as it is"
            done = ", ".join(w.path for w in written) or "none"
            message = f"{path}: {problem}; release files written before it: {done}"
            raise PublishError(message) from None
        articles = sum(len(group.articles) for group in release.groups)
        notes = sum(len(group.notes) for group in release.groups)
        written.append(Written(path.as_posix(), articles, notes))
    return ImportReport(tuple(written), tuple(parsed.warnings))


def _read(page: Path, source: str) -> str:
    try:
        return utf8_text(page.read_bytes(), source, "page")
    except FileNotFoundError:
        problem = Problem(source, "(file)", "no such file")
    except OSError as exc:
        problem = Problem(source, "(file)", f"cannot be read: {exc.strerror}")
    except DataError as exc:  # not UTF-8
        raise PageError(exc.problems, source) from None
    raise PageError([problem], source)
