"""RSS 2.0 and Atom 1.0: feedgen writes each document's head, items are printed as it would.

feedgen's traps, handled here once:
- ``updated`` defaults to *now*: feeds and entries always get it from the data;
- the default generator names feedgen's version: we name infrafeed's;
- ``logo()`` also sets RSS's ``<image>`` and ``image()`` Atom's ``<logo>``: each
  document gets its own (RSS's must be a GIF, JPEG or PNG: parts.images);
- RSS ``<author>`` is an e-mail address: without one, ``dc:creator`` names the
  author (an item with both is a W3C validator warning);
- RSS ``<description>`` is HTML to readers: it gets the HTML body, never the
  plain-text summary, whose ``<script>`` would run;
- ``formatRFC2822`` switches the process's locale twice per date:
  ``email.utils.format_datetime`` writes the same ``<pubDate>`` and ``<lastBuildDate>``
  (for years from 1000).

Plain text (all but the HTML of descriptions, contents and summaries) writes "&" and "<" as
hexadecimal character references, as the RSS Best Practices Profile asks: the W3C validator
warns of a title that shows "std::vector<float>" or "&amp;" written otherwise.
"""

from __future__ import annotations

import datetime as dt
import functools
import html
import re
from email.utils import format_datetime
from typing import Any
from xml.sax.saxutils import escape

from feedgen.feed import FeedGenerator
from feedgen.util import xml_elem

from ..feeds.items import Item
from ..source.models import Author, Site
from ..source.urls import encoded
from .parts import Frame, Head, images

# RFC 5005's namespace: fh:complete and fh:archive, in RSS and Atom alike.
_FEED_HISTORY_NS = "http://purl.org/syndication/history/1.0"


def rss_frame(doc: Head) -> Frame:
    return _frame(_plain(_rss_bytes(_feed(doc), doc)), b"  </channel>\n</rss>\n")


def atom_frame(doc: Head) -> Frame:
    return _frame(_plain(_atom_bytes(_feed(doc), doc)), b"</feed>\n")


def comment(name: str) -> str:
    """``name`` as an RFC 822 comment: as it is where its parentheses pair up (nested comments
    are RFC 822's own, and readers show the text as written), else with parentheses and
    backslashes escaped, since a lone ")" would end the comment and break the address."""
    depth = 0
    for ch in name:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            break
    return name if depth == 0 and "\\" not in name else re.sub(r"[\\()]", r"\\\g<0>", name)


@functools.cache
def _author(author: Author) -> tuple[str, str, str]:
    """The site's author as every item prints it: RSS ``<author>`` (an address) or else
    ``dc:creator``, and Atom's ``<author>``. The same for each item: made once."""
    rss = dc = ""
    if author.email:
        rss = f"      <author>{_text(f'{author.email} ({comment(author.name)})')}</author>\n"
    else:
        dc = f"      <dc:creator>{_text(author.name)}</dc:creator>\n"
    uri = encoded(author.url) if author.url else None
    fields = [("name", author.name), ("email", author.email), ("uri", uri)]  # a name is never ""
    inner = "".join(f"      <{f}>{_text(v)}</{f}>\n" for f, v in fields if v)
    atom = f"    <author>\n{inner}    </author>\n"
    return rss, dc, atom


def item_elements(item: Item, site: Site) -> tuple[bytes, bytes]:
    """The item's RSS ``<item>`` and Atom ``<entry>``, as feedgen and lxml print them in a feed.

    Not a feedgen entry: it makes and prints an lxml tree per entry, much of a cold build.
    tests/test_render_parts.py holds these to feedgen's own documents, for any item.
    """
    title, link, id_ = _text(item.title), _text(item.link), _text(item.id)
    rss_author, dc_creator, atom_author = _author(site.author)
    content = _html(item.content_html)
    rss = [f"    <item>\n      <title>{title}</title>\n      <link>{link}</link>\n"]
    rss.append(f"      <description>{content}</description>\n{rss_author}")
    rss.append(f'      <guid isPermaLink="false">{id_}</guid>\n')
    rss += [f"      <category>{_text(c)}</category>\n" for c in item.categories]
    rss.append(f"      <pubDate>{format_datetime(rss_moment(item.published))}</pubDate>\n")
    rss.append(f"{dc_creator}    </item>\n")  # where feedgen's dc extension puts it
    updated = item.published.isoformat()
    atom = [f"  <entry>\n    <id>{id_}</id>\n    <title>{title}</title>\n"]
    atom.append(f"    <updated>{updated}</updated>\n{atom_author}")
    atom.append(f'    <content type="html">{content}</content>\n')
    atom.append(f'    <link href="{_attribute(item.link)}"/>\n')  # feedgen drops rel=alternate
    if item.summary:
        # As escaped HTML, so text such as "</b>" stays text for every reader.
        summary = _html(html.escape(item.summary, quote=False))
        atom.append(f'    <summary type="html">{summary}</summary>\n')
    atom += [f'    <category term="{_attribute(c)}"/>\n' for c in item.categories]
    atom.append(f"    <published>{updated}</published>\n  </entry>\n")
    return "".join(rss).encode(), "".join(atom).encode()


def _html(value: str) -> str:
    """``value`` as lxml prints an element's text."""
    return escape(value, {"\r": "&#13;"})


def _text(value: str) -> str:
    """Plain text (see above): as lxml prints it, then "&" and "<" as character references."""
    return _html(value).replace("&amp;", "&#x26;").replace("&lt;", "&#x3C;")


def _plain(head: bytes) -> bytes:
    """A document from feedgen, with no item: all its text is plain (see above)."""
    return head.replace(b"&amp;", b"&#x26;").replace(b"&lt;", b"&#x3C;")


def _attribute(value: str) -> str:
    """``value`` as lxml prints an attribute's."""
    return _text(value).replace('"', "&quot;").replace("\n", "&#10;").replace("\t", "&#9;")


def _rss_bytes(fg: FeedGenerator, doc: Head) -> bytes:
    # Left out of feedgen (see above: its formatRFC2822 switches the process's locale, which a
    # library's host may use in other threads), written after <language>, where feedgen puts it.
    fg._FeedGenerator__rss_lastBuildDate = None  # feedgen has no public way to unset it
    fg.docs("https://www.rssboard.org/rss-specification")
    fg.load_extension("dc", atom=False)  # declares dc: for the items' dc:creator
    if (image := images(doc.site).rss) is not None:  # titled and linked like the channel
        url, side = image
        size = None if side is None else str(side)
        fg.image(url, width=size, height=size)
    head = bytes(fg.rss_str(pretty=True))
    built = f"</language>\n    <lastBuildDate>{format_datetime(rss_moment(doc.updated))}"
    if b"<lastBuildDate>" in head or head.count(b"</language>\n") != 1:
        raise RuntimeError(f"feedgen's channel is no longer as it was: {head[:600]!r}")
    return head.replace(b"</language>\n", f"{built}</lastBuildDate>\n".encode())


def _atom_bytes(fg: FeedGenerator, doc: Head) -> bytes:
    icon, logo, _, _ = images(doc.site)
    if icon:
        fg.icon(icon)
    if logo:
        fg.logo(logo)
    return bytes(fg.atom_str(pretty=True))


def _frame(empty: bytes, tail: bytes) -> Frame:
    if not empty.endswith(tail):
        raise RuntimeError(f"feedgen's document no longer ends with {tail!r}: {empty[-80:]!r}")
    # Items are the last children of <channel> and <feed>, each printed with
    # its line break: they follow the head with nothing between them.
    return Frame(empty[: -len(tail)], b"", tail, empty)


def _feed(doc: Head) -> FeedGenerator:
    site, spec = doc.site, doc.spec
    fg = FeedGenerator()
    fg.id(spec.id)
    fg.title(spec.title)
    fg.subtitle(spec.description)  # RSS <description> and Atom <subtitle>
    fg.language(site.language)  # RSS <language> and Atom xml:lang
    fg.updated(doc.updated)
    uri = encoded(site.author.url) if site.author.url else None
    author = {"name": site.author.name, "uri": uri, "email": site.author.email}
    fg.author({key: value for key, value in author.items() if value})
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


class _History:
    """feedgen extension: the RFC 5005 links and markers and the WebSub hub, as ``atom:link`` in
    RSS too (RFC 5005 appendix B). feedgen makes it bare; :func:`_feed` then gives it ``doc``."""

    doc: Head

    def extend_ns(self) -> dict[str, str]:
        # The subscription document of an archived feed has no marker (RFC 5005 §4).
        return {} if self.doc.role == "current" else {"fh": _FEED_HISTORY_NS}

    def extend_atom(self, feed: Any) -> Any:
        # feedgen writes Atom elements unqualified under a default xmlns
        # attribute; qualified ones would come out as ns0:link.
        self._extend(feed, "link")
        return feed

    def extend_rss(self, feed: Any) -> Any:
        self._extend(feed.find("channel"), "{http://www.w3.org/2005/Atom}link")
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
            xml_elem(f"{{{_FEED_HISTORY_NS}}}{doc.role}", parent)


def rss_moment(moment: dt.datetime) -> dt.datetime:
    """``moment`` as RSS and OPML dates carry it: in UTC where the site's offset is not a whole
    or half hour (Nepal's +0545), which the W3C validator takes for a mistake. The same instant."""
    offset = moment.utcoffset() or dt.timedelta()
    return moment if not offset % dt.timedelta(minutes=30) else moment.astimezone(dt.UTC)
