"""The published feeds as the site files describe them: views, ``feeds.json`` and OPML.

The pages, ``feeds.json``, the OPML files and ``head-links.html`` show the same
facts about each feed, decided here once from the feeds' histories. Pure.
"""

from __future__ import annotations

import email.utils
import json
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple
from urllib.parse import quote

from ..feeds.history import Document, FeedHistory
from ..feeds.specs import FORMATS, FeedSpec, Format, document_path, document_url
from ..source.models import Module, Site
from ..source.urls import absolute

# Readers whose "subscribe" address takes the feed's URL as a parameter, in the
# forms they document for subscribe buttons; everyone else copies the URL.
READERS = (
    ("Feedly", "https://feedly.com/i/subscription/feed%2F{url}"),
    ("Inoreader", "https://www.inoreader.com/?add_feed={url}"),
)
# Two ways to subscribe to everything, never both: each item would come twice.
OPML = {"everything": "feeds.opml", "modules": "modules.opml"}


class FormatLink(NamedTuple):
    format: Format
    path: str  # below the output folder
    url: str  # public, absolute


@dataclass(frozen=True)
class FeedView:
    """A feed as the site files show it: its spec and history, and where its files are."""

    spec: FeedSpec
    history: FeedHistory
    module: Module | None
    page_path: str  # this feed's HTML page below the output folder
    links: tuple[FormatLink, ...]  # the subscription document in every format
    subscribe: tuple[tuple[str, str], ...]  # (reader, its subscribe URL)
    archives: tuple[tuple[str, int, tuple[FormatLink, ...]], ...]  # (month, count, links)


def _links(site: Site, document: Document) -> tuple[FormatLink, ...]:
    folder = document.folder
    return tuple(
        FormatLink(f, document_path(folder, f), document_url(site, f, folder)) for f in FORMATS
    )


def feed_views(site: Site, histories: Sequence[FeedHistory]) -> tuple[FeedView, ...]:
    views = []
    for history in histories:
        spec, links = history.spec, _links(site, history.current)
        rss = quote(links[0].url, safe="")  # readers subscribe to RSS: every reader knows it
        views.append(
            FeedView(
                spec,
                history,
                None if spec.module is None else site.module(spec.module),
                f"{spec.folder}/index.html" if spec.folder else "index.html",
                links,
                tuple((name, form.format(url=rss)) for name, form in READERS),
                tuple((a.month or "", len(a.items), _links(site, a)) for a in history.archives),
            )
        )
    return tuple(views)


def opml_files(views: Sequence[FeedView]) -> dict[str, list[FeedView]]:
    """The OPML files to write, by name, with their feeds: only those that have some."""
    found = {
        OPML["everything"]: [view for view in views if view.module is None],
        OPML["modules"]: [view for view in views if view.module is not None],
    }
    return {name: chosen for name, chosen in found.items() if chosen}


def render_feeds_json(site: Site, views: Sequence[FeedView]) -> bytes:
    """One record per feed and format, flat, so that a site component picks a page's
    feeds with one filter (module.slug). Fixed key order, UTF-8."""
    feeds = []
    for view in views:
        m, spec, current = view.module, view.spec, view.history.current
        module = None if m is None else {"number": m.number, "name": m.name, "slug": m.slug}
        for link in view.links:
            feeds.append(
                {
                    "id": f"{spec.key}/{link.format.name}",
                    "feed": spec.key,
                    "title": spec.title,
                    "module": module,
                    "format": link.format.name,
                    "media_type": link.format.media_type,
                    "url": link.url,
                    "page_url": absolute(site.feeds.url, view.page_path),
                    "item_count": len(current.items),
                    "total_item_count": len(view.history.items),
                    "complete": view.history.complete,
                    "updated": current.updated.isoformat(),
                }
            )
    files = opml_files(views)
    data = {"version": 1, "title": site.title, "page_url": absolute(site.feeds.url, "index.html")}
    for key, name in (("opml_url", OPML["everything"]), ("modules_opml_url", OPML["modules"])):
        data[key] = absolute(site.feeds.url, name) if name in files else None
    data["feeds"] = feeds
    return (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def render_opml(site: Site, title: str, views: Sequence[FeedView]) -> bytes:
    """OPML 2.0 listing ``views`` by their RSS documents (every reader knows RSS)."""
    root = ET.Element("opml", version="2.0")
    head = ET.SubElement(root, "head")
    ET.SubElement(head, "title").text = title
    newest = max(view.history.current.updated for view in views)
    ET.SubElement(head, "dateModified").text = email.utils.format_datetime(newest)
    ET.SubElement(head, "ownerName").text = site.author.name
    if site.author.url:
        ET.SubElement(head, "ownerId").text = site.author.url
    ET.SubElement(head, "docs").text = "http://opml.org/spec2.opml"
    body = ET.SubElement(root, "body")
    for view in views:
        spec = view.spec
        attributes = {"type": "rss", "text": spec.title, "title": spec.title}
        attributes |= {"description": spec.description, "xmlUrl": view.links[0].url}
        attributes |= {"htmlUrl": spec.home_url, "language": site.language, "version": "RSS2"}
        ET.SubElement(body, "outline", attributes)
    ET.indent(root, space="  ")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{ET.tostring(root, "unicode")}\n'.encode()
