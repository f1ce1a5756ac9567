"""Judge agreement over a run: the agreeing share and Krippendorff's alpha (interval), checked
against the `krippendorff` package."""

from __future__ import annotations

import math
import random

import krippendorff
import pytest

from pytest_reasoning_evals.dialectic.agreement import interval_alpha, judge_agreement
from pytest_reasoning_evals.dialectic.judge import DIMENSIONS


def _reference(units: list[list[float | None]]) -> float:
    """The krippendorff package's alpha; units are responses, one value (or None) per judge."""
    coders = max(len(u) for u in units)
    data = [[u[k] if k < len(u) and u[k] is not None else math.nan for u in units] for k in range(coders)]
    return krippendorff.alpha(reliability_data=data, level_of_measurement="interval")


@pytest.mark.parametrize("seed", range(20))
def test_alpha_matches_the_krippendorff_package(seed):
    rng = random.Random(seed)
    judges = rng.randint(2, 4)
    units = [[rng.randint(0, 10) for _ in range(judges)]]  # at least one response every judge scored
    for _ in range(rng.randint(1, 40)):
        truth = rng.randint(0, 10)
        units.append(
            [None if rng.random() < 0.15 else min(10, max(0, truth + rng.randint(-2, 2))) for _ in range(judges)]
        )
    ours = interval_alpha([[v for v in u if v is not None] for u in units])
    reference = _reference(units)
    # every value the same: the package divides 0 by 0, we say None
    assert ours is None if math.isnan(reference) else ours == pytest.approx(reference, abs=1e-9)


def test_alpha_is_one_for_identical_judges_and_negative_for_systematic_disagreement():
    assert interval_alpha([[2, 2], [5, 5], [9, 9]]) == pytest.approx(1.0)
    assert interval_alpha([[9, 1, 5], [9, 1, 5]]) < 0


@pytest.mark.parametrize(
    "units",
    [[], [[7]], [[7], [8]], [[7, 7], [7, 7, 7]]],
    ids=["no-units", "one-value", "no-unit-with-two-values", "no-variation"],
)
def test_alpha_is_none_when_it_cannot_be_told(units):
    assert interval_alpha(units) is None


def _response(scores: list[int], *, errors: int = 0, self_judged: bool = False) -> dict:
    judgements = [{"judge": "j", "seat": k, **dict.fromkeys(DIMENSIONS, s)} for k, s in enumerate(scores, 1)]
    spread = (max(scores) - min(scores)) if scores else None
    return {
        "judge": {
            "n_judges": len(scores) + errors,
            "n_valid": len(scores),
            "agreement": None if spread is None else spread <= 2,
            "judgements": judgements,
            "self_judged": self_judged,
        }
    }


def test_the_run_counts_agreement_over_responses_with_two_judgements():
    rows = [_response([7, 8, 7]), _response([9, 1, 5]), _response([6], errors=2), {"judge": None}]
    a = judge_agreement(rows)
    assert (a["responses_judged"], a["responses_compared"], a["agreeing"]) == (3, 2, 1)
    assert a["agreement_share"] == 0.5 and a["self_judged"] is False
    assert set(a["krippendorff_alpha"]) == set(DIMENSIONS)
    assert judge_agreement([_response([7, 7], self_judged=True)])["self_judged"] is True


def test_nothing_judged_gives_no_share_and_no_alpha():
    a = judge_agreement([{"judge": None}])
    assert a["agreement_share"] is None and set(a["krippendorff_alpha"].values()) == {None}
