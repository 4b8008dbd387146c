"""Which feeds exist (the settings say) and what each holds; each is written in every format."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from ..source.models import Site
from ..source.urls import absolute, encoded
from .items import Item, id_prefix


class Format(NamedTuple):
    name: str  # "rss", "atom", "json"
    filename: str
    media_type: str
    label: str  # what the pages call it


FORMATS: tuple[Format, ...] = (
    Format("rss", "feed.xml", "application/rss+xml", "RSS 2.0"),
    Format("atom", "atom.xml", "application/atom+xml", "Atom 1.0"),
    Format("json", "feed.json", "application/feed+json", "JSON Feed 1.1"),
)


class FeedSpec(NamedTuple):
    key: str  # stable name: "all", "module-cuda"
    title: str
    description: str
    folder: str  # below the output folder: "" or "modules/cuda"
    home_url: str  # the page of the site the feed is about
    module: int | None  # None: every item
    id: str  # Atom feed id: a tag URI that survives the site moving


def document_path(folder: str, fmt: Format) -> str:
    return f"{folder}/{fmt.filename}" if folder else fmt.filename


def document_url(site: Site, fmt: Format, folder: str) -> str:
    return absolute(site.feeds.url, document_path(folder, fmt))


def feed_specs(site: Site) -> tuple[FeedSpec, ...]:
    tag = f"{id_prefix(site)}feed"
    everything = FeedSpec(
        key="all",
        title=site.title,
        description=site.description,
        folder="",
        home_url=encoded(site.changelog),
        module=None,
        id=f"{tag}/all",
    )
    by_module = tuple(
        FeedSpec(
            key=f"module-{module.slug}",
            title=f"{site.title} · {site.module_label(module)}",
            description=f"{site.description} ({site.module_label(module)})",
            folder=f"modules/{module.slug}",
            home_url=absolute(site.url, module.section),
            module=module.number,
            id=f"{tag}/module/{module.slug}",
        )
        for module in (site.modules if site.feeds.modules else ())
    )
    return (everything, *by_module) if site.feeds.all else by_module


def select_all(items: Sequence[Item], spec: FeedSpec) -> tuple[Item, ...]:
    if spec.module is None:
        return tuple(items)
    return tuple(i for i in items if i.module is not None and i.module.number == spec.module)
