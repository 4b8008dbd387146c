"""The exceptions infrafeed raises: one root, one subclass per concern, each mapped in cli.py."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


def count(number: int, noun: str) -> str:
    """``number`` with ``noun``, plural unless one: "1 problem", "3 problems"."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def reads(parse: Callable[[str], object], text: str) -> bool:
    """Whether ``parse`` reads ``text`` without a ValueError."""
    try:
        parse(text)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one input file, reported as ``path: field: message``."""

    path: str
    field: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.field}: {self.message}"


class InfraFeedError(Exception):
    """Root of every error infrafeed raises on purpose."""


class DataError(InfraFeedError):
    """The entries or the site settings are invalid; carries every problem found."""

    @staticmethod
    def _order(problem: Problem) -> tuple[object, ...]:
        """Files, then fields in their order: ``articles[2]`` before ``articles[10]``."""
        field = tuple((int(p) if p.isdigit() else -1, p) for p in re.split(r"(\d+)", problem.field))
        return (problem.path, field, problem.line or 0, problem.message)

    def __init__(self, problems: list[Problem], source: str = "the entries") -> None:
        self.problems = sorted(problems, key=self._order)
        super().__init__(f"{count(len(self.problems), 'problem')} in {source}")


class PageError(DataError):
    """A changelog page cannot be imported; carries every problem found in it."""

    # One page: its problems read best in the order of its lines.
    _order = staticmethod(lambda problem: (problem.line or 0, problem.field, problem.message))


class GuardError(InfraFeedError):
    """A build would drop or re-date items that subscribers already have."""

    def __init__(self, violations: list[str]) -> None:
        self.violations = violations
        super().__init__("the build would change items already published")


class LockBusy(InfraFeedError):
    """Another build holds the output folder's lock."""


class PublishError(InfraFeedError):
    """Writing failed: a build's previous output is intact; an import names what it wrote."""


class OutOfDate(InfraFeedError):
    """``build --locked``: the committed record of published ids would have to change."""


_SHOWN = 200  # problems printed at most


def error_lines(exc: InfraFeedError) -> list[str]:
    """The lines the command prints for ``exc`` before its summary: the notes (a build's
    warnings), then each problem or guard violation, at most 200 of them."""
    found: list[str] = []
    if isinstance(exc, GuardError):
        found = exc.violations
    elif isinstance(exc, DataError):
        found = [str(p) for p in exc.problems]
    lines = [*getattr(exc, "__notes__", ()), *found[:_SHOWN]]
    if len(found) > _SHOWN:  # 300,000 items of a wrong type would each be a line
        lines.append(f"... and {len(found) - _SHOWN} more")
    return lines
