"""A one-line account of what the entries hold, for ``infrafeed check``."""

from __future__ import annotations

from collections import Counter

from .loader import Changelog
from .models import KINDS


def describe(changelog: Changelog) -> str:
    per_kind: Counter[str] = Counter()
    per_module: Counter[int] = Counter()
    for rf in changelog.releases:
        for group in rf.release.groups:
            per_kind[group.kind] += len(group.articles) + len(group.notes)
            for article in group.articles:
                module = article.module if article.module is not None else group.module
                assert module is not None  # the loader guarantees it
                per_module[module] += 1
    kinds = ", ".join(f"{kind} {per_kind[kind]}" for kind in KINDS if per_kind[kind])
    modules = ", ".join(
        f"{m.number} {m.slug} {per_module[m.number]}" for m in changelog.site.modules
    )
    articles = sum(per_module.values())
    notes = sum(per_kind.values()) - articles  # each change is an article or a note
    return (
        f"ok: {_count(len(changelog.releases), 'release')}, {_count(articles, 'article change')}, "
        f"{_count(notes, 'note')}; by kind: {kinds or 'none'}; articles by module: {modules}"
    )


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
