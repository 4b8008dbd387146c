"""The commented release file that ``infrafeed new`` writes."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from ..errors import InfraFeedError

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


def release_path(entries: Path, date: dt.date) -> Path:
    return entries / f"{date:%Y}" / f"{date.isoformat()}.toml"


def write_template(entries: Path, date: dt.date) -> Path:
    """Create the release file for ``date``; refuse to touch an existing one."""
    path = release_path(entries, date)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with path.open("x", encoding="utf-8", newline="\n") as handle:
            handle.write(TEMPLATE.format(date=date.isoformat()))
    except FileExistsError:
        raise InfraFeedError(
            f"{path.as_posix()} already exists; edit it, or name a second release "
            f"of that day {date.isoformat()}-2.toml"
        ) from None
    return path
