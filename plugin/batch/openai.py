"""OpenAI's Batch API: the requests as a JSONL file (POST /files, purpose=batch), a batch over it
(POST /batches, endpoint /v1/chat/completions, completion_window 24h), its status (GET
/batches/{id}), its output and error files (GET /files/{id}/content). One batch holds at most
50,000 requests, a file at most 200 MB, and every line of a file one model: submit splits there.
"""

from __future__ import annotations

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
    jsonl,
    now,
)
from pytest_reasoning_evals.providers.base import Secret

ENDPOINT = "/v1/chat/completions"  # what each line's url and the batch's endpoint say, whatever the base URL
STATES = {
    "validating": IN_PROGRESS,
    "in_progress": IN_PROGRESS,
    "finalizing": IN_PROGRESS,
    "cancelling": CANCELING,
    "completed": ENDED,
    "failed": ENDED,  # the file was refused: no request ran
    "expired": ENDED,  # the 24 hours passed: what ran is in the files, the rest expired
    "cancelled": ENDED,
}
# what a custom_id with no line in an ended batch's files became, by the batch's status
UNANSWERED = {"failed": FAILED, "expired": EXPIRED, "cancelled": CANCELED}
LINE_ERRORS = {"batch_expired": EXPIRED, "batch_cancelled": CANCELED}


class OpenAIBatchClient(BatchClient):
    provider = "openai"
    MAX_REQUESTS = 50_000
    MAX_BYTES = 200 * 1024 * 1024
    BATCHES = ("batches",)
    ONE_MODEL = True
    # OpenAI's SDK retries a 409 Conflict (a lock timeout) as it does a 429 or a 5xx (its README, "Retries")
    TRANSIENT = frozenset({408, 409, 429})

    def headers(self) -> dict:
        return {"Authorization": Secret(f"Bearer {self._key}")} if self._key else {}

    def line(self, entry: BatchEntry) -> bytes:
        row = {"custom_id": entry.custom_id, "method": "POST", "url": ENDPOINT, "body": entry.body}
        return (compact(row) + "\n").encode("utf-8")

    def size(self, entry: BatchEntry) -> int:
        return len(self.line(entry))

    def model_of(self, entry: BatchEntry) -> str:
        return str(entry.body.get("model"))  # the line's own model: a file naming two fails validation

    def _create(self, chunk: list[BatchEntry]) -> BatchHandle:
        data = b"".join(self.line(e) for e in chunk)
        upload = self.call_json(
            "POST",
            self.url("files"),
            files={"file": ("batch.jsonl", data, "application/jsonl")},
            data={"purpose": "batch"},
        )
        file_id = _id(upload, "file")
        body = {"input_file_id": file_id, "endpoint": ENDPOINT, "completion_window": "24h"}
        batch = self.call_json("POST", self.url("batches"), json=body)
        return BatchHandle(self.provider, _id(batch, "batch"), tuple(e.custom_id for e in chunk), now(), file_id)

    def _batch(self, handle: BatchHandle) -> tuple[dict, BatchStatus]:
        batch = self.call_json("GET", self.batch_url(handle))
        return batch, status_of(batch)

    def poll(self, handle: BatchHandle) -> BatchStatus:
        return self._batch(handle)[1]

    def cancel(self, handle: BatchHandle) -> BatchStatus:
        # a second cancel of the same batch changes nothing: safe to send again
        return status_of(self.call_json("POST", self.batch_url(handle, "cancel"), repeat=True))

    def files_of(self, handle: BatchHandle) -> list[str]:
        """The uploaded input file, and the output and error files the batch wrote."""
        batch = self.call_json("GET", self.batch_url(handle))
        names = ("input_file_id", "output_file_id", "error_file_id")
        ids = dict.fromkeys(str(batch[n]) for n in names if batch.get(n))  # once each, in that order
        return [self.url("files", file_id) for file_id in ids]

    def results(self, handle: BatchHandle) -> dict[str, BatchResult]:
        batch, status = self._batch(handle)
        if not status.ended:
            raise BatchError(f"batch {handle.batch_id} has not ended ({status.provider_state})")
        wanted, found = set(handle.custom_ids), {}
        for name in ("output_file_id", "error_file_id"):
            if batch.get(name):
                text = self.call("GET", self.url("files", str(batch[name]), "content")).text
                rows = jsonl(text, f"batch {handle.batch_id}'s {name}")
                found.update({r.custom_id: r for r in map(self.result, rows) if r.custom_id in wanted})
        kind = UNANSWERED.get(status.provider_state, FAILED)
        why = self.clean(_batch_errors(batch)) or f"no line in the batch's files ({status.provider_state})"
        return self.results_of(handle, found, kind, why)

    def result(self, row: dict) -> BatchResult:
        """One line of an output or error file."""
        cid, response, error = row["custom_id"], row.get("response") or {}, row.get("error")
        if isinstance(error, dict):
            kind = LINE_ERRORS.get(str(error.get("code")), FAILED)
            return BatchResult(cid, None, kind, self.clean(error.get("message") or error.get("code") or ""))
        body = response.get("body") if isinstance(response, dict) else None
        code = response.get("status_code") if isinstance(response, dict) else None
        if code == 200 and isinstance(body, dict):
            return BatchResult(cid, body)
        said = body.get("error", body) if isinstance(body, dict) else body
        message = said.get("message", said) if isinstance(said, dict) else said
        return BatchResult(cid, None, FAILED, self.clean(f"HTTP {code}: {message}"))


def status_of(batch: dict) -> BatchStatus:
    state = batch.get("status")
    if state not in STATES:
        raise BatchError(f"batch {str(batch.get('id'))[:80]} has an unknown status {str(state)[:40]!r}")
    counts = batch.get("request_counts") or {}
    completed, failed = count(counts, "completed"), count(counts, "failed")
    return BatchStatus(STATES[state], state, count(counts, "total"), completed + failed, failed)


def _id(data: dict, what: str) -> str:
    value = data.get("id")
    if not isinstance(value, str) or not value:
        raise BatchError(f"the {what} created has no id")
    return value


def _batch_errors(batch: dict) -> str:
    """Why a batch failed as a whole (its errors.data messages), or ''."""
    errors = batch.get("errors")
    errors = errors.get("data") if isinstance(errors, dict) else None
    if not isinstance(errors, list):
        return ""
    return "; ".join(str(e.get("message", "")) for e in errors if isinstance(e, dict))
