"""Full history in bounded feeds (RFC 5005): which document of a feed holds which item.

A feed that fits its limits (``max_items`` and ``max_bytes``) is one
``complete`` document. A larger one is split: the subscription document
holds the newest items, and every month of release dates that has items gets
an archive document (``archive/YYYY-MM/``), chained newest to oldest.

What decides the split is the promise that a *closed* month's archive (the
feed has an item in a later month) never changes its bytes again:

- a closed archive holds *every* item of its month, so the items of a closed
  month can never be still waiting in the subscription document; the
  subscription document therefore holds only items of the feed's newest
  (open) month, at most ``max_items`` and ``max_bytes`` of them (at least one,
  so a subscriber always sees the latest change); the rest of the open month
  is in the open month's archive, which may change until the month closes;
- its ``next-archive`` link names the month that closed it, which is known at
  the moment it closes; so every month with items has an archive document,
  the open month's one included (empty while the subscription document holds
  the whole month), and the link never dangles;
- its ``prev-archive`` link and its dates come from earlier data only, and it
  names no hub and no infrafeed version (see render.py), so later releases,
  a new hub or an upgrade leave it alone.

Following ``prev-archive`` from the subscription document thus visits every
item exactly once. Pure: the same items give the same plan.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from ..source.models import Site
from .items import Item
from .specs import FeedSpec

# A subscription document is "complete" (every item) or "current" (the newest,
# with older items in "archive" documents, one per month).
Role = Literal["complete", "current", "archive"]


@dataclass(frozen=True)
class Document:
    """One document of a feed; its three formats live in ``folder``."""

    role: Role
    folder: str  # below the output folder: "", "archive/2026-03", "modules/cuda/archive/2026-03"
    items: tuple[Item, ...]  # newest first
    updated: dt.datetime
    month: str | None  # "2026-03" for an archive
    prev_archive: str | None  # folder of the next older archive
    next_archive: str | None  # folder of the next newer archive (archives only)


@dataclass(frozen=True)
class FeedHistory:
    spec: FeedSpec
    documents: tuple[Document, ...]  # the subscription document first, then archives newest first
    total: int  # items in the whole feed

    @property
    def current(self) -> Document:
        return self.documents[0]

    @property
    def archives(self) -> tuple[Document, ...]:
        return self.documents[1:]

    @property
    def complete(self) -> bool:
        return self.current.role == "complete"


# The largest of a document's formats, in bytes. plan only measures documents
# that hold the feed's newest items (a prefix of its items), so a caller can sum
# the items' sizes once, as prefix sums, and answer each question by looking
# one up (render/documents.py).
SizeOf = Callable[[Document], int]


def month_of(item: Item) -> str:
    return item.released.strftime("%Y-%m")


def archive_root(spec: FeedSpec) -> str:
    return f"{spec.folder}/archive" if spec.folder else "archive"


def archive_folder(spec: FeedSpec, month: str) -> str:
    return f"{archive_root(spec)}/{month}"


def plan(site: Site, spec: FeedSpec, items: Sequence[Item], size_of: SizeOf) -> FeedHistory:
    """Split ``items`` (the whole feed, newest first) into its documents."""
    everything = tuple(items)
    complete = Document(
        "complete", spec.folder, everything, newest_date(site, everything), None, None, None
    )
    if not everything or (
        len(everything) <= spec.max_items and size_of(complete) <= site.feeds.max_bytes
    ):
        return FeedHistory(spec, (complete,), len(everything))

    months = [(month, tuple(group)) for month, group in itertools.groupby(everything, key=month_of)]
    if len({month for month, _ in months}) != len(months):
        raise ValueError(f"feed '{spec.key}': items are not in release order")
    folders = [archive_folder(spec, month) for month, _ in months]
    newest = months[0][1]

    def current(count: int) -> Document:
        held = newest[:count]
        return Document(
            "current", spec.folder, held, newest_date(site, held), None, folders[0], None
        )

    count = _largest(
        min(spec.max_items, len(newest)),
        lambda n: size_of(current(n)) <= site.feeds.max_bytes,
    )
    documents = [current(count)]
    for index, (month, month_items) in enumerate(months):
        documents.append(
            Document(
                "archive",
                folders[index],
                month_items[count:] if index == 0 else month_items,
                # The month's newest date even when the subscription document
                # holds those items: an archive's date never depends on the split.
                newest_date(site, month_items),
                month,
                folders[index + 1] if index + 1 < len(folders) else None,
                folders[index - 1] if index > 0 else None,
            )
        )
    return FeedHistory(spec, tuple(documents), len(everything))


def _largest(upper: int, fits: Callable[[int], bool]) -> int:
    """The largest n in 1..upper with fits(n) (sizes grow with n), or 1 if none fits."""
    low, high = 1, upper
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def newest_date(site: Site, items: tuple[Item, ...]) -> dt.datetime:
    """A document's updated date; one with no items falls back to the id minting date."""
    if items:
        return max(item.published for item in items)
    minted = site.ids.date
    return dt.datetime(minted.year, minted.month, minted.day, tzinfo=dt.UTC)
