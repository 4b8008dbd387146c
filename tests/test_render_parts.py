"""Documents joined from per-item parts are byte for byte what feedgen and json.dumps write.

The reference renderers below are the straightforward ones: every entry
added to one FeedGenerator and the whole document serialized, and the whole
JSON Feed dumped at once. Parts exist only to render each item once.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import SHIPPED_ENTRIES, SMALL_SITE
from infrafeed.document import FeedDocument, newest_date
from infrafeed.feeds import FORMATS, feed_specs, select
from infrafeed.items import Item, build_items
from infrafeed.loader import load
from infrafeed.render import render_all
from infrafeed.render_feedgen import _feed, rfc822
from infrafeed.urls import absolute


def reference_xml(doc: FeedDocument) -> bytes:
    fg = _feed(doc)
    for item in doc.items:
        entry = fg.add_entry(order="append")
        entry.id(item.id)
        entry.guid(item.id, permalink=False)
        entry.title(item.title)
        entry.link(href=item.link, rel="alternate", type="text/html")
        entry.published(item.published)
        entry.updated(item.published)
        entry.content(item.content_html, type="html")
        if item.summary:
            entry.summary(item.summary)
        for category in item.categories:
            entry.category(term=category)
    if doc.format.name == "atom":
        return bytes(fg.atom_str(pretty=True))
    fg.lastBuildDate(doc.updated)
    fg.docs("https://www.rssboard.org/rss-specification")
    return bytes(fg.rss_str(pretty=True))


def reference_json(doc: FeedDocument) -> bytes:
    site, spec = doc.site, doc.spec
    author = {"name": site.author.name}
    if site.author.url:
        author["url"] = site.author.url
    feed: dict[str, Any] = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": spec.title,
        "home_page_url": spec.home_url,
        "feed_url": doc.self_url,
        "description": spec.description,
    }
    if site.icon:
        feed["icon"] = absolute(site.url, site.icon)
    feed["authors"] = [author]
    feed["language"] = site.language
    items = []
    for item in doc.items:
        out: dict[str, Any] = {
            "id": item.id,
            "url": item.link,
            "title": item.title,
            "content_html": item.content_html,
        }
        if item.summary:
            out["summary"] = item.summary
        out["date_published"] = item.published.isoformat()
        out["tags"] = list(item.categories)
        items.append(out)
    feed["items"] = items
    return (json.dumps(feed, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def reference(site_items: tuple[Any, tuple[Item, ...]]) -> dict[str, bytes]:
    site, items = site_items
    out = {}
    for spec in feed_specs(site):
        chosen = select(items, spec)
        for fmt in FORMATS:
            doc = FeedDocument(
                site, spec, fmt, chosen, spec.url(site, fmt), newest_date(site, chosen), "9.9"
            )
            render = reference_json if fmt.name == "json" else reference_xml
            out[spec.path(fmt)] = render(doc)
    return out


@pytest.mark.parametrize("entries", [SMALL_SITE, SHIPPED_ENTRIES], ids=["small", "shipped"])
def test_parts_join_to_the_reference_documents(entries: Path) -> None:
    changelog = load(entries)
    items = build_items(changelog)
    site = changelog.site
    if site.icon is None:
        site = site.model_copy(update={"icon": "favicon.png"})
    expected = reference((site, items))
    got = dict(render_all(site, feed_specs(site), items, "9.9"))
    assert got.keys() == expected.keys()
    for path in expected:
        assert got[path] == expected[path], path


def test_a_feed_without_items_is_the_reference_document() -> None:
    site = load(SMALL_SITE).site
    got = dict(render_all(site, feed_specs(site), (), "9.9"))
    assert got == reference((site, ()))


ZONES = st.sampled_from(["UTC", "Asia/Shanghai", "America/St_Johns", "Asia/Kathmandu"])
# Text as entries may hold it: anything XML 1.0 allows, markup characters included.
TEXT = st.text(
    st.characters(blacklist_categories=["Cs", "Cc"], blacklist_characters="\ufffe\uffff")
    | st.sampled_from("<>&\"'\n\t\\`*"),
    min_size=1,
    max_size=40,
)


@st.composite
def items(draw: st.DrawFn) -> Item:
    zone = ZoneInfo(draw(ZONES))
    moment = draw(st.datetimes(dt.datetime(1000, 1, 1), dt.datetime(9998, 12, 31)))
    return Item(
        id=f"tag:example.org,2026-01-01:{draw(st.integers(0, 10**6))}",
        kind="new",
        module=None,
        title=draw(TEXT),
        link="https://example.org/guide/"
        + draw(st.from_regex(r"[a-z0-9/#%-]{0,20}", fullmatch=True)),
        published=moment.replace(tzinfo=zone),
        content_html=draw(TEXT),
        summary=draw(st.none() | TEXT),
        categories=tuple(draw(st.lists(TEXT, max_size=3))),
        source="test",
    )


SITE = load(SMALL_SITE).site
ONE_FEED = SITE.model_copy(update={"feeds": SITE.feeds.model_copy(update={"modules": False})})


@settings(max_examples=200, deadline=None)
@given(st.lists(items(), max_size=4))
def test_any_items_join_to_the_reference_documents(drawn: list[Item]) -> None:
    expected = reference((ONE_FEED, tuple(drawn)))
    assert dict(render_all(ONE_FEED, feed_specs(ONE_FEED), tuple(drawn), "9.9")) == expected


@given(st.datetimes(dt.datetime(1000, 1, 1), dt.datetime(9999, 12, 31)), ZONES)
def test_rfc822_dates_are_feedgens(moment: dt.datetime, zone: str) -> None:
    # Imported here: feedgen.util uses lxml.etree without importing it itself.
    from feedgen.util import formatRFC2822

    aware = moment.replace(tzinfo=ZoneInfo(zone))
    assert rfc822(aware) == formatRFC2822(aware)
