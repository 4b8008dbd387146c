"""The build cache is safe: whatever changed, a build that used it writes what a cold build writes.

Each test builds a site with a cache, changes something (an entry, a
setting, infrafeed's version, the cache itself), builds again with the same
cache and output folder, and compares the whole output tree (feeds,
archives, pages, the changelog page, the manifest) byte for byte with a cold
build of the changed entries into an empty folder with no cache.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import infrafeed.cache
from conftest import RunCli
from infrafeed.cache import _HEAD, _MAGIC, PACK
from infrafeed.render import documents
from infrafeed.source import loader
from infrafeed.source.files import EntryFile
from outputs import run_infrafeed, tree
from sitebuilder import add_release, write_site

Edit = Callable[[Path], None]


@pytest.fixture
def site(tmp_path: Path) -> Path:
    # Small limits, so that feeds have a subscription document and monthly archives.
    return write_site(tmp_path / "entries", max_items=3, max_bytes=60_000)


def _build(run_cli: RunCli, entries: Path, out: Path, cache: Path | None, *extra: str) -> str:
    where = ["--cache", str(cache)] if cache is not None else ["--no-cache"]
    code, stdout, stderr = run_cli(
        "build", "--entries", str(entries), "--out", str(out), *where, *extra
    )
    assert code == 0, stderr
    return stdout


def _cold(run_cli: RunCli, entries: Path, tmp_path: Path, *extra: str) -> dict[str, bytes]:
    out = tmp_path / "cold-out"
    shutil.rmtree(out, ignore_errors=True)
    _build(run_cli, entries, out, None, *extra)
    return tree(out)


def _edit_file(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (old, path)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _newest(entries: Path) -> Path:
    return max(entries.rglob("20*.toml"))


def _oldest(entries: Path) -> Path:
    return min(entries.rglob("20*.toml"))


def _second_release(first: Path) -> None:
    text = first.read_text(encoding="utf-8").replace('id = "bai-', 'id = "hai-')
    first.with_name(f"{first.stem}-2.toml").write_text(text, encoding="utf-8")


def _settings(entries: Path, old: str, new: str) -> None:
    _edit_file(entries / "site.toml", old, new)


EDITS: dict[str, tuple[Edit, tuple[str, ...]]] = {
    "a new release in a new month": (
        lambda e: add_release(e, "2026-05-04", 2, 2) and None,
        (),
    ),
    "a new release in the open month": (
        lambda e: add_release(e, "2026-04-20", 1, 1) and None,
        (),
    ),
    "a second release on the newest day": (
        lambda e: _second_release(_newest(e)),
        (),
    ),
    "a title edited in a closed month": (
        lambda e: _edit_file(_oldest(e), "Bài 1 ngày", "Bài một ngày"),
        (),
    ),
    "a summary edited with markup": (
        lambda e: _edit_file(_newest(e), "với `code` số 1", "với **`code`** & <b>số</b> 1"),
        (),
    ),
    "a release removed": (
        lambda e: _oldest(e).unlink(),
        ("--allow-changes",),
    ),
    "a release file renamed to a second release of its day": (
        lambda e: _oldest(e).rename(_oldest(e).with_name("2026-01-05-2.toml")),
        ("--allow-changes",),
    ),
    "a file touched, bytes unchanged": (
        lambda e: _newest(e).touch(),
        (),
    ),
    "the site's title": (
        lambda e: _settings(e, 'title = "Fixture Guide"', 'title = "Fixture Guide 2"'),
        (),
    ),
    "a module's name": (
        lambda e: _settings(e, 'name = "Kiến thức tiền đề"', 'name = "Nền tảng"'),
        (),
    ),
    "the time zone": (
        lambda e: _settings(e, 'timezone = "Asia/Shanghai"', 'timezone = "Europe/Paris"'),
        ("--allow-changes",),
    ),
    "the feeds' limits": (
        lambda e: _settings(e, "max_items = 3", "max_items = 5"),
        (),
    ),
    "a kind's label": (
        lambda e: _settings(e, 'short = "Mới"', 'short = "Mới!"'),
        (),
    ),
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_a_build_after_a_change_writes_what_a_cold_build_writes(
    name: str, site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    edit, extra = EDITS[name]
    edit(site)
    _build(run_cli, site, out, cache, *extra)
    assert tree(out) == _cold(run_cli, site, tmp_path, *extra)


def test_a_time_the_site_zone_skipped_comes_back_from_the_cache_as_it_was(
    site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    """Kiritimati skipped 1994-12-31: noon there was read back from the cache as 1995-01-01,
    and the id guard refused the next build for re-dating a published item (exit 3)."""
    _settings(site, 'timezone = "Asia/Shanghai"', 'timezone = "Pacific/Kiritimati"')
    skipped = site / "1994" / "1994-12-31.toml"
    skipped.parent.mkdir()
    skipped.write_text(
        'date = 1994-12-31\n\n[[groups]]\nkind = "init"\n\n[[groups.notes]]\n'
        'id = "old-note"\ntext = "Khởi tạo dự án"\n',
        encoding="utf-8",
    )
    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    _second_release(_newest(site))  # a build that reads the other releases from the cache
    _build(run_cli, site, out, cache)
    assert any(b"1994-12-31T12:00:00-10:00" in data for data in tree(out).values())
    assert tree(out) == _cold(run_cli, site, tmp_path)


def test_a_days_last_releases_come_back_from_the_cache_in_noons_offset(
    site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    """Easter Island's clocks skip 22:00-23:00 on 2026-09-05: release 12, dated in noon's offset
    (23:00-06:00), came back from the cache in the zone's (23:00-05:00), and the guard refused
    the next build as a time zone change (a review)."""
    _settings(site, 'timezone = "Asia/Shanghai"', 'timezone = "Pacific/Easter"')
    for n in (11, 12):
        text = add_release(site, "2026-09-05", 1, 2).read_text(encoding="utf-8")
        text = text.replace('id = "bai-', f'id = "r{n}-bai-')
        (site / "2026" / f"2026-09-05-{n}.toml").write_text(text, encoding="utf-8")
    (site / "2026" / "2026-09-05.toml").unlink()
    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    _edit_file(site / "2026" / "2026-09-05-11.toml", "Bài 1 ngày", "Bài một ngày")
    _build(run_cli, site, out, cache)  # release 12 from the cache
    assert any(b"2026-09-05T23:00:00-06:00" in data for data in tree(out).values())
    assert tree(out) == _cold(run_cli, site, tmp_path)


def test_a_new_release_is_the_only_one_validated_and_rendered(
    site: Path, tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    add_release(site, "2026-05-04", 2, 2)
    validated: list[str] = []
    rendered: list[str] = []
    real_release_of, real_parts = loader.release_of, documents.item_parts

    def counting_release_of(file: EntryFile, *args: Any) -> Any:
        validated.append(file.relative)
        return real_release_of(file, *args)

    def counting_parts(site: Any, items: Any) -> Any:
        rendered.extend(item.id for item in items)
        return real_parts(site, items)

    monkeypatch.setattr(loader, "release_of", counting_release_of)
    monkeypatch.setattr(documents, "item_parts", counting_parts)
    _build(run_cli, site, out, cache)
    monkeypatch.undo()
    assert validated == ["2026/2026-05-04.toml"]
    assert len(rendered) == 2 and all("2026-05-04" in i for i in rendered)
    assert tree(out) == _cold(run_cli, site, tmp_path)


def _count_validations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The release files validated from now on (those not taken from the cache)."""
    validated: list[str] = []
    real = loader.release_of

    def counting(file: EntryFile, *args: Any) -> Any:
        validated.append(file.relative)
        return real(file, *args)

    monkeypatch.setattr(loader, "release_of", counting)
    return validated


def test_messages_name_a_file_as_this_build_was_given_it(
    run_cli: RunCli, site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record kept the path of the build that made it: given the folder another way, the
    next build's warning named a file by the old way."""
    add_release(site, "2099-01-05", 2, 1)  # dated ahead: a warning that names its file
    where = ("--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache"))
    _, _, stderr = run_cli("build", "--entries", str(site), *where)
    assert f"warning: {site}/2099/2099-01-05.toml: date: 2099-01-05 is after" in stderr
    add_release(site, "2026-05-04", 2, 2)  # not a build with nothing to do
    monkeypatch.chdir(site.parent)
    _, _, stderr = run_cli("build", "--entries", site.name, *where)
    assert "warning: entries/2099/2099-01-05.toml: date: 2099-01-05 is after" in stderr


def test_a_file_met_again_below_another_folder_is_checked_again(
    run_cli: RunCli, site: Path, tmp_path: Path
) -> None:
    """Found by its name as given alone, a record of 2025/2026-03-01.toml read as the entries'
    own file was taken for the same file below entries/, and its year folder went unchecked."""
    year = site / "2026"
    shutil.copy(site / "site.toml", year / "site.toml")
    year = year.rename(site / "2025")  # a release of 2026 in the folder 2025
    cache = ("--cache", str(tmp_path / "cache"))
    assert run_cli("build", "--entries", str(year), "--out", str(tmp_path / "a"), *cache)[0] == 0
    (site / "site.toml").unlink()
    (year / "site.toml").rename(site / "site.toml")
    code, _, err = run_cli("build", "--entries", str(site), "--out", str(tmp_path / "b"), *cache)
    assert code == 1 and "is in the folder 2025 but is a release of 2026" in err, err


def test_another_version_of_infrafeed_uses_nothing_of_the_cache(
    site: Path, tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    add_release(site, "2026-05-04", 2, 2)
    validated = _count_validations(monkeypatch)
    monkeypatch.setattr(infrafeed.cache, "__version__", "99.0.0")
    _build(run_cli, site, out, cache)
    assert len(validated) == len(list(site.rglob("20*.toml")))


def test_a_change_of_infrafeeds_data_files_uses_nothing_of_the_cache(
    site: Path, tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only .py, .html and .css files were the code: an HTML element added to what a title may
    not hold (html-elements.txt) left a cached release unchecked by it."""
    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    package = tmp_path / "package"  # a copy of the code, so that the code itself stays as it is
    shutil.copytree(Path(infrafeed.cache.__file__).parent, package)
    monkeypatch.setattr(infrafeed.cache, "__file__", str(package / "cache.py"))
    validated = _count_validations(monkeypatch)
    add_release(site, "2026-05-04", 2, 2)
    _build(run_cli, site, out, cache)
    assert validated == ["2026/2026-05-04.toml"]  # the same code and data: the rest is cached
    with (package / "source" / "html-elements.txt").open("a", encoding="utf-8") as data:
        data.write("bai\n")
    add_release(site, "2026-05-11", 2, 2)
    _build(run_cli, site, out, cache)
    assert len(validated) == 1 + len(list(site.rglob("20*.toml")))


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x10]) + data[at + 1 :]


# A pack: _MAGIC, the 32-byte namespace, then records, each a head of _HEAD bytes
# (its 32-byte key, the sha256 of its payload, the payload's 8-byte length) and the payload.
RECORD = len(_MAGIC) + 32  # where the first record starts
KEY = RECORD  # its key
LENGTH = RECORD + _HEAD - 8  # its length

# Ways a cache file is damaged: a power cut, a bad disk, a tool that edits it.
DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "a bit flipped in the header": lambda data: _flip(data, 3),
    "a bit flipped in a record's key": lambda data: _flip(data, KEY + 12),
    "a bit flipped in a record's length": lambda data: _flip(data, LENGTH + 6),
    "a record's length made huge": lambda data: data[:LENGTH] + b"\x7f" * 8 + data[LENGTH + 8 :],
    "a bit flipped in a payload": lambda data: _flip(data, len(data) // 2),
    "a bit flipped in the last byte": lambda data: _flip(data, len(data) - 1),
    "four bytes zeroed": lambda data: data[:5000] + bytes(4) + data[5004:],
    "the second half zeroed": lambda data: data[: len(data) // 2] + bytes(len(data) // 2 + 1),
    "truncated to half": lambda data: data[: len(data) // 2],
    "truncated by one byte": lambda data: data[:-1],
    "empty": lambda data: b"",
    "garbage": lambda data: bytes(range(256)) * 40,
    "a letter changed in a text": lambda data: data.replace("Tóm tắt".encode(), "TÓM tắt".encode()),
    "a record appended twice": lambda data: data + data[RECORD:],
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_cache_only_costs_time(
    damage: str, site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    pack = cache / PACK
    data = pack.read_bytes()
    # The offsets above are the first record's: its length ends it within the pack.
    assert data.startswith(_MAGIC)
    assert RECORD + _HEAD + int.from_bytes(data[LENGTH : LENGTH + 8], "big") <= len(data)
    damaged = DAMAGE[damage](data)
    assert damaged != data
    pack.write_bytes(damaged)
    # Nothing changed but the cache: a build with nothing to do, as the output is intact.
    rm = shutil.rmtree
    rm(out)
    _build(run_cli, site, out, cache)
    assert tree(out) == _cold(run_cli, site, tmp_path)
    _edit_file(_newest(site), "Bài 1 ngày", "Bài thứ nhất ngày")
    pack.write_bytes(damaged)
    _build(run_cli, site, out, cache)
    assert tree(out) == _cold(run_cli, site, tmp_path)


def test_the_issues_damage_does_not_reach_the_feeds(
    shipped_entries: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    """A text changed in the cache, the feeds deleted: rebuilt as a cold build would."""
    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, shipped_entries, out, cache)
    pack = cache / PACK
    data = pack.read_bytes()
    assert b"speculative decoding" in data
    pack.write_bytes(data.replace(b"speculative decoding", b"speculative DECODING"))
    for name in ("feed.xml", "atom.xml", "feed.json"):
        (out / name).unlink()
    _build(run_cli, shipped_entries, out, cache)
    assert b"DECODING" not in b"".join(tree(out).values())
    assert tree(out) == _cold(run_cli, shipped_entries, tmp_path)


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_fifo_or_device_in_the_packs_place_only_costs_time(
    kind: str, site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    """A FIFO was opened and waited on for ever, with the output's lock held."""
    out, cache = tmp_path / "out", tmp_path / "cache"
    cache.mkdir()
    if kind == "fifo":
        os.mkfifo(cache / PACK)
    else:
        (cache / PACK).symlink_to("/dev/zero")
    args = ("build", "-q", "--entries", str(site), "--out", str(out), "--cache", str(cache))
    done = run_infrafeed(*args, timeout=30)
    assert (done.returncode, done.stdout) == (0, "")
    assert tree(out) == _cold(run_cli, site, tmp_path)


def test_a_cache_that_cannot_be_written_only_warns(
    site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    (cache / PACK).unlink()
    (cache / PACK).mkdir()  # a folder where the pack goes: replacing it fails
    add_release(site, "2026-05-04", 2, 2)
    code, _, stderr = run_cli(
        "build", "--entries", str(site), "--out", str(out), "--cache", str(cache)
    )
    assert code == 0
    assert stderr.startswith(f"warning: could not write the build cache ({cache}: ")
    assert tree(out) == _cold(run_cli, site, tmp_path)


def test_a_cache_folder_too_deep_to_create_only_warns(
    site: Path, tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2,000 folders deep, --cache was an internal error (exit 70): RecursionError in mkdir."""
    monkeypatch.chdir(tmp_path)
    cache = Path("/".join(["c"] * 1200))  # past the recursion limit, and short enough a path
    code, _, stderr = run_cli("build", "--entries", str(site), "--out", "o", "--cache", str(cache))
    assert code == 0
    assert stderr == (
        f"warning: could not write the build cache ({cache}: too many folders deep to create); "
        "the build is complete, but the next one will be slower\n"
    )
    assert not (tmp_path / "c").exists()


def test_the_cache_folder_is_tagged_and_beside_the_entries_by_default(
    site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    code, _, stderr = run_cli("build", "--entries", str(site), "--out", str(tmp_path / "out"))
    assert (code, stderr) == (0, "")
    cache = site.parent / ".infrafeed-cache"
    assert sorted(p.name for p in cache.iterdir()) == ["CACHEDIR.TAG", PACK]
    assert (
        (cache / "CACHEDIR.TAG")
        .read_bytes()
        .startswith(b"Signature: 8a477f597d28d172789f06886806bc55\n")
    )


def test_no_cache_writes_no_cache_and_both_options_are_a_usage_error(
    site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    _build(run_cli, site, tmp_path / "out", None)
    assert not (site.parent / ".infrafeed-cache").exists()
    code, _, stderr = run_cli(
        "build", "--entries", str(site), "--out", str(tmp_path / "out"), "--no-cache",
        "--cache", str(tmp_path / "cache"),
    )  # fmt: skip
    assert code == 2 and "--cache and --no-cache" in stderr


@pytest.mark.parametrize("where", ["entries", "entries/cache", "out", "out/cache", "."])
def test_a_cache_folder_sharing_a_tree_with_the_entries_or_output_is_refused(
    where: str, site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    folders = {"entries": site, "out": tmp_path / "out", ".": tmp_path}
    first, _, rest = where.partition("/")
    cache = folders[first] / rest if rest else folders[first]
    code, _, stderr = run_cli(
        "build", "--entries", str(site), "--out", str(tmp_path / "out"), "--cache", str(cache)
    )
    assert code == 1
    assert stderr.startswith(f"infrafeed: {cache}: the build cache must be a folder apart from")
