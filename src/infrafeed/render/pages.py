"""The HTML pages people read, and the ``<head>`` snippet for the site: Jinja2 templates.

Readable feeds without XSLT: ``index.html`` lists every feed with its formats,
copyable URLs, one-click subscribe links and the latest items; each module
has its page. Autoescaping is on and no template marks anything safe, so
every text from the entries is shown as text. Links between generated files
are relative, so the pages work wherever ``output/`` is served (or opened
from disk); the URLs shown for copying, and the head snippet that other
pages embed, are the public absolute ones.
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import jinja2
import markupsafe

from ..feeds.items import Item
from ..source.models import Site
from .catalog import FeedView

if TYPE_CHECKING:
    from .documents import ItemParts

LATEST = 20  # items listed on the index page


def render_pages(
    site: Site,
    views: Sequence[FeedView],
    items: Sequence[Item],
    parts: Mapping[str, ItemParts],
) -> Iterator[tuple[str, bytes]]:
    """Every page; a module page lists its items' :func:`entry` parts."""
    env = _environment()
    main = [view for view in views if view.module is None]
    yield _page(
        env,
        "index.html",
        "index.html",
        site=site,
        title=f"{site.title} · Nguồn tin",
        description=site.description,
        alternates=main or views[:1],
        feeds=views,
        latest=tuple(items[:LATEST]),
    )
    for view in views:
        if view.module is None:
            continue
        number = view.module.number
        module_items = tuple(
            item for item in items if item.module is not None and item.module.number == number
        )
        # Each entry is the output of the autoescaping item_entry macro: safe as it is.
        entries = b"".join(parts[item.id].page for item in module_items).decode()
        yield _page(
            env,
            "module.html",
            view.page_path,
            site=site,
            title=view.title,
            description=view.description,
            alternates=[view, *main],  # the module's feed first: browsers offer the first
            feed=view,
            items=module_items,
            entries=markupsafe.Markup(entries),  # noqa: S704
        )
    snippet = env.get_template("head-links.html").render(feeds=main or views)
    yield "head-links.html", snippet.encode("utf-8")


def entry(item: Item) -> str:
    """The item as its module's page lists it (``item_entry`` in _macros.html)."""
    macros: Any = _environment().get_template("_macros.html").module
    return str(macros.item_entry(item, show_module=False))


@functools.cache
def _environment() -> jinja2.Environment:
    # One per process: it caches its compiled templates.
    return jinja2.Environment(
        loader=jinja2.PackageLoader("infrafeed.render", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def _page(env: jinja2.Environment, template: str, path: str, **context: Any) -> tuple[str, bytes]:
    html = env.get_template(template).render(href=_relative_to(path), **context)
    return path, html.encode("utf-8")


def _relative_to(page: str) -> Callable[[str], str]:
    """A link from ``page`` to another generated file, both below the output folder."""
    folder = posixpath.dirname(page) or "."

    def href(target: str) -> str:
        return posixpath.relpath(target, folder)

    return href
