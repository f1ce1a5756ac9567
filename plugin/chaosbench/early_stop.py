"""--eval-stop-when-decided: the controller adds each answered question's paired difference with
the baseline to an always-valid confidence sequence (sequential.py) and, after every BLOCK of them,
stops the run's asking once it decides "worse" or "not worse" (docs/chaosbench.md, "Stopping
when decided").

A question's difference is its share of epochs right minus the baseline's share (one epoch each:
-1 broken, 0 alike, +1 fixed), added once all its epochs are in; questions the baseline lacks, has
no gold for or failed on, and questions whose calls all failed now, add nothing (as in a
comparison). Dialogues count as questions. The items left are skipped as not asked, and the run
is complete: it was decided, not cut short.
"""

from __future__ import annotations

from statistics import fmean

from pytest_reasoning_evals.chaosbench.epoch_compare import per_question
from pytest_reasoning_evals.chaosbench.rows import Row
from pytest_reasoning_evals.sequential import Decision, MeanBound, decide

BLOCK = 20  # questions between two looks (any number keeps the level: the sequence is valid at every n)
VERDICTS = {"worse": "worse than the baseline", "not worse": "not worse than the baseline"}


class EarlyStop:
    def __init__(self, baseline_items: dict, epochs: int, alpha: float, max_drop: float | None):
        self.before = per_question(baseline_items)
        self.epochs = epochs
        self.max_drop = max_drop or 0.0
        self.bound = MeanBound(alpha)
        self.waiting: dict[str, list[bool | None]] = {}  # a question's epochs in so far (None: its call failed)
        self.since_look = 0
        self.decision: Decision | None = None

    def add(self, row: Row) -> Decision | None:
        """One answered item; the decision when this one made it (once), else None."""
        question = row.question_id or row.id
        before = self.before.get(question)
        if self.decision is not None or before is None or before["failed"] or row.status == "no_gold":
            return None
        epochs = self.waiting.setdefault(question, [])
        epochs.append(None if row.error else row.correct is True)
        if len(epochs) < self.epochs:
            return None
        measured = [right for right in self.waiting.pop(question) if right is not None]
        if not measured:
            return None
        self.bound.add(fmean(measured) - float(before["share"]))
        self.since_look += 1
        if self.since_look < BLOCK:
            return None
        self.since_look = 0
        decision = decide(self.bound, self.max_drop)
        self.decision = decision if decision.verdict else None
        return self.decision

    def reason(self) -> str:
        """What each item left says (the budget's marker text)."""
        d = self.decision
        return (
            f"not asked: decided after {d.n} questions, {VERDICTS[d.verdict]} "
            f"(--eval-stop-when-decided; paired difference within [{d.low:+.3f}, {d.high:+.3f}])"
        )


def decided_line(decided: dict) -> str:
    low, high = decided["difference_bound"]
    return (
        f"DECIDED EARLY (--eval-stop-when-decided): after {decided['questions']:,} questions the run is "
        f"{VERDICTS[decided['verdict']]} (paired accuracy difference within [{low:+.1%}, {high:+.1%}], always valid); "
        f"{decided['not_asked']:,} items not asked, about ${decided['not_spent_usd']:.4f} not spent"
    )


def with_decision(comparison: dict, decided: dict | None) -> dict:
    """The comparison with the run's early decision: decided worse is a regression, whatever the
    test of the questions asked says."""
    if decided is None:
        return comparison
    return {
        **comparison,
        "decided_early": decided,
        "regressed": comparison["regressed"] or decided["verdict"] == "worse",
    }


def decided_block(decision: Decision | None, not_asked: int, spent: float, asked: int) -> dict | None:
    """summary.json's "decided_early": the verdict, its bound, the questions behind it, the items left
    and about what they would have cost (this run's mean cost per answered item)."""
    if decision is None:
        return None
    return {
        "verdict": decision.verdict,
        "questions": decision.n,
        "difference_bound": [decision.low, decision.high],
        "not_asked": not_asked,
        "not_spent_usd": spent / asked * not_asked if asked else 0.0,
        "test": "always-valid empirical-Bernstein confidence sequence (Waudby-Smith and Ramdas 2024)",
    }
