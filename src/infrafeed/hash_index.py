"""The hash index: the sha256 of entry files that did not change, without reading them.

A build that is not a no-op hashes every entry file (build.inputs_digest):
75 ms of an incremental build at 10,000 items, for the one file that is new.
The index keeps, per entries folder, each regular file's path, inode, size,
mtime, ctime and sha256, and when it was taken. A file whose ``lstat`` is
the one recorded, and which was settled when the index was taken (its last
change :data:`stamp.SETTLE_NS` before: the racy-git rule of stamp.py), still
holds the bytes that were hashed, since ``ctime`` changes with every write
and cannot be set back; its recorded sha256 is used. Every other file is
hashed as before, so the digest is the same with or without the index.

Only files are in it: a symbolic link counts by where it points, a folder
by being one, and those cost a ``readlink`` or nothing, not a read.

The index lives in the build cache, one per entries folder. A damaged file
is an empty index: a build then hashes everything, as it would without one.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

from . import stamp
from .cache import Cache

_HEADER = "infrafeed-hashes 1"
# A file's line: its path below the entries folder, then its *record*:
# inode, size, mtime_ns, ctime_ns and sha256 (hex), tab-separated. Records
# stay text: comparing one with a stat formatted costs less than parsing 3,000.
_ROWS = re.compile(r"(?:[^\t\n]++\t[0-9]++\t[0-9]++\t-?[0-9]++\t-?[0-9]++\t[0-9a-f]{64}\n)*+")
_SHA256 = 64  # a record ends with a tab and the sha256's hex digits


class HashIndex:
    """The last build's hashes of one entries folder, and this build's for the next."""

    def __init__(self, cache: Cache, entries: Path) -> None:
        self._cache = cache
        where = os.path.realpath(entries).encode(errors="surrogateescape")
        # The whole digest is in the file, not only in its name: an index
        # copied from another folder's name is not taken for this folder's.
        self._folder = hashlib.sha256(where).hexdigest()
        self._name = f"hashes-{self._folder[:16]}"
        # Read before any stat of this build: a file is settled if it changed well before them.
        self._taken = stamp.now_ns()
        self._old_taken, self._old = _parse(cache.read(self._name), self._folder)
        self._new: dict[str, str] = {}  # path -> record, for the next build
        self._hashed = False  # a file was recorded anew: its record, or the time taken, changed

    def reuse(self, relative: str, path: Path) -> str | None:
        """The recorded sha256 of ``path`` if it is still the file that was hashed; else None."""
        old = self._old.get(relative)
        if old is None:
            return None  # a new file: not even stat'ed here
        try:
            st = os.lstat(path)
        except OSError:
            return None  # gone, or unreachable: hashing says what it is
        mtime, ctime = st.st_mtime_ns, st.st_ctime_ns
        if (
            not stat.S_ISREG(st.st_mode)
            or old[: -_SHA256 - 1] != f"{st.st_ino}\t{st.st_size}\t{mtime}\t{ctime}"
            # The times are the recorded ones. Changed within the tick of the
            # stat that recorded them, the file may have changed again unseen.
            or max(mtime, ctime) >= self._old_taken - stamp.SETTLE_NS
        ):
            return None
        self._new[relative] = old
        return old[-_SHA256:]

    def record(self, relative: str, st: os.stat_result, sha256: str) -> None:
        """Note the sha256 of a file just hashed, with its stat from before it was read."""
        if not stat.S_ISREG(st.st_mode) or "\t" in relative or "\n" in relative:
            return  # never reused: hashed every time, as without the index
        record = f"{st.st_ino}\t{st.st_size}\t{st.st_mtime_ns}\t{st.st_ctime_ns}\t{sha256}"
        self._new[relative] = record
        self._hashed = True

    def save(self) -> None:
        """Write the index of this build's files, unless it is the one read."""
        # Nothing recorded anew: every record is an old one, so the same count is the same index.
        if not self._hashed and len(self._new) == len(self._old):
            return
        head = f"{_HEADER}\nfolder {self._folder}\ntaken {self._taken}\nfiles {len(self._new)}\n"
        rows = "".join(f"{relative}\t{record}\n" for relative, record in self._new.items())
        body = (head + rows).encode(errors="surrogateescape")
        self._cache.write(self._name, (body, _trailer(body)))


def _trailer(body: bytes) -> bytes:
    # A checksum, not only an end mark: a sha256 damaged into another valid
    # one would be used as a file's, and the inputs digest would be wrong.
    return f"end {hashlib.sha256(body).hexdigest()}\n".encode()


def _parse(data: bytes | None, folder: str) -> tuple[int, dict[str, str]]:
    """(when the index was taken, path -> record); nothing for anything but a whole index."""
    if data is None or not data.endswith(b"\n"):
        return 0, {}
    last = data.rfind(b"\n", 0, len(data) - 1) + 1
    body = data[:last]
    if data[last:] != _trailer(body):
        return 0, {}
    lines = body.decode(errors="surrogateescape").split("\n", 4)
    if len(lines) != 5 or lines[:2] != [_HEADER, f"folder {folder}"]:
        return 0, {}
    taken, count, rows = _number(lines[2], "taken "), _number(lines[3], "files "), lines[4]
    if taken is None or count is None or not _ROWS.fullmatch(rows):
        return 0, {}
    found = {
        relative: record for relative, _, record in (r.partition("\t") for r in rows.split("\n"))
    }
    del found[""]  # after the last line's "\n"
    if len(found) != count:  # lines lost, or a path twice
        return 0, {}
    return taken, found


def _number(text: str, prefix: str) -> int | None:
    """The integer after ``prefix`` in ``text``: ASCII digits, maybe a minus sign."""
    if not text.startswith(prefix):
        return None
    digits = text[len(prefix) :]
    # int() alone would take " 1", "1_0" and other scripts' digits.
    if not digits.removeprefix("-").isdigit() or not digits.isascii():
        return None
    return int(digits)
