"""Read the entries folder once: every file a build depends on, and a digest of them all.

The loader validates these bytes, never the files again; the digest lets a build whose
inputs did not change stop here, before anything heavy is imported.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path
from typing import NamedTuple

from ..errors import DataError, Problem

SITE_FILE = "site.toml"
# The id guard's memory, kept in git beside the releases (publish/manifest.py).
PUBLISHED = "published-ids.txt"
# The JSON Schemas editors check the entries against (source/schema.py): read by editors only.
RELEASE_SCHEMA = "schema/release.json"
SITE_SCHEMA = "schema/site.json"
MAX_FILE_BYTES = 1_048_576
# A release file as editors misname one: ".TOML", ".toml.txt" (Notepad), "x.toml " (a space).
_MEANT = re.compile(r"(.*)\.toml(?:\.txt)?\s*", re.I | re.S)
FOLDER_LINK = (
    "is a symbolic link to a folder, which infrafeed does not follow; put the folder itself here"
)


class EntryFile(NamedTuple):
    relative: str  # below the entries folder, with "/"
    shown: str  # as messages name it: the entries folder as given, then ``relative``
    data: bytes | None  # None when it could not be read: see ``problem``
    problem: str | None = None


class Snapshot(NamedTuple):
    folder: Path
    site: EntryFile
    releases: tuple[EntryFile, ...]  # every other ``*.toml``, by path
    published_ids: EntryFile | None  # the id guard's memory, if the folder has one
    # Every *.svg, by path: [feeds] icon names one (source/icon.py); a bad one unnamed is no
    # problem, so their problems wait in ``EntryFile.problem``.
    icons: tuple[EntryFile, ...]
    problems: tuple[tuple[str, str], ...]  # (file, why): what cannot be read as entries
    warnings: tuple[str, ...]  # of files that are not entries, for build and check
    digest: str  # of infrafeed's version and every file read but ``published_ids``: icons too


def require_folder(entries: Path) -> None:
    """Raise :class:`DataError` unless ``entries`` is a folder."""
    try:
        if stat.S_ISDIR(entries.stat().st_mode):
            return
        why = "no such folder"
    except OSError as exc:  # missing, or a path the system refuses: too long, a loop of links
        missing = isinstance(exc, FileNotFoundError | NotADirectoryError)
        why = "no such folder" if missing else f"cannot be read ({exc.strerror})"
    raise DataError([Problem(str(entries), "(folder)", why)])


def read_entries(entries: Path, version: str) -> Snapshot:
    """Read ``site.toml``, every release file below ``entries`` and the id guard's memory."""
    require_folder(entries)
    folder = os.fsencode(entries).decode("utf-8", "backslashreplace")  # as a person reads it
    prefix = "" if folder == "." else folder.rstrip("/") + "/"
    root = os.path.realpath(entries)
    found: dict[str, EntryFile] = {}
    icons: list[EntryFile] = []
    problems: list[tuple[str, str]] = []
    warnings: list[str] = []

    def walk(folder: str, below: str) -> None:
        try:
            listing = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            problems.append((prefix + below or ".", f"cannot be read: {exc.strerror}"))
            return
        for item in listing:
            relative = below + os.fsencode(item.name).decode("utf-8", "backslashreplace")
            if item.name.startswith(".") or item.name.endswith(".md"):
                continue  # hidden (editor backups, .git), or a Markdown note
            if relative in (RELEASE_SCHEMA, SITE_SCHEMA) and not item.is_dir():
                continue  # for editors, not entries: a build neither reads nor hashes them
            if item.is_symlink() and os.path.isdir(item.path):  # noqa: PTH112 (False for a loop)
                problems.append((prefix + relative, FOLDER_LINK))
            elif item.name.endswith(".toml") or relative == PUBLISHED:  # a folder so named too
                limit = None if relative == PUBLISHED else MAX_FILE_BYTES  # it grows with the site
                found[relative] = EntryFile(relative, prefix + relative, *_read(item, root, limit))
            elif item.name.lower().endswith(".svg"):  # a folder so named too: not the icon
                icons.append(
                    EntryFile(relative, prefix + relative, *_read(item, root, MAX_FILE_BYTES))
                )
            elif item.is_dir():
                walk(item.path, relative + "/")
            elif meant := _MEANT.fullmatch(item.name):  # meant as one: never left out unsaid
                problems.append((prefix + relative, f"is not read: name it '{meant[1]}.toml'"))
            else:
                warnings.append(f"{prefix}{relative}: not an entry file; ignored")

    walk(str(entries), "")
    site = found.pop(SITE_FILE, EntryFile(SITE_FILE, prefix + SITE_FILE, None, "is missing"))
    published_ids = found.pop(PUBLISHED, None)
    releases = tuple(sorted(found.values()))
    digest = hashlib.sha256(f"infrafeed {version}\n".encode())
    # Not the id guard's memory: a build keeps it up to date (the manifest records it).
    for file in (site, *releases, *icons):
        data = file.data if file.data is not None else f"(unreadable: {file.problem})".encode()
        name = file.relative.encode(errors="surrogateescape")
        digest.update(b"%d:%s %d\n%s" % (len(name), name, len(data), data))
    for where, why in problems:
        digest.update(f"{where}: {why}\n".encode(errors="surrogateescape"))
    return Snapshot(
        entries,
        site,
        releases,
        published_ids,
        tuple(icons),
        tuple(problems),
        tuple(warnings),
        digest.hexdigest(),
    )


def utf8_text(data: bytes, shown: str, noun: str) -> str:
    """``data`` as text; raise :class:`DataError` naming the line of a byte that is not UTF-8."""
    raw = data.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte order mark, as some editors write
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        why = f"is not UTF-8 (byte 0x{raw[exc.start]:02x}); save the {noun} as UTF-8"
        line = raw[: exc.start].count(b"\n") + 1
        raise DataError([Problem(shown, "(file)", why, line)]) from None


def _read(item: os.DirEntry[str], root: str, limit: int | None) -> tuple[bytes | None, str | None]:
    """The bytes of one file below ``root``, or None and why not."""
    # Entries come from pull requests, and git carries symbolic links: a link
    # to a file elsewhere on the server, or to /dev/zero, must not be read.
    if item.is_symlink() and not Path(os.path.realpath(item.path)).is_relative_to(root):
        return None, (
            "is a symbolic link to a file outside the entries folder; put the file itself here"
        )
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer.
        fd = os.open(item.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        dangling = "is a symbolic link to a file that does not exist"
        return None, dangling if item.is_symlink() else "is missing"
    except OSError as exc:
        return None, f"cannot be read: {exc.strerror}"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, "is not a regular file (a folder, device or FIFO)"
        # Asked for one byte more than stat() gives, so that a file still
        # growing is read on to its end, or to one byte past the limit.
        most = limit if limit is not None else max(info.st_size, 1 << 30)
        chunks: list[bytes] = []
        total = 0
        while total <= most:
            wanted = min(max(info.st_size - total, 0), most - total) + 1
            chunk = os.read(fd, wanted)
            chunks.append(chunk)
            total += len(chunk)
            if len(chunk) < wanted:  # the end of the file
                break
        data = b"".join(chunks)
    except OSError as exc:
        return None, f"cannot be read: {exc.strerror}"
    finally:
        os.close(fd)
    if len(data) > most:
        return None, f"is {max(info.st_size, len(data))} bytes; the limit is {most}"
    return data, None
