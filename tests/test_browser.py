"""A real browser reads the built pages: headless Chromium from Debian, over local HTTP.

Screenshots (light, dark, narrow, a module page) are saved in test-artifacts/
for a person to look at; CI keeps them as artifacts.
"""

from __future__ import annotations

import json
import tomllib
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import feedparser
import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By

from chromium import headless_chromium
from conftest import REPO, SHIPPED_ENTRIES
from localhttp import serve

ARTIFACTS = REPO / "test-artifacts"
MODULES = tomllib.loads((SHIPPED_ENTRIES / "site.toml").read_text(encoding="utf-8"))["modules"]

pytestmark = pytest.mark.external


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    with headless_chromium() as driver:
        yield driver


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The shipped entries, built and served on 127.0.0.1; yields the base URL."""
    from infrafeed.cli import main

    out = tmp_path_factory.mktemp("browser") / "out"
    # Its own cache: the default, beside the shipped entries, is in the repository.
    cache = out.parent / "cache"
    args = ["--entries", str(SHIPPED_ENTRIES), "--out", str(out), "--cache", str(cache)]
    assert main(["build", *args, "-q"]) == 0
    with serve(out) as base:
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
        assert heading == f"AIInfraGuide · Module {module['number']}: {module['name']}"
        formats = [a.text for a in card.find_elements(By.CSS_SELECTOR, ".formats a")]
        assert formats == ["RSS 2.0", "Atom 1.0", "JSON Feed 1.1"]
        urls = [code.text for code in card.find_elements(By.CSS_SELECTOR, "code.url")]
        assert urls[0].endswith(f"/feeds/modules/{module['slug']}/feed.xml")
    latest = browser.find_elements(By.CSS_SELECTOR, "ol.items li a.title")
    assert len(latest) == 20
    assert latest[0].text.startswith("Mới · 6.1 Tổng quan chiến lược song song suy luận")
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
