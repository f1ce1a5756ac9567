"""What every batch client takes and returns, and the rules they share (docs/batch.md).

A batch entry is one ordinary provider request body (built by providers.wire, the same bytes a
live call would send) with its custom_id; a handle is one batch the provider accepted; a result
is the provider's ordinary reply body for one custom_id, or the kind of error that took its place.
The key goes only into request headers, as a Secret: it is in no handle, status, result, message
or file.

A request that is safe to send again (a GET, a DELETE, a cancel) is retried after a transient
failure, as the live calls are (providers.http.RetryPolicy); a create or an upload never is: the
provider may have accepted it, and a second one is a second batch, paid twice.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, ClassVar
from urllib.parse import quote, urlsplit

import requests

from pytest_reasoning_evals.providers.base import Request, Secret, mask_url, url_problem
from pytest_reasoning_evals.providers.http import RetryPolicy, excerpt, nothing_listening_at, refused
from pytest_reasoning_evals.providers.wire import WIRE_FORMATS
from pytest_reasoning_evals.registry import ModelSpec
from pytest_reasoning_evals.secrets import redact_traceback

if TYPE_CHECKING:
    from pytest_reasoning_evals.batch.ledger import BatchLedger

# What took the place of a reply (BatchResult.error)
FAILED = "failed"
EXPIRED = "expired"
CANCELED = "canceled"

# Where a batch is (BatchStatus.state), the same words for every provider
IN_PROGRESS = "in_progress"
CANCELING = "canceling"
ENDED = "ended"

ID_LENGTH = 64  # Anthropic's custom_id is 1-64 of [A-Za-z0-9_-]; OpenAI takes any string
ID_HASH = 12  # hex digits of the hash: 48 bits, no collision among millions of requests
_NOT_ID = re.compile(r"[^A-Za-z0-9_-]+")

# The methods sent again after a transient failure unless the caller says otherwise: reading a
# batch or a file, and deleting a file, do nothing more the second time. A POST is sent once
# unless its caller says it is safe to repeat (a cancel: call(..., repeat=True)); a create or an
# upload never is (BatchClient.call).
SAFE_TO_REPEAT = frozenset({"GET", "DELETE"})
# What went wrong on the way, not in the request: the connection failed, was cut or timed out
# (a certificate that does not verify will not verify the next time either, nor is a refused
# connection retried: BatchClient._unanswered).
TRANSIENT_ERRORS = (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError)


@dataclass(frozen=True)
class Failure:
    """One attempt of BatchClient.call that did not come back 2xx."""

    message: str  # the method, the URL and what went wrong, keys masked
    status: int | None  # the HTTP status, None when there was no answer
    transient: bool  # another attempt may succeed
    retry_after: str | None = None  # the answer's Retry-After header


class BatchError(Exception):
    """A batch call failed or a provider's answer could not be read; the message shows no key."""

    def __init__(self, message: str, status: int | None = None, attempts: int = 1):
        super().__init__(message)
        self.status = status  # the HTTP status when the provider answered one
        self.attempts = attempts  # how many times the request was sent


def compact(value: object) -> str:
    """JSON as it is sent: the body's own key order, no spaces, UTF-8 (not \\u escapes, so sizes are bytes sent)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def custom_id(cassette_folder: str, item_id: str, body: dict) -> str:
    """A stable id of one request: `<folder>--<item id>` made of [A-Za-z0-9_-] and cut to fit,
    then `_` and 12 hex digits of sha256 over folder, item id and the body with sorted keys (so
    two items whose names read alike once cut never share an id, and a changed body is a new one)."""
    canonical = json.dumps([cassette_folder, item_id, body], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:ID_HASH]
    readable = _NOT_ID.sub("-", f"{cassette_folder}--{item_id}").strip("-") or "request"
    return f"{readable[: ID_LENGTH - ID_HASH - 1]}_{digest}"


@dataclass(frozen=True)
class BatchEntry:
    """One request of a batch: the provider's ordinary body and the ids it came from."""

    custom_id: str
    body: dict
    cassette_folder: str = ""
    item_id: str = ""
    model: str = ""  # the provider's model id: Gemini names it in the URL, not the body

    def __repr__(self) -> str:  # a body can be long: the id says which request it is
        return f"BatchEntry({self.custom_id!r})"


def entry_for(spec: ModelSpec, request: Request) -> BatchEntry:
    """The batch entry of `request` to the model `spec`: the body its live call would send."""
    build = WIRE_FORMATS[spec.provider][0]
    # the builders need a base URL only for the call's URL, which a batch line does not carry
    call = build(spec if spec.base_url else replace(spec, base_url="https://batch.invalid"), request, None)
    # Gemini names the model in the URL, not the body: its id must change with the model all the same
    hashed = call.body if "model" in call.body else {**call.body, "model": spec.model_id}
    return BatchEntry(
        custom_id(request.cassette_folder, request.item_id, hashed),
        call.body,
        request.cassette_folder,
        request.item_id,
        spec.model_id,
    )


@dataclass(frozen=True)
class BatchHandle:
    """One batch a provider accepted: what the ledger keeps to find it again."""

    provider: str
    batch_id: str
    custom_ids: tuple[str, ...]
    created: str  # ISO 8601 UTC, our clock
    input_file_id: str | None = None  # OpenAI: the JSONL file the batch reads
    model: str | None = None  # the registry alias it was sent for: `reasoning-evals batch cancel` finds its key

    def __repr__(self) -> str:
        return f"BatchHandle({self.provider} {self.batch_id}, {len(self.custom_ids)} requests, created {self.created})"

    def to_json(self) -> dict:
        return {
            "provider": self.provider,
            "batch_id": self.batch_id,
            "custom_ids": list(self.custom_ids),
            "created": self.created,
            "input_file_id": self.input_file_id,
            "model": self.model,
        }

    @classmethod
    def from_json(cls, data: dict) -> BatchHandle:
        ids = data["custom_ids"]
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise TypeError("custom_ids is not a list of strings")
        fields = (data["provider"], data["batch_id"], data["created"], data.get("input_file_id") or "")
        if not all(isinstance(f, str) for f in (*fields, data.get("model") or "")):
            raise TypeError("provider, batch_id, created, input_file_id and model are strings")
        return cls(*fields[:2], tuple(ids), data["created"], data.get("input_file_id"), data.get("model"))


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class BatchStatus:
    state: str  # IN_PROGRESS, CANCELING or ENDED
    provider_state: str  # the provider's own word (OpenAI: validating, finalizing, expired, ...)
    total: int
    done: int  # requests that ended, in any way
    failed: int  # requests that ended without a reply (errored, expired, canceled)

    @property
    def ended(self) -> bool:
        return self.state == ENDED


@dataclass(frozen=True)
class BatchResult:
    """One request's outcome: `body` the provider's ordinary chat/messages reply, or `error` one
    of FAILED, EXPIRED, CANCELED with the provider's message."""

    custom_id: str
    body: dict | None = None
    error: str | None = None
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None


def split(
    entries: Iterable[BatchEntry], max_requests: int, max_bytes: int, size: Callable[[BatchEntry], int]
) -> list[list[BatchEntry]]:
    """`entries` in order, cut into batches of at most `max_requests` entries and `max_bytes` bytes
    (each entry's `size`); one entry larger than a batch can hold raises BatchError."""
    chunks: list[list[BatchEntry]] = []
    current: list[BatchEntry] = []
    used = 0
    for entry in entries:
        n = size(entry)
        if n > max_bytes:
            raise BatchError(f"request {entry.custom_id} is {n} bytes: more than one batch may hold ({max_bytes})")
        if current and (len(current) >= max_requests or used + n > max_bytes):
            chunks.append(current)
            current, used = [], 0
        current.append(entry)
        used += n
    if current:
        chunks.append(current)
    return chunks


def unique(entries: Iterable[BatchEntry]) -> list[BatchEntry]:
    """The entries with each custom_id once (the first): one request is never sent twice."""
    seen: dict[str, BatchEntry] = {}
    for entry in entries:
        seen.setdefault(entry.custom_id, entry)
    return list(seen.values())


class BatchClient(ABC):
    """A provider's batch API over a requests.Session the caller owns. The limits are class
    attributes (a test lowers them to see a split); with a ledger, every batch is recorded the
    moment the provider accepts it, and a request a recorded batch carries is never sent again."""

    provider: ClassVar[str]
    MAX_REQUESTS: ClassVar[int]
    MAX_BYTES: ClassVar[int]
    OVERHEAD: ClassVar[int] = 0  # bytes of a batch besides its entries (a JSON envelope)
    ONE_MODEL: ClassVar[bool] = False  # a batch names one model (OpenAI's file, Gemini's URL): split per model first
    BATCHES: ClassVar[tuple[str, ...]]  # the path of the batches under the base URL
    # HTTP statuses a request safe to repeat is retried on, besides every 5xx: a request timeout
    # and a rate limit (an answer's x-should-retry overrides them). OpenAI and Anthropic add 409
    # (their SDKs retry it as a lock timeout).
    TRANSIENT: ClassVar[frozenset[int]] = frozenset({408, 429})

    def __init__(
        self,
        session: requests.Session,
        base_url: str,
        key: str | None,
        ledger: BatchLedger | None = None,
        timeout: float = 120.0,
        model: str | None = None,
        policy: RetryPolicy | None = None,
    ):
        if problem := url_problem(base_url):
            raise BatchError(f"base URL {problem}")
        self.session = session
        self.base_url = base_url.rstrip("/")
        self._key = Secret(key) if key else None
        self.ledger = ledger
        self.timeout = timeout
        self.model = model  # the alias each handle records
        # the retries of a call safe to repeat: how many, the waits between (its timeout is not
        # used: `timeout` is each request's)
        self.policy = policy or RetryPolicy()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({mask_url(self.base_url)!r})"

    # -- what every provider does alike --

    def submit(self, entries: Iterable[BatchEntry]) -> list[BatchHandle]:
        """Send `entries` in as few batches as the limits allow; the handles of the ledger's
        batches already carrying some of them come first, and those are not sent again."""
        entries = list(entries)
        known = {cid: h for h in self._pending() for cid in h.custom_ids}
        handles = list(
            {known[e.custom_id].batch_id: known[e.custom_id] for e in entries if e.custom_id in known}.values()
        )
        fresh = [e for e in unique(entries) if e.custom_id not in known]
        for chunk in self.chunks(fresh):
            handle = replace(self._create(chunk), model=self.model)
            if self.ledger is not None:  # before anything else can fail: a rerun must find it
                self.ledger.record(handle)
            handles.append(handle)
        return handles

    def chunks(self, entries: list[BatchEntry]) -> list[list[BatchEntry]]:
        """`entries` cut at the limits, per model first when a batch may name only one."""
        groups: dict[str, list[BatchEntry]] = {}
        for entry in entries:
            groups.setdefault(self.model_of(entry) if self.ONE_MODEL else "", []).append(entry)
        limit = self.MAX_BYTES - self.OVERHEAD
        return [chunk for group in groups.values() for chunk in split(group, self.MAX_REQUESTS, limit, self.size)]

    def model_of(self, entry: BatchEntry) -> str:
        return entry.model

    def _pending(self) -> list[BatchHandle]:
        if self.ledger is None:
            return []
        return [h for h in self.ledger.pending() if h.provider == self.provider]

    def batch_url(self, handle: BatchHandle, *more: str) -> str:
        """The URL of `handle`'s batch (and `more`); a handle of another provider is refused."""
        if handle.provider != self.provider:
            raise BatchError(f"{handle!r} is not a batch of {self.provider}")
        return self.url(*self.BATCHES, handle.batch_id, *more)

    def url(self, *parts: str) -> str:
        """The base URL and `parts`, each quoted: an id read from a file cannot change the path."""
        return "/".join([self.base_url, *(quote(p, safe="") for p in parts)])

    def call(
        self, method: str, url: str, headers_extra: dict | None = None, *, repeat: bool | None = None, **kwargs
    ) -> requests.Response:
        """One request with the key's headers. `repeat`: whether it is safe to send again (by
        default a GET or a DELETE is, any other method is not); such a request is sent again after
        a transient failure (RetryPolicy.retries: the status, or x-should-retry; a connection lost,
        not refused), up to the policy's max_retries more times, waiting as
        RetryPolicy.wait says (backoff with jitter, or the answer's Retry-After in seconds) while
        the waits add up to at most its max_total_wait. A create or an upload is sent once: the
        provider may have accepted it. A failure, or a non-2xx answer, raises BatchError naming
        the method, the URL (credentials masked), the provider's message (keys masked) and, when
        it was sent more than once, how many times."""
        repeat = method in SAFE_TO_REPEAT if repeat is None else repeat
        headers = {**self.headers(), **(headers_extra or {})}
        sent, waited, gave_up = 0, 0.0, ""
        while True:
            sent += 1
            response, failed = self._attempt(method, url, headers, kwargs)
            if failed is None:
                return response
            if not (repeat and failed.transient) or sent > self.policy.max_retries:
                break
            pause = self.policy.wait(sent - 1, failed.retry_after)
            if waited + pause > self.policy.max_total_wait:
                gave_up = f"; {self.policy.gave_up(pause, failed.retry_after)}"
                break
            time.sleep(pause)
            waited += pause
        times = f" (after {sent} attempt{'s' if sent > 1 else ''}{gave_up})" if sent > 1 or gave_up else ""
        raise BatchError(failed.message + times, failed.status, sent)

    def _attempt(
        self, method: str, url: str, headers: dict, kwargs: dict
    ) -> tuple[requests.Response | None, Failure | None]:
        """One request: its 2xx response, or what went wrong."""
        where = f"{method} {mask_url(url)}"
        try:
            response = self.session.request(method, url, headers=headers, timeout=self.timeout, **kwargs)
        except requests.RequestException as exc:
            redact_traceback(exc, self._keys())
            failed = self._unanswered(where, url, exc)
            _let_go(exc)
            return None, failed
        if 200 <= response.status_code < 300:
            return response, None
        code, text = response.status_code, excerpt(response.text, self._keys())
        again = self.policy.retries(code, response.headers, self.TRANSIENT)  # x-should-retry, else the status
        return None, Failure(f"{where}: HTTP {code}: {text}", code, again, response.headers.get("Retry-After"))

    def _unanswered(self, where: str, url: str, exc: requests.RequestException) -> Failure:
        """What a request that got no answer came to. A refused connection is not retried: nothing
        listens at the host, so asking again only waits (as a live call, providers.http)."""
        if refused(exc):
            origin = urlsplit(url)._replace(path="", query="", fragment="").geturl()
            return Failure(f"{where}: {nothing_listening_at(origin)}", None, False)
        transient = isinstance(exc, TRANSIENT_ERRORS) and not isinstance(exc, requests.exceptions.SSLError)
        return Failure(f"{where}: {type(exc).__name__}: {excerpt(str(exc), self._keys())}", None, transient)

    def post_items(self, url: str, head: str, items: list[str], tail: str) -> dict:
        """POST `head`, the `items` (compact JSON each) joined by commas, `tail`: sent as the bytes
        sized, not re-encoded by requests (its json= escapes non-ASCII, so grows)."""
        data = (head + ",".join(items) + tail).encode("utf-8")
        return self.call_json("POST", url, data=data, headers_extra={"Content-Type": "application/json"})

    def call_json(self, method: str, url: str, **kwargs) -> dict:
        response = self.call(method, url, **kwargs)
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            text = self.clean(response.text)
            del response  # as in call: the traceback must not keep the socket open
            raise BatchError(f"{method} {mask_url(url)}: the reply is not a JSON object: {text}")
        return data

    def clean(self, text: object) -> str:
        """A provider's text for a message: the key and anything key-shaped masked."""
        return excerpt(str(text), self._keys())

    def _keys(self) -> list[str]:
        return [self._key] if self._key else []

    def results_of(
        self, handle: BatchHandle, found: dict[str, BatchResult], kind: str, message: str = ""
    ) -> dict[str, BatchResult]:
        """Every custom_id of `handle`: its line's result, else `kind` (the batch ended without it)."""
        return {cid: found.get(cid) or BatchResult(cid, None, kind, message) for cid in handle.custom_ids}

    # -- what each provider does its own way --

    @abstractmethod
    def headers(self) -> dict: ...

    @abstractmethod
    def size(self, entry: BatchEntry) -> int:
        """The bytes `entry` adds to a batch, as sent."""

    @abstractmethod
    def _create(self, chunk: list[BatchEntry]) -> BatchHandle: ...

    @abstractmethod
    def poll(self, handle: BatchHandle) -> BatchStatus: ...

    @abstractmethod
    def results(self, handle: BatchHandle) -> dict[str, BatchResult]:
        """Every custom_id of an ended batch with its result; BatchError while it has not ended."""

    @abstractmethod
    def cancel(self, handle: BatchHandle) -> BatchStatus: ...

    def files_of(self, handle: BatchHandle) -> list[str]:
        """The URLs of the files an ended batch left in the account (its input, its replies)."""
        return []

    def clean_up(self, handle: BatchHandle) -> list[str]:
        """Delete the files an ended batch left (once its replies are kept elsewhere); what could
        not be deleted, one message each (a file left behind costs storage, not answers). A 404 at
        a first attempt is one; at a retry it is not: the file is gone (docs/batch.md, the ledger)."""
        try:
            urls = self.files_of(handle)
        except BatchError as exc:
            return [str(exc)]
        problems = []
        for url in urls:
            try:
                self.call("DELETE", url)
            except BatchError as exc:
                # a 404 after a retry: an attempt whose answer was lost may have deleted it, and it is gone
                if not (exc.status == 404 and exc.attempts > 1):
                    problems.append(str(exc))
        return problems


def _let_go(error: BaseException) -> None:
    """Drop the tracebacks of `error` and of the exceptions under it (cause, context, reason,
    arguments) once its message is taken: their frames hold urllib3's pool, the connection and the
    response, in cycles with the exceptions (a frame's locals hold the exception it raised) that
    only a garbage collection would free, keeping sockets open meanwhile, the new connection of a
    retried call among them."""
    todo, seen = [error], set()
    while todo:
        error = todo.pop()
        if id(error) not in seen:
            seen.add(id(error))
            error.__traceback__ = None
            inner = (error.__cause__, error.__context__, getattr(error, "reason", None), *error.args)
            todo += [e for e in inner if isinstance(e, BaseException)]


def item_size(item: str) -> int:
    """The bytes one item of post_items adds: its UTF-8 and the comma before the next."""
    return len(item.encode("utf-8")) + 1


def jsonl(text: str, where: str) -> list[dict]:
    """The objects of a JSONL text; a line that is not one raises BatchError."""
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if not isinstance(row, dict) or not isinstance(row.get("custom_id"), str):
            raise BatchError(f"{where}: line {number} is not a JSON object with a custom_id")
        rows.append(row)
    return rows


def count(data: dict, name: str) -> int:
    value = data.get(name) or 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BatchError(f"request count {name} is not a whole number >= 0: {str(value)[:20]}")
    return value
