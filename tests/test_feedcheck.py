"""The W3C-rules checker must catch each rule it claims to check (it can fail)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from feedcheck import check_atom, check_json, check_rss
from infrafeed.build import build
from w3c import w3c_problems

BASE = "https://example.org/guide/feeds/"


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    from conftest import SMALL_SITE

    root = tmp_path_factory.mktemp("good")
    shutil.copytree(SMALL_SITE, root / "entries")  # a build writes beside the entries
    out = root / "out"
    build(root / "entries", out)
    return {
        name: (out / name).read_text(encoding="utf-8")
        for name in ("feed.xml", "atom.xml", "feed.json")
    }


RSS_BREAKAGES = [
    ("MissingAtomSelfLink", 'rel="self"', 'rel="related"'),
    ("SelfDoesntMatchLocation", "feeds/feed.xml", "feeds/other.xml"),
    ("InvalidHttpGUID", 'isPermaLink="false"', 'isPermaLink="true"'),
    ("InvalidRFC2822Date", "Thu, 05 Mar 2026 13:00:00 +0800", "Do, 05 Mär 2026 13:00:00 +0800"),
    ("ContainsRelRef", 'href="https://example.org/guide/cuda/41-cuda-gemm"', 'href="/cuda/x"'),
    (
        "InvalidFullLink",
        "<link>https://example.org/guide/cuda/41-cuda-gemm</link>",
        "<link>https://example.org/guide/cuda/41 cuda gemm</link>",
    ),
    ("ContainsHTML", "Tối ưu toán tử CUDA Reduce</title>", "Tối ưu &lt;/b&gt;</title>"),
    ("CharacterData", "Tối ưu toán tử CUDA Reduce</title>", "vector&lt;float&gt;</title>"),
    ("ContainsHTML (an entity", "Tối ưu toán tử CUDA Reduce</title>", "AT&amp;amp;T</title>"),
    ("InvalidLanguage", "<language>vi</language>", "<language>Vietnamese</language>"),
]


@pytest.mark.parametrize(("rule", "old", "new"), RSS_BREAKAGES, ids=[b[0] for b in RSS_BREAKAGES])
def test_rss_rules_are_enforced(good: dict[str, str], rule: str, old: str, new: str) -> None:
    assert check_rss(good["feed.xml"].encode(), BASE + "feed.xml") == []
    assert old in good["feed.xml"]
    broken = good["feed.xml"].replace(old, new, 1).encode()
    assert any(rule in p for p in check_rss(broken, BASE + "feed.xml"))


ATOM_BREAKAGES = [
    ("MissingSelf", 'rel="self"', 'rel="related"'),
    ("ContainsUndeclaredHTML", '<content type="html">', "<content>"),
    ("ContainsHTML (an entity", "Tối ưu toán tử CUDA Reduce</title>", "AT&amp;amp;T</title>"),
    ("MissingElement author", "author>", "contributor>"),
    ("SelfDoesntMatchLocation", "feeds/atom.xml", "feeds/feed.xml"),
    (
        "InvalidRFC3339Date",
        "<updated>2026-03-05T13:00:00+08:00</updated>",
        "<updated>2026-03-05 13:00</updated>",
    ),
    ("ContainsRelRef", 'href="https://example.org/guide/cuda/41-cuda-gemm"', 'href="41-cuda-gemm"'),
]


@pytest.mark.parametrize(("rule", "old", "new"), ATOM_BREAKAGES, ids=[b[0] for b in ATOM_BREAKAGES])
def test_atom_rules_are_enforced(good: dict[str, str], rule: str, old: str, new: str) -> None:
    assert check_atom(good["atom.xml"].encode(), BASE + "atom.xml") == []
    assert old in good["atom.xml"]
    broken = good["atom.xml"].replace(old, new).encode()
    assert any(rule in p for p in check_atom(broken, BASE + "atom.xml"))


# The service's own code finds each too, but a relative link in Atom content, which it leaves
# to xml:base: the re-stated rules are the stricter there.
W3C_BREAKAGES = [
    *(("feed.xml", *breakage) for breakage in RSS_BREAKAGES),
    *(("atom.xml", *breakage) for breakage in ATOM_BREAKAGES if breakage[0] != "ContainsRelRef"),
]


@pytest.mark.parametrize(
    ("name", "rule", "old", "new"), W3C_BREAKAGES, ids=[f"{b[0]} {b[1]}" for b in W3C_BREAKAGES]
)
def test_the_w3c_validator_itself_finds_each_breakage(
    good: dict[str, str], name: str, rule: str, old: str, new: str
) -> None:
    assert w3c_problems(good[name].encode(), BASE + name) == []
    broken = good[name].replace(old, new, 1).encode()
    assert w3c_problems(broken, BASE + name) != []


def test_json_feed_schema_is_enforced(good: dict[str, str]) -> None:
    feed = json.loads(good["feed.json"])
    assert check_json(good["feed.json"].encode(), BASE + "feed.json") == []
    del feed["items"][0]["content_html"]
    feed["items"][1]["date_published"] = "yesterday"
    feed["version"] = "https://jsonfeed.org/version/1"
    problems = check_json(json.dumps(feed).encode(), BASE + "feed.json")
    assert len(problems) == 3, problems


def test_shipped_schema_file_is_json_feed_11() -> None:
    schema = json.loads(
        (Path(__file__).parent / "data" / "jsonfeed-1.1.schema.json").read_text(encoding="utf-8")
    )
    assert schema["properties"]["version"]["const"] == "https://jsonfeed.org/version/1.1"


# Small hand-made documents, clean under every rule; each case below breaks one rule in one.
RSS = """\
<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"
     xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel>
<title>Guide</title>
<link>https://example.org/guide/</link>
<description>News</description>
<atom:link href="https://example.org/guide/feeds/feed.xml" rel="self" type="application/rss+xml"/>
<language>vi</language>
<lastBuildDate>Thu, 05 Mar 2026 13:00:00 +0800</lastBuildDate>
<image>
<url>https://example.org/logo.png</url>
<title>Guide</title>
<link>https://example.org/guide/</link>
<width>144</width>
<height>40</height>
</image>
<item>
<title>One</title>
<link>https://example.org/guide/1</link>
<guid isPermaLink="false">tag:example.org,2026:1</guid>
<pubDate>Thu, 05 Mar 2026 13:00:00 +0800</pubDate>
<author>a@example.org (A)</author>
<description>&lt;p&gt;Text&lt;/p&gt;</description>
</item>
<item>
<title>Two</title>
<link>https://example.org/guide/2</link>
<guid>https://example.org/guide/2</guid>
<pubDate>Wed, 04 Mar 2026 13:00:00 +0800</pubDate>
</item>
</channel>
</rss>
"""
ATOM_FEED = """\
<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:fh="http://purl.org/syndication/history/1.0"
      xml:lang="vi">
<id>tag:example.org,2026:feed</id>
<title>Guide</title>
<updated>2026-03-05T13:00:00+08:00</updated>
<author><name>A</name></author>
<icon>https://example.org/icon.png</icon>
<link href="https://example.org/guide/feeds/atom.xml" rel="self"/>
<link href="https://example.org/guide/"/>
<entry>
<id>tag:example.org,2026:1</id>
<title>One</title>
<updated>2026-03-05T13:00:00+08:00</updated>
<link href="https://example.org/guide/1"/>
</entry>
<entry>
<id>https://example.org/guide/2</id>
<title>Two</title>
<updated>2026-03-04T13:00:00+08:00</updated>
<content type="html">&lt;p&gt;Text&lt;/p&gt;</content>
</entry>
</feed>
"""
PREV = '<link href="https://example.org/guide/feeds/2026-02.xml" rel="prev-archive"/>\n'
CURRENT = '<link href="https://example.org/guide/feeds/atom.xml" rel="current"/>\n'
DOCUMENTS = {
    "feed.xml": RSS,
    "atom.xml": ATOM_FEED,
    # An archive document (RFC 5005): marked so, with its current feed and a neighbour.
    "2026-03.xml": ATOM_FEED.replace("feeds/atom.xml", "feeds/2026-03.xml").replace(
        "<entry>", f"<fh:archive/>\n{CURRENT}{PREV}<entry>", 1
    ),
    # A complete feed: every entry is in it, so it has no archives.
    "complete.xml": ATOM_FEED.replace("feeds/atom.xml", "feeds/complete.xml").replace(
        "<entry>", "<fh:complete/>\n<entry>", 1
    ),
    "feed.json": json.dumps(
        {
            "version": "https://jsonfeed.org/version/1.1",
            "title": "Guide",
            "home_page_url": "https://example.org/guide/",
            "feed_url": BASE + "feed.json",
            "items": [
                {"id": "1", "url": "https://example.org/guide/1", "content_html": "<p>Text</p>"},
                {"id": "2", "url": "https://example.org/guide/2", "content_text": "Two"},
            ],
        },
        indent=1,
    ),
}


def check_document(name: str, text: str) -> list[str]:
    check = {"feed.xml": check_rss, "feed.json": check_json}.get(name, check_atom)
    return check(text.encode(), BASE + name)


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_the_hand_made_documents_are_clean(name: str) -> None:
    assert check_document(name, DOCUMENTS[name]) == []


# (the problem, the document, a text in it, what it becomes): one rule broken at a time.
ONE_RULE_BROKEN = [
    ("not an RSS 2.0 document", "feed.xml", 'version="2.0"', 'version="0.91"'),
    ("channel: MissingElement description", "feed.xml", "<description>News</description>", ""),
    ("channel: self link type", "feed.xml", '"application/rss+xml"', '"application/xml"'),
    ("channel/image: ImageUrlFormat", "feed.xml", "logo.png", "logo.svg"),
    ("channel/image: ImageTitleDoesntMatch", "feed.xml", "</url>\n<title>Guide", "</url>\n<title>"),
    (
        "channel/image: ImageLinkDoesntMatch",
        "feed.xml",
        "<link>https://example.org/guide/</link>\n<width>",
        "<link>https://example.org/</link>\n<width>",
    ),
    ("channel/image: InvalidWidth", "feed.xml", "<width>144</width>", "<width>145</width>"),
    ("channel/image: InvalidHeight", "feed.xml", "<height>40</height>", "<height>0</height>"),
    (
        "channel/lastBuildDate: InvalidRFC2822Date",
        "feed.xml",
        "<lastBuildDate>Thu, 05 Mar 2026 13:00:00 +0800",
        "<lastBuildDate>2026-03-05T13:00:00+08:00",
    ),
    ("item[2]/title: MissingElement title", "feed.xml", "<title>Two</title>\n", ""),
    ("item[2]/pubDate: InvalidRFC2822Date", "feed.xml", "Wed, 04 Mar", "Wed, 4 Mar"),
    ("item[1]/title: ContainsScript", "feed.xml", "<title>One", "<title>&#x3C;script&gt; One"),
    ("item[2]/link: MissingElement", "feed.xml", "<link>https://example.org/guide/2</link>", ""),
    (
        "item[2]/link: InvalidFullLink (no host)",
        "feed.xml",
        "<link>https://example.org/guide/2</link>",
        "<link>https:///guide/2</link>",
    ),
    ("item[1]: MissingGuid", "feed.xml", '<guid isPermaLink="false">tag:example.org,2026:1</guid>',
     ""),
    ("item[1]/guid: InvalidBooleanAttribute", "feed.xml", '"false"', '"no"'),
    (
        "item[2]/guid: DuplicateValue",
        "feed.xml",
        "<guid>https://example.org/guide/2</guid>",
        '<guid isPermaLink="false">tag:example.org,2026:1</guid>',
    ),
    ("item[1]/author: InvalidContact", "feed.xml", "a@example.org (A)", "A"),
    (
        "item[1]: DuplicateItemSemantics author dc:creator",
        "feed.xml",
        "</author>",
        "</author>\n<dc:creator>A</dc:creator>",
    ),
    ("ContainsScript/Unsafe <iframe>", "feed.xml", "Text", "&lt;iframe&gt;&lt;/iframe&gt;"),
    ("ContainsScript attribute onclick", "feed.xml", "&lt;p&gt;", '&lt;p onclick="go()"&gt;'),
    (
        "ContainsScript URL 'javascript:go()'",
        "feed.xml",
        "Text",
        '&lt;a href="javascript:go()"&gt;Text&lt;/a&gt;',
    ),
    ("not an Atom feed", "atom.xml", '"http://www.w3.org/2005/Atom"', '"http://example.org/x"'),
    ("feed/id: InvalidTAG", "atom.xml", "tag:example.org,2026:feed", "tag:example.org:feed"),
    ("feed/id: MissingElement", "atom.xml", "<id>tag:example.org,2026:feed</id>", ""),
    ("feed/title: MissingElement title", "atom.xml", "<title>Guide</title>", "<title></title>"),
    ("feed/updated: InvalidRFC3339Date", "atom.xml", "Guide</title>\n<updated>2026-03-05T",
     "Guide</title>\n<updated>2026-03-05 "),
    ("feed: InvalidLanguage", "atom.xml", 'xml:lang="vi"', 'xml:lang="Vietnamese"'),
    ("feed/icon: InvalidFullLink", "atom.xml", "https://example.org/icon.png", "icon.png"),
    ("feed/author: MissingElement name", "atom.xml", "<name>A</name>", "<email>a@b.org</email>"),
    ("feed: MissingAlternateLink", "atom.xml", '<link href="https://example.org/guide/"/>', ""),
    (
        "entry[2]/id: DuplicateEntries",
        "atom.xml",
        "<id>https://example.org/guide/2</id>",
        "<id>tag:example.org,2026:1</id>",
    ),
    ("entry[2]/updated: InvalidRFC3339Date", "atom.xml", "2026-03-04T13:00:00", "2026-03-04T13:00"),
    ("entry[2]: MissingElement updated", "atom.xml", "<updated>2026-03-04T13:00:00+08:00</updated>",
     ""),
    ("entry[1]: MissingContentOrAlternate", "atom.xml", '<link href="https://example.org/guide/1"/>',
     ""),
    ("feed: MissingCurrentInArchive", "2026-03.xml", CURRENT, ""),
    ("feed: ArchiveIncomplete", "2026-03.xml", PREV, ""),
    ("feed: FeedRelInCompleteFeed", "complete.xml", "<fh:complete/>\n", f"<fh:complete/>\n{PREV}"),
    ("feed_url", "feed.json", '"feed_url": "https://example.org/guide/feeds/feed.json"',
     '"feed_url": "https://example.org/guide/feeds/other.json"'),
    ("duplicate item ids", "feed.json", '"id": "2"', '"id": "1"'),
]  # fmt: skip


@pytest.mark.parametrize(
    ("problem", "name", "old", "new"), ONE_RULE_BROKEN, ids=[case[0] for case in ONE_RULE_BROKEN]
)
def test_each_rule_is_caught_alone(problem: str, name: str, old: str, new: str) -> None:
    """A hand-made document with one rule broken: that rule's problem, and no other."""
    assert DOCUMENTS[name].count(old) == 1
    problems = check_document(name, DOCUMENTS[name].replace(old, new))
    assert len(problems) == 1 and problem in problems[0], problems
