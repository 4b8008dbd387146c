"""The build cache: what each release file gave a build, so that an unchanged one is not redone.

Derived data only: deleting it, or damaging it, costs nothing but time. A record is found by the
sha256 of all it was made from (the file's path, its name as given and its bytes, ``site.toml``,
the time zone's rules, infrafeed's code, Python and the rendering libraries) and carries the
sha256 of its bytes: one that does not match, or is not shaped like a record, is a miss. A
build's records are one file, ``releases.pack``, written anew when the build made records or
left some unused. They are read with ``marshal``: keep the folder as private as the entries (a
forged record with a matching checksum would be published as it is).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib.metadata
import marshal
import os
import stat
import sys
import zoneinfo
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any, BinaryIO

from ._version import __version__
from .compiled import Compiled
from .feeds.items import Item
from .publish.files import write_atomic
from .render.parts import ItemParts
from .source.files import EntryFile
from .source.models import Site

_MAGIC = b"infrafeed release cache 1\n"
_LIBRARIES = ("jinja2", "markupsafe", "pydantic", "pydantic-core", "tomli")
PACK = "releases.pack"
TAG = "CACHEDIR.TAG"
_TAG_TEXT = (
    b"Signature: 8a477f597d28d172789f06886806bc55\n"
    b"# This file is a cache directory tag created by infrafeed: its build cache.\n"
)
_HEAD = 32 + 32 + 8  # a record: its key, the sha256 of its payload, the payload's length


class ReleaseCache:
    """The records of one cache folder, for one build; with no folder, a cache that never hits."""

    def __init__(self, folder: Path | None, site: Site, site_file: EntryFile) -> None:
        self.folder = folder
        self.site = site
        self.namespace = _namespace(site, site_file.data or b"") if folder is not None else b""
        self._old: BinaryIO | None = None
        self._index: dict[bytes, tuple[int, int, bytes]] = {}  # key -> offset, length, sha256
        # The records of this build, in order: found in the old pack (where), or new.
        self._new: list[tuple[bytes, tuple[int, int] | Compiled]] = []
        if folder is None:
            return
        try:  # without O_NONBLOCK, a FIFO put there would be waited on, with the lock held
            self._old = old = os.fdopen(os.open(folder / PACK, os.O_RDONLY | os.O_NONBLOCK), "rb")
        except OSError:
            return
        info = os.fstat(old.fileno())
        if not stat.S_ISREG(info.st_mode):
            return  # a FIFO, a device: only a regular file is read
        if old.read(len(_MAGIC) + 32) != _MAGIC + self.namespace:
            return  # another version, other settings: nothing here is of use
        offset = len(_MAGIC) + 32
        while len(head := old.read(_HEAD)) == _HEAD:
            length = int.from_bytes(head[64:], "big")
            if offset + _HEAD + length > info.st_size:
                break  # a damaged length: the records from here on are lost, not misread
            self._index[head[:32]] = (offset + _HEAD, length, head[32:64])
            offset += _HEAD + length
            old.seek(offset)

    def __enter__(self) -> ReleaseCache:
        return self

    def __exit__(self, *_: object) -> None:
        if self._old is not None:
            self._old.close()

    def get(self, file: EntryFile) -> tuple[bytes, Compiled | None]:
        """The key of ``file``, and what it gave a build before if a sound record of it is here."""
        if self.folder is None:
            return b"", None
        # Both: the path below the folder is checked (its year folder), and a record keeps the
        # name as given in its items' sources.
        name = "".join(f"{len(n)}:{n}\n" for n in (file.relative, file.shown)).encode(
            errors="surrogateescape"
        )
        key = hashlib.sha256(self.namespace + name + (file.data or b"")).digest()
        found = self._index.get(key)
        if found is None or self._old is None:
            return key, None
        offset, length, sha = found
        try:
            payload = os.pread(self._old.fileno(), length, offset)
            if hashlib.sha256(payload).digest() != sha:
                return key, None
            # Only bytes whose sha256 matched, written by this code (the namespace).
            compiled = _compiled(marshal.loads(payload), self.site)  # noqa: S302
        except (OSError, ValueError, TypeError, EOFError, IndexError, KeyError):
            return key, None
        self._new.append((key, (offset, length)))
        return key, compiled

    def put(self, key: bytes, compiled: Compiled) -> None:
        """Keep what the file of ``key`` gave, for the next build."""
        if self.folder is not None:
            self._new.append((key, compiled))

    def finish(self) -> str | None:
        """Write the records of this build, unless the pack holds just those; say why not."""
        found = all(not isinstance(record, Compiled) for _, record in self._new)
        if self.folder is None or (found and len(self._new) == len(self._index)):
            return None
        try:
            if not self.folder.is_dir():
                self.folder.mkdir(parents=True)
                # Backup tools skip a folder so tagged (https://bford.info/cachedir/).
                write_atomic(self.folder / TAG, (_TAG_TEXT,), sync=False)
            # Not synced: a pack lost in a crash costs time, never correctness.
            write_atomic(self.folder / PACK, self._chunks(), sync=False)
        except (OSError, RecursionError) as exc:  # mkdir(parents=True) recurses once a folder
            why = getattr(exc, "strerror", "too many folders deep to create") or exc
            return f"{self.folder}: {why}"
        return None

    def _chunks(self) -> Iterator[bytes]:
        """The new pack, a record at a time: never whole in memory."""
        yield _MAGIC + self.namespace
        for key, record in self._new:
            if isinstance(record, Compiled):
                payload = marshal.dumps(_record(record))
            else:
                assert self._old is not None
                payload = os.pread(self._old.fileno(), record[1], record[0])
            digest = hashlib.sha256(payload).digest()
            yield key + digest + len(payload).to_bytes(8, "big") + payload


def _namespace(site: Site, site_toml: bytes) -> bytes:
    """The digest of everything besides a release file that decides what it gives."""
    digest = hashlib.sha256(_MAGIC)
    digest.update(f"infrafeed {__version__}\npython {sys.version}\n".encode())
    for name in _LIBRARIES:
        try:
            digest.update(f"{name} {importlib.metadata.version(name)}\n".encode())
        except importlib.metadata.PackageNotFoundError:
            digest.update(f"{name} -\n".encode())
    # infrafeed's own code and data (html-elements.txt decides what a title may hold): a
    # change of either, released or not, is a new namespace.
    package = Path(__file__).parent
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(f"{path.relative_to(package).as_posix()}\n".encode())
            digest.update(path.read_bytes())
    digest.update(_zone_rules(site.timezone))
    digest.update(b"site.toml\n" + site_toml)
    return digest.digest()


def _zone_rules(timezone: str) -> bytes:
    """The bytes of the zone's TZif file, where ``zoneinfo`` finds it: new rules, new dates."""
    for folder in zoneinfo.TZPATH:
        candidate = Path(folder, *timezone.split("/"))
        if candidate.is_file():
            return b"zone " + candidate.read_bytes()
    try:
        return b"tzdata " + resources.files("tzdata.zoneinfo").joinpath(timezone).read_bytes()
    except (ModuleNotFoundError, OSError):
        return b"zone unknown"


# The fields of an item that marshal carries as they are; the others are made plain.
_AS_IS = tuple(f for f in Item._fields if f not in ("module", "published", "released"))


def _record(c: Compiled) -> tuple[Any, ...]:
    items = tuple(
        (
            *(getattr(i, name) for name in _AS_IS),
            i.module.number if i.module is not None else None,
            i.published.isoformat(),
            i.released.toordinal(),
        )
        for i in c.items
    )
    parts = tuple(map(tuple, c.parts))
    return (c.path, c.date.toordinal(), c.sequence, c.keys, items, parts, c.section)


def _compiled(record: Any, site: Site) -> Compiled:
    path, date, sequence, keys, item_rows, part_rows, section = record
    modules = {module.number: module for module in site.modules}
    count = len(_AS_IS)
    items = tuple(
        Item(
            **dict(zip(_AS_IS, fields[:count], strict=True)),
            module=None if fields[count] is None else modules[fields[count]],
            published=dt.datetime.fromisoformat(fields[count + 1]),  # in noon's offset, as made
            released=dt.date.fromordinal(fields[count + 2]),
        )
        for fields in item_rows
    )
    parts = tuple(ItemParts(*p) for p in part_rows)
    return Compiled(path, dt.date.fromordinal(date), sequence, keys, items, parts, section)
