"""The cron job's usual run, a build with nothing to do, as the command line meets it.

With a build cache, such a build only stats files: it reads no entry, no
output and not the manifest. Every change below must still be seen and
built exactly as a build without the cache builds it: each case runs on two
copies of one site, one with a settled stamp in its cache and one with
``--no-cache``, and both must print the same and leave the same files (those
of a cold build of the same entries).

The stamp trusts a stat only 2.5 s after the file last changed; the
tests move the stamp's clock forward (``later``) instead of waiting.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import infrafeed.build
from conftest import CachedSite, RunCli, RunSite
from infrafeed import stamp
from infrafeed.build import build
from infrafeed.cache import TAG
from infrafeed.hash_index import HashIndex
from infrafeed.outfolder import MANIFEST
from outputs import tree
from release_kit import release_text


class Site(CachedSite):
    """A copy of the small site, its output folder and its cache folder."""

    def stamps(self) -> list[Path]:
        return sorted(self.cache.glob("stamp-*"))


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """The entries folders the builds hashed: empty when a build only stat'ed."""
    calls: list[Path] = []
    real = infrafeed.build.inputs_digest

    def spy(
        entries: Path,
        files: dict[str, str] | None = None,
        *,
        index: HashIndex | None = None,
        listing: list[tuple[str, Path]] | None = None,
    ) -> str:
        calls.append(entries)
        return real(entries, files, index=index, listing=listing)

    monkeypatch.setattr(infrafeed.build, "inputs_digest", spy)
    yield calls


@pytest.fixture
def site(tmp_path: Path) -> Site:
    return Site(tmp_path / "cached")


@pytest.fixture
def twin(tmp_path: Path) -> Site:
    return Site(tmp_path / "plain")


def cold(entries: Path, tmp_path: Path) -> dict[str, bytes]:
    """What a build of ``entries`` into an empty folder leaves there."""
    out = tmp_path / "cold"
    shutil.rmtree(out, ignore_errors=True)
    build(entries, out)
    return tree(out)


def files_of(site: Site) -> int:
    return len([p for p in tree(site.out) if p != MANIFEST])


# --- The usual case ----------------------------------------------------------------


def test_a_build_with_nothing_to_do_reads_no_file(
    site: Site, run: RunSite, later: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run(site)[0] == 0
    before = tree(site.out)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a no-op with a settled stamp must not read this")

    monkeypatch.setattr(infrafeed.build, "inputs_digest", refuse)
    monkeypatch.setattr("infrafeed.publish.Manifest.read", refuse)
    monkeypatch.setattr("infrafeed.publish.outputs_intact", refuse)
    assert run(site) == (0, f"unchanged: {files_of(site)} files\n", "")
    assert tree(site.out) == before


def test_the_cache_folder_is_tagged_and_holds_a_stamp_a_pack_documents_and_hashes(
    site: Site, run: RunSite
) -> None:
    run(site)
    assert (
        (site.cache / TAG).read_bytes().startswith(b"Signature: 8a477f597d28d172789f06886806bc55\n")
    )
    assert len(site.stamps()) == 1
    packs = list(site.cache.glob("releases-*"))  # release_cache.py
    documents = list(site.cache.glob("documents-*"))  # keep.py
    hashes = list(site.cache.glob("hashes-*"))  # hash_index.py
    assert len(packs) == len(documents) == len(hashes) == 1
    assert sorted(p.name for p in site.cache.iterdir()) == sorted(
        [TAG, site.stamps()[0].name, packs[0].name, documents[0].name, hashes[0].name]
    )


# --- Every change is seen, and built as without the cache ------------------------------


def edit_entry_keeping_size_and_mtime(entries: Path) -> None:
    path = entries / "2026" / "2026-03-05.toml"
    info = path.stat()
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("CUDA Reduce", "CUDA Rebuce"), encoding="utf-8")
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (info.st_size, info.st_mtime_ns)


def add_entry(entries: Path) -> None:
    (entries / "2026" / "2026-03-09.toml").write_text(release_text(), encoding="utf-8")


def rename_entry(entries: Path) -> None:
    (entries / "2026" / "march").mkdir()
    (entries / "2026" / "2026-03-01.toml").rename(entries / "2026" / "march" / "2026-03-01.toml")


def add_empty_folder(entries: Path) -> None:
    (entries / "2027").mkdir()


def add_symlink(entries: Path) -> None:
    (entries / "README").symlink_to("site.toml")


def edit_site_toml(entries: Path) -> None:
    path = entries / "site.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('title = "Fixture Guide"', 'title = "Fixture Guida"'), "utf-8")


def edit_output_keeping_size_and_mtime(out: Path) -> None:
    path = out / "feed.json"
    info = path.stat()
    path.write_bytes(path.read_bytes().replace(b"Fixture", b"Fixtura"))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (info.st_size, info.st_mtime_ns)


def delete_output(out: Path) -> None:
    (out / "atom.xml").unlink()


def delete_manifest(out: Path) -> None:
    (out / MANIFEST).unlink()


def built_like_without_cache(
    site: Site,
    twin: Site,
    run: RunSite,
    hashed: list[Path],
    tmp_path: Path,
    change: Callable[[Site], None],
) -> None:
    """Build both, change both alike, build again: the cached build hashes, then matches."""
    run(site)
    run(twin, cache=False)
    change(site)
    change(twin)
    hashed.clear()
    done = run(site)
    assert hashed == [site.entries]
    assert done == run(twin, cache=False)
    assert done[0] == 0
    assert tree(site.out) == tree(twin.out) == cold(site.entries, tmp_path)


@pytest.mark.parametrize(
    "change",
    [
        edit_entry_keeping_size_and_mtime,
        add_entry,
        rename_entry,
        add_empty_folder,
        add_symlink,
        edit_site_toml,
    ],
)
def test_a_change_to_the_entries_is_built(
    change: Callable[[Path], None],
    site: Site,
    twin: Site,
    run: RunSite,
    later: None,
    hashed: list[Path],
    tmp_path: Path,
) -> None:
    built_like_without_cache(site, twin, run, hashed, tmp_path, lambda s: change(s.entries))
    hashed.clear()
    assert run(site) == (0, f"unchanged: {files_of(site)} files\n", "")
    assert hashed == []  # the build stamped what it built


@pytest.mark.parametrize(
    "change", [edit_output_keeping_size_and_mtime, delete_output, delete_manifest]
)
def test_a_change_to_the_output_is_repaired(
    change: Callable[[Path], None],
    site: Site,
    twin: Site,
    run: RunSite,
    later: None,
    hashed: list[Path],
    tmp_path: Path,
) -> None:
    built_like_without_cache(site, twin, run, hashed, tmp_path, lambda s: change(s.out))


def test_a_removed_entry_meets_the_guard_as_without_the_cache(
    site: Site, twin: Site, run: RunSite, later: None, tmp_path: Path
) -> None:
    for each in (site, twin):
        run(each, cache=each is site)
        (each.entries / "2026" / "2026-03-02.toml").unlink()
    refused = run(site)
    assert refused[0] == 3
    assert refused == run(twin, cache=False)
    assert run(site) == refused  # still seen: a refused build stamps nothing
    allowed = run(site, "--allow-changes")
    assert allowed[0] == 0
    assert allowed == run(twin, "--allow-changes", cache=False)
    assert tree(site.out) == tree(twin.out) == cold(site.entries, tmp_path)


def test_another_version_of_infrafeed_rebuilds(
    site: Site, run: RunSite, later: None, hashed: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    run(site)
    monkeypatch.setattr(infrafeed.build, "__version__", "99.0")
    hashed.clear()
    code, stdout, _ = run(site)
    assert hashed == [site.entries]
    assert code == 0
    assert stdout.startswith("wrote ")  # the feeds name their generator's version
    assert site.stamps()[0].read_bytes().splitlines()[1] == b"version 99.0"


# --- The cache as it may be found ------------------------------------------------------


def test_a_deleted_cache_folder_costs_one_hashing_build(
    site: Site, run: RunSite, later: None, hashed: list[Path]
) -> None:
    run(site)
    before = tree(site.out)
    shutil.rmtree(site.cache)
    hashed.clear()
    assert run(site) == (0, f"unchanged: {files_of(site)} files\n", "")
    assert hashed == [site.entries]
    assert (site.cache / TAG).is_file()
    hashed.clear()
    run(site)
    assert hashed == []
    assert tree(site.out) == before


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: b"",
        lambda data: data[: len(data) // 2],
        lambda data: data[:-4],  # without its "end" line
        lambda data: bytes(len(data)),  # zeros, as a crash before the data reached the disk
        lambda data: data.replace(b"settled yes", b"settled maybe"),
        lambda data: data.replace(b"\nfiles ", b"\nfiles 1"),
        lambda data: b"\xff\xfe" + data,
    ],
    ids=["empty", "half", "no-end", "zeros", "settled", "count", "not-utf8"],
)
def test_a_damaged_stamp_costs_one_hashing_build(
    damage: Callable[[bytes], bytes], site: Site, run: RunSite, later: None, hashed: list[Path]
) -> None:
    run(site)
    (path,) = site.stamps()
    good = path.read_bytes()
    assert b"\nsettled yes\n" in good
    path.write_bytes(damage(good))
    hashed.clear()
    assert run(site) == (0, f"unchanged: {files_of(site)} files\n", "")
    assert hashed == [site.entries]
    assert path.read_bytes() == good  # the same stamp again, whole


def test_a_damaged_stamp_does_not_hide_a_change(
    site: Site, run: RunSite, later: None, tmp_path: Path
) -> None:
    run(site)
    (path,) = site.stamps()
    path.write_bytes(path.read_bytes()[:-4])
    edit_entry_keeping_size_and_mtime(site.entries)
    code, stdout, _ = run(site)
    assert (code, stdout.startswith("wrote ")) == (0, True)
    assert tree(site.out) == cold(site.entries, tmp_path)


def test_each_output_folder_has_its_own_stamp(
    site: Site, run: RunSite, later: None, hashed: list[Path], run_cli: RunCli
) -> None:
    other = site.root / "other-output"

    def build_other() -> tuple[int, str, str]:
        args = ["--entries", str(site.entries), "--out", str(other), "--cache", str(site.cache)]
        return run_cli("build", *args)

    run(site)
    build_other()
    assert len(site.stamps()) == 2
    (other / "feed.xml").unlink()
    hashed.clear()
    assert run(site) == (0, f"unchanged: {files_of(site)} files\n", "")
    assert hashed == []
    assert build_other()[1].startswith("wrote 1 file: feed.xml\n")
    assert hashed == [site.entries]


def test_a_stamp_of_another_output_folder_is_not_used(
    site: Site, run: RunSite, later: None, hashed: list[Path], run_cli: RunCli
) -> None:
    """A folder moved keeps every stat; only the folder it names tells its stamp apart."""
    run(site)
    (first,) = site.stamps()
    moved = site.root / "moved"
    site.out.rename(moved)
    site.out = moved
    run(site)
    second = next(p for p in site.stamps() if p != first)
    second.write_bytes(first.read_bytes())  # as if the two folders' stamps had one name
    hashed.clear()
    assert run(site) == (0, f"unchanged: {files_of(site)} files\n", "")
    assert hashed == [site.entries]


def test_an_unsettled_stamp_is_not_trusted(
    site: Site, run: RunSite, hashed: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file changed within the clock tick of its stat may change again unseen."""
    run(site)
    (path,) = site.stamps()
    assert b"\nsettled no\n" in path.read_bytes()  # the build has just written the output
    hashed.clear()
    run(site)
    assert hashed == [site.entries]
    assert b"\nsettled no\n" in path.read_bytes()
    published = json.loads((site.out / MANIFEST).read_bytes())["files"]
    seen = [site.entries, *site.entries.rglob("*"), site.out / MANIFEST]
    seen += [site.out / name for name in published]
    newest = max(max(p.lstat().st_mtime_ns, p.lstat().st_ctime_ns) for p in seen)
    monkeypatch.setattr(stamp, "now_ns", lambda: newest + stamp.SETTLE_NS)
    run(site)
    assert b"\nsettled no\n" in path.read_bytes()  # changed SETTLE_NS before, to the ns
    monkeypatch.setattr(stamp, "now_ns", lambda: newest + stamp.SETTLE_NS + 1)
    run(site)
    assert b"\nsettled yes\n" in path.read_bytes()
    hashed.clear()
    run(site)
    assert hashed == []


def test_a_symlinked_output_is_hashed_every_time(
    site: Site, run: RunSite, later: None, hashed: list[Path]
) -> None:
    """Its target may change without the link's lstat changing."""
    run(site)
    files = files_of(site)
    copy = site.out / "a-copy.json"  # in the folder: a link leading out is refused
    shutil.copyfile(site.out / "feed.json", copy)
    (site.out / "feed.json").unlink()
    (site.out / "feed.json").symlink_to(copy)
    for _ in range(2):
        hashed.clear()
        assert run(site) == (0, f"unchanged: {files} files\n", "")
        assert hashed == [site.entries]
    copy.write_bytes(copy.read_bytes().replace(b"Fixture", b"Fixtura"))
    assert run(site)[1].startswith("wrote 1 file: feed.json\n")


# --- A cache that cannot be written ----------------------------------------------------


def test_an_unwritable_cache_only_warns(
    site: Site, run: RunSite, later: None, hashed: list[Path], tmp_path: Path
) -> None:
    site.cache = site.root / "a-file" / "cache"
    site.cache.parent.write_text("not a folder\n", encoding="utf-8")
    warning = (
        "warning: could not write the build cache (SITE/a-file/cache/{}: Not a directory); "
        "the build is complete, but builds stay slow until --cache names a folder infrafeed "
        "can write, or --no-cache is given\n"
    )
    code, stdout, stderr = run(site)
    assert (code, stdout.startswith("wrote "), tree(site.out)) == (
        0,
        True,
        cold(site.entries, tmp_path),
    )
    # A build first fails to write the index of the files it hashed (hash_index.py).
    index = re.findall(r"hashes-[0-9a-f]{16}", stderr)[0]
    assert stderr == warning.format(index)
    hashed.clear()
    code, stdout, stderr = run(site)
    name = re.findall(r"hashes-[0-9a-f]{16}", stderr)[0]
    assert (code, stdout, stderr) == (
        0,
        f"unchanged: {files_of(site)} files\n",
        warning.format(name),
    )
    assert hashed == [site.entries]


def test_a_full_disk_keeps_the_stamp_as_it_was(
    site: Site, run: RunSite, later: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(site)
    (path,) = site.stamps()
    (pack,) = site.cache.glob("releases-*")
    (documents,) = site.cache.glob("documents-*")
    (hashes,) = site.cache.glob("hashes-*")
    good, good_pack, good_documents = path.read_bytes(), pack.read_bytes(), documents.read_bytes()
    good_hashes = hashes.read_bytes()
    edit_entry_keeping_size_and_mtime(site.entries)
    real_write = os.write

    def full(fd: int, data: bytes) -> int:
        if str(Path(f"/proc/self/fd/{fd}").readlink()).startswith(str(site.cache)):
            raise OSError(28, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full)
    code, stdout, stderr = run(site)
    assert (code, stdout.startswith("wrote ")) == (0, True)
    assert "No space left on device" in stderr
    # No temp file, and every file as it was.
    assert sorted(site.cache.iterdir()) == sorted([site.cache / TAG, path, pack, documents, hashes])
    assert (path.read_bytes(), pack.read_bytes(), documents.read_bytes()) == (
        good,
        good_pack,
        good_documents,
    )
    assert hashes.read_bytes() == good_hashes  # the edited file was hashed: a write was tried


# --- Where the cache is ------------------------------------------------------------


def test_by_default_the_cache_is_beside_the_entries(
    site: Site, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(site.entries)
    assert run_cli("build", "--entries", ".", "--out", str(site.out))[0] == 0
    assert (site.root / ".infrafeed-cache" / TAG).is_file()
    assert not list(site.entries.rglob(".infrafeed-cache"))


def test_no_cache_writes_no_cache(site: Site, run: RunSite) -> None:
    assert run(site, cache=False)[0] == 0
    assert run(site, cache=False)[0] == 0
    assert not site.cache.exists()
    assert not (site.root / ".infrafeed-cache").exists()


def test_cache_and_no_cache_together_are_a_usage_error(site: Site, run: RunSite) -> None:
    code, _, stderr = run(site, "--no-cache")
    assert code == 2
    assert "--cache and --no-cache: give one or the other" in stderr


@pytest.mark.parametrize(
    ("where", "role"),
    [
        ("entries/.cache", "entries"),
        ("output/cache", "output"),
        (".", "entries"),
    ],
)
def test_a_cache_folder_among_the_entries_or_the_output_is_refused(
    where: str, role: str, site: Site, run: RunSite
) -> None:
    site.cache = site.root / where
    code, stdout, stderr = run(site)
    folder = {"entries": "SITE/entries", "output": "SITE/output"}[role]
    assert (code, stdout) == (1, "")
    assert stderr == (
        f"infrafeed: {str(site.cache).replace(str(site.root), 'SITE')}: the build cache must be "
        f"a folder apart from the {role} folder {folder}, neither inside it nor holding it\n"
    )
    assert not site.out.exists()


# --- What the no-op loads -------------------------------------------------------------

NOOP_SCRIPT = """
import sys
before = set(sys.modules)
from infrafeed import stamp
from infrafeed.cli import main
real = stamp.now_ns
stamp.now_ns = lambda: real() + 3600 * 10**9
code = main(sys.argv[1:])
assert code == 0, code
print(" ".join(sorted(set(sys.modules) - before)))
"""


def test_a_no_op_loads_no_parser_renderer_or_hash_library(site: Site) -> None:
    args = ["build", "--quiet", "--entries", str(site.entries), "--out", str(site.out)]
    args += ["--cache", str(site.cache)]
    for _ in range(2):
        loaded = subprocess.run(
            [sys.executable, "-c", NOOP_SCRIPT, *args], capture_output=True, text=True, check=True
        ).stdout.split()
    assert "infrafeed.stamp" in loaded
    heavy = {"hashlib", "json", "shutil", "tomllib", "tomli", "pydantic", "feedgen", "jinja2"}
    heavy.add("infrafeed.publish")  # the output folder's lock is in outfolder.py
    heavy.add("infrafeed.hash_index")  # needed only once the stamp saw a change
    assert heavy.isdisjoint(loaded), sorted(heavy.intersection(loaded))
