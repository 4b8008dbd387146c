"""The changelog page of the site, written from the entries: one source for page and feeds.

A Markdown blog post for the Astro site: front matter, the intro line, then
each release newest first under a ``## YYYY-MM-DD`` heading whose id is the
anchor the feed items link to, its groups under ``### <kind heading>``, each
group's context line and one bullet per article or note, ``---`` between
releases. What the page does not show (modules, chapters, a note's page)
rides along in invisible annotations (see ``page_format``), so that
``infrafeed import`` can read the page back into the same entries.

Pure and deterministic: the same changelog gives the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from urllib.parse import urljoin, urlsplit, urlunsplit

from . import inline
from .loader import Changelog, ReleaseFile
from .models import Article, Group, Note, Site
from .page_format import (
    ARTICLE_NUMBER,
    COLONS,
    SEPARATOR,
    AnnotationValue,
    format_annotation,
    release_heading,
)
from .page_markdown import inline_markdown, link_destination, plain_markdown


def page_files(changelog: Changelog) -> tuple[tuple[str, bytes], ...]:
    """The page as ``(path below the output folder, bytes)``; nothing when it is turned off."""
    settings = changelog.site.page
    if not settings.enabled:
        return ()
    return ((settings.path, render_page(changelog)),)


def render_page(changelog: Changelog) -> bytes:
    site = changelog.site
    resolve = _page_reference(site)
    out: list[str] = [*_front_matter(changelog), ""]
    if site.page.intro:
        out += [_paragraph(inline.parse(site.page.intro), resolve), ""]
    for index, rf in enumerate(changelog.releases):
        if index:
            out += ["---", ""]
        out += [f"## {release_heading(rf.release.date, rf.sequence)}", ""]
        previous: Group | None = None
        for group in rf.release.groups:
            out += _group(site, rf, group, previous, resolve)
            previous = group
    return ("\n".join(out).rstrip("\n") + "\n").encode("utf-8")


def _front_matter(changelog: Changelog) -> list[str]:
    site = changelog.site
    settings = site.page
    oldest = changelog.releases[-1].release.date if changelog.releases else site.ids.date
    pub_date = settings.pub_date or oldest
    # JSON strings are YAML double-quoted scalars: safe for any text.
    return [
        "---",
        f"title: {_yaml_string(settings.title or site.title)}",
        f"description: {_yaml_string(settings.description or site.description)}",
        f"pubDate: {pub_date.isoformat()}",
        f"tags: [{', '.join(_yaml_string(tag) for tag in settings.tags)}]",
        "---",
    ]


def _yaml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _group(
    site: Site,
    rf: ReleaseFile,
    group: Group,
    previous: Group | None,
    resolve: Callable[[str], str],
) -> list[str]:
    out: list[str] = []
    if previous is None or previous.kind != group.kind:
        out += [f"### {plain_markdown(site.kinds[group.kind].heading, line_start=False)}", ""]
    fields: dict[str, AnnotationValue] = {}
    if group.module is not None:
        fields["module"] = group.module
    if group.chapter is not None:
        fields["chapter"] = group.chapter
    # Every group gets its annotation: it marks where the group starts, and says
    # that nothing about it is to be inferred when the page is imported.
    out += [format_annotation(fields, group=True), ""]
    if group.context:
        out += [_paragraph(rf.nodes(group.context), resolve), ""]
    bullets = [_article(site, rf, a, resolve) for a in group.articles]
    bullets += [_note(site, rf, n, resolve) for n in group.notes]
    for index, bullet in enumerate(bullets):
        if index and bullets[index - 1][-1].startswith("  |"):
            out.append("")  # a table ends at a blank line
        out += bullet
    return [*out, ""]


def _article(
    site: Site, rf: ReleaseFile, article: Article, resolve: Callable[[str], str]
) -> list[str]:
    label = f"{article.number} {article.title}" if article.number else article.title
    head = plain_markdown(label, line_start=False)
    if article.page is not None:
        head = f"[{head}]({link_destination(resolve(article.page))})"
    line = f"**{plain_markdown(site.page.article_label)}:** {head}"
    if article.summary:
        line += SEPARATOR + _continued(
            rf.nodes(article.summary), resolve, indent=2, line_start=False
        )
    fields: dict[str, AnnotationValue] = {}
    if article.module is not None:
        fields["module"] = article.module
    if article.chapter is not None:
        fields["chapter"] = article.chapter
    if article.number is None and ARTICLE_NUMBER.match(article.title):
        fields["unnumbered"] = True  # the title starts like a number: do not read one back
    return [_bullet(line, fields)]


def _note(site: Site, rf: ReleaseFile, note: Note, resolve: Callable[[str], str]) -> list[str]:
    line = _continued(rf.nodes(note.text), resolve, indent=2)
    if note.summary:
        line += SEPARATOR + _continued(rf.nodes(note.summary), resolve, indent=2, line_start=False)
    fields: dict[str, AnnotationValue] = {}
    if note.module is not None:
        fields["module"] = note.module
    if note.page is not None:
        fields["page"] = note.page
    plain = inline.to_text(rf.nodes(note.text)).casefold()
    if any(plain.startswith(site.page.article_label.casefold() + c) for c in COLONS):
        fields["note"] = True  # it starts like an article's bullet: do not read it as one
    out = [_bullet(line, fields)]
    out += [f"  - {_continued(rf.nodes(detail), resolve, indent=4)}" for detail in note.details]
    if note.table is not None:
        header = " | ".join(
            plain_markdown(cell, in_table=True, line_start=False) for cell in note.table.header
        )
        out += ["", f"  | {header} |", "  |" + " --- |" * len(note.table.header)]
        for row in note.table.rows:
            cells = " | ".join(
                inline_markdown(rf.nodes(cell), resolve=resolve, in_table=True, line_start=False)
                for cell in row
            )
            out.append(f"  | {cells} |")
    return out


def _bullet(line: str, fields: dict[str, AnnotationValue]) -> str:
    annotation = f" {format_annotation(fields)}" if fields else ""
    return f"- {line}{annotation}"


def _paragraph(
    nodes: tuple[inline.Node, ...], resolve: Callable[[str], str], *, line_start: bool = True
) -> str:
    return inline_markdown(nodes, resolve=resolve, line_start=line_start)


def _continued(
    nodes: tuple[inline.Node, ...],
    resolve: Callable[[str], str],
    *,
    indent: int,
    line_start: bool = True,
) -> str:
    """Inline Markdown whose second and later lines are indented under their bullet."""
    markdown = _paragraph(nodes, resolve, line_start=line_start)
    return markdown.replace("\n", "\n" + " " * indent)


def _page_reference(site: Site) -> Callable[[str], str]:
    """Link targets as the page needs them.

    Absolute and root-relative references stay as written. A relative one
    ("cuda/x") means a page below the site's root, as in the feeds, but on
    the changelog page it would resolve against the page's own path: it
    becomes root-relative ("/AIInfraGuide/cuda/x").
    """
    root = site.url if site.url.endswith("/") else site.url + "/"

    def resolve(reference: str) -> str:
        if reference.startswith("/") or urlsplit(reference).scheme:
            return reference
        parts = urlsplit(urljoin(root, reference))
        return urlunsplit(("", "", parts.path, parts.query, parts.fragment))

    return resolve
