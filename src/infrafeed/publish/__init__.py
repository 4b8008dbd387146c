"""Publishing: the only stage that writes to the output folder."""

from typing import NamedTuple


class Report(NamedTuple):
    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    removed: tuple[str, ...]
    kept: tuple[str, ...]  # files of vanished feeds left alone: not ours, or edited since

    @property
    def changed(self) -> bool:
        return bool(self.written or self.removed)
