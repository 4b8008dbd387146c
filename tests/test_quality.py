"""Lint and types are part of the test run, so CI enforces them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).parent.parent


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    assert found, f"{name} is part of the test extra: pip install -e '.[test]'"
    return found


def test_ruff_lint_and_format() -> None:
    for args in (["check", "."], ["format", "--check", "."]):
        result = subprocess.run([_tool("ruff"), *args], cwd=REPO, capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict() -> None:
    result = subprocess.run([_tool("mypy")], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
