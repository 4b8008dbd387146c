"""Read a changelog page (the one ``infrafeed build`` writes, or a site's own in that form or
the original site's) into releases, groups and items with their lines: only structure and text,
``mapping`` decides modules and ids. Errors stop the import; warnings are reported.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from markdown_it.tree import SyntaxTreeNode

from ..errors import Problem, reads
from ..source import inline
from ..source.models import COLONS, Kind, Site, fold_heading
from .conventions import (
    ARTICLE_NUMBER,
    HEADINGS,
    SEPARATOR,
    AnnotationValue,
    article_starts,
    folded,
    parse_annotation,
    parse_release_heading,
)
from .markdown import (
    Piece,
    entry_markdown,
    markdown_parser,
    read_nodes,
    split_at,
    strip_edges,
    text_of,
)

Fields = dict[str, AnnotationValue]
Blocks = Sequence[SyntaxTreeNode]  # a page's blocks, or those of a bullet
_SECOND = (
    "a second '## {0}' heading (the first is on line {1}); the page lists releases newest "
    "first: write the upper one as '## {0} (2)'"
)
_LISTS = ("bullet_list", "ordered_list")
_OURS = re.compile(r"<!--\s*infrafeed\b")
_MISPLACED = (
    "an infrafeed annotation stands at the end of its bullet's text (an item's) or on a line "
    "of its own (a group's), where infrafeed writes it; move it there"
)
# What an annotation may hold, and of which type.
_KEYS: dict[str, dict[str, type]] = {
    "group": {"module": int, "chapter": int},
    "article": {"id": str, "module": int, "chapter": int, "unnumbered": bool},
    "note": {"id": str, "module": int, "title": str, "page": str, "note": bool},
}


@dataclass
class PageItem:
    line: int
    fields: Fields  # of its annotation
    data: dict[str, Any]  # the model's fields the page shows; texts in entry Markdown


@dataclass
class PageGroup:
    line: int
    kind: Kind
    fields: Fields | None  # None: no annotation, only the visible text says what it is
    context: str | None = None
    articles: list[PageItem] = field(default_factory=list)
    notes: list[PageItem] = field(default_factory=list)
    follows: PageGroup | None = None  # the group it continues (an article after notes)


@dataclass
class PageRelease:
    line: int
    day: dt.date
    sequence: int
    groups: list[PageGroup] = field(default_factory=list)


class ParsedPage(NamedTuple):
    releases: list[PageRelease]
    errors: list[Problem]
    warnings: list[Problem]  # in the order of their lines


def read_page(text: str, source: str, site: Site) -> ParsedPage:
    """Read ``text`` (the page); ``source`` names it in problems."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")  # as CommonMark's lines
    if lines[0].strip() == "---":  # front matter: blank lines keep the line numbers
        end = next((n for n in range(1, len(lines)) if lines[n].strip() in ("---", "...")), -1)
        lines[: end + 1] = [""] * (end + 1)
    reader = _Reader(source, site)
    root = SyntaxTreeNode(markdown_parser().parse("\n".join(lines)))
    for line in _misplaced(root):
        reader.error(line, "annotation", _MISPLACED)
    reader.blocks(root.children)
    reader.end_release()
    warnings = sorted(reader.warnings, key=lambda p: (p.line or 0, p.message))
    return ParsedPage(reader.releases, reader.errors, warnings)


def _line(node: SyntaxTreeNode) -> int:
    while node.map is None and node.parent is not None:  # inline nodes: their block's line
        node = node.parent
    return node.map[0] + 1 if node.map else 0


def _misplaced(root: SyntaxTreeNode) -> Iterator[int]:
    """The lines of annotations where the page writer never puts them: what they carry (an id)
    would be lost, or shown as text."""
    for node in root.walk():
        if node.type not in ("html_block", "html_inline") or not _OURS.search(node.content):
            continue
        alone = node.type == "html_block" and node.parent is root
        try:
            annotation = parse_annotation(node.content)  # None: more HTML than an annotation
            fits = annotation is not None and (alone if annotation.group else _ends_bullet(node))
        except ValueError:  # unreadable: the reader says so where an annotation may stand
            fits = alone or _ends_bullet(node)
        if not fits:
            yield _line(node)


def _ends_bullet(node: SyntaxTreeNode) -> bool:
    """Whether ``node`` is the last thing in the text of a bullet's first paragraph."""
    paragraph = node.parent.parent if node.parent is not None else None
    bullet = paragraph.parent if paragraph is not None else None
    return (
        bullet is not None
        and bullet.type == "list_item"
        and bullet.children[0] is paragraph
        and strip_edges(_inline(paragraph))[-1:] == [node]
    )


def _inline(node: SyntaxTreeNode | None) -> list[SyntaxTreeNode]:
    """The inline content of a paragraph, heading or table cell."""
    content = next((c for c in node.children if c.type == "inline"), None) if node else None
    return list(content.children) if content else []


class _Reader:
    def __init__(self, source: str, site: Site) -> None:
        self.source, self.site = source, site
        named = {kind: (label.heading, *label.headings) for kind, label in site.kinds.items()}
        headings = [*HEADINGS.items(), *named.items()]  # the site's win where both name one
        self.kinds = {fold_heading(name): kind for kind, names in headings for name in names}
        self.labels = article_starts(site.page.article_label)
        self.releases: list[PageRelease] = []
        self.errors: list[Problem] = []
        self.warnings: list[Problem] = []
        self.intro = False  # a paragraph above the first release was seen
        self.release: PageRelease | None = None
        self.kind: tuple[Kind, int, str] | None = None  # of the heading: kind, line, text
        self.items = 0  # changes under the kind heading
        self.group: PageGroup | None = None
        self.skip = 0  # 2 under a release heading reported as an error, 3 a kind heading
        self.started = False  # a release heading was seen
        self.days: dict[tuple[dt.date, int | None], int] = {}  # line of each release heading

    def error(self, line: int, what: str, message: str) -> None:
        self.errors.append(Problem(self.source, what, message, line))

    def warn(self, line: int, message: str) -> None:
        self.warnings.append(Problem(self.source, "warning", message, line))

    def blocks(self, blocks: Blocks) -> None:
        taken = None  # a table read with the paragraph above it
        for block, following in zip(blocks, [*blocks[1:], None], strict=False):  # [] gives no pair
            line = _line(block)
            if block.type == "heading":
                self.heading(block, line)
            elif self.skip or block.type == "hr" or block is taken:
                pass
            elif block.type == "paragraph" and following is not None and following.type == "table":
                taken = following
                if self.in_kind(line):
                    # The colon introduced the table, which the note now carries.
                    text = self.markdown(_inline(block), line).rstrip("".join(COLONS)).rstrip()
                    self.add(line, {}, {"text": text, "table": self.table(following)}, note=True)
            elif block.type == "paragraph":
                self.paragraph(block, line)
            elif block.type in _LISTS:
                if self.in_kind(line):
                    for item in block.children:
                        self.item(item)
            elif block.type == "html_block":
                self.html_block(block, line)
            elif block.type == "table":
                self.warn(line, "a table not under a note or a paragraph is not imported")
            else:
                self.warn(line, f"{block.type.replace('_', ' ')} is not imported")  # "code block"

    def heading(self, node: SyntaxTreeNode, line: int) -> None:
        level = int(node.tag[1:])
        # A setext heading ("text" over "---") may span lines: its messages must not.
        text = inline.to_text(read_nodes(_inline(node), line, self.warn)).replace("\n", " ")
        if level == 2:
            self.end_release()
            self.started, self.skip = True, 0
            try:
                day, sequence = parse_release_heading(text)
            except ValueError as exc:
                self.error(line, "heading", str(exc))
                self.skip = 2
                return
            first = self.days.setdefault((day, sequence), line)
            if first != line:
                twice = f"'## {day} ({sequence})' appears twice"
                self.error(line, "heading", twice if sequence else _SECOND.format(day, first))
            self.release = PageRelease(line, day, sequence or 1)
        elif level == 3:
            self.end_kind()
            if self.skip == 2:
                return
            self.skip = 0
            kind = self.kinds.get(fold_heading(text))
            if self.release is None:
                self.error(line, "heading", f"'{text}' comes before the first release heading")
            elif kind is None:
                known = ", ".join(f"'{label.heading}'" for label in self.site.kinds.values())
                message = f"unknown change heading '{text}'; site.toml's kinds are {known}"
                example = f'e.g. [kinds.new] headings = ["{text}"]'
                self.error(line, "heading", f"{message}, and each may name more ({example})")
                self.skip = 3
            else:
                self.kind, self.items = (kind, line, text), 0
        elif level == 1 and reads(parse_release_heading, text):  # a release's date: no title
            self.error(line, "heading", f"'# {text}': a release heading is '## {text}'")
        elif level != 1 or self.started:  # a level-1 heading above the releases is the title
            neither = "is neither a release (##) nor a change kind (###) heading"
            self.error(line, "heading", f"'{'#' * level} {text}' {neither}")

    def in_kind(self, line: int) -> bool:
        """True when what starts on ``line`` may hold changes: it stands under a kind heading."""
        if self.release is None:
            self.warn(line, "text before the first release heading is not imported")
        elif self.kind is None:
            such_as = f"put it under a ### heading such as '{self.site.kinds['new'].heading}'"
            self.error(line, "change", f"stands under no change kind heading: {such_as}")
        return self.kind is not None

    def paragraph(self, node: SyntaxTreeNode, line: int) -> None:
        markdown = self.markdown(_inline(node), line)
        group = self.group
        if self.release is None:
            # Only the first paragraph can be the intro; its links are as the page resolved them.
            intro = self.site.page.intro
            if self.intro or intro is None or inline.plain(markdown) != inline.plain(intro):
                intro = "the page's intro belongs in site.toml [page] intro"
                self.warn(line, f"text above the first release is not imported: {intro}")
            self.intro = True
        elif not self.in_kind(line) or not markdown:
            return
        elif group and not group.articles and not group.notes and group.context is None:
            group.context = markdown  # the line under a group annotation
        else:
            self.new_group(line, None, markdown)

    def html_block(self, node: SyntaxTreeNode, line: int) -> None:
        try:
            annotation = parse_annotation(node.content)
        except ValueError as exc:
            self.error(line, "annotation", str(exc))
            return
        if annotation is None:
            self.warn(line, f"HTML {node.content.strip()[:60]!r} is not imported")
        elif annotation.group and self.in_kind(line):  # an item's here: _misplaced says so
            self.new_group(line, self.checked(annotation.fields, "group", line))

    def checked(self, fields: Fields, what: str, line: int) -> Fields:
        """The fields of an annotation that ``what`` may hold; an error for each other one."""
        allowed = _KEYS[what]
        for key, value in fields.items():
            if key not in allowed:
                keys = ", ".join(sorted(allowed))
                self.error(line, "annotation", f"unknown key '{key}'; here it may hold {keys}")
            elif type(value) is not allowed[key]:
                expected = {int: "a whole number", bool: "true", str: "a quoted text"}[allowed[key]]
                self.error(line, "annotation", f"{key} must be {expected}, not {value!r}")
        return {key: value for key, value in fields.items() if type(value) is allowed.get(key)}

    def item(self, node: SyntaxTreeNode, *, linked: bool = False) -> None:
        """A bullet: an article when labelled, or ``linked`` and a link; else a note."""
        line, blocks = _line(node), node.children
        if not self.has_text(node):
            return
        pieces, fields = self.annotated(strip_edges(_inline(blocks[0])), line)
        body = None if fields and fields.get("note") is True else self.after_label(pieces)
        if body is None and linked and fields is None and self.article_like(node, linked=True):
            body = pieces
        nested = [item for block in blocks[1:] if block.type in _LISTS for item in block.children]
        if body is not None and nested and not strip_edges(body):  # "**Bài:**" over links
            body = None if all(self.article_like(i, linked=True) for i in nested) else body
        if body is not None:
            self.article(body, fields or {}, blocks[1:], line)
        else:
            self.note(pieces, fields, blocks[1:], line)

    def annotated(self, pieces: list[Piece], line: int) -> tuple[list[Piece], Fields | None]:
        """A bullet's text without the annotation at its end, and its fields (None: none)."""
        last = pieces[-1] if pieces else None
        if not isinstance(last, SyntaxTreeNode) or last.type != "html_inline":
            return pieces, None
        try:
            annotation = parse_annotation(last.content)
        except ValueError as exc:
            self.error(line, "annotation", str(exc))
            return strip_edges(pieces[:-1]), None
        if annotation is None:
            return pieces, None
        return strip_edges(pieces[:-1]), None if annotation.group else annotation.fields

    def after_label(self, pieces: list[Piece]) -> list[Piece] | None:
        """The bullet without its "Bài:" label, or None when it has none (a note)."""
        first, rest = (pieces[0], pieces[1:]) if pieces else ("", [])
        if isinstance(first, SyntaxTreeNode) and first.type == "strong":
            name = folded(inline.to_text(read_nodes(first.children, 0, lambda *_: None)).strip())
            after = (text_of(rest[0]) or "") if rest else ""  # "**Bài** :" is no label to the page
            if name in self.labels:  # "**Bài:**"
                return rest
            return [after[1:], *rest[1:]] if name + after[:1] in self.labels else None  # "**Bài**:"
        text = unicodedata.normalize("NFC", text_of(first) or "")
        label = next((label for label in self.labels if folded(text[: len(label)]) == label), None)
        return None if label is None else [text[len(label) :], *rest]

    def article(self, body: list[Piece], fields: Fields, rest: Blocks, line: int) -> None:
        head, tail = split_at(body, SEPARATOR)
        nodes = read_nodes(strip_edges(head), line, self.warn, self.site.changelog)
        page = None
        if len(nodes) == 1 and isinstance(nodes[0], inline.Link):
            page, nodes = nodes[0].url, nodes[0].children
        elif any(isinstance(node, inline.Link) for node in nodes):
            self.warn(line, "a link inside an article's title is not imported; its text is kept")
        title = inline.to_text(nodes).replace("\n", " ").strip()
        number, found = None, ARTICLE_NUMBER.match(title)
        if found and fields.get("unnumbered") is not True:
            number, title = found.groups()
        for block in rest:
            self.warn(_line(block), "content nested under an article is not imported")
        summary = self.markdown(tail, line) or None
        data = {"title": title, "number": number, "summary": summary, "page": page}
        self.add(line, self.checked(fields, "article", line), data, note=False)

    def note(self, pieces: list[Piece], fields: Fields | None, rest: Blocks, line: int) -> None:
        head, tail = split_at(pieces, SEPARATOR)
        text = self.markdown(head, line)
        nested = [item for block in rest if block.type in _LISTS for item in block.children]
        # The original style: a bullet introducing the articles nested under it, when some have
        # the article label, or it is only a label ("**Transformer 系列文章**：") and each a link.
        label = tail is None and inline.plain(text).rstrip()[-1:] in COLONS  # "**文章：**" too
        linked = label and all(self.article_like(item, linked=True) for item in nested)
        labelled = any(map(self.article_like, nested))
        context = fields is None and bool(nested) and (linked or labelled)
        if context:  # the article label alone says nothing about the group
            self.new_group(line, None, None if self.after_label(head) is not None else text)
        details: list[str] = []
        table: dict[str, Any] | None = None
        for block in rest:
            if block.type in _LISTS and context:
                for item in block.children:
                    self.item(item, linked=linked)
            elif block.type in _LISTS:
                for item in block.children:
                    if self.has_text(item):
                        first = strip_edges(_inline(item.children[0]))
                        detail, own = self.annotated(first, _line(item))
                        if own is not None:  # a detail is no item
                            self.error(_line(item), "annotation", _MISPLACED)
                        details.append(self.markdown(detail, _line(item)))
                    for deeper in item.children[1:]:
                        self.warn(_line(deeper), "content nested under a detail is not imported")
            elif block.type == "table" and table is None and not context:
                table = self.table(block)
            else:
                what = block.type.replace("_", " ")
                self.warn(_line(block), f"{what} in a bullet is not imported")
        if context:
            self.end_group()
        else:
            details = [detail for detail in details if detail]
            summary = self.markdown(tail, line) or None
            data = {"text": text, "summary": summary, "details": tuple(details), "table": table}
            self.add(line, self.checked(fields or {}, "note", line), data, note=True)

    def article_like(self, item: SyntaxTreeNode, *, linked: bool = False) -> bool:
        """A bullet with the article label or, when ``linked``, one whose title is a link."""
        first = item.children[0] if item.children else None
        pieces = strip_edges(_inline(first if first and first.type == "paragraph" else None))
        head = split_at(pieces, SEPARATOR)[0]
        nodes = read_nodes(strip_edges(head), 0, lambda *_: None)
        link = len(nodes) == 1 and isinstance(nodes[0], inline.Link)
        return self.after_label(pieces) is not None or (linked and link)

    def has_text(self, item: SyntaxTreeNode) -> bool:
        if item.children and item.children[0].type == "paragraph":
            return True
        self.warn(_line(item), "a bullet without text is not imported")
        return False

    def table(self, node: SyntaxTreeNode) -> dict[str, tuple[Any, ...]]:
        header: tuple[str, ...] = ()
        rows = []
        for part in node.children:
            for row in part.children:
                line = _line(row)
                if part.type == "thead":
                    cells = (read_nodes(_inline(c), line, self.warn) for c in row.children)
                    header = tuple(inline.to_text(cell).strip() for cell in cells)
                else:
                    rows.append(tuple(self.markdown(_inline(c), line) for c in row.children))
        return {"header": header, "rows": tuple(rows)}

    def new_group(self, line: int, fields: Fields | None, context: str | None = None) -> PageGroup:
        self.end_group()
        assert self.kind is not None
        self.group = PageGroup(line, self.kind[0], fields, context)
        return self.group

    def add(self, line: int, fields: Fields, data: dict[str, Any], *, note: bool) -> None:
        group = self.group or self.new_group(line, None)
        if group.notes and not note:
            # A group lists its articles first: a new group that continues it keeps the order.
            previous, group = group, self.new_group(line, group.fields)
            group.follows = previous
        (group.notes if note else group.articles).append(PageItem(line, fields, data))
        self.items += 1

    def end_group(self) -> None:
        group, self.group = self.group, None
        if group is not None and (group.articles or group.notes):
            assert self.release is not None
            self.release.groups.append(group)
        elif group is not None:
            what = f"'{group.context[:60]}'" if group.context else "the group annotation"
            self.warn(group.line, f"{what} has no changes under it; not imported")

    def end_kind(self) -> None:
        self.end_group()
        if self.kind is not None and self.items == 0:
            self.warn(self.kind[1], f"heading '{self.kind[2]}' has no changes under it")
        self.kind = None

    def end_release(self) -> None:
        self.end_kind()
        release, self.release = self.release, None
        if release is not None and not release.groups:
            self.warn(release.line, f"release {release.day} has no changes; no file is written")
        elif release is not None:
            self.releases.append(release)

    def markdown(self, pieces: Sequence[Piece] | None, line: int) -> str:
        """Entry Markdown for an inline run; none (no summary) is empty."""
        nodes = read_nodes(strip_edges(pieces or ()), line, self.warn, self.site.changelog)
        return entry_markdown(nodes).strip()
