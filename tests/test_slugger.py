"""The github-slugger port agrees with github-slugger's own test fixtures."""

from __future__ import annotations

from slugger import Slugger, astro_heading_ids

# github-slugger's test/fixtures.json, in order: one slugger reads them all, so
# repeats are numbered.
UPSTREAM = [
    ("alpha", "alpha"),
    ("alpha", "alpha-1"),
    ("bravoCharlieDelta", "bravocharliedelta"),
    ("__proto__", "__proto__"),
    ("__proto__", "__proto__-1"),
    ("hasOwnProperty", "hasownproperty"),
    ("echo", "echo"),
    ("echo", "echo-1"),
    ("echo 1", "echo-1-1"),
    ("echo-1", "echo-1-2"),
    ("echo", "echo-2"),
    ("foxtrot-1", "foxtrot-1"),
    ("foxtrot", "foxtrot"),
    ("foxtrot", "foxtrot-2"),
    ("heading with a - dash", "heading-with-a---dash"),
    ("heading with an _ underscore", "heading-with-an-_-underscore"),
    ("heading with a period.txt", "heading-with-a-periodtxt"),
    (
        "exchange.bind_headers(exchange, routing [, bindCallback])",
        "exchangebind_headersexchange-routing--bindcallback",
    ),
    (" ", "-"),
    (" a", "-a"),
    ("a ", "a-"),
    (" a ", "-a-"),
    ("-a-", "-a--1"),
    ("apostrophe’s should be trimmed", "apostrophes-should-be-trimmed"),
    ("golf", "golf"),
    ("golf", "golf-1"),
    ("golf", "golf-2"),
    ("I ♥ unicode", "i--unicode"),
    ("dash-dash", "dash-dash"),
    ("en–dash", "endash"),
    ("em–dash", "emdash"),
    ("😄 unicode emoji", "-unicode-emoji"),
    ("😄-😄 unicode emoji", "--unicode-emoji"),
    ("😄_😄 unicode emoji", "_-unicode-emoji"),
    ("😄 - an emoji", "---an-emoji"),
    (":smile: - a gemoji", "smile---a-gemoji"),
    ("Привет", "привет"),
    ("Профили пользователей", "профили-пользователей"),
    ("Привет non-latin 你好", "привет-non-latin-你好"),
    (":ok: No underscore", "ok-no-underscore"),
    (":ok_hand: Single", "ok_hand-single"),
]


def test_port_matches_github_slugger_fixtures() -> None:
    slugger = Slugger()
    assert [(text, slugger.slug(text)) for text, _ in UPSTREAM] == UPSTREAM


def test_astro_cleans_hyphens_and_numbers_repeats() -> None:
    texts = ["2026-11-07 (2)", "Nội dung mới", "2026-11-07", "Nội dung mới", "😄 - an emoji "]
    assert astro_heading_ids(texts) == [
        "2026-11-07-2",
        "nội-dung-mới",
        "2026-11-07",
        "nội-dung-mới-1",
        "an-emoji",
    ]
