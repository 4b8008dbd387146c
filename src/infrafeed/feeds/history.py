"""Full history in bounded feeds (RFC 5005): which document of a feed holds which item. Pure.

A feed within ``max_items`` and ``max_bytes`` is one ``complete`` document. A larger one has a
``current`` subscription document with its newest items, as many as fit and at least one, whatever
their month (readers fetch only it: a month's first release must not shrink it to that release),
and an ``archive`` per month for the rest (``archive/YYYY-MM/``), so no archive is empty. Archives
chain with ``prev-archive`` (older) and ``next-archive`` (newer). RFC 5005's ``next-archive``
names an archive, so the newest archive has none, unless it is the only one: the W3C validator
warns of an archive without an archive link, so a lone archive names the subscription document.
The newest archive may hold part of its month, and grows as new items push the rest out of the
subscription document; an archive with a newer archive holds its whole month, and changes when
an entry of its month is edited or added: it names no hub and no version. Following
``prev-archive`` from the subscription document visits every item exactly once. The split
depends on the entries alone (no memory of earlier builds): when the subscription document gets
room for more (items removed, limits raised, newest items shortened), the newest archives hand
items back to it, and one left empty goes.
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple

from ..source.models import Site
from .items import Item
from .specs import FeedSpec

Role = Literal["complete", "current", "archive"]


class Document(NamedTuple):
    """One document of a feed; its three formats live in ``folder``."""

    role: Role
    folder: str  # below the output folder: "", "archive/2026-03", "modules/cuda/archive/2026-03"
    items: tuple[Item, ...]  # newest first
    updated: dt.datetime
    month: str | None  # "2026-03" for an archive
    prev_archive: str | None  # folder of the next older archive
    next_archive: str | None  # of the next newer archive; a lone archive's: the subscription


class FeedHistory(NamedTuple):
    spec: FeedSpec
    documents: tuple[Document, ...]  # the subscription document first, then archives newest first
    items: tuple[Item, ...]  # the whole feed, newest first: its documents' items in order

    @property
    def current(self) -> Document:
        return self.documents[0]

    @property
    def archives(self) -> tuple[Document, ...]:
        return self.documents[1:]

    @property
    def complete(self) -> bool:
        return self.current.role == "complete"


def month_of(item: Item) -> str:
    return item.released.strftime("%Y-%m")


def plan(
    site: Site, spec: FeedSpec, items: Sequence[Item], size_of: Callable[[Document], int]
) -> FeedHistory:
    """Split ``items`` (the whole feed, newest first) into its documents. ``size_of`` gives a
    document's largest format in bytes; only documents of the newest items are measured (so
    prefix sums of sizes can answer)."""
    everything = tuple(items)
    complete = Document(
        "complete", spec.folder, everything, _newest_date(site, everything), None, None, None
    )
    # A single item larger than max_bytes too: there is nothing to split.
    if len(everything) < 2 or (
        len(everything) <= site.feeds.max_items and size_of(complete) <= site.feeds.max_bytes
    ):
        return FeedHistory(spec, (complete,), everything)

    months = [(month, tuple(group)) for month, group in itertools.groupby(everything, key=month_of)]
    whole = dict(months)
    if len(whole) != len(months):
        raise ValueError(f"feed '{spec.key}': items are not in release order")
    root = f"{spec.folder}/archive" if spec.folder else "archive"

    def current(count: int) -> Document:
        held, older = everything[:count], f"{root}/{month_of(everything[count])}"
        return Document("current", spec.folder, held, _newest_date(site, held), None, older, None)

    # A feed that does not fit archives at least one item.
    upper = min(site.feeds.max_items, len(everything) - 1)
    # As many items as fit (sizes grow with the count), at least one.
    fitting = bisect.bisect_left(
        range(1, upper + 1), True, key=lambda n: size_of(current(n)) > site.feeds.max_bytes
    )
    count = max(1, fitting)
    # The rest, a month per archive: the newest one may hold only part of its month.
    archives = [(m, tuple(held)) for m, held in itertools.groupby(everything[count:], month_of)]
    folders = [f"{root}/{month}" for month, _ in archives]
    documents = [current(count)]
    for index, (month, held) in enumerate(archives):
        older = folders[index + 1] if index + 1 < len(folders) else None
        newer = folders[index - 1] if index > 0 else None if older else spec.folder
        # The month's newest date even when the subscription document holds some
        # of its items: an archive's date never depends on the split.
        updated = _newest_date(site, whole[month])
        documents.append(Document("archive", folders[index], held, updated, month, older, newer))
    return FeedHistory(spec, tuple(documents), everything)


def _newest_date(site: Site, items: tuple[Item, ...]) -> dt.datetime:
    """A document's updated date; one with no items falls back to the id minting date."""
    if items:
        return max(item.published for item in items)
    return dt.datetime.combine(site.ids.date, dt.time(), dt.UTC)
