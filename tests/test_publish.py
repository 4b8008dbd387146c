"""Publishing as a cron job meets it: unchanged rebuilds, ownership, the id guard,
exit codes and messages, and write errors. Everything runs through ``main()``."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, RunCli
from infrafeed import cli
from infrafeed.errors import PublishError
from infrafeed.publish import tree as tree_module
from infrafeed.publish.files import write_new
from infrafeed.publish.lock import NEXT
from infrafeed.publish.manifest import MANIFEST, Manifest, read_ids, read_manifest
from infrafeed.publish.tree import Tree, mount_point
from infrafeed.render import documents
from outputs import (
    FEED_NAMES,
    age,
    assert_feeds_valid,
    feed_files,
    leftovers,
    mtimes,
    run_infrafeed,
    subprocess_env,
    tree,
)
from release_kit import set_feeds

TAG = "tag:example.org,2026-01-01:"


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} is not in {path} exactly once"
    path.write_text(text.replace(old, new), encoding="utf-8")


def owned(out: Path) -> set[str]:
    """The files the manifest says infrafeed wrote, but its own bookkeeping."""
    return {name for name in read_manifest(out).files if not name.startswith(".")}


def report(
    before: dict[str, bytes], owned_before: set[str], after: dict[str, bytes], owned_after: set[str]
) -> str:
    """What ``infrafeed build`` must print for this change of the output folder."""

    def files(names: list[str]) -> str:
        return f"{len(names)} file{'' if len(names) == 1 else 's'}"

    written = sorted(n for n in owned_after if before.get(n) != after[n])
    removed = sorted(n for n in owned_before - owned_after if n not in after)
    unchanged = sorted(owned_after - set(written))
    lines = []
    if written:
        lines.append(f"wrote {files(written)}: {', '.join(written)}")
    if removed:
        lines.append(f"removed {files(removed)} infrafeed no longer makes: {', '.join(removed)}")
    if unchanged or not (written or removed):
        lines.append(f"unchanged: {files(unchanged)}")
    return "".join(f"{line}\n" for line in lines)


@pytest.fixture
def build(run_cli: RunCli, tmp_path: Path) -> Callable[..., tuple[int, str, str]]:
    """``infrafeed build --entries E --out tmp/output ARGS``, E the test's entries."""

    def run(entries: Path, *args: str) -> tuple[int, str, str]:
        return run_cli("build", "--entries", str(entries), "--out", str(tmp_path / "output"), *args)

    return run


@pytest.fixture
def out(tmp_path: Path) -> Path:
    return tmp_path / "output"


@pytest.fixture
def built_shipped(shipped_entries: Path, out: Path, build: Any) -> int:
    """The shipped entries built once; the number of files written."""
    code, stdout, stderr = build(shipped_entries)
    assert (code, stderr) == (0, "")
    names = sorted(owned(out))
    assert stdout == f"wrote {len(names)} files: {', '.join(names)}\n"
    subscribed = [p for p in feed_files(out) if out in (p.parent, p.parent.parent.parent)]
    assert len(subscribed) == 15  # everything and four modules, in three formats
    assert_feeds_valid(out)
    return len(names)


# --- 3. Idempotent ---------------------------------------------------------------


def test_second_build_says_unchanged_and_touches_nothing(
    shipped_entries: Path, built_shipped: int, out: Path, build: Any
) -> None:
    before, stamps = tree(out), age(out)
    assert build(shipped_entries) == (0, f"unchanged: {built_shipped} files\n", "")
    assert tree(out) == before
    assert mtimes(out) == stamps  # the manifest too: nothing at all was written


def test_touched_entries_take_the_fast_path(
    shipped_entries: Path, built_shipped: int, out: Path, build: Any
) -> None:
    stamps = age(out)
    for path in shipped_entries.rglob("*.toml"):
        path.touch()  # new modification times, same bytes
    assert build(shipped_entries) == (0, f"unchanged: {built_shipped} files\n", "")
    assert mtimes(out) == stamps


def test_entries_changed_without_changing_feeds_rewrite_no_feed(
    shipped_entries: Path, built_shipped: int, out: Path, build: Any
) -> None:
    """The slow path (inputs changed) compares bytes: equal files keep their mtimes."""
    manifest_before = (out / MANIFEST).read_bytes()
    stamps = age(out)
    release = shipped_entries / "2026" / "2026-11-07.toml"
    release.write_text(release.read_text(encoding="utf-8") + "\n# a comment\n", "utf-8")

    assert build(shipped_entries) == (0, f"unchanged: {built_shipped} files\n", "")
    after = mtimes(out)
    assert {name for name in after if after[name] != stamps[name]} == {MANIFEST}
    manifest = (out / MANIFEST).read_bytes()
    assert manifest.split(b"\n")[1] != manifest_before.split(b"\n")[1]  # so the next is fast

    assert build(shipped_entries) == (0, f"unchanged: {built_shipped} files\n", "")
    assert mtimes(out) == after


def test_lost_manifest_is_rebuilt_without_rewriting_feeds(
    shipped_entries: Path, built_shipped: int, out: Path, build: Any
) -> None:
    manifest = (out / MANIFEST).read_bytes()
    stamps = age(out)
    (out / MANIFEST).unlink()
    assert build(shipped_entries) == (0, f"unchanged: {built_shipped} files\n", "")
    assert (out / MANIFEST).read_bytes() == manifest
    assert {k: v for k, v in mtimes(out).items() if k != MANIFEST} == {
        k: v for k, v in stamps.items() if k != MANIFEST
    }


def test_one_summary_change_rewrites_only_the_files_holding_it(
    shipped_entries: Path, built_shipped: int, out: Path, build: Any
) -> None:
    before, stamps = tree(out), age(out)
    edit(
        shipped_entries / "2026" / "2026-11-07.toml",
        "script ước lượng chạy được",
        "script ước lượng chạy được (đã sửa)",
    )
    code, stdout, stderr = build(shipped_entries)
    assert (code, stderr) == (0, "")
    after = tree(out)
    holding = sorted(n for n, data in after.items() if "(đã sửa)".encode() in data)
    assert stdout == report(before, owned(out), after, owned(out))
    assert stdout.startswith(f"wrote {len(holding)} files: {', '.join(holding)}\n")
    # The all-items feed and the article's module feed, in every format; no other feed.
    feeds = [n for n in holding if n.rsplit("/", 1)[-1] in ("feed.xml", "atom.xml", "feed.json")]
    assert feeds == [
        "atom.xml", "feed.json", "feed.xml",
        "modules/inference/atom.xml", "modules/inference/feed.json", "modules/inference/feed.xml",
    ]  # fmt: skip
    stamped = mtimes(out)
    assert sorted(n for n in stamped if stamped[n] != stamps[n]) == sorted([*holding, MANIFEST])


def test_a_feed_edited_in_place_is_repaired_even_with_its_mtime_kept(
    small_site: Path, out: Path, build: Any
) -> None:
    """What ``cp -p`` or ``rsync -t`` of an old copy does: same size, same mtime, other bytes."""
    build(small_site)
    files = len(owned(out))
    good = (out / "feed.json").read_bytes()
    stamp = (out / "feed.json").stat().st_mtime_ns
    (out / "feed.json").write_bytes(good.replace(b"Fixture", b"Fixtura"))
    os.utime(out / "feed.json", ns=(stamp, stamp))
    assert build(small_site) == (
        0,
        f"wrote 1 file: feed.json\nunchanged: {files - 1} files\n",
        "",
    )
    assert (out / "feed.json").read_bytes() == good


# --- 5. Ownership ------------------------------------------------------------------


def test_symlinked_folder_leading_outside_is_refused(
    small_site: Path, out: Path, tmp_path: Path, build: Any
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    out.mkdir()
    (out / "modules").symlink_to(outside, target_is_directory=True)

    code, stdout, stderr = build(small_site)
    assert (code, stdout) == (5, "")
    assert stderr == (
        f"infrafeed: {out}/modules: infrafeed writes a folder there, but this is not "
        "infrafeed's; move it away and build again\n"
    )
    assert list(outside.iterdir()) == []
    assert sorted(p.name for p in out.iterdir()) == ["modules"]  # nothing published
    assert leftovers(out) == []


def test_a_folder_made_a_symlink_during_the_build_is_refused(
    small_site: Path, out: Path, tmp_path: Path, build: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What is in the published tree is read when the next one is complete, as it is then."""
    assert build(small_site)[0] == 0
    before = tree(out)
    edit(small_site / "site.toml", 'title = "Fixture Guide"', 'title = "Fixture Guide 2"')
    outside = tmp_path / "outside"
    outside.mkdir()
    real = Tree.write

    def swap_after_staging(staging: Tree, relative: str, chunks: Any) -> None:
        real(staging, relative, chunks)
        if relative == "modules/cuda/feed.json":  # checked and staged: now swap the folder
            shutil.rmtree(out / "modules" / "cuda")
            (out / "modules" / "cuda").symlink_to(outside, target_is_directory=True)

    monkeypatch.setattr(Tree, "write", swap_after_staging)
    code, stdout, stderr = build(small_site)
    assert (code, stdout) == (5, "")
    assert "this is not infrafeed's" in stderr
    assert list(outside.iterdir()) == []
    (out / "modules" / "cuda").unlink()
    assert {k: v for k, v in tree(out).items() if not k.startswith("modules/cuda/")} == {
        k: v for k, v in before.items() if not k.startswith("modules/cuda/")
    }


def test_symlink_loop_is_refused(small_site: Path, out: Path, build: Any) -> None:
    out.mkdir()
    (out / "modules").symlink_to("modules")
    code, stdout, stderr = build(small_site)
    assert (code, stdout) == (5, "")
    assert stderr.startswith(f"infrafeed: {out}/modules/")
    assert "(Too many levels of symbolic links); the published output is unchanged" in stderr
    assert leftovers(out) == []


def test_a_file_not_infrafeeds_is_never_written_over(
    small_site: Path, out: Path, build: Any
) -> None:
    """A hand-made index.html, or a feed of a module turned off, edited, then turned on."""
    out.mkdir()
    (out / "index.html").write_text("<p>mine</p>", encoding="utf-8")
    code, stdout, stderr = build(small_site)
    assert (code, stdout) == (5, "")
    assert stderr == (
        f"infrafeed: {out}/index.html: infrafeed would write this file, but the one there is "
        "not infrafeed's (the manifest does not list it); move it away and build again\n"
    )
    assert (out / "index.html").read_text(encoding="utf-8") == "<p>mine</p>"
    (out / "feed.xml").write_text("<rss/>", encoding="utf-8")  # all named at once, not a run each
    code, _, stderr = build(small_site)
    assert (code, stderr) == (
        5,
        f"infrafeed: {out}/feed.xml, {out}/index.html: infrafeed would write these files, but "
        "those there are not infrafeed's (the manifest does not list them); move them away and "
        "build again\n",
    )
    (out / "index.html").unlink()
    (out / "feed.xml").unlink()
    assert build(small_site)[0] == 0

    set_feeds(small_site / "site.toml", modules=False)
    (out / "modules/cuda/feed.xml").write_text("edited", encoding="utf-8")
    code, _, stderr = build(small_site, "--allow-changes")
    assert code == 0 and "left modules/cuda/feed.xml in place" in stderr
    set_feeds(small_site / "site.toml", modules=True)
    code, _, stderr = build(small_site)
    assert code == 5 and "modules/cuda/feed.xml: infrafeed would write this file" in stderr
    assert (out / "modules/cuda/feed.xml").read_text(encoding="utf-8") == "edited"


def test_files_infrafeed_did_not_write_survive_everything(
    small_site: Path, out: Path, build: Any
) -> None:
    out.mkdir()
    (out / "extra.html").write_text("<p>mine</p>", encoding="utf-8")
    build(small_site)
    (out / "modules" / "cuda" / "notes.txt").write_text("mine too", encoding="utf-8")
    all_files, before = owned(out), tree(out)

    # Module feeds switched off: their files go, and only files infrafeed wrote.
    set_feeds(small_site / "site.toml", modules=False)
    code, stdout, stderr = build(small_site, "--allow-changes")
    assert (code, stderr) == (0, "")
    assert stdout == report(before, all_files, tree(out), owned(out))
    gone = all_files - owned(out)
    assert all(name.startswith("modules/") or name == "modules.opml" for name in gone)
    assert {f"modules/{m}/{f}" for m in ("cuda", "prerequisites") for f in FEED_NAMES} <= gone
    assert [p.relative_to(out).as_posix() for p in feed_files(out)] == [
        "atom.xml", "feed.json", "feed.xml",
    ]  # fmt: skip
    assert (out / "extra.html").read_text(encoding="utf-8") == "<p>mine</p>"
    assert (out / "modules" / "cuda" / "notes.txt").read_text(encoding="utf-8") == "mine too"
    assert not any(p.is_dir() and not any(p.iterdir()) for p in out.rglob("*"))  # none left empty

    set_feeds(small_site / "site.toml", modules=True)
    code, stdout, _ = build(small_site)
    assert code == 0 and "modules/cuda/feed.xml" in stdout
    assert owned(out) == all_files
    assert (out / "extra.html").exists() and (out / "modules" / "cuda" / "notes.txt").exists()


EXTRA_MODULE = """
[[modules]]
number = 3
name = "Module tạm"
slug = "extra"
section = "extra"
"""
EXTRA_FEEDS = ["modules/extra/atom.xml", "modules/extra/feed.json", "modules/extra/feed.xml"]


@pytest.fixture
def with_extra_module(small_site: Path, out: Path, build: Any) -> Path:
    """The small site with a third module (no items yet), built once."""
    edit(small_site / "site.toml", "[feeds]", EXTRA_MODULE + "\n[feeds]")
    code, _, _ = build(small_site)
    assert code == 0
    assert set(EXTRA_FEEDS) <= owned(out)
    return small_site


def test_removed_module_loses_its_feed_files(
    with_extra_module: Path, out: Path, build: Any
) -> None:
    before, owned_before = tree(out), owned(out)
    edit(with_extra_module / "site.toml", EXTRA_MODULE, "")
    code, stdout, stderr = build(with_extra_module, "--allow-changes")  # a feed goes: confirmed
    assert (code, stderr) == (0, "")
    assert stdout == report(before, owned_before, tree(out), owned(out))
    extra = sorted(n for n in owned_before if n.startswith("modules/extra/"))
    assert f"removed {len(extra)} files infrafeed no longer makes: {', '.join(extra)}\n" in (stdout)
    assert set(EXTRA_FEEDS) <= set(extra)
    assert not (out / "modules" / "extra").exists()
    assert_feeds_valid(out)


@pytest.mark.parametrize("quiet", [False, True])
def test_edited_file_of_removed_feed_is_kept_with_one_warning(
    with_extra_module: Path, out: Path, build: Any, quiet: bool
) -> None:
    (out / "modules" / "extra" / "feed.json").write_text('{"hand": "edited"}', "utf-8")
    before, owned_before = tree(out), owned(out)
    edit(with_extra_module / "site.toml", EXTRA_MODULE, "")
    flags = ["--allow-changes", "--quiet"] if quiet else ["--allow-changes"]

    code, stdout, stderr = build(with_extra_module, *flags)
    assert code == 0
    assert stdout == ("" if quiet else report(before, owned_before, tree(out), owned(out)))
    assert quiet or "modules/extra/atom.xml, modules/extra/feed.xml" in stdout
    assert stderr == (
        "warning: left modules/extra/feed.json in place: it changed since infrafeed wrote "
        "it, so it is no longer infrafeed's\n"
    )
    assert (out / "modules" / "extra" / "feed.json").read_text("utf-8") == '{"hand": "edited"}'
    assert "modules/extra/feed.json" not in owned(out)
    # Said once: the file is no longer infrafeed's business.
    code, stdout, stderr = build(with_extra_module, *flags)
    assert (code, stderr) == (0, "")
    assert stdout == ("" if quiet else f"unchanged: {len(owned(out))} files\n")


HEAD = "infrafeed manifest 2\ninputs -\n"
NOT_OURS = "it does not start with 'infrafeed manifest 2' and end with a line break"


@pytest.mark.parametrize(
    ("manifest", "reason"),
    [
        ("not a manifest", NOT_OURS),
        ('{"version": 1, "files": {}}', NOT_OURS),
        ('{"version": true}', NOT_OURS),
        ('{"version": 1.0}', NOT_OURS),
        ("[" * 100_000 + "]" * 100_000, NOT_OURS),
        ("infrafeed manifest 2\ninputs -", NOT_OURS),
        ("infrafeed manifest 2\n", "it has no records"),
        ("infrafeed manifest 2\n\n", "line 2 is not a record of a manifest"),
        ("infrafeed manifest 2\ninputs 1234\n", "line 2 is not a record of a manifest"),
        ("infrafeed manifest 2\nfile %s 6 feed.xml\n", "line 2 is not a record of a manifest"),
        (HEAD + "inputs -\n", "line 3 is not a record of a manifest"),
        (HEAD + "file %s 6 ../victim.txt\n", "line 3 is not a record of a manifest"),
        (HEAD + "file %s 6 /tmp/victim.txt\n", "line 3 is not a record of a manifest"),
        (HEAD + "file %s 6 feed.xml\nfile %s 6 feed.xml\n", "a record is there twice"),
        (HEAD + "file %s six feed.xml\n", "line 3 is not a record of a manifest"),
        (HEAD + "file %s 06 feed.xml\n", "line 3 is not a record of a manifest"),
        (HEAD + "file %s 6 feed.xml \n", "line 3 is not a record of a manifest"),
        (HEAD + "pending javascript:alert(1)\n", "line 3 is not a record of a manifest"),
        ("infrafeed manifest 2\ninputs -\nfile \u00e9 6 feed.xml\n", "it is not ASCII text"),
    ],
)  # fmt: skip
def test_a_damaged_or_forged_manifest_stops_the_build(
    small_site: Path, out: Path, tmp_path: Path, build: Any, manifest: str, reason: str
) -> None:
    """The manifest decides what may be deleted: it is never guessed at."""
    victim = tmp_path / "victim.txt"
    victim.write_text("victim", encoding="utf-8")
    build(small_site)
    (out / MANIFEST).write_text(manifest.replace("%s", hashlib.sha256(b"victim").hexdigest()))
    set_feeds(small_site / "site.toml", modules=False)
    before = tree(out)
    code, stdout, stderr = build(small_site)
    assert (code, stdout) == (5, "")
    assert stderr == (
        f"infrafeed: {out / MANIFEST}: cannot read infrafeed's record ({reason}); it lists "
        "which files infrafeed wrote, the only ones it replaces or deletes. Restore it (from "
        "git or a backup), or delete it to start over: infrafeed then refuses to write over "
        "files that differ from its own\n"
    )
    assert tree(out) == before
    assert victim.read_text(encoding="utf-8") == "victim"


def test_planted_symlinks_at_infrafeeds_own_names_are_not_followed(
    small_site: Path, out: Path, tmp_path: Path, build: Any
) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "file.txt").write_text("victim", encoding="utf-8")
    out.mkdir()
    for name in (out / NEXT, tmp_path / f".output{NEXT}", out / ".infrafeed-journal"):
        name.symlink_to(victim, target_is_directory=True)
    assert build(small_site)[0] == 0
    assert [p.name for p in victim.iterdir()] == ["file.txt"]
    assert (victim / "file.txt").read_text(encoding="utf-8") == "victim"
    assert leftovers(out) == []


@pytest.mark.parametrize("name", [MANIFEST, ".infrafeed-ids"])
@pytest.mark.parametrize("make", ["fifo", "/dev/zero"])
def test_a_record_that_is_not_a_regular_file_is_not_read(
    small_site: Path, out: Path, build: Any, name: str, make: str
) -> None:
    """In a child process with a timeout: a FIFO would be waited on forever, and /dev/zero
    read until memory runs out."""
    build(small_site)
    (out / name).unlink()
    os.mkfifo(out / name) if make == "fifo" else (out / name).symlink_to(make)
    done = run_infrafeed("build", "--entries", str(small_site), "--out", str(out), timeout=30)
    assert (done.returncode, done.stdout) == (5, "")
    assert done.stderr.startswith(
        f"infrafeed: {out / name}: cannot read infrafeed's record (it is not a regular file: "
        "a folder, device or FIFO); "
    )


def test_a_forged_journal_removes_nothing_outside_the_output_folder(
    small_site: Path, out: Path, tmp_path: Path, build: Any
) -> None:
    """A journal lists files to remove below the output folder: never a path leading out."""
    build(small_site)
    victim = tmp_path / "victim.txt"
    victim.write_text("victim", encoding="utf-8")
    staged = tmp_path / f".output{NEXT}"
    staged.mkdir()
    (out / ".infrafeed-journal").write_text(f"{staged}\n../victim.txt\n{victim}\n", "utf-8")
    assert build(small_site)[0] == 0
    assert victim.read_text(encoding="utf-8") == "victim"
    assert leftovers(out) == []


def test_a_journal_that_is_not_utf8_is_removed(small_site: Path, out: Path, build: Any) -> None:
    build(small_site)
    (out / ".infrafeed-journal").write_bytes(b"/tmp/\xff\xfe\n")
    assert build(small_site) == (0, f"unchanged: {len(owned(out))} files\n", "")
    assert leftovers(out) == []


def test_a_fallback_publish_into_a_folder_named_in_any_bytes(
    small_site: Path, tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The journal names the next tree, whose name holds the output folder's bytes."""
    monkeypatch.setattr("infrafeed.publish.tree._EXCHANGE", None)  # as on NFS
    out = tmp_path / os.fsdecode(b"out\xff")
    args = ("build", "--no-cache", "--entries", str(small_site), "--out", str(out))
    assert run_cli(*args)[0] == 0
    set_feeds(small_site / "site.toml", modules=False)
    assert run_cli(*args, "--allow-changes")[0] == 0
    assert leftovers(out) == [] and not (out / "modules").exists()


# --- 6. The id guard ----------------------------------------------------------------

GEMM = """[[groups.articles]]
id = "cuda-gemm"
chapter = 4
number = "4.1"
title = "Tối ưu hiệu năng toán tử CUDA GEMM"
summary = "Tiling ba cấp Block-Warp-Thread"
page = "https://example.org/guide/cuda/41-cuda-gemm"

"""


def test_removing_a_published_article_is_refused_then_confirmed(
    small_site: Path, out: Path, build: Any
) -> None:
    build(small_site)
    before, stamps = tree(out), age(out)
    edit(small_site / "2026" / "2026-03-05.toml", GEMM, "")
    gemm = f"{TAG}2026-03-05/cuda-gemm/new"
    readme = f"{TAG}2026-03-05/site-readme/improved"
    release = f"{small_site.as_posix()}/2026/2026-03-05.toml"
    gone = (
        f"would disappear: {small_site.as_posix()}/2026/2026-03-05-2.toml or {release} has no "
        "'new' change with id = \"cuda-gemm\" any more; it was removed, or its id, kind or "
        "module changed"
    )
    code, stdout, stderr = build(small_site)
    assert (code, stdout) == (3, "")
    assert stderr.splitlines() == [
        f"feed 'all': item {gemm} (dated 2026-03-05T11:59:59+08:00) {gone}",
        # The note after it moves up one second: that is a change of date too.
        f"feed 'all': item {readme} ({release} groups[2].notes[1]) would change its date "
        "from 2026-03-05T11:59:58+08:00 to 2026-03-05T11:59:59+08:00: items of a release "
        "are one second apart in page order, and the N-th release of a day N-1 hours after "
        "noon, so adding or removing a change before it, or renumbering its file, re-dates it; "
        "add new changes after the published ones, or in a new release",
        f"feed 'module-cuda': item {gemm} (dated 2026-03-05T11:59:59+08:00) {gone}",
        "infrafeed: the build would change items already published; nothing was written. "
        "If this is intended, run again with --allow-changes.",
    ]
    assert tree(out) == before and mtimes(out) == stamps

    code, stdout, _ = build(small_site, "--allow-changes")
    assert code == 0 and stdout.startswith("wrote ")
    feeds = read_ids(out)
    assert gemm not in feeds["all"] and gemm not in feeds["module-cuda"]
    assert feeds["all"][readme] == "2026-03-05T11:59:59+08:00"
    # The new state is the one now guarded: no flag needed any more.
    assert build(small_site) == (0, f"unchanged: {len(owned(out))} files\n", "")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("date = 2026-01-01", "date = 2026-01-02"),
        ('authority = "example.org"', 'authority = "a.b"'),
    ],
)
def test_changing_ids_after_publishing_is_one_message_about_ids(
    small_site: Path, out: Path, build: Any, old: str, new: str
) -> None:
    """It blamed every release file, one line per item, and never named [ids]."""
    build(small_site)
    before = tree(out)
    edit(small_site / "site.toml", f"\n{old}", f"\n{new}")  # [ids] date, not a release's
    minted = TAG.replace(old.split()[-1].strip('"'), new.split()[-1].strip('"'))
    code, stdout, stderr = build(small_site)
    assert (code, stdout, stderr.splitlines()) == (
        3,
        "",
        [
            f"site.toml: ids: the published items' ids start '{TAG}', but [ids] now makes them "
            f"start '{minted}': every item would come back as new to every subscriber; restore "
            "authority and date in [ids], set once",
            "infrafeed: the build would change items already published; nothing was written. "
            "If this is intended, run again with --allow-changes.",
        ],
    )
    assert tree(out) == before
    assert build(small_site, "--allow-changes")[0] == 0  # a new start, on purpose


def test_changing_the_time_zone_after_publishing_is_one_message_about_it(
    small_site: Path, out: Path, build: Any
) -> None:
    """It was a line per item and feed, each blaming page order (a subscriber-churn helper)."""
    build(small_site)
    before = tree(out)
    edit(small_site / "site.toml", 'timezone = "Asia/Shanghai"', 'timezone = "Asia/Ho_Chi_Minh"')
    code, stdout, stderr = build(small_site)
    published = len({i for ids in read_ids(out).values() for i in ids})
    (first, *rest) = stderr.splitlines()
    assert (code, stdout, rest) == (
        3,
        "",
        [
            "infrafeed: the build would change items already published; nothing was written. "
            "If this is intended, run again with --allow-changes."
        ],
    )
    found = re.fullmatch(
        rf"site\.toml: timezone: {published} published items, such as {re.escape(TAG)}\S+, would "
        r"be in another offset at the same time of day \((\S+)\+08:00 would be (\S+)\+07:00\): "
        r"readers would show them moved; restore the time zone \(or the time zone database the "
        r"build used\), or confirm that they move",
        first,
    )
    assert found is not None and found[1] == found[2], first
    assert tree(out) == before


def test_a_long_refusal_prints_200_lines_and_a_count(small_site: Path, build: Any) -> None:
    """Every item of a large site re-dated printed a line each, thousands from a cron job."""
    build(small_site)
    release = small_site / "2026" / "2026-03-05.toml"
    text = release.read_text(encoding="utf-8")
    more = "".join(GEMM.replace("cuda-gemm", f"cuda-x{n}") for n in range(300))
    release.write_text(text.replace(GEMM, more + GEMM), encoding="utf-8")
    code, _, stderr = build(small_site)
    lines = stderr.splitlines()
    assert code == 3 and len(lines) == 202 and lines[-2].startswith("... and ")


@pytest.mark.parametrize("foreign", ["tag:x,2026:y", "tag:zzz"])
def test_a_foreign_line_in_the_record_is_blamed_on_the_record(
    small_site: Path, out: Path, build: Any, foreign: str
) -> None:
    """One line of another site's ids was blamed on [ids] (which had not changed), and an id
    with no minting date was an internal error."""
    build(small_site)
    before = tree(out)
    record = small_site / "published-ids.txt"
    line = f"all {foreign} 2026-03-01T12:00:00+08:00\n"
    record.write_text(record.read_text(encoding="ascii") + line, encoding="ascii")
    code, stdout, stderr = build(small_site)
    assert (code, stdout, stderr.splitlines()[0]) == (
        3,
        "",
        f"published-ids.txt: 1 of its ids, such as {foreign}, are not of this site ('{TAG}'): "
        "lines infrafeed did not write; restore the file from git",
    )
    assert tree(out) == before
    # That line alone, on a fresh clone (no output): it is the [ids] message, whatever the id.
    record.write_text(line.join(("infrafeed ids 2\n", "")), encoding="ascii")
    shutil.rmtree(out)
    code, _, stderr = build(small_site)
    assert code == 3 and stderr.startswith("site.toml: ids: the published items' ids start 'tag:")


def test_old_ids_in_the_output_are_no_foreign_lines_of_the_record(
    small_site: Path, out: Path, build: Any, tmp_path: Path
) -> None:
    """[ids] changed and confirmed where the entries are edited: the server's build, whose
    output still holds the old ids, blamed the committed record, which was right."""
    build(small_site)
    edit(small_site / "site.toml", "\ndate = 2026-01-01", "\ndate = 2026-01-02")
    elsewhere = tmp_path / "maintainer"
    assert run_infrafeed("build", "--entries", str(small_site), "--out", str(elsewhere),
                         "--allow-changes").returncode == 0  # fmt: skip
    code, _, stderr = build(small_site)
    assert code == 3 and stderr.startswith("site.toml: ids: the published items' ids start ")


@pytest.mark.parametrize(
    ("change", "gone"),
    [
        ({}, ["module-cuda"]),  # its slug renamed
        ({"modules": False}, ["module-cuda", "module-prerequisites"]),
        ({"all": False}, ["all"]),
    ],
)
def test_a_published_feed_that_would_no_longer_be_made_is_refused_then_confirmed(
    small_site: Path, out: Path, build: Any, change: dict[str, bool], gone: list[str]
) -> None:
    """A renamed module or a feed turned off took its subscribers' feed away without a word."""
    build(small_site)
    before, published = tree(out), read_ids(out)
    if change:
        set_feeds(small_site / "site.toml", **change)
    else:
        edit(small_site / "site.toml", 'slug = "cuda"', 'slug = "cuda-programming"')
    code, stdout, stderr = build(small_site)
    assert (code, stdout, stderr.splitlines()) == (
        3,
        "",
        [
            f"feed '{key}' published {len(published[key])} items and would no longer be made: its "
            "subscribers would find it gone (a module's slug changed, the module went, or [feeds] "
            "turned it off); restore it, or confirm that it goes"
            for key in gone
        ]
        + [
            "infrafeed: the build would change items already published; nothing was written. "
            "If this is intended, run again with --allow-changes."
        ],
    )
    assert tree(out) == before
    code, stdout, _ = build(small_site, "--allow-changes")
    assert code == 0 and "removed " in stdout
    assert not set(gone) & set(read_ids(out))
    assert build(small_site)[0] == 0  # the new set of feeds is the one now guarded


def test_a_feed_with_no_items_yet_that_would_no_longer_be_made_is_refused_then_confirmed(
    with_extra_module: Path, out: Path, build: Any
) -> None:
    """Its subscribers poll it as they poll any other (the record names it for that): it went
    without a word."""
    before = tree(out)
    assert read_ids(out)["module-extra"] == {}
    edit(with_extra_module / "site.toml", EXTRA_MODULE, "")
    code, stdout, stderr = build(with_extra_module)
    assert (code, stdout, stderr.splitlines()[0]) == (
        3,
        "",
        "feed 'module-extra' was made, with no items yet, and would no longer be made: its "
        "subscribers would find it gone (a module's slug changed, the module went, or [feeds] "
        "turned it off); restore it, or confirm that it goes",
    )
    assert tree(out) == before
    assert build(with_extra_module, "--allow-changes")[0] == 0
    assert "module-extra" not in read_ids(out)
    assert build(with_extra_module)[0] == 0


def test_moving_a_published_article_to_another_module_says_so(
    small_site: Path, out: Path, build: Any
) -> None:
    """The message said its release had no such change any more, though it had."""
    build(small_site)
    moved = GEMM.replace("chapter = 4", "chapter = 4\nmodule = 1")
    edit(small_site / "2026" / "2026-03-05.toml", GEMM, moved)
    code, stdout, stderr = build(small_site)
    assert (code, stdout) == (3, "")
    assert stderr.splitlines()[0] == (
        f"feed 'module-cuda': item {TAG}2026-03-05/cuda-gemm/new (dated 2026-03-05T11:59:59+08:00) "
        f"would move to 'module-prerequisites' ({small_site.as_posix()}/2026/2026-03-05.toml "
        "groups[1].articles[2]): its module changed; change it back, or confirm that it moves"
    )


def test_a_note_that_loses_its_module_leaves_the_module_feed_and_says_where_it_is(
    small_site: Path, out: Path, build: Any
) -> None:
    """The message said "but not 'all'", for the feed it stays in, and named no file (a
    helper)."""
    release = small_site / "2026" / "2026-03-02.toml"
    edit(release, 'id = "site-outline"\n', 'id = "site-outline"\nmodule = 1\n')
    build(small_site)
    edit(release, 'id = "site-outline"\nmodule = 1\n', 'id = "site-outline"\n')
    code, stdout, stderr = build(small_site)
    assert (code, stdout) == (3, "")
    assert stderr.splitlines()[0] == (
        f"feed 'module-prerequisites': item {TAG}2026-03-02/site-outline/major (dated "
        f"2026-03-02T11:59:58+08:00) would leave this feed ({release.as_posix()} "
        "groups[2].notes[1]): its module changed; change it back, or confirm that it moves"
    )


def test_inserting_before_published_items_is_refused(
    small_site: Path, out: Path, build: Any
) -> None:
    build(small_site)
    new = GEMM.replace("cuda-gemm", "cuda-scan").replace("4.1", "4.0")
    edit(small_site / "2026" / "2026-03-05.toml", GEMM, new + GEMM)
    code, stdout, stderr = build(small_site)
    assert (code, stdout) == (3, "")
    release = f"{small_site.as_posix()}/2026/2026-03-05.toml"
    assert (
        f"feed 'module-cuda': item {TAG}2026-03-05/cuda-gemm/new ({release} "
        "groups[1].articles[3]) would change its date from 2026-03-05T11:59:59+08:00 to "
        "2026-03-05T11:59:58+08:00" in stderr
    )
    assert build(small_site, "--allow-changes")[0] == 0
    feeds = read_ids(out)
    assert feeds["module-cuda"][f"{TAG}2026-03-05/cuda-gemm/new"] == "2026-03-05T11:59:58+08:00"
    assert feeds["module-cuda"][f"{TAG}2026-03-05/cuda-scan/new"] == "2026-03-05T11:59:59+08:00"


def test_appending_after_published_items_passes(small_site: Path, build: Any) -> None:
    build(small_site)
    release = small_site / "2026" / "2026-03-05.toml"
    new = GEMM.replace("cuda-gemm", "cuda-scan").replace("4.1", "4.2")
    release.write_text(
        release.read_text("utf-8") + '\n[[groups]]\nkind = "new"\nmodule = 2\n\n' + new, "utf-8"
    )
    code, stdout, stderr = build(small_site)
    assert (code, stderr) == (0, "")
    assert stdout.startswith("wrote ")


def test_moving_an_article_to_another_module_drops_it_from_the_module_feed(
    small_site: Path, build: Any
) -> None:
    build(small_site)
    edit(
        small_site / "2026" / "2026-03-05.toml",
        'id = "cuda-gemm"\n',
        'id = "cuda-gemm"\nmodule = 1\n',
    )
    code, _, stderr = build(small_site)
    assert code == 3
    assert f"feed 'module-cuda': item {TAG}2026-03-05/cuda-gemm/new" in stderr
    assert "feed 'all'" not in stderr  # still in the all-items feed, same date


def test_items_beyond_max_items_are_not_drops(small_site: Path, out: Path, build: Any) -> None:
    set_feeds(small_site / "site.toml", max_items=5)
    build(small_site)
    (small_site / "2026" / "2026-03-09.toml").write_text(
        'date = 2026-03-09\n\n[[groups]]\nkind = "new"\nmodule = 2\n'
        + "".join(
            f'\n[[groups.articles]]\nid = "cuda-more-{n}"\ntitle = "Bài {n}"\n' for n in range(4)
        ),
        encoding="utf-8",
    )
    code, _, stderr = build(small_site)
    assert (code, stderr) == (0, "")
    rss = (out / "feed.xml").read_text(encoding="utf-8")
    assert rss.count("<item>") == 5  # max_items
    assert "site-init" not in rss  # the oldest fell out of the document...
    feeds = read_ids(out)
    assert f"{TAG}2026-03-01/site-init/init" in feeds["all"]  # ...and stays guarded
    assert len(feeds["all"]) == 12


# --- 7. Exit codes and cron ergonomics ----------------------------------------------


def test_quiet_prints_nothing_on_success(small_site: Path, build: Any) -> None:
    assert build(small_site, "--quiet") == (0, "", "")  # wrote everything
    assert build(small_site, "--quiet") == (0, "", "")  # unchanged
    edit(small_site / "2026" / "2026-03-05.toml", "ba cấp", "BA cấp")
    assert build(small_site, "-q") == (0, "", "")  # rewrote some
    set_feeds(small_site / "site.toml", modules=False)
    assert build(small_site, "-q", "--allow-changes") == (0, "", "")  # removed some


@contextlib.contextmanager
def held_lock(out: Path) -> Iterator[None]:
    """Hold the output folder's lock as another build would: flock on its parent folder."""
    fd = os.open(out.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _fail_rendering(*args: Any, **kwargs: Any) -> Iterator[tuple[str, bytes]]:
    raise RuntimeError("a bug")
    yield  # pragma: no cover


@pytest.mark.parametrize(
    ("case", "code", "message"),
    [
        ("bad entries", 1, r"^\S+2026-03-05\.toml: groups\[1\]\.kind: 'fresh' is not allowed"),
        ("guard", 3, r"^feed 'all': item tag:"),
        ("lock busy", 4, r"^infrafeed: \S+/output: another infrafeed build is running"),
        ("unwritable", 5, r"^infrafeed: \S+: could not stage the new version \(No space left"),
        ("internal error", 70, r"^infrafeed: internal error: RuntimeError: a bug \(set "),
        ("usage", 2, r"^Error: No such option '--frobnicate'"),
    ],
)  # fmt: skip
def test_failures_exit_with_their_code_and_speak_only_on_stderr(
    small_site: Path,
    out: Path,
    build: Any,
    monkeypatch: pytest.MonkeyPatch,
    case: str,
    code: int,
    message: str,
) -> None:
    assert build(small_site)[0] == 0
    before = tree(out)
    args = ["--quiet", "--lock-wait", "0"]
    release = small_site / "2026" / "2026-03-05.toml"
    if case == "bad entries":
        edit(release, 'kind = "new"', 'kind = "fresh"')
    elif case == "guard":
        edit(release, GEMM, "")
    elif case == "usage":
        args.append("--frobnicate")
    else:
        edit(small_site / "site.toml", 'title = "Fixture Guide"', 'title = "Fixture Guide 2"')
    if case == "unwritable":
        monkeypatch.setattr(os, "write", _failing(os.write, errno.ENOSPC, NEXT))
    if case == "internal error":
        monkeypatch.setattr(documents, "render_all", _fail_rendering)

    if case == "lock busy":
        with held_lock(out):
            result = build(small_site, *args)
    else:
        result = build(small_site, *args)
    assert result[:2] == (code, "")
    assert re.search(message, result[2], re.MULTILINE), result[2]
    assert tree(out) == before
    assert leftovers(out) == []


def test_exit_codes_are_documented_alike_in_help_and_docs(run_cli: RunCli) -> None:
    codes = {v: k for k, v in vars(cli).items() if k.startswith("EXIT_") and isinstance(v, int)}
    operators = (REPO / "docs" / "operators.md").read_text(encoding="utf-8")
    section = operators.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    table = dict(re.findall(r"^\| (\d+) \| (.+) \|$", section, re.MULTILINE))
    assert sorted(int(c) for c in table) == sorted(codes)
    _, help_text, _ = run_cli("--help")
    for value in codes:
        assert re.search(rf"^\s+{value}\s+\S", help_text, re.MULTILINE), value


def test_docs_tell_how_to_run_from_cron() -> None:
    operators = (REPO / "docs" / "operators.md").read_text(encoding="utf-8")
    section = operators.split("## Running from cron", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"^\*/\d+ \* \* \* \* .*infrafeed build --quiet", section, re.MULTILINE)
    assert "Type=oneshot" in section and "OnCalendar=" in section
    assert "infrafeed build --quiet" in section.split("[Service]", 1)[1]
    for code in ("1", "3", "4", "5", "70"):
        assert re.search(rf"^\| {code} \|", section, re.MULTILINE), code
    # The first two commands of the README are what a newcomer types: unchanged.
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first = readme.split("```sh\n", 1)[1].split("```", 1)[0]
    assert first == (
        "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/infrafeed build\n"
        "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && "
        ".venv/bin/python -m pytest\n"
    )


# --- 9. Disk full and permission errors while writing ---------------------------------


def _failing(real: Callable[..., Any], code: int, *names: str) -> Callable[..., Any]:
    """``real``, but raising OSError(code) when a path it touches has one of ``names``.

    Paths of a file descriptor are read from /proc, as the kernel knows them.
    """

    def paths(args: tuple[Any, ...]) -> list[str]:
        found = []
        for arg in args:
            if isinstance(arg, int) and not isinstance(arg, bool):
                with contextlib.suppress(OSError):
                    found.append(str(Path(f"/proc/self/fd/{arg}").readlink()))
            elif isinstance(arg, str | os.PathLike):
                found.append(os.fspath(arg))
        return found

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if any(name in path for path in paths(args) for name in names):
            raise OSError(code, os.strerror(code))
        return real(*args, **kwargs)

    return wrapper


# (what fails, the function, errno, a part of the path that triggers it, the message's file)
WRITE_FAILURES = [
    ("staging a file", "write", errno.ENOSPC, "/modules/cuda/atom.xml", "modules/cuda/atom.xml",
     "could not stage the new version (No space left on device); "
     "the published output is unchanged"),
    ("creating the next tree", "mkdir", errno.ENOSPC, NEXT, None,
     "could not create the next tree (No space left on device); "
     "the published output is unchanged"),
    ("writing the manifest", "write", errno.ENOSPC, f"{NEXT}/{MANIFEST}", f"{MANIFEST}",
     "could not write the manifest (No space left on device); the published output is unchanged"),
    ("carrying a file over", "link", errno.EMLINK, "extra.txt", "extra.txt",
     "could not be carried over (Too many links); the published output is unchanged"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("function", "code", "trigger", "file", "message"),
    [pytest.param(*case[1:], id=case[0]) for case in WRITE_FAILURES],
)
def test_write_errors_leave_the_previous_output_and_no_temp_files(
    small_site: Path,
    out: Path,
    build: Any,
    monkeypatch: pytest.MonkeyPatch,
    function: str,
    code: int,
    trigger: str,
    file: str | None,
    message: str,
) -> None:
    assert build(small_site)[0] == 0
    (out / "extra.txt").write_text("not infrafeed's", encoding="utf-8")
    before, stamps, owned_before = tree(out), age(out), owned(out)
    # A new title changes every file, so every file is about to be replaced.
    edit(small_site / "site.toml", 'title = "Fixture Guide"', 'title = "Fixture Guide 2"')

    monkeypatch.setattr(os, function, _failing(getattr(os, function), code, trigger))
    result = build(small_site)
    monkeypatch.undo()

    assert result[:2] == (5, "")
    if file is None:
        assert result[2].startswith(f"infrafeed: {out.parent}/.output{NEXT}: ")
    elif file == MANIFEST:
        assert result[2].startswith(f"infrafeed: {out.parent}/.output{NEXT}/{MANIFEST}: ")
    else:
        assert result[2].startswith(f"infrafeed: {out / file}: ")
    assert message in result[2]
    assert tree(out) == before and mtimes(out) == stamps
    assert leftovers(out) == []

    code_after, stdout, _ = build(small_site)
    assert code_after == 0
    assert stdout == report(before, owned_before, tree(out), owned(out))
    assert_feeds_valid(out)


# --- 10. Documents streamed to the next tree ------------------------------------

BIG = 1 << 20  # publish.files._WRITE_SIZE: small chunks are gathered into writes this large
STREAMS = [
    ("nothing", []),
    ("one empty chunk", [b""]),
    ("many small chunks", [b"<item>%d</item>\n" % n for n in range(100_000)]),
    ("small, large, small", [b"head", b"x" * (3 * BIG + 1), b"tail"]),
    ("exactly the write size", [b"a" * (BIG - 1), b"b", b"c" * BIG, b""]),
    ("other buffers", [bytearray(b"ab"), memoryview(b"cdef")[1:3], memoryview(array("H", [1, 2]))]),
]  # fmt: skip


@pytest.mark.parametrize("chunks", [c for _, c in STREAMS], ids=[name for name, _ in STREAMS])
def test_a_file_staged_in_chunks_is_the_file_staged_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunks: list[bytes]
) -> None:
    whole = b"".join(chunks)
    writes: list[int] = []
    real_write = os.write

    def counting_write(fd: int, data: Any) -> int:
        writes.append(len(memoryview(data).cast("B")))
        return real_write(fd, data)

    staging = Tree(tmp_path / "output", Manifest(None, {}))
    monkeypatch.setattr(os, "write", counting_write)
    staging.write("modules/cuda/feed.xml", iter(chunks))
    monkeypatch.undo()
    staging.write("feed.xml", (whole,))

    assert (staging.dir / "modules/cuda/feed.xml").read_bytes() == whole
    assert staging.records["modules/cuda/feed.xml"] == staging.records["feed.xml"]
    assert staging.records["feed.xml"].size == len(whole)
    assert staging.records["feed.xml"].sha256 == hashlib.sha256(whole).hexdigest()
    # Small chunks are gathered: about one system call per megabyte, not one per chunk.
    assert len(writes) <= len(whole) // BIG + 2
    staging.cleanup()
    assert not staging.dir.exists()


def test_a_stream_that_cannot_be_written_is_not_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    staging = Tree(tmp_path / "output", Manifest(None, {}))
    monkeypatch.setattr(os, "write", _failing(os.write, errno.ENOSPC, "feed.json"))
    with pytest.raises(PublishError, match=r"feed.json: could not stage the new version \(No sp"):
        staging.write("feed.json", [b"x" * BIG, b"y"])
    assert staging.records == {}
    staging.cleanup()
    assert not staging.dir.exists()


def test_the_operators_folders_stay_with_their_modes(
    small_site: Path, out: Path, build: Any
) -> None:
    """Only files were carried over: an empty .well-known/ went, and a folder kept 0700 was
    served 0755 from then on."""
    build(small_site)
    (out / ".well-known").mkdir()
    private = out / "private"
    private.mkdir()
    (private / "x").write_text("secret", encoding="utf-8")
    private.chmod(0o700)
    (out / "modules").chmod(0o750)  # infrafeed's folder, the operator's mode
    (out / "feed.xml").unlink()  # a build with something to do
    assert build(small_site, "-q") == (0, "", "")
    assert (out / ".well-known").is_dir() and (private / "x").read_text(
        encoding="utf-8"
    ) == "secret"
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    assert stat.S_IMODE((out / "modules").stat().st_mode) == 0o750


def test_files_put_into_the_output_while_a_build_runs_stay(tmp_path: Path) -> None:
    """What an operator wrote between the build carrying files over and its switch was lost."""
    out = tmp_path / "out"
    tree = Tree(out, read_manifest(out))
    tree.write("feed.xml", [b"1"])
    tree.publish(Manifest(None, {}), None)
    (out / "mine.txt").write_text("old", encoding="utf-8")

    class Racing(Tree):
        def _switched(self) -> bool:
            (self.out / "sub").mkdir()
            (self.out / "sub" / "new.txt").write_text("new", encoding="utf-8")
            replacing = self.out / "mine.txt.tmp"  # as editors save: a new file moved in
            replacing.write_text("edited", encoding="utf-8")
            replacing.replace(self.out / "mine.txt")
            return super()._switched()

    racing = Racing(out, read_manifest(out))
    racing.write("feed.xml", [b"2"])
    racing.publish(Manifest(None, {}), None)
    assert (out / "feed.xml").read_bytes() == b"2"
    assert (out / "sub" / "new.txt").read_text(encoding="utf-8") == "new"
    assert (out / "mine.txt").read_text(encoding="utf-8") == "edited"


def test_a_mount_point_is_known_as_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bind mount shares its parent's device, so the device test took it for a folder the
    switch could replace: every build into one failed with exit 5 (Device or resource busy)."""
    assert mount_point(Path("/proc")) and mount_point(Path("/"))
    folder = tmp_path / "a b\\c"
    folder.mkdir()
    assert not mount_point(folder)
    # A bind mount there, as Linux lists it: space and backslash in octal escapes.
    written = str(folder).replace("\\", "\\134").replace(" ", "\\040")
    table = tmp_path / "mountinfo"
    table.write_text(f"36 25 8:1 /srv {written} rw,relatime shared:1 - ext4 /dev/sda1 rw\n")
    monkeypatch.setattr(tree_module, "MOUNTS", table)
    assert mount_point(folder) and not mount_point(tmp_path)
    assert not Tree(folder, Manifest(None, {})).switch  # the journal fallback


def test_what_older_versions_left_in_the_output_goes(tmp_path: Path) -> None:
    """Moving late files into the new tree took old bookkeeping of infrafeed's along."""
    out = tmp_path / "out"
    for content in (b"1", b"2"):
        tree = Tree(out, read_manifest(out))
        tree.write("feed.xml", [content])
        tree.publish(Manifest(None, {}), None)
        (out / ".infrafeed.lock").write_bytes(b"")
        (out / ".infrafeed-staging-1" / "x").mkdir(parents=True)
    tree = Tree(out, read_manifest(out))
    tree.write("feed.xml", [b"3"])
    tree.publish(Manifest(None, {}), None)
    assert sorted(p.name for p in out.iterdir()) == [".infrafeed-manifest", "feed.xml"]


def test_a_page_that_cannot_be_staged_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk while staging --page left a part of it beside the page for good; a name
    there with a number no process has stopped the build (OverflowError, exit 70)."""
    out, page = tmp_path / "out", tmp_path / "site" / "update-log.md"
    page.parent.mkdir()
    (page.parent / ".update-log.md.99999999999999999999.new").write_bytes(b"half")
    tree = Tree(out, read_manifest(out))
    tree.write("feed.xml", [b"feed"])
    monkeypatch.setattr(os, "write", _failing(os.write, errno.ENOSPC, ".update-log.md"))
    with pytest.raises(PublishError, match=r"update-log.md: could not be written \(No space"):
        tree.publish(Manifest(None, {}), (page, [b"page"]))
    monkeypatch.undo()
    tree.cleanup()
    assert list(page.parent.iterdir()) == []


def test_a_page_goes_in_with_the_feeds_or_not_at_all(tmp_path: Path) -> None:
    """--page was written before the switch: a switch that failed left a new page beside the
    old feeds, and the message said the output was unchanged."""
    out, page = tmp_path / "out", tmp_path / "site" / "update-log.md"
    page.parent.mkdir()
    page.write_bytes(b"old page")

    class Refused(Tree):
        def _switched(self) -> bool:
            raise PublishError(f"{self.out}: could not be switched (Operation not permitted)")

    tree = Refused(out, read_manifest(out))
    tree.write("feed.xml", [b"new feed"])
    with pytest.raises(PublishError, match="could not be switched"):
        tree.publish(Manifest(None, {}), (page, [b"new page"]))
    tree.cleanup()
    assert page.read_bytes() == b"old page" and sorted(page.parent.iterdir()) == [page]
    tree = Tree(out, read_manifest(out))
    tree.write("feed.xml", [b"new feed"])
    tree.publish(Manifest(None, {}), (page, [b"new page"]))
    assert page.read_bytes() == b"new page" and (out / "feed.xml").read_bytes() == b"new feed"


def test_what_a_killed_build_staged_is_removed_by_the_next(
    small_site: Path, tmp_path: Path, build: Any
) -> None:
    """The record and the page are staged beside their places: a build killed before moving
    them in left hidden files there for good (in the entries, for git to take)."""
    page = tmp_path / "site" / "update-log.md"
    page.parent.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    left = [
        small_site / f".published-ids.txt.{dead}.new",
        page.parent / f".update-log.md.{dead}.new",
    ]
    for path in left:
        path.write_bytes(b"half")
    assert build(small_site, "--page", str(page), "-q") == (0, "", "")
    assert not any(path.exists() for path in left) and page.is_file()


def test_the_pings_a_tree_owes_are_switched_in_with_it(tmp_path: Path) -> None:
    """A build stopped after its switch, before it asked the hub, lost the pings of the feeds
    it changed: they were recorded only afterwards. They are in the switched-in manifest."""
    out, old = tmp_path / "out", "https://e.org/old.xml"
    topics = {"feed.xml": "https://e.org/feed.xml", "atom.xml": "https://e.org/atom.xml"}
    tree = Tree(out, read_manifest(out))
    tree.write("feed.xml", [b"<rss/>"])
    tree.write("index.html", [b"<p>a</p>"])
    tree.publish(Manifest(None, {}, pending=(old,)), None, topics)
    assert read_manifest(out).pending == ("https://e.org/feed.xml", old)

    tree = Tree(out, read_manifest(out))
    tree.write("feed.xml", [b"<rss/>"])  # unchanged: not owed again
    tree.write("atom.xml", [b"<feed/>"])
    tree.publish(Manifest(None, {}), None, topics)
    assert read_manifest(out).pending == ("https://e.org/atom.xml",)
    tree = Tree(out, read_manifest(out))
    tree.write("atom.xml", [b"<feed/>"])
    tree.publish(Manifest(None, {}), None, None)  # a build without --ping owes nothing
    assert read_manifest(out).pending == ()


def as_builder(entries: Path, out: Path, *args: str, chown: bool = True) -> tuple[int, str]:
    """``infrafeed build``, as a user whom file modes and owners bind: root without the
    capabilities that ignore them (setpriv, of util-linux), or the user running the tests.
    ``chown``: root may give a file any group, as a user may the groups it is in."""
    if shutil.which("setpriv") is None and os.geteuid() == 0:
        pytest.skip("root ignores file modes and owners; setpriv (util-linux) drops that")
    caps = "-dac_override,-dac_read_search,-fowner" + ("" if chown else ",-chown")
    drop = ["setpriv", f"--bounding-set={caps}"]
    done = subprocess.run(
        [*(drop if os.geteuid() == 0 else []), sys.executable, "-m", "infrafeed", "build",
         "-q", "--no-cache", "--entries", str(entries), "--out", str(out), *args],
        env=subprocess_env(), capture_output=True, text=True, check=False,
    )  # fmt: skip
    return done.returncode, done.stderr


def other_users(*paths: Path, mode: int | None = None) -> None:
    """Give ``paths`` to user and group 65534 (nobody), as another user's files are."""
    if os.geteuid() != 0:
        pytest.skip("only root can give files to another user")
    for path in paths:
        os.chown(path, 65534, 65534, follow_symlinks=False)
        if mode is not None:
            path.chmod(mode)


def test_a_read_only_output_folder_stays_so_and_every_build_publishes(
    small_site: Path, tmp_path: Path
) -> None:
    """A switch gives the new tree the output folder's mode: the old tree, 0555 too, could not be
    removed, and every later build failed on it ("could not create the next tree")."""
    out = tmp_path / "out"
    out.mkdir(mode=0o555)
    for n in range(3):
        edit(small_site / "site.toml", 'title = "Fixture Guide', f'title = "Fixture Guide {n}')
        assert as_builder(small_site, out) == (0, "")
        assert leftovers(out) == [] and stat.S_IMODE(out.stat().st_mode) == 0o555
    out.chmod(0o755)  # for pytest to clean up


def test_a_folder_the_build_cannot_list_is_never_left_behind(
    small_site: Path, tmp_path: Path
) -> None:
    """Found by an operator-chaos helper: a foreign folder the build could not list was left
    out of the new tree (exit 0), its files gone from the served folder."""
    out = tmp_path / "out"
    assert as_builder(small_site, out) == (0, "")
    private = out / "private"
    private.mkdir()
    (private / "data.txt").write_text("secret", encoding="utf-8")
    private.chmod(0)
    edit(small_site / "site.toml", 'title = "Fixture Guide', 'title = "Fixture Guide 2')
    code, stderr = as_builder(small_site, out)
    assert (code, stderr) == (
        5,
        f"infrafeed: {private}: could not be carried over: it cannot be listed (Permission "
        "denied); the published output is unchanged\n",
    )
    private.chmod(0o700)
    assert (private / "data.txt").read_text(encoding="utf-8") == "secret" and leftovers(out) == []
    assert as_builder(small_site, out) == (0, "")  # once it can be listed, it is carried over
    assert (out / "private" / "data.txt").read_text(encoding="utf-8") == "secret"


def test_files_and_folders_of_other_users_are_carried_over_and_keep_their_group(
    small_site: Path, tmp_path: Path
) -> None:
    """Found by an operator-chaos helper: a robots.txt of root's, 0644, could not be hard-linked
    (protected_hardlinks), so every build failed (exit 5); the folders lost their group, so a
    web server reading them as that group, 0750, got 403 for every feed (exit 0)."""
    out = tmp_path / "out"
    assert as_builder(small_site, out) == (0, "")
    robots = out / "robots.txt"
    robots.write_text("User-agent: *\n", encoding="utf-8")
    other_users(robots, mode=0o644)
    folders = [out, out / "modules", out / "modules" / "cuda"]
    for folder in folders:
        os.chown(folder, -1, 65534)
        folder.chmod(0o750)
    edit(small_site / "site.toml", 'title = "Fixture Guide', 'title = "Fixture Guide 2')
    # A build user not in the group cannot keep it: a refusal, not folders the server cannot read.
    before = tree(out)
    assert as_builder(small_site, out, chown=False) == (
        5,
        f"infrafeed: {out}/modules: its group (65534) cannot be given to the new tree's folder: "
        "the build's user is not in it; add it to the group and build again; the published "
        "output is unchanged\n",
    )
    assert tree(out) == before and leftovers(out) == []
    assert as_builder(small_site, out) == (0, "")
    assert robots.read_text(encoding="utf-8") == "User-agent: *\n"
    assert [(f.stat().st_gid, stat.S_IMODE(f.stat().st_mode)) for f in folders] == [
        (65534, 0o750)
    ] * 3
    # A group that may do no more than others may is no reason to stop (an output folder that
    # an administrator made as root, 0755, in a folder of the build user's).
    for folder in folders:
        folder.chmod(0o755)
    edit(small_site / "site.toml", 'title = "Fixture Guide 2', 'title = "Fixture Guide 3')
    assert as_builder(small_site, out, chown=False) == (0, "")
    assert [stat.S_IMODE(f.stat().st_mode) for f in folders] == [0o755] * 3
    # One that may do less than others (0705 shuts a group out) must not become "others".
    for folder in folders:
        os.chown(folder, -1, 65534)
        folder.chmod(0o705)
    edit(small_site / "site.toml", 'title = "Fixture Guide 3', 'title = "Fixture Guide 4')
    assert as_builder(small_site, out, chown=False)[0] == 5
    assert [(f.stat().st_gid, stat.S_IMODE(f.stat().st_mode)) for f in folders] == [
        (65534, 0o705)
    ] * 3


def test_a_sticky_parent_of_another_users_is_no_reason_to_fail(
    small_site: Path, tmp_path: Path
) -> None:
    """A shared folder such as /tmp (sticky, 1777) refuses to switch an output folder of another
    user's (EPERM): every build failed with exit 5; moving the files in works."""
    parent, out = tmp_path / "shared", tmp_path / "shared" / "out"
    out.mkdir(parents=True)
    robots = out / "robots.txt"
    robots.write_text("User-agent: *\n", encoding="utf-8")
    other_users(parent, mode=0o1777)
    other_users(out, mode=0o777)
    other_users(robots, mode=0o644)
    inode = robots.stat().st_ino
    for n in range(2):
        edit(small_site / "site.toml", 'title = "Fixture Guide', f'title = "Fixture Guide {n}')
        assert as_builder(small_site, out) == (0, "")
        assert (out / "feed.xml").is_file() and leftovers(out) == []
    # Not infrafeed's: left as it is (a review found it copied, then moved over the original).
    assert (robots.stat().st_ino, robots.stat().st_uid) == (inode, 65534)


def test_a_cache_path_that_is_a_file_is_a_warning(small_site: Path, tmp_path: Path) -> None:
    """It was a usage error (exit 2), though docs/operators.md says a cache never fails a build."""
    cache = tmp_path / "cache"
    cache.write_text("", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "infrafeed", "build", "-q", "--entries", str(small_site),
         "--out", str(tmp_path / "out"), "--cache", str(cache)],
        env=subprocess_env(), capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and done.stderr.startswith("warning: could not write the build")


@pytest.mark.filterwarnings("ignore::ResourceWarning")  # the dropped file object says so
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_an_interrupt_while_opening_a_file_leaks_no_descriptor(tmp_path: Path) -> None:
    """A host that stops builds with signals (a REPL's Ctrl-C) leaked a descriptor each time
    the interrupt came while the file was being opened: its disk space too, once deleted. The
    signal goes to the process, as Ctrl-C's does, which has another thread (this test's)."""
    stop = threading.Event()

    def interrupt(signum: int, frame: Any) -> None:  # only in write_new: the test runs on
        if frame is not None and frame.f_code is write_new.__code__:
            raise KeyboardInterrupt

    def keep_interrupting() -> None:
        while not stop.is_set():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.00003)

    fds = Path("/proc/self/fd")
    before, interrupted = set(fds.iterdir()), 0
    default = signal.signal(signal.SIGINT, interrupt)
    thread = threading.Thread(target=keep_interrupting)
    thread.start()
    try:
        for n in range(3_000):
            try:
                write_new(tmp_path / f"{n}.xml", [b"<rss/>"], sync=False)
            except KeyboardInterrupt:
                interrupted += 1
    finally:
        stop.set()
        thread.join()
        signal.signal(signal.SIGINT, default)
    assert interrupted and set(fds.iterdir()) <= before


@pytest.mark.parametrize("where", [".", "modules/cuda"])
def test_a_process_working_in_the_output_folder_stays_in_it(
    small_site: Path, out: Path, build: Any, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """The switch left it in the old tree, removed: getcwd() failed, and a build given a
    relative path, or "--out .", stopped with FileNotFoundError (exit 70)."""
    build(small_site)
    folder = out / where
    monkeypatch.chdir(folder)
    release = small_site / "2026" / "2026-03-05.toml"
    release.write_text(release.read_text("utf-8").replace("GEMM", "GEMM 2"), "utf-8")
    assert build(small_site)[0] == 0
    assert Path.cwd() == folder.resolve() and Path("feed.xml").is_file()


def test_a_build_run_from_a_folder_the_new_tree_lacks_keeps_its_relative_paths(
    small_site: Path, out: Path, build: Any, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Moved to the output folder where the new tree had no such folder, a build given
    relative paths wrote published-ids.txt elsewhere, failed (exit 5) and lost the record."""
    build(small_site)
    monkeypatch.chdir(out / "modules" / "cuda")  # gone once the module's slug changes
    toml = small_site / "site.toml"
    toml.write_text(toml.read_text("utf-8").replace('slug = "cuda"', 'slug = "gpu"'), "utf-8")
    entries, output = os.path.relpath(small_site), os.path.relpath(out)
    code, _, err = run_cli("build", "-q", "--allow-changes", "--entries", entries, "--out", output)
    assert (code, err) == (0, "")
    assert "module-gpu" in (small_site / "published-ids.txt").read_text("utf-8")


def test_a_module_with_no_items_yet_is_not_said_to_be_updated(
    with_extra_module: Path, out: Path
) -> None:
    """Its card said "0 mục mới nhất · cập nhật 01/01/2026", [ids] date, from before the module
    existed (a helper following README)."""
    for page in ("index.html", "modules/extra/index.html"):
        text = (out / page).read_text(encoding="utf-8")
        assert '<p class="meta">0 mục mới nhất ·\nđầy đủ mọi mục</p>' in text
    assert "cập nhật <time" in (out / "modules/cuda/index.html").read_text(encoding="utf-8")
