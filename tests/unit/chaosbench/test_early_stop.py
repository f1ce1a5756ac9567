"""early_stop.py: a question's paired difference added once all its epochs are in, a look every
BLOCK questions, one decision; sampling.stratified_order: every prefix holds each stratum in its share."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from helpers import question_row

from pytest_reasoning_evals.chaosbench.early_stop import BLOCK, EarlyStop, decided_block, with_decision
from pytest_reasoning_evals.sampling import stratified_order

ROW = question_row("q", "TRUE", "FALSE")  # wrong where its baseline is right


def baseline(n: int) -> dict:
    return {
        f"q{i}": {"correct": True, "gold": True, "failed": False, "family": "atomic", "split": "core"} for i in range(n)
    }


def test_a_run_wrong_where_its_baseline_was_right_is_decided_worse_at_a_block_boundary() -> None:
    early = EarlyStop(baseline(400), epochs=1, alpha=0.05, max_drop=None)
    decided_at = next(i for i in range(400) if early.add(replace(ROW, id=f"q{i}")))
    assert (decided_at + 1) % BLOCK == 0 and decided_at < 100
    assert early.decision.verdict == "worse" and early.decision.high < 0
    assert early.add(replace(ROW, id="q399")) is None  # decided once
    assert "not asked: decided after" in early.reason()


def test_a_question_counts_once_all_its_epochs_are_in_and_unknown_questions_count_nothing() -> None:
    early = EarlyStop(baseline(3), epochs=2, alpha=0.05, max_drop=None)
    early.add(replace(ROW, id="q0-e01", question_id="q0", epoch=1))
    assert early.bound.n == 0
    early.add(replace(ROW, id="q0-e02", question_id="q0", epoch=2, correct=True, status="correct", label="TRUE"))
    assert early.bound.n == 1 and early.bound.interval()[0] < -0.5 < early.bound.interval()[1]
    early.add(replace(ROW, id="elsewhere-e01", question_id="elsewhere", epoch=1))
    early.add(replace(ROW, id="q1-e01", question_id="q1", epoch=1, status="no_gold", gold=None, correct=None))
    assert early.bound.n == 1


def test_decided_worse_is_a_regression_whatever_the_comparison_says() -> None:
    early = EarlyStop(baseline(100), epochs=1, alpha=0.05, max_drop=None)
    for i in range(100):
        early.add(replace(ROW, id=f"q{i}"))
    block = decided_block(early.decision, not_asked=40, spent=0.6, asked=60)
    assert block["not_spent_usd"] == 0.4 and block["verdict"] == "worse"
    assert with_decision({"regressed": False}, block)["regressed"] is True
    assert with_decision({"regressed": False}, None) == {"regressed": False}


def test_every_prefix_of_the_stratified_order_holds_each_stratum_in_about_its_share() -> None:
    items = [(f"i{n}", "a" if n % 4 else "b") for n in range(400)]  # 300 a, 100 b
    ordered = stratified_order(items, 7, lambda item: item[1], lambda item: item[0])
    assert sorted(ordered) == sorted(items)
    for prefix in (4, 20, 101, 250):
        share = Counter(stratum for _, stratum in ordered[:prefix])["b"] / prefix
        assert abs(share - 0.25) <= 1 / prefix + 1e-9
    assert stratified_order(items, 7, lambda item: item[1], lambda item: item[0]) == ordered
    assert stratified_order(items, 8, lambda item: item[1], lambda item: item[0]) != ordered
