"""A real feed reader, newsboat, reads the built feeds over HTTP from 127.0.0.1."""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import subprocess
import urllib.request
from pathlib import Path

import feedparser
import pytest

from conftest import SHIPPED_ENTRIES, require_program
from infrafeed.build import build
from infrafeed.feeds.items import build_items
from infrafeed.feeds.specs import feed_specs, select_all
from infrafeed.source.loader import load
from localhttp import content_types, serve
from pngs import read_png

pytestmark = pytest.mark.external


def read_with_newsboat(newsboat: str, url: str, home: Path) -> list[tuple[str, str, int, str]]:
    """(guid, title, pubDate, url) of every item newsboat stored for ``url``."""
    home.mkdir()
    (home / "urls").write_text(url + "\n", encoding="utf-8")
    cache = home / "cache.db"
    subprocess.run(
        [newsboat, "-u", str(home / "urls"), "-c", str(cache), "-C", "/dev/null", "-x", "reload"],
        env={"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        check=True,
        timeout=60,
        capture_output=True,
    )
    with contextlib.closing(sqlite3.connect(cache)) as db:
        return list(
            db.execute(
                "SELECT guid, title, pubDate, url FROM rss_item WHERE feedurl = ? "
                "ORDER BY pubDate DESC",
                (url,),
            )
        )


def test_newsboat_shows_every_item_with_title_and_date(tmp_path: Path) -> None:
    newsboat = require_program("newsboat")
    out = tmp_path / "output"
    shutil.copytree(SHIPPED_ENTRIES, tmp_path / "entries")  # a build writes beside the entries
    build(tmp_path / "entries", out)
    changelog = load(SHIPPED_ENTRIES)
    items = build_items(changelog)
    specs = {spec.folder: spec for spec in feed_specs(changelog.site)}
    with serve(out) as base:
        for folder, spec in specs.items():
            expected = [
                (i.id, i.title, int(i.published.timestamp()), i.link)
                for i in select_all(items, spec)
            ]
            for name in ("feed.xml", "atom.xml"):
                relative = f"{folder}/{name}" if folder else name
                got = read_with_newsboat(
                    newsboat, base + relative, tmp_path / relative.replace("/", "-")
                )
                assert got == expected, relative


def test_newsboat_gets_every_shipped_item_once_from_feeds_opml(tmp_path: Path) -> None:
    """Subscribe-all with the OPML of everything: every item once, none twice."""
    newsboat = require_program("newsboat")
    out, home = tmp_path / "output", tmp_path / "home"
    entries = tmp_path / "entries"
    shutil.copytree(SHIPPED_ENTRIES, entries)
    items = build_items(load(entries))
    with serve(out) as base:
        settings = entries / "site.toml"
        text = settings.read_text(encoding="utf-8")
        settings.write_text(text.replace(load(entries).site.feeds.url, base), encoding="utf-8")
        build(entries, out)
        home.mkdir()
        common = ["-u", str(home / "urls"), "-c", str(home / "cache.db"), "-C", "/dev/null"]
        (home / "urls").touch()
        for args in (["-i", str(out / "feeds.opml")], ["-x", "reload"]):
            subprocess.run(
                [newsboat, *common, *args],
                env={"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                check=True,
                timeout=60,
                capture_output=True,
                stdin=subprocess.DEVNULL,
            )
    with contextlib.closing(sqlite3.connect(home / "cache.db")) as db:
        got = [guid for (guid,) in db.execute("SELECT guid FROM rss_item ORDER BY pubDate DESC")]
    assert got == [item.id for item in items] and len(set(got)) == len(got) == 121


def test_the_feeds_images_resolve_to_served_pngs(tmp_path: Path) -> None:
    """Served where [feeds] url says (rewritten to 127.0.0.1, as readers would fetch it): each
    format's image URLs, as feedparser reads them, give the build's PNG files, as image/png.
    newsboat shows no images (its cache keeps none); it reads these feeds whole all the same."""
    newsboat = require_program("newsboat")
    out, entries = tmp_path / "output", tmp_path / "entries"
    shutil.copytree(SHIPPED_ENTRIES, entries)
    with serve(out, content_types()) as base:
        settings = entries / "site.toml"
        text = settings.read_text(encoding="utf-8")
        settings.write_text(text.replace(load(entries).site.feeds.url, base), encoding="utf-8")
        build(entries, out)
        rss = feedparser.parse(base + "feed.xml")
        atom = feedparser.parse(base + "modules/cuda/atom.xml")
        with urllib.request.urlopen(base + "feed.json", timeout=5) as response:
            feed = json.load(response)
        images = {
            rss.feed.image.href: 64,
            atom.feed.icon: 64,
            feed["favicon"]: 64,
            feed["icon"]: 512,
        }
        assert set(images) == {base + "favicon.png", base + "icon.png"}
        assert "logo" not in atom.feed  # RFC 4287 asks a 2:1 logo; icon.png is square
        assert (rss.feed.image.width, rss.feed.image.height) == (64, 64)
        for url, side in images.items():
            with urllib.request.urlopen(url, timeout=5) as response:
                assert response.headers["Content-Type"] == "image/png", url
                png = read_png(response.read())
            assert (png.width, png.height) == (side, side), url
        assert len(read_with_newsboat(newsboat, base + "feed.xml", tmp_path / "home")) == 121
