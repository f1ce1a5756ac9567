"""Always-valid decisions on a paired comparison that grows item by item (--eval-stop-when-decided).

A run compared with its baseline adds, per question, d = its share right minus the baseline's
(in [-1, 1]; with one epoch each: -1 broken, 0 alike, +1 fixed). `MeanBound` keeps a confidence
sequence for the mean of d: an interval that holds at every sample size at once with probability
1 - alpha, so the run may look after every block of answers and stop at the first decision without
raising its false-alarm rate. It is the predictable plug-in empirical-Bernstein sequence of
Waudby-Smith and Ramdas, "Estimating means of bounded random variables by betting", JRSS B 86(1),
2024, Theorem 2 (two-sided, its running intersection): variance-adaptive, so the many questions two
runs answer alike narrow it fast. It assumes the d are independent draws; questions drawn from a
finite bank without replacement only make that conservative for sums (Hoeffding 1963, section 6).
"""

from __future__ import annotations

import math
from typing import NamedTuple

CAP = 0.5  # the largest bet per step (the paper's c; 1/2 or 3/4)


class Decision(NamedTuple):
    verdict: str | None  # "worse", "not worse", or None while undecided
    low: float  # the confidence sequence for the mean difference (current - baseline)
    high: float
    n: int


class MeanBound:
    """The confidence sequence for the mean of values in [low, high], one value at a time."""

    def __init__(self, alpha: float, low: float = -1.0, high: float = 1.0):
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        self.alpha, self.low, self.high = alpha, low, high
        self.n = 0
        self._sum = self._squares = self._bets = self._bet_sum = self._penalty = 0.0
        self._mean = 0.5  # the running estimate mu-hat_{t-1} on the [0, 1] scale
        self._variance = 0.25  # sigma-hat^2_{t-1}
        self._lo, self._hi = 0.0, 1.0  # the running intersection, on the [0, 1] scale

    def add(self, value: float) -> None:
        if not self.low <= value <= self.high:
            raise ValueError(f"{value} is outside [{self.low}, {self.high}]")
        x = (value - self.low) / (self.high - self.low)
        self.n += 1
        t, log_term = self.n, math.log(2 / self.alpha)
        bet = min(math.sqrt(2 * log_term / (self._variance * t * math.log(1 + t))), CAP)
        self._penalty += (x - self._mean) ** 2 * (-math.log(1 - bet) - bet)  # v_t psi_E(bet): 4(.)^2 (.)/4
        self._bets += bet
        self._bet_sum += bet * x
        self._sum += x
        self._mean = (0.5 + self._sum) / (t + 1)
        self._squares += (x - self._mean) ** 2
        self._variance = (0.25 + self._squares) / (t + 1)
        centre, width = self._bet_sum / self._bets, (log_term + self._penalty) / self._bets
        self._lo, self._hi = max(self._lo, centre - width), min(self._hi, centre + width)

    def interval(self) -> tuple[float, float]:
        """The current bounds on the mean, on the values' own scale."""
        span = self.high - self.low
        return self.low + span * self._lo, self.low + span * min(self._hi, 1.0)


def decide(bound: MeanBound, max_drop: float = 0.0) -> Decision:
    """ "worse" once the whole sequence lies below 0 (the run is worse than its baseline); "not worse"
    once it lies above -max_drop (any drop is smaller than the tolerated one); None otherwise."""
    low, high = bound.interval()
    verdict = "worse" if high < 0 else "not worse" if low > -max_drop else None
    return Decision(verdict, low, high, bound.n)
