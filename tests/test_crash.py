"""The cron contract under every fault, in child processes, with a reader polling all along.

Builds switch one output folder between two versions, A and B, of the shipped
site, whose every feed differs. Whatever happens to a build (SIGINT, SIGTERM
or SIGKILL at any step, a disk that fills up, a closed or full stdout, a
second build, a damaged manifest), a reader polling the output folder only
ever sees the whole tree of A or the whole tree of B; the exit code is the
documented one, with one line and no traceback; and the next build ends in
the bytes a cold build writes.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import SHIPPED_ENTRIES
from infrafeed.cli import main
from infrafeed.publish.manifest import MANIFEST
from outputs import assert_feeds_valid, differing, leftovers, run_infrafeed, subprocess_env, tree

pytestmark = pytest.mark.slow

# The child: it counts the calls by which a build changes the file system and,
# at call number FAULT_AT, sends itself the signal FAULT (or fails the call with
# ENOSPC when FAULT is "ENOSPC"); with FAULT_AT=0 it prints the calls at the end.
# Test-side only: the library has no hook for this.
CHILD = """\
import errno, json, os, signal, sys
import infrafeed.publish.tree as tree

fault, fault_at = os.environ["FAULT"], int(os.environ["FAULT_AT"])
calls = []


def counted(name, real):
    def call(*args, **kwargs):
        calls.append(name)
        if len(calls) == fault_at:
            if fault == "ENOSPC":
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            os.kill(os.getpid(), getattr(signal, fault))
        return real(*args, **kwargs)
    return call


for name in ("mkdir", "write", "link", "replace", "rename", "unlink", "rmdir", "symlink"):
    setattr(os, name, counted(name, getattr(os, name)))
tree._EXCHANGE = counted("renameat2", tree._EXCHANGE)
if os.environ.get("NO_EXCHANGE"):  # a file system without RENAME_EXCHANGE
    tree._EXCHANGE = None

from infrafeed.cli import run

if fault_at == 0:
    import atexit
    atexit.register(lambda: print(json.dumps(calls), file=sys.stderr))
run()
"""


class Versions:
    """Two versions of the shipped site whose feeds all differ, and their cold builds."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.entries = {"a": root / "a", "b": root / "b"}
        shutil.copytree(SHIPPED_ENTRIES, self.entries["a"])
        shutil.copytree(SHIPPED_ENTRIES, self.entries["b"])
        site = self.entries["b"] / "site.toml"
        text = site.read_text(encoding="utf-8")
        site.write_text(text.replace('\ndescription = "', '\ndescription = "(b) ', 1), "utf-8")
        self.golden: dict[str, dict[str, bytes]] = {}
        for name, entries in self.entries.items():
            out = root / f"golden-{name}" / "output"
            assert (
                main(["build", "-q", "--no-cache", "--entries", str(entries), "--out", str(out)])
                == 0
            )
            assert_feeds_valid(out)
            self.golden[name] = tree(out)
        feeds = [f for f in self.golden["a"] if f.endswith(("feed.xml", "atom.xml", "feed.json"))]
        assert all(self.golden["a"][f] != self.golden["b"][f] for f in feeds)

    def which(self, snapshot: dict[str, bytes]) -> str:
        """ "a" or "b" when ``snapshot`` is one of the two trees, whole; else what differs."""
        for name, golden in self.golden.items():
            if snapshot == golden:
                return name
        return f"a mix: {differing(snapshot, self.golden['a'])[:5]}"

    def child(
        self, out: Path, version: str, fault: str, at: int, **env: str
    ) -> subprocess.Popen[str]:
        script = self.root / "child.py"
        if not script.exists():
            script.write_text(CHILD, encoding="utf-8")
        entries = str(self.entries[version])
        return subprocess.Popen(
            [sys.executable, str(script), "build", "-q", "--no-cache", "--entries", entries,
             "--out", str(out)],
            env=subprocess_env(FAULT=fault, FAULT_AT=str(at), **env),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    def recover(self, out: Path, version: str) -> None:
        """The next cron run: not blocked, completes the build, leaves nothing behind."""
        entries = str(self.entries[version])
        assert main(["build", "-q", "--no-cache", "--lock-wait", "0", "--entries", entries,
                     "--out", str(out)]) == 0  # fmt: skip
        assert leftovers(out) == []
        assert differing(tree(out), self.golden[version]) == []


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> Versions:
    return Versions(tmp_path_factory.mktemp("versions"))


def snapshot_of(out: Path) -> dict[str, bytes] | None:
    """The whole tree as one reader sees it through one open folder; None if it moved meanwhile.

    A web server resolves each request from the folder's path: a tree read
    through a folder that was switched away while it was read is not what
    any reader is served, so it does not count. No folder at all raises
    FileNotFoundError: readers would get 404s.
    """
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        found: dict[str, bytes] = {}

        def walk(folder: int, prefix: str) -> None:
            with os.scandir(folder) as listing:
                entries = list(listing)
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    sub = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
                    try:
                        walk(sub, f"{prefix}{entry.name}/")
                    finally:
                        os.close(sub)
                else:
                    file = os.open(entry.name, os.O_RDONLY, dir_fd=folder)
                    with os.fdopen(file, "rb") as handle:
                        found[prefix + entry.name] = handle.read()

        walk(fd, "")
        return found if out.stat().st_ino == os.fstat(fd).st_ino else None
    except OSError:
        return None
    finally:
        os.close(fd)


@contextlib.contextmanager
def polling(out: Path, versions: Versions) -> Iterator[list[str]]:
    """A reader reading the whole output folder again and again; what it saw.

    Once a tree was published, a moment without the output folder is seen too.
    """
    seen: list[str] = []
    stop = threading.Event()

    def poll() -> None:
        published = out.exists()
        while not stop.is_set():
            try:
                found = snapshot_of(out)
            except FileNotFoundError:
                if published:
                    seen.append("no output folder")
                continue
            published = True
            if found is not None:
                seen.append(versions.which(found))

    reader = threading.Thread(target=poll)
    reader.start()
    try:
        yield seen
    finally:
        stop.set()
        reader.join()


def calls_of(versions: Versions, out: Path, version: str) -> list[str]:
    traced = versions.child(out, version, "SIGKILL", 0)
    _, stderr = traced.communicate(timeout=60)
    assert traced.returncode == 0, stderr
    return list(json.loads(stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize("fault", ["SIGKILL", "SIGINT", "SIGTERM"])
def test_a_signal_at_any_step_leaves_the_old_tree_or_the_new_one(
    fault: str, versions: Versions, tmp_path: Path
) -> None:
    out = tmp_path / "output"
    versions.recover(out, "a")
    calls = calls_of(versions, out, "b")
    versions.recover(out, "a")
    # Around the switch, every step; before and after, a sample: staging, carrying, cleaning.
    switch = calls.index("renameat2") + 1
    every = 5 if fault == "SIGKILL" else 10
    points = sorted({*range(1, switch, every), *range(switch - 2, switch + 3),
                     *range(switch + 3, len(calls) + 1, 2 * every)})  # fmt: skip
    states = set()
    current = "a"
    for at in points:
        new = "b" if current == "a" else "a"
        with polling(out, versions) as seen:
            child = versions.child(out, new, fault, at)
            _, stderr = child.communicate(timeout=60)
        if fault == "SIGKILL":
            assert child.returncode == -signal.SIGKILL, (at, stderr)
        else:
            assert (child.returncode, stderr) == (
                130,
                "infrafeed: interrupted; the output is as it was before, or wholly new\n",
            ), at
        assert seen, at  # the reader read the tree at least once meanwhile
        assert set(seen) <= {"a", "b"}, (at, [s for s in seen if s not in ("a", "b")][:1])
        final = snapshot_of(out)
        assert final is not None
        states.add(versions.which(final))
        versions.recover(out, new)
        current = new
    assert states == {"a", "b"}  # the points did hit both sides of the switch


def test_without_rename_exchange_a_killed_build_is_completed_by_the_next(
    versions: Versions, tmp_path: Path
) -> None:
    """The fallback: files moved in one at a time under a journal (a mix may show meanwhile)."""
    out = tmp_path / "output"
    versions.recover(out, "a")
    traced = versions.child(out, "b", "SIGKILL", 0, NO_EXCHANGE="1")
    _, stderr = traced.communicate(timeout=60)
    assert traced.returncode == 0 and versions.which(tree(out)) == "b", stderr
    calls = json.loads(stderr.strip().splitlines()[-1])
    moves = [n for n, call in enumerate(calls, start=1) if call == "replace"]
    assert len(moves) > 10  # every changed file moved in, then the manifest
    current = "b"
    for at in moves[1 :: max(1, len(moves) // 6)]:  # (the first writes the journal)
        new = "b" if current == "a" else "a"
        child = versions.child(out, new, "SIGKILL", at, NO_EXCHANGE="1")
        child.communicate(timeout=60)
        assert child.returncode == -signal.SIGKILL
        assert (out / ".infrafeed-journal").is_file()
        versions.recover(out, new)  # completes the journal, then builds: nothing left to do
        current = new


@pytest.mark.parametrize("fault", ["SIGINT", "SIGTERM"])
def test_without_rename_exchange_a_stop_waits_until_every_file_is_moved_in(
    versions: Versions, tmp_path: Path, fault: str
) -> None:
    """As it waits for the switch: a build stopped among the moves left a mix served until the
    next build, and said that the output was as before or wholly new."""
    out = tmp_path / "output"
    versions.recover(out, "a")
    traced = versions.child(out, "b", fault, 0, NO_EXCHANGE="1")
    calls = json.loads(traced.communicate(timeout=60)[1].strip().splitlines()[-1])
    moves = [n for n, call in enumerate(calls, start=1) if call == "replace"]
    for at in moves[1 :: max(1, len(moves) // 3)]:
        versions.recover(out, "a")
        child = versions.child(out, "b", fault, at, NO_EXCHANGE="1")
        _, stderr = child.communicate(timeout=60)
        assert child.returncode == 130, stderr
        assert versions.which(tree(out)) == "b" and leftovers(out) == []


def _mount_tmpfs(folder: Path, kilobytes: int) -> bool:
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kilobytes}k", "tmpfs",
                           str(folder)], capture_output=True, check=False)  # fmt: skip
    return done.returncode == 0


def test_a_full_disk_at_any_level_fails_with_code_5_and_leaves_the_old_tree(
    versions: Versions, tmp_path: Path
) -> None:
    """On a small tmpfs where the test can mount one, else with ENOSPC at each write."""
    disk = tmp_path / "disk"
    if _mount_tmpfs(disk, 8192):
        levels = []
        try:
            out = disk / "output"
            versions.recover(out, "a")
            info = os.statvfs(disk)
            used = (info.f_blocks - info.f_bfree) * info.f_frsize // 1024
            for level in range(used + 8, used * 2 + 64, max(4, used // 16)):
                subprocess.run(["mount", "-o", f"remount,size={level}k", str(disk)], check=True)
                result = run_infrafeed("build", "-q", "--no-cache", "--entries",
                                       str(versions.entries["b"]), "--out", str(out))  # fmt: skip
                levels.append(result.returncode)
                _check_full_disk(result, out, versions)
                subprocess.run(["mount", "-o", "remount,size=8192k", str(disk)], check=True)
                versions.recover(out, "a")
        finally:
            subprocess.run(["umount", str(disk)], check=False)
        assert len(levels) >= 10 and 5 in levels and 0 in levels
        return
    out = tmp_path / "output"
    versions.recover(out, "a")
    writes = calls_of(versions, out, "b").count("write")
    versions.recover(out, "a")
    codes = []
    for at in range(1, writes + 1, max(1, writes // 40)):
        child = versions.child(out, "b", "ENOSPC", at)
        _, stderr = child.communicate(timeout=60)
        codes.append(child.returncode)
        _check_full_disk(
            subprocess.CompletedProcess([], child.returncode, "", stderr), out, versions
        )
        versions.recover(out, "a")
    assert 5 in codes  # some write's ENOSPC did reach the build


def _check_full_disk(
    result: subprocess.CompletedProcess[str], out: Path, versions: Versions
) -> None:
    if result.returncode == 0:
        assert versions.which(tree(out)) == "b"
        return
    assert result.returncode == 5, result.stderr
    assert "No space left on device" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert versions.which(tree(out)) == "a"
    assert leftovers(out) == []


@pytest.mark.parametrize(
    "shell", ["{} >&-", "{} > /dev/full", "{} | true", "{} | head -c 1 > /dev/null"]
)
@pytest.mark.parametrize("command", ["build", "check"])
def test_a_closed_or_full_stdout_does_not_fail_a_finished_job(
    shell: str, command: str, versions: Versions, tmp_path: Path
) -> None:
    out = tmp_path / "output"
    args = f"--entries {versions.entries['b']}" + (
        f" --no-cache --out {out}" if command == "build" else ""
    )
    line = shell.format(f"{sys.executable} -m infrafeed {command} {args}")
    done = subprocess.run(["bash", "-o", "pipefail", "-c", line], env=subprocess_env(),
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    if command == "build":
        assert versions.which(tree(out)) == "b"


def _frozen_holding_the_lock(entries: Path, out: Path) -> subprocess.Popen[str]:
    """A real build, stopped (SIGSTOP) while it holds the output folder's lock."""
    for _ in range(20):
        shutil.rmtree(out, ignore_errors=True)
        child = subprocess.Popen(
            [sys.executable, "-m", "infrafeed", "build", "--no-cache", "--entries", str(entries),
             "--out", str(out)],
            env=subprocess_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while child.poll() is None and time.monotonic() < deadline:
            if _lock_is_held(out):
                child.send_signal(signal.SIGSTOP)
                if _lock_is_held(out):
                    return child
                child.send_signal(signal.SIGCONT)
            time.sleep(0.002)
        child.kill()
        child.communicate()
    pytest.fail("could not catch a build holding its lock")


def _lock_is_held(out: Path) -> bool:
    fd = os.open(out.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        assert exc.errno in (errno.EAGAIN, errno.EACCES)
        return True
    finally:
        os.close(fd)  # also releases the lock if we got it
    return False


def test_a_second_build_waits_or_gives_up_with_code_4(versions: Versions, tmp_path: Path) -> None:
    # The lock is flock(2) on the output's parent folder (_lock_is_held): there is no lock
    # file that a clean-up could delete.
    out = tmp_path / "sites" / "output"
    out.parent.mkdir()
    first = _frozen_holding_the_lock(versions.entries["a"], out)
    try:
        impatient = run_infrafeed("build", "--no-cache", "--lock-wait", "0", "--entries",
                                  str(versions.entries["b"]), "--out", str(out))  # fmt: skip
        assert (impatient.returncode, impatient.stdout) == (4, "")
        assert impatient.stderr == (
            f"infrafeed: {out}: another infrafeed build is running on this output folder "
            "(waited 0s); try again later\n"
        )
    finally:
        first.send_signal(signal.SIGCONT)
    _, stderr = first.communicate(timeout=60)
    assert (first.returncode, stderr) == (0, "")  # the first build, once resumed, completes
    assert versions.which(tree(out)) == "a"
    versions.recover(out, "b")


def test_the_lock_of_a_killed_build_does_not_block(versions: Versions, tmp_path: Path) -> None:
    out = tmp_path / "output"
    first = _frozen_holding_the_lock(versions.entries["a"], out)
    first.kill()
    first.communicate()
    versions.recover(out, "a")


def test_concurrent_builds_never_interleave(versions: Versions, tmp_path: Path) -> None:
    out = tmp_path / "output"
    with polling(out, versions) as seen:
        builds = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "infrafeed",
                    "build",
                    "--no-cache",
                    "--lock-wait",
                    "60",
                    "--entries",
                    str(versions.entries[v]),
                    "--out",
                    str(out),
                ],
                env=subprocess_env(),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for v in "abab" * 2
        ]
        for child in builds:
            _, stderr = child.communicate(timeout=120)
            assert (child.returncode, stderr) == (0, ""), stderr
    assert set(seen) <= {"a", "b"} and seen
    assert versions.which(tree(out)) in ("a", "b")


@pytest.mark.parametrize(
    "damage",
    [b"", b"not a manifest\n", b'{"version": true}', b'{"version": 1.0}', b'{"version": 1}',
     b"[" * 100_000, b"infrafeed manifest 2\ninputs -\nfile 00 1 feed.xml\n"],
)  # fmt: skip
def test_a_damaged_manifest_is_refused_with_code_5_and_deleting_it_starts_over(
    damage: bytes, versions: Versions, tmp_path: Path
) -> None:
    out = tmp_path / "output"
    versions.recover(out, "a")
    (out / MANIFEST).write_bytes(damage)
    before = tree(out)
    result = run_infrafeed("build", "--no-cache", "--entries", str(versions.entries["a"]),
                           "--out", str(out))  # fmt: skip
    assert result.returncode == 5 and len(result.stderr.splitlines()) == 1
    assert result.stderr.endswith("infrafeed then refuses to write over files that differ "
                                  "from its own\n")  # fmt: skip
    assert tree(out) == before
    (out / MANIFEST).unlink()
    versions.recover(out, "a")
