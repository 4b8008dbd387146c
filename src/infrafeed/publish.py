"""Publishing: the only module that writes to the output folder.

A build stages every file in a private folder inside ``output/`` (same file
system, so the final ``os.replace`` is atomic), then moves into place only
the files whose bytes changed. Readers of ``output/`` see either the old or
the new version of each file, never a partial one; a crash leaves at worst a
staging folder, which the next build removes.

The manifest (``.infrafeed-manifest.json``) records what infrafeed wrote,
with a hash of each file, and the ids of every item each feed published.
Only files listed there are ever deleted.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import LockBusy, PublishError

# Defined apart, so that a build with nothing to do need not import this module.
from .report import Report as Report

MANIFEST = ".infrafeed-manifest.json"
LOCK = ".infrafeed.lock"
STAGING_PREFIX = ".infrafeed-staging-"
MANIFEST_VERSION = 1


@dataclass(frozen=True)
class FileRecord:
    sha256: str
    size: int
    mtime_ns: int

    def to_json(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "size": self.size, "mtime_ns": self.mtime_ns}


@dataclass
class Manifest:
    """What the previous build left: its files, its feeds' item ids and its inputs."""

    files: dict[str, FileRecord] = field(default_factory=dict)
    feeds: dict[str, dict[str, str]] = field(default_factory=dict)  # feed key -> id -> date
    inputs: str | None = None  # hash of everything a build reads (see build.py)

    @classmethod
    def read(cls, out: Path) -> Manifest:
        path = out / MANIFEST
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError) as exc:
            raise PublishError(
                f"{path}: cannot read the manifest ({exc}); it records which files "
                "infrafeed owns. Restore it from a backup, or delete it to let the "
                "next build start over (files will then be overwritten, never deleted)"
            ) from None
        if data.get("version") != MANIFEST_VERSION:
            raise PublishError(f"{path}: unknown manifest version {data.get('version')!r}")
        files = {
            name: FileRecord(rec["sha256"], rec["size"], rec["mtime_ns"])
            for name, rec in data.get("files", {}).items()
        }
        return cls(files=files, feeds=data.get("feeds", {}), inputs=data.get("inputs"))

    def to_bytes(self) -> bytes:
        data = {
            "version": MANIFEST_VERSION,
            "inputs": self.inputs,
            "files": {name: self.files[name].to_json() for name in sorted(self.files)},
            "feeds": {key: dict(sorted(ids.items())) for key, ids in sorted(self.feeds.items())},
        }
        return (json.dumps(data, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


@contextlib.contextmanager
def locked(out: Path, wait_seconds: float) -> Iterator[None]:
    """Hold the output folder's lock; a second build waits up to ``wait_seconds``.

    ``flock`` is released by the kernel when the holder dies, so the lock of a
    killed build never blocks the next one.
    """
    try:
        out.mkdir(parents=True, exist_ok=True)
        handle = (out / LOCK).open("a+b")
    except OSError as exc:
        raise PublishError(
            f"{out}: cannot create the output folder's lock: {exc.strerror}"
        ) from None
    with handle:
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() >= deadline:
                    raise LockBusy(
                        f"{out / LOCK}: another infrafeed build is running on this output "
                        f"folder (waited {wait_seconds:g}s); try again later"
                    ) from None
                time.sleep(0.1)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class Stage:
    """A private folder in ``out`` where a build writes every file first."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.root_resolved = out.resolve()
        _remove_stale_staging(out)
        self.dir = out / f"{STAGING_PREFIX}{os.getpid()}"
        self.dir.mkdir()
        self.hashes: dict[str, str] = {}
        self.kept: dict[str, FileRecord] = {}

    def target(self, relative: str) -> Path:
        """The final path of ``relative``, refused if it would leave the output folder."""
        candidate = Path(relative)
        if candidate.is_absolute() or ".." in candidate.parts or "\x00" in relative:
            raise PublishError(f"{relative!r}: refusing a path outside the output folder")
        target = self.out / candidate
        if not target.resolve().is_relative_to(self.root_resolved):
            raise PublishError(f"{target}: resolves outside the output folder; refusing to write")
        return target

    def write(self, relative: str, data: bytes) -> None:
        self.target(relative)
        staged = self.dir / relative
        try:
            staged.parent.mkdir(parents=True, exist_ok=True)
            with staged.open("wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            raise PublishError(
                f"{self.target(relative)}: could not stage the new version "
                f"({exc.strerror}); the published output is unchanged"
            ) from None
        self.hashes[relative] = hashlib.sha256(data).hexdigest()

    def keep(self, relative: str, record: FileRecord) -> bool:
        """Publish ``relative`` as it is, without staging it: the caller knows its bytes.

        Refused (False: stage it instead) unless the file is on disk as
        ``record``, the previous build's, says.
        """
        self.target(relative)
        if not outputs_intact(self.out, {relative: record}):
            return False
        self.kept[relative] = record
        return True

    def cleanup(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def _remove_stale_staging(out: Path) -> None:
    # Only called under the lock, so no other build's staging folder is live.
    for path in out.glob(f"{STAGING_PREFIX}*"):
        shutil.rmtree(path, ignore_errors=True)
    for path in out.glob(f"{MANIFEST}.*.tmp"):
        with contextlib.suppress(OSError):
            path.unlink()


def commit(stage: Stage, previous: Manifest, manifest: Manifest) -> Report:
    """Move changed staged files into place, remove vanished ones, write the manifest.

    ``manifest`` arrives with ``feeds`` and ``inputs`` filled in; its ``files``
    are filled here.
    """
    out = stage.out
    written: list[str] = []
    unchanged: list[str] = list(stage.kept)
    for relative in sorted(stage.hashes):
        target = stage.target(relative)
        record = previous.files.get(relative)
        published: str | None
        if record is not None and outputs_intact(out, {relative: record}):
            published = record.sha256  # on disk as recorded: trusted as a no-op build trusts it
        else:
            published = _sha256_of(target)
        if published == stage.hashes[relative]:
            unchanged.append(relative)
        else:
            written.append(relative)

    vanished = sorted(set(previous.files) - set(stage.hashes) - set(stage.kept))
    # Record intent first: if this build dies mid-way, the next one still knows
    # that the files about to appear are infrafeed's.
    intent = Manifest(
        files={**previous.files, **{r: FileRecord(stage.hashes[r], 0, 0) for r in written}},
        feeds=previous.feeds,
        inputs=None,
    )
    if written:
        _write_manifest(out, intent)

    for relative in written:
        target = stage.target(relative)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            (stage.dir / relative).replace(target)
        except OSError as exc:
            raise PublishError(
                f"{target}: could not be replaced ({exc.strerror}); files before it in "
                "this build were updated, each complete, the rest are as before"
            ) from None
    for folder in {stage.target(r).parent for r in written}:
        _fsync_dir(folder)

    removed: list[str] = []
    kept: list[str] = []
    for relative in vanished:
        target = stage.target(relative)
        record = previous.files[relative]
        if not target.exists():
            continue
        if _sha256_of(target) != record.sha256:
            kept.append(relative)  # changed by someone else since: not ours to delete
            continue
        target.unlink()
        removed.append(relative)
        _remove_empty_parents(target.parent, out)

    manifest.files = dict(stage.kept)
    for relative in sorted(stage.hashes):
        stat = stage.target(relative).stat()
        manifest.files[relative] = FileRecord(
            stage.hashes[relative], stat.st_size, stat.st_mtime_ns
        )
    if written or removed or manifest.to_bytes() != previous.to_bytes():
        _write_manifest(out, manifest)
    return Report(tuple(written), tuple(sorted(unchanged)), tuple(removed), tuple(kept))


def outputs_intact(out: Path, files: Mapping[str, FileRecord]) -> bool:
    """True when every recorded file is on disk as infrafeed left it (size and mtime)."""
    for relative, record in files.items():
        try:
            stat = (out / relative).stat()
        except OSError:
            return False
        if stat.st_size != record.size or stat.st_mtime_ns != record.mtime_ns:
            return False
    return True


def _write_manifest(out: Path, manifest: Manifest) -> None:
    path = out / MANIFEST
    temp = out / f"{MANIFEST}.{os.getpid()}.tmp"
    try:
        with temp.open("wb") as handle:
            handle.write(manifest.to_bytes())
            handle.flush()
            os.fsync(handle.fileno())
        temp.replace(path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise PublishError(f"{path}: could not write the manifest ({exc.strerror})") from None
    _fsync_dir(out)


def _sha256_of(path: Path) -> str | None:
    try:
        with path.open("rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove_empty_parents(folder: Path, out: Path) -> None:
    while folder != out and folder.is_relative_to(out):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
