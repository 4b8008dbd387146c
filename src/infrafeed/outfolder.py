"""The output folder's own files, its lock, and what a build reports: what every build needs.

Kept apart from publish.py, which writes the output: a build with nothing
to do (build.py, stamp.py) locks the folder, removes what killed builds
left, and reports, without loading the rest of publishing.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import LockBusy, PublishError

MANIFEST = ".infrafeed-manifest.json"
LOCK = ".infrafeed.lock"
STAGING_PREFIX = ".infrafeed-staging-"


@dataclass(frozen=True)
class Report:
    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    removed: tuple[str, ...]
    kept: tuple[str, ...]  # files of vanished feeds left alone: not ours, or edited since

    @property
    def changed(self) -> bool:
        return bool(self.written or self.removed)


@contextlib.contextmanager
def locked(out: Path, wait_seconds: float) -> Iterator[None]:
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
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise PublishError(
                        f"{path}: cannot lock the output folder: {exc.strerror}"
                    ) from None
                if time.monotonic() >= deadline:
                    raise LockBusy(
                        f"{path}: another infrafeed build is running on this output "
                        f"folder (waited {wait_seconds:g}s); try again later"
                    ) from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def remove_leftovers(out: Path) -> None:
    """Remove what killed builds left: staging folders and manifest temp files.

    Only called under the lock, so no other build's staging folder is live.
    """
    for path in out.glob(f"{STAGING_PREFIX}*"):
        if path.is_symlink() or not path.is_dir():
            with contextlib.suppress(OSError):
                path.unlink()
        else:
            import shutil

            shutil.rmtree(path, ignore_errors=True)
    for path in out.glob(f"{MANIFEST}.*.tmp"):
        with contextlib.suppress(OSError):
            path.unlink()
