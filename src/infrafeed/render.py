"""Render every output file: (relative path, chunks of its bytes) pairs, one at a time.

For each feed: its documents (the subscription document and its monthly
archives, see history.py) in every format. Then the site files that describe
the feeds: the HTML pages, ``head-links.html``, ``feeds.json`` and
``feeds.opml``. A generator of chunks, so the publisher streams each document
to disk: no whole document is ever held in memory.

A feed document is a frame around its items' parts (frame.py). Each item's
parts are rendered once per build (:func:`item_parts`), though the all-items
feed and the item's module feed both show it; whether a feed fits
``max_bytes`` is then arithmetic on the parts' lengths, never a rendering.
"""

from __future__ import annotations

import operator
import os
import tempfile
from array import array
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from itertools import accumulate, chain
from pathlib import Path
from typing import NamedTuple

from .catalog import document_path, feed_views
from .document import FeedDocument
from .feeds import FORMATS, FeedSpec, Format, select_all
from .frame import Frame, chunks
from .history import FeedHistory, Page, plan
from .items import Item
from .models import Site
from .urls import absolute


class ItemParts(NamedTuple):
    """An item as it appears inside a document of each format (frame.py)."""

    rss: bytes
    atom: bytes
    json: bytes
    page: bytes  # its entry in its module's HTML page (render_pages.entry), UTF-8


PartsOf = Callable[[Item], ItemParts]


def item_parts(item: Item) -> ItemParts:
    """Render ``item`` in every format: one feedgen entry for RSS and Atom, one JSON object."""
    from .render_feedgen import entries
    from .render_json import json_entry
    from .render_pages import entry

    rss, atom = entries(item)
    return ItemParts(rss, atom, json_entry(item), entry(item).encode("utf-8"))


def frames() -> dict[str, Callable[[FeedDocument], Frame]]:
    from .render_feedgen import atom_frame, rss_frame
    from .render_json import json_frame

    return {"rss": rss_frame, "atom": atom_frame, "json": json_frame}


# Whether the document at a path, with this frame and these items, may stay as it is (keep.py).
Keep = Callable[[str, Frame, Sequence[Item]], bool]


def render_all(
    site: Site,
    specs: Sequence[FeedSpec],
    items: Sequence[Item],
    version: str,
    parts_of: PartsOf | None = None,
    keep: Keep | None = None,
    store: PartsStore | None = None,
) -> Iterator[tuple[str, Iterable[bytes] | None]]:
    """Every output file; ``parts_of`` gives an item's parts (default: render them).

    The parts are kept in ``store``, if given (then ``parts_of`` is not used:
    the store has its own), so that a caller can read them after the
    documents are written; otherwise in a store of this call's own.

    A feed document that ``keep`` lets stay comes with None instead of its
    chunks: it is not rendered, and its file is left as it is.
    """
    parts = store if store is not None else PartsStore(parts_of or item_parts)
    try:
        histories = yield from _feeds(site, specs, items, version, parts, keep)
        page = ItemParts._fields.index("page")

        def entries_of(listed: Sequence[Item]) -> str:
            # Joined as bytes, decoded once: not a str per item.
            blocks = parts.blocks(parts.slots(listed), page)
            return b"".join(chain.from_iterable(blocks)).decode()

        for path, data in render_site(site, histories, items, entries_of):
            yield path, (data,)
    finally:
        if store is None:
            parts.close()


def _feeds(
    site: Site,
    specs: Sequence[FeedSpec],
    items: Sequence[Item],
    version: str,
    parts: PartsStore,
    keep: Keep | None,
) -> Generator[tuple[str, Iterator[bytes] | None], None, list[FeedHistory]]:
    """Every document of every feed; returns the feeds' histories."""
    frame_of = frames()
    histories = []
    for spec in specs:
        feed = _Feed(site, spec, version, select_all(items, spec), parts, frame_of)
        history = plan(site, spec, feed.items, feed.size_of)
        for page in history.pages:
            for fmt in FORMATS:
                path = document_path(page.folder, fmt)
                if keep is not None and keep(path, feed.frame(page, fmt), page.items):
                    yield path, None
                else:
                    yield path, feed.chunks(page, fmt)
        histories.append(history)
    return histories


class PartsStore:
    """Each item's parts, fetched once per build and kept in files rather than in memory.

    An item's parts serve the all-items feed, its module's feed, its module
    page and the build cache's pack; at 100,000 items they weigh about 440 MB,
    which kept in memory from the first feed to the last made a build's peak.
    They are written, a file per format, to unnamed temporary files as they
    are fetched, and read back with ``pread`` a part at a time.
    """

    def __init__(
        self,
        parts_of: PartsOf,
        folder: Path | None = None,
        resident: Callable[[Item], ItemParts | None] | None = None,
    ) -> None:
        self._parts_of = parts_of
        # Parts already in memory (a build cache's, read from its pack): used
        # where they are, not copied to the files.
        self._resident_of = resident
        self._resident: dict[int, ItemParts] = {}
        fields = len(ItemParts._fields)
        # Closed by close(): the store outlives any one with-block of its owner.
        self._files = [tempfile.TemporaryFile(dir=folder) for _ in range(fields)]  # noqa: SIM115
        self._ends = [0] * fields
        self._dirty = False
        # By identity: every feed selects from the same item objects; each
        # is kept so that its id() cannot be reused meanwhile.
        self._slots: dict[int, int] = {}
        self._items: list[Item] = []
        self._offsets = [array("q") for _ in range(fields)]
        self._lengths = [array("q") for _ in range(fields)]

    def _rendered_slot(self, item: Item) -> int:
        """A slot for ``item``, whose parts are not resident: fetched and written to the files."""
        parts = self._parts_of(item)
        for field, data in enumerate(parts):
            self._offsets[field].append(self._ends[field])
            self._lengths[field].append(len(data))
            self._files[field].write(data)
            self._ends[field] += len(data)
        self._dirty = True
        slot = self._slots[id(item)] = len(self._items)
        self._items.append(item)
        return slot

    def slots(self, items: Sequence[Item]) -> list[int]:
        """Each item's slot, fetching the parts of those not seen yet.

        The common case, thousands of items whose parts are resident (a
        rebuild), is done a column at a time rather than an item at a time.
        """
        known = self._slots.get
        found = [known(id(item)) for item in items]
        unseen = [index for index, slot in enumerate(found) if slot is None]
        if unseen and self._resident_of is not None:
            held = [(index, self._resident_of(items[index])) for index in unseen]
            resident = [(index, parts) for index, parts in held if parts is not None]
            first = len(self._items)
            for slot, (index, parts) in enumerate(resident, start=first):
                found[index] = self._slots[id(items[index])] = slot
                self._items.append(items[index])
                self._resident[slot] = parts
            for field in range(len(ItemParts._fields)):
                self._offsets[field].extend([-1] * len(resident))
                self._lengths[field].extend(len(parts[field]) for _, parts in resident)
        for index, known_slot in enumerate(found):
            if known_slot is None:
                found[index] = self._rendered_slot(items[index])
        return found  # type: ignore[return-value]  # every None was replaced

    def lengths(self, slots: Iterable[int], field: int) -> Iterator[int]:
        """The lengths of the parts in ``field`` of the items in ``slots``."""
        return map(self._lengths[field].__getitem__, slots)

    def blocks(self, slots: Sequence[int], field: int, size: int = 1024) -> Iterator[list[bytes]]:
        """The parts in ``field`` of the items in ``slots``, ``size`` at a time, as asked for."""
        resident = self._resident
        for start in range(0, len(slots), size):
            block = slots[start : start + size]
            try:
                yield [resident[slot][field] for slot in block]
            except KeyError:  # some were rendered by this build: in the files
                yield [self._resident_or_read(slot, field) for slot in block]

    def _resident_or_read(self, slot: int, field: int) -> bytes:
        held = self._resident.get(slot)
        return held[field] if held is not None else self._read(slot, field)

    def _read(self, slot: int, field: int) -> bytes:
        if self._dirty:
            for handle in self._files:
                handle.flush()
            self._dirty = False
        size = self._lengths[field][slot]
        data = os.pread(self._files[field].fileno(), size, self._offsets[field][slot])
        if len(data) != size:
            raise OSError(f"a temporary file of the build lost data ({len(data)} of {size} bytes)")
        return data

    def get(self, item: Item) -> ItemParts:
        slot = self.slots((item,))[0]
        return ItemParts(*(self._resident_or_read(slot, f) for f in range(len(ItemParts._fields))))

    def close(self) -> None:
        for handle in self._files:
            handle.close()

    def __enter__(self) -> PartsStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class _Feed:
    """One feed: its items' parts, what each of its documents weighs, and their frames."""

    def __init__(
        self,
        site: Site,
        spec: FeedSpec,
        version: str,
        items: tuple[Item, ...],
        parts: PartsStore,
        frame_of: dict[str, Callable[[FeedDocument], Frame]],
    ) -> None:
        self.site, self.spec, self.version = site, spec, version
        self.items = items
        self.parts = parts
        self.frame_of = frame_of
        # prefix[k][n]: the length of the first n items' parts in FORMATS[k],
        # so the size of any page of the newest items is a look-up.
        self.fields = [ItemParts._fields.index(fmt.name) for fmt in FORMATS]
        self.slots = parts.slots(items)  # in the store, by position in ``items``
        self.prefix: list[array[int]] = [
            array("q", accumulate(parts.lengths(self.slots, field), initial=0))
            for field in self.fields
        ]
        self._frames: dict[tuple[object, ...], Frame] = {}
        self._index: dict[int, int] | None = None  # an item (by identity) -> its position

    def size_of(self, page: Page) -> int:
        """The largest of ``page``'s formats, in bytes, as history.plan compares it."""
        count = len(page.items)
        # The plan measures only pages of the feed's newest items (history.SizeOf).
        if count and not (
            page.items[0] is self.items[0] and page.items[-1] is self.items[count - 1]
        ):
            raise ValueError(f"feed '{self.spec.key}': a measured page is not its newest items")
        return max(
            self.frame(page, fmt).size(count, sums[count])
            for fmt, sums in zip(FORMATS, self.prefix, strict=True)
        )

    def chunks(self, page: Page, fmt: Format) -> Iterator[bytes]:
        field = self.fields[FORMATS.index(fmt)]
        # A page is a run of the feed's items (history.plan): where it starts
        # is where its first item is, as the feed lists them.
        start = self._position(page)
        slots = self.slots[start : start + len(page.items)]
        # Read as they are written: a document is never whole in memory.
        return chunks(self.frame(page, fmt), self.parts.blocks(slots, field))

    def _position(self, page: Page) -> int:
        if not page.items:
            return 0
        start = 0
        if page.items[0] is not self.items[0]:
            if self._index is None:  # archives: made once, for all of them
                self._index = {id(item): i for i, item in enumerate(self.items)}
            start = self._index[id(page.items[0])]
        # By identity: comparing items would read the text of deferred ones (items.py).
        run = self.items[start : start + len(page.items)]
        if len(run) != len(page.items) or not all(map(operator.is_, run, page.items)):
            raise ValueError(f"feed '{self.spec.key}': a page is not a run of its items")
        return start

    def frame(self, page: Page, fmt: Format) -> Frame:
        """The page's frame in ``fmt``, rendered once: it depends on all but the items."""
        key = (fmt.name, page.role, page.folder, page.updated, page.prev_archive, page.next_archive)
        found = self._frames.get(key)
        if found is None:
            doc = document(self.site, self.spec, page, fmt, self.version)
            found = self._frames[key] = self.frame_of[fmt.name](doc)
        return found


def render_site(
    site: Site,
    histories: Sequence[FeedHistory],
    items: Sequence[Item],
    entries_of: Callable[[Sequence[Item]], str] | None = None,
) -> Iterator[tuple[str, bytes]]:
    from .render_catalog import render_feeds_json
    from .render_opml import render_opml
    from .render_pages import render_pages

    views = feed_views(site, histories)
    yield from render_pages(site, views, items, entries_of)
    yield "feeds.json", render_feeds_json(site, views)
    yield "feeds.opml", render_opml(site, views)


def document(site: Site, spec: FeedSpec, page: Page, fmt: Format, version: str) -> FeedDocument:
    """The document ``page`` of ``spec``'s feed in ``fmt``, with its RFC 5005 links.

    An archive names neither the hub nor infrafeed's version: a closed
    archive's bytes must not change when either does.
    """

    def url(folder: str) -> str:
        return absolute(site.feeds.url, document_path(folder, fmt))

    archive = page.role == "archive"
    return FeedDocument(
        site=site,
        spec=spec,
        format=fmt,
        items=page.items,
        self_url=url(page.folder),
        updated=page.updated,
        generator_version=None if archive else version,
        role=page.role,
        current_url=url(spec.folder) if archive else None,
        prev_archive_url=url(page.prev_archive) if page.prev_archive is not None else None,
        next_archive_url=url(page.next_archive) if page.next_archive is not None else None,
        hub=None if archive else site.feeds.hub,
    )
