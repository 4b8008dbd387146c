"""URLs in the entries: which are allowed, and how they become absolute, encoded URIs.

Entries may hold ``http``/``https`` URLs or site-relative references (``/AIInfraGuide/x``,
``cuda/x``). Everything else (``javascript:``, ``data:``, ``mailto:``, ``//host``) is
refused at load time, so the renderers only ever see safe references.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")
_CONTROL = re.compile("[\x00-\x1f\x7f]")
# A link to "www.example.org/x", "github.com/x" or "127.0.0.1:4321/x" that lost its "https://"
# (a maintainer's paste): www., a host of a common top-level domain, or an address, first.
_HOST_FIRST = re.compile(
    r"((?:www(?:\.[a-z0-9-]+){2,}|[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?::[0-9]+)?"
    r"|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|co|uk|dev|ai|app|me|be|ly|asia|google"
    r"|edu|gov|vn|cn)))(?:$|[/?#])",
    re.IGNORECASE,
)
_LOCAL = "has the address {}, of one network's own, which no reader elsewhere reaches"
# Labels of letters, digits and inner hyphens ("www..x.org" and "x.-org" are none).
_HOST = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.?"
)
# Reserved and unreserved characters stay as they are; "%" stays so that an
# already-encoded URL is not encoded twice.
_SAFE_PATH = "/%:@!$&'()*+,;=-._~"
_SAFE_QUERY = _SAFE_PATH + "?"
# ...but a "%" that starts no escape is a character of its own: it is encoded.
_STRAY_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


def check_reference(value: str, *, public: bool = True) -> str | None:
    """Return why ``value`` is not an allowed link target, or None when it is. Not ``public``:
    the site's own addresses, which its operator may serve from one network (a preview)."""
    if value != value.strip():
        return "must not start or end with white space"
    if not value:
        return "must not be empty"
    if len(value) > 2_000:
        return "is longer than 2000 characters"
    if _CONTROL.search(value):
        return "must not contain control characters"
    if "\\" in value:
        return "must not contain a backslash; use '/'"
    if _link_title(value):  # Markdown's [text](url "title"): no title is shown here
        return 'holds a link title ("..." after the URL), which is not supported; remove it'
    if re.search(r"(^|/)(\.\.\.|…)($|/)", value.partition("#")[0].partition("?")[0]):
        return "holds '...', a placeholder: write the page's address, or leave the link out"
    if match := _SCHEME.match(value):
        scheme = match.group(1).lower()
        if scheme not in ("http", "https"):
            return (
                f"the '{scheme}:' scheme is not allowed; "
                "use an http(s) URL or a site-relative path such as /AIInfraGuide/cuda/"
            )
        try:
            parts = urlsplit(value)
            host, _port = parts.hostname, parts.port
        except ValueError as exc:  # "https://[::1", "https://host:99999/"
            return f"is not a valid URL: {exc}"
        if not host:
            return "an http(s) URL needs a host, e.g. https://example.org/page"
        if "@" in parts.netloc:
            return "must not hold a user name or password (user@host): feeds are public"
        try:
            ascii_host = _ascii_host(host)
        except UnicodeError:
            return f"has a host name that cannot be written in ASCII (IDNA): '{host}'"
        if ":" in host:  # RSS and OPML links are RFC 2396 URIs, without IPv6 literals
            return f"has an IP address for its host ([{host}]); use a domain name"
        if not _HOST.fullmatch(ascii_host):
            return f"has a host name with characters no host name has: '{host}'"
        # Feeds are read anywhere: a host without a dot is one network's own. OPML's ownerId
        # (and the W3C validator) also refuses one ending with a dot.
        if "." not in ascii_host.rstrip("."):
            return f"has the host '{host}', without a dot, which no reader elsewhere reaches"
        if ascii_host.endswith("."):
            return f"has a host name ending with a dot: write '{host.rstrip('.')}'"
        if public and _local(ascii_host):  # 127.0.0.1: where a dev server said the page was
            return _LOCAL.format(host)
        return None
    if value.startswith("//"):
        return "a URL starting with '//' leaves the site; write https://host/... instead"
    if typo := re.match(r"(https?)/+", value, re.I):  # else a page below the site: "https/x"
        return f"starts '{typo.group()}', a URL without its ':'; write {typo[1]}://"
    if bare := _HOST_FIRST.match(value):  # else a page below the site: "github.com/x"
        address = bare[1].split(":")[0]
        if public and _local(address):  # "127.0.0.1:4321/x": https:// would not do either
            return _LOCAL.format(address)
        return (
            f"starts '{bare[1]}', a host without its scheme: write https://{value}, or "
            f"./{value} for a page of the site"
        )
    return None


def _local(host: str) -> bool:
    try:
        return not ipaddress.IPv4Address(host).is_global
    except ValueError:  # a name
        return False


def _link_title(value: str) -> bool:
    """Whether ``value`` ends with a quoted title after white space: ``/a "title"``."""
    # Not a regex: "\s(["']).*\1$" tried the rest of the text from every space and quote
    # (quadratic in a target of " '" pairs).
    quote = value[-1:]
    return quote in ("'", '"') and re.search(rf"\s{quote}", value[:-1]) is not None


def _ascii_host(host: str) -> str:
    return host if host.isascii() else host.encode("idna").decode("ascii")


def absolute(base: str, reference: str) -> str:
    """Resolve ``reference`` against the folder ``base``; percent-encode the result (IRI to URI).

    As on the site's pages: ``cuda/x`` below the site, ``/AIInfraGuide/x`` against its origin.
    """
    return encoded(urljoin(base if base.endswith("/") else base + "/", reference))


def encoded(url: str) -> str:
    """The absolute IRI ``url`` as a URI: percent-encoded, its host in ASCII."""
    parts = urlsplit(url)
    host = _ascii_host(parts.hostname or "")
    host = f"[{host}]" if ":" in host else host  # an IPv6 address keeps its brackets
    netloc = host if parts.port is None else f"{host}:{parts.port}"
    path = _quote(parts.path or "/", _SAFE_PATH)  # the same URL (RFC 3986, 6.2.3); OPML wants it
    query, fragment = (_quote(part, _SAFE_QUERY) for part in (parts.query, parts.fragment))
    return urlunsplit((parts.scheme.lower(), netloc, path, query, fragment))


def site_path(base: str, reference: str) -> str:
    """A relative ``reference`` resolved against the URL ``base``, as a path from the site's
    origin ("cuda/x" -> "/AIInfraGuide/cuda/x"); a path or an http(s) URL stays as written."""
    if reference.startswith("/") or urlsplit(reference).scheme:
        return reference
    parts = urlsplit(urljoin(base, reference))
    return urlunsplit(("", "", parts.path, parts.query, parts.fragment))


def _quote(text: str, safe: str) -> str:
    return _STRAY_PERCENT.sub("%25", quote(text, safe=safe))
