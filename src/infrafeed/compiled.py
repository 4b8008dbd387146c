"""What one release file gives a build: below both the build, which makes it, and the build
cache, which stores it, so that neither imports the other for it."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from .feeds.items import Item
    from .render.parts import ItemParts
    from .source.loader import IdKey


class Compiled(NamedTuple):
    """All that depends on one release file alone (and the settings)."""

    path: str  # as messages name it
    date: dt.date
    sequence: int
    keys: tuple[IdKey, ...]  # for the uniqueness check across files
    items: tuple[Item, ...]  # in page order
    parts: tuple[ItemParts, ...]  # one per item
    section: bytes  # its section of the changelog page, UTF-8
