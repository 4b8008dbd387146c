"""Publishing: the only code that writes to the output folder.

A build stages every file in a private folder inside ``output/`` (same file
system, so the final rename is atomic), then moves into place only the files
whose bytes changed. Readers of ``output/`` see either the old or the new
version of each file, never a partial one. An error while moving files into
place puts back the ones already moved, so a failed build leaves the previous
output as it was; a killed build leaves at worst a staging folder, which the
next build removes.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

from ..errors import PublishError
from . import Report
from .files import FileRecord, fsync_folder, safe_relative, sha256_of, write_atomic, write_new
from .lock import STAGING_PREFIX
from .manifest import MANIFEST, Manifest, manifest_bytes

# Backups of the files a build replaces, kept until the build has finished,
# so that a failure half-way can put them back. Inside the staging folder,
# whose other entries are feed paths (never hidden names).
_BACKUP = ".previous"


class Stage:
    """A private folder in ``out`` where a build writes every file first."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.root = out.resolve()
        self.dir = out / f"{STAGING_PREFIX}{os.getpid()}"
        try:
            self.dir.mkdir()
        except OSError as exc:
            raise PublishError(
                f"{self.dir}: cannot create the staging folder ({exc.strerror}); "
                "the published output is unchanged"
            ) from None
        self.records: dict[str, FileRecord] = {}
        # Folders of the output (below it, as text) found to stay inside it, in this
        # round of checks: an archive month's documents share one.
        self._inside: set[str] = set()

    def target(self, relative: str) -> Path:
        """The final path of ``relative``, refused if it would leave the output folder."""
        candidate = safe_relative(relative)
        if candidate is None:
            raise PublishError(f"{relative!r}: refusing a path outside the output folder")
        folder = candidate.parent.as_posix()
        target = self.out / candidate
        if folder not in self._inside:
            # Resolved, not compared as strings: a symlinked folder on the way
            # (output/modules -> /elsewhere) must not carry a write outside.
            try:
                resolved = target.resolve()
            except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
                raise PublishError(
                    f"{target}: cannot be resolved ({exc}); refusing to write"
                ) from None
            if not resolved.is_relative_to(self.root):
                raise PublishError(
                    f"{target}: resolves to {resolved}, outside the output folder "
                    f"{self.root}; refusing to write (is a folder on the way a symlink?)"
                )
            if not target.is_symlink():
                self._inside.add(folder)
        return target

    def recheck(self) -> None:
        """Start a new round of checks: :meth:`target` resolves each folder again."""
        self._inside.clear()

    def write(self, relative: str, chunks: Iterable[bytes]) -> None:
        """Stage ``relative`` with the concatenation of ``chunks``, never held whole."""
        target = self.target(relative)
        staged = self.dir / relative
        try:
            staged.parent.mkdir(parents=True, exist_ok=True)
            self.records[relative] = write_new(staged, chunks)
        except OSError as exc:
            raise PublishError(
                f"{target}: could not stage the new version ({exc.strerror}); "
                "the published output is unchanged"
            ) from None

    def cleanup(self) -> None:
        import shutil  # not at the top: a build with nothing to do stages nothing

        shutil.rmtree(self.dir, ignore_errors=True)


def commit(
    stage: Stage, previous: Manifest, inputs: str, page: tuple[Path, bytes] | None = None
) -> Report:
    """Move changed staged files into place, remove vanished ones, write the manifest.

    ``page``, a file outside the output folder and its bytes, is written too.

    Every path is checked before anything is touched. All or nothing: an error
    at any step puts back every file already moved, and the new manifest,
    written last, is the point of no return.
    """
    out = stage.out
    records = stage.records
    stage.recheck()  # the folders on the way are resolved again: they may have changed since
    targets = {relative: stage.target(relative) for relative in sorted(records)}
    vanished = {r: stage.target(r) for r in sorted(set(previous.files) - set(records))}
    # A file whose record changed since the last build is written without
    # reading the old one; any other is read: a copy edited or damaged since
    # is still repaired, and one already there (a lost manifest) left alone.
    written = [
        r
        for r, t in targets.items()
        if (previous.files.get(r, records[r]) != records[r] or sha256_of(t) != records[r].sha256)
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

    page_record = None
    if page is not None:
        path, data = page
        page_record = FileRecord(hashlib.sha256(data).hexdigest(), len(data))
        if sha256_of(path) != page_record.sha256:
            try:
                write_atomic(path, (data,))
            except OSError as exc:
                raise PublishError(f"{path}: could not be written ({exc.strerror})") from None
            written.append(str(path))
        else:
            unchanged.append(str(path))
    final = manifest_bytes(Manifest(inputs, dict(records), page_record))
    if not written and not removed:
        if final != _read_or_none(out / MANIFEST):
            _write_manifest(out, final)
        return _report([], unchanged, [], kept)

    # Record intent first: if this build dies mid-way, the next one still
    # knows that the files about to appear are infrafeed's.
    intent = Manifest(None, {**previous.files, **{r: records[r] for r in written if r in records}})
    undo = _Undo(stage)
    try:
        undo.keep(out / MANIFEST)
        _write_manifest(out, manifest_bytes(intent))
        for relative in written:
            if relative in targets:
                undo.replace(stage.dir / relative, targets[relative])
        for relative in removed:
            undo.remove(vanished[relative])
        _write_manifest(out, final)
    except PublishError as exc:
        raise PublishError(f"{exc}; {undo.rollback()}") from None

    for folder in sorted({targets[r].parent for r in written if r in targets}):
        fsync_folder(folder)
    for relative in removed:
        _remove_empty_parents(vanished[relative].parent, out)
    return _report(written, unchanged, removed, kept)


def _report(
    written: list[str], unchanged: list[str], removed: list[str], kept: list[str]
) -> Report:
    """What a commit did, without infrafeed's own bookkeeping (hidden files)."""

    def shown(names: list[str]) -> tuple[str, ...]:
        return tuple(name for name in names if not name.startswith("."))

    return Report(shown(written), shown(unchanged), shown(removed), shown(kept))


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


def _write_manifest(out: Path, data: bytes) -> None:
    path = out / MANIFEST
    try:
        write_atomic(path, (data,))
    except OSError as exc:
        raise PublishError(f"{path}: could not write the manifest ({exc.strerror})") from None


def _link_or_copy(source: Path, backup: Path) -> None:
    try:
        os.link(source, backup)  # free: no data copied, and the old inode stays whole
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK, errno.EXDEV):
            raise
        import shutil

        shutil.copyfile(source, backup)


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


def _remove_empty_parents(folder: Path, out: Path) -> None:
    while folder != out and folder.is_relative_to(out):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
