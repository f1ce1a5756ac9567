"""ChaosBench's summary rows: the part of each record that the summary, the gates, a comparison, the
upstream metrics and the report's charts read, typed. A record becomes a row in one place,
compact(): an item's record as it reaches the controller, and every record read back from a
completions.jsonl (a resume, a merge, a baseline, the runs table, the report).

Slotted and small, with repeated words shared: a 40,000-item run keeps one row per item to the
end, while completions.jsonl has the whole record (its question, reply, prompt hash, cassette...).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from sys import intern
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from pytest_reasoning_evals.completions import read_completions

if TYPE_CHECKING:
    from pytest_reasoning_evals.chaosbench.records import DialogueRecord, ItemRecord, QuestionRecord, TurnRecord


class AskedPredicate(NamedTuple):
    """A predicate a question asks about (records.Predicate), one shared object per distinct one."""

    name: str
    polarity: str


@dataclass(slots=True, kw_only=True)
class QuestionRow:
    """A question's record as the summary reads it."""

    kind: ClassVar[str] = "question"

    id: str
    family: str
    split: str
    system_id: str
    bias: str | None
    predicates: tuple[AskedPredicate, ...]
    label: str | None
    gold: str | None
    correct: bool | None
    status: str
    error: str | None
    # its model calls: the provider (None or "": none made), usage and cost, reprompts included
    provider: str | None
    input_tokens: int
    output_tokens: int
    thinking_tokens: int
    cost_usd: float
    cassette_hit: bool | None
    cassette_hits: int | None = None  # of its calls, when some were replayed and some made now (records.MixedHitFields)
    cache_saved_usd: float = 0.0  # what the prompt cache saved (records.CacheFields; absent: nothing)
    batch_saved_usd: float = 0.0  # what a batch's price saved (records.BatchFields; absent: nothing)
    reprompts: int = 0  # absent from the records of runs before --eval-reprompt
    label_from: int | None = None
    question_id: str | None = None  # under --eval-epochs K > 1: the question it asks again ...
    epoch: int = 0  # ... and which time (1..K); 0: asked once

    @property
    def calls(self) -> tuple[QuestionRow, ...]:
        """What the model was asked for it (call counts, spend): itself."""
        return (self,)


@dataclass(slots=True, kw_only=True)
class TurnRow(QuestionRow):
    """A dialogue turn's record: a question's, and where it sits (1-based)."""

    turn: int


@dataclass(slots=True, kw_only=True)
class DialogueRow:
    """A dialogue's record as the summary reads it: its verdict and its turns (usage is theirs)."""

    kind: ClassVar[str] = "dialogue"

    id: str
    family: str
    split: str
    correct: bool | None
    status: str
    error: str | None
    turns: tuple[TurnRow, ...]
    question_id: str | None = None  # as QuestionRow's
    epoch: int = 0

    @property
    def calls(self) -> tuple[TurnRow, ...]:
        return self.turns


Row = QuestionRow | DialogueRow


def compact(record: ItemRecord) -> Row:
    """The record reduced to its row. Repeated words are shared (interned): under xdist every
    record arrives as new strings, and 40,000 copies of "lorenz63" add up on the controller."""
    if record.get("kind") == "dialogue":
        return _dialogue(record)
    return QuestionRow(**_question_fields(record))


def read_rows(path: Path) -> list[Row]:
    """The rows of a completions file's records (completions.read_completions)."""
    return [compact(record) for record in read_completions(path)]


def _dialogue(record: DialogueRecord) -> DialogueRow:
    return DialogueRow(
        id=record["id"],
        family=intern(record["family"]),
        split=intern(record["split"]),
        correct=record["correct"],
        status=intern(record["status"]),
        error=record["error"],
        turns=tuple(TurnRow(**_question_fields(turn), turn=turn["turn"]) for turn in record["turns"]),
        question_id=record.get("question_id"),
        epoch=record.get("epoch", 0),
    )


def _question_fields(record: QuestionRecord | TurnRecord) -> dict:
    return {
        "id": record["id"],
        "family": intern(record["family"]),
        "split": intern(record["split"]),
        "system_id": intern(record["system_id"]),
        "bias": _shared(record["bias"]),
        "predicates": _predicates(record["predicates"]),
        "label": _shared(record["label"]),
        "gold": _shared(record["gold"]),
        "correct": record["correct"],
        "status": intern(record["status"]),
        "error": record["error"],
        "provider": _shared(record["provider"]),
        "input_tokens": record["input_tokens"],
        "output_tokens": record["output_tokens"],
        "thinking_tokens": record["thinking_tokens"],
        "cost_usd": record["cost_usd"],
        "cassette_hit": record["cassette_hit"],
        "cassette_hits": record.get("cassette_hits"),
        "cache_saved_usd": record.get("cache_saved_usd", 0.0),
        "batch_saved_usd": record.get("batch_saved_usd", 0.0),
        "reprompts": record.get("reprompts", 0),
        "label_from": record.get("label_from"),
        "question_id": record.get("question_id"),
        "epoch": record.get("epoch", 0),
    }


def _shared(text: str | None) -> str | None:
    return None if text is None else intern(text)


_PREDICATES: dict[tuple[tuple[str, str], ...], tuple[AskedPredicate, ...]] = {}


def _predicates(listed: list[dict]) -> tuple[AskedPredicate, ...]:
    """One shared tuple per distinct list: a bank asks a few dozen, each thousands of times."""
    key = tuple((p["name"], p["polarity"]) for p in listed)
    shared = _PREDICATES.get(key)
    if shared is None:
        shared = _PREDICATES[key] = tuple(AskedPredicate(intern(name), intern(polarity)) for name, polarity in key)
    return shared
