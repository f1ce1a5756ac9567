"""The ChaosBench gates' coverage floor: on by default at 0.8, changed (or turned off) by
--eval-min-coverage, silent when no question was asked (issue 28, item 2); set, over the turns of a
run of dialogues only (issue 39)."""

from __future__ import annotations

from pytest_reasoning_evals.chaosbench.gates import check_gates
from pytest_reasoning_evals.chaosbench.metrics import summarize
from pytest_reasoning_evals.chaosbench.rows import compact
from pytest_reasoning_evals.gates import GateResult


def _questions(labels: list[str | None], error: str | None = None) -> list[dict]:
    return [
        {
            "id": f"q-{n}",
            "family": "atomic",
            "split": "core",
            "system_id": "lorenz63",
            "bias": None,
            "predicates": [],
            "provider": "fake",
            "label": label,
            "gold": "TRUE",
            "correct": None if label is None else label == "TRUE",
            "status": "unknown" if label is None else "correct" if label == "TRUE" else "wrong",
            "error": error if label is None else None,
            "input_tokens": 0,
            "output_tokens": 0,
            "thinking_tokens": 0,
            "cost_usd": 0.0,
            "cassette_hit": None,
        }
        for n, label in enumerate(labels)
    ]


def _summary(labels: list[str | None], error: str | None = None) -> dict:
    return summarize([compact(q) for q in _questions(labels, error)], model="fake", mode="zeroshot")


def _dialogues_summary(labels: list[str | None]) -> dict:
    """A run of one dialogue whose turns answered `labels` (gold TRUE), and no question."""
    turns = [{**q, "dialogue_id": "d-0", "turn": n + 1} for n, q in enumerate(_questions(labels))]
    dialogue = {
        **{key: turns[0][key] for key in ("family", "split", "system_id", "provider", "cassette_hit")},
        "kind": "dialogue",
        "id": "d-0",
        "correct": all(t["correct"] for t in turns),
        "status": next((s for s in ("wrong", "unknown") if any(t["status"] == s for t in turns)), "correct"),
        "error": None,
        "turns": turns,
    }
    return summarize([compact(dialogue)], model="fake", mode="zeroshot")


def _floor(gates):
    return [g for g in gates if g.name == "min-coverage"]


def test_the_default_floor_fails_a_run_below_it_and_says_how_to_change_it() -> None:
    gates = check_gates(_summary(["TRUE", None, None, "FALSE"]), min_accuracy=None, strict_items=False)
    (floor,) = _floor(gates)
    assert not floor.passed
    assert floor.detail == (
        "coverage 0.5000 (questions answered TRUE/FALSE), required >= 0.8 by default; "
        "change the floor with --eval-min-coverage X (ini eval_min_coverage; 0 turns it off)"
    )


def test_the_default_floor_passes_at_it() -> None:
    gates = check_gates(_summary(["TRUE"] * 4 + [None]), min_accuracy=None, strict_items=False)
    assert [g.passed for g in _floor(gates)] == [True]


def test_an_option_replaces_the_default_floor_and_zero_turns_it_off() -> None:
    summary = _summary(["TRUE", None, None, None])
    assert [
        g.passed for g in _floor(check_gates(summary, min_accuracy=None, strict_items=False, min_coverage=0.25))
    ] == [True]
    assert _floor(check_gates(summary, min_accuracy=None, strict_items=False, min_coverage=0.0)) == []
    assert _floor(check_gates(_summary([]), min_accuracy=None, strict_items=False, min_coverage=0.0)) == []


def test_no_question_no_default_verdict() -> None:
    """No question: the default floor judges nothing (an explicit one fails a run with no turn either)."""
    summary = _summary([])
    assert _floor(check_gates(summary, min_accuracy=None, strict_items=False)) == []
    assert [
        g.passed for g in _floor(check_gates(summary, min_accuracy=None, strict_items=False, min_coverage=0.5))
    ] == [False]


def test_a_dialogues_only_run_is_judged_over_its_turns() -> None:
    """Issue 39: a floor set for a run of dialogues only (-k test_dialogue) judges the turns answered
    TRUE/FALSE, not "n/a (no item)"; the default floor stays silent there."""
    summary = _dialogues_summary(["TRUE", "FALSE", None, "TRUE"])
    (floor,) = _floor(check_gates(summary, min_accuracy=None, strict_items=False, min_coverage=0.7))
    assert floor == GateResult(
        "min-coverage", True, "coverage 0.7500 (dialogue turns answered TRUE/FALSE; no question asked), required >= 0.7"
    )
    (floor,) = _floor(check_gates(summary, min_accuracy=None, strict_items=False, min_coverage=0.8))
    assert not floor.passed
    assert _floor(check_gates(summary, min_accuracy=None, strict_items=False)) == []


def test_failed_calls_have_their_own_gate_whatever_the_floor() -> None:
    """An outage or a stale recording fails even under a low floor (CI's replay sets one)."""
    summary = _summary(["TRUE"] * 9 + [None], error="provider error 500")
    for floor in (None, 0.5):
        gates = {
            g.name: g.passed for g in check_gates(summary, min_accuracy=None, strict_items=False, min_coverage=floor)
        }
        assert gates == {"min-coverage": True, "failed-calls": False}


def test_the_merge_names_its_own_option() -> None:
    gates = check_gates(
        _summary([None]), min_accuracy=None, strict_items=False, floor_option="--min-coverage X (0 turns it off)"
    )
    assert _floor(gates)[0].detail.endswith("change the floor with --min-coverage X (0 turns it off)")
