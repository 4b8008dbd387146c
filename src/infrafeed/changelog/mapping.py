"""Turn a read changelog page into validated releases: modules, ids, models.

What the page does not show is taken from its annotations when it has them
(a page ``changelog_page`` wrote has one on every group), else inferred from
what it shows, and never guessed beyond that:

- a group's module from a context line that starts with "Module 4";
- an article's module from its page, when the page lies in a module's
  section of the site (``/cuda/...`` is module 2);
- a note's module from a text that starts with "Module 3".

An article whose module cannot be known this way is an error that says how
to give it one. Chapters are never inferred ("Chương 1 và 2" names two).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

from pydantic import BaseModel, ValidationError

from ..errors import PageError, Problem
from ..source import inline
from ..source.models import MAX_ITEMS_PER_RELEASE, Article, Group, Note, Release, Site
from ..source.urls import absolute
from .conventions import Annotation, AnnotationValue
from .reader import PageArticle, PageGroup, PageNote, PageRelease, ParsedPage
from .slugs import IdMinter, page_slug, slugify

M = TypeVar("M", bound=BaseModel)

_GROUP_KEYS = {"module": int, "chapter": int}
_ARTICLE_KEYS = {"module": int, "chapter": int, "unnumbered": bool}
_NOTE_KEYS = {"module": int, "page": str, "note": bool}


@dataclass(frozen=True)
class ImportedRelease:
    line: int  # of its heading on the page
    sequence: int  # 1, or N for the N-th release of its day
    release: Release


def to_releases(page: ParsedPage, site: Site, source: str) -> list[ImportedRelease]:
    """Validated releases, in the page's order; raise :class:`PageError` with every error."""
    mapper = _Mapper(site, source)
    imported = []
    for page_release in page.releases:
        release = mapper.release(page_release)
        if release is not None:
            imported.append(ImportedRelease(page_release.line, page_release.sequence, release))
    errors = page.errors + mapper.errors
    if not page.releases and not errors:
        errors.append(
            Problem(
                source,
                "page",
                "has no release to import: no heading such as '## 2026-11-07' "
                "with changes under it",
            )
        )
    if errors:
        raise PageError(errors, source)
    return imported


class _Mapper:
    def __init__(self, site: Site, source: str) -> None:
        self.site = site
        self.source = source
        self.errors: list[Problem] = []
        self.ids = IdMinter()
        self.group_modules: dict[int, int | None] = {}  # id(PageGroup) -> its module
        root = urlsplit(absolute(site.url, ""))
        self.sections = {
            (root.netloc, f"{root.path}{quote(module.section)}"): module.number
            for module in site.modules
        }
        self.module_prefix = f"{site.labels.module} "

    def error(self, line: int, what: str, message: str) -> None:
        self.errors.append(Problem(self.source, what, message, line))

    def release(self, page: PageRelease) -> Release | None:
        groups = [g for g in (self.group(page, group) for group in page.groups) if g is not None]
        count = sum(len(g.articles) + len(g.notes) for g in groups)
        if count > MAX_ITEMS_PER_RELEASE:
            limit = MAX_ITEMS_PER_RELEASE
            self.error(page.line, "release", f"holds {count} changes; the limit is {limit}")
            return None
        if len(groups) != len(page.groups):
            return None  # an error was reported
        return self.validated(Release, {"date": page.day, "groups": groups}, page.line, "release")

    def group(self, release: PageRelease, page: PageGroup) -> Group | None:
        fields = self.fields(page.annotation, _GROUP_KEYS, page.line)
        exact = page.annotation is not None
        if exact:
            module, chapter = fields.get("module"), fields.get("chapter")
        else:
            chapter = None
            module = self.text_module(page.context)
            if module is None and page.follows is not None:
                module = self.group_modules.get(id(page.follows))
        module = self.known_module(module, page.line)
        # A module already reported as unknown: its articles need no second error.
        unknown_module = exact and "module" in fields and module is None
        scope = (release.day, page.kind)
        articles = [self.article(a, scope, exact, module) for a in page.articles]
        if not exact and module is None:
            # Every article says the same module: make it the group's.
            own = {a.get("module") for a in articles}
            if len(own) == 1 and None not in own:
                module = own.pop()
                for article in articles:
                    del article["module"]
        self.group_modules[id(page)] = module
        for article, source in zip(articles, page.articles, strict=True):
            if article.get("module") is None and module is None and not unknown_module:
                self.error(
                    source.line,
                    "article",
                    f"'{source.title[:60]}' has no module: link it to a page in a module's "
                    f"section of the site, start its group's context line with "
                    f"'{self.module_prefix}N', or add <!-- infrafeed group module=N --> "
                    "under its heading",
                )
        notes = [self.note(n, scope, exact, module) for n in page.notes]
        data = {"kind": page.kind, "module": module, "chapter": chapter, "context": page.context}
        built = [
            self.validated(Article, a, s.line, "article")
            for a, s in zip(articles, page.articles, strict=True)
        ]
        built_notes = [
            self.validated(Note, n, s.line, "note") for n, s in zip(notes, page.notes, strict=True)
        ]
        if None in built or None in built_notes:
            return None
        return self.validated(
            Group, {**_present(data), "articles": built, "notes": built_notes}, page.line, "group"
        )

    def article(
        self, page: PageArticle, scope: object, exact: bool, group_module: int | None
    ) -> dict[str, Any]:
        fields = self.fields(page.annotation, _ARTICLE_KEYS, page.line)
        if "module" in fields or exact:
            module = fields.get("module")
        else:
            found = self.page_module(page.page)
            module = found if found != group_module else None
        return {
            "id": self.ids.mint(
                scope, page_slug(page.page or ""), slugify(page.title), fallback="article"
            ),
            "module": self.known_module(module, page.line),
            **_present(
                {
                    "chapter": fields.get("chapter"),
                    "number": page.number,
                    "title": page.title,
                    "summary": page.summary,
                    "page": page.page,
                }
            ),
        }

    def note(
        self, page: PageNote, scope: object, exact: bool, group_module: int | None
    ) -> dict[str, Any]:
        fields = self.fields(page.annotation, _NOTE_KEYS, page.line)
        if "module" in fields or exact:
            module = fields.get("module")
        else:
            found = self.text_module(page.text)
            module = found if found != group_module else None
        table = None
        if page.table is not None:
            table = {"header": page.table[0], "rows": page.table[1]}
        text = inline.to_text(inline.parse(page.text)) if _parses(page.text) else page.text
        return _present(
            {
                "id": self.ids.mint(scope, slugify(text), fallback="note"),
                "module": self.known_module(module, page.line),
                "text": page.text,
                "summary": page.summary,
                "details": tuple(page.details) or None,
                "page": fields.get("page"),
                "table": table,
            }
        )

    def fields(
        self, annotation: Annotation | None, allowed: Mapping[str, type], line: int
    ) -> dict[str, AnnotationValue]:
        if annotation is None:
            return {}
        good: dict[str, AnnotationValue] = {}
        for key, value in annotation.fields.items():
            kind = allowed.get(key)
            if kind is None:
                self.error(
                    line,
                    "annotation",
                    f"unknown key '{key}'; here it may hold {', '.join(sorted(allowed))}",
                )
            elif type(value) is not kind:
                expected = {int: "a whole number", bool: "true", str: "a quoted text"}[kind]
                self.error(line, "annotation", f"{key} must be {expected}, not {value!r}")
            else:
                good[key] = value
        return good

    def known_module(self, module: object, line: int) -> int | None:
        if module is None:
            return None
        assert isinstance(module, int)
        if self.site.module(module) is None:
            known = ", ".join(str(m.number) for m in self.site.modules)
            self.error(line, "module", f"module {module} is not in site.toml (modules {known})")
            return None
        return module

    def text_module(self, text: str | None) -> int | None:
        """The module a text names first: "Module 4 · Tối ưu suy luận ..." -> 4."""
        if not text or not _parses(text):
            return None
        plain = inline.to_text(inline.parse(text)).lstrip()
        if not plain.startswith(self.module_prefix):
            return None
        number = plain[len(self.module_prefix) :].split(maxsplit=1)[0].rstrip(":·,.")
        if not number.isdigit():
            return None
        found = int(number)
        return found if self.site.module(found) is not None else None

    def page_module(self, page: str | None) -> int | None:
        """The module whose section of the site holds ``page``."""
        if page is None:
            return None
        parts = urlsplit(absolute(self.site.url, page))
        for (host, prefix), number in self.sections.items():
            if parts.netloc == host and (
                parts.path == prefix or parts.path.startswith(prefix + "/")
            ):
                return number
        return None

    def validated(self, model: type[M], data: dict[str, Any], line: int, what: str) -> M | None:
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            for error in exc.errors(include_url=False):
                where = ".".join(str(part) for part in error["loc"])
                message = str(error["msg"]).removeprefix("Value error, ")
                self.error(line, f"{what}.{where}" if where else what, message)
            return None


def _present(data: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if value is not None}


def _parses(text: str) -> bool:
    try:
        inline.parse(text)
    except inline.MarkupError:
        return False
    return True
