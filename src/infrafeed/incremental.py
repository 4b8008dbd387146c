"""Load the entries through the build cache: an unchanged release file is not read again.

A release file's items depend only on its bytes, its path and the namespace
(settings, time zone rules, versions: see cache.py), so they are kept per
file. A build parses and validates only the files whose bytes changed, and
renders only the documents whose items changed, copying the items they
already showed from the published files (:class:`Documents`).

Whenever anything is wrong, the whole entries folder is loaded again with
:func:`infrafeed.loader.load`, which reports every problem of every file at
once, exactly as a build without a cache would.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import sys
import zoneinfo
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import __version__
from .cache import FORMAT, Cache, Releases
from .document import FeedDocument
from .errors import DataError, InfraFeedError
from .items import Item, release_items
from .loader import SITE_FILE, load, load_release, load_site, release_files
from .models import Site
from .publish import FileRecord, outputs_intact
from .render import Frame, Previous


@dataclass
class Loaded:
    """The items of a build, newest first, and what the cache knows about them."""

    site: Site
    items: tuple[Item, ...]
    keys: dict[str, str]  # per item id: a name for the item that changes when it does
    namespace: str
    releases: Releases
    files: dict[str, tuple[str, str, int, tuple[Item, ...]]] = field(default_factory=dict)
    fresh: set[str] = field(default_factory=set)  # release files read and validated this time

    def save(self, documents: Documents, published: Iterable[str]) -> None:
        """Record each new release file's items, and what each published document shows."""
        for relative in self.fresh:
            key, date, sequence, items = self.files[relative]
            self.releases.put(relative, (key, date, sequence, _pack(items)))
        self.releases.save(self.files, {path: documents.now[path] for path in published})


class Documents:
    """Per output file: a digest of the items it shows and where each one's part is.

    A document whose items are all unchanged is not rendered again. One
    that changed takes the parts of its unchanged items from the published
    file itself (when it is on disk as the manifest recorded it), and
    renders only the others: after a new release, the feed of every item
    costs what the release costs plus a copy of the bytes it already had.
    A feed's formats show the same items: what depends only on the items is
    worked out once per feed.
    """

    def __init__(self, loaded: Loaded, out: Path) -> None:
        self.loaded = loaded
        self.out = out
        self.before = {
            path: shown for path, shown in loaded.releases.documents().items() if _valid(shown)
        }
        self.now: dict[str, Shown] = {}
        self._keys: dict[int, tuple[tuple[Item, ...], tuple[str, ...]]] = {}
        self._digests: dict[int, tuple[tuple[str, ...], str]] = {}
        self._where: dict[int, tuple[tuple[str, ...], dict[str, int]]] = {}

    def keys(self, doc: FeedDocument) -> tuple[str, ...]:
        # One tuple per selection of items, shared by a feed's formats (and in the cache).
        found = self._keys.get(id(doc.items))
        if found is None or found[0] is not doc.items:
            keys = tuple(self.loaded.keys[item.id] for item in doc.items)
            found = self._keys[id(doc.items)] = (doc.items, keys)
        return found[1]

    def digest(self, relative: str, doc: FeedDocument) -> str:
        keys = self.keys(doc)
        found = self._digests.get(id(keys))
        if found is None or found[0] is not keys:
            text = "\0".join((self.loaded.namespace, *keys))
            found = self._digests[id(keys)] = (keys, hashlib.sha256(text.encode()).hexdigest())
        return hashlib.sha256(f"{relative}\0{found[1]}".encode()).hexdigest()

    def unchanged(self, relative: str, doc: FeedDocument, sha256: str | None) -> bool:
        """True when the file holding ``sha256`` showed exactly ``doc``'s items."""
        before = self.before.get(relative)
        if sha256 is None or before is None or before[1] != sha256:
            return False
        if before[0] != self.digest(relative, doc):
            return False
        self.now[relative] = before
        return True

    def previous(self, relative: str, record: FileRecord | None) -> Previous | None:
        """The published file as the last build wrote it, if it still is.

        Trusted as the manifest describes it when its size and mtime are the
        recorded ones, as a no-op build trusts it.
        """
        before = self.before.get(relative)
        if (
            record is None
            or before is None
            or before[1] != record.sha256
            or not outputs_intact(self.out, {relative: record})
        ):
            return None
        try:
            data = (self.out / relative).read_bytes()
        except OSError:
            return None
        _, _, keys, packed, head, separator = before
        lengths = array("q")
        lengths.frombytes(packed)
        if len(data) != record.size or len(lengths) != len(keys):
            return None
        # Part i starts after the head, the parts before it and their separators.
        ends = itertools.accumulate((n + separator for n in lengths), initial=head)
        starts = list(ends)[:-1]
        # The formats of a feed share their keys' tuple, in the cache file as here.
        where = self._where.get(id(keys))
        if where is None or where[0] is not keys:
            index = {key: position for position, key in enumerate(keys)}
            where = self._where[id(keys)] = (keys, index)
        return Previous(memoryview(data), where[1], starts, lengths)

    def rendered(
        self, relative: str, doc: FeedDocument, sha256: str, frame: Frame, lengths: array[int]
    ) -> None:
        self.now[relative] = (
            self.digest(relative, doc),
            sha256,
            self.keys(doc),
            lengths.tobytes(),
            len(frame.head),
            len(frame.separator),
        )


# digest, sha256, item keys, lengths of their parts, length of the head, of a separator
Shown = tuple[str, str, tuple[str, ...], bytes, int, int]


def _valid(shown: Any) -> bool:
    return (
        isinstance(shown, tuple)
        and len(shown) == 6
        and isinstance(shown[0], str)
        and isinstance(shown[1], str)
        and isinstance(shown[2], tuple)
        and isinstance(shown[3], bytes)
        and len(shown[3]) == 8 * len(shown[2])
        and isinstance(shown[4], int)
        and isinstance(shown[5], int)
    )


def load_items(
    entries: Path,
    cache: Cache,
    contents: dict[str, bytes] | None = None,
    hashes: Mapping[str, str] | None = None,
) -> Loaded:
    """The site and every item, as ``build_items(load(entries))`` gives them.

    ``contents`` holds the bytes of entry files already read, by relative
    path (it is emptied as they are used); ``hashes`` the sha256 of files
    known, which need not be read if the cache has what they gave.
    """
    try:
        return _load_items(entries, cache, contents or {}, hashes or {})
    except (DataError, OSError) as exc:
        load(entries)  # the whole folder again: every problem of every file, as without a cache
        raise InfraFeedError(
            f"{entries}: the entries changed while they were read; build again"
        ) from exc


def _load_items(
    entries: Path, cache: Cache, contents: dict[str, bytes], hashes: Mapping[str, str]
) -> Loaded:
    site_path = entries / SITE_FILE
    site_raw = contents.pop(SITE_FILE, None)
    if site_raw is None:
        site_raw = site_path.read_bytes()
    site = load_site((entries / SITE_FILE).as_posix(), site_raw)
    namespace = _namespace(site, site_raw)
    releases = cache.releases(namespace)
    zone = zoneinfo.ZoneInfo(site.timezone)
    modules = {m.number: m for m in site.modules}

    loaded = Loaded(site, (), {}, namespace, releases)
    order = []
    shown = (entries / "-").as_posix()[:-1]  # as loader.load shows paths: "entries/"
    for relative, path in release_files(entries):
        raw = contents.pop(relative, None)
        known = hashes.get(relative) if raw is None else None
        if raw is None and known is None:
            raw = path.read_bytes()
        key = (known or hashlib.sha256(raw or b"").hexdigest())[:24]
        name = shown + relative
        record = releases.get(relative, key)
        items = None
        if record is not None:
            try:
                _, date, sequence, packed = record
                items = _unpack(packed, name, zone, modules)
            except (TypeError, ValueError, KeyError):
                items = None  # not a record this version wrote: a miss
        if items is None:
            if raw is None:
                raw = path.read_bytes()
                key = hashlib.sha256(raw).hexdigest()[:24]
            rf = load_release(site, path, name, raw)
            date, sequence = rf.release.date.isoformat(), rf.sequence
            items = tuple(release_items(site, rf))
            loaded.fresh.add(relative)
        for index, item in enumerate(items):
            loaded.keys[item.id] = f"{key}:{index}"
        loaded.files[relative] = (key, date, sequence, items)
        order.append((date, sequence, items))

    order.sort(key=lambda release: (release[0], release[1]), reverse=True)
    loaded.items = tuple(item for _, _, items in order for item in items)
    if len({item.id for item in loaded.items}) != len(loaded.items):
        raise DataError([])  # an id used by two files: load() names them
    return loaded


def _namespace(site: Site, site_raw: bytes) -> str:
    """Everything besides a release file's bytes that decides what it gives."""
    import feedgen.version
    import lxml.etree
    import pydantic
    import pydantic_core

    try:
        import tomli

        toml = tomli.__version__
    except ImportError:
        toml = "tomllib"
    versions = (
        f"cache {FORMAT}; infrafeed {__version__}; python {sys.version}; tomli {toml}; "
        f"pydantic {pydantic.VERSION}; pydantic-core {pydantic_core.__version__}; "
        f"feedgen {feedgen.version.version_str}; lxml {lxml.etree.LXML_VERSION}\n"
    )
    digest = hashlib.sha256(versions.encode())
    digest.update(site_raw)
    digest.update(_zone_rules(site.timezone))
    return digest.hexdigest()[:32]


def _zone_rules(name: str) -> bytes:
    """The time zone file ZoneInfo reads for ``name``: releases are dated by its rules."""
    for root in zoneinfo.TZPATH:
        path = Path(root) / name
        if path.is_file():
            return path.read_bytes()
    try:
        import tzdata

        return f"tzdata {tzdata.IANA_VERSION}".encode()
    except ImportError:
        return b"unknown"


def _pack(items: tuple[Item, ...]) -> tuple[tuple[Any, ...], ...]:
    return tuple(
        (
            item.id,
            item.kind,
            None if item.module is None else item.module.number,
            item.title,
            item.link,
            item.published.replace(tzinfo=None).isoformat(),
            item.published.fold,
            item.content_html,
            item.summary,
            item.categories,
            item.source.rpartition(" ")[2],
        )
        for item in items
    )


def _unpack(
    packed: tuple[tuple[Any, ...], ...], name: str, zone: dt.tzinfo, modules: dict[int, Any]
) -> tuple[Item, ...]:
    return tuple(
        Item(
            id=item_id,
            kind=kind,
            module=None if module is None else modules[module],
            title=title,
            link=link,
            published=dt.datetime.fromisoformat(local).replace(tzinfo=zone, fold=fold),
            content_html=content_html,
            summary=summary,
            categories=tuple(categories),
            source=f"{name} {where}",
        )
        for (
            item_id,
            kind,
            module,
            title,
            link,
            local,
            fold,
            content_html,
            summary,
            categories,
            where,
        ) in packed
    )
