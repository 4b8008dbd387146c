"""What a renderer gets: one feed document's items and metadata, already decided.

Renderers only serialize a :class:`FeedDocument`; they choose nothing. A feed
is one or more documents (RFC 5005): the subscription document, which is
either ``complete`` (it holds every item) or ``current`` (the newest items,
with older ones in ``archive`` documents, one per month).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Literal

from .feeds import FeedSpec, Format
from .items import Item
from .models import Site

Role = Literal["complete", "current", "archive"]

# RFC 5005's namespace: fh:complete and fh:archive, in RSS and Atom alike.
FEED_HISTORY_NS = "http://purl.org/syndication/history/1.0"


@dataclass(frozen=True)
class FeedDocument:
    site: Site
    spec: FeedSpec
    format: Format
    items: tuple[Item, ...]
    self_url: str
    updated: dt.datetime  # the newest item's date: never the time of the build
    # None in archives: an upgrade of infrafeed must not rewrite closed archives.
    generator_version: str | None
    role: Role = "complete"
    current_url: str | None = None  # the subscription document (archives only)
    prev_archive_url: str | None = None  # the next older document of the chain
    next_archive_url: str | None = None  # the next newer archive (archives only)
    hub: str | None = None  # WebSub hub (subscription documents only)


def newest_date(site: Site, items: tuple[Item, ...]) -> dt.datetime:
    """The feed's updated date; a feed with no items falls back to the id minting date."""
    if items:
        return max(item.published for item in items)
    minted = site.ids.date
    return dt.datetime(minted.year, minted.month, minted.day, tzinfo=dt.UTC)
