"""The small inline Markdown of entry text: `code`, *emphasis*, **strong**, [links](url).

Nothing else is markup: any HTML in the text is text, escaped by every renderer. A backslash
escapes the next markup character; unclosed markup stays text, and a link binds tighter than
emphasis, as in CommonMark. Underscores are never emphasis, because identifiers such as
``block_table`` appear bare in summaries.
"""

from __future__ import annotations

import bisect
import html
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TypeVar

from .urls import check_reference

ESCAPABLE = "\\`*[]()"
# Parentheses only mean something right after "]", which is itself escaped.
_ESCAPED_ON_OUTPUT = "\\`*[]"

# Markup nested deeper than this is left as text: no entry needs it, and it
# keeps hostile input from exhausting Python's recursion limit.
MAX_DEPTH = 16

# Where markup may start: the text between two of these is copied in one step (and what a walk
# for a closing "*" stops at: escapes, code spans, links and "*" itself).
_MARKUP_START = re.compile(r"[\\`*\[]")
_BACKTICKS = re.compile("`+")
_STARS = re.compile(r"\*+")
# An escaped character never opens or closes a label, whatever it is.
_BRACKET_TOKEN = re.compile(r"\\.|[\[\]]", re.S)
_PAREN = re.compile(r"[()]")


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
    """A link whose target is not allowed."""


def parse(source: str) -> tuple[Node, ...]:
    """Parse inline Markdown; raise :class:`MarkupError` for a disallowed link target.

    Delimiters are matched from indexes built once and every search for a closing ``*`` is
    remembered, so hostile input such as ``[[[[…`` or ``*a *a *a…`` cannot make a build slow.
    """
    # Most texts hold no markup character at all: one scan, in C, decides it.
    if _MARKUP_START.search(source) is None:
        return (Text(source),) if source else ()
    return tuple(_Parser(source).nodes(0, len(source), 0))


def _pairs(tokens: Iterator[re.Match[str]], opener: str, closer: str) -> dict[int, int]:
    """The position of the closer matching each opener among ``tokens``."""
    found: dict[int, int] = {}
    opened: list[int] = []
    for token in tokens:
        if token.group() == opener:
            opened.append(token.start())
        elif token.group() == closer and opened:
            found[opened.pop()] = token.start()
    return found


class _Parser:
    """One text, and the indexes its parse shares at every depth, each built on first use.

    Each method that parses markup at ``pos`` returns the node and the position after it,
    or None when the markup does not close before ``end``.
    """

    def __init__(self, src: str) -> None:
        self.src = src
        # Where a walk for a closing marker from a position ends (None: none), per (marker, end).
        self.closers: dict[tuple[str, int], dict[int, int | None]] = {}

    @cached_property
    def runs(self) -> dict[int, list[int]]:
        """Backtick runs by length: a code span closes at the next run of the same length."""
        runs: dict[int, list[int]] = {}
        # Code spans ignore escapes (as in CommonMark), so runs are found in the raw text.
        for run in _BACKTICKS.finditer(self.src):
            runs.setdefault(run.end() - run.start(), []).append(run.start())
        return runs

    @cached_property
    def bracket(self) -> dict[int, int]:
        """The matching "]" of each "[", escapes respected."""
        return _pairs(_BRACKET_TOKEN.finditer(self.src), "[", "]")

    @cached_property
    def paren(self) -> dict[int, int]:
        """The matching ")" of each "(", escapes ignored: a link target is taken as written."""
        return _pairs(_PAREN.finditer(self.src), "(", ")")

    def closing_run(self, length: int, after: int, end: int) -> int | None:
        """Start of the first backtick run of exactly ``length`` at or after ``after``."""
        starts = self.runs.get(length, [])
        index = bisect.bisect_left(starts, after)
        if index < len(starts) and starts[index] + length <= end:
            return starts[index]
        return None

    def nodes(self, pos: int, end: int, depth: int) -> list[Node]:
        """The nodes from ``pos`` to ``end``: text is gathered in ``buf``, so no two are texts."""
        out: list[Node] = []
        buf: list[str] = []

        def flush() -> None:
            if buf:
                out.append(Text("".join(buf)))
                buf.clear()

        src = self.src
        nested = depth < MAX_DEPTH
        while pos < end:
            ch = src[pos]
            if ch == "\\" and pos + 1 < end and src[pos + 1] in ESCAPABLE:
                buf.append(src[pos + 1])
                pos += 2
            elif ch == "`" or (ch in "*[" and nested):
                if ch == "`":
                    found: tuple[Node, int] | None = self._code(pos, end)
                elif ch == "*":
                    found = self._emphasis(pos, end, depth)
                else:
                    found = self._link(pos, end, depth)
                if found is None:  # not markup after all: its opening is text
                    literal = "`" * self._backticks(pos) if ch == "`" else ch
                    buf.append(literal)
                    pos += len(literal)
                else:
                    flush()
                    node, pos = found
                    out.append(node)
            else:
                # Up to the next character that may start markup, all is text.
                markup = _MARKUP_START.search(src, pos + 1, end)
                stop = markup.start() if markup else end
                buf.append(src[pos:stop])
                pos = stop
        flush()
        return out

    def _backticks(self, pos: int) -> int:
        """The length of the backtick run at ``pos``, which may run past the parsed range."""
        run = _BACKTICKS.match(self.src, pos)
        return run.end() - pos if run else 0

    def _code(self, pos: int, end: int) -> tuple[Code, int] | None:
        run = self._backticks(pos)
        start = pos + run
        close = self.closing_run(run, start, end)
        if close is None:
            return None
        code = self.src[start:close]
        if len(code) >= 2 and code[0] == " " and code[-1] == " " and code.strip(" "):
            code = code[1:-1]
        return Code(code), close + run

    def _emphasis(self, pos: int, end: int, depth: int) -> tuple[Node, int] | None:
        # As CommonMark: "***x** y*" is an emphasis around a strong, else "***x* y**". Only its
        # first child is parsed to tell: parsing all of it to throw it away made "****** b"
        # repeated parse the rest of the text at each run (quadratic).
        inner = self._find_closer("**", pos + 3, end) if self.src.startswith("***", pos) else None
        close = self._find_closer("*", pos + 1, end) if inner not in (None, pos + 3) else None
        if close is not None and close != pos + 1 and depth + 1 < MAX_DEPTH:
            first = self._emphasis(pos + 1, close, depth + 1)
            if first is not None and isinstance(first[0], Strong):
                rest = self.nodes(first[1], close, depth + 1)
                return Emphasis((first[0], *rest)), close + 1
        return self._span(pos, end, depth, "**" if self.src.startswith("**", pos) else "*")

    def _span(self, pos: int, end: int, depth: int, marker: str) -> tuple[Node, int] | None:
        start = pos + len(marker)
        if start >= end or self.src[start].isspace():
            return None
        close = self._find_closer(marker, start, end)
        if close is None or close == start:  # "****" is text in CommonMark, not an empty strong
            return None
        children = tuple(self.nodes(start, close, depth + 1))
        return (Strong(children) if marker == "**" else Emphasis(children)), close + len(marker)

    def _find_closer(self, marker: str, start: int, end: int) -> int | None:
        # The walk's next step depends only on the position, so every position a walk visited
        # ends where it did: later walks stop as soon as they meet one. It visits only where
        # it starts and the characters that can change its course; a later walk starting
        # between two of those goes on to the next, where it meets the earlier one.
        known = self.closers.setdefault((marker, end), {})
        visited = []
        closer = None
        i = start
        src = self.src
        while i < end:
            if i in known:
                closer = known[i]
                break
            visited.append(i)
            ch = src[i]
            if ch == "\\":
                i += 2
            elif ch == "`":
                found = _BACKTICKS.match(src, i, end)
                assert found is not None
                run = found.end() - i
                close = self.closing_run(run, i + run, end)
                # Markup inside a code span does not close emphasis; a run no run closes is
                # text, all of it (CommonMark): not a shorter run from its second "`".
                i = close + run if close is not None else i + run
            elif ch == "[" and (link := self._link_end(i, end)) is not None:
                i = link  # a link binds tighter: "*a [b*](/p)" is no emphasis (CommonMark)
            elif ch == "*" and src[i - 1].isspace():  # a run after a space opens, never closes
                stars = _STARS.match(src, i, end)
                assert stars is not None
                i = stars.end()
            elif marker == "*" and src.startswith("**", i):  # a strong's
                i += 2
            elif src.startswith(marker, i):
                closer = i
                break
            else:
                stop = _MARKUP_START.search(src, i + 1, end)
                i = stop.start() if stop else end
        known.update(dict.fromkeys(visited, closer))
        return closer

    def _link_end(self, pos: int, end: int) -> int | None:
        """The position after the link that starts at ``pos``, if one does before ``end``."""
        label_end = self.bracket.get(pos)
        if label_end is None or label_end + 1 >= end or self.src[label_end + 1] != "(":
            return None
        close = self.paren.get(label_end + 1)
        return None if close is None or close >= end else close + 1

    def _link(self, pos: int, end: int, depth: int) -> tuple[Link, int] | None:
        if (after := self._link_end(pos, end)) is None:
            return None
        label_end = self.bracket[pos]
        url = self.src[label_end + 2 : after - 1]
        if url.startswith("<") and url.endswith(">"):
            url = url[1:-1]
        if (problem := check_reference(url)) is not None:
            raise MarkupError(f"link target '{url}': {problem}")
        return Link(tuple(self.nodes(pos + 1, label_end, depth + 1)), url), after


def merged(nodes: Iterable[_T]) -> list[_T | Text]:
    """``nodes`` with each run of adjacent texts joined into one text."""
    out: list[_T | Text] = []
    for node in nodes:
        if isinstance(node, Text) and out and isinstance(out[-1], Text):
            out[-1] = Text(out[-1].text + node.text)
        else:
            out.append(node)
    return out


def to_html(nodes: tuple[Node, ...], resolve: Callable[[str], str], in_link: bool = False) -> str:
    """HTML with every text escaped; ``resolve`` turns a link target into an absolute URL.

    A link inside a link shows its text only, as on the changelog page: HTML has no such link.
    """
    parts: list[str] = []
    for node in nodes:
        if isinstance(node, Text):
            parts.append(html.escape(node.text, quote=False))
        elif isinstance(node, Code):
            parts.append(f"<code>{html.escape(node.code, quote=False)}</code>")
        elif isinstance(node, Emphasis):
            parts.append(f"<em>{to_html(node.children, resolve, in_link)}</em>")
        elif isinstance(node, Strong):
            parts.append(f"<strong>{to_html(node.children, resolve, in_link)}</strong>")
        elif in_link:
            parts.append(to_html(node.children, resolve, in_link))
        else:
            href = html.escape(resolve(node.url), quote=True)
            parts.append(f'<a href="{href}">{to_html(node.children, resolve, True)}</a>')
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


def to_markdown(nodes: tuple[Node, ...]) -> str:
    """Canonical inline Markdown that :func:`parse` reads back to the same nodes (a link target
    must pair its parentheses, as :func:`parse` reads it)."""
    parts: list[str] = []
    for node in nodes:
        if isinstance(node, Text):
            parts.append("".join("\\" + ch if ch in _ESCAPED_ON_OUTPUT else ch for ch in node.text))
        elif isinstance(node, Code):
            parts.append(code_span(node.code))
        elif isinstance(node, Emphasis):
            parts.append(f"*{to_markdown(node.children)}*")
        elif isinstance(node, Strong):
            parts.append(f"**{to_markdown(node.children)}**")
        else:
            url = f"<{node.url}>" if (" " in node.url or "(" in node.url) else node.url
            parts.append(f"[{to_markdown(node.children)}]({url})")
    return "".join(parts)


def code_span(code: str) -> str:
    """``code`` in a code span that :func:`parse` (and CommonMark) reads back as ``code``."""
    # The fence is longer than any run of backticks inside.
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(code)), default=0) + 1)
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
