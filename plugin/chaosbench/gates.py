"""The ChaosBench gates on a run's summary (SPEC 7): minimum accuracy, strict items."""

from __future__ import annotations

from pytest_reasoning_evals.gates import GateResult


def check_gates(summary: dict, *, min_accuracy: float | None, strict_items: bool) -> list[GateResult]:
    results = []
    if min_accuracy is not None:
        accuracy = summary["overall_accuracy"]
        passed = accuracy is not None and accuracy >= min_accuracy
        shown = "n/a (nothing evaluated)" if accuracy is None else f"{accuracy:.4f}"
        results.append(GateResult("min-accuracy", passed, f"overall accuracy {shown}, required >= {min_accuracy}"))
    if strict_items:
        wrong = summary["total_evaluated"] - summary["num_correct"]
        unknown = summary["num_unknown"]
        results.append(
            GateResult("strict-items", wrong == 0 and unknown == 0, f"{wrong} wrong and {unknown} UNKNOWN answers, allowed 0")
        )
    return results
