"""Which feed documents a build may leave on disk as they are.

A document's bytes are decided by its frame (render.py: everything but the
items) and its items, and each item by the release file it came from and
the namespace of the build cache (release_cache.py). So a *fingerprint* of
the frame's bytes, the namespace and each item's id and source file's
sha256 stands for the document's bytes, without rendering them. A document
whose fingerprint is the one the last build recorded, and whose file is
still what that build left (its manifest record, and the same inode, size,
mtime and ctime, settled as for the no-op stamp: stamp.py), is not rendered,
staged or read: after a new release, the feeds and the closed archive
months it does not touch cost nothing.

The record lives in the build cache, one per output folder. Without it,
or when anything differs, the document is simply rendered: the record only
saves time.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from . import stamp
from .cache import Cache
from .frame import Frame
from .items import Item
from .publish import FileRecord, sha256_of

_HEADER = "infrafeed-documents 1"


class KeptDocuments:
    """One build's answers to "may this document stay?", and the record for the next build."""

    def __init__(
        self,
        cache: Cache,
        out: Path,
        space: str,
        published: Mapping[str, FileRecord],
        source_of: Callable[[Item], str],
    ) -> None:
        self._cache = cache
        self._out = out
        self._space = space.encode()
        self._published = published  # the previous build's manifest
        self._source_of = source_of  # an item's release file, as "path\0sha256"
        where = os.path.realpath(out).encode(errors="surrogateescape")
        self._name = f"documents-{hashlib.sha256(where).hexdigest()[:16]}"
        self._taken, self._old = _parse(cache.read(self._name))
        self._now: dict[str, str] = {}  # path -> fingerprint, every document of this build
        self._items: tuple[int, bytes] = (0, b"")  # the last page's items, digested

    def __call__(self, relative: str, frame: Frame, items: Sequence[Item]) -> bool:
        """Whether ``relative`` may stay as it is on disk; noted for the next build either way."""
        fingerprint = self._fingerprint(frame, items)
        self._now[relative] = fingerprint
        old = self._old.get(relative)
        if old is None or old[0] != fingerprint:
            return False
        record = self._published.get(relative)
        if record is None or (record.sha256, record.size) != (old[1], int(old[2])):
            return False
        try:
            st = os.lstat(self._out / relative)
        except OSError:
            return False
        seen = (str(st.st_ino), str(st.st_size), str(st.st_mtime_ns), str(st.st_ctime_ns))
        if not stat.S_ISREG(st.st_mode) or seen != old[3:]:
            return False
        if max(st.st_mtime_ns, st.st_ctime_ns) < self._taken - stamp.SETTLE_NS:
            return True
        # Written just before the record was taken, so its stat may hide a later
        # change (stamp.py): its bytes are checked instead. Hashing costs less
        # than rendering, and the first build after another, minutes later,
        # finds the documents that build wrote in that state.
        return sha256_of(self._out / relative) == record.sha256

    def _fingerprint(self, frame: Frame, items: Sequence[Item]) -> str:
        # A page's items are the same tuple in each of its formats: digested once.
        if self._items[0] != id(items):
            listed = "\n".join(f"{item.id}\0{self._source_of(item)}" for item in items)
            self._items = (id(items), hashlib.sha256(listed.encode()).digest())
        digest = hashlib.sha256(self._space)
        for piece in (*frame, self._items[1]):
            digest.update(len(piece).to_bytes(8, "big"))
            digest.update(piece)
        return digest.hexdigest()

    def save(self, files: Mapping[str, FileRecord]) -> None:
        """Record this build's documents as they are on disk now (after the commit)."""
        taken = stamp.now_ns()  # before the stats: a file changed after them is newer than this
        lines = [_HEADER, str(taken)]
        for relative, fingerprint in sorted(self._now.items()):
            record = files.get(relative)
            try:
                st = os.lstat(self._out / relative)
            except OSError:
                continue
            if record is None or "\t" in relative or "\n" in relative:
                continue
            lines.append(
                "\t".join(
                    (
                        relative,
                        fingerprint,
                        record.sha256,
                        str(record.size),
                        str(st.st_ino),
                        str(st.st_size),
                        str(st.st_mtime_ns),
                        str(st.st_ctime_ns),
                    )
                )
            )
        self._cache.write(self._name, ("\n".join(lines) + "\n").encode(errors="surrogateescape"))


def _parse(data: bytes | None) -> tuple[int, dict[str, tuple[str, ...]]]:
    """(when the record was taken, path -> its fields); nothing for a damaged record."""
    if data is None:
        return 0, {}
    lines = data.decode(errors="surrogateescape").split("\n")
    if len(lines) < 3 or lines[0] != _HEADER or not _number(lines[1]) or lines[-1] != "":
        return 0, {}
    found: dict[str, tuple[str, ...]] = {}
    for line in lines[2:-1]:
        fields = line.split("\t")
        if len(fields) != 8 or not all(_number(f) for f in fields[3:]):
            return 0, {}
        found[fields[0]] = tuple(fields[1:])
    return int(lines[1]), found


def _number(text: str) -> bool:
    # str.isdigit alone takes "²" and other digits int() refuses.
    return text.isascii() and text.isdigit()
