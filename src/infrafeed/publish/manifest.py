"""What infrafeed published in an output folder: its files, and the ids its feeds hold.

Two text files, one record a line, sorted, with no time stamps (two builds of
the same entries leave byte-identical folders):

- ``.infrafeed-manifest``: the digest of the inputs, then every file infrafeed
  wrote with its sha256 and size; only those are ever replaced or deleted.
  A build whose inputs and files are as recorded has nothing to do.
- ``.infrafeed-ids``: every item each feed published, with its date: the id
  guard's memory (feeds/guard.py).

Anything that is not exactly what infrafeed writes is refused, never guessed at.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path
from typing import NamedTuple

from ..errors import PublishError
from .files import FileRecord, safe_relative, sha256_of

MANIFEST = ".infrafeed-manifest"
IDS = ".infrafeed-ids"
_HEADER = "infrafeed manifest 2"
_IDS_HEADER = "infrafeed ids 2"
_INPUTS = re.compile(r"inputs ([0-9a-f]{64}|-)")
_PAGE = re.compile(r"page ([0-9a-f]{64}) (0|[1-9][0-9]{0,14})")
_FILE = re.compile(
    r"file ([0-9a-f]{64}) (0|[1-9][0-9]{0,14}) (\.infrafeed-ids|[A-Za-z0-9_][A-Za-z0-9._/-]{0,499})"
)
_ID = re.compile(r"([a-z0-9-]{1,100}) (tag:[!-~]{1,900}) ([0-9T:+-]{25})")

Ids = dict[str, dict[str, str]]  # feed key -> item id -> its date, ISO 8601


class Manifest(NamedTuple):
    inputs: str | None  # the digest of everything a build reads (source/files.py)
    files: dict[str, FileRecord]
    page: FileRecord | None = None  # the changelog page, when written outside the folder


def read_manifest(out: Path) -> Manifest:
    """The manifest of ``out``; an empty one when there is none."""
    lines = _lines(out / MANIFEST, _HEADER)
    if lines is None:
        return Manifest(None, {})
    found = _INPUTS.fullmatch(lines[0]) if lines else None
    if found is None:
        raise _damaged(out / MANIFEST, "line 2 is not the inputs' digest")
    page = None
    if len(lines) > 1 and (found_page := _PAGE.fullmatch(lines[1])):
        page = FileRecord(found_page[1], int(found_page[2]))
    files: dict[str, FileRecord] = {}
    for number, line in enumerate(lines[1 + (page is not None) :], start=3 + (page is not None)):
        record = _FILE.fullmatch(line)
        if record is None or safe_relative(record[3]) is None or record[3] in files:
            raise _damaged(out / MANIFEST, f"line {number} is not a file record")
        files[record[3]] = FileRecord(record[1], int(record[2]))
    return Manifest(None if found[1] == "-" else found[1], files, page)


def manifest_bytes(manifest: Manifest) -> bytes:
    lines = [_HEADER, f"inputs {manifest.inputs or '-'}"]
    if manifest.page is not None:
        lines.append(f"page {manifest.page.sha256} {manifest.page.size}")
    lines += [f"file {r.sha256} {r.size} {name}" for name, r in sorted(manifest.files.items())]
    return ("\n".join(lines) + "\n").encode()


def read_ids(out: Path) -> Ids:
    """The ids every feed published, from ``out``; none when there is no record."""
    lines = _lines(out / IDS, _IDS_HEADER)
    ids: Ids = {}
    for number, line in enumerate(lines or (), start=2):
        record = _ID.fullmatch(line)
        if record is None:
            raise _damaged(out / IDS, f"line {number} is not an id record")
        ids.setdefault(record[1], {})[record[2]] = record[3]
    return ids


def ids_bytes(ids: Ids) -> bytes:
    lines = [_IDS_HEADER]
    lines += [f"{key} {i} {ids[key][i]}" for key in sorted(ids) for i in sorted(ids[key])]
    return ("\n".join(lines) + "\n").encode()


def intact(out: Path, manifest: Manifest, page: Path | None) -> bool:
    """True when every recorded file is on disk with the bytes infrafeed wrote.

    The manifest is written after every file it lists, so a file whose
    change time (which no tool can set back, unlike the modification time
    ``cp -p`` and ``rsync -t`` keep) is older has not been touched since: only
    the others are hashed. At 10,000 items, hashing them all was a third of
    a build with nothing to do.
    """
    try:
        written = (out / MANIFEST).stat().st_ctime_ns
    except OSError:
        return False
    if page is not None and manifest.page != FileRecord(sha256_of(page) or "", _size(page)):
        return False
    for relative, record in manifest.files.items():
        path = out / relative
        try:
            info = path.lstat()
        except OSError:
            return False
        if not stat.S_ISREG(info.st_mode) or info.st_size != record.size:
            return False
        if info.st_ctime_ns >= written and sha256_of(path) != record.sha256:
            return False
    return True


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def _lines(path: Path, header: str) -> list[str] | None:
    """The lines of ``path`` after its header; None when it does not exist."""
    try:
        text = path.read_bytes().decode("ascii")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _damaged(path, exc.strerror or str(exc)) from None
    except UnicodeDecodeError:
        raise _damaged(path, "it is not ASCII text") from None
    lines = text.split("\n")
    if lines[0] != header or lines[-1] != "":
        raise _damaged(path, f"it does not start with '{header}' and end with a line break")
    return lines[1:-1]


def _damaged(path: Path, reason: str) -> PublishError:
    return PublishError(
        f"{path}: cannot read infrafeed's record ({reason}); it lists which files infrafeed "
        "owns and which items the feeds published. Restore it from a backup, or delete it "
        "to start over: files will then be overwritten, never deleted, and the id guard "
        "will not know what was published before"
    )
