"""The commented release file that ``infrafeed new`` writes."""

from __future__ import annotations

import datetime as dt
import os
from importlib.resources import files
from pathlib import Path

from ..errors import InfraFeedError
from ..publish.files import write_atomic
from .files import FOLDER_LINK, SITE_FILE, read_entries
from .loader import release_name
from .models import MAX_RELEASES_PER_DAY
from .schema import schema_line


def write_template(entries: Path, date: dt.date) -> Path:
    """Create the release file for ``date`` from the template; never touch an existing file."""
    if not os.path.isfile(entries / SITE_FILE):  # noqa: PTH113 (Path.is_file raises, too long)
        raise InfraFeedError(
            f"{entries.as_posix()}: no site.toml here; give --entries the folder that holds "
            "site.toml and the release files"
        )
    name = date.isoformat()
    folder = entries / name[:4]  # %Y is "1" for the year 1
    target = folder / f"{name}.toml"
    template = (files(__package__) / "release-template.toml").read_text(encoding="utf-8")
    if os.path.lexists(folder) and not folder.is_dir():
        raise InfraFeedError(
            f"{folder.as_posix()}: is not a folder (a file, or a link to none); move it away: "
            f"the releases of {folder.name} go in a folder of that name"
        )
    if folder.is_symlink():  # a link to a folder: read_entries refuses what it would hold
        raise InfraFeedError(f"{folder.as_posix()}: {FOLDER_LINK}")
    # A release is one file whatever its folder (entries/drafts/ too): the day's, among the
    # files check reads (the version only names the snapshot's digest, unused here).
    listed = read_entries(entries, "").releases
    stems = [release_name(date, n) for n in range(1, MAX_RELEASES_PER_DAY + 1)]
    day = {Path(f.relative).stem: entries / f.relative for f in listed}
    # A release is dated by its number: one after the day's last, never before one published.
    last = max((i for i, stem in enumerate(stems) if stem in day), default=0)
    try:
        if any(day[stem] != target for stem in stems if stem in day):
            raise FileExistsError
        folder.mkdir(exist_ok=True)
        text = template.format(schema=schema_line(entries), date=name)
        write_atomic(target, (text.encode(),), overwrite=False)
    except FileExistsError:
        # The day's last: what is added to another is dated before a later release's items.
        existing = day.get(stems[last], target)
        if not existing.exists():  # a link to none: "edit it" would write there
            why = "is a symbolic link to a file that does not exist; remove it, then run new again"
            raise InfraFeedError(f"{existing.as_posix()}: {why}") from None
        if existing.is_dir():
            why = "is a folder, not a release file; move it away, then run new again"
            raise InfraFeedError(f"{existing.as_posix()}: {why}") from None
        shown = existing.as_posix()
        if last + 1 == len(stems):
            raise InfraFeedError(
                f"{shown} already exists, the last release a day can have; edit it, or give "
                "--date a later day"
            ) from None
        raise InfraFeedError(
            f"{shown} already exists; edit it, or write a later release of that day as "
            f"{(folder / stems[last + 1]).as_posix()}.toml"
        ) from None
    except OSError as exc:
        raise InfraFeedError(f"{folder.as_posix()}: could not write ({exc.strerror})") from None
    return target
