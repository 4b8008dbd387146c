"""Render every feed in every format: (relative path, bytes) pairs, one at a time.

A generator, so the publisher can stage each document and let it go: memory
holds one document, not the site.

A document is its head, its items' parts and its tail (:class:`Frame`).
Each item's part is rendered once per build (:class:`Parts`), since the
all-items feed and the module feeds show the same items; an incremental
build copies the parts of unchanged items from the file it published last
time (:class:`Previous`, incremental.py).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import NamedTuple

from .document import FeedDocument, newest_date
from .feeds import FORMATS, FeedSpec, select
from .items import Item
from .models import Site

Renderer = Callable[[FeedDocument], bytes]
Part = bytes | memoryview


class Frame(NamedTuple):
    """A document around its items: ``head + separator.join(parts) + tail``."""

    head: bytes
    separator: bytes
    tail: bytes
    empty: bytes  # the document without items (not always head + tail: JSON's "[]")


def join(frame: Frame, parts: Iterable[Part]) -> bytes:
    listed = list(parts)
    if not listed:
        return frame.empty
    return b"".join((frame.head, frame.separator.join(listed), frame.tail))


def renderers() -> dict[str, Renderer]:
    """Whole-document renderers, one per format (each renders its items itself)."""
    from .render_feedgen import render_atom, render_rss
    from .render_json import render_json

    return {"rss": render_rss, "atom": render_atom, "json": render_json}


def frames() -> dict[str, Callable[[FeedDocument], Frame]]:
    from .render_feedgen import atom_frame, rss_frame
    from .render_json import json_frame

    return {"rss": rss_frame, "atom": atom_frame, "json": json_frame}


class Parts:
    """Every item's part in each format, rendered once per build.

    An item's RSS and Atom parts come from one feedgen entry, and are kept
    for the other feed that shows the item (the all-items feed and its
    module's); its JSON part is cheaper to write twice than to keep.
    Looked up by item id, which is unique in a build, and confirmed by the
    item itself (the same object, as a build passes it along, or an equal one).
    """

    def __init__(self) -> None:
        from .render_feedgen import entries
        from .render_json import json_entry

        self._entries = entries
        self._json = json_entry
        self._xml: dict[str, tuple[Item, tuple[bytes, bytes]]] = {}

    def __call__(self, item: Item, name: str) -> bytes:
        if name == "json":
            return self._json(item)
        found = self._xml.get(item.id)
        if found is None or not (found[0] is item or found[0] == item):
            found = self._xml[item.id] = (item, self._entries(item))
        return found[1][0] if name == "rss" else found[1][1]


def documents(
    site: Site, specs: Sequence[FeedSpec], items: Sequence[Item], version: str
) -> Iterator[FeedDocument]:
    """Every document of the build, each feed in each format."""
    for spec in specs:
        chosen = select(items, spec)
        updated = newest_date(site, chosen)
        for fmt in FORMATS:
            yield FeedDocument(
                site=site,
                spec=spec,
                format=fmt,
                items=chosen,
                self_url=spec.url(site, fmt),
                updated=updated,
                generator_version=version,
            )


class Previous(NamedTuple):
    """A document as an earlier build wrote it: its bytes, and which item is where."""

    data: memoryview
    where: Mapping[str, int]  # item key -> position in the document
    starts: Sequence[int]  # where each item's part starts in ``data``
    lengths: array[int]  # and its length


def render(
    doc: FeedDocument,
    parts: Parts,
    frame_of: Mapping[str, Callable[[FeedDocument], Frame]],
    keys: Sequence[str] = (),
    previous: Previous | None = None,
) -> tuple[bytes, Frame, array[int]]:
    """The document's bytes, its frame, and the length of each item's part in them.

    With ``previous`` (and the items' ``keys``), the items it showed are
    copied from it, a run of neighbours at a time, instead of rendered:
    after a new release, the old items of a feed are one copy.
    """
    name = doc.format.name
    frame = frame_of[name](doc)
    items = doc.items
    count = len(items)
    old = [-1] * count
    if previous is not None:
        old = [previous.where.get(key, -1) for key in keys]
    chunks: list[Part] = []
    lengths = array("q")
    j = 0
    while j < count:
        first = old[j]
        if first < 0:
            part = parts(items[j], name)
            chunks.append(part)
            lengths.append(len(part))
            j += 1
            continue
        assert previous is not None
        k = j + 1
        while k < count and old[k] == old[k - 1] + 1:
            k += 1
        last = first + k - j - 1
        # Neighbours in both documents: one slice, the separators between them included.
        start, end = previous.starts[first], previous.starts[last] + previous.lengths[last]
        chunks.append(previous.data[start:end])
        lengths.extend(previous.lengths[first : last + 1])
        j = k
    return join(frame, chunks), frame, lengths


def render_all(
    site: Site,
    specs: Sequence[FeedSpec],
    items: Sequence[Item],
    version: str,
) -> Iterator[tuple[str, bytes]]:
    parts = Parts()
    frame_of = frames()
    for doc in documents(site, specs, items, version):
        yield doc.spec.path(doc.format), render(doc, parts, frame_of)[0]
