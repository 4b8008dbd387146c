"""Documents joined from per-item parts are byte for byte what feedgen and json.dumps write.

The reference is the plain way: every entry added to one FeedGenerator and
the whole document serialized, the whole JSON Feed dumped at once
(``render_rss``, ``render_atom``, ``render_json``), and ``history.plan``
measuring each page by rendering it in every format. The build renders each
item once and measures by arithmetic; a feedgen or lxml upgrade that prints
differently fails here instead of changing published bytes.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import re
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from feedgen.entry import FeedEntry
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import SHIPPED_ENTRIES, SMALL_SITE
from infrafeed.feeds import history
from infrafeed.feeds.history import Document, plan
from infrafeed.feeds.items import Item, build_items
from infrafeed.feeds.specs import FORMATS, FeedSpec, document_path, feed_specs, select_all
from infrafeed.render import documents, jsonfeed, rss_atom
from infrafeed.render.documents import head, item_parts
from infrafeed.render.parts import Frame, Head
from infrafeed.source.loader import load
from infrafeed.source.models import Site
from outputs import rendered_files

FEED_NAMES = {fmt.filename for fmt in FORMATS}
VERSION = "9.9"


# The plain way, the oracle: every entry added to one FeedGenerator and the whole
# document serialized; the whole JSON Feed dumped at once. It reaches into the
# renderers' private helpers on purpose: it must build the very same feedgen objects.
def common_fields(entry: FeedEntry, item: Item, site: Site, *, rss: bool = False) -> None:
    name = rss_atom.comment(site.author.name) if rss else site.author.name
    author = {"name": name, "uri": site.author.url, "email": site.author.email}
    entry.id(item.id)
    entry.author({key: value for key, value in author.items() if value})
    entry.guid(item.id, permalink=False)
    entry.title(item.title)
    entry.link(href=item.link, rel="alternate", type="text/html")
    entry.updated(item.published)
    for category in item.categories:
        entry.category(term=category)


# The RSS Best Practices Profile: "&" and "<" in plain text as hexadecimal character
# references, where feedgen (lxml) writes named ones; the HTML of an item's description,
# content and summary keeps those. (An item's <description> is indented deeper than the
# channel's, which is plain text.)
ITEM_HTML = re.compile(
    rb"(\n      <description>.*?</description>"
    rb'|<content type="html">.*?</content>|<summary type="html">.*?</summary>)',
    re.S,
)


def profiled(document: bytes) -> bytes:
    parts = ITEM_HTML.split(document)
    for index in range(0, len(parts), 2):
        parts[index] = parts[index].replace(b"&amp;", b"&#x26;").replace(b"&lt;", b"&#x3C;")
    return b"".join(parts)


def whole_rss(doc: Head, items: tuple[Item, ...]) -> bytes:
    fg = rss_atom._feed(doc)
    for item in items:
        entry = fg.add_entry(order="append")
        common_fields(entry, item, doc.site, rss=True)  # the name in an RFC 822 comment
        entry.description(item.content_html)  # the HTML body, never the plain summary
        entry.pubDate(rss_atom.rss_moment(item.published))
        if not doc.site.author.email:
            entry.load_extension("dc", atom=False)
            entry.dc.dc_creator(doc.site.author.name)
    return profiled(rss_atom._rss_bytes(fg, doc))


def whole_atom(doc: Head, items: tuple[Item, ...]) -> bytes:
    fg = rss_atom._feed(doc)
    for item in items:
        entry = fg.add_entry(order="append")
        common_fields(entry, item, doc.site)
        entry.published(item.published)
        entry.content(item.content_html, type="html")
        if item.summary:
            entry.summary(html.escape(item.summary, quote=False), type="html")
    return profiled(rss_atom._atom_bytes(fg, doc))


def item_dict(item: Item, site: Site) -> dict[str, Any]:
    """The item as the whole JSON Feed holds it, for json.dumps."""
    out: dict[str, Any] = {
        "id": item.id,
        "url": item.link,
        "title": item.title,
        "content_html": item.content_html,
    }
    if item.summary:
        out["summary"] = item.summary
    out["date_published"] = item.published.isoformat()
    out["authors"] = jsonfeed._author(site.author)
    out["tags"] = list(item.categories)
    return out


def whole_json(doc: Head, items: tuple[Item, ...]) -> bytes:
    feed = jsonfeed._feed(doc)
    feed["items"] = [item_dict(item, doc.site) for item in items]
    return jsonfeed._dump(feed)


WHOLE = {"rss": whole_rss, "atom": whole_atom, "json": whole_json}


def whole_size(site: Site, spec: FeedSpec, document: Document) -> int:
    """How a document would measure, rendered in every format."""
    return max(
        len(WHOLE[f.name](head(site, spec, document, f, VERSION), document.items)) for f in FORMATS
    )


def reference(site: Site, items: tuple[Item, ...]) -> dict[str, bytes]:
    """Every feed document, planned and rendered the plain way."""
    out = {}
    for spec in feed_specs(site):
        planned = plan(site, spec, select_all(items, spec), partial(whole_size, site, spec))
        for document in planned.documents:
            for fmt in FORMATS:
                doc = head(site, spec, document, fmt, VERSION)
                out[document_path(document.folder, fmt)] = WHOLE[fmt.name](doc, document.items)
    return out


def joined(site: Site, items: tuple[Item, ...]) -> dict[str, bytes]:
    """The feed documents a build streams, each joined from its chunks."""
    return {
        path: b"".join(data)
        for path, data in rendered_files(site, items, VERSION)
        if path.rsplit("/", 1)[-1] in FEED_NAMES
    }


def with_feeds(site: Site, **feeds: object) -> Site:
    return site.model_copy(update={"feeds": site.feeds.model_copy(update=feeds)})


def variants(site: Site) -> list[Site]:
    """Complete feeds; archived ones (current and archive roles); a hub; an icon."""
    hub = with_feeds(site, hub="https://hub.example.org/")
    return [
        site,
        hub.model_copy(update={"favicon": "favicon.svg", "logo": "logo.png"}),
        site.model_copy(update={"author": site.author.model_copy(update={"email": "a@b.org"})}),
        with_feeds(site, max_items=2),
        with_feeds(hub, max_items=3),
        # Small enough that the subscription document's size decides its items.
        with_feeds(hub, max_bytes=6_000),
    ]


@pytest.mark.parametrize("entries", [SMALL_SITE, SHIPPED_ENTRIES], ids=["small", "shipped"])
def test_parts_join_to_the_reference_documents(entries: Path) -> None:
    changelog = load(entries)
    items = build_items(changelog)
    for site in variants(changelog.site):
        expected = reference(site, items)
        assert any("/archive/" in p or p.startswith("archive/") for p in expected) == (
            site.feeds.max_items < 20 or site.feeds.max_bytes < 10_000
        )
        got = joined(site, items)
        assert got.keys() == expected.keys()
        for path in expected:
            assert got[path] == expected[path], path


def test_feeds_without_items_are_the_reference_documents() -> None:
    site = load(SMALL_SITE).site
    for variant in variants(site):
        assert joined(variant, ()) == reference(variant, ())


def test_the_plan_sees_the_sizes_of_the_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    """Arithmetic on the parts' lengths gives what rendering a document would measure."""
    changelog = load(SHIPPED_ENTRIES)
    site = with_feeds(changelog.site, max_bytes=6_000, hub="https://hub.example.org/")
    measured: list[int] = []

    def checking_plan(
        site: Site, spec: FeedSpec, items: tuple[Item, ...], size_of: Callable[[Document], int]
    ) -> object:
        def checked(document: Document) -> int:
            measured.append(size_of(document))
            assert measured[-1] == whole_size(site, spec, document), spec.key
            return measured[-1]

        return history.plan(site, spec, items, checked)

    monkeypatch.setattr(documents, "plan", checking_plan)
    for _ in rendered_files(site, build_items(changelog), VERSION):
        pass
    assert len(measured) > len(feed_specs(site))  # the binary search ran


def test_each_item_and_each_frame_is_rendered_once(monkeypatch: pytest.MonkeyPatch) -> None:
    changelog = load(SHIPPED_ENTRIES)
    items = build_items(changelog)
    site = with_feeds(changelog.site, max_bytes=6_000)
    rendered: Counter[str] = Counter()
    framed: Counter[tuple[object, ...]] = Counter()
    real_item, real_frame = rss_atom.item_elements, rss_atom.rss_frame

    def counting_item(item: Item, site: Site) -> tuple[bytes, bytes]:
        rendered[item.id] += 1
        return real_item(item, site)

    def counting_frame(doc: Head) -> Frame:
        framed[doc.role, doc.self_url, doc.updated, doc.prev_archive_url] += 1
        return real_frame(doc)

    monkeypatch.setattr(rss_atom, "item_elements", counting_item)
    monkeypatch.setattr(rss_atom, "rss_frame", counting_frame)
    feeds = joined(site, items)
    # Every item is in the all-items feed and most in a module feed too.
    assert set(rendered) == {item.id for item in items}
    assert set(rendered.values()) == {1}
    assert set(framed.values()) == {1}
    assert len(framed) >= len([path for path in feeds if path.endswith("feed.xml")])


def test_a_json_part_is_its_object_inside_the_feed() -> None:
    changelog = load(SMALL_SITE)
    items = build_items(changelog)
    for item, parts in zip(items, item_parts(changelog.site, items), strict=True):
        part = json.loads(parts.json)
        assert part["id"] == item.id and part.get("summary") == item.summary


@given(
    st.binary(max_size=5),
    st.binary(max_size=3),
    st.binary(max_size=5),
    st.binary(max_size=5),
    st.lists(st.binary(max_size=8), max_size=2100),
)
def test_a_frames_size_is_its_joined_length(
    head: bytes, separator: bytes, tail: bytes, empty: bytes, parts: list[bytes]
) -> None:
    """However many parts (more than one block of them included), size and bytes agree."""
    frame = Frame(head, separator, tail, empty)
    data = b"".join(frame.chunks(parts))
    assert frame.size(len(parts), sum(map(len, parts))) == len(data)
    assert data == (head + separator.join(parts) + tail if parts else empty)


ZONES = st.sampled_from(["UTC", "Asia/Shanghai", "America/St_Johns", "Asia/Kathmandu"])
# Text as entries may hold it: anything XML 1.0 allows, markup and CDATA's end included.
TEXT = st.lists(
    st.characters(blacklist_categories=["Cs", "Cc"], blacklist_characters="\ufffe\uffff")
    | st.sampled_from(["<", ">", "&", '"', "'", "\n", "\r", "\t", "]]>", "😀", "Tiếng Việt", "ễ"]),
    min_size=1,
    max_size=20,
).map("".join)


@st.composite
def feed_items(draw: st.DrawFn) -> tuple[Item, ...]:
    """A few items over a few months, newest release first, as build_items gives them."""
    days = sorted(
        draw(st.lists(st.dates(dt.date(2026, 1, 1), dt.date(2026, 6, 30)), max_size=6)),
        reverse=True,
    )
    items = []
    for n, day in enumerate(days):
        zone = ZoneInfo(draw(ZONES))
        published = dt.datetime(day.year, day.month, day.day, 12, tzinfo=zone)
        items.append(
            Item(
                id=f"tag:example.org,2026-01-01:{day}/{n}/new",
                module=None,
                title=draw(TEXT),
                link="https://example.org/guide/"
                + draw(st.from_regex(r"[a-z0-9/#%&'?=;-]{0,20}", fullmatch=True)),
                published=published - dt.timedelta(seconds=draw(st.integers(0, 10**6))),
                released=day,
                content_html=draw(TEXT),
                summary=draw(st.none() | TEXT),
                categories=tuple(draw(st.lists(TEXT, max_size=3))),
                source="test",
                summary_html=None,
            )
        )
    return tuple(items)


SITE = with_feeds(load(SMALL_SITE).site, modules=False)


@settings(max_examples=150, deadline=None)
@given(
    feed_items(),
    st.integers(min_value=1, max_value=4),
    st.sampled_from([100_000, 4_096, 2_500]),
    st.booleans(),
    st.tuples(
        TEXT, st.none() | st.just("a&b@example.org"), st.none() | st.just("https://x.org/?a&b")
    ),
)
def test_any_items_join_to_the_reference_documents(
    items: tuple[Item, ...],
    max_items: int,
    max_bytes: int,
    hub: bool,
    author: tuple[str, str | None, str | None],
) -> None:
    site = with_feeds(
        SITE,
        max_items=max_items,
        max_bytes=max_bytes,
        hub="https://hub.example.org/" if hub else None,
    )
    name, email, url = author
    site = site.model_copy(
        update={"author": site.author.model_copy(update={"name": name, "email": email, "url": url})}
    )
    assert joined(site, items) == reference(site, items)
