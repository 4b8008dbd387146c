"""Read a changelog page in Markdown into releases, groups, articles and notes.

The page is the form ``changelog_page`` writes, or the original site's own:
``## 2026-11-07`` release headings, ``### <kind heading>`` headings, a context
line introducing a group, bullets (``-`` or ``*``) for articles ("**Bài:**
[6.1 Title](page) | summary", the label bold or not) and for notes (with
nested bullets as details and a table), ``---`` between releases. The
original style also introduces a group with a bullet whose nested bullets
are its articles, and attaches a table to the paragraph above it.

This module only reads structure and text, with the line of everything it
finds; ``page_import`` decides modules and ids and validates. Problems come
in two kinds: errors (an unknown heading, a bad date) stop the import;
warnings (a malformed link kept as text, a heading with nothing under it)
are reported and the rest is imported.
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from markdown_it.tree import SyntaxTreeNode

from ..errors import Problem
from ..source import inline
from ..source.models import Kind, Site
from .conventions import (
    ARTICLE_NUMBER,
    COLONS,
    SEPARATOR,
    Annotation,
    AnnotationError,
    parse_annotation,
    parse_release_heading,
)
from .markdown_reader import (
    Piece,
    markdown_parser,
    read_nodes,
    split_at,
    strip_edges,
    text_of,
)

Table = tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]  # header, rows


@dataclass
class PageArticle:
    line: int
    title: str
    number: str | None
    summary: str | None  # entry Markdown (inline.to_markdown)
    page: str | None
    annotation: Annotation | None


@dataclass
class PageNote:
    line: int
    text: str
    summary: str | None
    details: list[str]
    table: Table | None
    annotation: Annotation | None


@dataclass
class PageGroup:
    line: int
    kind: Kind
    annotation: Annotation | None  # None: only the visible text says what the group is
    context: str | None = None
    articles: list[PageArticle] = field(default_factory=list)
    notes: list[PageNote] = field(default_factory=list)
    follows: PageGroup | None = None  # the group it continues (an article after notes)

    @property
    def empty(self) -> bool:
        return not self.articles and not self.notes


@dataclass
class PageRelease:
    line: int
    day: dt.date
    sequence: int
    groups: list[PageGroup] = field(default_factory=list)


@dataclass
class ParsedPage:
    releases: list[PageRelease]
    errors: list[Problem]
    warnings: list[Problem]  # in the order of their lines


def read_page(text: str, source: str, site: Site) -> ParsedPage:
    """Read ``text`` (the page); ``source`` names it in problems."""
    lines = text.splitlines()
    root = SyntaxTreeNode(markdown_parser().parse(_blank_front_matter(lines)))
    reader = _Reader(source, site)
    reader.blocks(root.children)
    reader.finish()
    warnings = sorted(reader.warnings, key=lambda p: (p.line or 0, p.message))
    return ParsedPage(reader.releases, reader.errors, warnings)


def _blank_front_matter(lines: list[str]) -> str:
    """The page without its YAML front matter, which becomes blank lines (line numbers stay)."""
    if lines and lines[0].strip() == "---":
        for end in range(1, len(lines)):
            if lines[end].strip() in ("---", "..."):
                return "\n" * (end + 1) + "\n".join(lines[end + 1 :])
    return "\n".join(lines)


def _normalized(text: str) -> str:
    text = unicodedata.normalize("NFC", " ".join(text.split())).casefold()
    return text.rstrip("".join(COLONS)).rstrip()


def _line(node: SyntaxTreeNode) -> int:
    return node.map[0] + 1 if node.map else 0


def _inline(node: SyntaxTreeNode) -> SyntaxTreeNode | None:
    """The inline content of a paragraph, heading or table cell."""
    return next((child for child in node.children if child.type == "inline"), None)


class _Reader:
    def __init__(self, source: str, site: Site) -> None:
        self.source = source
        self.site = site
        self.kinds = {_normalized(label.heading): kind for kind, label in site.kinds.items()}
        self.label = _normalized(site.page.article_label)
        self.releases: list[PageRelease] = []
        self.errors: list[Problem] = []
        self.warnings: list[Problem] = []
        self.intro: list[tuple[int, str]] = []  # paragraphs above the first release
        self.release: PageRelease | None = None
        self.kind: Kind | None = None
        self.kind_line = 0
        self.kind_heading = ""
        self.kind_items = 0
        self.group: PageGroup | None = None
        self.skipping = False  # under a release heading already reported as an error
        self.skipping_kind = False  # under a kind heading already reported as an error
        self.seen_release = False
        self.days: dict[dt.date, list[tuple[int, int | None]]] = {}

    # -- problems ---------------------------------------------------------------

    def error(self, line: int, what: str, message: str) -> None:
        self.errors.append(Problem(self.source, what, message, line))

    def warn(self, line: int, message: str) -> None:
        self.warnings.append(Problem(self.source, "warning", message, line))

    # -- blocks -----------------------------------------------------------------

    def blocks(self, blocks: Sequence[SyntaxTreeNode]) -> None:
        index = 0
        while index < len(blocks):
            block = blocks[index]
            following = blocks[index + 1] if index + 1 < len(blocks) else None
            if block.type == "heading":
                self.heading(block)
            elif self.skipping or self.skipping_kind or block.type == "hr":
                pass
            elif block.type == "paragraph" and following is not None and following.type == "table":
                if self.in_kind(block):
                    self.table_note(block, following)
                index += 1
            elif block.type == "paragraph":
                self.paragraph(block)
            elif block.type in ("bullet_list", "ordered_list"):
                if self.in_kind(block):
                    for item in block.children:
                        self.item(item)
            elif block.type == "html_block":
                self.html_block(block)
            elif block.type == "table":
                self.warn(_line(block), "a table not under a note or a paragraph is not imported")
            else:
                self.warn(_line(block), f"{_described(block)} is not imported")
            index += 1

    def heading(self, node: SyntaxTreeNode) -> None:
        line = _line(node)
        content = _inline(node)
        text = inline.to_text(self.nodes(content.children if content else [], line))
        level = int(node.tag[1:])
        if level == 2:
            self.end_release()
            self.release_heading(text, line)
        elif level == 3:
            self.end_kind()
            if self.skipping:
                return
            if self.release is None:
                self.error(line, "heading", f"'{text}' comes before the first release heading")
                return
            kind = self.kinds.get(_normalized(text))
            if kind is None:
                known = ", ".join(f"'{label.heading}'" for label in self.site.kinds.values())
                self.error(
                    line,
                    "heading",
                    f"unknown change heading '{text}'; site.toml's kinds are {known}",
                )
                self.skipping_kind = True
                return
            self.kind, self.kind_line, self.kind_heading, self.kind_items = kind, line, text, 0
        elif level == 1 and not self.seen_release:
            return  # the page's title
        else:
            self.error(
                line,
                "heading",
                f"'{'#' * level} {text}' is neither a release (##) nor a change kind (###) heading",
            )

    def release_heading(self, text: str, line: int) -> None:
        self.seen_release = True
        self.skipping = False
        parsed = parse_release_heading(text)
        if parsed is None:
            self.error(
                line,
                "heading",
                f"'{text}' is not a release heading: write its date, '## 2026-11-07', "
                "or '## 2026-11-07 (2)' for the second release of a day",
            )
            self.skipping = True
            return
        date_text, sequence = parsed
        try:
            day = dt.date.fromisoformat(date_text)
        except ValueError:
            self.error(line, "heading", f"'{date_text}' is not a valid date")
            self.skipping = True
            return
        if sequence is not None and not 2 <= sequence <= 99:
            self.error(
                line,
                "heading",
                f"'{text}': number a day's later releases from (2) to (99); "
                f"the first is '## {date_text}'",
            )
            self.skipping = True
            return
        self.days.setdefault(day, []).append((line, sequence))
        self.release = PageRelease(line, day, sequence or 1)

    def in_kind(self, node: SyntaxTreeNode) -> bool:
        """True when ``node`` may hold changes: it stands under a kind heading."""
        if self.release is None:
            self.warn(_line(node), "text before the first release heading is not imported")
            return False
        if self.kind is None:
            if not self.skipping_kind:
                self.error(
                    _line(node),
                    "change",
                    "stands under no change kind heading: put it under a ### heading such as "
                    f"'{self.site.kinds['new'].heading}'",
                )
            return False
        return True

    def paragraph(self, node: SyntaxTreeNode) -> None:
        line = _line(node)
        content = _inline(node)
        markdown = self.markdown(content.children if content else [], line)
        if self.release is None:
            self.intro.append((line, markdown))
            return
        if not self.in_kind(node) or not markdown:
            return
        group = self.group
        if group is not None and group.empty and group.context is None:
            group.context = markdown  # the line under a group annotation
            return
        self.end_group()
        self.group = self.new_group(line, None, context=markdown)

    def html_block(self, node: SyntaxTreeNode) -> None:
        line = _line(node)
        try:
            annotation = parse_annotation(node.content)
        except AnnotationError as exc:
            self.error(line, "annotation", str(exc))
            return
        if annotation is None:
            self.warn(line, f"HTML {node.content.strip()[:60]!r} is not imported")
        elif not annotation.group:
            self.warn(line, "an item annotation must end its bullet's line; ignored")
        elif self.in_kind(node):
            self.end_group()
            self.group = self.new_group(line, annotation)

    def table_note(self, paragraph: SyntaxTreeNode, table: SyntaxTreeNode) -> None:
        """The original style: "Outline of part 3:" followed by a table, as one note."""
        line = _line(paragraph)
        content = _inline(paragraph)
        text = self.markdown(content.children if content else [], line)
        # The colon introduced the table, which the note now carries.
        text = text.rstrip("".join(COLONS)).rstrip()
        self.add_note(PageNote(line, text, None, [], self.table(table), None))

    # -- bullets ----------------------------------------------------------------

    def item(self, node: SyntaxTreeNode) -> None:
        line = _line(node)
        blocks = list(node.children)
        if not blocks or blocks[0].type != "paragraph":
            self.warn(line, "a bullet without text is not imported")
            return
        content = _inline(blocks[0])
        pieces = strip_edges(content.children if content else [])
        pieces, annotation = self.trailing_annotation(pieces, line)
        body = self.after_label(pieces)
        if annotation is not None and annotation.fields.get("note") is True:
            body = None
        if body is not None:
            self.article(body, annotation, blocks[1:], line)
        else:
            self.note(pieces, annotation, blocks[1:], line)

    def trailing_annotation(
        self, pieces: list[Piece], line: int
    ) -> tuple[list[Piece], Annotation | None]:
        last = pieces[-1] if pieces else None
        if not isinstance(last, SyntaxTreeNode) or last.type != "html_inline":
            return pieces, None
        try:
            annotation = parse_annotation(last.content)
        except AnnotationError as exc:
            self.error(line, "annotation", str(exc))
            return strip_edges(pieces[:-1]), None
        if annotation is None:
            return pieces, None
        if annotation.group:
            self.warn(line, "a group annotation must stand on its own line; ignored")
            return strip_edges(pieces[:-1]), None
        return strip_edges(pieces[:-1]), annotation

    def after_label(self, pieces: list[Piece]) -> list[Piece] | None:
        """The bullet without its "Bài:" label, or None when it has none (a note)."""
        if not pieces:
            return None
        first = pieces[0]
        if isinstance(first, SyntaxTreeNode) and first.type == "strong":
            strong = inline.to_text(self.nodes(first.children, 0, quiet=True))
            name = _normalized_label(strong).strip()
            rest = pieces[1:]
            if name in (self.label + colon for colon in COLONS):
                return rest
            following = text_of(rest[0]) if rest else None
            if name == self.label and following is not None:
                for colon in COLONS:
                    if following.lstrip().startswith(colon):
                        return [following.lstrip()[len(colon) :], *rest[1:]]
            return None
        text = text_of(first)
        if text is None:
            return None
        text = unicodedata.normalize("NFC", text)
        for colon in COLONS:
            prefix = self.label + colon
            if _normalized_label(text[: len(prefix)]) == prefix:
                return [text[len(prefix) :], *pieces[1:]]
        return None

    def is_article(self, node: SyntaxTreeNode) -> bool:
        blocks = list(node.children)
        if not blocks or blocks[0].type != "paragraph":
            return False
        content = _inline(blocks[0])
        return self.after_label(strip_edges(content.children if content else [])) is not None

    def article(
        self,
        body: list[Piece],
        annotation: Annotation | None,
        rest: Sequence[SyntaxTreeNode],
        line: int,
    ) -> None:
        head, tail = split_at(body, SEPARATOR.strip())
        nodes = self.nodes(strip_edges(head), line)
        page = None
        if len(nodes) == 1 and isinstance(nodes[0], inline.Link):
            page = nodes[0].url
            nodes = nodes[0].children
        elif any(isinstance(node, inline.Link) for node in nodes):
            self.warn(line, "a link inside an article's title is not imported; its text is kept")
        label = inline.to_text(nodes).replace("\n", " ").strip()
        number = None
        found = ARTICLE_NUMBER.match(label)
        if found and not (annotation and annotation.fields.get("unnumbered") is True):
            number, label = found.group(1), found.group(2)
        summary = self.markdown(strip_edges(tail), line) if tail is not None else None
        for block in rest:
            self.warn(_line(block), "content nested under an article is not imported")
        self.add_article(PageArticle(line, label, number, summary or None, page, annotation))

    def note(
        self,
        pieces: list[Piece],
        annotation: Annotation | None,
        rest: Sequence[SyntaxTreeNode],
        line: int,
    ) -> None:
        head, tail = split_at(pieces, SEPARATOR.strip())
        text = self.markdown(strip_edges(head), line)
        summary = self.markdown(strip_edges(tail), line) if tail is not None else None
        nested = [b for b in rest if b.type in ("bullet_list", "ordered_list")]
        if any(self.is_article(item) for block in nested for item in block.children):
            self.context_bullet(text, annotation, rest, line)
            return
        details: list[str] = []
        table: Table | None = None
        for block in rest:
            if block.type in ("bullet_list", "ordered_list"):
                details.extend(self.details(block))
            elif block.type == "table" and table is None:
                table = self.table(block)
            else:
                self.warn(_line(block), f"{_described(block)} in a bullet is not imported")
        self.add_note(PageNote(line, text, summary or None, details, table, annotation))

    def context_bullet(
        self,
        text: str,
        annotation: Annotation | None,
        rest: Sequence[SyntaxTreeNode],
        line: int,
    ) -> None:
        """The original style: a bullet that introduces the articles nested under it."""
        if annotation is not None:
            self.warn(line, "the annotation of a bullet that introduces a group is ignored")
        self.end_group()
        self.group = self.new_group(line, None, context=text)
        for block in rest:
            if block.type in ("bullet_list", "ordered_list"):
                for item in block.children:
                    self.item(item)
            else:
                self.warn(_line(block), f"{_described(block)} in a bullet is not imported")
        self.end_group()

    def details(self, block: SyntaxTreeNode) -> list[str]:
        found = []
        for item in block.children:
            blocks = list(item.children)
            if not blocks or blocks[0].type != "paragraph":
                self.warn(_line(item), "a bullet without text is not imported")
                continue
            content = _inline(blocks[0])
            detail = self.markdown(strip_edges(content.children if content else []), _line(item))
            if detail:
                found.append(detail)
            for nested in blocks[1:]:
                self.warn(_line(nested), "content nested under a detail is not imported")
        return found

    def table(self, node: SyntaxTreeNode) -> Table:
        header: tuple[str, ...] = ()
        rows: list[tuple[str, ...]] = []
        for part in node.children:
            for row in part.children:
                line = _line(row) or _line(part)
                cells = [_inline(cell) for cell in row.children]
                if part.type == "thead":
                    header = tuple(
                        inline.to_text(self.nodes(c.children if c else [], line)).strip()
                        for c in cells
                    )
                else:
                    rows.append(tuple(self.markdown(c.children if c else [], line) for c in cells))
        return header, tuple(rows)

    # -- groups -----------------------------------------------------------------

    def new_group(
        self,
        line: int,
        annotation: Annotation | None,
        *,
        context: str | None = None,
        follows: PageGroup | None = None,
    ) -> PageGroup:
        assert self.kind is not None
        return PageGroup(line, self.kind, annotation, context, follows=follows)

    def add_article(self, article: PageArticle) -> None:
        group = self.group or self.new_group(article.line, None)
        if group.notes:
            # A group lists its articles before its notes: keep the page's order
            # with a new group that continues this one.
            self.end_group()
            group = self.new_group(article.line, group.annotation, follows=group)
        group.articles.append(article)
        self.group = group
        self.kind_items += 1

    def add_note(self, note: PageNote) -> None:
        group = self.group or self.new_group(note.line, None)
        group.notes.append(note)
        self.group = group
        self.kind_items += 1

    def end_group(self) -> None:
        group, self.group = self.group, None
        if group is None:
            return
        if group.empty:
            what = f"'{group.context[:60]}'" if group.context else "the group annotation"
            self.warn(group.line, f"{what} has no changes under it; not imported")
            return
        assert self.release is not None
        self.release.groups.append(group)

    def end_kind(self) -> None:
        self.end_group()
        if self.kind is not None and self.kind_items == 0:
            self.warn(self.kind_line, f"heading '{self.kind_heading}' has no changes under it")
        self.kind = None
        self.kind_heading = ""
        self.skipping_kind = False

    def end_release(self) -> None:
        self.end_kind()
        release, self.release = self.release, None
        if release is None:
            return
        if not release.groups:
            self.warn(release.line, f"release {release.day} has no changes; no file is written")
            return
        self.releases.append(release)

    def finish(self) -> None:
        self.end_release()
        expected = self.site.page.intro
        for line, markdown in self.intro:
            if markdown != expected:
                self.warn(
                    line,
                    "text above the first release is not imported: the page's intro "
                    "belongs in site.toml [page] intro",
                )
            expected = None  # only the first paragraph can be the intro
        for day, headings in self.days.items():
            plain = [line for line, sequence in headings if sequence is None]
            if len(plain) > 1:
                self.error(
                    plain[1],
                    "heading",
                    f"a second '## {day}' heading (the first is on line {plain[0]}); the page "
                    f"lists releases newest first: write the upper one as '## {day} (2)'",
                )
            numbered = [sequence for _, sequence in headings if sequence is not None]
            for line, sequence in headings:
                if sequence is not None and numbered.count(sequence) > 1:
                    self.error(line, "heading", f"'## {day} ({sequence})' appears twice")

    # -- inline -----------------------------------------------------------------

    def nodes(
        self, pieces: Sequence[Piece], line: int, *, quiet: bool = False
    ) -> tuple[inline.Node, ...]:
        return read_nodes(pieces, line, (lambda _line, _message: None) if quiet else self.warn)

    def markdown(self, pieces: Sequence[Piece], line: int) -> str:
        """Entry Markdown for an inline run."""
        return inline.to_markdown(self.nodes(strip_edges(pieces), line)).strip()


def _normalized_label(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold()


def _described(block: SyntaxTreeNode) -> str:
    return block.type.replace("_", " ")  # "code_block" -> "code block"
