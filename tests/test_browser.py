"""A real browser reads the built pages: headless Chromium from Debian, over local HTTP.

Screenshots (light, dark, narrow, a module page) are saved in test-artifacts/
for a person to look at; CI keeps them as artifacts.
"""

from __future__ import annotations

import fnmatch
import json
import shutil
import time
import tomllib
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import feedparser
import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By

from conftest import REPO, SHIPPED_ENTRIES
from localhttp import content_types, serve

ARTIFACTS = REPO / "test-artifacts"
MODULES = tomllib.loads((SHIPPED_ENTRIES / "site.toml").read_text(encoding="utf-8"))["modules"]

pytestmark = pytest.mark.external


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped entries, built."""
    from infrafeed.cli import main

    out = tmp_path_factory.mktemp("browser") / "out"
    # A copy: a build writes beside the entries (its cache, its record of ids).
    shutil.copytree(SHIPPED_ENTRIES, out.parent / "entries")
    args = ["--entries", str(out.parent / "entries"), "--out", str(out)]
    assert main(["build", *args, "-q"]) == 0
    return out


@pytest.fixture(scope="module")
def site(built: Path) -> Iterator[str]:
    """The build served on 127.0.0.1 with output/README.md's Content-Types; its base URL."""
    with serve(built, content_types()) as base:
        yield base


def fetch(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.read()


def screenshot(driver: webdriver.Chrome, name: str, width: int = 1280) -> Path:
    """A full-page screenshot in test-artifacts/ (height capped to keep files small)."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(width, min(int(height), 4000))
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    assert driver.save_screenshot(str(path))
    driver.set_window_size(1280, 900)
    return path


def test_index_page_shows_every_feed_and_module(browser: webdriver.Chrome, site: str) -> None:
    browser.get(site + "index.html")
    assert browser.title == "AIInfraGuide · Nguồn tin"
    assert browser.find_element(By.TAG_NAME, "h1").text == "Theo dõi AIInfraGuide"
    body = browser.find_element(By.TAG_NAME, "body").text
    for words in ("Các nguồn tin", "Cập nhật mới nhất", "Đăng ký tất cả một lần"):
        assert words in body
    cards = browser.find_elements(By.CSS_SELECTOR, "article.feed")
    assert [card.get_attribute("id") for card in cards] == [
        "feed-all",
        *(f"feed-module-{module['slug']}" for module in MODULES),
    ]
    for card, module in zip(cards[1:], MODULES, strict=True):
        heading = card.find_element(By.TAG_NAME, "h3").text
        assert heading == f"AIInfraGuide · Module {module['number']} · {module['name']}"
        formats = [a.text for a in card.find_elements(By.CSS_SELECTOR, ".formats a")]
        assert formats == ["RSS 2.0", "Atom 1.0", "JSON Feed 1.1"]
        urls = [code.text for code in card.find_elements(By.CSS_SELECTOR, "code.url")]
        assert urls[0].endswith(f"/feeds/modules/{module['slug']}/feed.xml")
    latest = browser.find_elements(By.CSS_SELECTOR, "ol.items li a.title")
    assert len(latest) == 20
    assert latest[0].text.startswith("M4 · Mới · 6.1 Tổng quan chiến lược song song suy luận")
    screenshot(browser, "index-light.png")
    screenshot(browser, "index-narrow.png", width=390)


def test_autodiscovery_links_resolve_to_real_feeds(browser: webdriver.Chrome, site: str) -> None:
    for page in ("index.html", "modules/cuda/index.html"):
        browser.get(site + page)
        found = browser.find_elements(By.CSS_SELECTOR, "head link[rel=alternate]")
        assert len(found) >= 3
        for link in found:
            url, media_type = link.get_property("href"), link.get_attribute("type")
            assert isinstance(url, str) and url.startswith(site)
            status, data = fetch(url)
            assert status == 200
            if media_type == "application/feed+json":
                assert json.loads(data)["version"] == "https://jsonfeed.org/version/1.1"
            else:
                parsed = feedparser.parse(data)
                assert parsed.bozo == 0 and parsed.entries
                assert (
                    parsed.version
                    == {
                        "application/rss+xml": "rss20",
                        "application/atom+xml": "atom10",
                    }[str(media_type)]
                )


def test_every_link_on_the_index_works(browser: webdriver.Chrome, site: str) -> None:
    browser.get(site + "index.html")
    hrefs = {a.get_property("href") for a in browser.find_elements(By.TAG_NAME, "a")}
    local = sorted(str(href) for href in hrefs if str(href).startswith(site))
    external = sorted(str(href) for href in hrefs if not str(href).startswith(site))
    assert len(local) >= 20 and len(external) > 10
    for url in local:
        assert fetch(url)[0] == 200, url
    for url in external:
        parts = urlsplit(url)
        assert parts.scheme == "https" and parts.netloc and " " not in url, url


def test_module_page_lists_the_module(browser: webdriver.Chrome, site: str) -> None:
    browser.get(site + "index.html")
    browser.find_element(By.CSS_SELECTOR, "#feed-module-cuda h3 a").click()
    assert browser.current_url == site + "modules/cuda/index.html"
    assert browser.find_element(By.TAG_NAME, "h1").text == "Lập trình CUDA và tối ưu toán tử"
    items = browser.find_elements(By.CSS_SELECTOR, "ol.items li")
    catalog = json.loads(fetch(site + "feeds.json")[1])
    total = next(f["total_item_count"] for f in catalog["feeds"] if f["id"] == "module-cuda/rss")
    assert len(items) == total > 0
    screenshot(browser, "module-cuda.png")
    browser.find_element(By.CSS_SELECTOR, "nav.crumbs a").click()
    assert browser.current_url == site + "index.html"


def test_dark_mode(browser: webdriver.Chrome, site: str) -> None:
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
    )
    try:
        browser.get(site + "index.html")
        background = browser.execute_script(
            "return getComputedStyle(document.body).backgroundColor"
        )
        assert background == "rgb(18, 21, 25)"
        screenshot(browser, "index-dark.png")
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


# The media types the formats' specifications give (the RSS Advisory Board's, RFC 4287's,
# JSON Feed 1.1's) and HTML's, each with its charset; PNG's, for the icons.
WANTED_TYPES = {
    "feed.xml": "application/rss+xml; charset=utf-8",
    "atom.xml": "application/atom+xml; charset=utf-8",
    "feed.json": "application/feed+json; charset=utf-8",
    "*.html": "text/html; charset=utf-8",
    "*.png": "image/png",
}


def test_the_index_page_shows_the_icon(browser: webdriver.Chrome, site: str) -> None:
    """icon.png, drawn by the build, is loaded and shown (an image that failed to load has a
    naturalWidth of 0); the tab's icon is favicon.png, served as a PNG."""
    browser.get(site + "index.html")
    icon = browser.find_element(By.CSS_SELECTOR, "header.site img.icon")
    browser.execute_script("return arguments[0].decode()", icon)  # resolves once it is drawn
    natural = browser.execute_script(
        "return [arguments[0].naturalWidth, arguments[0].naturalHeight]", icon
    )
    assert natural == [512, 512]
    assert icon.size == {"width": 64, "height": 64}
    assert icon.get_attribute("src") == site + "icon.png"
    link = browser.find_element(By.CSS_SELECTOR, 'link[rel="icon"]')
    assert link.get_attribute("href") == site + "favicon.png"
    with urllib.request.urlopen(site + "favicon.png", timeout=5) as response:
        assert response.headers["Content-Type"] == "image/png"
        assert response.read().startswith(b"\x89PNG\r\n\x1a\n")


def test_readme_gives_the_content_type_of_every_file(built: Path, site: str) -> None:
    types = content_types()
    assert len(types) >= 8
    # Text, every one of them, but the PNG icons.
    assert all(kind.endswith("; charset=utf-8") for name, kind in types if name != "*.png")
    # The server below is configured from this table: what it says must be right on its own.
    assert {pattern: kind for pattern, kind in types if pattern in WANTED_TYPES} == WANTED_TYPES
    files = [p for p in built.rglob("*") if p.is_file() and not p.name.startswith(".")]
    names = {p.name for p in files}
    assert {"feeds.opml", "modules.opml", "update-log.md", "feeds.json", "icon.png"} <= names
    for path in files:
        kind = next(k for pattern, k in types if fnmatch.fnmatch(path.name, pattern))
        with urllib.request.urlopen(site + path.relative_to(built).as_posix(), timeout=5) as r:
            assert r.headers["Content-Type"] == kind, path


@pytest.mark.parametrize(
    "name",
    ["index.html", "feed.xml", "atom.xml", "feed.json", "feeds.json", "modules.opml",
     "update-log.md"],
)  # fmt: skip
def test_the_browser_shows_the_vietnamese_intact(
    browser: webdriver.Chrome, site: str, name: str
) -> None:
    browser.get(site + name)
    assert browser.current_url == site + name  # shown, not downloaded
    assert "Tối ưu suy luận" in browser.find_element(By.TAG_NAME, "body").text


def test_a_feed_link_downloads_and_the_visitor_stays_on_the_page(
    browser: webdriver.Chrome, site: str, tmp_path: Path
) -> None:
    """Browsers show a feed as raw text: a feed link downloads it instead."""
    browser.execute_cdp_cmd(
        "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(tmp_path)}
    )
    browser.get(site + "index.html")
    links = browser.find_elements(By.CSS_SELECTOR, "#feed-module-cuda .formats a")
    assert [a.get_attribute("download") for a in links] == ["", "", ""]
    links[1].click()
    for _ in range(50):
        if (tmp_path / "atom.xml").exists():
            break
        time.sleep(0.1)
    assert browser.current_url == site + "index.html"
    assert b"<feed" in (tmp_path / "atom.xml").read_bytes()


# For each displayed URL, the characters after which a line breaks.
LINE_BREAKS = """
const found = [];
for (const code of document.querySelectorAll("code.url")) {
  const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  let node, previous = null, last = "";
  while ((node = walker.nextNode())) {
    for (let i = 0; i < node.length; i++) {
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const box = range.getBoundingClientRect();
      if (previous !== null && box.top > previous + 2) found.push(last);
      previous = box.top;
      last = node.data[i];
    }
  }
  if (code.scrollWidth > code.clientWidth) found.push("overflow");
}
return found;
"""


def test_urls_wrap_at_their_slashes_on_a_narrow_screen(
    browser: webdriver.Chrome, site: str
) -> None:
    browser.set_window_size(390, 900)
    try:
        for page in ("index.html", "modules/inference/index.html"):
            browser.get(site + page)
            width = browser.execute_script("return document.documentElement.clientWidth")
            assert width <= 390
            breaks = browser.execute_script(LINE_BREAKS)
            assert breaks and set(breaks) == {"/"}, (page, breaks)
    finally:
        browser.set_window_size(1280, 900)
