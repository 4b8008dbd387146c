"""The W3C Feed Validation Service's own code, run on built documents.

``third_party/feedvalidator`` is the service's validator (https://github.com/w3c/feedvalidator),
unchanged: these functions give its errors and warnings, the level the service shows, for an
RSS, Atom or OPML document served at a URL. JSON Feed is not among what it reads.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import warnings
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

THIRD_PARTY = Path(__file__).resolve().parent.parent / "third_party"
DOCUMENTS = ("feed.xml", "atom.xml", ".opml")


@cache
def _validator() -> tuple[Any, Any, Any]:
    sys.path.insert(0, str(THIRD_PARTY))
    timeout = socket.getdefaulttimeout()
    with warnings.catch_warnings():  # its regular expressions predate today's escape warnings
        warnings.simplefilter("ignore")
        import feedvalidator
        from feedvalidator import compatibility
        from feedvalidator.formatter.text_plain import Formatter
    socket.setdefaulttimeout(timeout)  # importing it sets one for the whole process
    return feedvalidator, compatibility.AA, Formatter


@contextlib.contextmanager
def _offline() -> Iterator[None]:
    """The validator looks up the host of an e-mail address it cannot parse: never here (it
    then warns that the host is unknown, which fails the test, as it should)."""

    def refuse(host: str) -> str:
        raise OSError(f"tests never resolve {host}")

    lookup, socket.gethostbyname = socket.gethostbyname, refuse
    try:
        yield
    finally:
        socket.gethostbyname = lookup


def w3c_problems(data: bytes, url: str) -> list[str]:
    """The service's errors and warnings for the document ``data`` served at ``url``."""
    feedvalidator, errors_and_warnings, formatter = _validator()
    with _offline(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        events = feedvalidator.validateString(data, firstOccurrenceOnly=0, base=url)
    return list(formatter(errors_and_warnings(events["loggedEvents"])))


def w3c_tree(out: Path, base_url: str) -> dict[str, list[str]]:
    """The problems of every RSS, Atom and OPML document below ``out``, served at ``base_url``;
    only documents with problems are named."""
    found = {}
    for path in sorted(out.rglob("*")):
        if path.name.endswith(DOCUMENTS):
            relative = path.relative_to(out).as_posix()
            if problems := w3c_problems(path.read_bytes(), base_url + relative):
                found[relative] = problems
    return found
