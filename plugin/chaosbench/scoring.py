"""Scoring one ChaosBench answer: normalise the reply, compare with gold, build the item record.

The record is what travels from a worker to the controller (plain JSON-able values only).
"""

from __future__ import annotations

from sys import intern

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


# What the summary, the gates, a comparison and the progress line read of a record (a
# question's, a dialogue's, a dialogue turn's): all the controller keeps in memory of each item,
# while completions.jsonl has the whole record (its question, reply, prompt hash, cassette...).
SUMMARIZED = (
    "id",
    "kind",
    "family",
    "split",
    "system_id",
    "bias",
    "predicates",
    "provider",
    "label",
    "gold",
    "correct",
    "status",
    "error",
    "input_tokens",
    "output_tokens",
    "thinking_tokens",
    "cost_usd",
    "cassette_hit",
    "turn",
    "turns",
    "num_turns",
    "num_correct_turns",
)
SUMMARIZED_SET = frozenset(SUMMARIZED)

# Summarized fields whose values repeat across records (the rest: ids, tokens, costs, errors).
SHARED_VALUES = frozenset(("family", "split", "system_id", "bias", "provider", "label", "gold", "status"))


class SummaryRow:
    """A record as the controller keeps it: its summarized fields only, read like the record's
    dict (`row["status"]`, `row.get("kind", "question")`, `"turns" in row`). Slots, not a dict:
    a 40,000-item run keeps 40,000 of them to the end, and a slotted object is much smaller."""

    __slots__ = SUMMARIZED

    def __init__(self, fields: dict):
        for name, value in fields.items():
            setattr(self, name, value)

    def __getitem__(self, name: str):
        try:
            return getattr(self, name)
        except AttributeError:
            raise KeyError(name) from None

    def get(self, name: str, default=None):
        return getattr(self, name, default)

    def __contains__(self, name: str) -> bool:
        return hasattr(self, name)

    def keys(self) -> list[str]:
        return [name for name in SUMMARIZED if hasattr(self, name)]

    def __iter__(self):
        return iter(self.keys())

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.keys()}

    def __eq__(self, other) -> bool:
        if isinstance(other, SummaryRow):
            other = other.to_dict()
        return self.to_dict() == other if isinstance(other, dict) else NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return f"SummaryRow({self.to_dict()!r})"


NO_PREDICATES = ()


def compact(record: ItemRecord) -> SummaryRow:
    """The record (a dialogue's turns too) reduced to what the summary reads. Repeated words are
    shared (interned): under xdist every record arrives as new strings, and 40,000 copies of
    "lorenz63" add up on the controller."""
    fields = _summarized(record)
    if "turns" in fields:
        fields["turns"] = [SummaryRow(_summarized(turn)) for turn in fields["turns"]]
    return SummaryRow(fields)


def _summarized(record: ItemRecord | TurnRecord) -> dict:
    out = {
        k: intern(v) if k in SHARED_VALUES and type(v) is str else v for k, v in record.items() if k in SUMMARIZED_SET
    }
    if "predicates" in out:
        out["predicates"] = (
            tuple(
                {intern(k): intern(v) if type(v) is str else v for k, v in pred.items()} for pred in out["predicates"]
            )
            or NO_PREDICATES
        )
    return out


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
