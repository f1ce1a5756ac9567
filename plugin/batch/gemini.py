"""Gemini's Batch Mode (Gemini API v1beta): the requests inline in one create call (POST
/models/{model}:batchGenerateContent, each {request, metadata: {key}}), which answers a long-running
operation named batches/{id}; its state (GET /batches/{id}: the operation's metadata.state), the
replies inline in its response.inlinedResponses.inlinedResponses; cancel (POST /batches/{id}:cancel).
One create call holds at most 20 MB of inline requests and names one model: submit splits there.
A larger batch as a JSONL file through the Files API is not used here (docs/batch.md).
"""

from __future__ import annotations

from pytest_reasoning_evals.batch.base import (
    CANCELED,
    ENDED,
    EXPIRED,
    FAILED,
    IN_PROGRESS,
    BatchClient,
    BatchEntry,
    BatchError,
    BatchHandle,
    BatchResult,
    BatchStatus,
    compact,
    item_size,
    now,
)
from pytest_reasoning_evals.providers.base import Secret

PREFIX = "batches/"  # an operation's name: the id is what follows
DISPLAY_NAME = "pytest-reasoning-evals"  # required by the create call; names nothing secret
HEAD = '{"batch":{"display_name":"' + DISPLAY_NAME + '","input_config":{"requests":{"requests":['
TAIL = "]}}}}"
# the API's BatchState (BATCH_STATE_*); the SDKs and the guide's examples say JOB_STATE_*: both are read
STATES = {
    "PENDING": IN_PROGRESS,
    "RUNNING": IN_PROGRESS,
    "SUCCEEDED": ENDED,
    "FAILED": ENDED,  # the batch failed as a whole
    "CANCELLED": ENDED,
    "EXPIRED": ENDED,  # pending or running past Gemini's window
}
# what a key with no reply in an ended batch became, by the batch's state
UNANSWERED = {"FAILED": FAILED, "CANCELLED": CANCELED, "EXPIRED": EXPIRED}
CODES = {1: CANCELED, 4: EXPIRED}  # a reply's google.rpc.Status code: CANCELLED, DEADLINE_EXCEEDED


class GeminiBatchClient(BatchClient):
    provider = "gemini"
    MAX_REQUESTS = 100_000  # Gemini documents no count for inline requests: the bytes decide
    MAX_BYTES = 20 * 1000 * 1000  # "20 MB" per create call of inline requests, read as the smaller MB
    OVERHEAD = len(HEAD + TAIL)
    ONE_MODEL = True  # the model is in the create call's URL
    BATCHES = ("batches",)

    def headers(self) -> dict:
        return {"x-goog-api-key": Secret(self._key or "")}  # as the live call (wire.gemini_call) sends it

    def item(self, entry: BatchEntry) -> str:
        return compact({"request": entry.body, "metadata": {"key": entry.custom_id}})

    def size(self, entry: BatchEntry) -> int:
        return item_size(self.item(entry))

    def _create(self, chunk: list[BatchEntry]) -> BatchHandle:
        model = chunk[0].model
        if not model:
            raise BatchError(f"request {chunk[0].custom_id} names no model (build it with entry_for)")
        url = f"{self.url('models', model)}:batchGenerateContent"
        operation = self.post_items(url, HEAD, [self.item(e) for e in chunk], TAIL)
        return BatchHandle(self.provider, batch_id(operation), tuple(e.custom_id for e in chunk), now())

    def _batch(self, handle: BatchHandle) -> tuple[dict, BatchStatus]:
        operation = self.call_json("GET", self.batch_url(handle))
        return operation, status_of(operation, len(handle.custom_ids))

    def poll(self, handle: BatchHandle) -> BatchStatus:
        return self._batch(handle)[1]

    def cancel(self, handle: BatchHandle) -> BatchStatus:
        """Ask for the cancel (Gemini answers an empty object), then the batch's state after it."""
        self.call_json("POST", f"{self.batch_url(handle)}:cancel")
        return self.poll(handle)

    def results(self, handle: BatchHandle) -> dict[str, BatchResult]:
        operation, status = self._batch(handle)
        if not status.ended:
            raise BatchError(f"batch {handle.batch_id} has not ended ({status.provider_state})")
        replies = inlined(operation)
        # each reply names its key; Gemini also keeps the requests' order, used only when every one came back
        keyed = len(replies) == len(handle.custom_ids)
        found: dict[str, BatchResult] = {}
        for index, reply in enumerate(replies):
            key = (reply.get("metadata") or {}).get("key") or (handle.custom_ids[index] if keyed else None)
            if isinstance(key, str) and key in handle.custom_ids:
                found[key] = self.result(key, reply)
        kind = UNANSWERED.get(state_word(status.provider_state), FAILED)
        why = self.clean(_message(operation.get("error"))) or f"no reply in the batch ({status.provider_state})"
        return self.results_of(handle, found, kind, why)

    def result(self, key: str, reply: dict) -> BatchResult:
        """One inlined response: {response: GenerateContentResponse} or {error: google.rpc.Status}."""
        if isinstance(reply.get("response"), dict) and "error" not in reply:
            return BatchResult(key, reply["response"])
        error = reply.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        return BatchResult(key, None, CODES.get(code, FAILED), self.clean(_message(error) or "no response"))


def batch_id(operation: dict) -> str:
    """The id of the batch a create call answered: its operation's name without `batches/`."""
    name = operation.get("name") or (operation.get("metadata") or {}).get("name")
    if not isinstance(name, str) or not name.startswith(PREFIX) or len(name) == len(PREFIX):
        raise BatchError(f"the batch created has no name batches/...: {str(name)[:80]!r}")
    return name[len(PREFIX) :]


def state_word(state: str) -> str:
    """BATCH_STATE_RUNNING and JOB_STATE_RUNNING are both RUNNING."""
    return state.removeprefix("BATCH_STATE_").removeprefix("JOB_STATE_")


def status_of(operation: dict, sent: int) -> BatchStatus:
    """The state of a batch from its operation (metadata: the GenerateContentBatch), or the batch itself."""
    batch = operation.get("metadata") if isinstance(operation.get("metadata"), dict) else operation
    state = batch.get("state")
    if not isinstance(state, str) or state_word(state) not in STATES:
        raise BatchError(f"batch {str(operation.get('name'))[:80]} has an unknown state {str(state)[:40]!r}")
    stats = batch.get("batchStats") or {}
    total = number(stats, "requestCount") or sent
    succeeded, failed = number(stats, "successfulRequestCount"), number(stats, "failedRequestCount")
    if STATES[state_word(state)] == ENDED:  # every request has ended, with a reply or without
        return BatchStatus(ENDED, state, total, total, total - succeeded)
    return BatchStatus(IN_PROGRESS, state, total, succeeded + failed, failed)


def number(stats: dict, name: str) -> int:
    """A count of batchStats: an int64, which JSON carries as a string of digits."""
    value = stats.get(name) or 0
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BatchError(f"request count {name} is not a whole number >= 0: {str(value)[:20]}")
    return value


def inlined(operation: dict) -> list[dict]:
    """The ended batch's inline replies: in the operation's response, or the batch's output."""
    holders = (operation.get("response"), (operation.get("metadata") or {}).get("output"), operation.get("output"))
    for holder in holders:
        outer = holder.get("inlinedResponses") if isinstance(holder, dict) else None
        replies = outer.get("inlinedResponses") if isinstance(outer, dict) else None
        if isinstance(replies, list):
            return [r for r in replies if isinstance(r, dict)]
        if isinstance(holder, dict) and holder.get("responsesFile"):
            raise BatchError(f"batch {str(operation.get('name'))[:80]} wrote its replies to a file: not read here")
    return []


def _message(error: object) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error.get("status") or "")
    return str(error or "")
