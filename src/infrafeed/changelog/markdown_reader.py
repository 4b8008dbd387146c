"""Reading a changelog page's inline Markdown back into entry nodes.

The page is parsed with markdown-it-py, a CommonMark implementation, so the
importer sees what the site shows: escapes, code spans, emphasis written with
``*`` or ``_``, links with ``<...>`` destinations. The original site's pages
also hold links that CommonMark does not accept, with spaces in the target
(``[Lộ trình](/AIInfraGuide/guides/AI Infra学习路线)``); those are read as links
too. What cannot be carried by the entries' small inline syntax (images, HTML,
a broken link) is kept as text and reported.

Escaped characters stay separate tokens (``text_join`` is off), so that an
escaped ``\\|`` or ``\\:`` is never taken for the page's own punctuation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

from ..source.inline import Code, Emphasis, Link, Node, Strong, Text, to_text
from ..source.urls import check_reference
from .markdown import SPLIT

Warn = Callable[[int, str], None]
# A piece of an inline run: a markdown-it node, or plain (unescaped) text cut from a text node.
Piece = SyntaxTreeNode | str

_LENIENT_LINK = re.compile(r"\[([^\[\]\n]+)\]\(\s*<?([^()<>\n]+?)>?\s*\)")
_BROKEN_LINK = re.compile(r"\[[^\[\]\n]*\]\(")


class _Parser(MarkdownIt):
    # Keep link targets as written (IRIs with CJK and spaces): the entries hold
    # them that way, and urls.absolute encodes them for the feeds.
    def normalizeLink(self, url: str) -> str:
        return url

    def normalizeLinkText(self, link: str) -> str:
        return link


def markdown_parser() -> MarkdownIt:
    """CommonMark with GFM tables and raw HTML (to see our annotations), escapes kept apart."""
    parser = _Parser("commonmark", {"html": True})
    parser.enable("table")
    parser.disable("text_join")
    return parser


def text_of(piece: Piece) -> str | None:
    """The plain text of a piece that is unescaped text, else None."""
    if isinstance(piece, str):
        return piece
    return piece.content if piece.type == "text" else None


def strip_edges(pieces: Sequence[Piece]) -> list[Piece]:
    """Drop white space (and soft breaks) at both ends of an inline run."""
    items = list(pieces)
    while items and _blank(items[0]):
        items.pop(0)
    while items and _blank(items[-1]):
        items.pop()
    if items and (text := text_of(items[0])) is not None:
        items[0] = text.lstrip()
    if items and (text := text_of(items[-1])) is not None:
        items[-1] = text.rstrip()
    return items


def _blank(piece: Piece) -> bool:
    text = text_of(piece)
    if text is not None:
        return not text.strip()
    return isinstance(piece, SyntaxTreeNode) and piece.type in ("softbreak", "hardbreak")


def split_at(pieces: Sequence[Piece], mark: str) -> tuple[list[Piece], list[Piece] | None]:
    """Split at the first unescaped ``mark`` outside any markup; None when there is none."""
    for index, piece in enumerate(pieces):
        text = text_of(piece)
        if text is None or mark not in text:
            continue
        cut = text.index(mark)
        head = [*pieces[:index], text[:cut]]
        tail = [text[cut + len(mark) :], *pieces[index + 1 :]]
        return head, tail
    return list(pieces), None


def read_nodes(pieces: Sequence[Piece], line: int, warn: Warn) -> tuple[Node, ...]:
    """Entry nodes for an inline run; what they cannot hold is kept as text and reported."""
    return tuple(_merge(_Reader(line, warn).pieces(pieces)))


class _Reader:
    def __init__(self, line: int, warn: Warn) -> None:
        self.line = line
        self.warn = warn

    def pieces(self, pieces: Sequence[Piece]) -> list[Node]:
        out: list[Node] = []
        run: list[str] = []
        for piece in pieces:
            text = text_of(piece)
            if text is not None:
                run.append(text)
                continue
            out.extend(self.plain("".join(run)))
            run.clear()
            assert isinstance(piece, SyntaxTreeNode)
            out.extend(self.node(piece))
        out.extend(self.plain("".join(run)))
        return out

    def node(self, node: SyntaxTreeNode) -> list[Node]:
        kind = node.type
        if kind == "text_special":
            return [Text(node.content)]
        if kind == "code_inline":
            return [Code(node.content)]
        if kind in ("softbreak", "hardbreak"):
            return [Text("\n")]
        if kind == "em":
            return [Emphasis(tuple(_merge(self.pieces(node.children))))]
        if kind == "strong":
            return [Strong(tuple(_merge(self.pieces(node.children))))]
        if kind == "link":
            children = tuple(_merge(self.pieces(node.children)))
            href = str(node.attrs.get("href", ""))
            problem = check_reference(href)
            if problem is not None:
                self.warn(
                    self.line, f"link target '{href}' is refused ({problem}); its text is kept"
                )
                return list(children)
            return [Link(children, href)]
        if kind == "image":
            alt = _merge(self.pieces(node.children))
            described = to_text(tuple(alt))
            self.warn(self.line, f"image '{described}' is not imported; its text is kept")
            return alt
        if kind == "html_inline" and node.content == SPLIT:
            return []  # the page writer's, between two characters
        if kind == "html_inline":
            self.warn(self.line, f"inline HTML {node.content!r} is kept as text")
            return [Text(node.content)]
        self.warn(self.line, f"{kind} is not imported; its text is kept")
        return [Text(node.content)]

    def plain(self, text: str) -> list[Node]:
        """Plain text, with the original site's links that have spaces in their targets."""
        out: list[Node] = []
        kept: list[str] = []  # the parts that stay text, checked for broken links below
        position = 0
        for found in _LENIENT_LINK.finditer(text):
            if check_reference(found.group(2).strip()) is not None:
                continue
            kept.append(text[position : found.start()])
            out.append(Text(kept[-1]))
            out.append(Link((Text(found.group(1)),), found.group(2).strip()))
            position = found.end()
        kept.append(text[position:])
        out.append(Text(kept[-1]))
        for part in kept:
            for broken in _BROKEN_LINK.finditer(part):
                self.broken(part, broken.start())
        return out

    def broken(self, text: str, start: int) -> None:
        whole = _LENIENT_LINK.match(text, start)
        if whole is not None:
            url = whole.group(2).strip()
            problem = check_reference(url)
            self.warn(self.line, f"link target '{url}' is refused ({problem}); kept as text")
        else:
            snippet = text[start : start + 80]
            self.warn(self.line, f"malformed link {snippet!r} is kept as text")


def _merge(nodes: Sequence[Node]) -> list[Node]:
    merged: list[Node] = []
    for node in nodes:
        if isinstance(node, Text) and not node.text:
            continue
        if isinstance(node, Text) and merged and isinstance(merged[-1], Text):
            merged[-1] = Text(merged[-1].text + node.text)
        else:
            merged.append(node)
    return merged
