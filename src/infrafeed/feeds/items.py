"""Turn releases into feed items: one per article change, one per note.

Everything a renderer needs is decided here, once, so the formats cannot
disagree. An item reads on its own in a reader that mixes feeds: its title
names its module and kind, its content the group's context and its place. Pure.
"""

from __future__ import annotations

import datetime as dt
import functools
import html
from collections.abc import Iterator
from typing import NamedTuple
from zoneinfo import ZoneInfo

from ..source import inline
from ..source.loader import Changelog, ReleaseFile
from ..source.models import Article, Group, Kind, Module, Note, Site
from ..source.urls import absolute, encoded

# A release is dated at noon in the site's time zone: the same calendar day in every zone
# less than 12 hours behind or ahead of the site's (for Asia/Shanghai, east of UTC-4). Its
# items are one second apart, first newest, so readers that sort by date keep the page's
# order. A second release of the day starts an hour later (a day holds at most 12:
# MAX_RELEASES_PER_DAY).
_RELEASE_HOUR = 12


class Item(NamedTuple):
    id: str  # RFC 4151 tag URI, the same in every format, forever
    module: Module | None
    title: str
    link: str  # absolute and percent-encoded
    published: dt.datetime  # timezone-aware, whole seconds
    released: dt.date  # the release's date: its month names the item's archive
    content_html: str
    summary: str | None  # plain text, never a repeat of the title
    categories: tuple[str, ...]
    source: str  # "entries/2026/2026-11-07.toml groups[1].articles[2]", for messages
    summary_html: str | None  # what pages show under the title, as safe inline HTML


def build_items(changelog: Changelog) -> tuple[Item, ...]:
    """Every item of the changelog, newest first."""
    maker = ItemMaker(changelog.site)
    return tuple(item for rf in changelog.releases for item in maker.items(rf))


def id_prefix(site: Site) -> str:
    """What every id of ``site``'s items and feeds starts with (RFC 4151 tag URIs)."""
    return f"tag:{site.ids.authority},{site.ids.date.isoformat()}:"


def tag_uri(site: Site, day: dt.date, item_id: str, kind: Kind) -> str:
    """The item's permanent id: independent of titles, URLs, modules and the site's location."""
    return f"{id_prefix(site)}{day.isoformat()}/{item_id}/{kind}"


class ItemMaker:
    """The items of one site's releases, a release at a time; what they share, worked out once."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.zone = ZoneInfo(site.timezone)
        # The changelog page as given (it may name a file): a release's link adds its anchor.
        self.changelog = encoded(site.changelog)
        # Many items link the same page: resolving a URL costs more than the rest of an item.
        self.url = functools.cache(functools.partial(absolute, site.url))

    def items(self, rf: ReleaseFile) -> Iterator[Item]:
        """``rf``'s items in page order, first newest."""
        noon = dt.datetime.combine(rf.date, dt.time(_RELEASE_HOUR), self.zone)
        # Hours and seconds counted in noon's offset: on a clock that summer time skips ahead
        # that evening (Pacific/Easter) a release's items went out of order, onto another's.
        start = noon.replace(tzinfo=dt.timezone(noon.utcoffset() or dt.timedelta()))
        start += dt.timedelta(hours=rf.sequence - 1)
        for second, (where, group, change) in enumerate(rf.release.changes()):
            published = start - dt.timedelta(seconds=second)
            yield self._item(rf, group, change, published, f"{rf.path} {where}")

    def _html(self, text: str) -> str:
        return inline.to_html(inline.parse(text), self.url)

    def _item(
        self, rf: ReleaseFile, group: Group, change: Article | Note, at: dt.datetime, where: str
    ) -> Item:
        site, labels = self.site, self.site.labels
        number = change.module or group.module
        module = None if number is None else site.module(number)
        chapter = group.chapter
        link = f"{self.changelog}#{rf.anchor}" if change.page is None else self.url(change.page)
        parts, summary, shown = [], None, None
        if isinstance(change, Note):
            nodes = inline.parse(change.text)
            text = inline.to_html(nodes, self.url)
            plain = inline.to_text(nodes)
            heading = change.title or inline.first_clause(plain)
            parts.append(f"<p>{text}</p>")
            shown = None if heading == plain else text  # the whole text, under a shorter title
        else:
            chapter = change.chapter or group.chapter
            heading = f"{change.number} {change.title}" if change.number else change.title
        if change.summary:
            nodes = inline.parse(change.summary)
            summary = inline.to_text(nodes)
            more = inline.to_html(nodes, self.url)
            parts.append(f"<p>{more}</p>")
            shown = more if shown is None else f"{shown} | {more}"
        if isinstance(change, Note) and change.details:
            rows = "".join(f"<li>{self._html(d)}</li>" for d in change.details)
            parts.append(f"<ul>{rows}</ul>")
        if isinstance(change, Note) and change.table is not None:
            head = "".join(f"<th>{html.escape(h, quote=False)}</th>" for h in change.table.header)
            rows = "".join(
                "<tr>" + "".join(f"<td>{self._html(c)}</td>" for c in row) + "</tr>"
                for row in change.table.rows
            )
            parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
        if group.context is not None:
            # The context introduced the page's list ("…:"): here it stands alone.
            context = self._html(group.context).rstrip().rstrip(":：").rstrip()
            parts.append(f"<blockquote><p>{context}</p></blockquote>")
        place = [site.module_label(module)] if module is not None else []
        place += [f"{labels.chapter} {chapter}"] if chapter is not None else []
        if place:
            parts.append(f"<p>{html.escape(' · '.join(place), quote=False)}</p>")
        label = labels.read_article if change.page is not None else labels.read_changelog
        link_html = html.escape(link)
        parts.append(f'<p><a href="{link_html}">{html.escape(label, quote=False)} →</a></p>')
        categories = [site.kinds[group.kind].heading]
        if module is not None:
            categories.insert(0, site.module_label(module))
            if chapter is not None:
                categories.append(f"{labels.module} {module.number} · {labels.chapter} {chapter}")
        title = f"{site.kinds[group.kind].short} · {heading}"
        return Item(
            id=tag_uri(site, rf.date, change.id, group.kind),
            module=module,
            title=title if module is None else f"{site.module_short(module)} · {title}",
            link=link,
            published=at,
            released=rf.date,
            content_html="\n".join(parts),
            summary=summary,
            categories=tuple(categories),
            source=where,
            summary_html=shown,
        )
