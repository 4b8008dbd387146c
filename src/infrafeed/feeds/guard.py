"""The id guard: items a feed published never vanish or move in time without a word.

Readers key items by id: one that disappears, or comes back with another date, is lost or shown
as new again. A build that would do that is refused (exit code 3) unless the maintainer confirms.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Collection, Mapping, Sequence

from ..errors import GuardError, count
from .items import Item


def guard(
    previous: Mapping[str, Mapping[str, str]],
    selected: Mapping[str, Sequence[Item]],
    *,
    allow_changes: bool,
    releases: Sequence[tuple[str, dt.date]],
    subscribed: Mapping[str, Collection[str]],
    minted: str,
    committed: Mapping[str, Mapping[str, str]],
) -> dict[str, dict[str, str]]:
    """Refuse to drop or re-date items a feed already published; return the new id record.

    ``previous`` holds each feed's published ids and dates, ``selected`` the items this build
    gives it. A feed that was made (with items or none yet) and is no longer made is refused as
    a whole: its subscribers would find it gone. Items past ``max_items`` are still selected,
    not dropped. ``releases`` (each file's path and date) name a vanished item's file.
    ``subscribed`` holds the ids each feed's subscription document holds: a new item of a feed
    that published before is refused like a drop when it is not there, as it would be only in
    an archive, which readers do not fetch (whether older than what the feed published, or
    pushed out by more new items at once than the document holds).
    ``minted`` starts every id the settings mint now: published ids minted otherwise mean that
    ``[ids]`` changed, which makes every item new again; that alone is said. ``committed``, the
    part of ``previous`` kept with the entries, holding some ids minted otherwise, has lines of
    another site's.
    """
    recorded = [i for ids in committed.values() for i in ids]
    foreign = [i for i in recorded if not i.startswith(minted)]
    if foreign and len(foreign) < len(recorded) and not allow_changes:  # [ids] made the others
        raise GuardError(
            [
                f"published-ids.txt: {len(foreign)} of its ids, such as {foreign[0]}, are not of "
                f"this site ('{minted}'): lines infrafeed did not write; restore the file from git"
            ]
        )
    stale = [i for ids in previous.values() for i in ids if not i.startswith(minted)]
    if stale and not allow_changes:
        was = stale[0][: stale[0].find(":", 4) + 1] or stale[0]  # tag:<authority>,<minting date>:
        why = "every item would come back as new to every subscriber"
        raise GuardError(
            [
                f"site.toml: ids: the published items' ids start '{was}', but [ids] now makes "
                f"them start '{minted}': {why}; restore authority and date in [ids], set once"
            ]
        )
    violations = [
        f"feed '{key}' {f'published {len(ids)} items' if ids else 'was made, with no items yet,'} "
        "and would no longer be made: its subscribers would find it gone (a module's slug "
        "changed, the module went, or [feeds] turned it off); restore it, or confirm that it goes"
        for key, ids in sorted(previous.items())
        if key not in selected
    ]
    rezoned: dict[str, tuple[str, str]] = {}  # items re-dated to the same time in another zone
    record: dict[str, dict[str, str]] = {}
    dates: dict[str, str] = {}  # an item is in several feeds: its date is written once
    sources: dict[str, str] = {}  # each item's source, once a feed changed
    for key, items in selected.items():
        dates |= {item.id: item.published.isoformat() for item in items if item.id not in dates}
        record[key] = {item.id: dates[item.id] for item in items}
    for key, items in selected.items():  # every feed's record first: an item may move feeds
        now, old = record[key], previous.get(key, {})
        if key in previous:  # a feed that has published, if only nothing yet
            violations += _unseen(key, items, old, subscribed[key])
        if old.items() <= now.items():  # the usual case, at C speed: nothing dropped or moved
            continue
        sources = sources or {i.id: i.source for i in itertools.chain(*selected.values())}
        for item_id, date in sorted(old.items()):
            if item_id not in now and (also := [k for k, ids in record.items() if item_id in ids]):
                moved = [f"'{k}'" for k in also if item_id not in previous.get(k, {})]
                went = f"move to {', '.join(moved)}" if moved else "leave this feed"
                violations.append(
                    f"feed '{key}': item {item_id} (dated {date}) would {went} "
                    f"({sources[item_id]}): its module changed; change it back, or confirm that "
                    "it moves"
                )
            elif item_id not in now:
                where = _where_it_was(item_id, releases)
                violations.append(
                    f"feed '{key}': item {item_id} (dated {date}) would disappear: {where}; it "
                    "was removed, or its id, kind or module changed"
                )
            elif now[item_id] != date and date[:19] == now[item_id][:19]:  # said once, below
                rezoned[item_id] = (date, now[item_id])
            elif now[item_id] != date:
                violations.append(
                    f"feed '{key}': item {item_id} ({sources[item_id]}) would change its date "
                    f"from {date} to {now[item_id]}: items of a release are one second apart in "
                    "page order, and the N-th release of a day N-1 hours after noon, so adding "
                    "or removing a change before it, or renumbering its file, re-dates it; add "
                    "new changes after the published ones, or in a new release"
                )
    if rezoned:
        item_id, (date, now_date) = next(iter(rezoned.items()))
        violations.insert(
            0,
            f"site.toml: timezone: {count(len(rezoned), 'published item')}, such as {item_id}, "
            f"would be in another offset at the same time of day ({date} would be {now_date}): "
            "readers would show them moved; restore the time zone (or the time zone database "
            "the build used), or confirm that they move",
        )
    if violations and not allow_changes:
        raise GuardError(violations)
    return record


def dated_behind(
    previous: Mapping[str, Mapping[str, str]],
    record: Mapping[str, Mapping[str, str]],
    releases: Sequence[tuple[str, dt.date, Sequence[Item]]],
) -> list[str]:
    """Warnings for new releases dated before an item a feed published and still holds: a wrong
    year or month, most likely, or a day's release numbered before its last. Only a warning: a
    lost release restored later is dated so on purpose, and one added to needs none. ``record``
    is what the guard returned: the ids each feed holds now, with this build's dates."""
    known = {item_id for ids in previous.values() for item_id in ids}
    # A release added to is not new; with none new (most builds), nothing more is worked out.
    new = [
        (path, date, items)
        for path, date, items in releases
        if known.isdisjoint(item.id for item in items)
    ]
    if not new:
        return []
    newest = {}  # each feed's newest date of the items it published before and still holds
    for key, ids in record.items():
        kept = [dt.datetime.fromisoformat(d) for i, d in ids.items() if i in previous.get(key, {})]
        if kept:
            newest[key] = max(kept)
    warnings = []
    for path, date, items in new:
        behind = [
            newest[key]
            for key in newest
            for item in items
            if item.id in record[key] and item.published < newest[key]
        ]
        if behind:
            warnings.append(
                f"{path}: date: {date} puts this new release before an item already published "
                f"({max(behind):%Y-%m-%d %H:%M}): readers list its items below what they have "
                "read; if the date is wrong, fix it and build with --allow-changes before "
                "subscribers fetch it (later, its items would come to them again as new)"
            )
    return warnings


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


def _unseen(
    key: str, items: Sequence[Item], before: Mapping[str, str], subscribed: Collection[str]
) -> list[str]:
    """New items that only an archive would hold: each one dated before what the feed published,
    and those newer that more items at once than the subscription document holds pushed out."""
    unseen = [item for item in items if item.id not in subscribed and item.id not in before]
    if not unseen:
        return []
    newest = max(map(dt.datetime.fromisoformat, before.values()), default=None)
    pushed = [item for item in unseen if newest is None or item.published >= newest]
    found = [
        f"feed '{key}': new item {item.id} ({item.source}) is dated {item.released.isoformat()}, "
        "before items the feed has published and behind the newest items, which the "
        "subscription document holds: it would be only in an archive, which readers do not "
        "fetch; date the release later, or raise [feeds] max_items or max_bytes"
        for item in unseen
        if newest is not None and item.published < newest
    ]
    if pushed:
        found.append(
            f"feed '{key}': {count(len(pushed), 'new item')}, such as {pushed[0].id} "
            f"({pushed[0].source}), "
            "would be only in an archive, which readers do not fetch: this build adds more items "
            "than the subscription document holds; raise [feeds] max_items or max_bytes until "
            "it holds them, or confirm that they go to the archive"
        )
    return found
