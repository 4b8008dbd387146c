"""The build cache is safe: whatever changed, a build that used it writes what a cold build writes.

Each test builds a site with a cache, changes something (an entry, a
setting, infrafeed's code or version, the cache itself), builds again with
the same cache and output folder, and compares the whole output tree (feeds,
archives, pages, the changelog page, the manifest) byte for byte with a cold
build of the changed entries into an empty folder with no cache.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import RunCli
from infrafeed.items import Item
from outputs import tree
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
    edit, extra = EDITS[name]
    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    edit(site)
    _build(run_cli, site, out, cache, *extra)
    assert tree(out) == _cold(run_cli, site, tmp_path, *extra)
    # And once more with nothing changed: the cache now holds the changed files.
    _build(run_cli, site, out, cache, *extra)
    assert tree(out) == _cold(run_cli, site, tmp_path, *extra)


def test_a_new_release_parses_and_renders_only_that_release(
    site: Path, tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    import infrafeed.loader
    import infrafeed.release_cache

    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    new = add_release(site, "2026-05-04", 2, 2)

    parsed: list[str] = []
    rendered: list[str] = []
    parse, render = infrafeed.loader._parse_toml, infrafeed.release_cache.item_parts

    def counting_parse(raw: bytes, name: str, problems: list[object]) -> object:
        parsed.append(Path(name).name)
        return parse(raw, name, problems)  # type: ignore[arg-type]

    def counting_render(item: object) -> object:
        rendered.append(item.id)  # type: ignore[attr-defined]
        return render(item)  # type: ignore[arg-type]

    monkeypatch.setattr(infrafeed.loader, "_parse_toml", counting_parse)
    monkeypatch.setattr(infrafeed.release_cache, "item_parts", counting_render)
    _build(run_cli, site, out, cache)
    assert parsed == ["site.toml", new.name]
    assert len(rendered) == 2 and all("2026-05-04" in ident for ident in rendered)
    monkeypatch.undo()
    assert tree(out) == _cold(run_cli, site, tmp_path)


def test_a_new_version_of_infrafeed_renders_everything_again(
    site: Path, tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    import infrafeed
    import infrafeed.build

    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    for module in (infrafeed, infrafeed.build):
        monkeypatch.setattr(module, "__version__", "99.0.0")
    _build(run_cli, site, out, cache)
    assert b"infrafeed 99.0.0" in (out / "atom.xml").read_bytes()
    assert tree(out) == _cold(run_cli, site, tmp_path)


def test_a_change_to_infrafeeds_code_is_a_new_namespace(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import infrafeed.release_cache as release_cache

    settings = (site / "site.toml").read_bytes()
    before = release_cache.namespace(settings, "Asia/Shanghai", "1")
    monkeypatch.setattr(release_cache, "_code_digest", lambda: b"other code")
    assert release_cache.namespace(settings, "Asia/Shanghai", "1") != before
    monkeypatch.undo()
    assert release_cache.namespace(settings, "Asia/Shanghai", "1") == before
    assert release_cache.namespace(settings + b"\n", "Asia/Shanghai", "1") != before
    assert release_cache.namespace(settings, "Europe/Paris", "1") != before


DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "emptied": lambda data: b"",
    "truncated": lambda data: data[: len(data) // 2],
    "garbage": lambda data: bytes(range(256)) * 50,
    "a flipped byte": lambda data: data[:-100] + bytes([data[-100] ^ 0xFF]) + data[-99:],
    "another namespace": lambda data: re.sub(rb"\n[0-9a-f]{64}\n", b"\n" + b"0" * 64 + b"\n", data),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_cache_only_costs_time(
    damage: str, site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    packs = list(cache.glob("releases-*"))
    assert len(packs) == 1
    packs[0].write_bytes(DAMAGE[damage](packs[0].read_bytes()))
    _edit_file(_newest(site), "Bài 1 ngày", "Bài thứ nhất ngày")
    _build(run_cli, site, out, cache)
    assert tree(out) == _cold(run_cli, site, tmp_path)


def test_a_record_of_the_wrong_shape_is_a_miss(site: Path, tmp_path: Path, run_cli: RunCli) -> None:
    import marshal

    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    pack = next(cache.glob("releases-*"))
    head, _, rows = pack.read_bytes().partition(b"\n")
    space, _, rows = rows.partition(b"\n")
    # Right namespace and digests, wrong types inside: every row's items become numbers.
    forged = b""
    view = memoryview(rows)
    while view:
        size = int.from_bytes(view[:8], "big")
        row = list(marshal.loads(view[8 : 8 + size]))  # noqa: S302 - the test's own pack
        row[3] = tuple((1, 2, 3) for _ in row[3])
        data = marshal.dumps(tuple(row), 4)
        forged += len(data).to_bytes(8, "big") + data
        view = view[8 + size :]
    pack.write_bytes(head + b"\n" + space + b"\n" + forged)
    _edit_file(_newest(site), "Bài 1 ngày", "Bài thứ nhất ngày")
    _build(run_cli, site, out, cache)
    assert tree(out) == _cold(run_cli, site, tmp_path)


def test_a_file_the_cache_vouched_for_is_checked_again_under_new_settings(
    site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    # Module 2 leaves site.toml: the releases that use it are now wrong.
    settings = (site / "site.toml").read_text(encoding="utf-8")
    settings = re.sub(r"\[\[modules\]\]\nnumber = 2\n(?:[^\[\n].*\n|\n)*", "", settings)
    assert "number = 2" not in settings
    (site / "site.toml").write_text(settings, encoding="utf-8")
    before = tree(out)
    code, _, cached_err = run_cli(
        "build", "--entries", str(site), "--out", str(out), "--cache", str(cache)
    )
    cold_code, _, cold_err = run_cli(
        "build", "--entries", str(site), "--out", str(tmp_path / "o2"), "--no-cache"
    )
    assert code == cold_code == 1
    assert cached_err == cold_err and "unknown module 2" in cached_err
    assert tree(out) == before


def test_an_id_clash_with_a_file_the_cache_vouched_for_is_still_found(
    site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    # Same date, same ids and kind in a second file of that day.
    shutil.copy(_newest(site), _newest(site).with_name("2026-04-06-2.toml"))
    code, _, cached_err = run_cli(
        "build", "--entries", str(site), "--out", str(out), "--cache", str(cache)
    )
    cold_code, _, cold_err = run_cli(
        "build", "--entries", str(site), "--out", str(tmp_path / "o2"), "--no-cache"
    )
    assert code == cold_code == 1
    assert cached_err == cold_err and "is already used" in cached_err


def test_a_pack_that_cannot_be_written_does_not_fail_the_build(
    site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    pack = next(cache.glob("releases-*"))
    pack.unlink()
    pack.mkdir()  # a folder where the pack goes: replacing it fails
    add_release(site, "2026-05-04", 2, 2)
    code, _, stderr = run_cli(
        "build", "--entries", str(site), "--out", str(out), "--cache", str(cache)
    )
    assert code == 0
    assert pack.name in stderr  # said once, with the file that could not be written
    assert tree(out) == _cold(run_cli, site, tmp_path)


def test_a_new_release_adds_one_record_to_the_pack(
    site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    pack = next(cache.glob("releases-*"))
    before = pack.stat()
    add_release(site, "2026-05-04", 2, 1)
    _build(run_cli, site, out, cache)
    after = pack.stat()
    assert after.st_ino == before.st_ino  # added to, not written anew
    assert 0 < after.st_size - before.st_size < before.st_size / 4
    # The file's old record stays behind the new one until the pack is written anew.
    _edit_file(_newest(site), "Bài 1 ngày", "Bài thứ nhất ngày")
    _build(run_cli, site, out, cache)
    assert pack.stat().st_ino == before.st_ino
    assert tree(out) == _cold(run_cli, site, tmp_path)


def test_the_pack_is_written_anew_once_old_records_outweigh_the_live_ones(
    site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    pack = next(cache.glob("releases-*"))
    first = pack.stat()
    releases = sorted(site.rglob("20*.toml"))
    releases[0].unlink()  # one record of eight no longer asked for: kept
    _build(run_cli, site, out, cache, "--allow-changes")
    assert (pack.stat().st_ino, pack.stat().st_size) == (first.st_ino, first.st_size)
    for old in releases[1:-1]:
        old.unlink()  # most of them: the pack is written anew with the one left
    _build(run_cli, site, out, cache, "--allow-changes")
    assert pack.stat().st_ino != first.st_ino
    assert pack.stat().st_size == _size_of_a_pack_for(site, tmp_path, run_cli)
    assert tree(out) == _cold(run_cli, site, tmp_path, "--allow-changes")


def _size_of_a_pack_for(entries: Path, tmp_path: Path, run_cli: RunCli) -> int:
    """The size of the pack a cold build of ``entries`` writes."""
    cache = tmp_path / "fresh-cache"
    _build(run_cli, entries, tmp_path / "fresh-out", cache, "--allow-changes")
    return next(cache.glob("releases-*")).stat().st_size


@pytest.fixture
def staged(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the builds rendered and staged (not the ones they left as they were)."""
    from infrafeed.publish import Stage

    paths: list[str] = []
    real = Stage.write_chunks

    def spy(self: Stage, relative: str, chunks: object) -> None:
        paths.append(relative)
        real(self, relative, chunks)  # type: ignore[arg-type]

    monkeypatch.setattr(Stage, "write_chunks", spy)
    return paths


def _feed_documents(paths: list[str]) -> set[str]:
    return {p for p in paths if p.endswith(("feed.xml", "atom.xml", "feed.json"))}


def test_documents_a_new_release_does_not_touch_are_not_rendered_again(
    site: Path, tmp_path: Path, run_cli: RunCli, later: None, staged: list[str]
) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    everything = _feed_documents(staged)
    staged.clear()
    add_release(site, "2026-05-04", 2, 1)  # module 2 (cuda), in a new month
    _build(run_cli, site, out, cache)
    rendered = _feed_documents(staged)
    assert tree(out) == _cold(run_cli, site, tmp_path)
    # The subscription documents it joins, the archive of the month it closes
    # (which gains a next-archive link) and its own month's archives.
    assert rendered == {
        f"{folder}{name}"
        for folder in (
            "",
            "archive/2026-04/",
            "archive/2026-05/",
            "modules/cuda/",
            "modules/cuda/archive/2026-03/",
            "modules/cuda/archive/2026-05/",
        )
        for name in ("feed.xml", "atom.xml", "feed.json")
    }
    assert len(everything - rendered) == len(everything) - 12  # all others left as they were
    assert not any("2026-01" in p or "2026-02" in p for p in rendered)  # closed months stay


def test_a_document_edited_since_is_rendered_again(
    site: Path, tmp_path: Path, run_cli: RunCli, later: None, staged: list[str]
) -> None:
    import os

    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    edited = out / "modules" / "prerequisites" / "archive" / "2026-01" / "atom.xml"
    before = edited.stat()
    edited.write_bytes(edited.read_bytes().replace(b"<title>", b"<title>X", 1))
    os.utime(edited, ns=(before.st_atime_ns, before.st_mtime_ns))  # its mtime kept
    staged.clear()
    add_release(site, "2026-05-04", 2, 1)
    _build(run_cli, site, out, cache)
    assert "modules/prerequisites/archive/2026-01/atom.xml" in staged
    assert tree(out) == _cold(run_cli, site, tmp_path)


def test_documents_written_just_now_stay_only_if_their_bytes_are_checked(
    site: Path, tmp_path: Path, run_cli: RunCli, staged: list[str]
) -> None:
    """Within the 2.5 s after a build, a file's stat may hide a change: its bytes are hashed."""
    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    staged.clear()
    # The racy case: a document changed, its size kept, and the record showing the stat
    # it has now (as when the change came within the tick of the record's stat).
    changed = out / "modules/prerequisites/feed.xml"
    data = changed.read_bytes()
    changed.write_bytes(data.replace(b"<title>", b"<TITLE>", 1))
    (record,) = cache.glob("documents-*")
    st = changed.stat()
    lines = record.read_text(encoding="utf-8").split("\n")
    for n, line in enumerate(lines):
        fields = line.split("\t")
        if fields[0] == "modules/prerequisites/feed.xml":
            fields[4:8] = map(str, (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
            lines[n] = "\t".join(fields)
    record.write_text("\n".join(lines), encoding="utf-8")

    add_release(site, "2026-05-04", 2, 1)
    _build(run_cli, site, out, cache)
    # The changed document is rendered again; the other two of its feed, unchanged
    # and just as new, are hashed and stay.
    rendered = _feed_documents(staged)
    assert "modules/prerequisites/feed.xml" in rendered
    assert not {"modules/prerequisites/atom.xml", "modules/prerequisites/feed.json"} & rendered
    assert tree(out) == _cold(run_cli, site, tmp_path)


DOCUMENTS_DAMAGE = {
    **DAMAGE,
    # A digit str.isdigit takes but int() refuses: it crashed the build once.
    "a digit that is not ASCII": lambda data: re.sub(rb"\n[0-9]", b"\n\xc2\xb2", data, count=1),
}


@pytest.mark.parametrize("damage", sorted(DOCUMENTS_DAMAGE))
def test_a_damaged_record_of_documents_only_costs_time(
    damage: str, site: Path, tmp_path: Path, run_cli: RunCli, later: None, staged: list[str]
) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    _build(run_cli, site, out, cache)
    everything = _feed_documents(staged)
    (record,) = cache.glob("documents-*")
    record.write_bytes(DOCUMENTS_DAMAGE[damage](record.read_bytes()))
    staged.clear()
    _edit_file(_newest(site), "Bài 1 ngày", "Bài thứ nhất ngày")
    _build(run_cli, site, out, cache)
    assert tree(out) == _cold(run_cli, site, tmp_path)
    if damage != "a flipped byte":  # a flipped digit may still parse, as another record
        assert _feed_documents(staged) == everything


def _items_through_the_cache(entries: Path, cache: Path) -> tuple[Item, ...]:
    """The items as a rebuild with ``cache`` gets them (build.py's own steps)."""
    from infrafeed import __version__
    from infrafeed.build import inputs_digest
    from infrafeed.cache import Cache
    from infrafeed.loader import load
    from infrafeed.release_cache import ReleaseCache, namespace_of

    memo = ReleaseCache(Cache(cache), namespace_of(entries, __version__))
    hashed: dict[str, str] = {}
    inputs_digest(entries, hashed)
    changelog = load(entries, known=memo.known, digests=hashed)
    assert all(rf.known for rf in changelog.releases)
    items = memo.items(changelog)
    for rf in changelog.releases:
        rf.forget()  # as a build does: the text must come back from the file
    return items


def test_an_unchanged_items_text_is_made_again_from_its_file(
    site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    """The pack keeps no text; an item's text, if asked for, is what a cold build makes."""
    from infrafeed.items import TEXT_FIELDS, build_items
    from infrafeed.loader import load

    cache = tmp_path / "cache"
    _build(run_cli, site, tmp_path / "out", cache)
    items = _items_through_the_cache(site, cache)
    assert items and all("title" not in vars(item) for item in items)  # deferred, not decoded
    assert items == build_items(load(site))  # every field compared: the text is made now
    assert all(set(TEXT_FIELDS) <= set(vars(item)) for item in items)


def test_a_file_changed_during_the_build_is_not_read_for_its_text(
    site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    from infrafeed.errors import DataError

    cache = tmp_path / "cache"
    _build(run_cli, site, tmp_path / "out", cache)
    items = _items_through_the_cache(site, cache)
    newest = _newest(site)
    _edit_file(newest, "Bài 1 ngày", "Bài thứ nhất ngày")
    first = next(item for item in items if f"/{newest.name} " in item.source)
    with pytest.raises(DataError) as caught:
        first.title  # noqa: B018 - reading it is the test
    [problem] = caught.value.problems
    assert problem.path.endswith(newest.name) and "changed during the build" in problem.message
