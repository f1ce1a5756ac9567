"""ChaosBench's summary rows: the part of each record its controller keeps to the end of the run."""

from __future__ import annotations

from sys import intern
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_reasoning_evals.chaosbench.records import ItemRecord, TurnRecord

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
    "label_from",
    "reprompts",
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
