"""Turn a read changelog page into validated releases: modules, ids, models.

What the page does not show comes from its annotations, else from what it shows, never
guessed beyond that: a module from a context line or note that starts with "Module 4", or from
an article's page in a module's section of the site (``/cuda/...`` is module 2). Chapters are
never inferred ("Chương 1 và 2" names two). Ids not on the page are minted from titles and
pages, once: the entries keep them.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import PurePosixPath
from typing import Any, NamedTuple
from urllib.parse import quote, unquote, urlsplit

from anyascii import anyascii

from ..errors import PageError, Problem
from ..source import inline
from ..source.loader import M, validated
from ..source.models import Article, Group, Note, Release, Site
from ..source.urls import absolute
from .conventions import AnnotationValue
from .reader import PageGroup, PageItem, PageRelease, ParsedPage

MAX_SLUG = 60  # models.Slug allows 80: short enough to read, with room for a "-NN" suffix
_NOT_SLUG = re.compile(r"[^a-z0-9]+")
_PAGE_SUFFIX = re.compile(r"\.(?:html?|mdx?)$", re.I)
_NO_RELEASE = "has no release to import: no heading such as '## 2026-11-07' with changes under it"
_NO_MODULE = (
    "has no module: link it to a page in a module's section of the site, start its group's "
    "context line with '{} N', or add <!-- infrafeed group module=N --> under its heading"
)


class ImportedRelease(NamedTuple):
    sequence: int  # 1, or N for the N-th release of its day
    release: Release


def to_releases(page: ParsedPage, site: Site, source: str) -> list[ImportedRelease]:
    """Validated releases, in the page's order; raise :class:`PageError` with every error."""
    mapper = _Mapper(site, source)
    for found in page.releases:  # the page's ids first: minted ones are chosen around them
        for group in found.groups:
            for item in (*group.articles, *group.notes):
                given, kind = item.fields.get("id"), group.kind
                if isinstance(given, str) and not mapper.ids.claim((found.day, kind), given):
                    used = f"'{given}' is already used for a '{kind}' change on {found.day}"
                    mapper.error(item.line, "id", f"{used}; give this change its own id")
    releases = [(found.sequence, mapper.release(found)) for found in page.releases]
    errors = page.errors + mapper.errors
    if not page.releases and not errors:
        errors.append(Problem(source, "page", _NO_RELEASE))
    if errors:
        raise PageError(errors, source)
    return [ImportedRelease(n, release) for n, release in releases if release is not None]


class _Mapper:
    def __init__(self, site: Site, source: str) -> None:
        self.site, self.source = site, source
        self.errors: list[Problem] = []
        self.ids = IdMinter()
        self.modules: dict[int, int | None] = {}  # id(PageGroup) -> its module
        self.root = urlsplit(absolute(site.url, ""))
        # The path each module's section starts with, "/AIInfraGuide/cuda/": module 2.
        self.sections = {f"{self.root.path}{quote(m.section)}/": m.number for m in site.modules}

    def error(self, line: int, what: str, message: str) -> None:
        self.errors.append(Problem(self.source, what, message, line))

    def release(self, page: PageRelease) -> Release | None:
        groups = [self.group(page, group) for group in page.groups]
        if None not in groups:  # else an error was reported
            return self.validated(Release, {"date": page.day, "groups": groups}, page.line)
        return None

    def group(self, release: PageRelease, page: PageGroup) -> Group | None:
        fields = page.fields or {}
        exact = page.fields is not None  # annotated: nothing about it is inferred
        module = self.known(fields.get("module"), page.line)
        if not exact:
            module = self.text_module(page.context)
            if module is None and page.follows is not None:
                module = self.modules.get(id(page.follows))
        own = [self.own_module(item, exact, module) for item in page.articles]
        # Every article says it, and no note would take it without saying it: the group's.
        if not (exact or page.notes) and module is None and len(set(own)) == 1 and None not in own:
            module, own = own[0], [None] * len(own)
        self.modules[id(page)] = module
        scope, articles = (release.day, page.kind), []
        for item, article_module in zip(page.articles, own, strict=True):
            # A module already reported as unknown needs no second error.
            if article_module is None and module is None and "module" not in fields:
                how = _NO_MODULE.format(self.site.labels.module)
                self.error(item.line, "article", f"'{item.data['title'][:60]}' {how}")
            articles.append(self.article(item, scope, article_module))
        notes = [self.note(item, scope, exact, module) for item in page.notes]
        if None in articles or None in notes:
            return None
        data: dict[str, Any] = {"kind": page.kind, "module": module, "context": page.context}
        data |= {"chapter": fields.get("chapter"), "articles": articles, "notes": notes}
        return self.validated(Group, data, page.line)

    def own_module(self, item: PageItem, exact: bool, group_module: int | None) -> int | None:
        """Its annotation's module, else one its page or text names that is not its group's."""
        module = self.known(item.fields.get("module"), item.line)
        if module is None and not exact and "module" not in item.fields:
            if "page" in item.data:  # an article's page, or a note's text, may name one
                found = self.page_module(item.data["page"])
            else:
                found = self.text_module(item.data["text"])
            module = found if found != group_module else None
        return module

    def article(self, item: PageItem, scope: object, module: int | None) -> Article | None:
        slugs = page_slug(item.data["page"] or ""), slugify(item.data["title"])
        data = {"module": module, "chapter": item.fields.get("chapter"), **item.data}
        # An article is new once (the loader's rule): a new one's minted id is unique on any day.
        once = "new articles" if isinstance(scope, tuple) and scope[1] == "new" else None
        data["id"] = item.fields.get("id") or self.ids.mint(
            scope, *slugs, fallback="article", once=once
        )
        return self.validated(Article, data, item.line)

    def note(self, item: PageItem, scope: object, exact: bool, group: int | None) -> Note | None:
        fields, slug = item.fields, slugify(inline.plain(item.data["text"]))
        data = {"module": self.own_module(item, exact, group), "title": fields.get("title")}
        data |= {"page": fields.get("page"), **item.data}
        data["id"] = fields.get("id") or self.ids.mint(scope, slug, fallback="note")
        return self.validated(Note, data, item.line)

    def known(self, module: AnnotationValue | None, line: int) -> int | None:
        if not isinstance(module, int) or self.site.module(module) is not None:
            return module if isinstance(module, int) else None
        known = ", ".join(str(m.number) for m in self.site.modules)
        self.error(line, "module", f"module {module} is not in site.toml (modules {known})")
        return None

    def text_module(self, text: str | None) -> int | None:
        """The module a text names first: "Module 4 · Tối ưu suy luận ..." -> 4."""
        # The number may be followed by punctuation: "Module 4:", "Module 4·", "Module 4（…）";
        # the space may be a no-break one, as a page copied from a browser has.
        label = re.escape(self.site.labels.module)
        found = re.match(rf"{label}\s+(\d+)(?!\.?\w)", inline.plain(text or "").lstrip())
        number = int(found[1]) if found else None
        return number if number is not None and self.site.module(number) is not None else None

    def page_module(self, page: str | None) -> int | None:
        """The module whose section of the site holds ``page``."""
        parts = urlsplit(absolute(self.site.url, page)) if page else None
        if parts is None or parts.netloc != self.root.netloc:
            return None
        path = f"{parts.path}/"
        return next((n for prefix, n in self.sections.items() if path.startswith(prefix)), None)

    def validated(self, model: type[M], data: dict[str, Any], line: int) -> M | None:
        """``model`` from ``data``, where None leaves a field at its default; None on errors."""
        problems: list[Problem] = []
        given = {key: val for key, val in data.items() if val is not None}
        found = validated(model, given, "", problems)
        what = model.__name__.lower()  # "article"
        for problem in problems:  # check's words
            where = "" if problem.field == "(file)" else f".{problem.field}"
            self.error(line, f"{what}{where}", problem.message)
        return found


def slugify(text: str) -> str:
    """A slug of ``text``: lowercase ASCII words joined by single hyphens; may be empty.

    anyascii drops Vietnamese diacritics ("Tổng quan" -> "tong-quan") and spells CJK in pinyin,
    a syllable per character ("实现" -> "shi-xian"); emoji and other symbols are dropped.
    """
    parts = []
    for ch in unicodedata.normalize("NFC", text):
        category = unicodedata.category(ch)
        if category[0] == "S" or category in ("Cn", "Co", "Cs"):
            parts.append(" ")
        elif unicodedata.name(ch, "").startswith("CJK "):
            parts.append(f" {anyascii(ch)} ")  # one pinyin syllable per character
        else:
            parts.append(anyascii(ch))
    slug = _NOT_SLUG.sub("-", "".join(parts).lower()).strip("-")
    if len(slug) <= MAX_SLUG:
        return slug
    cut = slug[: MAX_SLUG + 1]
    # Cut at a word boundary when one is near, so no word is left half-written.
    boundary = cut.rfind("-")
    return (cut[:boundary] if boundary > MAX_SLUG // 2 else cut[:MAX_SLUG]).strip("-")


def page_slug(reference: str) -> str:
    """A slug of a page's last path segment: ".../41-cuda-gemm算子/" -> "41-cuda-gemm-suan-zi"."""
    last = PurePosixPath(unquote(urlsplit(reference).path)).name
    return slugify(_PAGE_SUFFIX.sub("", last))


class IdMinter:
    """Hands out ids that are unique within a scope (the loader's rule: date and kind)."""

    def __init__(self) -> None:
        self.taken: dict[object, set[str]] = {}
        self.last: dict[tuple[object, str], int] = {}  # the number minted last for a base

    def mint(self, scope: object, *candidates: str, fallback: str, once: object = None) -> str:
        """The first non-empty candidate's slug, with "-2", "-3"... when it is taken (in
        ``scope``, or in ``once`` too when given)."""
        base = next((c for c in candidates if c), fallback)[:MAX_SLUG].strip("-")
        last = (scope if once is None else once, base)  # "tong-quan-N" of any day: not again
        number = self.last.get(last, 1)  # those below are taken: not tried again
        slug = base if number == 1 else f"{base}-{number}"
        while not self.claim(scope, slug) or (once is not None and not self.claim(once, slug)):
            number += 1
            slug = f"{base}-{number}"
        self.last[last] = number
        return slug

    def claim(self, scope: object, slug: str) -> bool:
        """Take ``slug`` as the page gives it; False when it is taken already."""
        taken = self.taken.setdefault(scope, set())
        fresh = slug not in taken
        taken.add(slug)
        return fresh
