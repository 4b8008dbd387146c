"""RSS 2.0 and Atom 1.0 through feedgen: the only module that touches feedgen.

feedgen's traps, handled here once (see STYLE.md):
- ``add_entry`` prepends by default: we append, so the document is newest first;
- feed and entry ``updated`` default to *now*: we always set them from the data;
- the default generator embeds feedgen's version: we name infrafeed instead;
- the RSS channel ``<link>`` is the last link added: ``rel=self`` goes first;
- RSS ``<author>`` needs an e-mail address, so items carry none (Atom has the
  feed's author, which W3C's validator requires);
- ``rss_file``/``atom_file`` write in place: we take the bytes and publish them
  atomically elsewhere;
- ``formatRFC2822`` switches the whole process's locale twice per date, and
  an item's ``<pubDate>`` is its last element: we add that element ourselves.

A document is rendered in parts (see render.py): each item once, as the
bytes feedgen's pretty printer gives its ``<item>`` or ``<entry>`` at its
place in a feed, and the feed's head and tail from a feed with no entries.
Joined, they are byte for byte the document feedgen writes with every entry
added (tests/test_render_parts.py checks this), but an item in several feeds,
or unchanged since the last build, is rendered once.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from feedgen.entry import FeedEntry
from feedgen.feed import FeedGenerator
from lxml import etree

from .document import FeedDocument
from .items import Item
from .render import Frame, join
from .urls import absolute

# The namespaces feedgen declares on <rss>: an <item> serialized under them
# uses the same prefixes as in the real document.
_RSS_NAMESPACES = {
    "atom": "http://www.w3.org/2005/Atom",
    "content": "http://purl.org/rss/1.0/modules/content/",
}
_RSS_TAIL = b"  </channel>\n</rss>\n"
_ATOM_TAIL = b"</feed>\n"
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def render_rss(doc: FeedDocument) -> bytes:
    return rss_document(doc, (entries(item)[0] for item in doc.items))


def render_atom(doc: FeedDocument) -> bytes:
    return atom_document(doc, (entries(item)[1] for item in doc.items))


def rss_document(doc: FeedDocument, items: Iterable[bytes]) -> bytes:
    """The RSS document of ``doc`` around its items' ``<item>`` parts, in order."""
    return join(rss_frame(doc), items)


def atom_document(doc: FeedDocument, items: Iterable[bytes]) -> bytes:
    """The Atom document of ``doc`` around its items' ``<entry>`` parts, in order."""
    return join(atom_frame(doc), items)


def rss_frame(doc: FeedDocument) -> Frame:
    fg = _feed(doc)
    fg.lastBuildDate(doc.updated)
    fg.docs("https://www.rssboard.org/rss-specification")
    return _frame(bytes(fg.rss_str(pretty=True)), _RSS_TAIL)


def atom_frame(doc: FeedDocument) -> Frame:
    return _frame(bytes(_feed(doc).atom_str(pretty=True)), _ATOM_TAIL)


def entries(item: Item) -> tuple[bytes, bytes]:
    """The item's RSS ``<item>`` and Atom ``<entry>``, as they appear in a feed."""
    entry = FeedEntry()
    entry.id(item.id)
    entry.guid(item.id, permalink=False)
    entry.title(item.title)
    entry.link(href=item.link, rel="alternate", type="text/html")
    entry.updated(item.published)
    entry.content(item.content_html, type="html")
    if item.summary:
        entry.summary(item.summary)
    for category in item.categories:
        entry.category(term=category)
    rss = entry.rss_entry()
    etree.SubElement(rss, "pubDate").text = rfc822(item.published)
    entry.published(item.published)
    atom = entry.atom_entry()

    root = etree.Element("rss", nsmap=_RSS_NAMESPACES)
    etree.SubElement(root, "channel").append(rss)
    text = etree.tostring(root, pretty_print=True, encoding="UTF-8")
    rss_part = text[text.index(b"<channel>\n") + len(b"<channel>\n") : -len(_RSS_TAIL)]
    root = etree.Element("feed")
    root.append(atom)
    text = etree.tostring(root, pretty_print=True, encoding="UTF-8")
    atom_part = text[text.index(b"<feed>\n") + len(b"<feed>\n") : -len(_ATOM_TAIL)]
    return rss_part, atom_part


def rfc822(moment: dt.datetime) -> str:
    """``moment`` as feedgen writes RSS dates (strftime's C locale), without setlocale."""
    day, month = _DAYS[moment.weekday()], _MONTHS[moment.month - 1]
    return f"{day}, {moment:%d} {month} {moment:%Y %H:%M:%S %z}"


def _frame(empty: bytes, tail: bytes) -> Frame:
    if not empty.endswith(tail):
        raise AssertionError(f"feedgen's document no longer ends with {tail!r}")
    return Frame(empty[: -len(tail)], b"", tail, empty)


def _feed(doc: FeedDocument) -> FeedGenerator:
    site, spec = doc.site, doc.spec
    fg = FeedGenerator()
    fg.id(spec.id)
    fg.title(spec.title)
    fg.subtitle(spec.description)  # RSS <description> and Atom <subtitle>
    fg.language(site.language)  # RSS <language> and Atom xml:lang
    fg.updated(doc.updated)
    author = {"name": site.author.name}
    if site.author.url:
        author["uri"] = site.author.url
    fg.author(author)
    fg.generator(f"infrafeed {doc.generator_version}", version=doc.generator_version)
    if site.icon:
        fg.icon(absolute(site.url, site.icon))
    # Order matters for RSS: its channel <link> is the last link added.
    fg.link(href=doc.self_url, rel="self", type=doc.format.media_type)
    fg.link(href=spec.home_url, rel="alternate", type="text/html")
    return fg
