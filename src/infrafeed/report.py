"""What a build did to the output folder.

Apart from publish.py, which makes it, so that a build that finds nothing
to do (build.py's no-op check) can say so without importing the publisher.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Report:
    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    removed: tuple[str, ...]
    kept: tuple[str, ...]  # files of vanished feeds left alone: not ours, or edited since

    @property
    def changed(self) -> bool:
        return bool(self.written or self.removed)
