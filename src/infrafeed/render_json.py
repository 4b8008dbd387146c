"""JSON Feed 1.1 (https://www.jsonfeed.org/version/1.1/): feedgen has none, so it is ours.

Keys are written in a fixed order and non-ASCII text as UTF-8, so the bytes
depend only on the data.

JSON Feed has no archive markers; its pages chain with ``next_url`` (the next
older document, like RFC 5005's ``prev-archive``). Each page's ``feed_url``
is the URL it is served at, like the self link of RSS and Atom.
"""

from __future__ import annotations

import json
from typing import Any

from .document import FeedDocument
from .items import Item
from .urls import absolute

VERSION = "https://jsonfeed.org/version/1.1"


def render_json(doc: FeedDocument) -> bytes:
    site, spec = doc.site, doc.spec
    author: dict[str, str] = {"name": site.author.name}
    if site.author.url:
        author["url"] = site.author.url
    feed: dict[str, Any] = {
        "version": VERSION,
        "title": spec.title,
        "home_page_url": spec.home_url,
        "feed_url": doc.self_url,
        "description": spec.description,
    }
    if doc.prev_archive_url:
        feed["next_url"] = doc.prev_archive_url
    if site.icon:
        feed["icon"] = absolute(site.url, site.icon)
    feed["authors"] = [author]
    feed["language"] = site.language
    if doc.hub:
        feed["hubs"] = [{"type": "WebSub", "url": doc.hub}]
    feed["items"] = [_item(item) for item in doc.items]
    return (json.dumps(feed, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def _item(item: Item) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": item.id,
        "url": item.link,
        "title": item.title,
        "content_html": item.content_html,
    }
    if item.summary:
        out["summary"] = item.summary
    out["date_published"] = item.published.isoformat()
    out["tags"] = list(item.categories)
    return out
