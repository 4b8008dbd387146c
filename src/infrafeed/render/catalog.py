"""The list of published feeds, as the site files describe them.

The HTML pages, ``feeds.json``, ``feeds.opml`` and ``head-links.html`` all
show the same facts about each feed (its formats and URLs, how many items,
how recent, its archives); they are decided here once, from the feeds'
:class:`~infrafeed.history.FeedHistory`. Pure.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from ..feeds.history import Document, FeedHistory
from ..feeds.specs import FORMATS, Format, document_path
from ..source.models import Module, Site
from ..source.urls import absolute

# Readers whose "subscribe" address takes the feed's URL as a parameter, in the
# forms they document for subscribe buttons. A reader is listed only when its
# form is well established; everyone else uses the plain links and copyable URL.
READERS: tuple[tuple[str, str], ...] = (
    ("Feedly", "https://feedly.com/i/subscription/feed%2F{url}"),
    ("Inoreader", "https://www.inoreader.com/?add_feed={url}"),
)


@dataclass(frozen=True)
class FormatLink:
    format: Format
    label: str  # "RSS 2.0"
    path: str  # below the output folder
    url: str  # public, absolute


@dataclass(frozen=True)
class ArchiveLink:
    month: str  # "2026-03"
    count: int
    links: tuple[FormatLink, ...]


@dataclass(frozen=True)
class SubscribeLink:
    reader: str
    url: str


@dataclass(frozen=True)
class FeedView:
    key: str
    title: str
    description: str
    module: Module | None
    home_url: str
    page_path: str  # this feed's HTML page below the output folder
    links: tuple[FormatLink, ...]  # the subscription document in every format
    subscribe: tuple[SubscribeLink, ...]
    count: int  # items in the subscription document
    total: int  # items in the whole feed, archives included
    updated: dt.datetime
    complete: bool
    archives: tuple[ArchiveLink, ...]  # newest first

    def link(self, name: str) -> FormatLink:
        return next(link for link in self.links if link.format.name == name)


LABELS = {"rss": "RSS 2.0", "atom": "Atom 1.0", "json": "JSON Feed 1.1"}


def page_path(folder: str) -> str:
    return f"{folder}/index.html" if folder else "index.html"


def feed_views(site: Site, histories: Sequence[FeedHistory]) -> tuple[FeedView, ...]:
    return tuple(_view(site, history) for history in histories)


def _links(site: Site, document: Document) -> tuple[FormatLink, ...]:
    return tuple(
        FormatLink(
            fmt,
            LABELS[fmt.name],
            document_path(document.folder, fmt),
            absolute(site.feeds.url, document_path(document.folder, fmt)),
        )
        for fmt in FORMATS
    )


def _view(site: Site, history: FeedHistory) -> FeedView:
    spec = history.spec
    links = _links(site, history.current)
    # Readers subscribe to the RSS document: the format every reader knows.
    rss = next(link.url for link in links if link.format.name == "rss")
    return FeedView(
        key=spec.key,
        title=spec.title,
        description=spec.description,
        module=None if spec.module is None else site.module(spec.module),
        home_url=spec.home_url,
        page_path=page_path(spec.folder),
        links=links,
        subscribe=tuple(
            SubscribeLink(name, template.format(url=quote(rss, safe="")))
            for name, template in READERS
        ),
        count=len(history.current.items),
        total=history.total,
        updated=history.current.updated,
        complete=history.complete,
        archives=tuple(
            ArchiveLink(archive.month or "", len(archive.items), _links(site, archive))
            for archive in history.archives
        ),
    )


# feeds.json: one record per feed and format, flat, so a site component can pick
# the feeds of a page with one filter (module.slug). Fixed key order, UTF-8.
FEEDS_JSON_VERSION = 1


def render_feeds_json(site: Site, views: Sequence[FeedView]) -> bytes:
    feeds: list[dict[str, Any]] = []
    for view in views:
        module = None
        if view.module is not None:
            module = {
                "number": view.module.number,
                "name": view.module.name,
                "slug": view.module.slug,
            }
        for link in view.links:
            feeds.append(
                {
                    "id": f"{view.key}/{link.format.name}",
                    "feed": view.key,
                    "title": view.title,
                    "module": module,
                    "format": link.format.name,
                    "media_type": link.format.media_type,
                    "url": link.url,
                    "page_url": absolute(site.feeds.url, view.page_path),
                    "item_count": view.count,
                    "total_item_count": view.total,
                    "complete": view.complete,
                    "updated": view.updated.isoformat(),
                }
            )
    data = {
        "version": FEEDS_JSON_VERSION,
        "title": site.title,
        "page_url": absolute(site.feeds.url, page_path("")),
        "opml_url": absolute(site.feeds.url, "feeds.opml"),
        "feeds": feeds,
    }
    return (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
