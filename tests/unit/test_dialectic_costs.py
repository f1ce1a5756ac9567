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


def comparison(query: str, **providers: tuple[float, float]) -> dict:
    """A query's comparison: alias -> (response cost, judge cost; 0: no judge_cost_usd field)."""
    entries = {}
    for alias, (cost, judged) in providers.items():
        entries[alias] = {"cost_usd": cost, **({"judge_cost_usd": judged} if judged else {})}
    return {"query_id": query, "providers": entries, "comparison": {}}


def test_compared_models_count_their_responses_and_judges_but_not_the_rows_own_response() -> None:
    compared = [comparison("a", m=(0.25, 1.0), other=(0.5, 2.0)), comparison("b", m=(0.25, 0.0), other=(0.5, 0.0))]
    costs, _ = answer_costs([row("a", 0.25, judge=1.0)], [], compared)
    # "m" of "a" is the row's; "m" of "b" has no row (no check item of it ran): counted here
    assert costs["compared models"] == pytest.approx(0.5 + 2.0 + 0.25 + 0.5)


def test_a_run_comparing_nothing_that_costs_has_no_compared_part() -> None:
    costs, _ = answer_costs([row("a", 0.25)], [], [comparison("a", m=(0.25, 0.0))])
    assert "compared models" not in costs
