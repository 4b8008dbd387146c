"""The W3C-rules checker must catch each rule it claims to check (it can fail)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from feedcheck import check_atom, check_json, check_rss
from infrafeed.build import build

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
