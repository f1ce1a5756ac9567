"""The one HTTP client every provider goes through: requests, retries, errors (SPEC 3).

- 429 and 5xx (and connection errors, timeouts) retry with exponential backoff and jitter,
  honouring Retry-After; when the retries run out the completion carries the error and the
  answer is UNKNOWN.
- 401/403 raise AuthError: the session must stop, not fail item after item.
- A body that is not the provider's JSON is an item error (Completion.error), never a crash.
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from dataclasses import dataclass

import requests

from pytest_reasoning_evals.providers.base import Completion, Request
from pytest_reasoning_evals.providers.wire import WIRE_FORMATS
from pytest_reasoning_evals.registry import ModelSpec

LATENCY_HEADER = "x-eval-latency-ms"  # stored in cassettes so replays report recorded latency


class AuthError(Exception):
    """The provider refused the key (401/403) or the key is missing: stop the session."""


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 4
    backoff_base: float = 0.5  # seconds; attempt n waits base * 2**n (+ jitter)
    backoff_max: float = 30.0  # cap of our own schedule, jitter included
    jitter: float = 0.25  # fraction of the wait added at random
    timeout: float = 120.0  # seconds per request
    retry_after_max: float = 600.0  # a server asking for longer than this is not waited for

    def wait(self, attempt: int, retry_after: str | None) -> float:
        """Seconds before retry number attempt+1: the server's Retry-After when it gives a
        usable number of seconds, else exponential backoff with jitter."""
        try:
            asked = float(retry_after) if retry_after else math.nan
        except ValueError:
            asked = math.nan  # an HTTP date: fall back to our own schedule
        if 0 <= asked <= self.retry_after_max:  # also false for nan
            return asked
        return min(self.backoff_base * 2**attempt * (1 + random.random() * self.jitter), self.backoff_max)


def _retryable(status: int) -> bool:
    return status == 429 or status >= 500


class HttpModel:
    def __init__(self, spec: ModelSpec, policy: RetryPolicy | None = None, base_url: str | None = None):
        if spec.provider not in WIRE_FORMATS:
            raise ValueError(f"no wire format for provider {spec.provider!r}")
        if base_url:
            spec = ModelSpec(**{**spec.to_dict(), "base_url": base_url})
        if not spec.base_url:
            raise ValueError(f"model {spec.alias!r} has no base_url (set it in the registry or pass --base-url)")
        self.spec = spec
        self.policy = policy or RetryPolicy()
        self._build, self._parse = WIRE_FORMATS[spec.provider]
        self.http = requests.Session()  # the cassette client may mount a replay transport on it

    def api_key(self) -> str | None:
        var = self.spec.api_key_env
        if not var:
            return None
        key = os.environ.get(var)
        if not key:
            raise AuthError(f"{var} is not set: model {self.spec.alias!r} needs it to call {self.spec.base_url}")
        return key

    def complete(self, request: Request, key: str | None = None) -> Completion:
        call = self._build(self.spec, request, key if key is not None else self.api_key())
        attempts = self.policy.max_retries + 1
        error = "no attempt made"
        for attempt in range(attempts):
            started = time.perf_counter()
            try:
                response = self.http.post(call.url, headers=call.headers, json=call.body, timeout=self.policy.timeout)
            except requests.Timeout:
                error = f"timeout after {self.policy.timeout:g}s"
                retry_after = None
            except requests.ConnectionError as exc:
                error = f"connection failed: {exc.__class__.__name__}"
                retry_after = None
            else:
                latency_ms = (time.perf_counter() - started) * 1000
                if response.status_code in (401, 403):
                    raise AuthError(
                        f"{self.spec.base_url} refused the key in {self.spec.api_key_env or '(no key variable)'} "
                        f"for model {self.spec.alias!r}: HTTP {response.status_code}"
                    )
                if response.ok:
                    return self._completion(response, latency_ms)
                error = f"HTTP {response.status_code}: {response.text[:200]}"
                if not _retryable(response.status_code):
                    break
                retry_after = response.headers.get("Retry-After")
            if attempt + 1 < attempts:
                time.sleep(self.policy.wait(attempt, retry_after))
        return self.failed(f"{error} (after {attempt + 1} attempt{'s' if attempt else ''})")

    def _completion(self, response: requests.Response, latency_ms: float) -> Completion:
        try:
            recorded = response.headers.get(LATENCY_HEADER)
            if recorded is not None:
                latency_ms = float(recorded)
            parsed = self._parse(response.json())
        except (json.JSONDecodeError, requests.JSONDecodeError, KeyError, IndexError, TypeError, ValueError) as exc:
            return self.failed(f"malformed provider response ({exc.__class__.__name__}): {response.text[:200]}")
        return Completion(
            provider=self.spec.provider,
            model=self.spec.model_id,
            text=parsed.text,
            input_tokens=parsed.input_tokens,
            output_tokens=parsed.output_tokens,
            thinking_tokens=parsed.thinking_tokens,
            latency_ms=round(latency_ms, 3),
            cost_usd=self.spec.cost(parsed.input_tokens, parsed.output_tokens),
            finish_reason=parsed.finish_reason,
        )

    def failed(self, error: str) -> Completion:
        """A completion that carries `error` instead of an answer."""
        return Completion(provider=self.spec.provider, model=self.spec.model_id, text="", error=error)
