"""The JSON Schemas for editors (entries/schema/): what ``infrafeed schema`` prints, what the
real taplo (the engine of VS Code's Even Better TOML) makes of the shipped entries and of the
loader's bad inputs, and the ``#:schema`` line that ``new`` and ``import`` write.

taplo runs offline: it is given no schema catalog, looks for no configuration file, and its
proxies lead nowhere, so a schema it tried to fetch from the network would fail the check.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from conftest import SHIPPED_ENTRIES, SMALL_SITE, RunCli
from outputs import subprocess_env
from release_kit import release_text
from test_hostile import BAD_SETTINGS, BAD_VALUES
from test_loader import BAD_RELEASES, CLASHING_SETTINGS, GOOD_RELEASE, WRONG_FORM_SETTINGS

TAPLO = Path(sysconfig.get_path("scripts")) / "taplo"
_NOWHERE = "http://127.0.0.1:9"  # the discard port: nothing answers
_PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
OFFLINE = {
    **os.environ,
    **{name: _NOWHERE for proxy in _PROXIES for name in (proxy, proxy.lower())},
    "NO_PROXY": "",
    "no_proxy": "",
}
RELEASE_LINE = "#:schema ../schema/release.json\n"  # from entries/YYYY/
SITE_LINE = "#:schema schema/site.json\n"  # from entries/

# What taplo says when a schema keyword refuses a value.
UNKNOWN_KEY = "Additional properties are not allowed"  # additionalProperties: false
REQUIRED = "is a required property"
WRONG_TYPE = "is not of type"
NOT_LISTED = "is not one of"  # enum: kinds
EMPTY = "is shorter than 1 character"  # minLength
FORM = "does not match"  # pattern: slugs, numbers, one line, domain, language, e-mail
TOO_LONG = "is longer than"  # maxLength of a slug or a number
NOT_A_DATE = 'is not a "date"'

# The loader's bad inputs that the schema catches, with what taplo says. Every other case of
# those tables passes taplo, and only `infrafeed check` refuses it: a rule across files (ids,
# an article new again), of the file's name (the date), of site.toml's modules, across fields
# (a number of another chapter, an article without a module, a group with nothing in it),
# of what a text says (links, Markdown, characters XML forbids, mojibake, only white space),
# a length counted after normalising to NFC, a time zone, a quoted ISO date (taplo reads a TOML
# date as text), and a whole number written 4.0 (JSON has one type of number).
SEEN_RELEASES = {
    "unknown key, with a hint": UNKNOWN_KEY,
    "missing key": REQUIRED,
    "wrong type": WRONG_TYPE,
    "module as a string": WRONG_TYPE,
    "unknown kind": NOT_LISTED,
    "empty summary": EMPTY,
    "slug that could walk paths": FORM,
    "title with a line break": FORM,
    "quoted date": NOT_A_DATE,
    "date-time at midnight": NOT_A_DATE,
    "Unix time for a date": WRONG_TYPE,
    # tests/test_hostile.py's values, put into release_kit's release
    "parent folder id": FORM,
    "slash in an id": FORM,
    "absolute id": FORM,
    "NUL in an id": FORM,
    "newline after an id": FORM,
    "upper case id": FORM,
    "overlong id": TOO_LONG,
    "newline after a number": FORM,
}
SEEN_SETTINGS = {
    "language not a tag": FORM,
    "authority in capitals": FORM,
    "unknown kind": NOT_LISTED,  # kinds' names are listed too (propertyNames)
    "a kind without a label": REQUIRED,
    # tests/test_hostile.py's settings
    "module slug walking up": FORM,
    "module slug with a newline": FORM,
    "module section with a slash": FORM,
    "author e-mail not an address": FORM,
}
RELEASES = [(what, text) for what, text, _ in BAD_RELEASES] + [
    (what, release_text(**{field: value})) for what, field, value, _ in BAD_VALUES
]
SETTINGS = [(what, old, new) for what, old, new, _ in WRONG_FORM_SETTINGS + CLASHING_SETTINGS] + [
    (what, old, new) for what, old, new, _, _ in BAD_SETTINGS
]


def taplo(file: Path) -> str:
    """What taplo says of ``file`` checked against the schema its #:schema line names: nothing
    when it is valid."""
    done = subprocess.run(
        [str(TAPLO), "check", "--no-auto-config", "--colors", "never", str(file)],
        env=OFFLINE,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode == 0:
        return ""
    # What it says of a value (a schema it could not load is only logged).
    assert "\nerror: " in done.stderr, done.stderr
    return done.stderr


@pytest.fixture
def entries(tmp_path: Path) -> Path:
    """An entries folder with the shipped schemas and nothing else yet."""
    folder = tmp_path / "with-schema"  # beside small_site's "entries"
    shutil.copytree(SHIPPED_ENTRIES / "schema", folder / "schema")
    (folder / "2026").mkdir()
    return folder


@pytest.mark.parametrize(("args", "name"), [((), "release.json"), (("--site",), "site.json")])
def test_the_committed_schemas_are_what_infrafeed_schema_prints(
    args: tuple[str, ...], name: str
) -> None:
    """Under two machines' settings; a locale whose encoding has no Vietnamese (the site's
    defaults) still gets UTF-8."""
    committed = (SHIPPED_ENTRIES / "schema" / name).read_bytes()
    for env in (
        subprocess_env(LC_ALL="C", PYTHONIOENCODING="latin-1", PYTHONHASHSEED="1", TZ="UTC"),
        subprocess_env(LC_ALL="C.UTF-8", PYTHONHASHSEED="2", TZ="Pacific/Kiritimati"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "infrafeed", "schema", *args],
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert (done.returncode, done.stderr) == (0, b"")
        command = " ".join(("infrafeed schema", *args))
        assert done.stdout == committed, f"run `{command} > entries/schema/{name}`"


def test_taplo_finds_every_shipped_file_valid_by_its_schema_line() -> None:
    site = SHIPPED_ENTRIES / "site.toml"
    releases = sorted(set(SHIPPED_ENTRIES.rglob("*.toml")) - {site})
    assert len(releases) == 36
    for file, line in [(site, SITE_LINE), *((release, RELEASE_LINE) for release in releases)]:
        assert file.read_text(encoding="utf-8").startswith(line), file
        assert taplo(file) == "", file


def test_the_inputs_the_bad_ones_are_made_from_pass_taplo(entries: Path) -> None:
    for text in (GOOD_RELEASE, release_text()):
        (entries / "2026" / "2026-11-07.toml").write_text(RELEASE_LINE + text, encoding="utf-8")
        assert taplo(entries / "2026" / "2026-11-07.toml") == ""
    site = SITE_LINE + (SMALL_SITE / "site.toml").read_text(encoding="utf-8")
    (entries / "site.toml").write_text(site, encoding="utf-8")
    assert taplo(entries / "site.toml") == ""


def test_every_case_said_to_be_seen_is_one_of_the_loaders() -> None:
    assert set(SEEN_RELEASES) <= {what for what, _ in RELEASES}
    assert set(SEEN_SETTINGS) <= {what for what, _, _ in SETTINGS}


@pytest.mark.parametrize(("what", "text"), [pytest.param(w, t, id=w) for w, t in RELEASES])
def test_taplo_refuses_a_bad_release_when_the_schema_can_see_the_fault(
    entries: Path, what: str, text: str
) -> None:
    file = entries / "2026" / "2026-11-07.toml"
    file.write_text(RELEASE_LINE + text, encoding="utf-8")
    said = taplo(file)
    if what in SEEN_RELEASES:
        assert SEEN_RELEASES[what] in said
    else:
        assert said == "", "the schema sees it: add it to SEEN_RELEASES"


@pytest.mark.parametrize(("what", "old", "new"), [pytest.param(*s, id=s[0]) for s in SETTINGS])
def test_taplo_refuses_bad_settings_when_the_schema_can_see_the_fault(
    entries: Path, what: str, old: str, new: str
) -> None:
    text = (SMALL_SITE / "site.toml").read_text(encoding="utf-8")
    assert old in text
    (entries / "site.toml").write_text(SITE_LINE + text.replace(old, new, 1), encoding="utf-8")
    said = taplo(entries / "site.toml")
    if what in SEEN_SETTINGS:
        assert SEEN_SETTINGS[what] in said
    else:
        assert said == "", "the schema sees it: add it to SEEN_SETTINGS"


@pytest.mark.parametrize("date", ["2026-11-30", "2031-01-05", "1990-01-01"])
def test_new_names_the_schema_from_the_folder_it_writes_in(
    run_cli: RunCli, shipped_entries: Path, date: str
) -> None:
    assert run_cli("new", "--entries", str(shipped_entries), "--date", date)[0] == 0
    file = shipped_entries / date[:4] / f"{date}.toml"
    text = file.read_text(encoding="utf-8")
    assert text.startswith(RELEASE_LINE)
    # As written, the template has no group yet: the editor says so, as check does.
    assert f'"groups" {REQUIRED}' in taplo(file)
    group = '\n[[groups]]\nkind = "init"\n\n[[groups.notes]]\nid = "site-init"\ntext = "Mở"\n'
    file.write_text(text + group, encoding="utf-8")
    assert taplo(file) == ""


def test_new_writes_no_schema_line_where_the_entries_have_no_schema(
    run_cli: RunCli, small_site: Path
) -> None:
    """A line naming a missing schema would be an error in the editor."""
    assert run_cli("new", "--entries", str(small_site), "--date", "2026-11-30")[0] == 0
    text = (small_site / "2026" / "2026-11-30.toml").read_text(encoding="utf-8")
    assert text.startswith("# Release of 2026-11-30")


def test_import_names_the_schema_in_every_file_it_writes(
    run_cli: RunCli, small_site: Path, entries: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    assert run_cli("build", "--entries", str(small_site), "--out", str(out), "--no-cache")[0] == 0
    shutil.rmtree(entries / "2026")
    shutil.copy(small_site / "site.toml", entries / "site.toml")
    code, _, err = run_cli("import", str(out / "update-log.md"), "--entries", str(entries))
    assert (code, err) == (0, "")
    written = sorted(entries.rglob("2*/*.toml"))
    assert len(written) == 4
    for file in written:
        assert file.read_text(encoding="utf-8").startswith(RELEASE_LINE)
        assert taplo(file) == "", file


def test_the_schemas_are_neither_entries_nor_warned_of(
    run_cli: RunCli, shipped_entries: Path
) -> None:
    code, out, err = run_cli("check", "--entries", str(shipped_entries))
    assert (code, err) == (0, "")
    assert out.startswith("ok: 36 releases")
    # Only the two files are left to editors: anything else in the folder is still named.
    (shipped_entries / "schema" / "other.json").write_text("{}\n", encoding="utf-8")
    code, _, err = run_cli("check", "--entries", str(shipped_entries))
    relative = f"{shipped_entries.as_posix()}/schema/other.json"
    assert (code, err) == (0, f"warning: {relative}: not an entry file; ignored\n")
