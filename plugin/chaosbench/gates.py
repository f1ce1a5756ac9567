"""The ChaosBench gates on a run's summary (SPEC 7): minimum accuracy, strict items."""

from __future__ import annotations

from pytest_reasoning_evals.gates import GateResult

# items whose call failed (provider errors, cassette misses; not UNKNOWN answers), unless --eval-min-coverage
MAX_ERROR_RATE = 0.05


def check_gates(
    summary: dict,
    *,
    min_accuracy: float | None,
    strict_items: bool,
    min_coverage: float | None = None,
    max_fol_violation_rate: float | None = None,
) -> list[GateResult]:
    """Nothing measured is not a pass: an incomplete run, an outage (more than 5% of items
    ended in provider errors) and a gate over zero items fail."""
    results = []
    if not summary["complete"]:
        results.append(GateResult("complete", False, f"the run is incomplete: {summary['incomplete_reason']}"))
    if min_coverage is not None:
        coverage = summary["coverage"]
        shown = "n/a (no item)" if coverage is None else f"{coverage:.4f}"
        results.append(
            GateResult(
                "min-coverage",
                coverage is not None and coverage >= min_coverage,
                f"coverage {shown} (answers with a TRUE/FALSE), required >= {min_coverage}",
            )
        )
    elif summary["num_errors"]:
        rate, kinds = summary["error_rate"], summary["errors_by_kind"]
        results.append(
            GateResult(
                "failed-calls",
                rate <= MAX_ERROR_RATE,
                f"{summary['num_errors']} items ({rate:.1%}) ended in failed calls ({kinds['provider']} "
                f"provider errors, {kinds['cassette_miss']} cassette misses"
                + (f", {kinds['harness']} harness errors" if kinds["harness"] else "")
                + "), allowed "
                f"{MAX_ERROR_RATE:.0%} (--eval-min-coverage sets another bound)",
            )
        )
    if min_accuracy is not None:
        accuracy = summary["overall_accuracy"]
        passed = accuracy is not None and accuracy >= min_accuracy
        shown = "n/a (nothing evaluated)" if accuracy is None else f"{accuracy:.4f}"
        results.append(GateResult("min-accuracy", passed, f"overall accuracy {shown}, required >= {min_accuracy}"))
    if strict_items:
        wrong = summary["total_evaluated"] - summary["num_correct"]
        unknown = summary["num_unknown"]
        evaluated = summary["total_evaluated"] + summary["dialogue_details"]["evaluated"]
        results.append(
            GateResult(
                "strict-items",
                evaluated > 0 and wrong == 0 and unknown == 0,
                f"{wrong} wrong and {unknown} UNKNOWN answers, allowed 0"
                + ("; nothing evaluated" if evaluated == 0 else ""),
            )
        )
    if max_fol_violation_rate is not None:
        rate = summary["fol_violation_rate"]
        shown = "n/a (no dialogue turn carries predicates)" if rate is None else f"{rate:.4f}"
        results.append(
            GateResult(
                "max-fol-violation-rate",
                rate is not None and rate <= max_fol_violation_rate,
                f"FOL violation rate {shown}, allowed <= {max_fol_violation_rate}",
            )
        )
    return results
