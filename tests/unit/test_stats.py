"""stats.py: the paired delta interval contains the change and stays in range; Holm's adjustment;
the smallest paired difference a set could detect."""

from __future__ import annotations

import pytest

from pytest_reasoning_evals.stats import detectable_difference, holm, mcnemar_exact, paired_delta_interval


@pytest.mark.parametrize(
    ("cells", "expected"),
    [
        ((10, 0, 0, 10), (0.0, 0.0)),  # no discordant pair, the interval still has width
        ((12, 2, 9, 6), (7 / 29, 7 / 29)),
        ((0, 5, 0, 0), (-1.0, -1.0)),
    ],
)
def test_paired_delta_interval_contains_the_change_and_stays_in_range(cells, expected) -> None:
    low, high = paired_delta_interval(*cells)
    delta = expected[0]
    assert -1.0 <= low <= delta <= high <= 1.0
    mirrored = paired_delta_interval(cells[0], cells[2], cells[1], cells[3])  # swap broken and fixed
    assert mirrored == pytest.approx([-high, -low])
    assert paired_delta_interval(0, 0, 0, 0) is None


def test_holm_multiplies_by_the_tests_left_keeps_order_and_caps_at_one() -> None:
    # sorted 0.01, 0.02, 0.04, 0.5: times 4, 3, 2, 1 -> 0.04, 0.06, 0.08, 0.5 (given order kept)
    assert holm([0.04, 0.01, 0.5, 0.02]) == pytest.approx([0.08, 0.04, 0.5, 0.06])
    # monotone: a larger p never gets a smaller adjusted value than a smaller one's
    assert holm([0.03, 0.031]) == pytest.approx([0.06, 0.06])
    assert holm([0.6, 0.7]) == [1.0, 1.0]
    assert holm([0.2]) == [0.2] and holm([]) == []


def test_the_detectable_difference_follows_the_discordance_and_never_goes_below_what_the_exact_test_can_call() -> None:
    # (z 0.975 + z 0.8) * sqrt(psi / n), psi the share of discordant pairs
    assert detectable_difference(20, 8, alpha=0.05) == pytest.approx(2.80159 * (0.4 / 20) ** 0.5, rel=1e-4)
    assert detectable_difference(400, 40, alpha=0.05) == pytest.approx(2.80159 * (0.1 / 400) ** 0.5, rel=1e-4)
    assert detectable_difference(20, 8, alpha=0.01) > detectable_difference(20, 8, alpha=0.05)
    # no discordant pair: the fewest changes, all one way, the exact test calls significant (6 at 0.05)
    assert mcnemar_exact(6, 0) < 0.05 <= mcnemar_exact(5, 0)
    assert detectable_difference(20, 0, alpha=0.05) == pytest.approx(6 / 20)
    assert detectable_difference(4, 0, alpha=0.05) == 1.0 and detectable_difference(0, 0, alpha=0.05) is None
