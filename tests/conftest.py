"""Shared fixtures: a small site to build, and helpers to run the CLI."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from infrafeed.cli import cli, main

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


class CachedSite:
    """A copy of the small site, its output folder and its build cache folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.entries = root / "entries"
        self.out = root / "output"
        self.cache = root / "cache"
        shutil.copytree(SMALL_SITE, self.entries)


RunSite = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(run_cli: RunCli) -> RunSite:
    """``infrafeed build`` of a CachedSite: with its cache, or with ``--no-cache``."""

    def build_site(where: CachedSite, *args: str, cache: bool = True) -> tuple[int, str, str]:
        chosen = ["--cache", str(where.cache)] if cache else ["--no-cache"]
        where_args = ["--entries", str(where.entries), "--out", str(where.out)]
        code, stdout, stderr = run_cli("build", *where_args, *chosen, *args)
        return code, stdout, stderr.replace(str(where.root), "SITE")

    return build_site


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))
