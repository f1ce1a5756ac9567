"""chaosbench/metrics.py: the summary's effective accuracy, invalid rate, per-class scores and flip rate."""

from __future__ import annotations

import pytest

from pytest_reasoning_evals.chaosbench.metrics import flip_rate, summarize
from pytest_reasoning_evals.chaosbench.rows import DialogueRow, QuestionRow, compact
from pytest_reasoning_evals.stats import per_class


def record(id: str, gold: str | None, label: str | None, family: str = "atomic", **extra) -> QuestionRow:
    return compact(fields(id, gold, label, family, **extra))


def fields(id: str, gold: str | None, label: str | None, family: str = "atomic", **extra) -> dict:
    """A question's record: what its summary row is made of."""
    correct = None if gold is None or label is None else gold == label
    status = "no_gold" if gold is None else "unknown" if label is None else "correct" if correct else "wrong"
    base = {
        "id": id,
        "family": family,
        "split": "core",
        "system_id": "lorenz63",
        "bias": None,
        "predicates": [{"name": "Chaotic", "polarity": "positive"}],
        "provider": "baseline",
        "label": label,
        "gold": gold,
        "correct": correct,
        "status": status,
        "error": None,
        "input_tokens": 0,
        "output_tokens": 0,
        "thinking_tokens": 0,
        "cost_usd": 0.0,
        "cassette_hit": None,
    }
    return {**base, **extra}


def test_effective_accuracy_counts_an_unknown_as_wrong_and_invalid_rate_is_its_share() -> None:
    records = [record("a", "TRUE", "TRUE"), record("b", "FALSE", None), record("c", None, "TRUE")]
    summary = summarize(records, model="m", mode="zeroshot")
    assert summary["overall_accuracy"] == 1.0
    assert summary["effective_accuracy"] == 0.5  # 1 right of the 2 with gold
    assert summary["invalid_rate"] == pytest.approx(1 / 3)
    assert summarize([], model="m", mode="zeroshot")["effective_accuracy"] is None


def test_per_class_scores_both_labels() -> None:
    scores = per_class({"tp": 3, "fp": 1, "fn": 2, "tn": 4})
    assert scores["TRUE"] == {"precision": 0.75, "recall": 0.6, "f1": pytest.approx(2 / 3), "support": 5}
    assert scores["FALSE"] == {"precision": 4 / 6, "recall": 0.8, "f1": pytest.approx(8 / 11), "support": 5}
    # always TRUE: FALSE is never predicted, so its precision (and F1) measure nothing
    constant = per_class({"tp": 2, "fp": 2, "fn": 0, "tn": 0})
    assert constant["FALSE"] == {"precision": None, "recall": 0.0, "f1": None, "support": 2}
    assert constant["TRUE"]["f1"] == pytest.approx(2 / 3)


def perturbed(
    id: str, system: str, gold: str, label: str | None, polarity: str = "positive", family=None
) -> QuestionRow:
    return record(
        id,
        gold,
        label,
        family=family or "perturbation_robustness",
        system_id=system,
        predicates=[{"name": "Chaotic", "polarity": polarity}],
    )


def test_flip_rate_is_the_share_of_facts_answered_both_ways() -> None:
    records = [
        # lorenz63 is chaotic: "yes" to the paraphrase and "no" to "is it false that": consistent
        perturbed("p1", "lorenz63", "TRUE", "TRUE"),
        perturbed("p2", "lorenz63", "FALSE", "FALSE", polarity="negative"),
        perturbed("p3", "lorenz63", "TRUE", "TRUE", family="consistency_paraphrase"),
        # the oscillator: "no", then "yes" to the distractor version: a flip
        perturbed("p4", "oscillator", "FALSE", "FALSE"),
        perturbed("p5", "oscillator", "FALSE", "TRUE"),
        # always-TRUE on a fact and its negation: a flip
        perturbed("p6", "henon", "TRUE", "TRUE"),
        perturbed("p7", "henon", "FALSE", "TRUE", polarity="negative"),
        # a group with no answer, a fact asked once, another family: not counted
        perturbed("p8", "rossler", "TRUE", None),
        perturbed("p9", "rossler", "TRUE", None),
        perturbed("p10", "chua", "TRUE", "FALSE"),
        record("a1", "TRUE", "FALSE", system_id="lorenz63"),
    ]
    assert flip_rate(records) == pytest.approx(2 / 3)
    assert summarize(records, model="m", mode="zeroshot")["flip_rate"] == pytest.approx(2 / 3)
    assert flip_rate([record("a1", "TRUE", "FALSE")]) is None


def dialogue(turns: list[tuple[str, str | None]], gold: str = "TRUE") -> DialogueRow:
    """A dialogue's row whose turns ask (predicate or "", the model's label)."""
    out = []
    for n, (predicate, label) in enumerate(turns, start=1):
        names = [{"name": predicate, "polarity": "positive"}] if predicate else []
        spend = {"input_tokens": 1, "output_tokens": 1, "thinking_tokens": 0, "cost_usd": 0.0}
        asked = fields(f"d-t{n}", gold, label, system_id="pump", predicates=names, correct=label == gold, **spend)
        out.append({**asked, "turn": n})
    correct = all(t["correct"] for t in out)
    verdict = {"correct": correct, "status": "correct" if correct else "wrong", "error": None}
    return compact({"kind": "dialogue", "id": "d", "family": "dialogue", "split": "core", **verdict, "turns": out})


def test_a_teams_dialogues_get_no_fol_rate_for_predicates_the_axioms_do_not_know_and_none_without_predicates() -> None:
    from pytest_reasoning_evals.chaosbench.metrics import dialogue_metrics
    from pytest_reasoning_evals.chaosbench.terminal import consistency

    own = dialogue_metrics([dialogue([("Leaking", "TRUE"), ("Leaking", "FALSE")])])
    assert own["fol_violation_rate"] is None and own["contradiction_rate"] == 1.0
    assert consistency(own) == (
        "FOL axioms not applicable (no turn names a ChaosBench predicate), contradiction rate 1.000"
    )
    bare = dialogue_metrics([dialogue([("", "TRUE"), ("", "FALSE")])])
    assert bare["fol_violation_rate"] is bare["contradiction_rate"] is None
    assert consistency(bare) == "consistency not checked (no turn names a predicate)"
    bank = dialogue_metrics([dialogue([("Chaotic", "TRUE"), ("Deterministic", "FALSE")])])
    assert bank["fol_violation_rate"] == 1.0  # Chaotic requires Deterministic
    assert consistency(bank).startswith("FOL violation rate 1.000 (1 dialogues), contradiction rate 0.000")
