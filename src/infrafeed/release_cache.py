"""What each release file gave the last build, so that a rebuild pays for what changed.

A release file's items, their rendered parts (render.py), its changelog-page
section and the keys of the uniqueness check depend on nothing but the file's
bytes and a *namespace*: site.toml, the time zone's rules, and the code that
parses, validates and renders (infrafeed's own files, Python, and the
libraries it uses). So a build keeps them per file, under the namespace's
digest, and the next build takes a file's record when the file's sha256 is
the same, instead of parsing, validating and rendering it again.

The records live in the build cache folder (cache.py), one pack per
namespace, written after each build with the files of that build only.
Nothing in it is needed: a missing, stale or damaged pack only makes a build
slower. The pack is ``marshal`` data of str, bytes, int, tuples, lists and
None: reading it never runs code, and anything not of the expected shape is a
miss, never an error.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib.metadata
import marshal
import sys
import tomllib
import zoneinfo
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from importlib import resources
from itertools import chain
from pathlib import Path
from typing import Any

from .cache import Cache
from .items import TEXT_FIELDS, Item, ItemMaker
from .loader import SITE_FILE, Changelog, IdKey, ReleaseFile, release_keys
from .models import Site
from .render import ItemParts, item_parts

FORMAT = 4  # of the records below; a new format is a new namespace
_MAGIC = b"infrafeed-releases 1\n"
# Whose versions decide what a release file gives: a new release of any of them is a new namespace.
_LIBRARIES = ("pydantic", "pydantic-core", "feedgen", "lxml", "tomli", "python-dateutil")


def namespace_of(entries: Path, version: str) -> str:
    """The namespace of the release files below ``entries``, read before they are loaded."""
    try:
        settings = (entries / SITE_FILE).read_bytes()
    except OSError:
        settings = b""  # the loader reports it; nothing will be kept
    try:
        timezone = tomllib.loads(settings.decode("utf-8")).get("timezone")
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        timezone = None
    return namespace(settings, timezone if isinstance(timezone, str) else "", version)


def namespace(site_toml: bytes, timezone: str, version: str) -> str:
    """The digest of everything besides a release file's bytes that decides what it gives."""
    digest = hashlib.sha256(_MAGIC)
    digest.update(f"format {FORMAT}\ninfrafeed {version}\npython {sys.version}\n".encode())
    for name in _LIBRARIES:
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            version = "-"
        digest.update(f"{name} {version}\n".encode())
    digest.update(_code_digest())
    digest.update(_zone_rules(timezone))
    digest.update(b"site.toml\n" + site_toml)
    return digest.hexdigest()


def _code_digest() -> bytes:
    """infrafeed's own source files: a change of code, released or not, is a new namespace."""
    digest = hashlib.sha256()
    package = Path(__file__).parent
    for path in sorted(package.rglob("*")):
        if path.is_file() and path.suffix in {".py", ".html", ".css", ".xsl", ".md"}:
            digest.update(path.relative_to(package).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.digest()


def _zone_rules(timezone: str) -> bytes:
    """The bytes of the zone's TZif file, where ``zoneinfo`` finds it: new rules, new dates."""
    for folder in zoneinfo.TZPATH:
        candidate = Path(folder, *timezone.split("/"))
        if candidate.is_file():
            return b"zone " + candidate.read_bytes()
    try:
        return b"tzdata " + resources.files("tzdata.zoneinfo").joinpath(timezone).read_bytes()
    except (ModuleNotFoundError, OSError):
        return b"zone unknown"


@dataclass(frozen=True)
class Record:
    """What one release file gave: its items (page order), their parts, its page section."""

    digest: str
    keys: tuple[IdKey, ...]
    items: tuple[Item, ...]
    parts: tuple[ItemParts, ...]
    section: bytes  # UTF-8: the page is written as bytes (changelog_page.assemble_page)


class ReleaseCache:
    """One build's view of the pack: records to reuse, and the records of this build.

    ``known`` answers the loader; ``items``, ``parts_of`` and ``section`` give a
    known file's records and compute a new file's; ``save`` writes this
    build's records to the pack.
    """

    def __init__(self, cache: Cache, space: str) -> None:
        self._cache = cache
        self._name = f"releases-{space[:32]}"
        self._header = _MAGIC + space.encode() + b"\n"
        data = cache.map(self._name)
        # The pack as read: each file's last record, decoded and as stored, and
        # where its good part ends (None: no pack of this namespace to add to).
        self._old: dict[str, tuple[Any, ...]] = {}
        self._stored: dict[str, memoryview] = {}
        self._end: int | None = None
        self._records_read = 0
        if data is not None and data[: len(self._header)] == self._header:
            self._end, self._records_read = _read_records(
                memoryview(data), len(self._header), self._old, self._stored
            )
        self.space = space
        self._new: dict[str, Record] = {}
        self._sources: dict[str, str] = {}  # item id -> its release file, "path\0sha256"
        self._fresh: set[str] = set()  # files whose record this build made
        self._parts: dict[str, ItemParts] = {}

    # -- for the loader

    def known(self, name: str, digest: str) -> Sequence[IdKey] | None:
        row = self._old.get(name)
        if row is None or row[0] != digest:
            return None
        return row[1]  # type: ignore[no-any-return]

    # -- for the build

    def items(self, changelog: Changelog) -> tuple[Item, ...]:
        """Every item, newest first: a known file's from its record, a new file's computed."""
        site = changelog.site
        zone = zoneinfo.ZoneInfo(site.timezone)
        maker = ItemMaker(site)
        text_of = _TextMaker(maker)
        found: list[Item] = []
        for rf in changelog.releases:
            record = self._record(site, rf, zone, maker, text_of)
            self._new[rf.path] = record
            found.extend(record.items)
            source = f"{rf.path}\0{rf.digest}"
            for item in record.items:
                self._sources[item.id] = source
        return tuple(found)

    def _record(
        self,
        site: Site,
        rf: ReleaseFile,
        zone: zoneinfo.ZoneInfo,
        maker: ItemMaker,
        text_of: _TextMaker,
    ) -> Record:
        row = self._old.get(rf.path) if rf.known else None
        if row is not None:
            record = _decode(row, site, rf, zone, text_of)
            if record is not None:
                for item, parts in zip(record.items, record.parts, strict=True):
                    self._parts[item.id] = parts
                return record
        self._fresh.add(rf.path)
        from .changelog_page import release_section

        items = tuple(maker.items(rf))
        section = release_section(site, rf).encode()
        return Record(rf.digest, tuple(release_keys(rf)), items, (), section)

    def known_parts(self, item: Item) -> ItemParts | None:
        """The item's parts if its file's record holds them (they are in memory already)."""
        return self._parts.get(item.id)

    def parts_of(self, item: Item) -> ItemParts:
        """The item's parts: a known file's from its record, a new file's rendered.

        A new item's parts are not kept here: :meth:`save` asks for them again
        (render.PartsStore keeps them out of memory until then).
        """
        parts = self._parts.get(item.id)
        return parts if parts is not None else item_parts(item)

    def source_of(self, item: Item) -> str:
        """The release file ``item`` came from, as "path\0sha256": with the namespace, its bytes."""
        return self._sources[item.id]

    def section(self, rf: ReleaseFile) -> bytes:
        return self._new[rf.path].section

    def save(self, parts_of: Callable[[Item], ItemParts]) -> None:
        """Keep this build's records for the next build.

        New records are added at the end of the pack, where they override a
        file's older record: one new release costs one record. The pack is
        written anew, with this build's files only, when it has none of this
        namespace or when records no build asks for would outweigh the rest;
        then it replaces the old one in one step (cache.py).
        """
        # Records are encoded as they are written, one at a time: at 100,000
        # items, all of them at once would weigh as much as the feeds.
        fresh = sorted(self._fresh)
        if self._end is not None:
            # Counted in records: each file's live one, and every one in the pack.
            stored = self._records_read + len(fresh)
            # Nothing new: nothing to add. Otherwise add, unless the pack changed meanwhile.
            if stored <= 2 * len(self._new) and (
                not fresh
                or self._cache.append(self._name, self._end, self._encoded(fresh, parts_of))
            ):
                return
        records = (
            self._encoded((name,), parts_of) if name in self._fresh else (self._stored[name],)
            for name in sorted(self._new)
            if name in self._fresh or name in self._stored
        )
        self._cache.write(self._name, chain((self._header,), chain.from_iterable(records)))

    def _encoded(
        self, names: Iterable[str], parts_of: Callable[[Item], ItemParts]
    ) -> Iterator[bytes]:
        for name in names:
            data = marshal.dumps(_encode(name, self._new[name], parts_of), 4)
            yield len(data).to_bytes(8, "big") + data


def _read_records(
    data: memoryview, start: int, rows: dict[str, tuple[Any, ...]], stored: dict[str, memoryview]
) -> tuple[int, int]:
    """Read the pack's records from ``start``; return where its good part ends, and their count."""
    end = start
    count = 0
    while len(data) - end >= 8:
        size = int.from_bytes(data[end : end + 8], "big")
        stop = end + 8 + size
        if stop > len(data):
            break
        try:
            # Our own file; marshal builds values, never runs code, and _decode checks types.
            row = marshal.loads(data[end + 8 : stop])  # noqa: S302
        except (EOFError, ValueError, TypeError):
            break  # damaged from here on (a write cut short): what was read is still whole
        if _well_formed(row):
            rows[row[0]] = row[1:]
            stored[row[0]] = data[end:stop]
        end = stop
        count += 1
    return end, count


def _well_formed(row: object) -> bool:
    # A shape check only; _decode checks each field's type as it rebuilds.
    return (
        isinstance(row, tuple)
        and len(row) == 6
        and isinstance(row[0], str)
        and isinstance(row[1], str)
        and isinstance(row[2], tuple)
        and all(isinstance(k, tuple) and len(k) == 4 for k in row[2])
        and all(isinstance(v, str) for k in row[2] for v in k)
        and isinstance(row[3], tuple)
        and isinstance(row[4], tuple)
        and isinstance(row[5], bytes)
    )


def _encode(name: str, record: Record, parts_of: Callable[[Item], ItemParts]) -> tuple[Any, ...]:
    """A record as marshal data.

    An item's text (items.TEXT_FIELDS) is not kept: its parts are, and only
    renderers read the text. It is made again from the file if anything asks.
    """
    rows = []
    rendered = []
    for item in record.items:
        rendered.append(tuple(parts_of(item)))
        rows.append(
            (
                item.id,
                item.kind,
                item.module.number if item.module is not None else None,
                item.published.replace(tzinfo=None).isoformat(),
                item.source,
            )
        )
    return (name, record.digest, record.keys, tuple(rows), tuple(rendered), record.section)


def _decode(
    row: tuple[Any, ...], site: Site, rf: ReleaseFile, zone: zoneinfo.ZoneInfo, text_of: _TextMaker
) -> Record | None:
    """The record of a known file, or None when the row does not have the expected types."""
    digest, keys, rows, rendered, section = row
    modules = {module.number: module for module in site.modules}
    kinds = site.kinds
    width = len(ItemParts._fields)
    deferred = Item.deferred
    # One test per item rather than one per field: this runs for every item of a build.
    try:
        items = []
        for index, (ident, kind, number, wall, source) in enumerate(rows):
            module = modules.get(number) if number is not None else None
            if not (
                type(ident) is str
                and kind in kinds
                and (number is None or module is not None)
                and type(wall) is str
                and type(source) is str
            ):
                return None
            published = dt.datetime.fromisoformat(wall).replace(tzinfo=zone)
            text = partial(text_of, rf, index, ident)
            items.append(deferred(ident, kind, module, published, rf.date, source, text))
        if len(rendered) != len(items) or not all(
            type(p) is tuple and len(p) == width and all(type(b) is bytes for b in p)
            for p in rendered
        ):
            return None
        parts = tuple(map(ItemParts._make, rendered))
    except (TypeError, ValueError):
        return None
    return Record(digest, tuple(keys), tuple(items), parts, section)


class _TextMaker:
    """The text of a known file's items, made again from the file when first asked for.

    Nothing in a build asks (the parts are kept); a caller that does gets the
    text a cold build would make, never text the cache holds.
    """

    def __init__(self, maker: ItemMaker) -> None:
        self._maker = maker
        self._made: dict[str, tuple[Item, ...]] = {}

    def __call__(self, rf: ReleaseFile, index: int, ident: str) -> tuple[Any, ...]:
        made = self._made.get(rf.path)
        if made is None:
            made = self._made[rf.path] = tuple(self._maker.items(rf))
        if index >= len(made) or made[index].id != ident:
            # The file's bytes are checked as it is read again (loader._reloader).
            raise RuntimeError(f"{rf.path}: item {ident} is not where the build cache had it")
        item = made[index]
        return tuple(getattr(item, name) for name in TEXT_FIELDS)
