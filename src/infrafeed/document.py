"""What a renderer gets: one feed's items and metadata, already decided.

Renderers only serialize a :class:`FeedDocument`; they choose nothing.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from .feeds import FeedSpec, Format
from .items import Item
from .models import Site


@dataclass(frozen=True)
class FeedDocument:
    site: Site
    spec: FeedSpec
    format: Format
    items: tuple[Item, ...]
    self_url: str
    updated: dt.datetime  # the newest item's date: never the time of the build
    generator_version: str


def newest_date(site: Site, items: tuple[Item, ...]) -> dt.datetime:
    """The feed's updated date; a feed with no items falls back to the id minting date."""
    if items:
        return max(item.published for item in items)
    minted = site.ids.date
    return dt.datetime(minted.year, minted.month, minted.day, tzinfo=dt.UTC)
