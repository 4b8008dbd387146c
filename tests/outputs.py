"""Reading what a build left in an output folder, the way a server and a reader see it.

Shared by the publishing, determinism and hostile-input tests: the whole
tree as bytes, every feed parsed, and the HTML inside the feeds checked for
anything a reader would run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import feedparser
from lxml import etree

import infrafeed
from feedcheck import check_tree
from infrafeed.feeds.items import Item
from infrafeed.feeds.specs import feed_specs
from infrafeed.publish.lock import JOURNAL, NEXT
from infrafeed.publish.manifest import read_manifest
from infrafeed.render.documents import item_parts, plan_all, render_all
from infrafeed.source.models import Site
from w3c import w3c_tree

FEED_NAMES = ("feed.xml", "atom.xml", "feed.json")
ATOM = "{http://www.w3.org/2005/Atom}"
CONTENT_ENCODED = "{http://purl.org/rss/1.0/modules/content/}encoded"
SRC = Path(infrafeed.__file__).resolve().parents[1]  # the infrafeed these tests import


def rendered_files(
    site: Site, items: Sequence[Item], version: str
) -> Iterator[tuple[str, Iterable[bytes]]]:
    """Every output file but the changelog page, rendered as a build renders them."""
    parts = dict(zip([item.id for item in items], item_parts(site, items), strict=True))
    planned = plan_all(site, feed_specs(site), items, version, parts)
    return render_all(site, items, parts, planned, None)


def tree(out: Path) -> dict[str, bytes]:
    """Every file below ``out``, infrafeed's manifest and ids included."""
    return {
        path.relative_to(out).as_posix(): path.read_bytes()
        for path in sorted(out.rglob("*"))
        if path.is_file()
    }


def mtimes(out: Path) -> dict[str, int]:
    return {
        path.relative_to(out).as_posix(): path.stat().st_mtime_ns
        for path in sorted(out.rglob("*"))
        if path.is_file()
    }


def age(out: Path, seconds: int = 1_000_000_000) -> dict[str, int]:
    """Give every output file an old modification time, so that any rewrite shows."""
    for path in out.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(seconds * 10**9, seconds * 10**9))
    return mtimes(out)


def leftovers(out: Path) -> list[str]:
    """Trees, journals and temporary files of builds: none must be left after a build ends."""
    beside = out.parent / f".{out.name}{NEXT}"
    found = [str(beside)] if beside.exists() else []
    return found + sorted(
        path.relative_to(out).as_posix()
        for path in out.rglob("*")
        if path.name in (NEXT, JOURNAL) or path.name.endswith((".tmp", ".new"))
    )


def feed_files(out: Path) -> list[Path]:
    return sorted(p for p in out.rglob("*") if p.is_file() and p.name in FEED_NAMES)


def differing(a: Mapping[str, bytes], b: Mapping[str, bytes]) -> list[str]:
    """Names of files that are not the same in both trees, for readable failures."""
    return sorted(name for name in set(a) | set(b) if a.get(name) != b.get(name))


def parse(path: Path) -> Any:
    """Parse one feed file strictly: an lxml element for XML, a dict for JSON."""
    return parse_bytes(path.name, path.read_bytes())


def parse_bytes(name: str, data: bytes) -> Any:
    if name.endswith(".json"):
        return json.loads(data.decode("utf-8"))
    return etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True))


def assert_feeds_valid(out: Path) -> None:
    """Every feed parses strictly, and feedparser (what many readers use) finds no fault."""
    files = feed_files(out)
    assert files, f"no feed in {out}"
    for path in files:
        parse(path)
        if path.suffix == ".xml":
            parsed = feedparser.parse(path.read_bytes())
            assert parsed.bozo == 0, f"{path}: {parsed.get('bozo_exception')}"
        assert path.relative_to(out).as_posix() in read_manifest(out).files
    # And the W3C rules of the feeds issue hold for whatever was published; the
    # URL the folder is served at is the all-items JSON feed's own.
    base = json.loads((out / "feed.json").read_bytes())["feed_url"].removesuffix("feed.json")
    problems = {name: found for name, found in check_tree(out, base).items() if found}
    assert problems == {}
    assert w3c_tree(out, base) == {}  # and the service's own code finds nothing


def item_titles(path: Path) -> list[str]:
    return titles_of(parse(path))


def titles_of(doc: Any) -> list[str]:
    if isinstance(doc, dict):
        return [item["title"] for item in doc["items"]]
    if doc.tag == "rss":
        return [t.text or "" for t in doc.iterfind("channel/item/title")]
    return [t.text or "" for t in doc.iterfind(f"{ATOM}entry/{ATOM}title")]


def html_fragments(path: Path) -> Iterator[tuple[str, str]]:
    """Every piece of a feed that a reader renders as HTML, with where it is."""
    return fragments_of(parse(path), str(path))


def fragments_of(doc: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(doc, dict):
        for n, item in enumerate(doc["items"]):
            yield f"{path} items[{n}].content_html", item["content_html"]
        return
    if doc.tag == "rss":
        for n, item in enumerate(doc.iterfind("channel/item")):
            for element in (item.find("description"), item.find(CONTENT_ENCODED)):
                if element is not None:
                    yield f"{path} item[{n}] {element.tag}", element.text or ""
        return
    for n, entry in enumerate(doc.iterfind(f"{ATOM}entry")):
        for element in entry:
            if element.get("type") in ("html", "xhtml"):
                yield f"{path} entry[{n}] {element.tag}", element.text or ""


# What a reader would run or load if it came through: elements, and attributes
# whose values are URLs.
_ACTIVE_ELEMENTS = {
    "script", "style", "iframe", "frame", "object", "embed", "applet", "form", "input",
    "button", "link", "meta", "base", "img", "svg", "math", "video", "audio", "source",
}  # fmt: skip
_ALLOWED_ELEMENTS = {
    "p", "a", "code", "em", "strong", "blockquote", "ul", "li",
    "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))


def unsafe_markup(fragment: str) -> list[str]:
    """What in ``fragment`` a reader could execute or that infrafeed never writes."""
    parser = _Elements()
    parser.feed(fragment)
    parser.close()
    problems = []
    for tag, attrs in parser.found:
        if tag in _ACTIVE_ELEMENTS or tag not in _ALLOWED_ELEMENTS:
            problems.append(f"<{tag}> element")
        for name, value in attrs:
            if tag != "a" or name != "href":
                problems.append(f"<{tag} {name}=...> attribute")
            elif not (value or "").startswith(("https://", "http://")):
                problems.append(f"<a href={value!r}>")
    return problems


def assert_no_active_markup(out: Path) -> None:
    for path in feed_files(out):
        for where, fragment in html_fragments(path):
            assert unsafe_markup(fragment) == [], f"{where}: {fragment[:300]!r}"


def subprocess_env(**changes: str) -> dict[str, str]:
    """The environment of a child ``infrafeed``: this checkout's code, nothing inherited
    that the tests vary (time zone, locale, hash seed)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("TZ", "LANG", "LANGUAGE", "PYTHONHASHSEED", "LOCPATH")
        and not k.startswith("LC_")
    }
    env["PYTHONPATH"] = str(SRC)
    env.update(changes)
    return env


def run_infrafeed(
    *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``python -m infrafeed ARGS`` in a child process, as cron would run it."""
    return subprocess.run(
        [sys.executable, "-m", "infrafeed", *args],
        env=dict(env) if env is not None else subprocess_env(),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
