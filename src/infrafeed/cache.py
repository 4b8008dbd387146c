"""The build cache: derived data that makes a rebuild cost what changed.

Nothing in it is needed: deleting the folder only makes the next build
slower. It is its own folder (``--cache``, by default ``.infrafeed-cache``
where infrafeed runs, as pytest and mypy keep theirs), never inside the
output folder, which is served. Layout::

    CACHEDIR.TAG                 asks backup tools to skip the folder
    stamps/<digest>.json         per entries and output folder: the no-op check
    <namespace>/releases-<hash>  per folder of entries: what each release file gave
    <namespace>/documents.json   per output file: what it showed, and its sha256

A namespace is a digest of everything besides a release file's own bytes
that decides what the file gives: site.toml, the time zone's rules, the
versions of infrafeed, Python and the libraries that parse, validate and
render (see incremental.py). A build uses one namespace and removes the rest.

This module stays import-light: the no-op check runs before anything heavy.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import marshal
import os
import re
import shutil
import time
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .publish import MANIFEST

FORMAT = 1  # of everything below; a new format makes every old file a miss
_MAGIC = b"infrafeed-cache\n"
_NAMESPACE = re.compile(r"^[0-9a-f]{32}$")
# A file changed this recently may change again within the same tick of the
# file system's clock without its stat changing: it is not stamped.
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
    """The stat of every entry file, taken before any is read: how a no-op is seen cheaply."""

    def __init__(self, entries: Path) -> None:
        digest = hashlib.sha256()
        newest = 0
        for relative, entry in entry_files(entries):
            try:
                st = entry.stat()
            except OSError:
                digest.update(f"{relative}\0-\n".encode())
                continue
            digest.update(
                f"{relative}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0"
                f"{st.st_ino}\0{st.st_dev}\n".encode()
            )
            newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
        self.digest = digest.hexdigest()
        self.racy = newest >= time.time_ns() - _RACY_NS


class Cache:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    # -- the no-op check ------------------------------------------------------

    def unchanged(
        self, entries: Path, out: Path, signature: Signature, version: str
    ) -> tuple[str, ...] | None:
        """The output files, if the stamp says these entries built this output as it is."""
        try:
            stamp = json.loads(self._stamp(entries, out).read_bytes())
            if stamp["format"] != FORMAT or stamp["version"] != version:
                return None
            if stamp["entries"] != signature.digest:
                return None
            files = tuple(stamp["files"])
            if _outputs_digest(out, files) != stamp["outputs"]:
                return None
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return files

    def stamp(
        self, entries: Path, out: Path, signature: Signature, version: str, files: Iterable[str]
    ) -> None:
        """Record that ``signature``'s entries built the output as it is now."""
        path = self._stamp(entries, out)
        if signature.racy:
            self.unstamp(entries, out)
            return
        files = sorted(files)
        stamp = {
            "format": FORMAT,
            "version": version,
            "entries": signature.digest,
            "outputs": _outputs_digest(out, files),
            "files": files,
        }
        with contextlib.suppress(OSError):
            self._ensure()
            path.parent.mkdir(exist_ok=True)
            _write(path, json.dumps(stamp).encode())

    def unstamp(self, entries: Path, out: Path) -> None:
        """Forget the stamp: from now on the output may not be what the entries built."""
        with contextlib.suppress(FileNotFoundError):
            self._stamp(entries, out).unlink()

    def _stamp(self, entries: Path, out: Path) -> Path:
        key = f"{entries.resolve()}\0{out.resolve()}".encode()
        return self.folder / "stamps" / f"{hashlib.sha256(key).hexdigest()[:32]}.json"

    # -- what release files gave, and what documents showed ---------------------

    def releases(self, namespace: str) -> Releases:
        self._ensure()
        folder = self.folder / namespace
        for other in self.folder.iterdir():
            if other != folder and _NAMESPACE.match(other.name) and other.is_dir():
                shutil.rmtree(other, ignore_errors=True)
        folder.mkdir(exist_ok=True)
        return Releases(folder)

    def _ensure(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        tag = self.folder / "CACHEDIR.TAG"
        if not tag.exists():
            _write(tag, _TAG.encode())


Record = tuple[Any, ...]  # (key, date, sequence, items, parts): see incremental.py


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

    def documents(self) -> dict[str, tuple[str, str]]:
        """Per output path: (digest of what it showed, sha256 of its bytes)."""
        try:
            data = json.loads((self.folder / "documents.json").read_bytes())
            return {path: (str(key), str(sha)) for path, (key, sha) in data.items()}
        except (OSError, ValueError, TypeError):
            return {}

    def save(self, current: Iterable[str], documents: Mapping[str, tuple[str, str]]) -> None:
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
            if documents != self.documents():
                text = json.dumps(dict(sorted(documents.items())), indent=0)
                _write(self.folder / "documents.json", text.encode())
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
    folder = relative.rpartition("/")[0]
    return hashlib.sha256(folder.encode()).hexdigest()[:16]


def _outputs_digest(out: Path, files: Iterable[str]) -> str:
    digest = hashlib.sha256()
    for relative in [MANIFEST, *files]:
        try:
            st = (out / relative).stat()
        except OSError:
            digest.update(f"{relative}\0-\n".encode())
            continue
        digest.update(f"{relative}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\n".encode())
    return digest.hexdigest()


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
