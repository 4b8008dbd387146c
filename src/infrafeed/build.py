"""``infrafeed build``: load -> validate -> select -> render -> publish.

This module wires the stages together; each stage lives in its own module.
A build whose inputs (entry files, settings, infrafeed's version) hash the
same as last time, and whose outputs are on disk as it left them, stops
before loading anything: the cron job's usual case imports neither pydantic
nor feedgen. With a build cache (``cache``), a stamp from the last build
lets it stop before reading any file at all: it only stats them (stamp.py).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .errors import GuardError, InfraFeedError
from .outfolder import Report, locked, remove_leftovers

if TYPE_CHECKING:
    from .hash_index import HashIndex
    from .items import Item
    from .keep import KeptDocuments
    from .loader import ReleaseFile
    from .publish import FileRecord
    from .release_cache import ReleaseCache
    from .stamp import Watch
    from .websub import Notification


@dataclass(frozen=True)
class BuildResult:
    report: Report
    skipped: bool  # inputs unchanged: nothing was loaded or rendered
    hub: str | None = None  # the WebSub hub of the settings (unknown when skipped)
    notifications: tuple[Notification, ...] = ()  # with ping=True: one per changed feed
    cache_error: str | None = None  # the build cache could not be written: why


def build(
    entries: Path,
    out: Path,
    *,
    cache: Path | None = None,
    allow_changes: bool = False,
    lock_wait: float = 30.0,
    ping: bool = False,
) -> BuildResult:
    """Build every feed from ``entries`` into ``out``; see the module docstring.

    ``cache`` is the build cache folder (cache.py), or None for none: then a
    build with nothing to do hashes every entry and output file to know it.
    With ``ping``, tell the settings' WebSub hub about every subscription
    document whose bytes changed, once the output is published.
    """
    if cache is not None:
        _check_cache_folder(cache, entries, out)
    # The cyclic GC's full passes over every live object made each item cost
    # more as the site grew (bench/NOTES.md). Reference counting frees what a build drops; the few
    # cycles left wait for the GC to be back on, or for the process to end.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _build(
            entries, out, cache, allow_changes=allow_changes, lock_wait=lock_wait, ping=ping
        )
    finally:
        if collecting:
            gc.enable()


def _build(
    entries: Path,
    out: Path,
    cache: Path | None,
    *,
    allow_changes: bool,
    lock_wait: float,
    ping: bool,
) -> BuildResult:
    with locked(out, lock_wait):
        # Every time, not only when rendering: a build killed after its last
        # write leaves a staging folder that a no-op build must also remove.
        remove_leftovers(out)
        watch = _watch(cache, entries, out)
        if watch is not None and (files := watch.unchanged()) is not None:
            return BuildResult(Report((), files, (), ()), skipped=True)

        # Not needed above: a no-op that stats is over before these would load.
        from .publish import Manifest, Stage, commit, outputs_intact

        previous = Manifest.read(out)
        if watch is not None:
            watch.see_outputs(previous.files)  # stat'ed before hashed: the stamp holds what was
        hashed: dict[str, str] = {}
        listing: list[tuple[str, Path]] = []  # walked once, for the digest and the loader
        index = _hash_index(watch, entries)
        inputs = inputs_digest(entries, hashed, index=index, listing=listing)
        if index is not None:
            index.save()  # now, not after the build: its hashes hold even if the build fails
        if previous.inputs == inputs and outputs_intact(out, previous.files):
            unchanged = Report((), tuple(sorted(previous.files)), (), ())
            return BuildResult(unchanged, skipped=True, cache_error=_stamp(watch, inputs))

        from .changelog_page import page_files
        from .feeds import FORMATS, feed_specs, select_all
        from .history import had_archives, late_additions
        from .items import build_items
        from .loader import load
        from .render import PartsStore, item_parts, render_all

        # With a cache, the release files that did not change are neither parsed
        # nor rendered again: their items, parts and page sections are kept.
        memo = _release_cache(watch, entries)
        changelog = (
            load(entries, known=memo.known, digests=hashed, listing=listing)
            if memo is not None
            else load(entries, listing=listing)
        )
        site = changelog.site
        items = memo.items(changelog) if memo is not None else build_items(changelog)
        specs = feed_specs(site)
        # A feed and its archives are one: select_all is the whole history.
        published = {spec.key: select_all(items, spec) for spec in specs}
        feeds = guard(
            previous.feeds, published, allow_changes=allow_changes, releases=changelog.releases
        )
        archived = {spec.key for spec in specs if had_archives(spec, previous.files)}
        late = late_additions(previous.feeds, published, archived)
        if late and not allow_changes:
            raise GuardError(late)

        stage = Stage(out)
        try:
            # The changelog page comes from the same entries as the feeds: they
            # cannot drift. Written first, before the items' parts are rendered.
            sections = memo.section if memo is not None else None
            for relative, data in page_files(changelog, sections):
                stage.write(relative, data)
            # Items and page are made: the releases' models may go before the parts come.
            for rf in changelog.releases:
                rf.forget()
            kept = _kept_documents(watch, memo, out, previous.files)
            # Each item's parts are rendered once, into files beside the staged ones;
            # each document goes to disk as it is rendered, a chunk at a time.
            with PartsStore(
                memo.parts_of if memo is not None else item_parts,
                stage.dir,
                memo.known_parts if memo is not None else None,
            ) as store:
                for relative, chunks in render_all(
                    site, specs, items, __version__, keep=kept, store=store
                ):
                    if chunks is None:  # as the last build left it: see keep.py
                        stage.keep(relative, previous.files[relative])
                    else:
                        stage.write_chunks(relative, chunks)
                report = commit(stage, previous, Manifest(feeds=feeds, inputs=inputs))
                if memo is not None:
                    memo.save(store.get)
        finally:
            stage.cleanup()
        if kept is not None:
            kept.save(stage.records)
        if watch is not None:
            watch.see_outputs([*report.written, *report.unchanged], manifest_rewritten=True)
        cache_error = _stamp(watch, inputs)

    # Outside the lock: a slow hub must not hold up the next build.
    notifications: tuple[Notification, ...] = ()
    if ping and site.feeds.hub is not None:
        from .websub import notify

        subscription = {spec.path(fmt): spec.url(site, fmt) for spec in specs for fmt in FORMATS}
        changed = [subscription[path] for path in report.written if path in subscription]
        notifications = notify(site.feeds.hub, changed)
    return BuildResult(
        report,
        skipped=False,
        hub=site.feeds.hub,
        notifications=notifications,
        cache_error=cache_error,
    )


def _check_cache_folder(cache: Path, entries: Path, out: Path) -> None:
    """Refuse a cache folder that shares a folder tree with the entries or the output.

    Inside the entries, each stamp would change the inputs; inside the
    output, it would be served; around either, its CACHEDIR.TAG would keep
    backups from saving them.
    """
    here = Path(os.path.realpath(cache))
    for role, folder in (("entries", entries), ("output", out)):
        other = Path(os.path.realpath(folder))
        if here.is_relative_to(other) or other.is_relative_to(here):
            raise InfraFeedError(
                f"{cache}: the build cache must be a folder apart from the {role} folder "
                f"{folder}, neither inside it nor holding it"
            )


def _watch(cache: Path | None, entries: Path, out: Path) -> Watch | None:
    if cache is None:
        return None
    from .cache import Cache
    from .stamp import Watch

    return Watch(Cache(cache), entries, out, __version__)


def _hash_index(watch: Watch | None, entries: Path) -> HashIndex | None:
    """The sha256 of the entry files that did not change, in the stamp's cache folder."""
    if watch is None:
        return None
    from .hash_index import HashIndex  # only once the stamp said something changed

    return HashIndex(watch.cache, entries)


def _release_cache(watch: Watch | None, entries: Path) -> ReleaseCache | None:
    """The records of the release files of the last build, in the stamp's cache folder."""
    if watch is None:
        return None
    from .release_cache import ReleaseCache, namespace_of

    return ReleaseCache(watch.cache, namespace_of(entries, __version__))


def _kept_documents(
    watch: Watch | None, memo: ReleaseCache | None, out: Path, published: Mapping[str, FileRecord]
) -> KeptDocuments | None:
    """Which feed documents may stay as the last build left them (keep.py); None: render all."""
    if watch is None or memo is None:
        return None
    from .keep import KeptDocuments

    return KeptDocuments(watch.cache, out, memo.space, published, memo.source_of)


def _stamp(watch: Watch | None, inputs: str) -> str | None:
    """Stamp what the build saw; say why the cache could not be written, if it could not."""
    if watch is None:
        return None
    watch.stamp(inputs)
    return watch.cache.write_error


def inputs_digest(
    entries: Path,
    files: dict[str, str] | None = None,
    *,
    index: HashIndex | None = None,
    listing: list[tuple[str, Path]] | None = None,
) -> str:
    """A hash of everything the output depends on: infrafeed's version and every entry file.

    ``files``, when given, receives the sha256 of each regular file by its
    path below ``entries``, so that the loader need not read it again.
    ``index``, when given, vouches for the files that did not change since
    the last build hashed them (hash_index.py): they are not read; the files
    hashed are recorded in it. The digest and ``files`` are the same either way.
    ``listing``, when given, receives every path below ``entries`` as walked.

    A symbolic link counts by where it points, not by what it points at: the
    loader reads only links that stay inside ``entries``, whose targets are
    hashed on their own; anything else is refused there, and must not be read
    here either (a link to /dev/zero or to a huge file elsewhere).
    """
    import hashlib  # not at the top: a no-op that only stats never needs it

    digest = hashlib.sha256(f"infrafeed {__version__}\n".encode())
    # Every path, whatever it is: a folder or FIFO named like a release file is
    # something the loader reports, so it must not let a build take the fast path.
    from .paths import below

    relative_of = below(entries)
    paths = sorted((relative_of(p), p) for p in entries.rglob("*")) if entries.is_dir() else []
    if listing is not None:
        listing.extend(paths)
    for relative, path in paths:
        digest.update(f"{len(relative)}:{relative}\n".encode(errors="surrogateescape"))
        try:
            known = index.reuse(relative, path) if index is not None else None
            if known is not None:
                digest.update(bytes.fromhex(known))
                if files is not None:
                    files[relative] = known
            elif path.is_symlink():
                digest.update(f"-> {path.readlink()}\n".encode(errors="surrogateescape"))
            elif path.is_file():
                with path.open("rb") as handle:
                    # Before the read: a write while it reads is a change the next stat shows.
                    seen = os.fstat(handle.fileno()) if index is not None else None
                    file_digest = hashlib.file_digest(handle, "sha256")
                digest.update(file_digest.digest())
                hexed = file_digest.hexdigest()
                if files is not None:
                    files[relative] = hexed
                if index is not None and seen is not None:
                    index.record(relative, seen, hexed)
            else:
                digest.update(b"(folder)\n" if path.is_dir() else b"(not a file)\n")
        except OSError:
            digest.update(b"\xff(unreadable)")
    return digest.hexdigest()


def guard(
    previous: Mapping[str, Mapping[str, str]],
    published: Mapping[str, Sequence[Item]],
    *,
    allow_changes: bool,
    releases: Sequence[ReleaseFile] = (),
) -> dict[str, dict[str, str]]:
    """Refuse to drop or re-date items a feed already published; return the new id record.

    A feed that no longer exists is not checked (its removal is reported by
    publishing). Items that fell out of a feed because of ``max_items`` are
    still selected, so they are not drops. ``releases`` lets a message about
    a vanished item name the release file it was published from.
    """
    violations: list[str] = []
    record: dict[str, dict[str, str]] = {}
    dates: dict[str, str] = {}  # an item is in several feeds: its date is written once
    for key, items in published.items():
        dates.update(
            {item.id: item.published.isoformat() for item in items if item.id not in dates}
        )
        now = {item.id: dates[item.id] for item in items}
        old = previous.get(key, {})
        if old.items() <= now.items():  # the usual case, at C speed: nothing dropped or moved
            record[key] = now
            continue
        sources = {item.id: item.source for item in items}
        for item_id, date in sorted(old.items()):
            if item_id not in now:
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
        record[key] = now
    if violations and not allow_changes:
        raise GuardError(violations)
    return record


def _where_it_was(item_id: str, releases: Sequence[ReleaseFile]) -> str:
    """Name the release file and field a published item came from, from its tag URI."""
    # tag:<authority>,<minting date>:<release date>/<entry id>/<kind> (items.tag_uri)
    parts = item_id.rsplit(":", 1)[-1].split("/")
    if len(parts) != 3:
        return "no entry has it any more"
    day, entry_id, kind = parts
    files = [rf.path for rf in releases if rf.date.isoformat() == day]
    if not files:
        return f"no release file is dated {day} any more"
    return f"{' or '.join(files)} has no '{kind}' change with id = \"{entry_id}\" any more"
