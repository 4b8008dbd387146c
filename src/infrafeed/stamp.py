"""The no-op stamp: how a build with nothing to do sees that without reading a file.

After a build, and after a no-op that had to hash, the cache keeps one stamp
per (entries folder, output folder): infrafeed's version, the inputs digest
of the manifest, a digest of the ``lstat`` of every path below the entries
folder and one of the output files infrafeed published (and the manifest),
and the list of those files. The next build walks the entries folder and
stats the published files; if every stat is as the stamp recorded, nothing
changed, and the manifest and the entry and output files are not read.

A stat shows a change only through its time stamps, size or inode. ``ctime``
is set by the kernel on every change and cannot be set back (``touch``,
``cp -p`` and ``rsync -t`` set only ``mtime``), so an edit that keeps the
size and the mtime still shows. One case does not: a file changed again
within the same tick of the file system's clock as the stat was taken keeps
its stat (racy git). So a stamp counts only if every file it stat'ed was last
changed :data:`SETTLE_NS` before the stamp was taken; an unsettled stamp is
ignored, and the next no-op hashes and stamps again.

Kept import-light: this runs on the no-op path, which must cost little more
than starting Python.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from struct import Struct

from .cache import Cache
from .outfolder import MANIFEST

try:
    # hashlib would load OpenSSL first: 3-5 ms, a third of what the no-op may cost.
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter without the module
    from hashlib import blake2b

FORMAT = "infrafeed-stamp 1"
# Longer than the coarsest time stamps in use (FAT's two seconds) plus the
# lag of the kernel's clock behind time.time_ns() (a tick, 10 ms at most).
# A file server whose clock is further off than the margin is not covered.
SETTLE_NS = 2_500_000_000


def now_ns() -> int:
    """The one clock of the stamp (tests move it forward instead of waiting)."""
    return time.time_ns()


class Watch:
    """What one build saw of its entries and output folder, before it read any file."""

    def __init__(self, cache: Cache, entries: Path, out: Path, version: str) -> None:
        self.cache = cache
        self.out = out
        self.version = version
        # Read before any stat: a file is settled if it changed well before the stats.
        self.started = now_ns()
        # realpath, not Path.resolve, which raises on a symlink loop.
        pair = f"{os.path.realpath(entries)}\0{os.path.realpath(out)}"
        self.pair = blake2b(pair.encode(errors="surrogatepass"), digest_size=32).hexdigest()
        self.name = f"stamp-{self.pair[:16]}"
        self.seen = _Lister()
        self.seen.stat(entries, "")
        self.seen.walk(str(entries))
        self.entries = self.seen.digest()
        self.manifest = _Lister()
        self.manifest.stat(out / MANIFEST, MANIFEST, regular=True)
        self.outputs: _Lister | None = None
        self.files: tuple[str, ...] = ()

    def unchanged(self) -> tuple[str, ...] | None:
        """The published files, when nothing changed since a settled stamp; else None."""
        stamp = _Stamp.parse(self.cache.read(self.name))
        if (
            stamp is None
            or not stamp.settled
            or not self.seen.whole
            or (stamp.version, stamp.pair, stamp.entries) != (self.version, self.pair, self.entries)
        ):
            return None
        self.see_outputs(stamp.files)
        assert self.outputs is not None
        if not self.outputs.whole or self.outputs.digest() != stamp.outputs:
            return None
        return stamp.files

    def see_outputs(self, files: Iterable[str], *, manifest_rewritten: bool = False) -> None:
        """Stat the published ``files`` (before they are hashed, to stamp what was hashed)."""
        if manifest_rewritten:
            self.manifest = _Lister()
            self.manifest.stat(self.out / MANIFEST, MANIFEST, regular=True)
        self.files = tuple(sorted(files))
        self.outputs = self.manifest.copy()
        for relative in self.files:
            self.outputs.stat(self.out / relative, relative, regular=True)

    def stamp(self, inputs: str) -> None:
        """Record the entries and outputs seen, which build the output as it is now."""
        assert self.outputs is not None, "see_outputs first"
        newest = max(self.seen.newest(), self.outputs.newest())
        stamp = _Stamp(
            version=self.version,
            pair=self.pair,
            inputs=inputs,
            entries=self.entries,
            outputs=self.outputs.digest(),
            settled=(self.seen.whole and self.outputs.whole and newest < self.started - SETTLE_NS),
            files=self.files,
        )
        self.cache.write(self.name, stamp.to_bytes())


# mode, size, mtime_ns, ctime_ns, inode: packed, not formatted, as the
# no-op's walk does it 3,000 times at 10,000 items.
_STAT = Struct("<QqqqQ")
_MISSING = _STAT.pack(0, -1, -1, -1, 0)


class _Lister:
    """The lstat of paths, for a digest and for the newest time stamp among them."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.stats: list[bytes] = []
        self.whole = True  # False: a path could not be listed or stat'ed, or is not as expected

    def copy(self) -> _Lister:
        other = _Lister()
        other.names, other.stats, other.whole = list(self.names), list(self.stats), self.whole
        return other

    def newest(self) -> int:
        """The latest mtime or ctime of the paths (worked out only to stamp them)."""
        times = _STAT.iter_unpack(b"".join(self.stats))
        return max((max(mtime, ctime) for _, _, mtime, ctime, _ in times), default=0)

    def digest(self) -> str:
        # Stats have one size and names no NUL: the bytes hashed have one reading.
        digest = blake2b(b"".join(self.stats), digest_size=32)
        digest.update("\0".join(self.names).encode(errors="surrogatepass"))
        return digest.hexdigest()

    def stat(self, path: Path, relative: str, *, regular: bool = False) -> None:
        self.names.append(relative)
        try:
            st = path.lstat()
        except OSError:
            self.stats.append(_MISSING)
            self.whole = False
            return
        if regular and not stat.S_ISREG(st.st_mode):
            # A symlinked output's target can change without its lstat changing.
            self.whole = False
        self.stats.append(
            _STAT.pack(st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        )

    def walk(self, root: str) -> None:
        """Every path below ``root``, as ``build.inputs_digest`` finds them.

        Symlinks are not followed (a link counts by where it points); the
        order is the file system's, which changes only when a folder does.
        """
        # listdir and lstat relative to the folder's descriptor, not scandir:
        # the kernel then resolves one name per stat, not the whole path; 7%
        # of the walk, which is most of a no-op build.
        # Bound once: the loop runs once per path, 3,370 times at 10,000 items.
        names, add = self.names, self.stats.append
        pack, lstat, isdir = _STAT.pack, os.lstat, stat.S_ISDIR
        folders = [(root, "/", 0)]  # a stack, not recursion: no depth limit to hit
        while folders:
            folder, prefix, nofollow = folders.pop()
            try:
                fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | nofollow)
                try:
                    listing = os.listdir(fd)  # noqa: PTH208 - pathlib lists no descriptor
                    # A folder, then the names in it: no name holds a "/", so this reads one way.
                    names.append(prefix)
                    names.extend(listing)
                    for name in listing:
                        st = lstat(name, dir_fd=fd)
                        mode = st.st_mode
                        add(pack(mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
                        if isdir(mode):
                            # NOFOLLOW: a folder swapped for a link since its lstat is not entered.
                            folders.append((f"{folder}/{name}", f"{prefix}{name}/", os.O_NOFOLLOW))
                finally:
                    os.close(fd)
            except OSError:
                # Unlistable, or changing under us: hashing decides, not this stamp.
                self.whole = False


class _Stamp:
    """A stamp as stored: a few lines of text, then the published files, one a line."""

    def __init__(
        self,
        *,
        version: str,
        pair: str,
        inputs: str,
        entries: str,
        outputs: str,
        settled: bool,
        files: Sequence[str],
    ) -> None:
        self.version = version
        self.pair = pair
        self.inputs = inputs
        self.entries = entries
        self.outputs = outputs
        self.settled = settled
        self.files = tuple(files)

    _KEYS = ("version", "pair", "inputs", "entries", "outputs", "settled", "files")

    def to_bytes(self) -> bytes:
        head = [
            FORMAT,
            f"version {self.version}",
            f"pair {self.pair}",
            f"inputs {self.inputs}",
            f"entries {self.entries}",
            f"outputs {self.outputs}",
            f"settled {'yes' if self.settled else 'no'}",
            f"files {len(self.files)}",
        ]
        return "".join(f"{line}\n" for line in [*head, *self.files, "end"]).encode(
            errors="surrogatepass"
        )

    @classmethod
    def parse(cls, data: bytes | None) -> _Stamp | None:
        """The stamp in ``data``, or None for anything but a whole stamp of this format."""
        if data is None:
            return None
        try:
            lines = data.decode(errors="surrogatepass").split("\n")
        except UnicodeDecodeError:
            return None
        # A stamp cut short, or zeroed by a crash, lacks its "end" line or its count.
        if len(lines) < 10 or lines[0] != FORMAT or lines[-2:] != ["end", ""]:
            return None
        fields = {}
        for key, line in zip(cls._KEYS, lines[1:8], strict=True):
            name, _, value = line.partition(" ")
            if name != key:
                return None
            fields[key] = value
        files = lines[8:-2]
        if fields["files"] != str(len(files)) or fields["settled"] not in ("yes", "no"):
            return None
        return cls(
            version=fields["version"],
            pair=fields["pair"],
            inputs=fields["inputs"],
            entries=fields["entries"],
            outputs=fields["outputs"],
            settled=fields["settled"] == "yes",
            files=files,
        )
