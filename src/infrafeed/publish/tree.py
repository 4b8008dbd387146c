"""Publishing: the only code that writes the output folder, and it replaces it whole.

A build writes the whole new tree beside the published one (a file whose bytes did not change
is a hard link to the published one, so it keeps its inode and modification time, and readers
get their 304s), syncs it, then switches the two folders in one step with ``renameat2`` and
``RENAME_EXCHANGE``: a reader sees the old tree or the new one, never a mix, and signals wait
until the switch is done. Files not infrafeed's (not in the manifest) are carried over, and
never written over. Where the folder cannot be switched (its parent is not writable, it is a
mount point, or the file system has no ``RENAME_EXCHANGE``), the changed files are moved in one
at a time under a journal, signals waiting again; a build killed meanwhile (SIGKILL, a power cut)
is completed by the next one, first: until then a reader may see a mix.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import os
import shutil
import signal
import stat
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from ..errors import PublishError
from . import Report, shown
from .files import (
    FileRecord,
    fsync_folder,
    safe_relative,
    sha256_of,
    stage,
    write_atomic,
    write_new,
)
from .lock import JOURNAL, NEXT, next_trees
from .manifest import IDS, MANIFEST, Manifest, as_recorded, manifest_bytes, settled

_OURS = {MANIFEST, IDS, NEXT, JOURNAL}
MOUNTS = Path("/proc/self/mountinfo")  # Linux's mount table
_LIBC = ctypes.CDLL(None, use_errno=True)
_EXCHANGE = getattr(_LIBC, "renameat2", None)  # glibc 2.28 and later


class Tree:
    """The next tree of ``out``, built file by file, then published in one step."""

    def __init__(self, out: Path, previous: Manifest) -> None:
        self.out = Path(os.path.realpath(out))  # a symlinked output folder: switch its target
        self.previous = previous
        parent = self.out.parent
        # Switching needs a sibling folder on the same file system as the output.
        self.switch = os.access(parent, os.W_OK | os.X_OK) and (
            not self.out.exists()
            or (self.out.stat().st_dev == parent.stat().st_dev and not mount_point(self.out))
        )
        if self.switch and self.out.exists() and parent.stat().st_mode & stat.S_ISVTX:
            # A sticky parent (/tmp) lets only the owner of either folder switch them.
            self.switch = os.geteuid() in (parent.stat().st_uid, self.out.stat().st_uid)
        self.dir = next_trees(self.out)[0 if self.switch else 1]
        self.records: dict[str, FileRecord] = {}
        self.unchanged: set[str] = set()
        self.foreign: list[str] = []  # files in the way that infrafeed did not write
        self.staged: list[tuple[Path, Path]] = []  # files beside the output, and their places
        self._settled = settled(self.out)
        try:
            self.dir.mkdir(parents=True)
        except OSError as exc:
            raise _unchanged(self.dir, "could not create the next tree", exc) from None

    def write(self, relative: str, chunks: Iterable[bytes]) -> None:
        """Write ``relative`` of the next tree from ``chunks``, never held whole."""
        if not safe_relative(relative) or relative.split("/", 1)[0] in _OURS - {IDS}:
            raise PublishError(f"{relative!r}: refusing a path outside the output folder")
        staged = self.dir / relative
        try:
            staged.parent.mkdir(parents=True, exist_ok=True)
            record = self.records[relative] = write_new(staged, chunks, sync=False)
            if self._published_as(relative, record):
                # The published file itself, with its inode and modification time.
                staged.unlink()
                if self.switch:
                    _linked(self.out / relative, staged)
        except OSError as exc:
            raise _unchanged(self.out / relative, "could not stage the new version", exc) from None

    def _published_as(self, relative: str, record: FileRecord) -> bool:
        """Whether the published file has these bytes; refuse to replace one not ours."""
        path = self.out / relative
        try:
            path.lstat()  # raises, as writing would, when a folder on the way is not one
        except FileNotFoundError:
            return False
        # What the manifest lists with these bytes, and is older than it, is trusted unread.
        settled = self._settled if self.previous.files.get(relative) == record else -1
        if as_recorded(path, record, settled):
            self.unchanged.add(relative)
            return True
        if relative not in self.previous.files:
            self.foreign.append(relative)  # named all at once, before anything is published
        return False

    def publish(
        self,
        manifest: Manifest,
        page: tuple[Path, Sequence[bytes]] | None,
        topics: Mapping[str, str] | None = None,
    ) -> Report:
        """Carry over what stays, write the manifest, sync, and switch to the new tree.

        ``manifest`` gives all but the files written here. ``page`` (a file outside the output
        folder, and its chunks) is staged beside its place and moved in right after the switch.
        ``topics`` maps documents to the URLs the WebSub hub knows them by: those written are
        owed a ping, recorded in the manifest switched in with them: no stop after it loses one.
        """
        if found := self.foreign:
            it, which = ("it", "this file") if len(found) == 1 else ("them", "these files")
            there = "the one there is" if len(found) == 1 else "those there are"
            raise PublishError(
                f"{', '.join(str(self.out / r) for r in found)}: infrafeed would write {which}, "
                f"but {there} not infrafeed's (the manifest does not list {it}); move {it} away "
                "and build again"
            )
        removed, kept = self._carry_over()
        written = [r for r in self.records if r not in self.unchanged]
        owed = {(topics or {})[r] for r in written if r in (topics or {})}
        unchanged = list(self.unchanged)  # the page's name beside them: it may be "feed.xml" too
        page_record = None
        if page is not None:
            path, chunks = page  # hashed chunk by chunk: a large site's page is never copied
            digest = hashlib.sha256()
            for chunk in chunks:
                digest.update(chunk)
            page_record = FileRecord(digest.hexdigest(), sum(map(len, chunks)))
            same = sha256_of(path) == page_record.sha256
            (unchanged if same else written).append(str(path))
            if not same:  # moved into place right after the feeds
                self.stage(path, chunks)
        pending = tuple(sorted({*manifest.pending, *owed}))
        manifest = manifest._replace(files=dict(self.records), page=page_record, pending=pending)
        try:
            write_new(self.dir / MANIFEST, (manifest_bytes(manifest),), sync=False)
            if self.switch and self.out.exists():
                _same_mode(self.dir, self.out)
            _sync(self.dir)
        except OSError as exc:
            raise _unchanged(self.dir / MANIFEST, "could not write the manifest", exc) from None
        with _signals_held():  # no switch half made; what was staged beside goes in with it
            if not self.switch or not self._switched():
                _move_in(self.dir, self.out, removed)
            else:
                self._rescue()
            for staged, place in self.staged:
                try:
                    staged.replace(place)
                    fsync_folder(place.parent)
                except OSError as exc:
                    why = f"could not be written ({exc.strerror}); the feeds are published"
                    raise PublishError(f"{place}: {why}; the next build writes it") from None
        self.cleanup()  # the old tree: unlinking it changes its files' links, and change times
        with contextlib.suppress(OSError):
            _settle(self.out, self.records)
        return Report(*map(shown, (written, unchanged, removed, kept)))

    def _carry_over(self) -> tuple[list[str], list[str]]:
        """Link what stays of the published tree into the next one; return what goes.

        Files not infrafeed's stay; so do files of feeds no longer made that were edited since
        infrafeed wrote them ("kept"); the others are removed.
        """
        removed, kept = [], []
        for relative, is_link in _walk(self.out, _OURS, strict=self.switch):
            if relative in self.records or relative.startswith(".infrafeed"):
                continue  # (what older versions of infrafeed left goes)
            record = self.previous.files.get(relative)
            if record is not None:
                if not is_link and sha256_of(self.out / relative) == record.sha256:
                    removed.append(relative)
                    continue
                kept.append(relative)
            if not self.switch:
                continue
            source, target = self.out / relative, self.dir / relative
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                if is_link:
                    target.symlink_to(source.readlink())
                else:
                    _linked(source, target)
            except FileExistsError:
                raise PublishError(
                    f"{source}: infrafeed writes {'a folder' if target.is_dir() else 'a file'} "
                    "there, but this is not infrafeed's; move it away and build again"
                ) from None
            except OSError as exc:
                raise _unchanged(source, "could not be carried over", exc) from None
        if self.switch:
            self._carry_folders()
        return removed, kept

    def _carry_folders(self) -> None:
        """Give the next tree the published one's folders: empty ones, and every one's mode
        (a folder kept 0700 must not be served 0755). Folders infrafeed emptied go."""
        ours = {str(f) for n in (*self.previous.files, *self.records) for f in Path(n).parents}
        modes = []
        for folder, folders, _ in os.walk(self.out, onerror=_unlisted):
            relative = os.path.relpath(folder, self.out)
            if relative == ".":
                folders[:] = [f for f in folders if not f.startswith(".infrafeed")]
                continue
            target = self.dir / relative
            try:
                if relative not in ours:
                    target.mkdir(parents=True, exist_ok=True)
                if target.is_dir() and not target.is_symlink():
                    modes.append((target, Path(folder)))
            except OSError as exc:
                raise _unchanged(Path(folder), "could not be carried over", exc) from None
        for target, published in modes:
            _same_mode(target, published)

    def _rescue(self) -> None:
        """Move into the new tree what was put into the old one while this build ran."""
        for relative, _ in _walk(self.dir, _OURS):
            ours = relative in self.records or relative in self.previous.files
            if ours or relative.startswith(".infrafeed"):  # older versions' files go (_carry_over)
                continue
            source, target = self.dir / relative, self.out / relative
            with contextlib.suppress(OSError):  # best effort: the build is published
                if os.path.lexists(target) and os.lstat(target).st_ino == os.lstat(source).st_ino:
                    continue  # carried over, and not replaced since
                target.parent.mkdir(parents=True, exist_ok=True)
                source.replace(target)

    def _switched(self) -> bool:
        """Put the next tree in place of the published one in one step; False if it can't be.

        The caller holds SIGINT and SIGTERM: a switch is never half made.
        """
        if not self.out.exists():
            self.dir.rename(self.out)
        # renameat2(AT_FDCWD, next, AT_FDCWD, out, RENAME_EXCHANGE)
        elif _EXCHANGE is None or _EXCHANGE(-100, bytes(self.dir), -100, bytes(self.out), 2):
            code = ctypes.get_errno() if _EXCHANGE is not None else errno.ENOSYS
            if code not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV):
                raise _unchanged(self.out, "could not be switched", OSError(code, ""))
            return False  # the file system cannot: move the files in instead
        fsync_folder(self.out.parent)
        # A process working in the output folder (a shell's build, a library's host) would be
        # left in the old tree, about to be removed: it follows the same path into the new one
        # (where there is none, it stays: relative paths must keep their meaning).
        with contextlib.suppress(OSError, ValueError):
            os.chdir(self.out / Path.cwd().relative_to(self.dir))
        return True

    def stage(self, path: Path, chunks: Iterable[bytes]) -> None:
        """Write ``path``, outside the output folder, in the same step as the output."""
        try:
            self.staged.append((stage(path, chunks), path))
        except OSError as exc:
            raise _unchanged(path, "could not be written", exc) from None

    def cleanup(self) -> None:
        """Remove the next tree (unpublished, or the old tree once switched), and what was
        staged beside the output and not moved in."""
        _remove(self.dir)
        for staged, _ in self.staged:
            staged.unlink(missing_ok=True)


def mount_point(path: Path) -> bool:
    """Whether ``path`` is a mount point, a bind mount of its parent's file system too."""
    written = str(path).translate({ord(c): f"\\{ord(c):03o}" for c in " \t\n\\"})
    try:  # Linux lists mount points with those four characters as octal escapes
        with MOUNTS.open(encoding="utf-8", errors="surrogateescape") as info:
            return any(line.split(" ")[4] == written for line in info)
    except (OSError, IndexError):
        return os.path.ismount(path)


def remove_leftovers(out: Path) -> None:
    """Complete a fallback publish a killed build left, and remove its unpublished trees."""
    out = Path(os.path.realpath(out))
    nexts = next_trees(out)
    journal = out / JOURNAL
    if journal.is_file() and not journal.is_symlink():
        lines = journal.read_text(encoding="utf-8", errors="surrogateescape").splitlines()
        if lines and Path(lines[0]) in nexts:  # never moves files from anywhere else
            _move_in(Path(lines[0]), out, lines[1:])
    for leftover in (*nexts, journal):
        if leftover.is_dir() and not leftover.is_symlink():
            _remove(leftover)
        else:
            leftover.unlink(missing_ok=True)


def _move_in(staged: Path, out: Path, removed: list[str]) -> None:
    """Move the changed files of ``staged`` into ``out`` one at a time, the manifest last.

    A journal lists what this does, so that the next build completes one killed midway
    (remove_leftovers), whatever step it died at.
    """
    journal = out / JOURNAL
    # Stopped halfway, this would leave a mix served until the next build completes it.
    with _signals_held():
        try:
            out.mkdir(parents=True, exist_ok=True)
            if not journal.exists():
                text = "\n".join([str(staged), *removed]) + "\n"  # a path may hold any bytes
                write_atomic(journal, [text.encode(errors="surrogateescape")])
            moves = [r for r, _ in _walk(staged, {MANIFEST})]
            for relative in [*moves, MANIFEST]:
                source, target = staged / relative, out / relative
                if not source.exists():
                    continue  # moved before the build was killed
                if not Path(os.path.realpath(target.parent)).is_relative_to(out):
                    raise PublishError(f"{target}: a folder on the way leads outside {out}")
                target.parent.mkdir(parents=True, exist_ok=True)
                source.replace(target)
            for relative in removed:
                folder = Path(os.path.realpath((out / relative).parent))
                if not safe_relative(relative) or not folder.is_relative_to(out):
                    continue  # a damaged or forged journal: only files below the output folder go
                (out / relative).unlink(missing_ok=True)
                folder = (out / relative).parent
                with contextlib.suppress(OSError):  # up to the first folder not empty
                    while folder != out and folder.is_relative_to(out):
                        folder.rmdir()
                        folder = folder.parent
            shutil.rmtree(staged, ignore_errors=True)
            journal.unlink()
        except OSError as exc:
            raise PublishError(
                f"{out}: could not move the new files in ({exc.strerror}); the next build "
                "completes it before anything else"
            ) from None


def _remove(tree: Path) -> None:
    """Remove a tree of infrafeed's, even one whose folders are read-only: a switch gives the
    new tree the output folder's mode, which may be 0555, and the old tree has it too."""
    with contextlib.suppress(OSError):
        for folder, _, _ in os.walk(tree):
            Path(folder).chmod(stat.S_IRWXU)
    shutil.rmtree(tree, ignore_errors=True)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block is done (in a process of one thread, as the
    command is: in a host's other threads a signal is taken and raised here all the same)."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, ())  # read first: an interrupt as the
    try:  # mask is set must still find it restored
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _walk(root: Path, skip: set[str], strict: bool = False) -> Iterator[tuple[str, bool]]:
    """Every file and symbolic link below ``root`` but ``skip``: its path, and if it is a link.
    ``strict``: a folder that cannot be listed is an error (its files would be left behind)."""
    for folder, folders, files in os.walk(root, onerror=_unlisted if strict else None):
        below = os.path.relpath(folder, root)
        prefix = "" if below == "." else below + "/"
        for name in files + [f for f in folders if Path(folder, f).is_symlink()]:
            if prefix + name not in skip:
                yield prefix + name, Path(folder, name).is_symlink()
        if not prefix:
            folders[:] = [f for f in folders if f not in skip]


def _same_mode(folder: Path, published: Path) -> None:
    """Give ``folder`` the ``published`` one's mode and group: a web server may read the output
    as its group, with the folders 0750."""
    info = os.lstat(published)
    try:
        if folder.stat().st_gid != info.st_gid:
            os.chown(folder, -1, info.st_gid)
    except PermissionError:  # a group the build's user is not in: lost, which matters only
        if ((info.st_mode >> 3) ^ info.st_mode) & 0o7:  # where it may do more, or less, than others
            raise PublishError(
                f"{published}: its group ({info.st_gid}) cannot be given to the new tree's "
                "folder: the build's user is not in it; add it to the group and build again; "
                "the published output is unchanged"
            ) from None
    folder.chmod(stat.S_IMODE(info.st_mode))  # after chown, which may clear set-group-id


def _unlisted(exc: OSError) -> None:
    if not isinstance(exc, FileNotFoundError):  # none yet: nothing to carry over
        raise _unchanged(Path(exc.filename), "could not be carried over: it cannot be listed", exc)


def _linked(source: Path, target: Path) -> None:
    """``target`` as ``source``: a hard link, else a copy with its modification time, where the
    kernel refuses the link (protected_hardlinks: a file of another user's, not writable)."""
    try:
        os.link(source, target)
    except PermissionError:
        shutil.copy2(source, target)


def _settle(out: Path, names: Iterable[str]) -> None:
    """Give the manifest a change time later than every file's it lists (manifest.as_recorded)."""
    newest = max((os.lstat(out / name).st_ctime_ns for name in names), default=0)
    manifest = out / MANIFEST
    for _ in range(1000):  # change times move at the kernel's tick: until one has passed
        info = manifest.stat()
        os.utime(manifest, ns=(info.st_atime_ns, info.st_mtime_ns))  # the change time is now
        if manifest.stat().st_ctime_ns > newest:
            return
        time.sleep(0.001)  # not the clock's: a test's clock may not wait, and the kernel must


def _sync(folder: Path) -> None:
    """Make everything written below ``folder`` durable: one ``syncfs``, not a sync per file."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if _LIBC.syncfs(fd) != 0:
            os.sync()
    finally:
        os.close(fd)


def _unchanged(path: Path, what: str, exc: OSError) -> PublishError:
    return PublishError(
        f"{path}: {what} ({exc.strerror or os.strerror(exc.errno or 0)}); "
        "the published output is unchanged"
    )
