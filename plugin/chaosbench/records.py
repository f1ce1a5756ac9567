"""The shapes of ChaosBench's records: what an item sends to the controller and completions.jsonl
holds. Plain dicts at runtime (TypedDict), so what is written does not change."""

from __future__ import annotations

from typing import Literal, TypedDict

from pytest_reasoning_evals.stash import CallCounts

Status = Literal["correct", "wrong", "unknown", "no_gold"]
Label = Literal["TRUE", "FALSE"]


class Predicate(TypedDict):
    """A predicate a question asks about: "is it chaotic?" -> Chaotic, positive."""

    name: str
    polarity: Literal["positive", "negative"]


class EpochFields(TypedDict, total=False):
    """Under --eval-epochs K > 1 (plugin/epochs.py): the question or dialogue an item asks again, and which time."""

    question_id: str
    epoch: int  # 1..K


class CacheFields(TypedDict, total=False):
    """Input tokens of the calls read from / written to the provider's prompt cache, and what that
    saved (registry.cache_saving): present only when not zero, so a record without caching reads as before."""

    cached_tokens: int
    cache_write_tokens: int
    cache_saved_usd: float


class BatchFields(TypedDict, total=False):
    """A record of calls a provider's batch answered (their cassettes say so): priced at the batch
    price (registry.batch_cost); present only then, so a record of live calls reads as before."""

    batch: bool  # true: a batch answered one of its calls
    batch_saved_usd: float  # the list price of those calls less what the batch charged


class MixedHitFields(TypedDict, total=False):
    """A question whose calls were some replayed, some made now (a replayed reply, a reprompt asked
    live): how many a cassette answered; absent when they all were, or none (cassette_hit says)."""

    cassette_hits: int


class QuestionRecord(EpochFields, CacheFields, BatchFields, MixedHitFields):
    """One question asked and scored (scoring.score). A question's record has no "kind"."""

    suite: str
    id: str
    family: str
    split: str
    system_id: str
    template: str
    bias: str | None
    # the question only: the prompt is the run manifest's template around it
    question: str
    predicates: list[Predicate]
    prompt_sha256: str
    # None: the item raised before any call (an error record); "": a dialogue turn not asked
    provider: str | None
    model: str | None
    # the first reply (to the question itself)
    raw_text: str
    # how many times an UNKNOWN answer was asked again (--eval-reprompt; 0 for a dialogue turn)
    reprompts: int
    # the replies to those reprompts, in order
    reprompt_replies: list[str]
    # which reply gave the label: 0 raw_text, n the nth of reprompt_replies; None: none did
    label_from: int | None
    # the normalised answer; None: no TRUE/FALSE in any reply, or a call failed
    label: Label | None
    gold: Label | None
    # None when there is no gold or no label
    correct: bool | None
    status: Status
    # usage, latency and cost: of every call, reprompts included
    input_tokens: int
    output_tokens: int
    thinking_tokens: int
    latency_ms: float
    cost_usd: float
    # the first reply's
    finish_reason: str | None
    # the failed call's message (a cassette miss, a refused key, "not asked: ..."), else None
    error: str | None
    cassette: str | None
    # None when no cassette was involved (no call, or cassettes off); False when any call was made now
    cassette_hit: bool | None


class TurnRecord(QuestionRecord):
    """One turn of a dialogue: a question's record plus where it sits."""

    dialogue_id: str
    # 1-based position in the dialogue
    turn: int


class DialogueRecord(EpochFields):
    """One dialogue (dialogues.dialogue_record): correct when every turn is; usage summed over the turns."""

    suite: str
    kind: Literal["dialogue"]
    id: str
    family: str
    split: str
    # the first turn's system
    system_id: str
    prompt_sha256: str
    # the first asked turn's; None when no turn was asked
    provider: str | None
    model: str | None
    num_turns: int
    num_correct_turns: int
    correct: bool | None
    # the worst turn's: wrong > unknown > no_gold > correct
    status: Status
    input_tokens: int
    output_tokens: int
    thinking_tokens: int
    latency_ms: float
    cost_usd: float
    # the first turn's error other than "not asked"
    error: str | None
    cassette: str | None
    # every asked turn replayed; None when cassettes were not involved
    cassette_hit: bool | None
    turns: list[TurnRecord]


# What an item sends and completions.jsonl holds, one per line.
ItemRecord = QuestionRecord | DialogueRecord


class _RecordPayload(TypedDict):
    protocol: Literal["chaosbench"]
    record: ItemRecord


class RecordPayload(_RecordPayload, total=False):
    """An item's result for the controller (Protocol.send_record)."""

    # its model calls, added by the session (every protocol's payload has them)
    calls: CallCounts
