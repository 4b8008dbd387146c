"""The build cache: derived data that makes a rebuild cost what changed.

Nothing in it is needed: deleting the folder only makes the next build
slower. It is its own folder (``--cache``, by default ``.infrafeed-cache``
where infrafeed runs, as pytest and mypy keep theirs), never inside the
output folder, which is served. Layout::

    CACHEDIR.TAG                 asks backup tools to skip the folder
    stamps/<crc>.stamp           per entries and output folder: the stat and sha256
                                 of each entry file, the stat of each output file
    <namespace>/releases-<crc>   per folder of entries: what each release file gave
    <namespace>/documents        per output file: what it showed, and its sha256

A namespace is a digest of everything besides a release file's own bytes
that decides what the file gives: site.toml, the time zone's rules, the
versions of infrafeed, Python and the libraries that parse, validate and
render (see incremental.py). A build uses one namespace; the few most
recently used others are kept, the rest removed.

This module stays import-light: the no-op check runs before anything heavy.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import time
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

FORMAT = 3  # of everything below; a new format makes every old file a miss
# Namespaces kept: several sites, or settings being tried, may share a folder.
_KEEP_NAMESPACES = 4
_MAGIC = b"infrafeed-cache\n"
# A file changed this recently may change again within the same tick of the
# file system's clock without its stat changing: its stamp is not trusted.
_RACY_NS = 2_000_000_000
_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by infrafeed.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


def entry_files(entries: Path) -> list[tuple[str, os.DirEntry[str]]]:
    """Every file below ``entries`` as (relative POSIX path, entry), sorted by the former.

    The same files ``Path.rglob('*')`` and ``is_file()`` find: symbolic links
    to files count, linked folders are not entered.
    """
    found: list[tuple[str, os.DirEntry[str]]] = []
    if entries.is_dir():
        _walk(str(entries), "", found)
    found.sort(key=lambda pair: pair[0])
    return found


def _walk(folder: str, prefix: str, found: list[tuple[str, os.DirEntry[str]]]) -> None:
    try:
        with os.scandir(folder) as listing:
            children = list(listing)
    except PermissionError:
        return
    for child in children:
        if child.is_dir(follow_symlinks=False):
            _walk(child.path, f"{prefix}{child.name}/", found)
        elif child.is_file():
            found.append((f"{prefix}{child.name}", child))


class Signature:
    """The stat of every entry file, taken before any is read: how a no-op is seen cheaply.

    In listing order, not sorted: a listing that changes order only costs a
    build that finds nothing to do.
    """

    def __init__(self, entries: Path) -> None:
        self.files: list[tuple[str, int, int, int, int]] = []
        if entries.is_dir():
            _stat_walk(str(entries), "", self.files)

    def settled(self) -> set[str]:
        """The files not changed in the last seconds: their stat will show any later change.

        A file changed within the same tick of the file system's clock as
        the stat keeps its stat; one older than that cannot.
        """
        since = time.time_ns() - _RACY_NS
        return {f[0] for f in self.files if f[2] < since and f[3] < since}


def _stat_walk(folder: str, prefix: str, files: list[tuple[str, int, int, int, int]]) -> None:
    # _walk's files, stat'ed on the way: this loop is most of a no-op build.
    try:
        with os.scandir(folder) as listing:
            for child in listing:
                if child.is_dir(follow_symlinks=False):
                    _stat_walk(child.path, f"{prefix}{child.name}/", files)
                elif child.is_file():
                    try:
                        st = child.stat()
                    except OSError:
                        files.append((prefix + child.name, -1, -1, -1, -1))
                        continue
                    files.append(
                        (prefix + child.name, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
                    )
    except PermissionError:
        return


class Stamp:
    """What a build recorded about its entries and the output it left."""

    def __init__(self, files: Any, watched: Any, entries: Any, hashes: Any, complete: Any) -> None:
        self.complete = complete is True  # no entry had changed in the seconds before
        self.files: tuple[str, ...] = tuple(files)
        self.watched: list[tuple[str, int, int, int]] = watched
        self.entries: list[tuple[str, int, int, int, int]] = entries
        self.hashes: bytes = hashes

    def matches(self, out: Path, signature: Signature) -> bool:
        """True when the entries and the output files are as the build left them."""
        try:
            return (
                self.complete
                and self.entries == signature.files
                and self.watched == _stats(out, [w[0] for w in self.watched])
            )
        except (TypeError, IndexError):
            return False

    def known(self, signature: Signature) -> dict[str, str]:
        """The sha256 of each entry file whose stat did not change since the stamp.

        Only files that had not changed in the seconds before the stamp have
        one, so a file changed since has another ctime (see ``_RACY_NS``).
        """
        try:
            hashes = marshal.loads(self.hashes)  # noqa: S302 - our own file
            before = {stat[0]: stat for stat in self.entries}
            return {
                stat[0]: hashes[stat[0]]
                for stat in signature.files
                if before.get(stat[0]) == stat and stat[0] in hashes
            }
        except (TypeError, IndexError, KeyError, ValueError, EOFError):
            return {}


class Cache:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    # -- the no-op check ------------------------------------------------------

    def stamped(self, entries: Path, out: Path, version: str) -> Stamp | None:
        """What the last build of ``entries`` into ``out`` recorded, if it still applies."""
        try:
            path, paths = self._stamp(entries, out)
            data = marshal.loads(path.read_bytes())  # noqa: S302 - our own file
            if data["format"] != FORMAT or data["version"] != version or data["paths"] != paths:
                return None
            return Stamp(
                data["files"], data["watched"], data["entries"], data["hashes"], data["complete"]
            )
        except (OSError, ValueError, EOFError, KeyError, TypeError):
            return None

    def stamp(
        self,
        entries: Path,
        out: Path,
        signature: Signature,
        version: str,
        files: Iterable[str],
        also: Iterable[str],
        hashes: Mapping[str, str],
    ) -> None:
        """Record that ``signature``'s entries, whose contents hash to ``hashes``, built
        the output as it is now.

        ``files`` are the output files; the stat of ``also`` (the manifest) is
        checked too. Entries changed in the last seconds are recorded as
        unknown, and then the stamp is not enough for a no-op.
        """
        settled = signature.settled()
        path, paths = self._stamp(entries, out)
        files = sorted(files)
        stamp = {
            "format": FORMAT,
            "version": version,
            "paths": paths,
            "entries": signature.files,
            "complete": len(settled) == len(signature.files),
            # Kept as one blob: a no-op build reads the stamp but not these.
            "hashes": marshal.dumps({n: sha for n, sha in hashes.items() if n in settled}),
            "files": files,
            "watched": _stats(out, [*also, *files]),
        }
        with contextlib.suppress(OSError):
            self._ensure()
            path.parent.mkdir(exist_ok=True)
            _write(path, marshal.dumps(stamp))

    def unstamp(self, entries: Path, out: Path) -> None:
        """Forget the stamp: from now on the output may not be what the entries built."""
        with contextlib.suppress(OSError):
            self._stamp(entries, out)[0].unlink()

    def _stamp(self, entries: Path, out: Path) -> tuple[Path, str]:
        paths = f"{entries.resolve()}\0{out.resolve()}"
        return self.folder / "stamps" / f"{_crc(paths)}.stamp", paths

    # -- what release files gave, and what documents showed ---------------------

    def releases(self, namespace: str) -> Releases:
        """The records of ``namespace``; the least recently used others beyond a few go.

        A cache that cannot be written to is only a slower build: reads miss,
        writes are skipped.
        """
        import shutil

        folder = self.folder / namespace
        with contextlib.suppress(OSError):
            self._ensure()
            folder.mkdir(exist_ok=True)
            os.utime(folder)
            others = [p for p in self.folder.iterdir() if _is_namespace(p.name) and p != folder]
            others.sort(key=lambda p: p.stat().st_mtime_ns, reverse=True)
            for other in others[_KEEP_NAMESPACES - 1 :]:
                shutil.rmtree(other, ignore_errors=True)
        return Releases(folder)

    def _ensure(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        tag = self.folder / "CACHEDIR.TAG"
        if not tag.exists():
            _write(tag, _TAG.encode())


Record = tuple[Any, ...]  # (key, date, sequence, items): see incremental.py


class Releases:
    """One namespace's records: per release file, what it gave (grouped by folder)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._segments: dict[str, dict[str, Record]] = {}
        self._dirty: set[str] = set()

    def get(self, relative: str, key: str) -> Record | None:
        """The record of the release file at ``relative`` if its bytes hash to ``key``."""
        record = self._segment(_segment_of(relative)).get(relative)
        return record if record is not None and record[0] == key else None

    def put(self, relative: str, record: Record) -> None:
        segment = _segment_of(relative)
        self._segment(segment)[relative] = record
        self._dirty.add(segment)

    def documents(self) -> dict[str, Any]:
        """Per output path: what it showed (see incremental.Documents)."""
        payload = _read_checked(self.folder / "documents")
        try:
            data = marshal.loads(payload) if payload is not None else {}  # noqa: S302
        except (ValueError, EOFError, TypeError):
            return {}
        return data if isinstance(data, dict) else {}

    def save(self, current: Iterable[str], documents: Mapping[str, Any]) -> None:
        """Write what changed; forget release files that are gone.

        Written without fsync: a file cut short by a crash fails its checksum
        and is a miss, like a missing one.
        """
        by_segment: dict[str, set[str]] = {}
        for relative in current:
            by_segment.setdefault(_segment_of(relative), set()).add(relative)
        with contextlib.suppress(OSError):
            for path in self.folder.glob("releases-*"):
                if path.name.removeprefix("releases-") not in by_segment:
                    path.unlink()
            for segment, wanted in by_segment.items():
                records = self._segment(segment)
                if set(records) != wanted:
                    for relative in set(records) - wanted:
                        del records[relative]
                    self._dirty.add(segment)
                if segment in self._dirty:
                    _write_checked(self.folder / f"releases-{segment}", marshal.dumps(records))
            _write_checked(self.folder / "documents", marshal.dumps(dict(documents)))
        self._dirty.clear()

    def _segment(self, segment: str) -> dict[str, Record]:
        records = self._segments.get(segment)
        if records is None:
            records = {}
            payload = _read_checked(self.folder / f"releases-{segment}")
            if payload is not None:
                with contextlib.suppress(ValueError, EOFError, TypeError):
                    loaded = marshal.loads(payload)  # noqa: S302 - our own file, checksummed
                    if isinstance(loaded, dict):
                        records = loaded
            self._segments[segment] = records
        return records


def _segment_of(relative: str) -> str:
    # Folders whose names share a CRC share a file: records are keyed by path.
    return _crc(relative.rpartition("/")[0])


def _stats(out: Path, files: Iterable[str]) -> list[tuple[str, int, int, int]]:
    found = []
    for relative in files:
        try:
            st = (out / relative).stat()
        except OSError:
            found.append((relative, -1, -1, -1))
            continue
        found.append((relative, st.st_size, st.st_mtime_ns, st.st_ino))
    return found


def _is_namespace(name: str) -> bool:
    return len(name) == 32 and all(c in "0123456789abcdef" for c in name)


def _crc(text: str) -> str:
    return f"{zlib.crc32(text.encode()):08x}"


def _write(path: Path, data: bytes) -> None:
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temp.write_bytes(data)
        temp.replace(path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


def _write_checked(path: Path, payload: bytes) -> None:
    check = f"{len(payload)} {zlib.crc32(payload)}\n".encode()
    _write(path, _MAGIC + check + payload)


def _read_checked(path: Path) -> memoryview | None:
    """The payload, unless the file is not whole (CRC-32 finds a torn or zeroed write)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    end = data.find(b"\n", len(_MAGIC))
    if not data.startswith(_MAGIC) or end < 0:
        return None
    payload = memoryview(data)[end + 1 :]
    if data[len(_MAGIC) : end] != f"{len(payload)} {zlib.crc32(payload)}".encode():
        return None
    return payload
