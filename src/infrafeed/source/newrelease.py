"""The commented release file that ``infrafeed new`` writes."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from ..errors import InfraFeedError
from ..publish.files import write_atomic

TEMPLATE = """\
# Release of {date}: one file per release, named by its date.
# Fill in the groups below, then run `infrafeed check`.
date = {date}

# A group: changes of one kind, optionally introduced by a context line.
# kind is one of: new, revised, restructured, major, improved, launch, init.
# module and chapter set the default for the group's articles and notes.
#
# [[groups]]
# kind = "new"
# module = 4
# chapter = 6
# context = "Module 4 · Tối ưu suy luận Chương 6 «…» lên sóng:"
#
# One article change: one feed item. The id is a slug you choose once and never
# change (not the number or the title: those change). Reuse the article's id when
# a later release revises it. Text may use `code`, *emphasis* and [links](/path).
#
# [[groups.articles]]
# id = "inference-tensor-parallelism"
# number = "6.2"
# title = "Suy luận song song tensor"
# summary = "Suy ra lượng dữ liệu của hai lần `AllReduce` mỗi lớp"
# page = "https://caomaolufei.github.io/AIInfraGuide/inference/..."   # optional
#
# A change that is not about one article (site news, renumbering...): a note.
#
# [[groups.notes]]
# id = "readme-update"
# text = "Cập nhật README và bổ sung ảnh giới thiệu dự án"
"""


def write_template(entries: Path, date: dt.date) -> Path:
    """Create the release file for ``date`` from the template; never touch an existing file."""
    if not (entries / "site.toml").is_file():
        raise InfraFeedError(
            f"{entries.as_posix()}: no site.toml here; give --entries the folder that holds "
            "site.toml and the release files"
        )
    folder = entries / f"{date:%Y}"
    name = date.isoformat()
    try:
        folder.mkdir(exist_ok=True)
        write_atomic(
            folder / f"{name}.toml", (TEMPLATE.format(date=name).encode(),), overwrite=False
        )
    except FileExistsError:
        taken = {p.stem for p in folder.glob(f"{name}*.toml")}
        free = next(f"{name}-{n}" for n in range(2, 100) if f"{name}-{n}" not in taken)
        raise InfraFeedError(
            f"{(folder / name).as_posix()}.toml already exists; edit it, or write a later "
            f"release of that day as {(folder / free).as_posix()}.toml"
        ) from None
    except OSError as exc:
        raise InfraFeedError(f"{folder.as_posix()}: could not write ({exc.strerror})") from None
    return folder / f"{name}.toml"
