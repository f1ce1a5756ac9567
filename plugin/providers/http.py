"""The one HTTP client every provider goes through: requests, retries, errors (SPEC 3).

- 429 and 5xx (and connection resets, timeouts) retry with exponential backoff and jitter,
  honouring Retry-After; an answer's x-should-retry header, "true" or "false", overrides its status
  (as OpenAI's and Anthropic's SDKs do), a 401/403 excepted. The waits of one call add up to at
  most `max_total_wait` seconds (--eval-max-retry-wait): a server asking for more is not waited
  for, the call gives up and says so. When the retries run out the completion carries the error
  and the answer is UNKNOWN.
- A refused connection is not retried: nothing listens at the base URL, so asking again only
  waits. Its error names the URL and, for the local model, the command that starts its server.
- 401/403 raise AuthError: the session must stop, not fail item after item.
- A body that is not the provider's JSON (or does not decode as its Content-Encoding says), or
  JSON no completion holds (a text that is a number, a token count that is negative or
  infinite, nesting too deep to read) is an item error (Completion.error), never a crash; the
  tokens it was billed are counted when they can be read.
- An error message quoting a provider's body shows no key: the key sent, and anything shaped
  like a key (secrets.py), are masked in it.
- The key is read stripped of surrounding whitespace, refused (naming the variable only) when
  it holds inner whitespace or control characters, and travels as a Secret: no traceback shows
  it (an exception raised below requests, where the bytes sent hold it, is redacted:
  secrets.redact_traceback). Base URLs appear in messages without their credentials.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import random
import re
import socket
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

import requests
import urllib3

from pytest_reasoning_evals.providers.base import (
    CallOutcome,
    Completion,
    ErrorKind,
    NotAdmitted,
    Request,
    Secret,
    mask_url,
    url_problem,
)
from pytest_reasoning_evals.providers.wire import WIRE_FORMATS, Call, Parsed, Tokens
from pytest_reasoning_evals.registry import ModelSpec, batch_cost, cache_saving
from pytest_reasoning_evals.secrets import SECRET_PATTERNS, redact_traceback

LATENCY_HEADER = "x-eval-latency-ms"  # stored in cassettes so replays report recorded latency
# stored in a cassette's response when a provider's batch gave it (its value: the provider), so
# replays price it at the batch price; no key, batch id or custom_id (batch/run.py BatchAnswers)
BATCH_HEADER = "x-eval-batch"
# an answer's header saying whether to retry it, whatever its status ("true" / "false"): OpenAI's and
# Anthropic's servers send it, their SDKs obey it (RetryPolicy.retries)
SHOULD_RETRY = "x-should-retry"
KEY_CHARACTERS = re.compile(r"[\x21-\x7e]+")  # printable ASCII, no whitespace: what an API key is made of
# A body that does not decode as its Content-Encoding says (requests wraps urllib3's error; under
# vcrpy's recording patches urllib3's own escapes).
DECODE_ERRORS = (requests.exceptions.ContentDecodingError, urllib3.exceptions.DecodeError)


class AuthError(Exception):
    """The provider refused the key (401/403) or the key is missing or malformed: stop the session."""


def read_key(var: str) -> Secret | None:
    """The key in the environment variable `var` without surrounding whitespace (a trailing
    newline from `$(cat key.txt)`, say), as a Secret; None when unset or blank. A key with inner
    whitespace, control or non-ASCII characters raises AuthError naming the variable, never the key."""
    key = Secret(os.environ.get(var, "").strip())
    if not key:
        return None
    if not KEY_CHARACTERS.fullmatch(key):
        raise AuthError(
            f"{var} holds whitespace, a control character or a non-ASCII character inside the key "
            f"(the key is not shown): set {var} to the key alone"
        )
    return key


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 4
    backoff_base: float = 0.5  # seconds; attempt n waits base * 2**n (+ jitter)
    backoff_max: float = 30.0  # cap of our own schedule, jitter included
    jitter: float = 0.25  # fraction of the wait added at random
    timeout: float = 120.0  # seconds per request
    max_total_wait: float = 120.0  # seconds of waiting between the attempts of one call, all together

    @staticmethod
    def asked(retry_after: str | None) -> float | None:
        """The server's Retry-After in seconds when it is a usable number, else None (absent,
        an HTTP date, negative, not finite)."""
        try:
            seconds = float(retry_after) if retry_after else math.nan
        except ValueError:
            return None
        return seconds if math.isfinite(seconds) and seconds >= 0 else None

    @staticmethod
    def retries(status: int, headers: Mapping[str, str], transient: frozenset[int] = frozenset({429})) -> bool:
        """Whether an answer of HTTP `status` (not 2xx) is worth another attempt: what the server's
        x-should-retry says when it says "true" or "false" (OpenAI's and Anthropic's SDKs obey it),
        else whether `status` is one of `transient` or a 5xx. Never a refused key (401, 403): it
        stops the session. Whether the request may be sent twice (a create may not) is its caller's."""
        if status in (401, 403):
            return False
        said = headers.get(SHOULD_RETRY)
        if said in ("true", "false"):
            return said == "true"
        return status in transient or status >= 500

    def wait(self, attempt: int, retry_after: str | None) -> float:
        """Seconds before retry number attempt+1: the server's Retry-After when it gives a
        usable number of seconds, else exponential backoff with jitter."""
        asked = self.asked(retry_after)
        if asked is not None:
            return asked
        return min(self.backoff_base * 2**attempt * (1 + random.random() * self.jitter), self.backoff_max)

    def gave_up(self, pause: float, retry_after: str | None) -> str:
        """Why a call stopped retrying before its retries ran out: the next wait, `pause`, would
        pass `max_total_wait` (the server's Retry-After, or our own schedule)."""
        who = "the server asked to wait" if self.asked(retry_after) is not None else "the next retry would wait"
        return f"gave up: {who} {round(pause, 2):g} s more, over the {self.max_total_wait:g} s cap on waiting per call"


class CallsStopped(Exception):
    """The session is over: an attempt not yet started is not made."""


class CuttableAdapter(requests.adapters.HTTPAdapter):
    """requests' adapter whose open connections another thread can shut: an interrupted run ends
    at once instead of waiting out, for up to the request timeout, a call the provider holds."""

    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.opened: weakref.WeakSet = weakref.WeakSet()
        manager = self.poolmanager
        manager.pool_classes_by_scheme = {  # a copy: urllib3's own dict is every pool manager's
            scheme: _registering(pool, self.opened) for scheme, pool in manager.pool_classes_by_scheme.items()
        }

    def cut(self) -> None:
        for connection in list(self.opened):
            sock = getattr(connection, "sock", None)
            if sock is not None:
                with contextlib.suppress(OSError):  # closed meanwhile
                    sock.shutdown(socket.SHUT_RDWR)  # a read blocked on it returns at once


def _registering(pool_class: type, opened: weakref.WeakSet) -> type:
    """`pool_class`, its every new connection added to `opened`."""

    class Registering(pool_class):
        def _new_conn(self):
            connection = super()._new_conn()
            opened.add(connection)
            return connection

    return Registering


class Limiter:
    """How many HTTP attempts of one process may be in flight at once (--eval-concurrency).

    A 429 halves the limit, once per round (429s of attempts started before the last cut do not
    cut it again); then each `limit` successes raise it by one, back up to the ceiling: TCP's
    additive increase and multiplicative decrease, as API clients do against rate limits. A
    refused key closes it for good: every attempt waiting or yet to come raises AuthError, so
    nothing more is sent."""

    def __init__(self, ceiling: int = 1):
        self.ceiling = self.limit = self.lowest = ceiling
        self.in_flight = 0
        self.rate_limited = 0  # 429s seen
        self.paid = 0.0  # what the answered attempts cost, counted before their slot is free
        self.refused: str | None = None
        self.stopped = False
        self.admit: Callable[[], bool] | None = None  # asked before each attempt (prefetch.py: the budget)
        self._round = 0
        self._credit = 0
        self._changed = threading.Condition()

    def acquire(self) -> int:
        """Wait for a free slot; -> the round the attempt starts in (for release)."""
        with self._changed:
            while self.refused is None and not self.stopped and self.in_flight >= self.limit:
                self._changed.wait()
            if self.refused is not None:
                raise AuthError(self.refused)
            if self.stopped:
                raise CallsStopped()
            if self.admit is not None and not self.admit():
                raise NotAdmitted()
            self.in_flight += 1
            return self._round

    def release(self, started_in: int, status: int | None, paid: float = 0.0) -> bool:
        """The attempt is over: `status` its HTTP status (None: no response), `paid` its cost.
        -> whether it was a 429 of this process's own concurrency: one that came while more than
        one call could be in flight, or of a burst a cut has already answered. Only a 429 at one
        call in flight says that the provider refuses the call itself."""
        with self._changed:
            self.in_flight -= 1
            self.paid += paid
            stale = status == 429 and started_in != self._round
            contention = status == 429 and (stale or self.limit > 1)
            if status == 429:
                self.rate_limited += 1
                if not stale:
                    self._round += 1
                    self.limit = max(1, self.limit // 2)
                    self.lowest = min(self.lowest, self.limit)
                    self._credit = 0
            elif status is not None and 200 <= status < 300 and self.limit < self.ceiling:
                self._credit += 1
                if self._credit >= self.limit:
                    self.limit, self._credit = self.limit + 1, 0
            self._changed.notify_all()
            return contention

    def refuse(self, reason: str) -> None:
        with self._changed:
            self.refused = reason
            self._changed.notify_all()

    def stop(self) -> None:
        with self._changed:
            self.stopped = True
            self._changed.notify_all()


def refused(exc: BaseException) -> bool:
    """Whether a ConnectionRefusedError lies under `exc` (requests wraps urllib3's errors, which
    keep the socket's as their cause or `reason`): nothing listens there."""
    seen, todo = set(), [exc]
    while todo:
        error = todo.pop()
        if isinstance(error, ConnectionRefusedError):
            return True
        if id(error) not in seen:
            seen.add(id(error))
            inner = (error.__cause__, error.__context__, getattr(error, "reason", None), *error.args)
            todo += [e for e in inner if isinstance(e, BaseException)]
    return False


def nothing_listening_at(url: str) -> str:
    """The error of a refused connection to `url`, its credentials masked."""
    return f"{ErrorKind.NOT_LISTENING} {mask_url(url)}"


def keys_in(call: Call) -> list[str]:
    """The keys a call sends: its Secret headers, without a scheme word ("Bearer")."""
    return [value.split()[-1] for value in call.headers.values() if isinstance(value, Secret) and value.strip()]


def excerpt(body: str, keys: list[str] = (), length: int = 200) -> str:
    """The start of a provider's body for a message: the keys sent and anything key-shaped masked
    (a provider may echo the key it refused), cut after the masking so no key is cut in two."""
    text = body[: length * 5]
    for key in keys:
        text = text.replace(key, "***")
    for _, pattern in SECRET_PATTERNS:
        text = pattern.sub("***", text)
    return text[:length]


class Recordable(Protocol):
    """What a cassette store (cassettes.py) needs of an HTTP model, all of it public: the request
    it would send (`call_for`), its wire format's reader (`parse`), the completion of a recorded
    body or of a parsed reply (`completion_from`, `completion_of`), a live call with the response
    to record (`exchange`), and a failed completion (`failed`)."""

    spec: ModelSpec

    def call_for(self, request: Request, key: str | None) -> Call: ...

    def parse(self, data: dict) -> Parsed: ...

    def completion_from(
        self, body: bytes | str, recorded_latency: str | None, latency_ms: float, *, batch: bool = False
    ) -> Completion: ...

    def completion_of(self, parsed: Parsed, latency_ms: float, *, batch: bool = False) -> Completion: ...

    def exchange(self, request: Request) -> tuple[Completion, requests.Response | None]: ...

    def failed(self, error: str, kind: ErrorKind) -> Completion: ...


@dataclasses.dataclass
class Attempt:
    """What one attempt of a call came to (HttpModel._attempt): the limiter reads its status and
    what it paid, the retry loop the rest."""

    result: tuple[Completion, requests.Response | None] | None = None  # the call's answer: no retry
    error: str = "no attempt made"
    kind: ErrorKind = ErrorKind.PROVIDER
    final: bool = False  # an error no retry can mend
    retry_after: str | None = None
    status: int | None = None
    paid: float = 0.0
    gave_up: str = ""

    def failed(self, error: str, kind: ErrorKind = ErrorKind.PROVIDER, final: bool = False) -> None:
        self.error, self.kind, self.final = error, kind, final


class HttpModel:
    def __init__(self, spec: ModelSpec, policy: RetryPolicy | None = None, base_url: str | None = None):
        if spec.provider not in WIRE_FORMATS:
            raise ValueError(f"no wire format for provider {spec.provider!r}")
        if base_url:
            spec = dataclasses.replace(spec, base_url=base_url)
        if not spec.base_url:
            raise ValueError(f"model {spec.alias!r} has no base_url (set it in the registry or pass --eval-base-url)")
        problem = url_problem(spec.base_url)
        if problem:
            raise ValueError(f"model {spec.alias!r}: base_url {problem}")
        self.spec = spec
        self.policy = policy or RetryPolicy()
        self._build, self._parse, self._usage = WIRE_FORMATS[spec.provider]
        self.http = requests.Session()
        self._mount(requests.adapters.DEFAULT_POOLSIZE)
        self.limiter = Limiter()

    def _mount(self, pool_size: int) -> None:
        for prefix in ("http://", "https://"):
            self.http.mount(prefix, CuttableAdapter(pool_maxsize=pool_size))

    def cut(self) -> None:
        """The run was interrupted: no attempt starts, and the calls on the wire end now (their
        answers are not waited for, nor saved)."""
        self.limiter.stop()
        for adapter in set(self.http.adapters.values()):
            adapter.cut()

    def allow_concurrency(self, ceiling: int) -> None:
        """Let up to `ceiling` attempts run at once (from threads): the limiter, and a connection
        pool as large (requests keeps 10 per host)."""
        self.limiter = Limiter(ceiling)
        # requests reads the environment (proxies, CA bundle, netrc) on every call by iterating
        # os.environ, which is not safe while pytest's main thread sets and deletes
        # PYTEST_CURRENT_TEST: a call's thread then dies of a KeyError. Read it once, here.
        found = self.http.merge_environment_settings(self.spec.base_url, {}, None, None, None)
        netrc = requests.utils.get_netrc_auth(self.spec.base_url)
        self.http.trust_env = False
        self.http.proxies.update(found["proxies"])
        self.http.verify, self.http.cert = found["verify"], found["cert"]
        self.http.auth = self.http.auth or netrc
        if ceiling > requests.adapters.DEFAULT_POOLSIZE:
            self._mount(ceiling)

    def api_key(self) -> Secret | None:
        var = self.spec.api_key_env
        if not var:
            return None
        key = read_key(var)
        if key is None:
            raise AuthError(
                f"{var} is not set: model {self.spec.alias!r} needs it to call {mask_url(self.spec.base_url)}"
            )
        return key

    # --- the wire format without sending anything (a cassette replay uses these: Recordable) ---

    def call_for(self, request: Request, key: str | None) -> Call:
        """What `complete` sends for `request`: URL, headers (the key a Secret), JSON body."""
        return self._build(self.spec, request, key)

    def parse(self, data: dict) -> Parsed:
        """The reply a 2xx response's JSON holds, read by the wire format; KeyError, TypeError,
        IndexError, ValueError, AttributeError or RecursionError when it holds no completion."""
        return self._parse(data)

    def complete(self, request: Request, key: str | None = None) -> Completion:
        return self.exchange(request, key)[0]

    def exchange(self, request: Request, key: str | None = None) -> tuple[Completion, requests.Response | None]:
        """The completion, and the 2xx response it was read from (None when the call failed):
        what a cassette records."""
        # The key goes straight into the call's headers as a Secret: no plain local holds it.
        call = self.call_for(request, key if key is not None else self.api_key())
        attempts = self.policy.max_retries + 1
        attempt, sent, waited = 0, 0, 0.0
        # A 429 of the process's own concurrency (Limiter.release) is retried without using up
        # one of the call's retries: while the limit comes down (or probes upwards again), the
        # calls that meet those 429s would otherwise fail for what the limiter is there to fix.
        # Bounded per call; sequential calls (a limit of 1) never get one.
        free_retries = 4 * (self.limiter.ceiling.bit_length() - 1)
        while True:
            sent += 1
            tried, ticket = Attempt(), self.limiter.acquire()  # AuthError once a key was refused
            try:
                self._attempt(call, tried)
            finally:
                contention = self.limiter.release(ticket, tried.status, tried.paid)
            if tried.result is not None:
                return tried.result
            free = contention and free_retries > 0  # retried, waiting as any retry does, without using one up
            if tried.final or attempt + 1 >= attempts and not free:
                break
            pause = self.policy.wait(attempt, tried.retry_after)
            if waited + pause > self.policy.max_total_wait:
                tried.gave_up = self._gave_up(pause, tried.retry_after)
                break
            time.sleep(pause)
            waited += pause
            if free:
                free_retries -= 1
            else:
                attempt += 1
        error = f"{tried.error} (after {sent} attempt{'s' if sent > 1 else ''}{tried.gave_up})"
        return self.failed(error, tried.kind), None

    def _attempt(self, call: Call, tried: Attempt) -> None:
        """One POST of `call`: `tried` gets its completion, or why it failed and whether to retry."""
        started = time.perf_counter()  # the latency is the request's, not its wait for a slot
        try:
            response = self.http.post(call.url, headers=call.headers, json=call.body, timeout=self.policy.timeout)
        except requests.Timeout:
            tried.failed(f"timeout after {self.policy.timeout:g}s")
        except requests.ConnectionError as exc:
            if refused(exc):
                tried.result = self.failed(self.not_listening(), ErrorKind.NOT_LISTENING), None
            else:
                tried.failed(f"{ErrorKind.CONNECTION}: {exc.__class__.__name__}", ErrorKind.CONNECTION)
        except requests.exceptions.ChunkedEncodingError as exc:
            tried.failed(f"response cut short: {exc.__class__.__name__}")
        except DECODE_ERRORS as exc:
            message = f"{ErrorKind.MALFORMED} ({exc.__class__.__name__}): the body does not decode as its Content-Encoding header says"
            tried.result = self.failed(message, ErrorKind.MALFORMED), None
        except (requests.RequestException, urllib3.exceptions.HTTPError) as exc:
            # Anything else the transport refuses is this item's error, not a crash; its
            # message may quote a header or a URL, so only its class is kept.
            tried.failed(f"request failed: {exc.__class__.__name__}", final=True)
        except Exception as exc:  # a harness error with its traceback: whose frames hold the bytes sent
            redact_traceback(exc, keys_in(call))
            raise
        else:
            self._answered(call, response, (time.perf_counter() - started) * 1000, tried)

    def _answered(self, call: Call, response: requests.Response, latency_ms: float, tried: Attempt) -> None:
        """A response came: a refused key stops every call, a 2xx is the completion, else an error."""
        tried.status = response.status_code
        if response.status_code in (401, 403):
            self._refuse(response.status_code)
        if response.ok:
            completion = self._completion(response, latency_ms, keys_in(call))
            tried.paid = completion.cost_usd  # known to the limiter before the next attempt can start
            tried.result = completion, response if completion.error is None else None
            return
        retryable = self.policy.retries(response.status_code, response.headers)
        tried.failed(f"HTTP {response.status_code}: {excerpt(response.text, keys_in(call))}", final=not retryable)
        tried.retry_after = response.headers.get("Retry-After") if retryable else None

    def _gave_up(self, pause: float, retry_after: str | None) -> str:
        return f"; {self.policy.gave_up(pause, retry_after)} (--eval-max-retry-wait)"

    def _refuse(self, status: int) -> None:
        """The provider refused the key: AuthError, and the limiter closed, so no other thread
        sends anything after this."""
        reason = (
            f"{mask_url(self.spec.base_url)} refused the key in {self.spec.api_key_env or '(no key variable)'} "
            f"for model {self.spec.alias!r}: HTTP {status}"
        )
        self.limiter.refuse(reason)
        raise AuthError(reason)

    def _completion(self, response: requests.Response, latency_ms: float, keys: list[str]) -> Completion:
        return self.completion_from(response.content, response.headers.get(LATENCY_HEADER), latency_ms, keys)

    def completion_from(
        self,
        body: bytes | str,
        recorded_latency: str | None,
        latency_ms: float,
        keys: list[str] = (),
        *,
        batch: bool = False,
    ) -> Completion:
        """The completion in a 2xx response's body (live, or replayed from a cassette); the
        recorded latency header, when there is one, is the latency reported. `keys`: what a
        message quoting the body must not show. `batch`: a provider's batch gave the body (its
        cassette's BATCH_HEADER): priced at the batch price."""
        data = None
        try:
            if recorded_latency is not None:
                latency_ms = float(recorded_latency)
            data = json.loads(body)
            parsed = self.parse(data)
        except (
            KeyError,
            IndexError,
            TypeError,
            ValueError,
            AttributeError,  # JSON errors are ValueErrors
            RecursionError,
        ) as exc:  # e.g. a message that is a string, not an object; JSON nested 100,000 deep
            text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
            failed = self.failed(
                f"{ErrorKind.MALFORMED} ({exc.__class__.__name__}): {excerpt(text, keys)}", ErrorKind.MALFORMED
            )
            try:  # the provider was paid for the call: what it billed counts, when it can be read
                used = self._usage(data)
            except (KeyError, IndexError, TypeError, ValueError, AttributeError):
                return failed
            return self._priced(failed, used, batch)
        return self.completion_of(parsed, latency_ms, batch=batch)

    def completion_of(self, parsed: Parsed, latency_ms: float, *, batch: bool = False) -> Completion:
        """The completion of a parsed reply (a response body, or a cassette index's replay); `batch`:
        a batch's reply, at the batch price."""
        completion = Completion(
            provider=self.spec.provider,
            model=self.spec.model_id,
            text=parsed.text,
            reasoning=parsed.reasoning,
            latency_ms=round(latency_ms, 3),
            finish_reason=parsed.finish_reason,
        )
        used = Tokens(
            parsed.input_tokens,
            parsed.output_tokens,
            parsed.thinking_tokens,
            parsed.cached_tokens,
            parsed.cache_write_tokens,
        )
        return self._priced(completion, used, batch)

    def _priced(self, completion: Completion, used: Tokens, batch: bool = False) -> Completion:
        """`completion` with the reply's token counts and what they cost (cached input at its price);
        a batch's reply at the batch price (registry.batch_cost), what that saved beside it."""
        completion.input_tokens, completion.output_tokens, completion.thinking_tokens = used[:3]
        completion.cached_tokens, completion.cache_write_tokens = used.cached, used.cache_write
        completion.cost_usd = self.spec.cost(*used[:2], used.cached, used.cache_write)
        if batch:
            listed = completion.cost_usd
            completion.cost_usd = batch_cost(self.spec, *used[:2], used.cached, used.cache_write)
            completion.batch, completion.batch_saved_usd = True, listed - completion.cost_usd
        if used.cached or used.cache_write:
            completion.cache_saved_usd = cache_saving(self.spec, used.cached, used.cache_write)
        return completion

    def not_listening(self) -> str:
        """The one-line error of a refused connection: the URL, and how to start the local model."""
        from pytest_reasoning_evals.local_server import start_command

        command = start_command(self.spec.model_id, self.spec.base_url)
        hint = f" (start it with: {command})" if command else ""
        return f"{nothing_listening_at(self.spec.base_url)} for model {self.spec.alias!r}{hint}"

    def failed(self, error: str, kind: ErrorKind) -> Completion:
        """A completion that carries `error`, of `kind`, instead of an answer."""
        return Completion(
            provider=self.spec.provider,
            model=self.spec.model_id,
            text="",
            error=error,
            outcome=CallOutcome(error_kind=kind),
        )
