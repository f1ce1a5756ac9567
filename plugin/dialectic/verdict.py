"""A dialectic variant's verdict: the one rule that decides its pass (and a judged response's),
and the words its gate and its option's help say it in. Its numbers are the settings' (settings.PASS_RULE)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PassRule:
    """A variant passes with no hard fails, mean score >= min_score, mode accuracy >= min_mode_accuracy;
    a judged response passes at min_score."""

    min_score: float
    min_mode_accuracy: float

    def variant_passes(self, hard_fails: int, mean_score: float | None, mode_accuracy: float) -> bool:
        return (
            hard_fails == 0
            and mean_score is not None
            and mean_score >= self.min_score
            and mode_accuracy >= self.min_mode_accuracy
        )

    def score_passes(self, score: float) -> bool:
        return score >= self.min_score

    def words(self) -> str:
        """The rule as the option's help and the report say it."""
        return f"no hard fails, mean score >= {self.min_score:g}, mode accuracy >= {self.min_mode_accuracy:g}"
