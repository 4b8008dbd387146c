"""Render the feed documents and site files: (path below the output folder, chunks) pairs. Pure.

A document is a frame around its items' parts: each item is rendered once (:func:`item_parts`)
though two feeds show it, and whether a feed fits ``max_bytes`` is arithmetic on their lengths.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import partial
from itertools import accumulate

from ..feeds.history import Document, FeedHistory, plan
from ..feeds.items import Item
from ..feeds.specs import FORMATS, FeedSpec, Format, document_path, document_url, select_all
from ..source.models import Site
from ..source.urls import encoded
from .parts import Frame, Head, ItemParts


def item_parts(site: Site, items: Iterable[Item]) -> tuple[ItemParts, ...]:
    from .jsonfeed import json_item
    from .pages import list_item
    from .rss_atom import item_elements

    return tuple(
        ItemParts(*item_elements(item, site), json_item(item, site), list_item(item, site).encode())
        for item in items
    )


# One feed, its documents planned (feeds/history.py) by what each weighs in bytes.
Planned = tuple["_Feed", FeedHistory]


def plan_all(
    site: Site,
    specs: Sequence[FeedSpec],
    items: Sequence[Item],
    version: str,
    parts: Mapping[str, ItemParts],
) -> list[Planned]:
    """Each feed's documents: which items the subscription document and each archive hold."""
    feeds = (_Feed(site, spec, version, select_all(items, spec), parts) for spec in specs)
    return [(feed, plan(site, feed.spec, feed.items, feed.size_of)) for feed in feeds]


def render_all(
    site: Site,
    items: Sequence[Item],
    parts: Mapping[str, ItemParts],
    planned: Sequence[Planned],
    icon: str | None,
) -> Iterator[tuple[str, Iterable[bytes]]]:
    """Every output file but the changelog page; ``planned`` by :func:`plan_all`, ``icon`` the
    square SVG of ``[feeds] icon`` (source/icon.py)."""
    from .pages import feed_views, opml_files, render_feeds_json, render_opml, render_pages

    if icon is not None:
        from .icons import icon_files

        yield from ((name, (png,)) for name, png in icon_files(icon))

    for feed, history in planned:
        for document in history.documents:
            for fmt in FORMATS:
                yield document_path(document.folder, fmt), feed.chunks(document, fmt)
    views = feed_views(site, [history for _, history in planned])
    yield from render_pages(site, views, items, parts)
    yield "feeds.json", (render_feeds_json(site, views),)
    for name, chosen in opml_files(views).items():
        words = site.words.everything if chosen[0].module is None else site.words.by_module
        yield name, (render_opml(site, f"{site.title} · {words}", chosen),)


class _Feed:
    """One feed: its items' parts, what each of its documents weighs, and their frames."""

    def __init__(
        self,
        site: Site,
        spec: FeedSpec,
        version: str,
        items: tuple[Item, ...],
        parts: Mapping[str, ItemParts],
    ) -> None:
        self.site, self.spec, self.version, self.items = site, spec, version, items
        self.start = {item.id: index for index, item in enumerate(items)}
        self.columns = [[getattr(parts[item.id], fmt.name) for item in items] for fmt in FORMATS]
        # prefix[k][n]: the length of the first n items' parts in FORMATS[k], so
        # the size of any document of the newest items is a look-up.
        self.prefix = [list(accumulate(map(len, column), initial=0)) for column in self.columns]
        self._frames: dict[tuple[str, Document], Frame] = {}

    def size_of(self, document: Document) -> int:
        """The largest of ``document``'s formats, in bytes, as history.plan compares it."""
        count = len(document.items)
        return max(
            self.frame(document, fmt).size(count, sums[count])
            for fmt, sums in zip(FORMATS, self.prefix, strict=True)
        )

    def chunks(self, document: Document, fmt: Format) -> Iterator[bytes]:
        # A document is a run of the feed's items (history.plan), from its first item on.
        start = self.start[document.items[0].id] if document.items else 0
        column = self.columns[FORMATS.index(fmt)][start : start + len(document.items)]
        return self.frame(document, fmt).chunks(column)

    def frame(self, document: Document, fmt: Format) -> Frame:
        """The document's frame in ``fmt``, rendered once: it depends on all but the items."""
        key = (fmt.name, document._replace(items=()))
        if key not in self._frames:
            from .jsonfeed import json_frame
            from .rss_atom import atom_frame, rss_frame

            render = {"rss": rss_frame, "atom": atom_frame, "json": json_frame}[fmt.name]
            self._frames[key] = render(head(self.site, self.spec, document, fmt, self.version))
        return self._frames[key]


def head(site: Site, spec: FeedSpec, document: Document, fmt: Format, version: str) -> Head:
    """``document``'s head in ``fmt``. An archive names neither the hub nor infrafeed's version:
    a closed archive's bytes must not change when either does."""
    url = partial(document_url, site, fmt)
    archive = document.role == "archive"
    return Head(
        site=site,
        spec=spec,
        format=fmt,
        self_url=url(document.folder),
        updated=document.updated,
        generator_version=None if archive else version,
        role=document.role,
        current_url=url(spec.folder) if archive else None,
        prev_archive_url=None if document.prev_archive is None else url(document.prev_archive),
        next_archive_url=None if document.next_archive is None else url(document.next_archive),
        hub=None if archive or not site.feeds.hub else encoded(site.feeds.hub),
    )
