"""Reading a changelog page's inline Markdown back into entry nodes.

markdown-it-py (CommonMark) parses the page, so the importer sees what the site shows. The
original site also writes links with spaces in the target, which CommonMark refuses
(``[Lộ trình](/AIInfraGuide/guides/AI Infra学习路线)``): those are read as links too. What the
entries' inline syntax cannot carry (images, HTML, a broken link) is kept as text and reported.
Escaped characters stay separate tokens (``text_join`` is off), so that an escaped ``\\|`` or
``\\:`` is never taken for the page's own punctuation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

from ..source.inline import Code, Emphasis, Link, Node, Strong, Text, merged, to_text
from ..source.urls import check_reference
from .markdown import SPLIT

Warn = Callable[[int, str], None]
# A piece of an inline run: a markdown-it node, or plain (unescaped) text cut from a text node.
Piece = SyntaxTreeNode | str

_LENIENT_LINK = re.compile(r"\[([^\[\]\n]+)\]\(\s*<?([^()<>\n]+?)>?\s*\)")
_BROKEN_LINK = re.compile(r"\[[^\[\]\n]*\]\(")
_BREAKS = ("softbreak", "hardbreak")


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
    return piece if isinstance(piece, str) else piece.content if piece.type == "text" else None


def strip_edges(pieces: Sequence[Piece]) -> list[Piece]:
    """Drop white space (and soft breaks) at both ends of an inline run."""
    kept = [index for index, piece in enumerate(pieces) if not _blank(piece)]
    items = list(pieces[kept[0] : kept[-1] + 1]) if kept else []
    if items and (text := text_of(items[0])) is not None:
        items[0] = text.lstrip()
    if items and (text := text_of(items[-1])) is not None:
        items[-1] = text.rstrip()
    return items


def _blank(piece: Piece) -> bool:
    text = text_of(piece)
    breaks = isinstance(piece, SyntaxTreeNode) and piece.type in _BREAKS
    return breaks or (text is not None and not text.strip())


def split_at(pieces: Sequence[Piece], mark: str) -> tuple[list[Piece], list[Piece] | None]:
    """Split at the first unescaped ``mark`` outside any markup; None when there is none."""
    for index, piece in enumerate(pieces):
        text = text_of(piece)
        if text is not None and mark in text:
            before, _, after = text.partition(mark)
            return [*pieces[:index], before], [after, *pieces[index + 1 :]]
    return list(pieces), None


def read_nodes(pieces: Sequence[Piece], line: int, warn: Warn) -> tuple[Node, ...]:
    """Entry nodes for an inline run; what they cannot hold is kept as text and reported."""

    def run(pieces: Sequence[Piece]) -> tuple[Node, ...]:
        out: list[Node] = []
        texts: list[str] = []  # adjacent text, read at once: a link may span text nodes
        for piece in pieces:
            if isinstance(piece, str) or piece.type == "text":
                texts.append(piece if isinstance(piece, str) else piece.content)
            else:
                out += [*plain("".join(texts)), *node(piece)]
                texts.clear()
        out += plain("".join(texts))
        return tuple(found for found in merged(out) if found != Text(""))

    def node(node: SyntaxTreeNode) -> tuple[Node, ...]:
        kind, children = node.type, run(node.children)
        if kind == "code_inline":
            return (Code(node.content),)
        if kind in _BREAKS:
            return (Text("\n"),)
        if kind in ("em", "strong"):
            return ((Emphasis if kind == "em" else Strong)(children),)
        if kind == "link":
            href = str(node.attrs.get("href", ""))
            problem = check_reference(href)
            source = node  # the paragraph's Markdown as written, to tell "((/a))" from "(<(/a)>)"
            while source.parent is not None and source.type != "inline":
                source = source.parent
            # "[x]((/a))", a typo of the original site, would link to "…/(/a)".
            if href.startswith("(") and f"]({href})" in source.content:
                shown = f"[{to_text(children)}]({href})"
                warn(line, f"malformed link {shown!r} (two pairs of parentheses); its text is kept")
            elif problem is None:
                return (Link(children, href),)
            else:
                warn(line, f"link target '{href}' is refused ({problem}); its text is kept")
        elif kind == "image":
            warn(line, f"image '{to_text(children)}' is not imported; its text is kept")
        elif kind == "html_inline" and node.content == SPLIT:
            return ()  # the page writer's, between two characters
        elif kind == "html_inline":
            warn(line, f"inline HTML {node.content!r} is kept as text")
        elif kind != "text_special":  # an escaped character is its text
            warn(line, f"{kind} is not imported; its text is kept")
        return children if kind in ("link", "image") else (Text(node.content),)

    def plain(text: str) -> list[Node]:
        """Plain text, with the original site's links that have spaces in their targets."""
        out: list[Node] = []
        position = 0
        for found in _LENIENT_LINK.finditer(text):
            url = found.group(2).strip()
            if check_reference(url) is None:
                out += [Text(text[position : found.start()]), Link((Text(found.group(1)),), url)]
                position = found.end()
        out.append(Text(text[position:]))
        for part in out:  # what stays text: a link in it is broken
            for broken in _BROKEN_LINK.finditer(part.text if isinstance(part, Text) else ""):
                whole = _LENIENT_LINK.match(broken.string, broken.start())
                if whole is not None:
                    url = whole.group(2).strip()
                    problem = check_reference(url)
                    warn(line, f"link target '{url}' is refused ({problem}); kept as text")
                else:
                    snippet = broken.string[broken.start() : broken.start() + 80]
                    warn(line, f"malformed link {snippet!r} is kept as text")
        return out

    return run(pieces)
