"""WebSub: feeds name the hub; --ping tells a local hub stand-in exactly what changed."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest

import infrafeed
from conftest import RunCli
from infrafeed.clock import Clock
from infrafeed.publish import websub
from infrafeed.publish.manifest import read_manifest
from sitebuilder import add_release, write_site

FEEDS_URL = "https://example.org/guide/feeds/"
SUBSCRIPTIONS = [
    f"{FEEDS_URL}{folder}{name}"
    for folder in ("", "modules/prerequisites/", "modules/cuda/")
    for name in ("feed.xml", "atom.xml", "feed.json")
]


@dataclass
class Hub:
    """What the stand-in hub received, and how it answers."""

    url: str = ""
    status: int = 204
    delay: float = 0.0
    location: str = ""  # where a 3xx answer sends the request
    requests: list[dict[str, list[str]]] = field(default_factory=list)
    gets: int = 0
    content_types: list[str] = field(default_factory=list)
    meanwhile: Callable[[], None] = lambda: None  # what happens while it answers

    @property
    def topics(self) -> list[str]:
        return [request["hub.url"][0] for request in self.requests]


@contextlib.contextmanager
def local_hub() -> Iterator[Hub]:
    hub = Hub()
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock:
                hub.requests.append(parse_qs(body.decode("ascii"), strict_parsing=True))
                hub.content_types.append(self.headers.get("Content-Type", ""))
            time.sleep(hub.delay)
            hub.meanwhile()
            self.send_response(hub.status)
            if hub.location:
                self.send_header("Location", hub.location)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:  # what urllib sends where a 302 leads, without the form
            with lock:
                hub.gets += 1
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    hub.url = f"http://127.0.0.1:{server.server_address[1]}/hub"
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[Hub]:
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    with local_hub() as running:
        yield running


def build(run_cli: RunCli, entries: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli("build", "--entries", str(entries), "--out", str(out), *extra)


def test_every_subscription_feed_names_the_hub(tmp_path: Path, run_cli: RunCli) -> None:
    entries = write_site(tmp_path / "entries", max_items=2, hub="https://hub.example.org/")
    out = tmp_path / "out"
    assert build(run_cli, entries, out, "-q") == (0, "", "")
    for url in SUBSCRIPTIONS:
        path = out / url.removeprefix(FEEDS_URL)
        if path.suffix == ".json":
            hubs = json.loads(path.read_text(encoding="utf-8"))["hubs"]
            assert hubs == [{"type": "WebSub", "url": "https://hub.example.org/"}]
        else:
            links = ET.parse(path).getroot().iter("{http://www.w3.org/2005/Atom}link")
            assert [link.attrib for link in links if link.get("rel") == "hub"] == [
                {"href": "https://hub.example.org/", "rel": "hub"}
            ]
    # Archives are not subscribed to, and must not change when the hub does.
    assert b"hub" not in (out / "archive/2026-01/feed.xml").read_bytes()


def test_ping_once_per_changed_feed_and_never_when_unchanged(
    tmp_path: Path, run_cli: RunCli, hub: Hub
) -> None:
    entries = write_site(tmp_path / "entries", max_items=2, hub=hub.url)
    out = tmp_path / "out"
    code, stdout, stderr = build(run_cli, entries, out, "--ping")
    assert (code, stderr) == (0, "")
    assert "notified the WebSub hub of 9 changed feeds" in stdout.splitlines()
    assert sorted(hub.topics) == sorted(SUBSCRIPTIONS)
    assert all(request["hub.mode"] == ["publish"] for request in hub.requests)
    assert set(hub.content_types) == {"application/x-www-form-urlencoded"}

    # Unchanged: the quick path, then a full build whose bytes come out the same.
    hub.requests.clear()
    assert build(run_cli, entries, out, "--ping", "-q") == (0, "", "")
    release = entries / "2026" / "2026-03-09.toml"
    release.write_text(release.read_text(encoding="utf-8") + "# a comment\n", encoding="utf-8")
    assert build(run_cli, entries, out, "--ping", "-q") == (0, "", "")
    assert hub.requests == []

    # A release of module 1 changes its feed and the main one, not module 2's.
    add_release(entries, "2026-04-13", 1, 1)
    assert build(run_cli, entries, out, "--ping", "-q") == (0, "", "")
    assert sorted(hub.topics) == sorted(SUBSCRIPTIONS[:6])


def test_a_build_without_ping_leaves_its_pings_to_the_next_with_it(
    tmp_path: Path, run_cli: RunCli, hub: Hub
) -> None:
    """The feeds a build without --ping changed were never told to the hub."""
    entries = write_site(tmp_path / "entries", hub=hub.url)
    out = tmp_path / "out"
    assert build(run_cli, entries, out, "-q") == (0, "", "")
    add_release(entries, "2026-04-13", 1, 1)
    assert build(run_cli, entries, out, "-q") == (0, "", "")
    assert hub.requests == []
    code, stdout, _ = build(run_cli, entries, out, "--ping")
    told = "notified the WebSub hub of 9 changed feeds"
    assert (code, stdout) == (0, f"unchanged: 17 files\n{told}\n")
    assert sorted(hub.topics) == sorted(SUBSCRIPTIONS)


def test_a_file_edited_while_the_hub_is_asked_is_written_again(
    tmp_path: Path, run_cli: RunCli, hub: Hub
) -> None:
    """The manifest rewritten after the pings was newer than the edit, which made the edited
    file look untouched: every later build left it as it was."""
    entries = write_site(tmp_path / "entries", hub=hub.url)
    out = tmp_path / "out"
    feed = out / "feed.xml"

    def edit() -> None:  # one letter of the title, in place: the size stays
        with feed.open("r+b") as handle:
            handle.seek(feed.read_bytes().index(b"<title>") + len(b"<title>"))
            handle.write(b"\x58")
        time.sleep(0.05)  # change times move at the kernel's tick: the manifest's comes later

    hub.meanwhile = edit
    assert build(run_cli, entries, out, "--ping", "-q") == (0, "", "")
    hub.meanwhile = lambda: None
    edited = feed.read_bytes()
    code, stdout, _ = build(run_cli, entries, out)
    assert (code, stdout) == (0, "wrote 1 file: feed.xml\nunchanged: 16 files\n")
    assert feed.read_bytes() != edited and len(feed.read_bytes()) == len(edited)


def test_pings_that_cannot_be_recorded_are_a_warning(
    tmp_path: Path, run_cli: RunCli, hub: Hub
) -> None:
    """The feeds are published: a manifest that cannot be rewritten after the pings (a full
    disk) failed a published build with exit 5, which says the output is as it was."""
    entries = write_site(tmp_path / "entries", hub=hub.url)
    out = tmp_path / "out"
    manifest = out / ".infrafeed-manifest"

    def in_the_way() -> None:  # what the manifest is replaced with: a folder
        if manifest.is_file():
            manifest.unlink()
            manifest.mkdir()

    hub.meanwhile = in_the_way
    code, stdout, stderr = build(run_cli, entries, out, "--ping", "-q")
    assert (code, stdout) == (0, "")
    assert stderr.startswith(f"warning: {manifest}: could not be written (Is a directory); ")
    assert stderr.endswith("; the next build with --ping tells the hub again\n")


def test_a_failing_hub_is_reported_and_asked_again_by_the_next_build(
    tmp_path: Path, run_cli: RunCli, hub: Hub
) -> None:
    hub.status = 503
    entries = write_site(tmp_path / "entries", hub=hub.url)
    out = tmp_path / "out"
    slept: list[float] = []
    result = infrafeed.build(entries, out, ping=True, clock=Clock(sleep=slept.append))
    failed = [n for n in result.notifications if n.error is not None]
    assert [n.topic for n in failed] == sorted(SUBSCRIPTIONS)
    assert failed[0].error == "HTTP 503 Service Unavailable (after 3 attempts)"
    assert len(hub.requests) == 9 * websub.ATTEMPTS and slept == [1.0, 2.0] * 9  # bounded
    assert (out / "feed.xml").is_file() and (out / "index.html").is_file()
    assert read_manifest(out).pending == tuple(sorted(SUBSCRIPTIONS))

    # The hub is back: the next build, though it has nothing to do, tells it what it owes.
    hub.status, hub.requests = 204, []
    code, stdout, stderr = build(run_cli, entries, out, "--ping")
    assert (code, stderr) == (0, "")
    assert stdout == "unchanged: 17 files\nnotified the WebSub hub of 9 changed feeds\n"
    assert sorted(hub.topics) == sorted(SUBSCRIPTIONS)
    assert read_manifest(out).pending == ()
    hub.requests = []
    assert build(run_cli, entries, out, "--ping", "-q") == (0, "", "")
    assert hub.requests == []


def test_a_build_stopped_while_pinging_leaves_the_pings_owed(
    tmp_path: Path, run_cli: RunCli, hub: Hub
) -> None:
    """The feeds that changed were owed only once the hub had answered: a build stopped while
    it waited (SIGTERM, a timeout) lost them, and no later build told the hub."""
    hub.status = 503
    entries = write_site(tmp_path / "entries", hub=hub.url)
    out = tmp_path / "out"

    def stopped(_: float) -> None:  # while waiting to ask again, the build is stopped
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        infrafeed.build(entries, out, ping=True, clock=Clock(sleep=stopped))
    assert read_manifest(out).pending == tuple(sorted(SUBSCRIPTIONS))
    hub.status, hub.requests = 204, []
    code, stdout, _ = build(run_cli, entries, out, "--ping")
    assert (code, stdout) == (
        0,
        "unchanged: 17 files\nnotified the WebSub hub of 9 changed feeds\n",
    )
    assert sorted(hub.topics) == sorted(SUBSCRIPTIONS)


def test_a_refused_request_is_said_once_per_feed_and_not_retried(
    tmp_path: Path, run_cli: RunCli, hub: Hub
) -> None:
    hub.status = 400
    entries = write_site(tmp_path / "entries", hub=hub.url)
    code, stdout, stderr = build(run_cli, entries, tmp_path / "out", "--ping", "-q")
    assert (code, stdout) == (0, "")
    lines = stderr.splitlines()
    assert len(lines) == 9 and len(hub.requests) == 9
    assert lines[0] == (
        f"warning: WebSub hub {hub.url} was not told that {FEEDS_URL}atom.xml changed "
        "(HTTP 400 Bad Request); the next build with --ping tells it"
    )


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_hub_that_redirects_is_not_told_and_the_pings_stay_owed(
    tmp_path: Path, run_cli: RunCli, hub: Hub, status: int
) -> None:
    """urllib followed a 302 with a GET without the form: the hub never heard of the feeds,
    and they were counted as told."""
    hub.status, hub.location = status, hub.url + "/moved"
    entries = write_site(tmp_path / "entries", hub=hub.url)
    code, stdout, stderr = build(run_cli, entries, tmp_path / "out", "--ping", "-q")
    assert (code, stdout, hub.gets) == (0, "", 0)
    lines = stderr.splitlines()
    assert len(lines) == 9 and len(hub.requests) == 9
    assert f"changed (HTTP {status} " in lines[0]
    assert lines[0].endswith(
        f": the hub moved to {hub.url}/moved; set [feeds] hub to its URL); "
        "the next build with --ping tells it"
    )
    assert read_manifest(tmp_path / "out").pending == tuple(sorted(SUBSCRIPTIONS))


def test_a_hub_that_refuses_connections_costs_seconds_not_minutes(tmp_path: Path) -> None:
    with socket_closed() as url:
        entries = write_site(tmp_path / "entries", hub=url)
        started = time.monotonic()
        result = infrafeed.build(entries, tmp_path / "out", ping=True)
    assert time.monotonic() - started < 15  # one feed tried three times, not nine
    assert len(result.notifications) == 9 and all(n.error for n in result.notifications)
    # Only the first was sent: the others say so, not that each was tried three times.
    first, *others = (str(n.error) for n in result.notifications)
    assert first.endswith("(after 3 attempts)")
    assert all(e == f"not sent: for an earlier feed, {first}" for e in others), others
    assert len(read_manifest(tmp_path / "out").pending) == 9


def test_a_slow_or_absent_hub_times_out(hub: Hub) -> None:
    hub.delay = 1.0
    started = time.monotonic()
    (slow,) = websub.notify(hub.url, [FEEDS_URL + "feed.xml"], timeout=0.2, attempts=2)
    assert slow.error is not None and "timed out" in slow.error
    assert time.monotonic() - started < 1.5
    with socket_closed() as url:
        (absent,) = websub.notify(url, [FEEDS_URL + "feed.xml"], attempts=2, backoff=0)
    assert absent.error is not None and absent.error.endswith("(after 2 attempts)")


def test_no_ping_outlasts_the_budget(hub: Hub) -> None:
    """The budget bounds the whole: a request under way, its retries and their waits."""
    hub.delay, hub.status = 0.3, 503
    topics = [FEEDS_URL + name for name in ("feed.xml", "atom.xml", "feed.json")]
    started = time.monotonic()
    found = websub.notify(hub.url, topics, timeout=10, attempts=3, backoff=5, budget=1.0)
    assert time.monotonic() - started < 1.6  # not 3 x 10 s of timeouts, nor 5 s of waiting
    assert [n.error for n in found] == [
        "HTTP 503 Service Unavailable (after 1 attempt)",
        "not sent within 1s",
        "not sent within 1s",
    ]


@contextlib.contextmanager
def socket_closed() -> Iterator[str]:
    """The URL of a port on 127.0.0.1 that nothing listens on."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    yield f"http://127.0.0.1:{port}/hub"


def test_ping_without_a_hub_says_so(tmp_path: Path, run_cli: RunCli) -> None:
    entries = write_site(tmp_path / "entries")
    code, _, stderr = build(run_cli, entries, tmp_path / "out", "--ping", "-q")
    assert code == 0
    assert stderr == "warning: --ping: no hub in site.toml [feeds]; nobody was notified\n"
