"""The build cache is safe: whatever changed, a cached build writes what a cold build writes.

Each test builds with a cache, changes something (an entry, a file's name,
the settings, infrafeed's version, the cache or the output itself), builds
again with the cache, and compares the whole output folder with a cold
build of the same entries into an empty folder, without a cache.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import SMALL_SITE
from infrafeed import build as build_module
from infrafeed import cache as cache_module
from infrafeed import incremental
from infrafeed.build import build
from infrafeed.errors import DataError
from infrafeed.publish import MANIFEST

RELEASE = """\
date = {date}

[[groups]]
kind = "new"
module = {module}
context = "Chương mới lên sóng: `{tag}`"

[[groups.articles]]
id = "article-{tag}"
number = "1.{n}"
title = "Bài {tag}"
summary = "Tóm tắt của *bài* {tag}, xem [mục](/guide/cuda/{tag})"

[[groups.articles]]
id = "second-{tag}"
module = 1
title = "Bài thứ hai {tag}"
page = "cuda/{tag}"
"""


def snapshot(out: Path) -> dict[str, object]:
    """Every file's bytes; of the manifest, what does not depend on when files were written."""
    files: dict[str, object] = {}
    for path in sorted(out.rglob("*")):
        relative = path.relative_to(out).as_posix()
        if path.is_dir() or relative == ".infrafeed.lock":
            continue
        if relative == MANIFEST:
            manifest = json.loads(path.read_bytes())
            for record in manifest["files"].values():
                del record["mtime_ns"]
            files[relative] = manifest
        else:
            files[relative] = path.read_bytes()
    return files


def cold(entries: Path, tmp_path: Path, **options: bool) -> dict[str, object]:
    out = tmp_path / "cold"
    shutil.rmtree(out, ignore_errors=True)
    build(entries, out, cache=None, **options)
    return snapshot(out)


@pytest.fixture
def site(tmp_path: Path, small_site: Path) -> Path:
    """The small site with a few more releases, built once with a cache."""
    for n in range(1, 9):
        add_release(small_site, f"2026-04-{n:02d}", n)
    return small_site


def add_release(entries: Path, date: str, n: int, module: int = 2) -> Path:
    path = entries / date[:4] / f"{date}.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(
        RELEASE.format(date=date[:10], module=module, tag=f"t{n}", n=n), encoding="utf-8"
    )
    return path


def cached(entries: Path, tmp_path: Path, **options: bool) -> dict[str, object]:
    build(entries, tmp_path / "out", cache=tmp_path / "cache", **options)
    return snapshot(tmp_path / "out")


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def set_max_items(entries: Path, count: int) -> None:
    path = entries / "site.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(re.sub(r"max_items = \d+", f"max_items = {count}", text), encoding="utf-8")


Change = Callable[[Path], None]

CHANGES: dict[str, tuple[Change, bool]] = {
    # name: (change to the entries folder, whether items may disappear or move)
    "nothing": (lambda e: None, False),
    "new release": (lambda e: add_release(e, "2026-05-01", 50), False),
    "new release, other module": (lambda e: add_release(e, "2026-05-02", 51, module=1), False),
    "second release of a day": (lambda e: add_release(e, "2026-04-08-2", 52), False),
    "summary edited": (
        lambda e: edit(e / "2026/2026-04-03.toml", "Tóm tắt của", "Tóm tắt mới của"),
        False,
    ),
    "old release edited": (
        lambda e: edit(e / "2026/2026-03-01.toml", "commit đầu", "commit đầu tiên"),
        False,
    ),
    "article moved to another module": (
        lambda e: edit(e / "2026/2026-04-05.toml", "module = 2", "module = 1"),
        True,
    ),
    "release removed": (lambda e: (e / "2026/2026-04-04.toml").unlink(), True),
    "release renamed to another day": (
        lambda e: (
            edit(e / "2026/2026-04-06.toml", "date = 2026-04-06", "date = 2026-04-20"),
            (e / "2026/2026-04-06.toml").rename(e / "2026/2026-04-20.toml"),
        ),
        True,
    ),
    "folder renamed": (lambda e: (e / "2026").rename(e / "year-2026"), False),
    "file added outside releases": (lambda e: (e / "README.md").write_text("notes\n"), False),
    "site title": (
        lambda e: edit(e / "site.toml", 'title = "Fixture Guide"', 'title = "G"'),
        False,
    ),
    "site max_items": (lambda e: set_max_items(e, 12), False),
    "site max_items smaller": (lambda e: set_max_items(e, 2), False),
    "site module feeds off": (
        lambda e: edit(e / "site.toml", "[feeds]\n", "[feeds]\nmodules = false\n"),
        False,
    ),
    "site time zone": (
        lambda e: edit(e / "site.toml", '"Asia/Shanghai"', '"Europe/Paris"'),
        True,
    ),
}


@pytest.mark.parametrize("name", list(CHANGES))
def test_after_a_change_the_cached_build_is_the_cold_build(
    name: str, site: Path, tmp_path: Path
) -> None:
    change, allow = CHANGES[name]
    cached(site, tmp_path)
    change(site)
    assert cached(site, tmp_path, allow_changes=allow) == cold(site, tmp_path, allow_changes=allow)


def test_a_series_of_changes_keeps_the_cached_build_equal_to_the_cold_one(
    site: Path, tmp_path: Path
) -> None:
    for name, (change, allow) in CHANGES.items():
        if name.startswith("site time zone"):
            continue
        change(site)
        expected = cold(site, tmp_path, allow_changes=allow)
        assert cached(site, tmp_path, allow_changes=allow) == expected, name
        assert cached(site, tmp_path) == expected, f"{name}, then nothing"


def test_a_new_infrafeed_version_rebuilds_everything(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cached(site, tmp_path)
    monkeypatch.setattr(build_module, "__version__", "99.0")
    monkeypatch.setattr(incremental, "__version__", "99.0")
    after = cached(site, tmp_path)
    assert after == cold(site, tmp_path)
    assert b"infrafeed 99.0" in after["feed.xml"]  # type: ignore[operator]


@pytest.mark.parametrize("damage", ["truncate", "zero", "garbage", "delete"])
def test_a_damaged_cache_is_a_miss(site: Path, tmp_path: Path, damage: str) -> None:
    cached(site, tmp_path)
    for path in (tmp_path / "cache").rglob("*"):
        if path.is_file() and path.name != "CACHEDIR.TAG":
            data = path.read_bytes()
            if damage == "truncate":
                path.write_bytes(data[: len(data) // 2])
            elif damage == "zero":
                path.write_bytes(bytes(len(data)))
            elif damage == "garbage":
                path.write_bytes(data[:40] + b"\x00garbage" + data[48:])
            else:
                path.unlink()
    edit(site / "2026/2026-04-02.toml", "Bài t2", "Bài t2 sửa")
    assert cached(site, tmp_path) == cold(site, tmp_path)


def test_an_output_file_changed_by_hand_is_restored(site: Path, tmp_path: Path) -> None:
    cached(site, tmp_path)
    feed = tmp_path / "out" / "modules" / "cuda" / "atom.xml"
    feed.write_bytes(feed.read_bytes().replace(b"<title>", b"<title>X", 1))
    assert cached(site, tmp_path) == cold(site, tmp_path)
    (tmp_path / "out" / "feed.json").unlink()
    assert cached(site, tmp_path) == cold(site, tmp_path)


def test_the_same_cache_serves_two_output_folders(site: Path, tmp_path: Path) -> None:
    build(site, tmp_path / "a", cache=tmp_path / "cache")
    add_release(site, "2026-05-01", 60)
    build(site, tmp_path / "b", cache=tmp_path / "cache")
    build(site, tmp_path / "a", cache=tmp_path / "cache")
    expected = cold(site, tmp_path)
    assert snapshot(tmp_path / "a") == expected
    assert snapshot(tmp_path / "b") == expected


def test_problems_are_reported_as_without_a_cache(site: Path, tmp_path: Path) -> None:
    cached(site, tmp_path)
    edit(site / "2026/2026-04-03.toml", 'kind = "new"', 'kind = "neu"')
    edit(site / "2026/2026-04-04.toml", "summary", "sumary")
    add_release(site, "2026-04-05-2", 5)  # the ids of 2026-04-05 again
    with pytest.raises(DataError) as without:
        build(site, tmp_path / "other", cache=None)
    with pytest.raises(DataError) as with_cache:
        cached(site, tmp_path)
    assert with_cache.value.problems == without.value.problems
    assert len(without.value.problems) == 4


class TestNoOp:
    """The no-op check by stat: it must notice every change a content hash would."""

    @pytest.fixture(autouse=True)
    def _stamp_fresh_files(self, monkeypatch: pytest.MonkeyPatch) -> None:
        # Files written by a test are seconds old at most: let them be stamped.
        monkeypatch.setattr(cache_module, "_RACY_NS", 0)

    def test_a_second_build_is_a_no_op_without_reading_entries(
        self, site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        cached(site, tmp_path)
        build(site, tmp_path / "out", cache=tmp_path / "cache")  # stamps
        monkeypatch.setattr(build_module, "inputs_digest", _fail)
        result = build(site, tmp_path / "out", cache=tmp_path / "cache")
        assert result.skipped
        assert len(result.report.unchanged) == 9

    def test_same_size_and_mtime_is_still_a_change(self, site: Path, tmp_path: Path) -> None:
        cached(site, tmp_path)
        path = site / "2026/2026-04-02.toml"
        before = path.stat()
        edit(path, "Bài t2", "Bài t9")
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert cached(site, tmp_path) == cold(site, tmp_path)

    def test_an_output_changed_by_hand_is_not_a_no_op(self, site: Path, tmp_path: Path) -> None:
        cached(site, tmp_path)
        cached(site, tmp_path)
        feed = tmp_path / "out" / "feed.xml"
        feed.write_bytes(feed.read_bytes() + b"\n")
        assert cached(site, tmp_path) == cold(site, tmp_path)


def _fail(*args: object) -> str:
    raise AssertionError("the entries were read")


def test_the_inputs_digest_is_the_same_from_known_hashes(site: Path) -> None:
    hashes: dict[str, str] = {}
    contents: dict[str, bytes] = {}
    digest = build_module.inputs_digest(site, None, contents, hashes)
    assert len(hashes) == len(contents) > 9
    assert build_module.inputs_digest(site, hashes) == digest
    edit(site / "2026/2026-04-02.toml", "Bài t2", "Bài t3")
    assert build_module.inputs_digest(site) != digest


def test_a_cache_that_cannot_be_written_is_only_slower(site: Path, tmp_path: Path) -> None:
    (tmp_path / "cache").write_text("not a folder\n")
    assert cached(site, tmp_path) == cold(site, tmp_path)
    add_release(site, "2026-05-01", 70)
    assert cached(site, tmp_path) == cold(site, tmp_path)


def test_two_sites_can_share_a_cache(site: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-entries"
    shutil.copytree(site, other)
    edit(other / "site.toml", '"Fixture Guide"', '"Other Guide"')
    for _ in range(2):
        build(site, tmp_path / "a", cache=tmp_path / "cache")
        build(other, tmp_path / "b", cache=tmp_path / "cache")
    namespaces = [p for p in (tmp_path / "cache").iterdir() if len(p.name) == 32]
    assert len(namespaces) == 2
    assert snapshot(tmp_path / "a") == cold(site, tmp_path)
    assert snapshot(tmp_path / "b") == cold(other, tmp_path)


OPERATIONS = ["add", "edit", "remove", "settings", "version", "nothing", "touch"]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(OPERATIONS), st.integers(0, 99)), max_size=6))
def test_any_sequence_of_changes_gives_the_cold_build(steps: list[tuple[str, int]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        entries = tmp / "entries"
        shutil.copytree(SMALL_SITE, entries)
        for n in range(1, 5):
            add_release(entries, f"2026-04-{n:02d}", n)
        version = "0.1.0"
        cached(entries, tmp)
        for step, (operation, n) in enumerate(steps):
            releases = sorted((entries / "2026").glob("2026-04-*.toml"))
            if operation == "add":
                add_release(entries, f"2026-06-{step + 1:02d}", 100 + step, module=1 + n % 2)
            elif operation == "edit" and releases:
                path = releases[n % len(releases)]
                edit(path, 'title = "', f'title = "{n} ')
            elif operation == "remove" and releases:
                releases[n % len(releases)].unlink()
            elif operation == "settings":
                set_max_items(entries, 1 + n % 12)
            elif operation == "version":
                version = f"0.1.{n}"
            elif operation == "touch" and releases:
                os.utime(releases[n % len(releases)])
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(build_module, "__version__", version)
                patch.setattr(incremental, "__version__", version)
                expected = cold(entries, tmp, allow_changes=True)
                assert cached(entries, tmp, allow_changes=True) == expected, steps[: step + 1]
