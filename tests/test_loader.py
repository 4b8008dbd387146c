"""The loader: good entries load; every kind of mistake gives its exact message."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from conftest import RunCli
from infrafeed.errors import DataError
from infrafeed.feeds.items import build_items
from infrafeed.source.files import read_entries
from infrafeed.source.loader import load
from infrafeed.source.models import Article

GOOD_RELEASE = """\
date = 2026-11-07

[[groups]]
kind = "new"
module = 2

[[groups.articles]]
id = "cuda-warp-reduce"
number = "3.1"
title = "Tối ưu toán tử CUDA Reduce"
summary = "Từ triển khai đơn giản nhất"
"""


def write_release(entries: Path, text: str | bytes, name: str = "2026-11-07.toml") -> str:
    path = entries / "2026" / name
    path.parent.mkdir(exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return f"{entries.as_posix()}/2026/{name}"


def problems(entries: Path) -> list[str]:
    with pytest.raises(DataError) as caught:
        load(entries)
    return [str(p) for p in caught.value.problems]


def test_small_site_loads_newest_first(small_site: Path) -> None:
    changelog = load(small_site)
    dates = [(r.release.date, r.sequence) for r in changelog.releases]
    assert dates == sorted(dates, reverse=True)
    assert [r.anchor for r in changelog.releases] == [
        "2026-03-05-2",
        "2026-03-05",
        "2026-03-02",
        "2026-03-01",
    ]
    assert changelog.site.modules[1].slug == "cuda"


def test_good_release_loads(small_site: Path) -> None:
    write_release(small_site, GOOD_RELEASE)
    release = load(small_site).releases[0].release
    assert release.date == dt.date(2026, 11, 7)
    assert release.groups[0].articles[0].title == "Tối ưu toán tử CUDA Reduce"


def test_thousands_of_mistakes_in_a_file_are_each_counted(small_site: Path) -> None:
    """Each was told in the entries' words, walking the models: 30,000 unknown fields (1 MiB)
    took 14 s (a helper). Past a file's first 1,000, pydantic's words; the count stays."""
    fields = "".join(f"k{i} = 1\n" for i in range(1_005))
    path = write_release(small_site, GOOD_RELEASE + fields)
    found = problems(small_site)
    assert len(found) == 1_005
    assert f"{path}: groups[1].articles[1].k0: unknown field; allowed: " in found[0]
    assert all(": groups[1].articles[1].k" in problem for problem in found)


def test_a_chapter_0_article_is_not_held_to_its_groups_chapter(small_site: Path) -> None:
    """ "0.1" in a group of chapter 1 was an error whose fix could not be made: a chapter is at
    least 1 (a reviewer)."""
    write_release(
        small_site,
        GOOD_RELEASE.replace('"3.1"', '"0.1"').replace("module = 2\n", "module = 2\nchapter = 1\n"),
    )
    assert load(small_site).releases[0].release.groups[0].articles[0].number == "0.1"


@pytest.mark.parametrize(
    "title",
    ["CAFÉ…", "Gruß—Team", "Ý…", "và…", "Thì…", "Café… và… nhiều hơn", "AQUÍ…", "và\u00a0…",
     "Câu hỏi “KV cache là gì…”", "Tóm tắt “nhanh quá…”", "« Qualité\u00a0» du service",
     "MÃ NGUỒN MỞ", "CHƯA XONG, NHƯNG ĐÃ…"],
)  # fmt: skip
@pytest.mark.parametrize("form", ["NFC", "NFD"])
def test_latin_letters_beside_windows_punctuation_are_no_mojibake(
    small_site: Path, title: str, form: str
) -> None:
    """Re-encoded in Windows-1252, "CAFÉ…" is UTF-8 ("CAFɅ"), and "và…" in NFD holds
    Windows-1258's 0xCC: text typed right that code-page heuristics refused (reviewers), and
    ftfy lets pass."""
    import unicodedata

    typed = unicodedata.normalize(form, title)
    write_release(small_site, GOOD_RELEASE.replace("Tối ưu toán tử CUDA Reduce", typed))
    assert load(small_site).releases[0].release.groups[0].articles[0].title == title


@pytest.mark.parametrize(
    ("title", "instead"),
    [("Mục “ĐÃ” và “CHƯA”", "Mục 'ĐÃ' và 'CHƯA'"), ("MÃ\u00a0NGUỒN MỞ", "MÃ NGUỒN MỞ")],
)
def test_capital_a_tilde_before_a_closing_quote_or_no_break_space_reads_as_mojibake(
    small_site: Path, title: str, instead: str
) -> None:
    """ftfy reads "Ã”", "Ã»" and "Ã" before a no-break space as "Ô", "û" and "à" in UTF-8 read
    as Windows-1252: the hand-written heuristics it replaced let these pass; docs/maintainers.md
    gives the way around (straight quotes, a plain space), which passes."""
    write_release(small_site, GOOD_RELEASE.replace("Tối ưu toán tử CUDA Reduce", title))
    assert ["looks like UTF-8 read in another code page" in p for p in problems(small_site)] == [
        True
    ]
    write_release(small_site, GOOD_RELEASE.replace("Tối ưu toán tử CUDA Reduce", instead))
    assert load(small_site).releases[0].release.groups[0].articles[0].title == instead


def test_text_is_normalised_to_nfc(small_site: Path) -> None:
    decomposed = "Tối ưu".encode().decode()
    import unicodedata

    nfd = unicodedata.normalize("NFD", decomposed)
    assert nfd != decomposed
    write_release(small_site, GOOD_RELEASE.replace("Tối ưu", nfd))
    title = load(small_site).releases[0].release.groups[0].articles[0].title
    assert title == unicodedata.normalize("NFC", title)
    assert title.startswith("Tối ưu")


# (what is wrong, the release file's text, the exact message after "path: ")
BAD_RELEASES = [
    (
        "unknown key, with a hint",
        GOOD_RELEASE.replace("summary =", "sumary ="),
        ["groups[1].articles[1].sumary: unknown field; did you mean 'summary'?"],
    ),
    (
        "missing key",
        GOOD_RELEASE.replace('title = "Tối ưu toán tử CUDA Reduce"\n', ""),
        ["groups[1].articles[1].title: is required but missing"],
    ),
    (
        "wrong type",
        GOOD_RELEASE.replace('number = "3.1"', "number = 3.1"),
        ["groups[1].articles[1].number: must be text in quotes, not decimal number 3.1"],
    ),
    (
        "module as a string",
        GOOD_RELEASE.replace("module = 2", 'module = "2"'),
        ["groups[1].module: must be a whole number without quotes, not text '2'"],
    ),
    (
        "date not matching the file name",
        GOOD_RELEASE.replace("2026-11-07", "2026-11-08"),
        [
            "date: is 2026-11-08 but the file is named 2026-11-07.toml; "
            "make the date and the file name agree"
        ],
    ),
    (
        # Both at once: the module was told only once the date was fixed.
        "date not matching the file name, and an unknown module",
        GOOD_RELEASE.replace("2026-11-07", "2026-11-08").replace("module = 2", "module = 7"),
        [
            "date: is 2026-11-08 but the file is named 2026-11-07.toml; "
            "make the date and the file name agree",
            "groups[1].module: unknown module 7; site.toml has modules 1, 2",
        ],
    ),
    (
        "unknown kind",
        GOOD_RELEASE.replace('kind = "new"', 'kind = "fresh"'),
        [
            "groups[1].kind: 'fresh' is not allowed; use one of 'new', 'revised', "
            "'restructured', 'major', 'improved', 'launch' or 'init'"
        ],
    ),
    (
        "unknown module",
        GOOD_RELEASE.replace("module = 2", "module = 7"),
        ["groups[1].module: unknown module 7; site.toml has modules 1, 2"],
    ),
    (
        "unknown module of an article",
        GOOD_RELEASE.replace('number = "3.1"', 'number = "3.1"\nmodule = 9'),
        ["groups[1].articles[1].module: unknown module 9; site.toml has modules 1, 2"],
    ),
    (
        "empty title",
        GOOD_RELEASE.replace('"Tối ưu toán tử CUDA Reduce"', '"  "'),
        ["groups[1].articles[1].title: must not be empty"],
    ),
    (
        "a title of characters that show nothing",  # zero-width space, word joiner, BOM
        GOOD_RELEASE.replace('"Tối ưu toán tử CUDA Reduce"', '"\\u200b\\u2060\\ufeff"'),
        [
            "groups[1].articles[1].title: must not be empty: it holds only characters that "
            "show nothing"
        ],
    ),
    (
        "empty summary",
        GOOD_RELEASE.replace('"Từ triển khai đơn giản nhất"', '""'),
        ["groups[1].articles[1].summary: must not be empty"],
    ),
    (
        "character XML 1.0 forbids",
        GOOD_RELEASE.replace("đơn giản", "đơn\\u0007giản"),
        [
            "groups[1].articles[1].summary: contains the character U+0007, "
            "which XML 1.0 forbids in a feed; remove it"
        ],
    ),
    (
        "id reused for the same kind on the same date",
        GOOD_RELEASE
        + '\n[[groups.articles]]\nid = "cuda-warp-reduce"\ntitle = "Lần nữa"\nsummary = "x"\n',
        [
            "groups[1].articles[2].id: 'cuda-warp-reduce' is already used for a 'new' change on "
            "2026-11-07 ({path} groups[1].articles[1]); give this change its own id"
        ],
    ),
    (
        # A release copied to another date announced its articles as new again (a helper).
        "an article new again on a later date",
        GOOD_RELEASE.replace('"cuda-warp-reduce"', '"cuda-reduce"'),
        [
            "groups[1].articles[1].id: 'cuda-reduce' was already new on 2026-03-05 ({entries}"
            "/2026/2026-03-05.toml groups[1].articles[1]): a later change to that article is of "
            "another kind, such as 'revised'; a new article needs its own id"
        ],
    ),
    (
        # A block copied from the chapter before (a helper, as a maintainer).
        "a number of another chapter than its group's",
        GOOD_RELEASE.replace("module = 2\n", "module = 2\nchapter = 4\n"),
        [
            "groups[1].articles[1].number: 3.1 is a number of chapter 3, but its group's chapter "
            "is 4: fix the number, or set the article's own chapter"
        ],
    ),
    (
        "javascript: URL",
        GOOD_RELEASE + 'page = "javascript:alert(1)"\n',
        [
            "groups[1].articles[1].page: the 'javascript:' scheme is not allowed; use an "
            "http(s) URL or a site-relative path such as /AIInfraGuide/cuda/"
        ],
    ),
    (
        "data: URL inside a summary link",
        GOOD_RELEASE.replace("đơn giản nhất", "[x](data:text/html,hi)"),
        [
            "groups[1].articles[1].summary: link target 'data:text/html,hi': the 'data:' "
            "scheme is not allowed; use an http(s) URL or a site-relative path such as "
            "/AIInfraGuide/cuda/"
        ],
    ),
    (
        "Markdown link title",  # no feed carries it: lost without a word
        GOOD_RELEASE.replace("đơn giản nhất", '[x](/AIInfraGuide/x \\"Tiêu đề\\")'),
        [
            "groups[1].articles[1].summary: link to '/AIInfraGuide/x' has a title (\"Tiêu đề\"), "
            "which the feeds do not carry: drop it, or say it in the link's text"
        ],
    ),
    (
        "strike-through in a summary",  # the page (GFM) strikes it, a feed would not
        GOOD_RELEASE.replace("đơn giản nhất", "~~đơn giản nhất~~"),
        [
            "groups[1].articles[1].summary: '~~' makes strike-through, which the feeds do not "
            "show: remove the '~~' (and say in words what changed), or write '\\~~' to show them"
        ],
    ),
    (
        "image in a summary",
        GOOD_RELEASE.replace("đơn giản nhất", "![sơ đồ](so-do.png)"),
        [
            "groups[1].articles[1].summary: '![sơ đồ](…)' is an image, which the feeds do not "
            "carry: link to it instead, as [sơ đồ](…)"
        ],
    ),
    (
        "heading in a summary",
        GOOD_RELEASE.replace('summary = "', 'summary = "# '),
        [
            "groups[1].articles[1].summary: '# Từ triển khai đơn giản nhất' makes a heading, "
            "which an entry text cannot hold: write a backslash before its first character "
            "('\\#') to show it as text"
        ],
    ),
    (
        "reference link in a summary",
        GOOD_RELEASE.replace("đơn giản nhất", "[đơn giản nhất][ref]"),
        [
            "groups[1].articles[1].summary: '[đơn giản nhất][ref]' is a reference link, which an "
            "entry text cannot hold: write the target inline, as [text](url)"
        ],
    ),
    (
        "protocol-relative URL",
        GOOD_RELEASE + 'page = "//evil.example/x"\n',
        [
            "groups[1].articles[1].page: a URL starting with '//' leaves the site; "
            "write https://host/... instead"
        ],
    ),
    (
        "slug that could walk paths",
        GOOD_RELEASE.replace('id = "cuda-warp-reduce"', 'id = "../etc"'),
        [
            "groups[1].articles[1].id: '../etc' is not a slug: use 1-80 lowercase ASCII "
            "letters, digits and single hyphens, e.g. 'cuda-reduce-optimization'"
        ],
    ),
    (
        "article without a module",
        GOOD_RELEASE.replace("module = 2\n", ""),
        [
            "groups[1].articles[1].module: an article needs a module: set module on the "
            "article or on its group"
        ],
    ),
    (
        "group with nothing in it",
        'date = 2026-11-07\n\n[[groups]]\nkind = "new"\n',
        ["groups[1]: a group needs at least one [[groups.articles]] or [[groups.notes]]"],
    ),
    (
        "title with a line break",
        GOOD_RELEASE.replace('"Tối ưu toán tử CUDA Reduce"', '"Tối ưu\\ntoán tử"'),
        ["groups[1].articles[1].title: must be a single line (no line breaks or tabs)"],
    ),
    (
        "overlong title",
        GOOD_RELEASE.replace('"Tối ưu toán tử CUDA Reduce"', '"' + "x" * 501 + '"'),
        ["groups[1].articles[1].title: is 501 characters long; the limit is 500"],
    ),
    (
        "quoted date",
        GOOD_RELEASE.replace("date = 2026-11-07", 'date = "07/11/2026"'),
        ["date: must be a date without quotes, e.g. 2026-11-07, not text '07/11/2026'"],
    ),
    (
        "quoted ISO date",
        GOOD_RELEASE.replace("date = 2026-11-07", 'date = "2026-11-07"'),
        ["date: must be a date without quotes, e.g. 2026-11-07, not text '2026-11-07'"],
    ),
    (
        "date-time at midnight",
        GOOD_RELEASE.replace("date = 2026-11-07", "date = 2026-11-07T00:00:00"),
        ["date: must be a date without a time of day, e.g. 2026-11-07, not 2026-11-07T00:00:00"],
    ),
    (
        "Unix time for a date",
        GOOD_RELEASE.replace("date = 2026-11-07", "date = 1794009600"),
        ["date: must be a date without quotes, e.g. 2026-11-07, not integer 1794009600"],
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [pytest.param(text, expected, id=what) for what, text, expected in BAD_RELEASES],
)
def test_bad_release_gives_exact_messages(small_site: Path, text: str, expected: list[str]) -> None:
    path = write_release(small_site, text)
    entries = small_site.as_posix()
    assert problems(small_site) == [
        f"{path}: {m.format(path=path, entries=entries)}" for m in expected
    ]


def test_not_utf8_names_file_and_line(small_site: Path) -> None:
    path = write_release(small_site, GOOD_RELEASE.encode("utf-8").replace(b"CUDA", b"CU\xffA"))
    [message] = problems(small_site)
    assert message.startswith(f"{path}:")
    assert message == f"{path}:10: (file): is not UTF-8 (byte 0xff); save the file as UTF-8"


@pytest.mark.parametrize(
    ("old", "new", "line", "why"),
    [
        ('kind = "new"', 'kind = "new', 4,
         'text in quotes is not closed on this line: end it with a straight "'),
        # The parser's words were "Illegal character '\n'", "Cannot overwrite a value" (for a
        # key given no value twice), "Expected newline or end of document after a statement"
        # and "Invalid value" (a helper acting as a maintainer).
        ('kind = "new"', 'kind = "new\u201d', 4,
         'text in quotes is not closed on this line: end it with a straight " (a curly \u201d '
         "does not close it)"),
        ("[[groups]]", '[groups]\nkind = "new"\n[[groups]]', 5,
         "[groups] above is one table; write [[groups]] for each of several groups"),
        ("date = 2026-11-07", "date = 2026-11-7", 1,
         "a date is written YYYY-MM-DD, without quotes: e.g. 2026-11-07"),
        ("date = 2026-11-07", "date = 07/11/2026", 1,
         "a date is written YYYY-MM-DD, without quotes: e.g. 2026-11-07"),
        ("date = 2026-11-07", "date = Nov 7 2026", 1,  # not "text goes in quotes"
         "a date is written YYYY-MM-DD, without quotes: e.g. 2026-11-07"),
        ('number = "3.1"', "number = 3.1.2", 9,  # not "a date is written..."
         "Expected newline or end of document after a statement"),
        ('kind = "new"', "kind = new", 4,
         'Invalid value: text goes in straight quotes, "like this"'),
    ],
)  # fmt: skip
def test_not_toml_names_line_and_fix(
    small_site: Path, old: str, new: str, line: int, why: str
) -> None:
    path = write_release(small_site, GOOD_RELEASE.replace(old, new))
    assert problems(small_site) == [f"{path}:{line}: (toml): not valid TOML: {why}"]


def test_a_text_ending_in_a_line_break_says_where_the_quotes_go(small_site: Path) -> None:
    """A summary whose closing \"\"\" is on a line of its own was told "must not start or end
    with white space", which the maintainer could not see."""
    summary = 'summary = "Từ triển khai đơn giản nhất"'
    path = write_release(small_site, GOOD_RELEASE.replace(summary, 'summary = """\nTừ\n"""'))
    assert problems(small_site) == [
        f"{path}: groups[1].articles[1].summary: must not end with a line break: put the closing "
        '""" right after the text'
    ]


@pytest.mark.parametrize(
    ("zone", "day"),
    [
        ("Asia/Shanghai", "1900-01-01"),  # local mean time: +08:05:43, which no format writes
        ("Africa/Monrovia", "1971-01-01"),  # -00:44:30, until 1972
        ("Asia/Shanghai", "1989-12-31"),  # the W3C validator: "Implausible date"
        ("Asia/Shanghai", "0001-01-01"),
    ],
)
def test_a_release_dated_before_1990_is_refused(small_site: Path, zone: str, day: str) -> None:
    """Year 1 passed, dated +08:05:43, which neither RFC 822 nor RFC 3339 can write; and a date
    before 1990 is one readers and the W3C validator take for a mistake (1026 for 2026)."""
    site = small_site / "site.toml"
    text = site.read_text(encoding="utf-8").replace('"Asia/Shanghai"', f'"{zone}"', 1)
    site.write_text(text, encoding="utf-8")
    path = small_site / day[:4] / f"{day}.toml"
    path.parent.mkdir()
    path.write_text(GOOD_RELEASE.replace("date = 2026-11-07", f"date = {day}"), encoding="utf-8")
    assert problems(small_site) == [
        f"{path.as_posix()}: date: is {day}, before 1990-01-01, which feed readers take for a "
        "mistake: check the year"
    ]


def test_a_true_or_a_date_is_shown_as_toml_writes_it(small_site: Path) -> None:
    text = GOOD_RELEASE.replace("module = 2", "module = true").replace(
        'id = "cuda-warp-reduce"', "id = 2026-11-07"
    )
    path = write_release(small_site, text)
    assert problems(small_site) == [
        f"{path}: groups[1].articles[1].id: must be text in quotes, not date 2026-11-07",
        f"{path}: groups[1].module: must be a whole number without quotes, not true/false true",
    ]


NOTE = """\
date = 2026-11-07

[[groups]]
kind = "improved"

[[groups.notes]]
id = "html"
"""


@pytest.mark.parametrize(
    ("fields", "tag"),
    [
        ('title = "Ví dụ HTML"\ntext = "Nhúng bằng thẻ `<iframe>` và `<div>` vào trang"', None),
        ('text = "Thêm ví dụ dài dòng ở đây trước: thẻ `<iframe>` và `<div>` vào trang"', None),
        ('text = "Thẻ `<iframe>` và `<div>` vào trang hướng dẫn"', "<iframe"),
    ],
)
def test_a_notes_text_may_hold_tags_outside_what_becomes_its_title(
    small_site: Path, fields: str, tag: str | None
) -> None:
    """The whole text was checked, even with a title of its own, and said to become one."""
    path = write_release(small_site, f"{NOTE}{fields}\n")
    if tag is None:
        load(small_site)
        return
    assert problems(small_site) == [
        f"{path}: groups[1].notes[1].text: '{tag}' looks like an HTML tag, in the first clause, "
        "which the feeds take for the note's title, plain text: remove the tag, or give the note "
        "a title"
    ]


def test_a_field_in_the_table_above_its_own_is_told_where_it_belongs(small_site: Path) -> None:
    """Article fields under [[groups]] got "did you mean 'kind'?"; [[groups.articles]] with no
    [[groups]] above it, "must be an array, not table"."""
    text = GOOD_RELEASE.replace("[[groups.articles]]\n", "")
    path = write_release(small_site, text)
    assert problems(small_site) == [
        f"{path}: groups[1].id: unknown field here; it belongs in a [[groups.articles]] or "
        "[[groups.notes]] table",
        f"{path}: groups[1].number: unknown field here; it belongs in a [[groups.articles]] table",
        f"{path}: groups[1].summary: unknown field here; it belongs in a [[groups.articles]] or "
        "[[groups.notes]] table",
        f"{path}: groups[1].title: unknown field here; it belongs in a [[groups.articles]] or "
        "[[groups.notes]] table",
    ]
    text = GOOD_RELEASE.replace('[[groups]]\nkind = "new"\nmodule = 2\n', "")
    path = write_release(small_site, text)
    assert problems(small_site) == [
        f"{path}: groups: must be an array of tables, each started by [[groups]], not a table: "
        "a [[groups.articles]] belongs below one"
    ]


def test_a_date_written_below_a_table_is_told_to_go_to_the_top(small_site: Path) -> None:
    """TOML gives "date = …" below [[groups.articles]] to that table: "date: is required but
    missing" and "…articles[1].date: unknown field" said nothing of why."""
    text = GOOD_RELEASE.replace("date = 2026-11-07\n", "") + "date = 2026-11-07\n"
    path = write_release(small_site, text.replace("Tối ưu", "\\u0001"))
    assert problems(small_site) == [
        f"{path}: date: is written below a table, which makes it groups[1].articles[1].date; "
        "move the line date = … to the top of the file, above the first [[groups]]",
        f"{path}: groups[1].articles[1].title: contains the character U+0001, which XML 1.0 "
        "forbids in a feed; remove it",
    ]


def test_an_invisible_character_is_named_not_printed(small_site: Path) -> None:
    path = write_release(small_site, GOOD_RELEASE.replace('kind = "new"', 'kind = "\\u0085new"'))
    [problem] = problems(small_site)
    assert problem.startswith(f"{path}: groups[1].kind: '\\x85new' is not allowed; use one of ")
    assert problem.endswith("(it holds a character U+0085)")  # a NEL printed broke the line
    write_release(small_site, GOOD_RELEASE.replace('kind = "new"', 'kind = "\\u202enew"'))
    [problem] = problems(small_site)  # printed, it reversed the rest of the line
    assert problem.endswith("(it holds RIGHT-TO-LEFT OVERRIDE U+202E)")


@pytest.mark.parametrize("name", ["2026-11-07.TOML", "2026-11-07.toml.txt", "2026-11-07.toml "])
def test_a_release_file_misnamed_by_an_editor_is_an_error(small_site: Path, name: str) -> None:
    """It was a warning ('not an entry file; ignored'): check said ok, and the release was left
    out of every feed (".TOML"; then Notepad's ".toml.txt" and a trailing space, from a
    helper)."""
    write_release(small_site, GOOD_RELEASE, name)
    assert problems(small_site) == [
        f"{small_site.as_posix()}/2026/{name}: (file): is not read: name it '2026-11-07.toml'"
    ]


def test_a_broken_symbolic_link_is_named_so(small_site: Path) -> None:
    (small_site / "2026" / "2026-11-08.toml").symlink_to("missing.toml")
    assert problems(small_site) == [
        f"{small_site.as_posix()}/2026/2026-11-08.toml: (file): is a symbolic link to a file "
        "that does not exist"
    ]


def test_a_flood_of_problems_is_cut(small_site: Path, run_cli: RunCli) -> None:
    details = ", ".join(["1"] * 5_000)
    write_release(small_site, f'{NOTE}text = "Ghi chú"\ndetails = [{details}]\n')
    code, _, err = run_cli("check", "--entries", str(small_site))
    lines = err.splitlines()
    assert code == 1 and len(lines) == 202 and lines[-2] == "... and 4800 more"
    assert lines[-1] == "infrafeed: 5000 problems in the entries"


def test_a_groups_field_in_a_change_is_told_where_it_belongs(small_site: Path) -> None:
    text = GOOD_RELEASE.replace(
        'id = "cuda-warp-reduce"', 'id = "cuda-warp-reduce"\nkind = "revised"'
    )
    path = write_release(small_site, text)
    assert problems(small_site) == [
        f"{path}: groups[1].articles[1].kind: unknown field here; it is a field of the "
        "[[groups]] table above, for all its changes: put a change with another kind in a group "
        "of its own"
    ]


def test_a_field_in_a_notes_table_is_not_sent_to_the_group(small_site: Path) -> None:
    table = '\n[groups.notes.table]\ntitle = "Dàn ý"\nheader = ["a"]\nrows = [["b"]]\n'
    path = write_release(small_site, f'{NOTE}text = "Ghi chú"\n{table}')
    assert problems(small_site) == [
        f"{path}: groups[1].notes[1].table.title: unknown field; allowed: header, rows"
    ]


def test_a_misspelt_field_of_a_kinds_label_gets_its_hint(small_site: Path) -> None:
    """[kinds.new] is a table of tables: 'new' is a key, not a field (the hint listed nothing)."""
    settings = small_site / "site.toml"
    text = settings.read_text(encoding="utf-8")
    start = text.index("[kinds.new]")
    end = text.index("short = ", start)
    settings.write_text(text[:end] + "shrot = " + text[end + 8 :], encoding="utf-8")
    assert problems(small_site) == [
        f"{settings}: kinds.new.short: is required but missing",
        f"{settings}: kinds.new.shrot: unknown field; did you mean 'short'?",
    ]


def test_a_single_table_for_an_array_is_not_given_a_made_up_table(small_site: Path) -> None:
    """[groups] for [[groups]] was told "a [[groups.kind]] belongs below one"."""
    path = write_release(small_site, 'date = 2026-11-07\n\n[groups]\nkind = "new"\n')
    assert problems(small_site) == [
        f"{path}: groups: must be an array of tables, each started by [[groups]], not one table "
        "[groups]"
    ]


def test_a_look_alike_letter_is_named(small_site: Path) -> None:
    """A Cyrillic letter that looks Latin made a right-looking word wrong, unexplained."""
    path = write_release(small_site, GOOD_RELEASE.replace('kind = "new"', 'kind = "n\u0435w"'))
    [message] = problems(small_site)
    assert message.startswith(
        f"{path}: groups[1].kind: 'n\u0435w' is not allowed; use one of 'new'"
    )
    assert message.endswith("(it holds '\u0435', CYRILLIC SMALL LETTER IE U+0435)")
    # A comment above holds U+2028, which str.splitlines() also ends a line at: TOML does not.
    text = GOOD_RELEASE.replace('kind = "new"', '# a\u2028b\nk\u0456nd = "new"')
    path = write_release(small_site, text)
    assert problems(small_site) == [
        f"{path}:5: (toml): not valid TOML: Expected '=' after a key in a key/value pair (a key "
        "holds '\u0456', CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I U+0456)"
    ]


INVALID = 'Invalid value: text goes in straight quotes, "like this"'


@pytest.mark.parametrize(
    ("kind", "why"),
    [
        ("kind = \u201cnew\u201d", f"{INVALID} (the value holds '\u201c', LEFT DOUBLE "),
        ('kind =\u00a0"new"', f"{INVALID} (the value holds '\u00a0', NO-BREAK SPACE "),
        ('kind\u00a0= "new"', "Expected '=' after a key in a key/value pair (a key holds '\u00a0'"),
    ],
)
def test_typographic_quotes_and_no_break_spaces_are_named(
    small_site: Path, kind: str, why: str
) -> None:
    """What an editor's autocorrect writes: the line was "Invalid value", nothing more."""
    path = write_release(small_site, GOOD_RELEASE.replace('kind = "new"', kind))
    [message] = problems(small_site)
    assert message.startswith(f"{path}:4: (toml): not valid TOML: {why}")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('extra = "\\e"', "Unescaped '\\' in a string"),
        ('extra = "\\x41"', "Unescaped '\\' in a string"),
        ("extra = {a = 1,\nb = 2}", "Invalid initial character for a key part"),
        ("extra = 07:32", "Expected newline or end of document after a statement"),
    ],
)
def test_toml_1_1_is_refused_as_tomllib_refuses_it(
    small_site: Path, line: str, message: str
) -> None:
    # The loader parses with tomli when it is installed; versions from 2.3 read
    # TOML 1.1, which Python 3.11's tomllib refuses. A site must not depend on
    # which parser a machine has.
    path = write_release(small_site, f"{GOOD_RELEASE}{line}\n")
    number = GOOD_RELEASE.count("\n") + 1
    assert problems(small_site) == [f"{path}:{number}: (toml): not valid TOML: {message}"]


@pytest.mark.parametrize("depth", [2_000, 200_000])
def test_deeply_nested_toml_is_refused(small_site: Path, depth: int) -> None:
    text = f"{GOOD_RELEASE}extra = {'[' * depth}{']' * depth}\n"
    path = write_release(small_site, text)
    assert problems(small_site) == [
        f"{path}: (toml): not valid TOML: arrays or tables nested too deeply"
    ]


def test_a_value_nested_hundreds_deep_is_shown_cut(small_site: Path) -> None:
    """Below the parser's limit, 500 arrays deep: the message showing the value recursed once per
    level, and the check ended in an internal error."""
    deep = f"{'[' * 500}1{']' * 500}"
    text = GOOD_RELEASE.replace("module = 2", f"module = {deep}")
    path = write_release(small_site, text.replace('id = "cuda-warp-reduce"', f"id = {deep}"))
    shown = f"{'[' * 20}…{']' * 20}"
    assert problems(small_site) == [
        f"{path}: groups[1].articles[1].id: must be text in quotes, not array {shown}",
        f"{path}: groups[1].module: must be a whole number without quotes, not array {shown}",
    ]


@pytest.mark.parametrize("depth", [5_000, 100_000])
@pytest.mark.parametrize("part", ["k", '"k\\""', "'k'"], ids=["bare", "quoted", "literal"])
def test_deeply_dotted_key_is_refused(small_site: Path, depth: int, part: str) -> None:
    # The parser keeps every prefix of a dotted key: memory grows with its square, and a
    # 1 MiB file of "k.k.k..." would take gigabytes.
    text = f"{GOOD_RELEASE}{'.'.join([part] * depth)} = 1\n"
    path = write_release(small_site, text)
    number = GOOD_RELEASE.count("\n") + 1
    assert problems(small_site) == [
        f"{path}:{number}: (toml): not valid TOML: arrays or tables nested too deeply"
    ]


def test_a_number_of_thousands_of_digits_is_refused(small_site: Path) -> None:
    # Python reads at most 4300 decimal digits into an integer (sys.get_int_max_str_digits).
    path = write_release(small_site, f"{GOOD_RELEASE}extra = 1{'0' * 5000}\n")
    number = GOOD_RELEASE.count("\n") + 1
    assert problems(small_site) == [
        f"{path}:{number}: (toml): not valid TOML: a number of thousands of digits; "
        "write one of the size the field needs"
    ]
    # In hexadecimal it is read, but cannot be shown in decimal.
    huge = f"0x{'f' * 4000}"
    text = GOOD_RELEASE.replace("module = 2", f"module = {huge}").replace('"new"', huge)
    path = write_release(small_site, text.replace('"cuda-warp-reduce"', f"[{huge}]"))
    assert problems(small_site) == [
        f"{path}: groups[1].articles[1].id: must be text in quotes, not array",
        f"{path}: groups[1].kind: a number of thousands of digits is not allowed; use one of "
        "'new', 'revised', 'restructured', 'major', 'improved', 'launch' or 'init'",
        f"{path}: groups[1].module: a number of thousands of digits is out of range: "
        "input should be less than or equal to 999",
    ]


@pytest.mark.parametrize("cell", ["`a\\|b`", "**x `grep 'a\\|b'`**"])
def test_code_with_a_backslash_bar_in_a_table_cell_is_refused(small_site: Path, cell: str) -> None:
    """The site's GFM table split the cell there, or dropped the backslash, in code too."""
    table = f'table = {{ header = ["A"], rows = [["ok"], [{json.dumps(cell)}]] }}\n'
    note = 'date = 2026-11-07\n[[groups]]\nkind = "new"\nmodule = 2\n[[groups.notes]]\n'
    path = write_release(small_site, note + 'id = "n"\ntext = "Bảng"\n' + table)
    assert problems(small_site) == [
        f"{path}: groups[1].notes[1].table: row 2 has code with '\\|', which the page's table "
        "cannot show (it shows '|' or splits the cell there); move that code out of the table"
    ]


def test_file_not_named_by_date(small_site: Path) -> None:
    path = write_release(small_site, GOOD_RELEASE, name="november.toml")
    assert problems(small_site) == [
        f"{path}: (file name): a release file is named by its date, YYYY-MM-DD.toml "
        "(or YYYY-MM-DD-2.toml for a second release that day)"
    ]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('date = 2026-11-07\n[groups]\nkind = "new"\n[groups]\nkind = "new"\n',
         ":4: (toml): not valid TOML: [groups] is declared twice; write [[groups]] for each of "
         "several groups"),
        ("date = 2026-11-07\ndate = 2026-11-07\n",
         ":2: (toml): not valid TOML: a key is given a value twice; keep one"),
        # The line is tomli's own, not read back out of its message, which may quote the key.
        ("date = 2026-11-07\n['(at line 1, column 2)']\n['(at line 1, column 2)']\n",
         ":3: (toml): not valid TOML: [(at line 1, column 2)] is declared twice; put its keys "
         "under one [(at line 1, column 2)]"),
        ('date = 2026-11-07\n[[groups]]\nkind = "new"\n[groups.notes]\nid = "a"\ntext = "t"\n',
         ": groups[1].notes: must be an array of tables, each started by [[groups.notes]], not "
         "one table [groups.notes]"),
        ('date = 12:00:00\n[[groups]]\nkind = [{ a = 1 }]\n[[groups.notes]]\nid = "a"\n'
         'text = "t"\n',
         ": date: must be a date without quotes, e.g. 2026-11-07, not time 12:00:00\n"
         ": groups[1].kind: [{ 'a' = 1 }] is not allowed; use one of 'new', 'revised', "
         "'restructured', 'major', 'improved', 'launch' or 'init'"),
        ('date = 2026-11-07\n[[groups]]\nkind = "' + "x" * 600 + '"\n[[groups.notes]]\n'
         'id = "a"\ntext = "t"\n',
         f": groups[1].kind: '{'x' * 59}… is not allowed; use one of 'new', 'revised', "
         "'restructured', 'major', 'improved', 'launch' or 'init'"),
    ],
)  # fmt: skip
def test_toml_mistakes_in_the_words_of_toml(small_site: Path, text: str, why: str) -> None:
    """Python's reprs and the parser's "Cannot declare ('groups',) twice" were shown as is."""
    path = write_release(small_site, text)
    assert problems(small_site) == [path + line for line in why.split("\n")]


def test_a_table_declared_twice_is_told_the_right_fix(small_site: Path) -> None:
    """Every table declared twice was told to write [[…]], which only arrays of tables take."""
    site = small_site / "site.toml"
    text = site.read_text(encoding="utf-8")
    site.write_text(text + "\n[feeds]\nmax_items = 5\n", encoding="utf-8")
    line = len(text.splitlines()) + 2
    assert problems(small_site) == [
        f"{site.as_posix()}:{line}: (toml): not valid TOML: [feeds] is declared twice; put its "
        "keys under one [feeds]"
    ]


@pytest.mark.parametrize("name", ["2026-02-30.toml", "0000-00-00.toml", "2026-13-01-2.toml"])
def test_file_named_by_a_day_that_does_not_exist(small_site: Path, name: str) -> None:
    # Not "make the date and the file name agree" (no date can) nor "move it to the folder 0000".
    path = write_release(small_site, GOOD_RELEASE, name=name)
    assert problems(small_site) == [
        f"{path}: (file name): {name[:10]} is not a date (no such day); a release file is "
        "named by its date, YYYY-MM-DD.toml (or YYYY-MM-DD-2.toml for a second release that day)"
    ]


@pytest.mark.parametrize("copy", ["drafts/2026-03-05-2.toml", "2026-03-05-2.toml"])
def test_a_release_is_one_file_whatever_the_folder(
    small_site: Path, run_cli: RunCli, tmp_path: Path, copy: str
) -> None:
    """A copy in another folder was published too: its items twice, the page's heading twice
    (a page import then refused). The copy is named; its ids are not reported again."""
    (small_site / copy).parent.mkdir(exist_ok=True)
    shutil.copy(small_site / "2026" / "2026-03-05-2.toml", small_site / copy)
    first, later = sorted(
        [f"{small_site.as_posix()}/{copy}", f"{small_site.as_posix()}/2026/2026-03-05-2.toml"]
    )
    expected = (
        f"{later}: (file name): {first} is the same release of 2026-03-05; a day's later "
        "releases are 2026-03-05-2.toml, 2026-03-05-3.toml...: rename this file, or delete it "
        "if it is a copy"
    )
    assert problems(small_site) == [expected]
    code, _, stderr = run_cli("build", "--entries", str(small_site), "--out", str(tmp_path / "o"))
    assert code == 1 and expected in stderr


def test_at_most_twelve_releases_a_day(small_site: Path) -> None:
    # A day's N-th release is dated N-1 hours after noon: a 13th would be dated the next day.
    twelfth = write_release(small_site, GOOD_RELEASE, name="2026-11-07-12.toml")
    changelog = load(small_site)
    assert (changelog.releases[0].anchor, changelog.releases[0].sequence) == ("2026-11-07-12", 12)
    dated = {i.published.date() for i in build_items(changelog) if i.source.startswith(twelfth)}
    assert dated == {dt.date(2026, 11, 7)}
    text = GOOD_RELEASE.replace('"cuda-warp-reduce"', '"cuda-scan"')
    thirteenth = write_release(small_site, text, name="2026-11-07-13.toml")
    assert problems(small_site) == [
        f"{thirteenth}: (file name): at most 12 releases a day: number them 2026-11-07-2.toml "
        "to 2026-11-07-12.toml; put this one's changes in 2026-11-07-12.toml or release them "
        "on a later day"
    ]


def test_at_most_3600_changes_a_release(small_site: Path) -> None:
    # A release's items are one second apart after its hour (feeds/items.py).
    note = '[[groups.notes]]\nid = "n{}"\ntext = "Sửa lỗi chính tả"\n'
    text = 'date = 2026-11-07\n[[groups]]\nkind = "revised"\n'
    path = write_release(small_site, text + "".join(note.format(n) for n in range(3_600)))
    assert path in {rf.path for rf in load(small_site).releases}
    write_release(small_site, text + "".join(note.format(n) for n in range(3_601)))
    assert problems(small_site) == [
        f"{path}: groups: holds 3601 changes; a release holds at most 3600"
    ]


def test_oversized_file(small_site: Path) -> None:
    path = write_release(small_site, GOOD_RELEASE + "#" * 1_048_577 + "\n")
    [message] = problems(small_site)
    assert message.startswith(f"{path}: (file): is ")
    assert message.endswith("bytes; the limit is 1048576")


def test_three_mistakes_three_errors_sorted(small_site: Path) -> None:
    text = (
        GOOD_RELEASE.replace('kind = "new"', 'kind = "neu"')
        .replace('title = "Tối ưu toán tử CUDA Reduce"', 'title = ""')
        .replace("summary =", "summery =")
    )
    path = write_release(small_site, text)
    found = problems(small_site)
    assert len(found) == 3
    assert found == sorted(found)
    assert all(m.startswith(f"{path}: groups[1].") for m in found)
    assert [m.split(": ")[1] for m in found] == [
        "groups[1].articles[1].summery",
        "groups[1].articles[1].title",
        "groups[1].kind",
    ]


def test_problems_across_files_are_all_reported(small_site: Path) -> None:
    write_release(small_site, GOOD_RELEASE.replace("module = 2", "module = 9"))
    write_release(small_site, "date = [", name="2026-11-08.toml")
    site = small_site / "site.toml"
    site.write_text(site.read_text(encoding="utf-8").replace("timezone =", "tz ="), "utf-8")
    found = problems(small_site)
    # Modules are checked against the site's list only once site.toml is valid.
    assert len(found) == 3
    assert any("2026-11-08.toml: (toml): not valid TOML: Invalid value" in m for m in found)
    assert any("site.toml: tz: unknown field; allowed: author, changelog" in m for m in found)
    assert any("site.toml: timezone: is required but missing" in m for m in found)


@pytest.mark.parametrize(
    ("words", "why"),
    [
        ('heading = "Theo dõi {sitee}"', "heading: '{sitee}' is not filled in; here infrafeed "
         "fills in {site}"),
        ('eyebrow = "Nguồn tin {site}"', "eyebrow: '{site}' is not filled in; here infrafeed "
         "fills in nothing"),
    ],
)  # fmt: skip
def test_a_name_the_pages_do_not_fill_in_is_refused(small_site: Path, words: str, why: str) -> None:
    """A misspelled {name} was published as typed on the feeds' pages."""
    site = small_site / "site.toml"
    site.write_text(site.read_text(encoding="utf-8") + f"\n[words]\n{words}\n", "utf-8")
    assert problems(small_site) == [f"{small_site.as_posix()}/site.toml: words: {why}"]


@pytest.mark.parametrize("fmt", ["%A %d/%m", "%Q", "%Y%n", "%d/%m/%"])
def test_a_date_format_with_more_than_numbers_is_refused(small_site: Path, fmt: str) -> None:
    """Names of days and months come from the build machine's locale; "%Q" was shown as is."""
    site = small_site / "site.toml"
    site.write_text(site.read_text(encoding="utf-8") + f'\n[words]\ndate = "{fmt}"\n', "utf-8")
    assert problems(small_site) == [
        f"{small_site.as_posix()}/site.toml: words.date: '{fmt}' may use only %d, %m, %Y, %y "
        "and %%: the names of days and months would be in the build machine's language, not "
        "the site's"
    ]


# site.toml's text replaced: (case, old, new, the start of a message after "path: ")
WRONG_FORM_SETTINGS = [
    ("language not a tag", 'language = "vi"', 'language = "vietnamese"',
     "language: 'vietnamese' is not a language tag (BCP 47): e.g. 'vi', 'en' or 'zh-CN'"),
    ("authority in capitals", 'authority = "example.org"', 'authority = "Example.org"',
     "ids.authority: 'Example.org' is not a domain name you own, in lowercase, e.g. "
     "'caomaolufei.github.io'"),
    ("unknown kind", "[kinds.new]", "[kinds.neu]",
     "kinds.neu: 'neu' is not allowed; use one of 'new', "),
]  # fmt: skip


@pytest.mark.parametrize(
    ("old", "new", "why"), [pytest.param(o, n, w, id=case) for case, o, n, w in WRONG_FORM_SETTINGS]
)
def test_site_settings_of_the_wrong_form_say_the_right_one(
    small_site: Path, old: str, new: str, why: str
) -> None:
    """A regular expression was the message ('has the wrong form (^[a-z]{2,3}...$)'), and a
    kind's table was the field kinds.neu.[key]."""
    site = small_site / "site.toml"
    text = site.read_text(encoding="utf-8")
    assert old in text
    site.write_text(text.replace(old, new, 1), "utf-8")
    assert any(m.startswith(f"{site.as_posix()}: {why}") for m in problems(small_site))


# site.toml's text replaced: (case, old, new, the message after "path: ")
CLASHING_SETTINGS = [
    ("a module slug twice", 'slug = "cuda"', 'slug = "prerequisites"',
     "modules: slug prerequisites is used by modules[1] and modules[2]"),
    ("a module number twice", "number = 2", "number = 1",
     "modules: number 1 is used by modules[1] and modules[2]"),
    ("a kind without a label", '[kinds.new]\nheading = "Nội dung mới"\nshort = "Mới"\n', "",
     "kinds: add a label for new"),
    # A helper's find: on the page, the kind's heading took the release's anchor.
    ("a heading that is a release's anchor", 'heading = "Nội dung mới"', 'heading = "2026-03-05"',
     "kinds.new.heading: '2026-03-05' would have the anchor #2026-03-05, a release's, which "
     "feed items link to; write the kind's name"),
    ("a heading that is a later release's anchor", 'heading = "Nội dung mới"',
     'heading = "2026-03-05 (2)"',
     "kinds.new.heading: '2026-03-05 (2)' would have the anchor #2026-03-05-2, a release's, "
     "which feed items link to; write the kind's name"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("old", "new", "why"), [pytest.param(o, n, w, id=case) for case, o, n, w in CLASHING_SETTINGS]
)
def test_settings_that_clash_name_the_field(small_site: Path, old: str, new: str, why: str) -> None:
    """They were reported at '(file)', the field only in the words."""
    site = small_site / "site.toml"
    text = site.read_text(encoding="utf-8")
    assert text.count(old) == 1
    site.write_text(text.replace(old, new), "utf-8")
    assert problems(small_site) == [f"{site.as_posix()}: {why}"]


@pytest.mark.parametrize(
    "zone",
    # "Asia" is a folder of the zone database, and a name too long is one no file system has;
    # "localtime" and the rest are files of the system's database, not zones: the build
    # machine's own zone, POSIX rules, leap-second clocks.
    [
        "Mars/Olympus",
        "Asia",
        "x" * 300,
        "localtime",
        "posixrules",
        "posix/Asia/Shanghai",
        "right/Asia/Shanghai",
        "Factory",
    ],
)
def test_bad_site_settings(small_site: Path, zone: str) -> None:
    site = small_site / "site.toml"
    text = site.read_text(encoding="utf-8")
    site.write_text(text.replace('timezone = "Asia/Shanghai"', f'timezone = "{zone}"'), "utf-8")
    assert problems(small_site) == [
        f"{small_site.as_posix()}/site.toml: timezone: '{zone[:100]}' is not an IANA time "
        "zone; use a name such as 'Asia/Shanghai'"
    ]


@pytest.mark.parametrize(
    ("setting", "field", "shown"),
    [
        ('[ids]\nauthority = "example.org"\ndate = "2026-01-01"', "ids.date", "text '2026-01-01'"),
        # Would mint every item id with 1970-01-01.
        ('[ids]\nauthority = "example.org"\ndate = 0', "ids.date", "integer 0"),
        ('[page]\npub_date = "2026-01-01"', "page.pub_date", "text '2026-01-01'"),
    ],
)
def test_site_dates_are_toml_dates(small_site: Path, setting: str, field: str, shown: str) -> None:
    site = small_site / "site.toml"
    ids = '[ids]\nauthority = "example.org"\ndate = 2026-01-01'
    text = site.read_text(encoding="utf-8")
    assert text.count(ids) == 1
    site.write_text(text.replace(ids, setting) if setting.startswith("[ids]") else
                    f"{text}\n{setting}\n", "utf-8")  # fmt: skip
    assert problems(small_site) == [
        f"{small_site.as_posix()}/site.toml: {field}: must be a date without quotes, "
        f"e.g. 2026-11-07, not {shown}"
    ]


@pytest.mark.parametrize("heading", ["cải  THIỆN nội dung", "✨ Cải thiện nội dung:"])
def test_a_kind_heading_names_one_kind(small_site: Path, heading: str) -> None:
    """Headings are compared as import reads them: an emoji or a colon at the end made two
    kinds' headings one on a page, and the items of one came back as the other."""
    site = small_site / "site.toml"
    text = site.read_text(encoding="utf-8")
    site.write_text(
        text.replace("[kinds.new]\n", f'[kinds.new]\nheadings = ["Added", "{heading}"]\n'),
        "utf-8",
    )
    assert problems(small_site) == [
        f"{small_site.as_posix()}/site.toml: kinds: 'Cải thiện nội dung' is a heading "
        "of both 'new' and 'improved'"
    ]


def test_missing_folder(tmp_path: Path) -> None:
    assert problems(tmp_path / "nope") == [f"{tmp_path / 'nope'}: (folder): no such folder"]


def test_hidden_files_are_ignored(small_site: Path) -> None:
    hidden = small_site / "2026" / ".#2026-11-07.toml"
    hidden.write_text("garbage", encoding="utf-8")
    releases = load(small_site).releases
    assert releases and all(".#" not in rf.path for rf in releases)
    relatives = [f.relative for f in read_entries(small_site, "0").releases]
    assert "2026/2026-03-05.toml" in relatives  # names relative to the entries folder
    assert hidden.relative_to(small_site).as_posix() not in relatives


def xml_forbidden(ch: str) -> bool:
    """XML 1.0's forbidden and discouraged characters, by code point (see models.py), and
    U+FFFD, which the W3C validator warns of."""
    cp = ord(ch)
    return (
        cp == 0xFFFD
        or cp <= 0x08
        or cp in (0x0B, 0x0C)
        or 0x0E <= cp <= 0x1F
        or 0x7F <= cp <= 0x9F
        or 0xD800 <= cp <= 0xDFFF
        or 0xFDD0 <= cp <= 0xFDEF
        or cp & 0xFFFE == 0xFFFE
    )


# Allowed and forbidden characters of every plane, the noncharacters beside their neighbours.
XML_PROBES = [
    *"ađ学\t\n\x00\x07\x1f\x7f\x85\x9f\ufdd0\ufdef\ufdf0\ufffd\ufffe\uffff",
    *"\U0001f389\U0001fffd\U0001fffe\U0001ffff\U00020000\U0002fffe\U0010fffd\U0010ffff",
]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(XML_PROBES), min_size=1, max_size=12).map("".join))
def test_the_first_character_xml_forbids_is_named(text: str) -> None:
    value = f"x{text}x"
    first = next((ch for ch in value if xml_forbidden(ch)), None)
    try:
        Article(id="a", title="t", summary=value)
    except ValidationError as exc:
        assert first is not None
        message = exc.errors()[0]["msg"]
        assert message.startswith(f"contains the character U+{ord(first):04X},"), message
    else:
        assert first is None


@pytest.mark.parametrize("spelled", [".", "entries", "./entries", "entries/", "{tmp}/entries"])
def test_files_are_named_as_the_entries_folder_was_spelled(
    spelled: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "entries" / "2026").mkdir(parents=True)
    (tmp_path / "entries" / "2026" / "2026-03-01.toml").touch()
    folder = Path(spelled.format(tmp=tmp_path))
    if spelled == ".":
        monkeypatch.chdir(tmp_path / "entries")
    snapshot = read_entries(folder, "0")
    assert [f.shown for f in snapshot.releases] == [(folder / "2026/2026-03-01.toml").as_posix()]
    assert snapshot.site.shown == (folder / "site.toml").as_posix()


def test_the_release_files_are_every_toml_file_but_hidden_ones(tmp_path: Path) -> None:
    entries = tmp_path / "entries"
    for name in (
        "site.toml",
        "2026/2026-01-01.toml",
        "2026/2026-01-01-2.toml",
        "2026/.2026-01-02.toml.swp",
        "2026/.hidden.toml",
        ".git/2026-01-03.toml",
        "2026/nested/deeper/2026-01-04.toml",
        "2026/notes.txt",
        "2026/UPPER.TOML",
        "2026/.toml",
    ):
        (entries / name).parent.mkdir(parents=True, exist_ok=True)
        (entries / name).write_text("date = 2026-01-01\n", encoding="utf-8")
    (entries / "2026/2026-01-05.toml").mkdir()  # a folder named like a release
    (entries / "2026/2026-01-06.toml").symlink_to("2026-01-01.toml")
    (entries / "linked").symlink_to(entries / "2026", target_is_directory=True)
    (entries / "2026/2026-01-07.toml").symlink_to("missing.toml")
    # Hidden names skipped, names matched with case, a linked folder not walked into.
    assert [f.relative for f in read_entries(entries, "0").releases] == [
        "2026/2026-01-01-2.toml",
        "2026/2026-01-01.toml",
        "2026/2026-01-05.toml",
        "2026/2026-01-06.toml",
        "2026/2026-01-07.toml",
        "2026/nested/deeper/2026-01-04.toml",
    ]
