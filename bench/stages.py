"""Time the stages of one ``infrafeed build``, in wall-clock milliseconds.

    python bench/stages.py ENTRIES OUT [CACHE]

Runs one build in this process, as ``infrafeed build --entries ENTRIES --out
OUT --cache CACHE`` would (without CACHE: as with ``--no-cache``), with a
timer around each stage function, and prints them in the order they ran.
cProfile inflates Python-level work two to three times and hides time spent
waiting; this does neither. Stages nest (``_compile_all`` holds the item
rendering), so the column does not add up to the total. To time the rebuild
after one new release: build once, add a release file (``bench/corpus.py``'s
``release_text``), then run this.
"""

from __future__ import annotations

import functools
import importlib
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

started = time.perf_counter()
build_module = importlib.import_module("infrafeed.build")  # the module, not the function

# (module, function) of each stage, as build.py calls them.
STAGES = [
    ("infrafeed.build", "read_entries"),
    ("infrafeed.build", "intact"),
    ("infrafeed.build", "_compile_all"),
    ("infrafeed.source.loader", "release_of"),
    ("infrafeed.render.documents", "item_parts"),
    ("infrafeed.changelog.page", "release_section"),
    ("infrafeed.cache", "ReleaseCache.finish"),
    ("infrafeed.render.documents", "plan_all"),
    ("infrafeed.feeds.guard", "guard"),
    ("infrafeed.changelog.page", "assemble_page"),
    ("infrafeed.publish.tree", "Tree.write"),
    ("infrafeed.publish.tree", "Tree.publish"),
]
spent: dict[str, float] = {}


def timed(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(real)
    def call(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - start

    return call


def main() -> None:
    entries, out = Path(sys.argv[1]), Path(sys.argv[2])
    cache = Path(sys.argv[3]) if len(sys.argv) > 3 else None
    for module_name, qualified in STAGES:
        module = importlib.import_module(module_name)
        owner: Any = module
        *path, name = qualified.split(".")
        for part in path:
            owner = getattr(owner, part)
        setattr(owner, name, timed(qualified, getattr(owner, name)))
    result = build_module.build(entries, out, cache=cache)
    total = time.perf_counter() - started
    for name, seconds in spent.items():
        print(f"{seconds * 1000:9.1f} ms  {name}")
    print(f"{total * 1000:9.1f} ms  the whole process so far; skipped={result.skipped}")


if __name__ == "__main__":
    main()
