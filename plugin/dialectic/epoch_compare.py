"""Comparing two dialectic runs when either asked its cases more than once (--eval-epochs): per
variant the pairs are cases, not responses (docs/dialectic.md, "Epochs").

A case's score in a run is the mean judge score of its judged epochs, and its hard-fail share the
share of its epochs that are hard fails. Per variant:
- score: the sign test on the paired per-case mean-score differences (cases judged in both runs;
  ties dropped), as regression.compare's on responses;
- hard fails: the exact sign-flip permutation test on the per-case hard-fail shares
  (epoch_stats.sign_flip_test: with one epoch each it is McNemar's exact test).
The result has regression.compare's keys (hard_fails_* count the paired cases' hard-fail responses,
new_hard_fails the cases whose share rose), plus "test", "epochs" and per variant the mean
hard-fail shares.
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction
from statistics import fmean

from pytest_reasoning_evals.epoch_stats import sign_flip_test
from pytest_reasoning_evals.stats import mcnemar_exact

TEST = "sign test on the per-case mean scores; sign-flip permutation test on the per-case hard-fail shares"


def has_epochs(rows: list[dict]) -> bool:
    return any(row.get("epoch") for row in rows)


def case_of(row: dict) -> str:
    """The case a response answers, whatever its epoch."""
    return row.get("case_id") or row["query_id"]


def per_case(rows: list[dict], variant: str) -> dict[str, dict]:
    """Case id -> its mean score (None: no epoch judged), hard-fail share, hard fails and epochs."""
    grouped: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        if row["variant"] == variant:
            grouped[case_of(row)].append(row)
    out = {}
    for case, epochs in grouped.items():
        scores = [row["score"] for row in epochs if row["score"] is not None]
        fails = sum(bool(row["hard_fail"]) for row in epochs)
        out[case] = {
            "score": fmean(scores) if scores else None,
            "hard_fail": Fraction(fails, len(epochs)),
            "hard_fails": fails,
            "epochs": len(epochs),
        }
    return out


def _most_epochs(rows: list[dict]) -> int:
    return max((row.get("epoch") or 1 for row in rows), default=0)


def score_comparison(scored: list[tuple[float, float]], alpha: float) -> tuple[dict, bool]:
    """A variant's score fields from its (baseline, current) score pairs, and whether the mean fell
    significantly: the sign test on the pairs (ties dropped)."""
    lower, higher = sum(n < b for b, n in scored), sum(n > b for b, n in scored)
    mean_before = fmean(b for b, _ in scored) if scored else None
    mean_now = fmean(n for _, n in scored) if scored else None
    p_score = mcnemar_exact(lower, higher)
    fields = {
        "n_scored": len(scored),
        "mean_score_baseline": mean_before,
        "mean_score_current": mean_now,
        "mean_score_delta": None if mean_before is None else mean_now - mean_before,
        "score_lower": lower,
        "score_higher": higher,
        "p_value_score": p_score,
    }
    return fields, mean_before is not None and mean_now < mean_before and p_score < alpha


def compare_variant(before: dict[str, dict], now: dict[str, dict], variant: str, alpha: float) -> dict:
    """One variant's row of the comparison, from both runs' per_case."""
    cases = sorted(set(before) & set(now))
    scored = [(before[c]["score"], now[c]["score"]) for c in cases]
    scored = [(b, n) for b, n in scored if b is not None and n is not None]
    scores, score_drop = score_comparison(scored, alpha)
    shifts = [now[c]["hard_fail"] - before[c]["hard_fail"] for c in cases]
    p_fails = sign_flip_test(shifts)
    share_before = fmean(float(before[c]["hard_fail"]) for c in cases) if cases else None
    share_now = fmean(float(now[c]["hard_fail"]) for c in cases) if cases else None
    return {
        "variant": variant,
        "n_paired": len(cases),
        **scores,
        "hard_fails_baseline": sum(before[c]["hard_fails"] for c in cases),
        "hard_fails_current": sum(now[c]["hard_fails"] for c in cases),
        "hard_fail_share_baseline": share_before,
        "hard_fail_share_current": share_now,
        "new_hard_fails": [c for c, shift in zip(cases, shifts) if shift > 0],
        "resolved_hard_fails": [c for c, shift in zip(cases, shifts) if shift < 0],
        "p_value_hard_fails": p_fails,
        "regressed": bool(score_drop or (sum(shifts) > 0 and p_fails < alpha)),
    }


def compare_by_case(before_rows: list[dict], current: list[dict], *, alpha: float) -> dict:
    """regression.compare's fields (without "baseline") for runs of any epochs, paired by case."""
    variants = [
        compare_variant(per_case(before_rows, v), per_case(current, v), v, alpha)
        for v in sorted({row["variant"] for row in current})
    ]
    return {
        "test": TEST,
        "epochs": {"baseline": _most_epochs(before_rows), "current": _most_epochs(current)},
        "alpha": alpha,
        "variants": variants,
        "regressed": any(v["regressed"] for v in variants),
    }
