"""Property tests: any Unicode text in any field gives valid feeds or a clean error.

Never a traceback: the only exception a bad entry may raise is DataError,
and whatever is accepted renders into well-formed XML and valid JSON in
which an article's title comes back exactly (in NFC) and no markup a
reader would run appears.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import tempfile
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hypothesis.strategies as st
from hypothesis import event, given, settings

from conftest import SMALL_SITE
from infrafeed.cli import main
from infrafeed.errors import DataError
from infrafeed.feeds.items import build_items
from infrafeed.source.loader import from_data
from infrafeed.source.urls import absolute
from outputs import (
    FEED_NAMES,
    assert_feeds_valid,
    assert_no_active_markup,
    fragments_of,
    parse_bytes,
    rendered_files,
    titles_of,
    unsafe_markup,
)
from release_kit import PLACES, RELEASE_NAME, release_text, tables
from w3c import w3c_problems

# Pieces that have broken feeds somewhere: markup, Markdown, XML-forbidden and
# invisible characters, surrogates, right-to-left overrides, combining marks.
PIECES = [
    "<script>alert(1)</script>", "</p>", "<![CDATA[", "]]>", "&", "&amp;", "&#0;", "<", ">",
    '"', "'", "`", "``", "*", "**", "\\", "[x](/a)", "[x](javascript:alert(1))", "](",
    "\u202e", "\u200b", "\ufeff", "🎉", "e\u0301", "\u0301", "\ud800", "\udfff", "\x00",
    "\x85", "\ufffe", "\U0001fffe", "\n", "\r", "\t", " ", "\u2028", "Tiếng Việt", "中文",
]  # fmt: skip
FEEDABLE_PIECES = [p for p in PIECES if p.isprintable() and "javascript" not in p]
ANY_CHARACTER = st.characters(exclude_categories=())  # surrogates included
# Half the time, text a feed can carry, so that most such examples are published.
PRINTABLE = st.characters(exclude_categories=("Cc", "Cs", "Zl", "Zp"))
TEXT = st.one_of(
    st.lists(
        st.one_of(st.text(ANY_CHARACTER, max_size=6), st.sampled_from(PIECES)), max_size=6
    ).map("".join),
    st.lists(
        st.one_of(st.text(PRINTABLE, min_size=1, max_size=6), st.sampled_from(FEEDABLE_PIECES)),
        min_size=1,
        max_size=6,
    ).map(lambda parts: "".join(parts).strip() or "x"),
)
# What a TOML file can carry: every Unicode scalar value, no surrogates.
TOML_TEXT = TEXT.map(lambda s: "".join(ch for ch in s if not "\ud800" <= ch <= "\udfff"))


def _site_setter(*keys: str | int) -> Callable[[dict[str, Any], str], None]:
    def put(site: dict[str, Any], value: str) -> None:
        container: Any = site
        for key in keys[:-1]:
            container = container.setdefault(key, {}) if isinstance(key, str) else container[key]
        container[keys[-1]] = value

    return put


SITE_FIELDS = {
    "site title": _site_setter("title"),
    "site description": _site_setter("description"),
    "author": _site_setter("author", "name"),
    "module name": _site_setter("modules", 1, "name"),
    "kind label": _site_setter("kinds", "new", "short"),
    "kind heading": _site_setter("kinds", "new", "heading"),
    "author e-mail": _site_setter("author", "email"),
    "author URL": _site_setter("author", "url"),
    "hub": _site_setter("feeds", "hub"),
    "language": _site_setter("language"),
    "module short name": _site_setter("modules", 1, "short"),
    "label": _site_setter("labels", "read_article"),
    "module label": _site_setter("labels", "module"),
    "module short label": _site_setter("labels", "module_short"),
    "chapter label": _site_setter("labels", "chapter"),
    "icon": _site_setter("favicon"),
    "logo": _site_setter("logo"),
}
ALL_FIELDS = sorted([*PLACES, *SITE_FIELDS])
NAME = f"entries/{RELEASE_NAME}"


def _changelog_with(field: str, value: str) -> Any:
    if field in SITE_FIELDS:
        site, release = tables()
        SITE_FIELDS[field](site, value)
    else:
        site, release = tables(**{field: value})
    return from_data(site, {NAME: release})


@settings(max_examples=500, deadline=None)
@given(field=st.sampled_from(ALL_FIELDS), value=TEXT)
def test_any_text_in_any_field_gives_valid_feeds_or_a_clean_error(field: str, value: str) -> None:
    try:
        changelog = _changelog_with(field, value)
    except DataError as exc:
        event("refused")
        assert exc.problems
        for problem in exc.problems:
            where = str(problem)
            assert where.startswith(NAME if field in PLACES else "site.toml"), where
        return
    event("published")
    items = build_items(changelog)
    for path, chunks in rendered_files(changelog.site, items, "0"):
        data = b"".join(chunks)
        if path in ("feed.xml", "atom.xml", "feeds.opml", "modules.opml"):  # the service's code
            assert w3c_problems(data, absolute(changelog.site.feeds.url, path)) == [], path
        if path.rsplit("/", 1)[-1] not in FEED_NAMES:
            continue
        doc = parse_bytes(path, data)  # well-formed XML, valid UTF-8 JSON
        for where, fragment in fragments_of(doc, path):
            assert unsafe_markup(fragment) == [], f"{where}: {fragment!r}"
        if field == "title" and path in ("feed.xml", "atom.xml", "feed.json"):
            assert f"M2 · Mới · 5.1 {unicodedata.normalize('NFC', value)}" in titles_of(doc)


@settings(max_examples=200, deadline=None)
@given(address=st.emails())
def test_an_accepted_e_mail_address_is_one_the_w3c_validator_takes(address: str) -> None:
    """The author's address goes into RSS <author>; the settings refuse the rare ones it
    would not take (quoted local parts, IP literals) with a clean error."""
    try:
        changelog = _changelog_with("author e-mail", address)
    except DataError as exc:
        event("refused")
        assert [p.field for p in exc.problems] == ["author.email"]
        return
    event("accepted")
    items = build_items(changelog)
    for path, chunks in rendered_files(changelog.site, items, "0"):
        if path == "feed.xml":
            url = absolute(changelog.site.feeds.url, path)
            assert w3c_problems(b"".join(chunks), url) == [], address


@settings(max_examples=100, deadline=None)
@given(field=st.sampled_from(sorted(PLACES)), value=TOML_TEXT)
def test_any_text_in_a_release_file_never_gives_a_traceback(field: str, value: str) -> None:
    """The same through files and the command line: exit 0 or 1, never 70."""
    with tempfile.TemporaryDirectory() as folder:
        entries = Path(folder) / "entries"
        (entries / "2026").mkdir(parents=True)
        for source in SMALL_SITE.rglob("*.toml"):
            (entries / source.relative_to(SMALL_SITE)).write_bytes(source.read_bytes())
        (entries / RELEASE_NAME).write_text(release_text(**{field: value}), encoding="utf-8")
        out = Path(folder) / "output"
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(["build", "--quiet", "--entries", str(entries), "--out", str(out)])
        assert code in (0, 1), stderr.getvalue()
        assert stdout.getvalue() == ""
        event(f"exit {code}")
        if code == 1:
            lines = stderr.getvalue().splitlines()
            assert lines[-1].endswith("in the entries; nothing was written")
            assert all(line.startswith(f"{entries.as_posix()}/") for line in lines[:-1])
            assert not out.joinpath("feed.xml").exists()
        else:
            assert stderr.getvalue() == ""
            assert_feeds_valid(out)
            assert_no_active_markup(out)


# Releases are dated from 1990 on (models.EARLIEST); below year 1000 the two pad differently.
@given(
    st.datetimes(min_value=dt.datetime(1000, 1, 1), timezones=st.timezones()).filter(
        lambda d: d.utcoffset() is not None
    )
)
def test_rss_dates_are_feedgens(moment: dt.datetime) -> None:
    from email.utils import format_datetime

    import feedgen.feed  # noqa: F401  (feedgen.util needs lxml.etree imported first)
    from feedgen.util import formatRFC2822

    assert format_datetime(moment) == formatRFC2822(moment)
