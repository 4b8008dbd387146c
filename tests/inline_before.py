"""The inline parser as it was before it was made fast (main at 2f2b0db), kept as the oracle.

``test_inline_parser.py`` checks that :func:`infrafeed.inline.parse` gives the same
nodes as this one, and errors only where it has them. It is the simple reading of the
dialect's rules: it changes only with a rule (a run of three stars, a star run after a
space, a link binding tighter than emphasis, a backtick run no run closes, each checked
against CommonMark in test_inline.py), never for speed; its cache is gone, which never
changed a result.
"""

from __future__ import annotations

import bisect
import re

from infrafeed.source.inline import (
    Code,
    Emphasis,
    Link,
    MarkupError,
    Node,
    Strong,
    Text,
)
from infrafeed.source.urls import check_reference

ESCAPABLE = "\\`*[]()"
MAX_DEPTH = 16


def parse(source: str) -> tuple[Node, ...]:
    """Parse inline Markdown; raise :class:`MarkupError` for a disallowed link target.

    Linear-ish in the length of the text whatever it holds: delimiters are
    matched from indexes built once, and a failed search for a closing ``*``
    is remembered, so hostile input such as ``[[[[…`` or ``*a *a *a…`` cannot
    make a build slow.
    """
    return tuple(_merge(_Parser(_Source(source), 0).nodes(len(source))))


class _Source:
    """The text and the indexes every parser of it shares."""

    def __init__(self, text: str) -> None:
        self.text = text
        # Backtick runs by length: a code span closes at the next run of the same length.
        self.runs: dict[int, list[int]] = {}
        # Matching "]" of each "[" (escapes respected) and ")" of each "(".
        self.bracket: dict[int, int] = {}
        self.paren: dict[int, int] = {}
        # Positions from which a walk for a closing marker is known to fail, per (marker, end).
        self.no_closer: dict[tuple[str, int], set[int]] = {}
        # Code spans ignore escapes (as in CommonMark), so runs are found in the raw text.
        for run in re.finditer("`+", text):
            self.runs.setdefault(len(run.group()), []).append(run.start())
        parens: list[int] = []
        for i, ch in enumerate(text):
            if ch == "(":
                parens.append(i)
            elif ch == ")" and parens:
                self.paren[parens.pop()] = i
        brackets: list[int] = []
        i, n = 0, len(text)
        while i < n:
            ch = text[i]
            if ch == "\\":
                i += 2  # an escaped character never opens or closes a label
                continue
            if ch == "[":
                brackets.append(i)
            elif ch == "]" and brackets:
                self.bracket[brackets.pop()] = i
            i += 1

    def closing_run(self, length: int, after: int, end: int) -> int | None:
        """Start of the first backtick run of exactly ``length`` at or after ``after``."""
        starts = self.runs.get(length, [])
        index = bisect.bisect_left(starts, after)
        if index < len(starts) and starts[index] + length <= end:
            return starts[index]
        return None


class _Parser:
    def __init__(self, source: _Source, depth: int) -> None:
        self.source = source
        self.src = source.text
        self.depth = depth
        self.pos = 0

    def _child(self, start: int) -> _Parser:
        child = _Parser(self.source, self.depth + 1)
        child.pos = start
        return child

    def nodes(self, end: int) -> list[Node]:
        out: list[Node] = []
        buf: list[str] = []

        def flush() -> None:
            if buf:
                out.append(Text("".join(buf)))
                buf.clear()

        src = self.src
        nested = self.depth < MAX_DEPTH
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
            elif ch == "*" and nested:
                node = self._emphasis(end)
                if node is None:
                    buf.append("*")
                    self.pos += 1
                else:
                    flush()
                    out.append(node)
            elif ch == "[" and nested:
                node = self._link(end)
                if node is None:
                    buf.append("[")
                    self.pos += 1
                else:
                    flush()
                    out.append(node)
            else:
                buf.append(ch)
                self.pos += 1
        flush()
        return out

    def _run_length(self, ch: str) -> int:
        n = 0
        while self.pos + n < len(self.src) and self.src[self.pos + n] == ch:
            n += 1
        return n

    def _code(self, end: int) -> Code | None:
        run = self._run_length("`")
        start = self.pos + run
        close = self.source.closing_run(run, start, end)
        if close is None:
            return None
        code = self.src[start:close]
        if len(code) >= 2 and code[0] == " " and code[-1] == " " and code.strip(" "):
            code = code[1:-1]
        self.pos = close + run
        return Code(code)

    def _emphasis(self, end: int) -> Node | None:
        if self.src.startswith("***", self.pos):  # as CommonMark: "***x** y*", else "***x* y**"
            pos = self.pos
            if self._find_closer("**", pos + 3, end) not in (None, pos + 3):  # a strong inside
                found = self._span(end, "*")
                children = found.children if isinstance(found, Emphasis) else ()
                if children[:1] and isinstance(children[0], Strong):
                    return found
            self.pos = pos
            return self._span(end, "**")
        return self._span(end, "**" if self.src.startswith("**", self.pos) else "*")

    def _span(self, end: int, marker: str) -> Node | None:
        strong = marker == "**"
        start = self.pos + len(marker)
        if start >= end or self.src[start].isspace():
            return None
        close = self._find_closer(marker, start, end)
        if close is None or close == start:  # "****" is text, not an empty strong
            return None
        children = tuple(_merge(self._child(start).nodes(close)))
        self.pos = close + len(marker)
        return Strong(children) if strong else Emphasis(children)

    def _find_closer(self, marker: str, start: int, end: int) -> int | None:
        # The walk's next step depends only on the position, so every position a
        # failed walk visited fails too: later walks stop as soon as they meet one.
        failed = self.source.no_closer.setdefault((marker, end), set())
        visited = []
        i = start
        src = self.src
        while i < end:
            if i in failed:
                break
            visited.append(i)
            ch = src[i]
            if ch == "\\":
                i += 2
                continue
            if ch == "`":
                run = 1
                while i + run < end and src[i + run] == "`":
                    run += 1
                close = self.source.closing_run(run, i + run, end)
                # markup inside a code span does not close emphasis; an unclosed run is text
                i = close + run if close is not None else i + run
                continue
            if ch == "[" and (link := self._link_end(i, end)) is not None:
                i = link  # a link binds tighter: "*a [b*](/p)" is no emphasis (CommonMark)
                continue
            if ch == "*" and src[i - 1].isspace():  # a run after a space opens, never closes
                while i < end and src[i] == "*":
                    i += 1
                continue
            if marker == "*" and src.startswith("**", i):  # a strong's
                i += 2
                continue
            if src.startswith(marker, i):
                return i
            i += 1
        failed.update(visited)
        return None

    def _link_end(self, pos: int, end: int) -> int | None:
        label_end = self.source.bracket.get(pos)
        if label_end is None or label_end + 1 >= end or self.src[label_end + 1] != "(":
            return None
        close = self.source.paren.get(label_end + 1)
        return None if close is None or close >= end else close + 1

    def _link(self, end: int) -> Link | None:
        src = self.src
        label_end = self.source.bracket.get(self.pos)
        if label_end is None or label_end + 1 >= end or src[label_end + 1] != "(":
            return None
        close = self.source.paren.get(label_end + 1)
        if close is None or close >= end:
            return None
        url = src[label_end + 2 : close]
        if url.startswith("<") and url.endswith(">"):
            url = url[1:-1]
        problem = check_reference(url)
        if problem is not None:
            # The one change since it was frozen: the message says "target 'x': why".
            raise MarkupError(f"link target '{url}': {problem}")
        children = tuple(_merge(self._child(self.pos + 1).nodes(label_end)))
        self.pos = close + 1
        return Link(children, url)


def _merge(nodes: list[Node]) -> list[Node]:
    merged: list[Node] = []
    for node in nodes:
        if isinstance(node, Text) and merged and isinstance(merged[-1], Text):
            merged[-1] = Text(merged[-1].text + node.text)
        elif not (isinstance(node, Text) and not node.text):
            merged.append(node)
    return merged
