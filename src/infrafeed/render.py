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

        def size_of(page: Page, spec: FeedSpec = spec) -> int:
            return max(
                len(by_format[fmt.name](document(site, spec, page, fmt, version)))
                for fmt in FORMATS
            )

        history = plan(site, spec, select_all(items, spec), size_of)
        for page in history.pages:
            for fmt in FORMATS:
                doc = document(site, spec, page, fmt, version)
                yield document_path(page.folder, fmt), by_format[fmt.name](doc)
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
