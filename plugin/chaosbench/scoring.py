"""Scoring one ChaosBench answer: normalise the reply, compare with gold, build the item record.

The record is what travels from a worker to the controller (plain JSON-able values only).
"""

from __future__ import annotations

from pytest_reasoning_evals.chaosbench.normalize import normalize_answer
from pytest_reasoning_evals.chaosbench.questions import Question
from pytest_reasoning_evals.chaosbench.records import ItemRecord, QuestionRecord, TurnRecord
from pytest_reasoning_evals.providers.base import Completion

SUITE = "chaosbench"
EXCERPT_CHARS = 80


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def score(question: Question, completion: Completion, prompt_sha256: str) -> QuestionRecord:
    label = None if completion.error else normalize_answer(completion.text)
    gold = question.ground_truth
    if gold is None:
        status, correct = "no_gold", None
    elif label is None:
        status, correct = "unknown", None
    else:
        correct = label == gold
        status = "correct" if correct else "wrong"
    return {
        "suite": SUITE,
        "id": question.id,
        "family": question.family,
        "split": question.split,
        "system_id": question.system_id,
        "template": question.template,
        "bias": question.bias,
        "question": question.question,  # the prompt is the run manifest's template around it (report.html)
        "predicates": [dict(pred) for pred in question.predicates],
        "prompt_sha256": prompt_sha256,
        "provider": completion.provider,
        "model": completion.model,
        "raw_text": completion.text,
        "label": label,
        "gold": gold,
        "correct": correct,
        "status": status,
        "input_tokens": completion.input_tokens,
        "output_tokens": completion.output_tokens,
        "thinking_tokens": completion.thinking_tokens,
        "latency_ms": completion.latency_ms,
        "cost_usd": completion.cost_usd,
        "finish_reason": completion.finish_reason,
        "error": completion.error,
        "cassette": completion.extra.get("cassette"),
        "cassette_hit": completion.extra.get("cassette_hit"),
    }


def failure_reason(record: ItemRecord | TurnRecord) -> str | None:
    """One line saying why the item did not pass, or None when it did."""
    if "turns" in record:  # a dialogue: the first turn that did not pass, and how many did not
        failing = [t for t in record["turns"] if t["status"] in ("wrong", "unknown")]
        if not failing:
            return None
        first = failing[0]
        more = f" ({len(failing)} of {len(record['turns'])} turns did not pass)" if len(failing) > 1 else ""
        return f"turn {first['turn']}: {failure_reason(first)}{more}"
    if record["status"] == "wrong":
        return f"expected {record['gold']}, got {record['label']}: {excerpt(record['raw_text'])!r}"
    if record["status"] == "unknown":
        if record["error"]:
            return f"UNKNOWN (expected {record['gold']}): model call failed: {excerpt(record['error'])}"
        return f"UNKNOWN (expected {record['gold']}): no TRUE/FALSE in reply {excerpt(record['raw_text'])!r}"
    return None
