"""The progress line of a live run, on the controller: items done of the total, rate, time left,
live calls against cassette hits, failed calls, and dollars spent against --eval-max-cost (all
read from the run's spend ledger, spend.py).

It starts with the first live call, so a replay prints nothing extra. On a terminal one line is
rewritten in place (the eval items' own progress characters give way to it); elsewhere (CI logs) a
line is printed every INTERVAL seconds, and once at the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_reasoning_evals.spend import SpendLedger

INTERVAL = 15.0  # seconds between progress lines in a log
REDRAW = 0.2  # at most five redraws a second on a terminal


def write_own_line(reporter, text: str) -> None:
    """`text` on a terminal line of its own: pytest's ensure_newline misses a line of item letters
    or -q's "[100%]" written since its last line ("Feval progress")."""
    if getattr(getattr(reporter, "_tw", None), "width_of_current_line", 0):
        reporter.write("\n")
    reporter.write_line(text)


def duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m{rest % 60:02d}s"


class Progress:
    def __init__(
        self, reporter, max_cost: float | None, ledger: SpendLedger, clock: Callable[[], float] = time.monotonic
    ):
        self.reporter = reporter  # pytest's TerminalReporter (None: nowhere to print)
        self.in_place = reporter is not None and bool(reporter.isatty) and reporter.verbosity <= 0
        self.max_cost = max_cost
        self.clock = clock
        self.started = clock()
        self.done = 0
        self.total = 0
        self.ledger = ledger  # the calls and the spend, of the items reported so far and of calls made ahead
        self._shown_at: float | None = None

    def add(self, total: int) -> None:
        """One more item finished, its calls in the ledger (total: the items of this run, as pytest counts them)."""
        self.done += 1
        self.total = max(total, self.done)
        if not self.live or self.reporter is None:
            return
        now = self.clock()
        if self._shown_at is not None and now - self._shown_at < (REDRAW if self.in_place else INTERVAL):
            return
        self._show(now)

    @property
    def live(self) -> bool:
        """A live call was seen: from here on the line is shown."""
        return self.ledger.live > 0

    def teststatus(self, status: tuple | None, report) -> tuple | None:
        """An eval item's report status (None: pytest's own) as the terminal shows it: while the
        progress line is rewritten in place, the line shows the items instead of their letters."""
        if not (self.in_place and self.live):
            return status
        category, _, word = status or (report.outcome, "", report.outcome.upper())
        return category, "", word

    def close(self) -> None:
        """At the end of the run: the final counts, and the line ended."""
        if self.live and self.reporter is not None:
            self._show(self.clock())
            if self.in_place:
                self.reporter.write("\n")

    def _show(self, now: float) -> None:
        self._shown_at = now
        if self.in_place:
            self.reporter.rewrite(self.line(now), erase=True)
        else:
            write_own_line(self.reporter, self.line(now))

    def line(self, now: float) -> str:
        elapsed = max(now - self.started, 1e-9)
        rate = self.done / elapsed
        left = (self.total - self.done) / rate if rate > 0 else None
        t = self.ledger
        budget = f" of ${self.max_cost:g}" if self.max_cost is not None else ""
        return (
            f"eval progress: {self.done:,}/{self.total:,} items ({self.done / self.total:.0%}), {rate:.1f}/s, "
            f"{'ETA ' + duration(left) if left else 'done in ' + duration(elapsed)}, "
            f"calls {t.live:,} live / {t.cassette:,} cassette, {t.errors:,} failed, ${t.run_spent():.4f}{budget} spent"
        )
