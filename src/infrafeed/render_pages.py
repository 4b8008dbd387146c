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
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import jinja2
import markupsafe

from .catalog import FeedView
from .items import Item
from .models import Site

LATEST = 20  # items listed on the index page


def render_pages(
    site: Site,
    views: Sequence[FeedView],
    items: Sequence[Item],
    entries_of: Callable[[Sequence[Item]], str] | None = None,
) -> Iterator[tuple[str, bytes]]:
    """Every page; ``entries_of`` gives items' :func:`entry`, already rendered and joined.

    By default they are rendered here.
    """
    joined = entries_of or _entries
    env = _environment()
    main = [view for view in views if view.module is None]
    latest = tuple(items[:LATEST])
    macros = env.get_template("_macros.html").make_module({"site": site})
    yield _page(
        env,
        "index.html",
        "index.html",
        site=site,
        title=f"{site.title} · Nguồn tin",
        description=site.description,
        alternates=main or views[:1],
        feeds=views,
        latest=latest,
        # Made from the module-page entries, so that a rebuild reads no unchanged item's text.
        latest_entries=markupsafe.Markup(  # noqa: S704 - entries of the autoescaping macros
            "".join(listed_entry(macros, item, joined((item,))) for item in latest)
        ),
    )
    for view in views:
        if view.module is None:
            continue
        number = view.module.number
        module_items = tuple(
            item for item in items if item.module is not None and item.module.number == number
        )
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
            # A module page lists each of its items: the longest part of rendering pages,
            # so each entry is rendered once per item (render.py) by the autoescaping
            # item_entry macro; joined, they are that macro's output, safe as it is.
            entries=markupsafe.Markup(joined(module_items)),  # noqa: S704
        )
    snippet = env.get_template("head-links.html").render(feeds=main or views)
    yield "head-links.html", snippet.encode("utf-8")


def entry(item: Item) -> str:
    """The item as a module page lists it (``item_entry`` in _macros.html): a part of the item."""
    macros: Any = _environment().get_template("_macros.html").module
    return str(macros.item_entry(item, show_module=False))


def _entries(items: Sequence[Item]) -> str:
    return "".join(map(entry, items))


def listed_entry(macros: Any, item: Item, page_entry: str) -> str:
    """The item as the index page lists it: its module-page entry with its module added.

    Only the date and the module are read from ``item``, never its text, which
    an unchanged item of a rebuild does not have at hand (items.Item.deferred).
    ``macros``: _macros.html's module, made with the site in its context.
    """
    head = f"<li>{macros.vn_date(item.published)}"
    if not page_entry.startswith(head):  # not item_entry's output: render it whole
        return str(macros.item_entry(item, show_module=True))
    return f"{head}{macros.module_span(item)}{page_entry[len(head) :]}"


@functools.cache
def _environment() -> jinja2.Environment:
    # One per process: it caches its compiled templates.
    return jinja2.Environment(
        loader=jinja2.PackageLoader("infrafeed", "templates"),
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
