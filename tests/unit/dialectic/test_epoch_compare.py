"""dialectic/epoch_compare.py: two dialectic runs of any epochs compared per variant, paired by case."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction

import pytest

from pytest_reasoning_evals.dialectic.epoch_compare import compare_by_case
from pytest_reasoning_evals.dialectic.regression import BaselineError, compare, comparison_lines, load_responses


def response(case: str, score: float | None, hard_fail: bool = False, epoch: int | None = None) -> dict:
    row = {"query_id": case, "variant": "v", "model": "m", "score": score, "hard_fail": hard_fail}
    if epoch is not None:  # a run with epochs: the query id carries the epoch, case_id the case
        row |= {"query_id": f"{case}-e{epoch:02d}", "case_id": case, "epoch": epoch}
    return row


def epochs_of(case: str, scores: list[float], fails: list[bool]) -> list[dict]:
    return [response(case, s, f, epoch=e) for e, (s, f) in enumerate(zip(scores, fails), start=1)]


def brute_force_sign_flip(differences: list[Fraction]) -> float:
    observed = abs(sum(differences))
    patterns = list(itertools.product((1, -1), repeat=len(differences)))
    return sum(abs(sum(s * d for s, d in zip(signs, differences))) >= observed for signs in patterns) / len(patterns)


def test_with_one_epoch_each_the_case_comparison_gives_the_response_comparisons_p_values() -> None:
    cases = [f"c{i}" for i in range(9)]
    before = [response(c, 80.0, hard_fail=i == 8) for i, c in enumerate(cases)]
    now = [response(c, 40.0 if i < 6 else 90.0, hard_fail=i < 5) for i, c in enumerate(cases)]
    plain = compare(("b", before), now, alpha=0.05)["variants"][0]
    by_case = compare_by_case(before, now, alpha=0.05)["variants"][0]
    for key in ("n_paired", "score_lower", "score_higher", "p_value_score", "p_value_hard_fails", "regressed"):
        assert by_case[key] == pytest.approx(plain[key]), key
    assert by_case["new_hard_fails"] == plain["new_hard_fails"] == cases[:5]
    assert by_case["resolved_hard_fails"] == plain["resolved_hard_fails"] == ["c8"]


def test_a_run_with_epochs_is_paired_by_case_with_a_baseline_asked_once() -> None:
    cases = [f"c{i}" for i in range(7)]
    before = [response(c, 80.0) for c in cases]
    now = [row for c in cases for row in epochs_of(c, [30.0, 50.0, 70.0], [True, True, False])]
    c = compare(("base", before), now, alpha=0.05)
    assert c["epochs"] == {"baseline": 1, "current": 3} and "sign-flip" in c["test"]
    v = c["variants"][0]
    assert (v["n_paired"], v["score_lower"], v["mean_score_current"]) == (7, 7, pytest.approx(50.0))
    assert (v["hard_fails_baseline"], v["hard_fails_current"]) == (0, 14)
    assert v["hard_fail_share_current"] == pytest.approx(2 / 3) and v["new_hard_fails"] == cases
    assert v["p_value_hard_fails"] == pytest.approx(brute_force_sign_flip([Fraction(2, 3)] * 7)) == 2 / 2**7
    assert v["regressed"] is True and c["regressed"] is True


def test_epochs_that_move_both_ways_are_tested_on_their_shares_and_need_not_regress() -> None:
    before = [row for c in ("a", "b", "c", "d") for row in epochs_of(c, [70.0, 70.0], [False, True])]
    now = epochs_of("a", [70.0, 70.0], [True, True]) + epochs_of("b", [70.0, 70.0], [False, False])
    now += epochs_of("c", [60.0, 80.0], [True, False]) + epochs_of("d", [70.0, 71.0], [True, True])
    v = compare(("base", before), now, alpha=0.05)["variants"][0]
    shifts = [Fraction(1, 2), Fraction(-1, 2), Fraction(0), Fraction(1, 2)]
    assert v["p_value_hard_fails"] == pytest.approx(brute_force_sign_flip(shifts))
    assert (v["new_hard_fails"], v["resolved_hard_fails"]) == (["a", "d"], ["b"])
    assert v["regressed"] is False


def test_a_case_without_a_judged_epoch_is_paired_for_hard_fails_but_not_scored() -> None:
    before = epochs_of("a", [None, None], [False, False]) + epochs_of("b", [50.0, 60.0], [False, False])
    now = epochs_of("a", [70.0, None], [False, False]) + epochs_of("b", [40.0, 40.0], [False, False])
    v = compare(("base", before), now, alpha=0.05)["variants"][0]
    assert (v["n_paired"], v["n_scored"], v["score_lower"]) == (2, 1, 1)
    assert v["mean_score_delta"] == pytest.approx(40.0 - 55.0)


def test_the_comparison_lines_name_the_pairing_and_the_hard_fail_shares() -> None:
    before = [response(c, 80.0) for c in ("a", "b")]
    now = epochs_of("a", [80.0, 80.0], [False, True]) + epochs_of("b", [80.0, 80.0], [False, False])
    (line,) = comparison_lines(compare(("runs/base", before), now, alpha=0.05))
    assert "2 paired cases (cases, epochs 1 vs 2)" in line
    assert "hard-fail share per case 0.0% -> 25.0% (sign-flip p = 1)" in line


def test_a_baseline_whose_epoch_is_not_a_number_names_its_file_and_line(tmp_path) -> None:
    rows = [response("a", 70.0, epoch=1), response("a", 70.0, epoch=2) | {"epoch": "two"}]
    path = tmp_path / "per_response.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(BaselineError, match=r"per_response.jsonl:2: 'epoch' is 'two', not an epoch number"):
        load_responses(tmp_path)
