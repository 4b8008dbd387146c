"""Load the entries through the build cache: an unchanged release file is not read again.

A release file's items depend only on its bytes, its path and the namespace
(settings, time zone rules, versions: see cache.py), so they are kept per
file, with the parts each item was rendered to. A build parses and validates
only the files whose bytes changed, and renders only their items.

Whenever anything is wrong, the whole entries folder is loaded again with
:func:`infrafeed.loader.load`, which reports every problem of every file at
once, exactly as a build without a cache would.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import sys
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import __version__
from .cache import FORMAT, Cache, Releases
from .errors import DataError, InfraFeedError
from .items import Item, release_items
from .loader import SITE_FILE, load, load_release, load_site, release_files
from .models import Site
from .render import Parts


@dataclass
class Loaded:
    """The items of a build, newest first, and what the cache knows about them."""

    site: Site
    items: tuple[Item, ...]
    keys: dict[str, str]  # per item id: a name for the item that changes when it does
    known: list[tuple[Item, Mapping[str, bytes]]]  # parts rendered by earlier builds
    namespace: str
    releases: Releases
    files: dict[str, tuple[str, str, int, tuple[Item, ...]]] = field(default_factory=dict)

    def document_key(self, path: str, items: tuple[Item, ...]) -> str:
        """A digest of everything a document shows (besides the settings and versions)."""
        digest = hashlib.sha256(f"{self.namespace}\0{path}\0".encode())
        for item in items:
            digest.update(self.keys[item.id].encode())
        return digest.hexdigest()

    def save(self, parts: Parts, documents: Mapping[str, tuple[str, str]]) -> None:
        """Record each release file's items, with the parts rendered so far for them."""
        for relative, (key, date, sequence, items) in self.files.items():
            old = self.releases.get(relative, key)
            before = old[4] if old is not None else (None,) * len(items)
            now = tuple(
                _triple(parts.get(item)) or had for item, had in zip(items, before, strict=True)
            )
            if old is None or now != before:
                self.releases.put(relative, (key, date, sequence, _pack(items), now))
        self.releases.save(self.files, documents)


def load_items(entries: Path, cache: Cache) -> Loaded:
    """The site and every item, as ``build_items(load(entries))`` gives them."""
    try:
        return _load_items(entries, cache)
    except (DataError, OSError) as exc:
        load(entries)  # the whole folder again: every problem of every file, as without a cache
        raise InfraFeedError(
            f"{entries}: the entries changed while they were read; build again"
        ) from exc


def _load_items(entries: Path, cache: Cache) -> Loaded:
    site_path = entries / SITE_FILE
    site_raw = site_path.read_bytes()
    site = load_site((entries / SITE_FILE).as_posix(), site_raw)
    namespace = _namespace(site, site_raw)
    releases = cache.releases(namespace)
    zone = zoneinfo.ZoneInfo(site.timezone)
    modules = {m.number: m for m in site.modules}

    loaded = Loaded(site, (), {}, [], namespace, releases)
    order = []
    shown = (entries / "-").as_posix()[:-1]  # as loader.load shows paths: "entries/"
    for relative, path in release_files(entries):
        raw = path.read_bytes()
        key = hashlib.sha256(raw).hexdigest()
        name = shown + relative
        record = releases.get(relative, key)
        if record is not None:
            _, date, sequence, packed, parts = record
            items = _unpack(packed, name, zone, modules)
            for item, item_parts in zip(items, parts, strict=True):
                if item_parts is not None:
                    rss, atom, json = item_parts
                    loaded.known.append((item, {"rss": rss, "atom": atom, "json": json}))
        else:
            rf = load_release(site, path, name, raw)
            date, sequence = rf.release.date.isoformat(), rf.sequence
            items = tuple(release_items(site, rf))
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


def _triple(parts: Mapping[str, bytes] | None) -> tuple[bytes, bytes, bytes] | None:
    return None if parts is None else (parts["rss"], parts["atom"], parts["json"])


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
