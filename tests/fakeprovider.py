"""A fake model provider: a real HTTP server on 127.0.0.1 speaking three wire formats (stdlib only).

    with FakeProvider() as server:
        server.script(status(429, retry_after="0"), slow(0.6), malformed())
        ...  # point a client at server.openai_base / server.anthropic_base / server.gemini_base
        server.requests  # what the server received, in order

Routes (POST): /v1/chat/completions (OpenAI), /v1/messages (Anthropic),
/v1beta/models/<model>:generateContent (Gemini); `live_calls` counts them. The batch endpoints
of OpenAI, Anthropic and Gemini are `batch` (fakebatch.FakeBatches: its own states, outcomes and
counters; a scripted `status`, `slow`, `dropped` or `cut` fault applies to them too, and
`batch.fail(method, path, *faults)` aims faults at one path's requests). Anything else is a 404
(recorded, but it does not consume a scripted fault).

Each scripted fault applies to one request, in order; once the script is used up, `fault_for`
(when set) may choose a fault from the request's parsed body, else every
request gets a normal 200 reply carrying `reply_text` (or, when `responder` is set, what it
returns for the request's parsed body) and `usage`.

`delay` makes every routed request take that long (a model's latency); `capacity = n` answers a
request beyond n at once with a 429 (Retry-After: 0); `max_in_flight` and `rate_limited` say
what the server saw; `overlap = n` holds each routed request until n were in flight at once, so
a test of calls made ahead sees them overlap however loaded the machine is (none waits once
that happened, or once a wait gave up after OVERLAP_WAIT s). `hold_after = n` parks every
request after the first n answered ones: it is neither recorded nor answered (a kill of the
client then leaves nothing paid for), and `held` counts them. Recorded requests are dicts with method, path, query (dict of lists, as urllib.parse.parse_qs returns), headers (keys
lower-cased) and body (parsed JSON, or the raw text when it is not JSON).

The server never leaks: `close()` (or leaving the `with` block) wakes any handler still in a
`slow` sleep, stops serving, closes the listening socket and joins the serving thread and
every handler thread. A client that gave up (timeout) before the reply is written does not
make it print a traceback, and the request log is silent.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from fakebatch import FakeBatches

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"
GEMINI_PREFIX = "/v1beta/models/"
GEMINI_SUFFIX = ":generateContent"

OVERLAP_WAIT = 10.0  # seconds a request waits for `overlap` requests in flight at most
_DISCONNECTED = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)


# --- faults ---


@dataclass(frozen=True)
class Fault:
    """What the server does to one request instead of (or before) a normal reply."""

    kind: str  # "status" | "slow" | "malformed" | "truncated" | "missing_fields" | "dropped" | "cut"
    code: int = 200
    retry_after: str | None = None
    body: str | None = None
    seconds: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()  # a status's other headers

    def status_headers(self) -> dict[str, str]:
        """The headers of a status fault's answer: its Retry-After when given, and the others."""
        return {**({"Retry-After": self.retry_after} if self.retry_after is not None else {}), **dict(self.headers)}


def status(
    code: int, retry_after: str | float | None = None, body: str | None = None, headers: dict[str, str] | None = None
) -> Fault:
    """Reply `code` (with a Retry-After header when given, and `headers`) and a small JSON error body."""
    if body is None:
        body = json.dumps({"error": {"code": code, "message": f"fake provider error {code}"}})
    retry_after = None if retry_after is None else str(retry_after)
    return Fault("status", code=code, retry_after=retry_after, body=body, headers=tuple((headers or {}).items()))


def slow(seconds: float) -> Fault:
    """Sleep `seconds` (cut short when the server closes), then reply normally."""
    return Fault("slow", seconds=seconds)


def malformed() -> Fault:
    """200 whose body is not JSON at all."""
    return Fault("malformed")


def truncated() -> Fault:
    """200 with the normal JSON reply cut in half (Content-Type still application/json)."""
    return Fault("truncated")


def missing_fields() -> Fault:
    """200 with valid JSON lacking choices / content / candidates."""
    return Fault("missing_fields")


def dropped() -> Fault:
    """The connection closed once the request is read, with no answer at all (batch routes only)."""
    return Fault("dropped")


def cut() -> Fault:
    """The normal answer's headers (its full Content-Length) and half its body, then the connection
    closed: a download cut short (batch routes only)."""
    return Fault("cut")


@dataclass
class Usage:
    prompt: int = 12
    completion: int = 3
    thoughts: int = 0  # Gemini thoughtsTokenCount, OpenAI reasoning_tokens (inside completion); sent only when non-zero
    cached: int = 0  # OpenAI prompt_tokens_details.cached_tokens (inside prompt), Anthropic cache_read_input_tokens; sent only when non-zero
    cache_write: int = 0  # Anthropic cache_creation_input_tokens (apart from input_tokens); sent only when non-zero


# --- the server ---


class _Server(ThreadingHTTPServer):
    # Handler threads are tracked and joined by server_close() (block_on_close), so none leaks.
    daemon_threads = False
    block_on_close = True

    def __init__(self, provider: FakeProvider):
        self.provider = provider
        super().__init__(("127.0.0.1", 0), _KeepAliveHandler if provider.keep_alive else _Handler)

    def handle_error(self, request, client_address) -> None:
        # A client that disconnected first (it timed out) is expected: stay quiet. Anything else
        # is a bug in the fake and is reported the standard way.
        import sys

        if isinstance(sys.exc_info()[1], _DISCONNECTED):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = 10  # a client that connects and never sends cannot pin a handler thread forever
    # Headers and body go out in two writes: with Nagle's algorithm on, the body waits for the
    # client's delayed ACK of the headers (40 ms a reply). Real servers set TCP_NODELAY too.
    disable_nagle_algorithm = True

    def log_message(self, format, *args) -> None:  # noqa: A002 - the stdlib's signature
        pass

    def handle(self) -> None:
        try:
            super().handle()
        except _DISCONNECTED:
            pass

    def do_POST(self) -> None:
        self.server.provider._serve(self)

    def do_GET(self) -> None:
        self.server.provider._serve(self)

    def do_DELETE(self) -> None:
        self.server.provider._serve(self)


class _KeepAliveHandler(_Handler):
    protocol_version = "HTTP/1.1"  # connections stay open between requests, as a real provider's do


class FakeProvider:
    def __init__(self, keep_alive: bool = False) -> None:
        self.keep_alive = keep_alive  # HTTP/1.1 keep-alive (a handler then lives as long as its connection)
        self.reply_text = "TRUE"
        self.responder = None  # callable(parsed body) -> reply text, instead of reply_text
        self.fault_for = (
            None  # callable(parsed body) -> Fault or None: a fault chosen by the request, once the script is used up
        )
        self.reasoning = ""  # provider-side reasoning sent apart from the text (each format's own field)
        self.hold_after: int | None = None
        self.held = 0
        self.usage = Usage()
        self.extra_headers: dict[str, str] = {}  # added to every 200 reply (e.g. the latency header)
        self.delay = 0.0  # seconds every routed request takes before its reply (a model's latency)
        self.capacity: int | None = None  # more routed requests than this at once get a 429 (Retry-After: 0)
        self.in_flight = 0
        self.max_in_flight = 0  # the most routed requests answered at once, 429s included
        self.overlap: int | None = None  # requests wait until this many are in flight at once (once)
        self.rate_limited = 0  # 429s sent for being over capacity
        self.live_calls = 0  # routed chat / messages / generateContent requests answered or faulted
        self.batch = FakeBatches(self)  # the batch endpoints, their states and counters
        self._lock = threading.Lock()
        self._in_flight_changed = threading.Condition(self._lock)
        self._requests: list[dict] = []
        self._faults: deque[Fault] = deque()
        self._closing = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --

    def start(self) -> FakeProvider:
        if self._server is not None:
            raise RuntimeError("FakeProvider already started")
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.005}, name="fakeprovider", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        if self._server is None:
            return
        self._closing.set()  # wake handlers sleeping in a `slow` fault
        with self._lock:
            self._in_flight_changed.notify_all()  # ... or waiting for an overlap
        self._server.shutdown()
        self._server.server_close()  # joins the handler threads
        assert self._thread is not None
        self._thread.join()
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    # -- addresses --

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeProvider is not running")
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base(self) -> str:
        return self.url + "/v1"

    @property
    def anthropic_base(self) -> str:
        return self.url + "/v1"

    @property
    def gemini_base(self) -> str:
        return self.url + "/v1beta"

    # -- scripting and inspection --

    def script(self, *faults: Fault) -> None:
        """Queue faults for the next requests, one per request, in order."""
        with self._lock:
            self._faults.extend(faults)

    @property
    def pending_faults(self) -> int:
        with self._lock:
            return len(self._faults)

    @property
    def requests(self) -> list[dict]:
        """A snapshot of the requests received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()
            self._faults.clear()

    # -- request handling (runs in handler threads) --

    def _serve(self, handler: _Handler) -> None:
        split = urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        data = handler.rfile.read(length) if length else b""
        raw = data.decode("utf-8", "replace")
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw
        route = self._route(handler.command, split.path)
        batch = None if route else self.batch.route(handler.command, split.path)
        with self._lock:
            parked = self.hold_after is not None and len(self._requests) >= self.hold_after
            if parked:
                self.held += 1
        if parked:
            self._closing.wait()
            return
        with self._lock:
            self._requests.append(
                {
                    "method": handler.command,
                    "path": split.path,
                    "query": parse_qs(split.query),
                    "headers": {k.lower(): v for k, v in handler.headers.items()},
                    "body": body,
                }
            )
            fault = self._faults.popleft() if (route or batch) and self._faults else None
            self.live_calls += route is not None
        if batch is not None:
            self._serve_batch(handler, batch, data, fault or self.batch.fault_for(handler.command, split.path))
            return
        if fault is None and route and self.fault_for is not None:
            fault = self.fault_for(body)
        if route is None:
            self._send(handler, 404, json.dumps({"error": f"no route for {handler.command} {split.path}"}))
            return
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            over = self.capacity is not None and self.in_flight > self.capacity
            self.rate_limited += over
            self._in_flight_changed.notify_all()
            if self.overlap is not None and not self._in_flight_changed.wait_for(self._overlapped, OVERLAP_WAIT):
                self.overlap = None  # given up: the calls do not overlap, and the test says so
        try:
            if not over and self.delay and self._closing.wait(self.delay):
                return  # a wait cut short: shutting down
        finally:
            # The work is done before the reply goes out: a client that sends its next request
            # as soon as it has read this reply must not find this one still counted.
            with self._lock:
                self.in_flight -= 1
        if over:
            self._send(handler, 429, json.dumps({"error": "rate limited"}), {"Retry-After": "0"})
        else:
            self._answer(handler, route, body, fault)

    def _overlapped(self) -> bool:
        return self.overlap is None or self.max_in_flight >= self.overlap or self._closing.is_set()

    def _serve_batch(self, handler: _Handler, route, data: bytes, fault: Fault | None) -> None:
        kind = fault.kind if fault is not None else None
        if kind == "status":
            self._send(handler, fault.code, fault.body or "", fault.status_headers())
            return
        if kind == "dropped":  # nothing written: the client reads the connection's end
            handler.close_connection = True
            return
        if kind == "slow" and self._closing.wait(fault.seconds):
            return  # shutting down: the client has long given up
        code, text, ctype, headers = self.batch.serve(route, data, {k.lower(): v for k, v in handler.headers.items()})
        self._send(handler, code, text, headers, ctype=ctype, cut=kind == "cut")

    def _answer(self, handler: _Handler, route: tuple[str, str | None], body, fault: Fault | None) -> None:
        fmt, model = route
        if model is None:
            model = body.get("model", "") if isinstance(body, dict) else ""
        if fault is not None and fault.kind == "status":
            self._send(handler, fault.code, fault.body or "", fault.status_headers())
            return
        if fault is not None and fault.kind == "slow":
            if self._closing.wait(fault.seconds):
                return  # shutting down: the client has long given up
        text = self.responder(body) if self.responder else self.reply_text
        reply = self._reply(fmt, model, text)
        if fault is not None and fault.kind == "missing_fields":
            reply = {k: v for k, v in reply.items() if k not in ("choices", "content", "candidates")}
        text = json.dumps(reply)
        if fault is not None and fault.kind == "malformed":
            self._send(handler, 200, "<html><body>502 Bad Gateway (not JSON)</body></html>", ctype="text/html")
            return
        if fault is not None and fault.kind == "truncated":
            text = text[: len(text) // 2]
        self._send(handler, 200, text, dict(self.extra_headers))

    @staticmethod
    def _route(method: str, path: str) -> tuple[str, str | None] | None:
        if method != "POST":
            return None
        if path == OPENAI_PATH:
            return "openai", None
        if path == ANTHROPIC_PATH:
            return "anthropic", None
        if path.startswith(GEMINI_PREFIX) and path.endswith(GEMINI_SUFFIX):
            model = path[len(GEMINI_PREFIX) : -len(GEMINI_SUFFIX)]
            if model and "/" not in model:
                return "gemini", model
        return None

    def _cache_usage(self) -> dict:
        """Anthropic's prompt cache counts, those not zero."""
        counts = {"cache_read_input_tokens": self.usage.cached, "cache_creation_input_tokens": self.usage.cache_write}
        return {name: n for name, n in counts.items() if n}

    def _reply(self, fmt: str, model: str, reply_text: str) -> dict:
        p, c, t = self.usage.prompt, self.usage.completion, self.usage.thoughts
        if fmt == "openai":
            return {
                "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                "object": "chat.completion",
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {
                            "role": "assistant",
                            "content": reply_text,
                            **({"reasoning_content": self.reasoning} if self.reasoning else {}),
                        },
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": p,
                    "completion_tokens": c,
                    "total_tokens": p + c,
                    **({"completion_tokens_details": {"reasoning_tokens": t}} if t else {}),
                    **({"prompt_tokens_details": {"cached_tokens": self.usage.cached}} if self.usage.cached else {}),
                },
            }
        if fmt == "anthropic":
            return {
                "id": f"msg_{uuid.uuid4().hex[:12]}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [
                    *([{"type": "thinking", "thinking": self.reasoning, "signature": "sig"}] if self.reasoning else []),
                    {"type": "text", "text": reply_text},
                ],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": p, "output_tokens": c, **self._cache_usage()},
            }
        usage = {"promptTokenCount": p, "candidatesTokenCount": c}
        if t:
            usage["thoughtsTokenCount"] = t
        usage["totalTokenCount"] = p + c + t
        return {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            *([{"text": self.reasoning, "thought": True}] if self.reasoning else []),
                            {"text": reply_text},
                        ],
                    },
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": usage,
            "modelVersion": model,
        }

    @staticmethod
    def _send(
        handler: _Handler,
        code: int,
        text: str,
        headers: dict | None = None,
        ctype: str = "application/json",
        cut: bool = False,
    ) -> None:
        """The answer; `cut`: only the first half of its body (its Content-Length the whole), then
        the connection closed."""
        data = text.encode("utf-8")
        try:
            handler.send_response(code)
            handler.send_header("Content-Type", ctype)
            handler.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(data[: len(data) // 2] if cut else data)
        except _DISCONNECTED:
            pass  # the client gave up (timeout) before we answered
        if cut:
            handler.close_connection = True
