"""The one clock of infrafeed; tests pass their own. Feed dates come from the entries, never
from here: it only paces waiting (the output lock, WebSub retries) and dates ``infrafeed new``.
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
