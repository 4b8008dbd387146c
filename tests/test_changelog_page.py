"""The changelog page: golden Markdown, the anchors feeds link to, CommonMark true to entries."""

from __future__ import annotations

import datetime as dt
import html
import json
import os
import re
import shutil
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode
from pydantic import ValidationError

from changelog_kit import render_page
from conftest import DATA, SHIPPED_ENTRIES
from infrafeed.build import build
from infrafeed.changelog.markdown import (
    inline_markdown,
    link_destination,
    markdown_parser,
    plain_markdown,
    read_nodes,
)
from infrafeed.changelog.page import assemble_page, release_section
from infrafeed.source import inline
from infrafeed.source.loader import Changelog, ReleaseFile, load
from infrafeed.source.models import Group, Note, PageSettings, Release
from infrafeed.source.urls import absolute
from outputs import run_infrafeed
from slugger import astro_heading_ids

GOLDEN = DATA / "small-site" / "expected" / "update-log.md"
ATOM = "{http://www.w3.org/2005/Atom}"


def with_page(changelog: Changelog, **settings: object) -> Changelog:
    page = changelog.site.page.model_copy(update=settings)
    return Changelog(changelog.site.model_copy(update={"page": page}), changelog.releases)


def heading_ids(markdown: bytes) -> list[str]:
    """The ids Astro gives the page's headings."""
    root = SyntaxTreeNode(markdown_parser().parse(markdown.decode("utf-8")))
    texts = []
    for node in root.walk():
        if node.type == "heading":
            content = node.children[0]
            texts.append(inline.to_text(read_nodes(content.children, 0, lambda *_: None)))
    return astro_heading_ids(texts)


def shown_text(markdown: bytes) -> str:
    """What a reader of the rendered page sees, as plain text."""
    rendered = markdown_parser().render(markdown.decode("utf-8"))
    return html.unescape(re.sub(r"<[^>]+>", "", rendered))


# -- the page as a whole ----------------------------------------------------------


def test_golden_small_site(small_site: Path) -> None:
    """Byte for byte. INFRAFEED_REGEN_GOLDEN=1 rewrites it: read the diff before committing."""
    page = render_page(load(small_site))
    if os.environ.get("INFRAFEED_REGEN_GOLDEN") == "1":
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_bytes(page)
        pytest.skip("golden page regenerated")
    assert page == GOLDEN.read_bytes()


def test_build_writes_the_page_beside_the_feeds(small_site: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = build(small_site, out).report
    assert "update-log.md" in report.written
    assert (out / "update-log.md").read_bytes() == GOLDEN.read_bytes()
    assert build(small_site, out).report.written == ()


def test_front_matter_and_intro_come_from_the_settings(small_site: Path) -> None:
    changelog = with_page(
        load(small_site),
        title='Nhật ký "cập nhật"',
        description="Mọi thay đổi: mới nhất trước",
        pub_date=dt.date(2026, 1, 2),
        tags=("nhật ký", "AI Infra"),
        intro="Trang này ghi lại *mọi* cập nhật, xem [lộ trình](/guide/roadmap).",
    )
    text = render_page(changelog).decode("utf-8")
    assert text.startswith(
        "---\n"
        'title: "Nhật ký \\"cập nhật\\""\n'
        'description: "Mọi thay đổi: mới nhất trước"\n'
        "pubDate: 2026-01-02\n"
        'tags: ["nhật ký", "AI Infra"]\n'
        "---\n"
        "\n"
        "Trang này ghi lại *mọi* cập nhật, xem [lộ trình](/guide/roadmap).\n"
        "\n"
        "## 2026-03-05 (2)\n"
    )


@pytest.mark.parametrize("entries", [SHIPPED_ENTRIES, DATA / "small-site" / "entries"])
def test_the_page_is_its_release_sections_joined(entries: Path) -> None:
    """A build renders each release's section on its own and joins them."""
    changelog = load(entries)
    sections = [release_section(changelog.site, rf) for rf in changelog.releases]
    page = render_page(changelog)
    oldest = changelog.releases[-1].date
    chunks = assemble_page(changelog.site, [s.encode() for s in sections], oldest)
    assert b"".join(chunks) == page
    text = page.decode("utf-8")
    assert text[text.index("\n## ") + 1 :] == "\n---\n\n".join(sections)
    for section in sections:
        assert section.startswith("## ") and section.endswith("\n")
        assert not section.endswith("\n\n") and "\n\n\n" not in section


def test_many_emphases_in_one_text_are_written_in_time(small_site: Path, tmp_path: Path) -> None:
    """Each emphasis had the text before it written again, emphases and all: 2**n writings for
    n emphases, so a summary of 60 hung the build. In a child process, with a timeout."""
    text = " ".join(["*a*"] * 60)
    (small_site / "2026" / "2026-03-20.toml").write_text(
        f'date = 2026-03-20\n[[groups]]\nkind = "new"\nmodule = 1\n[[groups.notes]]\n'
        f'id = "many"\ntext = "{text}"\n',
        encoding="utf-8",
    )
    out = tmp_path / "out"
    done = run_infrafeed("build", "--entries", str(small_site), "--out", str(out), timeout=60)
    assert done.returncode == 0
    assert f"- {text} <!-- " in (out / "update-log.md").read_text(encoding="utf-8")


def test_a_site_can_turn_the_page_off(small_site: Path, tmp_path: Path) -> None:
    site_toml = small_site / "site.toml"
    site_toml.write_text(
        site_toml.read_text(encoding="utf-8") + "\n[page]\nenabled = false\n", encoding="utf-8"
    )
    build(small_site, tmp_path / "out")
    assert not (tmp_path / "out" / "update-log.md").exists()
    assert (tmp_path / "out" / "feed.xml").exists()


def test_the_page_path_is_a_setting(small_site: Path, tmp_path: Path) -> None:
    site_toml = small_site / "site.toml"
    settings = site_toml.read_text(encoding="utf-8")
    site_toml.write_text(settings + '\n[page]\npath = "blog/changelog.md"\n', encoding="utf-8")
    build(small_site, tmp_path / "out")
    assert (tmp_path / "out" / "blog" / "changelog.md").is_file()
    assert not (tmp_path / "out" / "update-log.md").exists()


@pytest.mark.parametrize(
    ("path", "ok"),
    [
        ("update-log.md", True),
        ("blog/update-log.md", True),
        ("../update-log.md", False),
        ("/update-log.md", False),
        (".hidden.md", False),
        ("update-log.mdx", False),
        ("feed.xml", False),
        ("blog//x.md", False),
        ("update-log.md\n", False),  # not a file name anyone wants
    ],
)
def test_page_path_must_stay_inside_the_output_folder(path: str, ok: bool) -> None:
    if ok:
        assert PageSettings(path=path).path == path
        return
    with pytest.raises(ValidationError) as caught:
        PageSettings(path=path)
    shown = path.replace("\n", "\\n")
    assert caught.value.errors()[0]["msg"] == (
        f"'{shown}' is not a page path: use a relative path below the output folder ending "
        "in .md, e.g. 'update-log.md' or 'blog/update-log.md'"
    )


# -- anchors and links --------------------------------------------------------------


@pytest.mark.parametrize("entries", [SHIPPED_ENTRIES, DATA / "small-site" / "entries"])
def test_release_headings_give_the_feed_anchors(entries: Path) -> None:
    changelog = load(entries)
    ids = heading_ids(render_page(changelog))
    anchors = [rf.anchor for rf in changelog.releases]
    assert [i for i in ids if re.match(r"^\d{4}-", i)] == anchors


def test_a_second_release_of_a_day_gets_the_suffixed_anchor(small_site: Path) -> None:
    ids = heading_ids(render_page(load(small_site)))
    assert ids.index("2026-03-05-2") < ids.index("2026-03-05")


def feed_links(path: Path) -> list[str]:
    data = path.read_bytes()
    if path.suffix == ".json":
        return [item["url"] for item in json.loads(data)["items"]]
    root = ET.fromstring(data)
    if root.tag == "rss":
        return [item.findtext("link") or "" for item in root.iter("item")]
    return [
        link.get("href", "")
        for entry in root.iter(f"{ATOM}entry")
        for link in entry.findall(f"{ATOM}link")
    ]


@pytest.mark.parametrize("entries", [SHIPPED_ENTRIES, DATA / "small-site" / "entries"])
def test_every_feed_item_links_to_an_anchor_on_the_page_or_a_known_page(
    entries: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    shutil.copytree(entries, tmp_path / "entries")  # a build writes beside the entries
    build(tmp_path / "entries", out)
    changelog = load(entries)
    site = changelog.site
    anchors = set(heading_ids((out / site.page.path).read_bytes()))
    pages = {
        absolute(site.url, item.page)
        for rf in changelog.releases
        for group in rf.release.groups
        for item in (*group.articles, *group.notes)
        if item.page is not None
    }
    # Every feed document, archives included (feeds.json is the catalog, not a feed).
    feeds = sorted(p for p in out.rglob("*") if p.name in ("feed.xml", "atom.xml", "feed.json"))
    assert len(feeds) >= 3 * (1 + len(site.modules))
    checked = 0
    for feed in feeds:
        for link in feed_links(feed):
            page, _, fragment = link.partition("#")
            if fragment:
                assert page == site.changelog, link
                assert fragment in anchors, f"{feed.name}: {link}"
            else:
                assert link in pages, f"{feed.name}: {link}"
            checked += 1
    assert checked > 0


def test_the_shipped_page_shows_every_release_article_and_note() -> None:
    changelog = load(SHIPPED_ENTRIES)
    page = render_page(changelog)
    shown = shown_text(page)
    for rf in changelog.releases:
        assert f"{rf.release.date.isoformat()}" in shown
        for group in rf.release.groups:
            if group.context:
                assert inline.to_text(inline.parse(group.context)) in shown
            for article in group.articles:
                label = f"{article.number} {article.title}" if article.number else article.title
                assert label in shown, label
                if article.summary:
                    assert inline.to_text(inline.parse(article.summary)) in shown
            for note in group.notes:
                assert inline.to_text(inline.parse(note.text)) in shown
                for detail in note.details:
                    assert inline.to_text(inline.parse(detail)) in shown
                if note.table is not None:
                    for row in note.table.rows:
                        for cell in row:
                            assert inline.to_text(inline.parse(cell)) in shown
    releases = len(changelog.releases)
    assert page.count(b"\n## ") == releases == 36
    assert page.count(b"\n---\n") == releases - 1 + 1  # between releases, and the front matter
    articles = sum(len(g.articles) for rf in changelog.releases for g in rf.release.groups)
    assert page.count("- **Bài:** ".encode()) == articles == 98


def test_the_page_carries_every_items_id_and_a_notes_title() -> None:
    changelog = load(SHIPPED_ENTRIES)
    page = render_page(changelog).decode("utf-8")
    items = [
        item.id
        for rf in changelog.releases
        for group in rf.release.groups
        for item in (*group.articles, *group.notes)
    ]
    assert re.findall(r' <!-- infrafeed id="([a-z0-9-]+)"[^>]* -->$', page, re.M) == items
    note = Note(id="n", title='Tiêu đề "ngắn" -- một dòng', text="Ghi chú dài")
    release = Release(date=dt.date(2026, 1, 2), groups=(Group(kind="new", notes=(note,)),))
    section = release_section(changelog.site, ReleaseFile("2026-01-02.toml", 1, release))
    assert section.splitlines()[6] == (
        '- Ghi chú dài <!-- infrafeed id="n" title="Tiêu đề \\"ngắn\\" -\\u002d một dòng" -->'
    )


def test_article_links_on_the_page_are_single_commonmark_links() -> None:
    changelog = load(SHIPPED_ENTRIES)
    rendered = markdown_parser().render(render_page(changelog).decode("utf-8"))
    hrefs = re.findall(r'<a href="([^"]*)"', rendered)
    pages = [
        a.page
        for rf in changelog.releases
        for g in rf.release.groups
        for a in g.articles
        if a.page is not None
    ]
    for page in pages:
        assert html.escape(page) in hrefs, page  # one link, with its target whole
    assert "](" not in shown_text(render_page(changelog))


# -- inline Markdown ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "page"),
    [
        ("Ring <AllReduce> & co", "Ring \\<AllReduce> & co"),
        ("block_table và \\_private\\_", "block_table và \\_private\\_"),
        ("a | b \\~~x\\~~", "a \\| b \\~\\~x\\~\\~"),
        ("\\&amp; \\&#35; AT&T &amp;", "\\&amp; \\&#35; AT&T &"),
        ("\\# not a heading", "\\# not a heading"),
        ("\\- not a bullet", "\\- not a bullet"),
        ("2026\\. not a list", "2026\\. not a list"),
        ("\\> not a quote", "\\> not a quote"),
        ("`code` and `a|b`", "`code` and `a|b`"),
        ("*em* **strong** [link](</x y>)", "*em* **strong** [link](</x y>)"),
        ("Xem\\![ảnh](/a)", "Xem\\![ảnh](/a)"),
        ("a\\*b", "a\\*b"),
        ("dòng một\ndòng hai # x\n\\# ba", "dòng một\ndòng hai # x\n\\# ba"),
        ("dòng một  \ndòng hai\t\nba", "dòng một\ndòng hai\nba"),  # no hard break
        ("Căn lề cột\n:-:\nba", "Căn lề cột\n\\:-:\nba"),  # GFM: a table's delimiter row
    ],
)
def test_text_is_escaped_for_commonmark(entry: str, page: str) -> None:
    assert inline_markdown(inline.parse(entry)) == page


def test_table_cells_escape_bars_in_code() -> None:
    assert inline_markdown(inline.parse("`a|b`"), in_table=True) == "`a\\|b`"


def test_link_destinations_with_spaces_or_cjk_are_bracketed() -> None:
    assert link_destination("https://e.org/a") == "https://e.org/a"
    assert link_destination("/AIInfraGuide/guides/AI Infra学习路线") == (
        "</AIInfraGuide/guides/AI Infra学习路线>"
    )
    assert link_destination("https://e.org/模块") == "<https://e.org/模块>"
    assert link_destination("/a(1)") == "</a(1)>"


def test_relative_links_are_rooted_at_the_site(small_site: Path) -> None:
    changelog = with_page(load(small_site), intro="Xem [bài](cuda/41-gemm) và [gốc](/x).")
    assert "Xem [bài](/guide/cuda/41-gemm) và [gốc](/x).\n" in render_page(changelog).decode()


def test_emphasis_commonmark_would_not_see_is_written_as_text() -> None:
    nodes = (inline.Text("x"), inline.Emphasis((inline.Text("(y)"),)), inline.Text("z"))
    assert inline_markdown(nodes) == "x(y)z"


@pytest.mark.parametrize(
    ("entry", "page"),
    [
        # micromark (the site's parser) takes an emoji above U+FFFF for a letter, markdown-it
        # for punctuation: where they disagree, neither may show "**" as text.
        ("Ra mắt **Mới!**🎉 và 🔥*(beta)* xong", "Ra mắt Mới!🎉 và 🔥(beta) xong"),
        ("*a*🎉 🎉*a* **🎉** ☕*(b)*", "*a*🎉 🎉*a* **🎉** ☕*(b)*"),
    ],
)
def test_emphasis_beside_an_emoji_is_written_only_where_both_parsers_see_it(
    entry: str, page: str
) -> None:
    assert inline_markdown(inline.parse(entry)) == page


@pytest.mark.parametrize(
    ("entry", "page", "shown"),
    [
        # Found rendering with the real site's pipeline: the writer checked flanking on the
        # strong's own '*', a punctuation, and dropped the emphasis beside any letter.
        ("***a***b", "***a***b", "<em><strong>a</strong></em>b"),
        ("中***文***中", "中***文***中", "中<em><strong>文</strong></em>中"),
        # CommonMark reads an emphasis around "**a**x", then one around "b": the page cannot
        # show the first beside the second, and keeps its text.
        ("***a**x**b***", "**a**x*b*\\*\\*", "<strong>a</strong>x<em>b</em>**"),
        # No emphasis (CommonMark): the stars are text, escaped.
        ("x*`c`*`*`", "x\\*`c`\\*`*`", "x*<code>c</code>*<code>*</code>"),
    ],
)
def test_an_emphasis_around_a_strong_is_written_where_every_parser_reads_it_so(
    entry: str, page: str, shown: str
) -> None:
    assert inline_markdown(inline.parse(entry)) == page
    shows = MarkdownIt("commonmark", {"html": True}).renderInline(page)  # escapes as text
    assert shows.replace("<!-- -->", "") == shown
    root = SyntaxTreeNode(markdown_parser().parse(page))
    back = read_nodes(root.children[0].children[0].children, 1, lambda *_: None)
    assert inline.to_html(back, lambda url: url) == shown


def test_each_node_is_written_once_however_many_emphases() -> None:
    """Whether CommonMark sees an emphasis depends on what is written before and after it; the
    writer looked that up by writing everything before it again, which took seconds for a few
    thousand emphases. Counted through ``resolve``: each link target is resolved once."""
    resolved: list[str] = []

    def resolve(url: str) -> str:
        resolved.append(url)
        return url

    page = "[l](/a) *a* **b** x(y) " * 1_000
    # "x*(y)*" as an entry is no emphasis (CommonMark): one the page cannot show is made here.
    Text, Emphasis = inline.Text, inline.Emphasis
    link, a, b = (
        inline.Link((Text("l"),), "/a"),
        Emphasis((Text("a"),)),
        inline.Strong((Text("b"),)),
    )
    unit = (link, Text(" "), a, Text(" "), b, Text(" x"), Emphasis((Text("(y)"),)), Text(" "))
    markdown = inline_markdown(tuple(inline.merged(unit * 1_000)), resolve=resolve)
    assert (markdown, len(resolved)) == (page, 1_000)
    root = SyntaxTreeNode(markdown_parser().parse(markdown))
    back = read_nodes(root.children[0].children[0].children, 1, lambda *_: None)
    assert back == inline.parse(page.rstrip())


def test_plain_text_keeps_every_character() -> None:
    title = "AI Infra *engineers* & <Transformer> [1] | `x`"
    assert plain_markdown(title) == "AI Infra \\*engineers\\* & \\<Transformer> \\[1\\] \\| \\`x\\`"


@pytest.mark.parametrize(
    ("text", "markdown"),
    [
        # remark-math would typeset "5 so với " and "y" as formulas.
        ("Chi phí $5 so với $10", "Chi phí \\$5 so với \\$10"),
        ("$$y$$ và \\$", "\\$\\$y\\$\\$ và \\\\\\$"),
        # GFM would link these: it reads the text once escapes are gone, so a comment parts them.
        (
            "www.x.org/a_ và https://x.org/~u",
            "www<!-- -->.x.org/a\\_ và https<!-- -->://x.org/\\~u",
        ),
        ("a_b@x.org, WWW.X.ORG", "a_b<!-- -->@x.org, WWW<!-- -->.X.ORG"),
        # smartypants would show an em dash, an ellipsis and curly quotes.
        ("dùng --tp 8, x...", "dùng -<!-- -->-tp 8, x.<!-- -->.<!-- -->."),
        ("và . . .", "và .<!-- --> .<!-- --> ."),
        ("``x'' và ---", "\\`<!-- -->\\`x'<!-- -->' và -<!-- -->-<!-- -->-"),
    ],
)
def test_what_the_site_markdown_reads_specially_stays_text(text: str, markdown: str) -> None:
    """The site's remark-math, GFM and smartypants (test_astro_site.py builds the real page)."""
    assert plain_markdown(text, line_start=False) == markdown
    root = SyntaxTreeNode(markdown_parser().parse(markdown))
    warnings: list[str] = []
    back = read_nodes(root.children[0].children[0].children, 1, lambda _l, m: warnings.append(m))
    assert back == (inline.Text(text),)
    assert warnings == []


@pytest.mark.parametrize("in_table", [False, True], ids=["text", "table"])
@pytest.mark.parametrize("url", ["/s?q=a&amp;b=1", "/s?x=&#65;", "/a|b", "https://x.org/a b&lt;|"])
def test_a_link_target_reads_back_as_written(url: str, in_table: bool) -> None:
    """CommonMark decodes entities in a link target: "&amp;" came back as "&", a changed URL.
    A "|" in a table's link ended the cell: the rest of the row was lost."""
    nodes = (inline.Link((inline.Text("x"),), url), inline.Text(" y"))
    markdown = inline_markdown(nodes, in_table=in_table, line_start=False)
    source = f"| h |\n|---|\n| {markdown} |\n" if in_table else markdown
    root = SyntaxTreeNode(markdown_parser().parse(source))
    cell = [node for node in root.walk() if node.type == "inline"][-1]  # the table's body cell
    warnings: list[str] = []
    assert read_nodes(cell.children, 1, lambda _l, m: warnings.append(m)) == nodes
    assert warnings == []


@pytest.mark.parametrize("text", ["****\t'x", "**** \t x", "a\n****    b"])
def test_white_space_at_a_line_start_is_no_code_block(text: str) -> None:
    """An empty emphasis left "\t'x" at the start of the text: the page showed a code block."""
    markdown = inline_markdown(inline.parse(text))
    root = SyntaxTreeNode(markdown_parser().parse(markdown))
    assert [child.type for child in root.children] == ["paragraph"], markdown


def escaped_as_before(text: str, line_start: bool) -> str:
    """The page writer's escaping of plain text, one character at a time.

    As it was before it was made fast, with what the site's Markdown added
    since: "$" (math), and an empty comment before the "." of "www.", the ":" of
    "://" and the "@" of "a@b" (GFM links), and between characters smartypants
    would join.
    """
    text = re.sub(r"\n[ \t]*(?:\n[ \t]*)+", "\n", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = re.sub(r"[ \t]+\n", "\n", text)  # a hard break, which the feeds do not show
    lines = []
    for number, line in enumerate(text.split("\n")):
        out = []
        for index, ch in enumerate(line):
            before = line[index - 1 : index]
            intraword = 0 < index < len(line) - 1 and line[index - 1].isalnum()
            intraword = intraword and line[index + 1].isalnum()
            entity = re.compile(
                r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{0,31});"
            )
            if ch in "\\`*[]<|~$":
                out.append("\\" + ch)
            elif ch == "_" and not intraword:
                out.append("\\_")
            elif ch == "&" and entity.match(line, index):
                out.append("\\&")
            elif (
                (ch == "." and line[index - 3 : index].lower() == "www")
                or (
                    ch == ":"
                    and line[index + 1 : index + 3] == "//"
                    and re.fullmatch(r"\w", before)
                )
                or (ch == "@" and re.fullmatch(r"[\w.+-]", before))
            ):
                out.append("<!-- -->" + ch)
            else:
                out.append(ch)
            after = line[index + 1 :]
            if (ch in "-'`" and after[:1] == ch) or (ch == "." and after.lstrip(" \t")[:1] == "."):
                out.append("<!-- -->")
        escaped = "".join(out)
        if line_start or number:
            stripped = escaped.lstrip(" \t")  # shown by no Markdown reader, or as code
            ordered = re.match(r"^([0-9]{1,9})([.)])", stripped)
            if stripped[:1] in ("#", ">", "+", "-", "=", ":"):
                escaped = f"\\{stripped}"
            elif ordered:
                escaped = f"{ordered.group(1)}\\{stripped[ordered.end(1) :]}"
            else:
                escaped = stripped
        lines.append(escaped)
    return "\n".join(lines)


@settings(max_examples=1_000, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("ab1_&#;xw\\`*[]<|~$:/'\" \t\n\r-+=>.)ạ@")), max_size=40),
    st.booleans(),
)
def test_plain_text_is_escaped_as_before(text: str, line_start: bool) -> None:
    assert plain_markdown(text, line_start=line_start) == escaped_as_before(text, line_start)


# The entries' inline syntax, written to the page and read back with a CommonMark
# parser, gives the same nodes: what the page shows is what the entries say.
MARKUP_TEXT = st.text(
    alphabet=st.sampled_from(list("ab xyzw_*`[]()<>&|~#-+=.!\\:;1ạờ学$/'")),
    min_size=1,
    max_size=40,
).map(str.strip)


def parsed(text: str) -> tuple[inline.Node, ...] | None:
    try:
        return inline.parse(text)
    except inline.MarkupError:
        return None


def normal(nodes: tuple[inline.Node, ...]) -> tuple[inline.Node, ...]:
    """Nodes as CommonMark can express them (see page_markdown's known limits)."""
    out: list[inline.Node] = []
    for node in nodes:
        if isinstance(node, inline.Text):
            if out and isinstance(out[-1], inline.Text):
                out[-1] = inline.Text(out[-1].text + node.text)
            elif node.text:
                out.append(node)
        elif isinstance(node, inline.Code):
            out.append(node)
        elif isinstance(node, inline.Link):
            out.append(inline.Link(normal(node.children), node.url))
        else:
            out.append(type(node)(normal(node.children)))
    return tuple(out)


@settings(max_examples=400, deadline=None)
@given(MARKUP_TEXT)
@example("_:*:1*:_")  # an emphasis in one whose runs flank both ways: their stars showed
@example("_1*1*1_")
def test_page_markdown_reads_back_as_the_same_nodes(text: str) -> None:
    nodes = parsed(text)
    if not text or nodes is None:
        return
    markdown = inline_markdown(nodes)
    root = SyntaxTreeNode(markdown_parser().parse(markdown))
    assert [child.type for child in root.children] == ["paragraph"], markdown
    warnings: list[str] = []
    back = read_nodes(root.children[0].children[0].children, 1, lambda _l, m: warnings.append(m))
    assert warnings == []
    if normal(back) != normal(nodes):
        # Only emphasis CommonMark would not recognise may be lost, never text.
        assert normal(flat(back)) == normal(flat(nodes)), markdown
        assert emphases(back) < emphases(nodes), markdown


def flat(nodes: tuple[inline.Node, ...]) -> tuple[inline.Node, ...]:
    out: list[inline.Node] = []
    for node in nodes:
        if isinstance(node, inline.Emphasis | inline.Strong):
            out.extend(flat(node.children))
        elif isinstance(node, inline.Link):
            out.append(inline.Link(flat(node.children), node.url))
        else:
            out.append(node)
    return tuple(out)


def emphases(nodes: tuple[inline.Node, ...]) -> int:
    count = 0
    for node in nodes:
        if isinstance(node, inline.Emphasis | inline.Strong):
            count += 1 + emphases(node.children)
        elif isinstance(node, inline.Link):
            count += emphases(node.children)
    return count
