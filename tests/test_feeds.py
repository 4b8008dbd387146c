"""The feeds a subscriber gets: golden files, spec rules, agreement between formats."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import shutil
from pathlib import Path
from xml.etree import ElementTree as ET
from zoneinfo import ZoneInfo

import feedparser
import pytest

from conftest import DATA, SHIPPED_ENTRIES, RunCli
from feedcheck import ATOM, check_tree
from infrafeed.build import build
from infrafeed.feeds.items import build_items
from infrafeed.feeds.specs import feed_specs
from infrafeed.source.loader import Changelog, load
from w3c import w3c_tree

SHIPPED_BASE = "https://caomaolufei.github.io/AIInfraGuide/feeds/"
SMALL_BASE = "https://example.org/guide/feeds/"
GOLDEN = DATA / "small-site" / "expected"
FEED_FILES = ("feed.xml", "atom.xml", "feed.json")
MODULES = ("prerequisites", "cuda", "distributed", "inference")


def feed_tree(out: Path) -> dict[str, bytes]:
    """Every published file below ``out``, without infrafeed's own bookkeeping files."""
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }


def ids_links_titles(path: Path) -> list[tuple[str, str, str]]:
    """(id, link, title) of each item, in document order, whatever the format."""
    data = path.read_bytes()
    if path.suffix == ".json":
        return [(i["id"], i["url"], i["title"]) for i in json.loads(data)["items"]]
    root = ET.fromstring(data)
    if root.tag == "rss":
        return [
            (i.findtext("guid") or "", i.findtext("link") or "", i.findtext("title") or "")
            for i in root.iter("item")
        ]
    found = []
    for entry in root.iter(f"{ATOM}entry"):
        link = entry.find(f"{ATOM}link")
        found.append(
            (
                entry.findtext(f"{ATOM}id") or "",
                "" if link is None else link.get("href", ""),
                entry.findtext(f"{ATOM}title") or "",
            )
        )
    return found


@pytest.fixture(scope="module")
def shipped_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shipped")
    shutil.copytree(SHIPPED_ENTRIES, root / "entries")  # a build writes beside the entries
    build(root / "entries", root / "output")
    return root / "output"


def test_golden_small_site(small_site: Path, tmp_path: Path) -> None:
    """The fixture site's feeds, byte for byte. INFRAFEED_REGEN_GOLDEN=1 rewrites them."""
    out = tmp_path / "output"
    build(small_site, out)
    built = feed_tree(out)
    if os.environ.get("INFRAFEED_REGEN_GOLDEN") == "1":
        shutil.rmtree(GOLDEN, ignore_errors=True)
        for relative, data in built.items():
            (GOLDEN / relative).parent.mkdir(parents=True, exist_ok=True)
            (GOLDEN / relative).write_bytes(data)
        pytest.skip("golden files regenerated: read the diff before committing")
    assert built == feed_tree(GOLDEN)


def test_build_writes_all_and_module_feeds_in_three_formats(shipped_out: Path) -> None:
    expected = {*FEED_FILES} | {f"modules/{m}/{f}" for m in MODULES for f in FEED_FILES}
    assert expected <= set(feed_tree(shipped_out))


def test_every_item_once_and_each_module_feed_exactly_its_items(shipped_out: Path) -> None:
    changelog = load(SHIPPED_ENTRIES)
    items = build_items(changelog)
    assert len(items) == 98 + 23
    all_ids = [i for i, _, _ in ids_links_titles(shipped_out / "feed.xml")]
    assert all_ids == [item.id for item in items]
    assert len(set(all_ids)) == len(all_ids)
    for slug in MODULES:
        expected = [i.id for i in items if i.module is not None and i.module.slug == slug]
        got = [i for i, _, _ in ids_links_titles(shipped_out / "modules" / slug / "feed.xml")]
        assert got == expected, slug
        assert got, f"module {slug} has items"


@pytest.mark.parametrize("name", ["feed.xml", *[f"modules/{m}/feed.xml" for m in MODULES]])
def test_three_formats_agree_on_ids_links_titles_and_order(shipped_out: Path, name: str) -> None:
    folder = (shipped_out / name).parent
    rss = ids_links_titles(folder / "feed.xml")
    assert rss == ids_links_titles(folder / "atom.xml")
    assert rss == ids_links_titles(folder / "feed.json")


def test_w3c_rules_hold_for_every_shipped_feed(shipped_out: Path) -> None:
    found = check_tree(shipped_out, SHIPPED_BASE)
    assert len(found) == 15
    assert {name: problems for name, problems in found.items() if problems} == {}
    assert w3c_tree(shipped_out, SHIPPED_BASE) == {}


def test_w3c_rules_hold_for_the_fixture_site(small_site: Path, tmp_path: Path) -> None:
    build(small_site, tmp_path / "out")
    found = check_tree(tmp_path / "out", SMALL_BASE)
    assert {name: problems for name, problems in found.items() if problems} == {}
    assert w3c_tree(tmp_path / "out", SMALL_BASE) == {}


def test_an_author_url_without_a_path_is_written_with_one(small_site: Path, tmp_path: Path) -> None:
    """OPML's ownerId, as the W3C validator reads it, wants "/" after the host."""
    settings = small_site / "site.toml"
    text = settings.read_text(encoding="utf-8")
    settings.write_text(
        text.replace('url = "https://example.org/guide/about"', 'url = "https://example.org?x=1"'),
        encoding="utf-8",
    )
    build(small_site, tmp_path / "out")
    assert (
        b"<ownerId>https://example.org/?x=1</ownerId>" in (tmp_path / "out/feeds.opml").read_bytes()
    )
    assert w3c_tree(tmp_path / "out", SMALL_BASE) == {}


def test_an_image_with_a_query_is_no_rss_image(small_site: Path, tmp_path: Path) -> None:
    """The W3C validator takes the format from the URL's last '.': 'logo.png?v=1.5' is '5'."""
    settings = small_site / "site.toml"
    text = settings.read_text(encoding="utf-8")
    assert 'logo = "images/logo.png"' in text
    text = text.replace("images/logo.png", "images/logo.png?v=1.5")
    assert 'icon = "images/mark.svg"\n' in text
    settings.write_text(text.replace('icon = "images/mark.svg"\n', ""), "utf-8")
    build(small_site, tmp_path / "out")
    assert b"<image>" not in (tmp_path / "out" / "feed.xml").read_bytes()
    assert b"logo.png?v=1.5" in (tmp_path / "out" / "atom.xml").read_bytes()
    assert w3c_tree(tmp_path / "out", SMALL_BASE) == {}
    # With [feeds] icon, RSS gets the drawn favicon.png instead.
    settings.write_text(text, "utf-8")
    build(small_site, tmp_path / "out")
    image = ET.fromstring((tmp_path / "out" / "feed.xml").read_bytes()).find("channel/image")
    assert image is not None and image.findtext("url") == SMALL_BASE + "favicon.png"


def test_feedparser_reads_everything_cleanly(shipped_out: Path) -> None:
    changelog = load(SHIPPED_ENTRIES)
    newest = build_items(changelog)[0]
    for name in feed_tree(shipped_out):
        if not name.endswith(".xml"):
            continue  # feedparser reads XML feeds only
        parsed = feedparser.parse((shipped_out / name).read_bytes())
        assert parsed.bozo == 0, (name, parsed.get("bozo_exception"))
        assert parsed.feed.get("language", "vi") == "vi"
        if name == "feed.xml":
            assert parsed.entries[0].title == newest.title
            assert parsed.entries[0].published_parsed[:3] == (2026, 11, 7)


def test_items_link_to_encoded_pages_or_the_changelog_anchor(shipped_out: Path) -> None:
    links = {link for _, link, _ in ids_links_titles(shipped_out / "feed.xml")}
    assert (
        "https://caomaolufei.github.io/AIInfraGuide/guides/AI%20Infra%E5%AD%A6%E4%B9%A0%E8%B7%AF%E7%BA%BF"
        in links
    )
    assert "https://caomaolufei.github.io/AIInfraGuide/blog/update-log/#2026-11-07" in links
    assert all(link.isascii() and " " not in link for link in links)


@pytest.mark.parametrize(
    ("changelog", "page"),
    [
        ("https://Example.org/a b/nhật-ký", "https://example.org/a%20b/nh%E1%BA%ADt-k%C3%BD"),
        ("https://例子.com/docs/CHANGELOG.html", "https://xn--fsqu00a.com/docs/CHANGELOG.html"),
        ("https://example.org:8080/p;a=1/log/", "https://example.org:8080/p;a=1/log/"),
        ("http://EXAMPLE.ORG", "http://example.org/"),  # the same URL, as OPML wants it
    ],
)
def test_release_links_are_the_changelog_page_and_its_anchor(
    small_site: Path, changelog: str, page: str
) -> None:
    # The page as given, encoded: a changelog that names a file gets no "/" after it.
    loaded = load(small_site)
    site = loaded.site.model_copy(update={"changelog": changelog})
    links = {item.source: item.link for item in build_items(Changelog(site, loaded.releases))}
    checked = 0
    for rf in loaded.releases:
        for g, group in enumerate(rf.release.groups, start=1):
            changes = [("articles", i, a.page) for i, a in enumerate(group.articles, start=1)]
            changes += [("notes", i, n.page) for i, n in enumerate(group.notes, start=1)]
            for table, index, page_of_change in changes:
                if page_of_change is None:
                    link = links[f"{rf.path} groups[{g}].{table}[{index}]"]
                    assert link == f"{page}#{rf.anchor}"
                    checked += 1
    assert checked
    assert [spec.home_url for spec in feed_specs(site) if spec.module is None] == [page]


def test_feed_dates_come_from_the_data(shipped_out: Path) -> None:
    root = ET.fromstring((shipped_out / "feed.xml").read_bytes())
    assert root.findtext("channel/lastBuildDate") == "Sat, 07 Nov 2026 12:00:00 +0800"
    atom = ET.fromstring((shipped_out / "modules" / "cuda" / "atom.xml").read_bytes())
    assert atom.findtext(f"{ATOM}updated") == "2026-06-25T12:00:00+08:00"
    pub = [i.findtext("pubDate") for i in root.iter("item")][:3]
    assert pub == [
        "Sat, 07 Nov 2026 12:00:00 +0800",
        "Sat, 07 Nov 2026 11:59:59 +0800",
        "Sat, 07 Nov 2026 11:59:58 +0800",
    ]


@pytest.mark.parametrize(
    ("zone", "day"), [("Pacific/Easter", "2026-09-05"), ("America/Nuuk", "2026-03-28")]
)
def test_a_days_last_releases_keep_their_order_when_summer_time_starts_that_evening(
    small_site: Path, zone: str, day: str
) -> None:
    """Easter Island's clocks skip 22:00-23:00 that day: release 12's second item was dated
    after its first, and release 11's first at release 12's instant (a helper)."""
    settings = small_site / "site.toml"
    text = settings.read_text(encoding="utf-8")
    settings.write_text(text.replace("Asia/Shanghai", zone), encoding="utf-8")
    article = '[[groups.articles]]\nid = "{}"\ntitle = "A"\n'
    for n in (11, 12):
        release = small_site / day[:4] / f"{day}-{n}.toml"
        release.parent.mkdir(exist_ok=True)
        group = f'date = {day}\n[[groups]]\nkind = "new"\nmodule = 1\n'
        release.write_text(group + article.format(f"a{n}") + article.format(f"b{n}"), "utf-8")
    items = [i for i in build_items(load(small_site)) if i.released.isoformat() == day]
    assert [i.id.rsplit(":", 1)[1] for i in items] == [
        f"{day}/{slug}/new" for slug in ("a12", "b12", "a11", "b11")
    ]
    times = [i.published.astimezone(dt.UTC) for i in items]  # instants: "-" of one zone's
    assert [a - b for a, b in itertools.pairwise(times)] == [
        dt.timedelta(seconds=1),
        dt.timedelta(minutes=59, seconds=59),
        dt.timedelta(seconds=1),
    ]
    noon = dt.datetime.combine(dt.date.fromisoformat(day), dt.time(12), ZoneInfo(zone))
    assert times[0] - noon == dt.timedelta(hours=11)  # a day's N-th release: N-1 hours after noon
    assert {i.published.date().isoformat() for i in items} == {day}  # in noon's offset


def _edit(entries: Path, old: str, new: str) -> None:
    path = entries / "2026" / "2026-11-07.toml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param("Tổng quan chiến lược", "Toàn cảnh chiến lược", id="title"),
        pytest.param("Dùng sổ bộ nhớ", "Sổ bộ nhớ", id="summary"),
        pytest.param(
            'number = "6.1"\n',
            'number = "6.1"\npage = "https://caomaolufei.github.io/AIInfraGuide/x"\n',
            id="url",
        ),
        pytest.param(
            "module = 4\nchapter = 6\ncontext", "module = 3\nchapter = 6\ncontext", id="module"
        ),
        pytest.param('number = "6.1"', 'number = "6.9"', id="number"),  # renumbered in its chapter
    ],
)
def test_ids_survive_edits(shipped_entries: Path, old: str, new: str) -> None:
    before = [i.id for i in build_items(load(shipped_entries))]
    _edit(shipped_entries, old, new)
    assert [i.id for i in build_items(load(shipped_entries))] == before


def test_ids_survive_the_site_moving(shipped_entries: Path) -> None:
    before = [i.id for i in build_items(load(shipped_entries))]
    site = shipped_entries / "site.toml"
    site.write_text(
        site.read_text(encoding="utf-8").replace(
            "https://caomaolufei.github.io/AIInfraGuide", "https://aiinfra.example.net/guide"
        ),
        encoding="utf-8",
    )
    moved = build_items(load(shipped_entries))
    assert [i.id for i in moved] == before
    assert moved[0].link.startswith("https://aiinfra.example.net/guide/")


def test_building_twice_gives_identical_bytes(small_site: Path, tmp_path: Path) -> None:
    build(small_site, tmp_path / "a")
    build(small_site, tmp_path / "b")
    assert feed_tree(tmp_path / "a") == feed_tree(tmp_path / "b")


def test_changing_a_summary_changes_that_items_content_and_nothing_else(
    shipped_entries: Path, tmp_path: Path
) -> None:
    build(shipped_entries, tmp_path / "before")
    _edit(shipped_entries, "Dùng sổ bộ nhớ để tách", "Dùng sổ bộ nhớ mới để tách")
    build(shipped_entries, tmp_path / "after")
    before = json.loads((tmp_path / "before" / "feed.json").read_bytes())
    after = json.loads((tmp_path / "after" / "feed.json").read_bytes())
    changed = [
        (b["id"], key)
        for b, a in zip(before["items"], after["items"], strict=True)
        for key in b
        if a[key] != b[key]
    ]
    target = "tag:caomaolufei.github.io,2026-04-14:2026-11-07/inference-parallelism-overview/new"
    assert changed == [(target, "content_html"), (target, "summary")]
    assert {k: v for k, v in before.items() if k != "items"} == {
        k: v for k, v in after.items() if k != "items"
    }
    unchanged = {"modules/cuda/feed.json", "modules/cuda/feed.xml", "modules/cuda/atom.xml"}
    for name in unchanged:
        assert (tmp_path / "before" / name).read_bytes() == (tmp_path / "after" / name).read_bytes()


def test_cli_build_reports_files(small_site: Path, tmp_path: Path, run_cli: RunCli) -> None:
    out = tmp_path / "out"
    code, stdout, stderr = run_cli("build", "--entries", str(small_site), "--out", str(out))
    assert (code, stderr) == (0, "")
    assert stdout.startswith(
        "wrote 19 files: atom.xml, favicon.png, feed.json, feed.xml, feeds.json, feeds.opml"
    )
    assert run_cli("build", "--entries", str(small_site), "--out", str(out)) == (
        0,
        "unchanged: 19 files\n",
        "",
    )


def test_items_read_on_their_own_in_the_all_items_feed(shipped_out: Path) -> None:
    """Module in the title, a note's first clause as title, no summary repeating it."""
    items = build_items(load(SHIPPED_ENTRIES))
    records = json.loads((shipped_out / "feed.json").read_bytes())["items"]
    for item, record in zip(items, records, strict=True):
        title, content = record["title"], record["content_html"]
        if item.module is not None:
            assert title.startswith(f"M{item.module.number} · "), title
            assert f"<p>Module {item.module.number} · {item.module.name}" in content
        assert not record.get("summary", "").startswith(title.split(" · ")[-1]), title
        assert ":</p></blockquote>" not in content
        assert "Module 4: " not in content and record["tags"][0] != "Module 4: "
    titles = [record["title"] for record in records]
    # Chapter numbers clash across modules; the titles do not.
    assert "M2 · Mới · 6.1 FlashAttention V1 chi tiết" in titles
    assert any(t.startswith("M4 · Mới · 6.1 Tổng quan chiến lược") for t in titles)
    # A long note is titled by its first clause; the content has all of it.
    interview = next(r for r in records if "Khu phỏng vấn" in r["title"])
    assert interview["title"] == (
        "Mới · Khu phỏng vấn: tổng cộng 180+ buổi phỏng vấn thật, phủ 40+ công ty, tổ chức theo bậc"
    )
    # A comma parts a list, not a clause: the title does not name one company as if alone.
    companies = "Mới · Các công ty gồm ByteDance, Alibaba, Tencent, Baidu, Kuaishou, Meituan"
    assert companies + ", Ant Group, NVIDIA…" in titles
    assert "M3 · Mới · Module 3 · Huấn luyện phân tán thêm Chương 2: Tối ưu hóa" in titles
    moved = "M4 · Điều chỉnh · Bài cũ vLLM quick start chuyển xuống Chương 1 thành 1.2"
    assert moved + " vLLM quick start…" in titles
    assert "tổ chức theo bậc" in interview["content_html"] and "summary" not in interview
    context = next(r for r in records if r["title"].startswith("M4 · Mới · 6.1"))["content_html"]
    assert "thêm 10 hình minh họa kiểu vẽ tay</p></blockquote>" in context


def test_a_note_title_from_the_entries_or_its_first_clause(small_site: Path) -> None:
    from infrafeed.source.inline import first_clause

    release = small_site / "2026" / "2026-03-02.toml"
    text = release.read_text(encoding="utf-8")
    text = text.replace(
        'id = "site-outline"\n', 'id = "site-outline"\ntitle = "Dàn ý tutorial mới"\n'
    )
    release.write_text(text, encoding="utf-8")
    items = {item.id.split("/")[1]: item for item in build_items(load(small_site))}
    assert items["site-outline"].title == "Cập nhật lớn · Dàn ý tutorial mới"
    assert "Cập nhật dàn ý <strong>tutorial</strong>" in items["site-outline"].content_html
    words = "Một câu rất dài không có dấu phẩy nào " * 5
    cut = first_clause(words.strip())
    assert cut.endswith("…") and len(cut) <= 91 and words.startswith(cut[:-1] + " ")
    assert first_clause("Blog: thêm trang Về tác giả") == "Blog: thêm trang Về tác giả"
    assert first_clause("Các công ty gồm ByteDance, Alibaba và nữa") == (
        "Các công ty gồm ByteDance, Alibaba và nữa"
    )
    assert first_clause("Sửa lỗi chính tả (xem mục 3.2; 3.3): bản mới") == (
        "Sửa lỗi chính tả (xem mục 3.2; 3.3)"
    )
    assert first_clause("Nâng cấp toàn diện khung kho tri thức: chi tiết") == (
        "Nâng cấp toàn diện khung kho tri thức"
    )
    # A CJK full stop or colon has no space after it (the site's Chinese edition).
    assert first_clause("上线 CUDA 知识库完整索引，按梯队分类组织。在线浏览 →") == (
        "上线 CUDA 知识库完整索引，按梯队分类组织"
    )
    bracketed = "这是一个很长的说明文字用于测试标题（见第三章；第四章）的截断效果"
    assert first_clause(bracketed + "。其余") == bracketed


def icons_and_authors(out: Path) -> dict[str, tuple[set[str], set[str]]]:
    """Per feed document: (its icons, the author of each of its items)."""
    found = {}
    for path in sorted(out.rglob("*")):
        if path.name not in FEED_FILES:
            continue
        data = path.read_bytes()
        if path.suffix == ".json":
            feed = json.loads(data)
            icons = {feed[key] for key in ("icon", "favicon") if key in feed}
            authors = {a["name"] for i in feed["items"] for a in i["authors"]}
        elif (root := ET.fromstring(data)).tag == "rss":
            icons = {url.text or "" for url in root.iter("url")}
            dc = "{http://purl.org/dc/elements/1.1/}creator"
            authors = {(i.findtext("author") or i.findtext(dc) or "") for i in root.iter("item")}
        else:
            icons = {e.text or "" for e in root if e.tag in (f"{ATOM}icon", f"{ATOM}logo")}
            authors = {
                e.findtext(f"{ATOM}author/{ATOM}name") or "" for e in root.iter(f"{ATOM}entry")
            }
        found[path.relative_to(out).as_posix()] = (icons, authors)
    return found


def test_icons_and_item_authors_in_every_format(shipped_out: Path, tmp_path: Path) -> None:
    from sitebuilder import write_site

    icon, favicon = SHIPPED_BASE + "icon.png", SHIPPED_BASE + "favicon.png"
    for name, (icons, authors) in icons_and_authors(shipped_out).items():
        # The shipped site has no logo: the icons drawn from its SVG favicon fill the icon
        # places, RSS's image the small one, and no Atom <logo> (RFC 4287 asks 2:1, and
        # icon.png is square); its items name the author in dc:creator.
        expected = {icon, favicon} if name.endswith("feed.json") else {favicon}
        assert icons == expected, name
        assert authors == {"caomaolufei"}, name
    out = tmp_path / "out"
    # Without [feeds] icon: the favicon and logo as set, in archives too.
    build(write_site(tmp_path / "entries", max_items=3), out)
    found = icons_and_authors(out)
    assert any("/archive/" in name for name in found)
    logo, favicon = "https://example.org/guide/images/logo.png", SMALL_BASE + "../favicon.svg"
    favicon = favicon.replace("feeds/../", "")
    by_format = {"feed.xml": {logo}, "atom.xml": {logo, favicon}, "feed.json": {logo, favicon}}
    with_email = {"author@example.org (Fixture Author)"}
    for name, (icons, authors) in found.items():
        assert icons == by_format[name.rsplit("/", 1)[-1]], name
        assert authors == (with_email if name.endswith("feed.xml") else {"Fixture Author"})
    assert {name: p for name, p in check_tree(out, SMALL_BASE).items() if p} == {}
    assert w3c_tree(out, SMALL_BASE) == {}
    rss = ET.fromstring((out / "feed.xml").read_bytes()).find("channel")
    assert rss is not None
    image = rss.find("image")
    assert image is not None
    assert [image.findtext(n) for n in ("url", "title", "link")] == [
        logo,
        rss.findtext("title"),
        rss.findtext("link"),
    ]


def images_of(path: Path) -> dict[str, str | None]:
    """A feed document's images, by the element or key that holds them."""
    data = path.read_bytes()
    if path.suffix == ".json":
        feed = json.loads(data)
        return {key: feed.get(key) for key in ("icon", "favicon")}
    root = ET.fromstring(data)
    if root.tag == "rss":
        image = root.find("channel/image")
        names = ("url", "title", "link", "width", "height")
        return {f"image/{n}": None if image is None else image.findtext(n) for n in names}
    return {tag: root.findtext(f"{ATOM}{tag}") for tag in ("icon", "logo")}


def build_into(entries: Path, tmp_path: Path) -> Path:
    """A build of a copy of ``entries`` (a build writes published-ids.txt beside them)."""
    shutil.copytree(entries, tmp_path / "entries")
    build(tmp_path / "entries", tmp_path / "out")
    return tmp_path / "out"


def test_each_format_points_at_the_drawn_icons(shipped_out: Path, tmp_path: Path) -> None:
    """[feeds] icon: favicon.png is the small icon everywhere and RSS's image (64 × 64, titled
    and linked as the channel), icon.png the large one; a logo set keeps the large place and
    RSS's image. Atom's <logo> is only a logo set: RFC 4287 asks 2:1, icon.png is square.
    The PNGs are the build's own, beside the feeds."""
    for base, out, logo in (
        (SHIPPED_BASE, shipped_out, None),
        (SMALL_BASE, build_into(DATA / "small-site" / "entries", tmp_path), "images/logo.png"),
    ):
        icon, favicon = base + "icon.png", base + "favicon.png"
        big = icon if logo is None else base.replace("feeds/", logo)
        for name in ("feed.xml", "atom.xml", "feed.json", "modules/cuda/feed.xml"):
            found = images_of(out / name)
            if name.endswith("feed.xml"):
                channel = ET.fromstring((out / name).read_bytes()).find("channel")
                assert channel is not None
                title, link = channel.findtext("title"), channel.findtext("link")
                side = None if logo else "64"
                assert found == {"image/url": favicon if logo is None else big,
                                 "image/title": title, "image/link": link,
                                 "image/width": side, "image/height": side}, name  # fmt: skip
            elif name.endswith("atom.xml"):
                assert found == {"icon": favicon, "logo": logo and big}, name
            else:
                assert found == {"icon": big, "favicon": favicon}, name
        for png in ("icon.png", "favicon.png"):
            assert (out / png).read_bytes().startswith(b"\x89PNG\r\n\x1a\n"), png
        assert {name: p for name, p in check_tree(out, base).items() if p} == {}
