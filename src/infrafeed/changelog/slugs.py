"""Ids for imported changes: ASCII slugs of a page name or a title, unique where ids must be.

Minted once, at import, then kept by the entries. ``anyascii`` drops Vietnamese
diacritics ("Tổng quan" -> "tong-quan") and spells CJK in pinyin, a syllable per
character ("实现" -> "shi-xian"); emoji and other symbols are dropped.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

from anyascii import anyascii

MAX_SLUG = 60  # models.Slug allows 80: short enough to read, with room for a "-NN" suffix
_NOT_SLUG = re.compile(r"[^a-z0-9]+")
_PAGE_SUFFIX = re.compile(r"\.(?:html?|mdx?)$", re.I)


def slugify(text: str) -> str:
    """A slug of ``text``: lowercase ASCII words joined by single hyphens; may be empty."""
    parts = []
    for ch in unicodedata.normalize("NFC", text):
        category = unicodedata.category(ch)
        if category[0] == "S" or category in ("Cn", "Co", "Cs"):
            parts.append(" ")
        elif unicodedata.name(ch, "").startswith("CJK "):
            parts.append(f" {anyascii(ch)} ")  # one pinyin syllable per character
        else:
            parts.append(anyascii(ch))
    slug = _NOT_SLUG.sub("-", "".join(parts).lower()).strip("-")
    if len(slug) <= MAX_SLUG:
        return slug
    cut = slug[: MAX_SLUG + 1]
    # Cut at a word boundary when one is near, so no word is left half-written.
    boundary = cut.rfind("-")
    return (cut[:boundary] if boundary > MAX_SLUG // 2 else cut[:MAX_SLUG]).strip("-")


def page_slug(reference: str) -> str:
    """A slug of a page's last path segment: ".../41-cuda-gemm算子/" -> "41-cuda-gemm-suan-zi"."""
    last = PurePosixPath(unquote(urlsplit(reference).path)).name
    return slugify(_PAGE_SUFFIX.sub("", last))


class IdMinter:
    """Hands out ids that are unique within a scope (the loader's rule: date and kind)."""

    def __init__(self) -> None:
        self.taken: dict[object, set[str]] = {}

    def mint(self, scope: object, *candidates: str, fallback: str) -> str:
        """The first non-empty candidate's slug, with "-2", "-3"... when it is taken."""
        base = next((c for c in candidates if c), fallback)[:MAX_SLUG].strip("-")
        slug, number = base, 1
        while not self.claim(scope, slug):
            number += 1
            slug = f"{base}-{number}"
        return slug

    def claim(self, scope: object, slug: str) -> bool:
        """Take ``slug`` as the page gives it; False when it is taken already."""
        taken = self.taken.setdefault(scope, set())
        fresh = slug not in taken
        taken.add(slug)
        return fresh
