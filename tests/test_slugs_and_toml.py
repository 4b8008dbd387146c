"""Generated ids (slugs) and the TOML the importer writes."""

from __future__ import annotations

import datetime as dt
import tomllib

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from infrafeed.changelog.importer import dump_release
from infrafeed.changelog.mapping import MAX_SLUG, IdMinter, page_slug, slugify
from infrafeed.source.models import Article, Group, Note, Release, Table


@pytest.mark.parametrize(
    ("text", "slug"),
    [
        ("Tổng quan chiến lược song song suy luận", "tong-quan-chien-luoc-song-song-suy-luan"),
        ("Đồng bộ và phép nguyên tử", "dong-bo-va-phep-nguyen-tu"),
        ("Transformer架构快速入门", "transformer-jia-gou-kuai-su-ru-men"),
        ("✅ CUDA编程快速入门指南 🔥", "cuda-bian-cheng-kuai-su-ru-men-zhi-nan"),
        ("TP×PP và DP + EP", "tp-pp-va-dp-ep"),
        ("“chứa không nổi” «thước»", "chua-khong-noi-thuoc"),
        ("🔥", ""),
    ],
)
def test_slugify_transliterates(text: str, slug: str) -> None:
    assert slugify(text) == slug


def test_long_slugs_are_cut_at_a_word() -> None:
    slug = slugify(
        "Tổng quan chiến lược song song suy luận: chứa không nổi và không đủ nhanh là hai "
        "chuyện khác nhau"
    )
    assert slug == "tong-quan-chien-luoc-song-song-suy-luan-chua-khong-noi-va"
    assert len(slug) <= MAX_SLUG


@pytest.mark.parametrize(
    ("page", "slug"),
    [
        (
            "https://caomaolufei.github.io/AIInfraGuide/cuda/模块二-cuda编程与算子优化/41-cuda-gemm算子性能优化",
            "41-cuda-gemm-suan-zi-xing-neng-you-hua",
        ),
        (
            "https://caomaolufei.github.io/AIInfraGuide/cuda/模块二-cuda编程与算子优化/cuda编程入门指南/",
            "cuda-bian-cheng-ru-men-zhi-nan",
        ),
        ("/AIInfraGuide/guides/AI%20Infra%E5%AD%A6", "ai-infra-xue"),
        ("/AIInfraGuide/guides/AI Infra学习路线", "ai-infra-xue-xi-lu-xian"),
        ("https://example.org/blog/post.html", "post"),
        ("https://example.org/", ""),
    ],
)
def test_page_slug_is_the_last_path_segment(page: str, slug: str) -> None:
    assert page_slug(page) == slug


def test_minted_ids_are_unique_per_scope() -> None:
    minter = IdMinter()
    day_new = (dt.date(2026, 11, 7), "new")
    assert minter.mint(day_new, "", "cuda-reduce", fallback="article") == "cuda-reduce"
    assert minter.mint(day_new, "cuda-reduce", fallback="article") == "cuda-reduce-2"
    assert minter.mint(day_new, "", "", fallback="note") == "note"
    assert minter.mint((dt.date(2026, 11, 7), "revised"), "cuda-reduce", fallback="x") == (
        "cuda-reduce"
    )


def test_minting_one_slug_many_times_tries_each_number_once() -> None:
    """3,600 notes "Sửa lỗi chính tả" in a release once took 3,600²/2 tries (seconds; 40,000
    bullets took minutes before the import said the release was too large)."""
    tries = 0

    class Counting(IdMinter):
        def claim(self, scope: object, slug: str) -> bool:
            nonlocal tries
            tries += 1
            return super().claim(scope, slug)

    minter = Counting()
    minter.claim("day", "x-5")  # an id the page gives is skipped
    minted = [minter.mint("day", "x", fallback="note") for _ in range(2000)]
    assert minted[:5] == ["x", "x-2", "x-3", "x-4", "x-6"] and minted[-1] == "x-2001"
    assert len(set(minted)) == 2000 and tries < 3 * 2000


def test_dump_release_layout() -> None:
    release = Release(
        date=dt.date(2026, 11, 7),
        groups=(
            Group(
                kind="new",
                module=4,
                context='Chương 6 «x» — "trích"',
                articles=(Article(id="a", number="6.1", title="T\\1", summary="dòng 1\ndòng 2"),),
                notes=(
                    Note(
                        id="n",
                        text="Dàn ý",
                        details=("chi tiết",),
                        table=Table(header=("A", "B"), rows=(("1", "2"), ("3", "4"))),
                    ),
                ),
            ),
        ),
    )
    assert dump_release(release) == (
        "date = 2026-11-07\n"
        "\n"
        "[[groups]]\n"
        'kind = "new"\n'
        "module = 4\n"
        'context = "Chương 6 «x» — \\"trích\\""\n'
        "\n"
        "[[groups.articles]]\n"
        'id = "a"\n'
        'number = "6.1"\n'
        'title = "T\\\\1"\n'
        'summary = "dòng 1\\ndòng 2"\n'
        "\n"
        "[[groups.notes]]\n"
        'id = "n"\n'
        'text = "Dàn ý"\n'
        'details = ["chi tiết"]\n'
        "\n"
        "[groups.notes.table]\n"
        'header = ["A", "B"]\n'
        "rows = [\n"
        '  ["1", "2"],\n'
        '  ["3", "4"],\n'
        "]\n"
    )


# Printable text with the characters TOML must escape; the models refuse padding.
LINE = (
    st.text(
        alphabet=st.characters(
            whitelist_categories=("L", "M", "N", "P", "S", "Zs"), whitelist_characters='"\\'
        ),
        min_size=1,
        max_size=30,
    )
    .map(str.strip)
    .filter(bool)
)
TEXT = st.lists(LINE, min_size=1, max_size=3).map("\n\t".join)


@settings(max_examples=200, deadline=None)
@given(title=LINE, summary=TEXT, context=TEXT, cell=LINE, detail=TEXT)
def test_dumped_releases_read_back_the_same(
    title: str, summary: str, context: str, cell: str, detail: str
) -> None:
    try:
        release = Release(
            date=dt.date(2026, 1, 2),
            groups=(
                Group(
                    kind="revised",
                    module=1,
                    context=context,
                    articles=(Article(id="a", title=title, summary=summary),),
                    notes=(
                        Note(
                            id="n",
                            text=summary,
                            details=(detail,),
                            table=Table(header=(title,), rows=((cell,),)),
                        ),
                    ),
                ),
            ),
        )
    except ValidationError:
        assume(False)
        return
    assert Release.model_validate(tomllib.loads(dump_release(release))) == release
