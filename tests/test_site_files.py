"""The files that describe the feeds: HTML pages, head snippet, feeds.json, feeds.opml."""

from __future__ import annotations

import contextlib
import json
import posixpath
import re
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
MODULE_FEEDS = ("modules/prerequisites/feed.xml", "modules/cuda/feed.xml")
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


def test_without_the_feed_of_everything_the_index_announces_every_module_feed(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """It announced the first module's feed alone, as if it were the site's (a spec review)."""
    out = build_site(tmp_path, run_cli, settings="all = false\n")
    modules = sorted(p.parent.name for p in out.glob("modules/*/feed.xml"))
    assert len(modules) > 1
    expected = [
        (media, f"modules/{m}/{name}") for m in modules for name, media in MEDIA_TYPES.items()
    ]
    assert sorted(alternates(out, "index.html")) == sorted(expected)


def test_a_build_says_when_changes_are_in_no_feed(tmp_path: Path, run_cli: RunCli) -> None:
    """With all = false, site-wide notes went into no feed, and nothing said so (a helper)."""
    entries = write_site(tmp_path / "entries")
    toml = entries / "site.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + "all = false\n", encoding="utf-8")
    code, _, stderr = run_cli("build", "--entries", str(entries), "--out", str(tmp_path / "o"))
    assert code == 0
    assert stderr == (
        f"warning: 1 change in no feed, such as {entries.as_posix()}/2026/2026-02-17.toml "
        "groups[1].notes[1]: [feeds] all = false, and it has no module; subscribers never see "
        "them\n"
    )
    toml.write_text(toml.read_text(encoding="utf-8") + "modules = false\n", encoding="utf-8")
    code, _, stderr = run_cli(
        "build", "--entries", str(entries), "--out", str(tmp_path / "o2"), "--allow-changes"
    )
    assert code == 0 and stderr.startswith("warning: 14 changes in no feed, such as ")
    assert stderr.endswith(": [feeds] all = false, and [feeds] modules = false too; subscribers "
                           "never see them\n")  # fmt: skip


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
        urls = ["".join(code.itertext()) for code in card.iter("code")]
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


def test_two_opml_files_everything_or_by_module(out: Path) -> None:
    everything = ET.parse(out / "feeds.opml").getroot()
    assert everything.get("version") == "2.0"
    # The head elements the W3C validator knows: it calls OPML 2.0's <docs> an error.
    known = {"title", "dateCreated", "dateModified", "ownerName", "ownerEmail", "ownerId"}
    head = everything.find("head")
    assert head is not None and {element.tag for element in head} <= known
    assert everything.findtext("head/title") == "Fixture Guide · Mọi thứ"
    modules = ET.parse(out / "modules.opml").getroot()
    assert modules.findtext("head/title") == "Fixture Guide · Theo module"
    urls = [[o.get("xmlUrl") for o in root.iter("outline")] for root in (everything, modules)]
    assert urls == [
        [FEEDS_URL + "feed.xml"],
        [FEEDS_URL + "modules/prerequisites/feed.xml", FEEDS_URL + "modules/cuda/feed.xml"],
    ]
    catalog = json.loads((out / "feeds.json").read_text(encoding="utf-8"))
    assert catalog["opml_url"] == FEEDS_URL + "feeds.opml"
    assert catalog["modules_opml_url"] == FEEDS_URL + "modules.opml"
    # The index page offers them as two choices, and says what only "everything" has.
    tree = parse_html((out / "index.html").read_bytes())
    choices = tree.findall(".//div[@id='subscribe-all']/ul/li")
    assert [[a.get("href") for a in li.iter("a")] for li in choices] == [
        ["feeds.opml"],
        ["modules.opml"],
    ]
    assert "ghi chú về toàn bộ trang" in "".join(choices[0].itertext())


def newsboat_import(newsboat: str, opml: Path, home: Path) -> tuple[list[str], list[str]]:
    """Import ``opml`` into a fresh newsboat, reload: (subscribed URLs, guid of every item)."""
    home.mkdir()
    urls, cache = home / "urls", home / "cache.db"
    urls.touch()
    common = ["-u", str(urls), "-c", str(cache), "-C", "/dev/null"]
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    for args in (["-i", str(opml)], ["-x", "reload"]):
        done = subprocess.run(
            [newsboat, *common, *args],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            check=False,
            env=env,
        )
        assert done.returncode == 0, done.stderr
    subscribed = [line.split()[0] for line in urls.read_text(encoding="utf-8").splitlines()]
    with contextlib.closing(sqlite3.connect(cache)) as db:
        guids = [guid for (guid,) in db.execute("SELECT guid FROM rss_item")]
    return subscribed, guids


@pytest.mark.external
def test_newsboat_gets_every_item_once_from_either_opml(tmp_path: Path, run_cli: RunCli) -> None:
    newsboat = require_program("newsboat")
    out = tmp_path / "out"
    with serve(out) as base:
        entries = write_site(tmp_path / "entries", url=base)
        code, _, _ = run_cli("build", "--entries", str(entries), "--out", str(out), "-q")
        assert code == 0
        everything = newsboat_import(newsboat, out / "feeds.opml", tmp_path / "everything")
        by_module = newsboat_import(newsboat, out / "modules.opml", tmp_path / "modules")
    ids = {url: [e.id for e in feedparser.parse(out / url).entries] for url in MODULE_FEEDS}
    all_ids = [entry.id for entry in feedparser.parse(out / "feed.xml").entries]
    assert len(all_ids) == 14 and len(set(all_ids)) == 14
    assert everything[0] == [base + "feed.xml"]
    assert sorted(everything[1]) == sorted(all_ids)  # every item, exactly once
    assert by_module[0] == [base + url for url in MODULE_FEEDS]
    assert sorted(by_module[1]) == sorted(ids[MODULE_FEEDS[0]] + ids[MODULE_FEEDS[1]])
    # The site's notes are in "everything" only, as the index page says.
    assert set(all_ids) - set(by_module[1]) == {i for i in all_ids if "/note-" in i} != set()


def build_site(tmp_path: Path, run_cli: RunCli, settings: str = "", **site: int) -> Path:
    entries = write_site(tmp_path / "entries", **site)  # type: ignore[arg-type]
    if settings:
        toml = entries / "site.toml"
        toml.write_text(toml.read_text(encoding="utf-8") + settings, encoding="utf-8")
    out = tmp_path / "out"
    assert run_cli("build", "--entries", str(entries), "--out", str(out), "-q")[0] == 0
    return out


def test_pages_say_only_what_is_true_and_link_to_everything(
    out: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    archives = "Lịch sử đầy đủ nằm trong lưu trữ theo tháng"
    for page in PAGES:
        assert archives in (out / page).read_text(encoding="utf-8")
    complete = build_site(tmp_path, run_cli)
    for page in PAGES:
        assert archives not in (complete / page).read_text(encoding="utf-8")
    # The latest changes end with a link to all of them: the changelog page.
    main = parse_html((out / "index.html").read_bytes()).find(".//main")
    assert main is not None and main[-1].tag == "p"
    assert [a.get("href") for a in main[-1].iter("a")] == [
        "https://example.org/guide/blog/update-log/"
    ]


@pytest.mark.parametrize("page", PAGES)
def test_every_feed_link_is_named_with_its_feed(out: Path, page: str) -> None:
    tree = parse_html((out / page).read_bytes())
    feed_links = [
        a for a in tree.iter("a") if a.get("type") in MEDIA_TYPES.values() or a.get("rel")
    ]
    labels = [a.get("aria-label") or "" for a in feed_links]
    assert len(feed_links) > 6 and len(set(labels)) == len(labels), labels
    module = "Module 2 · Lập trình CUDA" if "cuda" in page else "Module 1 · Kiến thức tiền đề"
    assert f"RSS 2.0 của Fixture Guide · {module}" in labels
    assert f"Thêm Fixture Guide · {module} vào Feedly" in labels
    for a in feed_links:  # what a screen reader says starts with what is shown
        assert (a.get("aria-label") or "").startswith(("".join(a.itertext()), "Thêm")), labels
    for code in tree.iterfind(".//code[@class='url']"):
        assert "".join(code.itertext()).count("/") - 2 == len(code.findall("wbr"))


def test_the_pages_link_the_changelog_encoded_and_list_only_what_a_feed_carries(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """Three finds of a helper: a changelog URL with a space was an href with a space (the
    feeds encode it); with [feeds] all = false, "the latest changes" listed a site-wide note no
    feed carries; a description ending in "." was shown with ".."."""
    entries = write_site(tmp_path / "entries", max_items=3)
    toml = entries / "site.toml"
    text = toml.read_text(encoding="utf-8")
    text = text.replace("/blog/update-log/", "/nhật ký/").replace(
        'của Fixture Guide"', 'của Fixture Guide."'
    )
    toml.write_text(text.replace("[feeds]\n", "[feeds]\nall = false\n"), encoding="utf-8")
    out = tmp_path / "out"
    assert run_cli("build", "--entries", str(entries), "--out", str(out), "-q")[0] == 0
    index = parse_html((out / "index.html").read_bytes())
    pages = [index, *(parse_html((out / p).read_bytes()) for p in PAGES if p != "index.html")]
    encoded = "https://example.org/guide/nh%E1%BA%ADt%20k%C3%BD/"
    for page in pages:
        assert encoded in [a.get("href") for a in page.iter("a")]
        assert not [a for a in page.iter("a") if " " in (a.get("href") or "")]
    listed = "".join(index.find(".//main").itertext())
    assert "Ghi chú 1 ngày" not in listed  # the notes of write_site's release without a module
    assert "Bài 1 ngày" in listed
    assert [p.text for p in index.iter("p") if p.get("class") == "lead"] == [
        "Nhật ký cập nhật của Fixture Guide."
    ]


def test_a_name_in_a_filled_in_value_is_not_filled_in_again(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """A site titled "News {reader}" was labelled "Thêm News Feedly vào Feedly" (a helper)."""
    entries = write_site(tmp_path / "entries", max_items=3)
    toml = entries / "site.toml"
    text = toml.read_text(encoding="utf-8").replace('"Fixture Guide"', '"News {reader} {x}"', 1)
    toml.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    assert run_cli("build", "--entries", str(entries), "--out", str(out), "-q")[0] == 0
    labels = [a.get("aria-label") for a in parse_html((out / "index.html").read_bytes()).iter("a")]
    assert "Thêm News {reader} {x} vào Feedly" in labels


def test_every_word_of_the_pages_comes_from_the_settings(tmp_path: Path, run_cli: RunCli) -> None:
    from infrafeed.source.models import Words

    defaults = Words()
    # Each with the {names} its default has: no other is filled in.
    names = {
        name: " ".join(re.findall(r"\{\w+\}", getattr(defaults, name)))
        for name in Words.model_fields
    }
    english = "".join(
        f'{name} = "{f"W{i} {names[name]}".strip()}"\n' for i, name in enumerate(names)
    )
    english = english.replace('date = "W', 'date = "%Y-%m-%d W').replace("W", "Word ")
    out = build_site(tmp_path, run_cli, f"\n[words]\n{english}", max_items=3)
    fragments = {
        part.strip(" :·()")
        for name in Words.model_fields
        for part in re.split(r"\{\w+\}|%\w", getattr(defaults, name))
    }
    # Words that the entries themselves use ("cập nhật") may stay, in their text.
    data = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "entries").rglob("*.toml"))
    fragments = {f for f in fragments if any(c.isalpha() for c in f) and f not in data}
    fragments -= {"RSS · Atom · JSON Feed"}
    assert len(fragments) > 25
    for page in PAGES:
        text = (out / page).read_text(encoding="utf-8")
        assert "Word " in text
        assert [f for f in fragments if f in text] == [], page
