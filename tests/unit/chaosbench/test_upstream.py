"""chaosbench/upstream.py: upstream ChaosBench-Logic's metrics.json formulas and edge cases."""

from __future__ import annotations

import pytest
from helpers import question_row

from pytest_reasoning_evals.chaosbench.rows import DialogueRow
from pytest_reasoning_evals.chaosbench.upstream import upstream_metrics, upstream_type


def row(id: str, gold: str | None, label: str | None, family: str = "atomic", split: str = "core", bias=None):
    return question_row(id, gold, label, family=family, split=split, bias=bias)


def test_a_balanced_run_has_upstreams_keys_and_four_decimals() -> None:
    rows = [row("a", "TRUE", "TRUE"), row("b", "TRUE", "FALSE"), row("c", "FALSE", "FALSE"), row("d", "FALSE", None)]
    metrics = upstream_metrics(rows)
    assert list(metrics) == [
        "total",
        "valid",
        "invalid",
        "correct",
        "coverage",
        "invalid_rate",
        "accuracy_valid",
        "effective_accuracy",
        "balanced_accuracy",
        "mcc",
        "per_family",
        "per_split",
    ]
    assert (metrics["total"], metrics["valid"], metrics["invalid"], metrics["correct"]) == (4, 3, 1, 2)
    assert (metrics["coverage"], metrics["invalid_rate"]) == (0.75, 0.25)
    assert metrics["accuracy_valid"] == 0.6667
    assert metrics["effective_accuracy"] == 0.5
    # tp 1, fn 1, tn 1, fp 0: (0.5 + 1.0) / 2; mcc 1 / sqrt(1 * 2 * 1 * 2)
    assert metrics["balanced_accuracy"] == 0.75
    assert metrics["mcc"] == 0.5
    assert metrics["per_family"] == {
        "atomic": {"total": 4, "valid": 3, "correct": 2, "coverage": 0.75, "accuracy_valid": 2 / 3}
    }
    assert metrics["per_split"] == {"core": {"total": 4, "valid": 3, "accuracy_valid": 2 / 3}}


def test_one_gold_class_counts_the_missing_class_as_zero() -> None:
    metrics = upstream_metrics([row("a", "TRUE", "TRUE"), row("b", "TRUE", "TRUE")])
    assert (metrics["accuracy_valid"], metrics["balanced_accuracy"], metrics["mcc"]) == (1.0, 0.5, 0.0)


def test_nothing_parseable_scores_zero_not_none() -> None:
    metrics = upstream_metrics([row("a", "TRUE", None), row("b", "FALSE", None)])
    assert metrics["coverage"] == 0.0 and metrics["invalid_rate"] == 1.0
    assert (metrics["accuracy_valid"], metrics["effective_accuracy"]) == (0.0, 0.0)
    assert (metrics["balanced_accuracy"], metrics["mcc"]) == (0.0, 0.0)
    assert metrics["per_family"]["atomic"]["accuracy_valid"] == 0.0


def test_no_gold_with_a_label_is_valid_and_wrong_and_outside_the_confusion_matrix() -> None:
    metrics = upstream_metrics([row("a", "TRUE", "TRUE"), row("b", "FALSE", "FALSE"), row("c", None, "TRUE")])
    assert (metrics["valid"], metrics["correct"], metrics["accuracy_valid"]) == (3, 2, 0.6667)
    assert (metrics["balanced_accuracy"], metrics["mcc"]) == (1.0, 1.0)


def test_no_single_question_is_total_zero_and_dialogues_are_left_out() -> None:
    assert upstream_metrics([]) == {"total": 0}
    dialogue = DialogueRow(
        id="d", family="dialogue", split="core", correct=True, status="correct", error=None, turns=()
    )
    assert upstream_metrics([dialogue]) == {"total": 0}


@pytest.mark.parametrize(
    ("family", "bias", "expected"),
    [
        ("indicator_diagnostics", None, "indicator_diagnostic"),
        ("perturbation_robustness", None, "perturbation"),
        ("adversarial", "misleading", "adversarial_misleading"),
        ("adversarial", "nearmiss", "adversarial_nearmiss"),
        ("adversarial", "chaos_is_randomness", "adversarial"),
        ("multi_hop", None, "multi_hop"),
        ("billing", None, "billing"),
    ],
)
def test_families_are_keyed_by_upstreams_type_names(family: str, bias: str | None, expected: str) -> None:
    assert upstream_type(family, bias) == expected
