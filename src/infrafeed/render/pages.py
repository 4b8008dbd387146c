"""The HTML pages people read, and the ``<head>`` snippet for the site: Jinja2 templates.

Every word comes from the settings (``[words]``). Autoescaping is on, and only
:func:`fill` and :func:`wbr` make markup, from escaped text, so the entries'
text stays text. Links between generated files are relative, so the pages work
wherever ``output/`` is served; the URLs shown for copying, and the head
snippet's, are the public absolute ones.
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import jinja2
from markupsafe import Markup, escape

from ..feeds.items import Item
from ..source.models import Site
from .catalog import OPML, FeedView, opml_files

if TYPE_CHECKING:
    from .documents import ItemParts

LATEST = 20  # items listed on the index page
# Where a module page's entries go: a constant, and no text holds a NUL.
_ENTRIES = Markup("\x00entries\x00")


def render_pages(
    site: Site, views: Sequence[FeedView], items: Sequence[Item], parts: Mapping[str, ItemParts]
) -> Iterator[tuple[str, Sequence[bytes]]]:
    """Every page, as chunks; a module page lists its items' :func:`entry` parts."""
    words, main = site.words, [view for view in views if view.module is None]
    common = {"site": site, "words": words, "archived": any(view.archives for view in views)}
    title = fill(words.page_title, site=site.title)
    yield _page("index.html", "index.html", title=title, description=site.description,
                alternates=main or views[:1], feeds=views, latest=tuple(items[:LATEST]),
                opml=opml_files(views), everything=OPML["everything"], **common)  # fmt: skip
    for view in views:
        if view.module is not None:
            own = view.history.items
            path, (page,) = _page("module.html", view.page_path, title=view.spec.title,
                                  description=view.spec.description, alternates=[view, *main],
                                  feed=view, count=len(own), entries=_ENTRIES,
                                  **common)  # fmt: skip
            # The entries, output of the autoescaping item_entry macro, go in as they are:
            # a large module's page is never copied whole.
            head, tail = page.split(str(_ENTRIES).encode())
            yield path, [head, *(parts[i.id].page for i in own), tail]
    snippet = _environment().get_template("head-links.html").render(feeds=main or views)
    yield "head-links.html", (snippet.encode("utf-8"),)


def entry(item: Item, site: Site) -> str:
    """The item as its module's page lists it (``item_entry`` in _macros.html)."""
    macros: Any = _environment().get_template("_macros.html").module
    return str(macros.item_entry(item, site, show_module=False))


def fill(pattern: str, **values: object) -> Markup:
    """``pattern`` from the settings with its {names} filled in, all escaped but markup values."""
    found = escape(pattern)
    for name, value in values.items():
        found = found.replace(f"{{{name}}}", escape(value))
    return found


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
        auto_reload=False,  # entry() runs per item: get_template would stat the file each time
    )
    env.filters.update(fill=fill, wbr=wbr)
    return env


def _page(template: str, path: str, **context: Any) -> tuple[str, tuple[bytes]]:
    folder = posixpath.dirname(path) or "."

    def href(target: str) -> str:  # a link to another generated file, relative to this page
        return posixpath.relpath(target, folder)

    return path, (_environment().get_template(template).render(href=href, **context).encode(),)
