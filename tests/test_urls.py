"""Links as readers and validators see them: URIs, whatever the entries wrote."""

from __future__ import annotations

import pytest

from infrafeed.source.urls import absolute, check_reference


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        # Found by Hypothesis (test_properties): a "%" that starts no escape made
        # a URL that JSON Feed's "uri" format and the W3C validator refuse.
        ("%", "https://example.org/guide/%25"),
        ("a%2", "https://example.org/guide/a%252"),
        ("100%?q=5%#x%", "https://example.org/guide/100%25?q=5%25#x%25"),
        # An escape already there is kept, not encoded twice.
        ("a%20b", "https://example.org/guide/a%20b"),
        ("a%2Fb%e1", "https://example.org/guide/a%2Fb%e1"),
        ("tối ưu", "https://example.org/guide/t%E1%BB%91i%20%C6%B0u"),
    ],
)
def test_a_reference_becomes_a_uri(reference: str, expected: str) -> None:
    assert absolute("https://example.org/guide", reference) == expected


@pytest.mark.parametrize(
    "reference",
    [
        "www.html", "www-notes/x", "v0.32.0/x", "index.html", "compare/v1.0...v2.0",
        "./github.com/x", "https://example.org/search?path=/...", "https://example.org/app#/...",
        "x.co.md", "llama.cpp/build", "node.js/intro", "kernel.cc", "libcudart.so", "1.2/x",
    ],
)  # fmt: skip
def test_pages_of_the_site_that_look_like_hosts_or_placeholders_are_allowed(
    reference: str,
) -> None:
    """Only a host of www. or of a common top-level domain first, and a path segment "..."
    (not in a query or fragment), are refused (a reviewer's near misses)."""
    assert check_reference(reference) is None
