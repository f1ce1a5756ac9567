"""ChaosBench-Logic metrics over item records -> summary.json (SPEC 5.4; protocol keys first).

Records are sorted by id before anything is summed, so the summary does not depend on the
order in which workers finished.
"""

from __future__ import annotations

from plugin.chaosbench.questions import FAMILIES, SPLITS
from plugin.stats import balanced_accuracy, confusion, mcc, ratio, wilson_interval


def _group_details(records: list[dict]) -> dict:
    evaluated = [r for r in records if r["correct"] is not None]
    correct = sum(r["correct"] for r in evaluated)
    return {
        "total": len(records),
        "evaluated": len(evaluated),
        "correct": correct,
        "unknown": sum(r["label"] is None for r in records),
        "accuracy": ratio(correct, len(evaluated)),
        "accuracy_ci95": wilson_interval(correct, len(evaluated)),
    }


def _by(records: list[dict], key: str, names: tuple[str, ...]) -> dict[str, dict]:
    return {name: _group_details([r for r in records if r[key] == name]) for name in names}


def summarize(records: list[dict], *, model: str, mode: str) -> dict:
    records = sorted(records, key=lambda r: r["id"])
    overall = _group_details(records)
    total = overall["total"]
    evaluated_pairs = [(r["gold"], r["label"]) for r in records if r["correct"] is not None]
    counts = confusion(evaluated_pairs)
    task_details = _by(records, "family", FAMILIES)
    split_details = _by(records, "split", SPLITS)
    biased = [r for r in records if r.get("bias") and r["correct"] is not None]
    return {
        # --- the protocol's schema ---
        "overall_accuracy": overall["accuracy"],
        "coverage": ratio(total - overall["unknown"], total),
        "total_evaluated": overall["evaluated"],
        "total_questions": total,
        "num_unknown": overall["unknown"],
        "split_accuracy": {name: d["accuracy"] for name, d in split_details.items()},
        "task_accuracy": {name: d["accuracy"] for name, d in task_details.items()},
        "fol_violation_rate": None,  # dialogue metrics: no dialogues are evaluated yet
        "contradiction_rate": None,
        "dialogue_accuracy": None,
        # --- extras ---
        "model": model,
        "mode": mode,
        "num_correct": overall["correct"],
        "num_items_no_gold": sum(r["gold"] is None for r in records),
        "overall_accuracy_ci95": overall["accuracy_ci95"],
        "balanced_accuracy": balanced_accuracy(counts),
        "mcc": mcc(counts),
        "confusion": counts,
        "bias_error_rate": ratio(sum(not r["correct"] for r in biased), len(biased)),
        "split_details": split_details,
        "task_details": task_details,
        "tokens": {
            "input": sum(r["input_tokens"] for r in records),
            "output": sum(r["output_tokens"] for r in records),
            "thinking": sum(r["thinking_tokens"] for r in records),
        },
        "cost_usd": sum(r["cost_usd"] for r in records),
        "num_errors": sum(r["error"] is not None for r in records),
    }
