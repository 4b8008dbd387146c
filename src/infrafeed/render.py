"""Render every output file: (relative path, bytes) pairs, one at a time.

For each feed: its documents (the subscription document and its monthly
archives, see history.py) in every format. Then the site files that describe
the feeds: the HTML pages, ``head-links.html``, ``feeds.json`` and
``feeds.opml``. A generator, so the publisher can stage each document and let
it go.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from .catalog import document_path, feed_views
from .document import FeedDocument
from .feeds import FORMATS, FeedSpec, Format, select_all
from .history import FeedHistory, Page, plan
from .items import Item
from .models import Site
from .urls import absolute

Renderer = Callable[[FeedDocument], bytes]


def renderers() -> dict[str, Renderer]:
    from .render_feedgen import render_atom, render_rss
    from .render_json import render_json

    return {"rss": render_rss, "atom": render_atom, "json": render_json}


def render_all(
    site: Site, specs: Sequence[FeedSpec], items: Sequence[Item], version: str
) -> Iterator[tuple[str, bytes]]:
    by_format = renderers()
    histories = []
    for spec in specs:
        # The plan measures a page by rendering it; a page that fits is often
        # the one it then publishes (a complete feed always is). Its documents
        # are kept to be written rather than rendered twice: at most one
        # page's, in every format.
        measured: list[tuple[Page, list[bytes]]] = []

        def size_of(
            page: Page, spec: FeedSpec = spec, measured: list[tuple[Page, list[bytes]]] = measured
        ) -> int:
            measured.clear()
            docs = [by_format[f.name](document(site, spec, page, f, version)) for f in FORMATS]
            size = max(len(doc) for doc in docs)
            if size <= site.feeds.max_bytes:
                measured.append((page, docs))
            return size

        history = plan(site, spec, select_all(items, spec), size_of)
        for page in history.pages:
            kept = measured.pop()[1] if measured and measured[0][0] is page else []
            for fmt in FORMATS:
                if kept:
                    data = kept.pop(0)  # FORMATS' order; each let go once staged
                else:
                    data = by_format[fmt.name](document(site, spec, page, fmt, version))
                yield document_path(page.folder, fmt), data
        measured.clear()
        histories.append(history)
    yield from render_site(site, histories, items)


def render_site(
    site: Site, histories: Sequence[FeedHistory], items: Sequence[Item]
) -> Iterator[tuple[str, bytes]]:
    from .render_catalog import render_feeds_json
    from .render_opml import render_opml
    from .render_pages import render_pages

    views = feed_views(site, histories)
    yield from render_pages(site, views, items)
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
