"""Full history in bounded feeds (RFC 5005): which document of a feed holds which item.

A feed within its limits (``max_items``, ``max_bytes``) is one ``complete``
document. A larger one has a subscription document with the newest items and
one archive document per month of release dates (``archive/YYYY-MM/``),
chained newest to oldest. A *closed* month's archive (the feed has an item in
a later month) never changes a byte again: it holds every item of its month,
so the subscription document holds items of the open month only (at least
one); its ``next-archive`` link names the month that closed it; its dates and
``prev-archive`` link come from earlier data, and it names no hub and no
version. Following ``prev-archive`` from the subscription document visits
every item exactly once. Pure: the same items give the same plan.
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


# The largest of a document's formats, in bytes. plan only measures documents of
# the feed's newest items, so the caller can answer with prefix sums of sizes.
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
