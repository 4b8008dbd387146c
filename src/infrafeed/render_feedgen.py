"""RSS 2.0 and Atom 1.0 through feedgen: the only module that touches feedgen.

feedgen's traps, handled here once (see STYLE.md):
- ``add_entry`` prepends by default: we append, so the document is newest first;
- feed and entry ``updated`` default to *now*: we always set them from the data;
- the default generator embeds feedgen's version: we name infrafeed instead;
- the RSS channel ``<link>`` is the last link added: ``rel=self`` goes first;
- RSS ``<author>`` needs an e-mail address, so items carry none (Atom has the
  feed's author, which W3C's validator requires);
- RSS ``<description>`` is HTML to readers, and feedgen copies the plain-text
  summary into it: we give it the summary HTML-escaped, so that a summary
  reading ``<script>`` is shown, not run;
- ``rss_file``/``atom_file`` write in place: we take the bytes and publish them
  atomically elsewhere.
"""

from __future__ import annotations

import html

from feedgen.feed import FeedGenerator

from .document import FeedDocument
from .urls import absolute


def render_rss(doc: FeedDocument) -> bytes:
    fg = _feed(doc)
    fg.lastBuildDate(doc.updated)
    fg.docs("https://www.rssboard.org/rss-specification")
    return bytes(fg.rss_str(pretty=True))


def render_atom(doc: FeedDocument) -> bytes:
    return bytes(_feed(doc).atom_str(pretty=True))


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
    for item in doc.items:
        entry = fg.add_entry(order="append")
        entry.id(item.id)
        entry.guid(item.id, permalink=False)
        entry.title(item.title)
        entry.link(href=item.link, rel="alternate", type="text/html")
        entry.published(item.published)
        entry.updated(item.published)
        if item.summary:
            # Order matters: description() also sets Atom <content>, which
            # content() then replaces; summary() keeps a description already set.
            entry.description(html.escape(item.summary, quote=False))
        entry.content(item.content_html, type="html")
        if item.summary:
            entry.summary(item.summary)
        for category in item.categories:
            entry.category(term=category)
    return fg
