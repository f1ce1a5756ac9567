"""Multi-turn resolution (SPEC 6.5): after each reply a resolution judge decides whether the
user's core uncertainty is resolved; if not, the model gets the methodology's follow-up with
the real conversation history, at most MAX_TURNS turns."""

from __future__ import annotations

from pytest_reasoning_evals.dialectic.records import ConversationRecord
from pytest_reasoning_evals.providers.base import cost_saved

FOLLOW_UP = "Can you synthesize your analysis into a concrete recommendation?"
MAX_TURNS = 4
TEMPLATE = """## Resolution Assessment
### Query: {query}
### Conversation: {conversation_history}
### Latest Response: {response}

Determine if user's **core uncertainty** is resolved (can make decision, trade-offs clear).

### Output (JSON)
{{"resolved": true|false, "confidence": <0.0-1.0>, "reasoning": "..."}}"""
SCHEMA = {
    "type": "object",
    "properties": {
        "resolved": {"type": "boolean"},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "reasoning": {"type": "string"},
    },
    "required": ["resolved", "confidence", "reasoning"],
    "additionalProperties": False,
}


def history_text(messages: list[dict]) -> str:
    """The conversation before the latest reply, as the judge reads it (system prompt left out)."""
    shown = [m for m in messages if m["role"] != "system"]
    return "\n\n".join(f"{m['role'].upper()}: {m['content']}" for m in shown) or "(none)"


def parse(data: dict) -> dict:
    resolved = data.get("resolved")
    if not isinstance(resolved, bool):
        raise ValueError(f"resolution judge gave no boolean 'resolved' (got {resolved!r})")
    confidence = data.get("confidence")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
        confidence = None
    return {"resolved": resolved, "confidence": confidence, "reasoning": str(data.get("reasoning", ""))}


def summarize(conversations: list[ConversationRecord]) -> dict:
    """multiturn_summary.json over the conversation records; the rates are over the judged ones
    (a response that was not answered starts no conversation)."""
    not_judged = sum(bool(c.get("not_judged")) for c in conversations)
    total = len(conversations) - not_judged
    resolved = [c for c in conversations if c["turns_to_resolution"] is not None]
    cost = sum(c["cost_usd"] for c in conversations)
    saved = [c.get("cost_saved_usd", {}) for c in conversations]  # each conversation's, by part
    return {
        "conversations": total,
        "not_judged": not_judged,
        "resolved": len(resolved),
        "resolution_rate": len(resolved) / total if total else None,
        "first_turn_resolution_rate": sum(c["turns_to_resolution"] == 1 for c in resolved) / total if total else None,
        "mean_turns_to_resolution": (sum(c["turns_to_resolution"] for c in resolved) / len(resolved))
        if resolved
        else None,
        "total_tokens": sum(c["total_tokens"] for c in conversations),
        "total_cost_usd": cost,
        "cost_per_resolution": cost / len(resolved) if resolved else None,
        "judge_errors": sum(len(c["judge_errors"]) for c in conversations),
        **cost_saved(sum(s.get("cache", 0.0) for s in saved), sum(s.get("batch", 0.0) for s in saved)),
    }
