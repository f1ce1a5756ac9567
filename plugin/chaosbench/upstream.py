"""upstream_metrics.json: a run's single questions scored as upstream ChaosBench-Logic scores a run,
so a run lines up with upstream's published metrics.json files.

Implemented from the formulas of `compute_metrics` in upstream's `chaosbench/eval/run.py`
(github.com/11NOel11/ChaosBench-Logic; the published runs are `published_results/runs/*/metrics.json`),
edge cases included, which differ from summary.json's:

- an item is *valid* when its reply gave a label (a failed call, like an unreadable reply, is
  invalid); coverage = valid / total, invalid_rate = invalid / total;
- accuracy_valid = correct / valid, 0.0 with no valid item (summary.json: None);
- an item without gold that got a label is valid and wrong (upstream compares the label with an
  empty gold); it is in no cell of the confusion matrix;
- balanced_accuracy = (TPR + TNR) / 2 with a class absent from the gold counted as 0.0 (so with
  one gold class it is at most 0.5; summary.json: None); mcc is 0.0 when a margin is empty;
- those six are rounded to 4 decimals; per_family and per_split are not rounded (as upstream);
- per_family is keyed by upstream's `type` names (indicator_diagnostic, perturbation,
  adversarial_misleading / adversarial_nearmiss for upstream's own adversarial questions; the
  other families keep their names); per_split by the run's splits (upstream's own records carry
  none, so its published runs show one split, "unknown");
- dialogues are not in it (upstream's v2 metrics have none); a run with no single question
  writes {"total": 0}.
"""

from __future__ import annotations

from pytest_reasoning_evals.chaosbench.rows import QuestionRow, Row

DECIMALS = 4
# The families upstream's `type` names otherwise (questions.UPSTREAM_TYPES read backwards)
UPSTREAM_NAMES = {"indicator_diagnostics": "indicator_diagnostic", "perturbation_robustness": "perturbation"}
UPSTREAM_BIASES = ("misleading", "nearmiss")


def upstream_type(family: str, bias: str | None) -> str:
    """The `type` upstream keys per_family by: its adversarial suites by their bias."""
    if family == "adversarial" and bias in UPSTREAM_BIASES:
        return f"adversarial_{bias}"
    return UPSTREAM_NAMES.get(family, family)


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def _group(questions: list[QuestionRow]) -> dict:
    valid = [r for r in questions if r.label is not None]
    return {
        "total": len(questions),
        "valid": len(valid),
        "correct": sum(r.label == r.gold for r in valid),
    }


def upstream_metrics(rows: list[Row]) -> dict:
    """Upstream's metrics.json for the single questions among a run's rows."""
    questions = sorted((r for r in rows if r.kind == "question"), key=lambda r: r.id)
    if not questions:
        return {"total": 0}
    overall = _group(questions)
    total, valid, correct = overall["total"], overall["valid"], overall["correct"]
    pairs = [(r.gold, r.label) for r in questions if r.label is not None and r.gold is not None]
    tp = sum(pair == ("TRUE", "TRUE") for pair in pairs)
    tn = sum(pair == ("FALSE", "FALSE") for pair in pairs)
    fp = sum(pair == ("FALSE", "TRUE") for pair in pairs)
    fn = sum(pair == ("TRUE", "FALSE") for pair in pairs)
    coverage = valid / total
    accuracy_valid = _share(correct, valid)
    denominator = ((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)) ** 0.5
    families: dict[str, list[QuestionRow]] = {}
    splits: dict[str, list[QuestionRow]] = {}
    for r in questions:
        families.setdefault(upstream_type(r.family, r.bias), []).append(r)
        splits.setdefault(r.split or "unknown", []).append(r)
    per_family = {}
    for name, group in sorted(families.items()):
        counts = _group(group)
        per_family[name] = {
            **counts,
            "coverage": _share(counts["valid"], counts["total"]),
            "accuracy_valid": _share(counts["correct"], counts["valid"]),
        }
    per_split = {}
    for name, group in sorted(splits.items()):
        counts = _group(group)
        per_split[name] = {
            "total": counts["total"],
            "valid": counts["valid"],
            "accuracy_valid": _share(counts["correct"], counts["valid"]),
        }
    return {
        "total": total,
        "valid": valid,
        "invalid": total - valid,
        "correct": correct,
        "coverage": round(coverage, DECIMALS),
        "invalid_rate": round((total - valid) / total, DECIMALS),
        "accuracy_valid": round(accuracy_valid, DECIMALS),
        "effective_accuracy": round(coverage * accuracy_valid, DECIMALS),
        "balanced_accuracy": round((_share(tp, tp + fn) + _share(tn, tn + fp)) / 2, DECIMALS),
        "mcc": round((tp * tn - fp * fn) / denominator if denominator else 0.0, DECIMALS),
        "per_family": per_family,
        "per_split": per_split,
    }
