"""The small inline Markdown of entry text: `code`, *emphasis*, **strong**, [links](url).

Nothing else is markup: any HTML in the text is text, and is escaped by
every renderer. A backslash escapes the next markup character. Unclosed
markup stays literal text, as in CommonMark. Underscores are never emphasis,
because identifiers such as ``block_table`` appear bare in summaries.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from .urls import check_reference

ESCAPABLE = "\\`*[]()"
# Parentheses only mean something right after "]", which is itself escaped.
_ESCAPED_ON_OUTPUT = "\\`*[]"
# Where markup may start; the parser copies the text between them in one step.
_MARKUP_START = re.compile(r"[\\`*\[]")


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


class MarkupError(ValueError):
    """A link whose target is not allowed."""


@lru_cache(maxsize=4096)
def parse(source: str) -> tuple[Node, ...]:
    """Parse inline Markdown; raise :class:`MarkupError` for a disallowed link target."""
    return tuple(_merge(_Parser(source).nodes(len(source))))


class _Parser:
    def __init__(self, source: str) -> None:
        self.src = source
        self.pos = 0

    def nodes(self, end: int) -> list[Node]:
        out: list[Node] = []
        buf: list[str] = []

        def flush() -> None:
            if buf:
                out.append(Text("".join(buf)))
                buf.clear()

        src = self.src
        while self.pos < end:
            ch = src[self.pos]
            if ch == "\\" and self.pos + 1 < end and src[self.pos + 1] in ESCAPABLE:
                buf.append(src[self.pos + 1])
                self.pos += 2
            elif ch == "`":
                node: Node | None = self._code(end)
                if node is None:
                    run = self._run_length("`")
                    buf.append("`" * run)
                    self.pos += run
                else:
                    flush()
                    out.append(node)
            elif ch == "*":
                node = self._emphasis(end)
                if node is None:
                    buf.append("*")
                    self.pos += 1
                else:
                    flush()
                    out.append(node)
            elif ch == "[":
                node = self._link(end)
                if node is None:
                    buf.append("[")
                    self.pos += 1
                else:
                    flush()
                    out.append(node)
            else:
                found = _MARKUP_START.search(src, self.pos + 1, end)
                stop = found.start() if found else end
                buf.append(src[self.pos : stop])
                self.pos = stop
        flush()
        return out

    def _run_length(self, ch: str) -> int:
        n = 0
        while self.pos + n < len(self.src) and self.src[self.pos + n] == ch:
            n += 1
        return n

    def _code(self, end: int) -> Code | None:
        run = self._run_length("`")
        fence = "`" * run
        start = self.pos + run
        search = start
        while True:
            close = self.src.find(fence, search, end)
            if close < 0:
                return None
            after = close + run
            # The closing run must be exactly as long as the opening one.
            if after < end and self.src[after] == "`":
                search = after
                while search < end and self.src[search] == "`":
                    search += 1
                continue
            code = self.src[start:close]
            if len(code) >= 2 and code[0] == " " and code[-1] == " " and code.strip(" "):
                code = code[1:-1]
            self.pos = after
            return Code(code)

    def _emphasis(self, end: int) -> Node | None:
        strong = self.src.startswith("**", self.pos)
        marker = "**" if strong else "*"
        start = self.pos + len(marker)
        if start >= end or self.src[start].isspace():
            return None
        close = self._find_closer(marker, start, end)
        if close is None:
            return None
        inner = _Parser(self.src)
        inner.pos = start
        children = tuple(_merge(inner.nodes(close)))
        self.pos = close + len(marker)
        return Strong(children) if strong else Emphasis(children)

    def _find_closer(self, marker: str, start: int, end: int) -> int | None:
        i = start
        src = self.src
        while i < end:
            ch = src[i]
            if ch == "\\":
                i += 2
                continue
            if ch == "`":
                # Markup inside a code span does not close emphasis.
                probe = _Parser(src)
                probe.pos = i
                if probe._code(end) is not None:
                    i = probe.pos
                    continue
            if src.startswith(marker, i) and not src[i - 1].isspace():
                if marker == "*" and src.startswith("**", i):
                    i += 2
                    continue
                return i
            i += 1
        return None

    def _link(self, end: int) -> Link | None:
        src = self.src
        depth = 0
        i = self.pos + 1
        while i < end:
            ch = src[i]
            if ch == "\\":
                i += 2
                continue
            if ch == "[":
                depth += 1
            elif ch == "]":
                if depth == 0:
                    break
                depth -= 1
            i += 1
        else:
            return None
        label_end = i
        if label_end + 1 >= end or src[label_end + 1] != "(":
            return None
        j = label_end + 2
        parens = 0
        while j < end:
            ch = src[j]
            if ch == "(":
                parens += 1
            elif ch == ")":
                if parens == 0:
                    break
                parens -= 1
            j += 1
        else:
            return None
        url = src[label_end + 2 : j]
        if url.startswith("<") and url.endswith(">"):
            url = url[1:-1]
        problem = check_reference(url)
        if problem is not None:
            raise MarkupError(f"link target '{url}' {problem}")
        inner = _Parser(src)
        inner.pos = self.pos + 1
        children = tuple(_merge(inner.nodes(label_end)))
        self.pos = j + 1
        return Link(children, url)


def _merge(nodes: list[Node]) -> list[Node]:
    merged: list[Node] = []
    for node in nodes:
        if isinstance(node, Text) and merged and isinstance(merged[-1], Text):
            merged[-1] = Text(merged[-1].text + node.text)
        elif not (isinstance(node, Text) and not node.text):
            merged.append(node)
    return merged


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
        else:
            href = html.escape(resolve(node.url), quote=True)
            parts.append(f'<a href="{href}">{to_html(node.children, resolve)}</a>')
    return "".join(parts)


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


def to_markdown(nodes: tuple[Node, ...]) -> str:
    """Canonical inline Markdown that :func:`parse` reads back to the same nodes."""
    parts: list[str] = []
    for node in nodes:
        if isinstance(node, Text):
            parts.append("".join("\\" + ch if ch in _ESCAPED_ON_OUTPUT else ch for ch in node.text))
        elif isinstance(node, Code):
            longest = _longest_run(node.code, "`")
            fence = "`" * (longest + 1)
            code = node.code
            needs_pad = (
                code.startswith("`")
                or code.endswith("`")
                or (code.startswith(" ") and code.endswith(" ") and code.strip(" ") != "")
            )
            pad = " " if needs_pad else ""
            parts.append(f"{fence}{pad}{node.code}{pad}{fence}")
        elif isinstance(node, Emphasis):
            parts.append(f"*{to_markdown(node.children)}*")
        elif isinstance(node, Strong):
            parts.append(f"**{to_markdown(node.children)}**")
        else:
            url = f"<{node.url}>" if (" " in node.url or "(" in node.url) else node.url
            parts.append(f"[{to_markdown(node.children)}]({url})")
    return "".join(parts)


def _longest_run(text: str, ch: str) -> int:
    longest = run = 0
    for c in text:
        run = run + 1 if c == ch else 0
        longest = max(longest, run)
    return longest
