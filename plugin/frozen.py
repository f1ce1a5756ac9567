"""Keeping a long eval run's live objects out of the cyclic garbage collector's walk.

A full collection walks every object that can be in a cycle. In a run of tens of thousands of
items most of them live to the end (the items, then each item's reports and record), so the
collector walked them again and again: about a tenth of a replay's time at 40,000 items
(benchmarks/replay_throughput.py). gc.freeze() moves what is alive now into a generation the
collector never walks; reference counting still frees any of it that is let go (only a cycle
among frozen objects waits for the thaw).

So: once a process makes eval items (or, on the xdist controller, gets their first results),
what is alive is frozen; then every FREEZE_EVERY items made or finished, what they left is
collected (a walk over those objects only: the rest is frozen) and the survivors frozen too.
Meanwhile the youngest generation is collected after YOUNG_THRESHOLD allocations instead of
Python's 700: an item makes hundreds of short-lived objects that reference counting frees
anyway, and a collection every few items walked them first (~4% of a replay). At the very end
everything goes back to the collector, and the threshold to what it was.
"""

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
