"""Entry text written as CommonMark for the changelog page (+ GFM tables) and for release files,
and the page read back.

Entry text is CommonMark without raw HTML (source/inline.py), read into nodes; the writer writes
those nodes again, escaping every character CommonMark would read as markup where the nodes hold
text, so that the page shows exactly what the feeds show and ``read_nodes`` reads the same nodes
back. The site's CommonMark has more: raw HTML (``<b>`` is escaped), GFM's tables, strike-through
and autolinks, and ``$`` opens math (remark-math): escaped too. Two site plugins read the text
after parsing, when escapes are gone: GFM links ``www.``, ``http://`` and ``a@b.co``, and
smartypants turns ``--``, ``...``, ``. . .``, two backticks and ``''`` into typographic marks; on
the page, an empty comment (``_SPLIT``) parts those characters. Release files (``entry_markdown``,
what ``infrafeed import`` writes) need none of that: there HTML is text.

Known limits, all of text one Markdown paragraph cannot express: a blank line inside a text becomes
a single line break, white space at the start or end of a line is dropped (Markdown shows none), a
line break inside inline code shows as a space, emphasis that stars would not give where an
underscore did (``_a_*b*``), or that the site's parser would not see next to an emoji
(``**a!**🎉``), is written as plain text; smartypants still curls straight quotes: no Markdown keeps
them straight in text.

Reading uses markdown-it-py (CommonMark), so the importer sees what the site shows; it also takes
the original site's links with spaces in the target, which CommonMark refuses
(``[Lộ trình](/AIInfraGuide/guides/AI Infra学习路线)``). What the entries' syntax cannot carry
(images, HTML, a broken link) is kept as text and reported. Escaped characters stay separate tokens
(``text_join`` is off), so an escaped ``\\|`` or ``\\:`` is never taken for the page's punctuation.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from itertools import accumulate
from typing import NamedTuple

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

from ..source.inline import Code, Emphasis, Link, Node, Strong, Text, code_span, merged, to_text
from ..source.urls import check_reference, site_path

# CommonMark reads these anywhere in a line: escape them always.
_ALWAYS = frozenset("\\`*[]<|~$")
# What may need a backslash: those, and "_" or "&" depending on what is around them; in entry
# text, "|" and "$" are no markup (no tables, no math).
_SPECIAL = re.compile(r"[\\`*\[\]<|~_&$]")
_SPECIAL_IN_ENTRIES = re.compile(r"[\\`*\[\]<~_&]")
# Where GFM would start a link, or smartypants join two characters into one mark (see above).
# Each looks ahead first: most positions fail on their next character, and the text is quick.
_SPLIT_AT = re.compile(
    r"(?=\.)(?<=[Ww][Ww][Ww])|(?=://)(?<=\w)|(?=@)(?<=[\w.+-])"  # links: never at a line's start
    r"|(?=-)(?<=-)|(?=[ \t]*\.)(?<=\.)|(?=\\`)(?<=`)|(?=')(?<=')"  # typographic marks
)
_SPLIT = "<!-- -->"
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{0,31});")
# At the start of a line these begin a heading, quote, list, thematic break or setext underline,
# or (":-:") a GFM table's delimiter row, which makes the line above a table's header.
_LINE_START_MARK = frozenset("#>+-=:")
_ORDERED_MARK = re.compile(r"^([0-9]{1,9})([.)])")
_BLANK_LINES = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")
_BREAK_AFTER_SPACE = re.compile(r"[ \t]+\n")
# Possessive: a target of many spaces and no ")" backtracked through each (quadratic).
_LENIENT_LINK = re.compile(r"\[([^\[\]\n]+)\]\(\s*+<?([^()<>\n]++)>?\s*+\)")
_BROKEN_LINK = re.compile(r"\[[^\[\]\n]*\]\(")
_BREAKS = ("softbreak", "hardbreak")
# A piece of an inline run: a markdown-it node, or plain (unescaped) text cut from a text node.
Piece = SyntaxTreeNode | str


def inline_markdown(
    nodes: tuple[Node, ...],
    *,
    resolve: Callable[[str], str] = lambda url: url,
    in_table: bool = False,
    line_start: bool = True,
) -> str:
    """CommonMark for ``nodes``. ``resolve`` rewrites link targets (the page lives at another
    path than the site's root); ``in_table`` escapes ``|`` in code spans too, as a GFM table cell
    requires; ``line_start``: the text begins a line, where a leading ``#`` or ``1.`` is escaped.
    """
    return _Writer(resolve, in_table, for_site=True).nodes(nodes, line_start)


def entry_markdown(nodes: tuple[Node, ...]) -> str:
    """Entry text that :func:`infrafeed.source.inline.parse` reads back as ``nodes``: the same
    CommonMark as the page's, less the site's extensions (no comment splits: HTML is text)."""
    return _Writer(lambda url: url, False, for_site=False).nodes(nodes, True)


def plain_markdown(text: str, *, in_table: bool = False, line_start: bool = True) -> str:
    """CommonMark that shows ``text`` literally (titles and table headers are plain text)."""
    return inline_markdown((Text(text),), in_table=in_table, line_start=line_start)


def link_destination(url: str, *, in_table: bool = False) -> str:
    """A link destination CommonMark reads as one URL, spaces and CJK characters included."""
    if "&" in url:  # "&amp;" in a URL is its text: CommonMark would decode it
        url = _ENTITY.sub(r"\\\g<0>", url)
    if in_table:
        url = url.replace("|", "\\|")  # a cell ends at any other "|"
    if any(ch in url for ch in " ()<>") or not url.isascii():
        return "<" + url.replace("<", "\\<").replace(">", "\\>") + ">"
    return url


class _Span(NamedTuple):
    """An emphasis or a link, its children written once however often the writer looks at it."""

    node: Emphasis | Strong | Link
    items: tuple[_Item, ...]
    inner: str  # the children, written
    written: str
    alone: str  # the first character of it written on its own, where it may become plain text


_Item = Text | Code | _Span


class _Writer(NamedTuple):
    resolve: Callable[[str], str]
    in_table: bool
    for_site: bool  # the page, read by the site's CommonMark and its plugins (see above)
    nested: bool = False  # inside an emphasis or a strong

    def nodes(self, nodes: tuple[Node, ...], line_start: bool) -> str:
        if len(nodes) == 1 and isinstance(nodes[0], Text):  # most texts: all plain
            return self.text(nodes[0].text, line_start=line_start)
        return self.write([self.item(node) for node in nodes], line_start=line_start)

    def item(self, node: Node) -> _Item:
        if isinstance(node, Text | Code):
            return node
        inside = self if isinstance(node, Link) else self._replace(nested=True)
        items = tuple(inside.item(child) for child in node.children)
        inner = inside.write(items, line_start=False)
        if isinstance(node, Link):  # CommonMark reads no link inside a link: there is none
            written = (
                f"[{inner}]({link_destination(self.resolve(node.url), in_table=self.in_table)})"
            )
            return _Span(node, items, inner, written, written[:1])
        marker = "**" if isinstance(node, Strong) else "*"
        span = _Span(node, items, inner, f"{marker}{inner}{marker}", "*")
        if self.shown(span, "", Text("")):
            return span
        return span._replace(alone=self.write(merged(items), line_start=False)[:1])

    def write(self, items: Sequence[_Item], *, line_start: bool) -> str:
        """``items`` written, emphasis CommonMark would not see as the plain text it reads as."""
        # pieces[k + 1]: item k written; ends[k]: the two characters before it ("\n" at line start)
        found, pieces, ends = list(items), [""], ["\n" if line_start else ""]
        index, tidy = 0, False  # tidy: no two texts side by side
        while index < len(found):
            item, before = found[index], ends[index]
            after = found[index + 1] if index + 1 < len(found) else Text("")  # or the end
            if isinstance(item, _Span) and not self.shown(item, before, after):
                # Its texts join those beside it, which changes what the emphasis two items back
                # sees; the first time, texts anywhere may join.
                low, high = (max(index - 1, 0), index + 2) if tidy else (0, len(found))
                found[low:high] = merged([*found[low:index], *item.items, *found[index + 1 : high]])
                index, tidy = max(low - 1, 0), True
                del pieces[index + 1 :], ends[index + 1 :]
                continue
            piece = self.piece(item, after, at_start=before.endswith("\n"))
            code_after_code = before.endswith("`") and not before.endswith("\\`")
            if isinstance(item, Code) and code_after_code and self.for_site:
                piece = _SPLIT + piece  # two code spans side by side would join their fences
            pieces.append(piece)
            ends.append((before + pieces[-1])[-2:])
            index += 1
        return "".join(pieces)

    def shown(self, span: _Span, before: str, after: _Item) -> bool:
        """Would CommonMark read ``span`` as written, between ``before``'s end and ``after``?"""
        children, inner = span.node.children, span.inner
        if isinstance(span.node, Link) or not inner:
            return isinstance(span.node, Link)
        # Delimiter runs that touch ("*a**b*") are paired by rules our nodes cannot steer; but
        # "***x** y*" and "*y **x***", an emphasis around one strong of plain text at its edge,
        # micromark, markdown-it and we read alike (with two strongs, the rule of 3 parts them).
        edges = (children[0], children[-1])
        spans = [c for c in children if isinstance(c, Emphasis | Strong)]
        around = (
            isinstance(span.node, Emphasis)
            and len(spans) == 1
            and isinstance(spans[0], Strong)
            and any(edge is spans[0] for edge in edges)
            and not any(isinstance(c, Emphasis | Strong) for c in spans[0].children)
        )
        touching = not around and any(isinstance(edge, Emphasis | Strong) for edge in edges)
        following = after.alone if isinstance(after, _Span) else self.piece(after, after)[:1]
        touching |= (before.endswith("*") and not before.endswith("\\*")) or following == "*"
        # Around a strong, the run's flanking turns on what is past the strong's own stars.
        first, last = (inner.lstrip("*"), inner.rstrip("*")) if around else (inner, inner)
        # Inside an emphasis, a run flanking both ways ("*" between ":" and ":", or letters)
        # may close the emphasis around it, or open one: "_1*1*1_" is no "*1*1*1*".
        opens, closes = (before[-1:], first[0]), (following, last[-1])
        either = any(side and _flanking(side, edge) for side, edge in (opens, closes))
        either &= self.nested
        return (
            not touching
            and not either
            and _flanking(first[0], before[-1:])
            and _flanking(last[-1], following)
        )

    def piece(self, item: _Item, after: _Item, at_start: bool = False) -> str:
        if not isinstance(item, Text):
            return item.written if isinstance(item, _Span) else self.code(item.code)
        text = self.text(item.text, line_start=at_start)
        # "!" right before a link would turn it into an image.
        link = isinstance(after, _Span) and isinstance(after.node, Link)
        return text[:-1] + "\\!" if link and text.endswith("!") else text

    def text(self, text: str, *, line_start: bool) -> str:
        if "\n" not in text and "\r" not in text:
            return self.line(text, line_start=line_start)  # most texts: one line
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        if self.for_site:  # a blank line would end the page's list item; an entry's paragraph
            text = _BLANK_LINES.sub("\n", text)
        # Two spaces before a line break make a hard break (<br>), which the feeds do not show.
        text = _BREAK_AFTER_SPACE.sub("\n", text)
        return "\n".join(
            self.line(line, line_start=line_start or number > 0)
            for number, line in enumerate(text.split("\n"))
        )

    def line(self, line: str, *, line_start: bool) -> str:
        if self.for_site:
            escaped = _SPLIT_AT.sub(_SPLIT, _SPECIAL.sub(_escaped, line))
        else:
            escaped = _SPECIAL_IN_ENTRIES.sub(_escaped, line)
        if line_start:
            # Markdown drops a line's leading white space, or reads a code block from it.
            escaped = escaped.lstrip(" \t")
            ordered = _ORDERED_MARK.match(escaped)
            if escaped[:1] in _LINE_START_MARK:
                escaped = "\\" + escaped
            elif ordered:
                escaped = f"{ordered.group(1)}\\{escaped[ordered.end(1) :]}"
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
    if ch == "_":  # between two letters or digits, it never opens or closes emphasis
        intraword = line[index - 1 : index].isalnum() and line[index + 1 : index + 2].isalnum()
        return ch if intraword else "\\_"
    return "\\&" if _ENTITY.match(line, index) else ch


def _is_punctuation(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "PS"


def _is_bmp_punctuation(ch: str) -> bool:
    # The site's parser (micromark) reads text in UTF-16 units: a character above U+FFFF,
    # most emoji among them, is to it two surrogates, which it takes for letters.
    return ch <= "\uffff" and _is_punctuation(ch)


def _flanking(edge: str, outside: str) -> bool:
    """CommonMark's flanking rule for a ``*`` run, as both markdown-it and micromark apply it:
    ``edge`` is the character it touches in the emphasis, ``outside`` the one on its other side
    ("" at either end of the text)."""
    if edge.isspace():
        return False
    if not outside or outside.isspace():
        return True
    return all(not p(edge) or p(outside) for p in (_is_punctuation, _is_bmp_punctuation))


class _Parser(MarkdownIt):
    # Keep link targets as written (IRIs with CJK and spaces): the entries hold
    # them that way, and urls.absolute encodes them for the feeds.
    def normalizeLink(self, url: str) -> str:
        return url

    def normalizeLinkText(self, link: str) -> str:
        return link


def markdown_parser() -> MarkdownIt:
    """CommonMark with GFM tables and strikethrough, and raw HTML (to see our annotations),
    escapes kept apart."""
    parser = _Parser("commonmark", {"html": True})
    parser.enable(["table", "strikethrough"])
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


def read_nodes(
    pieces: Sequence[Piece], line: int, warn: Callable[[int, str], None], page: str | None = None
) -> tuple[Node, ...]:
    """Entry nodes for an inline run; what they cannot hold is kept as text and reported.

    A relative link target means a page beside ``page`` (the changelog's URL) on the page, and
    below the site's root in the entries: it becomes a path from the root ("/AIInfraGuide/x").
    """

    def link(children: tuple[Node, ...], href: str) -> Link:
        url = href if page is None else site_path(page, href)
        # A target ends at the ")" that matches its "(": unmatched ones are written encoded.
        depths = list(accumulate(1 if c == "(" else -1 for c in url if c in "()"))
        if depths and (min(depths) < 0 or depths[-1] != 0):
            url = url.replace("(", "%28").replace(")", "%29")
        return Link(children, url)

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
                if title := node.attrs.get("title"):
                    warn(line, f"link title {str(title)!r} is not imported; the link is")
                return (link(children, href),)
            else:
                warn(line, f"link target '{href}' is refused ({problem}); its text is kept")
        elif kind == "image":
            warn(line, f"image '{to_text(children)}' is not imported; its text is kept")
        elif kind == "s":  # the site shows it struck through: say that it no longer is
            warn(line, f"strikethrough '{to_text(children)}' is not imported; its text is kept")
        elif kind == "html_inline" and node.content == _SPLIT:
            return ()  # the page writer's, between two characters
        elif kind == "html_inline":
            warn(line, f"inline HTML {node.content!r} is kept as text")
        elif kind != "text_special":  # an escaped character is its text
            warn(line, f"{kind} is not imported; its text is kept")
        return children if kind in ("link", "image", "s") else (Text(node.content),)

    def plain(text: str) -> list[Node]:
        """Plain text, with the original site's links that have spaces in their targets."""
        out: list[Node] = []
        position = 0
        for found in _LENIENT_LINK.finditer(text):
            url = found.group(2).strip()
            if check_reference(url) is None:
                out += [Text(text[position : found.start()]), link((Text(found.group(1)),), url)]
                position = found.end()
                warn(line, f"link target '{url}' has a space: the site shows the link as text "
                     "(CommonMark), imported as a link; check that the page exists")  # fmt: skip
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
