"""Paths below the entries folder, as text: cheap, since a build names every file.

Kept apart from the loader so that the no-op check (build.inputs_digest) can
use it without importing pydantic.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def below(entries: Path) -> Callable[[Path], str]:
    """A path from ``entries.rglob`` -> its POSIX path below ``entries``.

    Cutting the folder's own text off: ``Path.relative_to`` costs more than
    reading a small file, and a build asks it of every file.
    """
    folder = str(entries)
    if folder == ".":
        return str  # rglob yields "2026/x.toml", not "./2026/x.toml"
    cut = len(folder.rstrip("/")) + 1

    def relative(path: Path) -> str:
        return str(path)[cut:]

    return relative
