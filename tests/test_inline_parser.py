"""The fast inline parser gives what the old one gave, on any text: the same nodes, and an error
only where the old one had one (see assert_same).

``inline_before`` is the parser as it was before it was made fast, frozen.
Random texts are dense in markup characters, so that escapes, code spans,
emphasis and links overlap in every way; hostile texts are the shapes that
once made a parser slow or deep.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import inline_before
from infrafeed.source import inline
from infrafeed.source.inline import Code, Link, MarkupError, Node, Text
from infrafeed.source.urls import check_reference

# Pieces that make markup, or nearly: link targets both allowed and refused.
TOKENS = [
    *"\\`*[]() ab\n\t<>&_",
    "**",
    "``",
    "```",
    "](",
    "](/x)",
    "](<a b>)",
    "](https://example.org/p)",
    "](javascript:x)",
    "](//evil)",
    "]()",
    "\\*",
    "\\`",
    "\\[",
    "đệ",
    "学",
    " *",
    "* ",
]


def outcome(parse: object, source: str) -> tuple[Node, ...] | str:
    assert callable(parse)
    try:
        nodes = parse(source)
    except MarkupError as exc:
        return f"MarkupError: {exc}"
    assert isinstance(nodes, tuple)
    return nodes


def links(nodes: tuple[Node, ...]) -> Iterator[Link]:
    for node in nodes:
        if isinstance(node, Link):
            yield node
        if not isinstance(node, Text | Code):
            yield from links(node.children)


def assert_same(source: str) -> None:
    new, old = outcome(inline.parse, source), outcome(inline_before.parse, source)
    # The oracle also refuses a link that only a discarded trial parse saw ("***" tried as an
    # emphasis around a strong, then read otherwise), and may name another refused link first:
    # parse refuses the links the text holds, or gives the oracle's nodes.
    if isinstance(old, str):
        assert isinstance(new, str) or all(check_reference(lk.url) is None for lk in links(new))
    else:
        assert new == old, source


def random_texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)  # noqa: S311 (seeded, for repeatable texts)
    texts = []
    for _ in range(count):
        length = rng.choice([1, 2, 3, 5, 8, 13, 21, 40, 80])
        # Some texts mostly plain, as entries are; most dense in markup.
        plain = rng.random() < 0.2
        pieces = [
            rng.choice("abc xyz đ") if plain and rng.random() < 0.9 else rng.choice(TOKENS)
            for _ in range(length)
        ]
        texts.append("".join(pieces))
    return texts


def test_random_texts_parse_as_before() -> None:
    for source in random_texts(20_000, seed=7):
        assert_same(source)


@settings(max_examples=1_000, deadline=None)
@given(st.lists(st.sampled_from(TOKENS) | st.characters(), max_size=60).map("".join))
def test_any_text_parses_as_before(source: str) -> None:
    assert_same(source)


DEEP = inline.MAX_DEPTH + 3

HOSTILE = [
    "",
    "[" * 5000,
    "]" * 5000,
    "*a " * 1666,
    "`*" * 2500,
    "[a](" * 1250,
    "*a " * 800 + "b" + " a*" * 800,
    "[" * DEEP + "x" + "](/u)" * DEEP,
    "[" * 3000 + "x" + "](/u)" * 3000,
    "*" * DEEP + "x" + "*" * DEEP,
    "**" * DEEP + "x" + "**" * DEEP,
    "*[" * DEEP + "x" + "](/u)*" * DEEP,
    "[*" * DEEP + "x" + "*](/u)" * DEEP,
    "`" * 3000,
    "`" * 1000 + "x" + "`" * 999,
    "*a`" * 1000 + "*",
    "\\" * 5001,
    "\\*" * 2500,
    "(" * 2500 + ")" * 2500,
    "[a](" + "(" * 2000 + ")" * 2000,
    "**a *b " * 700,
    "[x](javascript:alert(1))" + "*a " * 100,
    "*" + "[x](/a)" * 500,
    "*a" + "`" * 1500,
    "**a" + "`" * 1500 + "**",
    "*" * 4998,
    "***" * 1666,
    "*a ***" * 800,
]


@pytest.mark.parametrize("source", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_texts_parse_as_before(source: str) -> None:
    assert_same(source)


def calls(source: str) -> int:
    """How many Python functions parsing ``source`` calls: work counted, not timed."""
    count = 0

    def counting(frame: object, event: str, arg: object) -> None:
        nonlocal count
        count += event == "call"

    sys.setprofile(counting)
    try:
        inline.parse(source)
    finally:
        sys.setprofile(None)
    return count


@pytest.mark.parametrize("run", ["****** b", "**** b", "*** b"])
def test_star_runs_cost_in_proportion_to_the_text(run: str) -> None:
    # Each run opened an emphasis whose children (the rest of the text, parsed again at every
    # depth) were parsed only to see whether the first was a strong: seconds for a summary.
    assert_same("a" + run * 60 + "*")
    small, large = (calls("a" + run * n + "*") for n in (100, 400))
    assert large < 5 * small, (small, large)
