"""Identical entries give byte-identical output folders, whatever the machine's settings.

Each build runs ``python -m infrafeed build`` in a child process, so the time
zone, locale and hash seed are those a cron job would have. The whole
output folder is compared, manifest included (it holds no time stamps); only
the lock file, always empty, is left out.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import os
import random
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from conftest import SHIPPED_ENTRIES
from outputs import (
    assert_feeds_valid,
    differing,
    parse,
    run_infrafeed,
    subprocess_env,
    tree,
)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The shipped entries built once, under UTC, the C.UTF-8 locale and hash seed 0."""
    root = tmp_path_factory.mktemp("baseline")
    shutil.copytree(SHIPPED_ENTRIES, root / "entries")
    env = subprocess_env(TZ="UTC", LC_ALL="C.UTF-8", PYTHONHASHSEED="0")
    done = run_infrafeed("build", env=env, cwd=root)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("wrote ")
    assert_feeds_valid(root / "output")
    built = tree(root / "output")
    assert {"icon.png", "favicon.png"} <= set(built)  # drawn by resvg: compared below too
    return built


def build_elsewhere(
    root: Path, env: dict[str, str], entries: Path | None = None
) -> dict[str, bytes]:
    """Build the shipped entries (or ``entries``) into ``root/output``; return the tree."""
    root.mkdir(parents=True, exist_ok=True)
    if entries is None:
        entries = root / "entries"
        shutil.copytree(SHIPPED_ENTRIES, entries)
    done = run_infrafeed(
        "build", "--entries", str(entries), "--out", str(root / "output"), env=env, cwd=root
    )
    assert done.returncode == 0, done.stderr
    return tree(root / "output")


# (time zone, locale variable and value, hash seed): each value differs from the baseline's.
SETTINGS = [
    ("Pacific/Kiritimati", "LC_ALL", "C", "1"),  # UTC+14
    ("America/Adak", "LC_ALL", "C.UTF-8", "random"),  # UTC-10, with summer time
    ("UTC", "LC_ALL", "C", "random"),
    ("Asia/Shanghai", "LANG", "C.UTF-8", "12345"),  # the site's own zone
]


@pytest.mark.parametrize(
    "env",
    [
        pytest.param({"TZ": tz, var: value, "PYTHONHASHSEED": seed}, id=f"{tz}-{value}-{seed}")
        for tz, var, value, seed in SETTINGS
    ],
)
def test_time_zone_locale_and_hash_seed_change_nothing(
    baseline: dict[str, bytes], tmp_path: Path, env: dict[str, str]
) -> None:
    built = build_elsewhere(tmp_path, subprocess_env(**env))
    assert differing(built, baseline) == []


def _non_english_locale(folder: Path) -> dict[str, str] | None:
    """Settings for a locale with non-English day and month names, or None if there is none.

    An installed one if the machine has one; else Vietnamese compiled into a
    private folder (LOCPATH), which changes nothing on the machine.
    """
    listed = subprocess.run(["locale", "-a"], capture_output=True, text=True, check=False)
    for name in listed.stdout.split():
        if name not in ("C", "POSIX") and not name.startswith(("C.", "en_")):
            return {"LC_ALL": name}
    localedef = shutil.which("localedef")
    if localedef is None or not Path("/usr/share/i18n/locales/vi_VN").exists():
        return None
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [localedef, "-i", "vi_VN", "-f", "UTF-8", str(folder / "vi_VN.UTF-8")],
        capture_output=True,
        check=False,  # localedef warns (exit 1) about details of some locales it compiles fine
    )
    if not (folder / "vi_VN.UTF-8").exists():
        return None
    return {"LOCPATH": str(folder), "LC_ALL": "vi_VN.UTF-8"}


def test_non_english_locale_changes_nothing(baseline: dict[str, bytes], tmp_path: Path) -> None:
    settings = _non_english_locale(tmp_path / "locales")
    if settings is None:
        pytest.skip("no non-English locale installed, and none can be compiled (localedef)")
    # Prove the locale is really in force for a child: day names in it are not English.
    probe = subprocess.run(
        [
            sys.executable, "-c",
            "import locale, time; locale.setlocale(locale.LC_ALL, ''); "
            "print(time.strftime('%a %b', time.gmtime(0)))",
        ],
        env=subprocess_env(**settings), capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert probe.stdout.strip() != "Thu Jan", f"{settings} is not in force"
    env = subprocess_env(TZ="America/Adak", PYTHONHASHSEED="random", **settings)
    built = build_elsewhere(tmp_path / "site", env)
    assert differing(built, baseline) == []


def test_file_creation_order_mtimes_and_location_change_nothing(
    baseline: dict[str, bytes], tmp_path: Path
) -> None:
    # Created newest first, each with a random modification time, in a folder
    # at another depth: directory listings and stat results all differ.
    entries = tmp_path / "somewhere" / "else" / "entries"
    rng = random.Random(4)  # noqa: S311 (seeded, for repeatable mtimes)
    sources = sorted(p for p in SHIPPED_ENTRIES.rglob("*") if p.is_file())
    for source in reversed(sources):
        target = entries / source.relative_to(SHIPPED_ENTRIES)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
        stamp = rng.randrange(0, 2**31)
        os.utime(target, (stamp, stamp))
    built = build_elsewhere(tmp_path / "site", subprocess_env(TZ="UTC"), entries)
    assert differing(built, baseline) == []


_SHIFTED_CLOCK = '''\
"""Test-only: this Python runs at another wall-clock time (INFRAFEED_TEST_CLOCK)."""
import datetime, os, time

_real_time = time.time
_shift = float(os.environ["INFRAFEED_TEST_CLOCK"]) - _real_time()


def _time():
    return _real_time() + _shift


class _ShiftedDatetime(datetime.datetime):
    @classmethod
    def now(cls, tz=None):
        return cls.fromtimestamp(_time(), tz)

    @classmethod
    def utcnow(cls):
        return cls.fromtimestamp(_time(), datetime.timezone.utc).replace(tzinfo=None)

    @classmethod
    def today(cls):
        return cls.fromtimestamp(_time())


time.time = _time
time.time_ns = lambda: int(_time() * 1_000_000_000)
datetime.datetime = _ShiftedDatetime
'''


@pytest.mark.parametrize("when", ["2001-02-03T04:05:06.789+00:00", "2099-12-31T23:59:59+00:00"])
def test_the_clock_changes_nothing(baseline: dict[str, bytes], tmp_path: Path, when: str) -> None:
    """A build timestamp anywhere (feedgen's default "now", say) would differ here."""
    hook = tmp_path / "clock"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_SHIFTED_CLOCK, encoding="utf-8")
    clock = str(dt.datetime.fromisoformat(when).timestamp())
    env = subprocess_env(INFRAFEED_TEST_CLOCK=clock)
    env["PYTHONPATH"] = f"{hook}:{env['PYTHONPATH']}"
    check = subprocess.run(
        [sys.executable, "-c", "import datetime; print(datetime.datetime.now().year)"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert check.stdout.strip() == when[:4], "the shifted clock is not in force"
    built = build_elsewhere(tmp_path / "site", env)
    assert differing(built, baseline) == []


def _release_days() -> set[dt.date]:
    return {
        tomllib.loads(p.read_text(encoding="utf-8"))["date"]
        for p in SHIPPED_ENTRIES.rglob("*.toml")
        if p.name != "site.toml"
    }


def test_every_date_comes_from_the_entries_in_whole_seconds(
    baseline: dict[str, bytes], tmp_path: Path
) -> None:
    """No microseconds and no build time: each date is a release's day, whole seconds."""
    site = tomllib.loads((SHIPPED_ENTRIES / "site.toml").read_text(encoding="utf-8"))
    zone = ZoneInfo(site["timezone"])
    days = _release_days()
    out = tmp_path / "output"
    for name, data in baseline.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(data)
        assert not re.search(rb"\d\d:\d\d:\d\d[.,]\d", data), f"{name}: fractional seconds"

    dates: list[tuple[str, dt.datetime]] = []
    for name in baseline:
        path = out / name
        if name.endswith("feed.json"):
            doc = parse(path)
            dates += [(name, dt.datetime.fromisoformat(i["date_published"])) for i in doc["items"]]
        elif name.endswith("feed.xml"):
            doc = parse(path)
            for element in doc.iter("pubDate", "lastBuildDate"):
                assert re.fullmatch(
                    r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d "
                    r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} "
                    r"\d\d:\d\d:\d\d [+-]\d{4}",
                    element.text or "",
                ), f"{name}: {element.text!r} is not an RFC 822 date in English"
                dates.append((name, email.utils.parsedate_to_datetime(element.text)))
        elif name.endswith("atom.xml"):
            doc = parse(path)
            for element in doc.iter("{*}updated", "{*}published"):
                dates.append((name, dt.datetime.fromisoformat(element.text or "")))
    assert len(dates) > 300  # every item of every feed, and each feed's own date
    for name, when in dates:
        assert when.tzinfo is not None, f"{name}: {when} has no time zone"
        assert when.microsecond == 0, f"{name}: {when}"
        assert when.astimezone(zone).date() in days, f"{name}: {when} is no release's day"
