"""Builds killed with SIGKILL, and builds running at the same time, in child processes.

A subscriber's reader may fetch a feed at any moment: whatever happens to a
build, each feed file is either the previous version or the new one, whole.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import SHIPPED_ENTRIES
from infrafeed.cli import main
from infrafeed.publish.lock import LOCK
from infrafeed.publish.manifest import MANIFEST, read_manifest
from outputs import (
    FEED_NAMES,
    assert_feeds_valid,
    differing,
    leftovers,
    run_infrafeed,
    subprocess_env,
    tree,
)

# The child that dies: it counts the calls by which a build changes the file
# system (os.mkdir, os.write, os.replace...) and sends itself SIGKILL at call
# number KILL_AT, or, with KILL_AT=0, prints the list of calls at the end.
# Test-side only: the library has no hook for this.
KILLER = """\
import json, os, signal, sys

kill_at = int(os.environ["KILL_AT"])
calls = []


def counted(name, real):
    def call(*args, **kwargs):
        on = "fd" if not args or isinstance(args[0], int) else os.fspath(args[0])
        calls.append([name, on])
        if len(calls) == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)
    return call


for name in ("mkdir", "write", "fsync", "link", "replace", "rename", "unlink", "rmdir"):
    setattr(os, name, counted(name, getattr(os, name)))

from infrafeed.cli import main

code = main(sys.argv[1:])
if kill_at == 0:
    print(json.dumps(calls))
sys.exit(code)
"""


class Versions:
    """Two versions of the shipped site whose feeds all differ, built cleanly."""

    def __init__(self, root: Path) -> None:
        self.entries = {"a": root / "a", "b": root / "b"}
        shutil.copytree(SHIPPED_ENTRIES, self.entries["a"])
        shutil.copytree(SHIPPED_ENTRIES, self.entries["b"])
        site = self.entries["b"] / "site.toml"
        text = site.read_text(encoding="utf-8")
        site.write_text(text.replace('\ndescription = "', '\ndescription = "(b) ', 1), "utf-8")
        self.golden: dict[str, dict[str, bytes]] = {}
        for name, entries in self.entries.items():
            out = root / f"golden-{name}"
            assert main(["build", "-q", "--entries", str(entries), "--out", str(out)]) == 0
            assert_feeds_valid(out)
            self.golden[name] = tree(out)
        assert set(self.golden["a"]) == set(self.golden["b"])
        self.files = sorted(set(self.golden["a"]) - {MANIFEST})
        self.changing = [f for f in self.files if self.golden["a"][f] != self.golden["b"][f]]
        feeds = [f for f in self.files if f.rsplit("/", 1)[-1] in FEED_NAMES]
        assert len(feeds) >= 15 and set(feeds) <= set(self.changing)

    def check_after_kill(self, out: Path, old: str, new: str) -> str:
        """Every file is whole, old or new; return which: "old", "new" or "mixed"."""
        seen = set()
        for name in self.files:
            data = (out / name).read_bytes()
            if name not in self.changing:
                assert data == self.golden[old][name], name
            elif data == self.golden[old][name]:
                seen.add("old")
            elif data == self.golden[new][name]:
                seen.add("new")
            else:
                pytest.fail(f"{name} is neither the old nor the new version: {data[-200:]!r}")
        read_manifest(out)  # the manifest is whole too: previous, intent or new
        return seen.pop() if len(seen) == 1 else "mixed"

    def recover(self, out: Path, version: str) -> None:
        """The next cron run: not blocked, completes the build, leaves nothing behind."""
        entries = str(self.entries[version])
        code = main(["build", "-q", "--lock-wait", "0", "--entries", entries, "--out", str(out)])
        assert code == 0
        assert leftovers(out) == []
        assert differing(tree(out), self.golden[version]) == []


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> Versions:
    return Versions(tmp_path_factory.mktemp("versions"))


def _killer(
    tmp_path: Path, versions: Versions, out: Path, version: str, kill_at: int
) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "killer.py"
    if not script.exists():
        script.write_text(KILLER, encoding="utf-8")
    entries = str(versions.entries[version])
    return subprocess.run(
        [sys.executable, str(script), "build", "-q", "--entries", entries, "--out", str(out)],
        env=subprocess_env(KILL_AT=str(kill_at)),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_sigkill_at_every_kind_of_step_leaves_whole_feeds(
    versions: Versions, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "output"
    versions.recover(out, "a")
    # A full rebuild from a to b, step by step, to choose where to kill.
    traced = _killer(tmp_path, versions, out, "b", 0)
    assert traced.returncode == 0, traced.stderr
    calls = json.loads(traced.stdout)
    versions.recover(out, "a")
    published = [
        n for n, (_, path) in enumerate(calls, start=1)
        if path.startswith(str(out)) and ".infrafeed-staging-" not in path
    ]  # fmt: skip
    first, last = published[1], published[-1]  # after the lock; up to the new manifest
    # Every other step of the commit (backing up, replacing, the manifest's two
    # versions), one in ten while staging or cleaning up.
    points = sorted({*range(first - 1, last + 3, 2), *range(1, len(calls) + 1, 10)})
    assert len(points) >= 30

    states = []
    current = "a"
    for kill_at in points:
        new = "b" if current == "a" else "a"
        killed = _killer(tmp_path, versions, out, new, kill_at)
        assert killed.returncode == -signal.SIGKILL, (kill_at, killed.stderr)
        states.append(versions.check_after_kill(out, current, new))
        capsys.readouterr()
        versions.recover(out, new)
        current = new
    # The points did hit the moments that matter: some feeds replaced, others not yet.
    assert "mixed" in states and "old" in states and "new" in states


def test_sigkill_at_random_moments_leaves_whole_feeds(versions: Versions, tmp_path: Path) -> None:
    out = tmp_path / "output"
    versions.recover(out, "a")
    started = time.monotonic()
    full = run_infrafeed("build", "-q", "--entries", str(versions.entries["b"]), "--out", str(out))
    duration = time.monotonic() - started
    assert full.returncode == 0
    current = "b"
    rng = random.Random(20261130)  # noqa: S311 (seeded, for repeatable kill times)
    for _ in range(12):
        new = "b" if current == "a" else "a"
        child = subprocess.Popen(
            [sys.executable, "-m", "infrafeed", "build", "-q",
             "--entries", str(versions.entries[new]), "--out", str(out)],
            env=subprocess_env(),
        )  # fmt: skip
        time.sleep(rng.uniform(0.3, 1.0) * duration)
        child.kill()
        child.wait()
        versions.check_after_kill(out, current, new)
        versions.recover(out, new)
        current = new


# --- One build at a time ---------------------------------------------------------------


def _lock_is_held(out: Path) -> bool:
    try:
        fd = os.open(out / LOCK, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        assert exc.errno in (errno.EAGAIN, errno.EACCES)
        return True
    finally:
        os.close(fd)  # also releases the lock if we got it
    return False


def _start_build(entries: Path, out: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "infrafeed", "build", "--entries", str(entries),
         "--out", str(out), *args],
        env=subprocess_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _frozen_holding_the_lock(entries: Path, out: Path) -> Iterator[subprocess.Popen[str]]:
    """A real build, stopped (SIGSTOP) while it holds the output folder's lock."""
    for _ in range(20):
        shutil.rmtree(out, ignore_errors=True)
        child = _start_build(entries, out)
        deadline = time.monotonic() + 10
        while child.poll() is None and time.monotonic() < deadline:
            if _lock_is_held(out):
                child.send_signal(signal.SIGSTOP)
                if _lock_is_held(out):
                    yield child
                    return
                child.send_signal(signal.SIGCONT)
            time.sleep(0.002)
        child.kill()
        child.communicate()
    pytest.fail("could not catch a build holding its lock")


def test_a_second_build_waits_or_gives_up_with_code_4(
    shipped_entries: Path, tmp_path: Path
) -> None:
    out = tmp_path / "output"
    first = next(_frozen_holding_the_lock(shipped_entries, out))
    try:
        impatient = run_infrafeed(
            "build", "--lock-wait", "0", "--entries", str(shipped_entries), "--out", str(out)
        )
        assert (impatient.returncode, impatient.stdout) == (4, "")
        assert impatient.stderr == (
            f"infrafeed: {out / LOCK}: another infrafeed build is running on this output "
            "folder (waited 0s); try again later\n"
        )
        patient = _start_build(shipped_entries, out, "--lock-wait", "60")
        time.sleep(1.0)
        assert patient.poll() is None  # waiting, not writing
    finally:
        first.send_signal(signal.SIGCONT)
    first_out, first_err = first.communicate(timeout=60)
    assert (first.returncode, first_err) == (0, "")
    assert first_out.startswith("wrote ")
    # It ran after the first one had finished, so it found everything done.
    files = len([name for name in read_manifest(out).files if not name.startswith(".")])
    assert patient.communicate(timeout=60) == (f"unchanged: {files} files\n", "")
    assert patient.returncode == 0
    assert_feeds_valid(out)
    assert leftovers(out) == []


def test_the_lock_of_a_killed_build_does_not_block(shipped_entries: Path, tmp_path: Path) -> None:
    out = tmp_path / "output"
    first = next(_frozen_holding_the_lock(shipped_entries, out))
    first.kill()
    first.communicate()
    done = run_infrafeed(
        "build", "--lock-wait", "0", "--entries", str(shipped_entries), "--out", str(out)
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert_feeds_valid(out)
    assert leftovers(out) == []


def test_concurrent_builds_never_interleave(versions: Versions, tmp_path: Path) -> None:
    out = tmp_path / "output"
    builds = [_start_build(versions.entries[v], out, "--lock-wait", "60") for v in "abab" * 2]
    for child in builds:
        stdout, stderr = child.communicate(timeout=120)
        assert (child.returncode, stderr) == (0, ""), stderr
        assert stdout.startswith(("unchanged: ", "wrote "))
    final = tree(out)
    assert (
        differing(final, versions.golden["a"]) == [] or differing(final, versions.golden["b"]) == []
    ), "the output mixes two builds"
    assert leftovers(out) == []
