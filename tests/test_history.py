"""RFC 5005: bounded subscription feeds, monthly archives, exactly-once history, closed months."""

from __future__ import annotations

import json
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import feedparser
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import SHIPPED_ENTRIES, SMALL_SITE, RunCli
from feedcheck import check_atom, check_tree
from infrafeed.feeds.history import Document, month_of
from infrafeed.feeds.items import build_items
from infrafeed.feeds.specs import feed_specs, select_all
from infrafeed.source.loader import load
from sitebuilder import add_release, write_site
from w3c import w3c_tree

FEEDS_URL = "https://example.org/guide/feeds/"
ATOM = "{http://www.w3.org/2005/Atom}"
FH = "{http://purl.org/syndication/history/1.0}"


def local(out: Path, url: str, base: str = FEEDS_URL) -> Path:
    assert url.startswith(base), url
    return out / url.removeprefix(base)


def links(path: Path) -> tuple[dict[str, str], list[str], set[str]]:
    """(rel -> href of the history links, item ids in order, fh markers) of one document."""
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        rels = {"prev-archive": data["next_url"]} if "next_url" in data else {}
        return rels, [item["id"] for item in data["items"]], set()
    root = ET.parse(path).getroot()
    if root.tag == "rss":
        parent = root.find("channel")
        assert parent is not None
        ids = [guid.text or "" for guid in parent.iter("guid")]
    else:
        parent = root
        ids = [entry.findtext(f"{ATOM}id") or "" for entry in root.iter(f"{ATOM}entry")]
    rels = {
        link.get("rel", ""): link.get("href", "")
        for link in parent.findall(f"{ATOM}link")
        if link.get("rel") in ("prev-archive", "next-archive", "current", "hub")
    }
    markers = {child.tag.removeprefix(FH) for child in parent if child.tag.startswith(FH)}
    return rels, ids, markers


def walk(out: Path, subscription: str, base: str = FEEDS_URL) -> list[str]:
    """Follow prev-archive from a subscription document; every item id met, in order."""
    path = out / subscription
    seen_documents = set()
    ids: list[str] = []
    while True:
        assert path not in seen_documents, f"{path}: prev-archive loops"
        seen_documents.add(path)
        rels, found, _ = links(path)
        ids += found
        if "prev-archive" not in rels:
            return ids
        path = local(out, rels["prev-archive"], base)


def build(run_cli: RunCli, entries: Path, out: Path, *extra: str, backdated: int = 0) -> None:
    """Build; ``backdated``: how many new releases are dated before what was published."""
    code, _, err = run_cli("build", "--entries", str(entries), "--out", str(out), "-q", *extra)
    assert code == 0, err
    assert err.count(" puts this new release before an item already ") == backdated, err
    assert err.count("\n") == backdated, err


def expected_ids(entries: Path) -> dict[str, list[str]]:
    changelog = load(entries)
    items = build_items(changelog)
    return {
        spec.key: [item.id for item in select_all(items, spec)]
        for spec in feed_specs(changelog.site)
    }


@pytest.mark.parametrize("fmt", ["feed.xml", "atom.xml", "feed.json"])
def test_prev_archive_reaches_every_item_exactly_once(
    tmp_path: Path, run_cli: RunCli, fmt: str
) -> None:
    entries = write_site(tmp_path / "entries", max_items=2)
    out = tmp_path / "out"
    build(run_cli, entries, out)
    expected = expected_ids(entries)
    for key, folder in (("all", ""), ("module-prerequisites", "modules/prerequisites/")):
        subscription = folder + fmt
        assert walk(out, subscription) == expected[key], subscription
        _, current, markers = links(out / subscription)
        assert len(current) <= 2 and markers == set()


def test_archives_are_marked_and_linked_both_ways(tmp_path: Path, run_cli: RunCli) -> None:
    entries = write_site(tmp_path / "entries", max_items=2)
    out = tmp_path / "out"
    build(run_cli, entries, out)
    # April, the open month, fits in the subscription document: it has no archive.
    months = sorted(p.name for p in (out / "archive").iterdir())
    assert months == ["2026-01", "2026-02", "2026-03"]
    for fmt in ("feed.xml", "atom.xml"):
        assert links(out / fmt)[0]["prev-archive"] == f"{FEEDS_URL}archive/2026-03/{fmt}"
        for index, month in enumerate(months):
            rels, _, markers = links(out / "archive" / month / fmt)
            assert markers == {"archive"}
            assert rels["current"] == FEEDS_URL + fmt
            assert "hub" not in rels
            if index > 0:
                assert rels["prev-archive"] == f"{FEEDS_URL}archive/{months[index - 1]}/{fmt}"
            else:
                assert "prev-archive" not in rels
            if index + 1 < len(months):
                assert rels["next-archive"] == f"{FEEDS_URL}archive/{months[index + 1]}/{fmt}"
            else:  # RFC 5005: next-archive names an archive, and none is newer
                assert "next-archive" not in rels
    # The open month's two items are all in the subscription document.
    assert len(links(out / "feed.xml")[1]) == 2


def test_a_new_month_keeps_the_newest_items_in_the_subscription_document(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """It held only the open month's items: on a month's first release it shrank to that
    release, so a reader who had not polled since the month before missed its last releases,
    and a new subscriber got one item."""
    entries = write_site(tmp_path / "entries", max_items=3)
    out = tmp_path / "out"
    add_release(entries, "2026-05-01", 1, 1)
    build(run_cli, entries, out)
    for fmt in ("feed.xml", "atom.xml", "feed.json"):
        current = links(out / fmt)[1]
        assert current == expected_ids(entries)["all"][:3]
        assert [item.rsplit(":", 1)[1][:7] for item in current] == ["2026-05", "2026-04", "2026-04"]


def test_a_feed_that_fits_is_complete(tmp_path: Path, run_cli: RunCli) -> None:
    entries = write_site(tmp_path / "entries")
    out = tmp_path / "out"
    build(run_cli, entries, out)
    for fmt in ("feed.xml", "atom.xml"):
        rels, ids, markers = links(out / fmt)
        assert markers == {"complete"} and "prev-archive" not in rels
        assert ids == expected_ids(entries)["all"]
    assert not (out / "archive").exists()
    assert "next_url" not in json.loads((out / "feed.json").read_text(encoding="utf-8"))


def test_every_document_parses_cleanly(tmp_path: Path, run_cli: RunCli) -> None:
    entries = write_site(tmp_path / "entries", max_items=2)
    out = tmp_path / "out"
    build(run_cli, entries, out)
    documents = sorted(out.rglob("*.xml"))
    assert len(documents) > 20
    for path in documents:
        parsed = feedparser.parse(path.read_bytes())
        assert parsed.bozo == 0, (path, parsed.get("bozo_exception"))


def test_max_bytes_bounds_every_format(tmp_path: Path, run_cli: RunCli) -> None:
    entries = write_site(tmp_path / "entries", max_bytes=6_000)
    out = tmp_path / "out"
    build(run_cli, entries, out)
    for fmt in ("feed.xml", "atom.xml", "feed.json"):
        assert (out / fmt).stat().st_size <= 6_000
        assert walk(out, fmt) == expected_ids(entries)["all"]
    # The three formats hold the same items, chosen by the largest of them.
    counts = {len(links(out / fmt)[1]) for fmt in ("feed.xml", "atom.xml", "feed.json")}
    assert len(counts) == 1 and counts.pop() >= 1


def closed_archives(out: Path) -> dict[str, bytes]:
    """Every file of every closed archive: a month before its feed's newest month."""
    found = {}
    for root in [out / "archive", *sorted(out.glob("modules/*/archive"))]:
        months = sorted(path.name for path in root.iterdir()) if root.is_dir() else []
        for month in months[:-1]:
            for path in sorted((root / month).iterdir()):
                found[path.relative_to(out).as_posix()] = path.read_bytes()
    return found


def test_closed_archives_never_change(tmp_path: Path, run_cli: RunCli) -> None:
    entries = write_site(tmp_path / "entries", max_items=2)
    out = tmp_path / "out"
    build(run_cli, entries, out)
    closed = closed_archives(out)
    # Archives with a newer archive, in three formats: the all feed's 01-02, module 1's
    # 01-02 (its 04 fits in the subscription document, 03 is the newest archive), module 2's 01.
    assert len(closed) == 3 * (2 + 2 + 1)
    # A release in the open month, releases that open new months (module 2's
    # first closes its March), then a hub in the settings: whatever closed
    # keeps every byte, and what closes in between is frozen from then on.
    for change in ("2026-04-20", "2026-05-04", "hub", "2026-05-11"):
        if change == "hub":
            settings = entries / "site.toml"
            hub = 'hub = "https://hub.example.org/"\n'
            settings.write_text(settings.read_text(encoding="utf-8") + hub, encoding="utf-8")
        else:
            add_release(entries, change, 2, 2)
        build(run_cli, entries, out)
        now = closed_archives(out)
        assert {path: now[path] for path in closed} == closed, change
        closed = now
    assert "modules/cuda/archive/2026-04/feed.xml" in closed
    assert walk(out, "feed.xml") == expected_ids(entries)["all"]
    assert walk(out, "modules/cuda/feed.json") == expected_ids(entries)["module-cuda"]


def test_an_item_moving_into_an_archive_is_not_a_drop(tmp_path: Path, run_cli: RunCli) -> None:
    entries = write_site(tmp_path / "entries", max_items=100)
    out = tmp_path / "out"
    build(run_cli, entries, out)
    assert "fh:complete" in (out / "feed.xml").read_text(encoding="utf-8")
    settings = entries / "site.toml"
    text = settings.read_text(encoding="utf-8").replace("max_items = 100", "max_items = 2")
    settings.write_text(text, encoding="utf-8")
    build(run_cli, entries, out)  # no --allow-changes needed: nothing was dropped
    assert walk(out, "feed.xml") == expected_ids(entries)["all"]


def test_more_room_hands_archived_items_back_and_loses_none(
    tmp_path: Path, run_cli: RunCli
) -> None:
    # docs/feeds.md: the split comes from the entries alone, so raising max_items moves it back.
    entries = write_site(tmp_path / "entries", max_items=2)
    out = tmp_path / "out"
    build(run_cli, entries, out)
    before = {p.relative_to(out).as_posix() for p in out.rglob("archive/*/feed.xml")}
    settings = entries / "site.toml"
    text = settings.read_text(encoding="utf-8").replace("max_items = 2", "max_items = 5")
    settings.write_text(text, encoding="utf-8")
    code, report, err = run_cli("build", "--entries", str(entries), "--out", str(out))
    assert (code, err) == (0, "")
    after = {p.relative_to(out).as_posix() for p in out.rglob("archive/*/feed.xml")}
    gone = before - after
    assert gone and not after - before, (before, after)
    assert all(path in report for path in gone), report  # the build names what it removed
    assert not any((out / path).parent.exists() for path in gone)  # nor are their folders
    for key, ids in expected_ids(entries).items():
        folder = "" if key == "all" else f"modules/{key.removeprefix('module-')}/"
        for fmt in ("feed.xml", "atom.xml", "feed.json"):
            assert walk(out, folder + fmt) == ids, (key, fmt)


@pytest.mark.parametrize("fresh", [False, True], ids=["output", "fresh-clone"])
def test_a_release_backdated_behind_the_subscription_document_is_refused(
    tmp_path: Path, run_cli: RunCli, fresh: bool
) -> None:
    """Its items would be only in an archive, which readers do not fetch. fresh-clone: CI has
    entries/published-ids.txt but no output folder."""
    entries = write_site(tmp_path / "entries", max_items=2)
    out = tmp_path / "out"
    build(run_cli, entries, out)
    if fresh:
        shutil.rmtree(out)
    before = closed_archives(out)
    add_release(entries, "2026-02-25", 1, 1)
    code, _, err = run_cli("build", "--entries", str(entries), "--out", str(out), "-q")
    assert code == 3
    assert (
        "feed 'all': new item tag:example.org,2026-01-01:2026-02-25/bai-2026-02-25-1/new "
        f"({entries.as_posix()}/2026/2026-02-25.toml groups[1].articles[1]) is dated 2026-02-25, "
        "before items the feed has published and behind the newest items, which the "
        "subscription document holds: it would be only in an archive, which readers do not "
        "fetch; date the release later, or raise [feeds] max_items or max_bytes"
    ) in err.splitlines()
    assert closed_archives(out) == before
    build(run_cli, entries, out, "--allow-changes", backdated=1)
    assert walk(out, "atom.xml") == expected_ids(entries)["all"]


def test_a_release_backdated_into_the_subscription_document_is_published(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """A release forgotten last month, once its month had an archive, was refused, though the
    subscription document, holding the newest items across months, shows it to every reader."""
    entries = write_site(tmp_path / "entries", max_items=4)
    out = tmp_path / "out"
    build(run_cli, entries, out)
    add_release(entries, "2026-04-01", 1, 1)  # the open month, behind none of the four newest
    add_release(entries, "2026-03-31", 2, 1)  # a closed month, behind three of them
    build(run_cli, entries, out, backdated=2)  # a warning each, as for a wrong date
    current = links(out / "feed.json")[1]
    assert current == expected_ids(entries)["all"][:4]
    assert {"2026-04-01", "2026-03-31"} <= {item.rsplit(":", 1)[1][:10] for item in current}


def test_more_new_items_at_once_than_the_subscription_document_holds_are_refused(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """Five new items, the newest there are, and room for two: three would go straight to an
    archive, which readers do not fetch, so subscribers would never see them. Refused, saying
    what to raise; confirmed, they go to the archive, and every item is still there once."""
    entries = write_site(tmp_path / "entries", max_items=2)
    out = tmp_path / "out"
    build(run_cli, entries, out)
    before = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    add_release(entries, "2026-04-20", 1, 2)
    add_release(entries, "2026-05-04", 2, 3)
    code, _, err = run_cli("build", "--entries", str(entries), "--out", str(out), "-q")
    assert code == 3
    assert "feed 'all': 3 new items, such as " in err
    assert "raise [feeds] max_items or max_bytes until it holds them" in err
    assert {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} == before
    raised = (
        (entries / "site.toml")
        .read_text(encoding="utf-8")
        .replace("max_items = 2", "max_items = 5")
    )
    (entries / "site.toml").write_text(raised, encoding="utf-8")
    build(run_cli, entries, out)  # room for them: published, in the subscription document
    assert links(out / "feed.json")[1] == expected_ids(entries)["all"][:5]
    (entries / "site.toml").write_text(raised.replace("max_items = 5", "max_items = 2"), "utf-8")
    add_release(entries, "2026-05-11", 1, 4)
    build(run_cli, entries, out, "--allow-changes")
    assert walk(out, "feed.json") == expected_ids(entries)["all"]
    assert links(out / "feed.json")[1] == expected_ids(entries)["all"][:2]


def test_a_feed_with_nothing_published_yet_is_guarded_too(tmp_path: Path, run_cli: RunCli) -> None:
    """A module feed with no items had no record: its first five items, with room for two,
    went three straight to an archive, exit 0; with [feeds] all = false no other feed refused
    (a subscriber-churn helper). The record names the feed from its first build on."""
    entries = write_site(tmp_path / "entries", max_items=2, history=(("2026-01-05", 1, 1),))
    toml = entries / "site.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + "all = false\n", encoding="utf-8")
    out = tmp_path / "out"
    build(run_cli, entries, out)
    assert (entries / "published-ids.txt").read_text(encoding="ascii").endswith("\nmodule-cuda -\n")
    add_release(entries, "2026-02-03", 2, 5)
    code, _, err = run_cli("build", "--entries", str(entries), "--out", str(out), "-q")
    assert code == 3 and "feed 'module-cuda': 3 new items, such as " in err


def test_an_upgrade_of_infrafeed_leaves_archives_alone(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = write_site(tmp_path / "entries", max_items=2)
    out = tmp_path / "out"
    build(run_cli, entries, out)
    archives = {p: p.read_bytes() for p in sorted(out.rglob("archive/*/*"))}
    # What an upgrade changes: the version the build names (the build module's copy).
    monkeypatch.setattr(sys.modules["infrafeed.build"], "__version__", "99.0.0")
    build(run_cli, entries, out)
    assert b"infrafeed 99.0.0" in (out / "feed.xml").read_bytes()
    assert {p: p.read_bytes() for p in sorted(out.rglob("archive/*/*"))} == archives


@given(
    months=st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=8),
    max_items=st.integers(min_value=1, max_value=12),
    max_bytes=st.integers(min_value=4_096, max_value=9_000),
)
def test_plan_partitions_any_feed(months: list[int], max_items: int, max_bytes: int) -> None:
    """Whatever the sizes: every item in exactly one document, in order, within the limits."""
    import datetime as dt

    from infrafeed.feeds.history import plan
    from infrafeed.feeds.items import Item

    site = load(SMALL_SITE).site
    site = site.model_copy(
        update={
            "feeds": site.feeds.model_copy(update={"max_items": max_items, "max_bytes": max_bytes})
        }
    )
    spec = feed_specs(site)[0]
    items = []
    for index, count in enumerate(reversed(months)):  # newest month first
        day = dt.date(2030 - index // 12, 12 - index % 12, 1)
        for n in range(count):
            published = dt.datetime(day.year, day.month, day.day, 12, tzinfo=dt.UTC)
            items.append(
                Item(
                    f"tag:x,2026:{day}/{n}",
                    None,
                    "t",
                    "https://x/",
                    published - dt.timedelta(seconds=n),
                    day,
                    "",
                    None,
                    (),
                    "",
                    None,
                )
            )

    def size_of(page: Document) -> int:
        return 1_000 + 700 * len(page.items)

    history = plan(site, spec, items, size_of)
    assert [item for page in history.documents for item in page.items] == items
    current = history.current
    if history.complete:
        assert len(history.documents) == 1 and current.prev_archive is None
        assert len(items) <= max_items and size_of(current) <= max_bytes
        return
    # The subscription document: the newest items, as many as fit, across months.
    assert 1 <= len(current.items) <= max_items
    assert len(current.items) == 1 or size_of(current) <= max_bytes
    folders = [page.folder for page in history.archives]
    assert current.prev_archive == folders[0]
    for index, page in enumerate(history.archives):
        assert page.role == "archive" and all(month_of(i) == page.month for i in page.items)
        assert page.items, "no archive is empty"
        lone = len(folders) == 1  # names the subscription document: the validator wants a link
        assert page.next_archive == (folders[index - 1] if index else spec.folder if lone else None)
        assert page.prev_archive == (folders[index + 1] if index + 1 < len(folders) else None)
        if index:  # an archive with a newer archive holds its whole month
            assert len(page.items) == sum(month_of(i) == page.month for i in items)


def test_json_pages_name_their_own_url(tmp_path: Path, run_cli: RunCli) -> None:
    entries = write_site(tmp_path / "entries", max_items=2)
    out = tmp_path / "out"
    build(run_cli, entries, out)
    for path in [out / "feed.json", *sorted(out.rglob("archive/*/feed.json"))]:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["feed_url"] == FEEDS_URL + path.relative_to(out).as_posix()


@pytest.mark.parametrize("max_items", [10, 50, 1000])
def test_shipped_archives_are_w3c_clean_and_never_empty(
    tmp_path: Path, run_cli: RunCli, max_items: int
) -> None:
    entries = tmp_path / "entries"
    shutil.copytree(SHIPPED_ENTRIES, entries)
    settings = entries / "site.toml"
    text = settings.read_text(encoding="utf-8")
    settings.write_text(text.replace("max_items = 1000", f"max_items = {max_items}"), "utf-8")
    out = tmp_path / "out"
    build(run_cli, entries, out)
    base = "https://caomaolufei.github.io/AIInfraGuide/feeds/"
    found = check_tree(out, base)
    assert {name: problems for name, problems in found.items() if problems} == {}
    assert w3c_tree(out, base) == {}
    archives = sorted(out.rglob("archive/*/feed.json"))
    assert bool(archives) == (max_items < 120)
    for path in archives:
        assert json.loads(path.read_text(encoding="utf-8"))["items"], path
    expected = expected_ids(entries)
    for spec in feed_specs(load(entries).site):
        for fmt in ("feed.xml", "atom.xml", "feed.json"):
            subscription = f"{spec.folder}/{fmt}" if spec.folder else fmt
            assert walk(out, subscription, base) == expected[spec.key], subscription
    if max_items == 10:
        # Module 1's history is one month: its one archive links on to the subscription document.
        folder = "modules/prerequisites/"
        lone = out / folder / "archive/2026-04/atom.xml"
        rels, ids, _ = links(lone)
        assert rels["next-archive"] == base + folder + "atom.xml" and ids
        assert "prev-archive" not in rels
        unlinked = lone.read_text(encoding="utf-8").replace('"next-archive"', '"related"')
        problems = check_atom(unlinked.encode(), base + folder + "archive/2026-04/atom.xml")
        assert any("ArchiveIncomplete" in p for p in problems)
