"""The shapes of the dialectic protocol's records: responses, check records, conversations,
comparisons and the rows written under <out>/<model>_dialectic/. Plain dicts at runtime (TypedDict)."""

from __future__ import annotations

from typing import Literal, TypedDict

from pytest_reasoning_evals.providers.base import cost_saved
from pytest_reasoning_evals.stash import CallCounts

Mode = Literal["dialectic", "bypass"]


class SavingFields(TypedDict, total=False):
    """What a reply's (or a judge panel's) calls saved (providers.base.saving_fields), each field
    only when not zero, so a record without caching or batching reads as before: input tokens read
    from / written to the prompt cache and what that saved; `batch` when a provider's batch answered
    one of them (priced at the batch price), and what that saved against the list price."""

    cached_tokens: int
    cache_write_tokens: int
    cache_saved_usd: float
    batch: bool
    batch_saved_usd: float


SAVING_FIELDS = tuple(SavingFields.__annotations__)  # what a response passes on to its rows when present


class CompletionRecord(SavingFields):
    """One model reply as the runner keeps it (runner.completion_record)."""

    provider: str | None
    model: str | None
    text: str
    input_tokens: int
    output_tokens: int
    latency_ms: float
    cost_usd: float
    finish_reason: str | None
    error: str | None
    cassette: str | None
    # None when no cassette was involved
    cassette_hit: bool | None
    # reasoning the provider returned apart from the text ("" when none)
    reasoning: str


class Thinking(TypedDict):
    """A response's reasoning, by where it was (SPEC 9): written into the answer text (visible
    process, analysed) or returned by the provider apart from it (recorded, not analysed)."""

    in_answer: str
    from_provider: str


class Crux(TypedDict):
    name: str
    # canonical types, or "other:<label>"
    types: list[str]


class Extraction(TypedDict):
    """The structure read from a reply by regex (extract.extract; its docstring says how)."""

    # distinct hypothesis numbers
    h_count: int
    oscillation_table: bool
    stability: Literal["STABLE", "UNSTABLE"] | None
    iteration_limit: bool
    # the last labelled confidence
    confidence: float | None
    confidences: list[float]
    cruxes: list[Crux]
    signals: list[str]
    mode: Mode
    # the highest confidence the visible process earns (PCC)
    pcc_ceiling: float


class ResponseMetrics(TypedDict):
    h_count: int
    oscillation: bool
    # how many cruxes
    cruxes: int
    confidence: float | None
    # None: PCC does not apply (no confidence, or a case that does not expect dialectic reasoning)
    pcc_valid: bool | None
    mode_correct: bool


class EpochFields(TypedDict, total=False):
    """Under --eval-epochs K > 1 (plugin/epochs.py): the case a response or conversation asks again
    (its query_id is <case>-e0<e>), and which time; absent without epochs."""

    case_id: str
    # 1..K
    epoch: int


EPOCH_FIELDS = tuple(EpochFields.__annotations__)  # what a response passes on to its rows under epochs


class ResponseRecord(EpochFields):
    """One (case, variant, model) response in the process that made it (runner.response)."""

    query_id: str
    variant: str
    # the model's alias
    model: str
    category: str
    query: str
    expected_mode: str
    text: str
    extraction: Extraction
    metrics: ResponseMetrics
    # a PCC violation: scores 0
    hard_fail: bool
    completion: CompletionRecord


class TokenCounts(TypedDict):
    input: int
    output: int
    total: int


class PublicResponse(EpochFields, SavingFields):
    """A response as the controller keeps it (checks.public), sent once with a check record."""

    query_id: str
    variant: str
    model: str
    category: str
    query: str
    expected_mode: str
    text: str
    metrics: ResponseMetrics
    hard_fail: bool
    mode: Mode
    signals: list[str]
    stability: str | None
    pcc_ceiling: float
    confidences: list[float]
    cruxes: list[Crux]
    tokens: TokenCounts
    cost_usd: float
    latency_ms: float
    error: str | None
    cassette: str | None
    cassette_hit: bool | None
    thinking: Thinking


class Judgement(TypedDict):
    """One judge's usable reply (judge.parse), scores 0-10."""

    # the judge's alias
    judge: str
    # its seat on the panel (1-based; the cassette's ...__judge<seat>)
    seat: int
    h_quality: float
    oscillation_depth: float
    crux_precision: float
    epistemic_calibration: float
    actionability: float
    rationale: str


class VerdictRecord(SavingFields):
    """What the judges said about one response (judge.Verdict.to_dict)."""

    n_judges: int
    # judges whose reply was usable
    n_valid: int
    # per dimension; None when no judge answered
    medians: dict[str, float] | None
    # per dimension, max - min across judges
    spread: dict[str, float] | None
    agreement: bool | None
    needs_human_review: bool
    errors: list[str]
    judgements: list[Judgement]
    # a judge of the panel is the model that wrote the response
    self_judged: bool
    # why no judge was asked ("the response was not answered (...)"); None when they were
    not_judged: str | None
    # what the panel's calls cost (replayed calls at their recorded usage)
    cost_usd: float


class CheckRecord(TypedDict):
    """What every check item sends (checks.py); `passed` decides the item, `reason` says why not."""

    suite: str
    check: Literal["structure", "pcc", "mode", "judge", "resolution", "cross_provider"]
    # <case>-<variant>-<check>, or <case>-cross_provider
    id: str
    passed: bool
    reason: str | None


class ResponseCheckRecord(CheckRecord):
    """The structure, pcc and mode checks of one response."""

    # [query_id, variant, model]: which response it checked
    response_key: list[str]


class JudgeCheckRecord(ResponseCheckRecord):
    """The judge check: the rubric score (0-100; 0 on a hard fail; None when no judge answered)."""

    score: float | None
    judge: VerdictRecord


class ResolutionVerdict(SavingFields):
    """The resolution judge on one turn of a conversation (what its call saved: SavingFields)."""

    turn: int
    resolved: bool
    confidence: float | None
    reasoning: str
    input_tokens: int
    output_tokens: int
    cost_usd: float


class CostSaved(TypedDict, total=False):
    """What the prompt cache and a provider's batches saved against the list price (each only when not zero)."""

    cache: float
    batch: float


class SavedFields(TypedDict, total=False):
    # only when something was saved (saved_parts): records without caching or batching read as before
    cost_saved_usd: CostSaved


def response_of(record) -> tuple[str, str, str]:
    """(query_id, variant, model): the response a sent response, a per-response row or a conversation is of."""
    return record["query_id"], record["variant"], record["model"]


def saved_parts(calls) -> dict:
    """providers.base.cost_saved over records carrying SavingFields."""
    calls = list(calls)
    cache = sum(c.get("cache_saved_usd", 0.0) for c in calls)
    return cost_saved(cache, sum(c.get("batch_saved_usd", 0.0) for c in calls))


class ConversationFields(EpochFields, SavedFields):
    """A multi-turn resolution conversation (runner.resolution); multiturn_summary.json's conversations_detail."""

    query_id: str
    variant: str
    model: str
    # the model's replies, the first response included
    turns: int
    # None: not resolved within MAX_TURNS
    turns_to_resolution: int | None
    verdicts: list[ResolutionVerdict]
    # resolution judge calls that failed or were unusable
    judge_errors: list[str]
    # follow-up calls of the model that failed or came back empty (the conversation ends there)
    reply_errors: list[str]
    # why no resolution judge was asked (the first response was not answered); None when it was
    not_judged: str | None
    # the follow-up replies' texts (the first response is not repeated)
    replies: list[str]
    total_tokens: int
    # every call: the first response, the follow-ups and the resolution judges (SPEC 6.5)
    cost_usd: float


class ConversationRecord(ConversationFields, total=False):
    # the first response's cost, only when not zero: the run's per-response rows count it too (dialectic/costs.py)
    response_cost_usd: float


class ResolutionCheckRecord(CheckRecord):
    conversation: ConversationRecord


class _ProviderEntry(TypedDict):
    model: str | None
    provider: str | None
    input_tokens: int
    output_tokens: int
    latency_ms: float
    cost_usd: float
    composite_score: float | None
    total_tokens: int
    tokens_per_second: float | None
    cost_per_mtok: float | None
    efficiency: float | None


class ProviderEntry(_ProviderEntry, total=False):
    """One model's row of a cross-provider comparison (cross_provider.provider_entry); None where undefined."""

    judge_cost_usd: float  # what judging the response cost, when not zero


class ProviderComparison(TypedDict):
    # aliases
    best_quality: str | None
    best_cost: str | None
    quality_adjusted_efficiency: dict[str, float | None]


class CrossProviderRecord(TypedDict):
    """The methodology's comparison of one query (cross_provider.comparison); cross_provider_summary.json's comparisons."""

    query_id: str
    # by model alias
    providers: dict[str, ProviderEntry]
    comparison: ProviderComparison


class CrossProviderCheckRecord(CheckRecord):
    comparison: CrossProviderRecord


# What an item sends (checks.py); the controller keeps a list of them.
ItemRecord = ResponseCheckRecord | JudgeCheckRecord | ResolutionCheckRecord | CrossProviderCheckRecord


class _RecordPayload(TypedDict):
    protocol: Literal["dialectic"]
    record: ItemRecord


class RecordPayload(_RecordPayload, total=False):
    """A check item's result for the controller (Protocol.send_record)."""

    # the response its record checked, the first time this process sends that response
    response: PublicResponse
    # its model calls, added by the session (every protocol's payload has them)
    calls: CallCounts


class JudgeSummary(SavingFields):
    """The judges' verdict in a per-response row, every judge's scores with it (not the medians:
    judge_scores holds them)."""

    n_judges: int
    n_valid: int
    spread: dict[str, float] | None
    agreement: bool | None
    needs_human_review: bool
    errors: list[str]
    judgements: list[Judgement]
    # a judge of the panel is the model that wrote the response
    self_judged: bool
    # why no judge was asked; None when they were
    not_judged: str | None
    cost_usd: float


class PerResponseRecord(EpochFields, SavingFields):
    """One line of per_response.jsonl (summary.responses): a response merged with its checks."""

    query_id: str
    variant: str
    model: str
    hard_fail: bool
    # the judge check's score; None when not judged
    score: float | None
    metrics: ResponseMetrics
    # the judges' medians per dimension
    judge_scores: dict[str, float] | None
    tokens: TokenCounts
    cost: float
    judge: JudgeSummary | None
    # check name -> passed
    checks: dict[str, bool]
    category: str
    expected_mode: str
    mode: Mode
    signals: list[str]
    stability: str | None
    pcc_ceiling: float
    confidences: list[float]
    cruxes: list[Crux]
    latency_ms: float
    error: str | None
    query: str
    text: str
    thinking: Thinking


class SpotcheckEntry(TypedDict):
    """One line of spotcheck_queue.jsonl (spotcheck.queue): blinded, the rubric fields for a human to fill."""

    # opaque: spotcheck_key.json says whose response it is
    review_id: str
    # why it is in the queue: judge_disagreement, pcc_violation, sample...
    reasons: list[str]
    query: str
    response: str
    h_quality: float | None
    oscillation_depth: float | None
    crux_precision: float | None
    epistemic_calibration: float | None
    actionability: float | None
    rationale: str | None


class SpotcheckKey(TypedDict):
    """Whose response a review id is (spotcheck_key.json, by review id)."""

    query_id: str
    variant: str
    model: str
    judge_medians: dict[str, float] | None
