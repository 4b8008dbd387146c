"""Render every feed in every format: (relative path, bytes) pairs, one at a time.

A generator, so the publisher can stage each document and let it go: memory
holds one document, not the site.

Each item is rendered once per build, in every format (:class:`Parts`): the
all-items feed and the module feeds show the same items, and an incremental
build brings the parts of unchanged items from its cache (cache.py). A
document is then its head, its items' parts and its tail.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from .document import FeedDocument, newest_date
from .feeds import FORMATS, FeedSpec, select
from .items import Item
from .models import Site

Renderer = Callable[[FeedDocument], bytes]
Assembler = Callable[[FeedDocument, Iterable[bytes]], bytes]


def renderers() -> dict[str, Renderer]:
    """Whole-document renderers, one per format (each renders its items itself)."""
    from .render_feedgen import render_atom, render_rss
    from .render_json import render_json

    return {"rss": render_rss, "atom": render_atom, "json": render_json}


def assemblers() -> dict[str, Assembler]:
    from .render_feedgen import atom_document, rss_document
    from .render_json import json_document

    return {"rss": rss_document, "atom": atom_document, "json": json_document}


def render_parts(item: Item) -> dict[str, bytes]:
    """The item as it appears in a document of each format."""
    from .render_feedgen import entries
    from .render_json import json_entry

    rss, atom = entries(item)
    return {"rss": rss, "atom": atom, "json": json_entry(item)}


class Parts:
    """Every item's parts, each rendered on first use, or known from a previous build.

    Looked up by item id, which is unique in a build, and confirmed by the
    item itself (the same object, as a build passes it along, or an equal one).
    """

    def __init__(self, known: Iterable[tuple[Item, Mapping[str, bytes]]] = ()) -> None:
        self._parts: dict[str, tuple[Item, Mapping[str, bytes]]] = {
            item.id: (item, parts) for item, parts in known
        }

    def __call__(self, item: Item) -> Mapping[str, bytes]:
        parts = self.get(item)
        if parts is None:
            parts = render_parts(item)
            self._parts[item.id] = (item, parts)
        return parts

    def get(self, item: Item) -> Mapping[str, bytes] | None:
        """The parts of ``item`` if rendered or known, without rendering them."""
        found = self._parts.get(item.id)
        if found is None or not (found[0] is item or found[0] == item):
            return None
        return found[1]


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


def render(doc: FeedDocument, parts: Parts, assemble: Mapping[str, Assembler]) -> bytes:
    name = doc.format.name
    return assemble[name](doc, (parts(item)[name] for item in doc.items))


def render_all(
    site: Site,
    specs: Sequence[FeedSpec],
    items: Sequence[Item],
    version: str,
    parts: Parts | None = None,
) -> Iterator[tuple[str, bytes]]:
    parts = parts if parts is not None else Parts()
    assemble = assemblers()
    for doc in documents(site, specs, items, version):
        yield doc.spec.path(doc.format), render(doc, parts, assemble)
