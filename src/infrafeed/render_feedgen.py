"""RSS 2.0 and Atom 1.0 through feedgen: the only module that touches feedgen.

feedgen's traps, handled here once (see STYLE.md):
- ``add_entry`` prepends by default: we append, so the document is newest first;
- feed and entry ``updated`` default to *now*: we always set them from the data;
- the default generator embeds feedgen's version: we name infrafeed instead;
- the RSS channel ``<link>`` is the last link added: ``rel=self`` goes first;
- RSS ``<author>`` needs an e-mail address, so items carry none (Atom has the
  feed's author, which W3C's validator requires);
- RSS ``<description>`` is HTML to readers, and feedgen would copy a plain-text
  summary into it: we give it the escaped HTML body instead, so that a summary
  reading ``<script>`` is shown, not run;
- ``formatRFC2822`` switches the whole process's locale twice per date (and
  is a fifth of rendering RSS): an item's ``<pubDate>``, its last element, is
  written by :class:`_ItemDate` instead, in the same C-locale format;
- ``rss_file``/``atom_file`` write in place: we take the bytes and publish them
  atomically elsewhere;
- RSS gets no ``atom:link`` but ``rel=self``, so the RFC 5005 links
  (``prev-archive``, ``next-archive``, ``current``), the WebSub ``hub`` link and
  the ``fh:complete``/``fh:archive`` markers come from :class:`_History`, a
  feedgen extension that writes them the same way into RSS and Atom.
"""

from __future__ import annotations

import datetime as dt
import html
from typing import Any

from feedgen.feed import FeedGenerator
from feedgen.util import xml_elem

from .document import FEED_HISTORY_NS, FeedDocument
from .urls import absolute

_ATOM_NS = "http://www.w3.org/2005/Atom"
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def render_rss(doc: FeedDocument) -> bytes:
    fg = _feed(doc, rss=True)
    fg.lastBuildDate(doc.updated)
    fg.docs("https://www.rssboard.org/rss-specification")
    return bytes(fg.rss_str(pretty=True))


def render_atom(doc: FeedDocument) -> bytes:
    return bytes(_feed(doc, rss=False).atom_str(pretty=True))


def _feed(doc: FeedDocument, *, rss: bool) -> FeedGenerator:
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
    if doc.generator_version is None:
        fg.generator("infrafeed")
    else:
        fg.generator(f"infrafeed {doc.generator_version}", version=doc.generator_version)
    if site.icon:
        fg.icon(absolute(site.url, site.icon))
    # Order matters for RSS: its channel <link> is the last link added.
    fg.link(href=doc.self_url, rel="self", type=doc.format.media_type)
    fg.link(href=spec.home_url, rel="alternate", type="text/html")
    fg.register_extension("history", _History, _ItemDate if rss else None)
    fg.history.configure(doc)
    for item in doc.items:
        entry = fg.add_entry(order="append")
        entry.id(item.id)
        entry.guid(item.id, permalink=False)
        entry.title(item.title)
        entry.link(href=item.link, rel="alternate", type="text/html")
        entry.updated(item.published)
        if rss:
            entry.history.published = item.published
            # RSS readers treat <description> as HTML, so it carries the HTML body;
            # a plain-text summary there would let "<b>" in the text become markup.
            entry.description(item.content_html)
        else:
            entry.published(item.published)
            entry.content(item.content_html, type="html")
            if item.summary:
                # As escaped HTML, so text such as "</b>" stays text for every reader.
                entry.summary(html.escape(item.summary, quote=False), type="html")
        for category in item.categories:
            entry.category(term=category)
    return fg


class _History:
    """feedgen extension: RFC 5005 paging links and markers, and the WebSub hub.

    feedgen instantiates it without arguments; :meth:`configure` gives it the
    document. Written as ``atom:link`` in RSS too, as RFC 5005 appendix B says.
    """

    def __init__(self) -> None:
        self.links: list[tuple[str, str]] = []
        self.marker = ""
        self.media_type = ""

    def configure(self, doc: FeedDocument) -> None:
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


class _ItemDate:
    """feedgen entry extension: an RSS item's ``<pubDate>``, without ``setlocale``.

    Written where feedgen would write it: items have no ``<source>``, so it is
    the element before the extensions'.
    """

    def __init__(self) -> None:
        self.published: dt.datetime | None = None

    def extend_atom(self, entry: Any) -> Any:
        return entry

    def extend_rss(self, entry: Any) -> Any:
        if self.published is not None:
            xml_elem("pubDate", entry).text = rfc822(self.published)
        return entry


def rfc822(moment: dt.datetime) -> str:
    """``moment`` as feedgen writes RSS dates (strftime in the C locale)."""
    day, month = _DAYS[moment.weekday()], _MONTHS[moment.month - 1]
    return f"{day}, {moment:%d} {month} {moment:%Y %H:%M:%S %z}"
