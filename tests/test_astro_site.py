"""The example Astro site (examples/astro-site), built for real with what infrafeed writes.

The site has the real AIInfraGuide site's shape: Astro 4, its Markdown plugins
(remark-math, rehype-slug, autolink headings, external links, KaTeX, and
Astro's own GFM and smartypants) and its ``posts`` schema. Its documented
commands run here as a site's owner runs them: ``npm run feeds`` (infrafeed
writes ``public/feeds/`` and ``docs/posts/update-log.md``) on the shipped
entries plus one release full of characters those plugins read specially,
then ``npm run build`` (``astro check``, ``astro build``, pagefind). Then
``dist/`` is checked as it would be deployed, and opened in Chromium.

One build for the module, and one more of a page whose release heading was
renamed, to show that the anchor check finds the broken link.

Needs node and npm, and the example's ``node_modules``: ``.ci/run`` installs
them (``npm ci``), so these tests never reach the network. Locally, run
``npm ci`` in examples/astro-site once; without it they are skipped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

import lxml.etree
import lxml.html
import pytest
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.support.wait import WebDriverWait

from conftest import REPO, SHIPPED_ENTRIES, require_program
from infrafeed.source.loader import load
from localhttp import serve
from pngs import read_png

pytestmark = [pytest.mark.slow, pytest.mark.external]

EXAMPLE = REPO / "examples" / "astro-site"
ARTIFACTS = REPO / "test-artifacts"
SITE = "https://caomaolufei.github.io/AIInfraGuide/"
CHANGELOG = SITE + "blog/update-log/"
ARTICLE_LABEL = load(SHIPPED_ENTRIES).site.page.article_label
# What the example builds from its sources (.gitignore): never copied into a test's site.
GENERATED = {"node_modules", "dist", ".astro", "public/feeds", "docs/posts/update-log.md"}

# A second release on the newest day (anchor #2026-11-07-2), whose text holds what
# the site's Markdown reads specially: $ pairs (remark-math), smartypants' runs,
# GFM's strikethrough and autolinks, HTML, entities, block marks, a footnote (the entries'
# CommonMark refuses strike-through and a heading: escaped, they are text to keep as text).
SPECIAL_TEXTS = {
    "context": "Chi phí $5 so với $10, và $$y$$ cũng không phải công thức:",
    "title": "Giá $5 -- hay $10... \"rẻ\" và 'đắt'",
    "summary": (
        "Dùng --tp 8 và ``x'' với . . . ; https://example.org/~u_v_ và www.example.org/a_b_"
        " và a_b_@example.org; \\~~không gạch\\~~ <b>không đậm</b> \\&amp; [^1] ống | dọc;"
        ' mã `$x$ -- "y"` và *nhấn $1$*; **Mới!**🎉 và 🔥*(beta)*'
    ),
    # A line ":-:" made GFM read the line above as a table's header; "****" was an empty strong.
    "note": "Ghi chú $a$ và [liên kết --x](https://example.org/a--b)\n:-:\nmật khẩu ****",
    "note_summary": "\\# không phải tiêu đề, 1. không phải danh sách, \\$ là \\$",
    "detail": "Chi tiết $$z$$ -- ...",
}
# JSON strings are TOML basic strings.
SPECIAL_RELEASE = """date = 2026-11-07

[[groups]]
kind = "new"
module = 2
chapter = 9
context = {context}

[[groups.articles]]
id = "cuda-dollar-pairs"
number = "9.1"
title = {title}
summary = {summary}

[[groups]]
kind = "improved"
module = 2

[[groups.notes]]
id = "cuda-dollar-note"
text = {note}
summary = {note_summary}
details = [{detail}]
""".format(**{key: json.dumps(text, ensure_ascii=False) for key, text in SPECIAL_TEXTS.items()})


@dataclass
class Built:
    site: Path  # the site's copy, as after its commands ran
    dist: Path
    seconds: dict[str, float]  # how long each command took


def environment(entries: Path) -> dict[str, str]:
    return {
        **os.environ,
        # The example's `npm run feeds` runs the infrafeed these tests import.
        "INFRAFEED": str(Path(sys.executable).with_name("infrafeed")),
        "INFRAFEED_ENTRIES": str(entries),
        # Nothing may reach the network: Astro's telemetry and npm's update check would.
        "ASTRO_TELEMETRY_DISABLED": "1",
        "npm_config_update_notifier": "false",
    }


def installed_node_modules() -> Path:
    require_program("node")
    require_program("npm")
    modules = EXAMPLE / "node_modules"
    if not (modules / ".bin" / "astro").exists():
        message = f"{modules} is missing: run `npm ci` in {EXAMPLE} (.ci/run does)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return modules


def link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system
        shutil.copy2(source, target)


def site_copy(where: Path) -> Path:
    """The example's sources in ``where``, with its installed packages hard-linked in.

    Hard links, not a symlink: Astro and Vite write their caches inside
    node_modules, and each build must have its own.
    """

    def generated(folder: str, names: list[str]) -> set[str]:
        relative = Path(folder).relative_to(EXAMPLE)
        return {name for name in names if (relative / name).as_posix() in GENERATED}

    shutil.copytree(EXAMPLE, where, ignore=generated)
    shutil.copytree(
        installed_node_modules(),
        where / "node_modules",
        symlinks=True,
        copy_function=link_or_copy,
        ignore=shutil.ignore_patterns(".astro", ".vite"),
    )
    return where


def run(site: Path, entries: Path, *command: str) -> float:
    """Run ``command`` in ``site``; fail with its output when it fails. Returns its seconds."""
    start = time.perf_counter()
    result = subprocess.run(
        command,
        cwd=site,
        env=environment(entries),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{output[-6000:]}"
    return time.perf_counter() - start


def entries_with_special_release(where: Path) -> Path:
    entries = where / "entries"
    shutil.copytree(SHIPPED_ENTRIES, entries)
    (entries / "2026" / "2026-11-07-2.toml").write_text(SPECIAL_RELEASE, encoding="utf-8")
    return entries


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    root = tmp_path_factory.mktemp("astro")
    entries = entries_with_special_release(root)
    site = site_copy(root / "site")
    seconds = {"npm run feeds": run(site, entries, "npm", "run", "feeds")}
    seconds["npm run build"] = run(site, entries, "npm", "run", "build")
    return Built(site, site / "dist", seconds)


@pytest.mark.slow
def test_only_a_ci_build_stops_without_the_feeds(tmp_path: Path) -> None:
    """Every production build stopped without `npm run feeds`: a contributor to the real site
    needed Python to build it. A deploy (CI) still stops, so no page goes out without them."""
    site = site_copy(tmp_path / "site")
    astro = [str(site / "node_modules" / ".bin" / "astro"), "build"]
    outcomes = []
    for ci in ("true", ""):
        env = {**environment(tmp_path), "CI": ci}
        result = subprocess.run(
            astro, cwd=site, env=env, capture_output=True, text=True, timeout=600, check=False
        )
        outcomes.append(
            (result.returncode == 0, "head-links.html is missing" in result.stdout + result.stderr)
        )
    assert outcomes == [(False, True), (True, True)]


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The site built from a page whose heading ``## 2026-11-01`` was renamed by hand."""
    root = tmp_path_factory.mktemp("astro-broken")
    entries = entries_with_special_release(root)
    site = site_copy(root / "site")
    run(site, entries, "npm", "run", "feeds")
    page = site / "docs" / "posts" / "update-log.md"
    text = page.read_text(encoding="utf-8")
    assert "\n## 2026-11-01\n" in text
    page.write_text(text.replace("\n## 2026-11-01\n", "\n## Ngày 2026-11-01\n"), encoding="utf-8")
    # astro build alone: the check and the search index are the other fixture's business.
    seconds = {"astro build": run(site, entries, "npm", "run", "astro", "--", "build")}
    return Built(site, site / "dist", seconds)


def html_of(path: Path) -> lxml.html.HtmlElement:
    return lxml.html.fromstring(path.read_bytes())


def heading_ids(page: Path) -> set[str]:
    return {str(h.get("id")) for h in html_of(page).xpath("//h1|//h2|//h3|//h4") if h.get("id")}


def changelog_anchors(dist: Path) -> set[str]:
    """Every #fragment of the changelog page that the deployed feeds and feed pages link to."""
    link = re.compile(re.escape(CHANGELOG) + r"#([^\"'<>\s&\\]+)")  # in XML, HTML or JSON
    found: set[str] = set()
    for path in (dist / "feeds").rglob("*"):
        if path.suffix in (".xml", ".json", ".html"):
            found |= {unquote(m) for m in link.findall(path.read_text(encoding="utf-8"))}
    return found


def anchor_problems(dist: Path) -> list[str]:
    """The feeds' links into the changelog page that no heading id of the built page answers."""
    page = dist / "blog" / "update-log" / "index.html"
    if not page.is_file():
        return [f"{page} was not built"]
    ids = heading_ids(page)
    missing = sorted(changelog_anchors(dist) - ids)
    return [f"#{anchor}: no heading has this id" for anchor in missing]


def test_the_build_passes_astro_check_and_the_posts_schema(built: Built) -> None:
    # npm run build stops at the first failure, so its success says: astro check
    # found no error, the page's front matter passed the posts schema (or the
    # content layer stops the build), and pagefind indexed the pages.
    page = built.dist / "blog" / "update-log" / "index.html"
    front = load(SHIPPED_ENTRIES).site.page
    assert html_of(page).findtext(".//article/h1") == front.title
    assert (built.dist / "pagefind" / "pagefind.js").is_file()
    assert (built.site / "docs" / "posts" / "update-log.md").is_file()
    print(f"\ntimings: {built.seconds}")


def test_every_feed_link_into_the_changelog_is_a_heading_id(built: Built) -> None:
    anchors = changelog_anchors(built.dist)
    releases = {rf.anchor for rf in load(SHIPPED_ENTRIES).releases} | {"2026-11-07-2"}
    # Items with a page of their own link there; the others, to their release.
    assert anchors <= releases and "2026-11-07-2" in anchors and len(anchors) > 10
    assert anchor_problems(built.dist) == []


def test_the_anchor_check_finds_a_renamed_heading(broken: Built) -> None:
    assert anchor_problems(broken.dist) == ["#2026-11-01: no heading has this id"]


def test_every_catalog_url_is_a_file_of_the_deployed_site(built: Built) -> None:
    catalog = json.loads((built.dist / "feeds" / "feeds.json").read_text(encoding="utf-8"))
    urls = [catalog["page_url"], catalog["opml_url"]]
    urls += [feed[key] for feed in catalog["feeds"] for key in ("url", "page_url")]
    assert len(catalog["feeds"]) == 15  # all and four modules, three formats each
    for url in urls:
        assert url.startswith(SITE), url
        assert (built.dist / url.removeprefix(SITE)).is_file(), url
    # infrafeed's bookkeeping stays in public/feeds/ for the next run, and out of the site.
    assert sorted(p.name for p in (built.site / "public" / "feeds").glob(".infrafeed*")) == [
        ".infrafeed-ids",
        ".infrafeed-manifest",
    ]
    assert list(built.dist.rglob(".*")) == []


def test_the_feeds_icons_are_png_files_of_the_deployed_site(built: Built) -> None:
    feeds = built.dist / "feeds"
    json_feed = json.loads((feeds / "feed.json").read_text(encoding="utf-8"))
    rss = lxml.etree.parse(feeds / "feed.xml")
    atom = lxml.etree.parse(feeds / "atom.xml")
    ns = {"a": "http://www.w3.org/2005/Atom"}
    urls = {
        json_feed["icon"]: 512,
        json_feed["favicon"]: 64,
        rss.findtext("channel/image/url"): 64,
        atom.findtext("a:icon", namespaces=ns): 64,
    }
    assert len(urls) == 2  # icon.png and favicon.png, each named wherever its size goes
    assert atom.find("a:logo", namespaces=ns) is None  # RFC 4287 asks 2:1; icon.png is square
    for url, side in urls.items():
        assert url is not None and url.startswith(SITE), url
        png = (built.dist / url.removeprefix(SITE)).read_bytes()
        assert read_png(png).size == (side, side), url
        assert png == (built.site / "public" / url.removeprefix(SITE)).read_bytes()


def test_every_page_announces_the_feeds(built: Built) -> None:
    head_links = html_of(built.dist / "feeds" / "head-links.html")
    expected = {(link.get("type"), link.get("href")) for link in head_links.iter("link")}
    assert len(expected) == 3
    pages = [p for p in built.dist.rglob("*.html") if p.name != "head-links.html"]
    assert len(pages) == 8  # index, two posts, the feeds' index and four module pages
    for page in pages:
        url = SITE + page.relative_to(built.dist).as_posix()
        found = {
            (link.get("type"), urljoin(url, link.get("href")))
            for link in html_of(page).xpath("/html/head/link[@rel='alternate']")
        }
        assert expected <= found, page


def plain(text: str) -> str:
    """Text as compared: white space collapsed, and quotes straight.

    Smartypants curls straight quotes in the text of the page, and nothing in
    Markdown can stop it; the page shows “rẻ” where the feeds say "rẻ".
    """
    text = " ".join(text.split())
    return text.translate(str.maketrans("“”‘’", "\"\"''"))


def release_bullets(page: Path) -> dict[str, list[str]]:
    """The text of each bullet of each release of the built changelog page, by anchor.

    A bullet's own text: without its nested list of details or its table.
    """
    bullets: dict[str, list[str]] = {}
    anchor = ""
    for element in html_of(page).xpath("//article//div[contains(@class, 'prose')]/*"):
        if element.tag == "h2":
            anchor = str(element.get("id"))
            bullets[anchor] = []
        elif element.tag == "ul":
            for item in element.xpath("./li"):
                for nested in item.xpath("./ul|./table"):
                    item.remove(nested)
                bullets[anchor].append(plain(item.text_content()))
    return bullets


def test_the_page_shows_the_text_of_the_feeds(built: Built) -> None:
    page = built.dist / "blog" / "update-log" / "index.html"
    bullets = release_bullets(page)
    feed = json.loads((built.dist / "feeds" / "feed.json").read_text(encoding="utf-8"))
    matched: dict[str, set[str]] = {anchor: set() for anchor in bullets}
    for item in feed["items"]:
        # The id names the release's day (tag:...,2026-04-14:2026-11-07/cuda-dollar-pairs/new),
        # whose releases are #2026-11-07, #2026-11-07-2, ...
        day = item["id"].rsplit(":", 1)[1].split("/")[0]
        # "M4 · Mới · 6.1 …": the module's label (in items of a module), the kind, the title.
        title = plain(re.sub(r"^(M\d+ · )?[^·]+ · ", "", item["title"]))
        summary = plain(item.get("summary", ""))
        article = f"{ARTICLE_LABEL}: {title}" + (f" | {summary}" if summary else "")
        # A note's whole text opens its content (its title may be the first clause only).
        first = lxml.html.fragment_fromstring(item["content_html"], create_parent="div")[0]
        line = plain(first.text_content()) + (f" | {summary}" if summary else "")
        found = [
            (anchor, bullet)
            for anchor, texts in bullets.items()
            if anchor == day or anchor.startswith(day + "-")
            for bullet in texts
            if bullet in (article, line)
        ]
        assert found, f"{item['id']}: no bullet of #{day} reads {article!r} or {line!r}"
        matched[found[0][0]].add(found[0][1])
    assert matched == {anchor: set(texts) for anchor, texts in bullets.items()}

    html = page.read_text(encoding="utf-8")
    special = bullets["2026-11-07-2"]
    assert special[0].startswith("Bài: 9.1 Giá $5 -- hay $10... ")
    assert "Chi phí $5 so với $10, và $$y$$ cũng không phải công thức:" in plain(
        html_of(page).text_content()
    )
    assert "katex" not in html  # no formula anywhere
    assert "<del>" not in html and "<b>" not in html
    assert any(":-: mật khẩu ****" in text for text in special), special
    # No link GFM would make of "www.", "https://" or "a@b.co": it reads text with escapes gone.
    assert "mailto:" not in html and "://www.example.org" not in html
    assert 'href="https://example.org/~u' not in html
    # The one difference, pinned so that a change of it is noticed: curly quotes.
    assert "“rẻ” và ‘đắt’" in html


@pytest.mark.parametrize("which", ["newest", "oldest"])
def test_a_feed_link_opens_its_release_in_view(
    built: Built, browser: webdriver.Chrome, tmp_path: Path, which: str
) -> None:
    feed = json.loads((built.dist / "feeds" / "feed.json").read_text(encoding="utf-8"))
    item = feed["items"][0 if which == "newest" else -1]
    link = next(url for url in re.findall(r'href="([^"]+)"', item["content_html"]))
    assert link.startswith(CHANGELOG + "#")
    anchor = urlsplit(link).fragment
    # The site is served below /AIInfraGuide/, as on GitHub Pages.
    (tmp_path / "AIInfraGuide").symlink_to(built.dist, target_is_directory=True)
    with serve(tmp_path) as base:
        browser.get(base + link.removeprefix("https://caomaolufei.github.io/"))
        # The heading below the fixed header and above the window's bottom edge,
        # the topmost thing at its middle, once smooth scrolling has settled.
        script = """
            const heading = document.getElementById(arguments[0]);
            const box = heading.getBoundingClientRect();
            const header = document.getElementById('site-header').getBoundingClientRect();
            const top = document.elementFromPoint(box.left + 4, (box.top + box.bottom) / 2);
            return [box.top, box.bottom, header.bottom, innerHeight, heading.contains(top)];
        """
        seen: list[list[Any]] = []

        def settled(driver: webdriver.Chrome) -> bool:
            seen.append(driver.execute_script(script, anchor))
            top, bottom, header, height, visible = seen[-1]
            still = len(seen) > 1 and seen[-1] == seen[-2]
            return still and header <= top < bottom <= height and visible

        try:
            WebDriverWait(browser, 5, poll_frequency=0.1).until(settled)
        except TimeoutException:
            pytest.fail(f"#{anchor} not in view: top, bottom, header, height, on top = {seen[-1]}")
        if which == "oldest":
            assert browser.execute_script("return scrollY") > 1000  # it did scroll
        # For a person to look at (CI keeps test-artifacts/).
        ARTIFACTS.mkdir(exist_ok=True)
        assert browser.save_screenshot(str(ARTIFACTS / f"astro-update-log-{which}.png"))
