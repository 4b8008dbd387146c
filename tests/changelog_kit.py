"""The changelog page written whole, in memory: a build writes it in chunks."""

from __future__ import annotations

from infrafeed.changelog.page import assemble_page, release_section
from infrafeed.source.loader import Changelog


def render_page(changelog: Changelog) -> bytes:
    """The page: front matter, intro, then one ``release_section`` per release."""
    site = changelog.site
    sections = [release_section(site, rf).encode() for rf in changelog.releases]
    oldest = changelog.releases[-1].date if changelog.releases else None
    return b"".join(assemble_page(site, sections, oldest))
