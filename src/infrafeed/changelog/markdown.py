"""Inline Markdown for the changelog page: entry text written as CommonMark (+ GFM tables).

``inline.to_markdown`` writes the entries' own small syntax, which treats
``<``, ``_``, ``&``, ``|`` and ``~`` as plain text. The site renders the page
with a full CommonMark + GFM parser, where those characters can start HTML,
emphasis, an entity, a table cell or a strikethrough, and where ``#``, ``-``
or ``1.`` at the start of a line start a block. So the page gets its own
writer: it escapes every character that CommonMark would read as markup, so
the page shows exactly the text of the entries, and ``page_inline`` reads the
same nodes back. Sites add syntax: ``$`` opens math (remark-math) and is
escaped too; GFM links ``www.`` and ``http://`` in text, showing the escapes
inside them, unless their ``.`` or ``:`` is escaped; smartypants turns ``--``,
``...``, ``. . .``, two backticks and ``''`` within one text into typographic
marks, unless an empty comment (``SPLIT``) parts their characters.

Known limits, all about text that cannot be expressed in one Markdown
paragraph: a blank line inside a text becomes a single line break, leading
spaces of a continuation line are dropped by every Markdown reader, a line
break inside inline code shows as a space, a link inside a link keeps only its
text, and emphasis that CommonMark would not recognise next to punctuation
(``x*(y)*``) is written as plain text; smartypants still curls straight
quotes (``"`` and ``'``): no Markdown keeps them straight in text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from ..source.inline import Code, Emphasis, Link, Node, Strong, Text, code_span, merged

# CommonMark reads these anywhere in a line: escape them always.
_ALWAYS = frozenset("\\`*[]<|~$")
# What may need a backslash: those, and "_" or "&" depending on what is around them.
_SPECIAL = re.compile(r"[\\`*\[\]<|~_&$]")
_AUTOLINK = re.compile(r"(?i)(?<=www)\.|:(?=//)")
# Where smartypants would join two characters into one mark (see above).
_TYPOGRAPHIC = re.compile(r"(?<=-)(?=-)|(?<=\.)(?=[ \t]*\.)|(?<=`)(?=\\`)|(?<=')(?=')")
SPLIT = "<!-- -->"
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{0,31});")
# At the start of a line these begin a heading, quote, list, thematic break or setext underline.
_LINE_START_MARK = frozenset("#>+-=")
_ORDERED_MARK = re.compile(r"^([0-9]{1,9})([.)])")
_BLANK_LINES = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")


def inline_markdown(
    nodes: tuple[Node, ...],
    *,
    resolve: Callable[[str], str] = lambda url: url,
    in_table: bool = False,
    line_start: bool = True,
) -> str:
    """CommonMark for ``nodes``.

    ``resolve`` rewrites link targets (the page lives at another path than
    the site's root); ``in_table`` also escapes ``|`` inside code spans, as a
    GFM table cell requires; ``line_start`` says that the text begins a line,
    where a leading ``#`` or ``1.`` needs escaping.
    """
    return _Writer(resolve, in_table).nodes(nodes, line_start=line_start)


def plain_markdown(text: str, *, in_table: bool = False, line_start: bool = True) -> str:
    """CommonMark that shows ``text`` literally (titles and table headers are plain text)."""
    return inline_markdown((Text(text),), in_table=in_table, line_start=line_start)


def link_destination(url: str) -> str:
    """A link destination CommonMark reads as one URL, spaces and CJK characters included."""
    if any(ch in url for ch in " ()<>") or not url.isascii():
        return "<" + url.replace("<", "\\<").replace(">", "\\>") + ">"
    return url


class _Writer:
    def __init__(self, resolve: Callable[[str], str], in_table: bool) -> None:
        self.resolve = resolve
        self.in_table = in_table

    def nodes(self, nodes: tuple[Node, ...], *, line_start: bool, in_link: bool = False) -> str:
        if len(nodes) == 1 and isinstance(nodes[0], Text):
            return self.text(nodes[0].text, line_start=line_start)  # most texts: all plain
        nodes = self.expressible(nodes, in_link)
        out = ""
        for index, node in enumerate(nodes):
            after = nodes[index + 1] if index + 1 < len(nodes) else None
            if isinstance(node, Text):
                at_start = (line_start and not out) or out.endswith("\n")
                text = self.text(node.text, line_start=at_start)
                # "!" right before a link would turn it into an image.
                if text.endswith("!") and isinstance(after, Link):
                    text = text[:-1] + "\\!"
                out += text
            elif isinstance(node, Code):
                out += self.code(node.code)
            elif isinstance(node, Link) and in_link:
                # CommonMark has no link inside a link: keep the inner one's text.
                out += self.nodes(node.children, line_start=False, in_link=True)
            elif isinstance(node, Link):
                label = self.nodes(node.children, line_start=False, in_link=True)
                out += f"[{label}]({link_destination(self.resolve(node.url))})"
            else:
                marker = "**" if isinstance(node, Strong) else "*"
                inner = self.nodes(node.children, line_start=False, in_link=in_link)
                out += f"{marker}{inner}{marker}"
        return out

    def expressible(self, nodes: tuple[Node, ...], in_link: bool) -> tuple[Node, ...]:
        """``nodes`` with the emphasis CommonMark would not see turned into its plain content.

        Done before writing, so that the content is escaped as the plain text it
        becomes, and reads back as exactly that.
        """
        found = list(nodes)
        index = 0
        while index < len(found):
            node = found[index]
            if isinstance(node, Emphasis | Strong) and not self.flanked(found, index, in_link):
                found[index : index + 1] = node.children
                found = merged(found)
                index = 0
            else:
                index += 1
        return tuple(found)

    def flanked(self, nodes: list[Node], index: int, in_link: bool) -> bool:
        """Would CommonMark read ``nodes[index]``'s ``*`` delimiters as this emphasis?"""
        node = nodes[index]
        assert isinstance(node, Emphasis | Strong)
        if not node.children:
            return False
        # Delimiter runs that touch ("***", "*a**b*") are paired by rules our
        # nodes cannot steer.
        first, last = node.children[0], node.children[-1]
        if isinstance(first, Emphasis | Strong) or isinstance(last, Emphasis | Strong):
            return False
        before = self.nodes(tuple(nodes[:index]), line_start=False, in_link=in_link)
        inner = self.nodes(node.children, line_start=False, in_link=in_link)
        after = nodes[index + 1 : index + 2]
        following = self.nodes(tuple(after), line_start=False, in_link=in_link)[:1]
        if (before.endswith("*") and not before.endswith("\\*")) or following == "*":
            return False
        return bool(inner) and _opens(before[-1:], inner[0]) and _closes(inner[-1], following)

    def text(self, text: str, *, line_start: bool) -> str:
        if "\n" not in text and "\r" not in text:
            return self.line(text, line_start=line_start)  # most texts: one line
        text = _BLANK_LINES.sub("\n", text.replace("\r\n", "\n").replace("\r", "\n"))
        return "\n".join(
            self.line(line, line_start=line_start or number > 0)
            for number, line in enumerate(text.split("\n"))
        )

    def line(self, line: str, *, line_start: bool) -> str:
        escaped = _SPECIAL.sub(_escaped, line)
        escaped = _TYPOGRAPHIC.sub(SPLIT, _AUTOLINK.sub(r"\\\g<0>", escaped))
        if line_start:
            stripped = escaped.lstrip(" \t")
            indent = escaped[: len(escaped) - len(stripped)]
            ordered = _ORDERED_MARK.match(stripped)
            if stripped[:1] in _LINE_START_MARK:
                escaped = f"{indent}\\{stripped}"
            elif ordered:
                escaped = f"{indent}{ordered.group(1)}\\{stripped[ordered.end(1) :]}"
        return escaped

    def code(self, code: str) -> str:
        # A code span cannot hold a line break: CommonMark shows one as a space anyway.
        code = code.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
        if self.in_table:
            code = code.replace("|", "\\|")
        return code_span(code)


def _escaped(found: re.Match[str]) -> str:
    """One character of ``_SPECIAL`` as CommonMark must read it literally, in its line."""
    ch, line, index = found.group(), found.string, found.start()
    if ch in _ALWAYS:
        return "\\" + ch
    if ch == "_":
        return ch if _intraword(line, index) else "\\_"
    return "\\&" if _ENTITY.match(line, index) else ch


def _intraword(line: str, index: int) -> bool:
    """An underscore between two letters or digits never opens or closes emphasis."""
    return 0 < index < len(line) - 1 and line[index - 1].isalnum() and line[index + 1].isalnum()


def _is_punctuation(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "PS"


def _opens(before: str, first: str) -> bool:
    """CommonMark's left-flanking rule for the opening ``*`` run."""
    if not first or first.isspace():
        return False
    return not _is_punctuation(first) or not before or before.isspace() or _is_punctuation(before)


def _closes(last: str, after: str) -> bool:
    """CommonMark's right-flanking rule for the closing ``*`` run."""
    if last.isspace():
        return False
    return not _is_punctuation(last) or not after or after.isspace() or _is_punctuation(after)
