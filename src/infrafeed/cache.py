"""The build cache: a folder of derived data that only makes builds faster.

Nothing in it is needed: deleting the folder makes the next build slower,
never different. It is its own folder (``--cache``; by default
``.infrafeed-cache`` beside the entries folder), never inside the output
folder, which is served.

A cache that cannot be written (read-only disk, full disk) must not fail a
build: :meth:`Cache.write` gives up quietly and remembers why in
:attr:`Cache.write_error`, for the caller to report.

This module is on the path of a build with nothing to do, which costs little
more than starting Python: it imports nothing that is not already loaded.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import mmap
    from collections.abc import Iterable

    Buffer = bytes | memoryview | mmap.mmap

TAG = "CACHEDIR.TAG"
# https://bford.info/cachedir/: backup and archiving tools skip a folder holding it.
_TAG_TEXT = (
    b"Signature: 8a477f597d28d172789f06886806bc55\n"
    b"# This file is a cache directory tag created by infrafeed.\n"
    b"# For information about cache directory tags, see https://bford.info/cachedir/\n"
)


class Cache:
    """One cache folder, holding flat files by name."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.write_error: str | None = None  # why the first failed write failed

    def read(self, name: str) -> bytes | None:
        """The bytes last written under ``name``, or None when missing or unreadable.

        Writes are not synced to disk: after a power cut a file may be empty
        or hold zeros, so a reader must treat bytes it cannot parse as missing.
        """
        path = self.root / _checked(name)
        try:
            return path.read_bytes()
        except OSError:
            return None

    def map(self, name: str) -> Buffer | None:
        """The bytes of ``name``, mapped rather than read: for a large file read once.

        At 10,000 items the release pack is 45 MB; reading it copied it into
        fresh memory (30 ms), where mapping lets the reader use the page
        cache's pages. Safe because no writer of this folder ever shrinks a
        file in place: :meth:`write` replaces a file, :meth:`append` only adds.
        """
        import mmap

        path = self.root / _checked(name)
        try:
            with path.open("rb") as handle:
                if os.fstat(handle.fileno()).st_size == 0:
                    return b""  # mmap refuses an empty file
                return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None

    def write(self, name: str, data: bytes | Iterable[bytes | memoryview]) -> None:
        """Replace ``name`` with ``data`` atomically; on failure, keep the old file.

        ``data`` may come in chunks, written as they come: a large file
        (release_cache.py) is never held whole. Not synced (see :meth:`read`):
        a build must not wait for the disk to save what it can work out again.
        """
        path = self.root / _checked(name)
        try:
            self._ensure_root()
            _replace(path, (data,) if isinstance(data, bytes) else data)
        except OSError as exc:
            if self.write_error is None:
                self.write_error = f"{path}: {exc.strerror or exc}"

    def append(self, name: str, at: int, chunks: Iterable[bytes | memoryview]) -> bool:
        """Add ``chunks`` to ``name`` if it is ``at`` bytes long; if not, add nothing, return False.

        For files of records that later records override (release_cache.py):
        one new record costs its own size, not the file's. A write that fails
        or is cut short by a crash leaves a damaged record at the end, which a
        reader must take as the end of the file; the file is never shrunk in
        place, since a reader may have it mapped (:meth:`map`).
        """
        import fcntl

        path = self.root / _checked(name)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            # Two builds sharing the cache must not interleave their records.
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.fstat(fd).st_size != at:
                return False  # rewritten or added to since it was read
            os.lseek(fd, at, os.SEEK_SET)
            _write_all(fd, chunks)
            return True
        except OSError as exc:
            if self.write_error is None:
                self.write_error = f"{path}: {exc.strerror or exc}"
            return False
        finally:
            os.close(fd)

    def _ensure_root(self) -> None:
        try:
            self.root.mkdir(parents=True)
        except FileExistsError:
            return  # tagged when it was created; an existing folder is not ours to tag
        # Best effort: an untagged cache is only backed up for nothing.
        with contextlib.suppress(OSError):
            _replace(self.root / TAG, (_TAG_TEXT,))


def _checked(name: str) -> str:
    # Flat names only: a name must never reach outside the folder, or hit a temp file.
    if not name or "/" in name or "\x00" in name or name.startswith(".") or name == TAG:
        raise ValueError(f"{name!r} is not a cache file name")
    return name


def _replace(path: Path, chunks: Iterable[bytes | memoryview]) -> None:
    """Write ``chunks`` to a temp file beside ``path``, then move it over ``path``."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        # A temp file of a killed process with the same pid may be left over.
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        # O_NOFOLLOW, O_EXCL: never write through a link planted at the temp name.
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temp, flags, 0o666)
        try:
            _write_all(fd, chunks)
        finally:
            os.close(fd)
        temp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise


def _write_all(fd: int, chunks: Iterable[bytes | memoryview]) -> None:
    for chunk in chunks:
        view = memoryview(chunk)
        while view:
            view = view[os.write(fd, view) :]
