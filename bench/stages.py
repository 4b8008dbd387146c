"""Time the stages of one ``infrafeed build``, in wall-clock milliseconds.

    python bench/stages.py ENTRIES OUT CACHE

Runs one build in this process, as ``infrafeed build --entries ENTRIES --out
OUT --cache CACHE`` would, with a timer around each stage (loading, the
release cache, rendering, staging, committing...) and prints them, slowest
first. cProfile inflates Python-level work two to three times and hides
time spent waiting; this does neither, so it shows where a rebuild's
hundreds of milliseconds go. Stages nest (``render_all`` holds
``render_site``; ``Stage.write_chunks`` renders the chunks it writes), so
the column does not add up to the total. ``os.fsync`` and ``os.write`` count
every thread's calls.

To time the rebuild after one new release: build once, wait 3 s (the cache
trusts only files settled for 2.5 s), add a release file (``bench/corpus.py``'s
``release_text``), then run this.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

STARTED = time.perf_counter()
_spent: dict[str, float] = {}
_lock = threading.Lock()


def _add(key: str, seconds: float) -> None:
    with _lock:
        _spent[key] = _spent.get(key, 0.0) + seconds


def _timed(key: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            _add(key, time.perf_counter() - started)

    return timed


def _timed_iteration(key: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """For a function returning an iterable: the time spent producing each item counts."""

    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Iterator[Any]:
        iterator = iter(function(*args, **kwargs))
        while True:
            started = time.perf_counter()
            try:
                value = next(iterator)
            except StopIteration:
                _add(key, time.perf_counter() - started)
                return
            _add(key, time.perf_counter() - started)
            yield value

    return timed


# (module, class or None, function, whether it yields its results)
STAGES = [
    ("infrafeed.build", None, "inputs_digest", False),
    ("infrafeed.build", None, "guard", False),
    ("infrafeed.build", None, "_release_cache", False),
    ("infrafeed.loader", None, "load", False),
    ("infrafeed.release_cache", "ReleaseCache", "items", False),
    ("infrafeed.release_cache", "ReleaseCache", "save", False),
    ("infrafeed.release_cache", None, "_read_records", False),
    ("infrafeed.changelog_page", None, "page_files", False),
    ("infrafeed.render", None, "render_all", True),
    ("infrafeed.render", None, "render_site", True),
    ("infrafeed.render", None, "frames", False),
    ("infrafeed.render", None, "plan", False),
    ("infrafeed.render", "_Feed", "__init__", False),
    ("infrafeed.keep", "KeptDocuments", "__call__", False),
    ("infrafeed.keep", "KeptDocuments", "save", False),
    ("infrafeed.publish", None, "commit", False),
    ("infrafeed.publish", "Manifest", "read", False),
    ("infrafeed.publish", "Stage", "write_chunks", False),
    ("infrafeed.stamp", "Watch", "__init__", False),
]


def main() -> None:
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    entries, out, cache = map(Path, sys.argv[1:])
    started = time.perf_counter()
    import infrafeed.cli  # noqa: F401 - timed as the command's start-up

    _add("import infrafeed.cli", time.perf_counter() - started)
    started = time.perf_counter()
    for module_name, owner_name, name, yields in STAGES:
        module = importlib.import_module(module_name)
        owner = getattr(module, owner_name) if owner_name else module
        wrap = _timed_iteration if yields else _timed
        label = f"{owner_name}.{name}" if owner_name else name
        setattr(owner, name, wrap(label, getattr(owner, name)))
    for name in ("fsync", "write"):
        setattr(os, name, _timed(f"os.{name}", getattr(os, name)))
    _add("import what a build loads", time.perf_counter() - started)

    from infrafeed.build import build

    started = time.perf_counter()
    result = build(entries, out, cache=cache)
    total = time.perf_counter() - started
    for key, seconds in sorted(_spent.items(), key=lambda pair: -pair[1]):
        print(f"{seconds * 1000:8.1f} ms  {key}")
    print(f"{total * 1000:8.1f} ms  the build ({'skipped' if result.skipped else 'built'})")
    print(f"{(time.perf_counter() - STARTED) * 1000:8.1f} ms  this process so far")


if __name__ == "__main__":
    main()
