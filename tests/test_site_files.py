"""The files that describe the feeds: HTML pages, head snippet, feeds.json, feeds.opml."""

from __future__ import annotations

import contextlib
import json
import posixpath
import sqlite3
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import urlsplit

import feedparser
import html5lib
import pytest
from html5lib.html5parser import ParseError

from conftest import RunCli, require_program
from localhttp import serve
from sitebuilder import write_site

FEEDS_URL = "https://example.org/guide/feeds/"
MEDIA_TYPES = {
    "feed.xml": "application/rss+xml",
    "atom.xml": "application/atom+xml",
    "feed.json": "application/feed+json",
}
PAGES = (
    "index.html",
    "modules/prerequisites/index.html",
    "modules/cuda/index.html",
)


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One build of a four-month site, with archives, shared by the read-only tests."""
    from infrafeed.cli import main

    root = tmp_path_factory.mktemp("site")
    entries = write_site(root / "entries", max_items=3)
    assert main(["build", "--entries", str(entries), "--out", str(root / "out"), "-q"]) == 0
    return root / "out"


def parse_html(data: bytes) -> ET.Element:
    """Parse as a browser would, refusing any HTML5 parse error (strict html5lib)."""
    parser = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False)
    tree: ET.Element = parser.parse(data)
    return tree


def test_strict_parsing_catches_invalid_html() -> None:
    with pytest.raises(ParseError):
        parse_html(b"<!DOCTYPE html><html><body><p>a</div></body></html>")


@pytest.mark.parametrize("page", PAGES)
def test_pages_are_valid_html5_without_scripts_or_external_resources(out: Path, page: str) -> None:
    tree = parse_html((out / page).read_bytes())
    assert tree.get("lang") == "vi"
    assert tree.find("head/meta[@charset='utf-8']") is not None
    assert tree.find(".//script") is None
    assert not tree.findall(".//*[@style]")
    for element in tree.iter():
        # Only <a> and the feed links point elsewhere; nothing is loaded from anywhere.
        assert element.get("src") is None, element.tag
        if element.tag == "link":
            assert element.get("rel") == "alternate"
    assert "@media (prefers-color-scheme: dark)" in (tree.findtext("head/style") or "")


def alternates(out: Path, page: str) -> list[tuple[str, str]]:
    tree = parse_html((out / page).read_bytes())
    return [
        (
            link.get("type", ""),
            posixpath.normpath(posixpath.join(posixpath.dirname(page), link.get("href", ""))),
        )
        for link in tree.findall("head/link[@rel='alternate']")
    ]


def test_every_page_announces_its_feeds(out: Path) -> None:
    assert alternates(out, "index.html") == [(media, name) for name, media in MEDIA_TYPES.items()]
    # A module page offers its own feed first, then the one with everything.
    assert alternates(out, "modules/cuda/index.html") == [
        *((media, f"modules/cuda/{name}") for name, media in MEDIA_TYPES.items()),
        *((media, name) for name, media in MEDIA_TYPES.items()),
    ]


@pytest.mark.parametrize("page", PAGES)
def test_every_link_resolves(out: Path, page: str) -> None:
    tree = parse_html((out / page).read_bytes())
    hrefs = [a.get("href", "") for a in tree.iter("a")] + [
        link.get("href", "") for link in tree.iter("link")
    ]
    assert len(hrefs) > 20
    for href in hrefs:
        parts = urlsplit(href)
        if parts.scheme:
            assert parts.scheme == "https" and parts.netloc, href
        else:
            target = out / posixpath.dirname(page) / parts.path
            assert target.resolve().is_file(), (page, href)


def test_index_lists_every_feed_with_formats_urls_and_subscribe_links(out: Path) -> None:
    tree = parse_html((out / "index.html").read_bytes())
    cards = {card.get("id"): card for card in tree.iter("article")}
    assert list(cards) == ["feed-all", "feed-module-prerequisites", "feed-module-cuda"]
    for key, folder in (("all", ""), ("module-cuda", "modules/cuda/")):
        card = cards[f"feed-{key}"]
        urls = [code.text for code in card.iter("code")]
        assert urls == [FEEDS_URL + folder + name for name in MEDIA_TYPES]
        text = "".join(card.itertext())
        for media in MEDIA_TYPES.values():
            assert media in text
        subscribe = [a.get("href") for a in card.iter("a") if a.get("rel") == "external"]
        encoded = (FEEDS_URL + folder + "feed.xml").replace(":", "%3A").replace("/", "%2F")
        assert subscribe == [
            f"https://feedly.com/i/subscription/feed%2F{encoded}",
            f"https://www.inoreader.com/?add_feed={encoded}",
        ]
    latest = tree.find(".//ol[@class='items']")
    assert latest is not None and len(latest) == 14  # every item of the small history
    assert "Bài 2 ngày 06/04: Tối ưu hoá & <đo đạc> hiệu năng" in "".join(latest.itertext())


def test_entry_text_is_escaped(out: Path) -> None:
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "&lt;đo đạc&gt;" in html and "<đo đạc>" not in html
    assert "&amp; &lt;hướng dẫn&gt;" in html


def test_head_snippet_announces_the_main_feed_with_absolute_urls(out: Path) -> None:
    snippet = (out / "head-links.html").read_text(encoding="utf-8")
    assert snippet.splitlines() == [
        f'<link rel="alternate" type="{media}" title="Fixture Guide ({label})" '
        f'href="{FEEDS_URL}{name}">'
        for (name, media), label in zip(
            MEDIA_TYPES.items(), ("RSS 2.0", "Atom 1.0", "JSON Feed 1.1"), strict=True
        )
    ]


def test_feeds_json_describes_every_feed_document(out: Path) -> None:
    data = json.loads((out / "feeds.json").read_text(encoding="utf-8"))
    assert data["opml_url"] == FEEDS_URL + "feeds.opml"
    records = {record["id"]: record for record in data["feeds"]}
    assert len(records) == 3 * 3
    cuda = records["module-cuda/atom"]
    assert cuda == {
        "id": "module-cuda/atom",
        "feed": "module-cuda",
        "title": "Fixture Guide · Module 2 · Lập trình CUDA",
        "module": {"number": 2, "name": "Lập trình CUDA", "slug": "cuda"},
        "format": "atom",
        "media_type": "application/atom+xml",
        "url": FEEDS_URL + "modules/cuda/atom.xml",
        "page_url": FEEDS_URL + "modules/cuda/index.html",
        "item_count": 3,  # max_items of the four items of its newest month, March
        "total_item_count": 5,
        "complete": False,
        "updated": "2026-03-30T12:00:00+08:00",
    }
    for record in records.values():
        path = out / record["url"].removeprefix(FEEDS_URL)
        parsed = feedparser.parse(path.read_bytes()) if record["format"] != "json" else None
        count = (
            len(parsed.entries)
            if parsed is not None
            else len(json.loads(path.read_text(encoding="utf-8"))["items"])
        )
        assert count == record["item_count"], record["id"]


def test_opml_lists_every_feed_once(out: Path) -> None:
    root = ET.parse(out / "feeds.opml").getroot()
    assert root.get("version") == "2.0"
    assert root.findtext("head/title") == "Fixture Guide"
    urls = [outline.get("xmlUrl") for outline in root.iter("outline") if outline.get("xmlUrl")]
    assert urls == [
        FEEDS_URL + "feed.xml",
        FEEDS_URL + "modules/prerequisites/feed.xml",
        FEEDS_URL + "modules/cuda/feed.xml",
    ]


@pytest.mark.external
def test_newsboat_imports_the_opml_and_reads_every_feed(tmp_path: Path, run_cli: RunCli) -> None:
    newsboat = require_program("newsboat")
    out = tmp_path / "out"
    with serve(out) as base:
        entries = write_site(tmp_path / "entries", url=base, max_items=3)
        code, _, _ = run_cli("build", "--entries", str(entries), "--out", str(out), "-q")
        assert code == 0
        home = tmp_path / "newsboat"
        home.mkdir()
        urls, cache = home / "urls", home / "cache.db"
        urls.touch()
        common = ["-u", str(urls), "-c", str(cache), "-C", "/dev/null"]
        imported = subprocess.run(
            [newsboat, "-i", str(out / "feeds.opml"), *common],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        assert imported.returncode == 0, imported.stderr
        subscribed = [line.split()[0] for line in urls.read_text(encoding="utf-8").splitlines()]
        assert subscribed == [
            base + "feed.xml",
            base + "modules/prerequisites/feed.xml",
            base + "modules/cuda/feed.xml",
        ]
        reloaded = subprocess.run(
            [newsboat, *common, "-x", "reload"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            check=False,
            env={"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        )
        assert reloaded.returncode == 0, reloaded.stderr
    # Every feed was fetched over HTTP and its title read; every item arrived.
    # (newsboat files an item whose guid two feeds share under one of them,
    # so the items are compared as a set.)
    with contextlib.closing(sqlite3.connect(cache)) as db:
        feeds = dict(db.execute("SELECT rssurl, title FROM rss_feed").fetchall())
        guids = {guid for (guid,) in db.execute("SELECT guid FROM rss_item")}
    assert feeds == {
        base + "feed.xml": "Fixture Guide",
        base + "modules/prerequisites/feed.xml": "Fixture Guide · Module 1 · Kiến thức tiền đề",
        base + "modules/cuda/feed.xml": "Fixture Guide · Module 2 · Lập trình CUDA",
    }
    expected = set()
    for url in feeds:
        expected |= {entry.id for entry in feedparser.parse(out / url.removeprefix(base)).entries}
    assert guids == expected and len(expected) == 5
