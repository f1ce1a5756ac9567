"""What a dialectic run's answers cost, each call counted once: the responses, their judges, and
what the resolution conversations added. A conversation starts from a response the run asked
once (runner.Conversation): its first reply is that response, so it is counted with the responses,
unless no check item of that response ran (a `-k resolution` run), which leaves it to the conversation.
The terminal summary and report.html read these; variant_summary.json and multiturn_summary.json
keep their own totals (a conversation's cost is the whole conversation, SPEC 6.5)."""

from __future__ import annotations

from collections.abc import Iterable


def _key(record: dict) -> tuple[str, str, str]:
    return record["query_id"], record["variant"], record["model"]


def answer_costs(per_response: list[dict], conversations: Iterable[dict]) -> tuple[dict[str, float], dict[str, float]]:
    """(cost by part, saved by part) of per_response.jsonl's rows and the conversations (multiturn_summary.json's
    conversations_detail); a conversation without `response_cost_usd` (a free first response, or one
    written before the field) counts whole."""
    rows = {_key(r): r for r in per_response}
    conversations = list(conversations)
    follow_ups = 0.0
    saved = {"cache": 0.0, "batch": 0.0}
    for r in per_response:
        for call in (r, r["judge"] or {}):
            saved["cache"] += call.get("cache_saved_usd", 0.0)
            saved["batch"] += call.get("batch_saved_usd", 0.0)
    for c in conversations:
        first = rows.get(_key(c))
        follow_ups += c["cost_usd"] - (c.get("response_cost_usd", 0.0) if first is not None else 0.0)
        for part, value in (c.get("cost_saved_usd") or {}).items():
            saved[part] = saved.get(part, 0.0) + value
        if first is not None and "response_cost_usd" in c:  # the first reply's saving is the row's
            saved["cache"] -= first.get("cache_saved_usd", 0.0)
            saved["batch"] -= first.get("batch_saved_usd", 0.0)
    costs = {
        "responses": sum(r["cost"] for r in per_response),
        "judges": sum(r["judge"]["cost_usd"] for r in per_response if r["judge"]),
        "resolution conversations": follow_ups,
    }
    return costs, {part: value for part, value in saved.items() if value > 1e-12}
