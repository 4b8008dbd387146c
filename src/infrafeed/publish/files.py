"""Writing one file safely, as every writer of infrafeed does: under a temporary name in its
folder, synced, then moved into place in one step, so that a reader sees the old file or the new
one, never a part of either; a failure leaves no temporary file behind.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath
from typing import NamedTuple

_WRITE_SIZE = 1 << 20  # about the size of a write: a feed's items are small chunks


class FileRecord(NamedTuple):
    sha256: str
    size: int


def write_new(path: Path, chunks: Iterable[bytes], *, sync: bool = True) -> FileRecord:
    """Create ``path`` (never through a symlink, never over a file: "x", O_EXCL, refuses both),
    write ``chunks``, sync."""
    digest, size = hashlib.sha256(), 0
    # A file object owns the descriptor as the open returns: an interrupt then (a library
    # host's Ctrl-C, raised as the call returns, in whatever thread the signal came to) drops
    # the object, which closes it; os.open's bare number would leak.
    with open(path, "xb", buffering=0) as file:  # noqa: PTH123 (the same open, one call more)
        fd = file.fileno()
        for data in _gathered(chunks):
            digest.update(data)
            size += len(data)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        if sync:
            os.fsync(fd)
    return FileRecord(digest.hexdigest(), size)


def _gathered(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """``chunks`` joined into pieces of about ``_WRITE_SIZE`` (the last one may be empty)."""
    pending: list[bytes] = []
    held = 0
    for chunk in chunks:
        pending.append(chunk)
        held += len(chunk)
        if held >= _WRITE_SIZE:
            yield b"".join(pending)
            pending, held = [], 0
    yield b"".join(pending)


def write_atomic(
    path: Path, chunks: Iterable[bytes], *, overwrite: bool = True, sync: bool = True
) -> None:
    """Write ``path`` whole or not at all; with ``overwrite=False``, raise FileExistsError
    rather than replace a file (there, or appeared meanwhile). ``sync=False`` is for data whose
    loss costs only time."""
    temp = stage(path, chunks, sync=sync)
    try:
        if overwrite:
            temp.replace(path)
        else:
            os.link(temp, path)  # fails if the file is there: never clobbered
    finally:
        with contextlib.suppress(OSError):
            temp.unlink()
    if sync:
        fsync_folder(path.parent)


def stage(path: Path, chunks: Iterable[bytes], *, sync: bool = True) -> Path:
    """Write ``chunks`` under a hidden name beside ``path``, to be moved there later; what a
    killed process left so (its process gone) is removed first."""
    for left in path.parent.glob(f".{glob.escape(path.name)}.*.new"):
        pid = left.name.removesuffix(".new").rpartition(".")[2]
        if pid.isdigit() and not _running(int(pid)):
            left.unlink(missing_ok=True)
    staged = path.with_name(f".{path.name}.{os.getpid()}.new")
    staged.unlink(missing_ok=True)
    try:
        write_new(staged, chunks, sync=sync)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    return staged


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # OverflowError: no process has such a number
        return False
    except PermissionError:  # another user's
        return True
    return True


def fsync_folder(folder: Path) -> None:
    """Sync a folder's entries, so that a rename in it lasts; best effort."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def sha256_of(path: Path) -> str | None:
    """The file's hash, or None when there is no file to read there."""
    try:
        with path.open("rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return None


def safe_relative(name: str) -> bool:
    """Whether ``name`` is a path below a folder that cannot lead anywhere else."""
    path = PurePosixPath(name)
    # "a//b", "a/", "./a" read as other names: not how infrafeed names files.
    unusual = "\x00" in name or "\\" in name or path.as_posix() != name
    return not (unusual or path.is_absolute() or ".." in path.parts)
