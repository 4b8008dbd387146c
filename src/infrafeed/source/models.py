"""The entry schema: site settings and release files, as frozen pydantic models.

Every text passes through an ``Annotated`` type below: normalised to NFC, with what no feed
can carry refused (characters XML 1.0 forbids, empty or overlong text, unsafe links).
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from importlib import resources
from typing import Annotated, Literal, get_args
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import ftfy
from annotated_types import GroupedMetadata
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    StrictBool,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ..errors import reads
from . import inline
from .urls import check_reference

Kind = Literal["new", "revised", "restructured", "major", "improved", "launch", "init"]
KINDS: tuple[Kind, ...] = get_args(Kind)
COLONS = (":", "：")  # after the article label; the second is the full-width colon of CJK pages


# What emoji are made of besides symbols: variation selectors ("🛠️"), the zero-width joiner,
# the keycap, skin tones.
_EMOJI_PARTS = re.compile("[\ufe00-\ufe0f\u200d\u20e3\U0001f3fb-\U0001f3ff]")


def fold_heading(text: str) -> str:
    """A kind heading as a page to import is read: NFC, case folded, no emoji, single spaces,
    no colon at the end. Two kinds' headings must differ so."""
    text = _EMOJI_PARTS.sub("", unicodedata.normalize("NFC", text))
    text = "".join(c for c in text if unicodedata.category(c) != "So")
    return " ".join(text.split()).casefold().rstrip("".join(COLONS)).rstrip()


_MAX_LINE = 500  # titles, labels, ids: one line each
_MAX_TEXT = 5_000  # summaries, context lines, notes
_MAX_ITEMS_PER_RELEASE = 3_600  # items of a release are one second apart (feeds/items.py)
EARLIEST = dt.date(1990, 1, 1)  # a release's date
MAX_RELEASES_PER_DAY = 12  # the N-th is dated N-1 hours after noon: the 13th, the next day

# XML 1.0 (section 2.2) forbids these; feeds must not carry control characters,
# which readers do not show, nor the noncharacters XML 1.0 discourages.
_FORBIDDEN = "\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff"
_CONTROLS = "\x7f-\x9f"
_REPLACEMENT = "\ufffd"  # what a broken conversion left; the W3C validator warns of it
_NONCHARACTERS = "\ufdd0-\ufdef" + "".join(
    f"{chr(p + 0xFFFE)}{chr(p + 0xFFFF)}" for p in range(0x10000, 0x110000, 0x10000)
)
_XML_REFUSED = re.compile(f"[{_FORBIDDEN}{_CONTROLS}{_REPLACEMENT}{_NONCHARACTERS}]")
# The 32 single characters of the other planes make that class many times
# slower to search; text with nothing from U+1FFFE up (nearly all) is searched
# with the BMP part alone, which then finds the same.
_XML_REFUSED_IN_BMP = re.compile(f"[{_FORBIDDEN}{_CONTROLS}{_REPLACEMENT}\ufdd0-\ufdef]")
_FROM_U1FFFE = re.compile("[\U0001fffe-\U0010ffff]")
_LATIN1 = partial(str.encode, encoding="latin-1")  # raises UnicodeError, a ValueError
# ftfy, not code-page tables of our own, tells mojibake ("Kiáº¿n", "CafÃ©", "85Â°C") from text
# typed right ("gì…”", "Qualité »"), and suggests what was meant. Only its encoding repair: the
# suggestion must not also straighten quotes or change the text's normal form.
_MEANT = ftfy.TextFixerConfig(
    unescape_html=False, remove_terminal_escapes=False, fix_latin_ligatures=False,
    fix_character_width=False, uncurl_quotes=False, fix_line_breaks=False,
    remove_control_chars=False, normalization=None, explain=False,
)  # fmt: skip


_BREAKS = r"\r\n\t\x85\u2028\u2029"  # escapes, which JSON Schema's patterns read too (_Line)
_LINE_BREAK = re.compile(f"[{_BREAKS}]")
# White space and what shows nothing either (zero-width, joiners, bidi marks, soft hyphen,
# variation selectors, BOM, Hangul fillers): a text of only these looks empty everywhere.
_INVISIBLE = re.compile(
    "[\\s\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]*"
)


def _xml_chars(value: str) -> str:
    # Checked before normalising, so that the message names the character as typed.
    refused = _XML_REFUSED if _FROM_U1FFFE.search(value) else _XML_REFUSED_IN_BMP
    if bad := refused.search(value):
        found = bad.group()
        why = (
            "which XML 1.0 forbids in a feed"
            if re.match(f"[{_FORBIDDEN}]", found)
            else "a control character, which readers do not show"
            if re.match(f"[{_CONTROLS}]", found)
            else "the replacement character, left where a conversion lost one"
            if found == _REPLACEMENT
            else "a noncharacter, which XML 1.0 discourages"
        )
        raise PydanticCustomError(
            "xml_char",
            "contains the character U+{code}, {why}; remove it",
            {"code": f"{ord(found):04X}", "why": why},
        )
    if ftfy.badness.is_bad(value):
        fixed = ftfy.fix_text(value, _MEANT)
        meant = "" if fixed == value or ftfy.badness.is_bad(fixed) else f" for '{fixed[:60]}'"
        raise PydanticCustomError(
            "mojibake",
            "looks like UTF-8 read in another code page ('{value}'{meant}){why}; write it as meant",
            {
                "value": value[:60],
                "meant": meant,  # none when ftfy cannot tell (Windows-1258's "trĂºc" for "trúc")
                # The validator reads the whole text as Latin-1 ("latin characters double
                # encoded"): "Tối ưu · CafÃ©" escapes it.
                "why": ", which the W3C validator warns of" if reads(_LATIN1, value) else "",
            },
        )
    return unicodedata.normalize("NFC", value)


def _text(value: str, *, max_len: int = _MAX_TEXT, one_line: bool = False) -> str:
    """``value`` checked as a text of the entries, with every problem it has at once."""
    value = _xml_chars(value)
    found = []
    if not value.strip():
        found.append("must not be empty")
    elif _INVISIBLE.fullmatch(value):
        found.append("must not be empty: it holds only characters that show nothing")
    elif value.endswith("\n"):  # the closing """ on a line of its own
        found.append('must not end with a line break: put the closing """ right after the text')
    elif value != value.strip():
        found.append("must not start or end with white space")
    if one_line and _LINE_BREAK.search(value):
        found.append("must be a single line (no line breaks or tabs)")
    if len(value) > max_len:
        found.append(f"is {len(value)} characters long; the limit is {max_len}")
    if found:
        raise PydanticCustomError("text", "{problems}", {"problems": "; ".join(found)})
    return value


# Titles are plain text, but feed readers (and the W3C validator) may read a tag or a comment
# in a title as markup: refused, rather than shown differently by each reader. A start tag
# counts when it names an HTML element or has an event handler, as an HTML parser reads one
# ("<img/src=x onerror=…>" too): "vector<float>" or "template<int N=256>" is text.
_HTML_ELEMENTS = (resources.files(__package__) / "html-elements.txt").read_text("utf-8").split()
_TITLE_MARKUP = re.compile(
    r"</[A-Za-z][^>]*>|<!--|<(?:script|style|iframe|object|embed|meta)\b"
    rf"|<(?:{'|'.join(_HTML_ELEMENTS)})(?:[\s/][^>]*)?>"
    r"|<[A-Za-z][\w:-]*[\s/][^>]*?\bon\w+\s*=[^>]*>",
    re.I,
)


def _no_title_markup(
    value: str,
    why: str = "; this text becomes a title in the feeds, which is plain text: remove the tag",
) -> str:
    if found := _TITLE_MARKUP.search(value):
        raise PydanticCustomError(
            "title_markup",
            "'{tag}' looks like an HTML tag{why}",
            {"tag": found.group(), "why": why},
        )
    return value


def _parses(value: str) -> str:
    try:
        inline.parse(value)
    except inline.MarkupError as exc:
        raise PydanticCustomError("bad_link", str(exc)) from None
    return value


@dataclass(frozen=True)
class _Form(GroupedMetadata):
    """Text of one form, such as a slug: checked against ``pattern``, refused in the words of
    ``wanted``, and shown to editors (the JSON Schema) as the same pattern and length."""

    kind: str
    pattern: str  # what Python and JSON Schema's regular expressions read alike
    max_len: int
    wanted: str

    def __iter__(self) -> Iterator[object]:
        regex = re.compile(self.pattern)

        def check(value: str) -> str:
            # fullmatch: with match, "$" would also accept a trailing newline ("cuda\n").
            if not regex.fullmatch(value) or len(value) > self.max_len:
                # Invisible characters (newline, NUL...) are shown as escapes.
                shown = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in value[:100])
                why = "'{value}' is not " + self.wanted
                raise PydanticCustomError(self.kind, why, {"value": shown})
            return value

        yield AfterValidator(check)
        # A JSON Schema pattern matches anywhere in the text unless anchored.
        yield Field(
            json_schema_extra={"pattern": f"^(?:{self.pattern})$", "maxLength": self.max_len}
        )


_slug = _Form(
    "slug",
    r"[a-z0-9]+(?:-[a-z0-9]+)*",
    80,
    "a slug: use 1-80 lowercase ASCII letters, digits and single hyphens, "
    "e.g. 'cuda-reduce-optimization'",
)
_number = _Form(
    "article_number",
    r"[0-9]+(?:\.[0-9]+)*",
    20,
    'an article number: write it as printed, e.g. "6.1" or "12"',
)

_authority = _Form(
    "authority",
    r"[a-z0-9.-]+",
    200,
    "a domain name you own, in lowercase, e.g. 'caomaolufei.github.io'",
)
_email = _Form(
    "email",
    r"[A-Za-z0-9._%+!#$&'*/=?^`{|}~-]+@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z0-9][A-Za-z0-9-]*",
    254,
    "an e-mail address: e.g. 'author@example.org'",
)
_language = _Form(
    "language",
    r"[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*",
    35,
    "a language tag (BCP 47): e.g. 'vi', 'en' or 'zh-CN'",
)


_LANGUAGE_LINES = (resources.files(__package__) / "languages.txt").read_text("utf-8").splitlines()
_ISO639 = frozenset(word for line in _LANGUAGE_LINES if line[:1] != "#" for word in line.split())


def _iso_language(value: str) -> str:
    if value.split("-")[0] not in _ISO639:
        raise PydanticCustomError(
            "iso639",
            "'{value}' does not start with a language of ISO 639-1 or 639-2 as the W3C validator "
            "lists them, which RSS needs: e.g. 'vi' or 'zh-CN'; for a language with only an "
            "ISO 639-3 code, write its macrolanguage first, e.g. 'zh-yue'",
            {"value": value},
        )
    return value


# Plain Markdown only (MDX refuses the HTML comments the page carries); no segment
# starts with a dot, so the path can neither climb out nor hide among our own files.
_page_path = _Form(
    "page_path",
    r"(?:[A-Za-z0-9_][A-Za-z0-9._-]*/)*[A-Za-z0-9_][A-Za-z0-9._-]*\.md",
    200,
    "a page path: use a relative path below the output folder ending in .md, "
    "e.g. 'update-log.md' or 'blog/update-log.md'",
)


# Below the entries folder, in a folder files.py reads: no segment starts with a dot.
# What Python and JSON Schema's regular expressions read alike (no flag for the case of ".svg").
_ICON_PATH = re.compile(
    r"(?:[A-Za-z0-9_][A-Za-z0-9._-]*/)*[A-Za-z0-9_][A-Za-z0-9._-]*\.[Ss][Vv][Gg]"
)
_ICON_EXAMPLE = "e.g. 'favicon.svg' for entries/favicon.svg"


def _icon_path(value: str) -> str:
    if "://" in value or value.startswith(("data:", "//")):
        why = "is a URL; give the path of an SVG file in the entries folder, " + _ICON_EXAMPLE
    elif value.startswith(("/", "\\")) or re.match(r"[A-Za-z]:[\\/]", value):
        why = "is an absolute path; give the path below the entries folder, " + _ICON_EXAMPLE
    elif ".." in re.split(r"[\\/]", value):
        why = "climbs out of the entries folder ('..'); copy the SVG into it, " + _ICON_EXAMPLE
    elif not value.lower().endswith(".svg"):
        why = (
            "is not an SVG file (a name ending in .svg): infrafeed draws the feeds' PNG icons "
            "from an SVG; a PNG of your own goes in logo"
        )
    elif not _ICON_PATH.fullmatch(value) or len(value) > 200:
        why = (
            "is not a path below the entries folder: use letters, digits, '.', '_', '-' and "
            "'/', no part starting with a dot, " + _ICON_EXAMPLE
        )
    else:
        return value
    raise PydanticCustomError("icon_path", "'{value}' {why}", {"value": value[:100], "why": why})


def _reference(value: str, public: bool = True) -> str:
    value = _xml_chars(value)
    if (problem := check_reference(value, public=public)) is not None:
        raise PydanticCustomError("bad_url", "{problem}", {"problem": problem})
    return value


def _absolute_url(value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise PydanticCustomError(
            "absolute_url", "must be an absolute http(s) URL, e.g. https://example.org/"
        )
    return value


def _base_url(value: str) -> str:
    # Others' URLs are made by appending to it: a query or fragment would end up in between.
    if "?" in value or "#" in value:
        raise PydanticCustomError(
            "base_url", "must not have a query (?) or fragment (#): URLs are made below it"
        )
    return value


# Files of the zone database that are no place's zone: the machine's own, POSIX rules, leap-second
# clocks, the "unset" zone.
_NOT_ZONES = re.compile(r"localtime|posixrules|Factory|(?:posix|right)/.*")


def _timezone(value: str) -> str:
    try:
        if _NOT_ZONES.fullmatch(value):
            raise ValueError(value)
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a folder ("Asia"), too long
        raise PydanticCustomError(
            "timezone",
            "'{value}' is not an IANA time zone; use a name such as 'Asia/Shanghai'",
            {"value": value[:100]},
        ) from None
    return value


# Each check runs on what the one before it returned, and only if that one passed. For editors,
# the JSON Schema says what of them it can say exactly: not empty, and a line has no break.
_Line = Annotated[
    str,
    Strict(),
    AfterValidator(partial(_text, max_len=_MAX_LINE, one_line=True)),
    Field(json_schema_extra={"pattern": f"^[^{_BREAKS}]+$"}),
]
Title = Annotated[_Line, AfterValidator(_no_title_markup)]
_PLAIN = "; the feeds carry this text as plain text, as a name or in titles: remove the tag"
_PlainLine = Annotated[_Line, AfterValidator(partial(_no_title_markup, why=_PLAIN))]
_MarkdownLine = Annotated[_Line, AfterValidator(_parses)]
_MarkdownText = Annotated[
    str,
    Strict(),
    AfterValidator(_text),
    AfterValidator(_parses),
    Field(json_schema_extra={"minLength": 1}),
]
Slug = Annotated[str, Strict(), _slug]
_ArticleNumber = Annotated[str, Strict(), _number]
Reference = Annotated[str, Strict(), AfterValidator(_reference)]
_AbsoluteUrl = Annotated[Reference, AfterValidator(_absolute_url)]
_own = partial(_reference, public=False)  # where the site serves, or its hub: maybe a preview
_OwnUrl = Annotated[str, Strict(), AfterValidator(_own), AfterValidator(_absolute_url)]
_BaseUrl = Annotated[_OwnUrl, AfterValidator(_base_url)]
_TimeZone = Annotated[str, Strict(), AfterValidator(_timezone)]
_PagePath = Annotated[str, Strict(), _page_path]
_IconPath = Annotated[
    str,
    Strict(),
    AfterValidator(_xml_chars),
    AfterValidator(_icon_path),
    Field(json_schema_extra={"pattern": f"^(?:{_ICON_PATH.pattern})$", "maxLength": 200}),
]
_ModuleNumber = Annotated[int, Strict(), Field(ge=1, le=999)]
Chapter = Annotated[int, Strict(), Field(ge=1, le=999)]
_Day = Annotated[dt.date, Strict()]  # a TOML date: not text, a number or a date-time


class _Model(BaseModel):
    # Text and numbers are Strict (see the types above): TOML already has types,
    # so "6" for a module or 6.1 for an article number is a mistake to report,
    # not something to coerce. Arrays become tuples, so the models stay frozen.
    # A field's docstring is its description in the JSON Schema, which editors show.
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class Table(_Model):
    """A table below a note's text."""

    header: tuple[_Line, ...] = Field(min_length=1, max_length=20)
    """The column headings, plain text."""
    rows: tuple[tuple[_MarkdownLine, ...], ...] = Field(min_length=1, max_length=500)
    """The rows, each a cell per heading, in inline Markdown."""

    @model_validator(mode="after")
    def _rows_match_header(self) -> Table:
        for index, row in enumerate(self.rows, start=1):
            if len(row) != len(self.header):
                raise PydanticCustomError(
                    "table_row",
                    "row {index} has {cells} cells but the header has {columns}",
                    {"index": index, "cells": len(row), "columns": len(self.header)},
                )
            # In a GFM table "\|" ends a cell or loses its backslash, in code too (micromark).
            if any("\\|" in code for cell in row for code in inline.codes(inline.parse(cell))):
                raise PydanticCustomError(
                    "table_code",
                    "row {index} has code with '\\|', which the page's table cannot show (it "
                    "shows '|' or splits the cell there); move that code out of the table",
                    {"index": index},
                )
        return self


class Article(_Model):
    """One article that a release added or changed: one feed item."""

    id: Slug
    """Chosen once, never changed: the feed item's id is made from it. A later release that
    revises the article reuses it."""
    module: _ModuleNumber | None = None
    """The article's module, if not its group's."""
    chapter: Chapter | None = None
    """The article's chapter, if not its group's."""
    number: _ArticleNumber | None = None
    """The article's number as printed, in quotes: "6.1" or "12"."""
    title: Title
    """The article's title, plain text."""
    summary: _MarkdownText | None = None  # a few lines of the changelog have none
    """What changed, in inline Markdown: `code`, *emphasis*, [links](cuda/x)."""
    page: Reference | None = None
    """The article's address; without it, the feed item links to the release on the changelog
    page."""


class Note(_Model):
    """A change that is not about one article: also one feed item."""

    id: Slug
    """Chosen once, never changed: the feed item's id is made from it."""
    module: _ModuleNumber | None = None
    """The note's module, if not its group's; without one, the note is about the whole site, in
    the feed of everything only."""
    title: Title | None = None
    """A short title for feed readers, plain text; by default the text's first clause."""
    text: _MarkdownText
    """The change, in inline Markdown."""
    summary: _MarkdownText | None = None
    """What follows " | " on the changelog page, in inline Markdown."""
    details: tuple[_MarkdownText, ...] = Field(default=(), max_length=50)
    """Bullets below the text, in inline Markdown."""
    page: Reference | None = None
    """The address of what the note is about; without it, the feed item links to the release
    on the changelog page."""
    table: Table | None = None

    @field_validator("text")
    @classmethod
    def _plain_title(cls, text: str, info: ValidationInfo) -> str:
        # Without a title (a valid one is validated before), the feeds take the text's first
        # clause for one: plain text too.
        if info.data.get("title", "") is not None:
            return text
        clause = inline.first_clause(inline.plain(text))
        why = ", in the first clause, which the feeds take for the note's title, plain text: "
        _no_title_markup(clause, why + "remove the tag, or give the note a title")
        return text


class Group(_Model):
    """Changes of one kind, optionally under an introducing line; articles before notes."""

    kind: Kind
    """What kind of change the group's articles and notes are."""
    module: _ModuleNumber | None = None
    """The module of the group's articles and notes that set none: one of [[modules]] in
    site.toml."""
    chapter: Chapter | None = None
    """The chapter of the group's articles and notes that set none."""
    context: _MarkdownText | None = None
    """A line introducing the group's changes, in inline Markdown."""
    articles: tuple[Article, ...] = ()
    """Articles added or changed: [[groups.articles]], one feed item each."""
    notes: tuple[Note, ...] = ()
    """Changes not about one article: [[groups.notes]], one feed item each."""

    @model_validator(mode="after")
    def _not_empty(self) -> Group:
        if not self.articles and not self.notes:
            raise PydanticCustomError(
                "empty_group", "a group needs at least one [[groups.articles]] or [[groups.notes]]"
            )
        return self


class Release(_Model):
    """One dated release of the changelog: a release file, entries/YYYY/YYYY-MM-DD.toml."""

    date: _Day
    """The release's date, as its file is named: a TOML date, without quotes (2026-11-30)."""
    groups: tuple[Group, ...] = Field(min_length=1)
    """The changes: a [[groups]] table for each kind of change."""

    @field_validator("date")
    @classmethod
    def _plausible(cls, date: dt.date) -> dt.date:
        # Feed readers and the W3C validator take an earlier date for a mistake; and before 1972
        # some zones kept local mean time, an offset in seconds no feed's date format can write.
        if date < EARLIEST:
            raise PydanticCustomError(
                "implausible_date",
                "is {date}, before {earliest}, which feed readers take for a mistake: check the "
                "year",
                {"date": date.isoformat(), "earliest": EARLIEST.isoformat()},
            )
        return date

    @field_validator("groups")
    @classmethod
    def _not_too_many(cls, groups: tuple[Group, ...]) -> tuple[Group, ...]:
        if (count := sum(len(g.articles) + len(g.notes) for g in groups)) > _MAX_ITEMS_PER_RELEASE:
            raise PydanticCustomError(
                "too_many_changes",
                "holds {count} changes; a release holds at most {limit}",
                {"count": count, "limit": _MAX_ITEMS_PER_RELEASE},
            )
        return groups

    def changes(self) -> Iterator[tuple[str, Group, Article | Note]]:
        """Each change in page order, with where it is: ``groups[1].articles[2]``."""
        for g, group in enumerate(self.groups, start=1):
            for i, article in enumerate(group.articles, start=1):
                yield f"groups[{g}].articles[{i}]", group, article
            for i, note in enumerate(group.notes, start=1):
                yield f"groups[{g}].notes[{i}]", group, note


class Author(_Model):
    """Who publishes the site, named in every feed."""

    name: _PlainLine
    url: _AbsoluteUrl | None = None
    email: Annotated[str, Strict(), _email] | None = None

    @field_validator("name")
    @classmethod
    def _no_address(cls, name: str) -> str:
        # "Name <address>" is a mail header's form: in Atom the name is a name alone.
        if found := re.search(r"<[^<>\s]+@[^<>\s]+>", name):
            raise PydanticCustomError(
                "name_address",
                "holds the address '{address}': put it in [author] email, the name alone here",
                {"address": found.group()},
            )
        return name


class _KindLabel(_Model):
    """A kind's words: its heading on the changelog page, its prefix in feed items."""

    heading: Title
    """The page's heading for the kind, e.g. "Nội dung mới"."""
    short: Title
    """The prefix of a feed item's title, e.g. "Mới"."""
    headings: tuple[Title, ...] = Field(default=(), max_length=50)
    """More headings that mean the kind on a page to import, besides the built-in ones."""

    @field_validator("heading")
    @classmethod
    def _no_release_anchor(cls, heading: str) -> str:
        # The site's slugger makes "2026-04-30" or "2026-11-07 (2)" a release's anchor: a kind's
        # heading so written would take the anchor that feed items link to.
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}(?:-\d+)?", slug):
            raise PydanticCustomError(
                "release_anchor",
                "'{heading}' would have the anchor #{slug}, a release's, which feed items link "
                "to; write the kind's name",
                {"heading": heading, "slug": slug},
            )
        return heading


class Module(_Model):
    """A module of the site, with a feed of its own."""

    number: _ModuleNumber
    name: Title
    slug: Slug
    section: Slug
    """The module's path segment on the site, e.g. "cuda"."""
    short: _PlainLine | None = None
    """Before an item's title; by default labels.module_short and the number."""


class Ids(_Model):
    """What item ids are minted from (RFC 4151 tag URIs). Set once; never change."""

    authority: Annotated[str, Strict(), _authority]
    date: _Day


class FeedSettings(_Model):
    """Which feeds exist, and where they are served."""

    url: _BaseUrl
    """Where output/ is served; every self link starts with it."""
    max_items: Annotated[int, Strict(), Field(ge=1, le=100_000)] = 100
    max_bytes: Annotated[int, Strict(), Field(ge=4_096, le=100_000_000)] = 512_000
    """The largest subscription document, in bytes, in any format. Older items move to monthly
    archives (RFC 5005) so a reader's poll stays small."""
    all: StrictBool = True
    """One feed with every item."""
    modules: StrictBool = True
    """One feed per module of [[modules]]."""
    hub: _OwnUrl | None = None
    """A WebSub hub every subscription feed advertises."""
    icon: _IconPath | None = None
    """An SVG file in the entries folder (its path below it, e.g. "favicon.svg"), drawn by each
    build as icon.png and favicon.png beside the feeds: their icons, and RSS's image."""


class Labels(_Model):
    """Words of the feed items' content, in the site's language."""

    module: _PlainLine = "Module"
    """A module's label everywhere: "Module 4 · Tối ưu suy luận"."""
    module_short: _PlainLine = "M"
    """The module before every item's title: "M4 · Mới · 6.1 …"."""
    chapter: _PlainLine = "Chương"
    read_article: _Line = "Đọc bài"
    read_changelog: _Line = "Xem trong nhật ký cập nhật"


_NAME = re.compile(r"\{(\w+)\}")


def _numeric_date(value: str) -> str:
    if not re.fullmatch(r"(?:[^%]|%[dmYy%])*", value):
        raise PydanticCustomError(
            "strftime_format",
            "'{value}' may use only %d, %m, %Y, %y and %%: the names of days and months would "
            "be in the build machine's language, not the site's",
            {"value": value[:100]},
        )
    return value


class Words(_Model):
    """The words of the HTML pages, in the site's language; {names} are filled in."""

    page_title: _Line = "{site} · Nguồn tin"
    eyebrow: _Line = "Nguồn tin · RSS · Atom · JSON Feed"
    heading: _Line = "Theo dõi {site}"
    intro: _Line = (
        "Chép một địa chỉ dưới đây vào trình đọc tin (feed reader) của bạn, hoặc bấm “Thêm vào” "
        "để mở thẳng trình đọc. Ba định dạng của một nguồn có cùng nội dung: chỉ cần chọn một."
    )
    choose: _Line = "Đăng ký tất cả một lần: chọn một trong hai cách, đừng chọn cả hai"
    everything: _Line = "Mọi thứ"
    everything_help: _Line = (
        "một nguồn với mọi cập nhật; chỉ nguồn này có các ghi chú về toàn bộ trang"
    )
    by_module: _Line = "Theo module"
    by_module_help: _Line = "mỗi module một nguồn, giữ những module bạn quan tâm"
    opml: _Line = "tải {file} rồi nhập (import) vào trình đọc tin"
    feeds: _Line = "Các nguồn tin"
    latest: _Line = "Cập nhật mới nhất"
    see_all: _Line = "Xem mọi cập nhật trong nhật ký cập nhật"
    newest: _Line = "{count} mục mới nhất"
    updated: _Line = "cập nhật {date}"
    # strftime: numbers only, as names would be in the build machine's locale, not the site's
    date: Annotated[_Line, AfterValidator(_numeric_date)] = "%d/%m/%Y"
    complete: _Line = "đầy đủ mọi mục"
    partial: _Line = "{total} mục tất cả, phần cũ hơn trong lưu trữ theo tháng"
    add_to: _Line = "Thêm vào:"
    add_to_label: _Line = "Thêm {feed} vào {reader}"
    format_label: _Line = "{format} của {feed}"  # a feed link's name for screen readers
    archives: _Line = "Lưu trữ theo tháng ({count} tháng)"
    archive: _Line = "{month} · {count} mục:"
    back: _Line = "← Tất cả nguồn tin của {site}"
    module_lead: _Line = (
        "Mọi cập nhật của module này trong {site}, và nguồn tin để theo dõi riêng nó."
    )
    read_module: _Line = "Đọc module trên trang chính"
    module_feed: _Line = "Nguồn tin của module"
    updates: _Line = "Các cập nhật ({count})"
    footer: _Line = "Trang này được tạo từ {link}."
    footer_link: _Line = "nhật ký cập nhật của {site}"
    footer_formats: _Line = (
        "Mỗi nguồn tin có ba định dạng với cùng nội dung: RSS 2.0, Atom 1.0 và JSON Feed 1.1."
    )
    footer_archives: _Line = "Lịch sử đầy đủ nằm trong lưu trữ theo tháng (RFC 5005)."

    @model_validator(mode="after")
    def _filled(self) -> Words:
        # A {name} is filled in only where the default has it: "{sitee}" would be shown as typed.
        for field, info in type(self).model_fields.items():
            known = sorted(set(_NAME.findall(str(info.default))))
            if unknown := sorted(set(_NAME.findall(getattr(self, field))) - set(known)):
                names = ", ".join(f"{{{name}}}" for name in known) or "nothing"
                raise PydanticCustomError(
                    "unknown_name",
                    "{field}: '{name}' is not filled in; here infrafeed fills in {names}",
                    {"field": field, "name": f"{{{unknown[0]}}}", "names": names},
                )
        return self


class PageSettings(_Model):
    """The changelog page that ``infrafeed build`` writes for the site (changelog/page.py)."""

    enabled: StrictBool = True
    path: _PagePath = "update-log.md"
    """The page's path below the output folder."""
    title: _Line | None = None
    """The front matter's title; by default the site's title."""
    description: _Line | None = None
    """By default the site's description."""
    pub_date: _Day | None = None
    """By default the date of the oldest release."""
    tags: tuple[_Line, ...] = Field(default=(), max_length=50)
    intro: _MarkdownText | None = None
    """The paragraph above the first release, in inline Markdown."""
    article_label: _Line = "Bài"
    """The bold word that starts an article's bullet."""


class Site(_Model):
    """The site's settings: entries/site.toml."""

    title: Title
    description: _PlainLine
    language: Annotated[str, Strict(), _language, AfterValidator(_iso_language)]
    timezone: _TimeZone
    url: _BaseUrl
    changelog: _BaseUrl
    # [feeds] icon, when set, replaces favicon in the feeds, and JSON Feed's icon unless logo is.
    favicon: Reference | None = None  # small and square: Atom icon, JSON Feed favicon
    logo: Reference | None = None  # Atom logo, JSON Feed icon; RSS image if GIF, JPEG or PNG
    author: Author
    ids: Ids
    kinds: dict[Kind, _KindLabel] = Field(json_schema_extra={"required": list(KINDS)})
    modules: tuple[Module, ...] = Field(min_length=1)
    feeds: FeedSettings
    labels: Labels = Labels()
    words: Words = Words()
    page: PageSettings = PageSettings()

    @field_validator("kinds")
    @classmethod
    def _every_kind_once(cls, kinds: dict[Kind, _KindLabel]) -> dict[Kind, _KindLabel]:
        if missing := [kind for kind in KINDS if kind not in kinds]:
            raise PydanticCustomError(
                "missing_kinds", "add a label for {missing}", {"missing": ", ".join(missing)}
            )
        named: dict[str, str] = {}
        for kind, label in kinds.items():
            for name in (label.heading, *label.headings):
                other = named.setdefault(fold_heading(name), kind)
                if other != kind:
                    raise PydanticCustomError(
                        "duplicate_heading",
                        "'{name}' is a heading of both '{other}' and '{kind}'",
                        {"name": name, "other": other, "kind": kind},
                    )
        return kinds

    @field_validator("modules")
    @classmethod
    def _distinct(cls, modules: tuple[Module, ...]) -> tuple[Module, ...]:
        for attr in ("number", "slug"):
            seen: dict[object, int] = {}
            for index, module in enumerate(modules, start=1):
                value = getattr(module, attr)
                if (first := seen.setdefault(value, index)) != index:
                    raise PydanticCustomError(
                        "duplicate_module",
                        "{attr} {value} is used by modules[{first}] and modules[{index}]",
                        {"attr": attr, "value": value, "first": first, "index": index},
                    )
        return modules

    def module(self, number: int) -> Module | None:
        return next((m for m in self.modules if m.number == number), None)

    def module_label(self, module: Module) -> str:
        return f"{self.labels.module} {module.number} · {module.name}"

    def module_short(self, module: Module) -> str:
        return module.short or f"{self.labels.module_short}{module.number}"
