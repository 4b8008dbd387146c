"""Headless Chromium from Debian, driven by Selenium, for the tests that look at pages."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from conftest import require_program


@contextlib.contextmanager
def headless_chromium() -> Iterator[webdriver.Chrome]:
    """A fresh profile, 1280×900, nothing fetched in the background; skipped without Chromium."""
    chromium = require_program("chromium")
    chromedriver = require_program("chromedriver")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    with tempfile.TemporaryDirectory(prefix="infrafeed-chromium-") as profile:
        for argument in (
            "--headless",
            "--no-sandbox",  # CI runs as root
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            "--window-size=1280,900",
        ):
            options.add_argument(argument)
        # An explicit driver path: Selenium Manager never downloads anything.
        driver = webdriver.Chrome(service=Service(chromedriver), options=options)
        driver.set_page_load_timeout(15)
        try:
            yield driver
        finally:
            driver.quit()
