"""The README and docs/: every relative link and #anchor resolves, as GitHub renders them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token

from conftest import REPO
from localhttp import content_types
from slugger import Slugger

DOCS = REPO / "docs"
AUDIENCES = ("maintainers", "operators", "site", "feeds", "architecture")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
# GitHub's Markdown is CommonMark with GFM tables (links in table cells count too).
_MD = MarkdownIt("commonmark").enable("table")


def _inline(tokens: list[Token]) -> Iterator[Token]:
    for token in tokens:
        if token.type == "inline":
            yield from token.children or ()


def _heading_text(inline: Token) -> str:
    """A heading's text as GitHub slugs it: its characters, markup and link targets left out."""
    return "".join(t.content for t in inline.children or () if t.type in ("text", "code_inline"))


@cache
def anchors(path: Path) -> frozenset[str]:
    """The ids GitHub gives the headings of ``path``: github-slugger's, repeats numbered."""
    tokens = _MD.parse(path.read_text(encoding="utf-8"))
    slugger = Slugger()
    return frozenset(
        slugger.slug(_heading_text(tokens[i + 1]))
        for i, token in enumerate(tokens)
        if token.type == "heading_open"
    )


def links(path: Path) -> Iterator[str]:
    """Every link and image target of ``path``, in document order."""
    for token in _inline(_MD.parse(path.read_text(encoding="utf-8"))):
        if token.type == "link_open":
            yield str(token.attrs["href"])
        elif token.type == "image":
            yield str(token.attrs["src"])


def broken_links(paths: Iterable[Path], root: Path) -> list[str]:
    """Why each relative link of ``paths`` does not resolve below ``root``: one line each."""
    problems = []
    for path in paths:
        shown = path.relative_to(root).as_posix()
        for href in links(path):
            if _SCHEME.match(href) or href.startswith("//"):
                continue  # another site's: not ours to check offline
            target_text, _, fragment = href.partition("#")
            target = (path.parent / unquote(target_text)).resolve() if target_text else path
            if not target.is_relative_to(root.resolve()) or not target.exists():
                problems.append(f"{shown}: {href}: no such file in the repository")
            elif fragment and target.suffix != ".md":
                problems.append(f"{shown}: {href}: an anchor into a file that is not Markdown")
            elif fragment and unquote(fragment) not in anchors(target):
                problems.append(f"{shown}: {href}: no heading has the anchor #{fragment}")
    return problems


def test_every_relative_link_and_anchor_of_the_readme_and_docs_resolves() -> None:
    paths = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]
    assert broken_links(paths, REPO) == []


def test_a_broken_link_or_anchor_is_found(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(
        "# Title\n\n## The `[feeds]` table\n\n## Notes\n\n## Notes\n\n"
        "### GitHub Pages, `--locked`\n",
        encoding="utf-8",
    )
    readme = tmp_path / "README.md"
    readme.write_text(
        "[ok](docs/a.md) [ok](docs/a.md#the-feeds-table) [ok](docs/a.md#notes-1)\n"
        "[ok](docs/a.md#github-pages---locked) [ok](#here) [ok](https://example.org/#x)\n"
        "![ok](docs/a.md)\n\n"
        "| a | b |\n|---|---|\n| [gone](docs/b.md) | [no](docs/a.md#notes-2) |\n\n"
        "[out](../elsewhere.md) [typo](#hre) [ref][r]\n\n"
        "## Here\n\n[r]: docs/a.md#Title\n",
        encoding="utf-8",
    )
    assert broken_links([readme], tmp_path) == [
        "README.md: docs/b.md: no such file in the repository",
        "README.md: docs/a.md#notes-2: no heading has the anchor #notes-2",
        "README.md: ../elsewhere.md: no such file in the repository",
        "README.md: #hre: no heading has the anchor #hre",
        "README.md: docs/a.md#Title: no heading has the anchor #Title",
    ]


def test_the_readme_is_short_and_the_docs_are_by_audience() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    assert sorted(p.stem for p in DOCS.glob("*.md")) == sorted(AUDIENCES)
    for name in AUDIENCES:
        assert f"(docs/{name}.md)" in readme, name


def test_the_content_types_in_site_md_are_output_readmes() -> None:
    """site.md repeats the table that the browser tests serve the build with: they agree."""
    site = (DOCS / "site.md").read_text(encoding="utf-8")
    assert re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|$", site, flags=re.M) == content_types()
