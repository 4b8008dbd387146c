"""The changelog page's own conventions, shared by its writer and its importer.

Release headings: ``## 2026-11-07`` for the first release of a day and
``## 2026-11-07 (2)`` for the second. Astro gives every heading the id that
github-slugger makes of its text, and "2026-11-07 (2)" becomes
``2026-11-07-2``: the anchor ``loader.ReleaseFile.anchor`` gives the feed items.

Annotations: what the entries hold but the page does not show (a group's
module and chapter, an article's own module, a note's page) rides along in
HTML comments, which the site renders invisibly::

    <!-- infrafeed group module=4 chapter=6 -->    on its own line: starts a group
    - **Bài:** 2.1 PagedAttention <!-- infrafeed chapter=2 -->    at the end of a bullet

A value is a whole number, ``true``, or a JSON string. No value contains two
hyphens in a row (``-`` is then written ``\\u002d``), because ``--`` would end
the comment early for some Markdown parsers.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

AnnotationValue = int | str | bool

SEPARATOR = " | "  # between an item's title or text and its summary
COLONS = (":", "：")  # after the article label; the second is the full-width colon of CJK pages

_RELEASE_HEADING = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:\s*\((\d{1,3})\))?$")
# An article's label on the page is "number title": "6.1 Tổng quan ...".
ARTICLE_NUMBER = re.compile(r"^([0-9]+(?:\.[0-9]+)*)\s+(\S.*)$", re.S)

_ANNOTATION = re.compile(r"^<!--\s*infrafeed\b(?P<body>.*?)\s*-->$", re.S)
_FIELD = re.compile(r'\s+([a-z_]+)=(true|[0-9]+|"(?:[^"\\]|\\.)*")')


def release_heading(day: dt.date, sequence: int) -> str:
    """The heading text of a release: its id on the page is ``ReleaseFile.anchor``."""
    return day.isoformat() if sequence == 1 else f"{day.isoformat()} ({sequence})"


def parse_release_heading(text: str) -> tuple[str, int | None] | None:
    """``("2026-11-07", None)`` for "2026-11-07", ``("2026-11-07", 2)`` for "2026-11-07 (2)"."""
    match = _RELEASE_HEADING.match(text.strip())
    if match is None:
        return None
    return match.group(1), int(match.group(2)) if match.group(2) else None


@dataclass(frozen=True)
class Annotation:
    group: bool  # starts a group, rather than annotating one item
    fields: Mapping[str, AnnotationValue]


class AnnotationError(ValueError):
    """An ``<!-- infrafeed ... -->`` comment that cannot be read."""


def format_annotation(fields: Mapping[str, AnnotationValue], *, group: bool = False) -> str:
    parts = ["infrafeed"]
    if group:
        parts.append("group")
    for key, value in fields.items():
        parts.append(f"{key}={_format_value(value)}")
    return f"<!-- {' '.join(parts)} -->"


def _format_value(value: AnnotationValue) -> str:
    if value is True:
        return "true"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("--", "-\\u002d")
    raise TypeError(f"cannot annotate {value!r}")


def parse_annotation(html: str) -> Annotation | None:
    """The annotation in an HTML comment; None when the comment is not one of ours."""
    match = _ANNOTATION.match(html.strip())
    if match is None:
        return None
    body = match.group("body")
    group = False
    if re.match(r"\s+group\b", body):
        group = True
        body = body.lstrip()[len("group") :]
    fields: dict[str, AnnotationValue] = {}
    position = 0
    for found in _FIELD.finditer(body):
        if found.start() != position:
            break
        key, raw = found.group(1), found.group(2)
        if key in fields:
            raise AnnotationError(f"'{key}' is given twice")
        fields[key] = _parse_value(raw)
        position = found.end()
    if body[position:].strip():
        raise AnnotationError(
            f"cannot read {body[position:].strip()[:60]!r}; write key=value pairs: "
            'module=4, chapter=6, page="https://..."'
        )
    return Annotation(group, fields)


def _parse_value(raw: str) -> AnnotationValue:
    if raw == "true":
        return True
    if raw.isdigit():
        return int(raw)
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise AnnotationError(f"{raw[:60]} is not a valid quoted string: {exc}") from None
    assert isinstance(value, str)
    return value
