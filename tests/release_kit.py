"""A release with every kind of text field, as TOML text or as parsed tables.

For the hostile-input and property tests: each puts its own value into one
field and checks what a build makes of it.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from conftest import SMALL_SITE

# A release with every kind of text field; {name} marks where a case puts its value.
RELEASE = """\
date = 2026-03-09

[[groups]]
kind = "new"
module = 2
chapter = 5
context = {context}

[[groups.articles]]
id = {article_id}
number = {number}
title = {title}
summary = {summary}
page = {page}

[[groups]]
kind = "improved"
module = 2

[[groups.notes]]
id = {note_id}
text = {note_text}
summary = {note_summary}
details = [{detail}]
table = {{ header = [{header}], rows = [[{cell}]] }}
"""
GOOD = {
    "context": "Bối cảnh",
    "article_id": "cuda-hostile",
    "number": "5.1",
    "title": "Tiêu đề",
    "summary": "Tóm tắt",
    "page": "/guide/cuda/51-hostile",
    "note_id": "site-hostile",
    "note_text": "Ghi chú",
    "note_summary": "Tóm tắt ghi chú",
    "detail": "Chi tiết",
    "header": "Cột",
    "cell": "Ô",
}
# Where each value is, as messages name it.
FIELDS = {
    "context": "groups[1].context",
    "article_id": "groups[1].articles[1].id",
    "number": "groups[1].articles[1].number",
    "title": "groups[1].articles[1].title",
    "summary": "groups[1].articles[1].summary",
    "page": "groups[1].articles[1].page",
    "note_id": "groups[2].notes[1].id",
    "note_text": "groups[2].notes[1].text",
    "note_summary": "groups[2].notes[1].summary",
    "detail": "groups[2].notes[1].details[1]",
    "header": "groups[2].notes[1].table.header[1]",
    "cell": "groups[2].notes[1].table.rows[1][1]",
}
RELEASE_NAME = "2026/2026-03-09.toml"


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string; everything but printable ASCII as an escape."""
    out = []
    for ch in value:
        if ch in '"\\':
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(f"\\U{ord(ch):08X}")
    return '"' + "".join(out) + '"'


def release_text(**values: str) -> str:
    return RELEASE.format(**{k: toml_string(v) for k, v in {**GOOD, **values}.items()})


def _article(release: dict[str, Any]) -> Any:
    return release["groups"][0]["articles"][0]


def _note(release: dict[str, Any]) -> Any:
    return release["groups"][1]["notes"][0]


# Where each field of RELEASE is in the parsed table: (container, key).
PLACES = {
    "context": (lambda r: r["groups"][0], "context"),
    "article_id": (_article, "id"),
    "number": (_article, "number"),
    "title": (_article, "title"),
    "summary": (_article, "summary"),
    "page": (_article, "page"),
    "note_id": (_note, "id"),
    "note_text": (_note, "text"),
    "note_summary": (_note, "summary"),
    "detail": (lambda r: _note(r)["details"], 0),
    "header": (lambda r: _note(r)["table"]["header"], 0),
    "cell": (lambda r: _note(r)["table"]["rows"][0], 0),
}


def tables(**values: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The small site's settings and RELEASE as parsed TOML, with ``values`` put in."""
    site = tomllib.loads((SMALL_SITE / "site.toml").read_text(encoding="utf-8"))
    release = tomllib.loads(release_text())
    for field, value in values.items():
        container, key = PLACES[field]
        container(release)[key] = value
    return site, release


def set_feeds(site_toml: Path, **settings: object) -> None:
    """Set keys of site.toml's [feeds] table, whatever the fixture has there now."""
    text = site_toml.read_text(encoding="utf-8")
    head, _, rest = text.partition("\n[feeds]\n")
    assert rest, f"{site_toml} has no [feeds] table"
    body, nxt, tail = rest.partition("\n[")
    lines = body.splitlines()
    for key, value in settings.items():
        shown = str(value).lower() if isinstance(value, bool) else repr(value)
        lines = [line for line in lines if not line.startswith(f"{key} =")]
        lines.append(f"{key} = {shown}")
    site_toml.write_text(f"{head}\n[feeds]\n" + "\n".join(lines) + nxt + tail, encoding="utf-8")
