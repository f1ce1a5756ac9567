"""Keeping a long eval run's live objects out of the cyclic garbage collector's walk (gc.freeze),
and young collections rarer (docs/design.md, "Speed machinery")."""

from __future__ import annotations

import gc

FREEZE_EVERY = 1000  # items; a collection over what 1,000 items left costs a few milliseconds
YOUNG_THRESHOLD = 50_000  # allocations between collections of the youngest generation


class Freezer:
    def __init__(self):
        self.active = False
        self._ticks = 0
        self._thresholds: tuple[int, int, int] | None = None  # Python's, while the run has its own

    def start(self) -> None:
        """Freeze what is alive, unless the collector is off (a process that switched it off
        chose when to collect, if ever: none of this is needed, and it would collect)."""
        if not self.active and gc.isenabled():
            gc.freeze()
            self._thresholds = gc.get_threshold()
            gc.set_threshold(max(YOUNG_THRESHOLD, self._thresholds[0]), *self._thresholds[1:])
            self.active = True

    def tick(self) -> None:
        """An item was made, or finished."""
        if self.active:
            self._ticks += 1
            if self._ticks % FREEZE_EVERY == 0:
                gc.collect()  # what those items left as garbage is never frozen
                gc.freeze()

    def thaw(self) -> None:
        if self.active:
            gc.unfreeze()
            gc.set_threshold(*self._thresholds)
            self.active = False
