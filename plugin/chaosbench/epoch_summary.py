"""What a run with --eval-epochs K > 1 adds to summary.json ("epochs"): the questions, not their
epochs, are the independent units (epoch_stats.py).

A question's score is its share of epochs right among its epochs with gold whose calls did not
fail (an UNKNOWN answer is not right, as in a comparison); accuracy is the mean share over the
questions, its 95% interval the clustered one, and majority-vote accuracy beside it. Consistency
(the mean share of a question's epochs giving its most frequent label, UNKNOWN a label) and the
flip rate (the share of questions whose epochs did not all agree) are the run's noise floor.
Dialogues are left out (a dialogue's epochs are items and records, but not in this block)."""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction
from statistics import fmean

from pytest_reasoning_evals.chaosbench.epoch_compare import paired_item, per_question
from pytest_reasoning_evals.chaosbench.rows import QuestionRow
from pytest_reasoning_evals.epoch_stats import agreement, clustered_interval, majority_accuracy


def question_shares(rows: list[QuestionRow]) -> list[Fraction]:
    """Each question's share of measured epochs right, as a comparison scores it (epoch_compare.per_question;
    questions with none measured are left out)."""
    questions = per_question({row.id: paired_item(row) for row in rows if row.epoch})
    return [question["share"] for question in questions.values() if question["share"] is not None]


def _block(rows: list[QuestionRow]) -> dict:
    shares = question_shares(rows)
    labels: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        if row.error is None:
            labels[row.question_id].append(row.label or "UNKNOWN")
    consistency, flips = agreement(list(labels.values()))
    values = [float(share) for share in shares]
    return {
        "questions": len(values),
        "accuracy": fmean(values) if values else None,
        "accuracy_ci95": clustered_interval(values),
        "majority_accuracy": majority_accuracy(shares),
        "consistency": consistency,
        "flip_rate": flips,
    }


def epoch_summary(questions: list[QuestionRow]) -> dict | None:
    """summary.json's "epochs" block; None for a run without epochs (its summary stays as it was)."""
    asked = [row for row in questions if row.epoch]
    if not asked:
        return None
    families: dict[str, list[QuestionRow]] = defaultdict(list)
    for row in asked:
        families[row.family].append(row)
    return {
        "k": max(row.epoch for row in asked),
        **_block(asked),
        "interval": "clustered standard error of the per-question shares (normal, clipped to [0, 1])",
        "by_family": {name: _block(families[name]) for name in sorted(families)},
    }
