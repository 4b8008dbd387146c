"""The site files about the feeds: the HTML pages, ``head-links.html``, ``feeds.json`` and OPML.

They show the same facts about each feed, decided once in its :class:`_FeedView`. The pages are
Jinja2 templates with every word from the settings (``[words]``); autoescaping is on, and only
:func:`fill`, :func:`wbr` and the items' summaries (``inline.to_html``) make markup, from
escaped text, so the entries' text stays text.
Links between generated files are relative, so the pages work wherever ``output/`` is served;
the URLs shown for copying, and the head snippet's, are the public absolute ones.
"""

from __future__ import annotations

import email.utils
import functools
import itertools
import json
import posixpath
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple
from urllib.parse import quote

import jinja2
from markupsafe import Markup, escape

from ..feeds.history import Document, FeedHistory
from ..feeds.items import Item
from ..feeds.specs import FORMATS, FeedSpec, Format, document_path, document_url
from ..source.models import Module, Site
from ..source.urls import absolute, encoded
from .parts import FAVICON, ICON, ItemParts
from .rss_atom import rss_moment

# Readers whose "subscribe" address takes the feed's URL as a parameter, in the
# forms they document for subscribe buttons; everyone else copies the URL.
_READERS = (
    ("Feedly", "https://feedly.com/i/subscription/feed%2F{url}"),
    ("Inoreader", "https://www.inoreader.com/?add_feed={url}"),
)
# Two ways to subscribe to everything, never both: each item would come twice.
OPML = {"everything": "feeds.opml", "modules": "modules.opml"}
_LATEST = 20  # items listed on the index page
# Where a module page's list items go: a constant, and no text holds a NUL.
_LIST_ITEMS = Markup("\x00list items\x00")


class _FormatLink(NamedTuple):
    format: Format
    path: str  # below the output folder
    url: str  # public, absolute


class _FeedView(NamedTuple):
    """A feed as the site files show it: its spec and history, and where its files are."""

    spec: FeedSpec
    history: FeedHistory
    module: Module | None
    page_path: str  # this feed's HTML page below the output folder
    links: tuple[_FormatLink, ...]  # the subscription document in every format
    subscribe: tuple[tuple[str, str], ...]  # (reader, its subscribe URL)
    archives: tuple[tuple[str, int, tuple[_FormatLink, ...]], ...]  # (month, count, links)


def _links(site: Site, document: Document) -> tuple[_FormatLink, ...]:
    folder = document.folder
    return tuple(
        _FormatLink(f, document_path(folder, f), document_url(site, f, folder)) for f in FORMATS
    )


def feed_views(site: Site, histories: Sequence[FeedHistory]) -> tuple[_FeedView, ...]:
    views = []
    for history in histories:
        spec, links = history.spec, _links(site, history.current)
        rss = quote(links[0].url, safe="")  # readers subscribe to RSS: every reader knows it
        views.append(
            _FeedView(
                spec,
                history,
                None if spec.module is None else site.module(spec.module),
                f"{spec.folder}/index.html" if spec.folder else "index.html",
                links,
                tuple((name, form.format(url=rss)) for name, form in _READERS),
                tuple((a.month or "", len(a.items), _links(site, a)) for a in history.archives),
            )
        )
    return tuple(views)


def opml_files(views: Sequence[_FeedView]) -> dict[str, list[_FeedView]]:
    """The OPML files to write, by name, with their feeds: only those that have some."""
    found = {
        OPML["everything"]: [view for view in views if view.module is None],
        OPML["modules"]: [view for view in views if view.module is not None],
    }
    return {name: chosen for name, chosen in found.items() if chosen}


def render_feeds_json(site: Site, views: Sequence[_FeedView]) -> bytes:
    """One record per feed and format, flat: a page's feeds are one filter away (module.slug)."""
    feeds = []
    for view in views:
        m, spec, current = view.module, view.spec, view.history.current
        module = None if m is None else {"number": m.number, "name": m.name, "slug": m.slug}
        for link in view.links:
            feeds.append(
                {
                    "id": f"{spec.key}/{link.format.name}",
                    "feed": spec.key,
                    "title": spec.title,
                    "module": module,
                    "format": link.format.name,
                    "media_type": link.format.media_type,
                    "url": link.url,
                    "page_url": absolute(site.feeds.url, view.page_path),
                    "item_count": len(current.items),
                    "total_item_count": len(view.history.items),
                    "complete": view.history.complete,
                    "updated": current.updated.isoformat(),
                }
            )
    files = opml_files(views)
    data = {"version": 1, "title": site.title, "page_url": absolute(site.feeds.url, "index.html")}
    for key, name in (("opml_url", OPML["everything"]), ("modules_opml_url", OPML["modules"])):
        data[key] = absolute(site.feeds.url, name) if name in files else None
    data["feeds"] = feeds
    return (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def _html_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;")


def render_opml(site: Site, title: str, views: Sequence[_FeedView]) -> bytes:
    """OPML 2.0 listing ``views`` by their RSS documents (every reader knows RSS).

    OPML's texts may hold HTML, and the W3C validator reads them so: ours are escaped as HTML
    ("R&D" is "R&amp;D", "vector<float>" no tag): only & and <, so that a text without either
    reads the same as plain text.
    """
    root = ET.Element("opml", version="2.0")
    head = ET.SubElement(root, "head")
    ET.SubElement(head, "title").text = _html_text(title)
    newest = max(view.history.current.updated for view in views)
    ET.SubElement(head, "dateModified").text = email.utils.format_datetime(rss_moment(newest))
    ET.SubElement(head, "ownerName").text = _html_text(site.author.name)
    if site.author.url:
        ET.SubElement(head, "ownerId").text = encoded(site.author.url)
    body = ET.SubElement(root, "body")
    for view in views:
        spec = view.spec
        text, description = _html_text(spec.title), _html_text(spec.description)
        attributes = {"type": "rss", "text": text, "title": text, "description": description}
        attributes |= {"xmlUrl": view.links[0].url}
        # OPML 2.0: "RSS for 0.91, 0.92 or 2.0" ("RSS2" is no value of it).
        attributes |= {"htmlUrl": spec.home_url, "language": site.language, "version": "RSS"}
        ET.SubElement(body, "outline", attributes)
    ET.indent(root, space="  ")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{ET.tostring(root, "unicode")}\n'.encode()


def render_pages(
    site: Site, views: Sequence[_FeedView], items: Sequence[Item], parts: Mapping[str, ItemParts]
) -> Iterator[tuple[str, Sequence[bytes]]]:
    """Every page, as chunks; a module page lists its items' :func:`list_item` parts."""
    words, main = site.words, [view for view in views if view.module is None]
    common = {"site": site, "words": words, "archived": any(view.archives for view in views),
              "changelog": encoded(site.changelog),
              "icon": (ICON[0], FAVICON[0]) if site.feeds.icon else None}  # fmt: skip
    title = fill(words.page_title, site=site.title)
    # Only what a feed carries: with [feeds] all = false, a site-wide note is in none.
    fed = itertools.islice((i for i in items if site.feeds.all or i.module is not None), _LATEST)
    yield _page("index.html", "index.html", title=title, description=site.description,
                alternates=main or views, feeds=views, latest=tuple(fed),
                opml=opml_files(views), everything=OPML["everything"], **common)  # fmt: skip
    for view in views:
        if view.module is not None:
            own = view.history.items
            path, (page,) = _page("module.html", view.page_path, title=view.spec.title,
                                  description=view.spec.description, alternates=[view, *main],
                                  feed=view, count=len(own), list_items=_LIST_ITEMS,
                                  **common)  # fmt: skip
            # The list items, output of the autoescaping list_item macro, go in as they are:
            # a large module's page is never copied whole.
            head, tail = page.split(str(_LIST_ITEMS).encode())
            yield path, [head, *(parts[i.id].page for i in own), tail]
    snippet = _environment().get_template("head-links.html").render(feeds=main or views)
    yield "head-links.html", (snippet.encode("utf-8"),)


def list_item(item: Item, site: Site) -> str:
    """The item as its module's page lists it (``list_item`` in _macros.html)."""
    macros: Any = _environment().get_template("_macros.html").module
    return str(macros.list_item(item, site, show_module=False))


def fill(pattern: str, **values: object) -> Markup:
    """``pattern`` from the settings with its {names} filled in, all escaped but markup values."""
    # In one pass: a value holding "{reader}" (a site's title) is not filled in again.
    parts = re.split(r"\{(\w+)\}", pattern)  # text, name, text...
    return Markup("").join(
        escape(values.get(part, f"{{{part}}}") if i % 2 else part) for i, part in enumerate(parts)
    )


def wbr(url: str) -> Markup:
    """``url`` with a line break opportunity after each "/" of its path, for narrow screens."""
    head, separator, rest = url.partition("://")
    return escape(head + separator) + Markup("/<wbr>").join(escape(rest).split("/"))


@functools.cache
def _environment() -> jinja2.Environment:
    # One per process: it caches its compiled templates.
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("infrafeed.render", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,  # list_item() runs per item: get_template would stat the file each time
    )
    env.filters.update(fill=fill, wbr=wbr)
    return env


def _page(template: str, path: str, **context: Any) -> tuple[str, tuple[bytes]]:
    href = functools.partial(posixpath.relpath, start=posixpath.dirname(path) or ".")
    return path, (_environment().get_template(template).render(href=href, **context).encode(),)
