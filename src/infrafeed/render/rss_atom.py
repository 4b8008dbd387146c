"""RSS 2.0 and Atom 1.0 through feedgen: the only module that touches feedgen.

feedgen's traps, handled here once:
- ``updated`` defaults to *now*: feeds and entries always get it from the data;
- the default generator names feedgen's version: we name infrafeed's;
- RSS's channel ``<link>`` is the last link added: ``rel=self`` goes first;
- ``logo()`` also sets RSS's ``<image>`` and ``image()`` Atom's ``<logo>``: each
  document gets its own (RSS's must be a GIF, JPEG or PNG);
- RSS ``<author>`` is an e-mail address: without one, ``dc:creator`` names the
  author (an item with both is a W3C validator warning);
- RSS ``<description>`` is HTML to readers: it gets the HTML body, never the
  plain-text summary, whose ``<script>`` would run;
- ``formatRFC2822`` switches the process's locale twice per date (a fifth of
  rendering RSS): :func:`rfc822` writes the same C-locale ``<pubDate>``;
- RSS gets no ``atom:link`` but self: :class:`_History` writes the RFC 5005
  links and markers and the WebSub hub into RSS and Atom.

Each item is rendered once, from one feedgen entry (:func:`item_elements`); a
document's head and tail come from the same feed with no entries.
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
_CONTENT_NS = "http://purl.org/rss/1.0/modules/content/"
_DC_NS = "http://purl.org/dc/elements/1.1/"
# The namespaces feedgen declares on <rss>: an <item> printed below them is as in a feed.
_RSS_NAMESPACES = {"atom": _ATOM_NS, "content": _CONTENT_NS, "dc": _DC_NS}
_RSS_ITEMS_START, _RSS_TAIL = b"<channel>\n", b"  </channel>\n</rss>\n"
_ATOM_ITEMS_START, _ATOM_TAIL = b"<feed>\n", b"</feed>\n"
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def rss_frame(doc: Head) -> Frame:
    return _frame(_rss_bytes(_feed(doc), doc), _RSS_TAIL)


def atom_frame(doc: Head) -> Frame:
    return _frame(_atom_bytes(_feed(doc), doc), _ATOM_TAIL)


def item_elements(item: Item, site: Site) -> tuple[bytes, bytes]:
    """The item's RSS ``<item>`` and Atom ``<entry>``, as they appear in a document.

    One feedgen entry for both: its RSS element is taken before the fields
    that only Atom has are set, since feedgen would copy them into RSS.
    """
    entry = FeedEntry()
    _common_fields(entry, item, site)
    entry.description(item.content_html)
    rss = entry.rss_entry()
    xml_elem("pubDate", rss).text = rfc822(item.published)
    if not site.author.email:  # where feedgen's dc extension puts it, after pubDate
        xml_elem(f"{{{_DC_NS}}}creator", rss).text = site.author.name
    _atom_fields(entry, item)
    rss_root = etree.Element("rss", nsmap=_RSS_NAMESPACES)
    xml_elem("channel", rss_root).append(rss)
    atom_root = etree.Element("feed")
    atom_root.append(entry.atom_entry())
    rss_part = _inside(rss_root, _RSS_ITEMS_START, _RSS_TAIL)
    return rss_part, _inside(atom_root, _ATOM_ITEMS_START, _ATOM_TAIL)


def _rss_bytes(fg: FeedGenerator, doc: Head) -> bytes:
    fg.lastBuildDate(doc.updated)
    fg.docs("https://www.rssboard.org/rss-specification")
    fg.load_extension("dc", atom=False)  # declares dc: for the items' dc:creator
    for image in (doc.site.logo, doc.site.favicon):
        if image and image.split("?")[0].lower().endswith((".png", ".gif", ".jpg", ".jpeg")):
            fg.image(absolute(doc.site.url, image))  # titled and linked like the channel
            break
    return bytes(fg.rss_str(pretty=True))


def _atom_bytes(fg: FeedGenerator, doc: Head) -> bytes:
    if doc.site.favicon:
        fg.icon(absolute(doc.site.url, doc.site.favicon))
    if doc.site.logo:
        fg.logo(absolute(doc.site.url, doc.site.logo))
    return bytes(fg.atom_str(pretty=True))


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
    fg.history.doc = doc
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


def _atom_fields(entry: FeedEntry, item: Item) -> None:
    entry.published(item.published)
    entry.content(item.content_html, type="html")
    if item.summary:
        # As escaped HTML, so text such as "</b>" stays text for every reader.
        entry.summary(html.escape(item.summary, quote=False), type="html")


class _History:
    """feedgen extension: RFC 5005 paging links and markers, and the WebSub hub.

    feedgen makes it with no arguments; :func:`_feed` then gives it ``doc``.
    Written as ``atom:link`` in RSS too, as RFC 5005 appendix B says.
    """

    doc: Head

    def extend_ns(self) -> dict[str, str]:
        # The subscription document of an archived feed has no marker (RFC 5005 §4).
        return {} if self.doc.role == "current" else {"fh": FEED_HISTORY_NS}

    def extend_atom(self, feed: Any) -> Any:
        # feedgen writes Atom elements unqualified under a default xmlns
        # attribute; qualified ones would come out as ns0:link.
        self._extend(feed, "link")
        return feed

    def extend_rss(self, feed: Any) -> Any:
        self._extend(feed.find("channel"), f"{{{_ATOM_NS}}}link")
        return feed

    def _extend(self, parent: Any, link_tag: str) -> None:
        doc = self.doc
        links = {"hub": doc.hub, "current": doc.current_url}
        links |= {"prev-archive": doc.prev_archive_url, "next-archive": doc.next_archive_url}
        for rel, href in links.items():
            if href is not None:  # a hub is not a feed document: it has no type
                media = {} if rel == "hub" else {"type": doc.format.media_type}
                xml_elem(link_tag, parent, href=href, rel=rel, **media)
        if doc.role != "current":
            xml_elem(f"{{{FEED_HISTORY_NS}}}{doc.role}", parent)


def rfc822(moment: dt.datetime) -> str:
    """``moment`` as feedgen writes RSS dates (strftime in the C locale)."""
    day, month = _DAYS[moment.weekday()], _MONTHS[moment.month - 1]
    return f"{day}, {moment:%d} {month} {moment:%Y %H:%M:%S %z}"
