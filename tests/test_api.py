"""The library as a program uses it: what ``import infrafeed`` gives, and the errors it raises."""

from __future__ import annotations

import locale
import subprocess
import sys
from pathlib import Path

import pytest

import infrafeed


def test_every_exported_name_is_there_and_the_lazy_ones_are_listed() -> None:
    """dir() missed load and import_page (loaded on first use), so completion did not offer
    them; OutOfDate, raised by build(locked_ids=True), and Clock, its clock=, were not exported."""
    assert {"OutOfDate", "Clock", "load", "import_page"} <= set(infrafeed.__all__)
    assert set(infrafeed.__all__) <= set(dir(infrafeed))
    assert all(getattr(infrafeed, name) is not None for name in infrafeed.__all__)
    code = "import sys, infrafeed; print('pydantic' in sys.modules)"
    run = [sys.executable, "-c", code]
    loaded = subprocess.run(run, capture_output=True, text=True, check=True)
    assert loaded.stdout == "False\n"  # load and import_page bring it when first used


def test_a_locked_build_that_would_change_the_record_raises_an_exported_error(
    small_site: Path, tmp_path: Path
) -> None:
    with pytest.raises(infrafeed.OutOfDate, match=r"published-ids\.txt is missing"):
        infrafeed.build(small_site, tmp_path / "out", locked_ids=True)


def test_a_build_leaves_the_process_locale_alone(
    small_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """feedgen wrote each channel's <lastBuildDate> by setting the locale to C and back: in a
    host's other threads, for a moment, and for good when two builds overlapped."""
    calls: list[tuple[object, ...]] = []
    monkeypatch.setattr(locale, "setlocale", lambda *args: calls.append(args))
    infrafeed.build(small_site, tmp_path / "out")
    assert calls == []
