"""Turn releases into feed items: one per article change, one per note.

Everything a renderer needs is decided here, once, so the three formats
cannot disagree: the id, title, link, date, HTML and plain-text bodies and
categories of each item. Pure: the same changelog gives the same items.
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Iterator
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from ..source import inline
from ..source.loader import Changelog, ReleaseFile
from ..source.models import Article, Group, Kind, Module, Note, Site
from ..source.urls import absolute

# A release is dated at noon in the site's time zone, so that the calendar day
# is the same in every time zone from UTC-12 to UTC+12 (a reader in Hanoi
# or in Paris sees the date the page shows). Its items are one second apart,
# first item newest, so readers that sort by date keep the page's order.
# A second release of the same day starts one hour later.
_RELEASE_HOUR = 12


@dataclass(frozen=True)
class Item:
    id: str  # RFC 4151 tag URI, the same in every format, forever
    kind: Kind
    module: Module | None
    title: str
    link: str  # absolute and percent-encoded
    published: dt.datetime  # timezone-aware, whole seconds
    released: dt.date  # the release's date: its month names the item's archive
    content_html: str
    summary: str | None  # plain text
    categories: tuple[str, ...]
    source: str  # "entries/2026/2026-11-07.toml groups[1].articles[2]", for messages
    summary_html: str | None  # the summary as safe inline HTML (code, links), for pages


def build_items(changelog: Changelog) -> tuple[Item, ...]:
    """Every item of the changelog, newest first."""
    maker = ItemMaker(changelog.site)
    return tuple(item for rf in changelog.releases for item in maker.items(rf))


class ItemMaker:
    """The items of one site's releases, a release at a time.

    What releases share (URLs, module places) is worked out once per maker.
    """

    def __init__(self, site: Site) -> None:
        self._shared = _Shared(site)

    def items(self, rf: ReleaseFile) -> Iterator[Item]:
        """``rf``'s items in page order, first newest."""
        shared = self._shared
        day = rf.date
        start = dt.datetime(day.year, day.month, day.day, _RELEASE_HOUR, tzinfo=shared.zone)
        start += dt.timedelta(hours=rf.sequence - 1)
        release = _Release(shared, rf)
        position = 0
        for g, group in enumerate(rf.release.groups, start=1):
            # A group's context shows in each of its items: written once.
            context = None if group.context is None else release.html(group.context)
            for a, article in enumerate(group.articles, start=1):
                published = start - dt.timedelta(seconds=position)
                position += 1
                yield _article_item(
                    release, group, context, article, published, f"groups[{g}].articles[{a}]"
                )
            for n, note in enumerate(group.notes, start=1):
                published = start - dt.timedelta(seconds=position)
                position += 1
                yield _note_item(
                    release, group, context, note, published, f"groups[{g}].notes[{n}]"
                )


class _Shared:
    """What the items of a site have in common, worked out once per build, not per item."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.zone = ZoneInfo(site.timezone)
        self.modules = {module.number: module for module in site.modules}
        # The changelog page without a fragment: a release's link is this and its
        # anchor, which holds nothing to encode (digits and hyphens).
        self.changelog = absolute(site.changelog, "#")
        # Many items link the same page (each revision of an article): resolving
        # and encoding a URL costs more than the rest of an item. Kept for one build.
        self._absolute: dict[str, str] = {}
        self._places: dict[tuple[Kind, int | None, int | None], _Place] = {}

    def absolute(self, reference: str) -> str:
        """``reference`` as an absolute, encoded URL below the site (see ``urls.absolute``)."""
        found = self._absolute.get(reference)
        if found is None:
            found = self._absolute[reference] = absolute(self.site.url, reference)
        return found

    def place(self, kind: Kind, module: int | None, chapter: int | None) -> _Place:
        key = (kind, module, chapter)
        found = self._places.get(key)
        if found is None:
            found = self._places[key] = _Place.of(self.site, kind, self.module(module), chapter)
        return found

    def module(self, number: int | None) -> Module | None:
        return None if number is None else self.modules.get(number)


@dataclass(frozen=True)
class _Place:
    """Where an item belongs: its module, and what that makes of its categories and content."""

    module: Module | None
    categories: tuple[str, ...]
    paragraph: str | None  # "<p>Module 4 · … · Chương 6</p>" in the content

    @classmethod
    def of(cls, site: Site, kind: Kind, module: Module | None, chapter: int | None) -> _Place:
        labels = site.labels
        place = []
        if module is not None:
            place.append(f"{labels.module} {module.number} · {module.name}")
        if chapter is not None:
            place.append(f"{labels.chapter} {chapter}")
        paragraph = f"<p>{html.escape(' · '.join(place), quote=False)}</p>" if place else None
        return cls(module, _categories(site, kind, module, chapter), paragraph)


class _Release:
    """One release file as its items see it."""

    def __init__(self, shared: _Shared, rf: ReleaseFile) -> None:
        self.shared = shared
        self.site = shared.site
        self.rf = rf
        self.changelog_link = f"{shared.changelog}#{rf.anchor}"

    def html(self, text: str) -> str:
        return inline.to_html(self.rf.nodes(text), self.shared.absolute)

    def link(self, page: str | None) -> str:
        return self.changelog_link if page is None else self.shared.absolute(page)


def tag_uri(site: Site, day: dt.date, item_id: str, kind: Kind) -> str:
    """The item's permanent id: independent of titles, URLs, modules and the site's location."""
    return (
        f"tag:{site.ids.authority},{site.ids.date.isoformat()}:{day.isoformat()}/{item_id}/{kind}"
    )


def _article_item(
    release: _Release,
    group: Group,
    context: str | None,
    article: Article,
    published: dt.datetime,
    where: str,
) -> Item:
    site, rf = release.site, release.rf
    module = article.module if article.module is not None else group.module
    chapter = article.chapter if article.chapter is not None else group.chapter
    place = release.shared.place(group.kind, module, chapter)
    label = site.kinds[group.kind].short
    numbered = f"{article.number} {article.title}" if article.number else article.title
    link = release.link(article.page)
    summary = summary_html = None
    parts = []
    if article.summary:
        summary = inline.to_text(rf.nodes(article.summary))
        summary_html = release.html(article.summary)
        parts.append(f"<p>{summary_html}</p>")
    parts.extend(_common_parts(site, context, place, link, article.page is not None))
    return Item(
        id=tag_uri(site, rf.date, article.id, group.kind),
        kind=group.kind,
        module=place.module,
        title=f"{label} · {numbered}",
        link=link,
        published=published,
        released=rf.date,
        content_html="\n".join(parts),
        summary=summary,
        summary_html=summary_html,
        categories=place.categories,
        source=f"{rf.path} {where}",
    )


def _note_item(
    release: _Release,
    group: Group,
    context: str | None,
    note: Note,
    published: dt.datetime,
    where: str,
) -> Item:
    site, rf = release.site, release.rf
    module = note.module if note.module is not None else group.module
    place = release.shared.place(group.kind, module, group.chapter)
    label = site.kinds[group.kind].short
    link = release.link(note.page)
    text = rf.nodes(note.text)
    plain = inline.to_text(text)
    summary, summary_html = plain, inline.to_html(text, release.shared.absolute)
    parts = [f"<p>{summary_html}</p>"]
    if note.summary:
        more = release.html(note.summary)
        parts.append(f"<p>{more}</p>")
        summary = f"{plain} | {inline.to_text(rf.nodes(note.summary))}"
        summary_html = f"{summary_html} | {more}"
    if note.details:
        rows = "".join(f"<li>{release.html(d)}</li>" for d in note.details)
        parts.append(f"<ul>{rows}</ul>")
    if note.table is not None:
        head = "".join(f"<th>{html.escape(h, quote=False)}</th>" for h in note.table.header)
        body = "".join(
            "<tr>" + "".join(f"<td>{release.html(c)}</td>" for c in row) + "</tr>"
            for row in note.table.rows
        )
        parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    parts.extend(_common_parts(site, context, place, link, note.page is not None))
    return Item(
        id=tag_uri(site, rf.date, note.id, group.kind),
        kind=group.kind,
        module=place.module,
        title=f"{label} · {plain}",
        link=link,
        published=published,
        released=rf.date,
        content_html="\n".join(parts),
        summary=summary,
        summary_html=summary_html,
        categories=place.categories,
        source=f"{rf.path} {where}",
    )


def _common_parts(
    site: Site, context: str | None, place: _Place, link: str, is_article_page: bool
) -> list[str]:
    labels = site.labels
    parts = []
    if context is not None:
        parts.append(f"<blockquote><p>{context}</p></blockquote>")
    if place.paragraph is not None:
        parts.append(place.paragraph)
    label = labels.read_article if is_article_page else labels.read_changelog
    parts.append(f'<p><a href="{html.escape(link)}">{html.escape(label, quote=False)} →</a></p>')
    return parts


def _categories(
    site: Site, kind: Kind, module: Module | None, chapter: int | None
) -> tuple[str, ...]:
    labels = site.labels
    found = [site.kinds[kind].heading]
    if module is not None:
        found.insert(0, f"{labels.module} {module.number} · {module.name}")
        if chapter is not None:
            found.append(f"{labels.module} {module.number} · {labels.chapter} {chapter}")
    return tuple(found)
