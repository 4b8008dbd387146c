"""infrafeed: a documentation site's changelog as RSS 2.0, Atom 1.0 and JSON Feed 1.1.

The library does the work; the ``infrafeed`` command is a thin layer over it::

    changelog = infrafeed.load(Path("entries"))  # validated, frozen models
    result = infrafeed.build(Path("entries"), Path("output"))  # feeds, pages, changelog page

``load`` and ``import_page`` load pydantic when first used, not on import: ``infrafeed --help``
and a build with nothing to do never need it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .build import BuildResult, build
from .clock import Clock
from .errors import (
    DataError,
    GuardError,
    InfraFeedError,
    LockBusy,
    OutOfDate,
    PageError,
    Problem,
    PublishError,
)

if TYPE_CHECKING:
    from .changelog.importer import import_page
    from .source.loader import load

__all__ = [
    "BuildResult",
    "Clock",
    "DataError",
    "GuardError",
    "InfraFeedError",
    "LockBusy",
    "OutOfDate",
    "PageError",
    "Problem",
    "PublishError",
    "__version__",
    "build",
    "import_page",
    "load",
]

_LAZY = {"load": ".source.loader", "import_page": ".changelog.importer"}  # name: its module


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module 'infrafeed' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})  # the lazy names too, for completion
