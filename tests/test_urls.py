"""Links as readers and validators see them: URIs, whatever the entries wrote."""

from __future__ import annotations

import pytest

from infrafeed.source.urls import absolute


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
