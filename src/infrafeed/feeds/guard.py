"""The id guard: items a feed published never vanish or move in time without a word.

Readers key items by id: one that disappears, or comes back with another date, is lost or shown
as new again. A build that would do that is refused (exit code 3) unless the maintainer confirms.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Mapping, Sequence

from ..errors import GuardError
from .history import archive_root, month_of
from .items import Item
from .specs import FeedSpec


def guard(
    previous: Mapping[str, Mapping[str, str]],
    published: Mapping[str, Sequence[Item]],
    *,
    allow_changes: bool,
    releases: Sequence[tuple[str, dt.date]] = (),
    archived: Collection[str] = (),
    minted: str = "",
) -> dict[str, dict[str, str]]:
    """Refuse to drop or re-date items a feed already published; return the new id record.

    A feed that no longer exists is not checked (publishing reports its removal); items past
    ``max_items`` are still selected, not dropped. ``releases`` (each file's path and date) name a
    vanished item's file. A new item in a closed month of an ``archived`` feed (one that had
    archives) is refused like a drop: it would rewrite an archive readers never fetch again.
    ``minted`` starts every id the settings mint now: published ids minted otherwise mean that
    ``[ids]`` changed, which makes every item new again; that alone is said.
    """
    stale = (i for ids in previous.values() for i in ids if minted and not i.startswith(minted))
    if (first := next(stale, None)) is not None and not allow_changes:
        was = first[: first.index(":", 4) + 1]  # tag:<authority>,<minting date>:
        why = "every item would come back as new to every subscriber"
        raise GuardError(
            [
                f"site.toml: ids: the published items' ids start '{was}', but [ids] now makes "
                f"them start '{minted}': {why}; restore authority and date in [ids], set once"
            ]
        )
    violations: list[str] = []
    record: dict[str, dict[str, str]] = {}
    dates: dict[str, str] = {}  # an item is in several feeds: its date is written once
    for key, items in published.items():
        dates |= {item.id: item.published.isoformat() for item in items if item.id not in dates}
        now = record[key] = {item.id: dates[item.id] for item in items}
        old = previous.get(key, {})
        if key in archived and old:
            violations += _late(key, items, old)
        if old.items() <= now.items():  # the usual case, at C speed: nothing dropped or moved
            continue
        sources = {item.id: item.source for item in items}
        for item_id, date in sorted(old.items()):
            if item_id not in now and (also := _feeds_with(item_id, published)):
                violations.append(
                    f"feed '{key}': item {item_id} (dated {date}) would leave this feed, but not "
                    f"{also}: its module changed; change it back, or confirm that it moves"
                )
            elif item_id not in now:
                violations.append(
                    f"feed '{key}': item {item_id} (dated {date}) would disappear: "
                    f"{_where_it_was(item_id, releases)}; it was removed, or its id, kind "
                    "or module changed"
                )
            elif now[item_id] != date:
                violations.append(
                    f"feed '{key}': item {item_id} ({sources[item_id]}) would change its date "
                    f"from {date} to {now[item_id]}: items of a release are one second apart in "
                    "page order, so adding or removing a change before it re-dates it; add new "
                    "changes after the published ones, or in a new release"
                )
    if violations and not allow_changes:
        raise GuardError(violations)
    return record


def _feeds_with(item_id: str, published: Mapping[str, Sequence[Item]]) -> str:
    """The feeds that publish ``item_id``, named for a message ("" when none does)."""
    return ", ".join(
        f"'{k}'" for k, items in published.items() if any(i.id == item_id for i in items)
    )


def _where_it_was(item_id: str, releases: Sequence[tuple[str, dt.date]]) -> str:
    """Name the release file and field a published item came from, from its tag URI."""
    # tag:<authority>,<minting date>:<release date>/<entry id>/<kind> (items.tag_uri)
    parts = item_id.rsplit(":", 1)[-1].split("/")
    if len(parts) != 3:
        return "no entry has it any more"
    day, entry_id, kind = parts
    files = [path for path, date in releases if date.isoformat() == day]
    if not files:
        return f"no release file is dated {day} any more"
    return f"{' or '.join(files)} has no '{kind}' change with id = \"{entry_id}\" any more"


def had_archives(spec: FeedSpec, published_files: Collection[str]) -> bool:
    """Whether the previous build published archives of ``spec`` (from its manifest)."""
    prefix = archive_root(spec) + "/"
    return any(path.startswith(prefix) for path in published_files)


def _late(key: str, items: Sequence[Item], before: Mapping[str, str]) -> list[str]:
    """New items dated in a month whose archive was closed and published before."""
    open_month = max(date[:7] for date in before.values())
    return [
        f"feed '{key}': new item {item.id} ({item.source}) is dated "
        f"{item.released.isoformat()}, in {month}, whose archive is closed since the "
        f"feed has items of {open_month}; readers never fetch a closed archive "
        f"again, so date the release in {open_month} or later"
        for item in items
        if item.id not in before and (month := month_of(item)) < open_month
    ]
