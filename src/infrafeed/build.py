"""``infrafeed build``: load -> validate -> select -> render -> publish.

This module wires the stages together; each stage lives in its own module.
A build whose inputs (entry files, settings, infrafeed's version) hash the
same as last time, and whose outputs are on disk as it left them, stops
before loading anything: the cron job's usual case costs a few stats. With
a cache folder it does not even read the entries (their stats match the
last build's), and a build after a change loads, renders and writes only
what the change touched (cache.py, incremental.py).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .cache import Cache, Signature, entry_files
from .errors import GuardError
from .report import Report

if TYPE_CHECKING:
    from .items import Item
    from .publish import Manifest


@dataclass(frozen=True)
class BuildResult:
    report: Report
    skipped: bool  # inputs unchanged: nothing was loaded or rendered


def build(
    entries: Path,
    out: Path,
    *,
    allow_changes: bool = False,
    lock_wait: float = 30.0,
    cache: Path | None = None,
) -> BuildResult:
    """Build every feed from ``entries`` into ``out``; see the module docstring.

    With a ``cache`` folder (see cache.py), a build that changes nothing costs
    a stat of each entry file, and a build after a change parses, validates
    and renders only what the change touched. The output is byte for byte
    the same as without it.
    """
    store = Cache(cache) if cache is not None else None
    signature = Signature(entries) if store is not None else None
    stamp = None
    if store is not None and signature is not None:
        # Before taking the lock, and importing the publisher: a build that
        # changes the output first removes the stamp, so a stamp that matches
        # the entries and the output files describes the output as it is.
        stamp = store.stamped(entries, out, __version__)
        if stamp is not None and stamp.matches(out, signature):
            return BuildResult(Report((), stamp.files, (), ()), skipped=True)

    from .publish import MANIFEST, Manifest, locked, outputs_intact

    with locked(out, lock_wait):
        previous = Manifest.read(out)
        # With a cache, files whose stat did not change are not read again,
        # and the bytes read for the digest are the ones loaded.
        known = stamp.known(signature) if stamp is not None and signature is not None else {}
        contents: dict[str, bytes] | None = {} if store is not None else None
        hashes: dict[str, str] = {}
        inputs = inputs_digest(entries, known, contents, hashes)
        if previous.inputs == inputs and outputs_intact(out, previous.files):
            if store is not None and signature is not None:
                store.stamp(
                    entries, out, signature, __version__, previous.files, [MANIFEST], hashes
                )
            return BuildResult(Report((), tuple(sorted(previous.files)), (), ()), skipped=True)
        if store is not None:
            store.unstamp(entries, out)

        if store is None:
            with _no_cycle_collection():
                result = _build(entries, out, previous, inputs, allow_changes)
        else:
            with _no_cycle_collection():
                result = _build_cached(
                    entries, out, previous, inputs, allow_changes, store, contents or {}, hashes
                )
            assert signature is not None
            files = (*result.report.written, *result.report.unchanged)
            store.stamp(entries, out, signature, __version__, files, [MANIFEST], hashes)
        return result


@contextlib.contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Run without Python's cyclic garbage collector, and restore it.

    A build allocates millions of objects and frees them by reference
    counting; the collector's full passes over everything alive grew with
    the site: a tenth of a cold build at 100,000 items (bench/NOTES.md).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _build(
    entries: Path, out: Path, previous: Manifest, inputs: str, allow_changes: bool
) -> BuildResult:
    from .feeds import feed_specs, select_all
    from .items import build_items
    from .loader import load
    from .publish import Manifest, Stage, commit
    from .render import render_all

    changelog = load(entries)
    items = build_items(changelog)
    specs = feed_specs(changelog.site)
    published = {spec.key: select_all(items, spec) for spec in specs}
    feeds = guard(previous.feeds, published, allow_changes=allow_changes)

    stage = Stage(out)
    try:
        for relative, data in render_all(changelog.site, specs, items, __version__):
            stage.write(relative, data)
        return BuildResult(
            commit(stage, previous, Manifest(feeds=feeds, inputs=inputs)), skipped=False
        )
    finally:
        stage.cleanup()


def _build_cached(
    entries: Path,
    out: Path,
    previous: Manifest,
    inputs: str,
    allow_changes: bool,
    store: Cache,
    contents: dict[str, bytes],
    hashes: Mapping[str, str],
) -> BuildResult:
    """As :func:`_build`, with what the cache knows: only changed documents are rendered."""
    from .feeds import feed_specs, select_all
    from .incremental import Documents, load_items
    from .publish import Manifest, Stage, commit
    from .render import Parts, documents, frames, render

    loaded = load_items(entries, store, contents, hashes)
    site, items = loaded.site, loaded.items
    specs = feed_specs(site)
    published = {spec.key: select_all(items, spec) for spec in specs}
    feeds = guard(previous.feeds, published, allow_changes=allow_changes)

    parts = Parts()
    frame_of = frames()
    shown = Documents(loaded, out)
    stage = Stage(out)
    try:
        for doc in documents(site, specs, items, __version__):
            relative = doc.spec.path(doc.format)
            record = previous.files.get(relative)
            sha256 = record.sha256 if record is not None else None
            if (
                record is not None
                and shown.unchanged(relative, doc, sha256)
                and stage.keep(relative, record)
            ):
                continue
            previous_doc = shown.previous(relative, record)
            data, frame, lengths = render(doc, parts, frame_of, shown.keys(doc), previous_doc)
            stage.write(relative, data)
            shown.rendered(relative, doc, stage.hashes[relative], frame, lengths)
        report = commit(stage, previous, Manifest(feeds=feeds, inputs=inputs))
    finally:
        stage.cleanup()
    loaded.save(shown, (*report.written, *report.unchanged))
    return BuildResult(report, skipped=False)


def inputs_digest(
    entries: Path,
    known: Mapping[str, str] | None = None,
    contents: dict[str, bytes] | None = None,
    hashes: dict[str, str] | None = None,
) -> str:
    """A hash of everything the output depends on: infrafeed's version and every entry file.

    ``known`` gives the sha256 of files known not to have changed (they are
    not read); ``contents`` receives the bytes of the files read, and
    ``hashes`` every file's sha256, by relative path.
    """
    import hashlib  # here: loading OpenSSL is a third of what a no-op build costs

    known = known or {}
    digest = hashlib.sha256(f"infrafeed {__version__}\n".encode())
    for relative, entry in entry_files(entries):
        sha256 = known.get(relative)
        if sha256 is None:
            try:
                data = Path(entry.path).read_bytes()
            except OSError:
                sha256 = "(unreadable)"
            else:
                sha256 = hashlib.sha256(data).hexdigest()
                if contents is not None:
                    contents[relative] = data
        if hashes is not None:
            hashes[relative] = sha256
        digest.update(f"{len(relative)}:{relative}\n{sha256}\n".encode())
    return digest.hexdigest()


def guard(
    previous: Mapping[str, Mapping[str, str]],
    published: Mapping[str, Sequence[Item]],
    *,
    allow_changes: bool,
) -> dict[str, dict[str, str]]:
    """Refuse to drop or re-date items a feed already published; return the new id record.

    A feed that no longer exists is not checked (its removal is reported by
    publishing). Items that fell out of a feed because of ``max_items`` are
    still selected, so they are not drops.
    """
    violations: list[str] = []
    record: dict[str, dict[str, str]] = {}
    for key, items in published.items():
        now = {item.id: item.published.isoformat() for item in items}
        sources = {item.id: item.source for item in items}
        for item_id, date in sorted(previous.get(key, {}).items()):
            if item_id not in now:
                violations.append(
                    f"feed '{key}': item {item_id} (dated {date}) would disappear: its release "
                    "file no longer has it, or it moved to another module or kind"
                )
            elif now[item_id] != date:
                violations.append(
                    f"feed '{key}': item {item_id} ({sources[item_id]}) would change its date "
                    f"from {date} to {now[item_id]}: items of a release are one second apart in "
                    "page order, so a change inserted before it re-dates it"
                )
        record[key] = now
    if violations and not allow_changes:
        raise GuardError(violations)
    return record
