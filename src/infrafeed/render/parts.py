"""What renderers hand each other: an item's parts in each format, a document's head and frame.

Below the renderers and the planner (documents.py) that joins their work, so that neither
imports the other for these; the build cache stores :class:`ItemParts` from here too.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from ..feeds.history import Role
from ..feeds.specs import FeedSpec, Format
from ..source.models import Site
from ..source.urls import absolute


class ItemParts(NamedTuple):
    """An item as it appears inside a document of each format, and on its module's page."""

    rss: bytes
    atom: bytes
    json: bytes
    page: bytes  # its list item in its module's HTML page (pages.list_item), UTF-8


class Head(NamedTuple):
    """What a document says about itself in one format: everything but its items."""

    site: Site
    spec: FeedSpec
    format: Format
    self_url: str
    updated: dt.datetime  # the newest item's date, never the time of the build
    generator_version: str | None  # None in archives (see head)
    role: Role
    current_url: str | None  # the subscription document (archives only)
    prev_archive_url: str | None  # the next older document of the chain
    next_archive_url: str | None  # the next newer archive (archives only)
    hub: str | None  # WebSub hub (subscription documents only)


class Frame(NamedTuple):
    """A document's bytes: ``head``, its items' parts joined by ``separator``, then ``tail``."""

    head: bytes
    separator: bytes
    tail: bytes
    empty: bytes  # the document with no items: not always head + tail (JSON's "[]")

    def size(self, count: int, parts_size: int) -> int:
        """The document's length with ``count`` items whose parts add up to ``parts_size``."""
        if not count:
            return len(self.empty)
        return len(self.head) + parts_size + len(self.separator) * (count - 1) + len(self.tail)

    def chunks(self, parts: Sequence[bytes]) -> Iterator[bytes]:
        """The document's bytes, a block of parts at a time: never the whole of it at once."""
        if not parts:
            yield self.empty
            return
        yield self.head
        for start in range(0, len(parts), 1024):
            block = self.separator.join(parts[start : start + 1024])
            yield block if start == 0 else self.separator + block
        yield self.tail


# The icon drawn from [feeds] icon (render/icons.py), below the output folder: (name, side in px).
ICON, FAVICON = ("icon.png", 512), ("favicon.png", 64)
ICON_FILES = (ICON, FAVICON)


class Images(NamedTuple):
    """The feeds' images, as absolute URLs."""

    icon: str | None  # small and square: Atom <icon>, JSON Feed favicon
    # Atom <logo>: the site's own only, since RFC 4287 asks a logo of 2:1 and icon.png is square.
    logo: str | None
    large: str | None  # JSON Feed icon, square as JSON Feed asks where drawn
    rss: tuple[str, int | None] | None  # RSS <image> (GIF, JPEG or PNG) and its side, if known


def images(site: Site) -> Images:
    """A ``logo`` set wins where it goes; the drawn icon replaces ``favicon``, and fills the
    rest. RSS takes a GIF, JPEG or PNG only, named so at the end of the URL (the W3C validator
    reads the format from the last "." of the whole URL: "logo.png?v=1.5" is "5" to it)."""
    raster = [
        image
        for image in (site.logo, None if site.feeds.icon else site.favicon)
        if image
        and image.lower().endswith((".png", ".gif", ".jpg", ".jpeg"))
        and ("?" not in image and "#" not in image)
    ]
    logo = absolute(site.url, site.logo) if site.logo else None
    rss = (absolute(site.url, raster[0]), None) if raster else None
    if not site.feeds.icon:
        icon = absolute(site.url, site.favicon) if site.favicon else None
        return Images(icon, logo, logo or icon, rss)
    drawn = {name: absolute(site.feeds.url, name) for name, _ in ICON_FILES}
    small = drawn[FAVICON[0]]
    return Images(small, logo, logo or drawn[ICON[0]], rss or (small, FAVICON[1]))
