"""JSON Feed 1.1 (https://www.jsonfeed.org/version/1.1/): feedgen has none, so it is ours.

Keys are written in a fixed order and non-ASCII text as UTF-8, so the bytes
depend only on the data. As for XML (see render_feedgen.py), each item is
rendered once, as the text ``json.dumps(feed, ensure_ascii=False, indent=2)``
gives it inside the feed, and documents are joined from those parts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from json.encoder import encode_basestring
from typing import Any

from .document import FeedDocument
from .items import Item
from .render import Frame, join
from .urls import absolute

VERSION = "https://jsonfeed.org/version/1.1"
_EMPTY_ITEMS = b'"items": []\n}\n'


def render_json(doc: FeedDocument) -> bytes:
    return json_document(doc, (json_entry(item) for item in doc.items))


def json_document(doc: FeedDocument, items: Iterable[bytes]) -> bytes:
    """The JSON Feed of ``doc`` around its items' parts, in order."""
    return join(json_frame(doc), items)


def json_frame(doc: FeedDocument) -> Frame:
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
    if site.icon:
        feed["icon"] = absolute(site.url, site.icon)
    feed["authors"] = [author]
    feed["language"] = site.language
    feed["items"] = []
    empty = (json.dumps(feed, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    head = empty[: -len(_EMPTY_ITEMS)] + b'"items": [\n'
    return Frame(head, b",\n", b"\n  ]\n}\n", empty)


def json_entry(item: Item) -> bytes:
    """The item as it appears in the feed's ``items`` array (two levels deep, no comma)."""
    fields: list[tuple[str, str | list[str]]] = [
        ("id", item.id),
        ("url", item.link),
        ("title", item.title),
        ("content_html", item.content_html),
    ]
    if item.summary:
        fields.append(("summary", item.summary))
    fields.append(("date_published", item.published.isoformat()))
    fields.append(("tags", list(item.categories)))
    # What json.dumps(indent=2) writes, built with its C string encoder: the
    # indenting encoder is pure Python and was a tenth of a build (bench/NOTES.md).
    lines = []
    for key, value in fields:
        if isinstance(value, str):
            lines.append(f'      "{key}": {encode_basestring(value)}')
        elif value:
            inner = ",\n".join(f"        {encode_basestring(v)}" for v in value)
            lines.append(f'      "{key}": [\n{inner}\n      ]')
        else:
            lines.append(f'      "{key}": []')
    return ("    {\n" + ",\n".join(lines) + "\n    }").encode("utf-8")
