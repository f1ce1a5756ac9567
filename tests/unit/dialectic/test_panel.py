"""The judge panel: who sits, at what temperature and seed, and when a panel is refused."""

from __future__ import annotations

import pytest

from pytest_reasoning_evals.dialectic.panel import PanelError, Seat, expand, seats, self_judged


def test_one_model_three_times_is_three_independent_samples():
    assert seats(["m"], 3, 0.7) == (Seat(1, "m", 0.7, 1), Seat(2, "m", 0.7, 2), Seat(3, "m", 0.7, 3))


def test_distinct_models_each_judge_once_at_temperature_zero_with_the_default_request():
    assert seats(["a", "b", "c"], 3) == (Seat(1, "a", 0.0, None), Seat(2, "b", 0.0, None), Seat(3, "c", 0.0, None))


def test_models_taken_in_turn_sample_only_the_repeated_one():
    assert seats(["a", "b"], 3, 0.5) == (Seat(1, "a", 0.5, 1), Seat(2, "b", 0.0, None), Seat(3, "a", 0.5, 3))


@pytest.mark.parametrize(("aliases", "n", "size"), [(["m"], None, 3), (["a", "b", "c", "d"], None, 4), (["a"], 1, 1)])
def test_the_default_size_is_three_or_every_model_named(aliases, n, size):
    assert len(seats(aliases, n)) == size


def test_a_repeated_judge_at_temperature_zero_would_send_identical_requests_and_is_refused():
    with pytest.raises(PanelError, match=r"judge 'm' sits 3 times at temperature 0.0: its requests would be identical"):
        seats(["m"], 3, 0.0)
    assert seats(["m"], 1, 0.0) == (Seat(1, "m", 0.0, None),)  # a lone judge is fine


def test_a_panel_name_expands_to_its_models_and_aliases_stay():
    assert expand(("trio", "x"), {"trio": ["a", "b", "c"]}) == ["a", "b", "c", "x"]


def test_self_judged_when_a_seat_is_the_model_under_test():
    assert self_judged(seats(["m", "j"], 2), "m") is True
    assert self_judged(seats(["j", "k"], 2), "m") is False
