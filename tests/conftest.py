"""Shared fixtures: a small site to build, helpers to run the CLI, and a browser."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

from infrafeed.cli import main

if TYPE_CHECKING:
    from selenium.webdriver import Chrome

TESTS = Path(__file__).parent
DATA = TESTS / "data"
REPO = TESTS.parent
SHIPPED_ENTRIES = REPO / "entries"
SMALL_SITE = DATA / "small-site" / "entries"

# Under CI, the same examples on every run: a landing must not hang on what one random draw
# finds (one did: a table cell "1[](1)", in test_import). Locally the draws stay random, and
# what fails is kept in .hypothesis/ to be tried first next time.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")


def require_program(name: str) -> str:
    """The path of a Debian-packaged program a test needs.

    Locally a missing program skips the test; under CI (CI=true, where
    .ci/run installs it) it fails, so CI can never go green without it.
    """
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is not installed; .ci/run must install it")
        pytest.skip(f"{name} is not installed (apt-get install {name})")
    return path


def _files_below(folder: Path) -> dict[str, bytes | None]:
    """Every path below ``folder``, hidden ones too; a file's bytes, None for a folder."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() if p.is_file() else None
        for p in folder.rglob("*")
    }


@pytest.fixture(scope="module", autouse=True)
def _the_repositorys_entries_stay_as_they_are() -> Iterator[None]:
    """A build writes beside its entries (published-ids.txt, a cache): tests build copies.

    Module-scoped, so that it also sees what module-scoped fixtures do.
    """
    before = {folder: _files_below(folder) for folder in (SHIPPED_ENTRIES, SMALL_SITE)}
    yield
    for folder, files in before.items():
        assert _files_below(folder) == files, f"this module's tests changed {folder}"


@pytest.fixture
def small_site(tmp_path: Path) -> Path:
    """A private copy of the small fixture site's entries folder."""
    target = tmp_path / "entries"
    shutil.copytree(SMALL_SITE, target)
    return target


@pytest.fixture
def shipped_entries(tmp_path: Path) -> Path:
    target = tmp_path / "shipped"
    shutil.copytree(SHIPPED_ENTRIES, target)
    return target


RunCli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> RunCli:
    """Run ``infrafeed`` through main(); return (exit code, stdout, stderr)."""

    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture(scope="module")
def browser() -> Iterator[Chrome]:
    """Headless Chromium for a module's tests (chromium.py); skipped when it is not installed."""
    from chromium import headless_chromium  # Selenium, only for the tests that use a browser

    with headless_chromium() as driver:
        yield driver
