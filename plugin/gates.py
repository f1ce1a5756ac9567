"""Gates: the checks on a run's summary that decide the session's exit status (SPEC 7)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GateResult:
    name: str
    passed: bool
    detail: str


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


def check_dialectic_gates(variants: list[dict], *, max_hard_fails: int | None, required: tuple[str, ...]) -> list[GateResult]:
    """Opt-in: at most N PCC hard fails over all responses; named variants must pass (SPEC 6.8)."""
    results = []
    if max_hard_fails is not None:
        hard = sum(v["hard_fails"] for v in variants)
        results.append(GateResult("max-hard-fails", hard <= max_hard_fails, f"{hard} PCC hard fails, allowed {max_hard_fails}"))
    for name in required:
        rows = [v for v in variants if v["variant"] == name]
        if not rows:
            results.append(GateResult(f"variant-pass[{name}]", False, "variant not evaluated in this run"))
            continue
        for v in rows:
            score = "n/a" if v["mean_score"] is None else f"{v['mean_score']:.1f}"
            results.append(GateResult(
                f"variant-pass[{name}]", v["pass"],
                f"{v['model']}: hard fails {v['hard_fails']}, mean score {score} (>= 70), mode accuracy {v['mode_accuracy']:.2f} (>= 0.9)"))
    return results
