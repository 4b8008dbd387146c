"""The build cache folder as its users meet it: flat files, written whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from infrafeed.cache import TAG, Cache


def test_a_missing_file_reads_as_none_and_writing_creates_the_tagged_folder(
    tmp_path: Path,
) -> None:
    cache = Cache(tmp_path / "deep" / "cache")
    assert cache.read("stamp-1") is None
    assert not cache.root.exists()
    cache.write("stamp-1", b"one")
    cache.write("stamp-1", b"two")
    assert cache.read("stamp-1") == b"two"
    assert sorted(p.name for p in cache.root.iterdir()) == [TAG, "stamp-1"]
    assert (
        (cache.root / TAG).read_bytes().startswith(b"Signature: 8a477f597d28d172789f06886806bc55\n")
    )
    assert cache.write_error is None


def test_a_folder_that_already_exists_is_not_tagged(tmp_path: Path) -> None:
    """It may hold more than the cache (--cache ~): a tag would keep it from backups."""
    cache = Cache(tmp_path)
    cache.write("stamp-1", b"data")
    assert not (tmp_path / TAG).exists()


def test_a_failed_write_is_remembered_not_raised(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"")
    cache = Cache(tmp_path / "file" / "cache")
    cache.write("stamp-1", b"data")
    cache.write("stamp-2", b"data")
    assert cache.write_error == f"{tmp_path}/file/cache/stamp-1: Not a directory"
    assert cache.read("stamp-1") is None


def test_an_unreadable_file_reads_as_none(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    (tmp_path / "stamp-1").mkdir()  # what read_bytes cannot read, whoever runs the test
    assert cache.read("stamp-1") is None


def test_a_write_leaves_no_temp_file_even_over_a_leftover_one(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    leftover = tmp_path / f".stamp-1.{os.getpid()}.tmp"
    leftover.write_bytes(b"a killed process with our pid")
    cache.write("stamp-1", b"data")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stamp-1"]


@pytest.mark.parametrize("name", ["", "a/b", "..", ".hidden", "a\x00b", TAG])
def test_names_are_flat_and_never_a_temp_file_or_the_tag(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match="is not a cache file name"):
        Cache(tmp_path).write(name, b"")
    with pytest.raises(ValueError, match="is not a cache file name"):
        Cache(tmp_path).read(name)
