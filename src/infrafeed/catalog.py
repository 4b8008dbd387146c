"""The list of published feeds, as the site files describe them.

The HTML pages, ``feeds.json``, ``feeds.opml`` and ``head-links.html`` all
show the same facts about each feed (its formats and URLs, how many items,
how recent, its archives); they are decided here once, from the feeds'
:class:`~infrafeed.history.FeedHistory`. Pure.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote

from .feeds import FORMATS, Format
from .history import FeedHistory, Page
from .models import Module, Site
from .urls import absolute

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


def document_path(folder: str, fmt: Format) -> str:
    return f"{folder}/{fmt.filename}" if folder else fmt.filename


def page_path(folder: str) -> str:
    return f"{folder}/index.html" if folder else "index.html"


def feed_views(site: Site, histories: Sequence[FeedHistory]) -> tuple[FeedView, ...]:
    return tuple(_view(site, history) for history in histories)


def _links(site: Site, page: Page) -> tuple[FormatLink, ...]:
    return tuple(
        FormatLink(
            fmt,
            LABELS[fmt.name],
            document_path(page.folder, fmt),
            absolute(site.feeds.url, document_path(page.folder, fmt)),
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
            ArchiveLink(page.month or "", len(page.items), _links(site, page))
            for page in history.archives
            if page.items  # the open month's archive is linked only once it holds items
        ),
    )
