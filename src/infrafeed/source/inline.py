"""The inline Markdown of entry text: CommonMark, read by markdown-it-py, in a subset.

Code spans, emphasis and strong (``*`` or ``_``, as CommonMark reads them: ``block_table`` is
never emphasis), links and autolinks, backslash escapes and entities. Raw HTML is off, so any
HTML in the text is text, escaped by every renderer. What the feeds cannot carry, or would show
otherwise than the changelog page (images, strike-through, headings, lists, quotes, code blocks,
reference links), is a :class:`MarkupError` that says what to write instead. The site renders the
page with CommonMark too, so a feed item shows what the page shows.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from markdown_it import MarkdownIt
from markdown_it.token import Token

from .urls import check_reference


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Code:
    code: str


@dataclass(frozen=True)
class Emphasis:
    children: tuple[Node, ...]


@dataclass(frozen=True)
class Strong:
    children: tuple[Node, ...]


@dataclass(frozen=True)
class Link:
    children: tuple[Node, ...]
    url: str


Node = Text | Code | Emphasis | Strong | Link
_T = TypeVar("_T")


class MarkupError(ValueError):
    """Markup an entry text may not hold, or a link whose target is not allowed."""


class _Reader(MarkdownIt):
    # Link targets as written (IRIs with CJK and spaces): the entries hold them that way and
    # urls.absolute encodes them for the feeds. Every target is judged by check_reference,
    # which says why one is refused, where markdown-it would quietly show it as text.
    def normalizeLink(self, url: str) -> str:
        return url

    def normalizeLinkText(self, link: str) -> str:
        return link

    def validateLink(self, url: str) -> bool:
        return True


# Strike-through is read only to be refused: the site's GFM would strike it, the feeds not.
# Escapes stay tokens of their own (no text_join), so "\]\[" is never taken for a reference.
_READER = _Reader("commonmark", {"html": False, "maxNesting": 20})
MAX_DEPTH = 16  # of spans in spans: no entry needs more
_READER.enable("strikethrough").disable("text_join")

# Nothing else makes a text markup: most texts are read in one regex scan, not a parse.
_MAY_BE_MARKUP = re.compile(r"[\\`*_\[\]<&~\n\r]|^[ \t]*(?:[#>+=-]|[0-9]+[.)])|^(?:\t| {4})")
_REFERENCE = re.compile(r"\[[^\]]*\]\[[^\]]*\]")  # "[text][label]" or "[text][]"

# What each block the text may not hold is, and how to show its first character as text.
_BLOCKS = {
    "heading_open": "a heading",
    "bullet_list_open": "a list",
    "ordered_list_open": "a numbered list",
    "blockquote_open": "a quote",
    "code_block": "a code block (four spaces of indent)",
    "fence": "a code block (a fence of ``` or ~~~)",
    "hr": "a horizontal rule",
}


# Validation, each feed's items and the page read the same texts: each is parsed once.
@functools.cache
def parse(source: str) -> tuple[Node, ...]:
    """The nodes of an entry text; :class:`MarkupError` for what the subset does not allow."""
    if _MAY_BE_MARKUP.search(source) is None:
        return (Text(source),) if source else ()
    env: dict[str, object] = {}
    tokens = _READER.parse(source, env)
    if env.get("references"):
        raise MarkupError(
            "holds a reference definition ('[label]: url' on a line of its own), which the "
            "feeds do not carry: write the link inline, as [text](url)"
        )
    out: list[Node] = []
    for token in tokens:
        if token.type in _BLOCKS:
            line = source.splitlines()[token.map[0] if token.map else 0].strip()
            raise MarkupError(
                f"'{line[:40]}' makes {_BLOCKS[token.type]}, which an entry text cannot hold: "
                f"write a backslash before its first character ('\\{line[:1]}') to show it as text"
            )
        if token.type == "inline":
            if out:  # a blank line between paragraphs
                out.append(Text("\n\n"))
            out += _nodes(token.children or [])
    return tuple(merged(out))


def _not_a_link(text: str) -> None:
    """Refuse what was meant as a link and that CommonMark, and so the page, shows as text."""
    if found := _REFERENCE.search(text):
        raise MarkupError(
            f"'{found.group()}' is a reference link, which an entry text cannot hold: "
            "write the target inline, as [text](url)"
        )
    if (start := text.find("](")) >= 0:
        raise MarkupError(
            f"'{text[max(text.rfind('[', 0, start), 0) : start + 40]}' is no link in CommonMark, "
            "so the page shows it as text: write a target with spaces in <> ([text](<a b>)), "
            "pair its parentheses, or write '\\](' to show it as text"
        )


def _nodes(tokens: list[Token]) -> list[Node]:
    """The nodes of one paragraph's inline tokens. Spans nested deeper than MAX_DEPTH (emphasis,
    which markdown-it nests without a bound) are text: Python's recursion stays bounded."""
    spans: list[tuple[Token | None, list[Node]]] = [(None, [])]  # each open span, its children
    for token in tokens:
        kind, out = token.type, spans[-1][1]
        if kind in ("text", "text_special"):
            if kind == "text":
                _not_a_link(token.content)
            # The text has neither (models.py): an entity made it, of a character XML forbids.
            if "\ufffd" in token.content or "\x0c" in token.content:
                raise MarkupError(
                    f"'{token.markup}' names no character a feed may carry: remove it"
                )
            if token.content:  # delimiters that stayed text leave empty ones
                out.append(Text(token.content))
        elif kind in ("softbreak", "hardbreak"):
            out.append(Text("\n"))
        elif kind == "code_inline":
            out.append(Code(token.content))
        elif kind in ("em_open", "strong_open", "link_open"):
            if kind == "link_open":
                _allowed_link(token)
            spans.append((token, []))
        elif kind in ("em_close", "strong_close", "link_close"):
            opener, children = spans.pop()
            assert opener is not None
            inner = tuple(merged(children))
            if len(spans) > MAX_DEPTH:
                spans[-1][1].extend((Text(opener.markup), *inner, Text(token.markup)))
            elif kind == "link_close":
                spans[-1][1].append(Link(inner, str(opener.attrs["href"])))
            else:
                spans[-1][1].append((Emphasis if kind == "em_close" else Strong)(inner))
        elif kind == "image":
            raise MarkupError(
                f"'![{token.content}](…)' is an image, which the feeds do not carry: "
                f"link to it instead, as [{token.content}](…)"
            )
        else:  # "s_open": strike-through
            raise MarkupError(
                "'~~' makes strike-through, which the feeds do not show: remove the '~~' "
                "(and say in words what changed), or write '\\~~' to show them"
            )
    return spans[0][1]


def _allowed_link(token: Token) -> None:
    url = str(token.attrs["href"])
    if (problem := check_reference(url)) is not None:
        raise MarkupError(f"link target '{url}': {problem}")
    if token.attrs.get("title"):
        raise MarkupError(
            f"link to '{url}' has a title (\"{token.attrs['title']}\"), which the feeds "
            "do not carry: drop it, or say it in the link's text"
        )


def merged(nodes: Iterable[_T]) -> list[_T | Text]:
    """``nodes`` with each run of adjacent texts joined into one text."""
    out: list[_T | Text] = []
    for node in nodes:
        if isinstance(node, Text) and out and isinstance(out[-1], Text):
            out[-1] = Text(out[-1].text + node.text)
        else:
            out.append(node)
    return out


def to_html(nodes: tuple[Node, ...], resolve: Callable[[str], str]) -> str:
    """HTML with every text escaped; ``resolve`` turns a link target into an absolute URL."""
    parts: list[str] = []
    for node in nodes:
        if isinstance(node, Text):
            parts.append(html.escape(node.text, quote=False))
        elif isinstance(node, Code):
            parts.append(f"<code>{html.escape(node.code, quote=False)}</code>")
        elif isinstance(node, Emphasis):
            parts.append(f"<em>{to_html(node.children, resolve)}</em>")
        elif isinstance(node, Strong):
            parts.append(f"<strong>{to_html(node.children, resolve)}</strong>")
        else:  # CommonMark has no link in a link: none to cut
            href = html.escape(resolve(node.url), quote=True)
            parts.append(f'<a href="{href}">{to_html(node.children, resolve)}</a>')
    return "".join(parts)


def codes(nodes: tuple[Node, ...]) -> Iterator[str]:
    """The text of every code span in ``nodes``, however deep."""
    for node in nodes:
        if isinstance(node, Code):
            yield node.code
        elif not isinstance(node, Text):
            yield from codes(node.children)


def to_text(nodes: tuple[Node, ...]) -> str:
    """Plain text: markup dropped, link labels kept."""
    parts: list[str] = []
    for node in nodes:
        if isinstance(node, Text):
            parts.append(node.text)
        elif isinstance(node, Code):
            parts.append(node.code)
        else:
            parts.append(to_text(node.children))
    return "".join(parts)


def plain(source: str) -> str:
    """The plain text of inline Markdown; ``source`` as written if a link target is refused."""
    try:
        return to_text(parse(source))
    except MarkupError:
        return source


def code_span(code: str) -> str:
    """``code`` in a code span that :func:`parse` (and CommonMark) reads back as ``code``."""
    # The fence is longer than any run of backticks inside.
    fence = "`" * (max((len(run) for run in re.findall("`+", code)), default=0) + 1)
    # Padded when a space would be stripped on reading, or a "`" would join the fence.
    spaced = code.startswith(" ") and code.endswith(" ") and code.strip(" ") != ""
    pad = " " if spaced or code.startswith("`") or code.endswith("`") else ""
    return f"{fence}{pad}{code}{pad}{fence}"


# A note without a title takes its text's first clause for one: cut after this many characters
# at the first ": ", "; ", ". ", " — ", "。", "；" or "：", else at the last comma or space before
# _TITLE_MAX, with "…". A comma is no clause's end: in "Các công ty gồm ByteDance, Alibaba, …" it
# parts a list, whose first name alone would mislead.
_CLAUSE_MIN, _TITLE_MAX = 20, 90
_CLAUSE_END = re.compile(r"[:;.]\s| [—–] |[。；：]")  # CJK marks: no space after them


def first_clause(text: str) -> str:
    """``text`` up to its first clause's end, or cut before _TITLE_MAX with "…"."""
    ends = (found.start() for found in _CLAUSE_END.finditer(text, _CLAUSE_MIN))
    # Not in brackets: "Sửa lỗi (xem mục 3.2; 3.3)" does not end at its ";", nor "（…；…）".
    shut = (e for e in ends if sum(map(text[:e].count, "(（")) <= sum(map(text[:e].count, ")）")))
    end = next(shut, None)
    if end is not None and end <= _TITLE_MAX:
        return text[:end]
    if len(text) <= _TITLE_MAX:
        return text
    cut = text.rfind(", ", _CLAUSE_MIN, _TITLE_MAX)
    cut = cut if cut > 0 else text.rfind(" ", 0, _TITLE_MAX)
    return text[: cut if cut > 0 else _TITLE_MAX].rstrip(" ,;:") + "…"
