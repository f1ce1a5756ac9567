"""stats.py: the paired delta interval contains the change and stays in range."""

from __future__ import annotations

import pytest

from pytest_reasoning_evals.stats import paired_delta_interval


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
