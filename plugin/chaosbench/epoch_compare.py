"""Comparing two ChaosBench runs when either asked its questions more than once (--eval-epochs):
the pairs are questions, not items (docs/chaosbench.md, "Epochs").

A question's score in a run is its share of measured epochs right (epochs with gold whose calls
did not fail; an UNKNOWN answer is not right); a question none of whose epochs was measured in a
run is left out as failed there, as a failed item is by regression.compare. The difference of the
shares is tested with the exact sign-flip permutation test (epoch_stats.sign_flip_test: with one
epoch on each side it is McNemar's exact test), its 95% interval is the paired normal one, and the
detectable change comes from the variance of the differences. `fixed` and `broken` are the
questions whose share rose and fell. The result has regression.compare's keys, so the gate, the
terminal, the report and the runs table read it alike, plus "test" and "epochs".
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction
from statistics import fmean, pvariance

from pytest_reasoning_evals.chaosbench.rows import Row
from pytest_reasoning_evals.epoch_stats import difference_interval, sign_flip_test
from pytest_reasoning_evals.stats import detectable

TEST = "sign-flip permutation test on the per-question shares right"


def paired_item(row: Row) -> dict:
    """What a comparison (and a baseline file) keeps of an item's row."""
    return {
        "correct": row.correct is True,
        "gold": row.status != "no_gold",
        "failed": bool(row.error),  # its calls failed: the model was not measured on it
        "family": row.family,
        "split": row.split,
        **({"question": row.question_id} if row.epoch else {}),  # one epoch of it (--eval-epochs)
    }


def paired_test_name(comparison: dict) -> str:
    """How a comparison's p-value was computed, for its lines."""
    if "epochs" not in comparison:
        return "McNemar"
    return f"sign-flip (questions, epochs {comparison['epochs']['baseline']} vs {comparison['epochs']['current']})"


def has_epochs(items: dict[str, dict]) -> bool:
    return any("question" in item for item in items.values())


def per_question(items: dict[str, dict]) -> dict[str, dict]:
    """Item id -> item (paired_item) to question id -> its share right, epochs and where it sits."""
    grouped: dict[str, list[dict]] = defaultdict(list)
    for item_id, item in items.items():
        grouped[item.get("question", item_id)].append(item)
    out = {}
    for question, epochs in grouped.items():
        measured = [e for e in epochs if e["gold"] and not e.get("failed", False)]
        out[question] = {
            "gold": any(e["gold"] for e in epochs),
            "failed": not measured,
            "share": Fraction(sum(e["correct"] for e in measured), len(measured)) if measured else None,
            "epochs": len(epochs),
            "family": epochs[0]["family"],
            "split": epochs[0]["split"],
        }
    return out


def _group_deltas(ids: list[str], before: dict, now: dict, key: str) -> dict[str, dict]:
    groups: dict[str, list[str]] = defaultdict(list)
    for q in ids:
        groups[now[q][key]].append(q)
    out = {}
    for name in sorted(groups):
        members = groups[name]
        differences = [now[q]["share"] - before[q]["share"] for q in members]
        out[name] = {
            "n_paired": len(members),
            "accuracy_baseline": fmean(float(before[q]["share"]) for q in members),
            "accuracy_current": fmean(float(now[q]["share"]) for q in members),
            "accuracy_delta": float(sum(differences) / len(differences)),
            "accuracy_delta_ci95": difference_interval(differences),
        }
    return out


def compare_epochs(baseline_items: dict, current_items: dict, *, alpha: float, max_drop: float | None) -> dict:
    """regression.compare's fields (without "baseline") for runs of any epochs, paired by question."""
    before, now = per_question(baseline_items), per_question(current_items)
    shared = [q for q in now if q in before and now[q]["gold"] and before[q]["gold"]]
    failed_before = [q for q in shared if before[q]["failed"]]
    failed_now = [q for q in shared if now[q]["failed"] and q not in failed_before]
    ids = sorted(set(shared) - set(failed_before) - set(failed_now))
    differences = [now[q]["share"] - before[q]["share"] for q in ids]
    delta = float(sum(differences) / len(differences)) if ids else None
    p_value = sign_flip_test(differences)
    dropped = delta is not None and delta < 0
    return {
        "test": TEST,
        "epochs": {
            "baseline": max((q["epochs"] for q in before.values()), default=0),
            "current": max((q["epochs"] for q in now.values()), default=0),
        },
        "n_paired": len(ids),
        "n_baseline_failed": len(failed_before),
        "n_current_failed": len(failed_now),
        "n_current_only": sum(q not in before for q in now),
        "n_baseline_only": sum(q not in now for q in before),
        "fixed": sum(d > 0 for d in differences),
        "broken": sum(d < 0 for d in differences),
        "accuracy_baseline": fmean(float(before[q]["share"]) for q in ids) if ids else None,
        "accuracy_current": fmean(float(now[q]["share"]) for q in ids) if ids else None,
        "accuracy_delta": delta,
        "accuracy_delta_ci95": difference_interval(differences),
        "p_value": p_value,
        "alpha": alpha,
        "max_accuracy_drop": max_drop,
        "regressed": dropped and (p_value < alpha or (max_drop is not None and -delta > max_drop)),
        "detectable_delta": detectable(
            len(ids), pvariance([float(d) for d in differences]) if ids else 0.0, alpha=alpha
        ),
        "family_deltas": _group_deltas(ids, before, now, "family"),
        "split_deltas": _group_deltas(ids, before, now, "split"),
        "fixed_ids": [q for q, d in zip(ids, differences) if d > 0],
        "broken_ids": [q for q, d in zip(ids, differences) if d < 0],
    }
