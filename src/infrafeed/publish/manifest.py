"""What infrafeed published in an output folder: its files, and the ids its feeds hold.

Text files, a record a line, sorted, with no time stamps (two builds of the same entries leave
byte-identical folders). ``.infrafeed-manifest``: the digest of the inputs, every file infrafeed
wrote with its sha256 and size (only those are ever replaced or deleted), the WebSub pings still
owed. ``.infrafeed-ids``, and ``published-ids.txt`` kept in git beside the releases: every item
each feed published, with its date (the id guard's memory). Anything that is not exactly what
infrafeed writes is refused, never guessed at.
"""

from __future__ import annotations

import datetime as dt
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..errors import PublishError, reads
from .files import FileRecord, sha256_of, write_atomic

if TYPE_CHECKING:
    from ..source.files import EntryFile

MANIFEST = ".infrafeed-manifest"
IDS = ".infrafeed-ids"
_HEADER = "infrafeed manifest 2"
_IDS_HEADER = "infrafeed ids 2"
_SHA = "[0-9a-f]{64}"
_SIZE = "0|[1-9][0-9]{0,14}"
_NAME = r"\.infrafeed-ids|[A-Za-z0-9_][A-Za-z0-9._/-]{0,499}"
_RECORD = re.compile(
    rf"(inputs) ({_SHA}|-)|(page) ({_SHA}) ({_SIZE})|(published) ({_SHA})"
    rf"|(file) ({_SHA}) ({_SIZE}) ({_NAME})|(pending) (https?://[!-~]{{1,2000}})"
)
# Before 0.3.0, a release before 1901 could be dated in local mean time, with seconds in its
# offset (Asia/Shanghai: +08:05:43): such a record is still read.
# "<key> -": a feed with no items yet, which subscribers may already poll (no id line cut short
# reads so: an id starts "tag:").
_DATE = r"[0-9T:+-]{25}(?::[0-9]{2})?"
_ID = re.compile(rf"(all|module-[a-z0-9-]{{1,80}}) (?:(tag:[!-~]{{1,900}}) ({_DATE})|-)")

Ids = dict[str, dict[str, str]]  # feed key -> item id -> its date, ISO 8601


class Manifest(NamedTuple):
    inputs: str | None  # the digest of everything a build reads (source/files.py)
    files: dict[str, FileRecord]
    page: FileRecord | None = None  # the changelog page, when written outside the folder
    ids_sha256: str | None = None  # of published-ids.txt as the build left it (line "published")
    pending: tuple[str, ...] = ()  # feed URLs the WebSub hub has not heard about yet


def read_manifest(out: Path) -> Manifest:
    """The manifest of ``out``; an empty one when there is none."""
    path = out / MANIFEST
    lines = _lines(_read(path), _HEADER, path)
    if lines is None:
        return Manifest(None, {})
    if not lines:
        raise _damaged(path, "it has no records")
    found: dict[str, list[tuple[str, ...]]] = {}
    for number, line in enumerate(lines, start=2):
        record = _RECORD.fullmatch(line)
        if record is None or (number == 2) != (record[1] == "inputs"):
            raise _damaged(path, f"line {number} is not a record of a manifest")
        kind, *fields = (group for group in record.groups() if group is not None)
        found.setdefault(kind, []).append(tuple(fields))
    files = {name: FileRecord(sha, int(size)) for sha, size, name in found.get("file", [])}
    once = ("page", "published")
    if len(files) != len(found.get("file", [])) or any(len(found.get(k, [])) > 1 for k in once):
        raise _damaged(path, "a record is there twice")
    page = found.get("page", [None])[0]
    inputs = found["inputs"][0][0]
    return Manifest(
        None if inputs == "-" else inputs,
        files,
        FileRecord(page[0], int(page[1])) if page else None,
        found.get("published", [(None,)])[0][0],
        tuple(url for (url,) in found.get("pending", [])),
    )


def manifest_bytes(manifest: Manifest) -> bytes:
    lines = [_HEADER, f"inputs {manifest.inputs or '-'}"]
    if manifest.page is not None:
        lines.append(f"page {manifest.page.sha256} {manifest.page.size}")
    if manifest.ids_sha256 is not None:
        lines.append(f"published {manifest.ids_sha256}")
    lines += [f"file {r.sha256} {r.size} {name}" for name, r in sorted(manifest.files.items())]
    lines += [f"pending {url}" for url in sorted(set(manifest.pending))]
    return ("\n".join(lines) + "\n").encode()


def _parse_ids(data: bytes | None, path: Path | str) -> Ids:
    """The ids every feed published, from an ids file's bytes; none when there is no file."""
    ids: Ids = {}
    empty: set[str] = set()
    for number, line in enumerate(_lines(data, _IDS_HEADER, path) or (), start=2):
        record = _ID.fullmatch(line)
        # The guard compares dates: "2026-13-14" is damage; so is an empty feed with ids.
        if (
            record is None
            or (record[2] and not reads(dt.datetime.fromisoformat, record[3]))
            or record[1] in empty
            or (not record[2] and record[1] in ids)
        ):
            raise _damaged(path, f"line {number} is not an id record")
        feed = ids.setdefault(record[1], {})
        if record[2]:
            feed[record[2]] = record[3]
        else:
            empty.add(record[1])
    return ids


def committed_ids(file: EntryFile | None) -> Ids:
    """The ids in the entries' ``published-ids.txt``; none when there is none."""
    if file is None:
        return {}
    if file.data is None:  # a link out of the entries, a FIFO: not the same as no record
        raise _damaged(file.shown, file.problem or "it cannot be read")
    return _parse_ids(file.data, file.shown)


def read_ids(out: Path) -> Ids:
    return _parse_ids(_read(out / IDS), out / IDS)


def ids_bytes(ids: Ids) -> bytes:
    lines = [_IDS_HEADER]
    lines += [f"{key} {i} {ids[key][i]}" for key in sorted(ids) for i in sorted(ids[key])]
    lines += [f"{key} -" for key in sorted(ids) if not ids[key]]
    return ("\n".join(lines) + "\n").encode()


def intact(out: Path, manifest: Manifest, page: Path | None) -> bool:
    """True when every recorded file is on disk with the bytes infrafeed wrote."""
    if (written := settled(out)) < 0:
        return False
    recorded = manifest.page  # None when the settings write no page ([page] enabled = false)
    if page is not None and recorded is not None and not as_recorded(page, recorded, -1):
        return False
    return all(as_recorded(out / name, r, written) for name, r in manifest.files.items())


def record_pending(out: Path, manifest: Manifest, pending: tuple[str, ...]) -> None:
    """Write ``out``'s manifest again, owing the hub a ping for each feed of ``pending``.

    Newer, the manifest would vouch for every file unread: one edited while the hub was asked
    must not look untouched. Each file changed since gets a record no build matches, and the inputs
    none: the next build is a full one, and writes those files again.
    """
    written = settled(out)
    changed = [n for n, r in manifest.files.items() if not as_recorded(out / n, r, written)]
    if changed:
        files = manifest.files | {n: manifest.files[n]._replace(sha256="0" * 64) for n in changed}
        manifest = manifest._replace(inputs=None, files=files)
    write_atomic(out / MANIFEST, (manifest_bytes(manifest._replace(pending=pending)),))


def settled(out: Path) -> int:
    """The change time of ``out``'s manifest, for :func:`as_recorded`; -1 when there is none."""
    try:
        return (out / MANIFEST).stat().st_ctime_ns
    except OSError:
        return -1  # every file is read


def as_recorded(path: Path, record: FileRecord, settled_ns: int) -> bool:
    """Whether ``path`` is a regular file with the bytes of ``record``.

    Only a file changed at or after ``settled_ns`` is read: the manifest is written after every
    file it lists, so a file whose change time (which no tool can set back, unlike the mtime
    ``cp -p`` and ``rsync -t`` keep) is older is untouched since. A large site's feeds are most
    of what a build with nothing to do would otherwise read.
    """
    try:
        info = path.lstat()
    except OSError:
        return False
    return (
        stat.S_ISREG(info.st_mode)
        and info.st_size == record.size
        and (info.st_ctime_ns < settled_ns or sha256_of(path) == record.sha256)
    )


def _read(path: Path) -> bytes | None:
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO would be waited on, /dev/zero endless
            raise _damaged(path, "it is not a regular file: a folder, device or FIFO")
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _damaged(path, exc.strerror or str(exc)) from None


def _lines(data: bytes | None, header: str, path: Path | str) -> list[str] | None:
    """The lines after the header; None when there is no file."""
    if data is None:
        return None
    try:
        lines = data.decode("ascii").split("\n")
    except UnicodeDecodeError:
        raise _damaged(path, "it is not ASCII text") from None
    if b"\r\n" in data:
        why = "its lines end in CR LF, as on Windows (git's core.autocrlf): infrafeed writes and "
        raise _damaged(path, why + "reads LF line ends only")
    if lines[0] != header or lines[-1] != "":
        raise _damaged(path, f"it does not start with '{header}' and end with a line break")
    return lines[1:-1]


def _damaged(path: Path | str, reason: str) -> PublishError:
    if Path(path).name == MANIFEST:
        held = "which files infrafeed wrote, the only ones it replaces or deletes"
        lost = "infrafeed then refuses to write over files that differ from its own"
    else:
        held, lost = "the items each feed published", "the id guard then forgets what it recorded"
    return PublishError(
        f"{path}: cannot read infrafeed's record ({reason}); it lists {held}. Restore it (from "
        f"git or a backup), or delete it to start over: {lost}"
    )
