"""The changelog page's conventions, shared by its writer (``page``) and its reader.

Release headings: ``## 2026-11-07``, and ``## 2026-11-07 (2)`` for a day's second release,
whose id on the site (github-slugger), ``2026-11-07-2``, is the feed items' anchor. What the
entries hold but the page does not show (ids, modules, chapters, a note's title and page)
rides along in HTML comments: ``<!-- infrafeed group module=4 chapter=6 -->`` on its own line
starts a group; one at the end of a bullet annotates its item. A value is a whole number,
``true``, or a JSON string in which ``--`` (which would end the comment for some Markdown
parsers) is written ``-\\u002d``.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import unicodedata
from collections.abc import Mapping
from typing import NamedTuple

from dateutil import parser as dateparser

from ..source.models import COLONS, MAX_RELEASES_PER_DAY, Kind

AnnotationValue = int | str | bool

SEPARATOR = " | "  # between an item's title or text and its summary
# An article's label on the page is "number title": "6.1 Tổng quan ...".
ARTICLE_NUMBER = re.compile(r"^([0-9]+(?:\.[0-9]+)*)\s+(\S.*)$", re.S)
# Article labels known besides the site's own: the shipped site's, the original's, English.
_ARTICLE_LABELS = ("Bài", "文章", "Article")
# Kind headings known without settings: the shipped site's, the original's, Keep a Changelog's.
HEADINGS: dict[Kind, tuple[str, ...]] = {
    "new": ("Nội dung mới", "新增内容", "新增", "Added", "New"),
    "revised": ("Điều chỉnh nội dung", "内容调整", "内容修订", "Changed", "Fixed", "Security"),
    "restructured": ("Điều chỉnh cấu trúc", "结构调整", "Removed", "Deprecated", "Restructured"),
    "major": ("Cập nhật lớn", "重大更新", "Major", "Major changes", "Breaking changes"),
    "improved": ("Cải thiện nội dung", "内容优化", "优化", "Improved", "Improvements"),
    "launch": ("Dự án lên sóng", "项目上线", "上线", "Launch", "Launched"),
    "init": ("Khởi tạo dự án", "项目初始化", "初始化", "Init", "Initial release"),
}

_SEQUENCE = re.compile(r"\((\d{1,3})\)$")  # no "\s*" first: tried at every space, quadratic
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_CJK_DATE = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日?")
_YEAR_LAST = re.compile(r"0?(\d{1,2})(?:[/.-]|\s+)0?(\d{1,2})(?:[/.-]|\s+)\d{4}")
_YEAR_FIRST = "write it year first, as '2026-11-07'"
_YEAR = re.compile(r"(?<!\d)\d{4}(?!\d)")  # "1.2.0" is a version, not 2000-01-02
_WEEKDAYS = dateparser.parserinfo()
# Possessive: "<!-- infrafeed" and a long run of spaces backtracked quadratically.
_ANNOTATION = re.compile(r"^<!--\s*+infrafeed\b(?P<group>\s+group\b)?(?P<body>.*)-->$", re.S)
# A number's digits are bounded: int() refuses more than 4,300, with a message about Python.
_FIELD = re.compile(r'\s+([a-z_]+)=(true|[0-9]{1,18}(?![0-9])|"(?:[^"\\]|\\.)*")')


def folded(text: str) -> str:
    """``text`` as labels are compared: NFC, case folded."""
    return unicodedata.normalize("NFC", text).casefold()


def article_starts(label: str) -> tuple[str, ...]:
    """How an article's bullet starts, ``folded``: ``label`` or a known one, then a colon."""
    return tuple(folded(name) + colon for name in (label, *_ARTICLE_LABELS) for colon in COLONS)


def release_heading(day: dt.date, sequence: int) -> str:
    """The heading text of a release: its id on the page is ``ReleaseFile.anchor``."""
    return day.isoformat() if sequence == 1 else f"{day.isoformat()} ({sequence})"


def parse_release_heading(text: str) -> tuple[dt.date, int | None]:
    """(2026-11-07, None) for "2026-11-07" or "7 Nov 2026", (…, 2) for "… (2)"; else ValueError."""
    text = text.strip()
    found = _SEQUENCE.search(text)
    written = text[: found.start()].rstrip() if found else text
    if (day := _date(written)) is None:
        raise ValueError(
            f"'{text}' is not a release heading: write its date, '## 2026-11-07', "
            "or '## 2026-11-07 (2)' for the second release of a day"
        )
    sequence = int(found.group(1)) if found else None
    if sequence is not None and not 2 <= sequence <= MAX_RELEASES_PER_DAY:
        raise ValueError(
            f"'{text}': number a day's later releases from (2) to ({MAX_RELEASES_PER_DAY}); "
            f"the first is '## {written}'"
        )
    return day, sequence


def _date(text: str) -> dt.date | None:
    if _ISO_DATE.fullmatch(text):
        try:
            return dt.date.fromisoformat(text)
        except ValueError:
            raise ValueError(f"'{text}' is not a valid date") from None
    found = _YEAR_LAST.fullmatch(text)  # "07/11/2026": 7 November, or July 11?
    if found and found[1] != found[2] and max(int(found[1]), int(found[2])) <= 12:
        raise ValueError(f"'{text}' may be day/month or month/day: {_YEAR_FIRST}")
    cjk = _CJK_DATE.fullmatch(text)
    text = "-".join(cjk.groups()) if cjk else text
    if len(_YEAR.findall(text)) != 1:  # none, or two dates
        return None
    try:
        # dateutil fills in what the text leaves out from its default: with two defaults
        # that share nothing, only a text that names year, month and day gives one date.
        # A zone ("12:00 CST") is ignored: dateutil reads one the machine's own zone names as
        # local time, and warns on stderr of one it does not know.
        days = {
            dateparser.parse(text, default=dt.datetime(y, y, y), ignoretz=True).date()
            for y in (1, 2)
        }
    except (ValueError, OverflowError):
        return None
    day = days.pop() if len(days) == 1 else None
    # dateutil reads a weekday and leaves it unchecked: "Mon 2026-11-07" is a Saturday.
    named = {_WEEKDAYS.weekday(word) for word in re.findall(r"[A-Za-z]+", text)} - {None}
    if day is not None and named and named != {day.weekday()}:
        weekday = _WEEKDAYS.WEEKDAYS[day.weekday()][1]  # "Saturday", whatever the locale
        raise ValueError(f"'{text}': {day.isoformat()} is a {weekday}; correct the date")
    return day


class Annotation(NamedTuple):
    group: bool  # starts a group, rather than annotating one item
    fields: dict[str, AnnotationValue]


def format_annotation(fields: Mapping[str, AnnotationValue], *, group: bool = False) -> str:
    parts = ["infrafeed", *(["group"] if group else [])]
    for key, value in fields.items():
        if isinstance(value, str):
            value = json.dumps(value, ensure_ascii=False).replace("--", "-\\u002d")
        parts.append(f"{key}={'true' if value is True else value}")
    return f"<!-- {' '.join(parts)} -->"


def parse_annotation(html: str) -> Annotation | None:
    """The annotation in an HTML comment; None when not one of ours; ValueError if unreadable."""
    match = _ANNOTATION.match(html.strip())
    if match is None:
        return None
    body, position = match.group("body").rstrip(), 0
    fields: dict[str, AnnotationValue] = {}
    while found := _FIELD.match(body, position):
        key, raw = found.groups()
        if key in fields:
            raise ValueError(f"'{key}' is given twice")
        try:  # the pattern makes a quoted value a JSON string
            fields[key] = True if raw == "true" else int(raw) if raw.isdigit() else json.loads(raw)
        except ValueError as exc:
            raise ValueError(f"{raw[:60]} is not a valid quoted string: {exc}") from None
        position = found.end()
    if body[position:].strip():
        raise ValueError(
            f"cannot read {body[position:].strip()[:60]!r}; write key=value pairs: "
            'module=4, chapter=6, page="https://..."'
        )
    return Annotation(match.group("group") is not None, fields)
