"""The shipped entries hold the whole changelog, repaired, with nothing invented.

tests/data/source/ is a copy of the changelog text as extracted from the
page and of the reference facts for what that text lost.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from conftest import DATA, SHIPPED_ENTRIES
from infrafeed.source import inline
from infrafeed.source.loader import Changelog, load

SOURCE = (DATA / "source" / "update-log.vi.txt").read_text(encoding="utf-8")
FACTS = (DATA / "source" / "reference-facts.md").read_text(encoding="utf-8")
DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})$")
ARTICLE_LINE = re.compile(r"^(?:- )?Bài: (?:(\d+(?:\.\d+)*) )?(.+?)(?: \| |$)")


@pytest.fixture(scope="module")
def changelog() -> Changelog:
    return load(SHIPPED_ENTRIES)


def source_article_lines() -> list[tuple[str, str | None, str]]:
    """(date, number, title) of every "Bài:" line of the extracted text."""
    found = []
    day = ""
    for line in SOURCE.splitlines():
        if DATE.match(line):
            day = line
        match = ARTICLE_LINE.match(line)
        if match:
            found.append((day, match.group(1), match.group(2)))
    return found


def test_counts(changelog: Changelog) -> None:
    assert len(changelog.releases) == 36
    dates = [rf.release.date.isoformat() for rf in changelog.releases]
    assert dates == [line for line in SOURCE.splitlines() if DATE.match(line)]
    articles = [a for rf in changelog.releases for g in rf.release.groups for a in g.articles]
    assert len(articles) == 98
    assert len(source_article_lines()) == 84


def test_every_article_line_of_the_text_is_an_article_or_the_chapter_note(
    changelog: Changelog,
) -> None:
    by_date: dict[str, Counter[tuple[str | None, str]]] = {}
    for rf in changelog.releases:
        bag = by_date.setdefault(rf.release.date.isoformat(), Counter())
        for group in rf.release.groups:
            for article in group.articles:
                bag[(article.number, article.title)] += 1
    notes = {
        (rf.release.date.isoformat(), n.text)
        for rf in changelog.releases
        for g in rf.release.groups
        for n in g.notes
    }
    for day, number, title in source_article_lines():
        if title.startswith("Chương 6 "):
            assert (day, title) in notes
            continue
        assert by_date[day][(number, title)] >= 1, (day, number, title)
        by_date[day][(number, title)] -= 1


def test_damaged_code_spans_are_repaired() -> None:
    text = "\n".join(p.read_text(encoding="utf-8") for p in SHIPPED_ENTRIES.rglob("*.toml"))
    for code in (
        "--nnodes", "vllm bench serve", "tensor_parallel_size", "ignore_eos",
        "gpu_memory_utilization", "calculate_kv_scales", "ngram_gpu", "-sc",
        "--speculative-config", "..._per_pos_total", "FULL_AND_PIECEWISE", "__syncthreads()",
        "break", "while ... else", "step", "num_tokens", "slot_mapping", "max_num_seqs", "run",
        "fp8_per_channel", "free_blocks", "cache_salt", "long_prefill_token_threshold",
        "max_num_batched_tokens",
    ):  # fmt: skip
        assert f"`{code}`" in text, code
    assert "cách viết `--nnodes` đa tiến trình" in text
    assert "dùng `vllm bench serve` quét" in text
    # A glued word, as the extraction left them, is gone everywhere.
    for glued in ("--nnodesđa", "servequét", "bổ sungstep", "củafree_blocks", "tinh chỉnhmax"):
        assert glued not in text


def test_every_page_url_of_the_reference_facts_is_recorded_and_none_other(
    changelog: Changelog,
) -> None:
    facts = set(re.findall(r"\| (https://caomaolufei\.github\.io/[^|]+?) \|", FACTS))
    pages = {
        item.page
        for rf in changelog.releases
        for g in rf.release.groups
        for item in (*g.articles, *g.notes)
        if item.page is not None
    }
    assert len(facts) >= 30
    assert pages == facts


def test_lost_items_have_no_invented_summary(changelog: Changelog) -> None:
    lost_dates = {"2026-05-08", "2026-05-07", "2026-04-28", "2026-04-27", "2026-04-26",
                  "2026-04-25", "2026-04-24", "2026-04-23", "2026-04-20", "2026-04-18"}  # fmt: skip
    for rf in changelog.releases:
        if rf.release.date.isoformat() in lost_dates:
            for group in rf.release.groups:
                for article in group.articles:
                    assert article.summary is None, article.id
                    assert article.page is not None, article.id


def test_a_revised_article_keeps_the_id_of_its_first_appearance(changelog: Changelog) -> None:
    ids: dict[tuple[int, str], set[str]] = {}
    for rf in changelog.releases:
        for group in rf.release.groups:
            for article in group.articles:
                if group.module == 4 and article.number:
                    ids.setdefault((4, article.number), set()).add(article.id)
    # In module 4 no number was reused for another article, so one number, one id.
    assert {number: len(found) for (_, number), found in ids.items() if len(found) != 1} == {}
    assert len(ids) == 30


def plain(markdown: str) -> str:
    return inline.to_text(inline.parse(markdown))


def test_every_bullet_of_the_text_is_a_change_of_its_own(changelog: Changelog) -> None:
    """A bullet line of the changelog is a note or a group's context line, never a detail."""
    shown: dict[str, set[str]] = {}
    for rf in changelog.releases:
        texts = shown.setdefault(rf.release.date.isoformat(), set())
        for group in rf.release.groups:
            texts.update(plain(t) for t in (group.context, *(n.text for n in group.notes)) if t)
    day = ""
    bullets = 0
    for line in SOURCE.splitlines():
        if DATE.match(line):
            day = line
        elif line.startswith("- ") and not ARTICLE_LINE.match(line):
            bullets += 1
            # The page wrote a target with a space bare ("](/AI Infra学习路线)"), which CommonMark
            # shows as text; the entries write it in <>.
            text = re.sub(r"\]\(([^)<>]* [^)]*)\)", r"](<\1>)", line[2:].split(" | ")[0])
            assert plain(text) in shown[day], (day, line)
    assert bullets == 21


def test_the_launch_release_names_the_first_blog_post_second(changelog: Changelog) -> None:
    """Reference facts: the first blog post is the second of the launch release's lines."""
    (launch,) = (rf.release for rf in changelog.releases if rf.anchor == "2026-04-15")
    notes = launch.groups[0].notes
    assert [note.id for note in notes] == [
        "site-launch",
        "site-hello-world-post",
        "site-learning-roadmap",
        "site-ai-infra-introduction",
    ]
    assert notes[1].text == "Phát hành bài blog đầu tiên «Chào mừng đến với AIInfraGuide»"
    assert notes[1].page == "https://caomaolufei.github.io/AIInfraGuide/blog/hello-world"
    assert "发布首篇博客" in FACTS
