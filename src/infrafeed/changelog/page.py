"""The site's changelog page, a Markdown blog post written from the entries (one source for
page and feeds), annotated (see ``conventions``) so that ``infrafeed import`` reads it back."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Sequence
from functools import partial

from ..source import inline
from ..source.loader import ReleaseFile
from ..source.models import Article, Group, Note, Site
from ..source.urls import site_path
from .conventions import (
    ARTICLE_NUMBER,
    SEPARATOR,
    AnnotationValue,
    article_starts,
    folded,
    format_annotation,
    release_heading,
)
from .markdown import inline_markdown, link_destination, plain_markdown

# JSON strings are YAML double-quoted scalars: safe for any text.
_yaml_string = partial(json.dumps, ensure_ascii=False)
_CLOSING_HASHES = re.compile(r"(^|[ \t])(#+)$")


def assemble_page(site: Site, sections: Sequence[bytes], oldest: dt.date | None) -> list[bytes]:
    """The page around ``sections`` (UTF-8, newest release first); ``oldest`` release's date.
    As chunks to write one after another: a large site's page is never copied whole."""
    settings = site.page
    head = [
        "---",
        f"title: {_yaml_string(settings.title or site.title)}",
        f"description: {_yaml_string(settings.description or site.description)}",
        f"pubDate: {(settings.pub_date or oldest or site.ids.date).isoformat()}",
        f"tags: [{', '.join(_yaml_string(tag) for tag in settings.tags)}]",
        "---",
        "",
    ]
    if settings.intro:
        head += [inline_markdown(inline.parse(settings.intro), resolve=_page_reference(site)), ""]
    chunks = [("\n".join(head) + "\n").encode()]
    for section in sections:
        chunks += [b"\n---\n\n", section] if len(chunks) > 1 else [section]
    chunks[-1] = chunks[-1].rstrip(b"\n") + b"\n"  # one newline at the end, however many
    return chunks


def release_section(site: Site, rf: ReleaseFile) -> str:
    """The Markdown of one release: its heading, its groups and their bullets, then a newline."""
    section = _Section(site)
    out = [f"## {release_heading(rf.date, rf.sequence)}", ""]
    groups = rf.release.groups
    for index, group in enumerate(groups):
        out += section.group(group, index == 0 or groups[index - 1].kind != group.kind)
    return "\n".join(out)


class _Section:
    """Writes the groups of one release; what its bullets share is worked out once."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.resolve = _page_reference(site)
        self.article_label = plain_markdown(site.page.article_label)
        self.starts = article_starts(site.page.article_label)

    def group(self, group: Group, new_kind: bool) -> list[str]:
        out: list[str] = []
        if new_kind:
            heading = plain_markdown(self.site.kinds[group.kind].heading, line_start=False)
            # A run of "#" at its end would close the heading and be dropped: escaped.
            out += ["### " + _CLOSING_HASHES.sub(r"\1\\\2", heading), ""]
        # Every group is annotated: that marks where it starts, and that import infers nothing.
        out += [format_annotation(_fields(group, "module", "chapter"), group=True), ""]
        if group.context:
            out += [self.markdown(group.context), ""]
        for bullet in [*map(self.article, group.articles), *map(self.note, group.notes)]:
            if out[-1].startswith("  |"):
                out.append("")  # a table ends at a blank line
            out += bullet
        return [*out, ""]

    def article(self, article: Article) -> list[str]:
        label = f"{article.number} {article.title}" if article.number else article.title
        head = plain_markdown(label, line_start=False)
        if article.page is not None:
            head = f"[{head}]({link_destination(self.resolve(article.page))})"
        line = f"**{self.article_label}:** {head}"
        if article.summary:
            line += SEPARATOR + self.markdown(article.summary, 2, line_start=False)
        # A title that starts like a number is "unnumbered": no number is read back.
        unnumbered = article.number is None and ARTICLE_NUMBER.match(article.title) is not None
        fields = _fields(article, "id", "module", "chapter", unnumbered=unnumbered)
        return [f"- {line} {format_annotation(fields)}"]

    def note(self, note: Note) -> list[str]:
        line = self.markdown(note.text, 2)
        if note.summary:
            line += SEPARATOR + self.markdown(note.summary, 2, line_start=False)
        # A note that starts like an article's bullet says it is a note.
        like_article = folded(inline.plain(note.text)).startswith(self.starts)
        fields = _fields(note, "id", "module", "title", "page", note=like_article)
        out = [f"- {line} {format_annotation(fields)}"]
        out += [f"  - {self.markdown(detail, 4)}" for detail in note.details]
        if (table := note.table) is not None:
            cell = partial(self.markdown, in_table=True, line_start=False)
            head = [plain_markdown(text, in_table=True, line_start=False) for text in table.header]
            rows = ([cell(text) for text in row] for row in table.rows)
            out += ["", *(f"  | {' | '.join(row)} |" for row in (head, ["---"] * len(head), *rows))]
        return out

    def markdown(self, text: str, indent: int = 0, **options: bool) -> str:
        """Inline Markdown of an entry text, its later lines indented under their bullet."""
        markdown = inline_markdown(inline.parse(text), resolve=self.resolve, **options)
        return markdown.replace("\n", "\n" + " " * indent)


def _fields(model: Article | Note | Group, *names: str, **more: bool) -> dict[str, AnnotationValue]:
    """The annotation of ``model``: its fields ``names`` that are set, then ``more`` that hold."""
    found = {name: getattr(model, name) for name in names} | more
    return {key: value for key, value in found.items() if value is not None and value is not False}


def _page_reference(site: Site) -> Callable[[str], str]:
    """Link targets as the page needs them: a relative one ("cuda/x") means a page below the
    site's root, as in the feeds: "/AIInfraGuide/cuda/x"; others stay as written."""
    return partial(site_path, site.url if site.url.endswith("/") else site.url + "/")
