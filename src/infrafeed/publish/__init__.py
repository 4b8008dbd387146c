"""Publish: takes rendered documents, gives the output folder; the only stage that writes."""

from collections.abc import Iterable
from typing import NamedTuple


class Report(NamedTuple):
    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    removed: tuple[str, ...]
    kept: tuple[str, ...]  # files of vanished feeds left alone: not ours, or edited since


def shown(names: Iterable[str]) -> tuple[str, ...]:
    """Names for a report, sorted: infrafeed's own bookkeeping files are not news."""
    return tuple(sorted(name for name in names if not name.startswith(".infrafeed")))
