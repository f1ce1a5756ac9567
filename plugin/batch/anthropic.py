"""Anthropic's Message Batches: the requests in one JSON body (POST /messages/batches, each
{custom_id, params}), its status (GET /messages/batches/{id}), its results as JSONL at the
batch's results_url, cancel (POST .../cancel). One batch holds at most 100,000 requests and
256 MB: submit splits there.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from pytest_reasoning_evals.batch.base import (
    CANCELED,
    CANCELING,
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
    count,
    item_size,
    jsonl,
    now,
)
from pytest_reasoning_evals.providers.base import Secret, mask_url

API_VERSION = "2023-06-01"  # the version the live calls send (providers.wire)
STATES = {"in_progress": IN_PROGRESS, "canceling": CANCELING, "ended": ENDED}
KINDS = {"errored": FAILED, "expired": EXPIRED, "canceled": CANCELED}
HEAD, TAIL = '{"requests":[', "]}"  # the body around the items


class AnthropicBatchClient(BatchClient):
    provider = "anthropic"
    MAX_REQUESTS = 100_000
    MAX_BYTES = 256 * 1024 * 1024
    OVERHEAD = len(HEAD + TAIL)
    BATCHES = ("messages", "batches")
    # Anthropic's SDK retries a 409 Conflict (a lock timeout) as it does a 429 or a 5xx (its README, "Retries")
    TRANSIENT = frozenset({408, 409, 429})

    def headers(self) -> dict:
        return {"x-api-key": Secret(self._key or ""), "anthropic-version": API_VERSION}

    def item(self, entry: BatchEntry) -> str:
        return compact({"custom_id": entry.custom_id, "params": entry.body})

    def size(self, entry: BatchEntry) -> int:
        return item_size(self.item(entry))

    def _create(self, chunk: list[BatchEntry]) -> BatchHandle:
        batch = self.post_items(self.url(*self.BATCHES), HEAD, [self.item(e) for e in chunk], TAIL)
        batch_id = batch.get("id")
        if not isinstance(batch_id, str) or not batch_id:
            raise BatchError("the batch created has no id")
        return BatchHandle(self.provider, batch_id, tuple(e.custom_id for e in chunk), now())

    def _batch(self, handle: BatchHandle) -> tuple[dict, BatchStatus]:
        batch = self.call_json("GET", self.batch_url(handle))
        return batch, status_of(batch)

    def poll(self, handle: BatchHandle) -> BatchStatus:
        return self._batch(handle)[1]

    def cancel(self, handle: BatchHandle) -> BatchStatus:
        # a second cancel of the same batch changes nothing: safe to send again
        return status_of(self.call_json("POST", self.batch_url(handle, "cancel"), repeat=True))

    def results(self, handle: BatchHandle) -> dict[str, BatchResult]:
        batch, status = self._batch(handle)
        if not status.ended:
            raise BatchError(f"batch {handle.batch_id} has not ended ({status.provider_state})")
        url = self._results_url(batch)
        rows = jsonl(self.call("GET", url).text, f"batch {handle.batch_id}'s results")
        wanted = set(handle.custom_ids)
        found = {r.custom_id: r for r in map(self.result, rows) if r.custom_id in wanted}
        return self.results_of(handle, found, FAILED, "no result line")

    def _results_url(self, batch: dict) -> str:
        """The batch's results_url, only on the base URL's own host: the key goes nowhere else."""
        url = batch.get("results_url")
        if not isinstance(url, str) or not url:
            raise BatchError(f"batch {str(batch.get('id'))[:80]} ended without a results_url")
        ours, theirs = urlsplit(self.base_url), urlsplit(url)
        if (theirs.scheme, theirs.netloc) != (ours.scheme, ours.netloc):
            raise BatchError(f"results_url {mask_url(url)[:200]} is not on {mask_url(self.base_url)}: not sent the key")
        return url

    def result(self, row: dict) -> BatchResult:
        """One line of the results: {custom_id, result: {type, message | error}}."""
        cid, result = row["custom_id"], row.get("result")
        kind = result.get("type") if isinstance(result, dict) else None
        if kind == "succeeded" and isinstance(result.get("message"), dict):
            return BatchResult(cid, result["message"])
        error = result.get("error") if isinstance(result, dict) else None
        inner = error.get("error", error) if isinstance(error, dict) else error
        message = inner.get("message", inner) if isinstance(inner, dict) else inner
        return BatchResult(cid, None, KINDS.get(str(kind), FAILED), self.clean(message or kind or "no result"))


def status_of(batch: dict) -> BatchStatus:
    state = batch.get("processing_status")
    if state not in STATES:
        raise BatchError(f"batch {str(batch.get('id'))[:80]} has an unknown processing_status {str(state)[:40]!r}")
    counts = batch.get("request_counts") or {}
    n = {name: count(counts, name) for name in ("processing", "succeeded", "errored", "canceled", "expired")}
    total = sum(n.values())
    return BatchStatus(
        STATES[state], state, total, total - n["processing"], n["errored"] + n["canceled"] + n["expired"]
    )
