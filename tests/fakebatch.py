"""The fake provider's batch endpoints (FakeProvider.batch): OpenAI's files and batches, Anthropic's
message batches, Gemini's batch mode, over the same server and answering each request with the same responder as a
live call (stdlib only).

    server.batch.polls = 2                       # each batch answers in progress to 2 polls, then ends
    server.batch.end_soon()                      # ... or at its next poll, batches already running too
    server.batch.outcome = lambda cid, body: "expired" if cid.endswith("3") else None
    server.batch.created, server.batch.uploaded  # batches created, files uploaded
    server.live_calls                            # live chat calls, beside
    server.batch.fail("GET", r"/v1/batches/[^/]+", status(503), dropped())  # the next two polls: a 503, no answer

Routes: POST /v1/files (multipart, purpose=batch), GET /v1/files/{id}/content, POST /v1/batches,
GET /v1/batches/{id}, POST /v1/batches/{id}/cancel; POST /v1/messages/batches, GET
/v1/messages/batches/{id}, GET .../results, POST .../cancel; POST
/v1beta/models/{model}:batchGenerateContent, GET /v1beta/batches/{id}, POST
/v1beta/batches/{id}:cancel, and Gemini's Files API for a batch of a JSONL file: POST
/upload/v1beta/files (a resumable upload's start, answering its session URL in X-Goog-Upload-URL),
POST to that URL (upload, finalize), GET /download/v1beta/files/{id}:download; DELETE /v1/files/{id} and /v1beta/files/{id}
(`deleted` lists them). A batch is answered when it ends (its
last poll), so a request cancelled before then is never answered. An OpenAI file whose lines name
two models or repeat a custom_id makes a failed batch, as OpenAI's validation does; an Anthropic
custom_id outside [A-Za-z0-9_-]{1,64} or repeated is a 400; a Gemini create without display_name,
or with a request lacking its request or metadata.key, is a 400. A Gemini batch with a request
"expired" ends BATCH_STATE_EXPIRED without that request's reply (Gemini expires a batch, not a request).
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections import deque
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP

ANTHROPIC_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
FAILURE = {"type": "invalid_request_error", "message": "fake batch failure"}
EXPIRY = "This request could not be executed before the completion window expired."


@dataclass
class _Batch:
    fmt: str  # "openai" | "anthropic" | "gemini"
    id: str
    requests: list[tuple[str, dict]]  # (custom_id, body)
    left: int  # polls still answered in progress
    state: str = "running"  # running | canceling | ended | canceled | failed
    input_file_id: str | None = None
    errors: list[str] = field(default_factory=list)
    outcomes: dict[str, tuple[str, dict | None]] = field(default_factory=dict)  # cid -> (kind, reply)
    files: dict[str, str] = field(default_factory=dict)  # "output"/"error" -> file id
    model: str = ""  # Gemini: the model of the create call's URL
    from_file: bool = False  # Gemini: created from an uploaded file, so it answers in a responses file


class FakeBatches:
    def __init__(self, provider) -> None:
        self.provider = provider  # its responder / reply_text and reply shapes answer each request
        self.polls = 0  # GETs of a batch answered in progress before it ends
        self.outcome = None  # callable(custom_id, body) -> "failed" | "expired" | None (answered)
        self.created = 0  # batches created (both providers)
        self.uploaded = 0  # files uploaded
        self.cancels = 0
        self.deleted: list[str] = []  # file ids (Gemini: files/...) deleted, in order
        self.upload_url: str | None = None  # Gemini: the session URL an upload's start answers (default: its own)
        self._files: dict[str, str] = {}
        self._batches: dict[str, _Batch] = {}
        self._lock = threading.Lock()
        self._routes = [
            ("POST", re.compile(r"/v1/files"), self._upload),
            ("GET", re.compile(r"/v1/files/([^/]+)/content"), self._content),
            ("POST", re.compile(r"/v1/batches"), self._create_openai),
            ("GET", re.compile(r"/v1/batches/([^/]+)"), self._get),
            ("POST", re.compile(r"/v1/batches/([^/]+)/cancel"), self._cancel),
            ("POST", re.compile(r"/v1/messages/batches"), self._create_anthropic),
            ("GET", re.compile(r"/v1/messages/batches/([^/]+)"), self._get),
            ("GET", re.compile(r"/v1/messages/batches/([^/]+)/results"), self._results),
            ("POST", re.compile(r"/v1/messages/batches/([^/]+)/cancel"), self._cancel),
            ("POST", re.compile(r"/v1beta/models/([^/:]+):batchGenerateContent"), self._create_gemini),
            ("GET", re.compile(r"/v1beta/batches/([^/:]+)"), self._get),
            ("POST", re.compile(r"/v1beta/batches/([^/:]+):cancel"), self._cancel_gemini),
            ("POST", re.compile(r"/upload/v1beta/files"), self._gemini_upload_start),
            ("POST", re.compile(r"/upload/v1beta/files/(session-[0-9a-f]+)"), self._gemini_upload_finish),
            ("GET", re.compile(r"/download/v1beta/files/([^/:]+):download"), self._gemini_download),
            ("DELETE", re.compile(r"/v1/files/([^/]+)"), self._delete_openai),
            ("DELETE", re.compile(r"/v1beta/(files/[^/:]+)"), self._delete_gemini),
        ]
        self._sessions: dict[str, int] = {}  # Gemini upload session -> the bytes its start announced
        self._aimed: list[tuple[str, re.Pattern, deque]] = []  # fail(): (method, path, its faults left)

    def fail(self, method: str, path: str, *faults) -> None:
        """The next requests of `method` to a path matching `path` (a regular expression, matching
        the whole path, no query) meet `faults` (fakeprovider's status, slow, dropped, cut), one each
        in order; other requests go on as before. A fault the server's own script holds comes first."""
        with self._lock:
            self._aimed.append((method, re.compile(path), deque(faults)))

    def fault_for(self, method: str, path: str):
        """The next fault `fail` aimed at this request, or None."""
        with self._lock:
            for verb, pattern, left in self._aimed:
                if verb == method and left and pattern.fullmatch(path):
                    return left.popleft()
        return None

    @property
    def unused_faults(self) -> int:
        """The faults `fail` aimed that no request has met yet."""
        with self._lock:
            return sum(len(left) for *_, left in self._aimed)

    def end_soon(self) -> None:
        """Every running batch ends at its next poll (and later ones at their first)."""
        with self._lock:
            self.polls = 0
            for batch in self._batches.values():
                batch.left = 0

    def route(self, method: str, path: str):
        """The handler and its path arguments for a batch route, or None."""
        for verb, pattern, handler in self._routes:
            match = pattern.fullmatch(path)
            if verb == method and match:
                return handler, match.groups()
        return None

    def serve(self, route, raw: bytes, headers: dict) -> tuple[int, str, str, dict]:
        """The status, body, content type and other headers of a batch route's answer."""
        handler, args = route
        with self._lock:
            code, text, *more = handler(*args, raw=raw, headers=headers)
        lines = code == 200 and handler in (self._content, self._results, self._gemini_download)
        return code, text, "application/jsonl" if lines else "application/json", more[0] if more else {}

    # -- OpenAI --

    def _upload(self, raw: bytes, headers: dict) -> tuple[int, str]:
        message = BytesParser(policy=HTTP).parsebytes(
            b"Content-Type: " + headers.get("content-type", "").encode() + b"\r\n\r\n" + raw
        )
        parts = {p.get_param("name", header="content-disposition"): p for p in message.iter_parts()}
        if "file" not in parts or parts.get("purpose") is None or parts["purpose"].get_content().strip() != "batch":
            return 400, _error("a file and purpose=batch are required")
        file_id = f"file-{uuid.uuid4().hex[:16]}"
        data = parts["file"].get_payload(decode=True)
        self._files[file_id] = data.decode("utf-8")
        self.uploaded += 1
        return 200, json.dumps({"id": file_id, "object": "file", "bytes": len(data), "purpose": "batch"})

    def _content(self, file_id: str, raw: bytes, headers: dict) -> tuple[int, str]:
        if file_id not in self._files:
            return 404, _error(f"no file {file_id}")
        return 200, self._files[file_id]

    def _create_openai(self, raw: bytes, headers: dict) -> tuple[int, str]:
        body = json.loads(raw or b"null")
        if not isinstance(body, dict) or body.get("input_file_id") not in self._files:
            return 400, _error("input_file_id names no uploaded file")
        if body.get("endpoint") != "/v1/chat/completions" or body.get("completion_window") != "24h":
            return 400, _error("endpoint must be /v1/chat/completions and completion_window 24h")
        lines = [json.loads(line) for line in self._files[body["input_file_id"]].splitlines() if line.strip()]
        batch = _Batch(
            "openai", f"batch_{uuid.uuid4().hex[:16]}", [(r["custom_id"], r["body"]) for r in lines], self.polls
        )
        batch.input_file_id = body["input_file_id"]
        batch.errors = _openai_problems(lines)
        if batch.errors:
            batch.state = "failed"
        self._batches[batch.id] = batch
        self.created += 1
        return 200, json.dumps(self._openai_view(batch))

    def _openai_view(self, batch: _Batch) -> dict:
        kinds = [kind for kind, _ in batch.outcomes.values()]
        status = {"running": "in_progress", "canceling": "cancelling", "canceled": "cancelled", "failed": "failed"}
        ended = "expired" if "expired" in kinds else "completed"
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": status.get(batch.state, ended),
            "output_file_id": batch.files.get("output"),
            "error_file_id": batch.files.get("error"),
            "errors": {"object": "list", "data": [{"message": e} for e in batch.errors]} if batch.errors else None,
            "request_counts": {
                "total": len(batch.requests),
                "completed": kinds.count("succeeded"),
                "failed": len(kinds) - kinds.count("succeeded"),
            },
        }

    def _openai_files(self, batch: _Batch) -> None:
        """The ended batch's output and error files, as OpenAI writes them."""
        output, errors = [], []
        for cid, (kind, reply) in batch.outcomes.items():
            row = {"id": f"batch_req_{uuid.uuid4().hex[:12]}", "custom_id": cid, "response": None, "error": None}
            if kind == "succeeded":
                row["response"] = {"status_code": 200, "request_id": uuid.uuid4().hex, "body": reply}
            elif kind == "failed":
                row["response"] = {"status_code": 400, "request_id": uuid.uuid4().hex, "body": {"error": FAILURE}}
            elif kind == "expired":
                row["error"] = {"code": "batch_expired", "message": EXPIRY}
            (output if kind == "succeeded" else errors).append(json.dumps(row) + "\n")
        for name, rows in (("output", output), ("error", errors)):
            if rows:
                file_id = f"file-{uuid.uuid4().hex[:16]}"
                self._files[file_id] = "".join(rows)
                batch.files[name] = file_id

    def _delete_openai(self, file_id: str, raw: bytes, headers: dict) -> tuple[int, str]:
        if self._files.pop(file_id, None) is None:
            return 404, _error(f"no file {file_id}")
        self.deleted.append(file_id)
        return 200, json.dumps({"id": file_id, "object": "file", "deleted": True})

    # -- Anthropic --

    def _create_anthropic(self, raw: bytes, headers: dict) -> tuple[int, str]:
        body = json.loads(raw or b"null")
        items = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(items, list) or not items:
            return 400, _error("requests: a non-empty list is required")
        ids = [item.get("custom_id") for item in items]
        if not all(isinstance(i, str) and ANTHROPIC_ID.fullmatch(i) for i in ids) or len(set(ids)) != len(ids):
            return 400, _error("custom_id must be unique and match ^[a-zA-Z0-9_-]{1,64}$")
        batch = _Batch(
            "anthropic", f"msgbatch_{uuid.uuid4().hex[:16]}", [(i["custom_id"], i["params"]) for i in items], self.polls
        )
        self._batches[batch.id] = batch
        self.created += 1
        return 200, json.dumps(self._anthropic_view(batch))

    def _anthropic_view(self, batch: _Batch) -> dict:
        kinds = [kind for kind, _ in batch.outcomes.values()]
        ended = batch.state in ("ended", "canceled")
        counts = {k: kinds.count(k) for k in ("succeeded", "canceled", "expired")}
        counts["errored"] = kinds.count("failed")
        counts["processing"] = len(batch.requests) - len(kinds)
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "canceling" if batch.state == "canceling" else "in_progress",
            "request_counts": counts,
            "results_url": f"{self.provider.url}/v1/messages/batches/{batch.id}/results" if ended else None,
        }

    def _results(self, batch_id: str, raw: bytes, headers: dict) -> tuple[int, str]:
        batch = self._batches.get(batch_id)
        if batch is None or batch.fmt != "anthropic" or batch.state not in ("ended", "canceled"):
            return 404, _error(f"no ended batch {batch_id}")
        rows = []
        for cid, (kind, reply) in batch.outcomes.items():
            result = {"type": "errored" if kind == "failed" else kind}
            if kind == "succeeded":
                result["message"] = reply
            elif kind == "failed":
                result["error"] = {"type": "error", "error": FAILURE}
            rows.append(json.dumps({"custom_id": cid, "result": result}) + "\n")
        return 200, "".join(rows)

    # -- Gemini --

    def _create_gemini(self, model: str, raw: bytes, headers: dict) -> tuple[int, str]:
        batch = (json.loads(raw or b"null") or {}).get("batch")
        config = (batch or {}).get("input_config") or {}
        if config.get("file_name") in self._files:
            lines = [json.loads(line) for line in self._files[config["file_name"]].splitlines() if line.strip()]
            items = [{"request": line.get("request"), "metadata": {"key": line.get("key")}} for line in lines]
        else:
            items = config.get("requests", {}).get("requests")
        if not isinstance(batch, dict) or not batch.get("display_name") or not isinstance(items, list) or not items:
            return 400, _gemini_error(
                "batch.display_name and input_config (requests or an uploaded file_name) are required"
            )
        if not all(
            isinstance(i.get("request"), dict) and isinstance(i.get("metadata", {}).get("key"), str) for i in items
        ):
            return 400, _gemini_error("each request needs its request and key")
        batch = _Batch(
            "gemini", uuid.uuid4().hex[:16], [(i["metadata"]["key"], i["request"]) for i in items], self.polls
        )
        batch.model, batch.from_file = model, "file_name" in config
        self._batches[batch.id] = batch
        self.created += 1
        return 200, json.dumps(self._gemini_view(batch))

    def _gemini_upload_start(self, raw: bytes, headers: dict) -> tuple[int, str, dict]:
        wanted = {"x-goog-upload-protocol": "resumable", "x-goog-upload-command": "start"}
        length = headers.get("x-goog-upload-header-content-length", "")
        if any(headers.get(k) != v for k, v in wanted.items()) or not length.isdigit():
            return 400, _gemini_error("a resumable upload starts with its protocol, command and content length")
        session = f"session-{uuid.uuid4().hex[:16]}"
        self._sessions[session] = int(length)
        return 200, "{}", {"X-Goog-Upload-URL": self.upload_url or f"{self.provider.url}/upload/v1beta/files/{session}"}

    def _gemini_upload_finish(self, session: str, raw: bytes, headers: dict) -> tuple[int, str]:
        if headers.get("x-goog-upload-command") != "upload, finalize" or headers.get("x-goog-upload-offset") != "0":
            return 400, _gemini_error("upload, finalize at offset 0 expected")
        if self._sessions.pop(session, None) != len(raw):
            return 400, _gemini_error("the bytes differ from the length the upload announced")
        name = f"files/{uuid.uuid4().hex[:16]}"
        self._files[name] = raw.decode("utf-8")
        self.uploaded += 1
        return 200, json.dumps({"file": {"name": name, "mimeType": "application/jsonl", "sizeBytes": str(len(raw))}})

    def _delete_gemini(self, name: str, raw: bytes, headers: dict) -> tuple[int, str]:
        if self._files.pop(name, None) is None:
            return 404, _gemini_error(f"no file {name}")
        self.deleted.append(name)
        return 200, "{}"

    def _gemini_download(self, file_id: str, raw: bytes, headers: dict) -> tuple[int, str]:
        name = f"files/{file_id}"
        if name not in self._files:
            return 404, _gemini_error(f"no file {name}")
        return 200, self._files[name]

    def _cancel_gemini(self, batch_id: str, raw: bytes, headers: dict) -> tuple[int, str]:
        code, text = self._cancel(batch_id, raw, headers)
        return code, "{}" if code == 200 else text  # Gemini's cancel answers google.protobuf.Empty

    def _gemini_view(self, batch: _Batch) -> dict:
        """The long-running operation GET /batches/{id} answers: the batch in its metadata."""
        kinds = [kind for kind, _ in batch.outcomes.values()]
        ended = batch.state in ("ended", "canceled")
        state = "CANCELLED" if batch.state == "canceled" else "EXPIRED" if "expired" in kinds else "SUCCEEDED"
        succeeded = kinds.count("succeeded")
        operation = {
            "name": f"batches/{batch.id}",
            "metadata": {
                "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
                "model": f"models/{batch.model}",
                "displayName": "fake",
                "state": f"BATCH_STATE_{state if ended else 'RUNNING'}",
                "batchStats": {  # int64 counts: strings in JSON
                    "requestCount": str(len(batch.requests)),
                    "successfulRequestCount": str(succeeded),
                    "failedRequestCount": str(kinds.count("failed")),
                    "pendingRequestCount": str(len(batch.requests) - len(kinds)),
                },
            },
            "done": ended,
        }
        if ended:
            replies = self._gemini_replies(batch)
            output = {"inlinedResponses": {"inlinedResponses": replies}}
            if batch.from_file:  # a file's lines name their key at the top
                name = batch.files.setdefault("output", f"files/{uuid.uuid4().hex[:16]}")
                lines = [
                    {"key": r["metadata"]["key"], **{k: v for k, v in r.items() if k != "metadata"}} for r in replies
                ]
                self._files[name] = "".join(json.dumps(line) + "\n" for line in lines)
                output = {"responsesFile": name}
            operation["response"] = {
                "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput",
                **output,
            }
        return operation

    @staticmethod
    def _gemini_replies(batch: _Batch) -> list[dict]:
        """In the requests' order; none for a request the batch expired or cancelled before it ran."""
        replies = []
        for cid, (kind, reply) in batch.outcomes.items():
            if kind == "succeeded":
                replies.append({"response": reply, "metadata": {"key": cid}})
            elif kind == "failed":
                error = {"code": 3, "message": FAILURE["message"], "status": "INVALID_ARGUMENT"}
                replies.append({"error": error, "metadata": {"key": cid}})
        return replies

    # -- all --

    def _get(self, batch_id: str, raw: bytes, headers: dict) -> tuple[int, str]:
        batch = self._batches.get(batch_id)
        if batch is None:
            return 404, _error(f"no batch {batch_id}")
        if batch.state == "running" and batch.left > 0:
            batch.left -= 1
        elif batch.state == "running":
            self._end(batch, cancelled=False)
        elif batch.state == "canceling":
            self._end(batch, cancelled=True)
        return 200, json.dumps(self._view(batch))

    def _cancel(self, batch_id: str, raw: bytes, headers: dict) -> tuple[int, str]:
        batch = self._batches.get(batch_id)
        if batch is None:
            return 404, _error(f"no batch {batch_id}")
        if batch.state == "running":
            batch.state = "canceling"
            self.cancels += 1
        return 200, json.dumps(self._view(batch))

    def _view(self, batch: _Batch) -> dict:
        views = {"openai": self._openai_view, "anthropic": self._anthropic_view, "gemini": self._gemini_view}
        return views[batch.fmt](batch)

    def _end(self, batch: _Batch, cancelled: bool) -> None:
        """Answer every request (none once cancelled: the fake runs a batch only at its end)."""
        for cid, body in batch.requests:
            kind = "canceled" if cancelled else (self.outcome(cid, body) if self.outcome else None) or "succeeded"
            batch.outcomes[cid] = (kind, self._answer(batch, body) if kind == "succeeded" else None)
        batch.state = "canceled" if cancelled else "ended"
        if batch.fmt == "openai":
            # OpenAI writes no line for a request a cancel stopped before it ran
            batch.outcomes = {c: o for c, o in batch.outcomes.items() if o[0] != "canceled"}
            self._openai_files(batch)

    def _answer(self, batch: _Batch, body: dict) -> dict:
        text = self.provider.responder(body) if self.provider.responder else self.provider.reply_text
        return self.provider._reply(batch.fmt, batch.model or body.get("model", ""), text)


def _openai_problems(lines: list[dict]) -> list[str]:
    """What OpenAI's validation refuses in a file: two models, a repeated custom_id, another url."""
    problems = []
    if len({str(r.get("body", {}).get("model")) for r in lines}) > 1:
        problems.append("every request of a batch must name the same model")
    if len({r.get("custom_id") for r in lines}) != len(lines):
        problems.append("custom_id values must be unique within a batch")
    if any(r.get("url") != "/v1/chat/completions" or r.get("method") != "POST" for r in lines):
        problems.append("every line must be POST /v1/chat/completions")
    return problems


def _gemini_error(message: str) -> str:
    return json.dumps({"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})


def _error(message: str) -> str:
    return json.dumps({"error": {"type": "invalid_request_error", "message": message}})
