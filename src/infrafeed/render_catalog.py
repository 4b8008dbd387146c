"""``feeds.json``: every published feed document, for the site to read at build time.

One record per feed and format, flat, so a site component can pick the feeds
of a page with one filter (``module.slug``) and render its own links.
Fixed key order, UTF-8: the bytes depend only on the data.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .catalog import FeedView, page_path
from .models import Site
from .urls import absolute

VERSION = 1


def render_feeds_json(site: Site, views: Sequence[FeedView]) -> bytes:
    feeds: list[dict[str, Any]] = []
    for view in views:
        module = None
        if view.module is not None:
            module = {
                "number": view.module.number,
                "name": view.module.name,
                "slug": view.module.slug,
            }
        for link in view.links:
            feeds.append(
                {
                    "id": f"{view.key}/{link.format.name}",
                    "feed": view.key,
                    "title": view.title,
                    "module": module,
                    "format": link.format.name,
                    "media_type": link.format.media_type,
                    "url": link.url,
                    "page_url": absolute(site.feeds.url, view.page_path),
                    "item_count": view.count,
                    "total_item_count": view.total,
                    "complete": view.complete,
                    "updated": view.updated.isoformat(),
                }
            )
    data = {
        "version": VERSION,
        "title": site.title,
        "page_url": absolute(site.feeds.url, page_path("")),
        "opml_url": absolute(site.feeds.url, "feeds.opml"),
        "feeds": feeds,
    }
    return (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
