"""plugin/sequential.py: the always-valid bound on a paired comparison's mean difference, and the
decisions --eval-stop-when-decided takes from it, checked by simulation."""

from __future__ import annotations

import random

import pytest

from pytest_reasoning_evals.sequential import MeanBound, decide

BLOCK = 20  # a run looks after every block of answered questions


def run(draw, n: int, alpha: float = 0.05, max_drop: float = 0.0):
    """The first decision of one simulated comparison (looked at every BLOCK items), or None; and the
    bound, to read its final interval."""
    bound = MeanBound(alpha)
    for i in range(1, n + 1):
        bound.add(draw())
        if i % BLOCK == 0:
            decision = decide(bound, max_drop)
            if decision.verdict:
                return decision, bound
    return None, bound


def differences(rng: random.Random, worse: float, better: float):
    """d per question: -1 (broken) with `worse`, +1 (fixed) with `better`, else 0."""

    def draw() -> int:
        u = rng.random()
        return -1 if u < worse else 1 if u < worse + better else 0

    return draw


def test_with_no_difference_a_false_alarm_of_worse_stays_under_alpha_over_1000_runs() -> None:
    rng = random.Random(1)
    alarms = sum(
        (decision := run(differences(rng, 0.15, 0.15), 400)[0]) is not None and decision.verdict == "worse"
        for _ in range(1000)
    )
    assert alarms / 1000 <= 0.05, alarms


def test_the_bound_holds_at_every_look_for_at_least_1_minus_alpha_of_runs() -> None:
    rng = random.Random(2)
    missed = 0
    for _ in range(1000):
        bound, draw = MeanBound(0.1), differences(rng, 0.25, 0.05)  # true mean -0.2
        for _ in range(300):
            bound.add(draw())
            low, high = bound.interval()
            if not low <= -0.2 <= high:
                missed += 1
                break
    assert missed / 1000 <= 0.1, missed


def test_a_clear_regression_is_decided_worse_well_before_the_end() -> None:
    rng = random.Random(3)
    stops = []
    for _ in range(200):  # a 20-point drop, 40% of the questions answered differently
        decision, _ = run(differences(rng, 0.3, 0.1), 400)
        assert decision is None or decision.verdict == "worse", decision
        stops.append(decision.n if decision else 401)
    assert sum(n > 400 for n in stops) <= 10 and sorted(stops)[100] <= 200, sorted(stops)


def test_always_false_against_an_oracle_stops_early_and_an_oracle_against_itself_is_never_worse() -> None:
    rng = random.Random(4)
    decision, _ = run(lambda: -1 if rng.random() < 0.5 else 0, 400)  # wrong on every TRUE question
    assert decision.verdict == "worse" and decision.n <= 100, decision
    same, bound = run(lambda: 0, 400)
    assert same is None and bound.interval()[0] < 0 < bound.interval()[1]
    tolerated, _ = run(lambda: 0, 400, max_drop=0.05)
    assert tolerated.verdict == "not worse" and tolerated.n < 400, tolerated


@pytest.mark.parametrize(("alpha", "value"), [(0.0, 0.0), (1.0, 0.0), (0.05, 1.5)])
def test_a_level_outside_0_1_or_a_value_outside_the_range_is_refused(alpha: float, value: float) -> None:
    with pytest.raises(ValueError):
        MeanBound(alpha).add(value)
