"""Gemini's Batch Mode (Gemini API v1beta): the requests inline in one create call (POST
/models/{model}:batchGenerateContent, each {request, metadata: {key}}), which answers a long-running
operation named batches/{id}; its state (GET /batches/{id}: the operation's metadata.state), the
replies inline in its response.inlinedResponses.inlinedResponses; cancel (POST /batches/{id}:cancel).
One create call holds at most 20 MB of inline requests: a larger batch goes as a JSONL file of
{key, request} lines uploaded through the Files API (resumable upload to /upload/v1beta/files), the
create call naming it (input_config.file_name), and its replies come back as a JSONL file
(response.responsesFile, GET /download/v1beta/{file}:download?alt=media). A batch names one model:
submit splits there, and at 2 GB, a file's most.
"""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

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
INLINE_BYTES = 20 * 1000 * 1000  # "20 MB" of inline requests per create call, read as the smaller MB
FILE_NAME = re.compile(r"files/[A-Za-z0-9_-]+")  # a Files API name: nothing in it can change a URL's path
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
    MAX_REQUESTS = 100_000  # Gemini documents no count of requests: the bytes decide
    MAX_BYTES = 2 * 1000**3  # a Files API file holds 2 GB; up to INLINE_BYTES the requests go inline
    INLINE_BYTES = INLINE_BYTES
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
        ids = tuple(e.custom_id for e in chunk)
        if self.OVERHEAD + sum(self.size(e) for e in chunk) <= self.INLINE_BYTES:
            operation = self.post_items(url, HEAD, [self.item(e) for e in chunk], TAIL)
            return BatchHandle(self.provider, batch_id(operation), ids, now())
        file_name = self.upload(
            b"".join((compact({"key": e.custom_id, "request": e.body}) + "\n").encode() for e in chunk)
        )
        body = {"batch": {"display_name": DISPLAY_NAME, "input_config": {"file_name": file_name}}}
        operation = self.call_json("POST", url, json=body)
        return BatchHandle(self.provider, batch_id(operation), ids, now(), file_name)

    def upload(self, data: bytes) -> str:
        """A JSONL file through the Files API's resumable upload (start, then upload and finalize
        in one request); its name files/..."""
        start = self.call(
            "POST",
            self.media_url("upload", "files"),
            headers_extra={
                "X-Goog-Upload-Protocol": "resumable",
                "X-Goog-Upload-Command": "start",
                "X-Goog-Upload-Header-Content-Length": str(len(data)),
                "X-Goog-Upload-Header-Content-Type": "application/jsonl",
                "Content-Type": "application/json",
            },
            data=compact({"file": {"display_name": DISPLAY_NAME}}).encode(),
        )
        session_url = start.headers.get("X-Goog-Upload-URL") or ""
        del start  # a traceback of what follows keeps this frame: a live response keeps its socket open
        if not self.same_origin(session_url):  # the key goes with the bytes: only to the base URL's host
            raise BatchError(f"the upload of a batch file was given no URL on {self.origin()}")
        finish = {"X-Goog-Upload-Command": "upload, finalize", "X-Goog-Upload-Offset": "0"}
        info = self.call_json("POST", session_url, data=data, headers_extra=finish)
        name = (info.get("file") or {}).get("name") if isinstance(info.get("file"), dict) else None
        if not isinstance(name, str) or not FILE_NAME.fullmatch(name):
            raise BatchError(f"the batch file uploaded has no name files/...: {str(name)[:80]!r}")
        return name

    def download(self, name: str, handle: BatchHandle) -> list[dict]:
        """The lines of a batch's responses file, each {key, response} or {key, error}."""
        if not FILE_NAME.fullmatch(name):
            raise BatchError(f"batch {handle.batch_id}'s responses file is no files/... name: {name[:80]!r}")
        text = self.call("GET", f"{self.media_url('download', name)}:download?alt=media").text
        rows = []
        for number, line in enumerate(text.splitlines(), 1):
            try:
                row = json.loads(line) if line.strip() else {}
            except ValueError:
                row = None
            if not isinstance(row, dict):
                raise BatchError(f"batch {handle.batch_id}'s responses file: line {number} is not a JSON object")
            if row:
                rows.append(row)
        return rows

    def media_url(self, kind: str, path: str) -> str:
        """The Files API's upload or download URL: /{kind} before the base URL's path (/v1beta)."""
        parts = urlsplit(self.base_url)
        return f"{parts.scheme}://{parts.netloc}/{kind}{parts.path}/{path}"

    def origin(self) -> str:
        parts = urlsplit(self.base_url)
        return f"{parts.scheme}://{parts.netloc}"

    def same_origin(self, url: str) -> bool:
        parts = urlsplit(url)
        return f"{parts.scheme}://{parts.netloc}" == self.origin() and not parts.username

    def _batch(self, handle: BatchHandle) -> tuple[dict, BatchStatus]:
        operation = self.call_json("GET", self.batch_url(handle))
        return operation, status_of(operation, len(handle.custom_ids))

    def poll(self, handle: BatchHandle) -> BatchStatus:
        return self._batch(handle)[1]

    def cancel(self, handle: BatchHandle) -> BatchStatus:
        """Ask for the cancel (Gemini answers an empty object), then the batch's state after it."""
        self.call_json("POST", f"{self.batch_url(handle)}:cancel", repeat=True)  # a second cancel changes nothing
        return self.poll(handle)

    def files_of(self, handle: BatchHandle) -> list[str]:
        """A batch of a file: the uploaded requests and the responses file (inline batches leave none)."""
        if not handle.input_file_id:
            return []
        names = [handle.input_file_id, responses_file(self._batch(handle)[0]) or ""]
        return [f"{self.base_url}/{name}" for name in names if FILE_NAME.fullmatch(name)]

    def results(self, handle: BatchHandle) -> dict[str, BatchResult]:
        operation, status = self._batch(handle)
        if not status.ended:
            raise BatchError(f"batch {handle.batch_id} has not ended ({status.provider_state})")
        file_name = responses_file(operation)
        replies = self.download(file_name, handle) if file_name else inlined(operation)
        # each reply names its key; Gemini also keeps the requests' order, used only when every one came back
        keyed = len(replies) == len(handle.custom_ids)
        found: dict[str, BatchResult] = {}
        for index, reply in enumerate(replies):
            key = reply.get("key") or (reply.get("metadata") or {}).get("key")
            key = key or (handle.custom_ids[index] if keyed else None)
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


def _outputs(operation: dict) -> tuple:
    """Where an ended batch's output may be: the operation's response, or the batch's output."""
    return operation.get("response"), (operation.get("metadata") or {}).get("output"), operation.get("output")


def inlined(operation: dict) -> list[dict]:
    """The ended batch's inline replies."""
    for holder in _outputs(operation):
        outer = holder.get("inlinedResponses") if isinstance(holder, dict) else None
        replies = outer.get("inlinedResponses") if isinstance(outer, dict) else None
        if isinstance(replies, list):
            return [r for r in replies if isinstance(r, dict)]
    return []


def responses_file(operation: dict) -> str | None:
    """The name of the file an ended batch of a file input wrote its replies to, or None."""
    for holder in _outputs(operation):
        name = holder.get("responsesFile") if isinstance(holder, dict) else None
        if name:
            return str(name)
    return None


def _message(error: object) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error.get("status") or "")
    return str(error or "")
