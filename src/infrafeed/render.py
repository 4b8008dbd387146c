"""Render every feed in every format: (relative path, bytes) pairs, one at a time.

A generator, so the publisher can stage each document and let it go: memory
holds one document, not the site.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from .document import FeedDocument, newest_date
from .feeds import FORMATS, FeedSpec, select
from .items import Item
from .models import Site

Renderer = Callable[[FeedDocument], bytes]


def renderers() -> dict[str, Renderer]:
    from .render_feedgen import render_atom, render_rss
    from .render_json import render_json

    return {"rss": render_rss, "atom": render_atom, "json": render_json}


def render_all(
    site: Site, specs: Sequence[FeedSpec], items: Sequence[Item], version: str
) -> Iterator[tuple[str, bytes]]:
    by_format = renderers()
    for spec in specs:
        chosen = select(items, spec)
        updated = newest_date(site, chosen)
        for fmt in FORMATS:
            doc = FeedDocument(
                site=site,
                spec=spec,
                format=fmt,
                items=chosen,
                self_url=spec.url(site, fmt),
                updated=updated,
                generator_version=version,
            )
            yield spec.path(fmt), by_format[fmt.name](doc)
