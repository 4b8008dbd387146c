"""RSS 2.0 and Atom 1.0 through feedgen: the only module that touches feedgen.

feedgen's traps, handled here once:
- feed and entry ``updated`` default to *now*: we always set them from the data;
- the default generator embeds feedgen's version: we name infrafeed instead;
- the RSS channel ``<link>`` is the last link added: ``rel=self`` goes first;
- ``logo()`` also sets RSS's ``<image>`` and ``image()`` Atom's ``<logo>``: each
  document gets its own (RSS's image must be a GIF, JPEG or PNG);
- RSS ``<author>`` is an e-mail address: without one the author's name goes in
  ``dc:creator`` instead (an item with both is a W3C validator warning);
- RSS ``<description>`` is HTML to readers, and feedgen would copy a plain-text
  summary into it: we give it the HTML body instead, so that a summary
  reading ``<script>`` is shown, not run;
- ``formatRFC2822`` switches the whole process's locale twice per date (and is
  a fifth of rendering RSS): an item's ``<pubDate>`` is written by
  :func:`rfc822` instead, in the same C-locale format;
- RSS gets no ``atom:link`` but ``rel=self``, so the RFC 5005 links, the WebSub
  ``hub`` link and the ``fh:complete``/``fh:archive`` markers come from
  :class:`_History`, a feedgen extension that writes them into RSS and Atom.

A document is rendered in parts (render/documents.py): each item once, from
one feedgen entry, as the bytes feedgen's pretty printer gives its ``<item>``
and ``<entry>`` at their place in a feed (:func:`item_elements`), and the
document's head and tail from the same feed with no entries.
"""

from __future__ import annotations

import datetime as dt
import html
from typing import Any

from feedgen.entry import FeedEntry
from feedgen.feed import FeedGenerator
from feedgen.util import xml_elem
from lxml import etree

from ..feeds.items import Item
from ..source.models import Site
from ..source.urls import absolute
from .documents import Frame, Head

# RFC 5005's namespace: fh:complete and fh:archive, in RSS and Atom alike.
FEED_HISTORY_NS = "http://purl.org/syndication/history/1.0"

_ATOM_NS = "http://www.w3.org/2005/Atom"
# The namespaces feedgen declares on <rss>: an <item> serialized below them
# comes out as it does in a real document.
_DC_NS = "http://purl.org/dc/elements/1.1/"
_RSS_NAMESPACES = {
    "atom": _ATOM_NS,
    "content": "http://purl.org/rss/1.0/modules/content/",
    "dc": _DC_NS,
}
_RSS_ITEMS_START = b"<channel>\n"
_RSS_TAIL = b"  </channel>\n</rss>\n"
_ATOM_ITEMS_START = b"<feed>\n"
_ATOM_TAIL = b"</feed>\n"
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def rss_frame(doc: Head) -> Frame:
    """The RSS document of ``doc`` around its items."""
    return _frame(_rss_bytes(_feed(doc), doc), _RSS_TAIL)


def atom_frame(doc: Head) -> Frame:
    """The Atom document of ``doc`` around its items."""
    return _frame(_atom_bytes(_feed(doc), doc), _ATOM_TAIL)


def item_elements(item: Item, site: Site) -> tuple[bytes, bytes]:
    """The item's RSS ``<item>`` and Atom ``<entry>``, as they appear in a document.

    One feedgen entry for both: its RSS element is taken before the fields
    that only Atom has are set, since feedgen would copy them into RSS.
    """
    entry = FeedEntry()
    _common_fields(entry, item, site)
    _rss_fields(entry, item)
    rss = entry.rss_entry()
    xml_elem("pubDate", rss).text = rfc822(item.published)
    if not site.author.email:  # where feedgen's dc extension puts it, after pubDate
        xml_elem(f"{{{_DC_NS}}}creator", rss).text = site.author.name
    _atom_fields(entry, item)
    atom = entry.atom_entry()

    root = etree.Element("rss", nsmap=_RSS_NAMESPACES)
    xml_elem("channel", root).append(rss)
    rss_part = _inside(root, _RSS_ITEMS_START, _RSS_TAIL)
    root = etree.Element("feed")
    root.append(atom)
    return rss_part, _inside(root, _ATOM_ITEMS_START, _ATOM_TAIL)


def _rss_bytes(fg: FeedGenerator, doc: Head) -> bytes:
    fg.lastBuildDate(doc.updated)
    fg.docs("https://www.rssboard.org/rss-specification")
    fg.load_extension("dc", atom=False)  # declares dc: for the items' dc:creator
    image = next((i for i in (doc.site.logo, doc.site.favicon) if i and _raster(i)), None)
    if image:  # titled and linked like the channel, as the W3C validator wants
        fg.image(absolute(doc.site.url, image))
    return bytes(fg.rss_str(pretty=True))


def _atom_bytes(fg: FeedGenerator, doc: Head) -> bytes:
    if doc.site.favicon:
        fg.icon(absolute(doc.site.url, doc.site.favicon))
    if doc.site.logo:
        fg.logo(absolute(doc.site.url, doc.site.logo))
    return bytes(fg.atom_str(pretty=True))


def _raster(reference: str) -> bool:
    return reference.split("?")[0].lower().endswith((".png", ".gif", ".jpg", ".jpeg"))


def _frame(empty: bytes, tail: bytes) -> Frame:
    if not empty.endswith(tail):
        raise RuntimeError(f"feedgen's document no longer ends with {tail!r}: {empty[-80:]!r}")
    # Items are the last children of <channel> and <feed>, each printed with
    # its line break: they follow the head with nothing between them.
    return Frame(empty[: -len(tail)], b"", tail, empty)


def _inside(root: Any, start: bytes, tail: bytes) -> bytes:
    """What ``root`` prints between ``start`` and ``tail``: its one entry, as deep as in a feed."""
    text = bytes(etree.tostring(root, pretty_print=True, encoding="UTF-8"))
    begin = text.find(start)
    if begin < 0 or not text.endswith(tail):
        raise RuntimeError(f"lxml no longer prints an entry as expected: {text[:80]!r}")
    return text[begin + len(start) : -len(tail)]


def _feed(doc: Head) -> FeedGenerator:
    site, spec = doc.site, doc.spec
    fg = FeedGenerator()
    fg.id(spec.id)
    fg.title(spec.title)
    fg.subtitle(spec.description)  # RSS <description> and Atom <subtitle>
    fg.language(site.language)  # RSS <language> and Atom xml:lang
    fg.updated(doc.updated)
    fg.author(_author(site))
    if doc.generator_version is None:
        fg.generator("infrafeed")
    else:
        fg.generator(f"infrafeed {doc.generator_version}", version=doc.generator_version)
    # Order matters for RSS: its channel <link> is the last link added.
    fg.link(href=doc.self_url, rel="self", type=doc.format.media_type)
    fg.link(href=spec.home_url, rel="alternate", type="text/html")
    fg.register_extension("history", _History)
    fg.history.configure(doc)
    return fg


def _common_fields(entry: FeedEntry, item: Item, site: Site) -> None:
    entry.id(item.id)
    entry.author(_author(site))
    entry.guid(item.id, permalink=False)
    entry.title(item.title)
    entry.link(href=item.link, rel="alternate", type="text/html")
    entry.updated(item.published)
    for category in item.categories:
        entry.category(term=category)


def _author(site: Site) -> dict[str, str]:
    found = {"name": site.author.name, "uri": site.author.url, "email": site.author.email}
    return {key: value for key, value in found.items() if value}


def _rss_fields(entry: FeedEntry, item: Item) -> None:
    # RSS readers treat <description> as HTML, so it carries the HTML body;
    # a plain-text summary there would let "<b>" in the text become markup.
    entry.description(item.content_html)


def _atom_fields(entry: FeedEntry, item: Item) -> None:
    entry.published(item.published)
    entry.content(item.content_html, type="html")
    if item.summary:
        # As escaped HTML, so text such as "</b>" stays text for every reader.
        entry.summary(html.escape(item.summary, quote=False), type="html")


class _History:
    """feedgen extension: RFC 5005 paging links and markers, and the WebSub hub.

    feedgen instantiates it without arguments; :meth:`configure` gives it the
    document. Written as ``atom:link`` in RSS too, as RFC 5005 appendix B says.
    """

    def __init__(self) -> None:
        self.links: list[tuple[str, str]] = []
        self.marker = ""
        self.media_type = ""

    def configure(self, doc: Head) -> None:
        # The subscription document of an archived feed carries no marker (RFC 5005 §4).
        self.marker = {"complete": "complete", "archive": "archive", "current": ""}[doc.role]
        self.media_type = doc.format.media_type
        for rel, href in (
            ("hub", doc.hub),
            ("current", doc.current_url),
            ("prev-archive", doc.prev_archive_url),
            ("next-archive", doc.next_archive_url),
        ):
            if href is not None:
                self.links.append((rel, href))

    def extend_ns(self) -> dict[str, str]:
        return {"fh": FEED_HISTORY_NS} if self.marker else {}

    def extend_atom(self, feed: Any) -> Any:
        # feedgen writes Atom elements unqualified under a default xmlns
        # attribute; qualified ones would come out as ns0:link.
        self._extend(feed, "link")
        return feed

    def extend_rss(self, feed: Any) -> Any:
        self._extend(feed.find("channel"), f"{{{_ATOM_NS}}}link")
        return feed

    def _extend(self, parent: Any, link_tag: str) -> None:
        for rel, href in self.links:
            attributes = {"href": href, "rel": rel}
            if rel != "hub":  # a hub is not a feed document
                attributes["type"] = self.media_type
            xml_elem(link_tag, parent, **attributes)
        if self.marker:
            xml_elem(f"{{{FEED_HISTORY_NS}}}{self.marker}", parent)


def rfc822(moment: dt.datetime) -> str:
    """``moment`` as feedgen writes RSS dates (strftime in the C locale)."""
    day, month = _DAYS[moment.weekday()], _MONTHS[moment.month - 1]
    return f"{day}, {moment:%d} {month} {moment:%Y %H:%M:%S %z}"
