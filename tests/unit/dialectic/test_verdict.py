"""verdict.py: one rule decides a dialectic variant's pass (and a judged response's); its numbers
are the settings' PASS_RULE, and the gate's line and the option's help are built from them."""

from __future__ import annotations

from pytest_reasoning_evals.dialectic import checks
from pytest_reasoning_evals.dialectic.cases import Case, Variant
from pytest_reasoning_evals.dialectic.gates import check_dialectic_gates
from pytest_reasoning_evals.dialectic.judge import DIMENSIONS, Verdict
from pytest_reasoning_evals.dialectic.settings import OPTIONS, PASS_RULE
from pytest_reasoning_evals.dialectic.summary import variant_summaries
from pytest_reasoning_evals.dialectic.verdict import PassRule

STRICTER = PassRule(min_score=85.0, min_mode_accuracy=0.5)


def _response(score: float, mode_correct: bool) -> dict:
    return {
        "query_id": "q1",
        "variant": "v",
        "model": "m",
        "score": score,
        "hard_fail": False,
        "metrics": {"pcc_valid": None, "mode_correct": mode_correct},
        "judge": None,
        "tokens": {"total": 10},
        "cost": 0.0,
    }


def test_the_rule_decides_a_variant_by_its_own_numbers() -> None:
    assert (PASS_RULE.min_score, PASS_RULE.min_mode_accuracy) == (70.0, 0.9)
    assert PASS_RULE.variant_passes(0, 80.0, 0.9) and not PASS_RULE.variant_passes(1, 80.0, 1.0)
    assert not PASS_RULE.variant_passes(0, None, 1.0), "nothing judged is not a pass"
    assert not STRICTER.variant_passes(0, 80.0, 1.0) and STRICTER.variant_passes(0, 85.0, 0.5)
    # 80 mean, half the modes right: the settings' rule fails it on the mode, the stricter one on the score
    rows = [_response(80.0, True), _response(80.0, False)]
    assert [v["pass"] for v in variant_summaries(rows, PASS_RULE)] == [False]
    assert [v["pass"] for v in variant_summaries(rows, PassRule(75.0, 0.5))] == [True]


def test_the_gate_line_says_the_rule_it_was_decided_by() -> None:
    (variant,) = variant_summaries([_response(80.0, True)], STRICTER)
    (gate,) = check_dialectic_gates([variant], max_hard_fails=None, required=("v",), rule=STRICTER)
    assert not gate.passed
    assert gate.detail == "m: hard fails 0, mean score 80.0 (>= 85), mode accuracy 1.00 (>= 0.5)"
    (default,) = check_dialectic_gates([variant], max_hard_fails=None, required=("v",), rule=PASS_RULE)
    assert "(>= 70)" in default.detail and "(>= 0.9)" in default.detail


def test_a_judged_response_passes_at_the_rules_score() -> None:
    verdict = Verdict(({d: 8 for d in DIMENSIONS},), ())  # a score of 80
    response = {"query_id": "q1", "variant": "v", "model": "m", "hard_fail": False, "extraction": {}}
    args = (Case("q1", "c", "query?", "dialectic"), Variant("v", "prompt"), response, verdict)
    assert checks.judged(*args, PASS_RULE)["passed"]
    stricter = checks.judged(*args, STRICTER)
    assert not stricter["passed"] and stricter["reason"] == "score 80.0 < 85"


def test_the_options_help_is_built_from_the_settings_rule() -> None:
    (option,) = [o for o in OPTIONS if o.name == "require-variant-pass"]
    assert PASS_RULE.words() == "no hard fails, mean score >= 70, mode accuracy >= 0.9"
    assert f"({PASS_RULE.words()}; repeatable)" in option.help
    assert STRICTER.words() == "no hard fails, mean score >= 85, mode accuracy >= 0.5"
