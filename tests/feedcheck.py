"""Offline checks of the W3C Feed Validation Service's rules that feeds most often break.

The service itself cannot run here (no network, and its code is not ours to
ship), so these functions re-state its rules for the constructs infrafeed
emits; each returns a list of problems named like the service's messages.
An empty list means: no error and no warning under these rules.
"""

from __future__ import annotations

import json
import re
from html.entities import name2codepoint
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit
from xml.etree import ElementTree as ET

import jsonschema

ATOM = "{http://www.w3.org/2005/Atom}"
CONTENT = "{http://purl.org/rss/1.0/modules/content/}"
FH = "{http://purl.org/syndication/history/1.0}"
DC = "{http://purl.org/dc/elements/1.1/}"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
SCHEMA = json.loads(
    (Path(__file__).parent / "data" / "jsonfeed-1.1.schema.json").read_text(encoding="utf-8")
)

# The service's RFC 822 pattern, English day and month names only.
RFC822 = re.compile(
    r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
    r"\d{4} \d\d:\d\d:\d\d [+-]\d{4}$"
)
RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)$")
# rfc2396_full: an absolute URI in plain ASCII (spaces and non-ASCII must be encoded).
FULL_URI = re.compile(r"^[a-zA-Z][0-9a-zA-Z+\-.]*:(//)?[0-9a-zA-Z;/?:@&=+$.\-_!~*'()%,#]+$")
TAG_URI = re.compile(
    r"^tag:([a-z0-9\-._]+?@)?[a-z0-9.\-]+?,\d{4}(-\d{2}(-\d{2})?)?:[0-9a-zA-Z;/?:@&=+$.\-_!~*'()%,#]+$"
)
HTML_END_TAG = re.compile(r"</\w+>")
UNSAFE_TAG = re.compile(r"<(script|meta|embed|object|iframe)[>\s]", re.I)
LANGUAGE = re.compile(r"^[a-z]{2,3}(-[a-zA-Z0-9]{1,8})*$")
# The service's RSS Profile rules for plain text, on the lines of the raw document: a text
# that shows an entity reference, or (RSS) "&#" or "<" before a letter or "/", is a warning
# unless its lines use hexadecimal character references, as the Profile asks.
PLAIN_TEXT = re.compile(r"^ *<(title|subtitle|category|name)>(.*)</\1>$", re.M)
ENTITY = re.compile(r"&(#?\w+)")
CHARACTER_DATA = re.compile(r"&#[x0-9]|<[/a-zA-Z]")


class _HtmlScan(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "meta", "embed", "object", "iframe", "style"):
            self.problems.append(f"ContainsScript/Unsafe <{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"ContainsScript attribute {name}")
            if name in ("href", "src"):
                if not value or not FULL_URI.match(value):
                    self.problems.append(f"ContainsRelRef or invalid URI in {name}={value!r}")
                elif value.lower().startswith(("javascript:", "data:", "vbscript:")):
                    self.problems.append(f"ContainsScript URL {value!r}")


def check_html(html: str, where: str) -> list[str]:
    scan = _HtmlScan()
    scan.feed(html)
    scan.close()
    return [f"{where}: {p}" for p in scan.problems]


def _uri(value: str | None, where: str, *, allow_tag: bool = False) -> list[str]:
    if value is None:
        return [f"{where}: MissingElement"]
    if allow_tag and value.startswith("tag:"):
        return [] if TAG_URI.match(value) else [f"{where}: InvalidTAG {value!r}"]
    if not FULL_URI.match(value) or not value.startswith(("http://", "https://")):
        return [f"{where}: InvalidFullLink {value!r}"]
    if not urlsplit(value).hostname:
        return [f"{where}: InvalidFullLink (no host) {value!r}"]
    return []


def _title(text: str | None, where: str) -> list[str]:
    if not text:
        return [f"{where}: MissingElement title"]
    found = []
    if HTML_END_TAG.search(text):
        found.append(f"{where}: ContainsHTML {text!r}")
    if UNSAFE_TAG.search(text):
        found.append(f"{where}: ContainsScript {text!r}")
    return found


def _plain_text(data: bytes, *, rss: bool) -> list[str]:
    found = []
    for match in PLAIN_TEXT.finditer(data.decode("utf-8")):
        value = ET.fromstring(f"<x>{match.group(2)}</x>").text or ""
        if "&#x" in match.group(2) or HTML_END_TAG.search(value):  # that one: ContainsHTML
            continue
        names = ENTITY.findall(value)
        if any(n in name2codepoint or n == "apos" or not n.isalpha() for n in names):
            found.append(f"{match.group(1)}: ContainsHTML (an entity reference) {value!r}")
        elif rss and CHARACTER_DATA.search(value):
            found.append(f"{match.group(1)}: CharacterData {value!r}")
    return found


def check_rss(data: bytes, served_at: str) -> list[str]:
    """RSS 2.0 with the RSS Advisory Board's best practices."""
    problems: list[str] = _plain_text(data, rss=True)
    root = ET.fromstring(data)
    if root.tag != "rss" or root.get("version") != "2.0":
        return ["not an RSS 2.0 document"]
    channel = root.find("channel")
    assert channel is not None
    for name in ("title", "link", "description"):
        if not (channel.findtext(name) or "").strip():
            problems.append(f"channel: MissingElement {name}")
    problems += _uri(channel.findtext("link"), "channel/link")
    selfs = [a for a in channel.findall(f"{ATOM}link") if a.get("rel") == "self"]
    if not selfs:
        problems.append("channel: MissingAtomSelfLink")
    for link in selfs:
        if link.get("href") != served_at:
            problems.append(f"channel: SelfDoesntMatchLocation {link.get('href')} != {served_at}")
        if link.get("type") != "application/rss+xml":
            problems.append("channel: self link type should be application/rss+xml")
    image = channel.find("image")
    if image is not None:
        url = image.findtext("url") or ""
        problems += _uri(url, "channel/image/url")
        if url.rsplit(".", 1)[-1].lower() not in ("jpg", "jpeg", "gif", "png"):
            problems.append(f"channel/image: ImageUrlFormat {url!r}")
        if image.findtext("title") != channel.findtext("title"):
            problems.append("channel/image: ImageTitleDoesntMatch")
        if image.findtext("link") != channel.findtext("link"):
            problems.append("channel/image: ImageLinkDoesntMatch")
        for name, limit in (("width", 144), ("height", 400)):
            value = image.findtext(name)
            if value is not None and not (value.isdigit() and 0 < int(value) <= limit):
                problems.append(f"channel/image: Invalid{name.title()} {value!r}")
    language = channel.findtext("language")
    if not language or not LANGUAGE.match(language):
        problems.append(f"channel: InvalidLanguage {language!r}")
    for name in ("lastBuildDate", "pubDate"):
        value = channel.findtext(name)
        if value is not None and not RFC822.match(value):
            problems.append(f"channel/{name}: InvalidRFC2822Date {value!r}")
    guids: set[str] = set()
    for index, item in enumerate(channel.findall("item"), start=1):
        where = f"item[{index}]"
        problems += _title(item.findtext("title"), f"{where}/title")
        problems += _uri(item.findtext("link"), f"{where}/link")
        guid = item.find("guid")
        if guid is None or not guid.text:
            problems.append(f"{where}: MissingGuid")
        else:
            permalink = guid.get("isPermaLink", "true")
            if permalink not in ("true", "false"):
                problems.append(f"{where}/guid: InvalidBooleanAttribute")
            if permalink == "true" and not (
                FULL_URI.match(guid.text) and guid.text.startswith(("http://", "https://"))
            ):
                problems.append(f"{where}/guid: InvalidHttpGUID {guid.text!r}")
            if guid.text in guids:
                problems.append(f"{where}/guid: DuplicateValue {guid.text!r}")
            guids.add(guid.text)
        pub = item.findtext("pubDate")
        if pub is None or not RFC822.match(pub):
            problems.append(f"{where}/pubDate: InvalidRFC2822Date {pub!r}")
        if item.find("author") is not None and "@" not in (item.findtext("author") or ""):
            problems.append(f"{where}/author: InvalidContact")
        if item.find("author") is not None and item.find(f"{DC}creator") is not None:
            problems.append(f"{where}: DuplicateItemSemantics author dc:creator")
        for body in (item.findtext("description"), item.findtext(f"{CONTENT}encoded")):
            if body:
                problems += check_html(body, f"{where}/description")
    return problems


def check_atom(data: bytes, served_at: str) -> list[str]:
    """RFC 4287 Atom, with the service's warnings."""
    problems: list[str] = _plain_text(data, rss=False)
    root = ET.fromstring(data)
    if root.tag != f"{ATOM}feed":
        return ["not an Atom feed"]
    problems += _uri(root.findtext(f"{ATOM}id"), "feed/id", allow_tag=True)
    problems += _title(root.findtext(f"{ATOM}title"), "feed/title")
    updated = root.findtext(f"{ATOM}updated")
    if updated is None or not RFC3339.match(updated):
        problems.append(f"feed/updated: InvalidRFC3339Date {updated!r}")
    lang = root.get(XML_LANG)
    if not lang or not LANGUAGE.match(lang):
        problems.append(f"feed: InvalidLanguage xml:lang={lang!r}")
    for name in ("icon", "logo"):
        if root.find(f"{ATOM}{name}") is not None:
            problems += _uri(root.findtext(f"{ATOM}{name}"), f"feed/{name}")
    feed_author = root.find(f"{ATOM}author")
    if feed_author is not None and not feed_author.findtext(f"{ATOM}name"):
        problems.append("feed/author: MissingElement name")
    links = root.findall(f"{ATOM}link")
    selfs = [link for link in links if link.get("rel") == "self"]
    if not selfs:
        problems.append("feed: MissingSelf")
    for link in selfs:
        if link.get("href") != served_at:
            problems.append(f"feed: SelfDoesntMatchLocation {link.get('href')} != {served_at}")
    for link in links:
        problems += _uri(link.get("href"), f"feed/link[@rel={link.get('rel')}]")
    rels = {link.get("rel") for link in links}
    if root.find(f"{FH}archive") is not None:
        if not rels & {"prev-archive", "next-archive"}:
            problems.append("feed: ArchiveIncomplete (an archive with no archive link)")
        if "current" not in rels:
            problems.append("feed: MissingCurrentInArchive")
    if root.find(f"{FH}complete") is not None and rels & {"prev-archive", "next-archive"}:
        problems.append("feed: FeedRelInCompleteFeed")
    if not any(link.get("rel", "alternate") == "alternate" for link in links):
        problems.append("feed: MissingAlternateLink (recommended)")
    ids: set[str] = set()
    for index, entry in enumerate(root.findall(f"{ATOM}entry"), start=1):
        where = f"entry[{index}]"
        entry_id = entry.findtext(f"{ATOM}id")
        problems += _uri(entry_id, f"{where}/id", allow_tag=True)
        if entry_id in ids:
            problems.append(f"{where}/id: DuplicateEntries {entry_id!r}")
        ids.add(entry_id or "")
        title = entry.find(f"{ATOM}title")
        title_text = title.text if title is not None else None
        if title is not None and title.get("type", "text") == "text":
            problems += _title(title_text, f"{where}/title")
        for name in ("updated", "published"):
            value = entry.findtext(f"{ATOM}{name}")
            if value is not None and not RFC3339.match(value):
                problems.append(f"{where}/{name}: InvalidRFC3339Date {value!r}")
        if entry.findtext(f"{ATOM}updated") is None:
            problems.append(f"{where}: MissingElement updated")
        if feed_author is None and entry.find(f"{ATOM}author") is None:
            problems.append(f"{where}: MissingElement author")
        for link in entry.findall(f"{ATOM}link"):
            problems += _uri(link.get("href"), f"{where}/link")
        for name in ("content", "summary"):
            element = entry.find(f"{ATOM}{name}")
            if element is None:
                continue
            kind = element.get("type", "text")
            value = element.text or ""
            if kind == "html":
                problems += check_html(value, f"{where}/{name}")
            elif kind == "text" and HTML_END_TAG.search(value):
                problems.append(f"{where}/{name}: ContainsUndeclaredHTML")
        if entry.find(f"{ATOM}content") is None and not entry.findall(f"{ATOM}link"):
            problems.append(f"{where}: MissingContentOrAlternate")
    return problems


def check_json(data: bytes, served_at: str) -> list[str]:
    """JSON Feed 1.1, against the schema kept in tests/data."""
    feed = json.loads(data)
    validator = jsonschema.Draft202012Validator(
        SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    problems = [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(feed)
    ]
    if feed.get("feed_url") != served_at:
        problems.append(f"feed_url {feed.get('feed_url')} != {served_at}")
    ids = [item["id"] for item in feed.get("items", [])]
    if len(ids) != len(set(ids)):
        problems.append("duplicate item ids")
    for index, item in enumerate(feed.get("items", []), start=1):
        problems += check_html(item.get("content_html", ""), f"items[{index}]/content_html")
        problems += _uri(item.get("url"), f"items[{index}]/url")
    return problems


CHECKS = {"feed.xml": check_rss, "atom.xml": check_atom, "feed.json": check_json}


def check_tree(out: Path, base_url: str) -> dict[str, list[str]]:
    """Check every feed file below ``out``; ``base_url`` is where ``out`` is served."""
    found: dict[str, list[str]] = {}
    for path in sorted(out.rglob("*")):
        check = CHECKS.get(path.name)
        if check is None:
            continue
        relative = path.relative_to(out).as_posix()
        found[relative] = check(path.read_bytes(), base_url + relative)
    return found
