"""A static HTTP server on 127.0.0.1 for the tests that read the output like a client."""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import http.server
import re
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from conftest import REPO


def content_types() -> list[tuple[str, str]]:
    """(file name pattern, Content-Type) of each row of output/README.md's table."""
    text = (REPO / "output" / "README.md").read_text(encoding="utf-8")
    return re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|$", text, flags=re.M)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {  # noqa: RUF012 (the base class declares it a plain dict)
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".xml": "application/xml",
        ".json": "application/json",
        ".opml": "text/x-opml",
        ".html": "text/html; charset=utf-8",
    }
    types: Sequence[tuple[str, str]] = ()

    def guess_type(self, path: str | Any) -> str:
        name = Path(str(path)).name
        found = next((kind for pattern, kind in self.types if fnmatch.fnmatch(name, pattern)), None)
        return found or super().guess_type(path)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serve(folder: Path, types: Sequence[tuple[str, str]] = ()) -> Iterator[str]:
    """Serve ``folder`` (which may not exist yet) on an ephemeral port; yield its base URL.

    ``types``: (file name pattern, Content-Type) pairs, the first match wins."""
    handler = functools.partial(
        type("Handler", (_QuietHandler,), {"types": tuple(types)}), directory=str(folder)
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
