"""stats.py: the paired delta interval contains the change and stays in range; Holm's adjustment."""

from __future__ import annotations

import pytest

from pytest_reasoning_evals.stats import holm, paired_delta_interval


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
