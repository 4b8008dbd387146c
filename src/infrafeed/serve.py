"""``infrafeed serve``: a live preview, the entries built into a temporary folder and served.

Each build is a real one (build.py, with ``preview``: nothing is written into the entries), into
a folder of its own that publish/ switches whole, so a reader gets the old build or the new one.
This module only serves what publish/ wrote, from memory when a build failed: its errors, in
place of every page, while the other files stay the last good build's.
"""

from __future__ import annotations

import fnmatch
import functools
import html
import http.server
import io
import shutil
import sys
import tempfile
import threading
import urllib.parse
from collections.abc import Iterator
from http import HTTPStatus
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple

import watchfiles

from .build import BuildResult, build
from .errors import GuardError, InfraFeedError, error_lines
from .source.files import require_folder

HOST = "127.0.0.1"  # a preview shows drafts: to this machine only
# The Content-Types of output/README.md (tests/test_serve.py holds them equal), the first row
# whose pattern matches the file's name; the icons drawn from [feeds] icon are PNG.
CONTENT_TYPES = (
    ("feed.xml", "application/rss+xml; charset=utf-8"),
    ("atom.xml", "application/atom+xml; charset=utf-8"),
    ("feed.json", "application/feed+json; charset=utf-8"),
    ("feeds.json", "application/json; charset=utf-8"),
    ("*.html", "text/html; charset=utf-8"),
    ("*.opml", "text/x-opml; charset=utf-8"),
    ("*.md", "text/markdown; charset=utf-8"),
    ("*.png", "image/png"),
)


class Outcome(NamedTuple):
    """One build of the preview: what it wrote, or the lines that tell why it failed."""

    result: BuildResult | None
    errors: tuple[str, ...] = ()


class Preview:
    """The entries built into a temporary folder, served on ``HOST``, rebuilt on each change.

    Made, it has built once (``first``) and serves; closed (or left as a context manager), it
    stops serving and removes its folder. ``stop``, once set (by a signal handler, say), ends
    :meth:`rebuilds`.
    """

    def __init__(
        self,
        entries: Path,
        port: int,
        *,
        allow_changes: bool = False,
        stop: threading.Event | None = None,
    ) -> None:
        require_folder(entries)  # watched as well as read: a missing folder is refused at once
        self.entries, self.allow_changes = entries, allow_changes
        self.root = Path(tempfile.mkdtemp(prefix="infrafeed-serve-"))
        self.out = self.root / "site"
        self.good = False  # whether a build succeeded yet: its feeds are served
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        # Changes made during a build are kept by watchfiles' thread for the next round. It
        # polls where the environment says so (WATCHFILES_FORCE_POLLING, for mounts whose
        # changes the kernel does not report). A round also ends after 0.2 s without a change,
        # so that the first one, below, tells when watching has begun.
        self._changes = watchfiles.watch(
            entries, stop_event=stop, rust_timeout=200, yield_on_timeout=True
        )
        try:
            self._server = _listening(port, self.out)
            self.url = f"http://{HOST}:{self._server.server_port}/"
            next(self._changes, None)  # a save from now on is seen, during the first build too
            self.first = self.rebuild()
            self._thread = threading.Thread(
                target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True
            )
            self._thread.start()
        except BaseException:  # Ctrl-C during the first build too: nothing is left behind
            self.close()
            raise

    def rebuild(self) -> Outcome:
        """Build the entries again; on an error, serve it in place of the pages."""
        assert self._server is not None
        try:
            result = build(
                self.entries,
                self.out,
                cache=self.root / "cache",  # the preview's own: the entries' is never written
                allow_changes=self.allow_changes,
                preview=True,
            )
        except InfraFeedError as exc:
            summary = f"infrafeed: {exc}"
            if isinstance(exc, GuardError) and not self.allow_changes:
                summary += "; if this is intended, serve with --allow-changes"
            served = "the feeds are the last good build's" if self.good else "no feed is served"
            errors = (*error_lines(exc), f"{summary}; {served} until a build succeeds")
            self._server.errors = errors
            return Outcome(None, errors)
        self.good, self._server.errors = True, ()
        return Outcome(result)

    def rebuilds(self) -> Iterator[Outcome]:
        """A build after each change below the entries folder, until ``stop`` is set (or
        SIGINT raises KeyboardInterrupt, where its handler is Python's)."""
        for changes in self._changes:
            if changes:
                yield self.rebuild()

    def close(self) -> None:
        """Stop serving and remove the temporary folder."""
        self._changes.close()  # its thread stops
        if self._server is not None:
            if self._thread is not None:
                self._server.shutdown()
            self._server.server_close()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Preview:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class _Server(http.server.ThreadingHTTPServer):
    errors: tuple[str, ...] = ()  # the latest build's, when it failed: shown in place of pages
    # A browser's idle preconnection must not keep Ctrl-C waiting: no request is joined.
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exception(), ConnectionError):  # a reader that went away: normal
            super().handle_error(request, client_address)


class _Handler(http.server.SimpleHTTPRequestHandler):
    server: _Server

    def send_head(self) -> io.BytesIO | Any:
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        if any(part.startswith(".") for part in path.split("/")):  # the build's bookkeeping
            self.send_error(HTTPStatus.NOT_FOUND)
            return None
        if self.server.errors and path.endswith(("/", ".html")):
            body = _error_page(self.server.errors)
            # 500, not 200: what is served is not the page asked for, and a client that
            # checks the status (curl --fail, a link checker) must not take it for one.
            self.send_response(HTTPStatus.INTERNAL_SERVER_ERROR)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            return io.BytesIO(body)
        return super().send_head()

    def guess_type(self, path: str | Any) -> str:
        name = Path(str(path)).name
        found = (kind for pattern, kind in CONTENT_TYPES if fnmatch.fnmatch(name, pattern))
        return next(found, None) or super().guess_type(path)

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")  # a reload shows the latest build
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the terminal is for the builds


def _listening(port: int, folder: Path) -> _Server:
    handler = functools.partial(_Handler, directory=str(folder))
    try:
        return _Server((HOST, port), handler)
    except OSError as exc:
        raise InfraFeedError(
            f"{HOST}:{port}: cannot serve there ({exc.strerror}); give another --port, or "
            "--port 0 for a free one"
        ) from None


def _error_page(errors: tuple[str, ...]) -> bytes:
    lines = html.escape("\n".join(errors))
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        "<title>infrafeed: the build failed</title>\n</head>\n<body>\n"
        "<h1>The build failed</h1>\n<p>Until a build succeeds, every page shows this: fix what "
        "it says, save, and reload.</p>\n"
        f'<pre style="white-space: pre-wrap">{lines}</pre>\n</body>\n</html>\n'  # long lines wrap
    ).encode()
