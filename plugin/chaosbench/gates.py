"""The ChaosBench gates (SPEC 7): all of a run's verdicts, from its summary and its comparison."""

from __future__ import annotations

from pytest_reasoning_evals.chaosbench.epoch_compare import paired_test_name
from pytest_reasoning_evals.chaosbench.settings import DEFAULT_MIN_COVERAGE
from pytest_reasoning_evals.gates import MAX_ERROR_RATE, GateResult, at_least, at_most, incomplete

# How the default coverage floor is changed, for its gate's line.
FLOOR_OPTION = "--eval-min-coverage X (ini eval_min_coverage; 0 turns it off)"


def check_gates(
    summary: dict,
    *,
    min_accuracy: float | None,
    strict_items: bool,
    min_coverage: float | None = None,
    max_fol_violation_rate: float | None = None,
    regression: tuple[str, dict | None] | None = None,
    floor_option: str = FLOOR_OPTION,
) -> list[GateResult]:
    """Nothing measured is not a pass: an incomplete run, an outage (more than 5% of items
    ended in failed calls) and a gate over zero items fail. Without `min_coverage` the default
    floor judges the questions' coverage (a run of dialogues only has none: no verdict); a set
    floor judges a run of dialogues only over its turns (set_coverage); 0 sets no floor.
    `regression`: (the baseline's path, the comparison, None when there is none) when
    --eval-fail-on-regression or a max drop asks. `floor_option`: how the floor is changed."""
    reason = summary["incomplete_reason"]
    results = incomplete("complete", None if summary["complete"] else f"the run is incomplete: {reason}")
    # 0 turns the floor off
    if min_coverage:
        coverage, what = set_coverage(summary)
        results.append(at_least("min-coverage", coverage, min_coverage, what, "n/a (no item)"))
    elif min_coverage is None and summary["coverage"] is not None:
        results.append(default_coverage_floor(summary["coverage"], floor_option))
    # failed calls are an outage or a stale recording whatever the floor: their own gate
    if summary["num_errors"]:
        results.append(failed_calls_gate(summary))
    if min_accuracy is not None:
        accuracy = summary["overall_accuracy"]
        results.append(
            at_least("min-accuracy", accuracy, min_accuracy, "overall accuracy {}", "n/a (nothing evaluated)")
        )
    if strict_items:
        results.append(strict_items_gate(summary))
    if max_fol_violation_rate is not None:
        results.append(
            at_most(
                "max-fol-violation-rate",
                summary["fol_violation_rate"],
                max_fol_violation_rate,
                "FOL violation rate {}",
                "n/a (no dialogue turn names a ChaosBench predicate)",
            )
        )
    if regression is not None:
        results.append(regression_gate(*regression))
    return results


def failed_calls_gate(summary: dict) -> GateResult:
    """Failed calls are an outage or a stale recording whatever the floor: their own gate."""
    rate, kinds = summary["error_rate"], summary["errors_by_kind"]
    return GateResult(
        "failed-calls",
        rate <= MAX_ERROR_RATE,
        f"{summary['num_errors']} items ({rate:.1%}) ended in failed calls ({kinds['provider']} "
        f"provider errors, {kinds['cassette_miss']} cassette misses"
        + (f", {kinds['harness']} harness errors" if kinds["harness"] else "")
        + f"), allowed {MAX_ERROR_RATE:.0%}",
    )


def strict_items_gate(summary: dict) -> GateResult:
    """Every item right: no wrong and no UNKNOWN answer, and something evaluated."""
    wrong = summary["total_evaluated"] - summary["num_correct"]
    unknown = summary["num_unknown"]
    evaluated = summary["total_evaluated"] + summary["dialogue_details"]["evaluated"]
    return GateResult(
        "strict-items",
        evaluated > 0 and wrong == 0 and unknown == 0,
        f"{wrong} wrong and {unknown} UNKNOWN answers, allowed 0" + ("; nothing evaluated" if evaluated == 0 else ""),
    )


def set_coverage(summary: dict) -> tuple[float | None, str]:
    """(coverage, how its gate words it) for a floor that is set: the questions', or in a run of
    dialogues only its turns' (a `-k test_dialogue` run has no question yet measured something)."""
    turns = summary["dialogue_details"]
    if summary["total_questions"] or not turns["total_turns"]:
        return summary["coverage"], "coverage {} (answers with a TRUE/FALSE)"
    answered = turns["total_turns"] - turns["unknown_turns"]
    return answered / turns["total_turns"], "coverage {} (dialogue turns answered TRUE/FALSE; no question asked)"


def default_coverage_floor(coverage: float, option: str = FLOOR_OPTION) -> GateResult:
    """The coverage floor no option asked for: its line says how to change it (`option`)."""
    return GateResult(
        "min-coverage",
        coverage >= DEFAULT_MIN_COVERAGE,
        f"coverage {coverage:.4f} (questions answered TRUE/FALSE), required >= {DEFAULT_MIN_COVERAGE} by default; "
        f"change the floor with {option}",
    )


def regression_gate(baseline: str, c: dict | None) -> GateResult:
    """Paired with the baseline, accuracy did not drop significantly (nor by more than the max drop);
    nothing paired (or no comparison) fails."""
    if c is None or c["n_paired"] == 0:
        return GateResult("no-regression", False, f"no item is paired with the baseline {baseline}: nothing to compare")
    delta = f"{c['accuracy_delta']:+.4f}"
    return GateResult(
        "no-regression",
        not c["regressed"],
        f"paired accuracy {c['accuracy_baseline']:.4f} -> {c['accuracy_current']:.4f} ({delta}), "
        f"broken {c['broken']}, fixed {c['fixed']}, {paired_test_name(c)} p = {c['p_value']:.4g}, alpha {c['alpha']}"
        + (f", max drop {c['max_accuracy_drop']}" if c["max_accuracy_drop"] is not None else ""),
    )
