"""``infrafeed serve`` as a maintainer runs it: the command in a child process, on a free port,
read over HTTP while its entries are edited, broken and fixed, then stopped by a signal.

Every wait is bounded (20 s) and polls: none is a timed assertion.
"""

from __future__ import annotations

import fnmatch
import html
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from email.message import Message
from pathlib import Path
from typing import IO, TypeVar

import pytest

import infrafeed
from conftest import SHIPPED_ENTRIES
from infrafeed.serve import CONTENT_TYPES
from localhttp import content_types
from outputs import run_infrafeed, subprocess_env

T = TypeVar("T")
WAIT = 20.0  # seconds: a bound for what takes well under one
DRAFT = "2026/2026-11-20.toml"  # a release not published yet, after the shipped ones
DRAFTED = """date = 2026-11-20

[[groups]]
kind = "new"
module = 4
chapter = 7

[[groups.articles]]
id = "inference-preview"
number = "7.1"
title = "Xem trước"
summary = "Trang xem trước của bản tin"
"""
ARTICLE = """
[[groups.articles]]
id = "inference-live-preview"
number = "7.2"
title = "Xem trước trực tiếp"
summary = "Dựng lại mỗi lần lưu"
"""


def until(found: Callable[[], T | None], what: str, server: Served | None = None) -> T:
    """What ``found`` gives once it gives something, polling for up to WAIT seconds."""
    deadline = time.monotonic() + WAIT
    while (value := found()) is None or value is False:  # None or False: not yet
        if time.monotonic() > deadline:
            told = f"\nstdout: {server.out}\nstderr: {server.err}" if server else ""
            pytest.fail(f"not within {WAIT:g} s: {what}{told}")
        time.sleep(0.05)
    return value


def get(url: str) -> tuple[int, Message, str]:
    """Status, headers (their names in any case) and text of a GET, whatever the status."""
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.headers, exc.read().decode()


def answered(url: str, status: int) -> tuple[int, Message, str] | None:
    """The answer to a GET if it has this status."""
    answer = get(url)
    return answer if answer[0] == status else None


class Served:
    """``infrafeed serve --port 0`` running on ``entries``, its temporary files below ``tmp``."""

    def __init__(self, entries: Path, tmp: Path, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "infrafeed", "serve", "--entries", str(entries),
             "--port", "0", *args],
            env=subprocess_env(TMPDIR=str(tmp)),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
        )  # fmt: skip
        self.out: list[str] = []
        self.err: list[str] = []
        assert self.process.stdout is not None and self.process.stderr is not None
        self.readers = [
            threading.Thread(target=self._read, args=(stream, lines))
            for stream, lines in ((self.process.stdout, self.out), (self.process.stderr, self.err))
        ]
        for reader in self.readers:
            reader.start()

    @staticmethod
    def _read(stream: IO[str], lines: list[str]) -> None:
        for line in stream:
            lines.append(line.rstrip("\n"))

    def line(self, pattern: str) -> re.Match[str]:
        """The first line of stdout that matches ``pattern``, waited for."""
        return until(
            lambda: next(filter(None, (re.fullmatch(pattern, line) for line in self.out)), None),
            f"a line {pattern!r}",
            self,
        )

    def stop(self, signum: int) -> int:
        self.process.send_signal(signum)
        return self.process.wait(timeout=WAIT)

    def close(self) -> None:
        """Kill the command if a failed test left it running; read its output to the end."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for reader in self.readers:
            reader.join(timeout=WAIT)
        for stream in (self.process.stdout, self.process.stderr):
            assert stream is not None
            stream.close()


def shown(page: str) -> list[str]:
    """The lines an error page shows."""
    found = re.search(r"<pre[^>]*>(.*)</pre>", page, flags=re.S)
    assert found, page
    return html.unescape(found[1]).splitlines()


def files_below(folder: Path) -> dict[str, bytes | None]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() if p.is_file() else None
        for p in folder.rglob("*")
    }


@pytest.fixture
def shipped(tmp_path: Path) -> Path:
    target = tmp_path / "entries"
    shutil.copytree(SHIPPED_ENTRIES, target)
    assert (target / "published-ids.txt").is_file()  # the record a build would bring up to date
    return target


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    """The TMPDIR of the command: it must be left empty."""
    (tmp_path / "tmp").mkdir()
    return tmp_path / "tmp"


def test_a_preview_follows_every_save_and_stops_leaving_nothing(shipped: Path, tmp: Path) -> None:
    draft = shipped / DRAFT
    draft.write_text(DRAFTED, encoding="utf-8")
    before = files_below(shipped)
    served = Served(shipped, tmp)
    try:
        site = Path(served.line(r"built \d+ files into (.+)")[1])
        base = served.line(r"serving (http://127\.0\.0\.1:\d+/) \(Ctrl-C stops\)")[1]
        assert site.is_relative_to(tmp)

        status, headers, feed = get(base + "feed.xml")
        assert status == 200 and headers["Content-Type"] == "application/rss+xml; charset=utf-8"
        assert headers["Cache-Control"] == "no-store" and "Trang xem trước" in feed
        status, headers, index = get(base)
        assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
        assert 'href="feed.xml"' in index  # relative: the preview's own feed, not the site's
        assert get(base + ".infrafeed-ids")[0] == 404  # bookkeeping, not served

        # An article added to the draft: saved, it is in the feed and on the page.
        edited = DRAFTED + ARTICLE
        draft.write_text(edited, encoding="utf-8")
        until(lambda: "Xem trước trực tiếp" in get(base + "feed.xml")[2], "the new item", served)
        assert "Xem trước trực tiếp" in get(base + "index.html")[2]
        served.line(r"rebuilt: \d+ files changed: .*feed\.xml.*")

        # Broken: every page shows check's words; the feeds are the last good build's.
        broken = edited.replace('kind = "new"', 'kind = "<new>"', 1)
        draft.write_text(broken, encoding="utf-8")
        _, headers, page = until(lambda: answered(base, 500), "the error page", served)
        assert headers["Content-Type"] == "text/html; charset=utf-8"
        assert headers["Cache-Control"] == "no-store"
        checked = run_infrafeed("check", "--entries", str(shipped))
        assert checked.stderr.startswith(f"{draft}: groups[1].kind: '<new>' is not allowed")
        assert shown(page)[:-1] == checked.stderr.splitlines()[:-1]  # all but the summary
        assert "&#x27;&lt;new&gt;&#x27;" in page
        assert get(base + "modules/inference/index.html")[0] == 500  # every page
        status, _, feed = get(base + "feed.xml")
        assert status == 200 and "Xem trước trực tiếp" in feed
        until(lambda: shown(page) == served.err[-len(shown(page)) :], "stderr too", served)

        # Fixed: the pages are back.
        draft.write_text(edited, encoding="utf-8")
        until(lambda: answered(base, 200), "the page back", served)

        # The guard speaks as in a build: a published release may not go unsaid.
        first = shipped / "2026" / "2026-04-14.toml"
        kept = first.read_bytes()
        first.unlink()
        page = until(lambda: answered(base, 500), "the guard's refusal", served)[2]
        built = run_infrafeed("build", "--no-cache", "--entries", str(shipped), "--out",
                              str(tmp / "built"))  # fmt: skip
        assert built.returncode == 3 and "would disappear" in built.stderr
        assert shown(page)[:-1] == built.stderr.splitlines()[:-1]
        assert shown(page)[-1].endswith("; if this is intended, serve with --allow-changes; "
                                        "the feeds are the last good build's until a build "
                                        "succeeds")  # fmt: skip
        first.write_bytes(kept)
        until(lambda: answered(base, 200), "the page back", served)

        assert served.stop(signal.SIGINT) == 0
    finally:
        served.close()
    assert served.out[-1] == "stopped; the temporary folder is removed"
    assert not any("Traceback" in line for line in served.err)
    assert not site.exists() and list(tmp.iterdir()) == []
    # The entries hold what the test wrote and nothing else: no published-ids.txt brought up
    # to date with the draft, no build cache; nothing beside them either.
    assert files_below(shipped) == before | {DRAFT: edited.encode()}
    assert sorted(p.name for p in shipped.parent.iterdir()) == ["entries", "tmp"]


def test_sigterm_stops_it_too_and_entries_broken_from_the_start_are_shown(
    small_site: Path, tmp: Path
) -> None:
    (small_site / "site.toml").write_text('title = "x"\n', encoding="utf-8")
    served = Served(small_site, tmp)
    try:
        base = served.line(r"serving (http://\S+) \(Ctrl-C stops\)")[1]
        status, _, page = get(base)
        assert status == 500 and "site.toml" in page and "no feed is served" in page
        assert get(base + "feed.xml")[0] == 404  # no good build yet
        assert not any(line.startswith("built") for line in served.out)
        assert served.stop(signal.SIGTERM) == 0
    finally:
        served.close()
    assert list(tmp.iterdir()) == []


def test_signals_in_a_burst_stop_it_once_and_leave_nothing(small_site: Path, tmp: Path) -> None:
    """An impatient Ctrl-C, twice, then a kill: the second and third cannot cut short the
    removal of the temporary folder that the first set off."""
    served = Served(small_site, tmp)
    try:
        served.line(r"serving (http://\S+) \(Ctrl-C stops\)")
        for signum in (signal.SIGINT, signal.SIGINT, signal.SIGTERM):
            served.process.send_signal(signum)
        assert served.process.wait(timeout=WAIT) == 0
    finally:
        served.close()
    assert served.out[-1] == "stopped; the temporary folder is removed"
    assert served.err == [] and list(tmp.iterdir()) == []


def test_allow_changes_previews_a_published_release_gone(shipped: Path, tmp: Path) -> None:
    (shipped / "2026" / "2026-04-14.toml").unlink()
    served = Served(shipped, tmp, "--allow-changes")
    try:
        base = served.line(r"serving (http://\S+) \(Ctrl-C stops\)")[1]
        status, _, feed = get(base + "feed.xml")
        assert status == 200 and "2026-04-14/site-repository-init" not in feed
        assert get(base)[0] == 200
        assert served.stop(signal.SIGINT) == 0
    finally:
        served.close()


def test_every_file_is_served_with_output_readmes_content_type(small_site: Path, tmp: Path) -> None:
    readme = content_types()
    assert [row for row in CONTENT_TYPES if row in readme] == readme
    assert {row for row in CONTENT_TYPES if row not in readme} <= {("*.png", "image/png")}
    served = Served(small_site, tmp)
    try:
        site = Path(served.line(r"built \d+ files into (.+)")[1])
        base = served.line(r"serving (http://\S+) \(Ctrl-C stops\)")[1]
        files = [p for p in site.rglob("*") if p.is_file() and not p.name.startswith(".")]
        assert {"feed.xml", "atom.xml", "feed.json", "feeds.json", "feeds.opml", "icon.png"} <= {
            p.name for p in files
        }
        for path in files:
            kind = next(k for pattern, k in readme if fnmatch.fnmatch(path.name, pattern))
            # Read as bytes: the icons are PNG, no text.
            with urllib.request.urlopen(base + path.relative_to(site).as_posix(), timeout=5) as r:
                assert (r.status, r.headers["Content-Type"]) == (200, kind), path
        assert served.stop(signal.SIGINT) == 0
    finally:
        served.close()


@pytest.mark.parametrize("case", ["port in use", "no entries folder"])
def test_what_cannot_be_served_is_refused_at_once(small_site: Path, tmp: Path, case: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        entries = small_site if case == "port in use" else small_site / "missing"
        done = subprocess.run(
            [sys.executable, "-m", "infrafeed", "serve", "--entries", str(entries), "--port",
             port if case == "port in use" else "0"],
            env=subprocess_env(TMPDIR=str(tmp)), capture_output=True, text=True, timeout=WAIT,
            check=False,
        )  # fmt: skip
    wanted = (
        f"infrafeed: 127.0.0.1:{port}: cannot serve there (Address already in use); give "
        "another --port, or --port 0 for a free one"
        if case == "port in use"
        else f"{entries}: (folder): no such folder"
    )
    assert (done.returncode, done.stdout) == (1, "") and wanted in done.stderr
    assert list(tmp.iterdir()) == []


def test_a_preview_build_writes_no_record_and_lets_a_draft_go(
    shipped: Path, tmp_path: Path
) -> None:
    """What the guard holds a preview to: published-ids.txt alone, which it never writes."""
    record = (shipped / "published-ids.txt").read_bytes()
    draft = shipped / DRAFT
    draft.write_text(DRAFTED + ARTICLE, encoding="utf-8")
    out = tmp_path / "preview"
    infrafeed.build(shipped, out, preview=True)
    draft.write_text(DRAFTED, encoding="utf-8")  # an article goes before it was published
    infrafeed.build(shipped, out, preview=True)
    assert (shipped / "published-ids.txt").read_bytes() == record
    first = shipped / "2026" / "2026-04-14.toml"
    kept = first.read_bytes()
    first.unlink()  # what was published may not go unsaid
    with pytest.raises(infrafeed.GuardError):
        infrafeed.build(shipped, out, preview=True)
    assert (shipped / "published-ids.txt").read_bytes() == record
    first.write_bytes(kept)
    infrafeed.build(shipped, tmp_path / "out")  # the same entries: a build records the draft
    assert (shipped / "published-ids.txt").read_bytes() != record
