"""Heading ids as the Astro site makes them: github-slugger, then Astro's hyphen clean-up.

A port for the tests, to check that every release heading of the page gets
the anchor its feed items link to. github-slugger (v2) lowercases the text,
removes every character of the Unicode categories below except letters that
Unicode calls Alphabetic, turns each space into "-", and numbers repeated
slugs ("x", "x-1", "x-2"...). Astro's ``rehypeHeadingIds`` (packages/markdown/
remark) first turns no-break spaces into spaces, then removes leading,
trailing and repeated hyphens from the result.

Its tables come from Unicode 13 and Python's from a later version: the two
differ only on characters assigned since, which no heading here uses.
"""

from __future__ import annotations

import re
import unicodedata

_REMOVED_CATEGORIES = frozenset(
    {"No", "Pe", "Pf", "Pi", "Ps", "Po", "Pd", "Sm", "Sc", "Sk", "So", "Cc", "Co", "Cf", "Cn"}
    | {"Zs", "Zl", "Zp"}
)
# Other symbols that Unicode also calls Alphabetic (circled and squared Latin letters):
# github-slugger keeps them.
_ALPHABETIC_SYMBOLS = ((0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169), (0x1F170, 0x1F189))
_NBSP = re.compile("[\u00a0\u2007\u202f]")
_EXTRA_HYPHENS = re.compile(r"^-+|(?<=-)-+|-+$")


def _removed(ch: str) -> bool:
    if ch in (" ", "-"):
        return False
    if any(low <= ord(ch) <= high for low, high in _ALPHABETIC_SYMBOLS):
        return False
    return unicodedata.category(ch) in _REMOVED_CATEGORIES


def slug(value: str) -> str:
    """github-slugger's ``slug(value)``: one heading, without the repeat numbering."""
    return "".join(ch for ch in value.lower() if not _removed(ch)).replace(" ", "-")


class Slugger:
    """github-slugger's ``BananaSlug``: slugs unique within one document."""

    def __init__(self) -> None:
        self.occurrences: dict[str, int] = {}

    def slug(self, value: str) -> str:
        original = result = slug(value)
        while result in self.occurrences:
            self.occurrences[original] += 1
            result = f"{original}-{self.occurrences[original]}"
        self.occurrences[result] = 0
        return result


def astro_heading_ids(texts: list[str]) -> list[str]:
    """The ids Astro gives the headings of one page, in document order."""
    slugger = Slugger()
    return [_EXTRA_HYPHENS.sub("", slugger.slug(_NBSP.sub(" ", text))) for text in texts]
