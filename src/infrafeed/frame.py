"""A feed document as a frame around its items' parts.

Every format writes a document as ``head``, then its items one after the
other (``separator`` between two), then ``tail``; or ``empty`` when it has no
items. An item's part is the exact bytes of its ``<item>``, ``<entry>`` or
JSON object as they appear inside a document, so a part rendered once serves
every document that shows the item, and a document's size is known from the
lengths of its parts without writing it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple


class Frame(NamedTuple):
    head: bytes
    separator: bytes
    tail: bytes
    empty: bytes  # the document without items: not always head + tail (JSON's "[]")

    def size(self, count: int, parts_size: int) -> int:
        """The document's length with ``count`` items whose parts add up to ``parts_size``."""
        if not count:
            return len(self.empty)
        return len(self.head) + parts_size + len(self.separator) * (count - 1) + len(self.tail)


def chunks(frame: Frame, parts: Iterable[bytes]) -> Iterator[bytes]:
    """The document's bytes in order, a part at a time: nothing is joined."""
    listed = iter(parts)
    first = next(listed, None)
    if first is None:
        yield frame.empty
        return
    yield frame.head
    yield first
    for part in listed:
        if frame.separator:
            yield frame.separator
        yield part
    yield frame.tail
