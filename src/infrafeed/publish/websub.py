"""WebSub publishing: tell the hub which feeds changed, so subscribers hear in seconds.

A hub that is down must not cost the site its feeds: this runs once the output is published,
and failures are returned for the caller to report, never raised.
"""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

from .._version import __version__
from ..clock import SYSTEM, Clock
from ..errors import count

ATTEMPTS = 3


class _Unfollowed(urllib.request.HTTPRedirectHandler):
    # urllib follows a 301, 302 or 303 with a GET, without the form: the hub would answer,
    # but never hear of the feed. A redirect is an error, reported with where it leads.
    def redirect_request(self, *_: object) -> None:
        return None


_OPENER = urllib.request.build_opener(_Unfollowed)


@dataclass(frozen=True)
class Notification:
    topic: str  # the feed URL the hub was told about
    error: str | None  # why the hub was not told, after every attempt; None when it was


def notify(
    hub: str,
    topics: Sequence[str],
    *,
    timeout: float = 10.0,  # seconds per request: a cron job must not hang on a slow hub
    attempts: int = ATTEMPTS,
    backoff: float = 1.0,  # seconds before the second attempt, doubled for each next one
    budget: float = 30.0,  # seconds for all of a build's pings; the rest wait for the next
    clock: Clock = SYSTEM,
) -> tuple[Notification, ...]:
    """Send one publish notification per topic; return what happened to each.

    Each request has a timeout and a bounded number of attempts. A hub that cannot be reached is
    not asked again for the other topics, and nothing is sent, waited for or slept on past
    ``budget`` seconds: those come back as failed, for the next build to send.
    """
    deadline = clock.monotonic() + budget

    def publish(topic: str) -> tuple[str | None, bool]:
        """Why the hub was not told (None when it was), and whether it answered at all."""
        # http(s) only, so urlopen can never read a local file (the settings check it too).
        if not hub.startswith(("http://", "https://")):
            return f"{hub!r} is not an http(s) URL", False
        request = urllib.request.Request(  # noqa: S310
            hub,
            data=urlencode({"hub.mode": "publish", "hub.url": topic}).encode("ascii"),
            method="POST",
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "User-Agent": f"infrafeed/{__version__}",
            },
        )
        cause, answered, tried = None, False, 0
        while tried < attempts and (left := deadline - clock.monotonic()) > 0:
            if tried:
                clock.sleep(min(backoff * 2 ** (tried - 1), left))
                if (left := deadline - clock.monotonic()) <= 0:
                    break
            tried += 1
            try:
                with _OPENER.open(request, timeout=min(timeout, left)) as response:
                    response.read(65_536)
                return None, True
            except urllib.error.HTTPError as exc:
                cause, answered = f"HTTP {exc.code} {exc.reason}", True
                if 300 <= exc.code < 400:
                    moved = exc.headers.get("Location", "elsewhere")
                    return f"{cause}: the hub moved to {moved}; set [feeds] hub to its URL", True
                # A 4xx says the request itself is wrong: asking again will not help.
                if 400 <= exc.code < 500 and exc.code not in (408, 429):
                    return cause, True
            except (OSError, http.client.HTTPException) as exc:  # URLError is an OSError
                cause = str(getattr(exc, "reason", None) or exc) or type(exc).__name__
        if cause is None:
            return None, False  # the budget was spent before a first attempt
        return f"{cause} (after {count(tried, 'attempt')})", answered

    results: list[Notification] = []
    down: str | None = None  # why the hub could not be reached
    spent = f"not sent within {budget:g}s"
    for topic in topics:
        if down is not None:  # said as it is: this topic was never sent
            results.append(Notification(topic, down if down == spent else f"not sent: {down}"))
            continue
        error, answered = publish(topic)
        if not answered:
            down = f"for an earlier feed, {error}" if error else spent
        results.append(Notification(topic, error or down))
    return tuple(results)
