"""dialectic/regression.py: cases paired per variant with exact tests."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

# --- dialectic: per variant, paired by case ---


def response(case: str, variant: str, score: float | None, hard_fail: bool = False) -> dict:
    return {"query_id": case, "variant": variant, "model": "m", "score": score, "hard_fail": hard_fail}


def test_dialectic_comparison_pairs_cases_per_variant_with_exact_tests() -> None:
    from pytest_reasoning_evals.dialectic.regression import compare as compare_dialectic

    cases = [f"c{i}" for i in range(8)]
    before = [response(c, "v", 80.0) for c in cases] + [response("c0", "w", 50.0)]
    now = [response(c, "v", 40.0 if i < 7 else 90.0, hard_fail=i < 6) for i, c in enumerate(cases)] + [
        response("c9", "w", 10.0)
    ]
    c = compare_dialectic(("before", before), now, alpha=0.05)
    v, w = c["variants"][0], c["variants"][1]
    assert (v["variant"], v["n_paired"], v["score_lower"], v["score_higher"]) == ("v", 8, 7, 1)
    assert v["mean_score_delta"] == pytest.approx((7 * 40 + 90) / 8 - 80)
    assert v["p_value_score"] == pytest.approx(binomtest(1, 8, 0.5).pvalue)
    assert (v["hard_fails_baseline"], v["hard_fails_current"], v["new_hard_fails"]) == (0, 6, cases[:6])
    assert v["p_value_hard_fails"] == pytest.approx(binomtest(0, 6, 0.5).pvalue)
    assert v["regressed"] is True and c["regressed"] is True
    assert (w["n_paired"], w["mean_score_delta"], w["regressed"]) == (0, None, False), "c9 has no pair"
