"""The hash index: a build that is not a no-op reads only the entry files that changed.

Each case builds two copies of one site, one with a build cache and one with
``--no-cache``, changes both the same way, builds again, and both must
print the same and leave the same files, manifest (its ``inputs`` digest)
included. A spy on ``hashlib.file_digest`` shows which entry files the
build with the cache read: the ones that changed, or all of them when the
index cannot be trusted.

The index trusts a file's stat only 2.5 s after the file last changed; the
tests move the stamp's clock forward (``later``) instead of waiting.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import pytest

from conftest import CachedSite, RunSite
from infrafeed import stamp
from infrafeed.build import inputs_digest
from infrafeed.cache import Cache
from infrafeed.hash_index import HashIndex
from infrafeed.outfolder import MANIFEST
from outputs import tree
from release_kit import release_text

EDITED = "2026/2026-03-05.toml"


class Site(CachedSite):
    """A copy of the small site, its output folder and its cache folder."""

    def index(self) -> Path:
        (path,) = self.cache.glob("hashes-*")
        return path

    def files(self) -> list[str]:
        """Every regular file below the entries folder: what a build without an index reads."""
        return sorted(
            p.relative_to(self.entries).as_posix()
            for p in self.entries.rglob("*")
            if p.is_file() and not p.is_symlink()
        )


@pytest.fixture
def site(tmp_path: Path) -> Site:
    return Site(tmp_path / "cached")


@pytest.fixture
def twin(tmp_path: Path) -> Site:
    return Site(tmp_path / "plain")


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files that were read to be hashed (entries, and outputs checked by publish.py)."""
    seen: list[Path] = []
    real = hashlib.file_digest

    def spy(handle: BinaryIO, digest: str) -> object:
        seen.append(Path(handle.name))
        return real(handle, digest)

    monkeypatch.setattr(hashlib, "file_digest", spy)
    return seen


def below(folder: Path, paths: list[Path]) -> list[str]:
    """The ``paths`` in ``folder``, by their path below it, sorted."""
    return sorted(p.relative_to(folder).as_posix() for p in paths if p.is_relative_to(folder))


def same_as_without_cache(
    site: Site, twin: Site, run: RunSite, reads: list[Path], *args: str
) -> list[str]:
    """Build both; check they print and write the same; return the entry files the first read."""
    reads.clear()
    done = run(site, *args)
    read = below(site.entries, reads)
    assert done == run(twin, *args, cache=False)
    assert tree(site.out) == tree(twin.out)
    assert b'"inputs"' in tree(site.out)[MANIFEST]
    return read


# --- Changes to the entries ----------------------------------------------------------


def edit_keeping_size_and_mtime(entries: Path) -> None:
    """Only the change time shows it: the size and mtime are as they were."""
    path = entries / EDITED
    info = path.stat()
    path.write_bytes(path.read_bytes().replace(b"CUDA Reduce", b"CUDA Rebuce"))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        info.st_ino,
        info.st_size,
        info.st_mtime_ns,
    )


def replace_with_another_file(entries: Path) -> None:
    """A new inode with the old size and mtime, as an editor's save-and-rename leaves it."""
    path = entries / EDITED
    info = path.stat()
    other = path.with_name(".replacement")
    other.write_bytes(path.read_bytes().replace(b"CUDA Reduce", b"CUDA Rebuce"))
    os.utime(other, ns=(info.st_atime_ns, info.st_mtime_ns))
    other.replace(path)
    assert path.stat().st_ino != info.st_ino


def turn_into_symlink(entries: Path) -> None:
    """The link is read through by the loader; its hidden target is a new file."""
    path = entries / EDITED
    target = path.with_name(".saved.toml")
    target.write_bytes(path.read_bytes().replace(b"CUDA Reduce", b"CUDA Rebuce"))
    path.unlink()
    path.symlink_to(target.name)


def turn_into_folder(entries: Path) -> None:
    path = entries / EDITED
    path.unlink()
    path.mkdir()


def remove(entries: Path) -> None:
    (entries / EDITED).unlink()


def add(entries: Path) -> None:
    (entries / "2026" / "2026-03-09.toml").write_text(release_text(), encoding="utf-8")


@pytest.mark.parametrize(
    ("change", "read", "args"),
    [
        (edit_keeping_size_and_mtime, [EDITED], ()),
        (replace_with_another_file, [EDITED], ()),
        (turn_into_symlink, ["2026/.saved.toml"], ()),
        (turn_into_folder, [], ()),
        (remove, [], ("--allow-changes",)),
        (add, ["2026/2026-03-09.toml"], ()),
    ],
    ids=["edit-size-mtime-kept", "new-inode", "symlink", "folder", "removed", "added"],
)
def test_a_build_after_a_change_reads_what_changed_and_writes_what_no_cache_writes(
    change: Callable[[Path], None],
    read: list[str],
    args: tuple[str, ...],
    site: Site,
    twin: Site,
    run: RunSite,
    later: None,
    reads: list[Path],
) -> None:
    run(site)
    run(twin, cache=False)
    assert site.index().is_file()
    change(site.entries)
    change(twin.entries)
    assert same_as_without_cache(site, twin, run, reads, *args) == read


def test_an_edit_right_after_a_build_is_built(
    site: Site, twin: Site, run: RunSite, reads: list[Path]
) -> None:
    """Every file changed within 2.5 s of the index: none is trusted, all are read."""
    run(site)
    run(twin, cache=False)
    edit_keeping_size_and_mtime(site.entries)
    edit_keeping_size_and_mtime(twin.entries)
    assert same_as_without_cache(site, twin, run, reads) == site.files()


def racy_index(site: Site, path: str) -> None:
    """Make the index record ``path``'s stat of now with its old sha256.

    That is what an index holds when the file was written again within the
    clock tick of the stat that recorded it: the stat did not change.
    """
    index = site.index()
    lines = index.read_bytes().split(b"\n")[:-2]  # without the checksum line
    st = (site.entries / path).lstat()
    (row,) = [n for n, line in enumerate(lines) if line.startswith(f"{path}\t".encode())]
    sha256 = lines[row].rsplit(b"\t", 1)[1].decode()
    fields = (path, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, sha256)
    lines[row] = "\t".join(map(str, fields)).encode()
    resum(index, b"".join(line + b"\n" for line in lines))


def resum(index: Path, body: bytes) -> None:
    """Write ``body`` as an index with its checksum: damage that a checksum cannot see."""
    index.write_bytes(body + f"end {hashlib.sha256(body).hexdigest()}\n".encode())


def test_an_edit_the_index_could_not_see_is_built(
    site: Site, twin: Site, run: RunSite, reads: list[Path]
) -> None:
    """An index taken within 2.5 s of a file's change does not vouch for it, even unchanged."""
    run(site)
    run(twin, cache=False)
    edit_keeping_size_and_mtime(site.entries)
    edit_keeping_size_and_mtime(twin.entries)
    racy_index(site, EDITED)
    assert EDITED in same_as_without_cache(site, twin, run, reads)


# --- What is read, what is written ---------------------------------------------------


def test_only_changed_files_are_read_and_an_index_that_did_not_change_is_not_written(
    site: Site, twin: Site, run: RunSite, later: None, reads: list[Path]
) -> None:
    run(site)
    run(twin, cache=False)
    assert len(site.files()) > 2
    for each in (site, twin):
        add(each.entries)
        edit_keeping_size_and_mtime(each.entries)
    read = same_as_without_cache(site, twin, run, reads)
    assert read == sorted([EDITED, "2026/2026-03-09.toml"])
    # A lost output sends the next build the slow way: it reads no entry file,
    # and leaves the index as it is.
    before = site.index().stat()
    for each in (site, twin):
        (each.out / "atom.xml").unlink()
    assert same_as_without_cache(site, twin, run, reads) == []
    after = site.index().stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_files_changed_just_before_an_index_are_read_until_they_settle(
    site: Site, twin: Site, run: RunSite, reads: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As for the no-op stamp: a file must have changed 2.5 s before the index was taken."""
    run(site)  # right after the copy: no file is settled
    run(twin, cache=False)
    changed = {
        name: max(
            (site.entries / name).stat().st_mtime_ns, (site.entries / name).stat().st_ctime_ns
        )
        for name in site.files()
    }
    newest = max(changed.values())
    last = sorted(name for name, when in changed.items() if when == newest)

    def rebuild() -> list[str]:
        for each in (site, twin):
            (each.out / "atom.xml").unlink()  # the slow way, with no entry changed
        return same_as_without_cache(site, twin, run, reads)

    monkeypatch.setattr(stamp, "now_ns", lambda: newest + stamp.SETTLE_NS)
    assert rebuild() == site.files()  # none settled when the first index was taken
    assert rebuild() == last  # changed SETTLE_NS before the index, to the ns
    monkeypatch.setattr(stamp, "now_ns", lambda: newest + stamp.SETTLE_NS + 1)
    assert rebuild() == last  # the index read is the one taken at newest + SETTLE_NS
    assert rebuild() == []


# --- The index as it may be found ----------------------------------------------------


def flip_a_sha256(data: bytes) -> bytes:
    """Another valid sha256 for a file that did not change."""
    row = data.index(b"2026/2026-03-01.toml\t")
    at = data.index(b"\n", row) - 1
    return data[:at] + (b"0" if data[at : at + 1] != b"0" else b"1") + data[at + 1 :]


def body_of(data: bytes) -> bytes:
    return data[: data.rindex(b"end ")]


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: b"",
        lambda data: data[: len(data) // 2],
        lambda data: data[:-4],
        lambda data: body_of(data),
        lambda data: bytes(len(data)),  # zeros, as a crash before the data reached the disk
        lambda data: (b"\x8f\tgarbage\n" * len(data))[: len(data)],
        lambda data: b"\xff\xfe" + data,
        flip_a_sha256,
    ],
    ids=["empty", "half", "cut", "no-checksum", "zeros", "garbage", "not-utf8", "sha256"],
)
def test_a_damaged_index_is_not_used(
    damage: Callable[[bytes], bytes],
    site: Site,
    twin: Site,
    run: RunSite,
    later: None,
    reads: list[Path],
) -> None:
    run(site)
    run(twin, cache=False)
    site.index().write_bytes(damage(site.index().read_bytes()))
    for each in (site, twin):
        edit_keeping_size_and_mtime(each.entries)
    assert same_as_without_cache(site, twin, run, reads) == site.files()
    for each in (site, twin):
        add(each.entries)
    assert same_as_without_cache(site, twin, run, reads) == ["2026/2026-03-09.toml"]


def uppercase_sha256s(body: bytes) -> bytes:
    lines = body.split(b"\n")
    for n, line in enumerate(lines):
        if line.startswith(b"2026/"):
            path, sha256 = line.rsplit(b"\t", 1)
            lines[n] = path + b"\t" + sha256.upper()
    return b"\n".join(lines)


def every_path_twice(body: bytes) -> bytes:
    found = re.fullmatch(rb"(.*\nfiles )([0-9]+)\n(.*)", body, re.DOTALL)
    assert found is not None
    head, count, rows = found.groups()
    return head + str(2 * int(count)).encode() + b"\n" + rows + rows


@pytest.mark.parametrize(
    "damage",
    [
        lambda body: body.replace(b"\nfiles ", b"\nfiles 1"),
        lambda body: body.replace(b"\ntaken ", b"\ntaken x"),
        lambda body: body.replace(b"\ntaken ", b"\ntaken \xd9\xa1"),  # an Arabic-Indic one
        lambda body: body.replace(b"infrafeed-hashes 1", b"infrafeed-hashes 2"),
        lambda body: body.replace(b".toml\t", b".toml\t\t", 1),
        lambda body: body.replace(b".toml\t", b".toml\t-", 1),  # a negative inode
        every_path_twice,
        uppercase_sha256s,
    ],
    ids=["count", "taken", "taken-digit", "version", "field", "inode", "twice", "uppercase"],
)
def test_a_malformed_index_with_a_good_checksum_is_not_used(
    damage: Callable[[bytes], bytes],
    site: Site,
    twin: Site,
    run: RunSite,
    later: None,
    reads: list[Path],
) -> None:
    run(site)
    run(twin, cache=False)
    body = body_of(site.index().read_bytes())
    assert damage(body) != body
    resum(site.index(), damage(body))
    for each in (site, twin):
        edit_keeping_size_and_mtime(each.entries)
    assert same_as_without_cache(site, twin, run, reads) == site.files()


def test_an_index_of_another_entries_folder_is_not_used(
    site: Site, twin: Site, run: RunSite, later: None, reads: list[Path]
) -> None:
    """The index names its folder inside, not only in its file's name.

    Not even the same files, moved, are vouched for: on another file system,
    other files may have the same inodes and times.
    """
    run(site)
    run(twin, cache=False)
    first = site.index()
    for each in (site, twin):
        moved = each.root / "moved"
        each.entries.rename(moved)  # every file keeps its inode and times
        each.entries = moved
    shutil.copyfile(first, site.cache / f"hashes-{index_name(site.entries)}")
    assert same_as_without_cache(site, twin, run, reads) == site.files()
    assert len(list(site.cache.glob("hashes-*"))) == 2
    for each in (site, twin):
        edit_keeping_size_and_mtime(each.entries)
    assert same_as_without_cache(site, twin, run, reads) == [EDITED]  # its own index now


def index_name(entries: Path) -> str:
    where = os.path.realpath(entries).encode()
    return hashlib.sha256(where).hexdigest()[:16]


# --- inputs_digest itself ----------------------------------------------------------------


def test_the_digest_and_the_files_hashed_are_the_same_with_an_index(
    small_site: Path, tmp_path: Path, later: None, reads: list[Path]
) -> None:
    """Links, folders, a FIFO and names no index line can hold, as without an index."""
    (small_site / "notes").mkdir()
    (small_site / "notes" / "empty").mkdir()
    (small_site / "notes" / "link").symlink_to("../site.toml")
    (small_site / "notes" / "away").symlink_to("/dev/zero")
    (small_site / "notes" / "tab\tname").write_bytes(b"tab")
    (small_site / "notes" / "new\nline").write_bytes(b"newline")
    (small_site / "notes" / ".hidden").write_bytes(b"hidden")
    os.mkfifo(small_site / "notes" / "fifo")
    cache = Cache(tmp_path / "cache")

    plain: dict[str, str] = {}
    expected = inputs_digest(small_site, plain)
    for _ in range(3):
        files: dict[str, str] = {}
        index = HashIndex(cache, small_site)
        assert inputs_digest(small_site, files, index=index) == expected
        index.save()
        assert files == plain
        assert list(files) == list(plain)  # in the same order
    # Only the two names that cannot be a line of the index are read every time.
    reads.clear()
    inputs_digest(small_site, {}, index=HashIndex(cache, small_site))
    assert below(small_site, reads) == ["notes/new\nline", "notes/tab\tname"]
