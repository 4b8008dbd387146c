"""Turn releases into feed items: one per article change, one per note.

Everything a renderer needs is decided here, once, so the three formats
cannot disagree: the id, title, link, date, HTML and plain-text bodies and
categories of each item. Pure: the same changelog gives the same items.
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from . import inline
from .loader import Changelog, ReleaseFile
from .models import Article, Group, Kind, Module, Note, Site
from .urls import absolute

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
    summary_html: str | None = None  # the summary as safe inline HTML (code, links), for pages


def build_items(changelog: Changelog) -> tuple[Item, ...]:
    """Every item of the changelog, newest first."""
    return tuple(_items(changelog))


def _items(changelog: Changelog) -> Iterator[Item]:
    site = changelog.site
    zone = ZoneInfo(site.timezone)
    for rf in changelog.releases:
        day = rf.release.date
        start = dt.datetime(day.year, day.month, day.day, _RELEASE_HOUR, tzinfo=zone)
        start += dt.timedelta(hours=rf.sequence - 1)
        position = 0
        for g, group in enumerate(rf.release.groups, start=1):
            for a, article in enumerate(group.articles, start=1):
                published = start - dt.timedelta(seconds=position)
                position += 1
                yield _article_item(
                    site, rf, group, article, published, f"groups[{g}].articles[{a}]"
                )
            for n, note in enumerate(group.notes, start=1):
                published = start - dt.timedelta(seconds=position)
                position += 1
                yield _note_item(site, rf, group, note, published, f"groups[{g}].notes[{n}]")


def tag_uri(site: Site, day: dt.date, item_id: str, kind: Kind) -> str:
    """The item's permanent id: independent of titles, URLs, modules and the site's location."""
    return (
        f"tag:{site.ids.authority},{site.ids.date.isoformat()}:{day.isoformat()}/{item_id}/{kind}"
    )


def _article_item(
    site: Site, rf: ReleaseFile, group: Group, article: Article, published: dt.datetime, where: str
) -> Item:
    module = _module(site, article.module if article.module is not None else group.module)
    chapter = article.chapter if article.chapter is not None else group.chapter
    label = site.kinds[group.kind].short
    numbered = f"{article.number} {article.title}" if article.number else article.title
    link = _link(site, rf, article.page)
    resolve = _resolver(site)
    parts = []
    if article.summary:
        parts.append(f"<p>{inline.to_html(rf.nodes(article.summary), resolve)}</p>")
    parts.extend(_common_parts(site, rf, group, module, chapter, link, article.page is not None))
    return Item(
        id=tag_uri(site, rf.release.date, article.id, group.kind),
        kind=group.kind,
        module=module,
        title=f"{label} · {numbered}",
        link=link,
        published=published,
        released=rf.release.date,
        content_html="\n".join(parts),
        summary=inline.to_text(rf.nodes(article.summary)) if article.summary else None,
        summary_html=(
            inline.to_html(rf.nodes(article.summary), resolve) if article.summary else None
        ),
        categories=_categories(site, group.kind, module, chapter),
        source=f"{rf.path} {where}",
    )


def _note_item(
    site: Site, rf: ReleaseFile, group: Group, note: Note, published: dt.datetime, where: str
) -> Item:
    module = _module(site, note.module if note.module is not None else group.module)
    chapter = group.chapter
    label = site.kinds[group.kind].short
    link = _link(site, rf, note.page)
    resolve = _resolver(site)
    text = rf.nodes(note.text)
    parts = [f"<p>{inline.to_html(text, resolve)}</p>"]
    if note.summary:
        parts.append(f"<p>{inline.to_html(rf.nodes(note.summary), resolve)}</p>")
    if note.details:
        rows = "".join(f"<li>{inline.to_html(rf.nodes(d), resolve)}</li>" for d in note.details)
        parts.append(f"<ul>{rows}</ul>")
    if note.table is not None:
        head = "".join(f"<th>{html.escape(h, quote=False)}</th>" for h in note.table.header)
        body = "".join(
            "<tr>"
            + "".join(f"<td>{inline.to_html(rf.nodes(c), resolve)}</td>" for c in row)
            + "</tr>"
            for row in note.table.rows
        )
        parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    parts.extend(_common_parts(site, rf, group, module, chapter, link, note.page is not None))
    plain = inline.to_text(text)
    summary = plain
    summary_html = inline.to_html(text, resolve)
    if note.summary:
        summary = f"{plain} | {inline.to_text(rf.nodes(note.summary))}"
        summary_html += f" | {inline.to_html(rf.nodes(note.summary), resolve)}"
    return Item(
        id=tag_uri(site, rf.release.date, note.id, group.kind),
        kind=group.kind,
        module=module,
        title=f"{label} · {plain}",
        link=link,
        published=published,
        released=rf.release.date,
        content_html="\n".join(parts),
        summary=summary,
        summary_html=summary_html,
        categories=_categories(site, group.kind, module, chapter),
        source=f"{rf.path} {where}",
    )


def _module(site: Site, number: int | None) -> Module | None:
    return None if number is None else site.module(number)


def _resolver(site: Site) -> Callable[[str], str]:
    return lambda reference: absolute(site.url, reference)


def _link(site: Site, rf: ReleaseFile, page: str | None) -> str:
    if page is not None:
        return absolute(site.url, page)
    return absolute(site.changelog, f"#{rf.anchor}")


def _common_parts(
    site: Site,
    rf: ReleaseFile,
    group: Group,
    module: Module | None,
    chapter: int | None,
    link: str,
    is_article_page: bool,
) -> list[str]:
    resolve = _resolver(site)
    labels = site.labels
    parts = []
    if group.context:
        context = inline.to_html(rf.nodes(group.context), resolve)
        parts.append(f"<blockquote><p>{context}</p></blockquote>")
    place = []
    if module is not None:
        place.append(f"{labels.module} {module.number} · {module.name}")
    if chapter is not None:
        place.append(f"{labels.chapter} {chapter}")
    if place:
        parts.append(f"<p>{html.escape(' · '.join(place), quote=False)}</p>")
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
