"""The floor infrafeed is measured against: the same feeds, with nothing else.

    python bench/baseline.py ENTRIES OUT

Reads ``site.toml`` and every release file with ``tomllib``, and writes the
feed of every item and one feed per module, each as RSS 2.0 and Atom 1.0
with feedgen and as JSON Feed 1.1 with ``json``: the same files, items,
dates and links as ``infrafeed build``. It validates nothing, renders no
Markdown, keeps no manifest, takes no lock and writes in place: whatever
infrafeed costs above this is the price of its design.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import sys
import tomllib
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from feedgen.feed import FeedGenerator


def main(entries: Path, out: Path) -> None:
    site = tomllib.loads((entries / "site.toml").read_text(encoding="utf-8"))
    releases = []
    for path in entries.rglob("*.toml"):
        if path.name != "site.toml":
            release = tomllib.loads(path.read_text(encoding="utf-8"))
            name = path.stem
            sequence = int(name[11:]) if len(name) > 10 else 1
            releases.append((release["date"], sequence, release))
    releases.sort(key=lambda r: (r[0], r[1]), reverse=True)

    zone = ZoneInfo(site["timezone"])
    modules = {m["number"]: m for m in site["modules"]}
    items = []
    for day, sequence, release in releases:
        start = dt.datetime(day.year, day.month, day.day, 12 + sequence - 1, tzinfo=zone)
        position = 0
        for group in release["groups"]:
            for article in group.get("articles", []):
                module = article.get("module", group.get("module"))
                items.append(_item(site, modules, group, article, module, day, start, position))
                position += 1
            for note in group.get("notes", []):
                module = note.get("module", group.get("module"))
                note = {**note, "title": note["text"]}
                items.append(_item(site, modules, group, note, module, day, start, position))
                position += 1

    feeds_url = site["feeds"]["url"].rstrip("/") + "/"
    limit = site["feeds"]["max_items"]
    feeds = [("", site["title"], items)]
    for number, module in modules.items():
        chosen = [i for i in items if i["module"] == number]
        feeds.append((f"modules/{module['slug']}/", f"{site['title']} · {module['name']}", chosen))
    for folder, title, chosen in feeds:
        chosen = chosen[:limit]
        target = out / folder
        target.mkdir(parents=True, exist_ok=True)
        (target / "feed.xml").write_bytes(_feedgen(site, title, feeds_url + folder, chosen, "rss"))
        (target / "atom.xml").write_bytes(_feedgen(site, title, feeds_url + folder, chosen, "atom"))
        (target / "feed.json").write_bytes(_json(site, title, feeds_url + folder, chosen))


def _item(
    site: dict[str, Any],
    modules: dict[int, Any],
    group: dict[str, Any],
    article: dict[str, Any],
    module: int | None,
    day: dt.date,
    start: dt.datetime,
    position: int,
) -> dict[str, Any]:
    kind = group["kind"]
    link = article.get("page") or f"{site['changelog']}#{day.isoformat()}"
    number = f"{article['number']} " if "number" in article else ""
    content = [f"<p>{html.escape(article.get('summary', ''), quote=False)}</p>"]
    categories = [site["kinds"][kind]["heading"]]
    if module is not None:
        place = f"Module {module} · {modules[module]['name']}"
        content.append(f"<p>{html.escape(place, quote=False)}</p>")
        categories.insert(0, place)
    content.append(f'<p><a href="{html.escape(link)}">Đọc bài →</a></p>')
    return {
        "id": f"tag:{site['ids']['authority']},{site['ids']['date']}:{day}/{article['id']}/{kind}",
        "title": f"{site['kinds'][kind]['short']} · {number}{article['title']}",
        "link": link,
        "published": start - dt.timedelta(seconds=position),
        "content": "\n".join(content),
        "summary": article.get("summary"),
        "categories": categories,
        "module": module,
    }


def _feedgen(
    site: dict[str, Any], title: str, url: str, items: list[dict[str, Any]], fmt: str
) -> bytes:
    fg = FeedGenerator()
    fg.id(url)
    fg.title(title)
    fg.subtitle(site["description"])
    fg.language(site["language"])
    fg.updated(items[0]["published"] if items else dt.datetime(2000, 1, 1, tzinfo=dt.UTC))
    fg.author({"name": site["author"]["name"]})
    fg.link(href=url + ("feed.xml" if fmt == "rss" else "atom.xml"), rel="self")
    fg.link(href=site["url"], rel="alternate")
    for item in items:
        entry = fg.add_entry(order="append")
        entry.id(item["id"])
        entry.title(item["title"])
        entry.link(href=item["link"])
        entry.published(item["published"])
        entry.updated(item["published"])
        entry.content(item["content"], type="html")
        if item["summary"]:
            entry.summary(item["summary"])
        for category in item["categories"]:
            entry.category(term=category)
    return bytes(fg.rss_str(pretty=True) if fmt == "rss" else fg.atom_str(pretty=True))


def _json(site: dict[str, Any], title: str, url: str, items: list[dict[str, Any]]) -> bytes:
    feed = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": title,
        "home_page_url": site["url"],
        "feed_url": url + "feed.json",
        "items": [
            {
                "id": item["id"],
                "url": item["link"],
                "title": item["title"],
                "content_html": item["content"],
                "summary": item["summary"],
                "date_published": item["published"].isoformat(),
                "tags": item["categories"],
            }
            for item in items
        ],
    }
    return (json.dumps(feed, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
