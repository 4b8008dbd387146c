"""Shared fixtures: a small site to build, and helpers to run the CLI."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from infrafeed.cli import main

TESTS = Path(__file__).parent
DATA = TESTS / "data"
REPO = TESTS.parent
SHIPPED_ENTRIES = REPO / "entries"
SMALL_SITE = DATA / "small-site" / "entries"


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
