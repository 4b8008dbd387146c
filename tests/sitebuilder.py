"""Write small sites spread over several months, for the archive, page and WebSub tests."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from conftest import SMALL_SITE

# (date, module, articles): four months, two modules, some site-level notes.
HISTORY = (
    ("2026-01-05", 1, 2),
    ("2026-01-20", 2, 1),
    ("2026-02-03", 1, 3),
    ("2026-02-17", None, 1),
    ("2026-03-02", 2, 2),
    ("2026-03-09", 1, 1),
    ("2026-03-30", 2, 2),
    ("2026-04-06", 1, 2),
)


def write_site(
    entries: Path,
    *,
    url: str = "https://example.org/guide/feeds/",
    max_items: int = 100,
    max_bytes: int = 512_000,
    hub: str | None = None,
    history: tuple[tuple[str, int | None, int], ...] = HISTORY,
) -> Path:
    """An entries folder: the small site's settings with these [feeds], and ``history``."""
    entries.mkdir(parents=True, exist_ok=True)
    settings = (SMALL_SITE / "site.toml").read_text(encoding="utf-8")
    feeds = f'[feeds]\nurl = "{url}"\nmax_items = {max_items}\nmax_bytes = {max_bytes}\n'
    if hub is not None:
        feeds += f'hub = "{hub}"\n'
    settings = re.sub(r"\[feeds\].*", feeds, settings, flags=re.DOTALL)
    (entries / "site.toml").write_text(settings, encoding="utf-8")
    for date, module, articles in history:
        add_release(entries, date, module, articles)
    return entries


def add_release(entries: Path, date: str, module: int | None, articles: int) -> Path:
    """A release of ``articles`` new articles in ``module``, or site notes when it is None."""
    day = dt.date.fromisoformat(date)
    lines = [f"date = {date}", "", "[[groups]]"]
    if module is None:
        lines.append('kind = "improved"')
        for n in range(1, articles + 1):
            lines += [
                "",
                "[[groups.notes]]",
                f'id = "note-{date}-{n}"',
                f'text = "Ghi chú {n} ngày {day:%d/%m}: cập nhật README & <hướng dẫn>"',
            ]
    else:
        lines += ['kind = "new"', f"module = {module}", "chapter = 1"]
        for n in range(1, articles + 1):
            lines += [
                "",
                "[[groups.articles]]",
                f'id = "bai-{date}-{n}"',
                f'number = "1.{n}"',
                f'title = "Bài {n} ngày {day:%d/%m}: Tối ưu hoá & <đo đạc> hiệu năng"',
                f'summary = "Tóm tắt tiếng Việt có dấu, với `code` số {n}"',
            ]
    path = entries / f"{day.year}" / f"{date}.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
