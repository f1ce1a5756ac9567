"""What a dialectic run's answers cost, each call counted once: the responses, their judges, what
the resolution conversations added, and the compared models' responses and judges
(--eval-compare-models). A conversation starts from a response the run asked once
(runner.Conversation): its first reply is that response, so it is counted with the responses,
unless no check item of that response ran (a `-k resolution` run), which leaves it to the conversation.
The terminal summary and report.html read these; variant_summary.json and multiturn_summary.json
keep their own totals (a conversation's cost is the whole conversation, SPEC 6.5)."""

from __future__ import annotations

from collections.abc import Iterable

from pytest_reasoning_evals.dialectic.records import response_of, saved_parts


def answer_costs(
    per_response: list[dict], conversations: Iterable[dict], comparisons: Iterable[dict] = ()
) -> tuple[dict[str, float], dict[str, float]]:
    """(cost by part, saved by part) of per_response.jsonl's rows, the conversations (multiturn_summary.json's
    conversations_detail) and the comparisons (cross_provider_summary.json's); a conversation without
    `response_cost_usd` (a free first response, or one written before the field) counts whole."""
    rows = {response_of(r): r for r in per_response}
    judged = [r["judge"] for r in per_response if r["judge"]]
    saved = dict(saved_parts([*per_response, *judged]).get("cost_saved_usd", {}))
    follow_ups = 0.0
    for c in conversations:
        # its first reply is a row's response, whose cost and saving the rows count already
        first = rows.get(response_of(c)) if "response_cost_usd" in c else None
        follow_ups += c["cost_usd"] - (c["response_cost_usd"] if first is not None else 0.0)
        for part, value in (c.get("cost_saved_usd") or {}).items():
            counted = first.get(f"{part}_saved_usd", 0.0) if first is not None else 0.0
            saved[part] = saved.get(part, 0.0) + value - counted
    costs = {
        "responses": sum(r["cost"] for r in per_response),
        "judges": sum(j["cost_usd"] for j in judged),
        "resolution conversations": follow_ups,
    }
    compared = compared_cost(comparisons, {(query, model) for query, _, model in rows})
    if compared:  # shown only when models were compared (and cost anything)
        costs["compared models"] = compared
    return costs, {part: value for part, value in saved.items() if value > 1e-12}


def compared_cost(comparisons: Iterable[dict], answered: set[tuple[str, str]]) -> float:
    """What the compared models' responses and their judges cost, but for a model's response of a
    query the rows hold (`answered`: (query_id, model)): the model under test's, counted there."""
    return sum(
        entry["cost_usd"] + entry.get("judge_cost_usd", 0.0)
        for c in comparisons
        for alias, entry in c["providers"].items()
        if (c["query_id"], alias) not in answered
    )
