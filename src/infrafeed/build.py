"""``infrafeed build``: load -> validate -> select -> render -> publish, in one straight line.

A build whose inputs (entry files, infrafeed's version) hash as last time, and whose outputs
are on disk as it left them, stops before validating anything: the cron job's usual case
imports neither pydantic nor feedgen. A release file's share of the work (items, their
renderings, its changelog section) depends only on it and the settings: it is done one file at
a time, and a build cache (cache.py) keeps it for files that did not change.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ._version import __version__
from .clock import SYSTEM, Clock
from .compiled import Compiled
from .errors import DataError, InfraFeedError, OutOfDate, Problem, PublishError, count
from .publish import Report, shown
from .publish.lock import left_behind, locked
from .publish.manifest import (
    IDS,
    Manifest,
    committed_ids,
    ids_bytes,
    intact,
    read_ids,
    read_manifest,
)
from .source.files import PUBLISHED, read_entries, require_folder

_PAGE_OFF = "--page {}: the settings write no changelog page ([page] enabled = false)"

if TYPE_CHECKING:
    from .cache import ReleaseCache
    from .publish.websub import Notification
    from .source.files import EntryFile, Snapshot
    from .source.models import Site


class BuildResult(NamedTuple):
    report: Report
    skipped: bool  # inputs unchanged: nothing was validated or rendered
    hub: str | None = None  # the WebSub hub of the settings (unknown when skipped)
    notifications: tuple[Notification, ...] = ()  # with ping=True: each ping sent or owed
    cache_error: str | None = None  # the build cache could not be written: why
    warnings: tuple[str, ...] = ()  # files in the entries folder that are not entries


def build(
    entries: Path,
    out: Path,
    *,
    cache: Path | None = None,
    allow_changes: bool = False,
    locked_ids: bool = False,
    lock_wait: float = 30.0,
    ping: bool = False,
    page: Path | None = None,
    preview: bool = False,
    clock: Clock = SYSTEM,
) -> BuildResult:
    """Build every feed, the site files and the changelog page from ``entries`` into ``out``.

    ``page`` puts the changelog page there instead of below ``out``. ``locked_ids`` refuses to
    change the id guard's memory kept with the entries (``published-ids.txt``), as CI should.
    ``ping`` tells the WebSub hub of every subscription document that changed, and of those owed.
    ``preview`` (``infrafeed serve``) leaves the entries as they are: ``published-ids.txt`` is
    not written (a draft is not published), and the guard holds the items to it alone, as on a
    fresh clone: ``out``'s own record holds only earlier previews, drafts that may still go.
    """
    require_folder(entries)
    _apart(out, "output folder", entries, "entries folder")
    if _mode(out, PublishError) not in (None, stat.S_IFDIR):
        raise PublishError(f"{out}: is not a folder (a file, device or FIFO); give --out a folder")
    if page is not None and _mode(page, InfraFeedError) not in (None, stat.S_IFREG):
        why = "is not a regular file (a folder, device or FIFO); give --page the path of a file"
        raise InfraFeedError(f"{page}: {why}")  # never read or replaced
    where = Path(os.path.realpath(page)) if page is not None else None
    for folder, name in ((entries, "entries"), (out, "output")):
        if where is not None and where.is_relative_to(os.path.realpath(folder)):
            raise InfraFeedError(
                f"{page}: the changelog page must be outside the {name} folder {folder}; write "
                "it where the site reads it, e.g. --page docs/posts/update-log.md"
            )
    if cache is not None:
        _apart(cache, "build cache", entries, "entries folder")
        _apart(cache, "build cache", out, "output folder")
    with locked(out, lock_wait, clock):
        # Before anything else, even a build with nothing to do: what a killed build
        # left is completed (a journal) or removed (an unpublished tree).
        if left_behind(out):
            from .publish.tree import remove_leftovers

            remove_leftovers(out)
        snapshot = read_entries(entries, __version__)
        warnings = snapshot.warnings
        inputs = snapshot.digest
        if page is not None:  # where the page goes is an input too, however it is written
            inputs = sha256(f"{inputs} {os.path.realpath(page.parent)}/{page.name}".encode())
        previous = read_manifest(out)
        record = snapshot.published_ids
        if (
            previous.inputs == inputs
            and previous.ids_sha256 == (sha256(record.data) if record and record.data else None)
            and intact(out, previous, page)
        ):
            files = [*previous.files, *([str(page)] if page and previous.page else [])]
            off = () if page is None or previous.page else (_PAGE_OFF.format(page),)
            result = BuildResult(Report((), shown(files), (), ()), True, warnings=off)
        else:
            try:
                result = _publish(snapshot, out, previous, inputs, cache, page, allow_changes,
                                  locked_ids, preview, clock)  # fmt: skip
            except InfraFeedError as exc:  # a file left out may be why: the guard misses it
                for warning in warnings:
                    exc.add_note(f"warning: {warning}")
                raise
        result = result._replace(warnings=warnings + result.warnings)
        return _pinged(result, out, snapshot.site, clock) if ping else result


def _publish(
    snapshot: Snapshot,
    out: Path,
    previous: Manifest,
    inputs: str,
    cache: Path | None,
    page: Path | None,
    allow_changes: bool,
    locked_ids: bool,
    preview: bool,
    clock: Clock,
) -> BuildResult:
    # Not needed by a build with nothing to do, which is over before these load.
    from .cache import ReleaseCache
    from .changelog.page import assemble_page
    from .feeds.guard import dated_behind, guard
    from .feeds.items import id_prefix
    from .feeds.specs import FORMATS, document_path, document_url, feed_specs, select_all
    from .publish.tree import Tree
    from .render.documents import plan_all, render_all
    from .source.icon import icon_of
    from .source.loader import dated_ahead, site_of, validate

    problems = [Problem(where, "(file)", why) for where, why in snapshot.problems]
    site = site_of(snapshot.site, problems)
    icon = None if site is None else icon_of(snapshot, site, problems)
    if site is None or problems:
        validate(snapshot)  # raises, with the problems of every file
    assert site is not None
    with ReleaseCache(cache, site, snapshot.site) as memo:
        releases = _compile_all(site, snapshot, memo, problems)
        cache_error = memo.finish()
    items = tuple(item for c in releases for item in c.items)
    specs = feed_specs(site)
    # A feed and its archives are one: the guard sees the whole history.
    selected = {spec.key: select_all(items, spec) for spec in specs}
    # The ids published: the output folder's record, and the one kept in git, which a
    # fresh clone has alone (it wins where they differ).
    record_path, committed = snapshot.folder / PUBLISHED, snapshot.published_ids
    memory, recorded = {} if preview else read_ids(out), committed_ids(committed)
    for key, known in recorded.items():
        memory[key] = {**memory.get(key, {}), **known}
    dated = [(c.path, c.date) for c in releases]
    parts = {item.id: p for c in releases for item, p in zip(c.items, c.parts, strict=True)}
    planned = plan_all(site, specs, items, __version__, parts)
    subscribed = {h.spec.key: {item.id for item in h.current.items} for _, h in planned}
    ids = guard(
        memory,
        selected,
        allow_changes=allow_changes,
        releases=dated,
        subscribed=subscribed,
        minted=id_prefix(site),
        committed=recorded,
    )
    record = ids_bytes(ids)
    stale = committed is None or committed.data != record
    if stale and locked_ids:
        state = "is missing" if committed is None else "does not match the entries"
        raise OutOfDate(
            f"{record_path} {state} (--locked); run `infrafeed build` where the "
            f"entries are edited and commit {record_path}"
        )
    tree = Tree(out, previous)
    try:
        # Moved into place with the output: a failed build records nothing.
        if stale and not preview:
            tree.stage(record_path, (record,))
        text = None
        if site.page.enabled:
            oldest = releases[-1].date if releases else None
            text = assemble_page(site, [c.section for c in releases], oldest)
            if page is None:
                tree.write(site.page.path, text)
        for relative, chunks in render_all(site, items, parts, planned, icon):
            tree.write(relative, chunks)
        tree.write(IDS, (record,))
        manifest = Manifest(inputs, {}, ids_sha256=sha256(record), pending=previous.pending)
        # The URLs the hub knows the documents by: one written is owed a ping, --ping or not.
        pairs = [(s.folder, f) for s in specs for f in FORMATS] if site.feeds.hub else []
        topics = {document_path(d, f): document_url(site, f, d) for d, f in pairs}
        report = tree.publish(manifest, (page, text) if page and text is not None else None, topics)
    finally:
        tree.cleanup()
    warnings = [_PAGE_OFF.format(page)] if page is not None and text is None else []
    warnings += dated_ahead(site, dated, clock.now())
    warnings += dated_behind(memory, ids, [(c.path, c.date, c.items) for c in releases])
    feeds = site.feeds  # without the feed of everything, a change without a module is in none
    if not feeds.all and (unfed := [i for i in items if i.module is None or not feeds.modules]):
        why = "it has no module" if feeds.modules else "[feeds] modules = false too"
        warnings.append(
            f"{count(len(unfed), 'change')} in no feed, such as {unfed[0].source}: [feeds] "
            f"all = false, and {why}; subscribers never see them"
        )
    return BuildResult(report, False, site.feeds.hub, (), cache_error, tuple(warnings))


def _pinged(result: BuildResult, out: Path, settings: EntryFile, clock: Clock) -> BuildResult:
    """Tell the WebSub hub about the feeds owed a ping (those this build changed among them)."""
    from .publish.manifest import MANIFEST, record_pending
    from .publish.websub import notify
    from .source.loader import site_of
    from .source.urls import encoded

    # The settings the build read (valid: a build with nothing to do follows a good one).
    site = site_of(settings, [])
    if site is None or site.feeds.hub is None:
        return result._replace(hub=None)
    manifest = read_manifest(out)
    notifications = notify(encoded(site.feeds.hub), manifest.pending, clock=clock)
    pending = tuple(sorted(n.topic for n in notifications if n.error is not None))
    result = result._replace(hub=site.feeds.hub, notifications=notifications)
    if pending != manifest.pending:
        try:
            record_pending(out, manifest, pending)
        except OSError as exc:  # the feeds are published: only the record of pings is lost
            why = f"{out / MANIFEST}: could not be written ({exc.strerror}); the next build "
            why += "with --ping tells the hub again"
            return result._replace(warnings=(*result.warnings, why))
    return result


def _mode(path: Path, error: type[InfraFeedError]) -> int | None:
    """The type of file at ``path`` (links followed), None when there is none yet."""
    try:
        return stat.S_IFMT(path.stat().st_mode)
    except (FileNotFoundError, NotADirectoryError):  # a file on the way: writing it says so
        return None
    except OSError as exc:  # a name too long, a loop of links
        raise error(f"{path}: cannot be used ({exc.strerror}); give another path") from None


def _apart(folder: Path, what: str, other: Path, other_what: str) -> None:
    """Refuse folders that share a tree: an output served with the entries in it, a
    cache inside the output (served) or around the entries (its CACHEDIR.TAG would
    keep backups from saving them)."""
    here, there = Path(os.path.realpath(folder)), Path(os.path.realpath(other))
    if here.is_relative_to(there) or there.is_relative_to(here):
        raise InfraFeedError(
            f"{folder}: the {what} must be a folder apart from the {other_what} {other}, "
            "neither inside it nor holding it"
        )


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _compile_all(
    site: Site, snapshot: Snapshot, memo: ReleaseCache, problems: list[Problem]
) -> list[Compiled]:
    """What each release file gives, newest first; raise with every problem found."""
    from .changelog.page import release_section
    from .feeds.items import ItemMaker
    from .render.documents import item_parts
    from .source.loader import check_unique, release_keys, release_of, validate

    maker = ItemMaker(site)
    releases = []
    for file in snapshot.releases:
        key, compiled = memo.get(file)
        if compiled is None:
            before = len(problems)
            rf = release_of(file, site, problems)
            if rf is None or len(problems) > before:
                continue
            items = tuple(maker.items(rf))
            section = release_section(site, rf).encode()
            keys = release_keys(rf)
            compiled = Compiled(
                rf.path, rf.date, rf.sequence, keys, items, item_parts(site, items), section
            )
            memo.put(key, compiled)
        releases.append(compiled)
    problems += check_unique((c.path, c.keys) for c in releases)
    if problems:
        # Every problem `check` reports: a release skipped above still has ids to compare.
        validate(snapshot)
        raise DataError(problems)
    releases.sort(key=lambda c: (c.date, c.sequence), reverse=True)
    return releases
