"""The one clock of infrafeed; tests pass their own. Feed dates come from the entries, never
from here: it paces waiting (the output lock, WebSub retries), dates ``infrafeed new`` and
tells which releases are dated after today (a warning).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from functools import partial
from typing import NamedTuple


class Clock(NamedTuple):
    now: Callable[[], dt.datetime] = partial(dt.datetime.now, dt.UTC)  # timezone-aware
    monotonic: Callable[[], float] = time.monotonic  # seconds, for deadlines
    sleep: Callable[[float], None] = time.sleep


SYSTEM = Clock()
