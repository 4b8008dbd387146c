"""The served output of two fixed sites, pinned by hash: output changes only on purpose.

Two trees are pinned: the shipped entries, and ``bench/corpus.py``'s site of
1,000 article changes with ``max_items = 50``, whose feeds have monthly
archives. Every file a web server would serve is compared (infrafeed's own
dot-files are bookkeeping, not output). A change that alters any byte fails
here; if it is meant, regenerate with ``INFRAFEED_PIN=1`` and read the diff
of ``tests/data/same-bytes/`` before committing it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from conftest import DATA, REPO, SHIPPED_ENTRIES
from outputs import run_infrafeed

sys.path.insert(0, str(REPO / "bench"))
from corpus import write_corpus

PINNED = DATA / "same-bytes"


def served(out: Path) -> dict[str, str]:
    """sha256 of every file below ``out`` that is not hidden, by its path."""
    found = {}
    for path in sorted(out.rglob("*")):
        relative = path.relative_to(out).as_posix()
        if path.is_file() and not any(part.startswith(".") for part in relative.split("/")):
            found[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def check(name: str, entries: Path, out: Path) -> None:
    result = run_infrafeed("build", "--quiet", "--entries", str(entries), "--out", str(out))
    assert result.returncode == 0, result.stderr
    hashes = served(out)
    pinned = PINNED / f"{name}.json"
    if os.environ.get("INFRAFEED_PIN") == "1":
        pinned.write_text(json.dumps(hashes, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        pytest.skip(f"{pinned.name} regenerated: read its diff before committing")
    expected = json.loads(pinned.read_text(encoding="utf-8"))
    differ = sorted(k for k in set(hashes) | set(expected) if hashes.get(k) != expected.get(k))
    assert differ == [], f"{len(differ)} files differ from {pinned.name}: {differ[:20]}"


def test_shipped_entries(tmp_path: Path) -> None:
    entries = tmp_path / "entries"
    shutil.copytree(SHIPPED_ENTRIES, entries)
    check("shipped", entries, tmp_path / "out")


@pytest.mark.slow
def test_corpus_with_archives(tmp_path: Path) -> None:
    entries = tmp_path / "entries"
    write_corpus(1000, entries, max_items=50, max_bytes=512_000)
    check("corpus-1000", entries, tmp_path / "out")
