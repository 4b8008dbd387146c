"""The output folder's lock, and the clean-up of what killed builds left in it."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from ..clock import Clock
from ..errors import LockBusy, PublishError

LOCK = ".infrafeed.lock"
STAGING_PREFIX = ".infrafeed-staging-"


@contextlib.contextmanager
def locked(out: Path, wait_seconds: float, clock: Clock) -> Iterator[None]:
    """Hold the output folder's lock; a second build waits up to ``wait_seconds``.

    ``flock`` is released by the kernel when the holder dies, so the lock of a
    killed build never blocks the next one.
    """
    path = out / LOCK
    try:
        out.mkdir(parents=True, exist_ok=True)
        # O_NOFOLLOW: a symlink planted at the lock's name must not make us
        # create a file outside the output folder.
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        raise PublishError(
            f"{path}: cannot create the output folder's lock: {exc.strerror}"
        ) from None
    try:
        deadline = clock.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise PublishError(
                        f"{path}: cannot lock the output folder: {exc.strerror}"
                    ) from None
                if clock.monotonic() >= deadline:
                    raise LockBusy(
                        f"{path}: another infrafeed build is running on this output "
                        f"folder (waited {wait_seconds:g}s); try again later"
                    ) from None
                clock.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def remove_leftovers(out: Path) -> None:
    """Remove what killed builds left: staging folders and temporary files.

    Only called under the lock, so no other build's staging folder is live.
    """
    for path in out.glob(f"{STAGING_PREFIX}*"):
        if path.is_symlink() or not path.is_dir():
            with contextlib.suppress(OSError):
                path.unlink()
        else:
            import shutil

            shutil.rmtree(path, ignore_errors=True)
    for path in out.glob(".*.tmp"):
        with contextlib.suppress(OSError):
            path.unlink()
