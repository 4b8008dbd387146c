"""``infrafeed build``: load -> validate -> select -> render -> publish, in one straight line.

Each stage is a package of its own (source/, feeds/, render/, changelog/,
publish/); this module only calls them in order. A build whose inputs (entry
files and infrafeed's version) hash as they did last time, and whose outputs
are on disk as it left them, stops before validating anything: the cron
job's usual case imports neither pydantic nor feedgen.

A release file's share of the work (its items, their renderings, its section
of the changelog page) depends only on the file and the settings, so it is
done one file at a time; with a build cache (cache.py), a file that did not
change is not done again.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from . import __version__
from .clock import SYSTEM, Clock
from .errors import DataError, GuardError, InfraFeedError, Problem
from .publish import Report
from .publish.lock import locked, remove_leftovers
from .publish.manifest import intact, read_manifest
from .source.files import read_entries

if TYPE_CHECKING:
    from .cache import ReleaseCache
    from .feeds.items import Item, ItemMaker
    from .publish.websub import Notification
    from .render.documents import ItemParts
    from .source.files import Snapshot
    from .source.loader import IdKey, ReleaseFile
    from .source.models import Site


class BuildResult(NamedTuple):
    report: Report
    skipped: bool  # inputs unchanged: nothing was validated or rendered
    hub: str | None = None  # the WebSub hub of the settings (unknown when skipped)
    notifications: tuple[Notification, ...] = ()  # with ping=True: one per changed feed
    cache_error: str | None = None  # the build cache could not be written: why


class Compiled(NamedTuple):
    """What one release file gives a build: all that depends on it alone."""

    path: str  # as messages name it
    date: dt.date
    sequence: int
    keys: tuple[IdKey, ...]  # for the uniqueness check across files
    items: tuple[Item, ...]  # in page order
    parts: tuple[ItemParts, ...]  # one per item
    section: bytes  # its section of the changelog page, UTF-8


def build(
    entries: Path,
    out: Path,
    *,
    cache: Path | None = None,
    allow_changes: bool = False,
    lock_wait: float = 30.0,
    ping: bool = False,
    page: Path | None = None,
    clock: Clock = SYSTEM,
) -> BuildResult:
    """Build every feed, the site files and the changelog page from ``entries`` into ``out``.

    ``page`` puts the changelog page there instead of at its path below
    ``out``. ``cache`` is a build cache folder, or None for none. With ``ping``, tell
    the settings' WebSub hub about every subscription document whose bytes
    changed, once the output is published.
    """
    if not entries.is_dir():
        raise DataError([Problem(str(entries), "(folder)", "no such folder")])
    if cache is not None:
        _check_apart(cache, entries, out)
    with locked(out, lock_wait, clock):
        # Every time, not only when rendering: a build killed after its last
        # write leaves a staging folder that a no-op build must also remove.
        remove_leftovers(out)
        snapshot = read_entries(entries, __version__)
        inputs = snapshot.digest
        if page is not None:  # where the page goes is an input too
            inputs = hashlib.sha256(f"{inputs} {page.absolute()}".encode()).hexdigest()
        previous = read_manifest(out)
        if previous.inputs == inputs and intact(out, previous, page):
            files = [name for name in previous.files if not name.startswith(".")]
            files += [str(page)] if page is not None else []
            return BuildResult(Report((), tuple(sorted(files)), (), ()), skipped=True)

        # Not needed above: a build with nothing to do is over before these load.
        from .cache import ReleaseCache
        from .changelog.page import assemble_page
        from .feeds.guard import guard, had_archives, late_additions
        from .feeds.specs import feed_specs, select_all
        from .publish.manifest import IDS, ids_bytes, read_ids
        from .publish.stage import Stage, commit
        from .render.documents import render_all
        from .source.loader import site_of, validate

        problems: list[Problem] = []
        site = site_of(snapshot.site, problems)
        if site is None:
            validate(snapshot)  # raises, with the problems of every file
        assert site is not None
        with ReleaseCache(cache, site, snapshot.site) as memo:
            releases = _compile_all(site, snapshot, memo, problems)
            cache_error = memo.finish()
        items = tuple(item for c in releases for item in c.items)
        specs = feed_specs(site)
        # A feed and its archives are one: the guard sees the whole history.
        published = {spec.key: select_all(items, spec) for spec in specs}
        memory = read_ids(out)
        dated = [(c.path, c.date) for c in releases]
        ids = guard(memory, published, allow_changes=allow_changes, releases=dated)
        archived = {spec.key for spec in specs if had_archives(spec, previous.files)}
        late = late_additions(memory, published, archived)
        if late and not allow_changes:
            raise GuardError(late)
        parts = {
            item.id: part for c in releases for item, part in zip(c.items, c.parts, strict=True)
        }

        stage = Stage(out)
        try:
            written_page = None
            if site.page.enabled:
                oldest = releases[-1].date if releases else None
                text = assemble_page(site, [c.section for c in releases], oldest)
                if page is None:
                    stage.write(site.page.path, (text,))
                else:
                    written_page = (page, text)
            for relative, chunks in render_all(site, specs, items, __version__, parts):
                stage.write(relative, chunks)
            stage.write(IDS, (ids_bytes(ids),))
            report = commit(stage, previous, inputs, written_page)
        finally:
            stage.cleanup()

    # Outside the lock: a slow hub must not hold up the next build.
    notifications: tuple[Notification, ...] = ()
    if ping and site.feeds.hub is not None:
        from .feeds.specs import FORMATS, document_path
        from .publish.websub import notify

        topics = {document_path(s.folder, f): s.url(site, f) for s in specs for f in FORMATS}
        changed = [topics[path] for path in report.written if path in topics]
        notifications = notify(site.feeds.hub, changed, clock=clock)
    return BuildResult(report, False, site.feeds.hub, notifications, cache_error)


def _check_apart(cache: Path, entries: Path, out: Path) -> None:
    """Refuse a cache folder that shares a folder tree with the entries or the output.

    Inside the output, it would be served; around either, its CACHEDIR.TAG
    would keep backups from saving them.
    """
    here = Path(os.path.realpath(cache))
    for role, folder in (("entries", entries), ("output", out)):
        other = Path(os.path.realpath(folder))
        if here.is_relative_to(other) or other.is_relative_to(here):
            raise InfraFeedError(
                f"{cache}: the build cache must be a folder apart from the {role} folder "
                f"{folder}, neither inside it nor holding it"
            )


def _compile_all(
    site: Site, snapshot: Snapshot, memo: ReleaseCache, problems: list[Problem]
) -> list[Compiled]:
    """What each release file gives, newest first; raise with every problem found."""
    from .feeds.items import ItemMaker
    from .source.loader import check_unique_ids, release_of

    maker = ItemMaker(site)
    releases = []
    for file in snapshot.releases:
        compiled = memo.get(file)
        if compiled is None:
            before = len(problems)
            rf = release_of(file, site, problems)
            if rf is None or len(problems) > before:
                continue
            compiled = _compile(site, maker, rf)
            memo.put(file, compiled)
        releases.append(compiled)
    problems += check_unique_ids((c.path, c.keys) for c in releases)
    if problems:
        raise DataError(problems)
    releases.sort(key=lambda c: (c.date, c.sequence), reverse=True)
    return releases


def _compile(site: Site, maker: ItemMaker, rf: ReleaseFile) -> Compiled:
    from .changelog.page import release_section
    from .render.documents import item_parts
    from .source.loader import release_keys

    items = tuple(maker.items(rf))
    section = release_section(site, rf).encode()
    return Compiled(
        rf.path, rf.date, rf.sequence, release_keys(rf), items, item_parts(site, items), section
    )
