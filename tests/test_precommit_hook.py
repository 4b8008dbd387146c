"""The pre-commit hook (.pre-commit-hooks.yaml), run by the real pre-commit on scratch sites.

Each site is a git repository whose .pre-commit-config.yaml is a snippet of docs/site.md as
written there, pointed at this checkout: a fresh repository of the working tree as it is,
named by a file:// URL and a commit, as a site names infrafeed's by its URL and a tag.
pre-commit clones it and installs it, with pip, into an environment of its own; the tests
stay offline by giving pip only the wheels .ci/run puts in .wheelhouse/.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import infrafeed
from conftest import REPO, SMALL_SITE

pytestmark = pytest.mark.external

WHEELHOUSE = REPO / ".wheelhouse"
MAKE_WHEELHOUSE = ".venv/bin/pip wheel -q -w .wheelhouse . setuptools wheel"
PLACEHOLDER_URL = "https://github.com/OWNER/REPO"
PLACEHOLDER_REV = "rev: TAG"

# A release whose one mistake check names by file and field.
BAD_RELEASE = """\
date = 2026-03-09

[[groups]]
kind = "new"
module = 2

[[groups.articles]]
id = "cuda-scan"
number = "3.2"
title = "Tối ưu toán tử CUDA Scan"
sumary = "Quét song song theo Warp"
"""
BAD_FIELD = "groups[1].articles[1].sumary: unknown field; did you mean 'summary'?"


def wheelhouse() -> Path:
    if not any(WHEELHOUSE.glob("*.whl")):
        message = (
            f"{WHEELHOUSE} holds no wheels: the hook's environment installs from them offline; "
            f"make them with `{MAKE_WHEELHOUSE}` (.ci/run does)"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return WHEELHOUSE


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of every git and pre-commit run: offline, and nothing read or kept
    outside a temporary home (pre-commit's store of environments is shared by this module's
    tests, so the hook's environment is installed once)."""
    home = tmp_path_factory.mktemp("home")
    # A test run inside a git hook has GIT_DIR and the like set; user settings of pip,
    # virtualenv and pre-commit could point elsewhere: none of them may reach these runs.
    prefixes = ("GIT_", "PIP_", "VIRTUALENV_", "PRE_COMMIT", "XDG_")
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(prefixes)},
        "HOME": str(home),
        "PRE_COMMIT_HOME": str(home / "pre-commit"),
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheelhouse()),
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        # Else virtualenv may download newer pip and setuptools wheels to seed with.
        "VIRTUALENV_NO_PERIODIC_UPDATE": "1",
    }


def run(cwd: Path, env: dict[str, str], *command: str) -> subprocess.CompletedProcess[str]:
    """``command`` in ``cwd``, its output and errors together, as a terminal shows them."""
    return subprocess.run(
        command,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=600,
        check=False,
    )


def git(cwd: Path, env: dict[str, str], *args: str) -> str:
    result = run(cwd, env, "git", *args)
    assert result.returncode == 0, result.stdout
    return result.stdout.strip()


@pytest.fixture(scope="module")
def infrafeed_repo(
    tmp_path_factory: pytest.TempPathFactory, environment: dict[str, str]
) -> tuple[str, str]:
    """This checkout's working tree, committed to a fresh repository: its URL and commit.

    Like ``pre-commit try-repo``, so that what is tested is the tree as it is, uncommitted
    changes too; but through a .pre-commit-config.yaml, as a site installs the hook.
    """
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        env=environment,
        capture_output=True,
        check=True,
    ).stdout.decode()
    target = tmp_path_factory.mktemp("infrafeed-repo")
    for name in filter(None, listed.split("\0")):
        if (REPO / name).is_file():  # not a tracked file deleted from the tree
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, target / name)
    git(target, environment, "init", "-q")
    git(target, environment, "add", "-A")
    git(target, environment, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "tree")
    return target.as_uri(), git(target, environment, "rev-parse", "HEAD")


def snippets() -> list[str]:
    """The .pre-commit-config.yaml files of docs/site.md's "Checking before each commit"."""
    site = (REPO / "docs" / "site.md").read_text(encoding="utf-8")
    section = site.split("\n## Checking before each commit\n", 1)[1].split("\n## ", 1)[0]
    found = re.findall(r"^```yaml\n(.*?)^```$", section, flags=re.M | re.S)
    assert len(found) == 2, found
    return found


def make_site(
    path: Path, entries: str, config: str, env: dict[str, str], hook: tuple[str, str]
) -> Path:
    """A site repository with the small site's entries at ``entries`` and the hook installed."""
    url, rev = hook
    assert PLACEHOLDER_URL in config and PLACEHOLDER_REV in config, config
    config = config.replace(PLACEHOLDER_URL, url).replace(PLACEHOLDER_REV, f"rev: {rev}")
    shutil.copytree(SMALL_SITE, path / entries)
    (path / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    git(path, env, "init", "-q")
    git(path, env, "config", "user.name", "Người bảo trì")
    git(path, env, "config", "user.email", "maintainer@example.org")
    installed = run(path, env, sys.executable, "-m", "pre_commit", "install")
    assert installed.returncode == 0, installed.stdout
    return path


def commit(site: Path, env: dict[str, str], message: str) -> subprocess.CompletedProcess[str]:
    """Everything in the site, staged and committed: the hook runs as it does for a person."""
    git(site, env, "add", "-A")
    return run(site, env, "git", "commit", "-m", message)


def passed(result: subprocess.CompletedProcess[str]) -> bool:
    ran = re.search(r"^infrafeed check\.+Passed$", result.stdout, flags=re.M)
    return result.returncode == 0 and ran is not None


def test_the_hook_lets_good_releases_in_and_stops_a_bad_one(
    tmp_path: Path, environment: dict[str, str], infrafeed_repo: tuple[str, str]
) -> None:
    default, _ = snippets()
    site = make_site(tmp_path / "site", "entries", default, environment, infrafeed_repo)

    good = commit(site, environment, "The site and its releases")
    assert passed(good), good.stdout

    (site / "entries" / "2026" / "2026-03-09.toml").write_text(BAD_RELEASE, encoding="utf-8")
    bad = commit(site, environment, "A release with a mistake")
    assert bad.returncode != 0
    assert "infrafeed check" in bad.stdout and "Failed" in bad.stdout
    assert f"entries/2026/2026-03-09.toml: {BAD_FIELD}\n" in bad.stdout, bad.stdout
    assert git(site, environment, "rev-list", "--count", "HEAD") == "1"


def test_a_damaged_id_memory_is_stopped_too(
    tmp_path: Path, environment: dict[str, str], infrafeed_repo: tuple[str, str]
) -> None:
    """published-ids.txt alone runs the hook: check reads it, and a merge can break it."""
    default, _ = snippets()
    site = make_site(tmp_path / "site", "entries", default, environment, infrafeed_repo)
    infrafeed.build(site / "entries", tmp_path / "out")  # writes entries/published-ids.txt
    assert passed(commit(site, environment, "The site, built once"))

    ids = site / "entries" / "published-ids.txt"
    header, rest = ids.read_text(encoding="utf-8").split("\n", 1)
    ids.write_text(f"{header}\n<<<<<<< HEAD\n{rest}", encoding="utf-8")
    bad = commit(site, environment, "A merge left its markers")
    assert bad.returncode != 0
    assert "entries/published-ids.txt: cannot read infrafeed's record (line 2" in bad.stdout


def test_a_site_with_its_entries_elsewhere_sets_files_and_args(
    tmp_path: Path, environment: dict[str, str], infrafeed_repo: tuple[str, str]
) -> None:
    _, elsewhere = snippets()
    entries = "content/changelog"
    site = make_site(tmp_path / "site", entries, elsewhere, environment, infrafeed_repo)

    good = commit(site, environment, "The site and its releases")
    assert passed(good), good.stdout

    (site / entries / "2026" / "2026-03-09.toml").write_text(BAD_RELEASE, encoding="utf-8")
    bad = commit(site, environment, "A release with a mistake")
    assert bad.returncode != 0
    assert f"{entries}/2026/2026-03-09.toml: {BAD_FIELD}\n" in bad.stdout, bad.stdout
