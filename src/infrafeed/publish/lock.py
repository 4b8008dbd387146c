"""One build at a time per output folder: the lock is on the folder that holds it.

A build replaces the output folder (publish/tree.py), so the lock cannot live inside it, and a
lock file beside it could be deleted by mistake while a build runs. The kernel releases a
``flock`` when its holder dies: a killed build never blocks the next one. Builds into sibling
folders wait for each other too.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from ..clock import Clock
from ..errors import LockBusy, PublishError

NEXT = ".infrafeed-next"  # the tree being built: beside the output folder, or in it
JOURNAL = ".infrafeed-journal"  # a fallback publish under way, in the output folder


@contextlib.contextmanager
def locked(out: Path, wait_seconds: float, clock: Clock) -> Iterator[None]:
    """Hold the lock of ``out``; a second build waits up to ``wait_seconds``."""
    parent = Path(os.path.realpath(out)).parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except (OSError, RecursionError) as exc:  # mkdir(parents=True) recurses once a folder
        why = getattr(exc, "strerror", "too many folders deep to create; give --out a shorter path")
        raise PublishError(f"{parent}: cannot open the output folder's parent: {why}") from None
    try:
        deadline = clock.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise PublishError(f"{parent}: cannot be locked: {exc.strerror}") from None
                if clock.monotonic() >= deadline:
                    raise LockBusy(
                        f"{out}: another infrafeed build is running on this output folder "
                        f"(waited {wait_seconds:g}s); try again later"
                    ) from None
                clock.sleep(0.05)
        yield
    finally:
        os.close(fd)  # releases the lock


def next_trees(out: Path) -> tuple[Path, Path]:
    """Where a build makes the next tree of ``out`` (a real path): beside it, or else in it."""
    return out.parent / f".{out.name}{NEXT}", out / NEXT


def left_behind(out: Path) -> bool:
    """Whether a killed build left a tree or a journal to deal with (publish/tree.py)."""
    out = Path(os.path.realpath(out))
    return any(os.path.lexists(p) for p in (out / JOURNAL, *next_trees(out)))
