"""dialectic/costs.py: a run's answers cost each call once, though a resolution conversation
starts from a response the per-response rows count too."""

import pytest

from pytest_reasoning_evals.dialectic.costs import answer_costs


def row(query: str, cost: float, judge: float | None = None, **saved) -> dict:
    judged = None if judge is None else {"cost_usd": judge}
    return {"query_id": query, "variant": "dialectic", "model": "m", "cost": cost, "judge": judged, **saved}


def conversation(query: str, cost: float, first: float | None, **saved) -> dict:
    record = {"query_id": query, "variant": "dialectic", "model": "m", "cost_usd": cost, **saved}
    return record if first is None else {**record, "response_cost_usd": first}


def test_a_conversations_first_reply_is_counted_with_the_responses_once() -> None:
    costs, saved = answer_costs([row("a", 0.25, judge=1.0)], [conversation("a", 0.75, first=0.25)])
    assert costs == {"responses": 0.25, "judges": 1.0, "resolution conversations": pytest.approx(0.5)}
    assert saved == {}


def test_a_conversation_whose_response_has_no_row_counts_whole() -> None:
    """A `-k resolution` run: no check item of the response ran, so only the conversation paid for it."""
    costs, _ = answer_costs([], [conversation("a", 0.75, first=0.25)])
    assert costs["resolution conversations"] == 0.75 and costs["responses"] == 0


def test_a_conversation_written_before_its_first_reply_was_noted_counts_whole() -> None:
    costs, _ = answer_costs([row("a", 0.25)], [conversation("a", 0.75, first=None)])
    assert costs["resolution conversations"] == 0.75


def test_savings_count_the_first_reply_once_and_leave_out_empty_parts() -> None:
    rows = [row("a", 0.25, judge=1.0, batch_saved_usd=0.25)]
    talks = [conversation("a", 0.75, first=0.25, cost_saved_usd={"batch": 0.75})]
    _, saved = answer_costs(rows, talks)
    assert saved == {"batch": pytest.approx(0.75)}  # the row's 0.25, and 0.5 the conversation added
