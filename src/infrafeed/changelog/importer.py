"""``infrafeed import``: a changelog page in Markdown becomes release files in ``entries/``.

Everything is read and validated before anything is written, and an existing
release file is replaced only when the caller says so. Each file is written
to a temporary name in its folder and moved into place, so a reader of
``entries/`` never sees half a file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import DataError, PageError, Problem, PublishError
from ..publish.files import write_atomic
from ..source.loader import load_site, release_name
from .mapping import ImportedRelease, to_releases
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
    text = _read(page, source)
    parsed = read_page(text, source, site)
    releases = to_releases(parsed, site, source)

    targets = [(release, _target(entries, release)) for release in releases]
    if not overwrite:
        existing = [
            Problem(
                path.as_posix(),
                "(file)",
                "already exists; run again with --overwrite to replace it",
            )
            for _, path in targets
            if path.exists()
        ]
        if existing:
            raise DataError(existing)

    written: list[Written] = []
    for release, path in targets:
        try:
            _write(path, dump_release(release.release), overwrite=overwrite)
        except PublishError as exc:
            done = ", ".join(w.path for w in written) or "none"
            raise PublishError(f"{exc}; release files written before it: {done}") from None
        groups = release.release.groups
        written.append(
            Written(
                path.as_posix(),
                sum(len(g.articles) for g in groups),
                sum(len(g.notes) for g in groups),
            )
        )
    return ImportReport(tuple(written), tuple(parsed.warnings))


def _read(page: Path, source: str) -> str:
    try:
        raw = page.read_bytes()
    except FileNotFoundError:
        raise PageError([Problem(source, "(file)", "no such file")], source) from None
    except OSError as exc:
        raise PageError(
            [Problem(source, "(file)", f"cannot be read: {exc.strerror}")], source
        ) from None
    raw = raw.removeprefix(b"\xef\xbb\xbf")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        message = f"is not UTF-8 (byte 0x{raw[exc.start]:02x}); save the page as UTF-8"
        raise PageError([Problem(source, "(file)", message, line)], source) from None


def _target(entries: Path, release: ImportedRelease) -> Path:
    day = release.release.date
    return entries / f"{day:%Y}" / f"{release_name(day, release.sequence)}.toml"


def _write(path: Path, text: str, *, overwrite: bool) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, (text.encode(),), overwrite=overwrite)
    except FileExistsError:
        raise PublishError(f"{path}: appeared while importing; left as it is") from None
    except OSError as exc:
        raise PublishError(f"{path}: could not be written ({exc.strerror})") from None
