"""A real feed reader, newsboat, reads the built feeds over HTTP from 127.0.0.1."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import SHIPPED_ENTRIES, require_program
from infrafeed.build import build
from infrafeed.feeds.items import build_items
from infrafeed.feeds.specs import feed_specs, select_all
from infrafeed.source.loader import load
from localhttp import serve

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
