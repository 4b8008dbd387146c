"""Publishing: the only module that writes to the output folder.

A build stages every file in a private folder inside ``output/`` (same file
system, so the final ``os.replace`` is atomic), then moves into place only
the files whose bytes changed. Readers of ``output/`` see either the old or
the new version of each file, never a partial one. An error while moving
files into place puts back the ones already moved, so a failed build leaves
the previous output as it was; a killed build leaves at worst a staging
folder, which the next build removes.

The manifest (``.infrafeed-manifest.json``) records what infrafeed wrote,
with a hash of each file, and the ids of every item each feed published.
Only files listed there are ever deleted. It holds no time stamps, so that
two builds of the same entries leave byte-identical output folders.
"""

from __future__ import annotations

# hashlib, json and shutil are imported where they are used: a build with
# nothing to do only locks, stats and leaves, and must not pay for loading them.
import contextlib
import errno
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from .errors import PublishError
from .outfolder import MANIFEST, STAGING_PREFIX, Report

MANIFEST_VERSION = 1

_SHA256 = re.compile(r"[0-9a-f]{64}")
# Backups of the files a build replaces, kept until the build has finished,
# so that a failure half-way can put them back. Inside the staging folder,
# whose other entries are feed paths (never hidden names).
_BACKUP = ".previous"
# Staged files are written in pieces of about this size: few system calls,
# and a document's items need not be joined first.
_WRITE_SIZE = 1 << 20
# Staged files are hashed this much at a time (a multiple of mmap.ALLOCATIONGRANULARITY).
_HASH_WINDOW = 16 << 20
# Up to this many folders are synced one after the other at commit (_fsync_dirs).
_SERIAL_DIR_SYNCS = 16

Buffer = bytes | bytearray | memoryview


@dataclass(frozen=True)
class FileRecord:
    sha256: str
    size: int

    def to_json(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "size": self.size}


@dataclass
class Manifest:
    """What the previous build left: its files, its feeds' item ids and its inputs."""

    files: dict[str, FileRecord] = field(default_factory=dict)
    feeds: dict[str, dict[str, str]] = field(default_factory=dict)  # feed key -> id -> date
    inputs: str | None = None  # hash of everything a build reads (see build.py)

    @classmethod
    def read(cls, out: Path) -> Manifest:
        import json

        path = out / MANIFEST
        try:
            data = json.loads(path.read_bytes().decode("utf-8"))
            return cls._from_json(data)
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else str(exc)
            raise PublishError(
                f"{path}: cannot read the manifest ({reason}); it records which files "
                "infrafeed owns. Restore it from a backup, or delete it to let the "
                "next build start over (files will then be overwritten, never deleted)"
            ) from None

    @classmethod
    def _from_json(cls, data: Any) -> Manifest:
        # A manifest decides what may be deleted: anything unexpected in it is
        # an error, never a guess.
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        if data.get("version") != MANIFEST_VERSION:
            raise ValueError(f"unknown manifest version {data.get('version')!r}")
        files: dict[str, FileRecord] = {}
        raw_files = data.get("files", {})
        if not isinstance(raw_files, dict):
            raise ValueError("'files' is not an object")
        for name, rec in raw_files.items():
            if safe_relative(name) is None:
                raise ValueError(f"'files' lists {name!r}, which is not a path inside the folder")
            if not (
                isinstance(rec, dict)
                and isinstance(rec.get("sha256"), str)
                and _SHA256.fullmatch(rec["sha256"])
                and type(rec.get("size")) is int
            ):
                raise ValueError(f"'files' has a damaged record for {name!r}")
            files[name] = FileRecord(rec["sha256"], rec["size"])
        feeds = data.get("feeds", {})
        if not (
            isinstance(feeds, dict)
            and all(
                isinstance(ids, dict)
                and all(isinstance(k, str) and isinstance(v, str) for k, v in ids.items())
                for ids in feeds.values()
            )
        ):
            raise ValueError("'feeds' is damaged")
        inputs = data.get("inputs")
        if inputs is not None and not isinstance(inputs, str):
            raise ValueError("'inputs' is damaged")
        return cls(files=files, feeds=feeds, inputs=inputs)

    def to_bytes(self) -> bytes:
        import json

        # One file and one feed per line, for people reading it; each line by
        # json's C encoder, which an indent would turn off (a feed's ids are
        # tens of thousands at a time: 10 times slower).
        def dumps(value: Any) -> str:
            return json.dumps(value, ensure_ascii=False, sort_keys=True)

        def table(rows: dict[str, Any]) -> str:
            lines = ",\n".join(f"  {dumps(key)}: {dumps(rows[key])}" for key in sorted(rows))
            return "{\n" + lines + "\n }" if lines else "{}"

        files = {name: record.to_json() for name, record in self.files.items()}
        return (
            f'{{\n "version": {MANIFEST_VERSION},\n "inputs": {dumps(self.inputs)},\n'
            f' "files": {table(files)},\n "feeds": {table(self.feeds)}\n}}\n'
        ).encode()


def safe_relative(name: str) -> PurePosixPath | None:
    """``name`` as a path below a folder, or None if it could lead anywhere else."""
    if not name or "\x00" in name or "\\" in name:
        return None
    path = PurePosixPath(name)
    if path.is_absolute() or any(part in ("..", ".") for part in path.parts):
        return None
    if path.as_posix() != name:  # "a//b", "a/", "./a": not how infrafeed names files
        return None
    return path


def _plain_relative(name: str) -> bool:
    """What :func:`safe_relative` accepts, told by string tests alone (it runs per file)."""
    return bool(name) and not (
        "\x00" in name
        or "\\" in name
        or name.startswith("/")
        or any(part in ("", ".", "..") for part in name.split("/"))
    )


class Stage:
    """A private folder in ``out`` where a build writes every file first."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.root_resolved = out.resolve()
        self.dir = out / f"{STAGING_PREFIX}{os.getpid()}"
        try:
            self.dir.mkdir()
        except OSError as exc:
            raise PublishError(
                f"{self.dir}: cannot create the staging folder ({exc.strerror}); "
                "the published output is unchanged"
            ) from None
        self._records: dict[str, FileRecord] = {}
        self.kept: set[str] = set()  # published files left as they are (keep.py)
        self._finisher = _Finisher()
        self._staged_folders: set[Path] = set()  # made already: not made again per file
        # Folders of the output (below it, as text) found inside it in this round of
        # checks (target, commit).
        self._inside: set[str] = set()

    def target(self, relative: str) -> Path:
        """The final path of ``relative``, refused if it would leave the output folder."""
        folder = relative.rpartition("/")[0]
        # Resolved, not compared as strings: a symlinked folder on the way
        # (output/modules -> /elsewhere) must not carry a write outside. A
        # folder is resolved once per round of checks (an archive month's three
        # documents share it: at 100,000 items, thousands of system calls).
        if _plain_relative(relative) and self._inside_folder(folder):
            target = self.out / relative
            if not target.is_symlink():
                return target
        candidate = safe_relative(relative)
        if candidate is None:
            raise PublishError(f"{relative!r}: refusing a path outside the output folder")
        target = self.out / candidate
        try:
            resolved = target.resolve()
        except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
            raise PublishError(f"{target}: cannot be resolved ({exc}); refusing to write") from None
        if not resolved.is_relative_to(self.root_resolved):
            raise PublishError(
                f"{target}: resolves to {resolved}, outside the output folder "
                f"{self.root_resolved}; refusing to write (is a folder on the way a symlink?)"
            )
        if not target.is_symlink():
            self._inside.add(folder)
        return target

    def _inside_folder(self, folder: str) -> bool:
        """Whether ``folder`` (below the output folder) is known to stay inside it.

        As resolving does, a step at a time: inside if its parent is and it is
        not a symbolic link (a folder not made yet is not one). A link is left
        to :meth:`target`'s full resolution, which says where it leads.
        """
        if not folder or folder in self._inside:
            return True
        parent = folder.rpartition("/")[0]
        if not self._inside_folder(parent) or (self.out / folder).is_symlink():
            return False
        self._inside.add(folder)
        return True

    def recheck(self) -> None:
        """Start a new round of checks: :meth:`target` resolves each folder again."""
        self._inside.clear()

    def write(self, relative: str, data: bytes) -> None:
        self.write_chunks(relative, (data,))

    def write_chunks(self, relative: str, chunks: Iterable[Buffer]) -> None:
        """Stage ``relative`` with the concatenation of ``chunks``, never held whole."""
        target = self.target(relative)
        staged = self.dir / relative
        try:
            if staged.parent not in self._staged_folders:
                staged.parent.mkdir(parents=True, exist_ok=True)
                self._staged_folders.add(staged.parent)
            _write_new_file(staged, chunks, self._finisher, relative)
        except OSError as exc:
            raise _staging_error(target, exc) from None

    @property
    def records(self) -> dict[str, FileRecord]:
        """Every staged and kept file's record, once every staged file is on disk."""
        self.synced()
        return self._records

    def synced(self) -> None:
        """Wait until every staged file is hashed and on disk; raise if one could not be."""
        failed = self._finisher.wait()
        self._records.update(self._finisher.take_records())
        if failed is not None:
            relative, exc = failed
            raise _staging_error(self.out / relative, exc)

    def keep(self, relative: str, record: FileRecord) -> None:
        """Publish ``relative`` as the file already there, which the caller vouches for."""
        self.target(relative)  # the same checks as a file written
        self._records[relative] = record
        self.kept.add(relative)

    def cleanup(self) -> None:
        import shutil

        self._finisher.wait()  # its files are about to go: a failure no longer matters
        shutil.rmtree(self.dir, ignore_errors=True)


def _staging_error(target: Path, exc: OSError) -> PublishError:
    return PublishError(
        f"{target}: could not stage the new version ({exc.strerror}); "
        "the published output is unchanged"
    )


class _Finisher:
    """Hashes and syncs staged files in a thread of its own, while the build writes the next.

    sha256 over a whole mapped file and ``fsync`` both run without the GIL:
    a rebuild at 10,000 items spent a fifth of its time in them, one file
    after the other, with the second core idle. A large file is hashed as it
    is on disk, read back from the page cache; a small one comes with its
    record (``_write_new_file`` hashed it from memory). Records come out of
    :meth:`take_records`; nothing is published before :meth:`wait` returns
    (commit reads Stage.records, which waits).
    """

    def __init__(self) -> None:
        import queue
        import threading

        self._jobs: queue.SimpleQueue[tuple[int, str, FileRecord | None] | None]
        self._jobs = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._handed: list[str] = []  # every file handed over and not yet taken back
        self._records: dict[str, FileRecord] = {}
        self._failed: tuple[str, OSError] | None = None

    def finish(self, fd: int, relative: str, record: FileRecord | None = None) -> None:
        """Hash (unless ``record`` is known), sync and close ``fd``, written for ``relative``.

        ``fd`` is this object's now.
        """
        if self._thread is None:
            import threading

            self._thread = threading.Thread(target=self._run, name="infrafeed-finish", daemon=True)
            self._thread.start()
        self._handed.append(relative)
        self._jobs.put((fd, relative, record))

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            fd, relative, known = job
            try:
                record = known if known is not None else _hashed(fd)
                os.fsync(fd)
                self._records[relative] = record
            except Exception as exc:  # any: a file without a record must never go unnoticed
                failure = exc if isinstance(exc, OSError) else OSError(errno.EIO, repr(exc))
                if self._failed is None:
                    self._failed = (relative, failure)
            finally:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def wait(self) -> tuple[str, OSError] | None:
        """Wait for the files handed over so far; the first that failed, and why, if any."""
        if self._thread is not None:
            self._jobs.put(None)
            self._thread.join()
            self._thread = None
        if self._failed is None:
            # A staged file missing from the records would look, to commit, like
            # a file this build no longer makes: it would be removed.
            for relative in self._handed:
                if relative not in self._records:
                    self._failed = (relative, OSError(errno.EIO, "no record of the staged file"))
                    break
        return self._failed

    def take_records(self) -> dict[str, FileRecord]:
        records, self._records = self._records, {}
        self._handed = [relative for relative in self._handed if relative not in records]
        return records


def _record_of(data: Buffer) -> FileRecord:
    import hashlib

    view = memoryview(data).cast("B")
    return FileRecord(hashlib.sha256(view).hexdigest(), len(view))


def _hashed(fd: int) -> FileRecord:
    """The record of the whole file open at ``fd`` (for reading), mapped a window at a time.

    Each window is hashed in one call, without the GIL; mapped pages count
    as the process's memory, so a 100 MB feed is never mapped whole.
    """
    import hashlib
    import mmap

    size = os.fstat(fd).st_size
    digest = hashlib.sha256()
    for offset in range(0, size, _HASH_WINDOW):
        length = min(_HASH_WINDOW, size - offset)
        with mmap.mmap(fd, length, access=mmap.ACCESS_READ, offset=offset) as window:
            digest.update(window)
    return FileRecord(digest.hexdigest(), size)


def commit(stage: Stage, previous: Manifest, manifest: Manifest) -> Report:
    """Move changed staged files into place, remove vanished ones, write the manifest.

    ``manifest`` arrives with ``feeds`` and ``inputs`` filled in; its ``files``
    are filled here. Every path is checked before anything is touched. All or
    nothing: an error at any step puts back every file already moved, and the
    new manifest, written last, is the point of no return.
    """
    out = stage.out
    records = stage.records  # waits: nothing is published before every staged file is on disk
    stage.recheck()  # the folders on the way are resolved again: they may have changed since
    targets = {relative: stage.target(relative) for relative in sorted(records)}
    vanished = {r: stage.target(r) for r in sorted(set(previous.files) - set(records))}
    # A file whose record changed since the last build is written without
    # reading the old one; any other is read: a copy edited or damaged since
    # is still repaired, and one already there (a lost manifest) left alone.
    written = [
        r
        for r, t in targets.items()
        if r not in stage.kept
        and (previous.files.get(r, records[r]) != records[r] or sha256_of(t) != records[r].sha256)
    ]
    unchanged = [r for r in targets if r not in written]
    removed: list[str] = []
    kept: list[str] = []
    for relative, target in vanished.items():
        if not target.is_file():
            continue
        if sha256_of(target) == previous.files[relative].sha256:
            removed.append(relative)
        else:
            kept.append(relative)  # changed by someone else since: not ours to delete

    manifest.files = dict(records)
    final = manifest.to_bytes()
    if not written and not removed:
        if final != _read_or_none(out / MANIFEST):
            _write_manifest(out, final)
        return Report((), tuple(unchanged), (), tuple(kept))

    # Record intent first: if this build dies mid-way, the next one still
    # knows that the files about to appear are infrafeed's.
    intent = Manifest(
        files={**previous.files, **{r: records[r] for r in written}},
        feeds=previous.feeds,
        inputs=None,
    )
    undo = _Undo(stage)
    try:
        undo.keep(out / MANIFEST)
        _write_manifest(out, intent.to_bytes())
        for relative in written:
            undo.replace(stage.dir / relative, targets[relative])
        for relative in removed:
            undo.remove(vanished[relative])
        _write_manifest(out, final)
    except PublishError as exc:
        raise PublishError(f"{exc}; {undo.rollback()}") from None

    _fsync_dirs(sorted({targets[r].parent for r in written}))
    for relative in removed:
        _remove_empty_parents(vanished[relative].parent, out)
    return Report(tuple(written), tuple(unchanged), tuple(removed), tuple(kept))


class _Undo:
    """The steps of a commit, and how to take each back."""

    def __init__(self, stage: Stage) -> None:
        self.stage = stage
        self.backups = stage.dir / _BACKUP
        # (target, what to put back there: a backup, or None when it did not exist)
        self.steps: list[tuple[Path, Path | None]] = []
        self.created: list[Path] = []
        self.manifest: tuple[Path, Path | None] | None = None

    def _backup(self) -> Path:
        self.backups.mkdir(exist_ok=True)
        return self.backups / str(len(self.steps))

    def keep(self, manifest: Path) -> None:
        """Keep the manifest as it is, to put it back (same file, same mtime) if need be."""
        backup = None
        if manifest.is_file():
            backup = self.backups / "manifest"
            try:
                self.backups.mkdir(exist_ok=True)
                _link_or_copy(manifest, backup)
            except OSError as exc:
                raise PublishError(f"{manifest}: could not keep a copy ({exc.strerror})") from None
        self.manifest = (manifest, backup)

    def replace(self, staged: Path, target: Path) -> None:
        try:
            self.created.extend(_make_parents(target.parent, self.stage.out))
            backup = None
            if target.is_file():
                backup = self._backup()
                _link_or_copy(target, backup)
            staged.replace(target)
        except OSError as exc:
            raise PublishError(f"{target}: could not be replaced ({exc.strerror})") from None
        self.steps.append((target, backup))

    def remove(self, target: Path) -> None:
        try:
            backup = self._backup()
            target.replace(backup)  # a removal that can be taken back
        except OSError as exc:
            raise PublishError(f"{target}: could not be removed ({exc.strerror})") from None
        self.steps.append((target, backup))

    def rollback(self) -> str:
        """Put every target back as it was; say how that went."""
        failed: list[str] = []
        for target, backup in reversed(self.steps):
            try:
                if backup is None:
                    target.unlink()
                else:
                    backup.replace(target)
            except OSError:
                failed.append(str(target))
        for folder in reversed(self.created):
            with contextlib.suppress(OSError):
                folder.rmdir()
        if failed:
            return (
                f"{len(failed)} files could not be put back ({', '.join(failed)}); each file "
                "is complete, and the next build repairs them"
            )
        if self.manifest is not None:
            # The intent manifest lists hashes that are not on disk any more.
            manifest, backup = self.manifest
            with contextlib.suppress(OSError):
                if backup is None:
                    manifest.unlink(missing_ok=True)
                else:
                    backup.replace(manifest)
        return "the previous output is intact"


def outputs_intact(out: Path, files: Mapping[str, FileRecord]) -> bool:
    """True when every recorded file is on disk with the bytes infrafeed wrote.

    Hashes, not time stamps: a file restored or edited with its modification
    time kept (``cp -p``, ``rsync -t``) is still noticed and repaired, and the
    manifest stays free of time stamps. The outputs are small; reading them
    costs far less than starting Python.
    """
    for relative, record in files.items():
        path = out / relative
        try:
            if path.stat().st_size != record.size:
                return False
        except OSError:
            return False
        if sha256_of(path) != record.sha256:
            return False
    return True


def _write_manifest(out: Path, data: bytes) -> None:
    path = out / MANIFEST
    temp = out / f"{MANIFEST}.{os.getpid()}.tmp"
    try:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        _write_new_file(temp, (data,))
        temp.replace(path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise PublishError(f"{path}: could not write the manifest ({exc.strerror})") from None
    _fsync_dir(out)


def _write_new_file(
    path: Path, chunks: Iterable[Buffer], finisher: _Finisher | None = None, relative: str = ""
) -> FileRecord | None:
    """Create ``path`` (never through a symlink, never over an existing file) and sync it.

    Small chunks (a feed's items) are gathered into writes of about
    :data:`_WRITE_SIZE`. The file is hashed and synced here, or, given a
    ``finisher``, by its thread, which records it under ``relative``: then
    None is returned at once.
    """
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(path, flags, 0o666)  # readable too: the finisher maps it to hash it

    def write(data: Buffer) -> None:
        view = memoryview(data).cast("B")
        while view:
            view = view[os.write(fd, view) :]

    try:
        pending = bytearray()
        whole = True  # the file is one write of ``pending``: small
        for chunk in chunks:
            length = memoryview(chunk).nbytes
            if pending and len(pending) + length > _WRITE_SIZE:
                write(pending)
                pending = bytearray()  # a new one: the written one may still be viewed
                whole = False
            if length >= _WRITE_SIZE:
                write(chunk)  # a whole document, or a large part: not copied
                whole = False
            else:
                pending += chunk
        if pending:
            write(pending)
        if finisher is not None:
            # A small file is hashed here, from memory: handing it to the thread
            # costs more in passing the GIL back and forth than the hash itself
            # (an archive month's documents, thousands of them at 100,000 items).
            record = _record_of(pending) if whole else None
            finisher.finish(fd, relative, record)
            fd = -1  # the finisher's now
            return None
        record = _hashed(fd)
        os.fsync(fd)
        return record
    finally:
        if fd >= 0:
            os.close(fd)


def _link_or_copy(source: Path, backup: Path) -> None:
    try:
        os.link(source, backup)  # free: no data copied, and the old inode stays whole
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK, errno.EXDEV):
            raise
        import shutil

        shutil.copyfile(source, backup)


def sha256_of(path: Path) -> str | None:
    """The file's hash, or None when there is no file to read there.

    Unreadable counts as different: the file is then replaced (ours) or kept
    (a vanished feed's), never deleted on a guess.
    """
    import hashlib

    try:
        with path.open("rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return None


def _read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _make_parents(folder: Path, out: Path) -> list[Path]:
    """Create ``folder`` and its missing parents below ``out``; return those created."""
    missing: list[Path] = []
    while folder != out and not folder.is_dir():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir()
    return list(reversed(missing))


def _fsync_dirs(folders: list[Path]) -> None:
    """Sync the folders whose entries changed, so that the renames in them last.

    Many at once (a new month of archives in every feed, or a first build of
    a large site: 1,380 folders at 100,000 items) go to a few threads: the
    file system then commits them together instead of one after the other.
    """
    if len(folders) <= _SERIAL_DIR_SYNCS:
        for folder in folders:
            _fsync_dir(folder)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=8, thread_name_prefix="infrafeed-dirsync") as pool:
        for _ in pool.map(_fsync_dir, folders):
            pass


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
