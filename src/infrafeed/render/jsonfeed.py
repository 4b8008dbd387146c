"""JSON Feed 1.1 (https://www.jsonfeed.org/version/1.1/): feedgen has none, so it is ours.

Keys in a fixed order, non-ASCII text as UTF-8. JSON Feed has no archive markers: documents
chain with ``next_url`` (the next older one, like RFC 5005's ``prev-archive``); each document's
``feed_url`` is its own URL, like the self link of RSS and Atom.
"""

from __future__ import annotations

import functools
import json
from json.encoder import encode_basestring
from typing import Any

from ..feeds.items import Item
from ..source.models import Author, Site
from ..source.urls import encoded
from .parts import Frame, Head, images

# "items" is the feed's last key: what json.dumps(indent=2) ends a feed with.
_NO_ITEMS = b'  "items": []\n}\n'


def json_frame(doc: Head) -> Frame:
    empty = _dump(_feed(doc) | {"items": []})
    if not empty.endswith(_NO_ITEMS):
        raise RuntimeError(f"json.dumps no longer ends a feed with {_NO_ITEMS!r}")
    return Frame(empty[: -len(_NO_ITEMS)] + b'  "items": [\n', b",\n", b"\n  ]\n}\n", empty)


def json_item(item: Item, site: Site) -> bytes:
    """The item as it appears in a feed's ``items`` array: two levels deep, no comma."""
    # What json.dumps(indent=2) writes, with its C string encoder: the
    # indenting encoder is pure Python, and slow on a feed of many items.
    text = {"id": item.id, "url": item.link, "title": item.title, "content_html": item.content_html}
    if item.summary:
        text["summary"] = item.summary
    text["date_published"] = item.published.isoformat()
    lines = [f'      "{key}": {encode_basestring(value)}' for key, value in text.items()]
    lines.append(f'      "authors": {_authors(site.author)}')
    tags = ",\n".join(f"        {encode_basestring(tag)}" for tag in item.categories)
    lines.append(f'      "tags": [\n{tags}\n      ]' if item.categories else '      "tags": []')
    return ("    {\n" + ",\n".join(lines) + "\n    }").encode("utf-8")


def _dump(feed: dict[str, Any]) -> bytes:
    return (json.dumps(feed, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


@functools.cache
def _authors(author: Author) -> str:
    """An item's ``authors`` (the site's author), as json.dumps(indent=2) writes it there."""
    return json.dumps(_author(author), ensure_ascii=False, indent=2).replace("\n", "\n      ")


def _author(author: Author) -> list[dict[str, str]]:
    return [{"name": author.name} | ({"url": encoded(author.url)} if author.url else {})]


def _feed(doc: Head) -> dict[str, Any]:
    site, spec = doc.site, doc.spec
    feed: dict[str, Any] = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": spec.title,
        "home_page_url": spec.home_url,
        "feed_url": doc.self_url,
        "description": spec.description,
    }
    if doc.prev_archive_url:
        feed["next_url"] = doc.prev_archive_url
    icon, _, large, _ = images(site)
    for key, image in (("icon", large), ("favicon", icon)):
        if image:
            feed[key] = image
    feed["authors"] = _author(site.author)
    feed["language"] = site.language
    if doc.hub:
        feed["hubs"] = [{"type": "WebSub", "url": doc.hub}]
    return feed
