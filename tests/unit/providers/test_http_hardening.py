"""providers/http.py hardening: a key's surrounding whitespace is stripped, a body declared gzip
that is not is a malformed response, and the total retry wait of one call is capped."""

from __future__ import annotations

import pytest
from fakeprovider import FakeProvider, status

from pytest_reasoning_evals.cassettes import CassetteClient
from pytest_reasoning_evals.providers import http
from pytest_reasoning_evals.providers.base import Request
from pytest_reasoning_evals.providers.http import HttpModel, RetryPolicy
from pytest_reasoning_evals.registry import ModelSpec

KEY_VAR = "HARDENING_KEY"
SECRET = "sk-hardening-0123456789abcdef"  # never to be printed
FAST = RetryPolicy(max_retries=2, backoff_base=0.01, backoff_max=0.02, jitter=0.0, timeout=2.0)
REQUEST = Request(
    item_id="q1", cassette_folder="chaosbench-zeroshot", messages=({"role": "user", "content": "Is it chaotic?"},)
)
KEY_HEADERS = {
    "openai": ("authorization", f"Bearer {SECRET}"),
    "anthropic": ("x-api-key", SECRET),
    "gemini": ("x-goog-api-key", SECRET),
}
BASES = {"openai": "openai_base", "anthropic": "anthropic_base", "gemini": "gemini_base"}


@pytest.fixture
def server():
    with FakeProvider() as fake:
        yield fake


def spec(server: FakeProvider, provider: str = "openai", **fields) -> ModelSpec:
    base = {
        "alias": "fake",
        "provider": provider,
        "model_id": "m",
        "api_key_env": KEY_VAR,
        "base_url": getattr(server, BASES[provider]),
        "price_in": 1.0,
        "price_out": 2.0,
    }
    return ModelSpec(**{**base, **fields})


# --- 10. retry bounds ---


class Clock:
    """The http module's `time`, with sleeps recorded instead of slept."""

    def __init__(self):
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)

    @staticmethod
    def perf_counter() -> float:
        import time

        return time.perf_counter()


@pytest.fixture
def clock(monkeypatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(http, "time", fake)
    monkeypatch.setenv(KEY_VAR, SECRET)
    return fake


# --- 1. a key is never printed ---


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
@pytest.mark.parametrize(
    "raw", [f"{SECRET}\n", f" {SECRET}", f"\t{SECRET} \r\n"], ids=["trailing-newline", "leading-space", "both"]
)
def test_a_key_with_surrounding_whitespace_is_stripped(server, monkeypatch, provider, raw) -> None:
    monkeypatch.setenv(KEY_VAR, raw)
    completion = HttpModel(spec(server, provider), FAST).complete(REQUEST)
    assert completion.error is None and completion.text == "TRUE"
    header, value = KEY_HEADERS[provider]
    (seen,) = server.requests
    assert seen["headers"][header] == value


@pytest.mark.parametrize("record_mode", [None, "once"], ids=["plain-client", "recording-through-vcrpy"])
def test_a_body_declared_gzip_that_is_not_gzip_is_a_malformed_response(
    server, monkeypatch, tmp_path, record_mode
) -> None:
    monkeypatch.setenv(KEY_VAR, SECRET)
    server.extra_headers["Content-Encoding"] = "gzip"
    model = HttpModel(spec(server), FAST)
    client = model if record_mode is None else CassetteClient(model, tmp_path, record_mode)
    completion = client.complete(REQUEST)
    assert completion.error.startswith("malformed provider response"), completion.error
    assert "\n" not in completion.error and SECRET not in completion.error
    assert len(server.requests) == 1


def test_a_retry_after_beyond_the_cap_gives_up_without_waiting(server, clock) -> None:
    server.script(*[status(429, retry_after="600")] * 10)
    completion = HttpModel(spec(server)).complete(REQUEST)  # the default policy: 4 retries, a 120 s cap
    assert clock.slept == []
    assert len(server.requests) == 1
    assert completion.error.startswith("HTTP 429")
    assert "gave up: the server asked to wait 600 s more, over the 120 s cap" in completion.error
    assert "--eval-max-retry-wait" in completion.error


def test_the_total_wait_of_one_call_is_capped(server, clock) -> None:
    server.script(*[status(503, retry_after="50")] * 10)
    completion = HttpModel(spec(server)).complete(REQUEST)
    assert clock.slept == [50.0, 50.0]  # a third wait would bring the total to 150 s, over 120
    assert len(server.requests) == 3
    assert "after 3 attempts; gave up: the server asked to wait 50 s more, over the 120 s cap" in completion.error


def test_waits_within_the_cap_are_honoured_and_the_cap_is_configurable(server, clock) -> None:
    server.script(*[status(429, retry_after="50")] * 2)
    completion = HttpModel(spec(server), RetryPolicy(max_total_wait=100)).complete(REQUEST)
    assert completion.error is None and clock.slept == [50.0, 50.0] and len(server.requests) == 3


def test_our_own_backoff_counts_towards_the_cap(server, clock) -> None:
    server.script(*[status(500)] * 10)
    policy = RetryPolicy(max_retries=6, backoff_base=1.0, backoff_max=30.0, jitter=0.0, max_total_wait=10)
    completion = HttpModel(spec(server), policy).complete(REQUEST)
    assert clock.slept == [1.0, 2.0, 4.0]  # then 8 s more would make 15 s, over 10
    assert "gave up: the next retry would wait 8 s more, over the 10 s cap" in completion.error
