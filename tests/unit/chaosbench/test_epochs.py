"""--eval-epochs: epoch items (epochs.py), the summary's epochs block (epoch_summary.py) and the
comparison paired by question (epoch_compare.py)."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest
from helpers import question_row

from pytest_reasoning_evals.chaosbench.epoch_compare import compare_epochs, per_question
from pytest_reasoning_evals.chaosbench.epoch_summary import epoch_summary
from pytest_reasoning_evals.chaosbench.questions import Question
from pytest_reasoning_evals.chaosbench.regression import compare
from pytest_reasoning_evals.chaosbench.rows import QuestionRow
from pytest_reasoning_evals.epochs import cassette_id, expand, question_of, record_fields, seed_of

QUESTION = Question(
    id="q-7", question="Is it chaotic?", ground_truth="TRUE", family="atomic", split="core", system_id="", template=""
)


def test_each_question_becomes_k_items_whose_first_shares_the_cassette_and_seed_of_a_run_without_epochs() -> None:
    epochs = expand([QUESTION], 3)
    assert [e.id for e in epochs] == ["q-7-e01", "q-7-e02", "q-7-e03"]
    assert [cassette_id(e) for e in epochs] == ["q-7", "q-7-e02", "q-7-e03"]
    assert [seed_of(e) for e in epochs] == [None, 1, 2]
    assert {question_of(e) for e in epochs} == {"q-7"}
    assert record_fields(epochs[1]) == {"question_id": "q-7", "epoch": 2}
    assert expand([QUESTION], 1) == [QUESTION] and record_fields(QUESTION) == {} and cassette_id(QUESTION) == "q-7"


def row(
    question: str, epoch: int, correct: bool | None, family: str = "atomic", error: str | None = None
) -> QuestionRow:
    label = None if correct is None else ("TRUE" if correct else "FALSE")
    return question_row(
        f"{question}-e{epoch:02d}", "TRUE", label, family=family, error=error, question_id=question, epoch=epoch
    )


def test_the_epochs_block_scores_questions_by_their_share_right_and_measures_their_agreement() -> None:
    rows = [
        *(row("a", e, True) for e in (1, 2, 3)),  # 3 of 3
        row("b", 1, True),
        row("b", 2, False),
        row("b", 3, None),  # UNKNOWN: not right, and a label of its own
        row("c", 1, False),
        row("c", 2, False),
        row("c", 3, True, error="HTTP 500"),  # a failed call is not measured
    ]
    block = epoch_summary(rows)
    assert block["k"] == 3 and block["questions"] == 3
    assert block["accuracy"] == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert block["majority_accuracy"] == pytest.approx(1 / 3)
    assert block["consistency"] == pytest.approx((1 + 1 / 3 + 1) / 3)
    assert block["flip_rate"] == pytest.approx(1 / 3)
    low, high = block["accuracy_ci95"]
    assert 0.0 <= low < block["accuracy"] < high <= 1.0
    assert epoch_summary([replace(r, epoch=0, question_id=None) for r in rows]) is None


def item(correct: bool, question: str | None = None, failed: bool = False) -> dict:
    found = {"correct": correct, "gold": True, "failed": failed, "family": "atomic", "split": "core"}
    return found | ({"question": question} if question else {})


@pytest.mark.parametrize(("broken", "fixed"), [(0, 0), (3, 0), (6, 2), (9, 9)])
def test_with_one_epoch_each_the_sign_flip_comparison_is_mcnemars(broken: int, fixed: int) -> None:
    outcomes = [(True, False)] * broken + [(False, True)] * fixed + [(True, True)] * 5 + [(False, False)] * 2
    before = {f"q{i}": item(b) for i, (b, _) in enumerate(outcomes)}
    now = {f"q{i}": item(n, question=f"q{i}") for i, (_, n) in enumerate(outcomes)}
    rows_now = [replace(row(f"q{i}", 1, n), id=f"q{i}", question_id=None, epoch=0) for i, (_, n) in enumerate(outcomes)]
    exact = compare({"source": "b", "items": before}, rows_now, alpha=0.05, max_drop=None)
    paired = compare_epochs(before, now, alpha=0.05, max_drop=None)
    assert paired["p_value"] == pytest.approx(exact["p_value"], rel=1e-12)
    assert (paired["broken"], paired["fixed"], paired["n_paired"]) == (broken, fixed, len(outcomes))
    assert paired["accuracy_delta"] == pytest.approx(exact["accuracy_delta"])


def test_questions_pair_across_epochs_and_a_question_with_no_measured_epoch_is_left_out() -> None:
    before = {"a": item(True), "b": item(True), "c": item(False)}
    now = {
        "a-e01": item(True, "a"),
        "a-e02": item(False, "a"),
        "b-e01": item(False, "b", failed=True),
        "b-e02": item(False, "b", failed=True),
        "c-e01": item(True, "c"),
        "c-e02": item(True, "c", failed=True),
    }
    assert per_question(now)["a"]["share"] == Fraction(1, 2) and per_question(now)["b"]["failed"]
    c = compare_epochs(before, now, alpha=0.05, max_drop=None)
    assert (c["n_paired"], c["n_current_failed"], c["broken_ids"], c["fixed_ids"]) == (2, 1, ["a"], ["c"])
    assert c["accuracy_delta"] == pytest.approx((-0.5 + 1.0) / 2)
    assert c["epochs"] == {"baseline": 1, "current": 2}
