"""The inline Markdown of entry text: what is markup, what stays text, and round trips."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infrafeed.source import inline
from infrafeed.source.inline import Code, Emphasis, Link, MarkupError, Strong, Text


def to_html(source: str) -> str:
    return inline.to_html(inline.parse(source), lambda url: "https://site.example" + url)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("cách viết `--nnodes` đa tiến trình", "cách viết <code>--nnodes</code> đa tiến trình"),
        ("``a`b`` x", "<code>a`b</code> x"),
        ("*nhấn* và **đậm**", "<em>nhấn</em> và <strong>đậm</strong>"),
        (
            "[lộ trình](/AI Infra学习路线)",
            '<a href="https://site.example/AI Infra学习路线">lộ trình</a>',
        ),
        ("block_table và add_request", "block_table và add_request"),
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("a & b ]]> c", "a &amp; b ]]&gt; c"),
        ("x * y * z", "x * y * z"),
        ("hiển thị **** thay mật khẩu", "hiển thị **** thay mật khẩu"),  # it was <strong></strong>
        ("`không đóng", "`không đóng"),
        (r"\*không nhấn\*", "*không nhấn*"),
        ("[nhãn] (không phải link)", "[nhãn] (không phải link)"),
        ("`<b>` trong code", "<code>&lt;b&gt;</code> trong code"),
        # HTML has no link in a link (readers cut the outer one): the inner shows its text.
        (
            "[ngoài [trong](/a) và **[đậm](/c)**](/b)",
            '<a href="https://site.example/b">ngoài trong và <strong>đậm</strong></a>',
        ),
    ],
)
def test_rendering(source: str, expected: str) -> None:
    assert to_html(source) == expected


def test_link_href_is_escaped_as_an_attribute() -> None:
    nodes = inline.parse('[x](/a"onmouseover="b)')
    assert inline.to_html(nodes, lambda url: url) == '<a href="/a&quot;onmouseover=&quot;b">x</a>'


@pytest.mark.parametrize(
    "url",
    ["javascript:alert(1)", "JaVaScRiPt:alert(1)", "data:text/html,x", "vbscript:x", "//evil"],
)
def test_unsafe_link_targets_are_refused(url: str) -> None:
    with pytest.raises(MarkupError):
        inline.parse(f"[x]({url})")


def test_plain_text_drops_markup() -> None:
    assert inline.to_text(inline.parse("dùng `vllm` *và* [đây](/x)")) == "dùng vllm và đây"


def test_nodes() -> None:
    assert inline.parse("a `b` *c* **d** [e](/f)") == (
        Text("a "),
        Code("b"),
        Text(" "),
        Emphasis((Text("c"),)),
        Text(" "),
        Strong((Text("d"),)),
        Text(" "),
        Link((Text("e"),), "/f"),
    )


TEXTS = st.text(
    alphabet=st.sampled_from(list("ab xyz`*[]()\\<>&đệ学_-/.:")) | st.characters(), max_size=60
)


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_markdown_round_trip(source: str) -> None:
    """to_markdown writes what parse reads back to the same nodes (the page writer relies on it)."""
    try:
        nodes = inline.parse(source)
    except MarkupError:
        return
    assert inline.parse(inline.to_markdown(nodes)) == nodes


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_html_never_contains_raw_markup_from_the_text(source: str) -> None:
    try:
        nodes = inline.parse(source)
    except MarkupError:
        return
    rendered = inline.to_html(nodes, lambda url: "https://site.example/x")
    # Whatever the input, the only tags are the ones the renderer writes.
    stripped = rendered
    for tag in ("<code>", "</code>", "<em>", "</em>", "<strong>", "</strong>", "</a>"):
        stripped = stripped.replace(tag, "")
    stripped = stripped.replace('<a href="https://site.example/x">', "")
    assert "<" not in stripped


def test_deep_nesting_stays_text_instead_of_exhausting_recursion() -> None:
    depth = 3000
    source = "[" * depth + "x" + "](/u)" * depth
    nodes = inline.parse(source)
    assert inline.to_text(nodes).count("x") == 1
    levels = 0
    node = nodes[0]
    while isinstance(node, Link):
        levels += 1
        node = node.children[0]
    assert levels == inline.MAX_DEPTH  # deeper markup is kept as literal text


@pytest.mark.parametrize(
    "source",
    [
        "[" * 5000,
        "*a " * 1666,
        "`*" * 2500,
        "[a](" * 1250,
        "*a " * 800 + "b" + " a*" * 800,
        "*a" + "`" * 4998,
        "*" * 4998,  # each run of three once parsed its children to throw them away
        "***" * 1666,
    ],
)
def test_hostile_delimiter_soup_parses(source: str) -> None:
    # Each used to take a second or more (quadratic scans); the bench keeps the time.
    assert inline.to_text(inline.parse(source)).replace("\\", "") != ""


@pytest.mark.parametrize(
    ("text", "html", "page"),
    [
        # Found by a fuzzing helper: '***x***' gave <strong>*x</strong>*, and a strong inside
        # an emphasis closed the emphasis at its first '*'.
        ("a ***x*** b", "a <em><strong>x</strong></em> b", True),
        ("***x** y*", "<em><strong>x</strong> y</em>", True),
        ("*y **x***", "<em>y <strong>x</strong></em>", True),
        ("*a **b** c*", "<em>a <strong>b</strong> c</em>", True),
        ("***x* y**", "<strong><em>x</em> y</strong>", False),  # the page drops the strong
        ("***x*", "**<em>x</em>", False),  # the page escapes the stars
        # A run after a space opens and never closes (a review found the third '*' closing).
        ("*Ghi chú: đánh giá *** (ba sao)*", "<em>Ghi chú: đánh giá *** (ba sao)</em>", False),
        ("*a ***", "*a ***", False),
        # A link binds tighter than emphasis: its label's '*' closes nothing outside.
        ("*a [b*](/p)", '*a <a href="/p">b*</a>', False),  # the page escapes the stars
        ("*a [b](/p) c*", '<em>a <a href="/p">b</a> c</em>', True),
        ("**a [b**](/p) c**", '<strong>a <a href="/p">b**</a> c</strong>', False),
        # A run of backticks no run closes is text, all of it: its second "`" was read as a
        # run of one, closed by the last "`", and hid the "**" that closes (a review's).
        ("**a ``b**`", "<strong>a ``b</strong>`", False),  # the page escapes the backticks
    ],
)
def test_emphasis_and_strong_together_read_as_commonmark_reads_them(
    text: str, html: str, page: bool
) -> None:
    from markdown_it import MarkdownIt

    from infrafeed.changelog.markdown import inline_markdown

    assert inline.to_html(inline.parse(text), lambda url: url) == html
    assert MarkdownIt("commonmark").renderInline(text) == html
    if page:  # the page shows it so too
        assert inline_markdown(inline.parse(text)) == text
