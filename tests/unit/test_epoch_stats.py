"""plugin/epoch_stats.py: scores of questions asked K times, the paired test between two such runs,
and the change a run can detect."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pytest

from pytest_reasoning_evals.epoch_stats import (
    EXACT_LIMIT,
    agreement,
    clustered_interval,
    difference_interval,
    difference_variance,
    majority_accuracy,
    questions_needed,
    sign_flip_test,
    within_noise,
)
from pytest_reasoning_evals.stats import detectable, detectable_difference, mcnemar_exact


def brute_force(differences: list[Fraction]) -> float:
    """Every sign pattern of the non-zero differences, counted."""
    nonzero = [d for d in differences if d]
    observed = abs(sum(differences))
    far = sum(
        abs(sum(s * d for s, d in zip(signs, nonzero))) >= observed
        for signs in itertools.product((1, -1), repeat=len(nonzero))
    )
    return far / 2 ** len(nonzero)


def test_with_one_epoch_each_the_sign_flip_test_is_mcnemars_exact_test() -> None:
    differences = [Fraction(-1)] * 9 + [Fraction(1)] * 3 + [Fraction(0)] * 40
    assert sign_flip_test(differences) == mcnemar_exact(9, 3)
    assert sign_flip_test([Fraction(0)] * 5) == 1.0


@pytest.mark.parametrize("seed", range(6))
def test_with_three_epochs_the_sign_flip_test_counts_every_sign_pattern(seed: int) -> None:
    rng = random.Random(seed)
    differences = [Fraction(rng.randint(0, 3) - rng.randint(0, 3), 3) for _ in range(14)]
    assert sign_flip_test(differences) == pytest.approx(brute_force(differences), abs=1e-12)


def test_beyond_the_exact_limit_the_normal_approximation_stays_close_to_the_exact_count() -> None:
    rng = random.Random(7)
    differences = [Fraction(rng.choice((-2, -1, 1, 2, 1, -1, 2)), 2) for _ in range(EXACT_LIMIT)]
    exact = sign_flip_test(differences)
    approximate = sign_flip_test([*differences, Fraction(1, 2), Fraction(-1, 2)])  # two more that cancel
    assert exact == pytest.approx(approximate, abs=0.01) and 0.0 < exact < 1.0


def test_clustered_interval_is_the_mean_share_plus_minus_its_standard_error() -> None:
    shares = [1.0, 2 / 3, 1 / 3, 0.0, 1.0, 1.0]
    low, high = clustered_interval(shares)
    mean = sum(shares) / 6
    sd = math.sqrt(sum((s - mean) ** 2 for s in shares) / 5)
    assert (low, high) == pytest.approx(
        (mean - 1.959964 * sd / math.sqrt(6), min(1.0, mean + 1.959964 * sd / math.sqrt(6)))
    )
    assert clustered_interval([0.5]) is None


def test_majority_vote_and_agreement_of_epochs() -> None:
    assert majority_accuracy([Fraction(r, 3) for r in (3, 2, 1, 0)]) == 0.5
    assert majority_accuracy([Fraction(1, 2), Fraction(2, 2)]) == 0.75  # a tie counts half
    assert majority_accuracy([]) is None
    consistency, flips = agreement([["TRUE"] * 3, ["TRUE", "FALSE", "TRUE"], ["FALSE", None, None]])
    assert consistency == pytest.approx((1 + 2 / 3 + 2 / 3) / 3) and flips == pytest.approx(2 / 3)
    assert agreement([]) == (None, None)


def test_difference_interval_is_paired() -> None:
    low, high = difference_interval([Fraction(-1), Fraction(0), Fraction(0), Fraction(-1, 3)])
    assert low < -1 / 3 < high <= 1.0


def test_the_detectable_change_with_one_epoch_is_mcnemars_and_epochs_shrink_only_the_noise() -> None:
    assert detectable(400, difference_variance(0.2), alpha=0.05) == pytest.approx(
        detectable_difference(400, 80, alpha=0.05), rel=1e-9
    )
    noise = within_noise([3, 2, 1, 3, 0, 3], 3)  # two of six questions split their epochs
    assert noise == pytest.approx(2 * (2 * (2 * 1 / 6)) / 6)
    assert difference_variance(0.2, noise, 3) < difference_variance(0.2, noise, 1) == 0.2
    assert difference_variance(0.2, 0.0, 5) == 0.2  # a model with no noise gains nothing from epochs
    needed = questions_needed(0.03, 0.2, alpha=0.05)
    assert detectable(needed, 0.2, alpha=0.05) <= 0.03 < detectable(needed - 1, 0.2, alpha=0.05)
