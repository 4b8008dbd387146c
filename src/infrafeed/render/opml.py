"""``feeds.opml`` (OPML 2.0): every feed in one file, so a reader subscribes to all at once.

Each feed is listed once, by its RSS document (every reader knows RSS); the
module feeds are grouped under one outline. Written with ElementTree in a
fixed order: the bytes depend only on the data.
"""

from __future__ import annotations

import email.utils
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from ..source.models import Site
from .catalog import FeedView

OPML_DOCS = "http://opml.org/spec2.opml"


def render_opml(site: Site, views: Sequence[FeedView]) -> bytes:
    root = ET.Element("opml", version="2.0")
    head = ET.SubElement(root, "head")
    ET.SubElement(head, "title").text = site.title
    if views:
        newest = max(view.updated for view in views)
        ET.SubElement(head, "dateModified").text = email.utils.format_datetime(newest)
    ET.SubElement(head, "ownerName").text = site.author.name
    if site.author.url:
        ET.SubElement(head, "ownerId").text = site.author.url
    ET.SubElement(head, "docs").text = OPML_DOCS
    body = ET.SubElement(root, "body")
    modules = [view for view in views if view.module is not None]
    for view in views:
        if view.module is None:
            _outline(body, site, view)
    if modules:
        group = ET.SubElement(body, "outline", text=f"{site.title} · {site.labels.module}")
        for view in modules:
            _outline(group, site, view)
    ET.indent(root, space="  ")
    text = ET.tostring(root, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{text}\n'.encode()


def _outline(parent: ET.Element, site: Site, view: FeedView) -> None:
    ET.SubElement(
        parent,
        "outline",
        type="rss",
        text=view.title,
        title=view.title,
        description=view.description,
        xmlUrl=view.link("rss").url,
        htmlUrl=view.home_url,
        language=site.language,
        version="RSS2",
    )
