"""What a maintainer and an operator are told: each point a session found wrong, checked.

Folders that overlap, files that are not entries, URLs rewritten without a
word, messages that hid problems or said what is not so, the guard's memory
kept in git, and the options a cron line gives.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import RunCli
from infrafeed.source.urls import absolute
from outputs import run_infrafeed

GOOD = """\
date = 2026-03-09

[[groups]]
kind = "new"
module = 1

[[groups.articles]]
id = "bai-moi"
title = "Bài mới"
summary = "Tóm tắt"
"""


def _build(run_cli: RunCli, entries: Path, out: Path, *args: str) -> tuple[int, str, str]:
    return run_cli("build", "--no-cache", "--entries", str(entries), "--out", str(out), *args)


# --- Folders --------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["entries", "entries/out", "."])
def test_an_output_folder_that_overlaps_the_entries_is_refused(
    where: str, small_site: Path, run_cli: RunCli
) -> None:
    out = small_site.parent if where == "." else small_site.parent / where
    code, stdout, stderr = _build(run_cli, small_site, out)
    assert (code, stdout) == (1, "")
    assert stderr.startswith(f"infrafeed: {out}: the output folder must be a folder apart")
    assert not (small_site / "out").exists()


@pytest.mark.parametrize("make", ["fifo", "/dev/null"])
def test_an_output_folder_that_is_a_device_or_fifo_is_named_so(
    make: str, small_site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    """It was 'cannot read infrafeed's record (Not a directory); ... Restore it'."""
    out = tmp_path / "out"
    os.mkfifo(out) if make == "fifo" else out.symlink_to(make)
    code, stdout, stderr = _build(run_cli, small_site, out)
    assert (code, stdout) == (5, "")
    why = "is not a folder (a file, device or FIFO); give --out a folder"
    assert stderr == f"infrafeed: {out}: {why}\n"


def test_an_output_folder_too_deep_to_create_is_a_write_error(
    small_site: Path, tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2,000 folders deep, --out was an internal error (exit 70): RecursionError in mkdir.
    1,200 is past Python's recursion limit, and 2,399 characters below any tmp_path is a path."""
    monkeypatch.chdir(tmp_path)
    out = Path("/".join(["d"] * 1200))
    code, stdout, stderr = _build(run_cli, small_site, out)
    assert (code, stdout) == (5, "")
    parent = Path(os.path.realpath(out)).parent
    why = "too many folders deep to create; give --out a shorter path"
    assert stderr == f"infrafeed: {parent}: cannot open the output folder's parent: {why}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entries"]


@pytest.mark.parametrize(
    "where",
    ["entries/site.toml", "entries/2026/2026-03-05.toml", "entries/notes.md", "out/feed.xml",
     "out/update-log.md", "out/.infrafeed-manifest"],
)  # fmt: skip
def test_a_page_in_the_entries_or_the_output_folder_is_refused(
    where: str, small_site: Path, run_cli: RunCli
) -> None:
    """--page entries/site.toml wrote the page over the settings, and in the output folder
    the page was lost when the new tree replaced the old one."""
    out = small_site.parent / "out"
    assert _build(run_cli, small_site, out)[0] == 0
    before = {p: p.read_bytes() for p in small_site.parent.rglob("*") if p.is_file()}
    page = small_site.parent / where
    code, stdout, stderr = _build(run_cli, small_site, out, "--page", str(page))
    assert (code, stdout) == (1, "")
    folder = small_site if where.startswith("entries") else out
    assert stderr == (
        f"infrafeed: {page}: the changelog page must be outside the "
        f"{'entries' if folder == small_site else 'output'} folder {folder}; write it "
        "where the site reads it, e.g. --page docs/posts/update-log.md\n"
    )
    assert {p: p.read_bytes() for p in small_site.parent.rglob("*") if p.is_file()} == before


def test_the_page_written_another_way_is_the_same_page(small_site: Path, tmp_path: Path) -> None:
    """ "docs/../page.md" after "page.md" was another input: a full build, nothing to write."""
    import infrafeed

    (tmp_path / "docs").mkdir()
    out, page = tmp_path / "out", tmp_path / "page.md"
    assert not infrafeed.build(small_site, out, page=page).skipped
    assert infrafeed.build(small_site, out, page=tmp_path / "docs" / ".." / "page.md").skipped


def test_a_page_that_is_not_a_regular_file_is_refused(small_site: Path, tmp_path: Path) -> None:
    """A FIFO made the build wait forever; --page /dev/null replaced the device (as root)."""
    page = tmp_path / "page.md"
    os.mkfifo(page)
    args = ["--entries", str(small_site), "--out", str(tmp_path / "out"), "--page", str(page)]
    done = run_infrafeed("build", "--no-cache", *args, timeout=30)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"infrafeed: {page}: is not a regular file (a folder, device or FIFO); give --page the "
        "path of a file\n"
    )
    assert stat.S_ISFIFO(page.lstat().st_mode) and not (tmp_path / "out").exists()


def test_a_page_that_is_a_folder_is_refused_as_readme_says(
    small_site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    """click refused it before build did, with exit 2 where docs/site.md says 1."""
    code, stdout, stderr = _build(run_cli, small_site, tmp_path / "out", "--page", str(tmp_path))
    assert (code, stdout) == (1, "")
    assert stderr == (
        f"infrafeed: {tmp_path}: is not a regular file (a folder, device or FIFO); give --page "
        "the path of a file\n"
    )


def test_an_empty_page_option_is_refused(small_site: Path, tmp_path: Path, run_cli: RunCli) -> None:
    """A usage error, as an empty --entries or --out is: it said ".: is not a regular file"."""
    code, stdout, stderr = _build(run_cli, small_site, tmp_path / "out", "--page", "")
    assert (code, stdout) == (2, "")
    assert "Invalid value for '--page': is empty (an unset variable?)" in stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entries"]


def test_a_page_that_names_a_folder_is_refused(
    small_site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    """--page x/ wrote a file named x: the path lost its slash (Path("x/") is Path("x"))."""
    page = f"{tmp_path.as_posix()}/posts/"
    code, stdout, stderr = _build(run_cli, small_site, tmp_path / "out", "--page", page)
    assert (code, stdout) == (1, "")
    assert stderr == (
        f"infrafeed: {page}: names a folder (it ends in /); give --page the path of a file, "
        "e.g. --page docs/posts/update-log.md\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entries"]


def test_a_missing_entries_folder_leaves_nothing_behind(tmp_path: Path, run_cli: RunCli) -> None:
    code, _, stderr = _build(run_cli, tmp_path / "nope", tmp_path / "out")
    assert code == 1 and "no such folder" in stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("option", "code", "why"),
    [
        ("--entries", 1, "(folder): cannot be read (File name too long)"),
        ("--out", 5, "cannot be used (File name too long); give another path"),
        ("--page", 1, "cannot be used (File name too long); give another path"),
    ],
)
@pytest.mark.parametrize("long", ["x" * 300, "/".join(["ddd"] * 1200)], ids=["name", "path"])
def test_a_path_the_system_refuses_is_named_with_why(
    small_site: Path, tmp_path: Path, run_cli: RunCli, option: str, code: int, why: str, long: str
) -> None:
    """A name or path longer than the system allows (NAME_MAX 255 bytes, PATH_MAX 4,096) ended
    in a bare "[Errno 36]" with exit 5, or (--out) in a message blaming a damaged manifest."""
    too_long = tmp_path / long
    entries = too_long if option == "--entries" else small_site
    out = too_long if option == "--out" else tmp_path / "out"
    page = ("--page", str(too_long)) if option == "--page" else ()
    found, stdout, stderr = _build(run_cli, entries, out, *page)
    assert (found, stdout) == (code, "")
    assert f"{too_long}: {why}" in stderr and "Errno" not in stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entries"]


def test_new_with_a_path_the_system_refuses(tmp_path: Path, run_cli: RunCli) -> None:
    too_long = tmp_path / ("x" * 300)
    code, _, stderr = run_cli("new", "--entries", str(too_long))
    assert code == 1 and f"{too_long}: (folder): cannot be read (File name too long)" in stderr
    code, _, stderr = run_cli("new", "--entries", str(too_long), "--date", "2026-11-30")
    assert code == 1 and f"{too_long}: no site.toml here" in stderr


def test_a_linked_folder_inside_the_entries_is_an_error(
    small_site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    elsewhere = tmp_path / "more"
    elsewhere.mkdir()
    (elsewhere / "2026-03-09.toml").write_text(GOOD, encoding="utf-8")
    (small_site / "2027").symlink_to(elsewhere, target_is_directory=True)
    code, _, stderr = run_cli("check", "--entries", str(small_site))
    assert code == 1
    assert f"{small_site.as_posix()}/2027: (file): is a symbolic link to a folder" in stderr


def test_files_that_are_not_entries_are_named_and_misfiled_releases_refused(
    small_site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    (small_site / "2026" / "notes.txt").write_text("todo", encoding="utf-8")
    (small_site / "feeds.json").write_text("{}", encoding="utf-8")
    (small_site / "2026" / "2026-03-05.toml~").write_text("backup", encoding="utf-8")
    (small_site / "README.md").write_text("# Notes for maintainers", encoding="utf-8")
    (small_site / "2026" / ".2026-03-05.toml.swp").write_text("swap", encoding="utf-8")
    code, _, stderr = _build(run_cli, small_site, tmp_path / "out", "-q")
    assert code == 0
    assert stderr.splitlines() == [
        f"warning: {small_site.as_posix()}/2026/2026-03-05.toml~: not an entry file; ignored",
        f"warning: {small_site.as_posix()}/2026/notes.txt: not an entry file; ignored",
        f"warning: {small_site.as_posix()}/feeds.json: not an entry file; ignored",
    ]
    (small_site / "2025").mkdir()
    (small_site / "2025" / "2026-03-09.toml").write_text(GOOD, encoding="utf-8")
    code, _, stderr = run_cli("check", "--entries", str(small_site))
    assert code == 1
    assert (
        f"{small_site.as_posix()}/2025/2026-03-09.toml: (file name): is in the folder 2025 but "
        "is a release of 2026; move it to the folder 2026"
    ) in stderr
    # The files left out are named with the problems too, before them: one may be why (a
    # helper's "every problem at once", which the warnings were not).
    assert stderr.startswith(f"warning: {small_site.as_posix()}/2026/2026-03-05.toml~: not an ")
    # A build refused by the id guard names them too: here, a published release renamed.
    (small_site / "2025" / "2026-03-09.toml").unlink()
    (small_site / "2026" / "2026-03-02.toml").rename(small_site / "2026" / "2026-03-02.tom")
    code, _, stderr = _build(run_cli, small_site, tmp_path / "out", "-q")
    assert code == 3
    assert f"warning: {small_site.as_posix()}/2026/2026-03-02.tom: not an entry file" in stderr
    assert "no release file is dated 2026-03-02 any more" in stderr


def test_a_file_name_that_is_not_utf8_is_shown_with_its_bytes(
    small_site: Path, run_cli: RunCli
) -> None:
    (small_site / "2026" / os.fsdecode(b"\xfe.toml")).write_text(GOOD, encoding="utf-8")
    code, _, stderr = run_cli("check", "--entries", str(small_site))
    assert code == 1
    assert f"{small_site.as_posix()}/2026/\\xfe.toml: (file name): a release file" in stderr


# --- URLs ------------------------------------------------------------------------------


def test_an_ipv6_host_keeps_its_brackets() -> None:
    assert absolute("https://example.org/", "https://[::1]/a b") == "https://[::1]/a%20b"
    assert absolute("https://[2001:db8::1]:8080/g/", "x") == "https://[2001:db8::1]:8080/g/x"


@pytest.mark.parametrize("field", ["url", "changelog"])
@pytest.mark.parametrize("tail", ["?a=1", "#top"])
def test_a_base_url_with_a_query_or_fragment_is_refused(
    field: str, tail: str, small_site: Path, run_cli: RunCli
) -> None:
    site = small_site / "site.toml"
    text = site.read_text(encoding="utf-8")
    old = f'{field} = "https://example.org/guide'
    site.write_text(text.replace(old, old + "/x" + tail, 1), encoding="utf-8")
    code, _, stderr = run_cli("check", "--entries", str(small_site))
    assert code == 1
    assert f"site.toml: {field}: must not have a query (?) or fragment (#)" in stderr


# --- Messages --------------------------------------------------------------------------


def _release(small_site: Path, text: str) -> Path:
    path = small_site / "2026" / "2026-03-09.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_every_problem_of_a_field_at_once_and_fields_in_their_order(
    small_site: Path, run_cli: RunCli
) -> None:
    articles = "".join(
        f'\n[[groups.articles]]\nid = "a{n}"\ntitle = "{" " if n in (2, 10) else "T"}"\n'
        for n in range(1, 12)
    )
    text = GOOD.replace('title = "Bài mới"', 'title = " Bài\\nmới' + "x" * 600 + '"') + articles
    path = _release(small_site, text)
    code, _, stderr = run_cli("check", "--entries", str(small_site))
    assert code == 1
    assert stderr.splitlines()[:3] == [
        f"{path.as_posix()}: groups[1].articles[1].title: must not start or end with white "
        "space; must be a single line (no line breaks or tabs); is 608 characters long; the "
        "limit is 500",
        f"{path.as_posix()}: groups[1].articles[3].title: must not be empty",
        f"{path.as_posix()}: groups[1].articles[11].title: must not be empty",
    ]


def test_build_reports_every_problem_check_reports(small_site: Path, run_cli: RunCli) -> None:
    # An unknown module, and an id used twice in the same release: two problems.
    twice = GOOD.replace("module = 1", "module = 99") + GOOD[GOOD.index("\n[[groups.articles]]") :]
    _release(small_site, twice)
    code, _, checked = run_cli("check", "--entries", str(small_site))
    assert code == 1 and checked.endswith("infrafeed: 2 problems in the entries\n")
    code, _, built = _build(run_cli, small_site, small_site.parent / "out")
    assert code == 1
    assert built.splitlines() == [
        *checked.splitlines()[:-1],
        "infrafeed: 2 problems in the entries; nothing was written",
    ]


def test_a_duplicate_id_is_told_to_the_later_release(small_site: Path, run_cli: RunCli) -> None:
    published = small_site / "2026" / "2026-03-05.toml"
    later = published.with_name("2026-03-05-3.toml")
    later.write_text(published.read_text(encoding="utf-8"), encoding="utf-8")
    code, _, stderr = run_cli("check", "--entries", str(small_site))
    assert code == 1
    assert {line.split(":", 1)[0] for line in stderr.splitlines()[:-1]} == {later.as_posix()}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (('date = 2026-03-09', "date = 2026-03-09T10:00:00"),
         "date: must be a date without a time of day, e.g. 2026-11-07, not 2026-03-09T10:00:00"),
        (('title = "Bài mới"', 'title = "Bài </b> mới"'),
         "groups[1].articles[1].title: '</b>' looks like an HTML tag; this text becomes a title "
         "in the feeds, which is plain text: remove the tag"),
    ],
)  # fmt: skip
def test_messages_say_what_is_so(
    edit: tuple[str, str], message: str, small_site: Path, run_cli: RunCli
) -> None:
    path = _release(small_site, GOOD.replace(*edit))
    code, _, stderr = run_cli("check", "--entries", str(small_site))
    assert code == 1
    assert f"{path.as_posix()}: {message}" in stderr.splitlines()


def test_new_never_names_a_release_past_the_last_of_a_day(
    small_site: Path, run_cli: RunCli
) -> None:
    folder = small_site / "2026"
    for name in ["2026-11-30", *(f"2026-11-30-{n}" for n in range(2, 12))]:
        (folder / f"{name}.toml").touch()
    code, out, err = run_cli("new", "--entries", str(small_site), "--date", "2026-11-30")
    assert (code, out) == (1, "")
    assert err.endswith(f"as {(folder / '2026-11-30-12.toml').as_posix()}\n")
    (folder / "2026-11-30-12.toml").touch()
    code, out, err = run_cli("new", "--entries", str(small_site), "--date", "2026-11-30")
    assert (code, out) == (1, "")
    assert err == (
        f"infrafeed: {(folder / '2026-11-30-12.toml').as_posix()} already exists, the last "
        "release a day can have; edit it, or give --date a later day\n"
    )


@pytest.mark.parametrize(
    ("title", "tag"),
    [("<b>x</b>", "<b>"), ("x </float>", "</float>"), ("a <img src=x onerror=alert(1)>", None),
     ("<!-- x -->", "<!--"), ("<BR/>", None), ("<script", None),
     # What an HTML parser reads as a tag, and feedparser passes on (a helper):
     ("R&amp;D <img/src=x onerror=alert(1)>", None), ("<svg/onload=alert(1)>", None),
     ("<img src=x alt='<' onerror=alert(1)>", None), ("<image src=x onerror=alert(1)>", None),
     ("<x onfocus=alert(1) autofocus>", None), ("<xmp>", None), ("</title/>", None),
     ("</title x>", None)],
)  # fmt: skip
def test_a_tag_in_the_site_title_is_refused_as_the_site_title(
    small_site: Path, run_cli: RunCli, title: str, tag: str | None
) -> None:
    """The message names site.toml's title, and does not call it a feed item's title. Start
    tags passed, though docs/maintainers.md says a title holds none: an <img onerror> reached
    every reader that shows titles as HTML."""
    site = small_site / "site.toml"
    text = site.read_text(encoding="utf-8")
    assert '\ntitle = "Fixture Guide"\n' in text
    site.write_text(text.replace('title = "Fixture Guide"', f'title = "{title}"', 1), "utf-8")
    code, stdout, stderr = run_cli("check", "--entries", str(small_site))
    assert (code, stdout) == (1, "")
    tag = tag or title[title.index("<") :]
    assert stderr.splitlines() == [
        f"{site.as_posix()}: title: '{tag}' looks like an HTML tag; this text becomes a title "
        "in the feeds, which is plain text: remove the tag",
        "infrafeed: 1 problem in the entries",
    ]
    assert "item" not in stderr


def test_a_type_in_a_title_is_text(small_site: Path, run_cli: RunCli) -> None:
    """No HTML element is named: a CUDA guide's titles may show C++ types."""
    site = small_site / "site.toml"
    title = "std::vector<float>, kernel<<<g, b>>> và a < b > c, template<int BLOCK=256>"
    text = site.read_text(encoding="utf-8").replace('"Fixture Guide"', f'"{title}"', 1)
    site.write_text(text, "utf-8")
    assert run_cli("check", "--entries", str(small_site))[0] == 0


def test_one_of_a_thing_is_said_in_the_singular(tmp_path: Path, run_cli: RunCli) -> None:
    entries = tmp_path / "entries"
    shutil.copytree(Path(__file__).parent / "data" / "small-site" / "entries", entries)
    for path in (entries / "2026").glob("*.toml"):
        path.unlink()
    _release(entries, GOOD + '\n[[groups.notes]]\nid = "n"\ntext = "Một ghi chú"\n')
    code, stdout, _ = run_cli("check", "--entries", str(entries))
    assert code == 0
    assert stdout.startswith("ok: 1 release, 1 article change, 1 note; ")


# --- Options ---------------------------------------------------------------------------


@pytest.mark.parametrize("wait", ["nan", "inf", "-1", "-inf"])
def test_lock_wait_is_a_finite_number_of_seconds(wait: str, run_cli: RunCli) -> None:
    code, _, stderr = run_cli("build", "--lock-wait", wait)
    assert code == 2 and "is not a number of seconds from 0 up" in stderr


# --- The guard's memory in git ----------------------------------------------------------


def test_a_fresh_clone_guards_what_was_published_and_locked_builds_never_change_it(
    shipped_entries: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    """The deploy of a site built in CI: no output folder, no cache, only what git has."""
    repo = tmp_path / "repo"
    shutil.move(shipped_entries, repo / "entries") if repo.mkdir() is None else None
    git = ["git", "-C", str(repo), "-c", "user.email=t@example.org", "-c", "user.name=t"]
    assert _build(run_cli, repo / "entries", tmp_path / "out1")[0] == 0
    record = repo / "entries" / "published-ids.txt"
    assert record.read_text(encoding="ascii").startswith("infrafeed ids 2\n")
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "entries"], check=True)

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    entries = clone / "entries"
    assert _build(run_cli, entries, tmp_path / "fresh", "--locked")[0] == 0
    (entries / "2026" / "2026-11-07.toml").unlink()
    code, _, stderr = _build(run_cli, entries, tmp_path / "fresh2")
    assert code == 3 and "would disappear" in stderr
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", "."], check=True)

    (entries / "2026" / "2026-11-30.toml").write_text(
        GOOD.replace("2026-03-09", "2026-11-30").replace("module = 1", "module = 4"), "utf-8"
    )
    code, stdout, stderr = _build(run_cli, entries, tmp_path / "ci", "--locked")
    assert (code, stdout) == (6, "")
    assert stderr == (
        f"infrafeed: {entries.as_posix()}/published-ids.txt does not match the entries "
        f"(--locked); run `infrafeed build` where the entries are edited and commit "
        f"{entries.as_posix()}/published-ids.txt\n"
    )
    assert not (tmp_path / "ci").exists() or not any((tmp_path / "ci").iterdir())
    assert _build(run_cli, entries, tmp_path / "local")[0] == 0
    subprocess.run([*git[:2], str(clone), *git[3:], "commit", "-qam", "release"], check=True)
    assert _build(run_cli, entries, tmp_path / "ci", "--locked")[0] == 0


def test_a_release_dated_before_1990_is_refused(
    small_site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    """Before 1901 a zone's offset has seconds (Asia/Shanghai: +08:05:43), which neither
    RFC 822 nor RFC 3339 can write, and readers take a date before 1990 for a mistake: such a
    date is refused, before anything is written."""
    (small_site / "1899").mkdir()
    (small_site / "1899" / "1899-12-31.toml").write_text(GOOD.replace("2026-03-09", "1899-12-31"))
    code, stdout, stderr = _build(run_cli, small_site, tmp_path / "out")
    assert (code, stdout) == (1, "")
    assert "1899-12-31.toml: date: is 1899-12-31, before 1990-01-01, which feed" in stderr
    assert not (tmp_path / "out").exists() and not (small_site / "published-ids.txt").exists()


def test_a_record_with_windows_line_ends_is_told_so(
    small_site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    """Git with core.autocrlf checks published-ids.txt out with CR LF line ends."""
    assert _build(run_cli, small_site, tmp_path / "out")[0] == 0
    record = small_site / "published-ids.txt"
    record.write_bytes(record.read_bytes().replace(b"\n", b"\r\n"))
    code, stdout, stderr = _build(run_cli, small_site, tmp_path / "out")
    assert (code, stdout) == (5, "")
    assert stderr == (
        f"infrafeed: {record}: cannot read infrafeed's record (its lines end in CR LF, as on "
        "Windows (git's core.autocrlf): infrafeed writes and reads LF line ends only); it "
        "lists the items each feed published. Restore it (from git or a backup), or delete "
        "it to start over: the id guard then forgets what it recorded\n"
    )


@pytest.mark.parametrize("kind", ["link-out", "fifo", "bad-date", "garbage", "cut", "empty"])
def test_a_record_that_cannot_be_read_is_never_taken_for_none(
    small_site: Path, tmp_path: Path, run_cli: RunCli, kind: str
) -> None:
    """The id guard's memory that is unreadable or damaged stops check and build (exit 5),
    and is left as it is: taken for no record, it would let a build drop published items."""
    out = tmp_path / "out"
    assert _build(run_cli, small_site, out)[0] == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    (small_site / "2026" / "2026-03-05.toml").unlink()  # would drop published items
    record = small_site / "published-ids.txt"
    lines = record.read_text(encoding="ascii").splitlines(keepends=True)
    if kind == "link-out":
        (tmp_path / "ids.txt").write_text("".join(lines), encoding="ascii")
        record.unlink()
        record.symlink_to(tmp_path / "ids.txt")
        why = "is a symbolic link to a file outside the entries folder; put the file itself here"
    elif kind == "fifo":
        record.unlink()
        os.mkfifo(record)
        why = "is not a regular file (a folder, device or FIFO)"
    else:
        head, date = lines[1].rsplit(" ", 1)  # the date a line ends with: month 13
        key = head.split(" ")[0]
        lines[1] = {
            "bad-date": f"{head} {date[:5]}13{date[7:]}",
            "garbage": "junk\n",
            "cut": f"{key}\n",  # an id line cut short after its feed's key
            "empty": f"{key} -\n",  # "no items yet", among the feed's id lines (a review)
        }[kind]
        record.write_text("".join(lines), encoding="ascii")
        why = f"line {2 if kind != 'empty' else 3} is not an id record"
    kept = record.lstat()
    for command in ("check", "build"):
        code, stdout, stderr = (
            _build(run_cli, small_site, out)
            if command == "build"
            else run_cli("check", "--entries", str(small_site))
        )
        assert (code, stdout) == (5, ""), command
        assert stderr.startswith(f"infrafeed: {record}: cannot read infrafeed's record ({why})")
    assert record.lstat() == kept
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_build_that_fails_to_publish_records_no_id(
    small_site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    """The record is moved into place after the output: a build stopped by a file in its way
    leaves it as it was, so no later build calls a never-published item dropped."""
    out = tmp_path / "out"
    assert _build(run_cli, small_site, out)[0] == 0
    settings = small_site / "site.toml"
    module = '\n[[modules]]\nnumber = 5\nname = "Mới"\nslug = "new"\nsection = "new"\n'
    settings.write_text(settings.read_text(encoding="utf-8") + module, encoding="utf-8")
    release = small_site / "2026" / "2026-03-09.toml"
    release.write_text(GOOD.replace("module = 1", "module = 5"), encoding="utf-8")
    (out / "modules" / "new").mkdir(parents=True)
    (out / "modules" / "new" / "feed.xml").write_text("mine\n", encoding="utf-8")
    record = small_site / "published-ids.txt"
    before = record.read_bytes()
    code, _, stderr = _build(run_cli, small_site, out)
    assert code == 5 and "is not infrafeed's" in stderr
    assert record.read_bytes() == before
    assert not [p for p in small_site.iterdir() if p.name.startswith(".")]  # nothing staged left
    release.unlink()  # not published: its items are no one's to miss
    (out / "modules" / "new" / "feed.xml").unlink()
    assert _build(run_cli, small_site, out)[0] == 0
    assert record.read_bytes() == before + b"module-new -\n"  # a feed with nothing published yet


# --- The changelog page outside the output folder (--page) -------------------------------


def test_page_puts_the_changelog_page_where_the_site_reads_it(
    small_site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    inside = tmp_path / "inside"
    assert _build(run_cli, small_site, inside)[0] == 0
    page = tmp_path / "site" / "docs" / "posts" / "update-log.md"
    page.parent.mkdir(parents=True)
    out = tmp_path / "site" / "public" / "feeds"
    code, stdout, _ = _build(run_cli, small_site, out, "--page", str(page))
    assert code == 0 and stdout.startswith(f"wrote 19 files: {page}, atom.xml, ")
    # The same page, there instead of in the output folder.
    assert page.read_bytes() == (inside / "update-log.md").read_bytes()
    assert not (out / "update-log.md").exists()
    assert _build(run_cli, small_site, out, "--page", str(page))[1].startswith("unchanged: ")

    # A page edited or deleted since is written again; the feeds are left as they are.
    feed = (out / "feed.xml").stat()
    page.write_text("edited\n", encoding="utf-8")
    code, stdout, _ = _build(run_cli, small_site, out, "--page", str(page))
    assert (code, stdout.splitlines()[0]) == (0, f"wrote 1 file: {page}")
    assert page.read_bytes() == (inside / "update-log.md").read_bytes()
    page.unlink()
    assert _build(run_cli, small_site, out, "--page", str(page))[1].startswith("wrote 1 file")
    assert page.is_file() and (out / "feed.xml").stat().st_ino == feed.st_ino

    # Another place for the page is another build: the page goes there, and back in the
    # output folder without --page.
    moved = tmp_path / "site" / "moved.md"
    assert _build(run_cli, small_site, out, "--page", str(moved))[0] == 0
    assert moved.read_bytes() == page.read_bytes()
    assert _build(run_cli, small_site, out)[0] == 0
    assert (out / "update-log.md").read_bytes() == page.read_bytes()


def test_a_page_that_cannot_be_written_leaves_the_output_as_it_was(
    small_site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    out = tmp_path / "out"
    assert _build(run_cli, small_site, out)[0] == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    (small_site / "2026" / "2026-03-09.toml").write_text(GOOD, encoding="utf-8")
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder\n", encoding="utf-8")
    code, stdout, stderr = _build(run_cli, small_site, out, "--page", str(blocked / "page.md"))
    assert (code, stdout) == (5, "")
    assert stderr.startswith(f"infrafeed: {blocked / 'page.md'}: could not be written")
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_page_when_the_settings_write_no_page(
    small_site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    settings = small_site / "site.toml"
    settings.write_text(settings.read_text("utf-8") + "\n[page]\nenabled = false\n", "utf-8")
    page = tmp_path / "page.md"
    warning = (
        f"warning: --page {page}: the settings write no changelog page ([page] enabled = false)"
    )
    for _ in range(2):  # the second build has nothing to do, and says so
        code, stdout, stderr = _build(run_cli, small_site, tmp_path / "out", "--page", str(page))
        assert (code, stderr) == (0, warning + "\n") and not page.exists()
    assert stdout == "unchanged: 18 files\n"


def test_a_page_beside_the_working_folder_is_reported_by_its_path(
    small_site: Path, tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    page = Path("../page.md")
    stdout = _build(run_cli, small_site, tmp_path / "out", "--page", str(page))[1]
    assert stdout.startswith("wrote 19 files: ../page.md, atom.xml, ")
    page.write_text("edited\n", encoding="utf-8")
    stdout = _build(run_cli, small_site, tmp_path / "out", "--page", str(page))[1]
    assert stdout.splitlines() == ["wrote 1 file: ../page.md", "unchanged: 18 files"]


def test_a_page_named_like_a_feed_does_not_hide_the_feed_from_the_report(
    small_site: Path, tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--page feed.xml, unchanged, made the output's feed.xml count as unchanged too: an edited
    feed.xml was written again but not reported (nor owed a WebSub ping)."""
    monkeypatch.chdir(tmp_path)
    assert _build(run_cli, small_site, tmp_path / "out", "--page", "feed.xml")[0] == 0
    with (tmp_path / "out" / "feed.xml").open("a", encoding="utf-8") as feed:
        feed.write("<!-- edited -->\n")
    stdout = _build(run_cli, small_site, tmp_path / "out", "--page", "feed.xml")[1]
    assert stdout.splitlines() == ["wrote 1 file: feed.xml", "unchanged: 18 files"]
    assert b"edited" not in (tmp_path / "out" / "feed.xml").read_bytes()
