"""Entries are untrusted text: each hostile input gives a clear error or escaped text.

Every case is a release file (or a site setting) that a contributor's pull
request could carry, built through ``main()`` over a good previous build:
- an error names the file and the field, exits 1, and leaves the published
  output as it was, byte for byte and modification time;
- anything published is well-formed, reads in feedparser without fault, and
  carries the hostile text as text: no element, attribute or link a reader
  would run (see ``outputs.unsafe_markup``).
"""

from __future__ import annotations

import email.utils
import json
import os
import tomllib
import unicodedata
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import feedparser
import pytest

from conftest import RunCli
from infrafeed.errors import DataError
from infrafeed.publish.manifest import MANIFEST
from infrafeed.source.loader import from_data
from outputs import (
    age,
    assert_feeds_valid,
    assert_no_active_markup,
    html_fragments,
    item_titles,
    mtimes,
    parse,
    run_infrafeed,
    tree,
    unsafe_markup,
)
from release_kit import FIELDS, RELEASE_NAME, release_text, tables, toml_string


def test_toml_string_round_trips() -> None:
    text = 'a"b\\c\n\t\x00\x7fé🎉\u202e'
    assert tomllib.loads(f"x = {toml_string(text)}")["x"] == text


@pytest.fixture
def published(small_site: Path, run_cli: RunCli, tmp_path: Path) -> Path:
    """The small site, built once: the output a hostile build must not damage."""
    out = tmp_path / "output"
    assert run_cli("build", "--entries", str(small_site), "--out", str(out))[0] == 0
    return out


def build(run_cli: RunCli, entries: Path, out: Path) -> tuple[int, str, str]:
    return run_cli("build", "--entries", str(entries), "--out", str(out))


# --- Errors: (case, field, value, message after "path: field: ") --------------------

SCHEME = (
    "scheme is not allowed; use an http(s) URL or a site-relative path such as /AIInfraGuide/cuda/"
)
SLUG = (
    "is not a slug: use 1-80 lowercase ASCII letters, digits and single hyphens, "
    "e.g. 'cuda-reduce-optimization'"
)
NUMBER = 'is not an article number: write it as printed, e.g. "6.1" or "12"'
XML = "which XML 1.0 forbids in a feed; remove it"
CONTROL = "a control character, which readers do not show; remove it"
MOJIBAKE = "looks like UTF-8 read in another code page "
NONCHARACTER = "a noncharacter, which XML 1.0 discourages; remove it"
JS = "javascript:alert(1)"

BAD_VALUES = [
    # Links a reader would run: in the page and inside any Markdown text.
    ("javascript: page", "page", JS, f"the 'javascript:' {SCHEME}"),
    ("mixed-case scheme", "page", "JaVaScRiPt:alert(1)", f"the 'javascript:' {SCHEME}"),
    ("data: page", "page", "data:text/html;base64,PHNjcmlwdD4=", f"the 'data:' {SCHEME}"),
    ("vbscript: page", "page", "vbscript:msgbox(1)", f"the 'vbscript:' {SCHEME}"),
    ("padded scheme", "page", f" {JS}", "must not start or end with white space"),
    ("tab in scheme", "page", "java\tscript:alert(1)", "must not contain control characters"),
    ("leaves the site", "page", "//evil.example/x",
     "a URL starting with '//' leaves the site; write https://host/... instead"),
    ("broken IPv6 host", "page", "https://[::1/x", "is not a valid URL: Invalid IPv6 URL"),
    ("port out of range", "page", "https://example.org:99999/",
     "is not a valid URL: Port out of range 0-65535"),
    ("port not a number", "page", "https://example.org:http/",
     "is not a valid URL: Port could not be cast to integer value as 'http'"),
    ("host not IDNA", "page", "https://ex\u00e4mple..org/",
     "has a host name that cannot be written in ASCII (IDNA): 'exämple..org'"),
    ("javascript: in a summary link", "summary", f"[x]({JS})",
     f"link target '{JS}': the 'javascript:' {SCHEME}"),
    ("JaVaScRiPt: in a context link", "context", "[x](JaVaScRiPt:alert(1))",
     f"link target 'JaVaScRiPt:alert(1)': the 'javascript:' {SCHEME}"),
    ("data: in a note link", "note_text", "[x](data:text/html,<script>)",
     f"link target 'data:text/html,<script>': the 'data:' {SCHEME}"),
    ("vbscript: in a detail link", "detail", "[x](vbscript:msgbox)",
     f"link target 'vbscript:msgbox': the 'vbscript:' {SCHEME}"),
    ("javascript: in a table cell link", "cell", f"[x](<{JS}>)",
     f"link target '{JS}': the 'javascript:' {SCHEME}"),
    ("user and password in a page", "page", "https://user:pw@example.org/x",
     "must not hold a user name or password (user@host): feeds are public"),
    ("space in a host", "page", "https://ex ample.com/a b",
     "has a host name with characters no host name has: 'ex ample.com'"),
    ("a host of one network", "page", "http://localhost/x",
     "has the host 'localhost', without a dot, which no reader elsewhere reaches"),
    ("a dev server's address", "page", "http://127.0.0.1:4321/AIInfraGuide/cuda/x",
     "has the address 127.0.0.1, of one network's own, which no reader elsewhere reaches"),
    ("a private address", "summary", "[x](http://192.168.1.5/x)",
     "link target 'http://192.168.1.5/x': has the address 192.168.1.5, of one network's own, "
     "which no reader elsewhere reaches"),
    ("no address", "page", "http://0.0.0.0:4321/x",
     "has the address 0.0.0.0, of one network's own, which no reader elsewhere reaches"),
    ("a scheme without its colon", "page", "https//example.org/a/b",
     "starts 'https//', a URL without its ':'; write https://"),
    # Published as pages below the site (a helper, as a maintainer).
    ("a host without a scheme", "page", "www.example.org/x",
     "starts 'www.example.org', a host without its scheme: write https://www.example.org/x, or "
     "./www.example.org/x for a page of the site"),
    # Not "write https://127.0.0.1:4321/…", which is refused in turn (a reviewer).
    ("a dev server's address without a scheme", "page", "127.0.0.1:4321/AIInfraGuide/x",
     "has the address 127.0.0.1, of one network's own, which no reader elsewhere reaches"),
    ("a short link without a scheme", "summary", "[video](youtu.be/abc)",
     "link target 'youtu.be/abc': starts 'youtu.be', a host without its scheme: write "
     "https://youtu.be/abc, or ./youtu.be/abc for a page of the site"),
    ("Hugging Face without a scheme", "page", "huggingface.co/meta-llama",
     "starts 'huggingface.co', a host without its scheme: write https://huggingface.co/meta-llama, "
     "or ./huggingface.co/meta-llama for a page of the site"),
    ("a host of a common domain without a scheme", "summary", "[x](github.com/NVIDIA/cutlass)",
     "link target 'github.com/NVIDIA/cutlass': starts 'github.com', a host without its scheme: "
     "write https://github.com/NVIDIA/cutlass, or ./github.com/NVIDIA/cutlass for a page of the "
     "site"),
    ("the template's placeholder", "page", "https://example.org/guide/inference/...",
     "holds '...', a placeholder: write the page's address, or leave the link out"),
    ("a placeholder in a link", "summary", "[x](cuda/…)",
     "link target 'cuda/…': holds '...', a placeholder: write the page's address, or leave the "
     "link out"),
    ("a host with an empty label", "page", "https://www..example.org/x",
     "has a host name with characters no host name has: 'www..example.org'"),
    ("a host label starting with '-'", "page", "https://example.-org/x",
     "has a host name with characters no host name has: 'example.-org'"),
    ("a host ending with a dot", "page", "https://example.org./x",
     "has a host name ending with a dot: write 'example.org'"),
    # RSS and OPML links are RFC 2396 URIs: the W3C validator refuses "[" and "]".
    ("IPv6 host", "page", "https://[2001:db8::1]/x",
     "has an IP address for its host ([2001:db8::1]); use a domain name"),
    # Characters XML 1.0 forbids, anywhere.
    ("bell in a title", "title", "a\u0007b", f"contains the character U+0007, {XML}"),
    ("escape in a summary", "summary", "\u001b[31mred", f"contains the character U+001B, {XML}"),
    ("NUL in a cell", "cell", "a\u0000b", f"contains the character U+0000, {XML}"),
    ("C1 control in a note", "note_text", "a\u0085b",
     f"contains the character U+0085, {CONTROL}"),
    ("noncharacter in a context", "context", "a\ufffeb", f"contains the character U+FFFE, {XML}"),
    ("plane noncharacter in a detail", "detail", "a\U0001ffffb",
     f"contains the character U+1FFFF, {NONCHARACTER}"),
    ("C1 control in a page", "page", "/guide/a\u0085b",
     f"contains the character U+0085, {CONTROL}"),
    ("vertical tab in a header", "header", "a\u000bb", f"contains the character U+000B, {XML}"),
    # ftfy tells mojibake from text typed right, and suggests what was meant when it can.
    ("mojibake in a title", "title", "CafÃ© Ã©tÃ©",
     f"{MOJIBAKE}('CafÃ© Ã©tÃ©' for 'Café été'), which the W3C validator warns of; "
     "write it as meant"),
    # Vietnamese through Windows-1252 is rarely all Latin-1 (a helper's find).
    ("Windows-1252 mojibake in a title", "title", "T\u00e1\u00bb\u2018i \u00c6\u00b0u",
     f"{MOJIBAKE}('T\u00e1\u00bb\u2018i \u00c6\u00b0u' for 'T\u1ed1i \u01b0u'); write it as meant"),
    # Vietnamese Windows' own code page, "Kiến trúc" read as Windows-1258 (a helper's find):
    # refused, but ftfy knows no Windows-1258 to suggest the text meant.
    ("Windows-1258 mojibake in a title", "title", "Ki\u00e1\u00ba\u00bfn tr\u0102\u00bac",
     f"{MOJIBAKE}('Ki\u00e1\u00ba\u00bfn tr\u0102\u00bac'); write it as meant"),
    # One character typed right hid the rest from a check of the whole text (reviewers).
    ("mojibake beside a word typed right", "context", "Module 4 · Ki\u00e1\u00ba\u00bfn",
     f"{MOJIBAKE}('Module 4 · Ki\u00e1\u00ba\u00bfn' for 'Module 4 · Ki\u1ebfn'), which the W3C "
     "validator warns of; write it as meant"),
    ("mojibake of a sign", "summary", "Nhiệt độ 85\u00c2\u00b0C",
     f"{MOJIBAKE}('Nhiệt độ 85\u00c2\u00b0C' for 'Nhiệt độ 85°C'); write it as meant"),
    ("mojibake in guillemets", "context", "Chương 6 «Ki\u00e1\u00ba\u00bfn tr\u00c3\u00bac»",
     f"{MOJIBAKE}('Chương 6 «Ki\u00e1\u00ba\u00bfn tr\u00c3\u00bac»' for "
     "'Chương 6 «Ki\u1ebfn trúc»'); write it as meant"),
    # The validator's warning only when the whole text is Latin-1, as the validator reads it.
    ("mojibake of two code pages", "title", "Module 4 · Ki\u00e1\u00ba\u00bfn tr\u0102\u00bac",
     f"{MOJIBAKE}('Module 4 · Ki\u00e1\u00ba\u00bfn tr\u0102\u00bac'); write it as meant"),
    ("replacement character in a title", "title", "T\ufffdi \u01b0u",
     "contains the character U+FFFD, the replacement character, left where a conversion lost "
     "one; remove it"),
    # Ids that could make paths: slugs only.
    ("parent folder id", "article_id", "../etc", f"'../etc' {SLUG}"),
    ("slash in an id", "article_id", "a/b", f"'a/b' {SLUG}"),
    ("absolute id", "note_id", "/etc/passwd", f"'/etc/passwd' {SLUG}"),
    ("NUL in an id", "article_id", "a\u0000b", f"'a\\x00b' {SLUG}"),
    ("newline after an id", "article_id", "cuda-x\n", f"'cuda-x\\n' {SLUG}"),
    ("upper case id", "note_id", "Site", f"'Site' {SLUG}"),
    ("overlong id", "article_id", "a" * 81, f"'{'a' * 81}' {SLUG}"),
    ("newline after a number", "number", "5.1\n", f"'5.1\\n' {NUMBER}"),
    # Limits.
    ("overlong title", "title", "x" * 501, "is 501 characters long; the limit is 500"),
    ("overlong summary", "summary", "x" * 5001, "is 5001 characters long; the limit is 5000"),
    ("overlong note", "note_text", "x" * 5001, "is 5001 characters long; the limit is 5000"),
    ("overlong page", "page", "/" + "x" * 2000, "is longer than 2000 characters"),
    ("overlong link in a summary", "summary", f"[x](/{'x' * 2000})",
     f"link target '/{'x' * 2000}': is longer than 2000 characters"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [pytest.param(f, v, m, id=case) for case, f, v, m in BAD_VALUES],
)
def test_hostile_value_is_a_clear_error_and_output_stays(
    small_site: Path, published: Path, run_cli: RunCli, field: str, value: str, message: str
) -> None:
    before, stamps = tree(published), age(published)
    (small_site / RELEASE_NAME).write_text(release_text(**{field: value}), encoding="utf-8")
    code, stdout, stderr = build(run_cli, small_site, published)
    path = f"{small_site.as_posix()}/{RELEASE_NAME}"
    assert (code, stdout) == (1, "")
    assert stderr.splitlines() == [
        f"{path}: {FIELDS[field]}: {message}",
        "infrafeed: 1 problem in the entries; nothing was written",
    ]
    assert tree(published) == before and mtimes(published) == stamps


# Whole files that are wrong: (case, bytes, message after "path")
BAD_FILES = [
    ("not UTF-8", release_text().encode().replace(b"Ti\\u00EAu", b"Ti\xeau"),
     ":12: (file): is not UTF-8 (byte 0xea); save the file as UTF-8"),
    ("UTF-16", release_text().encode("utf-16"),
     ":1: (file): is not UTF-8 (byte 0xff); save the file as UTF-8"),
    ("oversized", release_text().encode() + b"#" * 1_048_576 + b"\n",
     f": (file): is {len(release_text().encode()) + 1_048_577} bytes; the limit is 1048576"),
    ("lone surrogate escape", release_text().encode().replace(b"T\\u00F3m", b"T\\uD800m", 1),
     ":13: (toml): not valid TOML: Escaped character is not a Unicode scalar value"),
    ("NUL byte", release_text().encode().replace(b"Ghi", b"G\x00hi"),
     ":22: (toml): not valid TOML: Illegal character '\\x00'"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("data", "message"), [pytest.param(d, m, id=case) for case, d, m in BAD_FILES]
)
def test_hostile_file_is_a_clear_error_and_output_stays(
    small_site: Path, published: Path, run_cli: RunCli, data: bytes, message: str
) -> None:
    before, stamps = tree(published), age(published)
    (small_site / RELEASE_NAME).write_bytes(data)
    code, stdout, stderr = build(run_cli, small_site, published)
    assert (code, stdout) == (1, "")
    assert stderr.splitlines() == [
        f"{small_site.as_posix()}/{RELEASE_NAME}{message}",
        "infrafeed: 1 problem in the entries; nothing was written",
    ]
    assert tree(published) == before and mtimes(published) == stamps


OUTSIDE = "is a symbolic link to a file outside the entries folder; put the file itself here"
NOT_A_FILE = "is not a regular file (a folder, device or FIFO)"


def _link_to_dev_zero(path: Path, tmp_path: Path) -> None:
    path.symlink_to("/dev/zero")


def _link_to_a_good_release_outside(path: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere.toml").write_text(release_text(), encoding="utf-8")
    path.symlink_to(tmp_path / "elsewhere.toml")


def _link_loop(path: Path, tmp_path: Path) -> None:
    path.symlink_to(path.name)


def _fifo(path: Path, tmp_path: Path) -> None:
    os.mkfifo(path)


def _folder(path: Path, tmp_path: Path) -> None:
    path.mkdir()


# Release "files" that git or a server can hold and that are not files to read.
NOT_FILES = [
    ("symlink to /dev/zero", _link_to_dev_zero, OUTSIDE),
    ("symlink to a release elsewhere", _link_to_a_good_release_outside, OUTSIDE),
    ("symlink loop", _link_loop, "cannot be read: Too many levels of symbolic links"),
    ("FIFO", _fifo, NOT_A_FILE),
    ("folder", _folder, NOT_A_FILE),
]


@pytest.mark.parametrize(
    ("make", "message"), [pytest.param(m, msg, id=case) for case, m, msg in NOT_FILES]
)
def test_what_is_not_a_file_inside_entries_is_refused_not_read(
    small_site: Path,
    published: Path,
    tmp_path: Path,
    make: Callable[[Path, Path], None],
    message: str,
) -> None:
    """In a child process with a timeout: reading /dev/zero or a FIFO would never end."""
    before, stamps = tree(published), age(published)
    make(small_site / RELEASE_NAME, tmp_path)
    done = run_infrafeed("build", "--entries", str(small_site), "--out", str(published), timeout=30)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines() == [
        f"{small_site}/{RELEASE_NAME}: (file): {message}",
        "infrafeed: 1 problem in the entries; nothing was written",
    ]
    assert tree(published) == before and mtimes(published) == stamps


# Site settings: (case, text replaced in site.toml, replacement, field, message)
PLAIN = "; the feeds carry this text as plain text, as a name or in titles: remove the tag"
BAD_SETTINGS = [
    ("module slug walking up", 'slug = "cuda"', 'slug = "../../x"',
     "modules[2].slug", f"'../../x' {SLUG}"),
    ("module slug with a newline", 'slug = "cuda"', 'slug = "cuda\\n"',
     "modules[2].slug", f"'cuda\\n' {SLUG}"),
    ("module section with a slash", 'section = "cuda"', 'section = "a/b"',
     "modules[2].section", f"'a/b' {SLUG}"),
    ("javascript: icon", 'favicon = "favicon.svg"', 'favicon = "javascript:x"',
     "favicon", f"the 'javascript:' {SCHEME}"),
    ("feeds URL not http", 'url = "https://example.org/guide/feeds/"', 'url = "file:///etc/"',
     "feeds.url", f"the 'file:' {SCHEME}"),
    # The W3C validator's own code found these in the feeds: an address RSS cannot carry,
    # and tags in texts the feeds carry as plain text.
    ("author e-mail not an address", 'email = "author@example.org"', 'email = "Fixture <a@b>"',
     "author.email", "'Fixture <a@b>' is not an e-mail address: e.g. 'author@example.org'"),
    ("tag in the author's name", 'name = "Fixture Author"', 'name = "Fixture </b>"',
     "author.name", f"'</b>' looks like an HTML tag{PLAIN}"),
    ("tag in the description", 'description = "Nhật ký', 'description = "<script>x</script>',
     "description", f"'<script' looks like an HTML tag{PLAIN}"),
    ("language with an ISO 639-3 code only", 'language = "vi"', 'language = "yue"',
     "language", "'yue' does not start with a language of ISO 639-1 or 639-2 as the W3C "
     "validator lists them, which RSS needs: e.g. 'vi' or 'zh-CN'; for a language with only an "
     "ISO 639-3 code, write its macrolanguage first, e.g. 'zh-yue'"),
    ("address in the author's name", 'name = "Fixture Author"',
     'name = "Fixture Author <a@example.org>"', "author.name",
     "holds the address '<a@example.org>': put it in [author] email, the name alone here"),
    ("tag in a label", "[feeds]", '[labels]\nmodule_short = "<b>M</b>"\n\n[feeds]',
     "labels.module_short", f"'<b>' looks like an HTML tag{PLAIN}"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("old", "new", "field", "message"),
    [pytest.param(o, n, f, m, id=case) for case, o, n, f, m in BAD_SETTINGS],
)
def test_hostile_setting_is_a_clear_error_and_output_stays(
    small_site: Path,
    published: Path,
    run_cli: RunCli,
    old: str,
    new: str,
    field: str,
    message: str,
) -> None:
    before, stamps = tree(published), age(published)
    site = small_site / "site.toml"
    text = site.read_text(encoding="utf-8")
    assert text.count(old) == 1
    site.write_text(text.replace(old, new), encoding="utf-8")
    code, stdout, stderr = build(run_cli, small_site, published)
    assert (code, stdout) == (1, "")
    assert stderr.splitlines()[0] == f"{small_site.as_posix()}/site.toml: {field}: {message}"
    assert tree(published) == before and mtimes(published) == stamps


# --- Escaped: (case, field, value, the text a reader must see) -------------------------

SCRIPT = "<script>alert(1)</script>"
IMG = '<img src=x onerror="alert(1)">'
MARKUP = "AT&T <b>bold</b> ]]> &amp; \"'"
ESCAPED_VALUES = [
    ("script in a title", "title", SCRIPT, SCRIPT),
    ("markup characters in a title", "title", MARKUP, MARKUP),
    ("script and img in a summary", "summary", SCRIPT + IMG, SCRIPT + IMG),
    ("CDATA end in a summary", "summary", "a ]]> b && c < d", "a ]]> b && c < d"),
    ("iframe in a context", "context", *[f'<iframe src="{JS}"></iframe>'] * 2),
    ("link element in a note", "note_text", *[f'<a href="{JS}">click</a>'] * 2),
    ("closing tags in a detail", "detail", *["</li></ul>" + SCRIPT] * 2),
    ("event handler in a cell", "cell", *["<td onclick=alert(1)>x</td>"] * 2),
    ("script in a header", "header", SCRIPT, SCRIPT),
    ("script in code", "summary", f"`{SCRIPT}`", SCRIPT),
    ("entity-encoded scheme is a relative link", "summary", "[x](javascript&colon;alert(1))", "x"),
    ("quote in a link", "summary", '[x](https://example.org/a"onmouseover="alert)', "x"),
    # The W3C validator warns unless "<" and "&" are hexadecimal references (RSS Profile).
    ("a C++ template and an entity in a title", "title",
     "std::vector<float> và AT&amp;T", "std::vector<float> và AT&amp;T"),
    ("RTL override, emoji, combining marks", "title",
     "\u202egnp.exe\u202c 🎉 Tie\u0302\u0301u", "\u202egnp.exe\u202c 🎉 Tiếu"),
]  # fmt: skip


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def visible(fragment: str) -> str:
    parser = _Text()
    parser.feed(fragment)
    parser.close()
    return "".join(parser.parts)


@pytest.mark.parametrize(
    ("field", "value", "shown"),
    [pytest.param(f, v, s, id=case) for case, f, v, s in ESCAPED_VALUES],
)
def test_hostile_text_is_published_as_text(
    small_site: Path, published: Path, run_cli: RunCli, field: str, value: str, shown: str
) -> None:
    """Published as text; or refused with a clear error, the other safe answer."""
    before, stamps = tree(published), age(published)
    (small_site / RELEASE_NAME).write_text(release_text(**{field: value}), encoding="utf-8")
    code, stdout, stderr = build(run_cli, small_site, published)
    if code == 1:
        path = f"{small_site.as_posix()}/{RELEASE_NAME}"
        assert stdout == ""
        assert stderr.startswith(f"{path}: {FIELDS[field]}: "), stderr
        assert stderr.endswith("infrafeed: 1 problem in the entries; nothing was written\n")
        assert tree(published) == before and mtimes(published) == stamps
        return
    assert (code, stderr) == (0, ""), stderr
    assert stdout.startswith("wrote ")
    assert_feeds_valid(published)
    assert_no_active_markup(published)
    for name in ("feed.xml", "atom.xml", "feed.json", "modules/cuda/feed.json"):
        path = published / name
        if field == "title":
            assert f"M2 · Mới · 5.1 {shown}" in item_titles(path), name
        else:
            assert any(shown in visible(html) for _, html in html_fragments(path)), name
    for _, html in html_fragments(published / "feed.json"):
        for href in _hrefs(html):
            assert href.startswith("https://example.org/"), href


def _hrefs(fragment: str) -> list[str]:
    found: list[str] = []

    class Links(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.extend(v or "" for k, v in attrs if k == "href")

    Links().feed(fragment)
    return found


def test_summary_in_rss_description_is_shown_not_run(
    small_site: Path, published: Path, run_cli: RunCli
) -> None:
    """RSS <description> is HTML to readers: text in it must arrive escaped."""
    (small_site / RELEASE_NAME).write_text(release_text(summary=SCRIPT), encoding="utf-8")
    assert build(run_cli, small_site, published)[0] == 0
    rss = parse(published / "feed.xml")
    description = rss.find("channel/item/description").text
    assert SCRIPT not in description  # as typed, it would be markup
    assert SCRIPT in visible(description)  # what a reader shows
    assert unsafe_markup(description) == []


def test_markup_in_site_settings_is_text(
    small_site: Path, published: Path, run_cli: RunCli
) -> None:
    """Characters of markup that make no HTML tag are text (a tag is refused: test_contract)."""
    site = small_site / "site.toml"
    text = site.read_text(encoding="utf-8")
    text = text.replace('title = "Fixture Guide"', 'title = "Fixture & <T> ]]> &amp; <float>"')
    text = text.replace('name = "Lập trình CUDA"', 'name = "CUDA kernel<<<g, b>>>"')
    text = text.replace('name = "Fixture Author"', "name = 'Cao (Lufei) \\ x)'")
    site.write_text(text, encoding="utf-8")
    code, _, stderr = build(run_cli, small_site, published)
    assert (code, stderr) == (0, "")
    assert_feeds_valid(published)
    # RSS <author> is "e-mail (name)": the name comes back whole, as an RFC 822 comment.
    author = parse(published / "feed.xml").find("channel/item/author").text
    assert email.utils.getaddresses([author]) == [("Cao (Lufei) \\ x)", "author@example.org")]
    assert_no_active_markup(published)
    feed = json.loads((published / "modules/cuda/feed.json").read_bytes())
    assert feed["title"] == "Fixture & <T> ]]> &amp; <float> · Module 2 · CUDA kernel<<<g, b>>>"
    atom = parse(published / "modules/cuda/atom.xml")
    assert atom.find("{*}title").text == feed["title"]


@pytest.mark.parametrize("address", ["o'brien@example.org", "r&d@example.org", "a+b@x.y.org"])
def test_an_e_mail_address_rfc_5322_and_the_w3c_validator_take_is_taken(
    small_site: Path, published: Path, run_cli: RunCli, address: str
) -> None:
    site = small_site / "site.toml"
    text = site.read_text(encoding="utf-8")
    site.write_text(text.replace('"author@example.org"', f'"{address}"', 1), encoding="utf-8")
    code, _, stderr = build(run_cli, small_site, published)
    assert (code, stderr) == (0, "")
    assert_feeds_valid(published)
    # (feedparser's own pattern cuts "o'brien" to "brien": the feed holds it whole)
    author = parse(published / "feed.xml").find("channel/item/author").text
    assert author == f"{address} (Fixture Author)"


def test_an_author_name_with_paired_parentheses_is_written_as_it_is(
    small_site: Path, published: Path, run_cli: RunCli
) -> None:
    """Nested comments are RFC 822's own: escaped, they showed backslashes in feedparser."""
    site = small_site / "site.toml"
    text = site.read_text(encoding="utf-8")
    site.write_text(text.replace('"Fixture Author"', '"Cao (Lufei)"', 1), encoding="utf-8")
    code, _, stderr = build(run_cli, small_site, published)
    assert (code, stderr) == (0, "")
    assert_feeds_valid(published)
    author = parse(published / "feed.xml").find("channel/item/author").text
    assert author == "author@example.org (Cao (Lufei))"
    entry = feedparser.parse((published / "feed.xml").read_bytes()).entries[0]
    assert entry.author_detail == {"name": "Cao (Lufei)", "email": "author@example.org"}


def test_settings_the_w3c_validator_found_faults_with_give_clean_feeds(
    small_site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    """Its code found: an offset of +05:45 in RSS and OPML dates ("problematical"), and the
    author's URL and the hub written as typed (a space or a Vietnamese letter is no URI)."""
    site = small_site / "site.toml"
    text = site.read_text(encoding="utf-8").replace('"Asia/Shanghai"', '"Asia/Kathmandu"', 1)
    text = text.replace('"https://example.org/guide/about"', '"https://example.org/guide/về tôi"')
    text = text.replace("\n[feeds]\n", '\n[feeds]\nhub = "https://hub.example.org/my hub"\n')
    site.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    code, _, stderr = build(run_cli, small_site, out)
    assert (code, stderr) == (0, "")
    assert_feeds_valid(out)  # the W3C validator's code included
    rss, atom = parse(out / "feed.xml"), parse(out / "atom.xml")
    # The same instant: 13:00 in Kathmandu (+05:45), 07:15 in UTC.
    assert rss.findtext("channel/item/pubDate") == "Thu, 05 Mar 2026 07:15:00 +0000"
    assert atom.findtext("{*}entry/{*}updated") == "2026-03-05T13:00:00+05:45"
    about = "https://example.org/guide/v%E1%BB%81%20t%C3%B4i"
    assert atom.findtext("{*}author/{*}uri") == about
    assert json.loads((out / "feed.json").read_bytes())["authors"][0]["url"] == about
    hubs = {link.get("href") for link in rss.iterfind("channel/{*}link[@rel='hub']")}
    assert hubs == {"https://hub.example.org/my%20hub"}


def test_nfd_and_nfc_spellings_give_identical_bytes(
    small_site: Path, run_cli: RunCli, tmp_path: Path
) -> None:
    title = "Tối ưu hiệu năng: Tiếng Việt, Ελληνικά, é"
    nfd, nfc = unicodedata.normalize("NFD", title), unicodedata.normalize("NFC", title)
    assert nfd != nfc
    trees = []
    for spelling in (nfd, nfc):
        out = tmp_path / f"output-{len(trees)}"
        (small_site / RELEASE_NAME).write_text(
            release_text(title=spelling, summary=spelling, cell=spelling), encoding="utf-8"
        )
        assert build(run_cli, small_site, out)[0] == 0
        trees.append(tree(out))
        # The manifest's hash of the entry files' bytes differs, as it must.
        inputs = trees[-1][MANIFEST].split(b"\n")[1]
        trees[-1][MANIFEST] = trees[-1][MANIFEST].replace(inputs, b"inputs (digest)")
    assert trees[0] == trees[1]
    assert f"Mới · 5.1 {nfc}".encode() in trees[0]["feed.json"]


# --- Text no TOML file can carry, through the loader's API ----------------------------


@pytest.mark.parametrize("field", sorted(FIELDS))
@pytest.mark.parametrize("value", ["a\ud800b", "\udfff", "x\udc80"], ids=["high", "low", "end"])
def test_lone_surrogates_are_clear_errors(field: str, value: str) -> None:
    """TOML cannot carry them; other front-ends of the loader can."""
    site, release = tables(**{field: value})
    name = f"entries/{RELEASE_NAME}"
    with pytest.raises(DataError) as caught:
        from_data(site, {name: release})
    bad = next(ch for ch in value if "\ud800" <= ch <= "\udfff")
    shown = value.encode("ascii", "backslashreplace").decode()
    expected = {
        "article_id": f"'{shown}' {SLUG}",
        "note_id": f"'{shown}' {SLUG}",
        "number": f'\'{shown}\' is not an article number: write it as printed, e.g. "6.1" or "12"',
    }.get(field, f"contains the character U+{ord(bad):04X}, {XML}")
    assert [str(p) for p in caught.value.problems] == [f"{name}: {FIELDS[field]}: {expected}"]


def test_the_loader_api_gives_what_files_give(small_site: Path) -> None:
    from infrafeed.source.loader import load

    site, release = tables()
    (small_site / RELEASE_NAME).write_text(release_text(), encoding="utf-8")
    from_files = load(small_site)
    name = f"{small_site.as_posix()}/{RELEASE_NAME}"
    from_tables = from_data(site, {name: release})
    assert from_tables.site == from_files.site
    assert from_tables.releases[0] == from_files.releases[0]


def test_the_loader_api_refuses_a_name_no_file_could_be_read_by() -> None:
    """A name with a line feed after ".toml" passed for a release file's name (re's "$")."""
    site, release = tables()
    name = f"entries/{RELEASE_NAME}\n"
    with pytest.raises(DataError) as caught:
        from_data(site, {name: release})
    assert [p.field for p in caught.value.problems] == ["(file name)"]
