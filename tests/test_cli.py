"""The command line as a maintainer and an operator use it: exit codes and exact output."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SHIPPED_ENTRIES, RunCli


def test_check_on_shipped_entries(run_cli: RunCli) -> None:
    code, out, err = run_cli("check", "--entries", str(SHIPPED_ENTRIES))
    assert (code, err) == (0, "")
    assert out == (
        "ok: 36 releases, 98 article changes, 23 notes; by kind: new 72, revised 35, "
        "restructured 2, major 5, improved 1, launch 4, init 2; articles by module: "
        "1 prerequisites 14, 2 cuda 15, 3 distributed 6, 4 inference 63\n"
    )


def test_check_with_three_mistakes(small_site: Path, run_cli: RunCli) -> None:
    bad = small_site / "2026" / "2026-03-05.toml"
    text = bad.read_text(encoding="utf-8")
    text = text.replace('kind = "new"', 'kind = "nouveau"', 1)
    text = text.replace('number = "4.1"', "number = 4.1")
    text = text.replace('summary = "Tiling', 'sumary = "Tiling')
    bad.write_text(text, encoding="utf-8")
    code, out, err = run_cli("check", "--entries", str(small_site))
    assert (code, out) == (1, "")
    name = f"{small_site.as_posix()}/2026/2026-03-05.toml"
    assert err.splitlines() == [
        f"{name}: groups[1].articles[2].number: must be text in quotes, not decimal number 4.1",
        f"{name}: groups[1].articles[2].sumary: unknown field; did you mean 'summary'?",
        f"{name}: groups[1].kind: 'nouveau' is not allowed; use one of 'new', 'revised', "
        "'restructured', 'major', 'improved', 'launch' or 'init'",
        "infrafeed: 3 problems in the entries",  # check writes nothing, ever
    ]
    assert "Traceback" not in err


def test_build_with_bad_entries_writes_nothing(
    small_site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    (small_site / "2026" / "2026-03-05.toml").write_text("date = [", encoding="utf-8")
    out = tmp_path / "out"
    code, stdout, err = run_cli("build", "--entries", str(small_site), "--out", str(out))
    assert (code, stdout) == (1, "")
    assert err.endswith("infrafeed: 1 problem in the entries; nothing was written\n")
    assert not [p for p in out.rglob("*") if not p.name.startswith(".")]


def test_new_writes_a_template_and_refuses_to_overwrite(small_site: Path, run_cli: RunCli) -> None:
    code, out, err = run_cli("new", "--entries", str(small_site), "--date", "2026-11-30")
    path = small_site / "2026" / "2026-11-30.toml"
    assert (code, out, err) == (0, f"wrote {path.as_posix()}\n", "")
    text = path.read_text(encoding="utf-8")
    assert "date = 2026-11-30\n" in text
    # The template is a starting point: until a group is filled in, check says what is missing.
    code, out, err = run_cli("check", "--entries", str(small_site))
    assert code == 1
    assert f"{path.as_posix()}: groups: is required but missing; add its table, [[groups]]\n" in err
    before = path.read_bytes()
    code, out, err = run_cli("new", "--entries", str(small_site), "--date", "2026-11-30")
    assert (code, out) == (1, "")
    assert err == (
        f"infrafeed: {path.as_posix()} already exists; edit it, or write a later release of "
        f"that day as {path.with_name('2026-11-30-2.toml').as_posix()}\n"
    )
    path.with_name("2026-11-30-2.toml").touch()
    code, out, err = run_cli("new", "--entries", str(small_site), "--date", "2026-11-30")
    assert err.endswith(f"as {path.with_name('2026-11-30-3.toml').as_posix()}\n")
    assert path.read_bytes() == before


def test_new_never_writes_a_release_dated_before_one_of_the_same_day(
    small_site: Path, run_cli: RunCli
) -> None:
    """With only 2026-11-30-2.toml (13:00), new wrote 2026-11-30.toml: dated 12:00, before it."""
    folder = small_site / "2026"
    (folder / "2026-11-30-2.toml").touch()
    code, out, err = run_cli("new", "--entries", str(small_site), "--date", "2026-11-30")
    assert (code, out) == (1, "")
    assert err == (
        f"infrafeed: {(folder / '2026-11-30-2.toml').as_posix()} already exists; edit it, or "
        f"write a later release of that day as {(folder / '2026-11-30-3.toml').as_posix()}\n"
    )
    (folder / "2026-11-30-5.toml").touch()  # a gap: the next is after the last, not in the gap
    code, out, err = run_cli("new", "--entries", str(small_site), "--date", "2026-11-30")
    assert err == (  # and "edit it" is the last: what is added to another is dated before it
        f"infrafeed: {(folder / '2026-11-30-5.toml').as_posix()} already exists; edit it, or "
        f"write a later release of that day as {(folder / '2026-11-30-6.toml').as_posix()}\n"
    )
    (folder / "2026-11-30-12.toml").touch()
    code, out, err = run_cli("new", "--entries", str(small_site), "--date", "2026-11-30")
    assert err == (
        f"infrafeed: {(folder / '2026-11-30-12.toml').as_posix()} already exists, the last "
        "release a day can have; edit it, or give --date a later day\n"
    )
    assert not (folder / "2026-11-30.toml").exists()


def test_new_finds_the_days_release_in_any_folder(small_site: Path, run_cli: RunCli) -> None:
    """With the day's release in entries/drafts/, new wrote a second file of the same name,
    which check then refused as the same release."""
    drafts = small_site / "drafts"
    drafts.mkdir()
    (drafts / "2026-11-30.toml").touch()
    (drafts / "2026-11-30-2.toml").touch()
    code, out, err = run_cli("new", "--entries", str(small_site), "--date", "2026-11-30")
    assert (code, out) == (1, "")
    assert err == (
        f"infrafeed: {(drafts / '2026-11-30-2.toml').as_posix()} already exists; edit it, or "
        f"write a later release of that day as {small_site.as_posix()}/2026/2026-11-30-3.toml\n"
    )
    assert not (small_site / "2026" / "2026-11-30.toml").exists()
    # A hidden folder holds nothing check reads: what is there is no release.
    drafts.rename(small_site / ".trash")
    code, out, err = run_cli("new", "--entries", str(small_site), "--date", "2026-11-30")
    assert (code, out, err) == (0, f"wrote {small_site.as_posix()}/2026/2026-11-30.toml\n", "")


def test_new_names_a_folder_in_the_way(small_site: Path, run_cli: RunCli) -> None:
    """It said "already exists; edit it" of a folder named like the release."""
    folder = small_site / "2026" / "2026-11-30.toml"
    folder.mkdir()
    code, out, err = run_cli("new", "--entries", str(small_site), "--date", "2026-11-30")
    assert (code, out) == (1, "")
    why = "is a folder, not a release file; move it away, then run new again"
    assert err == f"infrafeed: {folder.as_posix()}: {why}\n"


def test_new_template_filled_in_is_valid(run_cli: RunCli, shipped_entries: Path) -> None:
    run_cli("new", "--entries", str(shipped_entries), "--date", "2026-11-30")
    path = shipped_entries / "2026" / "2026-11-30.toml"
    lines = path.read_text(encoding="utf-8").splitlines()
    # Uncomment the example: it must be a valid release as written.
    uncommented = [
        line[2:] if (line.startswith("# ") and "=" in line) or line.startswith("# [[") else line
        for line in lines
    ]
    uncommented = [
        line.replace('"https://caomaolufei.github.io/AIInfraGuide/inference/..."', '"/x"').split(
            "   #"
        )[0]
        for line in uncommented
    ]
    path.write_text("\n".join(uncommented) + "\n", encoding="utf-8")
    code, out, err = run_cli("check", "--entries", str(shipped_entries))
    assert (code, err) == (0, ""), err
    assert out.startswith("ok: 37 releases, 99 article changes, 24 notes")


def test_new_rejects_a_bad_date(small_site: Path, run_cli: RunCli) -> None:
    code, _, err = run_cli("new", "--entries", str(small_site), "--date", "30/11/2026")
    assert code == 2
    assert "'30/11/2026' is not a date: write it as YYYY-MM-DD, e.g. 2026-11-30" in err
    code, _, err = run_cli("new", "--entries", str(small_site), "--date", "2026-11-31")
    assert code == 2 and "'2026-11-31' is not a date: day is out of range for month" in err
    before = sorted(small_site.rglob("*"))
    # ISO 8601 as fromisoformat reads it, not TOML; digits of another script
    for other in ("20261130", "2026-W48-1", "２０２６-１１-３０"):
        code, _, err = run_cli("new", "--entries", str(small_site), "--date", other)
        assert code == 2 and f"{other!r} is not a date: write it as YYYY-MM-DD, e.g. " in err
    assert sorted(small_site.rglob("*")) == before


def test_new_needs_a_folder_with_site_toml(tmp_path: Path, run_cli: RunCli) -> None:
    code, out, err = run_cli("new", "--entries", str(tmp_path / "entries"))
    assert (code, out) == (1, "")
    assert err.startswith(f"{(tmp_path / 'entries').as_posix()}: (folder): no such folder\n")
    code, out, err = run_cli("new", "--entries", str(tmp_path / "entries"), "--date", "2026-11-30")
    assert (code, out) == (1, "")
    assert "no site.toml here" in err  # without site.toml's time zone, too
    assert not (tmp_path / "entries").exists()


def test_new_without_a_date_needs_the_time_zone_of_a_valid_site_toml(
    small_site: Path, run_cli: RunCli
) -> None:
    """With a mistake anywhere in site.toml, "today" was UTC's, a day behind in Shanghai's
    morning: the template got yesterday's date, or "-2" after yesterday's release (a helper)."""
    settings = small_site / "site.toml"
    settings.write_text(settings.read_text("utf-8") + "\n[feed]\n", "utf-8")
    before = sorted(small_site.rglob("*"))
    code, out, err = run_cli("new", "--entries", str(small_site))
    assert (code, out) == (1, "")
    assert f"{settings.as_posix()}: feed: unknown field; did you mean 'feeds'?" in err
    assert sorted(small_site.rglob("*")) == before
    code, out, _ = run_cli("new", "--entries", str(small_site), "--date", "2026-11-30")
    assert (code, out) == (0, f"wrote {small_site.as_posix()}/2026/2026-11-30.toml\n")


@pytest.mark.parametrize("make", ["file", "broken link"])
def test_new_names_a_year_that_is_not_a_folder(
    small_site: Path, run_cli: RunCli, make: str
) -> None:
    """It said the release file already exists: there was none to edit."""
    shutil.rmtree(small_site / "2026")
    year = small_site / "2026"
    year.write_text("") if make == "file" else year.symlink_to("nowhere")
    code, out, err = run_cli("new", "--entries", str(small_site), "--date", "2026-11-30")
    assert (code, out) == (1, "")
    assert err == (
        f"infrafeed: {year.as_posix()}: is not a folder (a file, or a link to none); move it "
        "away: the releases of 2026 go in a folder of that name\n"
    )


@pytest.mark.parametrize(
    "args",
    [("check", "--entries", ""), ("build", "--out", ""), ("new", "--entries", ""),
     ("build", "--page", ""), ("import", "")],
)  # fmt: skip
def test_an_empty_folder_option_is_a_usage_error(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]
) -> None:
    """An unset variable in a crontab ('--entries $ENTRIES') named the current folder."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(*args)
    assert (code, out) == (2, "")
    assert "is empty (an unset variable?)" in err
    assert list(tmp_path.iterdir()) == []


def test_new_refuses_a_date_check_would_refuse(small_site: Path, run_cli: RunCli) -> None:
    """It wrote entries/1989/1989-12-31.toml, which check then called invalid."""
    for day in ("0001-01-01", "1989-12-31"):
        code, out, err = run_cli("new", "--entries", str(small_site), "--date", day)
        assert (code, out) == (2, "")
        assert f"{day} is before 1990-01-01: a release is dated 1990-01-01 or later" in err
    assert not (small_site / "1989").exists()


def test_new_names_a_link_to_nothing_in_its_place(
    small_site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    """It said the file already exists and to edit it: an editor would write outside entries/."""
    target = small_site / "2026" / "2026-11-30.toml"
    for link in (target, target.with_name("2026-11-30-2.toml")):  # the day's last, when named
        link.symlink_to(tmp_path / "nowhere.toml")
        code, out, err = run_cli("new", "--entries", str(small_site), "--date", "2026-11-30")
        assert (code, out) == (1, "")
        assert err == (
            f"infrafeed: {link.as_posix()}: is a symbolic link to a file that does not exist; "
            "remove it, then run new again\n"
        )
        assert not (tmp_path / "nowhere.toml").exists()
        target.unlink()
        target.touch()


@pytest.mark.parametrize("where", ["outside", "inside"])
def test_new_refuses_a_year_folder_that_is_a_link(
    small_site: Path, tmp_path: Path, run_cli: RunCli, where: str
) -> None:
    """It wrote through the link: a release file that check and build then refuse."""
    year = small_site / "2026"
    target = tmp_path / "elsewhere" if where == "outside" else small_site / "linked"
    year.rename(target)
    year.symlink_to(target, target_is_directory=True)
    before = sorted(p.name for p in target.iterdir())
    code, out, err = run_cli("new", "--entries", str(small_site), "--date", "2026-11-30")
    assert (code, out) == (1, "")
    assert err == (
        f"infrafeed: {year.as_posix()}: is a symbolic link to a folder, which infrafeed does not "
        "follow; put the folder itself here\n"
    )
    assert sorted(p.name for p in target.iterdir()) == before
    code, _, err = run_cli("check", "--entries", str(small_site))
    assert code == 1 and f"{year.as_posix()}: (file): is a symbolic link to a folder" in err


def test_check_interrupted_claims_nothing_of_an_output(
    run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It said build's words, "the output is as it was before, or wholly new": check writes
    nothing."""
    from infrafeed.cli import Interrupted
    from infrafeed.source import loader

    def interrupted(*_: object) -> str:
        raise Interrupted("SIGINT")  # as cli.run's handler raises it

    monkeypatch.setattr(loader, "describe", interrupted)
    assert run_cli("check", "--entries", str(SHIPPED_ENTRIES)) == (
        130,
        "",
        "infrafeed: interrupted\n",
    )


def test_usage_error_exit_code(run_cli: RunCli) -> None:
    code, _, err = run_cli("build", "--no-such-option")
    assert code == 2
    assert "No such option" in err


def test_help_lists_commands_and_exit_codes() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "infrafeed", "--help"], capture_output=True, text=True, check=True
    )
    for word in ("build", "check", "new", "Exit codes:", "70   internal error", "130  interrupted"):
        assert word in result.stdout


def test_every_command_is_documented_in_readme() -> None:
    from infrafeed.cli import cli

    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    for name in cli.commands:
        assert f"infrafeed {name}" in readme, name


def test_the_command_prints_its_report_and_exits_normally_so_profilers_report(
    small_site: Path, tmp_path: Path
) -> None:
    """cli.run flushes the report, then exits with sys.exit: a profiler around it writes its file.

    (A process that ended with os._exit would skip the profiler's dump and atexit.)
    """
    out = tmp_path / "out"
    argv = ["build", "--entries", str(small_site), "--out", str(out), "--no-cache"]
    plain = subprocess.run(
        [sys.executable, "-m", "infrafeed", *argv], capture_output=True, text=True, check=False
    )
    assert plain.returncode == 0 and plain.stderr == ""
    assert plain.stdout.strip()  # the report, flushed before the process ended
    profile = tmp_path / "build.prof"
    profiled = subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "infrafeed", *argv],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert profiled.returncode == 0, profiled.stderr
    assert profile.stat().st_size > 0


def test_a_release_dated_after_today_is_a_warning_and_changes_no_byte(
    small_site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    """A wrong year (2099 for 2026) would sit at the top of readers for years, and fixing it later
    makes new ids. check and build say so; the output stays the clock's to ignore."""
    import datetime as dt

    import infrafeed
    from infrafeed.clock import Clock

    ahead = small_site / "2099" / "2099-03-02.toml"
    ahead.parent.mkdir()
    release = (small_site / "2026" / "2026-03-02.toml").read_text(encoding="utf-8")
    release = release.replace('kind = "new"', 'kind = "revised"')  # an article is new once
    ahead.write_text(release.replace("date = 2026-03-02", "date = 2099-03-02"), encoding="utf-8")
    name = f"{small_site.as_posix()}/2099/2099-03-02.toml"
    code, _, err = run_cli("check", "--entries", str(small_site))
    assert code == 0 and err.startswith(f"warning: {name}: date: 2099-03-02 is after today (")
    assert "in Asia/Shanghai): readers show it ahead of its time; if the date is wrong" in err

    def at(when: str) -> Clock:
        return Clock(now=lambda: dt.datetime.fromisoformat(when))

    before = infrafeed.build(small_site, tmp_path / "before", clock=at("2099-03-01T15:59:59Z"))
    after = infrafeed.build(small_site, tmp_path / "after", clock=at("2099-03-01T16:00:00Z"))
    assert [w for w in before.warnings if "2099-03-02 is after today (2099-03-01 in" in w]
    assert not [w for w in after.warnings if "after today" in w]  # midnight in Shanghai
    files = sorted(p.relative_to(tmp_path / "before") for p in (tmp_path / "before").rglob("*"))
    assert files and all(
        (tmp_path / "before" / f).read_bytes() == (tmp_path / "after" / f).read_bytes()
        for f in files
        if (tmp_path / "before" / f).is_file() and ".infrafeed" not in f.name
    )


def test_a_release_dated_before_a_published_one_is_a_warning_once(
    small_site: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    """A wrong month (02 for 03), or a day's first file added after its second, went out
    without a word, its items below those readers had read."""
    out = tmp_path / "out"
    assert run_cli("build", "-q", "--entries", str(small_site), "--out", str(out))[0] == 0
    behind = small_site / "2026" / "2026-02-06.toml"
    behind.write_text(
        'date = 2026-02-06\n\n[[groups]]\nkind = "improved"\n\n[[groups.notes]]\n'
        'id = "late"\ntext = "Một ghi chú"\n',
        encoding="utf-8",
    )
    ahead = small_site / "2026" / "2026-03-07.toml"
    ahead.write_text(behind.read_text(encoding="utf-8").replace("02-06", "03-07"), "utf-8")
    code, _, err = run_cli("build", "-q", "--entries", str(small_site), "--out", str(out))
    assert (code, err) == (
        0,
        f"warning: {behind.as_posix()}: date: 2026-02-06 puts this new release before an item "
        "already published (2026-03-05 13:00): readers list its items below what they have "
        "read; if the date is wrong, fix it and build with --allow-changes before subscribers "
        "fetch it (later, its items would come to them again as new)\n",
    )
    # Published now: the next build has nothing to say, as of a release restored on purpose.
    ahead.write_text(ahead.read_text(encoding="utf-8").replace("Một", "Hai"), "utf-8")
    assert run_cli("build", "-q", "--entries", str(small_site), "--out", str(out)) == (0, "", "")
    # Fixed, with --allow-changes: dated after all the feed still holds, it is not behind.
    behind.rename(behind.with_name("2026-03-08.toml"))
    text = behind.with_name("2026-03-08.toml").read_text(encoding="utf-8")
    behind.with_name("2026-03-08.toml").write_text(text.replace("02-06", "03-08"), "utf-8")
    code, _, err = run_cli("build", "-q", "--entries", str(small_site), "--out", str(out))
    assert code == 3 and "2026-02-06/late/improved" in err and "would disappear" in err
    assert run_cli(
        "build", "-q", "--allow-changes", "--entries", str(small_site), "--out", str(out)
    ) == (0, "", "")


@pytest.mark.parametrize("change", ["ids", "module feed"])
def test_a_release_behind_nothing_its_feeds_still_hold_is_no_warning(
    small_site: Path, tmp_path: Path, run_cli: RunCli, change: str
) -> None:
    """A reviewer's false warnings: with [ids] changed (and confirmed), every release was behind
    the ids it replaced; a module's release was behind the newest item of another module."""
    out = tmp_path / "out"
    toml = small_site / "site.toml"
    if change == "module feed":
        toml.write_text(toml.read_text("utf-8").replace("[feeds]\n", "[feeds]\nall = false\n"))
    assert run_cli("build", "-q", "--entries", str(small_site), "--out", str(out))[0] == 0
    if change == "ids":
        toml.write_text(toml.read_text("utf-8").replace("date = 2026-01-01", "date = 2026-01-02"))
    else:  # after module 1's newest (03-02), before module 2's (03-05): behind no item of its own
        (small_site / "2026" / "2026-03-04.toml").write_text(
            'date = 2026-03-04\n\n[[groups]]\nkind = "improved"\nmodule = 1\n\n'
            '[[groups.notes]]\nid = "n"\ntext = "Một ghi chú"\n',
            encoding="utf-8",
        )
    code, _, err = run_cli(
        "build", "-q", "--allow-changes", "--entries", str(small_site), "--out", str(out)
    )
    assert code == 0 and "puts this new release" not in err, err


def _docs_block(doc: str, language: str, after: str) -> str:
    text = (Path(__file__).parent.parent / "docs" / doc).read_text(encoding="utf-8")
    start = text.index(f"```{language}\n", text.index(after)) + len(language) + 4
    return text[start : text.index("```", start)]


def test_the_docs_release_example_and_library_example_work_as_written(
    shipped_entries: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from infrafeed.source.loader import load

    release = shipped_entries / "2026" / "2026-11-30.toml"
    release.write_text(
        _docs_block("maintainers.md", "toml", "(changes that are not about one article)"),
        encoding="utf-8",
    )
    changelog = load(shipped_entries)
    assert changelog.releases[0].path.endswith("2026/2026-11-30.toml")
    shipped_entries.rename(tmp_path / "entries")
    monkeypatch.chdir(tmp_path)
    exec(_docs_block("architecture.md", "python", "which you can call yourself"), {})  # noqa: S102
    assert (tmp_path / "imported" / "2026" / "2026-11-30.toml").is_file()
    # The site-wide note is in the feed of everything only.
    everything = json.loads((tmp_path / "output" / "feed.json").read_bytes())
    inference = json.loads((tmp_path / "output/modules/inference/feed.json").read_bytes())
    assert any(i["id"].endswith("/site-readme-update/improved") for i in everything["items"])
    assert not [i for i in inference["items"] if "site-readme-update" in i["id"]]
